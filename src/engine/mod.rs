//! One round: snapshot, patch, decide (guards, accounting, rules), judge,
//! evidence, refs, append — the single path that `record` calls once and
//! `run` and the Stop hook call through `phase`. Does
//! I/O through the snapshot and ledger modules; the decisions are pure
//! (`decide`, `accounting`, `rules`).

pub mod accounting;
pub mod decide;
pub mod history;
pub mod panel;
pub mod phase;
pub mod replay;

use std::sync::atomic::AtomicBool;

use serde_json::Value;

use crate::digest::sha256_hex;
use crate::exit::{Exit, hinted};
use crate::findings::Parsed;
use crate::findings::responses::Response;
use crate::judge::Question;
use crate::judge::engine::Asked;
use crate::ledger::store::Locked;
use crate::ledger::{Draft, Evidence, Kind, Row, Verdict};
use crate::money::Usd;
use crate::patch::ParsedPatch;
use crate::redact::{redact, redact_str, redact_string};
use crate::snapshot::{self, Patch, Snapshot};
use decide::{Decision, Round, Seen, Stop, Terms};
pub use history::{CallerSpend, History, Loop, LoopStanding, RevertTo, RoundState, SnapshotInfo};
use history::{FIX_LINES_FILE, PATCH_FILE, STATE_FILE};

/// A reviewer's output: the bytes as given and what they parsed to.
#[derive(Debug)]
pub struct Review {
    pub raw: Vec<u8>,
    pub parsed: Parsed,
    /// sha256 of `raw`: the findings digest a retry is compared by.
    pub sha256: String,
    /// A panel's review (`panel::review`): what it kept of each reviewer,
    /// and each one's output as evidence (`raw` is empty then).
    pub panel: Option<panel::PanelEvidence>,
}

impl Review {
    pub fn new(raw: Vec<u8>, parsed: Parsed) -> Review {
        let sha256 = sha256_hex(&raw);
        Review {
            raw,
            parsed,
            sha256,
            panel: None,
        }
    }
}

/// What a caller brings to one round.
pub struct Submission {
    /// `None`: the round ends unreviewed (a guard stopped it first).
    pub review: Option<Review>,
    pub responses: Vec<Response>,
    pub cost_usd: Option<Usd>,
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
        spend: (Option<Usd>, Option<u64>),
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
    /// Whether this call appended the round, or what it found instead.
    pub already: Already,
    /// The round cap in force.
    pub max_rounds: u32,
}

/// Whether a call appended its round, or what it found instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Already {
    /// The call appended its round.
    No,
    /// The same round was recorded before: a retry, answered as then.
    Recorded,
    /// The loop had stopped on this very tree: the call is answered with
    /// that stop and appends nothing.
    Done,
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
/// read to the append (released only while a judge is asked, see
/// [`finish`]). A retry of the last round (same tree, same findings) or of
/// the same idempotency key appends nothing and answers as before.
pub fn record(lp: &Loop, sub: Submission) -> anyhow::Result<Recorded> {
    let mut locked = lp.store.lock()?;
    let mut history = History::read(lp, locked.rows()?)?;
    let tree = lp.worktree_tree()?;
    if let Some(answered) = retried(lp, &history, &tree, &sub)? {
        return Ok(answered);
    }
    if let Some(done) = finished(lp, &history, &tree)? {
        return Ok(done);
    }
    history.ensure_open(&lp.name)?;
    let snapped = snap(lp, &history, tree)?;
    finish(lp, locked, &mut history, snapped, sub)
}

/// The answer to a call on a loop that stopped, with the work tree at
/// `tree`: the stop's round, verdict and exit code when `tree` is the tree
/// it stopped on (a CI job run again, a reviewer asked again: nothing new
/// to referee, and nothing is appended); a refusal when the tree changed
/// since (new work, which a stopped loop does not take). `None` for a loop
/// that did not stop.
pub fn finished(lp: &Loop, history: &History, tree: &str) -> anyhow::Result<Option<Recorded>> {
    let LoopStanding::Stopped { round, rule } = history.standing() else {
        return Ok(None);
    };
    let Some((row, state)) = &history.last else {
        return Ok(None);
    };
    if state.snapshot.tree == tree {
        return Ok(Some(Recorded {
            row: row.clone(),
            state: state.clone(),
            already: Already::Done,
            max_rounds: history.max_rounds,
        }));
    }
    let name = &lp.name;
    Err(hinted(
        format!(
            "loop `{name}` stopped at round {round} on `{rule}`, and the work tree changed since: a stopped loop takes no more rounds; nothing was recorded"
        ),
        format!(
            "`referee escalate --loop {name}` prints the hand-off; a human may continue the loop in writing \
             with `referee resume --loop {name} --by NAME --reason TEXT`, or review the change in a new loop (`referee init --loop NAME`)"
        ),
    ))
}

/// The answer to a call that repeats a round already recorded, if `sub`
/// (with the work tree at `tree`) is one: under an idempotency key, the
/// round that key recorded (a call that differs from it is refused);
/// without one, the last round when its tree and review are this call's.
fn retried(
    lp: &Loop,
    history: &History,
    tree: &str,
    sub: &Submission,
) -> anyhow::Result<Option<Recorded>> {
    let answered = |row: Row, state: RoundState| {
        Some(Recorded {
            row,
            state,
            already: Already::Recorded,
            max_rounds: history.max_rounds,
        })
    };
    if let Some(key) = sub.idempotency_key.as_deref() {
        let keyed = history
            .rows
            .iter()
            .find(|r| r.kind == Kind::Round && r.idempotency_key == key);
        let Some(row) = keyed else {
            return Ok(None);
        };
        let state = history::read_state(&lp.store, row)?;
        let differs = retry_differs(row, &state, tree, sub);
        if !differs.is_empty() {
            return Err(hinted(
                format!(
                    "idempotency key `{}` was used by round {} for another call: {}; nothing was recorded",
                    row.idempotency_key,
                    row.round,
                    differs.join("; ")
                ),
                "a retry sends the same review, responses and spend for the same tree; a new review takes a new key",
            ));
        }
        return Ok(answered(row.clone(), state));
    }
    let review = sub.review.as_ref().map_or("", |r| r.sha256.as_str());
    let Some((row, state)) = &history.last else {
        return Ok(None);
    };
    if state.snapshot.tree != tree || row.findings_sha256 != review {
        return Ok(None);
    }
    // A person amended the loop since that round: the same tree and
    // review again is no retry to answer as before, and no new round.
    let amended = history
        .rows
        .iter()
        .skip_while(|r| !(r.kind == Kind::Round && r.round == row.round))
        .any(|r| r.kind == Kind::Amend);
    if amended {
        return Err(hinted(
            format!(
                "this is the tree and the review of round {} (`{}`), recorded before the contract was amended; nothing was recorded",
                row.round,
                if row.rule.is_empty() {
                    "continue"
                } else {
                    row.rule.as_str()
                }
            ),
            "the amendment counts from the next round: let the writer change the tree (or get a new review), then record it",
        ));
    }
    Ok(answered(row.clone(), state.clone()))
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
        cost_usd: sub.cost_usd,
        tokens: sub.tokens,
    };
    if then != now {
        let shown = |s: CallerSpend| {
            let cost = s.cost_usd.map_or("no cost".into(), |c| c.to_string());
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

/// Stores `tree` (the working tree, from [`Loop::worktree_tree`]) as the
/// next round's snapshot commit, published only by [`finish`], with the
/// patch to it from [`previous_snapshot`].
///
/// The patch shows each file as the work tree's attributes say, and the
/// writer can edit them: `*.rs -diff` made every Rust change read `Binary
/// files … differ`, unseen by the reviewer and uncounted. Once any
/// `.gitattributes` differs from the base's, the patch is listed again
/// with the base's attributes (git reads them from a tree per changed file:
/// only then).
fn snap(lp: &Loop, history: &History, tree: String) -> anyhow::Result<Snapped> {
    let round = history.round() + 1;
    let from = previous_snapshot(lp, history);
    let parent = (from != crate::git::EMPTY_TREE).then_some(from.as_str());
    let message = round_message(lp, round);
    let snap = snapshot::commit(&lp.repo, lp.name.as_str(), round, parent, &tree, &message)?;
    let own = lp.own.as_ref();
    let mut patch = snapshot::diff(&lp.repo, own, &from, &tree)?;
    if attributes_changed(history, &patch) {
        let base = &lp.contract().base;
        patch = snapshot::diff_with_attributes(&lp.repo, own, &from, &tree, base)?;
    }
    Ok(Snapped { snap, from, patch })
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
}

/// The message of round `round`'s snapshot commit and ref updates.
fn round_message(lp: &Loop, round: u32) -> String {
    format!("referee: loop {} round {round}", lp.name)
}

/// Commits the round, in order: decide it, ask the judge, stage its
/// evidence, publish its refs, append its row. `locked` is the ledger's
/// lock, under which `history` was read; the round's ref moves only under
/// it, right before the row. The round's registry is made from
/// `history`'s, which is taken (left empty).
pub fn finish<'a>(
    lp: &'a Loop,
    locked: Locked<'a>,
    history: &mut History,
    snapped: Snapped,
    sub: Submission,
) -> anyhow::Result<Recorded> {
    let contract = ensure_contract_unchanged(lp)?;
    let round = history.round() + 1;
    let patch_text = redact(&snapped.patch.text).into_owned();
    let parsed_patch = crate::patch::parse(&patch_text);
    let mut decision = decide_round(lp, history, round, &snapped.patch, &parsed_patch, &sub, &[])?;
    // A finding taken as new that resembles a closed one is put to the
    // judge, when there is one (SPEC §4.1): a yes decides the round again
    // with the match; no answer, or an invalid one, leaves it new.
    let same = same_problem_questions(lp, history, &decision);
    let extra: Vec<Question> = same.iter().map(|(_, q)| q.clone()).collect();
    let (mut locked, asked) = ask_judge(lp, locked, history, round, &decision, &sub, &extra)?;
    let confirmed = confirmed(&same, asked.as_ref().map(|a| &a.outcome));
    if !confirmed.is_empty() {
        decision = decide_round(
            lp,
            history,
            round,
            &snapped.patch,
            &parsed_patch,
            &sub,
            &confirmed,
        )?;
    }
    let outcome = Outcome::of(&decision, asked.as_ref(), round);
    let draft = draft_row(
        round,
        decision.counts,
        &outcome,
        asked.as_ref(),
        &snapped,
        &sub,
    );
    let mut state = round_state(lp, history, round, &snapped, decision, &outcome, &sub);
    state.out_of_scope_added = added_paths(&state.out_of_scope, &parsed_patch);
    // The judge's call adds to the row's spend: the caller's own is kept
    // beside it, for a retry to be compared with (`retry_differs`).
    if asked
        .as_ref()
        .is_some_and(|a| a.cost_usd.is_some() || a.tokens.is_some())
    {
        state.caller_spend = Some(CallerSpend {
            cost_usd: sub.cost_usd,
            tokens: sub.tokens,
        });
    }
    // Stored evidence is redacted, and what later rounds read is what was
    // stored: the state itself is redacted, then kept in hand.
    redact_state(&mut state);
    let evidence = stage_evidence(lp, &state, &patch_text, sub, asked.as_ref())?;
    // Round 1 keeps the contract it checked, for `contract restore`.
    let kept = history.last.is_none().then_some(contract.as_slice());
    let message = round_message(lp, round);
    snapshot::publish(&lp.repo, lp.name.as_str(), &snapped.snap, &message, kept)?;
    let row = locked.append(draft, Some(evidence))?;
    Ok(Recorded {
        row,
        state,
        already: Already::No,
        max_rounds: history.max_rounds,
    })
}

/// Decides round `round` by the contract's terms (pure, `decide`), from
/// the history, the round's patch (`patch`, and `parsed`, its redacted
/// text parsed) and the submission.
fn decide_round(
    lp: &Loop,
    history: &mut History,
    round: u32,
    patch: &Patch,
    parsed: &ParsedPatch,
    sub: &Submission,
    same_problem: &[usize],
) -> anyhow::Result<Decision> {
    let terms = Terms::of(&history.contract, history.max_rounds)
        .map_err(|e| anyhow::anyhow!("contract field `scope`: {e}"))?;
    let fix_lines = history::fix_lines(&lp.store, history)?;
    let spent_usd = history
        .spent_usd
        .saturating_add(sub.cost_usd.unwrap_or_default());
    let spent_tokens = history.spent_tokens.saturating_add(sub.tokens.unwrap_or(0));
    Ok(decide::decide(
        &terms,
        Round {
            round,
            // Not read again, unless a judge may send the round to be
            // decided again (`same_problem`): the round's registry is made
            // from it.
            registry: if history.contract.judge.is_some() {
                std::borrow::Cow::Borrowed(&history.registry)
            } else {
                std::borrow::Cow::Owned(std::mem::take(&mut history.registry))
            },
            earlier: &history.earlier,
            parsed: sub.review.as_ref().map(|r| &r.parsed),
            patch: parsed,
            diff_added: patch.added,
            diff_removed: patch.removed,
            files: &patch.files,
            fix_lines: std::borrow::Cow::Owned(fix_lines),
            responses: &sub.responses,
            same_problem,
            stalled: sub.stalled,
            spent_usd,
            spent_tokens,
        },
    ))
}

/// The `same_problem` questions of a round (SPEC §4.1), with the review
/// position of the finding each is about: one per finding the round took
/// as new although it resembles a closed one. None without a judge.
fn same_problem_questions(
    lp: &Loop,
    history: &History,
    decision: &Decision,
) -> Vec<(usize, Question)> {
    if history.contract.judge.is_none() {
        return Vec::new();
    }
    // A request stays small whatever the review holds: past this many, a
    // resembling finding stays new (the safe side, SPEC §4.1).
    const MAX_QUESTIONS: usize = 20;
    let mut out = Vec::new();
    for (i, r) in decision.reported.iter().enumerate() {
        if out.len() == MAX_QUESTIONS {
            break;
        }
        let Some(closed_id) = r.resembles.as_deref().filter(|_| r.state == Seen::New) else {
            continue;
        };
        let Some(closed) = history
            .registry
            .findings
            .iter()
            .find(|t| t.finding.id == closed_id)
        else {
            continue;
        };
        let patch = closed
            .closed_in
            .map(|k| closing_patch(lp, history, k, closed.finding.file.as_deref()))
            .unwrap_or_default();
        let question = crate::judge::same_problem(
            &described(&r.finding),
            &described(&closed.finding),
            closed.closed_in,
            &patch,
        );
        out.push((i, question));
    }
    out
}

/// A finding as a `same_problem` question shows it.
fn described(f: &crate::findings::Finding) -> crate::judge::questions::Described<'_> {
    let place = match (&f.file, f.line) {
        (Some(file), Some(line)) => format!("{file}:{line}"),
        (Some(file), None) => file.clone(),
        _ => "no place".to_string(),
    };
    crate::judge::questions::Described {
        id: &f.id,
        title: &f.title,
        place,
        body: f.body.as_deref(),
    }
}

/// What round `round`'s patch changed in `file` (its part of the stored
/// patch, checked against the round's row), cut to 4 KB; empty when it
/// cannot be read.
fn closing_patch(lp: &Loop, history: &History, round: u32, file: Option<&str>) -> String {
    const MAX: usize = 4096;
    let Some(row) = history
        .rows
        .iter()
        .find(|r| r.kind == Kind::Round && r.round == round)
    else {
        return String::new();
    };
    let Ok(Some(bytes)) = history::read_checked(&lp.store, row, PATCH_FILE) else {
        return String::new();
    };
    let Some(file) = file else {
        return String::new();
    };
    let header = format!(" b/{file}");
    let mut part = String::new();
    let mut inside = false;
    for line in String::from_utf8_lossy(&bytes).split_inclusive('\n') {
        if line.starts_with("diff --git ") {
            inside = line.trim_end().ends_with(&header);
        }
        if inside {
            part.push_str(line);
        }
    }
    let mut end = part.len().min(MAX);
    while !part.is_char_boundary(end) {
        end -= 1;
    }
    part[..end].to_string()
}

/// The review positions whose `same_problem` question the judge answered
/// yes (at or above `judge::route::YES_AT`).
pub fn confirmed(
    same: &[(usize, Question)],
    outcome: Option<&crate::judge::engine::Outcome>,
) -> Vec<usize> {
    let Some(outcome) = outcome else {
        return Vec::new();
    };
    same.iter()
        .filter(|(_, q)| {
            outcome
                .probability(&q.id)
                .is_some_and(|p| p >= crate::judge::route::YES_AT)
        })
        .map(|(i, _)| *i)
        .collect()
}

/// Asks the contract's judge when there is one, the rules and guards said
/// continue, and the round was reviewed (SPEC §7). The call is a process,
/// up to its timeout: it runs with the ledger's lock released, so `status`
/// and the other readers answer meanwhile, and the round goes on only if
/// no row was appended in between. Returns the lock, held again.
fn ask_judge<'a>(
    lp: &'a Loop,
    locked: Locked<'a>,
    history: &History,
    round: u32,
    decision: &Decision,
    sub: &Submission,
    extra: &[Question],
) -> anyhow::Result<(Locked<'a>, Option<Asked>)> {
    let wanted = decision.stop.is_none() && sub.review.is_some();
    let Some(judge) = history.contract.judge.as_ref().filter(|_| wanted) else {
        return Ok((locked, None));
    };
    drop(locked);
    let block_open = decision.registry.findings.iter().any(|t| {
        t.standing == accounting::FindingStanding::Open
            && t.finding.severity == crate::findings::Severity::Block
    });
    let state = judge_state(
        judge,
        &history.rows,
        round,
        &decision.counts,
        &decision.reported,
    );
    let never = AtomicBool::new(false);
    let interrupt = sub.interrupt.as_deref().unwrap_or(&never);
    let asked =
        crate::judge::engine::ask(judge, &lp.repo, round, &state, block_open, extra, interrupt);
    let mut locked = lp.store.lock()?;
    if locked.rows()?.len() != history.rows.len() {
        return Err(hinted(
            format!(
                "loop `{}` changed while its judge was asked about round {round} (another process appended to its ledger); nothing was recorded",
                lp.name
            ),
            "run the command again",
        ));
    }
    Ok((locked, Some(asked)))
}

/// The round's ledger row, before it is chained.
fn draft_row(
    round: u32,
    counts: crate::ledger::Counts,
    outcome: &Outcome,
    asked: Option<&Asked>,
    snapped: &Snapped,
    sub: &Submission,
) -> Draft {
    let mut draft = Draft::new(Kind::Round, round, &sub.at);
    draft.counts = Some(counts);
    draft.verdict = Some(outcome.verdict);
    draft.rule = outcome
        .rule
        .as_ref()
        .map(Stop::to_string)
        .unwrap_or_default();
    // The judge's call is part of the round's spend.
    let cost = match (sub.cost_usd, asked.and_then(|a| a.cost_usd)) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or_default().saturating_add(b.unwrap_or_default())),
    };
    let tokens = match (sub.tokens, asked.and_then(|a| a.tokens)) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
    };
    draft.cost_usd = cost;
    draft.tokens = tokens;
    draft.snapshot = snapped.snap.commit.clone();
    draft.findings_sha256 = sub
        .review
        .as_ref()
        .map(|r| r.sha256.clone())
        .unwrap_or_default();
    draft.reason = crate::text::one_line(&redact_str(&outcome.reason));
    draft.idempotency_key = sub
        .idempotency_key
        .as_deref()
        .map(crate::text::one_line)
        .unwrap_or_default();
    draft
}

/// Stages the round's evidence, every file redacted: the review (its raw
/// bytes and its findings), the patch (`patch_text`, redacted already), the
/// writer's responses, the caller's other evidence, the judge's exchange,
/// and the round's state (`state`, redacted already).
fn stage_evidence(
    lp: &Loop,
    state: &RoundState,
    patch_text: &[u8],
    sub: Submission,
    asked: Option<&Asked>,
) -> anyhow::Result<Evidence> {
    let mut evidence = Evidence::stage(&lp.store)?;
    store_review(&mut evidence, sub.review)?;
    evidence.add(PATCH_FILE, patch_text)?;
    if !sub.responses.is_empty() {
        let doc = serde_json::json!({ "responses": sub.responses });
        evidence.add("responses.json", &redacted_json(&doc)?)?;
    }
    for (name, bytes) in &sub.evidence {
        evidence.add(name, &redact(bytes))?;
    }
    if let Some(asked) = asked {
        if let Some(request) = &asked.request {
            evidence.add("judge.request.json", request.as_bytes())?;
        }
        if let Some(answer) = &asked.answer {
            evidence.add("judge.answer", &redact(answer))?;
        }
        evidence.add("judge.json", &redacted_json(&asked.outcome)?)?;
    }
    // Machine state, read back every round: compact (`jq .` pretty-prints
    // state.json; fix-lines.bin is opaque hashes, docs/ledger.md).
    if let Some(lines) = &state.fix_lines {
        evidence.write(FIX_LINES_FILE, |out| out.write_all(&lines.to_bytes()))?;
    }
    evidence.write(STATE_FILE, |out| {
        serde_json::to_writer(&mut *out, state)?;
        out.write_all(b"\n")
    })?;
    Ok(evidence)
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
        return Err(hinted(
            format!(
                "contract `{}` changed while this command waited for the ledger lock (sha256 `{}` when read, `{}` now); nothing was recorded",
                crate::state::shown(path),
                lp.loaded.sha256.get(..12).unwrap_or(&lp.loaded.sha256),
                now.get(..12).unwrap_or(&now)
            ),
            "run the command again: it reads the contract anew",
        ));
    }
    Ok(bytes)
}

/// The round's state as `state.json` keeps it: what later rounds read.
fn round_state(
    lp: &Loop,
    history: &History,
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
        // Files the contract names are pinned at round 1 and carried after.
        pinned: match &history.last {
            Some((_, last)) => last.pinned.clone(),
            None => history::file_pins(lp),
        },
        attributes_changed: attributes_changed(history, &snapped.patch),
        // Kept only where the row's spend is not the caller's: see `finish`.
        caller_spend: None,
        fix_lines: Some(decision.fix_lines),
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
        // The judge is asked only when the rules said continue; a round
        // decided again on its `same_problem` answer may stop on a rule,
        // which then stands.
        let asked = asked.filter(|_| decision.stop.is_none());
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

/// What the judge is told about `round`: the use case, the round's findings
/// (`reported`) and counts, and every round before it (`rows`, the ledger
/// up to it) with its counts and patch size.
pub fn judge_state(
    judge: &crate::contract::Judge,
    rows: &[Row],
    round: u32,
    counts: &crate::ledger::Counts,
    reported: &[crate::engine::decide::Reported],
) -> crate::judge::State {
    let mut rounds: Vec<crate::judge::StateRound> = rows
        .iter()
        .filter(|r| r.kind == Kind::Round && r.round < round)
        .map(|r| state_round(r.round, &r.counts.unwrap_or_default()))
        .collect();
    rounds.push(state_round(round, counts));
    crate::judge::State {
        use_case: judge.use_case.clone(),
        what: judge.what.clone(),
        findings: reported
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
                reported_by: r.finding.reported_by.clone(),
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

/// A review's evidence: its raw bytes and its findings as read, redacted.
/// The findings are redacted where they stand (nothing reads them after).
fn store_review(evidence: &mut Evidence, review: Option<Review>) -> anyhow::Result<()> {
    let Some(mut review) = review else {
        return Ok(());
    };
    match review.panel.take() {
        None => evidence.add("findings.raw", &redact(&review.raw))?,
        Some(panel) => {
            for (name, raw) in panel.raws {
                evidence.add(&name, &redact(&raw))?;
            }
            evidence.add("panel.json", &redacted_json(&panel.record)?)?;
        }
    }
    drop(std::mem::take(&mut review.raw));
    review.parsed.findings.iter_mut().for_each(redact_finding);
    evidence.write("findings.json", |out| {
        serde_json::to_writer(&mut *out, &review.parsed)?;
        out.write_all(b"\n")
    })?;
    Ok(())
}

/// A finding with its free text redacted (ids and fingerprints are not text
/// a person wrote, and must stay comparable).
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
