//! One file per subcommand: the only place that sequences I/O. This file
//! dispatches and turns errors into messages and exit codes.

use std::io::Write;

use crate::cmd::cli::{
    ApprovalCommand, Cli, Command, ContractCommand, HookCommand, JudgeCommand, LedgerCommand,
    SkillCommand,
};
use crate::exit::{Exit, UsageError};
use crate::report::error::render;
use crate::state::State;

mod approval;
pub mod cli;
mod completions;
mod contract;
mod create;
mod decide;
mod docs;
mod doctor;
mod dry_run;
mod escalate;
mod findings;
mod hook;
mod incident;
mod init;
mod judge;
mod ledger;
mod parse;
mod record;
mod replay;
mod report;
mod round;
mod run;
mod scratch;
mod skill;
mod status;
mod util;
mod waive;

use util::{
    describe, driving, emit, emit_exact, emit_json, emit_rendered, in_writing, now, on_path,
    open_loop, person_words, read_bounded, read_repo_text, refuse_if_driven, shown,
};

/// Runs one command line and says how the process should exit.
pub fn main(cli: Cli) -> Exit {
    // Before any agent runs: what an agent orphans comes back to referee.
    crate::agent::process::supervise();
    // `run` ends its agents on SIGINT and SIGTERM and records nothing for
    // the round under way, then exits as a shell expects of a process the
    // signal ended (128 + its number), whatever it was doing then.
    let drives = matches!(cli.command, Command::Run(_));
    // `--format` is the input's for `parse` and `record`, the output's elsewhere.
    let format_is_output = !matches!(cli.command, Command::Parse(_) | Command::Record(_));
    let json = asks_json(std::env::args_os().skip(1), format_is_output);
    let exit = match dispatch(cli) {
        Ok(exit) => exit,
        Err(err) => report_error(&err, json),
    };
    match crate::agent::process::signalled().and_then(Exit::signalled) {
        Some(signalled) if drives => signalled,
        _ => exit,
    }
}

fn dispatch(cli: Cli) -> anyhow::Result<Exit> {
    crate::report::style::choose(cli.color);
    if let Some(command) = persons_command(&cli.command) {
        crate::anchor::authority::refuse_inside_agent(command)?;
    }
    let dir = cli.dir.as_deref();
    match cli.command {
        Command::Init(args) => init::run(&State::locate(dir)?, args),
        Command::Run(args) => run::run(&State::locate(dir)?, args),
        Command::Record(args) => record::run(&State::locate(dir)?, args),
        Command::Parse(args) => parse::run(args),
        Command::Status(args) => status::run(&State::locate(dir)?, args),
        Command::Ledger(LedgerCommand::Show(args)) => ledger::show(&State::locate(dir)?, args),
        Command::Ledger(LedgerCommand::Verify(args)) => ledger::verify(&State::locate(dir)?, args),
        Command::Ledger(LedgerCommand::Repair(args)) => ledger::repair(&State::locate(dir)?, args),
        Command::Escalate(args) => escalate::run(&State::locate(dir)?, args),
        Command::Contract(ContractCommand::Show(args)) => {
            contract::show(&State::locate(dir)?, args)
        }
        Command::Contract(ContractCommand::Amend(args)) => {
            contract::amend(&State::locate(dir)?, args)
        }
        Command::Contract(ContractCommand::Restore(args)) => {
            contract::restore(&State::locate(dir)?, args)
        }
        Command::Resume(args) => contract::resume(&State::locate(dir)?, args),
        Command::Waive(args) => waive::run(&State::locate(dir)?, args),
        Command::Findings(args) => findings::run(&State::locate(dir)?, args),
        Command::Replay(args) => replay::run(&State::locate(dir)?, args),
        Command::Approve(args) => decide::approve(&State::locate(dir)?, args),
        Command::Reject(args) => decide::reject(&State::locate(dir)?, args),
        Command::Approval(ApprovalCommand::Check(args)) => {
            approval::check(&State::locate(dir)?, args)
        }
        Command::Report(args) => report::run(&State::locate(dir)?, args),
        Command::Judge(JudgeCommand::Ask(args)) => judge::ask(&State::locate(dir)?, args),
        Command::Completions(args) => completions::run(args),
        Command::Man(args) => completions::man(args),
        Command::Docs(args) => docs::run(args),
        Command::Schema => docs::schema(),
        Command::Complete(args) => completions::complete(dir, args),
        Command::Skill(SkillCommand::Install(args)) => skill::install(dir, args),
        Command::Hook(HookCommand::Stop(args)) if args.dry_run => hook::stop_dry_run(dir, args),
        Command::Hook(HookCommand::Stop(args)) => Ok(hook::stop(dir, args)),
        Command::Hook(HookCommand::Install(args)) => hook::install(&State::locate(dir)?, args),
        Command::Hook(HookCommand::Uninstall(args)) => hook::uninstall(&State::locate(dir)?, args),
        Command::Doctor(args) => doctor::run(&State::locate(dir)?, args),
    }
}

/// The commands [`persons_command`] names, as typed after `referee`: the
/// Bash commands `hook install` asks Claude Code to deny the writer.
const PERSONS_COMMANDS: [&str; 13] = [
    "init",
    "run",
    "record",
    "ledger repair",
    "contract amend",
    "contract restore",
    "resume",
    "waive",
    "approve",
    "reject",
    "skill install",
    "hook install",
    "hook uninstall",
];

/// The commands only a person (or, for `record`, the caller of a loop no
/// referee drives) may run: never from inside a refereed agent (SPEC §8.1).
fn persons_command(command: &Command) -> Option<&'static str> {
    Some(match command {
        Command::Init(_) => "init",
        Command::Run(_) => "run",
        Command::Record(_) => "record",
        Command::Ledger(LedgerCommand::Repair(_)) => "ledger repair",
        Command::Contract(ContractCommand::Amend(_)) => "contract amend",
        Command::Contract(ContractCommand::Restore(_)) => "contract restore",
        Command::Resume(_) => "resume",
        Command::Waive(_) => "waive",
        Command::Approve(_) => "approve",
        Command::Reject(_) => "reject",
        Command::Skill(SkillCommand::Install(_)) => "skill install",
        Command::Hook(HookCommand::Install(_)) => "hook install",
        Command::Hook(HookCommand::Uninstall(_)) => "hook uninstall",
        _ => return None,
    })
}

/// Whether the command line asks for JSON (`--json`, or `--format json`
/// where `--format` is the output's, before any `--`): then an error is
/// JSON on stdout too, where the caller reads.
fn asks_json(args: impl Iterator<Item = std::ffi::OsString>, format_is_output: bool) -> bool {
    let args: Vec<std::ffi::OsString> = args.take_while(|a| a != "--").collect();
    args.iter().any(|a| a == "--json")
        || (format_is_output
            && (args.iter().any(|a| a == "--format=json")
                || args
                    .windows(2)
                    .any(|w| w[0] == "--format" && w[1] == "json")))
}

/// Prints `error: ...` with the cause chain (and, for a command asked for
/// JSON that printed nothing yet, `{"error": {"message", "hints", "exit"}}`
/// on stdout); a broken pipe exits quietly.
fn report_error(err: &anyhow::Error, json: bool) -> Exit {
    let broken_pipe = err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    });
    if broken_pipe {
        return Exit::Success;
    }
    // Errors quote input (ids, names, values): shown like other human text.
    let message = crate::report::terminal::escape(&render(err)).into_owned();
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "error: {message}");
    let exit = if err.chain().any(|cause| cause.is::<UsageError>()) {
        Exit::Usage
    } else {
        Exit::Error
    };
    if json && !util::emitted() {
        let doc = serde_json::json!({"error": {
            "message": format!("{err:#}"),
            "hints": crate::report::error::hints(err),
            "exit": exit.code(),
        }});
        let _ = writeln!(std::io::stdout().lock(), "{doc}");
    }
    exit
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser as _;

    /// The list `hook install` denies the writer and the commands refused
    /// from inside an agent are one list: each command line below is told
    /// by `persons_command` as the name it is listed under.
    #[test]
    fn the_persons_commands_are_the_ones_refused_from_inside_an_agent() {
        let lines: [&[&str]; 13] = [
            &["init"],
            &["run"],
            &["record", "--findings", "f"],
            &["ledger", "repair"],
            &[
                "contract",
                "amend",
                "--max-rounds",
                "5",
                "--by",
                "a",
                "--reason",
                "r",
            ],
            &["contract", "restore"],
            &["resume", "--by", "a", "--reason", "r"],
            &["waive", "F1", "--by", "a", "--reason", "r"],
            &["approve", "--by", "a"],
            &["reject", "--by", "a"],
            &["skill", "install"],
            &["hook", "install", "--agent", "claude"],
            &["hook", "uninstall", "--agent", "claude"],
        ];
        let mut told = Vec::new();
        for line in lines {
            let cli = Cli::try_parse_from(std::iter::once("referee").chain(line.iter().copied()))
                .unwrap_or_else(|e| panic!("{line:?}: {e}"));
            told.push(persons_command(&cli.command).unwrap_or_else(|| panic!("{line:?}")));
        }
        assert_eq!(told, PERSONS_COMMANDS);
        let status = Cli::try_parse_from(["referee", "status"]).expect("status");
        assert_eq!(persons_command(&status.command), None);
    }
}
