use serde_json::json;

use super::*;
use crate::judge::questions::default_questions;
use crate::redact::MASK;

fn finding(id: &str, title: &str) -> StateFinding {
    StateFinding {
        id: id.into(),
        severity: Severity::Bug,
        title: title.into(),
        file: Some("src/a.rs".into()),
        line: Some(42),
        state: "open".into(),
        reported_by: Vec::new(),
    }
}

fn round(n: u32) -> StateRound {
    StateRound {
        round: n,
        opened: 2,
        closed: 0,
        reopened: 0,
        must_fix_left: 1,
        below_floor_open: 1,
        diff_added: 10,
        diff_removed: 3,
    }
}

fn state(use_case: &str, findings: Vec<StateFinding>) -> State {
    State {
        use_case: use_case.into(),
        what: "the page".into(),
        findings,
        rounds: vec![round(1)],
    }
}

fn one_question() -> Vec<Question> {
    vec![Question {
        id: "ok".into(),
        kind: Kind::YesNo,
        instructions: "is {what} ok?".into(),
    }]
}

fn body(request: Request) -> (String, u64) {
    match request {
        Request::Ready { body, state_bytes } => (body, state_bytes),
        other => panic!("not sent: {other:?}"),
    }
}

#[test]
fn request_bytes_are_compact_sorted_and_unescaped() {
    let mut nit = finding("F2", "t");
    nit.severity = Severity::Nit;
    nit.file = None;
    nit.line = None;
    nit.state = "new".into();
    let s = state(
        "ship <b> & \"q\"\nLS PS",
        vec![finding("F1", "a < b && c > d"), nit],
    );
    let s = State {
        use_case: s
            .use_case
            .replace("LS", "\u{2028}")
            .replace("PS", "\u{2029}"),
        ..s
    };
    let (body, state_bytes) = body(build_request(&s, &one_question(), 24_576).unwrap());
    let expected = concat!(
        r#"{"questions":[{"id":"ok","instructions":"is the page ok?","kind":"yes_no"}],"#,
        r#""state":{"findings":[{"file":"src/a.rs","id":"F1","line":42,"severity":"bug","#,
        r#""state":"open","title":"a < b && c > d"},{"file":null,"id":"F2","line":null,"#,
        r#""severity":"nit","state":"new","title":"t"}],"rounds":[{"below_floor_open":1,"#,
        r#""closed":0,"diff_added":10,"diff_removed":3,"must_fix_left":1,"opened":2,"#,
        r#""reopened":0,"round":1}],"use_case":"ship <b> & \"q\"\nLS PS","what":"the page"}}"#
    )
    .replace("LS", "\u{2028}")
    .replace("PS", "\u{2029}");
    assert_eq!(body, expected);
    // The characters HTML escaping would touch are written as themselves.
    let bytes = body.as_bytes();
    for raw in [
        &b"<"[..],
        b">",
        b"&",
        "\u{2028}".as_bytes(),
        "\u{2029}".as_bytes(),
    ] {
        assert!(bytes.windows(raw.len()).any(|w| w == raw), "{raw:?}");
    }
    for escaped in ["\\u003c", "\\u003e", "\\u0026", "\\u2028", "\\u2029"] {
        assert!(!body.contains(escaped), "{escaped}");
    }
    let state_text = &body[body.find(r#""state":"#).unwrap() + 8..body.len() - 1];
    assert_eq!(state_bytes, state_text.len() as u64);
}

#[test]
fn keys_are_sorted_at_every_depth_despite_preserve_order() {
    let value = json!({"b": 1, "a": {"z": [{"y": 1, "x": 2}], "c": null}, "A": true});
    assert_eq!(
        sort_keys(value).to_string(),
        r#"{"A":true,"a":{"c":null,"z":[{"x":2,"y":1}]},"b":1}"#
    );
    // Arrays keep their order: it means something (rounds, questions).
    assert_eq!(sort_keys(json!([3, 1, 2])).to_string(), "[3,1,2]");
}

#[test]
fn questions_keep_their_order_and_get_what_filled() {
    let (body, _) = body(build_request(&state("u", vec![]), &default_questions(), 24_576).unwrap());
    let doc: Value = serde_json::from_str(&body).unwrap();
    let ids: Vec<&str> = doc["questions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        ["holds", "worth_doing", "worth_another_round", "stop_reason"]
    );
    assert!(!body.contains("{what}"));
    assert!(body.contains("Does the page now do what the use case needs"));
}

#[test]
fn string_values_are_redacted_and_keys_are_not() {
    let token = "ghp_0123456789abcdefghijklmnopqrstuvwxyz";
    let mut f = finding(token, &format!("leaks {token}"));
    f.file = Some(format!("config/{token}.env"));
    f.state = "OPENAI_API_KEY=abc123xyz".into();
    let s = State {
        what: format!("the page at Bearer {}", "x".repeat(20)),
        ..state("deploy with GITHUB_TOKEN='abcd1234'", vec![f])
    };
    let (body, _) = body(build_request(&s, &one_question(), 24_576).unwrap());
    assert!(!body.contains(token), "{body}");
    assert!(!body.contains("abc123xyz"), "{body}");
    assert!(!body.contains("abcd1234"), "{body}");
    assert!(!body.contains(&"x".repeat(20)), "{body}");
    for redacted in [
        format!(r#""id":"{MASK}""#),
        format!(r#""title":"leaks {MASK}""#),
        format!(r#""file":"config/{MASK}.env""#),
        format!(r#""state":"OPENAI_API_KEY={MASK}""#),
        format!(r#""use_case":"deploy with GITHUB_TOKEN='{MASK}'""#),
        format!(r#""what":"the page at Bearer {MASK}""#),
        // `what` reaches the questions too, redacted there as well.
        format!(r#"is the page at Bearer {MASK} ok?"#),
    ] {
        assert!(body.contains(&redacted), "{redacted} not in {body}");
    }

    let keyed = json!({token: token, "api_key": "value-1234", "nested": [{token: "plain"}]});
    assert_eq!(
        redact_values(keyed).to_string(),
        format!(
            r#"{{"{token}":"{MASK}","api_key":"value-1234","nested":[{{"{token}":"plain"}}]}}"#
        )
    );
}

/// Redacting the serialized document instead would let a pattern run over
/// the JSON escape `\n` and swallow the next line of the value.
#[test]
fn redaction_works_on_values_not_on_the_document() {
    let s = state("u", vec![finding("F1", "password: hunter22\nnext line")]);
    let (body, _) = body(build_request(&s, &one_question(), 24_576).unwrap());
    assert!(
        body.contains(&format!(r#""title":"password: {MASK}\nnext line""#)),
        "{body}"
    );
}

#[test]
fn a_state_over_the_limit_is_omitted_at_exactly_one_byte_over() {
    let s = state("u", vec![finding("F1", "t")]);
    let (_, size) = body(build_request(&s, &one_question(), 24_576).unwrap());
    assert!(size > 100);
    assert_eq!(
        build_request(&s, &one_question(), size).unwrap(),
        Request::Ready {
            body: body(build_request(&s, &one_question(), 24_576).unwrap()).0,
            state_bytes: size,
        }
    );
    assert_eq!(
        build_request(&s, &one_question(), size - 1).unwrap(),
        Request::Omitted {
            bytes: size,
            limit: size - 1,
        }
    );
}

#[test]
fn the_limit_counts_the_state_as_sent_redacted_not_the_questions() {
    let secret = format!("sk-ant-{}", "a".repeat(400));
    let s = state(&secret, vec![]);
    let (body, size) = body(build_request(&s, &default_questions(), 300).unwrap());
    assert!(size <= 300, "{size}");
    assert!(body.len() > 1000, "the questions are not counted");
    let big = state(&"a".repeat(400), vec![]);
    assert!(matches!(
        build_request(&big, &one_question(), 300).unwrap(),
        Request::Omitted { limit: 300, .. }
    ));
}

#[test]
fn every_round_is_sent_oldest_first() {
    let mut s = state("u", vec![]);
    s.rounds = vec![round(1), round(2), round(3)];
    let (body, _) = body(build_request(&s, &one_question(), 24_576).unwrap());
    let doc: Value = serde_json::from_str(&body).unwrap();
    let rounds: Vec<u64> = doc["state"]["rounds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["round"].as_u64().unwrap())
        .collect();
    assert_eq!(rounds, [1, 2, 3]);
}

#[test]
fn the_answers_schema_requires_every_question_in_its_shape() {
    let schema = answers_schema(&default_questions());
    let answers = &schema["properties"]["answers"];
    assert_eq!(
        answers["required"],
        json!(["holds", "worth_doing", "worth_another_round", "stop_reason"])
    );
    assert_eq!(answers["additionalProperties"], json!(false));
    assert_eq!(
        answers["properties"]["holds"]["properties"]["probability"],
        json!({"maximum": 1, "minimum": 0, "type": "number"})
    );
    let stop = &answers["properties"]["stop_reason"];
    let options = json!(["holds", "over_polishing", "not_converging", "continue"]);
    assert_eq!(stop["properties"]["choice"]["enum"], options);
    assert_eq!(stop["properties"]["probabilities"]["required"], options);
    assert_eq!(
        stop["required"],
        json!(["choice", "probabilities", "confidence"])
    );
    assert_eq!(schema["required"], json!(["answers", "model"]));
    // Sorted like every document the judge module writes.
    assert_eq!(sort_keys(schema.clone()).to_string(), schema.to_string());
    assert!(
        schema
            .to_string()
            .starts_with(r#"{"additionalProperties":false,"properties":{"answers""#)
    );
}

#[test]
fn a_panels_agreement_reaches_the_judge_and_one_reviewers_finding_carries_none() {
    let mut agreed = finding("F-1", "Leak in open");
    agreed.reported_by = vec!["codex".into(), "claude".into()];
    let lone = finding("F-2", "Race in close");
    let (text, _) =
        body(build_request(&state("u", vec![agreed, lone]), &one_question(), 100_000).unwrap());
    assert!(
        text.contains(r#""reported_by":["codex","claude"]"#),
        "{text}"
    );
    assert_eq!(text.matches("reported_by").count(), 1, "{text}");
}
