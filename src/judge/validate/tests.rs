use serde_json::json;

use super::*;
use crate::judge::questions::{ChoiceOption, default_questions};

const PINNED: Option<&str> = Some("small-judge-1");

fn good() -> Value {
    json!({"model": "small-judge-1", "answers": {
        "holds": {"probability": 0.2},
        "worth_doing": {"probability": 0.8},
        "worth_another_round": {"probability": 0.7},
        "stop_reason": {"choice": "continue", "confidence": 0.8, "probabilities":
            {"holds": 0.1, "over_polishing": 0.1, "not_converging": 0.1, "continue": 0.7}},
    }})
}

/// `good()` with the field at `pointer` set to `value` (`None` removes it).
fn with(pointer: &str, value: Option<Value>) -> Value {
    let mut doc = good();
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    let map = doc.pointer_mut(parent).unwrap().as_object_mut().unwrap();
    match value {
        Some(v) => map.insert(key.to_string(), v),
        None => map.remove(key),
    };
    doc
}

fn probabilities(h: f64, o: f64, n: f64, c: f64) -> Value {
    json!({"holds": h, "over_polishing": o, "not_converging": n, "continue": c})
}

fn reason(doc: &Value, model: Option<&str>) -> String {
    match validate(doc, &default_questions(), model) {
        Validation::Invalid { reason } => reason,
        Validation::Valid(j) => panic!("valid: {j:?}"),
    }
}

const OPTIONS: &str = "holds, over_polishing, not_converging, continue";

#[test]
fn a_good_document_validates_whole() {
    let Validation::Valid(judgement) = validate(&good(), &default_questions(), PINNED) else {
        panic!("invalid");
    };
    assert_eq!(
        judgement,
        Judgement {
            model: Some("small-judge-1".into()),
            answers: BTreeMap::from([
                ("holds".into(), Answer::YesNo { probability: 0.2 }),
                ("worth_doing".into(), Answer::YesNo { probability: 0.8 }),
                (
                    "worth_another_round".into(),
                    Answer::YesNo { probability: 0.7 }
                ),
                (
                    "stop_reason".into(),
                    Answer::Choice {
                        choice: "continue".into(),
                        probabilities: BTreeMap::from([
                            ("holds".into(), 0.1),
                            ("over_polishing".into(), 0.1),
                            ("not_converging".into(), 0.1),
                            ("continue".into(), 0.7),
                        ]),
                        confidence: 0.8,
                    }
                ),
            ]),
        }
    );
    // Recorded in the shape it was read in.
    assert_eq!(
        serde_json::to_value(&judgement).unwrap()["answers"]["stop_reason"]["choice"],
        json!("continue")
    );
    assert_eq!(judgement.probability("holds"), Some(0.2));
    assert_eq!(judgement.probability("stop_reason"), None);
}

#[test]
fn every_invalid_document_names_its_reason() {
    let sr = "/answers/stop_reason";
    let cases: Vec<(Value, Option<&str>, String)> = vec![
        // The document and the model.
        (json!(3), None, "document: must be an object with model, answers, not 3".into()),
        (json!(null), None, "document: must be an object with model, answers, not null".into()),
        (
            with("/usage", Some(json!({"tokens": 3}))),
            None,
            r#"document: unknown field "usage"; allowed: model, answers"#.into(),
        ),
        (
            with("/model", Some(json!("big-judge"))),
            PINNED,
            r#"model: "big-judge" is not "small-judge-1", the model the contract pins"#.into(),
        ),
        (
            with("/model", None),
            PINNED,
            r#"model: missing; the contract pins "small-judge-1""#.into(),
        ),
        (
            with("/model", Some(json!(null))),
            PINNED,
            "model: must be a string, not null".into(),
        ),
        (
            with("/model", Some(json!(3))),
            None,
            "model: must be a string, not 3".into(),
        ),
        (with("/answers", None), None, "answers: missing".into()),
        (
            with("/answers", Some(json!([]))),
            None,
            "answers: must be an object keyed by question id, not []".into(),
        ),
        // Which answers.
        (
            with("/answers/holds", None),
            None,
            "holds: missing from answers".into(),
        ),
        (
            with("/answers/stop_reason", None),
            None,
            "stop_reason: missing from answers".into(),
        ),
        (
            with("/answers/mood", Some(json!({"probability": 0.5}))),
            None,
            r#"answers: "mood" answers no question asked (holds, worth_doing, worth_another_round, stop_reason)"#
                .into(),
        ),
        // yes_no.
        (
            with("/answers/holds", Some(json!(0.9))),
            None,
            "holds: must be an object with probability, not 0.9".into(),
        ),
        (
            with("/answers/holds/why", Some(json!("because"))),
            None,
            r#"holds: unknown field "why"; allowed: probability"#.into(),
        ),
        (
            with("/answers/holds/probability", None),
            None,
            "holds.probability: missing".into(),
        ),
        (
            with("/answers/worth_doing/probability", Some(json!(null))),
            None,
            "worth_doing.probability: must be a finite number in [0, 1], not null".into(),
        ),
        (
            with("/answers/worth_doing/probability", Some(json!("0.9"))),
            None,
            r#"worth_doing.probability: must be a finite number in [0, 1], not "0.9""#.into(),
        ),
        (
            with("/answers/worth_doing/probability", Some(json!("NaN"))),
            None,
            r#"worth_doing.probability: must be a finite number in [0, 1], not "NaN""#.into(),
        ),
        (
            with("/answers/worth_doing/probability", Some(json!("Infinity"))),
            None,
            r#"worth_doing.probability: must be a finite number in [0, 1], not "Infinity""#
                .into(),
        ),
        (
            with("/answers/worth_another_round/probability", Some(json!(1.5))),
            None,
            "worth_another_round.probability: must be a finite number in [0, 1], not 1.5".into(),
        ),
        (
            with("/answers/worth_another_round/probability", Some(json!(-0.1))),
            None,
            "worth_another_round.probability: must be a finite number in [0, 1], not -0.1".into(),
        ),
        (
            with("/answers/holds/probability", Some(json!(true))),
            None,
            "holds.probability: must be a finite number in [0, 1], not true".into(),
        ),
        (
            with("/answers/holds/probability", Some(json!([0.5]))),
            None,
            "holds.probability: must be a finite number in [0, 1], not [0.5]".into(),
        ),
        // choice: the shape.
        (
            with(sr, Some(json!("continue"))),
            None,
            r#"stop_reason: must be an object with choice, probabilities, confidence, not "continue""#
                .into(),
        ),
        (
            with(&format!("{sr}/reason"), Some(json!("x"))),
            None,
            r#"stop_reason: unknown field "reason"; allowed: choice, probabilities, confidence"#
                .into(),
        ),
        // choice: `choice`.
        (
            with(&format!("{sr}/choice"), None),
            None,
            "stop_reason.choice: missing".into(),
        ),
        (
            with(&format!("{sr}/choice"), Some(json!("maybe"))),
            None,
            format!(
                r#"stop_reason.choice: must be one of the options offered ({OPTIONS}), not "maybe""#
            ),
        ),
        (
            with(&format!("{sr}/choice"), Some(json!("Continue"))),
            None,
            format!(
                r#"stop_reason.choice: must be one of the options offered ({OPTIONS}), not "Continue""#
            ),
        ),
        (
            with(&format!("{sr}/choice"), Some(json!(null))),
            None,
            format!("stop_reason.choice: must be one of the options offered ({OPTIONS}), not null"),
        ),
        // choice: `probabilities`, one per option.
        (
            with(&format!("{sr}/probabilities"), None),
            None,
            "stop_reason.probabilities: missing".into(),
        ),
        (
            with(&format!("{sr}/probabilities"), Some(json!([0.1, 0.1, 0.1, 0.7]))),
            None,
            "stop_reason.probabilities: must be an object with one probability per option, not \
             [0.1,0.1,0.1,0.7]"
                .into(),
        ),
        (
            with(&format!("{sr}/probabilities/maybe"), Some(json!(0.0))),
            None,
            format!(r#"stop_reason.probabilities: "maybe" is not an option offered ({OPTIONS})"#),
        ),
        (
            with(&format!("{sr}/probabilities/continue"), None),
            None,
            "stop_reason.probabilities: no probability for `continue`".into(),
        ),
        (
            with(&format!("{sr}/probabilities/holds"), Some(json!(null))),
            None,
            "stop_reason.probabilities.holds: must be a finite number in [0, 1], not null".into(),
        ),
        (
            with(&format!("{sr}/probabilities/holds"), Some(json!("0.1"))),
            None,
            r#"stop_reason.probabilities.holds: must be a finite number in [0, 1], not "0.1""#
                .into(),
        ),
        (
            with(&format!("{sr}/probabilities/not_converging"), Some(json!(-0.1))),
            None,
            "stop_reason.probabilities.not_converging: must be a finite number in [0, 1], not -0.1"
                .into(),
        ),
        (
            with(&format!("{sr}/probabilities/continue"), Some(json!(1.2))),
            None,
            "stop_reason.probabilities.continue: must be a finite number in [0, 1], not 1.2"
                .into(),
        ),
        // choice: the sum.
        (
            with(&format!("{sr}/probabilities"), Some(probabilities(0.1, 0.1, 0.1, 0.6))),
            None,
            "stop_reason.probabilities: sum to 0.9, not 1 within 0.02".into(),
        ),
        (
            with(&format!("{sr}/probabilities"), Some(probabilities(0.1, 0.1, 0.1, 0.679))),
            None,
            "stop_reason.probabilities: sum to 0.979, not 1 within 0.02".into(),
        ),
        (
            with(&format!("{sr}/probabilities"), Some(probabilities(0.1, 0.1, 0.1, 0.721))),
            None,
            "stop_reason.probabilities: sum to 1.021, not 1 within 0.02".into(),
        ),
        (
            with(&format!("{sr}/probabilities"), Some(probabilities(1.0, 1.0, 1.0, 1.0))),
            None,
            "stop_reason.probabilities: sum to 4, not 1 within 0.02".into(),
        ),
        // choice: the highest on `choice`.
        (
            with(&format!("{sr}/choice"), Some(json!("holds"))),
            None,
            "stop_reason.choice: `holds` has 0.1 but `continue` has 0.7; the choice must carry \
             the highest probability within 0.001"
                .into(),
        ),
        (
            {
                let doc = with(&format!("{sr}/choice"), Some(json!("holds")));
                let mut doc = doc;
                doc["answers"]["stop_reason"]["probabilities"] = probabilities(0.348, 0.002, 0.3, 0.35);
                doc
            },
            None,
            "stop_reason.choice: `holds` has 0.348 but `continue` has 0.35; the choice must \
             carry the highest probability within 0.001"
                .into(),
        ),
        // choice: `confidence`.
        (
            with(&format!("{sr}/confidence"), None),
            None,
            "stop_reason.confidence: missing".into(),
        ),
        (
            with(&format!("{sr}/confidence"), Some(json!(1.01))),
            None,
            "stop_reason.confidence: must be a finite number in [0, 1], not 1.01".into(),
        ),
        (
            with(&format!("{sr}/confidence"), Some(json!("high"))),
            None,
            r#"stop_reason.confidence: must be a finite number in [0, 1], not "high""#.into(),
        ),
        (
            with(&format!("{sr}/confidence"), Some(json!(null))),
            None,
            "stop_reason.confidence: must be a finite number in [0, 1], not null".into(),
        ),
    ];
    for (doc, model, expected) in cases {
        assert_eq!(reason(&doc, model), expected, "{doc}");
        assert!(!expected.contains('\n'), "{expected}");
    }
}

#[test]
fn boundaries_that_are_valid() {
    let sr = "/answers/stop_reason";
    let set = |pointer: &str, v: Value| with(pointer, Some(v));
    let tie = {
        let mut doc = set(&format!("{sr}/choice"), json!("holds"));
        doc["answers"]["stop_reason"]["probabilities"] = probabilities(0.349, 0.001, 0.3, 0.35);
        doc
    };
    for (name, doc, model) in [
        ("the model the contract pins", good(), PINNED),
        ("no model and none pinned", with("/model", None), None),
        (
            "another model when none is pinned",
            set("/model", json!("x")),
            None,
        ),
        (
            "probability 0",
            set("/answers/holds/probability", json!(0)),
            None,
        ),
        (
            "probability 1",
            set("/answers/holds/probability", json!(1)),
            None,
        ),
        (
            "probability 1.0",
            set("/answers/holds/probability", json!(1.0)),
            None,
        ),
        (
            "probability -0.0",
            set("/answers/holds/probability", json!(-0.0)),
            None,
        ),
        (
            "sum 0.98",
            set(
                &format!("{sr}/probabilities"),
                probabilities(0.1, 0.1, 0.1, 0.68),
            ),
            None,
        ),
        (
            "sum 1.02",
            set(
                &format!("{sr}/probabilities"),
                probabilities(0.1, 0.1, 0.1, 0.72),
            ),
            None,
        ),
        (
            "sum 0.98 as 0.49 + 0.49",
            set(
                &format!("{sr}/probabilities"),
                probabilities(0.49, 0.0, 0.0, 0.49),
            ),
            None,
        ),
        ("the choice 0.001 under the highest", tie, None),
        (
            "confidence 0",
            set(&format!("{sr}/confidence"), json!(0)),
            None,
        ),
        (
            "confidence 1",
            set(&format!("{sr}/confidence"), json!(1)),
            None,
        ),
    ] {
        assert!(
            matches!(
                validate(&doc, &default_questions(), model),
                Validation::Valid(_)
            ),
            "{name}: {}",
            reason(&doc, model)
        );
    }
}

#[test]
fn only_the_questions_asked_are_required() {
    let asked: Vec<Question> = default_questions()
        .into_iter()
        .filter(|q| q.id == "holds")
        .collect();
    let doc = json!({"answers": {"holds": {"probability": 0.4}}});
    assert!(matches!(validate(&doc, &asked, None), Validation::Valid(_)));
    assert_eq!(
        validate(&good(), &asked, None),
        Validation::Invalid {
            reason: r#"answers: "worth_doing" answers no question asked (holds)"#.into()
        }
    );
}

#[test]
fn bytes_that_are_not_json_are_invalid_not_errors() {
    for (bytes, expected) in [
        (
            &b""[..],
            "document: not JSON: EOF while parsing a value at line 1 column 0",
        ),
        (
            b"yes",
            "document: not JSON: expected value at line 1 column 1",
        ),
        (
            b"{\"answers\": {\"holds\": {\"probability\": NaN}}}",
            "document: not JSON: expected value at line 1 column 39",
        ),
        (
            b"{\"answers\": {\"holds\": {\"probability\": 1e400}}}",
            "document: not JSON: number out of range at line 1 column 43",
        ),
        (
            b"\xff",
            "document: not JSON: expected value at line 1 column 1",
        ),
    ] {
        assert_eq!(
            parse_answers(bytes, &default_questions(), None),
            Validation::Invalid {
                reason: expected.into()
            },
            "{bytes:?}"
        );
    }
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    assert!(matches!(
        parse_answers(deep.as_bytes(), &default_questions(), None),
        Validation::Invalid { .. }
    ));
    let text = good().to_string();
    assert!(matches!(
        parse_answers(text.as_bytes(), &default_questions(), PINNED),
        Validation::Valid(_)
    ));
}

/// Any value in any place gives a verdict, never a panic.
#[test]
fn odd_values_anywhere_never_panic() {
    let odd = [
        json!(null),
        json!(true),
        json!(-1),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(f64::MAX),
        json!(f64::MIN_POSITIVE),
        json!(""),
        json!("x".repeat(10_000)),
        json!("\u{2028}\n\""),
        json!([]),
        json!({}),
        json!({"": {"": []}}),
    ];
    let pointers = [
        "/model",
        "/answers",
        "/answers/holds",
        "/answers/holds/probability",
        "/answers/stop_reason",
        "/answers/stop_reason/choice",
        "/answers/stop_reason/probabilities",
        "/answers/stop_reason/probabilities/holds",
        "/answers/stop_reason/confidence",
        "/answers/",
        "/answers/stop_reason/probabilities/",
    ];
    for pointer in pointers {
        for value in &odd {
            let doc = with(pointer, Some(value.clone()));
            if let Validation::Invalid { reason } = validate(&doc, &default_questions(), PINNED) {
                assert!(!reason.contains('\n'), "{reason}");
                assert!(reason.chars().count() < 300, "{reason}");
            }
        }
    }
}

#[test]
fn a_hand_built_choice_without_options_is_never_answered_validly() {
    let questions = vec![Question {
        id: "pick".into(),
        kind: Kind::Choice {
            options: Vec::<ChoiceOption>::new(),
        },
        instructions: "pick".into(),
    }];
    let doc = json!({"answers": {"pick": {"choice": "a", "probabilities": {}, "confidence": 1}}});
    assert_eq!(
        validate(&doc, &questions, None),
        Validation::Invalid {
            reason: r#"pick.choice: must be one of the options offered (), not "a""#.into()
        }
    );
}
