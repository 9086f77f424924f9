//! The Stop payload an agent writes on the hook's stdin: one JSON object.
//! Claude Code 2.1.197 sends `session_id`, `transcript_path`, `cwd`,
//! `prompt_id`, `permission_mode`, `hook_event_name`, `stop_hook_active`,
//! `last_assistant_message`, …; Codex 0.171 sends `session_id`, `turn_id`,
//! `transcript_path`, `cwd`, `hook_event_name`, `model`, `permission_mode`,
//! `stop_hook_active`, `last_assistant_message` (tests/mock/FACTS.md);
//! Gemini CLI 0.61's `AfterAgent` hook sends `session_id`,
//! `transcript_path`, `cwd`, `hook_event_name: "AfterAgent"`, `timestamp`,
//! `prompt`, `prompt_response`, `stop_hook_active`. Pure.

use std::path::PathBuf;

use serde_json::Value;

/// The agent whose session the hook serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    Claude,
    Codex,
    Gemini,
}

impl Agent {
    pub fn as_str(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
        }
    }
}

/// What the hook reads from a Stop payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Payload {
    pub agent: Agent,
    /// The session's working folder: the repository is found from it.
    pub cwd: PathBuf,
    pub session_id: Option<String>,
    pub transcript_path: Option<PathBuf>,
    /// The agent stops again right after a Stop hook blocked it.
    pub stop_hook_active: bool,
    /// `hook_event_name`: `Stop` (or absent); anything else is not a stop
    /// this hook referees (a `SubagentStop`, say).
    pub event: Option<String>,
}

/// Why a payload was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PayloadError {
    #[error("the payload on stdin is empty")]
    Empty,
    #[error("the payload is not JSON: {0}")]
    Syntax(String),
    #[error("the payload is not a JSON object")]
    NotObject,
    #[error("the payload has no `cwd` string")]
    NoCwd,
    #[error("the payload field `{field}` must be {what}")]
    Field {
        field: &'static str,
        what: &'static str,
    },
}

impl Payload {
    /// Reads a payload; `agent` (from `--agent`) overrides detection.
    pub fn parse(bytes: &[u8], agent: Option<Agent>) -> Result<Payload, PayloadError> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(PayloadError::Empty);
        }
        let value: Value =
            serde_json::from_slice(bytes).map_err(|e| PayloadError::Syntax(e.to_string()))?;
        let Value::Object(map) = &value else {
            return Err(PayloadError::NotObject);
        };
        let text = |field: &'static str| -> Result<Option<String>, PayloadError> {
            match map.get(field) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(PayloadError::Field {
                    field,
                    what: "a string",
                }),
            }
        };
        let cwd = text("cwd")?
            .filter(|c| !c.is_empty())
            .ok_or(PayloadError::NoCwd)?;
        let stop_hook_active = match map.get("stop_hook_active") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                return Err(PayloadError::Field {
                    field: "stop_hook_active",
                    what: "true or false",
                });
            }
        };
        Ok(Payload {
            agent: agent.unwrap_or_else(|| detect(&value)),
            cwd: PathBuf::from(cwd),
            session_id: text("session_id")?,
            transcript_path: text("transcript_path")?
                .filter(|p| !p.is_empty())
                .map(PathBuf::from),
            stop_hook_active,
            event: text("hook_event_name")?,
        })
    }

    /// Whether this is a stop of the main agent's turn (Gemini's
    /// `AfterAgent`).
    pub fn is_stop(&self) -> bool {
        self.event
            .as_deref()
            .is_none_or(|e| e == "Stop" || e == "AfterAgent")
    }
}

/// Gemini's event is `AfterAgent`; Codex names the turn (`turn_id`) and
/// the model (`model`); Claude Code sends neither (it sends `prompt_id`).
fn detect(value: &Value) -> Agent {
    if value.get("hook_event_name").and_then(Value::as_str) == Some("AfterAgent") {
        Agent::Gemini
    } else if value.get("turn_id").is_some() || value.get("model").is_some_and(Value::is_string) {
        Agent::Codex
    } else {
        Agent::Claude
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real payloads, as the CLIs sent them (tests/mock/FACTS.md).
    const CLAUDE: &str = r#"{"session_id":"b39d23f8-a223-4b66-bfcb-385c204f616e","transcript_path":"/tmp/hx/home/claude/projects/-tmp-hx-repo/b39d23f8.jsonl","cwd":"/tmp/hx/repo","prompt_id":"e9108e4e-f93c-4aa3-873d-88d6a58ecbd7","permission_mode":"acceptEdits","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"Done first.","background_tasks":[],"session_crons":[]}"#;
    const GEMINI: &str = r#"{"session_id":"e79207f7-80d2-4f37-ab4d-29eb11380b96","transcript_path":"/tmp/gx/home/.gemini/tmp/repo/chats/session-2026-12-03T12-03-e79207f7.jsonl","cwd":"/tmp/gx/repo","hook_event_name":"AfterAgent","timestamp":"2026-12-03T12:03:05.892Z","prompt":"say hi","prompt_response":"Fixed after block.","stop_hook_active":true}"#;
    const CODEX: &str = r#"{"session_id":"01a22d6a-31b3-74c0-b0c8-f8e661ed36c1","turn_id":"01a22d6a-3203-7a43-9bf0-9c33035f791e","transcript_path":"/tmp/hx/home/codex/sessions/rollout.jsonl","cwd":"/tmp/hx/repo","hook_event_name":"Stop","model":"gpt-5.5","permission_mode":"bypassPermissions","stop_hook_active":true,"last_assistant_message":"Second after block."}"#;

    #[test]
    fn each_agent_is_told_apart_by_its_payload() {
        let claude = Payload::parse(CLAUDE.as_bytes(), None).unwrap();
        assert_eq!(claude.agent, Agent::Claude);
        assert_eq!(claude.cwd, PathBuf::from("/tmp/hx/repo"));
        assert!(!claude.stop_hook_active);
        assert!(claude.is_stop());
        let codex = Payload::parse(CODEX.as_bytes(), None).unwrap();
        assert_eq!(codex.agent, Agent::Codex);
        assert!(codex.stop_hook_active);
        assert_eq!(
            codex.transcript_path,
            Some(PathBuf::from("/tmp/hx/home/codex/sessions/rollout.jsonl"))
        );
        let gemini = Payload::parse(GEMINI.as_bytes(), None).unwrap();
        assert_eq!(gemini.agent, Agent::Gemini);
        assert!(gemini.is_stop() && gemini.stop_hook_active);
        assert_eq!(
            gemini.session_id.as_deref(),
            Some("e79207f7-80d2-4f37-ab4d-29eb11380b96")
        );
        // `--agent` wins over detection.
        let forced = Payload::parse(CODEX.as_bytes(), Some(Agent::Claude)).unwrap();
        assert_eq!(forced.agent, Agent::Claude);
    }

    #[test]
    fn malformed_payloads_are_named() {
        let cases: &[(&str, &str)] = &[
            ("", "empty"),
            ("  \n", "empty"),
            ("{\"cwd\": ", "not JSON"),
            ("[1]", "not a JSON object"),
            ("{}", "no `cwd`"),
            ("{\"cwd\": 3}", "`cwd` must be a string"),
            (
                "{\"cwd\": \"/r\", \"stop_hook_active\": \"yes\"}",
                "`stop_hook_active` must be true or false",
            ),
        ];
        for (input, says) in cases {
            let err = Payload::parse(input.as_bytes(), None)
                .unwrap_err()
                .to_string();
            assert!(err.contains(says), "{input:?}: {err}");
        }
    }

    #[test]
    fn a_subagent_stop_is_not_a_stop() {
        let p =
            Payload::parse(br#"{"cwd": "/r", "hook_event_name": "SubagentStop"}"#, None).unwrap();
        assert!(!p.is_stop());
    }
}
