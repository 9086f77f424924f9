//! `referee hook stop`: the agent's Stop hook. Reads the payload on stdin,
//! finds the repository and its loop, and — only when the work tree changed
//! since the last round — runs the contract's reviewer on the round's patch
//! as `run` does, records the round through the same engine, and answers on
//! stdout: block the stop with the must-fix findings, or let it end with
//! the verdict. Every path out exits 0 (docs/hooks.md).

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;

use super::super::dry_run;
use super::super::incident;
use super::super::round::{self, Caller, RunLock, Spend, Turn};
use super::super::scratch::WorkDir;
use crate::agent::progress::Silent;
use crate::agent::prompt;
use crate::cmd::hook::HookAgent;
use crate::engine::accounting::FindingStanding;
use crate::engine::phase;
use crate::engine::{History, Loop, LoopStanding, Recorded, Submission};
use crate::exit::{Exit, hinted};
use crate::findings::{Finding, responses};
use crate::hook::answer::{self, Answer};
use crate::hook::transcript::{self, Transcript};
use crate::hook::{Agent, Payload};
use crate::report::error::{render, with_hints};
use crate::report::terminal::escape;
use crate::state::LoopSelect;
use crate::state::State;

#[derive(Debug, Args)]
pub struct HookStopArgs {
    #[command(flatten)]
    pub select: LoopSelect,
    /// The agent sending the payload (default: told from the payload).
    #[arg(long, value_enum)]
    pub agent: Option<HookAgent>,
    /// The project whose loop this hook referees, as `hook install` wrote
    /// it (default: the host's `CLAUDE_PROJECT_DIR` or `GEMINI_PROJECT_DIR`,
    /// else the payload's `cwd`).
    #[arg(long, value_name = "DIR")]
    pub project: Option<std::path::PathBuf>,
    /// Say what this stop would do (allow it, and why; or the reviewer
    /// call it would make, with its prompt) without calling the reviewer,
    /// taking a lock or recording anything. The payload on stdin is
    /// optional: without one, the stop is a fresh session's in this folder.
    #[arg(long)]
    pub dry_run: bool,
    /// With `--dry-run`: print JSON.
    #[arg(long, requires = "dry_run")]
    pub json: bool,
}

/// The largest payload read; agents send a few kilobytes.
const MAX_PAYLOAD: u64 = 4 * 1024 * 1024;
/// The largest transcript read for the writer's spend and requests.
const MAX_TRANSCRIPT: u64 = 256 * 1024 * 1024;
/// The most of the person's requests given to the reviewer as the task.
const MAX_TASK: usize = 16 * 1024;

pub fn stop(dir: Option<&Path>, args: HookStopArgs) -> Exit {
    let mut input = Vec::new();
    if let Err(err) = std::io::stdin()
        .take(MAX_PAYLOAD + 1)
        .read_to_end(&mut input)
    {
        eprintln!(
            "referee hook stop: cannot read the payload on stdin: {err}; the stop is allowed"
        );
        return Exit::Success;
    }
    if input.len() as u64 > MAX_PAYLOAD {
        eprintln!(
            "referee hook stop: the payload is larger than {} MiB; the stop is allowed",
            MAX_PAYLOAD / 1024 / 1024
        );
        return Exit::Success;
    }
    let agent = args.agent.map(|a| match a {
        HookAgent::Claude => Agent::Claude,
        HookAgent::Codex => Agent::Codex,
        HookAgent::Gemini => Agent::Gemini,
    });
    let payload = match Payload::parse(&input, agent) {
        Ok(payload) => payload,
        Err(err) => {
            let hint = "the agent sends a JSON object with `cwd` on stdin; `referee hook install` writes the entry that runs this";
            eprintln!(
                "{}",
                with_hints(
                    &format!("referee hook stop: {err}; the stop is allowed"),
                    &[hint]
                )
            );
            return Exit::Success;
        }
    };
    // The project the hook was installed in, not the folder the agent's
    // shell is in: a writer that `cd`s into a repository of its own must
    // not leave the loop (SPEC §8, case 5).
    let project = project_dir(args.project.as_deref(), &payload);
    let state_dir = match dir {
        Some(d) if d.is_absolute() => d.to_path_buf(),
        Some(d) => project.join(d),
        None => crate::git::Git::at(&project)
            .toplevel()
            .unwrap_or_else(|| project.clone())
            .join(".referee"),
    };
    let answer = match referee(dir, &args.select, &payload, &input, &project) {
        Ok(answer) => {
            incident::judged(&project, &state_dir, &payload);
            answer
        }
        Err(err) => {
            let why = render(&err);
            eprintln!("referee hook stop: {}", escape(&why));
            // During a live loop a stop the hook cannot judge is not let
            // go in silence (SPEC §8.5).
            match incident::live(&project, &state_dir) {
                true => {
                    let at = super::super::now().unwrap_or_default();
                    incident::answer(&project, &state_dir, &payload, &why, &at)
                }
                false => Answer::Tell(answer::failed_message(&why)),
            }
        }
    };
    if let Some(line) = answer.json() {
        // A closed stdout leaves nothing to tell; the stop goes through.
        let _ = super::super::emit_exact(format!("{line}\n").as_bytes());
    }
    Exit::Success
}

/// `hook stop --dry-run`: what this stop would come to, said to a person
/// (or as JSON), with the reviewer call a round would make and its prompt;
/// nothing is called, locked, registered or recorded (the work tree is read
/// as a round reads it, which refreshes the snapshot's own index cache, a
/// shortcut for the next snapshot). The payload on stdin
/// is optional: without one (a terminal, or nothing piped) the stop is a
/// fresh session's of `--agent` (default claude) in this folder.
pub fn dry_run(dir: Option<&Path>, args: HookStopArgs) -> anyhow::Result<Exit> {
    use std::io::IsTerminal as _;
    let agent = args.agent.map(|a| match a {
        HookAgent::Claude => Agent::Claude,
        HookAgent::Codex => Agent::Codex,
        HookAgent::Gemini => Agent::Gemini,
    });
    let mut input = Vec::new();
    if !std::io::stdin().is_terminal() {
        std::io::stdin()
            .take(MAX_PAYLOAD + 1)
            .read_to_end(&mut input)
            .context("cannot read the payload on stdin")?;
        anyhow::ensure!(
            input.len() as u64 <= MAX_PAYLOAD,
            "the payload is larger than {} MiB",
            MAX_PAYLOAD / 1024 / 1024
        );
    }
    let payload = if input.iter().all(u8::is_ascii_whitespace) {
        Payload {
            agent: agent.unwrap_or(Agent::Claude),
            cwd: std::env::current_dir().context("cannot read the current folder")?,
            session_id: None,
            transcript_path: None,
            stop_hook_active: false,
            event: None,
        }
    } else {
        Payload::parse(&input, agent).context("the payload on stdin")?
    };
    let project = project_dir(args.project.as_deref(), &payload);
    let decision = decide(dir, &args.select, &payload, &project, true)?;
    let lead = "dry run of a stop: nothing is called, locked or recorded";
    let (answer, reason, round) = match &decision {
        Decision::Allow(why) => ("allow", format!("the stop would be let go: {why}"), None),
        Decision::Tell(text) => (
            "tell",
            format!("the stop would be let go, telling the agent:\n{text}"),
            None,
        ),
        Decision::Round { lp, history, .. } => {
            let round = history.round() + 1;
            (
                "round",
                format!(
                    "this stop would be round {round} of loop `{}`: the hook would review the change, record the round, then block the stop with the must-fix findings or let it end with the verdict",
                    lp.name
                ),
                Some(round),
            )
        }
    };
    let reviewers = match &decision {
        Decision::Round { lp, history, .. } => {
            let session = Hook::session_of(&payload);
            let since = match history.round() {
                0 => "the loop's base".to_string(),
                n => format!("round {n}'s snapshot"),
            };
            let patch = format!("<the patch from {since} to the work tree>");
            dry_run::reviewer_calls(lp, history, &task_of(&session), &patch)?
        }
        _ => Vec::new(),
    };
    if args.json {
        let lp = match &decision {
            Decision::Round { lp, .. } => Some(lp.name.to_string()),
            _ => None,
        };
        let doc = serde_json::json!({
            "dry_run": true,
            "loop": lp,
            "agent": payload.agent.as_str(),
            "answer": answer,
            "reason": reason,
            "round": round,
            "reviewer": reviewers.first().map(|r| r.json()),
            "reviewers": reviewers.iter().map(|r| r.json()).collect::<Vec<_>>(),
        });
        super::super::emit_json(&doc)?;
    } else {
        let mut out = format!("{lead}\n{reason}\n");
        for reviewer in &reviewers {
            out.push_str(&reviewer.text());
        }
        super::super::emit(&out)?;
    }
    Ok(Exit::Success)
}

/// The project the hook referees: `--project` (written by `hook install`),
/// else the host's own word (`CLAUDE_PROJECT_DIR`, `GEMINI_PROJECT_DIR`),
/// else the payload's `cwd`.
fn project_dir(given: Option<&Path>, payload: &Payload) -> PathBuf {
    if let Some(p) = given {
        return p.to_path_buf();
    }
    for var in ["CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR"] {
        if let Some(dir) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            let dir = PathBuf::from(dir);
            if dir.is_absolute() {
                return dir;
            }
        }
    }
    payload.cwd.clone()
}

/// What the stop `payload` comes to, up to the round it would referee.
/// `dry`: a person asks; the session is not registered as refereed.
fn decide(
    dir: Option<&Path>,
    select: &LoopSelect,
    payload: &Payload,
    project: &Path,
    dry: bool,
) -> anyhow::Result<Decision> {
    if !payload.is_stop() {
        return Ok(Decision::Allow(format!(
            "the payload's event is `{}`, not `Stop`",
            payload.event.as_deref().unwrap_or_default()
        )));
    }
    // Most stops are in a repository with no loop: said without starting
    // git. A contracts folder gone while the anchor holds loops of it is
    // no such repository.
    if dir.is_none() && !has_contracts(project) {
        let anchored = crate::anchor::pins::Pins::of(project, &project.join(".referee"))
            .map(|a| a.anchored_loops())
            .unwrap_or_default();
        if anchored.is_empty() {
            return Ok(Decision::Allow(format!(
                "`{}` has no loop (no `.referee/contracts` folder)",
                project.display()
            )));
        }
        anyhow::bail!(
            "`{}` has no contracts folder, but this machine anchors loops of it ({}): the loop's files were moved or removed",
            project.join(".referee").display(),
            anchored
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let Some(repo) = crate::git::Git::at(project).toplevel() else {
        return Ok(Decision::Allow(format!(
            "`{}` is in no git work tree",
            project.display()
        )));
    };
    // A link planted in the state folder is refused here as by every
    // command.
    let state = State::at(project, repo, dir)?;
    let Some(lp) = choose_loop(&state, select)? else {
        // A loop this machine anchors whose contract is gone is not "no
        // loop": its contract was removed or renamed.
        let have = state.loops()?;
        let gone: Vec<String> = crate::anchor::pins::Pins::of(&state.repo, &state.root)?
            .anchored_loops()
            .into_iter()
            .filter(|n| !have.iter().any(|h| h.as_str() == n))
            .collect();
        if gone.is_empty() {
            return Ok(Decision::Allow(
                "no loop here takes rounds (each has ended)".into(),
            ));
        }
        return Err(hinted(
            format!(
                "this machine anchors loop(s) {} of `{}` whose contract is gone",
                gone.iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                state.root.display()
            ),
            format!(
                "a person who ended the loop for good removes its anchor `{}`",
                crate::anchor::Anchor::of(&state.repo, &state.root, &gone[0])?
                    .dir()
                    .display()
            ),
        ));
    };
    lp.anchor
        .check_contract(&lp.loaded.sha256, &lp.loaded.path)?;
    let history = History::read(&lp, lp.store.read()?.rows)?;
    if let Some(ended) = ended(&history) {
        return Ok(Decision::Allow(format!("loop `{}` {ended}", lp.name)));
    }
    // The agent that called this hook is refereed: the commands only a
    // person runs refuse to run below it from now on (SPEC §8.1).
    if !dry && let Some(agent) = crate::anchor::authority::hook_agent(payload.agent.as_str()) {
        crate::anchor::authority::register(
            agent,
            &format!(
                "the {} session refereed by the Stop hook",
                payload.agent.as_str()
            ),
            lp.name.as_str(),
            &state.root,
        )?
        .keep();
    }
    let tree = lp.worktree_tree()?;
    if !is_round(&lp, &history, &tree, payload)? {
        if let Some(told) = waiting_past_cap(&lp, &history) {
            return Ok(Decision::Tell(told));
        }
        let since = match history.round() {
            0 => "the loop's base".to_string(),
            n => format!("round {n} recorded it"),
        };
        return Ok(Decision::Allow(format!(
            "loop `{}`: the work tree is as {since}, so this stop is no round",
            lp.name
        )));
    }
    // A panel's first reviewer stands for it where one call is shown (a
    // dry run); a round calls every one.
    let first = lp.contract().reviewers.first().map(|m| m.agent.clone());
    let Some(reviewer) = lp.contract().reviewer.clone().or(first) else {
        return Ok(Decision::Tell(with_hints(
            &format!(
                "referee: loop `{}` has no `[reviewer]` (nor `[[reviewers]]`) in its contract, so the hook cannot review this change",
                lp.name
            ),
            &[format!(
                "`referee init --loop {} --reviewer PRESET --force` (before round 1), or record rounds with `referee record`",
                lp.name
            )],
        )));
    };
    Ok(Decision::Round {
        lp: Box::new(lp),
        history: Box::new(history),
        tree,
        reviewer: Box::new(reviewer),
    })
}

/// When the last round asked for fixes but the host's block cap had let
/// that stop through (the turn ended with the loop not done): what to tell
/// the person at a stop that changed nothing since.
fn waiting_past_cap(lp: &Loop, history: &History) -> Option<String> {
    let (row, last) = history.last.as_ref()?;
    let note = super::super::util::hook_note(lp, row.round);
    (last.verdict == crate::ledger::Verdict::Continue && note.cap_spent()).then(|| {
        format!(
            "referee: loop `{}` is not done: round {} asked for fixes, and the turn ended at the host's cap of {} blocked stops in a row before they were made. Fix the findings (`referee findings --loop {}`), then end your turn: the next stop reviews the change.",
            lp.name,
            row.round,
            note.host_cap.unwrap_or_default(),
            lp.name
        )
    })
}

/// How a loop that takes no more rounds ended; `None` while it takes them.
fn ended(history: &History) -> Option<String> {
    match history.standing() {
        LoopStanding::Fresh | LoopStanding::Running { .. } => None,
        LoopStanding::Stopped { round, rule } => {
            Some(format!("stopped at round {round} on `{}`", rule.name()))
        }
        LoopStanding::Rejected { round, by } => {
            Some(format!("was rejected at round {round} by {by}"))
        }
    }
}

/// What a stop comes to before any agent runs: let it go (and why), tell
/// the agent something, or referee a round of a loop.
enum Decision {
    Allow(String),
    Tell(String),
    Round {
        lp: Box<Loop>,
        history: Box<History>,
        tree: String,
        reviewer: Box<crate::contract::Agent>,
    },
}

/// The answer to one stop. Cheap checks first: most stops end a turn with
/// no loop in progress or nothing changed.
fn referee(
    dir: Option<&Path>,
    select: &LoopSelect,
    payload: &Payload,
    input: &[u8],
    project: &Path,
) -> anyhow::Result<Answer> {
    let (lp, history, tree, reviewer) = match decide(dir, select, payload, project, false)? {
        Decision::Allow(_) => return Ok(Answer::Allow),
        Decision::Tell(text) => return Ok(Answer::Tell(text)),
        Decision::Round {
            lp,
            history,
            tree,
            reviewer,
        } => (*lp, *history, tree, *reviewer),
    };

    // One driver per loop: a second stop waits for the first, then answers
    // from the round it recorded instead of recording it again.
    lp.store.create_base()?;
    // A panel's round lasts as long as its slowest reviewer may take.
    let slowest = lp
        .contract()
        .panel_reviewers()
        .iter()
        .map(|(_, agent)| agent.timeout.as_duration())
        .max()
        .unwrap_or_else(|| reviewer.timeout.as_duration());
    let patience = slowest + Duration::from_secs(60);
    let _lock = match RunLock::wait(&lp, patience)? {
        Ok(lock) => lock,
        Err(holder) => {
            return Ok(Answer::Tell(format!(
                "referee: loop `{}` is busy: {holder} drives it; this stop was not refereed",
                lp.name
            )));
        }
    };
    let fresh = History::read(&lp, lp.store.read()?.rows)?;
    if fresh.rows.len() != history.rows.len() {
        if let Some((_, last)) = &fresh.last
            && last.snapshot.tree == tree
        {
            let recorded = recorded_last(&fresh)?;
            return answer_for(&lp, &recorded);
        }
        if !matches!(
            fresh.standing(),
            LoopStanding::Fresh | LoopStanding::Running { .. }
        ) {
            return Ok(Answer::Allow);
        }
    }
    Hook {
        lp: &lp,
        payload,
        input,
        reviewer: &reviewer,
    }
    .round(&fresh, &tree)
}

/// Whether the nearest folder at or above `cwd` that holds a `.git` (a
/// repository's top or a linked worktree's) has a `.referee/contracts`
/// folder: without one no loop runs there, and git need not be asked. Git's
/// own discovery walks up the same way (referee clears `GIT_DIR` and
/// `GIT_WORK_TREE` for its git calls); when a loop may run, `Git::toplevel`
/// asks git.
fn has_contracts(cwd: &Path) -> bool {
    let mut at = Some(cwd);
    while let Some(dir) = at {
        if std::fs::symlink_metadata(dir.join(".git")).is_ok() {
            return std::fs::symlink_metadata(dir.join(".referee").join("contracts")).is_ok();
        }
        at = dir.parent();
    }
    false
}

/// The loop this stop is for: `--loop`, the only one, or the only one
/// still taking rounds. `None`: no loop to referee.
fn choose_loop(state: &State, select: &LoopSelect) -> anyhow::Result<Option<Loop>> {
    if select.name.is_some() {
        return Ok(Some(super::super::open_loop(state, select)?));
    }
    let names = state.loops()?;
    if names.len() <= 1 {
        return names
            .first()
            .map(|name| open(state, name.as_str()))
            .transpose();
    }
    let mut open_loops = Vec::new();
    for name in &names {
        let lp = open(state, name.as_str())?;
        let history = History::read(&lp, lp.store.read()?.rows)?;
        if matches!(
            history.standing(),
            LoopStanding::Fresh | LoopStanding::Running { .. }
        ) {
            open_loops.push(lp);
        }
    }
    if open_loops.len() > 1 {
        return Err(hinted(
            format!(
                "{} loops take rounds here ({}): the hook cannot tell which one this session works on",
                open_loops.len(),
                open_loops
                    .iter()
                    .map(|l| format!("`{}`", l.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "`referee hook install --agent AGENT --loop NAME` names it",
        ));
    }
    Ok(open_loops.pop())
}

fn open(state: &State, name: &str) -> anyhow::Result<Loop> {
    super::super::open_loop(
        state,
        &LoopSelect {
            name: Some(name.to_string()),
        },
    )
}

/// Whether this stop is a round: the tree changed since the last round (or
/// since the base, before round 1); or the writer, blocked by this loop in
/// this session, stops again without changing anything — it answers the
/// findings (a responses file) or stalls, and either is a round.
fn is_round(lp: &Loop, history: &History, tree: &str, payload: &Payload) -> anyhow::Result<bool> {
    let Some((row, last)) = &history.last else {
        return Ok(tree != lp.tree_of(&lp.contract().base)?);
    };
    if last.snapshot.tree != tree {
        return Ok(true);
    }
    let blocked_here = payload.stop_hook_active
        && last.verdict == crate::ledger::Verdict::Continue
        && payload.session_id.is_some()
        && super::super::util::hook_note(lp, row.round).session_id == payload.session_id;
    Ok(blocked_here)
}

/// The last round, as `record` would report a retry of it.
fn recorded_last(history: &History) -> anyhow::Result<Recorded> {
    let (row, state) = history.last.clone().context("the ledger has no round")?;
    Ok(Recorded {
        row,
        state,
        already: crate::engine::Already::Recorded,
        max_rounds: history.max_rounds,
    })
}

/// Where the writer answers findings it disputes; the next round reads it
/// and keeps it in its evidence.
pub(super) fn responses_file(lp: &Loop) -> PathBuf {
    lp.paths.responses()
}

struct Hook<'a> {
    lp: &'a Loop,
    payload: &'a Payload,
    input: &'a [u8],
    reviewer: &'a crate::contract::Agent,
}

impl Hook<'_> {
    /// One round, as `run` makes it with the writer already done: snapshot,
    /// guards, review, record, answer.
    fn round(&self, history: &History, tree: &str) -> anyhow::Result<Answer> {
        let lp = self.lp;
        let round = history.round() + 1;
        let work = WorkDir::new(lp, round)?;
        let files = work.files();
        work.write(&files.schema, prompt::schema_for_agents().as_bytes())?;

        let session = self.transcript();
        let (note, writer_tokens) = self.count(history, &session);
        let cap_spent = note.cap_spent().then_some(note.host_cap).flatten();
        let task = task_of(&session);
        let evidence: Vec<(String, Vec<u8>)> = vec![
            ("task.md".into(), task.clone().into_bytes()),
            ("hook.payload.json".into(), self.input.to_vec()),
            (
                crate::hook::note::FILE.into(),
                serde_json::to_vec_pretty(&note)?,
            ),
        ];

        let responses_path = responses_file(lp);
        // The writer wrote it: read it as any file in the state folder,
        // never through a link.
        // A responses file the hook cannot read fails the stop closed.
        let responses = match crate::statefs::read(lp.store.base(), &responses_path) {
            Ok(Some(bytes)) => responses::parse(&bytes).map_err(|err| {
                hinted(format!("loop `{}`: `{}` is not a responses file: {err}", lp.name, responses_path.display()), "{\"responses\": [{\"id\": \"F1\", \"status\": \"disputed\", \"note\": \"...\"}]}")
            })?,
            Ok(None) => Vec::new(),
            Err(err) => {
                return Err(anyhow::Error::new(err).context(format!(
                    "loop `{}`: cannot read `{}`",
                    lp.name,
                    responses_path.display()
                )));
            }
        };

        let mut turn = Turn {
            history,
            round,
            work: &work,
            spend: Spend::default(),
            evidence,
        };
        turn.spend.add_parts(None, writer_tokens);
        // The tree was taken before the run lock; the patch is from the
        // round before it as the ledger stands now.
        let begun = phase::begin(lp, history, tree.to_string())?;
        let spent = (turn.spend.usd, turn.spend.tokens);
        let guarded = begun.guard(history, spent, &responses, true);
        let review = if !guarded.wants_review() {
            None
        } else {
            let owned = round::base_vars(lp, history, round, &task);
            let vars: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let interrupt = crate::agent::process::interrupt_flag();
            let caller = Caller {
                lp,
                progress: &Silent,
                interrupt: &interrupt,
            };
            let (tree, patch) = (&begun.snapped.snap.tree, &begun.snapped.patch.text);
            let review = if lp.contract().is_panel() {
                caller.panel(&mut turn, &vars, tree, patch)
            } else {
                caller.review(&mut turn, self.reviewer, &vars, tree, patch)
            };
            match review {
                Ok(review) => Some(review),
                Err(err) => {
                    let why = render(&err);
                    eprintln!("referee hook stop: {}", escape(&why));
                    return Ok(Answer::Tell(answer::failed_message(&format!(
                        "loop `{}`: {why}",
                        lp.name
                    ))));
                }
            }
        };

        let recorded = begun.commit(
            lp,
            guarded,
            Submission::driven(
                review,
                responses,
                (turn.spend.usd, turn.spend.tokens),
                super::super::now()?,
                turn.evidence,
                None,
            ),
            "was reviewed",
            "let the agent stop again: the round starts over",
        )?;
        // The responses went into the round's evidence; the next round
        // starts without them.
        let _ = std::fs::remove_file(&responses_path);
        let answer = answer_for(lp, &recorded)?;
        // The host ignores a block past its cap and ends the turn: say so to
        // the person instead, so the loop does not look finished.
        if let (Answer::Block(reason), Some(cap)) = (&answer, cap_spent) {
            return Ok(Answer::Tell(answer::cap_spent_message(
                lp.name.as_str(),
                cap,
                reason,
            )));
        }
        eprintln!(
            "referee: loop `{}` round {}: {}",
            lp.name,
            recorded.row.round,
            recorded
                .state
                .rule
                .as_ref()
                .map_or("continue".into(), |r| r.name())
        );
        Ok(answer)
    }

    /// The session's transcript as far as it reads; one that cannot be
    /// read counts nothing, and one refused is named on stderr.
    fn transcript(&self) -> Transcript {
        Hook::session_of(self.payload)
    }

    /// The transcript `payload` names, as [`Hook::transcript`] reads it.
    fn session_of(payload: &Payload) -> Transcript {
        let Some(path) = &payload.transcript_path else {
            return Transcript::default();
        };
        match read_transcript(path) {
            Ok(Some(bytes)) => transcript::read(payload.agent, &bytes),
            Ok(None) => Transcript::default(),
            Err(why) => {
                eprintln!(
                    "referee hook stop: the transcript `{}` {why}: the writer's tokens and requests are not read",
                    escape(&path.display().to_string())
                );
                Transcript::default()
            }
        }
    }

    /// The writer's tokens since the last time they were counted, and what
    /// to keep so the next round counts from here.
    fn count(
        &self,
        history: &History,
        session: &Transcript,
    ) -> (crate::hook::note::SessionNote, Option<u64>) {
        let mut counted = history
            .last
            .as_ref()
            .map(|(row, _)| super::super::util::hook_note(self.lp, row.round).counted)
            .unwrap_or_default();
        let writer_tokens = match (&self.payload.session_id, session.tokens) {
            (Some(id), Some(total)) => {
                let before = counted.insert(id.clone(), total).unwrap_or(0);
                Some(total.saturating_sub(before))
            }
            _ => None,
        };
        // The stop after a block of this session's: one more in the row.
        let blocked_before = match &history.last {
            Some((row, last))
                if self.payload.stop_hook_active
                    && last.verdict == crate::ledger::Verdict::Continue =>
            {
                let before = super::super::util::hook_note(self.lp, row.round);
                match before.session_id.is_some() && before.session_id == self.payload.session_id {
                    true => before.blocked_before.saturating_add(1),
                    false => 0,
                }
            }
            _ => 0,
        };
        let note = crate::hook::note::SessionNote {
            blocked_before,
            host_cap: crate::hook::note::host_cap(
                self.payload.agent,
                std::env::var(crate::hook::settings::CAP_VAR)
                    .ok()
                    .as_deref(),
            ),
            agent: self.payload.agent.as_str().to_string(),
            session_id: self.payload.session_id.clone(),
            transcript_path: self
                .payload
                .transcript_path
                .as_ref()
                .map(|p| p.display().to_string()),
            writer_tokens,
            counted,
        };
        (note, writer_tokens)
    }
}

/// The transcript at `path`, read bounded (SPEC §8.6): the writer can swap
/// it for a FIFO (whose open or read would hold the stop, and the run lock,
/// for ever) or a link to `/dev/zero`. The open does not wait
/// (`O_NONBLOCK`), and only a regular file of at most [`MAX_TRANSCRIPT`]
/// bytes is read. Transcripts live outside the repository (Claude Code's
/// `~/.claude/projects/`, Codex's `~/.codex/sessions/`), and a link there is
/// followed: what it leads to must pass the same test. `None`: there is no
/// file.
fn read_transcript(path: &Path) -> Result<Option<Vec<u8>>, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot be opened ({e})")),
    };
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot be read ({e})"))?;
    if let Some(what) = crate::statefs::kind_name(&meta) {
        return Err(format!("is {what}, not a regular file"));
    }
    if meta.len() > MAX_TRANSCRIPT {
        return Err(format!(
            "is larger than {} MiB",
            MAX_TRANSCRIPT / 1024 / 1024
        ));
    }
    let mut bytes = Vec::with_capacity(crate::statefs::capacity_for(meta.len()));
    file.take(MAX_TRANSCRIPT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot be read ({e})"))?;
    if bytes.len() as u64 > MAX_TRANSCRIPT {
        return Err(format!(
            "grew larger than {} MiB",
            MAX_TRANSCRIPT / 1024 / 1024
        ));
    }
    Ok(Some(bytes))
}

/// The task the reviewer reads: what the person asked in the session,
/// latest last, cut from the front to fit.
fn task_of(session: &Transcript) -> String {
    if session.requests.is_empty() {
        return "(An interactive session: the person's request was not in the agent's transcript. \
                Review the change on its own merits.)"
            .to_string();
    }
    let mut text = String::from("The person's requests in the agent's session, oldest first:\n");
    for r in &session.requests {
        text.push_str(&format!("\n---\n{r}\n"));
    }
    if text.len() > MAX_TASK {
        let mut cut = text.len() - MAX_TASK;
        while !text.is_char_boundary(cut) {
            cut += 1;
        }
        text = format!("(earlier requests cut)\n{}", &text[cut..]);
    }
    text
}

/// The answer a recorded round gives the agent.
fn answer_for(lp: &Loop, recorded: &Recorded) -> anyhow::Result<Answer> {
    let state = &recorded.state;
    let floor = lp.contract().severity_floor;
    match recorded.exit() {
        Exit::Continue => {
            let must_fix: Vec<&Finding> = state
                .registry
                .findings
                .iter()
                .filter(|t| t.standing == FindingStanding::Open && t.finding.severity >= floor)
                .map(|t| &t.finding)
                .collect();
            Ok(Answer::Block(answer::block_reason(
                lp.name.as_str(),
                recorded.row.round,
                recorded.max_rounds,
                &must_fix,
                lp.contract().panel_reviewers().len(),
                &responses_file(lp).display().to_string(),
            )))
        }
        Exit::Success => Ok(Answer::Tell(answer::done_message(
            lp.name.as_str(),
            recorded.row.round,
            recorded.max_rounds,
            &state.rule.as_ref().map_or("clean".into(), |r| r.name()),
            &state.reason,
        ))),
        _ => {
            let history = History::read(lp, lp.store.read()?.rows)?;
            let handoff = crate::report::handoff::of(lp, &history);
            Ok(Answer::Tell(answer::escalated_message(&handoff)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_task_is_the_persons_requests_cut_from_the_front() {
        let none = task_of(&Transcript::default());
        assert!(none.contains("not in the agent's transcript"), "{none}");
        let two = task_of(&Transcript {
            tokens: None,
            requests: vec!["add a.txt".into(), "now make it é".into()],
        });
        assert!(
            two.ends_with("---\nadd a.txt\n\n---\nnow make it é\n"),
            "{two}"
        );
        let long = task_of(&Transcript {
            tokens: None,
            requests: vec!["é".repeat(MAX_TASK), "the latest".into()],
        });
        assert!(long.starts_with("(earlier requests cut)\n"));
        assert!(long.ends_with("the latest\n"));
        assert!(long.len() <= MAX_TASK + 40);
    }
}
