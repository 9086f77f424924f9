//! `referee completions SHELL`: writes a completion script to stdout.

use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs};
use crate::exit::Exit;

pub fn run(args: CompletionsArgs) -> anyhow::Result<Exit> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "referee", &mut script);
    super::emit_exact(&script)?;
    Ok(Exit::Success)
}

/// `referee man [COMMAND…]`: a manual page, generated from the same
/// definitions as `--help`: `referee` itself, or one subcommand's
/// (`referee-record(1)`, `referee-ledger-verify(1)`), each with the exit
/// status.
pub fn man(args: crate::cli::ManArgs) -> anyhow::Result<Exit> {
    let mut cmd = Cli::command();
    cmd.build();
    let mut name = String::from("referee");
    for word in &args.command {
        let Some(sub) = cmd.find_subcommand(word).cloned() else {
            let known: Vec<String> = cmd
                .get_subcommands()
                .map(|c| format!("`{}`", c.get_name()))
                .collect();
            return Err(crate::exit::UsageError(format!(
                "`{}` has no command `{word}`; its commands: {}",
                name.replace('-', " "),
                known.join(", ")
            ))
            .into());
        };
        name = format!("{name}-{}", sub.get_name());
        cmd = sub;
    }
    // clap names commands with static strings; one page per process.
    let page_name: &'static str = Box::leak(name.clone().into_boxed_str());
    let cmd = cmd.name(page_name).bin_name(name.replace('-', " "));
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut page)?;
    page.extend_from_slice(EXIT_STATUS_ROFF.as_bytes());
    super::emit_exact(&page)?;
    Ok(Exit::Success)
}

/// The EXIT STATUS section every page ends with (SPEC §5).
const EXIT_STATUS_ROFF: &str = r#".SH "EXIT STATUS"
.TP
\fB0\fR
the loop ended done (\fBclean\fR, \fBnit-round\fR), or the command succeeded
.TP
\fB10\fR
\fBrecord\fR: continue; fix the must-fix findings and record the next round
.TP
\fB20\fR
the loop stopped and was escalated (\fBreopened\fR, \fBflip-flop\fR, \fBdiff-growth\fR, \fBround-cap\fR, \fBscope\fR, \fBbudget\fR, \fBstalled\fR, \fBdisputed\fR, \fBjudge:*\fR)
.TP
\fB1\fR
an error (bad input, a failed agent, I/O); nothing was recorded
.TP
\fB2\fR
a usage error
"#;
