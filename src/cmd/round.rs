//! The pieces of an agent-driven round that `run` and `hook stop` share: the
//! loop's run lock, one agent call with its evidence, the reviewer's call
//! and reading, and where a failed call's output is kept (the round's
//! scratch folder is `scratch.rs`). Does I/O (files, agent processes).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::Context as _;

use super::scratch::{self, WorkDir};
use crate::agent::file;
use crate::agent::output::{self, Reply};
use crate::agent::preset::{self, Role};
use crate::agent::process::{self, ProcessError};
use crate::agent::progress::Progress;
use crate::agent::prompt;
use crate::anchor::run_lock::{self, Holder, NotTaken};
use crate::contract::Agent;
use crate::engine::{History, Loop, Review};
use crate::exit::Hinted;
use crate::findings::Finding;
use crate::money::Usd;
use crate::redact::redact;
use crate::statefs;

/// One driver per loop at a time (`run`, or a `hook stop` round): the run
/// lock in the loop's anchor (`anchor::run_lock`), held while rounds are
/// driven. The ledger itself is locked only while a round is appended, so
/// `status` and `escalate` work meanwhile.
pub(super) struct RunLock(#[allow(dead_code)] run_lock::RunLock);

impl RunLock {
    /// Takes the lock, or says who holds it; with it, how many processes a
    /// killed run's agents left running were ended.
    pub(super) fn take(lp: &Loop) -> anyhow::Result<(RunLock, usize)> {
        lp.anchor.create()?;
        match run_lock::RunLock::take(&lp.anchor, Holder::Run) {
            Ok(lock) => Ok(Self::taken(lp, lock)),
            Err(NotTaken::Held(d)) => Err(crate::exit::hinted(
                format!(
                    "loop `{}` is being driven by {}; nothing was done",
                    lp.name,
                    super::describe(&d)
                ),
                format!(
                    "`referee status --loop {}` shows its round; wait for it to stop, or end it (Ctrl-C where it runs, or `kill {}`)",
                    lp.name, d.pid
                ),
            )),
            Err(NotTaken::Error(e)) => Err(e.into()),
        }
    }

    /// Takes the lock for one `hook stop` round, waiting up to `patience`
    /// for another stop to finish its round; `Err(holder)` when the lock is
    /// still held then, or held by a `referee run`, which drives rounds for
    /// far longer than a stop can wait.
    pub(super) fn wait(lp: &Loop, patience: Duration) -> anyhow::Result<Result<RunLock, String>> {
        lp.anchor.create()?;
        match run_lock::RunLock::wait(&lp.anchor, Holder::Hook, patience) {
            Ok(lock) => Ok(Ok(Self::taken(lp, lock).0)),
            Err(NotTaken::Held(d)) => Ok(Err(super::describe(&d))),
            Err(NotTaken::Error(e)) => Err(e.into()),
        }
    }

    fn taken(lp: &Loop, lock: run_lock::RunLock) -> (RunLock, usize) {
        // No other driver holds this loop: every scratch folder left by a
        // killed one (prompts, findings) goes now, and so does what its
        // agent had started.
        let ended = scratch::clean(lp, true);
        (RunLock(lock), ended)
    }
}

/// What the round's calls spent so far.
#[derive(Default)]
pub(super) struct Spend {
    pub usd: Option<Usd>,
    pub tokens: Option<u64>,
}

impl Spend {
    pub(super) fn add(&mut self, reply: &Reply) {
        self.add_parts(reply.cost_usd, reply.tokens);
    }

    pub(super) fn add_parts(&mut self, usd: Option<Usd>, tokens: Option<u64>) {
        if let Some(usd) = usd {
            self.usd = Some(self.usd.unwrap_or_default().saturating_add(usd));
        }
        if let Some(tokens) = tokens {
            self.tokens = Some(self.tokens.unwrap_or(0).saturating_add(tokens));
        }
    }
}

/// One round's agent calls: the loop as the round found it, where the
/// calls' files go, and what they spent and left as evidence so far.
pub(super) struct Turn<'a> {
    pub history: &'a History,
    pub round: u32,
    pub work: &'a WorkDir,
    pub spend: Spend,
    pub evidence: Vec<(String, Vec<u8>)>,
}

/// Calls the loop's agents, keeping what they said as evidence.
pub(super) struct Caller<'a> {
    pub lp: &'a Loop,
    pub progress: &'a dyn Progress,
    pub interrupt: &'a Arc<AtomicBool>,
}

impl Caller<'_> {
    /// The contract's template for `role`, or the built-in one.
    pub(super) fn template(&self, role: Role) -> anyhow::Result<String> {
        template(self.lp, role)
    }

    /// One agent call: its prompt, process, output and evidence, run in
    /// `root` (the work tree for the writer, the round's private checkout
    /// for the reviewer), its spend added to the turn's. A failed call
    /// keeps its output under `failed/` and records nothing. `member` names
    /// a panel's reviewer: its evidence is `reviewer.<name>.*`.
    pub(super) fn call(
        &self,
        turn: &mut Turn<'_>,
        role: Role,
        member: Option<&str>,
        agent: &Agent,
        text: &str,
        root: &Path,
    ) -> anyhow::Result<Reply> {
        let Turn {
            history,
            round,
            work,
            ref mut spend,
            ref mut evidence,
        } = *turn;
        let lp = self.lp;
        let contract = lp.contract();
        let files = &work.files();
        // The agent gets the exact prompt on stdin; the copy on disk, which
        // a killed run leaves behind, is redacted like evidence.
        work.write(&files.prompt, &redact(text.as_bytes()))?;
        let _ = std::fs::remove_file(&files.output);
        let spent = history
            .spent_usd
            .saturating_add(spend.usd.unwrap_or_default());
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
                repo: root,
                prompt: text,
                files,
                schema: &prompt::schema_for_agents(),
                remaining_usd: history
                    .contract
                    .budget
                    .usd
                    .map(|cap| cap.saturating_sub(spent)),
                review_base,
            },
        );
        let junit = agent.junit.as_ref().map(|rel| call.cwd.join(rel));
        let started = std::time::SystemTime::now();
        let label = member.unwrap_or(agent.preset.as_str());
        let who = Who {
            round,
            role,
            member,
        };
        run_lock::note_call(&lp.anchor, round, role.as_str());
        self.progress.call_started(round, role, label, &call);
        let result = process::run(&call, self.interrupt, &mut |elapsed| {
            self.progress.tick(round, role, label, elapsed, spent);
        });
        let finished = match result {
            Ok(finished) => finished,
            Err(err) => {
                self.progress.call_failed(label);
                let (stdout, stderr) = match &err {
                    ProcessError::TimedOut { stdout, stderr, .. }
                    | ProcessError::Interrupted { stdout, stderr } => {
                        (stdout.bytes.clone(), stderr.bytes.clone())
                    }
                    _ => (Vec::new(), Vec::new()),
                };
                let kept = keep_failure(
                    lp,
                    who,
                    &[
                        ("call.txt", call.display().as_bytes()),
                        ("stdout", &stdout),
                        ("stderr", &stderr),
                    ],
                )?;
                return Err(who.failed(&format!("{} `{label}` {err}", role.as_str()), &kept));
            }
        };
        // What the agent left there may be a FIFO, a symlink or a hard link.
        let read_back = |path: &Path, since| {
            file::read_back(path, process::OUTPUT_CAP, since)
                .map_err(|e| who.refused(&format!("{} `{label}`: {e}", role.as_str())))
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
        self.progress
            .call_finished(round, role, label, &finished, reply.as_ref().ok());
        let prefix = who.prefix();
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
                spend.add(&reply);
                Ok(reply)
            }
            Err(why) => {
                let refs: Vec<(&str, &[u8])> = kept
                    .iter()
                    .map(|(n, b)| (n.as_str(), b.as_slice()))
                    .collect();
                let dir = keep_failure(lp, who, &refs)?;
                Err(who.failed(&format!("{} `{label}` failed: {why}", role.as_str()), &dir))
            }
        }
    }

    /// The reviewer's call on the round's patch and its findings: the patch
    /// goes to `REFEREE_PATCH_FILE` and into the prompt with the open
    /// findings. It runs in a private checkout of the round's snapshot
    /// `tree` (SPEC §8.4), removed when the call ends. An output that reads
    /// as no review keeps it under `failed/`. A contract's panel is called
    /// by [`Caller::panel`].
    pub(super) fn review(
        &self,
        turn: &mut Turn<'_>,
        reviewer: &Agent,
        vars: &[(&str, &str)],
        tree: &str,
        patch: &[u8],
    ) -> anyhow::Result<Review> {
        self.review_as(turn, None, reviewer, vars, tree, patch)
    }

    /// Every reviewer of the contract's panel on the round's snapshot, at
    /// once, each with its own scratch folder, checkout, timeout and
    /// process tree (SPEC §6.1); the round waits for all of them. A
    /// reviewer whose call failed did not answer; the review is the merged
    /// answers when the quorum answered, else an error naming who did not
    /// answer and why. Ctrl-C ends the round.
    pub(super) fn panel(
        &self,
        turn: &mut Turn<'_>,
        vars: &[(&str, &str)],
        tree: &str,
        patch: &[u8],
    ) -> anyhow::Result<Review> {
        let lp = self.lp;
        let contract = lp.contract();
        let (history, round) = (turn.history, turn.round);
        let schema = prompt::schema_for_agents();
        let mut works = Vec::new();
        for _ in &contract.reviewers {
            let work = WorkDir::new(lp, round)?;
            work.write(&work.files().schema, schema.as_bytes())?;
            works.push(work);
        }
        let results: Vec<(anyhow::Result<Review>, Turn<'_>)> = std::thread::scope(|scope| {
            let calls: Vec<_> = contract
                .reviewers
                .iter()
                .zip(&works)
                .map(|(member, work)| {
                    scope.spawn(move || {
                        let mut own = Turn {
                            history,
                            round,
                            work,
                            spend: Spend::default(),
                            evidence: Vec::new(),
                        };
                        let name = Some(member.name.as_str());
                        let review =
                            self.review_as(&mut own, name, &member.agent, vars, tree, patch);
                        (review, own)
                    })
                })
                .collect();
            calls
                .into_iter()
                .map(|call| call.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        });
        if self.interrupt.load(std::sync::atomic::Ordering::SeqCst) {
            anyhow::bail!("round {round}: interrupted; nothing was recorded");
        }
        let mut members = Vec::new();
        for ((result, own), member) in results.into_iter().zip(&contract.reviewers) {
            turn.spend.add_parts(own.spend.usd, own.spend.tokens);
            turn.evidence.extend(own.evidence);
            members.push(crate::engine::panel::MemberReview {
                name: member.name.clone(),
                answer: result.map_err(|e| crate::text::one_line(&format!("{e:#}"))),
                cost_usd: own.spend.usd,
                tokens: own.spend.tokens,
            });
        }
        let panel = &contract.panel;
        crate::engine::panel::review(members, *panel)
            .map_err(|why| anyhow::anyhow!("round {round}: {why}; nothing was recorded"))
    }

    /// [`Caller::review`] by one reviewer, `member` of a panel or the
    /// contract's one reviewer.
    fn review_as(
        &self,
        turn: &mut Turn<'_>,
        member: Option<&str>,
        reviewer: &Agent,
        vars: &[(&str, &str)],
        tree: &str,
        patch: &[u8],
    ) -> anyhow::Result<Review> {
        let (history, round, work) = (turn.history, turn.round, turn.work);
        let who = Who {
            round,
            role: Role::Reviewer,
            member,
        };
        let lp = self.lp;
        let base = lp.contract().base.as_str();
        let checkout =
            checkout_for(lp, reviewer, tree, member).map_err(|e| who.refused(&e.to_string()))?;
        if let Some(note) = checkout.note(tree, base) {
            turn.evidence
                .push((format!("{}.checkout.txt", who.prefix()), note.into_bytes()));
        }
        work.write(&work.files().patch, patch)?;
        let (open, _) = open_findings(self.lp, history);
        let list = prompt::findings_list(&open);
        let excerpt = prompt::patch_excerpt(patch);
        let mut vars = vars.to_vec();
        vars.push(("open_findings", list.as_str()));
        vars.push(("patch", excerpt.as_str()));
        let text = prompt::render(&self.template(Role::Reviewer)?, &vars);
        let reply = self.call(
            turn,
            Role::Reviewer,
            member,
            reviewer,
            &text,
            checkout.path(),
        )?;
        let raw = reply.review.unwrap_or_default();
        // The reviewer ran in the checkout: its absolute paths are there.
        let root = checkout.path().to_string_lossy();
        let read = preset::findings_of(reviewer.preset, &raw, &root);
        let parsed = match reviewer.empty_report.apply(read) {
            Ok(parsed) => parsed,
            Err(err) => {
                let kept = keep_failure(lp, who, &[("review", &raw)])?;
                let label = member.unwrap_or(reviewer.preset.as_str());
                let message = match member {
                    None => format!(
                        "round {round}: reviewer `{label}` gave no readable review: {err}\n\
                         nothing was recorded; its output is in `{}`",
                        super::shown(&kept)
                    ),
                    Some(_) => format!(
                        "reviewer `{label}` gave no readable review: {err}; its output is in `{}`",
                        super::shown(&kept)
                    ),
                };
                let hint = preset::unreadable_review_hint(reviewer.preset).or_else(|| err.hint());
                return Err(Hinted::maybe(message, hint).into());
            }
        };
        Ok(Review::new(raw, parsed))
    }
}

/// Who a call is for: the writer or reviewer of a round, or a reviewer of
/// the contract's panel by name.
#[derive(Clone, Copy)]
pub(super) struct Who<'a> {
    pub round: u32,
    pub role: Role,
    pub member: Option<&'a str>,
}

impl Who<'_> {
    /// The prefix of the call's evidence files: `writer`, `reviewer`,
    /// `reviewer.<name>`.
    fn prefix(&self) -> String {
        match self.member {
            None => self.role.as_str().to_string(),
            Some(name) => format!("{}.{name}", self.role.as_str()),
        }
    }

    /// A call that failed, its output kept in `kept`: for the round's one
    /// agent, nothing was recorded; a panel's reviewer did not answer,
    /// which the panel weighs.
    fn failed(&self, what: &str, kept: &Path) -> anyhow::Error {
        match self.member {
            None => anyhow::anyhow!(
                "round {}: {what}; nothing was recorded\nevidence: `{}`",
                self.round,
                super::shown(kept)
            ),
            Some(_) => anyhow::anyhow!("{what}; its output is in `{}`", super::shown(kept)),
        }
    }

    /// A call that could not be made or read.
    fn refused(&self, what: &str) -> anyhow::Error {
        match self.member {
            None => anyhow::anyhow!("round {}: {what}; nothing was recorded", self.round),
            Some(_) => anyhow::anyhow!("{what}"),
        }
    }
}

/// The private checkout the reviewer of `lp` runs in for the snapshot
/// `tree`: the agent settings, its repository-relative program and argv
/// files (`sh scripts/review.sh`) as the loop's base has them.
fn checkout_for(
    lp: &Loop,
    reviewer: &Agent,
    tree: &str,
    member: Option<&str>,
) -> Result<crate::checkout::Checkout, crate::checkout::CheckoutError> {
    let mut words: Vec<String> = preset::program_of(reviewer).into_iter().collect();
    if let Some(argv) = &reviewer.command {
        words.extend(argv.iter().skip(1).cloned());
    }
    words.extend(reviewer.args.iter().cloned());
    let files = crate::checkout::argv_files(&words, reviewer.cwd.as_deref());
    crate::checkout::Checkout::new(
        &lp.repo,
        &lp.anchor,
        tree,
        &lp.contract().base,
        &files,
        member,
    )
}

/// The placeholders every prompt of round `round` fills: the loop, the
/// round and its cap, the task, the scope, the floor and the schema.
pub(super) fn base_vars(
    lp: &Loop,
    history: &History,
    round: u32,
    task: &str,
) -> Vec<(&'static str, String)> {
    let contract = lp.contract();
    let scope = contract
        .scope
        .iter()
        .map(|g| format!("`{g}`"))
        .collect::<Vec<_>>()
        .join(", ");
    vec![
        ("loop", lp.name.to_string()),
        ("round", round.to_string()),
        ("max_rounds", history.max_rounds.to_string()),
        ("task", task.to_string()),
        ("scope", scope),
        ("floor", contract.severity_floor.as_str().to_string()),
        ("schema", prompt::SCHEMA.to_string()),
    ]
}

/// Keeps a failed call's output (redacted) where a person can read it:
/// `<ledgers>/<loop>/failed/round-<n>-<role>-<time>/`. Not evidence of any
/// round: nothing was recorded.
pub(super) fn keep_failure(
    lp: &Loop,
    who: Who<'_>,
    files: &[(&str, &[u8])],
) -> anyhow::Result<PathBuf> {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
    let role = match who.member {
        None => who.role.as_str().to_string(),
        Some(name) => format!("{}-{name}", who.role.as_str()),
    };
    let dir = lp.paths.failed(who.round, &role, &stamp.to_string());
    statefs::create_dir_all(lp.store.base(), &dir)?;
    for (name, bytes) in files {
        let name = name.rsplit('/').next().unwrap_or(name);
        statefs::replace(lp.store.base(), &dir.join(name), &redact(bytes))?;
    }
    Ok(dir)
}

/// The contract's template for `role` in loop `lp`, or the built-in one.
pub(super) fn template(lp: &Loop, role: Role) -> anyhow::Result<String> {
    let p = &lp.contract().prompt;

    let (inline, file, builtin) = match role {
        Role::Writer => (&p.writer, &p.writer_file, prompt::WRITER),
        Role::Reviewer => (&p.reviewer, &p.reviewer_file, prompt::REVIEWER),
    };
    match (inline, file) {
        (Some(text), _) => Ok(text.clone()),
        (None, Some(rel)) => {
            // As the loop's base has it, when it has it: the writer's
            // rewrite since is not the prompt (SPEC §8.4).
            let base = &lp.contract().base;
            let spec = format!("{base}:{rel}");
            if let Ok(out) = crate::git::Git::at(&lp.repo).run(["cat-file", "blob", &spec]) {
                return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
            }
            let path = lp.repo.join(rel);
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

/// The findings open before the round, and those of them at or above the
/// floor (the writer's must-fix).
pub(super) fn open_findings<'h>(
    lp: &Loop,
    history: &'h History,
) -> (Vec<&'h Finding>, Vec<&'h Finding>) {
    let floor = lp.contract().severity_floor;
    let open: Vec<&Finding> = history
        .registry
        .findings
        .iter()
        .filter(|t| t.standing == crate::engine::accounting::FindingStanding::Open)
        .map(|t| &t.finding)
        .collect();
    let must_fix = open
        .iter()
        .copied()
        .filter(|f| f.severity >= floor)
        .collect();
    (open, must_fix)
}
