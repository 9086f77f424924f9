//! The request the judge reads: `{questions, state}` as compact JSON with
//! sorted keys, every string value redacted, and a size limit on the state.
//! Pure: the caller gathers the state and sends the bytes.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::JudgeError;
use super::questions::{Kind, Question};
use crate::findings::Severity;
use crate::redact::redact_str;

/// What the judge is told about the loop.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct State {
    /// The contract's `judge.use_case`: what the work is for.
    pub use_case: String,
    /// The contract's `judge.what`: what is judged ("the patch").
    pub what: String,
    /// The findings of the latest round.
    pub findings: Vec<StateFinding>,
    /// Every round so far, oldest first.
    pub rounds: Vec<StateRound>,
}

/// One finding as the judge sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StateFinding {
    pub id: String,
    pub severity: Severity,
    pub title: String,
    pub file: Option<String>,
    pub line: Option<u64>,
    /// How it stands after the round (`new`, `open`, `reopened`, `waived`…).
    pub state: String,
    /// A panel's reviewers that reported it (SPEC §6.1): the agreement.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reported_by: Vec<String>,
}

/// One round's counts and patch size, as the ledger holds them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StateRound {
    pub round: u32,
    pub opened: u32,
    pub closed: u32,
    pub reopened: u32,
    pub must_fix_left: u32,
    pub below_floor_open: u32,
    pub diff_added: u64,
    pub diff_removed: u64,
}

/// The outcome of building a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Send `body`; `state_bytes` is the serialized state's size.
    Ready { body: String, state_bytes: u64 },
    /// The serialized state is `bytes` long, over `limit`: nothing is sent,
    /// and the caller records the omission.
    Omitted { bytes: u64, limit: u64 },
}

/// The request for `state` and `questions`, or its omission when the state
/// serializes to more than `max_state_bytes`. The questions are sent with
/// `{what}` filled from `state.what`. The limit applies to the state alone,
/// as it will be sent (redacted): the questions are fixed by the contract,
/// while the state grows with every round.
pub fn build_request(
    state: &State,
    questions: &[Question],
    max_state_bytes: u64,
) -> Result<Request, JudgeError> {
    let state_value = serde_json::to_value(state).map_err(|e| JudgeError::Encode(e.to_string()))?;
    let state_value = sort_keys(redact_values(state_value));
    let state_bytes = state_value.to_string().len() as u64;
    if state_bytes > max_state_bytes {
        return Ok(Request::Omitted {
            bytes: state_bytes,
            limit: max_state_bytes,
        });
    }
    let filled: Vec<Question> = questions.iter().map(|q| q.filled(&state.what)).collect();
    let questions_value =
        serde_json::to_value(&filled).map_err(|e| JudgeError::Encode(e.to_string()))?;
    let mut request = Map::new();
    request.insert("questions".into(), questions_value);
    request.insert("state".into(), state_value);
    let request = sort_keys(redact_values(Value::Object(request)));
    Ok(Request::Ready {
        body: request.to_string(),
        state_bytes,
    })
}

/// Every string value passed through [`redact_str`]; keys stay as they are,
/// and the document is never redacted as text, where a pattern could reach
/// across a value's end or into its JSON escapes.
pub fn redact_values(value: Value) -> Value {
    match value {
        Value::String(text) => Value::String(redact_str(&text)),
        Value::Array(items) => Value::Array(items.into_iter().map(redact_values).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(key, value)| (key, redact_values(value)))
                .collect(),
        ),
        other => other,
    }
}

/// Every object's keys in byte order, at every depth. The crate enables
/// serde_json's `preserve_order`, so objects keep insertion order unless
/// sorted here; sorted keys make equal states serialize to equal bytes.
pub fn sort_keys(value: Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.into_iter().map(sort_keys).collect()),
        Value::Object(map) => {
            let sorted: BTreeMap<String, Value> = map
                .into_iter()
                .map(|(key, value)| (key, sort_keys(value)))
                .collect();
            Value::Object(sorted.into_iter().collect())
        }
        other => other,
    }
}

/// A JSON Schema for the answers to `questions`, in the shape [`super::validate`]
/// accepts, for engines that constrain a model's output (`claude -p
/// --json-schema`, `codex exec --output-schema`). The schema cannot say
/// "sums to 1" or "highest on `choice`"; validation still checks those.
pub fn answers_schema(questions: &[Question]) -> Value {
    let unit = json!({"type": "number", "minimum": 0, "maximum": 1});
    let mut properties = Map::new();
    for q in questions {
        let answer = match &q.kind {
            Kind::YesNo => json!({
                "type": "object",
                "additionalProperties": false,
                "required": ["probability"],
                "properties": {"probability": unit.clone()},
            }),
            Kind::Choice { options } => {
                let ids: Vec<&str> = options.iter().map(|o| o.id.as_str()).collect();
                let per_option: Map<String, Value> = ids
                    .iter()
                    .map(|id| (id.to_string(), unit.clone()))
                    .collect();
                json!({
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["choice", "probabilities", "confidence"],
                    "properties": {
                        "choice": {"type": "string", "enum": ids},
                        "probabilities": {
                            "type": "object",
                            "additionalProperties": false,
                            "required": ids,
                            "properties": per_option,
                        },
                        "confidence": unit.clone(),
                    },
                })
            }
        };
        properties.insert(q.id.clone(), answer);
    }
    let ids: Vec<&str> = questions.iter().map(|q| q.id.as_str()).collect();
    sort_keys(json!({
        "type": "object",
        "additionalProperties": false,
        // Strict structured outputs (OpenAI) need every property required.
        "required": ["answers", "model"],
        "properties": {
            "model": {"type": "string"},
            "answers": {
                "type": "object",
                "additionalProperties": false,
                "required": ids,
                "properties": properties,
            },
        },
    }))
}

#[cfg(test)]
mod tests;
