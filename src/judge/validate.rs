//! Validation of a judge's answers before they apply: every asked question
//! answered in its shape, every number finite and in range, the model the
//! contract pins. Pure; an invalid document is an outcome with a one-line
//! reason, never an error or a panic.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use super::questions::{Kind, Question};
use super::{show_number, show_value};

/// How far the probabilities of a `choice` may sum from 1 (SPEC §7).
pub const SUM_TOLERANCE: f64 = 0.02;
/// How far below the highest probability the chosen option's may be (SPEC §7).
pub const CHOICE_TOLERANCE: f64 = 0.001;
/// Floating-point slack so a bound the judge meets in decimal (`0.49 + 0.49`
/// is 0.98) is not refused for its binary rounding.
const SLACK: f64 = 1e-9;

/// One valid answer, in the shape its question asked for.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Answer {
    YesNo {
        probability: f64,
    },
    Choice {
        choice: String,
        probabilities: BTreeMap<String, f64>,
        confidence: f64,
    },
}

/// A validated answers document: what routing reads and the ledger records.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Judgement {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// By question id.
    pub answers: BTreeMap<String, Answer>,
}

impl Judgement {
    /// The probability answered to a `yes_no` question.
    pub fn probability(&self, id: &str) -> Option<f64> {
        match self.answers.get(id) {
            Some(Answer::YesNo { probability }) => Some(*probability),
            _ => None,
        }
    }
}

/// The outcome of validating one answers document.
#[derive(Debug, Clone, PartialEq)]
pub enum Validation {
    Valid(Judgement),
    /// Names the question id, the field and the value, on one line.
    Invalid {
        reason: String,
    },
}

/// [`validate`] on bytes, for the tests (the engines read their own
/// output first: a command that prints no JSON failed, it did not answer).
#[cfg(test)]
pub fn parse_answers(bytes: &[u8], questions: &[Question], model: Option<&str>) -> Validation {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(doc) => validate(&doc, questions, model),
        Err(err) => Validation::Invalid {
            reason: format!("document: not JSON: {err}"),
        },
    }
}

/// Checks `doc` (`{"model": ..., "answers": {"<id>": {...}}}`) against the
/// `questions` asked; `model` is the contract's `judge.model`, which the
/// document must then name. Answers to questions not asked, and fields no
/// answer shape has, are invalid: a judge that answers something else was
/// not answering this request.
pub fn validate(doc: &Value, questions: &[Question], model: Option<&str>) -> Validation {
    match judgement(doc, questions, model) {
        Ok(judgement) => Validation::Valid(judgement),
        Err(reason) => Validation::Invalid { reason },
    }
}

fn judgement(
    doc: &Value,
    questions: &[Question],
    pinned: Option<&str>,
) -> Result<Judgement, String> {
    let map = fields("document", doc, &["model", "answers"])?;
    let model = match (map.get("model"), pinned) {
        (None, None) => None,
        (None, Some(pinned)) => {
            return Err(format!(
                "model: missing; the contract pins {}",
                show_value(&Value::String(pinned.into()))
            ));
        }
        (Some(Value::String(named)), Some(pinned)) if named != pinned => {
            return Err(format!(
                "model: {} is not {}, the model the contract pins",
                show_value(&Value::String(named.clone())),
                show_value(&Value::String(pinned.into()))
            ));
        }
        (Some(Value::String(named)), _) => Some(named.clone()),
        (Some(other), _) => {
            return Err(format!(
                "model: must be a string, not {}",
                show_value(other)
            ));
        }
    };
    let answers = match map.get("answers") {
        Some(Value::Object(answers)) => answers,
        Some(other) => {
            return Err(format!(
                "answers: must be an object keyed by question id, not {}",
                show_value(other)
            ));
        }
        None => return Err("answers: missing".to_string()),
    };
    let mut out = BTreeMap::new();
    for question in questions {
        let Some(value) = answers.get(&question.id) else {
            return Err(format!("{}: missing from answers", question.id));
        };
        let answer = match &question.kind {
            Kind::YesNo => yes_no(&question.id, value)?,
            Kind::Choice { .. } => choice(&question.id, &question.option_ids(), value)?,
        };
        out.insert(question.id.clone(), answer);
    }
    if let Some(extra) = answers
        .keys()
        .find(|id| !questions.iter().any(|q| &q.id == *id))
    {
        let asked: Vec<&str> = questions.iter().map(|q| q.id.as_str()).collect();
        return Err(format!(
            "answers: {} answers no question asked ({})",
            show_value(&Value::String(extra.clone())),
            asked.join(", ")
        ));
    }
    Ok(Judgement {
        model,
        answers: out,
    })
}

fn yes_no(id: &str, value: &Value) -> Result<Answer, String> {
    let map = fields(id, value, &["probability"])?;
    let probability = unit(&format!("{id}.probability"), map.get("probability"))?;
    Ok(Answer::YesNo { probability })
}

fn choice(id: &str, options: &[&str], value: &Value) -> Result<Answer, String> {
    let map = fields(id, value, &["choice", "probabilities", "confidence"])?;
    let offered = options.join(", ");
    let choice = match map.get("choice") {
        Some(Value::String(c)) if options.contains(&c.as_str()) => c.clone(),
        Some(other) => {
            return Err(format!(
                "{id}.choice: must be one of the options offered ({offered}), not {}",
                show_value(other)
            ));
        }
        None => return Err(format!("{id}.choice: missing")),
    };
    let given = match map.get("probabilities") {
        Some(Value::Object(given)) => given,
        Some(other) => {
            return Err(format!(
                "{id}.probabilities: must be an object with one probability per option, not {}",
                show_value(other)
            ));
        }
        None => return Err(format!("{id}.probabilities: missing")),
    };
    if let Some(extra) = given.keys().find(|k| !options.contains(&k.as_str())) {
        return Err(format!(
            "{id}.probabilities: {} is not an option offered ({offered})",
            show_value(&Value::String(extra.clone()))
        ));
    }
    let mut probabilities = BTreeMap::new();
    for option in options {
        let field = format!("{id}.probabilities.{option}");
        let Some(value) = given.get(*option) else {
            return Err(format!("{id}.probabilities: no probability for `{option}`"));
        };
        probabilities.insert(option.to_string(), unit(&field, Some(value))?);
    }
    let sum: f64 = probabilities.values().sum();
    if (sum - 1.0).abs() > SUM_TOLERANCE + SLACK {
        return Err(format!(
            "{id}.probabilities: sum to {}, not 1 within {SUM_TOLERANCE}",
            show_number(sum)
        ));
    }
    let chosen = probabilities.get(&choice).copied().unwrap_or(0.0);
    // The first option with the highest probability, in the order offered.
    let mut top: Option<(&str, f64)> = None;
    for option in options {
        let p = probabilities.get(*option).copied().unwrap_or(0.0);
        if top.is_none_or(|(_, best)| p > best) {
            top = Some((option, p));
        }
    }
    if let Some((top_id, top_p)) = top
        && chosen < top_p - CHOICE_TOLERANCE - SLACK
    {
        return Err(format!(
            "{id}.choice: `{choice}` has {chosen} but `{top_id}` has {top_p}; the choice must \
             carry the highest probability within {CHOICE_TOLERANCE}"
        ));
    }
    let confidence = unit(&format!("{id}.confidence"), map.get("confidence"))?;
    Ok(Answer::Choice {
        choice,
        probabilities,
        confidence,
    })
}

/// The object at `path`, refusing fields outside `allowed`.
fn fields<'a>(
    path: &str,
    value: &'a Value,
    allowed: &[&str],
) -> Result<&'a Map<String, Value>, String> {
    let Value::Object(map) = value else {
        return Err(format!(
            "{path}: must be an object with {}, not {}",
            allowed.join(", "),
            show_value(value)
        ));
    };
    if let Some(key) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(format!(
            "{path}: unknown field {}; allowed: {}",
            show_value(&Value::String(key.clone())),
            allowed.join(", ")
        ));
    }
    Ok(map)
}

/// A finite number in [0, 1]; JSON has no NaN or infinity, but a model may
/// write them as strings, and those are refused with everything else.
fn unit(field: &str, value: Option<&Value>) -> Result<f64, String> {
    let Some(value) = value else {
        return Err(format!("{field}: missing"));
    };
    match value.as_f64() {
        Some(n) if n.is_finite() && (0.0..=1.0).contains(&n) => Ok(n),
        _ => Err(format!(
            "{field}: must be a finite number in [0, 1], not {}",
            show_value(value)
        )),
    }
}

#[cfg(test)]
mod tests;
