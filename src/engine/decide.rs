//! One round decided: the scope guard, accounting, the budget guard and the six
//! rules, in that order. Pure: the patch, the findings, the registry and the
//! earlier rounds come in; the verdict and the new registry go out. `record`,
//! `run` and `replay` all decide rounds here.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use super::accounting::{FindingStanding, Registry, RoundInput, account};
pub use super::accounting::{Reported, Seen};
use crate::contract::{Closure, Contract};
use crate::findings::Parsed;
use crate::findings::Severity;
use crate::findings::responses::{Response, Status};
use crate::ledger::{Counts, Verdict};
use crate::patch::{ParsedPatch, changed_lines, reverses_line};
pub use crate::rules::Stop;
use crate::rules::{self, Guard, RoundFacts, Rule};

/// The contract terms a round is decided by.
pub struct Terms {
    pub floor: Severity,
    pub closure: Closure,
    pub max_rounds: u32,
    pub scope: GlobSet,
    /// The scope's globs as written, for messages.
    pub scope_globs: Vec<String>,
    pub budget_usd: Option<f64>,
    pub budget_tokens: Option<u64>,
    /// The progress guards in force.
    pub guards: Vec<Guard>,
}

impl Terms {
    /// The terms of `contract` with the round cap in force.
    pub fn of(contract: &Contract, max_rounds: u32) -> Result<Terms, globset::Error> {
        let mut scope = GlobSetBuilder::new();
        for glob in &contract.scope {
            // `*` stays inside one folder; `**` crosses folders.
            scope.add(GlobBuilder::new(glob).literal_separator(true).build()?);
        }
        Ok(Terms {
            floor: contract.severity_floor,
            closure: contract.closure,
            max_rounds,
            scope: scope.build()?,
            scope_globs: contract.scope.clone(),
            budget_usd: contract.budget.usd,
            budget_tokens: contract.budget.tokens,
            guards: contract.guards.clone(),
        })
    }
}

impl Terms {
    /// The paths of `files` outside the scope: the `scope` guard.
    pub fn out_of_scope(&self, files: &[String]) -> Vec<String> {
        files
            .iter()
            .filter(|f| !self.scope.is_match(f.as_str()))
            .cloned()
            .collect()
    }

    /// Why the loop's spend reached a cap, if it did: the `budget` guard.
    pub fn budget_reached(&self, usd: f64, tokens: u64) -> Option<String> {
        if let Some(cap) = self.budget_usd
            && usd >= cap
        {
            return Some(format!("the loop spent ${usd:.2} of its ${cap:.2} budget"));
        }
        if let Some(cap) = self.budget_tokens
            && tokens >= cap
        {
            return Some(format!("the loop used {tokens} of its {cap} budget tokens"));
        }
        None
    }

    /// Whether a round whose writer changed nothing is `stalled` (SPEC §4):
    /// the guard is in force, must-fix findings were open, and the writer
    /// disputed none of them. `run` asks before it calls the reviewer.
    pub fn stalled(&self, registry: &Registry, patch_empty: bool, responses: &[Response]) -> bool {
        if !self.guards.contains(&Guard::Stalled) {
            return false;
        }
        let open: Vec<&str> = registry
            .findings
            .iter()
            .filter(|t| t.standing == FindingStanding::Open && t.finding.severity >= self.floor)
            .map(|t| t.finding.id.as_str())
            .collect();
        let disputed = responses
            .iter()
            .any(|r| r.status == Status::Disputed && open.contains(&r.id.as_str()));
        rules::stalled(patch_empty, open.len() as u32, disputed)
    }
}

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
    /// from it without a copy (for 50,000 known findings, some 12,000
    /// pages of memory not touched).
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
    /// Earlier fix rounds' patches (round 2 on), latest first, for reversals.
    pub earlier_patches: &'a [(u32, ParsedPatch)],
    /// The writer's responses recorded with this round.
    pub responses: &'a [Response],
    /// `run` ended the round before the review: the writer changed nothing.
    pub stalled: bool,
    /// The loop's spend including this round.
    pub spent_usd: f64,
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
}

/// Decides one round.
pub fn decide(terms: &Terms, round: Round<'_>) -> Decision {
    let mut counts = Counts {
        diff_added: round.diff_added,
        diff_removed: round.diff_removed,
        ..Counts::default()
    };
    let out_of_scope = terms.out_of_scope(round.files);
    let parsed = match (out_of_scope.is_empty(), round.parsed) {
        (true, Some(parsed)) => parsed,
        _ => return unreviewed(terms, round, counts, out_of_scope),
    };

    // The writer's patch of this round changed these lines; from round 2 on,
    // a new finding inside them was caused by the fix.
    let changed = changed_lines(round.patch);
    let accounted = account(
        round.registry.into_owned(),
        &RoundInput {
            round: round.round,
            floor: terms.floor,
            closure: terms.closure,
            parsed,
            patch: round.patch,
            responses: round.responses,
            induced: (round.round >= 2).then_some((round.round, &changed)),
        },
    );
    let mut facts = accounted.facts;
    facts.diff_size = round.diff_added + round.diff_removed;
    // Only fix rounds' changes can be reversed (SPEC §4.1): round 1 is the
    // original work, which the reviewer may ask to undo.
    let fixes: Vec<(u32, &ParsedPatch)> = round
        .earlier_patches
        .iter()
        .filter(|(r, _)| *r >= 2)
        .map(|(r, p)| (*r, p))
        .collect();
    facts.reversed_line = reverses_line(round.patch, &fixes).map(|r| r.to_string());
    counts.opened = accounted.counts.opened;
    counts.closed = accounted.counts.closed;
    counts.reopened = accounted.counts.reopened;
    counts.must_fix_left = accounted.counts.must_fix_left;
    counts.below_floor_open = accounted.counts.below_floor_open;

    let mut history: Vec<RoundFacts> = round
        .earlier
        .iter()
        .map(|e| RoundFacts {
            round: e.round,
            diff_size: e.diff_size,
            must_fix_left: e.must_fix_left,
            ..RoundFacts::default()
        })
        .collect();
    history.push(facts.clone());

    let fired = rules::evaluate(&history, terms.max_rounds);
    let budget = terms.budget_reached(round.spent_usd, round.spent_tokens);
    let patch_empty = round.diff_added + round.diff_removed == 0 && round.files.is_empty();
    // The guards come before the rules, except that a round proving the work
    // done is done: spending the last dollar on a clean review is not an
    // escalation (docs/rules.md). The progress guards stop only a loop the
    // rules would let go on.
    let (stop, reason, revert_to) = match (fired, budget) {
        (Some(f), _) if f.rule == Rule::Clean => (Some(Stop::Rule(f.rule)), f.reason, None),
        (_, Some(why)) => (
            Some(Stop::Budget),
            format!("round {}: {why}", round.round),
            None,
        ),
        (Some(f), None) => (Some(Stop::Rule(f.rule)), f.reason, f.revert_to),
        (None, None) => match rules::progress(&facts, patch_empty, &terms.guards) {
            Some((guard, why)) => (Some(Stop::Progress(guard)), why, None),
            None => (
                None,
                format!(
                    "round {}: {} still open",
                    round.round,
                    crate::text::plural(counts.must_fix_left as usize, "must-fix finding")
                ),
                None,
            ),
        },
    };
    let nit_round = stop.as_ref().is_some_and(|s| *s == Rule::NitRound);
    Decision {
        registry: accounted.registry,
        counts,
        verdict: verdict_of(stop.as_ref()),
        stop,
        reason,
        revert_to,
        out_of_scope,
        carried_unconfirmed: if nit_round {
            facts.carried_unconfirmed
        } else {
            Vec::new()
        },
        reported: accounted.reported,
        skipped: accounted.skipped,
    }
}

/// A round that ends unreviewed: nothing is ingested, what was open stays
/// open, and only the scope guard may stop it.
fn unreviewed(
    terms: &Terms,
    round: Round<'_>,
    mut counts: Counts,
    out_of_scope: Vec<String>,
) -> Decision {
    let (must_fix_left, below_floor_open) = open_counts(&round.registry, terms.floor);
    counts.must_fix_left = must_fix_left;
    counts.below_floor_open = below_floor_open;
    let budget = terms.budget_reached(round.spent_usd, round.spent_tokens);
    let (stop, reason) = if out_of_scope.is_empty() {
        match budget {
            Some(why) => (
                Some(Stop::Budget),
                format!("round {}: {why} before the review", round.round),
            ),
            None if round.stalled => (
                Some(Stop::Progress(Guard::Stalled)),
                format!(
                    "round {}: the writer changed nothing while {} open and disputed none; the reviewer was not called",
                    round.round,
                    if must_fix_left == 1 {
                        "1 must-fix finding was".to_string()
                    } else {
                        format!("{must_fix_left} must-fix findings were")
                    }
                ),
            ),
            None => (None, format!("round {}: unreviewed", round.round)),
        }
    } else {
        (
            Some(Stop::Scope),
            format!(
                "round {}: the patch touches {} outside the scope ({}): {}",
                round.round,
                crate::text::plural(out_of_scope.len(), "file"),
                quoted_globs(terms),
                out_of_scope
                    .iter()
                    .map(|f| format!("`{f}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    };
    Decision {
        registry: round.registry.into_owned(),
        counts,
        verdict: verdict_of(stop.as_ref()),
        stop,
        reason,
        revert_to: None,
        out_of_scope,
        carried_unconfirmed: Vec::new(),
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

fn quoted_globs(terms: &Terms) -> String {
    terms
        .scope_globs
        .iter()
        .map(|g| format!("`{g}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A round with a stop stops; any other continues.
fn verdict_of(stop: Option<&Stop>) -> Verdict {
    match stop {
        Some(_) => Verdict::Stop,
        None => Verdict::Continue,
    }
}

#[cfg(test)]
mod tests;
