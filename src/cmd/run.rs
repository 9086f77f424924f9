//! `referee run`: the referee drives the loop. Each round: the writer, then
//! the engine's phases (`engine::phase`): `begin` (snapshot, patch), `guard`
//! (scope, budget, stalled), the reviewer, `commit` (the same decision and
//! append `record` uses). Stops when a rule fires; a
//! round that fails or is interrupted records nothing, and the next `run`
//! starts it again.

mod dry_run;

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use anyhow::Context as _;
use clap::Args;
use serde_json::json;

use super::round::{Caller, RunLock, Spend, Turn};
use super::scratch::WorkDir;
use crate::agent::preset::{self, Role};
use crate::agent::process;
use crate::agent::prompt;
use crate::contract::Agent;
use crate::engine::phase;
use crate::engine::{self, History, Loop, LoopStanding, Recorded, Submission};
use crate::exit::{Exit, Hinted, UsageError, hinted};
use crate::report::progress::Printer;
use crate::report::round::RoundView;
use crate::rules::Rule;
use crate::state::LoopSelect;
use crate::state::State;
use crate::statefs;

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub select: LoopSelect,
    /// Write the contract from this template (a shipped name or a TOML file)
    /// when the loop has none yet; an existing contract is kept (for CI).
    #[arg(long, value_name = "TEMPLATE")]
    pub from: Option<String>,
    /// The task for the writer.
    #[arg(long, value_name = "TEXT", conflicts_with = "task_file")]
    pub task: Option<String>,
    /// Read the task from a file.
    #[arg(long, value_name = "F")]
    pub task_file: Option<PathBuf>,
    /// Review the existing changes before any writer call.
    #[arg(long)]
    pub review_first: bool,
    /// Print only the outcome (and the hand-off), no progress.
    #[arg(long, conflicts_with = "json")]
    pub quiet: bool,
    /// Print JSON lines of round events on stdout.
    #[arg(long)]
    pub json: bool,
    /// Print the next round's agent calls and prompts exactly, without
    /// calling an agent, taking a lock or writing a file.
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(state: &State, mut args: RunArgs) -> anyhow::Result<Exit> {
    if let Some(from) = args.from.clone() {
        contract_from(state, &mut args, &from)?;
    }
    let lp = super::open_loop(state, &args.select)?;
    // A loop that stopped on this tree is done: a CI job run again answers
    // with the stop, needing no agent and appending nothing.
    let history = History::read(&lp, lp.store.read()?.rows)?;
    if matches!(history.standing(), LoopStanding::Stopped { .. })
        && let Some(done) = engine::finished(&lp, &history, &lp.worktree_tree()?)?
    {
        let out = Printer::new(args.json, args.quiet);
        return show(&lp, &history, &out, &done);
    }
    let contract = lp.contract().clone();
    // A panel's first reviewer stands for it where one call is shown (a
    // dry run); a round calls every one.
    let first = contract.reviewers.first().map(|m| m.agent.clone());
    let (Some(writer), Some(reviewer)) =
        (contract.writer.clone(), contract.reviewer.clone().or(first))
    else {
        let missing = if contract.writer.is_none() {
            "writer"
        } else {
            "reviewer"
        };
        return Err(hinted(
            format!(
                "contract `{}` has no `[{missing}]` section: `referee run` needs a writer and a reviewer",
                super::shown(&lp.loaded.path)
            ),
            format!(
                "before round 1, add the sections by hand (`referee docs presets`) or write the contract again: `referee init --loop {} --writer claude --reviewer codex --force`; or drive the loop yourself with `referee record`",
                lp.name
            ),
        ));
    };
    if args.dry_run {
        history.ensure_open(&lp.name)?;
        let task = match (&args.task, &args.task_file) {
            (None, None) => task(&lp, &args)?,
            // Read, not saved: a dry run writes nothing.
            (Some(text), _) => text.clone(),
            (None, Some(path)) => std::fs::read_to_string(path)
                .with_context(|| format!("--task-file `{}`: cannot read", path.display()))?,
        };
        dry_run::show(&lp, &history, &writer, &task, args.review_first, args.json)?;
        return Ok(Exit::Success);
    }
    preflight(&lp, &writer, &contract.panel_reviewers())?;
    lp.store.create_base()?;
    let (_driver, ended) = RunLock::take(&lp)?;
    // Every process below this one is the loop's agents': the commands only
    // a person runs refuse to run there (SPEC §8.1). This process is the
    // child subreaper, so even what they orphan stays below it.
    let _agents = crate::anchor::authority::register(
        std::process::id() as i32,
        "the agents of `referee run`",
        lp.name.as_str(),
        &state.root,
    )?;
    // Two loops driven in one work tree see each other's edits in their
    // patches: say so before any agent call.
    for other in state.loops().unwrap_or_default() {
        if other != lp.name
            && let Ok(anchor) = crate::anchor::Anchor::of(&state.repo, &state.root, other.as_str())
            && let Some(d) = crate::anchor::run_lock::driving(&anchor)
        {
            eprintln!(
                "warning: loop `{other}` is driven in this work tree too, by {}: each loop's patches will hold the other's edits",
                super::describe(&d)
            );
        }
    }
    let task = task(&lp, &args)?;
    let out = Printer::new(args.json, args.quiet);
    out.leftovers(ended);
    let interrupt = process::interrupt_flag();
    let mut review_first = args.review_first;
    loop {
        let history = History::read(&lp, lp.store.read()?.rows)?;
        history.ensure_open(&lp.name)?;
        let driver = Driver {
            lp: &lp,
            writer: &writer,
            reviewer: &reviewer,
            task: &task,
            out: &out,
            interrupt: &interrupt,
            writer_done: std::cell::Cell::new(false),
        };
        let recorded = match driver.round(&history, review_first) {
            Ok(recorded) => recorded,
            Err(err) => {
                // Say how to go on: the round starts over, or, when the
                // writer's work is already in the tree, only its review.
                let name = lp.name.as_str();
                let round = history.round() + 1;
                let hint = if driver.writer_done.get() {
                    format!(
                        "the writer's round {round} is in the work tree: `referee run --loop {name} --review-first` reviews it without calling the writer again; `referee run --loop {name}` starts the round over"
                    )
                } else {
                    format!("`referee run --loop {name}` starts round {round} again")
                };
                let mut hints = crate::report::error::hints(&err);
                hints.push(hint);
                let err = anyhow::Error::new(Hinted {
                    message: format!("{err:#}"),
                    hints,
                });
                out.error(&err);
                return Err(err);
            }
        };
        review_first = false;
        let history = History::read(&lp, lp.store.read()?.rows)?;
        let exit = show(&lp, &history, &out, &recorded)?;
        if recorded.state.rule.is_some() {
            return Ok(exit);
        }
    }
}

/// Prints a round `run` recorded (or the round the loop had stopped on),
/// and the outcome when it stopped; its exit code.
fn show(lp: &Loop, history: &History, out: &Printer, recorded: &Recorded) -> anyhow::Result<Exit> {
    let view = RoundView {
        loop_name: lp.name.as_str(),
        row: &recorded.row,
        state: &recorded.state,
        max_rounds: history.max_rounds,
        already: recorded.already,
        floor: lp.contract().severity_floor,
        driven: true,
    };
    let exit = recorded.exit();
    out.round(&view, exit)?;
    if let Some(stop) = &recorded.state.rule {
        // Every stop but `clean` hands off (SPEC §5.1).
        let handoff = (*stop != Rule::Clean).then(|| crate::report::handoff::of(lp, history));
        out.end(lp.name.as_str(), recorded, exit, handoff.as_ref())?;
    }
    Ok(exit)
}

/// Refuses to start (or resume) a loop whose agents or judge cannot be
/// started, before any agent call: a writer's paid call is not thrown away
/// because the reviewer's program is missing.
fn preflight(
    lp: &Loop,
    writer: &crate::contract::Agent,
    reviewers: &[(&str, &crate::contract::Agent)],
) -> anyhow::Result<()> {
    let mut missing = Vec::new();
    let panel = lp.contract().is_panel();
    let named: Vec<(String, &crate::contract::Agent)> = reviewers
        .iter()
        .enumerate()
        .map(|(i, (_, agent))| {
            let role = if panel {
                format!("reviewers[{i}]")
            } else {
                "reviewer".into()
            };
            (role, *agent)
        })
        .collect();
    for (role, agent) in std::iter::once(("writer".to_string(), writer)).chain(named) {
        let cwd = match &agent.cwd {
            Some(dir) => lp.repo.join(dir),
            None => lp.repo.clone(),
        };
        let program = preset::program_of(agent).unwrap_or_default();
        if program.is_empty() || !preset::resolves(&program, &cwd) {
            let hint = match agent.preset.info().install {
                Some(install) => format!(" (install: `{install}`, or set `{role}.bin`)"),
                None => format!(" (check `{role}.command`)"),
            };
            missing.push(format!("{role} `{program}`{hint}"));
        }
    }
    if let Some(judge) = &lp.contract().judge {
        let program = crate::judge::engine::program(judge);
        if let Some(program) = program
            && !preset::resolves(&program, &lp.repo)
        {
            missing.push(format!(
                "judge `{program}` (check `judge.command` or `judge.bin`)"
            ));
        }
    }
    if !missing.is_empty() {
        return Err(hinted(
            format!(
                "cannot start: {} not found on PATH or not executable; no agent was called",
                missing.join(", ")
            ),
            "install it, or point the contract at it (before round 1: edit the contract; after: it is pinned, start a new loop)",
        ));
    }
    Ok(())
}

/// `--from`: writes the loop's contract from the template unless the loop
/// has one (a CI job that resumes keeps its contract), and selects the loop.
fn contract_from(state: &State, args: &mut RunArgs, from: &str) -> anyhow::Result<()> {
    let init = crate::cmd::create::InitArgs {
        name: args.select.name.clone(),
        from: Some(from.to_string()),
        max_rounds: None,
        floor: None,
        scope: Vec::new(),
        closure: None,
        guards: None,
        budget_usd: None,
        budget_tokens: None,
        writer: None,
        reviewer: Vec::new(),
        writer_command: None,
        reviewer_command: None,
        base: None,
        force: false,
        json: false,
    };
    let (name, path) = super::create::target(state, &init)?;
    if path.exists() {
        if !args.quiet && !args.json {
            eprintln!(
                "using the existing contract `{}` (`--from` writes one only when there is none)",
                super::shown(&path)
            );
        }
    } else {
        let (_, path, _, _) = super::create::write(state, &init)?;
        if !args.quiet && !args.json {
            eprintln!("wrote `{}` from `{from}`", super::shown(&path));
        }
    }
    args.select.name = Some(name.to_string());
    Ok(())
}

/// The task: `--task`, `--task-file`, or the one a previous `run` of this
/// loop saved (so a resumed loop keeps its task).
fn task(lp: &Loop, args: &RunArgs) -> anyhow::Result<String> {
    let saved = lp.paths.task();
    let given = match (&args.task, &args.task_file) {
        (Some(text), _) => Some(text.clone()),
        (None, Some(path)) => Some(
            std::fs::read_to_string(path)
                .with_context(|| format!("--task-file `{}`: cannot read", path.display()))?,
        ),
        (None, None) => None,
    };
    match given {
        Some(text) if text.trim().is_empty() => {
            Err(UsageError("--task: the task is empty".into()).into())
        }
        Some(text) => {
            // Stored like evidence: redacted. A resumed loop reads this copy,
            // so a secret in a task does not survive a resume either.
            let redacted = crate::redact::redact_str(&text);
            statefs::replace(lp.store.base(), &saved, redacted.as_bytes())?;
            Ok(text)
        }
        None => match statefs::read(lp.store.base(), &saved)? {
            Some(bytes) => String::from_utf8(bytes).map_err(|e| {
                hinted(
                    format!(
                        "`{}`: the saved task is not UTF-8 (byte {})",
                        super::shown(&saved),
                        e.utf8_error().valid_up_to()
                    ),
                    "pass the task again with `--task TEXT` or `--task-file F`",
                )
            }),
            None => Err(UsageError(format!(
                "loop `{}` has no task yet: pass `--task TEXT` or `--task-file F`",
                lp.name
            ))
            .into()),
        },
    }
}

struct Driver<'a> {
    lp: &'a Loop,
    writer: &'a Agent,
    reviewer: &'a Agent,
    task: &'a str,
    out: &'a Printer,
    interrupt: &'a std::sync::Arc<AtomicBool>,
    /// The writer's call of the round under way finished: its work is in
    /// the tree, and only the review is missing if the round fails now.
    writer_done: std::cell::Cell<bool>,
}

impl Driver<'_> {
    fn round(&self, history: &History, skip_writer: bool) -> anyhow::Result<Recorded> {
        let lp = self.lp;
        let round = history.round() + 1;
        let work = WorkDir::new(lp, round)?;
        let files = work.files();
        let schema = prompt::schema_for_agents();
        work.write(&files.schema, schema.as_bytes())?;
        let mut turn = Turn {
            history,
            round,
            work: &work,
            spend: Spend::default(),
            evidence: vec![("task.md".into(), self.task.as_bytes().to_vec())],
        };
        let (_, must_fix) = super::round::open_findings(lp, history);
        let owned = super::round::base_vars(lp, history, round, self.task);
        let base_vars: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let caller = self.caller();

        let mut responses = Vec::new();
        if !skip_writer {
            let list = prompt::findings_list(&must_fix);
            let mut vars = base_vars.to_vec();
            vars.push(("findings", list.as_str()));
            let text = prompt::render(&caller.template(Role::Writer)?, &vars);
            let doc = json!({ "findings": must_fix });
            work.write(&files.findings, &serde_json::to_vec_pretty(&doc)?)?;
            let reply = caller.call(&mut turn, Role::Writer, None, self.writer, &text, &lp.repo)?;
            responses = reply.responses;
            self.writer_done.set(true);
        }

        let begun = phase::begin(lp, history, lp.worktree_tree()?)?;
        // A writer that changed nothing while must-fix findings are open is
        // `stalled`: no reviewer call is spent on an unchanged tree.
        let spent = (turn.spend.usd, turn.spend.tokens);
        let guarded = begun.guard(history, spent, &responses, !skip_writer);
        let (tree, patch) = (&begun.snapped.snap.tree, &begun.snapped.patch.text);
        let review = if !guarded.wants_review() {
            None
        } else if lp.contract().is_panel() {
            Some(caller.panel(&mut turn, &base_vars, tree, patch)?)
        } else {
            Some(caller.review(&mut turn, self.reviewer, &base_vars, tree, patch)?)
        };
        begun.commit(
            lp,
            guarded,
            Submission::driven(
                review,
                responses,
                (turn.spend.usd, turn.spend.tokens),
                super::now()?,
                turn.evidence,
                Some(std::sync::Arc::clone(self.interrupt)),
            ),
            "ran",
            "run again: the round starts over",
        )
    }

    fn caller(&self) -> Caller<'_> {
        Caller {
            lp: self.lp,
            progress: self.out,
            interrupt: self.interrupt,
        }
    }
}
