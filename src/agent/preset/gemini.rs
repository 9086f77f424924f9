//! The `gemini` preset: Gemini CLI headless with a JSON result, the prompt
//! on stdin, as writer or reviewer. Pure.

use std::path::Path;

use serde_json::Value;

use super::{Context, Invocation, Role, Unit, os};
use crate::agent::output::{Produced, Reply, json_of, responses_in, strip_fences};
use crate::agent::process::Finished;
use crate::contract::Agent;

pub struct Gemini;

impl Unit for Gemini {
    fn invocation(&self, agent: &Agent, ctx: &Context<'_>, _cwd: &Path) -> Invocation {
        // The prompt goes on stdin (gemini puts stdin before the `-p` text):
        // a reviewer prompt with a large patch exceeds the 128 KiB that Linux
        // allows one argument. Headless gemini refuses a folder it has not
        // been told to trust (exit 55); the contract naming this repo is that
        // say-so, as `claude -p` and `codex exec` need none
        // (tests/mock/FACTS.md).
        let mut args = os(&[
            "-p",
            "Follow the instructions given on standard input.",
            "--output-format",
            "json",
            "--skip-trust",
        ]);
        if ctx.role == Role::Writer {
            args.extend(os(&["--approval-mode", "auto_edit"]));
        }
        if let Some(model) = &agent.model {
            args.extend(os(&["-m", model]));
        }
        Invocation {
            args,
            last: Vec::new(),
            stdin: Some(ctx.prompt.as_bytes().to_vec()),
        }
    }

    fn failure(&self, finished: &Finished) -> Option<String> {
        // Gemini prints its `--output-format json` error document at the end
        // of stderr, after warnings and stack traces, and nothing on stdout.
        error_document(&finished.stderr.bytes).or_else(|| error_document(&finished.stdout.bytes))
    }

    fn read(&self, role: Role, out: &Produced<'_>) -> Result<Reply, String> {
        let json =
            json_of(out.stdout).ok_or("printed no JSON (expected `--output-format json`)")?;
        if let Some(err) = json.get("error").filter(|e| !e.is_null()) {
            let why = err
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("error");
            return Err(format!("reported an error: {}", crate::text::one_line(why)));
        }
        let text = json
            .get("response")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let mut reply = Reply {
            tokens: json
                .pointer("/stats/models")
                .and_then(Value::as_object)
                .map(|models| {
                    models
                        .values()
                        .filter_map(|m| m.pointer("/tokens/total").and_then(Value::as_u64))
                        .sum()
                }),
            ..Reply::default()
        };
        match role {
            Role::Reviewer => reply.review = Some(strip_fences(text).into_bytes()),
            Role::Writer => reply.responses = responses_in(text),
        }
        Ok(reply)
    }
}

/// The message of the JSON error document gemini ends its output with (it
/// may be pretty-printed over several lines); an API error quoted whole in
/// that message is unwrapped to its own message.
fn error_document(bytes: &[u8]) -> Option<String> {
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
    Some(crate::text::one_line(&message).chars().take(200).collect())
}
