use serde_json::json;

use super::*;
use crate::digest::sha256_hex;
use crate::judge::request::sort_keys;
use crate::redact::redact_str;

/// The question as the request carries it: compact, sorted keys.
fn sent(question: &Question, what: &str) -> String {
    sort_keys(serde_json::to_value(question.filled(what)).unwrap()).to_string()
}

#[test]
fn default_set_is_the_four_spec_questions_in_order() {
    let set = default_questions();
    let shape: Vec<(&str, &str, Vec<&str>)> = set
        .iter()
        .map(|q| (q.id.as_str(), q.kind.as_str(), q.option_ids()))
        .collect();
    assert_eq!(
        shape,
        vec![
            ("holds", "yes_no", vec![]),
            ("worth_doing", "yes_no", vec![]),
            ("worth_another_round", "yes_no", vec![]),
            (
                "stop_reason",
                "choice",
                vec!["holds", "over_polishing", "not_converging", "continue"]
            ),
        ]
    );
}

/// Rewording a default question changes what every judge is asked: it must
/// be a deliberate change that updates these hashes.
#[test]
fn default_texts_are_pinned() {
    let pinned = [
        (
            "holds",
            "0c38ab5b05ff54507c5dd2dff47a746e4d67376647542c124d3de971916ecc4b",
        ),
        (
            "worth_doing",
            "2ca5d79824cf2140314c06afd92f31d1077067c431ca15f435ee28e6e5b03462",
        ),
        (
            "worth_another_round",
            "e4359b1da06fc9533b3223e1019af502bcccd29cc16ec35538df1ea2141096b3",
        ),
        (
            "stop_reason",
            "60d6cab72eddf1fedd2318662c57c707fe00810cca774ce59728b3355d4e4afc",
        ),
    ];
    let set = default_questions();
    assert_eq!(set.len(), pinned.len());
    for (question, (id, hash)) in set.iter().zip(pinned) {
        let text = sent(question, "the patch");
        assert_eq!(question.id, id);
        assert_eq!(sha256_hex(text.as_bytes()), hash, "{id} now reads:\n{text}");
    }
}

#[test]
fn what_is_filled_everywhere_and_never_opens_a_sentence() {
    for question in default_questions() {
        let text = sent(&question, "the page");
        assert!(!text.contains(WHAT), "{}: {text}", question.id);
        assert!(text.contains("the page"), "{}: {text}", question.id);
        // `{what}` is lowercase ("the patch"): a sentence must not start with it.
        for raw in std::iter::once(question.instructions.as_str()).chain(match &question.kind {
            Kind::YesNo => Vec::new(),
            Kind::Choice { options } => options.iter().map(|o| o.criterion.as_str()).collect(),
        }) {
            assert!(!raw.starts_with(WHAT), "{}: {raw}", question.id);
            assert!(!raw.contains(". {what}"), "{}: {raw}", question.id);
            assert!(!raw.contains("? {what}"), "{}: {raw}", question.id);
        }
    }
}

#[test]
fn filling_is_one_pass() {
    let q = Question {
        id: "q".into(),
        kind: Kind::YesNo,
        instructions: "is {what} fine?".into(),
    };
    assert_eq!(q.filled("{what}").instructions, "is {what} fine?");
    assert_eq!(q.filled("the page").instructions, "is the page fine?");
}

#[test]
fn default_texts_survive_redaction_unchanged() {
    for question in default_questions() {
        let text = sent(&question, "the patch");
        assert_eq!(redact_str(&text), text, "{}", question.id);
    }
}

#[test]
fn the_default_set_reads_back_from_its_own_json() {
    let set = default_questions();
    let doc = json!({ "questions": serde_json::to_value(&set).unwrap() });
    assert_eq!(questions_from_json(&doc).unwrap(), set);
    let bare = serde_json::to_value(&set).unwrap();
    assert_eq!(questions_from_json(&bare).unwrap(), set);
}

#[test]
fn a_custom_set_reads_in_order() {
    let doc = json!({"questions": [
        {"id": "tests_pass", "kind": "yes_no", "instructions": "Do the tests of {what} pass?"},
        {"id": "risk", "kind": "choice", "instructions": "How risky is {what}?",
         "options": [{"id": "low", "criterion": "a typo"}, {"id": "high", "criterion": "auth"}]},
    ]});
    let set = questions_from_json(&doc).unwrap();
    assert_eq!(
        set,
        vec![
            Question {
                id: "tests_pass".into(),
                kind: Kind::YesNo,
                instructions: "Do the tests of {what} pass?".into(),
            },
            Question {
                id: "risk".into(),
                kind: Kind::Choice {
                    options: vec![
                        ChoiceOption {
                            id: "low".into(),
                            criterion: "a typo".into()
                        },
                        ChoiceOption {
                            id: "high".into(),
                            criterion: "auth".into()
                        },
                    ]
                },
                instructions: "How risky is {what}?".into(),
            },
        ]
    );
}

fn yes_no(id: &str) -> serde_json::Value {
    json!({"id": id, "kind": "yes_no", "instructions": "is it?"})
}

fn two_options() -> serde_json::Value {
    json!([{"id": "a", "criterion": "x"}, {"id": "b", "criterion": "y"}])
}

#[test]
fn invalid_sets_name_the_field_and_value() {
    let cases: Vec<(serde_json::Value, &str)> = vec![
        (
            json!(3),
            "question set field `questions`: must be an array of questions, or an object \
             holding one under `questions`, not `3`",
        ),
        (
            json!({"qs": []}),
            "question set field `qs` is unknown; allowed here: questions",
        ),
        (
            json!({}),
            "question set field `questions` is required (an array of questions)",
        ),
        (
            json!({"questions": {"id": "a"}}),
            "question set field `questions`: must be an array of questions, not `{\"id\":\"a\"}`",
        ),
        (
            json!([]),
            "question set field `questions`: must be an array of at least one question, not `[]`",
        ),
        (
            json!({"questions": []}),
            "question set field `questions`: must be an array of at least one question, not `[]`",
        ),
        (
            json!(["holds"]),
            "question set field `questions[0]`: must be an object with fields id, kind, \
             instructions, options, not `\"holds\"`",
        ),
        (
            json!([{"id": "a", "kind": "yes_no", "instructions": "x", "text": "y"}]),
            "question set field `questions[0].text` is unknown; allowed here: id, kind, \
             instructions, options",
        ),
        (
            json!([{"kind": "yes_no", "instructions": "x"}]),
            "question set field `questions[0].id` is required (an id of 1..=64 characters: a-z \
             first, then a-z, 0-9 or _)",
        ),
        (
            json!([yes_no("a"), {"id": "Holds", "kind": "yes_no", "instructions": "x"}]),
            "question set field `questions[1].id`: must be an id of 1..=64 characters: a-z \
             first, then a-z, 0-9 or _, not `\"Holds\"`",
        ),
        (
            json!([{"id": "1st", "kind": "yes_no", "instructions": "x"}]),
            "question set field `questions[0].id`: must be an id of 1..=64 characters: a-z \
             first, then a-z, 0-9 or _, not `\"1st\"`",
        ),
        (
            json!([{"id": 7, "kind": "yes_no", "instructions": "x"}]),
            "question set field `questions[0].id`: must be an id of 1..=64 characters: a-z \
             first, then a-z, 0-9 or _, not `7`",
        ),
        (
            json!([yes_no("a"), yes_no("b"), yes_no("a")]),
            "question set field `questions[2].id`: `a` is already used by `questions[0].id`",
        ),
        (
            json!([{"id": "a", "instructions": "x"}]),
            "question set field `questions[0].kind` is required (`yes_no` or `choice`)",
        ),
        (
            json!([{"id": "a", "kind": "scale", "instructions": "x"}]),
            "question set field `questions[0].kind`: must be `yes_no` or `choice`, not \
             `\"scale\"`",
        ),
        (
            json!([{"id": "a", "kind": null, "instructions": "x"}]),
            "question set field `questions[0].kind`: must be `yes_no` or `choice`, not `null`",
        ),
        (
            json!([{"id": "a", "kind": "yes_no"}]),
            "question set field `questions[0].instructions` is required (a non-empty string)",
        ),
        (
            json!([{"id": "a", "kind": "yes_no", "instructions": "  "}]),
            "question set field `questions[0].instructions`: must be a non-empty string, not \
             `\"  \"`",
        ),
        (
            json!([{"id": "a", "kind": "yes_no", "instructions": "x", "options": two_options()}]),
            "question set field `questions[0].options`: must be absent: only `choice` questions \
             take options, not `[{\"id\":\"a\",\"criterion\":\"x\"},{\"id\":\"b\",\"criterion\":\"y\"}]`",
        ),
        (
            json!([{"id": "a", "kind": "choice", "instructions": "x"}]),
            "question set field `questions[0].options` is required (a `choice` question offers \
             at least 2 options)",
        ),
        (
            json!([{"id": "a", "kind": "choice", "instructions": "x",
                    "options": [{"id": "only", "criterion": "x"}]}]),
            "question set field `questions[0].options`: must be an array of at least 2 \
             options, not `[{\"id\":\"only\",\"criterion\":\"x\"}]`",
        ),
        (
            json!([{"id": "a", "kind": "choice", "instructions": "x", "options": "a,b"}]),
            "question set field `questions[0].options`: must be an array of at least 2 \
             options, not `\"a,b\"`",
        ),
        (
            json!([{"id": "a", "kind": "choice", "instructions": "x",
                    "options": [{"id": "a", "criterion": "x"}, {"id": "a", "criterion": "y"}]}]),
            "question set field `questions[0].options[1].id`: `a` is already used by \
             `questions[0].options[0].id`",
        ),
        (
            json!([{"id": "a", "kind": "choice", "instructions": "x",
                    "options": [{"id": "a", "criterion": "x"}, {"id": "b c", "criterion": "y"}]}]),
            "question set field `questions[0].options[1].id`: must be an id of 1..=64 \
             characters: a-z first, then a-z, 0-9 or _, not `\"b c\"`",
        ),
        (
            json!([{"id": "a", "kind": "choice", "instructions": "x",
                    "options": [{"id": "a", "criterion": "x"}, {"id": "b"}]}]),
            "question set field `questions[0].options[1].criterion` is required (a non-empty \
             string)",
        ),
        (
            json!([{"id": "a", "kind": "choice", "instructions": "x",
                    "options": [{"id": "a", "criterion": "x"}, "b"]}]),
            "question set field `questions[0].options[1]`: must be an object with fields id, \
             criterion, not `\"b\"`",
        ),
        (
            json!([{"id": "a", "kind": "choice", "instructions": "x",
                    "options": [{"id": "a", "criterion": "x", "weight": 2},
                                {"id": "b", "criterion": "y"}]}]),
            "question set field `questions[0].options[0].weight` is unknown; allowed here: id, \
             criterion",
        ),
        (
            json!([{"id": "holds", "kind": "choice", "instructions": "x", "options": two_options()}]),
            "question set field `questions[0].kind`: must be `yes_no`: the router reads `holds` \
             as a yes/no question, not `\"choice\"`",
        ),
        (
            json!([{"id": "worth_another_round", "kind": "choice", "instructions": "x",
                    "options": two_options()}]),
            "question set field `questions[0].kind`: must be `yes_no`: the router reads \
             `worth_another_round` as a yes/no question, not `\"choice\"`",
        ),
        (
            json!([yes_no("stop_reason")]),
            "question set field `questions[0].kind`: must be `choice`: the router reads \
             `stop_reason` as a choice, not `\"yes_no\"`",
        ),
        (
            json!([{"id": "stop_reason", "kind": "choice", "instructions": "x",
                    "options": two_options()}]),
            "question set field `questions[0].options` is required (`stop_reason` must offer \
             `continue`, or every answer would stop the loop)",
        ),
    ];
    for (doc, message) in cases {
        let err = questions_from_json(&doc).unwrap_err();
        assert_eq!(err.to_string(), message, "{doc}");
    }
}

#[test]
fn a_custom_stop_reason_with_continue_is_accepted() {
    let doc = json!([{"id": "stop_reason", "kind": "choice", "instructions": "why?",
                      "options": [{"id": "shipped", "criterion": "x"},
                                  {"id": "continue", "criterion": "y"}]}]);
    let set = questions_from_json(&doc).unwrap();
    assert_eq!(set[0].option_ids(), vec!["shipped", "continue"]);
}

#[test]
fn ids_are_lowercase_snake_case_up_to_64() {
    for (id, ok) in [
        ("a", true),
        ("holds", true),
        ("worth_another_round", true),
        ("q2", true),
        ("a_", true),
        (&"a".repeat(64), true),
        (&"a".repeat(65), false),
        ("", false),
        ("_a", false),
        ("2q", false),
        ("Holds", false),
        ("stop-reason", false),
        ("stop reason", false),
        ("é", false),
        ("a\n", false),
    ] {
        assert_eq!(is_id(id), ok, "{id:?}");
    }
}

#[test]
fn a_same_problem_question_names_both_findings_and_the_closing_change() {
    let new = Described {
        id: "F-1",
        title: "flush() holds the lock across the network call",
        place: "sink.py:12".into(),
        body: None,
    };
    let old = Described {
        id: "F1",
        title: "flush() reads the buffer without the lock",
        place: "sink.py:12".into(),
        body: Some("a race with write()"),
    };
    let q = same_problem(
        &new,
        &old,
        Some(2),
        "@@ -12 +12 @@\n-buf = b\n+with lock: buf = b\n",
    );
    assert_eq!(q.id, "same_problem:F-1");
    assert_eq!(q.kind, Kind::YesNo);
    for part in [
        "F-1 \"flush() holds the lock across the network call\" at sink.py:12",
        "F1 \"flush() reads the buffer without the lock\" at sink.py:12; the reviewer wrote: a race with write()",
        "closed in round 2",
        "+with lock: buf = b",
    ] {
        assert!(q.instructions.contains(part), "{part}: {}", q.instructions);
    }
    let bare = same_problem(&new, &old, None, "");
    assert!(!bare.instructions.contains("The change that closed it"));
}
