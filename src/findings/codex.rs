//! Codex review output, in its three shapes. Pure.
//!
//! - the review JSON (`findings[]` with `title`, `body`, `confidence_score`,
//!   `priority` 0–3, `code_location.absolute_file_path`,
//!   `code_location.line_range`; `overall_correctness`);
//! - the text `codex exec review` prints (`- [P1] Title — /abs/path:2-4`,
//!   then the body indented by two spaces);
//! - a `codex exec --json` event stream (JSON lines) holding either of them,
//!   or native findings JSON, in its last completed `agent_message` item.
//!
//! Priority maps 0 → block, 1 → bug, 2 → should, 3 → nit; a `[Pn]` prefix
//! on the title is dropped (the severity carries it) and used when
//! `priority` is missing.
//!
//! Nothing is skipped without a word (SPEC §4.1):
//!
//! - in the rendered text, a bullet's title tag must be a priority or a
//!   severity word (`[P9]` is an error naming the line); every other line
//!   is read as tagged text reads it, so a tagged finding among the bullets
//!   is a finding and a line that holds a tag but cannot be read is an
//!   error naming the line;
//! - in the event stream, earlier `agent_message` items are the agent's
//!   progress notes and only the last one is the review (Codex's own
//!   `--output-last-message` reads the same); a `turn.failed` or `error`
//!   event after it, with no `turn.completed` since, means the review did
//!   not finish, and is an error.

use serde::Deserialize;
use serde_json::Value;

use super::{Draft, Drafts, FindingsError, Format, Severity, native, tagged};

#[derive(Deserialize)]
struct Review {
    findings: Option<Vec<ReviewFinding>>,
}

#[derive(Deserialize)]
struct ReviewFinding {
    title: String,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    priority: Option<i64>,
    #[serde(default)]
    code_location: Option<CodeLocation>,
}

#[derive(Deserialize)]
struct CodeLocation {
    #[serde(default)]
    absolute_file_path: Option<String>,
    #[serde(default)]
    line_range: Option<LineRange>,
}

#[derive(Deserialize)]
struct LineRange {
    #[serde(default)]
    start: Option<u64>,
    #[serde(default)]
    end: Option<u64>,
}

pub(crate) fn parse(text: &str) -> Result<Drafts, FindingsError> {
    if is_event_stream(text) {
        return parse_stream(text);
    }
    if text.trim_start().starts_with('{') {
        return parse_review_json(text);
    }
    parse_rendered(text)
}

/// The first non-empty line is a JSON object whose `type` names an event
/// (`thread.started`, `turn.started`, `item.completed`, ...).
pub(crate) fn is_event_stream(text: &str) -> bool {
    let Some(first) = text.lines().map(str::trim).find(|line| !line.is_empty()) else {
        return false;
    };
    #[derive(Deserialize)]
    struct Peek {
        #[serde(rename = "type")]
        kind: Option<Value>,
    }
    matches!(
        serde_json::from_str::<Peek>(first),
        Ok(Peek { kind: Some(Value::String(kind)) })
            if kind.contains('.') || kind == "error"
    )
}

/// Holds a line shaped like a rendered finding (`- [P1] Title — path:1-2`).
pub(crate) fn looks_rendered(text: &str) -> bool {
    text.lines().any(|line| rendered_bullet(line).is_some())
}

fn parse_stream(text: &str) -> Result<Drafts, FindingsError> {
    let mut message: Option<(usize, String)> = None;
    let mut failure: Option<String> = None;
    // A failure since the last agent message that no `turn.completed` followed.
    let mut unfinished: Option<String> = None;
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        let event: Value = serde_json::from_str(line).map_err(|err| FindingsError::Syntax {
            format: Format::Codex,
            line: number,
            column: err.column(),
            message: format!("event stream: {}", strip_position(&err)),
            hint: None,
        })?;
        let kind = event
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match kind {
            "item.completed" => {
                let item = event.get("item");
                let item_type = item
                    .and_then(|item| item.get("type"))
                    .and_then(Value::as_str);
                if item_type == Some("agent_message") {
                    let text = item
                        .and_then(|item| item.get("text"))
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    message = Some((number, text.to_string()));
                    unfinished = None;
                }
            }
            "turn.completed" => unfinished = None,
            "turn.failed" | "error" => {
                let detail = event
                    .get("error")
                    .and_then(|error| error.get("message"))
                    .or_else(|| event.get("message"))
                    .and_then(Value::as_str)
                    .unwrap_or("no message");
                let described = format!("line {number}: `{kind}`: {detail}");
                unfinished = Some(described.clone());
                failure = Some(described);
            }
            _ => {}
        }
    }
    let Some((number, message)) = message else {
        let reason =
            failure.map_or_else(String::new, |failure| format!(" (last failure: {failure})"));
        return Err(FindingsError::NotProven {
            format: Format::Codex,
            message: format!("the event stream has no completed `agent_message` item{reason}"),
            hint: "the reviewer did not finish; rerun it".into(),
        });
    };
    if let Some(unfinished) = unfinished {
        return Err(FindingsError::NotProven {
            format: Format::Codex,
            message: format!(
                "the turn failed after the last `agent_message` (line {number}): {unfinished}"
            ),
            hint: "the reviewer did not finish; rerun it".into(),
        });
    }
    parse_message(&message).map_err(|err| {
        FindingsError::invalid(
            Format::Codex,
            format!("line {number}: agent_message"),
            err.to_string(),
        )
    })
}

/// An agent message: review JSON, native JSON, rendered review text or
/// tagged text, maybe in a Markdown code fence.
fn parse_message(message: &str) -> Result<Drafts, FindingsError> {
    let inner = strip_fence(message.trim());
    if inner.is_empty() {
        return Err(FindingsError::Empty);
    }
    if inner.starts_with('{') {
        if is_review_json(inner) {
            return parse_review_json(inner);
        }
        return native::parse(inner);
    }
    parse_rendered(inner)
}

/// Review JSON rather than native findings: Codex's own keys appear.
pub(crate) fn is_review_json(text: &str) -> bool {
    [
        "\"overall_correctness\"",
        "\"code_location\"",
        "\"confidence_score\"",
    ]
    .iter()
    .any(|key| text.contains(key))
}

fn strip_fence(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let rest = rest.split_once('\n').map_or("", |(_, body)| body);
    rest.trim_end().strip_suffix("```").unwrap_or(rest).trim()
}

fn strip_position(err: &serde_json::Error) -> String {
    let text = err.to_string();
    let suffix = format!(" at line {} column {}", err.line(), err.column());
    text.strip_suffix(&suffix).unwrap_or(&text).to_string()
}

fn parse_review_json(text: &str) -> Result<Drafts, FindingsError> {
    super::require_object(text, Format::Codex)?;
    let review: Review =
        serde_json::from_str(text).map_err(|err| FindingsError::json(Format::Codex, &err))?;
    let Some(findings) = review.findings else {
        return Err(FindingsError::NotProven {
            format: Format::Codex,
            message: "missing key `findings`".into(),
            hint: "a clean codex review says `\"findings\": []`".into(),
        });
    };
    let mut drafts = Drafts::default();
    for (index, finding) in findings.into_iter().enumerate() {
        let (tag, title) = split_priority(&finding.title);
        let severity = match finding.priority {
            Some(priority) => priority_severity(priority).ok_or_else(|| {
                FindingsError::invalid(
                    Format::Codex,
                    format!("findings[{index}].priority"),
                    format!("`{priority}` is not a priority; accepted: 0, 1, 2, 3"),
                )
            })?,
            None => tag.unwrap_or(Severity::Bug),
        };
        let location = finding.code_location;
        let range = location
            .as_ref()
            .and_then(|location| location.line_range.as_ref());
        let start = range.and_then(|range| range.start);
        let end = range
            .and_then(|range| range.end)
            .filter(|end| Some(*end) != start);
        drafts.findings.push(Draft {
            severity: Some(severity),
            title: title.to_string(),
            file: location.and_then(|location| location.absolute_file_path),
            line: start,
            end_line: end,
            body: finding.body,
            ..Draft::default()
        });
    }
    Ok(drafts)
}

fn priority_severity(priority: i64) -> Option<Severity> {
    match priority {
        0 => Some(Severity::Block),
        1 => Some(Severity::Bug),
        2 => Some(Severity::Should),
        3 => Some(Severity::Nit),
        _ => None,
    }
}

/// `[P1] Title` → (bug, `Title`).
fn split_priority(title: &str) -> (Option<Severity>, &str) {
    let trimmed = title.trim();
    let tag = trimmed
        .strip_prefix("[P")
        .and_then(|rest| rest.split_once(']'))
        .and_then(|(digits, rest)| Some((priority_severity(digits.parse().ok()?)?, rest.trim())));
    match tag {
        Some((severity, rest)) if !rest.is_empty() => (Some(severity), rest),
        _ => (None, trimmed),
    }
}

struct Bullet<'a> {
    title: &'a str,
    path: &'a str,
    start: Option<u64>,
    end: Option<u64>,
}

/// `- [x] [P1] Title — /abs/path:2-4` (the checkbox is optional).
fn rendered_bullet(line: &str) -> Option<Bullet<'_>> {
    let rest = line.strip_prefix("- ")?;
    let rest = rest
        .strip_prefix("[x] ")
        .or_else(|| rest.strip_prefix("[ ] "))
        .unwrap_or(rest);
    let (title, location) = rest.rsplit_once(" — ")?;
    let (path, range) = location.trim().rsplit_once(':')?;
    let (start, end) = match range.split_once('-') {
        Some((start, end)) => (start.parse().ok()?, Some(end.parse().ok()?)),
        None => (range.parse().ok()?, None),
    };
    if path.is_empty() || title.trim().is_empty() {
        return None;
    }
    Some(Bullet {
        title,
        path,
        start: Some(start),
        end,
    })
}

fn parse_rendered(text: &str) -> Result<Drafts, FindingsError> {
    let mut reader = tagged::Reader::new(Format::Codex);
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let Some(bullet) = rendered_bullet(line) else {
            reader.line(number, line)?;
            continue;
        };
        let (tag, title) = tagged::title_tag(bullet.title).map_err(|message| {
            FindingsError::invalid(Format::Codex, format!("line {number}"), message)
        })?;
        reader.push(Draft {
            severity: Some(tag.unwrap_or(Severity::Bug)),
            title: title.to_string(),
            file: Some(bullet.path.to_string()),
            line: bullet.start,
            end_line: bullet.end.filter(|end| Some(*end) != bullet.start),
            ..Draft::default()
        });
    }
    let (drafts, clean) = reader.finish();
    if drafts.findings.is_empty() && drafts.resolved.is_empty() && !clean {
        // No findings block: only an explicit clean statement will do.
        return Err(FindingsError::NotProven {
            format: Format::Codex,
            message: "no review findings (`- [P1] title — /path:1-2`) and no `[clean]` line".into(),
            hint: "ask codex for the review JSON (`codex exec --json` or `--output-schema`) so a clean review is proven".into(),
        });
    }
    Ok(drafts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bullets_parse_with_and_without_checkbox() {
        let bullet = rendered_bullet("- [x] [P1] Fix it — /r/a.rs:2-4").expect("parses");
        assert_eq!(
            (bullet.title, bullet.path, bullet.start, bullet.end),
            ("[P1] Fix it", "/r/a.rs", Some(2), Some(4))
        );
        let bullet = rendered_bullet("- Title — with dash — /r/b.rs:7").expect("parses");
        assert_eq!(
            (bullet.title, bullet.start, bullet.end),
            ("Title — with dash", Some(7), None)
        );
        assert!(rendered_bullet("- just a list item").is_none());
        assert!(rendered_bullet("- a — b:c").is_none());
    }

    #[test]
    fn priority_prefixes_split() {
        assert_eq!(split_priority("[P0] Boom"), (Some(Severity::Block), "Boom"));
        assert_eq!(split_priority("[P9] Boom"), (None, "[P9] Boom"));
        assert_eq!(split_priority("Plain"), (None, "Plain"));
    }

    fn rendered_error(text: &str) -> String {
        parse_rendered(text).expect_err(text).to_string()
    }

    #[test]
    fn rendered_lines_that_hold_a_tag_are_read_or_refused() {
        let table = [
            (
                "Full review comments:\n\n- [P9] Bad — /r/a.rs:1-2\n  body\n",
                "codex review: line 3: unknown severity `P9`; accepted: nit,",
            ),
            (
                "- [P1] Good — /r/a.rs:1\n- [P1]\n",
                "codex review: line 2: `[P1]` has no title",
            ),
            (
                "- [P1] Good — /r/a.rs:1\n\nThe remaining [P2] is in a.rs:9.\n",
                "codex review: line 3: `[P2]` is not at the start of the line",
            ),
            (
                "- [P1] Good — /r/a.rs:1\n1. [bgu] src/b.rs:3: x\n",
                "codex review: line 2: unknown severity `bgu`",
            ),
        ];
        for (text, want) in table {
            let err = rendered_error(text);
            assert!(err.starts_with(want), "{text:?}: {err}");
        }
    }

    #[test]
    fn tagged_findings_among_bullets_are_findings() {
        let drafts = parse_rendered(
            "- [P1] Bullet — /r/a.rs:1-2\n  its body, which may say [P3]\n\n\
             1. [P2] src/b.rs:3: numbered\n- [P3] No place\n- Untagged — /r/c.rs:4\n",
        )
        .expect("parses");
        let got: Vec<(Option<Severity>, &str, Option<&str>)> = drafts
            .findings
            .iter()
            .map(|d| (d.severity, d.title.as_str(), d.body.as_deref()))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    Some(Severity::Bug),
                    "Bullet",
                    Some("its body, which may say [P3]")
                ),
                (Some(Severity::Should), "numbered", None),
                (Some(Severity::Nit), "No place", None),
                (Some(Severity::Bug), "Untagged", None),
            ]
        );
    }

    #[test]
    fn a_failure_after_the_last_message_is_no_review() {
        let message =
            r#"{"type":"item.completed","item":{"type":"agent_message","text":"No findings."}}"#;
        let failed = r#"{"type":"turn.failed","error":{"message":"stream disconnected"}}"#;
        let retried = r#"{"type":"error","message":"Reconnecting... 1/5"}"#;
        let completed = r#"{"type":"turn.completed","usage":{}}"#;
        let err = parse_stream(&format!("{message}\n{failed}\n"))
            .expect_err("unfinished")
            .to_string();
        assert!(
            err.starts_with(
                "codex review: the turn failed after the last `agent_message` (line 1): \
                 line 2: `turn.failed`: stream disconnected"
            ),
            "{err}"
        );
        // A retried stream error that the turn survived is no failure.
        let drafts = parse_stream(&format!("{retried}\n{message}\n{retried}\n{completed}\n"))
            .expect("completed");
        assert!(drafts.findings.is_empty());
    }

    #[test]
    fn fenced_messages_unwrap() {
        assert_eq!(strip_fence("```json\n{\"a\":1}\n```"), "{\"a\":1}");
        assert_eq!(strip_fence("{}"), "{}");
    }
}
