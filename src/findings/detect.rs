//! Auto-detection of a reviewer output's format from its first bytes and
//! top-level keys. Pure. `--format` overrides it.
//!
//! - `<` → Checkstyle XML when the root element is `<checkstyle>`, else
//!   JUnit XML;
//! - JSON lines whose first object has an event `type` → Codex event stream;
//! - a JSON object with a `diagnostics` list, or lines of objects with
//!   `message` and `location` → reviewdog rdjson / rdjsonl;
//! - a JSON array whose first object has `check_name` (or `description`
//!   and `location.path`) → GitLab Code Quality;
//! - a GitHub review comment, review or GraphQL review threads (or an
//!   array or lines of them) → GitHub;
//! - a JSON object with `runs` → SARIF; with `type: "result"` → a Claude
//!   result (native); with Codex review keys (`overall_correctness`,
//!   `code_location`, `confidence_score`) → Codex; otherwise native;
//! - text with a `- [P1] Title — path:1-2` line → Codex rendered review;
//!   otherwise tagged text.

use serde::Deserialize;
use serde::de::IgnoredAny;

use super::{Format, codex};

#[derive(Deserialize)]
struct Peek {
    #[serde(default)]
    runs: Option<IgnoredAny>,
    #[serde(default)]
    overall_correctness: Option<IgnoredAny>,
}

pub fn detect(text: &str) -> Format {
    let start = text.trim_start();
    if start.starts_with('<') {
        return match super::checkstyle::is_checkstyle(start) {
            true => Format::Checkstyle,
            false => Format::Junit,
        };
    }
    if start.starts_with('{') || starts_json_array(start) {
        if codex::is_event_stream(start) {
            return Format::Codex;
        }
        if super::rdjson::looks_like(start) {
            return Format::Rdjson;
        }
        if super::codequality::looks_like(start) {
            return Format::Codequality;
        }
        if !start.starts_with('{') {
            if super::github::looks_like(start) {
                return Format::Github;
            }
            // Only the native parser has something to say about an array.
            return Format::Native;
        }
        return match serde_json::from_str::<Peek>(start) {
            Ok(peek) if peek.runs.is_some() => Format::Sarif,
            // After SARIF's look: a 50 MB log is not read a third time.
            Ok(_) if super::github::looks_like(start) => Format::Github,
            Ok(peek) if peek.overall_correctness.is_some() => Format::Codex,
            // A Claude result is read by the native parser.
            Ok(_) if super::native::is_claude_result(start) => Format::Native,
            Ok(_) if codex::is_review_json(start) => Format::Codex,
            Ok(_) => Format::Native,
            // Objects back to back (`gh api --jq '.[]'`, `jq '.[] | {…}'`).
            Err(_) if super::github::looks_like(start) => Format::Github,
            // Malformed: let the likeliest parser say where it breaks.
            Err(_) if start.contains("\"runs\"") => Format::Sarif,
            Err(_) if codex::is_review_json(start) => Format::Codex,
            Err(_) => Format::Native,
        };
    }
    if codex::looks_rendered(text) {
        return Format::Codex;
    }
    Format::Tagged
}

/// `[` opens a JSON array only when a value follows; `[bug]` opens a tag.
fn starts_json_array(text: &str) -> bool {
    let Some(rest) = text.strip_prefix('[') else {
        return false;
    };
    rest.trim_start()
        .chars()
        .next()
        .is_none_or(|ch| matches!(ch, '{' | '[' | '"' | ']' | '-') || ch.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_told_apart() {
        let table = [
            ("<?xml version=\"1.0\"?><testsuites/>", Format::Junit),
            (
                "<?xml version=\"1.0\"?>\n<checkstyle version=\"4.3\"></checkstyle>",
                Format::Checkstyle,
            ),
            ("{\"version\":\"2.1.0\",\"runs\":[]}", Format::Sarif),
            ("{\"findings\":[]}", Format::Native),
            (
                "{\"type\":\"result\",\"structured_output\":null}",
                Format::Native,
            ),
            (
                "{\"findings\":[],\"overall_correctness\":\"patch is correct\"}",
                Format::Codex,
            ),
            (
                "{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n{\"type\":\"turn.started\"}",
                Format::Codex,
            ),
            (
                "Review comment:\n\n- [P1] Bad — /r/a.rs:1-2\n  body",
                Format::Codex,
            ),
            ("[bug] a.rs:1: x", Format::Tagged),
            ("{\"runs\": [", Format::Sarif),
            ("{\"findings\": [", Format::Native),
            ("garbage", Format::Tagged),
            (
                "{\"diagnostics\":[],\"severity\":\"WARNING\"}",
                Format::Rdjson,
            ),
            (
                "{\"message\":\"m\",\"location\":{\"path\":\"a\"}}\n{\"message\":\"n\",\"location\":{}}",
                Format::Rdjson,
            ),
            (
                "[{\"check_name\":\"F401\",\"description\":\"d\"}]",
                Format::Codequality,
            ),
            ("[]", Format::Native),
            // An array is never an rdjson result, however many items.
            ("[{\"a\":1},{\"b\":2},{\"c\":3},{\"d\":4}]", Format::Native),
            (
                "[{\"id\":1,\"path\":\"a.rs\",\"line\":2,\"body\":\"b\",\"diff_hunk\":\"@@\"}]",
                Format::Github,
            ),
            (
                "{\"data\":{\"repository\":{\"pullRequest\":{\"reviewThreads\":{\"nodes\":[]}}}}}",
                Format::Github,
            ),
            (
                "{\"body\":\"b\",\"line\":1,\"path\":\"a\"}\n{\"body\":\"c\",\"line\":2,\"path\":\"a\"}",
                Format::Github,
            ),
            ("[{\"severity\": \"bug\"}]", Format::Native),
        ];
        for (input, want) in table {
            assert_eq!(detect(input), want, "{input}");
        }
    }
}
