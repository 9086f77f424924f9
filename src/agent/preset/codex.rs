//! The `codex` preset: `codex exec --json` with the prompt on stdin and the
//! final message in a file (`-o`), as writer, reviewer or judge. Pure.

use std::ffi::OsString;
use std::path::Path;

use serde_json::Value;

use super::{Context, Invocation, JudgeCall, Judged, Role, Unit, os};
use crate::agent::output::{Produced, Reply, responses_in, strip_fences};
use crate::agent::process::Finished;
use crate::contract::{Agent, Preset};

pub struct Codex;

impl Unit for Codex {
    fn invocation(&self, agent: &Agent, ctx: &Context<'_>, cwd: &Path) -> Invocation {
        let sandbox = agent.sandbox.as_deref().unwrap_or(match ctx.role {
            Role::Writer => "workspace-write",
            Role::Reviewer => "read-only",
        });
        let mut args = exec(sandbox, cwd);
        args.push("-o".into());
        args.push(ctx.files.output.clone().into_os_string());
        if ctx.role == Role::Reviewer {
            args.push("--output-schema".into());
            args.push(ctx.files.schema.clone().into_os_string());
        }
        if let Some(model) = &agent.model {
            args.extend(os(&["-m", model]));
        }
        Invocation {
            args,
            last: os(&["-"]),
            stdin: Some(ctx.prompt.as_bytes().to_vec()),
        }
    }

    fn failure(&self, finished: &Finished) -> Option<String> {
        // `codex exec --json` reports why on its event stream (the last
        // `turn.failed` or `error`); without one, its `Error: …` on stderr.
        let from_events = events(&finished.stdout.bytes)
            .filter(|e| {
                matches!(
                    e.get("type").and_then(Value::as_str),
                    Some("turn.failed" | "error")
                )
            })
            .filter_map(|e| {
                e.pointer("/error/message")
                    .or_else(|| e.get("message"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .last();
        let from_stderr = || {
            String::from_utf8_lossy(&finished.stderr.bytes)
                .lines()
                .rev()
                .map(str::trim)
                .find_map(|l| l.strip_prefix("Error:").map(|e| e.trim().to_string()))
        };
        let said = from_events.or_else(from_stderr)?;
        Some(super::in_words(Preset::Codex, &said))
    }

    fn read(&self, role: Role, out: &Produced<'_>) -> Result<Reply, String> {
        let mut tokens = 0u64;
        let mut last_message = None;
        let mut last_error: Option<String> = None;
        let mut completed = false;
        for event in events(out.stdout) {
            match event.get("type").and_then(Value::as_str) {
                Some("turn.completed") => {
                    completed = true;
                    tokens = tokens.saturating_add(turn_tokens(&event));
                }
                Some("turn.failed") => {
                    let why = event
                        .pointer("/error/message")
                        .or_else(|| event.get("message"))
                        .and_then(Value::as_str)
                        .unwrap_or("turn failed");
                    return Err(format!("reported an error: {}", crate::text::one_line(why)));
                }
                // `error` events also report retries codex recovers from
                // ("Reconnecting…"): only fatal without a finished turn.
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
            return Err(format!("reported an error: {}", crate::text::one_line(why)));
        }
        let mut reply = Reply {
            tokens: Some(tokens),
            ..Reply::default()
        };
        let message = out
            .output_file
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
        Ok(reply)
    }

    fn judge_invocation(&self, call: &JudgeCall<'_>) -> Option<Invocation> {
        let mut args = exec("read-only", call.repo);
        args.push("--output-schema".into());
        args.push(call.schema_file.as_os_str().to_owned());
        args.push("-o".into());
        args.push(call.output.as_os_str().to_owned());
        if let Some(model) = call.model {
            args.extend(os(&["-m", model]));
        }
        Some(Invocation {
            args,
            last: os(&["-"]),
            stdin: Some(call.prompt.as_bytes().to_vec()),
        })
    }

    fn judgement(
        &self,
        stdout: &[u8],
        output_file: &std::io::Result<String>,
    ) -> Result<Judged, String> {
        let text = output_file
            .as_ref()
            .map_err(|e| format!("codex wrote no final message: {e}"))?;
        let answers: Value = serde_json::from_str(text.trim())
            .map_err(|e| format!("codex's final message is not JSON: {e}"))?;
        let tokens = events(stdout)
            .filter(|e| e.get("type").and_then(Value::as_str) == Some("turn.completed"))
            .map(|e| turn_tokens(&e))
            .sum();
        Ok(Judged {
            answers,
            model: None,
            cost_usd: None,
            tokens: Some(tokens),
        })
    }
}

/// `codex exec --json` in `cwd` with `sandbox`, the start of every call.
fn exec(sandbox: &str, cwd: &Path) -> Vec<OsString> {
    let mut args = os(&[
        "exec",
        "--json",
        "--sandbox",
        sandbox,
        "--skip-git-repo-check",
        "-C",
    ]);
    args.push(cwd.as_os_str().to_owned());
    args
}

/// The JSON events of the `--json` stream; lines that are not JSON are
/// skipped.
fn events(stdout: &[u8]) -> impl Iterator<Item = Value> + '_ {
    stdout
        .split(|&b| b == b'\n')
        .filter_map(|line| serde_json::from_slice::<Value>(line).ok())
}

/// The input and output tokens a `turn.completed` event counts.
fn turn_tokens(event: &Value) -> u64 {
    event.get("usage").map_or(0, |u| {
        ["input_tokens", "output_tokens"]
            .iter()
            .filter_map(|k| u.get(*k).and_then(Value::as_u64))
            .fold(0, u64::saturating_add)
    })
}
