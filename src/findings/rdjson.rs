//! reviewdog's Diagnostic Format: rdjson (one `DiagnosticResult` object,
//! `{"source", "severity", "diagnostics": [...]}`, as `ruff check
//! --output-format rdjson` and Biome's `--reporter=rdjson` write it) and
//! rdjsonl (one `Diagnostic` object per line). Pure.
//!
//! Each diagnostic is a finding: `location.path` and
//! `location.range.start.line` place it, `code.value` is its rule, the
//! first line of `message` its title (the whole message the body when
//! longer). Its `severity`, else the result's, maps `ERROR` → bug,
//! `WARNING` → should, `INFO` → nit; `UNKNOWN_SEVERITY` or none given is a
//! warning. `"diagnostics": []` is a clean round (the tool ran and said
//! so); a diagnostic without a `message`, or an unknown severity, is an
//! error naming it (`diagnostics[3].severity`).

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

use super::{Draft, Drafts, FindingsError, Format, Severity};

pub(crate) fn parse(text: &str) -> Result<Drafts, FindingsError> {
    let mut drafts = Drafts::default();
    let start = text.trim_start();
    if start.starts_with('{') && !is_lines(start) {
        let doc: Value =
            serde_json::from_str(start).map_err(|err| FindingsError::json(Format::Rdjson, &err))?;
        let Some(result) = doc.as_object() else {
            return Err(FindingsError::invalid(
                Format::Rdjson,
                "top level",
                "not a JSON object",
            ));
        };
        let Some(list) = result.get("diagnostics") else {
            return Err(FindingsError::invalid(
                Format::Rdjson,
                "top level",
                "missing key `diagnostics`: not a reviewdog rdjson result",
            ));
        };
        let Some(list) = list.as_array() else {
            return Err(FindingsError::invalid(
                Format::Rdjson,
                "diagnostics",
                "not a list",
            ));
        };
        let fallback = level(result.get("severity"), "severity")?;
        for (index, item) in list.iter().enumerate() {
            let at = format!("diagnostics[{index}]");
            drafts.findings.push(diagnostic(item, fallback, &at)?);
        }
        return Ok(drafts);
    }
    // rdjsonl: a diagnostic per line; blank lines are nothing.
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("line {}", index + 1);
        let item: Value = serde_json::from_str(line)
            .map_err(|err| FindingsError::invalid(Format::Rdjson, &at, err.to_string()))?;
        drafts.findings.push(diagnostic(&item, None, &at)?);
    }
    if drafts.findings.is_empty() {
        return Err(FindingsError::NotProven {
            format: Format::Rdjson,
            message: "no diagnostic line: an empty rdjsonl stream does not say the tool ran".into(),
            hint: "a clean run in rdjson says `{\"diagnostics\": []}`".into(),
        });
    }
    Ok(drafts)
}

/// The keys detection looks at, read without keeping any value: a large
/// log of another format is skipped over, not built.
#[derive(Deserialize)]
struct Peek {
    #[serde(default)]
    message: Option<IgnoredAny>,
    #[serde(default)]
    location: Option<IgnoredAny>,
    #[serde(default)]
    diagnostics: Option<IgnoredAny>,
    #[serde(default)]
    findings: Option<IgnoredAny>,
    #[serde(default)]
    runs: Option<IgnoredAny>,
}

/// Whether `text` is rdjsonl: its first line a whole object that is a
/// diagnostic (`message` and `location`), not a result.
fn is_lines(text: &str) -> bool {
    let first = text.lines().next().unwrap_or_default();
    first.trim_start().starts_with('{')
        && serde_json::from_str::<Peek>(first)
            .is_ok_and(|peek| peek.message.is_some() && peek.location.is_some())
}

/// Whether `text` (JSON) is reviewdog's: a result with `diagnostics`, or
/// diagnostic lines.
pub(crate) fn looks_like(text: &str) -> bool {
    let start = text.trim_start();
    if is_lines(start) {
        return true;
    }
    // An object only: serde would fill a struct from an array's items.
    start.starts_with('{')
        && serde_json::from_str::<Peek>(start).is_ok_and(|peek| {
            peek.diagnostics.is_some() && peek.findings.is_none() && peek.runs.is_none()
        })
}

/// A severity word (`at` names where it was written), `None` when absent
/// or `UNKNOWN_SEVERITY`.
fn level(value: Option<&Value>, at: &str) -> Result<Option<Severity>, FindingsError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(word)) => match word.as_str() {
            "ERROR" => Ok(Some(Severity::Bug)),
            "WARNING" => Ok(Some(Severity::Should)),
            "INFO" => Ok(Some(Severity::Nit)),
            "UNKNOWN_SEVERITY" | "" => Ok(None),
            other => Err(FindingsError::invalid(
                Format::Rdjson,
                at,
                format!(
                    "unknown severity `{other}`; accepted: ERROR, WARNING, INFO, UNKNOWN_SEVERITY"
                ),
            )),
        },
        Some(other) => Err(FindingsError::invalid(
            Format::Rdjson,
            at,
            format!("severity must be a string, not {other}"),
        )),
    }
}

fn diagnostic(item: &Value, fallback: Option<Severity>, at: &str) -> Result<Draft, FindingsError> {
    let Some(object) = item.as_object() else {
        return Err(FindingsError::invalid(
            Format::Rdjson,
            at,
            "not a JSON object",
        ));
    };
    let message = object
        .get("message")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .ok_or_else(|| FindingsError::invalid(Format::Rdjson, at, "no `message`"))?;
    let severity = level(object.get("severity"), &format!("{at}.severity"))?
        .or(fallback)
        .unwrap_or(Severity::Should);
    let location = object.get("location");
    let file = location
        .and_then(|l| l.get("path"))
        .and_then(Value::as_str)
        .filter(|p| !p.trim().is_empty())
        .map(str::to_string);
    let line = location
        .and_then(|l| l.pointer("/range/start/line"))
        .and_then(Value::as_u64);
    let end_line = location
        .and_then(|l| l.pointer("/range/end/line"))
        .and_then(Value::as_u64)
        .filter(|end| Some(*end) != line);
    let rule = object
        .get("code")
        .and_then(|c| c.get("value"))
        .and_then(Value::as_str)
        .filter(|c| !c.trim().is_empty())
        .map(str::to_string);
    let (title, body) = super::titled(message);
    Ok(Draft {
        severity: Some(severity),
        title,
        file,
        line,
        end_line,
        body,
        rule,
        ..Draft::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Vec<Draft>, String> {
        parse(text).map(|d| d.findings).map_err(|e| e.to_string())
    }

    #[test]
    fn a_result_and_its_lines_read_alike() {
        let one = r#"{"message":"`os` imported but unused","location":{"path":"app.py","range":{"start":{"line":1,"column":8},"end":{"line":1,"column":10}}},"severity":"ERROR","code":{"value":"F401"}}"#;
        let two = r#"{"message":"Line too long\nsee the style guide","location":{"path":"b.py","range":{"start":{"line":4},"end":{"line":6}}}}"#;
        let result = format!(
            r#"{{"source":{{"name":"ruff"}},"severity":"INFO","diagnostics":[{one},{two}]}}"#
        );
        let from_result = read(&result).unwrap();
        assert_eq!(from_result.len(), 2);
        assert_eq!(from_result[0].severity, Some(Severity::Bug));
        assert_eq!(from_result[0].file.as_deref(), Some("app.py"));
        assert_eq!(from_result[0].line, Some(1));
        assert_eq!(from_result[0].end_line, None);
        assert_eq!(from_result[0].rule.as_deref(), Some("F401"));
        // The result's severity is the diagnostic's when it has none.
        assert_eq!(from_result[1].severity, Some(Severity::Nit));
        assert_eq!(from_result[1].title, "Line too long");
        assert_eq!(
            from_result[1].body.as_deref(),
            Some("Line too long\nsee the style guide")
        );
        assert_eq!(from_result[1].end_line, Some(6));
        let from_lines = read(&format!("{one}\n\n{two}\n")).unwrap();
        assert_eq!(from_lines.len(), 2);
        assert_eq!(from_lines[1].severity, Some(Severity::Should));
        assert!(looks_like(&result) && looks_like(&format!("{one}\n{two}")));
        assert!(!looks_like(r#"{"findings":[],"diagnostics":[]}"#));
    }

    #[test]
    fn an_empty_result_is_clean_and_what_is_unreadable_is_named() {
        assert!(
            read(r#"{"diagnostics":[],"severity":"WARNING"}"#)
                .unwrap()
                .is_empty()
        );
        for (text, want) in [
            (
                r#"{"diagnostics":[{"location":{"path":"a"}}]}"#,
                "rdjson: diagnostics[0]: no `message`",
            ),
            (
                r#"{"diagnostics":[{"message":"m","severity":"FATAL"}]}"#,
                "rdjson: diagnostics[0].severity: unknown severity `FATAL`; accepted: ERROR, WARNING, INFO, UNKNOWN_SEVERITY",
            ),
            (
                r#"{"source":{}}"#,
                "rdjson: top level: missing key `diagnostics`: not a reviewdog rdjson result",
            ),
            (
                "{\"message\":\"m\",\"location\":{}}\nnot json",
                "rdjson: line 2: expected ident at line 1 column 2",
            ),
            (
                "",
                "rdjson: no diagnostic line: an empty rdjsonl stream does not say the tool ran",
            ),
        ] {
            assert_eq!(read(text).unwrap_err(), want, "{text}");
        }
    }
}
