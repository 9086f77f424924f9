//! A reviewer panel's answers merged into one review (SPEC §6.1). Pure.
//!
//! The answers are matched by the same identity rules as a round's findings
//! against the loop's ([`identity::match_findings`]): each reviewer's
//! findings in turn against those merged so far, so a finding two reviewers
//! word differently is one finding. A merged finding keeps the wording and
//! place of its first reporter, in the panel's order, and who reported it
//! (`reported_by`); its severity is the highest any reporter gave
//! ([`Veto::Any`]) or the lower median over every reviewer that answered,
//! one that did not report it counting as the lowest level
//! ([`Veto::Majority`]: a finding is must-fix only when more than half of
//! the answering panel calls it so). A reviewer's own ids are its own: a
//! panel's findings are identified as findings without ids are.

use serde::{Deserialize, Serialize};

use super::identity::{self, Known};
use super::{Finding, IdSource, Parsed, Severity};

/// How a merged finding's severity is made from its reporters'.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Veto {
    /// The highest severity any reporter gave: one reviewer's blocker is a blocker.
    #[default]
    Any,
    /// The lower median over the answering reviewers.
    Majority,
}

impl Veto {
    pub const ALL: [Veto; 2] = [Veto::Any, Veto::Majority];

    pub fn as_str(self) -> &'static str {
        match self {
            Veto::Any => "any",
            Veto::Majority => "majority",
        }
    }

    pub fn parse(text: &str) -> Option<Veto> {
        Veto::ALL.into_iter().find(|v| v.as_str() == text)
    }
}

impl std::fmt::Display for Veto {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One merged finding while the answers are read: the finding and each
/// reporter's severity, in panel order.
struct Merged {
    finding: Finding,
    severities: Vec<Severity>,
}

/// The answers of the reviewers that answered, `(name, review)` in the
/// panel's order, as one review. `resolved` is every id a reviewer marked
/// resolved that no reviewer reported.
pub fn merge(answers: &[(&str, &Parsed)], veto: Veto) -> Parsed {
    let mut merged: Vec<Merged> = Vec::new();
    let mut resolved: Vec<String> = Vec::new();
    for (name, parsed) in answers {
        let known: Vec<Known> = merged.iter().map(|m| Known::from(&m.finding)).collect();
        let own: Vec<Finding> = parsed.findings.iter().map(unlabelled).collect();
        let matches = identity::match_findings(&own, &known);
        let mut added = Vec::new();
        for (finding, matched) in own.iter().zip(matches) {
            match matched.known {
                Some(k) => {
                    let m = &mut merged[k];
                    m.finding.reported_by.push(name.to_string());
                    m.severities.push(finding.severity);
                }
                None => {
                    let mut finding = finding.clone();
                    finding.reported_by = vec![name.to_string()];
                    added.push(Merged {
                        severities: vec![finding.severity],
                        finding,
                    });
                }
            }
        }
        merged.extend(added);
        for id in &parsed.resolved {
            if !resolved.contains(id) {
                resolved.push(id.clone());
            }
        }
    }
    let answered = answers.len();
    let findings: Vec<Finding> = merged
        .into_iter()
        .map(|m| {
            let mut finding = m.finding;
            finding.severity = severity(&m.severities, answered, veto);
            finding
        })
        .collect();
    resolved.retain(|id| !findings.iter().any(|f| &f.id == id));
    Parsed {
        source_format: answers
            .first()
            .map(|(_, p)| p.source_format)
            .unwrap_or(super::Format::Native),
        findings,
        resolved,
    }
}

/// `finding` without the id its reviewer gave it: one reviewer's `F1` is
/// not another's, and which reviewer reports a finding first changes from
/// round to round, so a panel's findings are known as findings without ids
/// are (by fingerprint, place and wording), and by the loop's ids the
/// prompt showed (`F-` and ten hex digits, which a reviewer may give back).
/// A test's name and a tool's fingerprints are the same whoever reports
/// them, and stay.
fn unlabelled(finding: &Finding) -> Finding {
    let mut finding = finding.clone();
    let loops_own = finding
        .id
        .strip_prefix("F-")
        .is_some_and(|hex| hex.len() == 10 && hex.bytes().all(|b| b.is_ascii_hexdigit()));
    if finding.id_source == IdSource::Explicit && !loops_own {
        finding.id = identity::derived_id(&finding.fingerprint);
        finding.id_source = IdSource::Derived;
    }
    finding
}

/// The severity of a finding its reporters gave `given`, of `answered`
/// reviewers.
fn severity(given: &[Severity], answered: usize, veto: Veto) -> Severity {
    match veto {
        Veto::Any => given.iter().copied().max().unwrap_or(Severity::Nit),
        Veto::Majority => {
            let mut all = given.to_vec();
            all.resize(answered.max(given.len()), Severity::Nit);
            all.sort();
            all[(all.len() - 1) / 2]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::{Format, parse};

    fn review(text: &str) -> Parsed {
        parse(text.as_bytes(), Format::Native, "/repo").expect("a review")
    }

    #[test]
    fn two_reviewers_finding_different_bugs_give_their_union() {
        let a = review(
            r#"{"findings":[{"severity":"bug","title":"Null deref in parse","file":"src/a.rs","line":10}]}"#,
        );
        let b = review(
            r#"{"findings":[{"severity":"bug","title":"Off-by-one in the loop bound","file":"src/b.rs","line":3}]}"#,
        );
        let merged = merge(&[("codex", &a), ("claude", &b)], Veto::Any);
        assert_eq!(merged.findings.len(), 2);
        assert_eq!(merged.findings[0].reported_by, ["codex"]);
        assert_eq!(merged.findings[1].reported_by, ["claude"]);
    }

    #[test]
    fn the_same_finding_reworded_by_two_reviewers_is_one_reported_by_both() {
        let a = review(
            r#"{"findings":[{"severity":"should","title":"`parse` unwraps a missing header","file":"src/a.rs","line":10}]}"#,
        );
        let b = review(
            r#"{"findings":[{"severity":"block","title":"parse panics: unwrap on a missing header","file":"src/a.rs","line":11}]}"#,
        );
        let merged = merge(&[("codex", &a), ("claude", &b)], Veto::Any);
        assert_eq!(merged.findings.len(), 1, "{:?}", merged.findings);
        let f = &merged.findings[0];
        assert_eq!(f.reported_by, ["codex", "claude"]);
        assert_eq!(f.severity, Severity::Block, "the highest reported");
        assert_eq!(
            f.title, "`parse` unwraps a missing header",
            "the first reporter's words"
        );
        let majority = merge(&[("codex", &a), ("claude", &b)], Veto::Majority);
        assert_eq!(
            majority.findings[0].severity,
            Severity::Should,
            "the lower median of two"
        );
    }

    #[test]
    fn a_blocker_one_reviewer_of_two_reports_is_a_blocker_only_under_any() {
        let a = review(
            r#"{"findings":[{"severity":"block","title":"SQL built from user input","file":"src/db.rs","line":4}]}"#,
        );
        let clean = review(r#"{"findings":[]}"#);
        let any = merge(&[("codex", &a), ("claude", &clean)], Veto::Any);
        assert_eq!(any.findings[0].severity, Severity::Block);
        let majority = merge(&[("codex", &a), ("claude", &clean)], Veto::Majority);
        assert_eq!(majority.findings[0].severity, Severity::Nit);
        assert_eq!(majority.findings[0].reported_by, ["codex"]);
        // Two of three is a majority: the median of nit, block, block.
        let majority = merge(
            &[("codex", &a), ("claude", &clean), ("gemini", &a)],
            Veto::Majority,
        );
        assert_eq!(majority.findings[0].severity, Severity::Block);
        assert_eq!(majority.findings[0].reported_by, ["codex", "gemini"]);
    }

    #[test]
    fn a_resolved_id_another_reviewer_still_reports_stays_reported() {
        let a = review(r#"{"findings":[],"resolved":["F-00000000aa","F-00000000bb"]}"#);
        let b = review(
            r#"{"findings":[{"id":"F-00000000aa","severity":"bug","title":"Leak in open","file":"src/a.rs","line":1}]}"#,
        );
        let merged = merge(&[("codex", &a), ("claude", &b)], Veto::Any);
        assert_eq!(merged.resolved, ["F-00000000bb"]);
        assert_eq!(merged.findings[0].id, "F-00000000aa");
    }

    #[test]
    fn each_reviewers_own_ids_are_its_own() {
        let a = review(
            r#"{"findings":[{"id":"F1","severity":"bug","title":"Leak in open","file":"src/a.rs","line":1}]}"#,
        );
        let b = review(
            r#"{"findings":[{"id":"F1","severity":"bug","title":"Race in close","file":"src/b.rs","line":9},
                            {"id":"X7","severity":"bug","title":"leak in open()","file":"src/a.rs","line":1}]}"#,
        );
        let merged = merge(&[("codex", &a), ("claude", &b)], Veto::Any);
        assert_eq!(merged.findings.len(), 2, "{:?}", merged.findings);
        assert_eq!(merged.findings[0].reported_by, ["codex", "claude"]);
        assert_eq!(merged.findings[1].title, "Race in close");
        assert_ne!(merged.findings[0].id, merged.findings[1].id);
        assert!(merged.findings.iter().all(|f| f.id.starts_with("F-")));
    }

    #[test]
    fn every_reviewer_clean_is_a_clean_merge() {
        let clean = review(r#"{"findings":[]}"#);
        let merged = merge(&[("codex", &clean), ("claude", &clean)], Veto::Any);
        assert!(merged.findings.is_empty());
        assert!(merged.resolved.is_empty());
    }
}
