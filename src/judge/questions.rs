//! The questions the judge answers, as data: the default set and custom sets
//! read from JSON. Pure.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::{Map, Value};

use super::{JudgeError, show_value};

/// The placeholder that names what is judged ("the patch", "the page"),
/// filled from the contract's `judge.what` so one question set serves any
/// kind of work.
pub const WHAT: &str = "{what}";

/// One question put to the judge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Question {
    pub id: String,
    #[serde(flatten)]
    pub kind: Kind,
    /// What to judge and how to answer; may hold [`WHAT`].
    pub instructions: String,
}

/// The shape of a question, which fixes the shape of its answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Kind {
    /// Answered by `{probability}`: how likely the answer is yes.
    YesNo,
    /// Answered by `{choice, probabilities, confidence}`.
    Choice { options: Vec<ChoiceOption> },
}

/// One option of a `choice` question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChoiceOption {
    pub id: String,
    /// When this option is the right one; may hold [`WHAT`].
    pub criterion: String,
}

impl Kind {
    pub fn as_str(&self) -> &'static str {
        match self {
            Kind::YesNo => "yes_no",
            Kind::Choice { .. } => "choice",
        }
    }
}

/// The id of the `same_problem` question about finding `id`.
pub fn same_problem_id(id: &str) -> String {
    format!("same_problem:{id}")
}

/// One side of a `same_problem` question: a finding as the judge reads it.
pub struct Described<'a> {
    pub id: &'a str,
    pub title: &'a str,
    pub place: String,
    pub body: Option<&'a str>,
}

impl Described<'_> {
    fn show(&self) -> String {
        let body = self
            .body
            .map(|b| format!("; the reviewer wrote: {b}"))
            .unwrap_or_default();
        format!("{} \"{}\" at {}{body}", self.id, self.title, self.place)
    }
}

/// The typed yes/no question (SPEC §4.1) put to the judge when a new
/// finding resembles a closed one on evidence too weak for a reopen: is it
/// that problem again? `patch` is the change of the round that closed it,
/// for the closed finding's file (cut to a few kilobytes).
pub fn same_problem(
    new: &Described<'_>,
    closed: &Described<'_>,
    closed_in: Option<u32>,
    patch: &str,
) -> Question {
    let closed_in = closed_in
        .map(|r| format!(" in round {r}"))
        .unwrap_or_default();
    let patch = if patch.is_empty() {
        String::new()
    } else {
        format!(" The change that closed it:\n{patch}\n")
    };
    Question {
        id: same_problem_id(new.id),
        kind: Kind::YesNo,
        instructions: format!(
            "The reviewer reported {}, new this round. It resembles {}, closed{closed_in}.{patch} \
             How likely is it that the new finding is the closed problem reported again (its fix did \
             not hold or was undone), not a different problem at the same place? A yes ends the loop \
             as `reopened`; answer yes only when fixing one would fix the other.",
            new.show(),
            closed.show()
        ),
    }
}

impl Question {
    /// The question with every [`WHAT`] replaced by `what`, as it is sent.
    pub fn filled(&self, what: &str) -> Question {
        let kind = match &self.kind {
            Kind::YesNo => Kind::YesNo,
            Kind::Choice { options } => Kind::Choice {
                options: options
                    .iter()
                    .map(|o| ChoiceOption {
                        id: o.id.clone(),
                        criterion: o.criterion.replace(WHAT, what),
                    })
                    .collect(),
            },
        };
        Question {
            id: self.id.clone(),
            kind,
            instructions: self.instructions.replace(WHAT, what),
        }
    }

    /// The option ids of a `choice` question; none for `yes_no`.
    pub fn option_ids(&self) -> Vec<&str> {
        match &self.kind {
            Kind::YesNo => Vec::new(),
            Kind::Choice { options } => options.iter().map(|o| o.id.as_str()).collect(),
        }
    }
}

/// The ids the router reads (see [`super::route`]); a custom set may use
/// them, but only with the kind the router expects.
pub const HOLDS: &str = "holds";
pub const WORTH_DOING: &str = "worth_doing";
pub const WORTH_ANOTHER_ROUND: &str = "worth_another_round";
pub const STOP_REASON: &str = "stop_reason";
/// The `stop_reason` option that does not stop.
pub const CONTINUE: &str = "continue";

const YES: &str = "Answer `probability`: your probability, from 0 to 1, that the answer is yes.";

/// The default set (SPEC §7), with [`WHAT`] unfilled. Every text is pinned by
/// a hash in the tests: rewording one changes what every judge is asked.
pub fn default_questions() -> Vec<Question> {
    let yes_no = |id: &str, text: &str| Question {
        id: id.to_string(),
        kind: Kind::YesNo,
        instructions: format!("{text} {YES}"),
    };
    let option = |id: &str, criterion: &str| ChoiceOption {
        id: id.to_string(),
        criterion: criterion.to_string(),
    };
    vec![
        yes_no(
            HOLDS,
            "Does {what} now do what the use case needs, as it stands? Judge from \
             `state.findings` against `state.use_case`: yes if no finding still open would make \
             {what} fail that use case (a wrong result, a crash, lost data, a security hole, a \
             required behaviour missing); no if at least one would. Findings about style, \
             naming or further polish count neither way.",
        ),
        yes_no(
            WORTH_DOING,
            "Are the open findings in `state.findings` worth fixing, or would fixing them be \
             polishing {what}? Yes if at least one of them, fixed, would change whether {what} \
             serves `state.use_case` (a wrong result, a crash, lost data, a security hole, a \
             required behaviour missing); no if all of them are matters of style, taste, \
             naming, wording or cases the use case never reaches, and no if none is open.",
        ),
        yes_no(
            WORTH_ANOTHER_ROUND,
            "Would another writer round likely improve {what} more than it costs? A round costs \
             one writer call and one reviewer call, and its patch can bring new findings. Read \
             the trend in `state.rounds`: `must_fix_left` falling, few `reopened` and patches \
             (`diff_added` + `diff_removed`) shrinking mean the rounds are paying off; \
             `must_fix_left` flat or rising, findings reopening or patches growing mean they \
             are not.",
        ),
        Question {
            id: STOP_REASON.to_string(),
            kind: Kind::Choice {
                options: vec![
                    option(
                        HOLDS,
                        "Done: {what} serves the use case as it stands, and no open finding \
                         would change that.",
                    ),
                    option(
                        "over_polishing",
                        "Good enough: the open findings are style, taste or cases the use case \
                         never reaches, so another round would polish {what}, not fix it.",
                    ),
                    option(
                        "not_converging",
                        "Stuck: across the rounds findings reopen or keep arriving, \
                         `must_fix_left` does not fall, or patches grow, so another round is \
                         unlikely to settle {what}.",
                    ),
                    option(
                        CONTINUE,
                        "Not yet: a finding that matters to the use case is open and the recent \
                         rounds made progress, so one more round is likely to fix it.",
                    ),
                ],
            },
            instructions: "Which option best describes where the loop on {what} stands after \
                           the latest round? Read `state.use_case`, `state.findings` and \
                           `state.rounds`, then pick the one option whose criterion fits best. \
                           Answer `choice`: that option's id; `probabilities`: for every \
                           option, your probability from 0 to 1 that it fits best, summing to 1 \
                           and highest on `choice`; `confidence`: from 0 to 1, how sure you are \
                           of `choice`."
                .to_string(),
        },
    ]
}

const SET_FIELDS: &str = "questions";
const QUESTION_FIELDS: &[&str] = &["id", "kind", "instructions", "options"];
const OPTION_FIELDS: &[&str] = &["id", "criterion"];
const ID_RULE: &str = "an id of 1..=64 characters: a-z first, then a-z, 0-9 or _";

/// A custom question set: `{"questions": [...]}` or the bare array, each
/// question `{"id", "kind": "yes_no" | "choice", "instructions", "options"}`
/// and each option `{"id", "criterion"}`. Checked whole before any judge is
/// asked, so a typo fails the contract, not round 7.
pub fn questions_from_json(doc: &Value) -> Result<Vec<Question>, JudgeError> {
    let list = match doc {
        Value::Array(list) => list,
        Value::Object(map) => {
            if let Some(key) = map.keys().find(|k| k.as_str() != "questions") {
                return Err(JudgeError::Unknown {
                    field: key.clone(),
                    allowed: SET_FIELDS.into(),
                });
            }
            match map.get("questions") {
                Some(Value::Array(list)) => list,
                Some(other) => return Err(invalid("questions", other, "an array of questions")),
                None => {
                    return Err(JudgeError::Missing {
                        field: "questions".into(),
                        allowed: "an array of questions".into(),
                    });
                }
            }
        }
        other => {
            return Err(invalid(
                "questions",
                other,
                "an array of questions, or an object holding one under `questions`",
            ));
        }
    };
    if list.is_empty() {
        return Err(invalid(
            "questions",
            &Value::Array(Vec::new()),
            "an array of at least one question",
        ));
    }
    let mut seen: HashMap<String, String> = HashMap::new();
    let mut questions = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let path = format!("questions[{i}]");
        let question = question_from_json(&path, item)?;
        let field = format!("{path}.id");
        if let Some(first) = seen.get(&question.id) {
            return Err(JudgeError::Duplicate {
                field,
                id: question.id,
                first: first.clone(),
            });
        }
        seen.insert(question.id.clone(), field);
        questions.push(question);
    }
    Ok(questions)
}

fn question_from_json(path: &str, item: &Value) -> Result<Question, JudgeError> {
    let map = object(path, item, QUESTION_FIELDS)?;
    let id = id_field(path, map)?;
    let kind_path = format!("{path}.kind");
    let kind_text = match map.get("kind") {
        Some(Value::String(s)) => s.as_str(),
        Some(other) => return Err(invalid(&kind_path, other, "`yes_no` or `choice`")),
        None => {
            return Err(JudgeError::Missing {
                field: kind_path,
                allowed: "`yes_no` or `choice`".into(),
            });
        }
    };
    let instructions = text_field(path, map, "instructions")?;
    let options_path = format!("{path}.options");
    let kind = match (kind_text, map.get("options")) {
        ("yes_no", None) => Kind::YesNo,
        ("yes_no", Some(options)) => {
            return Err(invalid(
                &options_path,
                options,
                "absent: only `choice` questions take options",
            ));
        }
        ("choice", Some(options)) => Kind::Choice {
            options: options_from_json(&options_path, options)?,
        },
        ("choice", None) => {
            return Err(JudgeError::Missing {
                field: options_path,
                allowed: "a `choice` question offers at least 2 options".into(),
            });
        }
        (_, _) => {
            return Err(invalid(
                &kind_path,
                &Value::String(kind_text.to_string()),
                "`yes_no` or `choice`",
            ));
        }
    };
    let question = Question {
        id,
        kind,
        instructions,
    };
    routed_shape(path, &question)?;
    Ok(question)
}

/// The router reads the default ids by kind; a custom set that reuses one
/// with another shape would silently never route, so it is refused here.
fn routed_shape(path: &str, question: &Question) -> Result<(), JudgeError> {
    let id = question.id.as_str();
    let kind = Value::String(question.kind.as_str().to_string());
    match &question.kind {
        Kind::Choice { .. } if [HOLDS, WORTH_DOING, WORTH_ANOTHER_ROUND].contains(&id) => {
            Err(invalid(
                &format!("{path}.kind"),
                &kind,
                &format!("`yes_no`: the router reads `{id}` as a yes/no question"),
            ))
        }
        Kind::YesNo if id == STOP_REASON => Err(invalid(
            &format!("{path}.kind"),
            &kind,
            "`choice`: the router reads `stop_reason` as a choice",
        )),
        Kind::Choice { .. } if id == STOP_REASON && !question.option_ids().contains(&CONTINUE) => {
            Err(JudgeError::Missing {
                field: format!("{path}.options"),
                allowed: "`stop_reason` must offer `continue`, or every answer would stop the \
                          loop"
                    .into(),
            })
        }
        _ => Ok(()),
    }
}

fn options_from_json(path: &str, options: &Value) -> Result<Vec<ChoiceOption>, JudgeError> {
    let list = match options {
        Value::Array(list) if list.len() >= 2 => list,
        other => return Err(invalid(path, other, "an array of at least 2 options")),
    };
    let mut seen: HashMap<String, String> = HashMap::new();
    let mut out = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let option_path = format!("{path}[{i}]");
        let map = object(&option_path, item, OPTION_FIELDS)?;
        let id = id_field(&option_path, map)?;
        let criterion = text_field(&option_path, map, "criterion")?;
        let field = format!("{option_path}.id");
        if let Some(first) = seen.get(&id) {
            return Err(JudgeError::Duplicate {
                field,
                id,
                first: first.clone(),
            });
        }
        seen.insert(id.clone(), field);
        out.push(ChoiceOption { id, criterion });
    }
    Ok(out)
}

fn object<'a>(
    path: &str,
    item: &'a Value,
    fields: &[&str],
) -> Result<&'a Map<String, Value>, JudgeError> {
    let allowed = fields.join(", ");
    let Value::Object(map) = item else {
        return Err(invalid(
            path,
            item,
            &format!("an object with fields {allowed}"),
        ));
    };
    if let Some(key) = map.keys().find(|k| !fields.contains(&k.as_str())) {
        return Err(JudgeError::Unknown {
            field: format!("{path}.{key}"),
            allowed,
        });
    }
    Ok(map)
}

fn id_field(path: &str, map: &Map<String, Value>) -> Result<String, JudgeError> {
    let field = format!("{path}.id");
    match map.get("id") {
        Some(Value::String(id)) if is_id(id) => Ok(id.clone()),
        Some(other) => Err(invalid(&field, other, ID_RULE)),
        None => Err(JudgeError::Missing {
            field,
            allowed: ID_RULE.into(),
        }),
    }
}

fn text_field(path: &str, map: &Map<String, Value>, key: &str) -> Result<String, JudgeError> {
    let field = format!("{path}.{key}");
    let allowed = "a non-empty string";
    match map.get(key) {
        Some(Value::String(text)) if !text.trim().is_empty() => Ok(text.clone()),
        Some(other) => Err(invalid(&field, other, allowed)),
        None => Err(JudgeError::Missing {
            field,
            allowed: allowed.into(),
        }),
    }
}

/// `[a-z][a-z0-9_]*`, at most 64 characters: ids become JSON keys in the
/// answers and option ids become stop names (`judge:<id>`).
pub fn is_id(text: &str) -> bool {
    let mut chars = text.chars();
    text.len() <= 64
        && chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

fn invalid(field: &str, value: &Value, allowed: &str) -> JudgeError {
    JudgeError::Invalid {
        field: field.to_string(),
        value: format!("`{}`", show_value(value)),
        allowed: allowed.to_string(),
    }
}

#[cfg(test)]
mod tests;
