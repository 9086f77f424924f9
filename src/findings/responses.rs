//! The writer's responses to findings (SPEC §3):
//! `{"responses": [{"id": "F1", "status": "fixed|disputed|wontfix", "note": "..."}]}`.
//! Pure.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the writer says it did about a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Fixed,
    Disputed,
    Wontfix,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Fixed => "fixed",
            Status::Disputed => "disputed",
            Status::Wontfix => "wontfix",
        }
    }
}

/// One response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Response {
    pub id: String,
    pub status: Status,
    #[serde(default)]
    pub note: String,
}

/// Why a responses document was refused, with where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResponsesError {
    #[error("not JSON: line {line} column {column}: {message}")]
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{at}: {message}")]
    Invalid { at: String, message: String },
}

fn invalid(at: impl Into<String>, message: impl Into<String>) -> ResponsesError {
    ResponsesError::Invalid {
        at: at.into(),
        message: message.into(),
    }
}

/// Reads a responses document.
pub fn parse(input: &[u8]) -> Result<Vec<Response>, ResponsesError> {
    let value: Value = serde_json::from_slice(input).map_err(|e| ResponsesError::Syntax {
        line: e.line(),
        column: e.column(),
        message: {
            let text = e.to_string();
            let suffix = format!(" at line {} column {}", e.line(), e.column());
            text.strip_suffix(&suffix).unwrap_or(&text).to_string()
        },
    })?;
    let Some(list) = value.get("responses") else {
        return Err(invalid(
            "top level",
            "must be an object with a `responses` list: {\"responses\": [{\"id\": \"F1\", \"status\": \"fixed\", \"note\": \"...\"}]}",
        ));
    };
    let Some(list) = list.as_array() else {
        return Err(invalid("`responses`", "must be a list"));
    };
    let mut out = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let at = format!("responses[{i}]");
        let Some(obj) = item.as_object() else {
            return Err(invalid(format!("`{at}`"), "must be an object"));
        };
        let id = match obj.get("id") {
            Some(Value::String(id)) if !id.trim().is_empty() => id.trim().to_string(),
            Some(Value::Number(n)) => n.to_string(),
            other => {
                return Err(invalid(
                    format!("`{at}.id`"),
                    format!("must be a finding id, not {}", shown(other)),
                ));
            }
        };
        let status = match obj.get("status").and_then(Value::as_str) {
            Some("fixed") => Status::Fixed,
            Some("disputed") => Status::Disputed,
            Some("wontfix") => Status::Wontfix,
            _ => {
                return Err(invalid(
                    format!("`{at}.status`"),
                    format!(
                        "must be fixed, disputed or wontfix, not {}",
                        shown(obj.get("status"))
                    ),
                ));
            }
        };
        let note = match obj.get("note") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(note)) => note.clone(),
            other => {
                return Err(invalid(
                    format!("`{at}.note`"),
                    format!("must be text, not {}", shown(other)),
                ));
            }
        };
        out.push(Response { id, status, note });
    }
    Ok(out)
}

fn shown(value: Option<&Value>) -> String {
    match value {
        None => "missing".into(),
        Some(v) => {
            let text = v.to_string();
            if text.len() > 60 {
                format!("`{}…`", text.chars().take(60).collect::<String>())
            } else {
                format!("`{text}`")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_status() {
        let out = parse(
            br#"{"responses": [{"id": "F1", "status": "fixed"},
                               {"id": "F2", "status": "disputed", "note": "spec says so"},
                               {"id": 3, "status": "wontfix", "note": null}]}"#,
        )
        .unwrap();
        assert_eq!(out.len(), 3);
        assert_eq!(out[1].note, "spec says so");
        assert_eq!(out[2].id, "3");
        assert_eq!(out[2].status, Status::Wontfix);
    }

    #[test]
    fn errors_name_the_field_and_value() {
        let cases: [(&[u8], &str); 5] = [
            (b"{", "not JSON: line 1 column 1"),
            (
                b"[]",
                "top level: must be an object with a `responses` list",
            ),
            (
                br#"{"responses": [{"status": "fixed"}]}"#,
                "`responses[0].id`: must be a finding id, not missing",
            ),
            (
                br#"{"responses": [{"id": "F1", "status": "done"}]}"#,
                "`responses[0].status`: must be fixed, disputed or wontfix, not `\"done\"`",
            ),
            (
                br#"{"responses": [{"id": "F1", "status": "fixed", "note": 3}]}"#,
                "`responses[0].note`: must be text, not `3`",
            ),
        ];
        for (input, want) in cases {
            let err = parse(input).unwrap_err().to_string();
            assert!(err.starts_with(want), "{err}");
        }
    }
}
