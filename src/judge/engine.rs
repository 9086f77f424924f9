//! Asking a judge: the engines (`replay`, `command`, and the `claude` and
//! `codex` presets that make a small model the judge through the CLIs'
//! structured output). Does I/O: reads the replay file, runs the judge
//! process. Whatever goes wrong is an outcome to record, never an error that
//! stops the loop: an invalid, failed, timed-out or omitted judgement leaves
//! the loop to the rules.

use std::ffi::OsString;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{
    Judgement, Question, Request, Route, State, Validation, answers_schema, build_request,
    default_questions, questions_from_json, route, validate,
};
use crate::agent::process::{self, Call};
use crate::contract::{Judge, JudgeEngine};

/// What one consultation came to, as the round's evidence keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "lowercase")]
pub enum Outcome {
    /// A valid judgement, and where it sends the loop.
    Decided {
        model: Option<String>,
        answers: Value,
        stop: Option<String>,
        reason: String,
    },
    /// Not asked: a `block` finding is open, or the state is over the limit.
    Skipped { reason: String },
    /// The judge did not answer, or answered out of shape.
    Failed { reason: String },
    /// The judge answered, but the answer did not validate.
    Invalid { reason: String },
}

impl Outcome {
    /// The stop this outcome calls for (`judge:<reason>`), if any.
    pub fn stop(&self) -> Option<&str> {
        match self {
            Outcome::Decided { stop, .. } => stop.as_deref(),
            _ => None,
        }
    }

    /// One line for people: what the judge said, or why it said nothing.
    pub fn summary(&self) -> String {
        match self {
            Outcome::Decided { model, reason, .. } => match model {
                Some(model) => format!("judge ({model}): {reason}"),
                None => format!("judge: {reason}"),
            },
            Outcome::Skipped { reason } => format!("judge not asked: {reason}"),
            Outcome::Failed { reason } => format!("judge failed: {reason}; the rules decide"),
            Outcome::Invalid { reason } => {
                format!("judge answer invalid: {reason}; the rules decide")
            }
        }
    }
}

/// A consultation: the request sent (if any), the raw answer, the outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct Asked {
    pub request: Option<String>,
    pub answer: Option<Vec<u8>>,
    pub outcome: Outcome,
    /// What the judge call spent, when its tool says (claude: cost and
    /// tokens; codex: tokens). It counts toward the loop's budget.
    pub cost_usd: Option<f64>,
    pub tokens: Option<u64>,
}

/// The question set of `judge`: the contract's file, or the defaults, with
/// `{what}` filled in.
pub fn questions(judge: &Judge, repo: &Path) -> Result<Vec<Question>, String> {
    let set = match &judge.questions {
        Some(rel) => {
            let path = repo.join(rel);
            let bytes = std::fs::read(&path)
                .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
            let doc: Value = serde_json::from_slice(&bytes)
                .map_err(|e| format!("`{}` is not JSON: {e}", path.display()))?;
            questions_from_json(&doc).map_err(|e| format!("`{}`: {e}", path.display()))?
        }
        None => default_questions(),
    };
    Ok(set.iter().map(|q| q.filled(&judge.what)).collect())
}

/// Asks `judge` about round `round` given `state`.
pub fn ask(
    judge: &Judge,
    repo: &Path,
    round: u32,
    state: &State,
    block_open: bool,
    interrupt: &AtomicBool,
) -> Asked {
    let not_asked = |outcome| Asked {
        request: None,
        answer: None,
        outcome,
        cost_usd: None,
        tokens: None,
    };
    if block_open {
        return not_asked(Outcome::Skipped {
            reason: "a `block` finding is open: it always goes back to the writer".into(),
        });
    }
    let questions = match questions(judge, repo) {
        Ok(q) => q,
        Err(reason) => return not_asked(Outcome::Failed { reason }),
    };
    let body = match build_request(state, &questions, judge.max_state_bytes) {
        Ok(Request::Ready { body, .. }) => body,
        Ok(Request::Omitted { bytes, limit }) => {
            return not_asked(Outcome::Skipped {
                reason: format!(
                    "the state is {bytes} bytes, over `judge.max_state_bytes` ({limit}): not sent"
                ),
            });
        }
        Err(e) => {
            return not_asked(Outcome::Failed {
                reason: e.to_string(),
            });
        }
    };
    let answered = match judge.engine {
        JudgeEngine::Replay => replay(judge, repo, round),
        JudgeEngine::Command | JudgeEngine::Claude | JudgeEngine::Codex => {
            call(judge, repo, &body, &questions, interrupt)
        }
    };
    let (raw, doc) = match answered {
        Ok(pair) => pair,
        Err(outcome) => {
            return Asked {
                request: Some(body),
                answer: None,
                outcome,
                cost_usd: None,
                tokens: None,
            };
        }
    };
    let (cost_usd, tokens) = spend(judge.engine, &raw);
    let outcome = decide(&doc, &questions, judge.model.as_deref());
    Asked {
        request: Some(body),
        answer: Some(raw),
        outcome,
        cost_usd,
        tokens,
    }
}

fn decide(doc: &Value, questions: &[Question], model: Option<&str>) -> Outcome {
    match validate(doc, questions, model) {
        Validation::Valid(judgement) => decided(&judgement, route(&judgement, false)),
        Validation::Invalid { reason } => Outcome::Invalid { reason },
    }
}

fn decided(judgement: &Judgement, route: Route) -> Outcome {
    Outcome::Decided {
        model: judgement.model.clone(),
        answers: serde_json::to_value(&judgement.answers).unwrap_or(Value::Null),
        stop: route.stop,
        reason: route.reason,
    }
}

/// Replay: `{"1": {...}, "2": {...}}`, one answers object per round.
// The error is the outcome the round records, made once per round: its size
// does not matter.
#[allow(clippy::result_large_err)]
fn replay(judge: &Judge, repo: &Path, round: u32) -> Result<(Vec<u8>, Value), Outcome> {
    let rel = judge.replay.as_deref().unwrap_or("judge.json");
    let path = repo.join(rel);
    let bytes = std::fs::read(&path).map_err(|e| Outcome::Failed {
        reason: format!("cannot read the replay file `{}`: {e}", path.display()),
    })?;
    let doc: Value = serde_json::from_slice(&bytes).map_err(|e| Outcome::Failed {
        reason: format!("the replay file `{}` is not JSON: {e}", path.display()),
    })?;
    match doc.get(round.to_string()) {
        Some(answer) => Ok((
            serde_json::to_vec_pretty(answer).unwrap_or_default(),
            answer.clone(),
        )),
        None => Err(Outcome::Skipped {
            reason: format!("the replay file `{rel}` has no answers for round {round}"),
        }),
    }
}

const INSTRUCTIONS: &str = "You are the judge of a review loop: a small decision model, not the \
reviewer. Read the request below (the loop's state and the questions). Answer every question \
exactly as its instructions say, as probabilities. Reply with JSON only: \
{\"model\": \"<your model name>\", \"answers\": {\"<question id>\": {...}}}.\n\nRequest:\n";

/// `command`: the request on stdin, the answers on stdout. `claude` and
/// `codex`: a small model through the CLI's structured output.
#[allow(clippy::result_large_err)]
fn call(
    judge: &Judge,
    repo: &Path,
    body: &str,
    questions: &[Question],
    interrupt: &AtomicBool,
) -> Result<(Vec<u8>, Value), Outcome> {
    let schema = answers_schema(questions).to_string();
    let schema_dir = tempfile_dir().map_err(|reason| Outcome::Failed { reason })?;
    let schema_file = schema_dir.0.join("judge.schema.json");
    let out_file = schema_dir.0.join("judge.out");
    std::fs::write(&schema_file, &schema).map_err(|e| Outcome::Failed {
        reason: format!("cannot write `{}`: {e}", schema_file.display()),
    })?;
    let mut args: Vec<OsString> = Vec::new();
    let (program, stdin) = match judge.engine {
        JudgeEngine::Command => {
            let argv = judge.command.clone().unwrap_or_default();
            let Some((first, rest)) = argv.split_first() else {
                return Err(Outcome::Failed {
                    reason: "`judge.command` is empty".into(),
                });
            };
            args.extend(rest.iter().map(OsString::from));
            (first.clone(), body.as_bytes().to_vec())
        }
        JudgeEngine::Claude => {
            for a in ["-p", "--output-format", "json", "--json-schema"] {
                args.push(a.into());
            }
            args.push(schema.clone().into());
            if let Some(model) = &judge.model {
                args.push("--model".into());
                args.push(model.into());
            }
            (
                "claude".to_string(),
                format!("{INSTRUCTIONS}{body}").into_bytes(),
            )
        }
        JudgeEngine::Codex => {
            for a in [
                "exec",
                "--json",
                "--sandbox",
                "read-only",
                "--skip-git-repo-check",
                "-C",
            ] {
                args.push(a.into());
            }
            args.push(repo.as_os_str().to_owned());
            args.push("--output-schema".into());
            args.push(schema_file.clone().into_os_string());
            args.push("-o".into());
            args.push(out_file.clone().into_os_string());
            if let Some(model) = &judge.model {
                args.push("-m".into());
                args.push(model.into());
            }
            (
                "codex".to_string(),
                format!("{INSTRUCTIONS}{body}").into_bytes(),
            )
        }
        // Replay answers from its file (`replay`), never by a process.
        JudgeEngine::Replay => {
            return Err(Outcome::Failed {
                reason: "the replay engine runs no process".into(),
            });
        }
    };
    args.extend(judge.args.iter().map(OsString::from));
    if judge.engine == JudgeEngine::Codex {
        args.push("-".into());
    }
    let program = match (&judge.bin, judge.engine) {
        (Some(bin), JudgeEngine::Claude | JudgeEngine::Codex) => bin.clone(),
        _ => program,
    };
    let call = Call {
        program,
        args,
        env: judge
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        stdin: Some(stdin),
        cwd: repo.to_path_buf(),
        timeout: judge.timeout.as_duration(),
        // Nothing to record into: a judge call has no scratch folder.
        record: None,
    };
    let done = process::run(&call, interrupt, &mut |_| {}).map_err(|e| Outcome::Failed {
        reason: e.to_string(),
    })?;
    if done.code != Some(0) {
        let detail = String::from_utf8_lossy(&done.stderr.bytes)
            .lines()
            .find(|l| !l.trim().is_empty())
            .map(|l| format!(": {}", l.trim()))
            .unwrap_or_default();
        return Err(Outcome::Failed {
            reason: format!(
                "`{}` exited with status {}{detail}",
                call.program,
                done.code.map_or("(signal)".to_string(), |c| c.to_string())
            ),
        });
    }
    let raw = done.stdout.bytes.clone();
    let doc = match judge.engine {
        JudgeEngine::Claude => {
            let result: Value = serde_json::from_slice(&raw).map_err(|e| Outcome::Failed {
                reason: format!("claude printed no JSON result: {e}"),
            })?;
            let Some(answers) = result.get("structured_output").cloned() else {
                return Err(Outcome::Failed {
                    reason: "claude's result has no `structured_output`".into(),
                });
            };
            with_model(
                answers,
                judge.model.clone().or_else(|| first_model(&result)),
            )
        }
        JudgeEngine::Codex => {
            let text = std::fs::read_to_string(&out_file).map_err(|e| Outcome::Failed {
                reason: format!("codex wrote no final message: {e}"),
            })?;
            let answers: Value =
                serde_json::from_str(text.trim()).map_err(|e| Outcome::Failed {
                    reason: format!("codex's final message is not JSON: {e}"),
                })?;
            with_model(answers, judge.model.clone())
        }
        _ => serde_json::from_slice(&raw).map_err(|e| Outcome::Failed {
            reason: format!("the judge printed no JSON: {e}"),
        })?,
    };
    Ok((raw, doc))
}

/// What a judge call spent, from the tool's own output.
fn spend(engine: JudgeEngine, raw: &[u8]) -> (Option<f64>, Option<u64>) {
    let sum = |v: &Value| -> u64 {
        ["input_tokens", "output_tokens"]
            .iter()
            .filter_map(|k| v.get(*k).and_then(Value::as_u64))
            .sum()
    };
    match engine {
        JudgeEngine::Claude => match serde_json::from_slice::<Value>(raw) {
            Ok(result) => (
                result.get("total_cost_usd").and_then(Value::as_f64),
                result.get("usage").map(sum),
            ),
            Err(_) => (None, None),
        },
        JudgeEngine::Codex => {
            let tokens: u64 = raw
                .split(|&b| b == b'\n')
                .filter_map(|l| serde_json::from_slice::<Value>(l).ok())
                .filter(|e| e.get("type").and_then(Value::as_str) == Some("turn.completed"))
                .filter_map(|e| e.get("usage").map(sum))
                .sum();
            (None, Some(tokens))
        }
        _ => (None, None),
    }
}

/// The answers document with the model named. Through a CLI preset the
/// referee chose the model (`--model`), so the model is the one the call
/// ran, whatever name the model gives itself.
fn with_model(answers: Value, model: Option<String>) -> Value {
    match (answers, model) {
        (Value::Object(mut map), Some(model)) if map.contains_key("answers") => {
            map.insert("model".into(), json!(model));
            Value::Object(map)
        }
        (other, _) => other,
    }
}

fn first_model(result: &Value) -> Option<String> {
    result
        .get("modelUsage")
        .and_then(Value::as_object)
        .and_then(|m| m.keys().next().cloned())
}

/// A private scratch folder removed on drop.
struct Scratch(std::path::PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tempfile_dir() -> Result<Scratch, String> {
    let dir = std::env::temp_dir().join(format!(
        "referee-judge-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default()
    ));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    Ok(Scratch(dir))
}
