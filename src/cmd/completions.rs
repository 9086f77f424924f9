//! `referee completions SHELL`: writes a completion script to stdout.

use clap::Args;
use clap::CommandFactory;

use crate::cmd::cli::Cli;
use crate::exit::Exit;
use crate::state::LoopSelect;

/// `referee man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// The command whose page to print (`record`, `ledger verify`); none:
    /// the page of `referee` itself.
    #[arg(value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct CompleteArgs {
    /// `loops` or `ids`.
    #[arg(value_parser = ["loops", "ids"])]
    pub what: String,
    #[command(flatten)]
    pub select: LoopSelect,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

pub fn run(args: CompletionsArgs) -> anyhow::Result<Exit> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut offered(), "referee", &mut script);
    let script = dynamic(args.shell, String::from_utf8_lossy(&script).into_owned());
    super::emit_exact(script.as_bytes())?;
    Ok(Exit::Success)
}

/// The command line as a completion script offers it: every command but
/// the hidden ones (`complete`, which the scripts call themselves), which
/// `clap_complete` would offer too. clap cannot take a subcommand out, so
/// the top command is put together again around the visible ones.
fn offered() -> clap::Command {
    let full = Cli::command();
    clap::Command::new("referee")
        .version(env!("CARGO_PKG_VERSION"))
        .propagate_version(true)
        .about(full.get_about().cloned().unwrap_or_default())
        .subcommand_required(full.is_subcommand_required_set())
        .args(full.get_arguments().cloned())
        .subcommands(full.get_subcommands().filter(|c| !c.is_hide_set()).cloned())
}

/// The names of `cmd`'s commands a person is shown: hidden ones left out.
pub(super) fn shown_commands(cmd: &clap::Command) -> Vec<String> {
    cmd.get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| format!("`{}`", c.get_name()))
        .collect()
}

/// Teaches the generated script to complete loop names after `--loop` and
/// finding ids after `waive`, by asking `referee complete` at the prompt
/// (bash, zsh and fish).
fn dynamic(shell: clap_complete::Shell, script: String) -> String {
    use clap_complete::Shell;
    match shell {
        Shell::Bash => script + BASH_DYNAMIC,
        Shell::Fish => script + FISH_DYNAMIC,
        Shell::Zsh => {
            let script = script
                .replace("]:LOOP:_default'", "]:LOOP:_referee_loops'")
                .replace("s id:_default'", "s id:_referee_ids'");
            match script.split_once('\n') {
                Some((first, rest)) => format!("{first}\n{ZSH_DYNAMIC}{rest}"),
                None => script,
            }
        }
        _ => script,
    }
}

const BASH_DYNAMIC: &str = r#"
_referee_dynamic() {
    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"
    if [[ "$prev" == "--loop" ]]; then
        COMPREPLY=( $(compgen -W "$(referee complete loops 2>/dev/null)" -- "$cur") )
        return 0
    fi
    if [[ "${COMP_WORDS[1]}" == "waive" && "$cur" != -* && "$prev" != --* ]]; then
        local i sel=()
        for (( i = 1; i < COMP_CWORD; i++ )); do
            if [[ "${COMP_WORDS[i]}" == "--loop" ]]; then sel=(--loop "${COMP_WORDS[i+1]}"); fi
        done
        COMPREPLY=( $(compgen -W "$(referee complete ids "${sel[@]}" 2>/dev/null)" -- "$cur") )
        return 0
    fi
    _referee "$@"
}
complete -F _referee_dynamic -o bashdefault -o default referee
"#;

const FISH_DYNAMIC: &str = r#"
complete -c referee -l loop -x -a "(referee complete loops 2>/dev/null)"
function __referee_ids
    set -l words (commandline -opc)
    set -l sel
    for i in (seq (count $words))
        if test "$words[$i]" = --loop; and test $i -lt (count $words)
            set sel --loop $words[(math $i + 1)]
        end
    end
    referee complete ids $sel 2>/dev/null
end
complete -c referee -n "__fish_seen_subcommand_from waive" -x -a "(__referee_ids)"
"#;

const ZSH_DYNAMIC: &str = r#"_referee_loops() {
    local -a loops
    loops=(${(f)"$(referee complete loops 2>/dev/null)"})
    _describe 'loop' loops
}
_referee_ids() {
    local -a ids sel
    local i
    for (( i = 1; i < CURRENT; i++ )); do
        case ${words[i]} in
            --loop) sel=(--loop ${words[i+1]}) ;;
            --loop=*) sel=(--loop ${words[i]#--loop=}) ;;
        esac
    done
    ids=(${(f)"$(referee complete ids $sel 2>/dev/null)"})
    _describe 'finding id' ids
}
"#;

/// `referee complete loops|ids`: one name per line, nothing on error (a
/// completion must never print noise at the prompt).
pub fn complete(
    dir: Option<&std::path::Path>,
    args: crate::cmd::completions::CompleteArgs,
) -> anyhow::Result<Exit> {
    let Ok(state) = crate::state::State::locate(dir) else {
        return Ok(Exit::Success);
    };
    let mut out = String::new();
    if args.what == "loops" {
        for name in state.loops().unwrap_or_default() {
            out.push_str(name.as_str());
            out.push('\n');
        }
    } else if let Ok(lp) = super::open_loop(&state, &args.select)
        && let Ok(parsed) = lp.store.read()
        && let Ok(history) = crate::engine::History::read(&lp, parsed.rows)
    {
        for t in &history.registry.findings {
            out.push_str(&t.finding.id);
            out.push('\n');
        }
    }
    super::emit_exact(out.as_bytes())?;
    Ok(Exit::Success)
}

/// `referee man [COMMAND…]`: a manual page, generated from the same
/// definitions as `--help`: `referee` itself, or one subcommand's
/// (`referee-record(1)`, `referee-ledger-verify(1)`), each with the exit
/// status.
pub fn man(args: crate::cmd::completions::ManArgs) -> anyhow::Result<Exit> {
    let mut cmd = Cli::command();
    cmd.build();
    let mut name = String::from("referee");
    for word in &args.command {
        let Some(sub) = cmd.find_subcommand(word).cloned() else {
            let known = shown_commands(&cmd);
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
    // The exit codes `--help` lists after the options are the page's EXIT
    // STATUS section: not printed twice.
    let cmd = cmd
        .name(page_name)
        .bin_name(name.replace('-', " "))
        .after_help(None::<&str>)
        .after_long_help(None::<&str>);
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
.TP
\fB130\fR
\fBrun\fR: ended by Ctrl-C (SIGINT), after its agents' processes; nothing was recorded for the round under way
.TP
\fB143\fR
\fBrun\fR: ended by SIGTERM, the same way
"#;
