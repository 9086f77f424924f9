//! Native findings JSON (`{"findings": [...], "resolved": [...]}`, the shape
//! of contracts/findings.schema.json), also inside a Claude Code
//! `--output-format json` result's `structured_output`. Pure.

use serde::Deserialize;
use serde_json::Value;

use super::{Draft, Drafts, FindingsError, Format, Severity};

#[derive(Deserialize)]
struct Document {
    findings: Option<Vec<NativeFinding>>,
    #[serde(default)]
    resolved: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct NativeFinding {
    #[serde(default)]
    id: Option<String>,
    severity: String,
    title: String,
    #[serde(default)]
    file: Option<String>,
    #[serde(default)]
    line: Option<u64>,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    undoes: Option<String>,
    #[serde(default, alias = "category")]
    rule: Option<String>,
}

/// A Claude Code `--output-format json` result, as far as we need it.
#[derive(Deserialize)]
struct ClaudeResult {
    #[serde(default)]
    subtype: Option<String>,
    #[serde(default)]
    is_error: Option<bool>,
    #[serde(default)]
    structured_output: Option<Value>,
}

/// Reads native JSON, or a Claude result wrapping it.
pub(crate) fn parse(text: &str) -> Result<Drafts, FindingsError> {
    super::require_object(text, Format::Native)?;
    if is_claude_result(text) {
        return parse_claude(text);
    }
    let document: Document =
        serde_json::from_str(text).map_err(|err| FindingsError::json(Format::Native, &err))?;
    convert(document)
}

/// A top-level object whose `type` is `"result"`.
pub(crate) fn is_claude_result(text: &str) -> bool {
    #[derive(Deserialize)]
    struct Peek {
        #[serde(rename = "type")]
        kind: Option<Value>,
    }
    matches!(
        serde_json::from_str::<Peek>(text),
        Ok(Peek { kind: Some(Value::String(kind)) }) if kind == "result"
    )
}

fn parse_claude(text: &str) -> Result<Drafts, FindingsError> {
    let result: ClaudeResult =
        serde_json::from_str(text).map_err(|err| FindingsError::json(Format::Native, &err))?;
    if result.is_error == Some(true) {
        return Err(FindingsError::NotProven {
            format: Format::Native,
            message: format!(
                "the claude result is an error (subtype `{}`), not a review",
                result.subtype.as_deref().unwrap_or("unknown")
            ),
            hint: "rerun the reviewer; a failed review is never a clean round".into(),
        });
    }
    let Some(output) = result.structured_output.filter(|value| !value.is_null()) else {
        return Err(FindingsError::NotProven {
            format: Format::Native,
            message: "the claude result has no `structured_output`: no structured review".into(),
            hint: "run claude with `--json-schema contracts/findings.schema.json`".into(),
        });
    };
    let document: Document = serde_json::from_value(output).map_err(|err| {
        FindingsError::invalid(Format::Native, "structured_output", err.to_string())
    })?;
    convert(document)
}

fn convert(document: Document) -> Result<Drafts, FindingsError> {
    let Some(findings) = document.findings else {
        return Err(FindingsError::NotProven {
            format: Format::Native,
            message: "missing key `findings`".into(),
            hint: "a clean review says `\"findings\": []`".into(),
        });
    };
    let mut drafts = Vec::with_capacity(findings.len());
    for (index, finding) in findings.into_iter().enumerate() {
        let severity: Severity = finding.severity.parse().map_err(|err| {
            FindingsError::invalid(
                Format::Native,
                format!("findings[{index}].severity"),
                format!("{err}"),
            )
        })?;
        let id = finding
            .id
            .map(|id| id.trim().to_string())
            .filter(|id| !id.is_empty());
        drafts.push(Draft {
            id,
            id_source: None,
            severity: Some(severity),
            title: finding.title,
            file: finding.file,
            line: finding.line,
            end_line: None,
            body: finding.body,
            undoes: finding.undoes,
            rule: finding.rule,
        });
    }
    let resolved = document
        .resolved
        .unwrap_or_default()
        .into_iter()
        .map(|id| id.trim().to_string())
        .filter(|id| !id.is_empty())
        .collect();
    Ok(Drafts {
        findings: drafts,
        resolved,
    })
}
