//! One file per subcommand: the only place that sequences I/O. This file
//! dispatches and turns errors into messages and exit codes.

use std::io::Write;

use crate::cli::{
    ApprovalCommand, Cli, Command, ContractCommand, HookCommand, JudgeCommand, LedgerCommand,
    SkillCommand,
};
use crate::engine::Loop;
use crate::exit::{Exit, UsageError};
use crate::state::State;

mod approval;
mod completions;
mod contract;
mod decide;
mod doctor;
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
mod waive;

/// Runs one command line and says how the process should exit.
pub fn main(cli: Cli) -> Exit {
    // Before any agent runs: what an agent orphans comes back to referee.
    crate::agent::process::supervise();
    match dispatch(cli) {
        Ok(exit) => exit,
        Err(err) => report_error(&err),
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
        Command::Complete(args) => completions::complete(dir, args),
        Command::Skill(SkillCommand::Install(args)) => skill::install(dir, args),
        Command::Hook(HookCommand::Stop(args)) => Ok(hook::stop(dir, args)),
        Command::Hook(HookCommand::Install(args)) => hook::install(&State::locate(dir)?, args),
        Command::Hook(HookCommand::Uninstall(args)) => hook::uninstall(&State::locate(dir)?, args),
        Command::Doctor(args) => doctor::run(&State::locate(dir)?, args),
    }
}

/// The commands [`persons_command`] names, as typed after `referee`: the
/// Bash commands `hook install` asks Claude Code to deny the writer.
const PERSONS_COMMANDS: [&str; 12] = [
    "init",
    "run",
    "record",
    "ledger repair",
    "contract amend",
    "contract restore",
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
        Command::Waive(_) => "waive",
        Command::Approve(_) => "approve",
        Command::Reject(_) => "reject",
        Command::Skill(SkillCommand::Install(_)) => "skill install",
        Command::Hook(HookCommand::Install(_)) => "hook install",
        Command::Hook(HookCommand::Uninstall(_)) => "hook uninstall",
        _ => return None,
    })
}

/// Prints `error: ...` with the cause chain; a broken pipe exits quietly.
fn report_error(err: &anyhow::Error) -> Exit {
    let broken_pipe = err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    });
    if broken_pipe {
        return Exit::Success;
    }
    // Errors quote input (ids, names, values): shown like other human text.
    let message = crate::report::terminal::escape(&format!("{err:#}")).into_owned();
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "error: {message}");
    if err.chain().any(|cause| cause.is::<UsageError>()) {
        Exit::Usage
    } else {
        Exit::Error
    }
}

/// Writes text for people to stdout: the one place human output leaves the
/// process, so the one place stored text (a finding's title, body or path)
/// has its control characters made visible and referee's own colors are
/// applied (`report::style::for_people`). A closed pipe comes back as an
/// error that exits quietly.
fn emit(text: &str) -> anyhow::Result<()> {
    emit_exact(crate::report::style::for_people(text).as_bytes())
}

/// Writes a document for programs (JSON, CSV, SARIF, shell scripts, man
/// pages) byte for byte: its own format escapes what it must.
fn emit_exact(bytes: &[u8]) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()?;
    Ok(())
}

/// Writes what a renderer made in `format`: for people, or exactly.
fn emit_rendered(bytes: &[u8], for_people: bool) -> anyhow::Result<()> {
    if for_people {
        emit(&String::from_utf8_lossy(bytes))
    } else {
        emit_exact(bytes)
    }
}

/// Writes `value` as pretty JSON and a newline, exactly.
fn emit_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    let mut bytes = serde_json::to_vec_pretty(value)?;
    bytes.push(b'\n');
    emit_exact(&bytes)
}

/// The clock: now as RFC 3339 UTC to the second. `REFEREE_NOW` fixes it (for
/// tests and reproducible demos).
fn now() -> anyhow::Result<String> {
    match std::env::var("REFEREE_NOW") {
        Ok(fixed) => {
            let parsed = chrono::DateTime::parse_from_rfc3339(&fixed).map_err(|e| {
                anyhow::anyhow!(
                    "environment variable `REFEREE_NOW`: `{fixed}` is not an RFC 3339 time ({e})"
                )
            })?;
            Ok(parsed
                .with_timezone(&chrono::Utc)
                .format("%Y-%m-%dT%H:%M:%SZ")
                .to_string())
        }
        Err(_) => Ok(chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()),
    }
}

pub(crate) use crate::state::shown;

/// A person's words for the ledger and its evidence (`--by`, `--reason`,
/// `--idempotency-key`): on one line, with secrets masked as evidence masks
/// them (`redact`), since a ledger is committed and shared.
fn person_words(text: &str) -> String {
    crate::redact::redact_str(&crate::text::one_line(text))
}

/// Refuses to edit `path`, a file of the work tree `repo` that referee
/// edits for the person (agent settings, `AGENTS.md`), when a link is on
/// the way to it or is the file itself: the writer could have made
/// `.claude` a link to a folder outside the repository.
fn refuse_link_in_repo(repo: &std::path::Path, path: &std::path::Path) -> anyhow::Result<()> {
    use crate::statefs::FsError;
    match crate::statefs::check(repo, path) {
        Ok(_) => Ok(()),
        Err(FsError::Link { path: link }) => anyhow::bail!(
            "`{}` is a symlink: referee writes no file of the repository through a link, which could lead outside it; nothing was written\n\
             hint: replace the link with what it points to, or edit `{}` by hand",
            shown(&link),
            shown(path)
        ),
        Err(FsError::NotFolder { path: file }) => anyhow::bail!(
            "`{}` is not a folder, so `{}` cannot be written; nothing was written\nhint: remove it",
            shown(&file),
            shown(path)
        ),
        Err(err) => Err(err.into()),
    }
}

/// The text of `path`, a file of the work tree `repo` referee is about to
/// edit: never through a link ([`refuse_link_in_repo`]), never a FIFO or a
/// device; `None` when it does not exist.
fn read_repo_text(
    repo: &std::path::Path,
    path: &std::path::Path,
) -> anyhow::Result<Option<String>> {
    refuse_link_in_repo(repo, path)?;
    match crate::statefs::read(repo, path)? {
        None => Ok(None),
        Some(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| anyhow::anyhow!("`{}` is not UTF-8 text", shown(path))),
    }
}

/// The program `name` as found on `PATH`, if it is there.
fn on_path(name: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// Loads the selected loop's contract (validated) and its store, and
/// removes the scratch folders of killed runs of the loop.
fn open_loop(state: &State, select: &crate::state::LoopSelect) -> anyhow::Result<Loop> {
    let name = state.select(select)?;
    let paths = state.paths(&name);
    let loaded = crate::contract::load::load(&paths.contract)?;
    let anchor = crate::anchor::Anchor::of(&state.repo, &state.root, name.as_str())?;
    let store = crate::ledger::Store::new(paths.ledger.clone(), paths.dir.clone(), &loaded.sha256)
        .anchored(anchor.clone());
    let own = crate::snapshot::Own::open(&state.repo, &anchor)?;
    let lp = Loop {
        name,
        paths,
        loaded,
        store,
        repo: state.repo.clone(),
        exclude: state.inside_repo().into_iter().collect(),
        // From the pins a person's installs wrote, never from `.referee/`.
        frozen: crate::anchor::pins::Pins::of(&state.repo, &state.root)?.frozen()?,
        anchor,
        own: Some(own),
    };
    scratch::clean(&lp, false);
    Ok(lp)
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
        let lines: [&[&str]; 12] = [
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
