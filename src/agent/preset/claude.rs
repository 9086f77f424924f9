//! The `claude` preset: Claude Code in print mode (`claude -p`) with a JSON
//! result, as writer, reviewer or judge. Pure.

use std::path::Path;

use serde_json::Value;

use super::{Context, Invocation, JudgeCall, Judged, Role, Unit, os};
use crate::agent::output::{Produced, Reply, json_of, responses_in};
use crate::agent::process::Finished;
use crate::contract::{Agent, Preset};
use crate::money::Usd;

pub struct Claude;

impl Unit for Claude {
    fn invocation(&self, agent: &Agent, ctx: &Context<'_>, _cwd: &Path) -> Invocation {
        let mut args = os(&["-p", "--output-format", "json"]);
        match ctx.role {
            Role::Writer => {
                args.extend(os(&["--permission-mode", "acceptEdits"]));
                if let Some(usd) = ctx.remaining_usd {
                    // Exactly what is left, sub-cent digits included.
                    args.extend(os(&["--max-budget-usd", &usd.decimal()]));
                }
            }
            Role::Reviewer => {
                args.extend(os(&[
                    "--permission-mode",
                    "plan",
                    "--json-schema",
                    ctx.schema,
                ]));
            }
        }
        if let Some(model) = &agent.model {
            args.extend(os(&["--model", model]));
        }
        if !agent.allowed_tools.is_empty() {
            args.extend(os(&["--allowedTools", &agent.allowed_tools.join(",")]));
        }
        if let Some(turns) = agent.max_turns {
            args.extend(os(&["--max-turns", &turns.to_string()]));
        }
        Invocation {
            args,
            last: Vec::new(),
            stdin: Some(ctx.prompt.as_bytes().to_vec()),
        }
    }

    fn failure(&self, finished: &Finished) -> Option<String> {
        // A failed `claude -p --output-format json` still prints its result
        // document, with the reason as `result` ("Not logged in · Please run
        // /login") and `is_error`.
        let json = json_of(&finished.stdout.bytes)?;
        let said = json
            .get("result")
            .and_then(Value::as_str)
            .filter(|r| !r.trim().is_empty())
            .or_else(|| json.get("subtype").and_then(Value::as_str))?;
        Some(super::in_words(Preset::Claude, said))
    }

    fn read(&self, role: Role, out: &Produced<'_>) -> Result<Reply, String> {
        let json = json_of(out.stdout)
            .ok_or("printed no JSON result (expected `--output-format json`)")?;
        if json.get("is_error").and_then(Value::as_bool) == Some(true) {
            let why = json
                .get("result")
                .and_then(Value::as_str)
                .or_else(|| json.get("subtype").and_then(Value::as_str))
                .unwrap_or("is_error");
            return Err(format!("reported an error: {}", crate::text::one_line(why)));
        }
        let (cost_usd, tokens) = spend(&json);
        let mut reply = Reply {
            cost_usd,
            tokens,
            ..Reply::default()
        };
        match role {
            // The findings parser reads Claude results and refuses one
            // without `structured_output`.
            Role::Reviewer => reply.review = Some(out.stdout.to_vec()),
            Role::Writer => {
                let text = json
                    .get("result")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                reply.responses = responses_in(text);
            }
        }
        Ok(reply)
    }

    fn judge_invocation(&self, call: &JudgeCall<'_>) -> Option<Invocation> {
        let mut args = os(&[
            "-p",
            "--output-format",
            "json",
            "--json-schema",
            call.schema,
        ]);
        if let Some(model) = call.model {
            args.extend(os(&["--model", model]));
        }
        Some(Invocation {
            args,
            last: Vec::new(),
            stdin: Some(call.prompt.as_bytes().to_vec()),
        })
    }

    fn judgement(
        &self,
        stdout: &[u8],
        _output_file: &std::io::Result<String>,
    ) -> Result<Judged, String> {
        let result: Value = serde_json::from_slice(stdout)
            .map_err(|e| format!("claude printed no JSON result: {e}"))?;
        let Some(answers) = result.get("structured_output").cloned() else {
            return Err("claude's result has no `structured_output`".into());
        };
        let (cost_usd, tokens) = spend(&result);
        Ok(Judged {
            answers,
            model: first_model(&result),
            cost_usd,
            tokens,
        })
    }
}

/// What a call spent by its result: the cost, and the input and output
/// tokens.
fn spend(result: &Value) -> (Option<Usd>, Option<u64>) {
    let cost = result.get("total_cost_usd").and_then(Usd::from_json);
    let usage: Option<u64> = result.get("usage").map(|u| {
        ["input_tokens", "output_tokens"]
            .iter()
            .filter_map(|k| u.get(*k).and_then(Value::as_u64))
            .fold(0, u64::saturating_add)
    });
    // `usage` reads all zeros when the budget ran out; the per-model counts
    // still hold the truth.
    let per_model: Option<u64> = result
        .get("modelUsage")
        .and_then(Value::as_object)
        .map(|m| {
            m.values()
                .flat_map(|v| {
                    ["inputTokens", "outputTokens"].map(|k| v.get(k).and_then(Value::as_u64))
                })
                .flatten()
                .fold(0, u64::saturating_add)
        });
    let tokens = match (usage, per_model) {
        (Some(0) | None, Some(n)) if n > 0 => Some(n),
        (u, _) => u,
    };
    (cost, tokens)
}

/// The first model the result names in its per-model usage.
fn first_model(result: &Value) -> Option<String> {
    result
        .get("modelUsage")
        .and_then(Value::as_object)
        .and_then(|m| m.keys().next().cloned())
}
