//! A panel round's review (SPEC §6.1): each reviewer's answer, or why it
//! gave none, the quorum they must meet, and the one review their findings
//! merge into, and what each reviewer brought to a loop ([`tally`]). Pure
//! but for `tally`, which reads each round's state; `store_review` writes
//! a round's evidence.

use serde::Serialize;

use super::Review;
use crate::contract::Panel;
use crate::digest::sha256_hex;
use crate::findings::Parsed;
use crate::findings::panel::{self, Veto};
use crate::money::Usd;

/// One panel reviewer's part of a round.
pub struct MemberReview {
    pub name: String,
    /// Its review as read, or why it did not answer (failed, timed out,
    /// printed no review or a refusal).
    pub answer: Result<Review, String>,
    pub cost_usd: Option<Usd>,
    pub tokens: Option<u64>,
}

/// What a panel round keeps of each reviewer: `panel.json` in its evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PanelRecord {
    pub veto: Veto,
    pub quorum: u32,
    pub members: Vec<MemberRecord>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemberRecord {
    pub name: String,
    pub answered: bool,
    /// Why it did not answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub absent: Option<String>,
    /// sha256 of what it printed; its file is `findings.<name>.raw`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// How many findings it reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub findings: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<Usd>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
}

/// A panel round's evidence: what it kept of each reviewer, and each
/// one's output (`findings.<name>.raw`).
#[derive(Debug)]
pub struct PanelEvidence {
    pub record: PanelRecord,
    pub raws: Vec<(String, Vec<u8>)>,
}

/// The file a panel reviewer's output is kept in, in the round's evidence.
pub fn raw_file(name: &str) -> String {
    format!("findings.{name}.raw")
}

/// The panel's answers as one review, when its quorum of them answered; else
/// the refusal, naming who did not answer and why. The review's digest (a
/// retry is compared by it) is over each reviewer's name and output digest,
/// and each one's raw output goes with it as evidence.
pub fn review(members: Vec<MemberReview>, panel: Panel) -> Result<Review, String> {
    // No quorum set: every reviewer of the panel must answer.
    let quorum = panel.quorum.unwrap_or(members.len() as u32);
    let veto = panel.veto;
    let answered = members.iter().filter(|m| m.answer.is_ok()).count();
    if (answered as u64) < u64::from(quorum) {
        let absent: Vec<String> = members
            .iter()
            .filter_map(|m| match &m.answer {
                Err(why) => Some(format!("`{}` did not answer: {why}", m.name)),
                Ok(_) => None,
            })
            .collect();
        return Err(format!(
            "the panel's quorum is {quorum} of {} reviewers and {answered} answered; {}",
            members.len(),
            absent.join("; ")
        ));
    }
    let parts: Vec<(&str, &Parsed)> = members
        .iter()
        .filter_map(|m| m.answer.as_ref().ok().map(|r| (m.name.as_str(), &r.parsed)))
        .collect();
    let parsed = panel::merge(&parts, veto);
    let mut digest = String::new();
    let mut record = PanelRecord {
        veto,
        quorum,
        members: Vec::with_capacity(members.len()),
    };
    let mut raws = Vec::new();
    for m in members {
        let (answered, absent, sha256, findings) = match m.answer {
            Ok(review) => {
                digest.push_str(&format!("{} {}\n", m.name, review.sha256));
                let count = review.parsed.findings.len();
                raws.push((raw_file(&m.name), review.raw));
                (true, None, Some(review.sha256), Some(count))
            }
            Err(why) => {
                digest.push_str(&format!("{} absent\n", m.name));
                (false, Some(why), None, None)
            }
        };
        record.members.push(MemberRecord {
            name: m.name,
            answered,
            absent,
            sha256,
            findings,
            cost_usd: m.cost_usd,
            tokens: m.tokens,
        });
    }
    Ok(Review {
        raw: Vec::new(),
        parsed,
        sha256: sha256_hex(digest.as_bytes()),
        panel: Some(PanelEvidence { record, raws }),
    })
}

/// What one panel reviewer brought to a loop (`referee report`): the
/// findings it reported, those no other reviewer ever reported, and how many
/// of those a fix closed (the writer's patch touched them, or answered or
/// resolved them) — whether the reviewer pays for itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub reviewer: String,
    pub found: u32,
    pub alone: u32,
    pub alone_fixed: u32,
}

/// Each reviewer's [`Tally`] over the loop's rounds: the contract's
/// `[[reviewers]]` in their order, then any other name a round's findings
/// give (`record` without `[[reviewers]]`); empty for a loop no panel
/// reviewed.
pub fn tally(lp: &super::Loop, history: &super::History) -> anyhow::Result<Vec<Tally>> {
    use std::collections::BTreeMap;
    // A loop no panel reviewed costs no read of its rounds.
    let named = &history.contract.reviewers;
    if named.is_empty()
        && !history
            .registry
            .findings
            .iter()
            .any(|t| !t.finding.reported_by.is_empty())
    {
        return Ok(Vec::new());
    }
    let mut by: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for row in history
        .rows
        .iter()
        .filter(|r| r.kind == crate::ledger::Kind::Round)
    {
        let state = super::history::read_state(&lp.store, row)?;
        for r in &state.reported {
            let names = by.entry(r.finding.id.clone()).or_default();
            for name in &r.finding.reported_by {
                if !names.contains(name) {
                    names.push(name.clone());
                }
            }
        }
    }
    // The contract's reviewers each have a row, those that found nothing too.
    let mut out: Vec<Tally> = named
        .iter()
        .map(|m| Tally {
            reviewer: m.name.clone(),
            found: 0,
            alone: 0,
            alone_fixed: 0,
        })
        .collect();
    for t in &history.registry.findings {
        let Some(names) = by.get(&t.finding.id) else {
            continue;
        };
        for name in names {
            let at = match out.iter().position(|x| &x.reviewer == name) {
                Some(at) => at,
                None => {
                    out.push(Tally {
                        reviewer: name.clone(),
                        found: 0,
                        alone: 0,
                        alone_fixed: 0,
                    });
                    out.len() - 1
                }
            };
            let x = &mut out[at];
            x.found += 1;
            if names.len() == 1 {
                x.alone += 1;
                if t.standing == super::accounting::FindingStanding::Closed {
                    x.alone_fixed += 1;
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::{Format, parse};

    fn answer(name: &str, text: &str) -> MemberReview {
        let parsed = parse(text.as_bytes(), Format::Native, "/repo").expect("a review");
        MemberReview {
            name: name.into(),
            answer: Ok(Review::new(text.as_bytes().to_vec(), parsed)),
            cost_usd: None,
            tokens: Some(10),
        }
    }

    fn absent(name: &str, why: &str) -> MemberReview {
        MemberReview {
            name: name.into(),
            answer: Err(why.into()),
            cost_usd: None,
            tokens: None,
        }
    }

    const ONE: Panel = Panel {
        quorum: Some(1),
        veto: Veto::Any,
    };

    const BUG: &str =
        r#"{"findings":[{"severity":"bug","title":"Null deref","file":"a.rs","line":3}]}"#;

    #[test]
    fn a_quorum_unmet_names_who_did_not_answer_and_why() {
        let err = review(
            vec![answer("a", BUG), absent("b", "timed out after 5 s")],
            // No quorum given: all must answer.
            Panel::default(),
        )
        .unwrap_err();
        assert_eq!(
            err,
            "the panel's quorum is 2 of 2 reviewers and 1 answered; `b` did not answer: timed out after 5 s"
        );
    }

    #[test]
    fn a_quorum_met_keeps_the_absent_and_each_answer() {
        let r = review(vec![absent("a", "exit 1"), answer("b", BUG)], ONE).unwrap();
        assert_eq!(r.parsed.findings.len(), 1);
        assert_eq!(r.parsed.findings[0].reported_by, ["b"]);
        let PanelEvidence { record, raws } = r.panel.unwrap();
        assert_eq!(record.members[0].absent.as_deref(), Some("exit 1"));
        assert!(!record.members[0].answered);
        assert_eq!(record.members[1].findings, Some(1));
        assert_eq!(record.members[1].tokens, Some(10));
        assert_eq!(
            raws,
            [("findings.b.raw".to_string(), BUG.as_bytes().to_vec())]
        );
    }

    #[test]
    fn the_digest_changes_with_any_answer_or_absence() {
        let clean = r#"{"findings":[]}"#;
        let digest = |m: Vec<MemberReview>| review(m, ONE).unwrap().sha256;
        let both = digest(vec![answer("a", BUG), answer("b", clean)]);
        assert_ne!(both, digest(vec![answer("a", BUG), absent("b", "x")]));
        assert_ne!(both, digest(vec![answer("a", clean), answer("b", clean)]));
        assert_ne!(both, digest(vec![answer("b", BUG), answer("a", clean)]));
        assert_eq!(both, digest(vec![answer("a", BUG), answer("b", clean)]));
    }
}
