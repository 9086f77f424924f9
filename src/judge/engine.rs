//! Asking a judge: the engines (`replay`, `command`, and the presets that
//! make a small model the judge through the CLIs' structured output). Does I/O: reads the replay file, runs the judge
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
use crate::agent::preset::{self, Invocation, JudgeCall, Judged};
use crate::agent::process::{self, Call};
use crate::contract::{Judge, JudgeEngine};
use crate::money::Usd;

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
    /// The probability a decided outcome answered to the yes/no question
    /// `id`; `None` when it was not decided or has no such answer.
    pub fn probability(&self, id: &str) -> Option<f64> {
        match self {
            Outcome::Decided { answers, .. } => answers.get(id)?.get("probability")?.as_f64(),
            _ => None,
        }
    }

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
    pub cost_usd: Option<Usd>,
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

/// Asks `judge` about round `round` given `state`: the contract's
/// questions and `extra` ones (`same_problem`), answered and validated
/// together.
pub fn ask(
    judge: &Judge,
    repo: &Path,
    round: u32,
    state: &State,
    block_open: bool,
    extra: &[Question],
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
        Ok(mut q) => {
            q.extend(extra.iter().cloned());
            q
        }
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
        JudgeEngine::Command | JudgeEngine::Preset(_) => {
            call(judge, repo, &body, &questions, interrupt)
        }
    };
    let answered = match answered {
        Ok(answered) => answered,
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
    let outcome = decide(&answered.doc, &questions, judge.model.as_deref());
    Asked {
        request: Some(body),
        answer: Some(answered.raw),
        outcome,
        cost_usd: answered.cost_usd,
        tokens: answered.tokens,
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
fn replay(judge: &Judge, repo: &Path, round: u32) -> Result<Answered, Outcome> {
    let rel = judge.replay.as_deref().unwrap_or("judge.json");
    let path = repo.join(rel);
    let bytes = std::fs::read(&path).map_err(|e| Outcome::Failed {
        reason: format!("cannot read the replay file `{}`: {e}", path.display()),
    })?;
    let doc: Value = serde_json::from_slice(&bytes).map_err(|e| Outcome::Failed {
        reason: format!("the replay file `{}` is not JSON: {e}", path.display()),
    })?;
    match doc.get(round.to_string()) {
        Some(answer) => Ok(Answered {
            raw: serde_json::to_vec_pretty(answer).unwrap_or_default(),
            doc: answer.clone(),
            cost_usd: None,
            tokens: None,
        }),
        None => Err(Outcome::Skipped {
            reason: format!("the replay file `{rel}` has no answers for round {round}"),
        }),
    }
}

const INSTRUCTIONS: &str = "You are the judge of a review loop: a small decision model, not the \
reviewer. Read the request below (the loop's state and the questions). Answer every question \
exactly as its instructions say, as probabilities. Reply with JSON only: \
{\"model\": \"<your model name>\", \"answers\": {\"<question id>\": {...}}}.\n\nRequest:\n";

/// What a judge call answered: the raw answer kept as evidence, the answers
/// document, and what the call spent when its tool says.
struct Answered {
    raw: Vec<u8>,
    doc: Value,
    cost_usd: Option<Usd>,
    tokens: Option<u64>,
}

/// The program the judge's call starts: the first word of `judge.command`,
/// or the judging preset's `bin` or tool; `replay` starts none.
pub fn program(judge: &Judge) -> Option<String> {
    match judge.engine {
        JudgeEngine::Replay => None,
        JudgeEngine::Command => judge.command.as_ref()?.first().cloned(),
        JudgeEngine::Preset(preset) => Some(
            judge
                .bin
                .clone()
                .unwrap_or_else(|| preset.info().tool.unwrap_or_default().to_string()),
        ),
    }
}

/// `command`: the request on stdin, the answers on stdout. A preset whose
/// row says it judges (`claude`, `codex`): a small model through the CLI's
/// structured output, called and read by that preset's unit.
#[allow(clippy::result_large_err)]
fn call(
    judge: &Judge,
    repo: &Path,
    body: &str,
    questions: &[Question],
    interrupt: &AtomicBool,
) -> Result<Answered, Outcome> {
    let failed = |reason: String| Outcome::Failed { reason };
    let unit = match judge.engine {
        JudgeEngine::Command => None,
        JudgeEngine::Preset(preset) => Some(preset::unit(preset)),
        // Replay answers from its file (`replay`), never by a process.
        JudgeEngine::Replay => return Err(failed("the replay engine runs no process".into())),
    };
    let schema = answers_schema(questions).to_string();
    let scratch = tempfile::Builder::new()
        .prefix("referee-judge-")
        .tempdir()
        .map_err(|e| {
            failed(format!(
                "cannot create a folder in `{}`: {e}",
                std::env::temp_dir().display()
            ))
        })?;
    let schema_file = scratch.path().join("judge.schema.json");
    let out_file = scratch.path().join("judge.out");
    std::fs::write(&schema_file, &schema)
        .map_err(|e| failed(format!("cannot write `{}`: {e}", schema_file.display())))?;
    let (program, invocation) = match unit {
        None => {
            let argv = judge.command.clone().unwrap_or_default();
            let Some((first, rest)) = argv.split_first() else {
                return Err(failed("`judge.command` is empty".into()));
            };
            let invocation = Invocation {
                args: rest.iter().map(OsString::from).collect(),
                last: Vec::new(),
                stdin: Some(body.as_bytes().to_vec()),
            };
            (first.clone(), invocation)
        }
        Some(unit) => {
            let prompt = format!("{INSTRUCTIONS}{body}");
            let asked = JudgeCall {
                repo,
                model: judge.model.as_deref(),
                prompt: &prompt,
                schema: &schema,
                schema_file: &schema_file,
                output: &out_file,
            };
            let Some(invocation) = unit.judge_invocation(&asked) else {
                return Err(failed(format!(
                    "the `{}` preset cannot judge",
                    judge.engine.as_str()
                )));
            };
            (program(judge).unwrap_or_default(), invocation)
        }
    };
    let Invocation {
        mut args,
        last,
        stdin,
    } = invocation;
    args.extend(judge.args.iter().map(OsString::from));
    args.extend(last);
    let call = Call {
        program,
        args,
        env: judge
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        stdin,
        cwd: repo.to_path_buf(),
        timeout: judge.timeout.as_duration(),
        // Nothing to record into: a judge call has no scratch folder.
        record: None,
    };
    let done = process::run(&call, interrupt, &mut |_| {}).map_err(|e| failed(e.to_string()))?;
    if done.code != Some(0) {
        let detail = String::from_utf8_lossy(&done.stderr.bytes)
            .lines()
            .find(|l| !l.trim().is_empty())
            .map(|l| format!(": {}", l.trim()))
            .unwrap_or_default();
        return Err(failed(format!(
            "`{}` exited with status {}{detail}",
            call.program,
            done.code.map_or("(signal)".to_string(), |c| c.to_string())
        )));
    }
    let raw = done.stdout.bytes;
    match unit {
        Some(unit) => {
            let judged = unit
                .judgement(&raw, &std::fs::read_to_string(&out_file))
                .map_err(failed)?;
            Ok(answered_by(judge, raw, judged))
        }
        None => {
            let doc = serde_json::from_slice(&raw)
                .map_err(|e| failed(format!("the judge printed no JSON: {e}")))?;
            Ok(Answered {
                raw,
                doc,
                cost_usd: None,
                tokens: None,
            })
        }
    }
}

/// What a preset read from the judge's call, with the model named. Through
/// a CLI preset the referee chose the model (`--model`), so the model is the
/// one the call ran, whatever name the model gives itself; without one, the
/// model the tool says it ran.
fn answered_by(judge: &Judge, raw: Vec<u8>, judged: Judged) -> Answered {
    let doc = match (judged.answers, judge.model.clone().or(judged.model)) {
        (Value::Object(mut map), Some(model)) if map.contains_key("answers") => {
            map.insert("model".into(), json!(model));
            Value::Object(map)
        }
        (other, _) => other,
    };
    Answered {
        raw,
        doc,
        cost_usd: judged.cost_usd,
        tokens: judged.tokens,
    }
}

#[cfg(test)]
mod tests;
