use super::*;
use crate::agent::process::Captured;
use std::time::Duration;

fn done(code: i32, stdout: &str, stderr: &str) -> Finished {
    Finished {
        code: Some(code),
        stdout: Captured {
            bytes: stdout.as_bytes().to_vec(),
            dropped: 0,
        },
        stderr: Captured {
            bytes: stderr.as_bytes().to_vec(),
            dropped: 0,
        },
        elapsed: Duration::from_secs(1),
    }
}

#[test]
fn claude_result_gives_cost_tokens_and_responses() {
    let out = r#"{"type":"result","subtype":"success","is_error":false,"total_cost_usd":0.25,
        "usage":{"input_tokens":100,"output_tokens":20,"cache_read_input_tokens":5000},
        "result":"Done.\n```json\n{\"responses\":[{\"id\":\"F1\",\"status\":\"disputed\",\"note\":\"spec says so\"}]}\n```"}"#;
    let r = interpret(Preset::Claude, Role::Writer, &done(0, out, ""), None, None).unwrap();
    assert_eq!(r.cost_usd, Some("0.25".parse().unwrap()));
    assert_eq!(r.tokens, Some(120));
    assert_eq!(r.responses.len(), 1);
    assert_eq!(r.responses[0].note, "spec says so");
    let err = interpret(
        Preset::Claude,
        Role::Reviewer,
        &done(
            0,
            r#"{"type":"result","is_error":true,"subtype":"error_max_turns"}"#,
            "",
        ),
        None,
        None,
    )
    .unwrap_err();
    assert_eq!(err, "reported an error: error_max_turns");
}

#[test]
fn codex_sums_turn_usage_and_prefers_the_output_file() {
    let stream = concat!(
        "{\"type\":\"thread.started\"}\n",
        "{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"stream text\"}}\n",
        "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":10,\"cached_input_tokens\":4,\"output_tokens\":5}}\n",
    );
    let r = interpret(
        Preset::Codex,
        Role::Reviewer,
        &done(0, stream, ""),
        Some(b"{\"findings\":[]}"),
        None,
    )
    .unwrap();
    assert_eq!(r.tokens, Some(15));
    assert_eq!(r.review.as_deref(), Some(&b"{\"findings\":[]}"[..]));
    let r = interpret(
        Preset::Codex,
        Role::Reviewer,
        &done(0, stream, ""),
        Some(b"  \n"),
        None,
    )
    .unwrap();
    assert_eq!(r.review.as_deref(), Some(&b"stream text"[..]));
    let retried = concat!(
        "{\"type\":\"error\",\"message\":\"Reconnecting... 1/5\"}\n",
        "{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"done\"}}\n",
        "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}\n",
    );
    assert!(
        interpret(
            Preset::Codex,
            Role::Writer,
            &done(0, retried, ""),
            None,
            None
        )
        .is_ok()
    );
    let gave_up = "{\"type\":\"error\",\"message\":\"stream disconnected\"}\n";
    assert_eq!(
        interpret(
            Preset::Codex,
            Role::Writer,
            &done(0, gave_up, ""),
            None,
            None
        )
        .unwrap_err(),
        "reported an error: stream disconnected"
    );
    let failed = "{\"type\":\"turn.failed\",\"error\":{\"message\":\"stream disconnected\"}}\n";
    assert_eq!(
        interpret(
            Preset::Codex,
            Role::Writer,
            &done(0, failed, ""),
            None,
            None
        )
        .unwrap_err(),
        "reported an error: stream disconnected"
    );
}

#[test]
fn gemini_reads_response_and_model_token_totals() {
    let out = r#"{"response":"```json\n{\"findings\":[]}\n```","stats":{"models":{"gemini-2.5-pro":{"tokens":{"total":300}},"flash":{"tokens":{"total":20}}}}}"#;
    let r = interpret(
        Preset::Gemini,
        Role::Reviewer,
        &done(0, out, ""),
        None,
        None,
    )
    .unwrap();
    assert_eq!(r.review.as_deref(), Some(&b"{\"findings\":[]}"[..]));
    assert_eq!(r.tokens, Some(320));
}

#[test]
fn command_usage_counts_and_failures_are_named() {
    let out = r#"{"findings":[],"usage":{"cost_usd":0.5,"tokens":42}}"#;
    let r = interpret(
        Preset::Command,
        Role::Reviewer,
        &done(0, "", ""),
        Some(out.as_bytes()),
        None,
    )
    .unwrap();
    assert_eq!(
        (r.cost_usd, r.tokens),
        (Some("0.5".parse().unwrap()), Some(42))
    );
    assert_eq!(
        interpret(
            Preset::Command,
            Role::Writer,
            &done(3, "", "\nboom happened\n"),
            None,
            None
        )
        .unwrap_err(),
        "exited with status 3: boom happened"
    );
}

#[test]
fn tests_preset_needs_its_report_whatever_the_exit() {
    let r = interpret(
        Preset::Tests,
        Role::Reviewer,
        &done(101, "", ""),
        None,
        Some(b"<testsuites/>"),
    )
    .unwrap();
    assert!(r.review.is_some());
    let err = interpret(Preset::Tests, Role::Reviewer, &done(0, "", ""), None, None).unwrap_err();
    assert!(
        err.starts_with("wrote no JUnit report (the test command exited with status 0)"),
        "{err}"
    );
}

#[test]
fn too_much_output_is_a_failure() {
    let mut f = done(0, "{}", "");
    f.stdout.dropped = 10;
    assert!(
        interpret(Preset::Command, Role::Writer, &f, None, None)
            .unwrap_err()
            .starts_with("printed 10 bytes more")
    );
}

#[test]
fn fences_and_responses() {
    assert_eq!(strip_fences("```json\n{\"a\":1}\n```"), "{\"a\":1}");
    assert_eq!(strip_fences("{\"a\":1}"), "{\"a\":1}");
    assert!(responses_in("no json here").is_empty());
    assert_eq!(
        responses_in("x {\"responses\":[{\"id\":\"F1\",\"status\":\"fixed\"}]} y").len(),
        1
    );
}

#[test]
fn a_failed_gemini_names_the_error_it_printed_on_stderr() {
    // Real gemini 0.61.0 output for a 400 from the API: warnings, a stack
    // trace, then the JSON error document; exit status 400 % 256; stdout empty.
    let stderr = "Warning: 256-color support not detected. Using a terminal with at least 256-color support is recommended for a better visual experience.\n\
        Ripgrep is not available. Falling back to GrepTool.\n\
        Error when talking to Gemini API Full report available at: /tmp/x.json _ApiError: {\"error\":{\"code\":400,\"message\":\"mock says no\",\"status\":\"INVALID_ARGUMENT\"}}\n    at throwErrorIfNotOK (file:///x.js:1:1) {\n  status: 400\n}\n\
        {\n  \"session_id\": \"e0e9fbce\",\n  \"error\": {\n    \"type\": \"Error\",\n    \"message\": \"{\\\"error\\\":{\\\"code\\\":400,\\\"message\\\":\\\"mock says no\\\",\\\"status\\\":\\\"INVALID_ARGUMENT\\\"}}\",\n    \"code\": 400\n  }\n}\n";
    let failed = done(144, "", stderr);
    assert_eq!(
        interpret(Preset::Gemini, Role::Writer, &failed, None, None).unwrap_err(),
        "exited with status 144: mock says no"
    );
    // A plain message is kept as it is.
    let refused = done(
        1,
        "",
        "Warning: x\n{\n  \"session_id\": \"s\",\n  \"error\": {\n    \"type\": \"Error\",\n    \"message\": \"exception TypeError: fetch failed sending request\",\n    \"code\": 1\n  }\n}\n",
    );
    assert_eq!(
        interpret(Preset::Gemini, Role::Reviewer, &refused, None, None).unwrap_err(),
        "exited with status 1: exception TypeError: fetch failed sending request"
    );
    // No error document: the first line, as for the other presets.
    let other = done(
        55,
        "",
        "Gemini CLI is not running in a trusted directory.\n",
    );
    assert_eq!(
        interpret(Preset::Gemini, Role::Reviewer, &other, None, None).unwrap_err(),
        "exited with status 55: Gemini CLI is not running in a trusted directory."
    );
}

#[test]
fn a_failed_claude_or_codex_says_why_in_words() {
    // claude 2.1 with no login: exit 1, its result document on stdout.
    let stdout = r#"{"type":"result","subtype":"success","is_error":true,"duration_ms":41,"result":"Not logged in · Please run /login","session_id":"6d0f","total_cost_usd":0}"#;
    assert_eq!(
        interpret(
            Preset::Claude,
            Role::Writer,
            &done(1, stdout, ""),
            None,
            None
        )
        .unwrap_err(),
        "exited with status 1: claude is not logged in (it said \"Not logged in · Please run /login\"); run `claude /login` (or set `ANTHROPIC_API_KEY`)"
    );
    // Any other reason as claude said it, on one line, not the raw JSON.
    let other = r#"{"type":"result","subtype":"success","is_error":true,"result":"API Error: 529\n{\"type\":\"overloaded_error\"}"}"#;
    assert_eq!(
        interpret(
            Preset::Claude,
            Role::Reviewer,
            &done(1, other, ""),
            None,
            None
        )
        .unwrap_err(),
        "exited with status 1: API Error: 529 {\"type\":\"overloaded_error\"}"
    );
    // codex: the last failure on its event stream, else its `Error:` line.
    let events = "{\"type\":\"thread.started\"}\n{\"type\":\"error\",\"message\":\"Reconnecting... 1/5\"}\n{\"type\":\"turn.failed\",\"error\":{\"message\":\"unexpected status 401 Unauthorized: Missing bearer\"}}\n";
    assert_eq!(
        interpret(
            Preset::Codex,
            Role::Reviewer,
            &done(1, events, ""),
            None,
            None
        )
        .unwrap_err(),
        "exited with status 1: codex was refused its credentials (it said \"unexpected status 401 Unauthorized: Missing bearer\"); run `codex login` (or set `OPENAI_API_KEY`)"
    );
    let stderr = "2026-12-02T10:00:00Z WARN something\nError: Not logged in\n";
    assert_eq!(
        interpret(
            Preset::Codex,
            Role::Writer,
            &done(1, "", stderr),
            None,
            None
        )
        .unwrap_err(),
        "exited with status 1: codex is not logged in (it said \"Not logged in\"); run `codex login` (or set `OPENAI_API_KEY`)"
    );
    // Nothing it said to read: its first line, as before.
    assert_eq!(
        interpret(
            Preset::Codex,
            Role::Writer,
            &done(2, "", "usage: codex exec\n"),
            None,
            None
        )
        .unwrap_err(),
        "exited with status 2: usage: codex exec"
    );
}
