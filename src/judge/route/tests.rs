use std::collections::BTreeMap;

use serde_json::json;

use super::*;
use crate::judge::questions::default_questions;
use crate::judge::validate::{Validation, validate};

/// A judgement from the answers given: `stop_reason` as (choice, its p).
fn judged(
    stop_reason: Option<(&str, f64)>,
    holds: Option<f64>,
    worth_doing: Option<f64>,
    worth_another_round: Option<f64>,
) -> Judgement {
    let mut answers = BTreeMap::new();
    if let Some((choice, p)) = stop_reason {
        answers.insert(
            "stop_reason".to_string(),
            Answer::Choice {
                choice: choice.into(),
                probabilities: BTreeMap::from([(choice.to_string(), p)]),
                confidence: 0.8,
            },
        );
    }
    for (id, p) in [
        ("holds", holds),
        ("worth_doing", worth_doing),
        ("worth_another_round", worth_another_round),
    ] {
        if let Some(probability) = p {
            answers.insert(id.to_string(), Answer::YesNo { probability });
        }
    }
    Judgement {
        model: None,
        answers,
    }
}

#[test]
fn routing_order_first_match_wins() {
    let go = Some(("continue", 0.7));
    let cases: Vec<(&str, bool, Judgement, Option<&str>, &str)> = vec![
        (
            "an open block finding overrides every stop",
            true,
            judged(Some(("holds", 0.9)), Some(1.0), Some(0.0), Some(0.0)),
            None,
            "a `block` finding is open: it always goes back to the writer",
        ),
        (
            "stop_reason first, over the yes/no answers",
            false,
            judged(
                Some(("over_polishing", 0.7)),
                Some(0.9),
                Some(0.1),
                Some(0.1),
            ),
            Some("judge:over_polishing"),
            "stop_reason `over_polishing` (p 0.7, confidence 0.8); also holds 0.9 ≥ 0.5, \
             worth_doing 0.1 < 0.5, worth_another_round 0.1 < 0.5",
        ),
        (
            "stop_reason not_converging",
            false,
            judged(
                Some(("not_converging", 0.6)),
                Some(0.1),
                Some(0.9),
                Some(0.9),
            ),
            Some("judge:not_converging"),
            "stop_reason `not_converging` (p 0.6, confidence 0.8); also holds 0.1 < 0.5, \
             worth_doing 0.9 ≥ 0.5, worth_another_round 0.9 ≥ 0.5",
        ),
        (
            "stop_reason holds",
            false,
            judged(Some(("holds", 0.55)), Some(0.1), Some(0.9), Some(0.9)),
            Some("judge:holds"),
            "stop_reason `holds` (p 0.55, confidence 0.8); also holds 0.1 < 0.5, worth_doing \
             0.9 ≥ 0.5, worth_another_round 0.9 ≥ 0.5",
        ),
        (
            "holds at exactly 0.5 stops, before worth_doing",
            false,
            judged(go, Some(0.5), Some(0.1), Some(0.1)),
            Some("judge:holds"),
            "holds 0.5 ≥ 0.5; also stop_reason `continue` (p 0.7, confidence 0.8), worth_doing \
             0.1 < 0.5, worth_another_round 0.1 < 0.5",
        ),
        (
            "worth_doing under 0.5, before worth_another_round",
            false,
            judged(go, Some(0.49), Some(0.49), Some(0.1)),
            Some("judge:not_worth_doing"),
            "worth_doing 0.49 < 0.5; also stop_reason `continue` (p 0.7, confidence 0.8), holds \
             0.49 < 0.5, worth_another_round 0.1 < 0.5",
        ),
        (
            "worth_another_round under 0.5",
            false,
            judged(go, Some(0.2), Some(0.5), Some(0.49)),
            Some("judge:not_worth_another_round"),
            "worth_another_round 0.49 < 0.5; also stop_reason `continue` (p 0.7, confidence \
             0.8), holds 0.2 < 0.5, worth_doing 0.5 ≥ 0.5",
        ),
        (
            "every answer says go on",
            false,
            judged(go, Some(0.2), Some(0.8), Some(0.7)),
            None,
            "continue: stop_reason `continue` (p 0.7, confidence 0.8), holds 0.2 < 0.5, \
             worth_doing 0.8 ≥ 0.5, worth_another_round 0.7 ≥ 0.5",
        ),
        (
            "a block finding keeps going even when all say go on",
            true,
            judged(go, Some(0.2), Some(0.8), Some(0.7)),
            None,
            "a `block` finding is open: it always goes back to the writer",
        ),
        (
            "only holds asked",
            false,
            judged(None, Some(0.9), None, None),
            Some("judge:holds"),
            "holds 0.9 ≥ 0.5",
        ),
        (
            "only worth_another_round asked, and it says go on",
            false,
            judged(None, None, None, Some(0.5)),
            None,
            "continue: worth_another_round 0.5 ≥ 0.5",
        ),
        (
            "a custom stop_reason option names the stop",
            false,
            judged(Some(("shipped", 1.0)), None, None, None),
            Some("judge:shipped"),
            "stop_reason `shipped` (p 1, confidence 0.8)",
        ),
        (
            "no routing question answered",
            false,
            judged(None, None, None, None),
            None,
            "continue: none of stop_reason, holds, worth_doing, worth_another_round was answered",
        ),
    ];
    for (name, block_open, judgement, stop, reason) in cases {
        let route = route(&judgement, block_open);
        assert_eq!(
            route,
            Route {
                stop: stop.map(str::to_string),
                reason: reason.to_string(),
            },
            "{name}"
        );
    }
}

#[test]
fn custom_ids_and_default_ids_in_another_kind_do_not_route() {
    let mut judgement = judged(None, None, None, None);
    judgement
        .answers
        .insert("tests_pass".into(), Answer::YesNo { probability: 0.0 });
    judgement.answers.insert(
        "holds".into(),
        Answer::Choice {
            choice: "yes".into(),
            probabilities: BTreeMap::from([("yes".into(), 1.0)]),
            confidence: 1.0,
        },
    );
    judgement
        .answers
        .insert("stop_reason".into(), Answer::YesNo { probability: 1.0 });
    let route = route(&judgement, false);
    assert_eq!(route.stop, None, "{}", route.reason);
}

/// The answers document SPEC §7 shows, asked its two questions, stops on
/// `stop_reason` first.
#[test]
fn the_spec_example_validates_and_routes() {
    let doc = json!({"model": "small-judge-1",
     "answers": {"holds": {"probability": 0.9},
                 "stop_reason": {"choice": "holds", "confidence": 0.8,
                                 "probabilities": {"holds": 0.7, "over_polishing": 0.1,
                                                   "not_converging": 0.1, "continue": 0.1}}}});
    let asked: Vec<_> = default_questions()
        .into_iter()
        .filter(|q| q.id == "holds" || q.id == "stop_reason")
        .collect();
    let Validation::Valid(judgement) = validate(&doc, &asked, Some("small-judge-1")) else {
        panic!("the SPEC example does not validate");
    };
    assert_eq!(
        route(&judgement, false),
        Route {
            stop: Some("judge:holds".into()),
            reason: "stop_reason `holds` (p 0.7, confidence 0.8); also holds 0.9 ≥ 0.5".into(),
        }
    );
}
