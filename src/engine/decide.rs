//! One round decided: accounting turns the patch and the review into the
//! round's facts, and the rules (`crate::rules`) say which stop, if any,
//! fires and why. Pure: the patch, the findings, the registry and the
//! earlier rounds come in; the verdict and the new registry go out.
//! `record`, `run` and `replay` all decide rounds here.

use super::accounting::{Accounted, FindingStanding, Registry, RoundInput, account, open_must_fix};
pub use super::accounting::{Reported, Seen};
use crate::findings::Parsed;
use crate::findings::Severity;
use crate::findings::responses::Response;
use crate::ledger::{Counts, Verdict};
use crate::money::Usd;
use crate::patch::fix_lines::FixLines;
use crate::patch::{ParsedPatch, changed_lines};
use crate::rules::{self, RoundFacts, Rule};
pub use crate::rules::{Stop, Terms};

/// One earlier round, as the rules need it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Earlier {
    pub round: u32,
    pub diff_size: u64,
    pub must_fix_left: u32,
}

/// The round to decide.
pub struct Round<'a> {
    pub round: u32,
    /// The registry after the previous round, waivers applied: owned when
    /// the caller has no more use for it, so the round's registry is made
    /// from it without a copy.
    pub registry: std::borrow::Cow<'a, Registry>,
    /// Rounds 1..round-1.
    pub earlier: &'a [Earlier],
    /// `None`: the round ended unreviewed (only a guard may then stop it).
    pub parsed: Option<&'a Parsed>,
    pub patch: &'a ParsedPatch,
    pub diff_added: u64,
    pub diff_removed: u64,
    /// Every path the patch touches.
    pub files: &'a [String],
    /// What the earlier fix rounds (round 2 on) changed, for reversals:
    /// owned when the caller has no more use for it (it is large in a long
    /// loop of big patches), so the round's is made from it without a copy.
    pub fix_lines: std::borrow::Cow<'a, FixLines>,
    /// The writer's responses recorded with this round.
    pub responses: &'a [Response],
    /// Findings of the review (by position) the judge said are the closed
    /// finding they resemble (`same_problem`).
    pub same_problem: &'a [usize],
    /// `run` ended the round before the review on the `stalled` guard (its
    /// writer had a turn and changed nothing): the guard is asked again
    /// under these terms.
    pub stalled: bool,
    /// The loop's spend including this round.
    pub spent_usd: Usd,
    pub spent_tokens: u64,
}

/// The round, decided.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub registry: Registry,
    pub counts: Counts,
    pub verdict: Verdict,
    pub stop: Option<Stop>,
    /// One line: why the round stopped, or what it leaves open.
    pub reason: String,
    /// For `diff-growth`: the round to revert to.
    pub revert_to: Option<u32>,
    /// For `scope`: the paths outside the scope.
    pub out_of_scope: Vec<String>,
    /// Must-fix findings carried without confirmation (`nit-round`).
    pub carried_unconfirmed: Vec<String>,
    pub reported: Vec<Reported>,
    /// Findings the reviewer skipped this round: missing, their place untouched.
    pub skipped: Vec<String>,
    /// What the fix rounds changed, this round's patch added from round 2 on.
    pub fix_lines: FixLines,
}

/// A round as known before its review: what the guards are asked about.
pub struct Pending<'a> {
    pub round: u32,
    /// Every path the writer's patch touches.
    pub files: &'a [String],
    pub responses: &'a [Response],
    /// The loop's spend so far, this round included.
    pub spent_usd: Usd,
    pub spent_tokens: u64,
    /// The writer had a turn this round (a round resumed with only its
    /// review missing had none, and is never `stalled`).
    pub writer_ran: bool,
}

/// The facts of a round before its review, for the guards: `run` and the
/// Stop hook ask them before a reviewer call is spent (`Begun::guard`), and
/// a round that ends unreviewed is decided on them.
pub fn before_review(terms: &Terms, registry: &Registry, pending: &Pending<'_>) -> RoundFacts {
    let floor = terms.contract.severity_floor;
    let (open, disputed) = open_must_fix(registry, floor, pending.responses);
    RoundFacts {
        round: pending.round,
        reviewed: false,
        out_of_scope: terms.out_of_scope(pending.files),
        spent_usd: pending.spent_usd,
        spent_tokens: pending.spent_tokens,
        writer_idle: pending.writer_ran && pending.files.is_empty(),
        must_fix_left: open,
        must_fix_open_before: open,
        disputed_answered: !disputed.is_empty(),
        ..RoundFacts::default()
    }
}

/// Decides one round.
pub fn decide(terms: &Terms, mut round: Round<'_>) -> Decision {
    let pending = Pending {
        round: round.round,
        files: round.files,
        responses: round.responses,
        spent_usd: round.spent_usd,
        spent_tokens: round.spent_tokens,
        writer_ran: round.stalled,
    };
    let before = before_review(terms, &round.registry, &pending);
    // Only fix rounds' changes can be reversed (SPEC §4.1): round 1 is the
    // original work, which the reviewer may ask to undo; `fix_lines` holds
    // rounds 2 on.
    let reversed_line = round.fix_lines.reversal(round.patch).map(|r| r.to_string());
    let mut fix_lines = std::mem::take(&mut round.fix_lines).into_owned();
    if round.round >= 2 {
        fix_lines.record(round.round, round.patch);
    }
    let (earlier, diff_added, diff_removed) = (round.earlier, round.diff_added, round.diff_removed);
    let mut accounted = match round.parsed {
        // A round out of scope ends unreviewed: its findings are not ingested.
        Some(parsed) if before.out_of_scope.is_empty() => {
            reviewed(terms, round, parsed, reversed_line)
        }
        _ => unreviewed(terms, round.registry.into_owned(), before),
    };
    accounted.counts.diff_added = diff_added;
    accounted.counts.diff_removed = diff_removed;

    // Of earlier rounds the rules read their patch size and what they left open.
    let mut history: Vec<RoundFacts> = earlier
        .iter()
        .map(|e| RoundFacts {
            round: e.round,
            diff_size: e.diff_size,
            must_fix_left: e.must_fix_left,
            ..RoundFacts::default()
        })
        .collect();
    history.push(accounted.facts.clone());
    let fired = rules::evaluate(terms, &history);
    let facts = accounted.facts;
    let (stop, reason, revert_to) = match fired {
        Some(f) => (Some(f.stop), f.reason, f.revert_to),
        None => (None, rules::going_on(&facts), None),
    };
    let nit_round = stop.as_ref().is_some_and(|s| *s == Rule::NitRound);
    Decision {
        registry: accounted.registry,
        counts: accounted.counts,
        verdict: match stop {
            Some(_) => Verdict::Stop,
            None => Verdict::Continue,
        },
        stop,
        reason,
        revert_to,
        out_of_scope: facts.out_of_scope,
        carried_unconfirmed: if nit_round {
            facts.carried_unconfirmed
        } else {
            Vec::new()
        },
        reported: accounted.reported,
        skipped: accounted.skipped,
        fix_lines,
    }
}

/// Accounts a reviewed round: its findings against the registry, its patch
/// against earlier fix rounds.
fn reviewed(
    terms: &Terms,
    round: Round<'_>,
    parsed: &Parsed,
    reversed_line: Option<String>,
) -> Accounted {
    // The writer's patch of this round changed these lines; from round 2 on,
    // a new finding inside them was caused by the fix.
    let changed = changed_lines(round.patch);
    let mut accounted = account(
        round.registry.into_owned(),
        &RoundInput {
            round: round.round,
            floor: terms.contract.severity_floor,
            closure: terms.contract.closure,
            parsed,
            patch: round.patch,
            responses: round.responses,
            induced: (round.round >= 2).then_some((round.round, &changed)),
            same_problem: round.same_problem,
        },
    );
    let diff_size = round.diff_added + round.diff_removed;
    accounted.facts = RoundFacts {
        reviewed: true,
        diff_size,
        reversed_line,
        writer_idle: diff_size == 0 && round.files.is_empty(),
        spent_usd: round.spent_usd,
        spent_tokens: round.spent_tokens,
        ..accounted.facts
    };
    accounted
}

/// A round that ends unreviewed: nothing is ingested, and what was open
/// stays open.
fn unreviewed(terms: &Terms, registry: Registry, facts: RoundFacts) -> Accounted {
    let (must_fix_left, below_floor_open) = open_counts(&registry, terms.contract.severity_floor);
    Accounted {
        registry,
        counts: Counts {
            must_fix_left,
            below_floor_open,
            ..Counts::default()
        },
        facts,
        reported: Vec::new(),
        skipped: Vec::new(),
    }
}

/// Must-fix and below-floor findings open in `registry`.
pub fn open_counts(registry: &Registry, floor: Severity) -> (u32, u32) {
    let mut out = (0, 0);
    for t in &registry.findings {
        if t.standing == FindingStanding::Open {
            if t.finding.severity >= floor {
                out.0 += 1;
            } else {
                out.1 += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
