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
mod escalate;
mod findings;
mod hook;
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
    }
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

/// Loads the selected loop's contract (validated) and its store, and
/// removes the scratch folders of killed runs of the loop.
fn open_loop(state: &State, select: &crate::cli::LoopSelect) -> anyhow::Result<Loop> {
    let name = state.select(select)?;
    let paths = state.paths(&name);
    let loaded = crate::contract::load::load(&paths.contract)?;
    let store = crate::ledger::Store::new(paths.ledger.clone(), paths.dir.clone(), &loaded.sha256);
    let anchor = crate::anchor::Anchor::of(&state.repo, &state.root, name.as_str())?;
    let own = crate::snapshot::Own::open(&state.repo, &anchor)?;
    let lp = Loop {
        name,
        paths,
        loaded,
        store,
        repo: state.repo.clone(),
        exclude: state.inside_repo().into_iter().collect(),
        frozen: {
            let mut files = hook::frozen_files(state);
            files.extend(skill::frozen_files(state));
            files.sort();
            files.dedup();
            files
        },
        anchor,
        own: Some(own),
    };
    scratch::clean(&lp, false);
    Ok(lp)
}
