//! Native findings JSON (`{"findings": [...], "resolved": [...]}`, the shape
//! of contracts/findings.schema.json), also inside a Claude Code
//! `--output-format json` result's `structured_output`. Pure.
//!
//! Every element of `findings` is a finding or an error naming it. Other
//! keys are ignored, except one that holds finding-shaped objects (an array
//! of objects with a `title` or `severity`, like `"issues": [...]`): that
//! is an error, since those findings would otherwise be dropped unread
//! (SPEC §4.1).

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::Value;

use super::{Draft, Drafts, FindingsError, Format, Severity};

struct Document {
    findings: Option<Vec<NativeFinding>>,
    resolved: Option<Vec<String>>,
    /// The first other key that holds finding-shaped objects.
    stray: Option<String>,
}

impl<'de> Deserialize<'de> for Document {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct DocumentVisitor;

        impl<'de> Visitor<'de> for DocumentVisitor {
            type Value = Document;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a findings object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Document, A::Error> {
                let mut findings: Option<Option<Vec<NativeFinding>>> = None;
                let mut resolved: Option<Option<Vec<String>>> = None;
                let mut stray = None;
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "findings" if findings.is_some() => {
                            return Err(de::Error::duplicate_field("findings"));
                        }
                        "findings" => findings = Some(map.next_value()?),
                        "resolved" if resolved.is_some() => {
                            return Err(de::Error::duplicate_field("resolved"));
                        }
                        "resolved" => resolved = Some(map.next_value()?),
                        _ => {
                            let value: Value = map.next_value()?;
                            if stray.is_none() && holds_findings(&value) {
                                stray = Some(key);
                            }
                        }
                    }
                }
                Ok(Document {
                    findings: findings.flatten(),
                    resolved: resolved.flatten(),
                    stray,
                })
            }
        }

        deserializer.deserialize_map(DocumentVisitor)
    }
}

/// An array of objects at least one of which has a `title` or `severity`.
fn holds_findings(value: &Value) -> bool {
    value.as_array().is_some_and(|items| {
        items.iter().any(|item| {
            item.as_object().is_some_and(|object| {
                object.contains_key("title") || object.contains_key("severity")
            })
        })
    })
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
            hint: "run claude with `--json-schema \"$(referee schema)\"`".into(),
        });
    };
    let document: Document = serde_json::from_value(output).map_err(|err| {
        FindingsError::invalid(Format::Native, "structured_output", err.to_string())
    })?;
    convert(document)
}

fn convert(document: Document) -> Result<Drafts, FindingsError> {
    if let Some(key) = document.stray {
        return Err(FindingsError::invalid(
            Format::Native,
            format!("`{key}`"),
            crate::exit::Hinted::new(
                "holds finding-shaped objects, but only `findings` is read",
                "move them into `findings`",
            ),
        ));
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_outside_findings_are_errors() {
        let table = [
            (
                r#"{"findings": [], "issues": [{"severity": "bug", "title": "x"}]}"#,
                "native json: `issues`: holds finding-shaped objects, but only `findings` is read\nhint:",
            ),
            (
                r#"{"blocking": [{"title": "x"}]}"#,
                "native json: `blocking`: holds finding-shaped objects",
            ),
            (
                r#"{"findings": [], "findings": []}"#,
                "native json: line 1 column 27: duplicate field `findings`",
            ),
        ];
        for (text, want) in table {
            let err = parse(text).expect_err(text);
            let err = crate::report::error::render(&err.into());
            assert!(err.starts_with(want), "{text}: {err}");
        }
    }

    #[test]
    fn other_keys_are_ignored() {
        for text in [
            r#"{"findings": [], "summary": "fine", "files": ["a.rs"], "checks": [{"name": "t", "ok": true}]}"#,
            r#"{"findings": null, "resolved": null, "findings_count": 0}"#,
        ] {
            match parse(text) {
                Ok(drafts) => assert!(drafts.findings.is_empty(), "{text}"),
                Err(err) => assert!(
                    err.to_string().contains("missing key `findings`"),
                    "{text}: {err}"
                ),
            }
        }
    }
}
