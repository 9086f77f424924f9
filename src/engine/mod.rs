//! One round: snapshot, patch, guards, accounting, rules, evidence, append —
//! the single path that `record` calls once and `run` calls in a loop. Does
//! I/O through the snapshot and ledger modules; the decisions are pure
//! (`decide`, `accounting`, `rules`).

pub mod accounting;
pub mod decide;
pub mod history;
pub mod phase;
pub mod replay;

use std::sync::atomic::AtomicBool;

use serde_json::Value;

use crate::digest::sha256_hex;
use crate::exit::Exit;
use crate::findings::Parsed;
use crate::findings::responses::Response;
use crate::judge::engine::Asked;
use crate::ledger::store::Locked;
use crate::ledger::{Draft, Evidence, Kind, Row, Verdict};
use crate::patch::ParsedPatch;
use crate::redact::{redact, redact_str, redact_string};
use crate::snapshot::{self, Patch, Snapshot};
use decide::{Decision, Round, Stop, Terms};
pub use history::{CallerSpend, History, Loop, LoopStanding, RevertTo, RoundState, SnapshotInfo};
use history::{PATCH_FILE, STATE_FILE};

/// A reviewer's output: the bytes as given and what they parsed to.
pub struct Review {
    pub raw: Vec<u8>,
    pub parsed: Parsed,
    /// sha256 of `raw`: the findings digest a retry is compared by.
    pub sha256: String,
}

impl Review {
    pub fn new(raw: Vec<u8>, parsed: Parsed) -> Review {
        let sha256 = sha256_hex(&raw);
        Review {
            raw,
            parsed,
            sha256,
        }
    }
}

/// What a caller brings to one round.
pub struct Submission {
    /// `None`: the round ends unreviewed (a guard stopped it first).
    pub review: Option<Review>,
    pub responses: Vec<Response>,
    pub cost_usd: Option<f64>,
    pub tokens: Option<u64>,
    pub idempotency_key: Option<String>,
    /// RFC 3339 UTC.
    pub at: String,
    /// More evidence (agent output, prompts): name and bytes, redacted on the way in.
    pub evidence: Vec<(String, Vec<u8>)>,
    /// Set by Ctrl-C: stops a judge call (`run`).
    pub interrupt: Option<std::sync::Arc<AtomicBool>>,
    /// `run` found the round `stalled` and did not call the reviewer.
    pub stalled: bool,
}

impl Submission {
    /// A round an agent driver played (`run`, `hook stop`): no idempotency
    /// key (the driver is the only writer), `stalled` decided by the guard.
    pub fn driven(
        review: Option<Review>,
        responses: Vec<Response>,
        spend: (Option<f64>, Option<u64>),
        at: String,
        evidence: Vec<(String, Vec<u8>)>,
        interrupt: Option<std::sync::Arc<AtomicBool>>,
    ) -> Submission {
        Submission {
            review,
            responses,
            cost_usd: spend.0,
            tokens: spend.1,
            idempotency_key: None,
            at,
            evidence,
            interrupt,
            stalled: false,
        }
    }
}

/// A committed round (or the one a retry found already committed).
#[derive(Debug, Clone)]
pub struct Recorded {
    pub row: Row,
    pub state: RoundState,
    /// This call appended nothing: the round was recorded before.
    pub already: bool,
    /// The round cap in force.
    pub max_rounds: u32,
}

impl Recorded {
    pub fn exit(&self) -> Exit {
        exit_of(&self.state)
    }
}

/// The exit code a round's verdict means (SPEC §5).
pub fn exit_of(state: &RoundState) -> Exit {
    match &state.rule {
        None if state.verdict == Verdict::Continue => Exit::Continue,
        Some(stop) if !stop.hands_off() => Exit::Success,
        _ => Exit::Escalated,
    }
}

/// `record`: one round from outside, under the ledger's lock from the first
/// read to the append. A retry of the last round (same tree, same findings)
/// or of the same idempotency key appends nothing and answers as before.
///
/// The submission is made (a review read and parsed) by `make`, on a second
/// thread while this one takes the lock and reads the loop's history: on a
/// large review the two take about as long. An error making the submission
/// is the one reported, as when it was made first.
///
/// The snapshot's first half, the work tree added to a temporary index,
/// needs neither, and runs on a third thread from the start (`git add` is
/// most of a round in a large repository); its tree is stored only once
/// the submission is known good and no retry was answered.
pub fn record(
    lp: &Loop,
    make: impl FnOnce() -> anyhow::Result<Submission> + Send,
) -> anyhow::Result<Recorded> {
    std::thread::scope(|scope| {
        let filled = spawn_in(scope, || lp.fill())?;
        // Everything recorded is redacted; the rules are readied while git
        // takes the snapshot, after the submission on its thread (a thread
        // more costs address space: mimalloc reserves for each).
        let made = spawn_in(scope, || {
            let made = make();
            crate::redact::warm();
            made
        })?;
        let opened = open(lp);
        let sub = joined(made)?;
        let (locked, history) = opened?;
        record_opened(lp, locked, history, sub, || joined(filled))
    })
}

/// Starts `f` on a thread of `scope`. A thread that cannot be started (a
/// limit on processes or on address space) is an error, raised before
/// anything is recorded, never a panic.
fn spawn_in<'scope, T: Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    f: impl FnOnce() -> T + Send + 'scope,
) -> anyhow::Result<std::thread::ScopedJoinHandle<'scope, T>> {
    std::thread::Builder::new()
        .spawn_scoped(scope, f)
        .map_err(thread_error)
}

/// Why a thread of the round could not be started.
fn thread_error(err: std::io::Error) -> anyhow::Error {
    anyhow::anyhow!(
        "cannot start a thread: {err}; nothing was recorded\n\
         hint: raise the limit on processes (`ulimit -u`) or on address space (`ulimit -v`) referee runs under"
    )
}

/// What a scoped thread returned; its panic goes on in this thread.
fn joined<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// What a thread returned; its panic goes on in this thread.
fn joined_thread<T>(handle: std::thread::JoinHandle<T>) -> T {
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// The loop's lock and its history read under it.
fn open(lp: &Loop) -> anyhow::Result<(Locked<'_>, History)> {
    let mut locked = lp.store.lock()?;
    let history = History::read(lp, locked.rows()?)?;
    Ok((locked, history))
}

fn record_opened<'a>(
    lp: &'a Loop,
    locked: Locked<'a>,
    mut history: History,
    sub: Submission,
    filled: impl FnOnce() -> Result<snapshot::Filled, snapshot::SnapshotError>,
) -> anyhow::Result<Recorded> {
    // The round recorded under this call's idempotency key, if any: the
    // call is answered as a retry only when it is the same call (below).
    let keyed = match sub.idempotency_key.as_deref().and_then(|key| {
        history
            .rows
            .iter()
            .find(|r| r.kind == Kind::Round && r.idempotency_key == key)
    }) {
        Some(row) => Some((row.clone(), history::read_state(&lp.store, row)?)),
        None => None,
    };

    // The snapshot's tree only once the submission is known good and no
    // retry was answered: a bad review records nothing and stores no tree.
    // Its commit is written as soon as its tree is, while git lists the
    // patch; not for the last round's tree, which may be a retry, nor for
    // a keyed call, which is one or is refused.
    let last_tree = history.last.as_ref().map(|(_, s)| s.snapshot.tree.as_str());
    // The round's last git commands load while `git add` still runs.
    let ahead = Ahead::start(lp, &history)?;
    let (tree, made, patch) =
        filled()?.tree_and_patch_then(&previous_snapshot(lp, &history), |tree| {
            match keyed.is_some() || Some(tree) == last_tree {
                true => Ok(None),
                false => commit(lp, &history, tree).map(Some),
            }
        })?;
    if let Some((row, state)) = keyed {
        let differs = retry_differs(&row, &state, &tree, &sub);
        if !differs.is_empty() {
            anyhow::bail!(
                "idempotency key `{}` was used by round {} for another call: {}; nothing was recorded\n\
                 hint: a retry sends the same review, responses and spend for the same tree; a new review takes a new key",
                row.idempotency_key,
                row.round,
                differs.join("; ")
            );
        }
        return Ok(Recorded {
            row,
            state,
            already: true,
            max_rounds: history.max_rounds,
        });
    }
    let findings_sha256 = sub
        .review
        .as_ref()
        .map(|r| r.sha256.clone())
        .unwrap_or_default();
    if let Some((row, state)) = &history.last
        && state.snapshot.tree == tree
        && row.findings_sha256 == findings_sha256
        && sub.idempotency_key.is_none()
    {
        // A person amended the loop since that round: the same tree and
        // review again is no retry to answer as before, and no new round.
        let amended = history
            .rows
            .iter()
            .skip_while(|r| !(r.kind == Kind::Round && r.round == row.round))
            .any(|r| r.kind == Kind::Amend);
        if amended {
            anyhow::bail!(
                "this is the tree and the review of round {} (`{}`), recorded before the contract was amended; nothing was recorded\n\
                 hint: the amendment counts from the next round: let the writer change the tree (or get a new review), then record it",
                row.round,
                if row.rule.is_empty() {
                    "continue"
                } else {
                    row.rule.as_str()
                }
            );
        }
        return Ok(Recorded {
            row: row.clone(),
            state: state.clone(),
            already: true,
            max_rounds: history.max_rounds,
        });
    }

    history.ensure_open(&lp.name)?;
    let snap = match made {
        Some(snap) => snap,
        None => commit(lp, &history, &tree)?,
    };
    let from = previous_snapshot(lp, &history);
    let patch = with_base_attributes(lp, &history, &from, &tree, patch)?;
    let snapped = Snapped {
        snap,
        from,
        patch,
        ahead: Some(ahead),
    };
    finish(lp, locked, &mut history, snapped, sub)
}

/// How a call under an idempotency key differs from the round `row` that
/// key recorded (`state` its state): the review's bytes, the snapshot's
/// tree, the writer's responses (as stored: notes redacted), the spend the
/// caller reported. Empty: the same call, answered as a retry (SPEC §8.7).
fn retry_differs(row: &Row, state: &RoundState, tree: &str, sub: &Submission) -> Vec<String> {
    let short = |s: &str| s.get(..12).unwrap_or(s).to_string();
    let mut differs = Vec::new();
    let review = sub.review.as_ref().map_or("", |r| r.sha256.as_str());
    if review != row.findings_sha256 {
        differs.push(format!(
            "the review differs (sha256 `{}` then, `{}` now)",
            short(&row.findings_sha256),
            short(review)
        ));
    }
    if tree != state.snapshot.tree {
        differs.push(format!(
            "the work tree differs (tree `{}` then, `{}` now)",
            short(&state.snapshot.tree),
            short(tree)
        ));
    }
    let mut responses = sub.responses.clone();
    responses
        .iter_mut()
        .for_each(|r| redact_string(&mut r.note));
    if responses != state.responses {
        differs.push(format!(
            "the responses differ ({} then, {} now)",
            state.responses.len(),
            responses.len()
        ));
    }
    let then = state.caller_spend.unwrap_or(CallerSpend {
        cost_usd: row.cost_usd,
        tokens: row.tokens,
    });
    let now = CallerSpend {
        cost_usd: sub.cost_usd.map(micro_dollars),
        tokens: sub.tokens,
    };
    if then != now {
        let shown = |s: CallerSpend| {
            let cost = s.cost_usd.map_or("no cost".into(), |c| format!("${c}"));
            let tokens = s
                .tokens
                .map_or("no tokens".into(), |t| format!("{t} tokens"));
            format!("{cost}, {tokens}")
        };
        differs.push(format!(
            "the spend differs ({} then, {} now)",
            shown(then),
            shown(now)
        ));
    }
    differs
}

/// A cost to the micro-dollar, as the ledger keeps it.
fn micro_dollars(cost: f64) -> f64 {
    (cost * 1e6).round() / 1e6
}

/// The working tree's snapshot tree and the patch to it from
/// [`previous_snapshot`], for [`snap`] (`run`; `record` writes its commit
/// while the patch is listed, in `record_opened`).
pub fn take(
    lp: &Loop,
    history: &History,
) -> Result<(String, snapshot::Patch), snapshot::SnapshotError> {
    lp.worktree_with_patch(&previous_snapshot(lp, history))
}

/// Stores `tree` (the working tree, from [`take`]) as the next round's
/// snapshot; `patch` is the patch to it from [`previous_snapshot`].
pub fn snap(
    lp: &Loop,
    history: &History,
    tree: String,
    patch: snapshot::Patch,
) -> anyhow::Result<Snapped> {
    let snap = commit(lp, history, &tree)?;
    let from = previous_snapshot(lp, history);
    let patch = with_base_attributes(lp, history, &from, &tree, patch)?;
    Ok(Snapped {
        snap,
        from,
        patch,
        ahead: None,
    })
}

/// Whether a `.gitattributes` file differs from the base's: this round's
/// patch touches one, or an earlier round's did.
fn attributes_changed(history: &History, patch: &snapshot::Patch) -> bool {
    history
        .last
        .as_ref()
        .is_some_and(|(_, last)| last.attributes_changed)
        || patch
            .files
            .iter()
            .any(|f| f == ".gitattributes" || f.ends_with("/.gitattributes"))
}

/// The round's patch as the base's `.gitattributes` show it, once any
/// attributes file differs from the base's. The patch shows each file as
/// the work tree's attributes say, and the writer can edit them: `*.rs
/// -diff` made every Rust change read `Binary files … differ`, unseen by
/// the reviewer and uncounted. Listed again only then: git reading
/// attributes from a tree costs about 140 µs per changed file.
fn with_base_attributes(
    lp: &Loop,
    history: &History,
    from: &str,
    tree: &str,
    patch: snapshot::Patch,
) -> Result<snapshot::Patch, snapshot::SnapshotError> {
    match attributes_changed(history, &patch) {
        true => snapshot::diff_with_attributes(&lp.repo, from, tree, &lp.contract().base),
        false => Ok(patch),
    }
}

/// Writes `tree` as the next round's snapshot commit, whose parent is
/// [`previous_snapshot`] (none when that is the empty tree).
fn commit(
    lp: &Loop,
    history: &History,
    tree: &str,
) -> Result<snapshot::Snapshot, snapshot::SnapshotError> {
    let round = history.round() + 1;
    let from = previous_snapshot(lp, history);
    let parent = (from != crate::git::EMPTY_TREE).then_some(from.as_str());
    snapshot::commit(
        &lp.repo,
        lp.name.as_str(),
        round,
        parent,
        tree,
        &round_message(lp, round),
    )
}

/// The commit the next round's patch starts from: the last round's snapshot,
/// or the contract's base before round 1.
pub fn previous_snapshot(lp: &Loop, history: &History) -> String {
    match &history.last {
        Some((_, state)) => state.snapshot.commit.clone(),
        None => lp.contract().base.clone(),
    }
}

/// A round's snapshot and the patch that led to it.
pub struct Snapped {
    pub snap: Snapshot,
    /// The commit or tree the patch starts from.
    pub from: String,
    pub patch: Patch,
    /// The round's last git commands, if they were started already.
    pub ahead: Option<Ahead>,
}

/// The round's last git commands, started ahead so that they have loaded
/// by the time the round needs them: `git update-ref`, and at round 1 the
/// `git hash-object` that keeps the contract (the bytes [`finish`] checks,
/// for `contract restore`, pinned by the round's ref). Dropped unused, they
/// move no ref (the second stores the empty blob, which nothing names).
pub struct Ahead {
    publishing: snapshot::Publishing,
    storing: Option<snapshot::Storing>,
}

impl Ahead {
    /// Started for the round after `history`.
    pub fn start(lp: &Loop, history: &History) -> anyhow::Result<Ahead> {
        let message = round_message(lp, history.round() + 1);
        let publishing = snapshot::Publishing::start(&lp.repo, &message)?;
        let storing = match history.last {
            None => Some(snapshot::Storing::start(&lp.repo, lp.name.as_str())?),
            Some(_) => None,
        };
        Ok(Ahead {
            publishing,
            storing,
        })
    }
}

/// The message of round `round`'s snapshot commit and ref updates.
fn round_message(lp: &Loop, round: u32) -> String {
    format!("referee: loop {} round {round}", lp.name)
}

/// Decides the round and commits it: evidence, then the row. `locked` is
/// the ledger's lock, under which `history` was read. A judge call (a
/// process, up to its timeout) runs with the lock released, so `status` and
/// the other readers answer meanwhile; the round commits only if no row was
/// appended in between. The round's registry is made from `history`'s,
/// which is taken (left empty).
pub fn finish<'a>(
    lp: &'a Loop,
    mut locked: Locked<'a>,
    history: &mut History,
    mut snapped: Snapped,
    mut sub: Submission,
) -> anyhow::Result<Recorded> {
    let contract = ensure_contract_unchanged(lp)?;
    let Ahead {
        publishing,
        storing,
    } = match snapped.ahead.take() {
        Some(ahead) => ahead,
        None => Ahead::start(lp, history)?,
    };
    // At round 1 the contract (the bytes just checked) is stored while the
    // round is decided and its evidence written.
    let storing = storing
        .map(|s| {
            std::thread::Builder::new()
                .spawn(move || s.finish(contract))
                .map_err(thread_error)
        })
        .transpose()?;
    let round = history.round() + 1;
    let attributes_changed = attributes_changed(history, &snapped.patch);
    let terms = Terms::of(&history.contract, history.max_rounds)
        .map_err(|e| anyhow::anyhow!("contract field `scope`: {e}"))?;
    let patch_text = redact(&snapped.patch.text).into_owned();
    let parsed_patch = crate::patch::parse(&patch_text);
    let earlier_patches = earlier_patches(lp, history);
    let spent_usd = history.spent_usd + sub.cost_usd.unwrap_or(0.0);
    let spent_tokens = history.spent_tokens.saturating_add(sub.tokens.unwrap_or(0));
    let decision = decide::decide(
        &terms,
        Round {
            round,
            // Not read again: the round's registry is made from it.
            registry: std::borrow::Cow::Owned(std::mem::take(&mut history.registry)),
            earlier: &history.earlier,
            parsed: sub.review.as_ref().map(|r| &r.parsed),
            patch: &parsed_patch,
            diff_added: snapped.patch.added,
            diff_removed: snapped.patch.removed,
            files: &snapped.patch.files,
            earlier_patches: &earlier_patches,
            responses: &sub.responses,
            stalled: sub.stalled,
            spent_usd,
            spent_tokens,
        },
    );
    let asked = if judge_wanted(history, &decision, &sub) {
        drop(locked);
        let asked = consult_judge(lp, history, round, &decision, &sub);
        locked = lp.store.lock()?;
        if locked.rows()?.len() != history.rows.len() {
            anyhow::bail!(
                "loop `{}` changed while its judge was asked about round {round} (another process appended to its ledger); nothing was recorded\n\
                 hint: run the command again",
                lp.name
            );
        }
        asked
    } else {
        None
    };
    let outcome = Outcome::of(&decision, asked.as_ref(), round);
    let counts = decision.counts;
    // Files the contract names are pinned at round 1 and carried after.
    let pinned = match &history.last {
        Some((_, last)) => last.pinned.clone(),
        None => history::file_pins(lp),
    };
    let mut state = round_state(lp, pinned, round, &snapped, decision, &outcome, &sub);
    state.attributes_changed = attributes_changed;
    // The judge's call adds to the row's spend: the caller's own is kept
    // beside it, for a retry to be compared with (`retry_differs`).
    if asked
        .as_ref()
        .is_some_and(|a| a.cost_usd.is_some() || a.tokens.is_some())
    {
        state.caller_spend = Some(CallerSpend {
            cost_usd: sub.cost_usd.map(micro_dollars),
            tokens: sub.tokens,
        });
    }
    state.out_of_scope_added = added_paths(&state.out_of_scope, &parsed_patch);
    let findings_sha256 = sub
        .review
        .as_ref()
        .map(|r| r.sha256.clone())
        .unwrap_or_default();

    let message = round_message(lp, round);
    let evidence = Evidence::stage(&lp.store)?;
    // The review (its raw bytes and its findings) is redacted and written on
    // a second thread while this one redacts and writes the round's state:
    // on a large review they are the two largest files.
    let review = sub.review.take();
    std::thread::scope(|scope| -> anyhow::Result<_> {
        let written = spawn_in(scope, || store_review(&evidence, review))?;
        // Stored evidence is redacted, and what later rounds read is what
        // was stored: redact the state itself, then keep it in hand.
        redact_state(&mut state);
        evidence.add(PATCH_FILE, &patch_text)?;
        if !sub.responses.is_empty() {
            let doc = serde_json::json!({ "responses": sub.responses });
            evidence.add("responses.json", &redacted_json(&doc)?)?;
        }
        for (name, bytes) in &sub.evidence {
            evidence.add(name, &redact(bytes))?;
        }
        if let Some(asked) = &asked {
            if let Some(request) = &asked.request {
                evidence.add("judge.request.json", request.as_bytes())?;
            }
            if let Some(answer) = &asked.answer {
                evidence.add("judge.answer", &redact(answer))?;
            }
            evidence.add("judge.json", &redacted_json(&asked.outcome)?)?;
        }
        // Machine state, read back every round: compact (`jq .` pretty-prints it).
        evidence.write(STATE_FILE, |out| {
            serde_json::to_writer(&mut *out, &state)?;
            out.write_all(b"\n")
        })?;
        joined(written)
    })?;

    let mut draft = Draft::new(Kind::Round, round, &sub.at);
    draft.counts = Some(counts);
    draft.verdict = Some(outcome.verdict);
    draft.rule = outcome
        .rule
        .as_ref()
        .map(Stop::to_string)
        .unwrap_or_default();
    // The judge's call is part of the round's spend.
    let judge_cost = asked.as_ref().and_then(|a| a.cost_usd);
    let judge_tokens = asked.as_ref().and_then(|a| a.tokens);
    let cost = match (sub.cost_usd, judge_cost) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
    };
    let tokens = match (sub.tokens, judge_tokens) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    };
    // Sums of float costs drift (0.16999999999999998): a micro-dollar is plenty.
    draft.cost_usd = cost.map(micro_dollars);
    draft.tokens = tokens;
    draft.snapshot = snapped.snap.commit.clone();
    draft.findings_sha256 = findings_sha256;
    draft.reason = crate::text::one_line(&redact_str(&outcome.reason));
    draft.idempotency_key = sub
        .idempotency_key
        .as_deref()
        .map(crate::text::one_line)
        .unwrap_or_default();
    // The evidence is made durable while git stores the contract and moves
    // the refs: both are waits (fsyncs, a process).
    std::thread::scope(|scope| -> anyhow::Result<()> {
        let sealed = spawn_in(scope, || evidence.seal())?;
        let kept = storing.map(joined_thread).transpose()?;
        // The round's ref moves only here, under the lock, right before its row.
        snapshot::publish(
            &lp.repo,
            &snapped.snap,
            &message,
            kept.as_ref(),
            Some(publishing),
        )?;
        Ok(joined(sealed)?)
    })?;
    let row = locked.append(draft, Some(evidence))?;
    Ok(Recorded {
        row,
        state,
        already: false,
        max_rounds: history.max_rounds,
    })
}

/// The paths of `files` the patch shows coming into being (a new file, or
/// the new name of a rename) and never on its old side. A path the patch
/// does not place either way counts as one the round's start had: the
/// hand-off suggests `rm` only for what the writer surely added (a wrong
/// `git restore` fails, a wrong `rm` deletes).
fn added_paths(files: &[String], patch: &crate::patch::ParsedPatch) -> Vec<String> {
    use std::collections::HashSet;
    let before: HashSet<&str> = patch
        .files
        .iter()
        .filter_map(|f| f.old_path.as_deref())
        .collect();
    let arrived: HashSet<&str> = patch
        .files
        .iter()
        .filter(|f| f.old_path.as_deref() != f.new_path.as_deref())
        .filter_map(|f| f.new_path.as_deref())
        .collect();
    files
        .iter()
        .filter(|f| arrived.contains(f.as_str()) && !before.contains(f.as_str()))
        .cloned()
        .collect()
}

/// Refuses to record when the contract file is not the one this process
/// loaded: an `init --force` that won the ledger lock first replaced it, and
/// a row chained to the old bytes would brick the loop. Returns the bytes
/// checked: round 1 pins exactly these.
fn ensure_contract_unchanged(lp: &Loop) -> anyhow::Result<Vec<u8>> {
    let path = &lp.loaded.path;
    let bytes = std::fs::read(path)
        .map_err(|e| anyhow::anyhow!("cannot read contract `{}`: {e}", path.display()))?;
    let now = sha256_hex(&bytes);
    if now != lp.loaded.sha256 {
        anyhow::bail!(
            "contract `{}` changed while this command waited for the ledger lock (sha256 `{}` when read, `{}` now); nothing was recorded\n\
             hint: run the command again: it reads the contract anew",
            crate::state::shown(path),
            lp.loaded.sha256.get(..12).unwrap_or(&lp.loaded.sha256),
            now.get(..12).unwrap_or(&now)
        );
    }
    Ok(bytes)
}

fn round_state(
    lp: &Loop,
    pinned: std::collections::BTreeMap<String, String>,
    round: u32,
    snapped: &Snapped,
    decision: Decision,
    outcome: &Outcome,
    sub: &Submission,
) -> RoundState {
    let mut state = RoundState {
        version: 1,
        loop_name: lp.name.to_string(),
        round,
        snapshot: SnapshotInfo {
            commit: snapped.snap.commit.clone(),
            tree: snapped.snap.tree.clone(),
            reference: snapped.snap.r#ref.clone(),
        },
        from: snapped.from.clone(),
        verdict: outcome.verdict,
        rule: outcome.rule.clone(),
        reason: outcome.reason.clone(),
        exit: 0,
        revert_to: decision.revert_to.map(|r| {
            let reference = snapshot::round_ref(&lp.repo, lp.name.as_str(), r).unwrap_or_default();
            RevertTo {
                round: r,
                command: format!("git restore --source={reference} -- ."),
                reference,
            }
        }),
        reviewed: sub.review.is_some() && decision.out_of_scope.is_empty(),
        out_of_scope_added: Vec::new(),
        out_of_scope: decision.out_of_scope,
        carried_unconfirmed: decision.carried_unconfirmed,
        reported: decision.reported,
        skipped: decision.skipped,
        responses: sub.responses.clone(),
        registry: decision.registry,
        judge: outcome.judge.clone(),
        pinned,
        attributes_changed: false,
        // Kept only where the row's spend is not the caller's: see `finish`.
        caller_spend: None,
    };
    state.exit = i32::from(exit_of(&state).code());
    state
}

/// The round's verdict after the judge had its say.
struct Outcome {
    verdict: Verdict,
    rule: Option<Stop>,
    reason: String,
    judge: Option<crate::judge::engine::Outcome>,
}

impl Outcome {
    fn of(decision: &Decision, asked: Option<&Asked>, round: u32) -> Outcome {
        let rules = Outcome {
            verdict: decision.verdict,
            rule: decision.stop.clone(),
            reason: decision.reason.clone(),
            judge: asked.map(|a| a.outcome.clone()),
        };
        match asked.and_then(|a| a.outcome.stop().map(|stop| (stop, &a.outcome))) {
            Some((stop, crate::judge::engine::Outcome::Decided { reason, .. })) => Outcome {
                verdict: Verdict::Stop,
                rule: Some(Stop::parse(stop)),
                reason: format!("round {round}: the judge says stop: {reason}"),
                ..rules
            },
            _ => rules,
        }
    }
}

/// Whether the contract's judge is asked: there is one, the rules and
/// guards said continue, and the round was reviewed (SPEC §7).
fn judge_wanted(history: &History, decision: &Decision, sub: &Submission) -> bool {
    history.contract.judge.is_some() && decision.stop.is_none() && sub.review.is_some()
}

/// Asks the contract's judge. `None`: there is none.
fn consult_judge(
    lp: &Loop,
    history: &History,
    round: u32,
    decision: &Decision,
    sub: &Submission,
) -> Option<Asked> {
    let judge = history.contract.judge.as_ref()?;
    let block_open = decision.registry.findings.iter().any(|t| {
        t.standing == accounting::FindingStanding::Open
            && t.finding.severity == crate::findings::Severity::Block
    });
    let state = judge_state(judge, history, round, decision);
    let never = AtomicBool::new(false);
    let interrupt = sub.interrupt.as_deref().unwrap_or(&never);
    Some(crate::judge::engine::ask(
        judge, &lp.repo, round, &state, block_open, interrupt,
    ))
}

/// What the judge is told: the use case, this round's findings, and every
/// round so far with its counts and patch size.
pub fn judge_state(
    judge: &crate::contract::Judge,
    history: &History,
    round: u32,
    decision: &Decision,
) -> crate::judge::State {
    let mut rounds: Vec<crate::judge::StateRound> = history
        .rows
        .iter()
        .filter(|r| r.kind == Kind::Round)
        .map(|r| state_round(r.round, &r.counts.unwrap_or_default()))
        .collect();
    rounds.push(state_round(round, &decision.counts));
    crate::judge::State {
        use_case: judge.use_case.clone(),
        what: judge.what.clone(),
        findings: decision
            .reported
            .iter()
            .map(|r| crate::judge::StateFinding {
                id: r.finding.id.clone(),
                severity: r.finding.severity,
                title: r.finding.title.clone(),
                file: r.finding.file.clone(),
                line: r.finding.line,
                state: serde_json::to_value(r.state)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
            })
            .collect(),
        rounds,
    }
}

fn state_round(round: u32, c: &crate::ledger::Counts) -> crate::judge::StateRound {
    crate::judge::StateRound {
        round,
        opened: c.opened,
        closed: c.closed,
        reopened: c.reopened,
        must_fix_left: c.must_fix_left,
        below_floor_open: c.below_floor_open,
        diff_added: c.diff_added,
        diff_removed: c.diff_removed,
    }
}

/// Earlier fix rounds' patches (round 2 on) from their evidence, latest
/// first. A round whose patch cannot be read is skipped: it can only hide a
/// reversal, never invent one.
fn earlier_patches(lp: &Loop, history: &History) -> Vec<(u32, ParsedPatch)> {
    history
        .earlier
        .iter()
        .rev()
        .filter(|e| e.round >= 2)
        .filter_map(|e| {
            let bytes = lp.store.evidence_file(e.round, PATCH_FILE).ok()??;
            Some((e.round, crate::patch::parse(&bytes)))
        })
        .collect()
}

/// A finding with its free text redacted (ids and fingerprints are not text
/// a person wrote, and must stay comparable).
/// A review's evidence: its raw bytes and its findings as read, redacted.
/// The findings are redacted where they stand (nothing reads them after).
fn store_review(evidence: &Evidence, review: Option<Review>) -> anyhow::Result<()> {
    let Some(mut review) = review else {
        return Ok(());
    };
    evidence.add("findings.raw", &redact(&review.raw))?;
    drop(std::mem::take(&mut review.raw));
    review.parsed.findings.iter_mut().for_each(redact_finding);
    evidence.write("findings.json", |out| {
        serde_json::to_writer(&mut *out, &review.parsed)?;
        out.write_all(b"\n")
    })?;
    Ok(())
}

fn redact_finding(f: &mut crate::findings::Finding) {
    redact_string(&mut f.title);
    for text in [f.body.as_mut(), f.file.as_mut(), f.rule.as_mut()]
        .into_iter()
        .flatten()
    {
        redact_string(text);
    }
}

fn redact_state(state: &mut RoundState) {
    redact_string(&mut state.reason);
    state
        .reported
        .iter_mut()
        .for_each(|r| redact_finding(&mut r.finding));
    state
        .registry
        .findings
        .iter_mut()
        .for_each(|t| redact_finding(&mut t.finding));
    for r in &mut state.responses {
        redact_string(&mut r.note);
    }
    state.out_of_scope.iter_mut().for_each(redact_string);
    state.out_of_scope_added.iter_mut().for_each(redact_string);
    if let Some(judge) = state.judge.as_mut() {
        use crate::judge::engine::Outcome as Judged;
        match judge {
            Judged::Decided {
                model,
                answers,
                reason,
                ..
            } => {
                model.iter_mut().for_each(redact_string);
                redact_strings(answers);
                redact_string(reason);
            }
            Judged::Skipped { reason } | Judged::Failed { reason } | Judged::Invalid { reason } => {
                redact_string(reason)
            }
        }
    }
}

/// Pretty JSON with every string value redacted (never the serialized text:
/// redaction must not break the document).
fn redacted_json<T: serde::Serialize>(value: &T) -> anyhow::Result<Vec<u8>> {
    let mut value = serde_json::to_value(value)?;
    redact_strings(&mut value);
    let mut out = serde_json::to_vec_pretty(&value)?;
    out.push(b'\n');
    Ok(out)
}

fn redact_strings(value: &mut Value) {
    match value {
        Value::String(s) => redact_string(s),
        Value::Array(items) => items.iter_mut().for_each(redact_strings),
        Value::Object(map) => map.values_mut().for_each(redact_strings),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    /// Only what the patch shows arriving is "added": a file the patch
    /// modifies, deletes, renames away or changes the mode of, or does not
    /// show at all, is restored, never removed.
    #[test]
    fn only_files_the_patch_adds_are_added() {
        let text = b"diff --git a/new.md b/new.md\n\
new file mode 100644\n\
index 0000000..1111111\n\
--- /dev/null\n\
+++ b/new.md\n\
@@ -0,0 +1 @@\n\
+x\n\
diff --git a/old name.md b/moved.md\n\
similarity index 100%\n\
rename from old name.md\n\
rename to moved.md\n\
diff --git a/run.sh b/run.sh\n\
old mode 100644\n\
new mode 100755\n\
diff --git a/gone.md b/gone.md\n\
deleted file mode 100644\n\
index 1111111..0000000\n\
--- a/gone.md\n\
+++ /dev/null\n\
@@ -1 +0,0 @@\n\
-y\n\
diff --git a/edit.md b/edit.md\n\
index 1111111..2222222 100644\n\
--- a/edit.md\n\
+++ b/edit.md\n\
@@ -1 +1 @@\n\
-a\n\
+b\n";
        let patch = crate::patch::parse(text);
        let files: Vec<String> = [
            "new.md",
            "old name.md",
            "moved.md",
            "run.sh",
            "gone.md",
            "edit.md",
            "unseen.md",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(super::added_paths(&files, &patch), ["new.md", "moved.md"]);
    }
}
