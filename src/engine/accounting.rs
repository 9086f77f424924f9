//! Per-round accounting (SPEC §3): matches a round's findings against the
//! loop's known findings, applies closure and waivers, and counts opened,
//! closed, reopened and must-fix. Pure: the registry comes in and goes out as
//! data; the engine stores it in the round's evidence.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::contract::Closure;
use crate::findings::{Finding, Known, Parsed, Severity, match_findings};
use crate::ledger::Counts;
use crate::patch::{ChangedLines, touches};
use crate::rules::RoundFacts;

/// Where a known finding stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Standing {
    Open,
    Closed,
    Waived,
}

/// A finding the loop knows, with its history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tracked {
    pub finding: Finding,
    pub standing: Standing,
    /// Every round that reported it.
    pub rounds: Vec<u32>,
    /// The round it last closed in.
    pub closed_in: Option<u32>,
    /// Rounds in which it was reported again after closing.
    pub reopened_in: Vec<u32>,
    /// The round whose writer patch changed the lines it points at.
    pub induced_by: Option<u32>,
}

/// Every finding the loop knows, in order of first report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Registry {
    pub findings: Vec<Tracked>,
}

/// What accounting needs besides the registry.
pub struct RoundInput<'a> {
    pub round: u32,
    pub floor: Severity,
    pub closure: Closure,
    pub parsed: &'a Parsed,
    /// Lines the previous round's writer patch changed, with that round.
    pub prev_patch: Option<(u32, &'a ChangedLines)>,
}

/// A round, accounted.
#[derive(Debug, Clone, PartialEq)]
pub struct Accounted {
    pub registry: Registry,
    pub counts: Counts,
    pub facts: RoundFacts,
    /// This round's findings with the ids they were matched to.
    pub reported: Vec<Finding>,
}

/// Accounts one round against `prev`. Diff sizes and hunk reversals are the
/// engine's to fill in.
pub fn account(prev: &Registry, input: &RoundInput<'_>) -> Accounted {
    let known: Vec<Known> = prev
        .findings
        .iter()
        .map(|t| Known::from(&t.finding))
        .collect();
    let matches = match_findings(&input.parsed.findings, &known);
    let index: HashMap<&str, usize> = prev
        .findings
        .iter()
        .enumerate()
        .map(|(i, t)| (t.finding.id.as_str(), i))
        .collect();
    let must_fix = |s: Severity| s >= input.floor;

    let mut registry = prev.clone();
    let mut counts = Counts::default();
    let mut facts = RoundFacts {
        round: input.round,
        ..RoundFacts::default()
    };
    let mut reported = Vec::with_capacity(input.parsed.findings.len());
    let mut seen: HashSet<usize> = HashSet::new();

    for (finding, matched) in input.parsed.findings.iter().zip(matches) {
        let mut finding = finding.clone();
        if let Some(id) = &matched {
            finding.id = id.clone();
        }
        let slot = matched.as_deref().and_then(|id| index.get(id).copied());
        match slot {
            Some(i) => {
                seen.insert(i);
                let tracked = &mut registry.findings[i];
                tracked.rounds.push(input.round);
                match tracked.standing {
                    Standing::Waived => {}
                    Standing::Closed => {
                        counts.reopened += 1;
                        if must_fix(finding.severity) {
                            let closed_in = tracked.closed_in.unwrap_or(input.round);
                            facts.reopened.push((finding.id.clone(), closed_in));
                        }
                        tracked.standing = Standing::Open;
                        tracked.reopened_in.push(input.round);
                    }
                    Standing::Open => {}
                }
                let standing = tracked.standing;
                tracked.finding = finding.clone();
                if standing != Standing::Waived {
                    note_reported(&mut facts, &finding, must_fix(finding.severity));
                }
            }
            None => {
                counts.opened += 1;
                let induced_by = input.prev_patch.and_then(|(round, changed)| {
                    let (file, line) = (finding.file.as_deref()?, finding.line?);
                    let line = u32::try_from(line).ok()?;
                    touches(changed, file, line).then_some(round)
                });
                note_reported(&mut facts, &finding, must_fix(finding.severity));
                seen.insert(registry.findings.len());
                registry.findings.push(Tracked {
                    finding: finding.clone(),
                    standing: Standing::Open,
                    rounds: vec![input.round],
                    closed_in: None,
                    reopened_in: Vec::new(),
                    induced_by,
                });
            }
        }
        reported.push(finding);
    }

    // Undo markers name an earlier must-fix finding the loop knows.
    for finding in &reported {
        if !must_fix(finding.severity) {
            continue;
        }
        if let Some(undone) = &finding.undoes
            && let Some(&i) = index.get(undone.as_str())
            && must_fix(prev.findings[i].finding.severity)
        {
            facts.undoes.push((finding.id.clone(), undone.clone()));
        }
    }

    let resolved: HashSet<&str> = input.parsed.resolved.iter().map(String::as_str).collect();
    for (i, tracked) in registry.findings.iter_mut().enumerate() {
        if tracked.standing != Standing::Open || seen.contains(&i) {
            continue;
        }
        let closes = match input.closure {
            Closure::Absent => true,
            Closure::Explicit => resolved.contains(tracked.finding.id.as_str()),
        };
        if closes {
            tracked.standing = Standing::Closed;
            tracked.closed_in = Some(input.round);
            counts.closed += 1;
        } else if must_fix(tracked.finding.severity) {
            facts.carried_unconfirmed.push(tracked.finding.id.clone());
        }
    }

    for tracked in &registry.findings {
        if tracked.standing == Standing::Open {
            if must_fix(tracked.finding.severity) {
                counts.must_fix_left += 1;
            } else {
                counts.below_floor_open += 1;
            }
        }
    }
    facts.must_fix_left = counts.must_fix_left;
    Accounted {
        registry,
        counts,
        facts,
        reported,
    }
}

fn note_reported(facts: &mut RoundFacts, finding: &Finding, must_fix: bool) {
    if must_fix {
        facts.must_fix_reported.push(finding.id.clone());
    } else {
        facts.below_floor_reported += 1;
    }
}

/// Waives `id`: it stops counting as must-fix, and a later report of it is
/// waived noise. Returns false when the loop does not know the id.
pub fn waive(registry: &mut Registry, id: &str) -> bool {
    match registry.findings.iter_mut().find(|t| t.finding.id == id) {
        Some(tracked) => {
            tracked.standing = Standing::Waived;
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests;
