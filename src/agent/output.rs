//! What an agent call produced, read per preset: the reviewer's findings
//! bytes (for the findings parsers), the writer's responses, and the spend
//! (cost and tokens). Pure: the captured output comes in as bytes.

use serde_json::Value;

use super::preset::Role;
use super::process::Finished;
use crate::contract::Preset;
use crate::findings::responses::{self, Response};

/// What a call brought back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reply {
    /// Reviewer: the output the findings parsers read.
    pub review: Option<Vec<u8>>,
    /// Writer: its responses to open findings, if it gave any.
    pub responses: Vec<Response>,
    pub cost_usd: Option<f64>,
    pub tokens: Option<u64>,
}

/// Reads `finished` as `preset` prints. `output_file` is what the call left in
/// its `REFEREE_OUTPUT_FILE` / `-o` file; `junit` the `tests` preset's report.
pub fn interpret(
    preset: Preset,
    role: Role,
    finished: &Finished,
    output_file: Option<&[u8]>,
    junit: Option<&[u8]>,
) -> Result<Reply, String> {
    if finished.stdout.dropped > 0 {
        return Err(format!(
            "printed {} bytes more than the {} MiB kept",
            finished.stdout.dropped,
            super::process::OUTPUT_CAP / 1024 / 1024
        ));
    }
    let stdout = &finished.stdout.bytes;
    let failed_exit = match finished.code {
        Some(0) => None,
        Some(code) => Some(format!("exited with status {code}")),
        None => Some("was killed by a signal".to_string()),
    };
    if preset != Preset::Tests
        && let Some(why) = failed_exit
    {
        // Gemini prints its `--output-format json` error document at the end
        // of stderr, after warnings and stack traces, and nothing on stdout.
        if preset == Preset::Gemini
            && let Some(message) =
                gemini_error(&finished.stderr.bytes).or_else(|| gemini_error(stdout))
        {
            return Err(format!("{why}: {message}"));
        }
        let detail = first_line(&finished.stderr.bytes)
            .or_else(|| first_line(stdout))
            .map(|l| format!(": {l}"))
            .unwrap_or_default();
        return Err(format!("{why}{detail}"));
    }
    let output_file = output_file.filter(|b| !b.iter().all(u8::is_ascii_whitespace));
    let mut reply = Reply::default();
    match preset {
        Preset::Claude => {
            let json = json_of(stdout)
                .ok_or("printed no JSON result (expected `--output-format json`)")?;
            if json.get("is_error").and_then(Value::as_bool) == Some(true) {
                let why = json
                    .get("result")
                    .and_then(Value::as_str)
                    .or_else(|| json.get("subtype").and_then(Value::as_str))
                    .unwrap_or("is_error");
                return Err(format!("reported an error: {}", one_line(why)));
            }
            reply.cost_usd = json.get("total_cost_usd").and_then(Value::as_f64);
            let usage: Option<u64> = json.get("usage").map(|u| {
                ["input_tokens", "output_tokens"]
                    .iter()
                    .filter_map(|k| u.get(*k).and_then(Value::as_u64))
                    .sum()
            });
            // `usage` reads all zeros when the budget ran out; the per-model
            // counts still hold the truth.
            let per_model: Option<u64> =
                json.get("modelUsage").and_then(Value::as_object).map(|m| {
                    m.values()
                        .flat_map(|v| {
                            ["inputTokens", "outputTokens"]
                                .map(|k| v.get(k).and_then(Value::as_u64))
                        })
                        .flatten()
                        .sum()
                });
            reply.tokens = match (usage, per_model) {
                (Some(0) | None, Some(n)) if n > 0 => Some(n),
                (u, _) => u,
            };
            match role {
                // The findings parser reads Claude results and refuses one
                // without `structured_output`.
                Role::Reviewer => reply.review = Some(stdout.clone()),
                Role::Writer => {
                    let text = json
                        .get("result")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    reply.responses = responses_in(text);
                }
            }
        }
        Preset::Codex => {
            let mut tokens = 0u64;
            let mut last_message = None;
            let mut last_error: Option<String> = None;
            let mut completed = false;
            for line in stdout.split(|&b| b == b'\n') {
                let Ok(event) = serde_json::from_slice::<Value>(line) else {
                    continue;
                };
                match event.get("type").and_then(Value::as_str) {
                    Some("turn.completed") => {
                        completed = true;
                        if let Some(u) = event.get("usage") {
                            tokens += ["input_tokens", "output_tokens"]
                                .iter()
                                .filter_map(|k| u.get(*k).and_then(Value::as_u64))
                                .sum::<u64>();
                        }
                    }
                    Some("turn.failed") => {
                        let why = event
                            .pointer("/error/message")
                            .or_else(|| event.get("message"))
                            .and_then(Value::as_str)
                            .unwrap_or("turn failed");
                        return Err(format!("reported an error: {}", one_line(why)));
                    }
                    // `error` events also report retries codex recovers
                    // from ("Reconnecting…"): only fatal without a finished turn.
                    Some("error") => {
                        last_error = event
                            .get("message")
                            .or_else(|| event.pointer("/error/message"))
                            .and_then(Value::as_str)
                            .map(str::to_string);
                    }
                    Some("item.completed")
                        if event.pointer("/item/type").and_then(Value::as_str)
                            == Some("agent_message") =>
                    {
                        last_message = event
                            .pointer("/item/text")
                            .and_then(Value::as_str)
                            .map(str::to_string);
                    }
                    _ => {}
                }
            }
            if let (false, Some(why)) = (completed, &last_error) {
                return Err(format!("reported an error: {}", one_line(why)));
            }
            reply.tokens = Some(tokens);
            let message = output_file
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .or(last_message);
            match role {
                Role::Reviewer => {
                    let message = message.ok_or("gave no final message")?;
                    reply.review = Some(strip_fences(&message).into_bytes());
                }
                Role::Writer => {
                    reply.responses = message.as_deref().map(responses_in).unwrap_or_default();
                }
            }
        }
        Preset::CodexReview => reply.review = Some(stdout.clone()),
        Preset::Gemini => {
            let json =
                json_of(stdout).ok_or("printed no JSON (expected `--output-format json`)")?;
            if let Some(err) = json.get("error").filter(|e| !e.is_null()) {
                let why = err
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("error");
                return Err(format!("reported an error: {}", one_line(why)));
            }
            let text = json
                .get("response")
                .and_then(Value::as_str)
                .unwrap_or_default();
            reply.tokens = json
                .pointer("/stats/models")
                .and_then(Value::as_object)
                .map(|models| {
                    models
                        .values()
                        .filter_map(|m| m.pointer("/tokens/total").and_then(Value::as_u64))
                        .sum()
                });
            match role {
                Role::Reviewer => reply.review = Some(strip_fences(text).into_bytes()),
                Role::Writer => reply.responses = responses_in(text),
            }
        }
        Preset::Command => {
            let out = output_file.unwrap_or(stdout);
            if let Some(json) = json_of(out) {
                reply.cost_usd = json.pointer("/usage/cost_usd").and_then(Value::as_f64);
                reply.tokens = json.pointer("/usage/tokens").and_then(Value::as_u64);
            }
            match role {
                Role::Reviewer => reply.review = Some(out.to_vec()),
                Role::Writer => reply.responses = responses_in(&String::from_utf8_lossy(out)),
            }
        }
        Preset::Tests => {
            let Some(report) = junit else {
                // Why the command wrote no report is in what it printed last.
                let said = last_lines(&finished.stderr.bytes, 5)
                    .or_else(|| last_lines(stdout, 5))
                    .map(|l| format!("; it printed last:\n{l}"))
                    .unwrap_or_default();
                return Err(format!(
                    "wrote no JUnit report ({}); a clean round must be proven{said}",
                    match finished.code {
                        Some(code) => format!("the test command exited with status {code}"),
                        None => "the test command was killed by a signal".into(),
                    }
                ));
            };
            reply.review = Some(report.to_vec());
        }
    }
    if let Some(cost) = reply.cost_usd
        && !(cost.is_finite() && cost >= 0.0)
    {
        reply.cost_usd = None;
    }
    Ok(reply)
}

/// The last `n` non-empty lines of `bytes`, indented, or `None`.
fn last_lines(bytes: &[u8], n: usize) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .collect();
    if lines.is_empty() {
        return None;
    }
    let start = lines.len().saturating_sub(n);
    Some(
        lines[start..]
            .iter()
            .map(|l| format!("  {l}"))
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

/// The document as JSON: the whole text, else its last line that parses.
fn json_of(bytes: &[u8]) -> Option<Value> {
    if let Ok(v) = serde_json::from_slice::<Value>(bytes) {
        return Some(v);
    }
    bytes.split(|&b| b == b'\n').rev().find_map(|line| {
        serde_json::from_slice::<Value>(line)
            .ok()
            .filter(Value::is_object)
    })
}

/// The message of the JSON error document gemini ends its output with (it
/// may be pretty-printed over several lines); an API error quoted whole in
/// that message is unwrapped to its own message.
fn gemini_error(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim_end();
    let doc = text
        .rmatch_indices('{')
        .map(|(i, _)| i)
        .filter(|&i| i == 0 || text[..i].ends_with('\n'))
        .take(8)
        .find_map(|i| serde_json::from_str::<Value>(&text[i..]).ok())?;
    let err = doc.get("error").filter(|e| e.is_object())?;
    let message = err.get("message").and_then(Value::as_str)?;
    let message = serde_json::from_str::<Value>(message)
        .ok()
        .and_then(|inner| {
            inner
                .pointer("/error/message")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_else(|| message.to_string());
    Some(one_line(&message).chars().take(200).collect())
}

/// The text inside one ```json fence, if the whole reply is fenced.
pub fn strip_fences(text: &str) -> String {
    let t = text.trim();
    if let Some(rest) = t.strip_prefix("```")
        && let Some(body) = rest.strip_suffix("```")
    {
        let body = body.split_once('\n').map_or("", |(first, body)| {
            if first.trim().chars().all(|c| c.is_ascii_alphanumeric()) {
                body
            } else {
                rest
            }
        });
        return body.trim().to_string();
    }
    t.to_string()
}

/// The writer's responses in its final text: the last JSON object (fenced or
/// not) with a `responses` list. A writer that gave none gave none.
pub fn responses_in(text: &str) -> Vec<Response> {
    let mut starts: Vec<usize> = text.match_indices('{').map(|(i, _)| i).collect();
    starts.reverse();
    for start in starts {
        let tail = &text[start..];
        let mut stream = serde_json::Deserializer::from_str(tail).into_iter::<Value>();
        if let Some(Ok(value)) = stream.next()
            && value.get("responses").is_some_and(Value::is_array)
            && let Ok(list) = responses::parse(value.to_string().as_bytes())
        {
            return list;
        }
    }
    Vec::new()
}

fn first_line(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| one_line(l).chars().take(200).collect())
}

fn one_line(text: &str) -> String {
    crate::ledger::row::one_line(text)
}

#[cfg(test)]
mod tests;
