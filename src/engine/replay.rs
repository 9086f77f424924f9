//! Replay: the stored rounds of a loop decided again under another contract's
//! floor, closure, scope, cap and budget, to see where that contract would
//! have stopped. Reads evidence; writes nothing.

use super::History;
use super::accounting::{Registry, waive};
use super::decide::{self, Earlier, Round, Terms};
use super::history::{Loop, PATCH_FILE};
use crate::contract::Contract;
use crate::findings::Parsed;
use crate::ledger::Kind;
use crate::money::Usd;
use crate::rules::{Guard, Stop};

/// One stored round, decided again.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Replayed {
    pub round: u32,
    /// What the loop decided then.
    pub recorded: String,
    /// What the other contract decides.
    pub replayed: String,
    pub must_fix_left: u32,
    pub reason: String,
}

/// Where the other contract would have stopped.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Replay {
    pub rounds: Vec<Replayed>,
    /// `(round, rule)` of the replayed stop, if any.
    pub stopped: Option<(u32, Stop)>,
    pub actual: Option<(u32, Stop)>,
}

/// The review positions of round `round`'s findings taken as new though
/// they resemble a closed one, whose `same_problem` question the round's
/// recorded judge answered yes.
fn same_problem_answered(
    lp: &Loop,
    round: u32,
    reported: &[super::decide::Reported],
) -> anyhow::Result<Vec<usize>> {
    let Some(bytes) = lp.store.evidence_file(round, "judge.json")? else {
        return Ok(Vec::new());
    };
    let Ok(outcome) = serde_json::from_slice::<crate::judge::engine::Outcome>(&bytes) else {
        return Ok(Vec::new());
    };
    Ok(reported
        .iter()
        .enumerate()
        .filter(|(_, r)| r.state == super::decide::Seen::New && r.resembles.is_some())
        .filter(|(_, r)| {
            let id = crate::judge::questions::same_problem_id(&r.finding.id);
            outcome
                .probability(&id)
                .is_some_and(|p| p >= crate::judge::route::YES_AT)
        })
        .map(|(i, _)| i)
        .collect())
}

pub fn replay(lp: &Loop, history: &History, other: &Contract) -> anyhow::Result<Replay> {
    let terms = Terms::of(other, other.max_rounds)
        .map_err(|e| anyhow::anyhow!("contract field `scope`: {e}"))?;
    let mut registry = Registry::default();
    let mut earlier: Vec<Earlier> = Vec::new();
    let mut fix_lines = crate::patch::fix_lines::FixLines::default();
    let (mut usd, mut tokens) = (Usd::ZERO, 0u64);
    let mut out = Vec::new();
    let mut stopped = None;
    let mut actual = None;
    for row in &history.rows {
        usd = usd.saturating_add(row.cost_usd.unwrap_or_default());
        tokens = tokens.saturating_add(row.tokens.unwrap_or(0));
        match row.kind {
            Kind::Waive => {
                waive(&mut registry, &row.subject);
                continue;
            }
            Kind::Round => {}
            _ => continue,
        }
        let recorded = if row.rule.is_empty() {
            "continue".to_string()
        } else {
            format!("stop: {}", row.rule)
        };
        // After an amendment a loop goes on: its real end is its last stop.
        if !row.rule.is_empty() {
            actual = Some((row.round, Stop::parse(&row.rule)));
        }
        if stopped.is_some() {
            continue;
        }
        let dir = lp.store.evidence_dir(row.round);
        let patch_text = lp
            .store
            .evidence_file(row.round, PATCH_FILE)?
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "round {}: cannot read `{}`: it is missing",
                    row.round,
                    dir.join(PATCH_FILE).display()
                )
            })?;
        let patch = crate::patch::parse(&patch_text);
        let parsed: Option<Parsed> = match lp.store.evidence_file(row.round, "findings.json")? {
            Some(bytes) => Some(serde_json::from_slice(&bytes).map_err(|e| {
                anyhow::anyhow!(
                    "round {}: `findings.json` is not a parsed review: {e}",
                    row.round
                )
            })?),
            None => None,
        };
        let mut files: Vec<String> = Vec::new();
        for f in &patch.files {
            for name in [&f.old_path, &f.new_path].into_iter().flatten() {
                if !files.contains(name) {
                    files.push(name.clone());
                }
            }
        }
        let responses = match lp.store.evidence_file(row.round, "responses.json")? {
            Some(bytes) => crate::findings::responses::parse(&bytes).map_err(|e| {
                anyhow::anyhow!(
                    "round {}: `responses.json` is not a responses document: {e}",
                    row.round
                )
            })?,
            None => Vec::new(),
        };
        let counts = row.counts.unwrap_or_default();
        // A round `run` ended before the review because the writer changed
        // nothing: `decide` asks the `stalled` guard again under `other`.
        let stalled = parsed.is_none() && Stop::parse(&row.rule) == Stop::Progress(Guard::Stalled);
        let decide_with = |same_problem: &[usize]| {
            decide::decide(
                &terms,
                Round {
                    round: row.round,
                    registry: std::borrow::Cow::Borrowed(&registry),
                    earlier: &earlier,
                    parsed: parsed.as_ref(),
                    patch: &patch,
                    diff_added: counts.diff_added,
                    diff_removed: counts.diff_removed,
                    files: &files,
                    fix_lines: std::borrow::Cow::Borrowed(&fix_lines),
                    responses: &responses,
                    same_problem,
                    stalled,
                    spent_usd: usd,
                    spent_tokens: tokens,
                },
            )
        };
        let mut d = decide_with(&[]);
        // Under a contract with a judge, the judge's recorded `same_problem`
        // answers stand (a replay asks no one).
        if other.judge.is_some() {
            let same = same_problem_answered(lp, row.round, &d.reported)?;
            if !same.is_empty() {
                d = decide_with(&same);
            }
        }
        let replayed = match d.stop {
            Some(stop) => {
                let shown = format!("stop: {stop}");
                stopped = Some((row.round, stop));
                shown
            }
            None => "continue".to_string(),
        };
        out.push(Replayed {
            round: row.round,
            recorded,
            replayed,
            must_fix_left: d.counts.must_fix_left,
            reason: d.reason.clone(),
        });
        earlier.push(Earlier {
            round: row.round,
            diff_size: counts.diff_added + counts.diff_removed,
            must_fix_left: d.counts.must_fix_left,
        });
        fix_lines = d.fix_lines;
        registry = d.registry;
    }
    Ok(Replay {
        rounds: out,
        stopped,
        actual,
    })
}
