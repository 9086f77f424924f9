//! Per-round accounting (SPEC §3, §4.1): carries every known finding's
//! place through the round's patch, matches the round's findings against the
//! known ones, tells a finding closed by a fix from one the reviewer skipped,
//! keeps merged findings open, applies waivers, and counts opened, closed,
//! reopened and must-fix. Pure: the registry comes in and goes out as data;
//! the engine stores it in the round's evidence.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::contract::Closure;
use crate::findings::identity::{
    MatchedBy, NEAR_LINES, content_fingerprint, derived_id, line_distance, subject_words,
};
use crate::findings::responses::{Response, Status};
use crate::findings::{Finding, IdSource, Known, Parsed, Severity, match_findings};
use crate::ledger::Counts;
use crate::patch::{ChangedLines, ParsedPatch, Touched, carry, touched, touches};
use crate::rules::RoundFacts;

/// Where a known finding stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FindingStanding {
    Open,
    /// Closed by a fix: the writer touched its place, answered it `fixed`,
    /// or the reviewer listed it `resolved`.
    Closed,
    Waived,
    /// Missing from a review while nothing touched it: the reviewer's latest
    /// word stands (not must-fix) until a review reports it again.
    Skipped,
}

/// Where a finding points now: its file and lines, carried through every
/// patch since it was reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Place {
    pub file: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u64>,
}

/// A finding the loop knows, with its history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tracked {
    pub finding: Finding,
    pub standing: FindingStanding,
    /// Every round that reported it.
    pub rounds: Vec<u32>,
    /// The round it last closed in.
    pub closed_in: Option<u32>,
    /// Rounds in which it was reported again after closing.
    pub reopened_in: Vec<u32>,
    /// The round whose writer patch changed the lines it points at.
    pub induced_by: Option<u32>,
    /// Its place now, when it differs from where it was reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<Place>,
    /// The round the reviewer last skipped it in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped_in: Option<u32>,
    /// The fingerprints of its earlier wordings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
}

impl Tracked {
    /// Its file and lines now.
    pub fn place(&self) -> (Option<&str>, Option<u64>, Option<u64>) {
        match &self.place {
            Some(p) => (Some(p.file.as_str()), p.line, p.end_line),
            None => (
                self.finding.file.as_deref(),
                self.finding.line,
                self.finding.end_line,
            ),
        }
    }

    fn known(&self) -> Known<'_> {
        let (file, line, end_line) = self.place();
        Known {
            id: &self.finding.id,
            file,
            line,
            end_line,
            title: &self.finding.title,
            fingerprint: &self.finding.fingerprint,
            aliases: &self.aliases,
            rule: self.finding.rule.as_deref(),
            id_source: self.finding.id_source,
            closed: self.standing == FindingStanding::Closed,
        }
    }

    /// Whether `patch` touched this finding's place (SPEC §4.1): a line
    /// within one line of it; for a finding with a file but no line, the
    /// file; for one with no place (a failing test), anything.
    fn touched_by(&self, touched: &Touched) -> bool {
        if self.finding.id_source == IdSource::Test {
            return !touched.is_empty();
        }
        match self.place() {
            (Some(file), Some(line), end) => touched.near(file, line, end.unwrap_or(line)),
            (Some(file), None, _) => touched.file(file),
            (None, _, _) => !touched.is_empty(),
        }
    }

    /// Carries its place through `patch` (old numbering to new).
    fn carry(&mut self, patch: &ParsedPatch) {
        let (Some(file), Some(line), end) = self.place() else {
            return;
        };
        let Some((new_file, new_line)) = carry(patch, file, line) else {
            // The file is gone: the place stays where it was last seen.
            return;
        };
        let new_end = end.and_then(|end| carry(patch, file, end).map(|(_, e)| e.max(new_line)));
        let moved = Place {
            file: new_file,
            line: Some(new_line),
            end_line: new_end,
        };
        let unchanged = self.finding.file.as_deref() == Some(moved.file.as_str())
            && self.finding.line == moved.line
            && self.finding.end_line == moved.end_line;
        self.place = (!unchanged).then_some(moved);
    }
}

/// Every finding the loop knows, in order of first report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Registry {
    pub findings: Vec<Tracked>,
}

/// How a finding reported this round stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Seen {
    /// First reported this round.
    New,
    /// Open before (or skipped and now back), reported again.
    Open,
    /// Closed by a fix in an earlier round, reported again.
    Reopened,
    /// Waived by a human: noise, never reopened.
    Waived,
}

/// A finding as this round reported it, with its id and how it stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reported {
    #[serde(flatten)]
    pub finding: Finding,
    pub state: Seen,
    pub must_fix: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub induced_by: Option<u32>,
    /// Reported before with another severity, title or place.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub changed: bool,
    /// Open again after the reviewer skipped it in this round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub back_after_skip: Option<u32>,
    /// Earlier findings this one was reported for too (a merge): they stay open.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stands_for: Vec<String>,
    /// The evidence it was matched to a known finding on; `None` when new.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matched_by: Option<MatchedBy>,
    /// A closed finding it resembles on evidence too weak for a reopen
    /// (SPEC §4.1): it is new.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resembles: Option<String>,
}

/// What accounting needs besides the registry.
pub struct RoundInput<'a> {
    pub round: u32,
    pub floor: Severity,
    pub closure: Closure,
    pub parsed: &'a Parsed,
    /// This round's writer patch.
    pub patch: &'a ParsedPatch,
    /// The writer's answers to the findings open before this round.
    pub responses: &'a [Response],
    /// Lines this round's writer patch changed, from round 2 on (`induced_by`).
    pub induced: Option<(u32, &'a ChangedLines)>,
    /// Findings of the review (by position) that the judge said are the
    /// closed finding they resemble (`same_problem`): matched to it.
    pub same_problem: &'a [usize],
}

/// A round, accounted.
#[derive(Debug, Clone, PartialEq)]
pub struct Accounted {
    pub registry: Registry,
    pub counts: Counts,
    pub facts: RoundFacts,
    /// This round's findings with the ids they were matched to.
    pub reported: Vec<Reported>,
    /// Findings the reviewer skipped this round (missing, place untouched).
    pub skipped: Vec<String>,
}

/// The must-fix findings open in `registry` (how many), and the ids of
/// those the writer answered `disputed` in `responses`, in registry order.
pub fn open_must_fix(
    registry: &Registry,
    floor: Severity,
    responses: &[Response],
) -> (u32, Vec<String>) {
    let open = registry
        .findings
        .iter()
        .filter(|t| t.standing == FindingStanding::Open && t.finding.severity >= floor);
    let disputed = open
        .clone()
        .filter(|t| {
            responses
                .iter()
                .any(|r| r.status == Status::Disputed && r.id == t.finding.id)
        })
        .map(|t| t.finding.id.clone())
        .collect();
    (open.count() as u32, disputed)
}

/// Accounts one round against `registry`, the previous round's, which
/// becomes this round's (taken, not copied: a loop can know 50,000
/// findings). Diff sizes and reversals are the engine's to fill in.
pub fn account(mut registry: Registry, input: &RoundInput<'_>) -> Accounted {
    let must_fix = |s: Severity| s >= input.floor;
    // How each known finding stood before the round. The round changes
    // standings and severities in place and only appends: a finding's
    // index and id stay.
    let before: Vec<(FindingStanding, Severity)> = registry
        .findings
        .iter()
        .map(|t| (t.standing, t.finding.severity))
        .collect();
    let (open_before, disputed) = open_must_fix(&registry, input.floor, input.responses);
    let touched = touched(input.patch);
    // Whether this round's patch touched each known finding's place, in the
    // numbering before the patch; then every place moves with the patch.
    let touched_before: Vec<bool> = registry
        .findings
        .iter()
        .map(|t| t.touched_by(&touched))
        .collect();
    for tracked in &mut registry.findings {
        tracked.carry(input.patch);
    }
    let known: Vec<Known> = registry.findings.iter().map(Tracked::known).collect();
    let mut matches = match_findings(&input.parsed.findings, &known);
    for &i in input.same_problem {
        let taken: Vec<usize> = matches.iter().filter_map(|m| m.known).collect();
        if let Some(m) = matches.get_mut(i)
            && m.known.is_none()
            && let Some(k) = m.resembles.filter(|k| !taken.contains(k))
        {
            m.known = Some(k);
            m.by = Some(MatchedBy::Judge);
            m.resembles = None;
        }
    }
    let mut ids: HashSet<String> = registry
        .findings
        .iter()
        .map(|t| t.finding.id.clone())
        .collect();

    let mut counts = Counts::default();
    let mut facts = RoundFacts {
        round: input.round,
        must_fix_open_before: open_before,
        disputed_answered: !disputed.is_empty(),
        ..RoundFacts::default()
    };
    let mut reported = Vec::with_capacity(input.parsed.findings.len());
    let mut seen: HashSet<usize> = HashSet::new();

    for (finding, matched) in input.parsed.findings.iter().zip(matches) {
        let mut finding = finding.clone();
        match matched.known {
            Some(i) => {
                seen.insert(i);
                let tracked = &mut registry.findings[i];
                finding.id = tracked.finding.id.clone();
                tracked.rounds.push(input.round);
                let mut back_after_skip = None;
                let state = match tracked.standing {
                    FindingStanding::Waived => Seen::Waived,
                    FindingStanding::Closed => {
                        counts.reopened += 1;
                        if must_fix(finding.severity) {
                            let closed_in = tracked.closed_in.unwrap_or(input.round);
                            facts.reopened.push((finding.id.clone(), closed_in));
                        }
                        tracked.standing = FindingStanding::Open;
                        tracked.reopened_in.push(input.round);
                        Seen::Reopened
                    }
                    FindingStanding::Skipped => {
                        back_after_skip = tracked.skipped_in;
                        tracked.standing = FindingStanding::Open;
                        tracked.skipped_in = None;
                        Seen::Open
                    }
                    FindingStanding::Open => Seen::Open,
                };
                // The finding as it was known, taken out (not copied).
                let before = std::mem::replace(&mut tracked.finding, finding.clone());
                tracked.place = None;
                if state != Seen::Waived {
                    note_reported(&mut facts, &finding, must_fix(finding.severity));
                }
                reported.push(Reported {
                    must_fix: must_fix(finding.severity) && state != Seen::Waived,
                    induced_by: tracked.induced_by,
                    changed: (before.severity, &before.title, &before.file, before.line)
                        != (
                            finding.severity,
                            &finding.title,
                            &finding.file,
                            finding.line,
                        ),
                    back_after_skip,
                    stands_for: Vec::new(),
                    matched_by: matched.by,
                    resembles: None,
                    state,
                    finding,
                });
                if before.fingerprint != tracked.finding.fingerprint
                    && !tracked.aliases.contains(&before.fingerprint)
                {
                    tracked.aliases.push(before.fingerprint);
                }
            }
            None => {
                if matched.id_refused || ids.contains(&finding.id) {
                    finding.id = fresh_id(&finding, &ids);
                }
                ids.insert(finding.id.clone());
                counts.opened += 1;
                // Caused by a fix: this round's, when its patch changed the
                // finding's lines, else the one that closed the finding it
                // resembles at its place.
                let resembles = matched.resembles.map(|k| &registry.findings[k]);
                let induced_by = input
                    .induced
                    .and_then(|(round, changed)| {
                        let (file, line) = (finding.file.as_deref()?, finding.line?);
                        let line = u32::try_from(line).ok()?;
                        touches(changed, file, line).then_some(round)
                    })
                    .or_else(|| resembles.and_then(|t| t.closed_in));
                let resembles = resembles.map(|t| t.finding.id.clone());
                note_reported(&mut facts, &finding, must_fix(finding.severity));
                seen.insert(registry.findings.len());
                registry.findings.push(Tracked {
                    finding: finding.clone(),
                    standing: FindingStanding::Open,
                    rounds: vec![input.round],
                    closed_in: None,
                    reopened_in: Vec::new(),
                    induced_by,
                    place: None,
                    skipped_in: None,
                    aliases: Vec::new(),
                });
                reported.push(Reported {
                    must_fix: must_fix(finding.severity),
                    induced_by,
                    changed: false,
                    back_after_skip: None,
                    stands_for: Vec::new(),
                    matched_by: None,
                    resembles,
                    state: Seen::New,
                    finding,
                });
            }
        }
    }

    merges(
        &mut registry,
        &mut reported,
        &mut seen,
        &touched_before,
        input.floor,
    );

    // Undo markers name an earlier must-fix finding the loop knows.
    let index: HashMap<&str, usize> = registry.findings[..before.len()]
        .iter()
        .enumerate()
        .map(|(i, t)| (t.finding.id.as_str(), i))
        .collect();
    for r in &reported {
        if !must_fix(r.finding.severity) {
            continue;
        }
        if let Some(undone) = &r.finding.undoes
            && let Some(&i) = index.get(undone.as_str())
            && must_fix(before[i].1)
        {
            facts.undoes.push((r.finding.id.clone(), undone.clone()));
        }
    }

    facts.disputed_again = disputed
        .into_iter()
        .filter(|id| reported.iter().any(|r| r.finding.id == *id && r.must_fix))
        .collect();
    let fixed: HashSet<&str> = input
        .responses
        .iter()
        .filter(|r| r.status == Status::Fixed)
        .map(|r| r.id.as_str())
        .collect();

    let resolved: HashSet<&str> = input.parsed.resolved.iter().map(String::as_str).collect();
    let mut skipped = Vec::new();
    for (i, tracked) in registry.findings.iter_mut().enumerate() {
        let missing = matches!(
            tracked.standing,
            FindingStanding::Open | FindingStanding::Skipped
        );
        if !missing || seen.contains(&i) {
            continue;
        }
        let id = tracked.finding.id.as_str();
        let closes = match input.closure {
            Closure::Absent => {
                resolved.contains(id)
                    || fixed.contains(id)
                    || touched_before.get(i).copied().unwrap_or(false)
            }
            Closure::Explicit => resolved.contains(id),
        };
        if closes {
            if tracked.standing == FindingStanding::Open {
                counts.closed += 1;
            }
            tracked.standing = FindingStanding::Closed;
            tracked.closed_in = Some(input.round);
            tracked.skipped_in = None;
        } else if input.closure == Closure::Absent {
            if tracked.standing == FindingStanding::Open {
                tracked.standing = FindingStanding::Skipped;
                tracked.skipped_in = Some(input.round);
                skipped.push(tracked.finding.id.clone());
            }
        } else if must_fix(tracked.finding.severity) && tracked.standing == FindingStanding::Open {
            facts.carried_unconfirmed.push(tracked.finding.id.clone());
        }
    }

    for tracked in &registry.findings {
        if tracked.standing == FindingStanding::Open {
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
        skipped,
    }
}

/// A merge (SPEC §4.1): a known finding missing from this round, open or
/// skipped, at the same or an adjacent place as a reported one whose words
/// share its subject, was reported as part of it. It stays open, and the
/// reported finding stands for it. A report the reviewer gave a new id of its
/// own is a new finding, never a merge; and a finding whose place the writer
/// touched needs two shared subject words (one would let any finding on a
/// fixed line keep it open).
fn merges(
    registry: &mut Registry,
    reported: &mut [Reported],
    seen: &mut HashSet<usize>,
    touched_before: &[bool],
    floor: Severity,
) {
    for (i, tracked) in registry.findings.iter_mut().enumerate() {
        if seen.contains(&i)
            || !matches!(
                tracked.standing,
                FindingStanding::Open | FindingStanding::Skipped
            )
            || tracked.finding.id_source == IdSource::Test
        {
            continue;
        }
        let (Some(file), line, end) = tracked.place() else {
            continue;
        };
        let needed = if touched_before.get(i).copied().unwrap_or(false) {
            2
        } else {
            1
        };
        let words = subject_words(&tracked.finding.title);
        let must_fix = tracked.finding.severity >= floor;
        let rule = tracked.finding.rule.as_deref();
        let cover = reported.iter_mut().find(|r| {
            r.state != Seen::Waived
                // A must-fix finding is not kept open by a below-floor report,
                // nor a linter's finding by another rule's.
                && (r.must_fix || !must_fix)
                && (rule.is_none() || r.finding.rule.is_none() || r.finding.rule.as_deref() == rule)
                && !(r.state == Seen::New && r.finding.id_source == IdSource::Explicit)
                && r.finding.file.as_deref() == Some(file)
                && r.finding.id_source != IdSource::Test
                && line_distance((line, end), (r.finding.line, r.finding.end_line))
                    .is_some_and(|d| d <= NEAR_LINES)
                && subject_words(&r.finding.title).intersection(&words).count() >= needed
        });
        if let Some(r) = cover {
            r.stands_for.push(tracked.finding.id.clone());
            seen.insert(i);
            tracked.standing = FindingStanding::Open;
            tracked.skipped_in = None;
        }
    }
}

/// An id for a new finding whose own id names another finding: the derived
/// id, made unique.
fn fresh_id(finding: &Finding, ids: &HashSet<String>) -> String {
    let fingerprint = content_fingerprint(
        finding.file.as_deref(),
        finding.rule.as_deref(),
        &finding.title,
    );
    let base = derived_id(&fingerprint);
    if !ids.contains(&base) {
        return base;
    }
    (2..)
        .map(|n| format!("{base}-{n}"))
        .find(|id| !ids.contains(id))
        .unwrap_or(base)
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
            tracked.standing = FindingStanding::Waived;
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests;
