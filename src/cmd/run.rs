//! `referee run`: the referee drives the loop. Each round: writer → snapshot
//! → patch → scope and budget guards → reviewer → findings → the same
//! `engine::finish` that `record` uses → rules. Stops when a rule fires; a
//! round that fails or is interrupted records nothing, and the next `run`
//! starts it again.

use std::fs::File;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::Context as _;
use serde_json::json;

use crate::agent::file;
use crate::agent::output::{self, Reply};
use crate::agent::preset::{self, Role};
use crate::agent::process::{self, Call, Finished, ProcessError};
use crate::agent::prompt;
use crate::cli::{HandoffFormat, RunArgs};
use crate::contract::{Agent, Preset};
use crate::engine::decide::Terms;
use crate::engine::{self, History, Loop, Recorded, Review, Submission};
use crate::exit::{Exit, UsageError};
use crate::findings::{self, Finding, Format};
use crate::redact::redact;
use crate::report::round::{self, RoundView};
use crate::snapshot;
use crate::state::State;
use crate::statefs;

use super::scratch::{self, WorkDir};

pub fn run(state: &State, mut args: RunArgs) -> anyhow::Result<Exit> {
    if let Some(from) = args.from.clone() {
        contract_from(state, &mut args, &from)?;
    }
    let lp = super::open_loop(state, &args.select)?;
    let contract = lp.contract().clone();
    let (Some(writer), Some(reviewer)) = (contract.writer.clone(), contract.reviewer.clone())
    else {
        let missing = if contract.writer.is_none() {
            "writer"
        } else {
            "reviewer"
        };
        anyhow::bail!(
            "contract `{}` has no `[{missing}]` section: `referee run` needs a writer and a reviewer\n\
             hint: `referee init --writer claude --reviewer codex` (before round 1), or drive the loop yourself with `referee record`",
            super::shown(&lp.loaded.path)
        );
    };
    preflight(&lp, &writer, &reviewer)?;
    lp.store.create_base()?;
    let (_driver, ended) = DriverLock::take(&lp)?;
    let task = task(&lp, &args)?;
    let out = Printer::new(&args);
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
        };
        let recorded = match driver.round(&history, review_first) {
            Ok(recorded) => recorded,
            Err(err) => {
                out.error(&err);
                return Err(err);
            }
        };
        review_first = false;
        out.round(&lp, &recorded)?;
        if recorded.state.rule.is_some() {
            let exit = recorded.exit();
            out.end(&lp, &recorded, exit)?;
            return Ok(exit);
        }
    }
}

/// Refuses to start (or resume) a loop whose agents or judge cannot be
/// started, before any agent call: a writer's paid call is not thrown away
/// because the reviewer's program is missing.
fn preflight(
    lp: &Loop,
    writer: &crate::contract::Agent,
    reviewer: &crate::contract::Agent,
) -> anyhow::Result<()> {
    let mut missing = Vec::new();
    for (role, agent) in [("writer", writer), ("reviewer", reviewer)] {
        let cwd = match &agent.cwd {
            Some(dir) => lp.repo.join(dir),
            None => lp.repo.clone(),
        };
        let program = preset::program_of(agent).unwrap_or_default();
        if program.is_empty() || !preset::resolves(&program, &cwd) {
            let hint = match preset::install_hint(agent.preset) {
                Some(install) => format!(" (install: `{install}`, or set `{role}.bin`)"),
                None => format!(" (check `{role}.command`)"),
            };
            missing.push(format!("{role} `{program}`{hint}"));
        }
    }
    if let Some(judge) = &lp.contract().judge {
        let program = match judge.engine {
            crate::contract::JudgeEngine::Command => {
                judge.command.as_ref().and_then(|c| c.first().cloned())
            }
            crate::contract::JudgeEngine::Claude => {
                Some(judge.bin.clone().unwrap_or_else(|| "claude".into()))
            }
            crate::contract::JudgeEngine::Codex => {
                Some(judge.bin.clone().unwrap_or_else(|| "codex".into()))
            }
            crate::contract::JudgeEngine::Replay => None,
        };
        if let Some(program) = program
            && !preset::resolves(&program, &lp.repo)
        {
            missing.push(format!(
                "judge `{program}` (check `judge.command` or `judge.bin`)"
            ));
        }
    }
    if !missing.is_empty() {
        anyhow::bail!(
            "cannot start: {} not found on PATH or not executable; no agent was called\n\
             hint: install it, or point the contract at it (before round 1: edit the contract; after: it is pinned, start a new loop)",
            missing.join(", ")
        );
    }
    Ok(())
}

/// `--from`: writes the loop's contract from the template unless the loop
/// has one (a CI job that resumes keeps its contract), and selects the loop.
fn contract_from(state: &State, args: &mut RunArgs, from: &str) -> anyhow::Result<()> {
    let init = crate::cli::InitArgs {
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
        reviewer: None,
        writer_command: None,
        reviewer_command: None,
        base: None,
        force: false,
        json: false,
    };
    let (name, path) = super::init::target(state, &init)?;
    if path.exists() {
        if !args.quiet && !args.json {
            eprintln!(
                "using the existing contract `{}` (`--from` writes one only when there is none)",
                super::shown(&path)
            );
        }
    } else {
        let (_, path, _, _) = super::init::write(state, &init)?;
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
    let saved = lp.store.loop_dir().join("task.md");
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
                anyhow::anyhow!(
                    "`{}`: the saved task is not UTF-8 (byte {})\nhint: pass the task again with `--task TEXT` or `--task-file F`",
                    super::shown(&saved),
                    e.utf8_error().valid_up_to()
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

/// One `run` per loop at a time: a lock file beside the ledger, held for the
/// whole run. The ledger itself is locked only while a round is appended, so
/// `status` and `escalate` work during a run.
struct DriverLock(#[allow(dead_code)] File);

impl DriverLock {
    /// The lock, and how many processes a killed run's agents left running
    /// were ended.
    fn take(lp: &Loop) -> anyhow::Result<(DriverLock, usize)> {
        let path = lp.store.path().with_extension("run.lock");
        let file = statefs::open_lock(lp.store.base(), &path)?;
        match file.try_lock() {
            Ok(()) => {
                // No other run drives this loop: every scratch folder left
                // by a killed one (prompts, findings) goes now, and so does
                // what its agent had started.
                let ended = scratch::clean(lp, true);
                Ok((DriverLock(file), ended))
            }
            Err(std::fs::TryLockError::WouldBlock) => anyhow::bail!(
                "another `referee run` is driving loop `{}` (`{}` is locked)",
                lp.name,
                super::shown(&path)
            ),
            Err(std::fs::TryLockError::Error(e)) => {
                Err(anyhow::anyhow!("cannot lock `{}`: {e}", path.display()))
            }
        }
    }
}

struct Driver<'a> {
    lp: &'a Loop,
    writer: &'a Agent,
    reviewer: &'a Agent,
    task: &'a str,
    out: &'a Printer,
    interrupt: &'a std::sync::Arc<AtomicBool>,
}

/// What the round's calls spent so far.
#[derive(Default)]
struct Spend {
    usd: Option<f64>,
    tokens: Option<u64>,
}

impl Spend {
    fn add(&mut self, reply: &Reply) {
        if let Some(usd) = reply.cost_usd {
            self.usd = Some(self.usd.unwrap_or(0.0) + usd);
        }
        if let Some(tokens) = reply.tokens {
            self.tokens = Some(self.tokens.unwrap_or(0) + tokens);
        }
    }
}

impl Driver<'_> {
    fn round(&self, history: &History, skip_writer: bool) -> anyhow::Result<Recorded> {
        let lp = self.lp;
        let contract = lp.contract();
        let round = history.round() + 1;
        let work = WorkDir::new(lp, round)?;
        let files = work.files();
        let schema = prompt::schema_for_agents();
        work.write(&files.schema, schema.as_bytes())?;
        let mut evidence: Vec<(String, Vec<u8>)> =
            vec![("task.md".into(), self.task.as_bytes().to_vec())];
        let mut spend = Spend::default();
        let floor = contract.severity_floor;
        let open: Vec<&Finding> = history
            .registry
            .findings
            .iter()
            .filter(|t| t.standing == engine::accounting::Standing::Open)
            .map(|t| &t.finding)
            .collect();
        let must_fix: Vec<&Finding> = open
            .iter()
            .copied()
            .filter(|f| f.severity >= floor)
            .collect();
        let scope = contract
            .scope
            .iter()
            .map(|g| format!("`{g}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let round_text = round.to_string();
        let max_text = history.max_rounds.to_string();
        let base_vars = [
            ("loop", lp.name.as_str()),
            ("round", round_text.as_str()),
            ("max_rounds", max_text.as_str()),
            ("task", self.task),
            ("scope", scope.as_str()),
            ("floor", floor.as_str()),
            ("schema", prompt::SCHEMA),
        ];

        let mut responses = Vec::new();
        if !skip_writer {
            let list = prompt::findings_list(&must_fix);
            let mut vars = base_vars.to_vec();
            vars.push(("findings", list.as_str()));
            let text = prompt::render(&self.template(Role::Writer)?, &vars);
            let doc = json!({ "findings": must_fix });
            work.write(&files.findings, &serde_json::to_vec_pretty(&doc)?)?;
            let reply = self.call(
                Role::Writer,
                self.writer,
                history,
                &spend,
                round,
                &text,
                &work,
                &mut evidence,
            )?;
            spend.add(&reply);
            responses = reply.responses;
        }

        let exclude: Vec<&str> = lp.exclude.iter().map(String::as_str).collect();
        let tree = snapshot::worktree_tree(&lp.repo, &exclude)?;
        let snapped = engine::snap(lp, history, &tree)?;
        let patch = &snapped.patch;

        // The guards end the round before the review when they can.
        let terms = Terms::of(&history.contract, history.max_rounds)
            .map_err(|e| anyhow::anyhow!("contract field `scope`: {e}"))?;
        // The same guards `decide` applies, asked before spending a review.
        let out_of_scope = !terms.out_of_scope(&patch.files).is_empty();
        let over_budget = terms
            .budget_reached(
                history.spent_usd + spend.usd.unwrap_or(0.0),
                history.spent_tokens + spend.tokens.unwrap_or(0),
            )
            .is_some();
        // A writer that changed nothing while must-fix findings are open is
        // `stalled`: no reviewer call is spent on an unchanged tree.
        let stalled =
            !skip_writer && terms.stalled(&history.registry, patch.files.is_empty(), &responses);
        let review = if out_of_scope || over_budget || stalled {
            None
        } else {
            work.write(&files.patch, &patch.text)?;
            let list = prompt::findings_list(&open);
            let excerpt = prompt::patch_excerpt(&patch.text);
            let mut vars = base_vars.to_vec();
            vars.push(("open_findings", list.as_str()));
            vars.push(("patch", excerpt.as_str()));
            let text = prompt::render(&self.template(Role::Reviewer)?, &vars);
            let reply = self.call(
                Role::Reviewer,
                self.reviewer,
                history,
                &spend,
                round,
                &text,
                &work,
                &mut evidence,
            )?;
            spend.add(&reply);
            let raw = reply.review.unwrap_or_default();
            let format = match self.reviewer.preset {
                Preset::Tests => Format::Junit,
                Preset::CodexReview => Format::Codex,
                _ => Format::Auto,
            };
            let parsed = match findings::parse(&raw, format, &lp.repo.to_string_lossy()) {
                Ok(parsed) => parsed,
                // `codex exec review` prints only its explanation when it has no
                // comment; its exit status 0 (checked above) is the proof there.
                Err(findings::FindingsError::NotProven { .. })
                    if self.reviewer.preset == Preset::CodexReview
                        && !String::from_utf8_lossy(&raw).trim().is_empty() =>
                {
                    findings::Parsed {
                        source_format: Format::Codex,
                        findings: Vec::new(),
                        resolved: Vec::new(),
                    }
                }
                Err(err) => {
                    let kept = keep_failure(lp, round, Role::Reviewer, &[("review", &raw)])?;
                    anyhow::bail!(
                        "round {round}: reviewer `{}` gave no readable review: {err}\n\
                         nothing was recorded; its output is in `{}`",
                        self.reviewer.preset.as_str(),
                        super::shown(&kept)
                    );
                }
            };
            Some(Review::new(raw, parsed))
        };

        let mut locked = lp.store.lock()?;
        let rows = locked.rows()?;
        if rows.len() != history.rows.len() {
            anyhow::bail!(
                "loop `{}` changed while round {round} ran (another process appended to its ledger); nothing was recorded\n\
                 hint: run again: the round starts over",
                lp.name
            );
        }
        let history = History::read(lp, rows)?;
        engine::finish(
            lp,
            locked,
            &history,
            snapped,
            Submission {
                review,
                responses,
                cost_usd: spend.usd,
                tokens: spend.tokens,
                idempotency_key: None,
                at: super::now()?,
                evidence,
                interrupt: Some(std::sync::Arc::clone(self.interrupt)),
                stalled: stalled && !out_of_scope && !over_budget,
            },
        )
    }

    /// The contract's template for `role`, or the built-in one.
    fn template(&self, role: Role) -> anyhow::Result<String> {
        let p = &self.lp.contract().prompt;
        let (inline, file, builtin) = match role {
            Role::Writer => (&p.writer, &p.writer_file, prompt::WRITER),
            Role::Reviewer => (&p.reviewer, &p.reviewer_file, prompt::REVIEWER),
        };
        match (inline, file) {
            (Some(text), _) => Ok(text.clone()),
            (None, Some(rel)) => {
                let path = self.lp.repo.join(rel);
                std::fs::read_to_string(&path).with_context(|| {
                    format!(
                        "contract field `prompt.{}_file`: cannot read `{}`",
                        role.as_str(),
                        path.display()
                    )
                })
            }
            (None, None) => Ok(builtin.to_string()),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn call(
        &self,
        role: Role,
        agent: &Agent,
        history: &History,
        spend: &Spend,
        round: u32,
        text: &str,
        work: &WorkDir,
        evidence: &mut Vec<(String, Vec<u8>)>,
    ) -> anyhow::Result<Reply> {
        let lp = self.lp;
        let contract = lp.contract();
        let files = &work.files();
        // The agent gets the exact prompt on stdin; the copy on disk, which
        // a killed run leaves behind, is redacted like evidence.
        work.write(&files.prompt, &redact(text.as_bytes()))?;
        let _ = std::fs::remove_file(&files.output);
        let spent = history.spent_usd + spend.usd.unwrap_or(0.0);
        let head = crate::git::resolve_commit(&lp.repo, "HEAD").ok().flatten();
        let review_base = (head.as_deref() != Some(contract.base.as_str())
            && contract.base != crate::git::EMPTY_TREE)
            .then_some(contract.base.as_str());
        let call = preset::build(
            agent,
            &preset::Context {
                role,
                loop_name: lp.name.as_str(),
                round,
                repo: &lp.repo,
                prompt: text,
                files,
                schema: &prompt::schema_for_agents(),
                remaining_usd: history.contract.budget.usd.map(|cap| cap - spent),
                review_base,
            },
        );
        let junit = agent.junit.as_ref().map(|rel| call.cwd.join(rel));
        let started = std::time::SystemTime::now();
        let label = agent.preset.as_str();
        self.out.call_started(round, role, label, &call);
        let result = process::run(&call, self.interrupt, &mut |elapsed| {
            self.out.tick(round, role, label, elapsed, spent);
        });
        let finished = match result {
            Ok(finished) => finished,
            Err(err) => {
                self.out.call_failed();
                let (stdout, stderr) = match &err {
                    ProcessError::TimedOut { stdout, stderr, .. }
                    | ProcessError::Interrupted { stdout, stderr } => {
                        (stdout.bytes.clone(), stderr.bytes.clone())
                    }
                    _ => (Vec::new(), Vec::new()),
                };
                let kept = keep_failure(
                    lp,
                    round,
                    role,
                    &[
                        ("call.txt", call.display().as_bytes()),
                        ("stdout", &stdout),
                        ("stderr", &stderr),
                    ],
                )?;
                anyhow::bail!(
                    "round {round}: {} `{label}` {err}; nothing was recorded\nevidence: `{}`",
                    role.as_str(),
                    super::shown(&kept)
                );
            }
        };
        // What the agent left there may be a FIFO, a symlink or a hard link.
        let read_back = |path: &Path, since| {
            file::read_back(path, process::OUTPUT_CAP, since).map_err(|e| {
                anyhow::anyhow!(
                    "round {round}: {} `{label}`: {e}; nothing was recorded",
                    role.as_str()
                )
            })
        };
        let output_file = read_back(&files.output, None)?;
        let report = match &junit {
            Some(path) => read_back(path, Some(started))?,
            None => None,
        };
        let reply = output::interpret(
            agent.preset,
            role,
            &finished,
            output_file.as_deref(),
            report.as_deref(),
        );
        self.out
            .call_finished(round, role, label, &finished, reply.as_ref().ok());
        let prefix = role.as_str();
        let mut kept: Vec<(String, Vec<u8>)> = vec![
            (format!("{prefix}.call.txt"), call.display().into_bytes()),
            (format!("{prefix}.prompt.md"), text.as_bytes().to_vec()),
            (format!("{prefix}.stdout"), finished.stdout.bytes.clone()),
            (format!("{prefix}.stderr"), finished.stderr.bytes.clone()),
        ];
        if let Some(bytes) = &output_file {
            kept.push((format!("{prefix}.output"), bytes.clone()));
        }
        if let Some(bytes) = &report {
            kept.push((format!("{prefix}.junit.xml"), bytes.clone()));
        }
        match reply {
            Ok(reply) => {
                evidence.extend(kept);
                Ok(reply)
            }
            Err(why) => {
                let refs: Vec<(&str, &[u8])> = kept
                    .iter()
                    .map(|(n, b)| (n.as_str(), b.as_slice()))
                    .collect();
                let dir = keep_failure(lp, round, role, &refs)?;
                anyhow::bail!(
                    "round {round}: {} `{label}` failed: {why}; nothing was recorded\nevidence: `{}`",
                    role.as_str(),
                    super::shown(&dir)
                );
            }
        }
    }
}

/// Keeps a failed call's output (redacted) where a person can read it:
/// `<ledgers>/<loop>/failed/round-<n>-<role>-<time>/`. Not evidence of any
/// round: nothing was recorded.
fn keep_failure(
    lp: &Loop,
    round: u32,
    role: Role,
    files: &[(&str, &[u8])],
) -> anyhow::Result<PathBuf> {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
    let dir = lp
        .store
        .loop_dir()
        .join("failed")
        .join(format!("round-{round}-{}-{stamp}", role.as_str()));
    statefs::create_dir_all(lp.store.base(), &dir)?;
    for (name, bytes) in files {
        let name = name.rsplit('/').next().unwrap_or(name);
        statefs::replace(lp.store.base(), &dir.join(name), &redact(bytes))?;
    }
    Ok(dir)
}

/// How `run` talks: a live spinner on a terminal, plain lines otherwise,
/// nothing but the outcome with `--quiet`, JSON lines with `--json`.
struct Printer {
    mode: Mode,
    spinner: std::cell::RefCell<Option<indicatif::ProgressBar>>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Live,
    Plain,
    Quiet,
    Json,
}

impl Printer {
    fn new(args: &RunArgs) -> Printer {
        let mode = if args.json {
            Mode::Json
        } else if args.quiet {
            Mode::Quiet
        } else if std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none() {
            Mode::Live
        } else {
            Mode::Plain
        };
        Printer {
            mode,
            spinner: std::cell::RefCell::new(None),
        }
    }

    fn json_line(&self, value: serde_json::Value) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{value}");
        let _ = out.flush();
    }

    fn call_started(&self, round: u32, role: Role, agent: &str, call: &Call) {
        match self.mode {
            Mode::Json => self.json_line(json!({
                "event": "call", "phase": "start", "round": round, "role": role.as_str(),
                "agent": agent, "argv": call.display(),
            })),
            Mode::Plain => eprintln!("round {round}: {} `{agent}` started", role.as_str()),
            Mode::Live => {
                let bar = indicatif::ProgressBar::new_spinner();
                bar.enable_steady_tick(Duration::from_millis(100));
                bar.set_message(format!("round {round} · {} · {agent}", role.as_str()));
                *self.spinner.borrow_mut() = Some(bar);
            }
            Mode::Quiet => {}
        }
    }

    fn tick(&self, round: u32, role: Role, agent: &str, elapsed: Duration, spent: f64) {
        if let Some(bar) = self.spinner.borrow().as_ref() {
            let spent = if spent > 0.0 {
                format!(" · ${spent:.2} spent")
            } else {
                String::new()
            };
            bar.set_message(format!(
                "round {round} · {} · {agent} · {}{spent}",
                role.as_str(),
                clock(elapsed)
            ));
        }
    }

    fn leftovers(&self, ended: usize) {
        if ended > 0 && matches!(self.mode, Mode::Plain | Mode::Live) {
            eprintln!(
                "ended {ended} process{} that the agents of a killed `referee run` left running",
                if ended == 1 { "" } else { "es" }
            );
        }
    }

    fn call_failed(&self) {
        if let Some(bar) = self.spinner.borrow_mut().take() {
            bar.finish_and_clear();
        }
    }

    fn call_finished(
        &self,
        round: u32,
        role: Role,
        agent: &str,
        f: &Finished,
        reply: Option<&Reply>,
    ) {
        self.call_failed();
        let cost = reply.and_then(|r| r.cost_usd);
        let tokens = reply.and_then(|r| r.tokens);
        match self.mode {
            Mode::Json => self.json_line(json!({
                "event": "call", "phase": "end", "round": round, "role": role.as_str(), "agent": agent,
                "exit_status": f.code, "elapsed_ms": f.elapsed.as_millis() as u64,
                "cost_usd": cost, "tokens": tokens,
            })),
            Mode::Plain | Mode::Live => {
                let mut spend = Vec::new();
                if let Some(c) = cost {
                    spend.push(format!("${c:.2}"));
                }
                if let Some(t) = tokens {
                    spend.push(format!("{t} tokens"));
                }
                let spend = if spend.is_empty() { String::new() } else { format!(", {}", spend.join(", ")) };
                eprintln!(
                    "round {round}: {} `{agent}` finished in {}{spend}",
                    role.as_str(),
                    clock(f.elapsed)
                );
            }
            Mode::Quiet => {}
        }
    }

    fn round(&self, lp: &Loop, recorded: &Recorded) -> anyhow::Result<()> {
        let history = History::read(lp, lp.store.read()?.rows)?;
        let view = RoundView {
            loop_name: lp.name.as_str(),
            row: &recorded.row,
            state: &recorded.state,
            max_rounds: history.max_rounds,
            already: false,
            floor: lp.contract().severity_floor,
            driven: true,
        };
        match self.mode {
            Mode::Json => {
                let mut value = round::json(&view, i32::from(recorded.exit().code()));
                if let serde_json::Value::Object(map) = &mut value {
                    map.insert("event".into(), json!("round"));
                }
                self.json_line(value);
            }
            Mode::Plain | Mode::Live => super::emit(&round::text(&view))?,
            Mode::Quiet => {}
        }
        Ok(())
    }

    fn end(&self, lp: &Loop, recorded: &Recorded, exit: Exit) -> anyhow::Result<()> {
        match self.mode {
            Mode::Json => self.json_line(json!({
                "event": "end", "loop": lp.name.as_str(), "round": recorded.row.round,
                "rule": recorded.state.rule, "reason": recorded.state.reason, "exit": exit.code(),
            })),
            _ => {
                if self.mode == Mode::Quiet {
                    super::emit(&format!(
                        "loop `{}` stopped at round {} on `{}`: {}\n",
                        lp.name,
                        recorded.row.round,
                        recorded.state.rule.as_deref().unwrap_or_default(),
                        recorded.state.reason
                    ))?;
                }
                if recorded.state.rule.as_deref().is_some_and(|r| r != "clean") {
                    let history = History::read(lp, lp.store.read()?.rows)?;
                    let handoff = super::escalate::build(lp, &history)?;
                    let mut text = b"\n".to_vec();
                    text.extend(crate::report::handoff::render(
                        &handoff,
                        HandoffFormat::Text,
                    ));
                    super::emit(&String::from_utf8_lossy(&text))?;
                }
            }
        }
        Ok(())
    }

    fn error(&self, err: &anyhow::Error) {
        self.call_failed();
        if self.mode == Mode::Json {
            self.json_line(json!({"event": "error", "message": format!("{err:#}")}));
        }
    }
}

/// `41s`, `3m07s`.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s < 60 {
        format!("{s}s")
    } else {
        format!("{}m{:02}s", s / 60, s % 60)
    }
}
