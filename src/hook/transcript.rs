//! What an agent's session transcript (`transcript_path`, JSON lines) says
//! about the writer: the tokens the session has used so far and the
//! person's requests. Formats as Claude Code 2.1.197, Codex 0.171 and
//! Gemini CLI 0.61 write them (tests/mock/FACTS.md); a line that does not read is skipped, and a
//! transcript with no usage at all counts nothing. Pure.

use std::collections::HashMap;

use serde_json::Value;

use super::Agent;

/// The session so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Transcript {
    /// Input plus output tokens over the whole session (the referee's
    /// measure for the `claude` and `codex` presets); `None` when the
    /// transcript reports no usage the referee can read.
    pub tokens: Option<u64>,
    /// What the person asked, oldest first.
    pub requests: Vec<String>,
}

/// Reads a transcript.
pub fn read(agent: Agent, bytes: &[u8]) -> Transcript {
    let lines = bytes
        .split(|&b| b == b'\n')
        .filter_map(|line| serde_json::from_slice::<Value>(line).ok());
    match agent {
        Agent::Claude => claude(lines),
        Agent::Codex => codex(lines),
        Agent::Gemini => gemini(lines),
    }
}

/// Gemini CLI 0.61 writes one entry per message: `gemini` entries carry
/// their response's `tokens` (`input`, `output`), counted once per `id`;
/// the person's prompts are the `user` entries, as the person saw them
/// (`displayContent` when there is one). A hook's block reason comes back
/// as a `user` entry shown as the prompt it answers, so a request the same
/// as the one before it is that one.
fn gemini(lines: impl Iterator<Item = Value>) -> Transcript {
    let mut usage: HashMap<String, u64> = HashMap::new();
    let mut requests: Vec<String> = Vec::new();
    let text_of = |content: &Value| -> Option<String> {
        let parts = content.as_array()?;
        let text: Vec<&str> = parts.iter().filter_map(|p| p["text"].as_str()).collect();
        (!text.is_empty()).then(|| text.join("\n"))
    };
    for entry in lines {
        match entry.get("type").and_then(Value::as_str) {
            Some("gemini") => {
                let (Some(id), Some(t)) = (entry["id"].as_str(), entry.get("tokens")) else {
                    continue;
                };
                let tokens = ["input", "output"]
                    .iter()
                    .filter_map(|k| t.get(*k).and_then(Value::as_u64))
                    .fold(0, u64::saturating_add);
                usage.insert(id.to_string(), tokens);
            }
            Some("user") => {
                let shown = entry
                    .get("displayContent")
                    .and_then(text_of)
                    .or_else(|| entry.get("content").and_then(text_of));
                if let Some(text) = shown.map(|t| t.trim().to_string())
                    && is_request(&text)
                    && requests.last() != Some(&text)
                {
                    requests.push(text);
                }
            }
            _ => {}
        }
    }
    Transcript {
        tokens: (!usage.is_empty()).then(|| usage.values().fold(0u64, |a, &b| a.saturating_add(b))),
        requests,
    }
}

/// Claude Code writes one `assistant` entry per content block of a model
/// response, each carrying the response's whole `usage`: counted once per
/// `message.id`. The person's prompts are the `user` entries whose content
/// is text and that are not meta (hook feedback, for one).
fn claude(lines: impl Iterator<Item = Value>) -> Transcript {
    let mut usage: HashMap<String, u64> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut requests = Vec::new();
    for entry in lines {
        match entry.get("type").and_then(Value::as_str) {
            Some("assistant") => {
                let message = &entry["message"];
                let (Some(id), Some(u)) = (message["id"].as_str(), message.get("usage")) else {
                    continue;
                };
                let tokens = ["input_tokens", "output_tokens"]
                    .iter()
                    .filter_map(|k| u.get(*k).and_then(Value::as_u64))
                    .fold(0, u64::saturating_add);
                if usage.insert(id.to_string(), tokens).is_none() {
                    order.push(id.to_string());
                }
            }
            Some("user") if entry.get("isMeta").and_then(Value::as_bool) != Some(true) => {
                if let Some(text) = entry["message"]["content"].as_str()
                    && is_request(text)
                {
                    requests.push(text.trim().to_string());
                }
            }
            _ => {}
        }
    }
    Transcript {
        tokens: (!order.is_empty()).then(|| usage.values().fold(0u64, |a, &b| a.saturating_add(b))),
        requests,
    }
}

/// Codex writes `token_count` events whose `total_token_usage` is the
/// session's running total; the last one holds. The person's messages are
/// the user messages whose provenance is `user` (the environment context
/// and hook prompts are the harness's).
fn codex(lines: impl Iterator<Item = Value>) -> Transcript {
    let mut tokens = None;
    let mut requests = Vec::new();
    for entry in lines {
        let payload = &entry["payload"];
        match (
            entry.get("type").and_then(Value::as_str),
            payload.get("type").and_then(Value::as_str),
        ) {
            (Some("event_msg"), Some("token_count")) => {
                if let Some(total) = payload.pointer("/info/total_token_usage") {
                    tokens = Some(
                        ["input_tokens", "output_tokens"]
                            .iter()
                            .filter_map(|k| total.get(*k).and_then(Value::as_u64))
                            .fold(0, u64::saturating_add),
                    );
                }
            }
            (Some("response_item"), Some("message"))
                if payload["role"] == "user" && from_person(payload) =>
            {
                let text: String = payload["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|c| c["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n");
                if is_request(&text) {
                    requests.push(text.trim().to_string());
                }
            }
            _ => {}
        }
    }
    Transcript { tokens, requests }
}

fn from_person(payload: &Value) -> bool {
    match payload.pointer("/internal_chat_message_metadata_passthrough/content_item_metadata") {
        Some(Value::Array(items)) => items
            .iter()
            .any(|m| m.pointer("/provenance/type").and_then(Value::as_str) == Some("user")),
        // Without the metadata, harness messages still read as markup.
        _ => payload["content"][0]["text"]
            .as_str()
            .is_some_and(|t| !t.trim_start().starts_with('<')),
    }
}

/// Text a person typed, not a slash command's echo or an empty line.
fn is_request(text: &str) -> bool {
    let t = text.trim();
    !t.is_empty()
        && !t.starts_with("<command-")
        && !t.starts_with("<local-command")
        && !t.starts_with("Stop hook feedback:")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gemini CLI 0.61's own transcript of a session whose AfterAgent hook
    /// blocked once (the block reason is the third `user` entry, shown as
    /// the prompt it answers).
    #[test]
    fn gemini_counts_each_response_once_and_the_persons_prompt_once() {
        let bytes =
            include_bytes!("../../tests/fixtures/agents/gemini-afteragent-transcript.jsonl");
        let t = read(Agent::Gemini, bytes);
        assert_eq!(t.tokens, Some(2200));
        assert_eq!(t.requests, ["say hi\n\n\nFollow stdin"]);
        let none = read(
            Agent::Gemini,
            b"{\"type\":\"user\",\"content\":[{\"text\":\"go\"}]}\n",
        );
        assert_eq!((none.tokens, none.requests), (None, vec!["go".to_string()]));
    }

    #[test]
    fn claude_counts_each_response_once_and_skips_meta_entries() {
        // As Claude Code 2.1.197 wrote it: one entry per content block.
        let lines = [
            r#"{"type":"queue-operation","operation":"enqueue","content":"write a.txt\n"}"#,
            r#"{"type":"user","message":{"role":"user","content":"write a.txt\n"},"promptId":"p"}"#,
            r#"{"type":"assistant","message":{"id":"msg_2","usage":{"input_tokens":28839,"cache_read_input_tokens":5,"output_tokens":20}}}"#,
            r#"{"type":"assistant","message":{"id":"msg_2","usage":{"input_tokens":28839,"cache_read_input_tokens":5,"output_tokens":20}}}"#,
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"ok"}]}}"#,
            r#"{"type":"assistant","message":{"id":"msg_3","usage":{"input_tokens":28931,"output_tokens":20}}}"#,
            r#"{"type":"user","message":{"role":"user","content":"Stop hook feedback:\nfix F1"},"isMeta":true}"#,
            r#"not json"#,
            r#"{"type":"user","message":{"role":"user","content":"<command-name>/hooks</command-name>"}}"#,
        ]
        .join("\n");
        let t = read(Agent::Claude, lines.as_bytes());
        assert_eq!(t.tokens, Some(28839 + 20 + 28931 + 20));
        assert_eq!(t.requests, vec!["write a.txt".to_string()]);
    }

    #[test]
    fn codex_takes_the_last_running_total_and_the_persons_messages() {
        let lines = [
            r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>…"}],"internal_chat_message_metadata_passthrough":{"content_item_metadata":[{"provenance":{"type":"harness","hook":false}}]}}}"#,
            r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"add b.txt\n"}],"internal_chat_message_metadata_passthrough":{"content_item_metadata":[{"provenance":{"type":"user"}}]}}}"#,
            r#"{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":9682,"cached_input_tokens":0,"output_tokens":20,"total_tokens":9702}}}}"#,
            r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<hook_prompt hook_run_id=\"stop:0\">fix</hook_prompt>"}],"internal_chat_message_metadata_passthrough":{"content_item_metadata":[{"provenance":{"type":"harness","hook":true}}]}}}"#,
            r#"{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":29418,"output_tokens":60}}}}"#,
            r#"{"type":"event_msg","payload":{"type":"token_count","info":null}}"#,
        ]
        .join("\n");
        let t = read(Agent::Codex, lines.as_bytes());
        assert_eq!(t.tokens, Some(29478));
        assert_eq!(t.requests, vec!["add b.txt".to_string()]);
    }

    #[test]
    fn a_transcript_without_usage_counts_nothing() {
        assert_eq!(read(Agent::Claude, b"").tokens, None);
        assert_eq!(read(Agent::Codex, b"{\"type\":\"x\"}\n").tokens, None);
        // The other agent's format reads as no usage, not as zero.
        let claude_line = br#"{"type":"assistant","message":{"id":"m","usage":{"input_tokens":1,"output_tokens":1}}}"#;
        assert_eq!(read(Agent::Codex, claude_line).tokens, None);
    }
}
