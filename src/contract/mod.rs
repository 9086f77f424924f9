//! The loop contract: its types and their validation from TOML text. Pure; the
//! file I/O lives in `load`, the TOML writer in `render`.

mod agent;
mod de;
mod duration;
pub mod load;
mod locate;
mod name;
mod preset;
mod raw;
pub mod render;
mod value;

use serde::de::Deserializer;
use serde::{Deserialize, Serialize};

pub use agent::{Agent, EmptyReport, Judge, JudgeEngine, Member, Role};
pub use duration::Timeout;
pub use name::LoopName;
pub use preset::{Preset, PresetInfo};

use crate::findings::Severity;
pub use crate::findings::panel::Veto;
use crate::money::Usd;

/// The hard upper bound of `max_rounds`: a loop longer than this is no loop.
pub const MAX_ROUNDS_LIMIT: u32 = 100;

/// A loop contract, validated.
///
/// Its settings are read straight into these fields, each through the type
/// that checks it, a missing one taken from [`Contract::with_defaults`];
/// `referee init` writes them in [`SETTINGS`]' order. A new setting is a
/// field here, its default and its row in `SETTINGS`. The agents' sections
/// and `[prompt]` are checked across their fields by `raw`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default = "Contract::unnamed")]
pub struct Contract {
    #[serde(rename = "loop")]
    pub name: LoopName,
    #[serde(deserialize_with = "value::checked::<value::Rounds, _, _>")]
    pub max_rounds: u32,
    #[serde(deserialize_with = "value::checked::<value::Floor, _, _>")]
    pub severity_floor: Severity,
    #[serde(deserialize_with = "value::checked::<value::Globs, _, _>")]
    pub scope: Vec<String>,
    pub closure: Closure,
    pub budget: Budget,
    /// The progress guards in force.
    #[serde(deserialize_with = "value::checked::<raw::Guards, _, _>")]
    pub guards: Vec<Guard>,
    #[serde(deserialize_with = "value::checked::<value::Revision, _, _>")]
    pub base: String,
    #[serde(skip_serializing_if = "Option::is_none", skip_deserializing)]
    pub writer: Option<Agent>,
    #[serde(skip_serializing_if = "Option::is_none", skip_deserializing)]
    pub reviewer: Option<Agent>,
    /// `[[reviewers]]`: a panel (SPEC §6.1); empty with `[reviewer]`.
    #[serde(skip_serializing_if = "Vec::is_empty", skip_deserializing)]
    pub reviewers: Vec<Member>,
    #[serde(skip_serializing_if = "Panel::is_default", skip_deserializing)]
    pub panel: Panel,
    #[serde(skip_serializing_if = "Option::is_none", skip_deserializing)]
    pub judge: Option<Judge>,
    #[serde(skip_serializing_if = "Prompts::is_empty", skip_deserializing)]
    pub prompt: Prompts,
}

/// The top-level settings in the order `referee init` writes them, each
/// with the comment written above it (none for `loop`; the guards' comment
/// is made from [`Guard::note`]). `budget` and the sections follow them.
pub(super) const SETTINGS: &[(&str, &str)] = &[
    ("loop", ""),
    ("max_rounds", "round cap"),
    (
        "severity_floor",
        "findings at or above it are must-fix: nit < should < bug < block",
    ),
    ("scope", "globs of files the writer may touch"),
    (
        "closure",
        "absent: a finding the reviewer stops reporting is closed if the writer touched its place (else skipped); explicit: only when marked resolved",
    ),
    ("guards", "progress guards"),
    ("base", "git revision the loop starts from"),
];

/// `[prompt]`: templates that replace the built-in writer and reviewer
/// prompts, inline or as repo-relative files (docs/presets.md).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Prompts {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub writer: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reviewer: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub writer_file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reviewer_file: Option<String>,
}

impl Prompts {
    pub fn is_empty(&self) -> bool {
        *self == Prompts::default()
    }
}

/// Whether `name` may name a panel reviewer (`[[reviewers]] name`,
/// `record --findings NAME=FILE`).
pub fn is_member_name(name: &str) -> bool {
    value::MemberName::valid(name)
}

/// What a panel reviewer's name looks like, in words.
pub const MEMBER_NAME_SHAPE: &str = value::MemberName::SHAPE;

/// `[panel]`: how a panel's answers make a round (SPEC §6.1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Panel {
    /// Reviewers that must answer for a round to count; `None`: all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quorum: Option<u32>,
    pub veto: Veto,
}

impl Panel {
    pub fn is_default(&self) -> bool {
        *self == Panel::default()
    }
}

/// When a prior finding counts as closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Closure {
    /// Closed once the reviewer no longer reports it.
    Absent,
    /// Open until the reviewer marks it resolved.
    Explicit,
}

impl Closure {
    pub fn as_str(self) -> &'static str {
        match self {
            Closure::Absent => "absent",
            Closure::Explicit => "explicit",
        }
    }
}

impl<'de> Deserialize<'de> for Closure {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match toml::Value::deserialize(d)? {
            toml::Value::String(s) if s == "absent" => Ok(Closure::Absent),
            toml::Value::String(s) if s == "explicit" => Ok(Closure::Explicit),
            other => Err(value::refuse(&other, "`absent` or `explicit`")),
        }
    }
}

/// A progress guard (SPEC §4): stops a loop the six rules would let go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Guard {
    /// The writer changed nothing while must-fix findings were open.
    Stalled,
    /// The writer disputed a must-fix finding and the reviewer insists.
    Disputed,
}

impl Guard {
    pub const ALL: [Guard; 2] = [Guard::Stalled, Guard::Disputed];

    pub fn as_str(self) -> &'static str {
        match self {
            Guard::Stalled => "stalled",
            Guard::Disputed => "disputed",
        }
    }

    /// When it stops a loop, as the contract `init` writes says it.
    pub fn note(self) -> &'static str {
        match self {
            Guard::Stalled => "an empty patch while must-fix findings are open",
            Guard::Disputed => "a disputed finding reported again",
        }
    }

    pub fn parse(text: &str) -> Option<Guard> {
        Guard::ALL.into_iter().find(|g| g.as_str() == text)
    }
}

impl std::fmt::Display for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `[budget]`: spend caps over the whole loop.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Budget {
    #[serde(deserialize_with = "value::checked_some::<value::Dollars, _, _>")]
    pub usd: Option<Usd>,
    #[serde(deserialize_with = "value::checked_some::<value::Tokens, _, _>")]
    pub tokens: Option<u64>,
}

/// A contract that does not validate: names the field, the value and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContractError {
    /// The parser's message in its own layout: the line, the line's text
    /// and a caret under the place.
    #[error("not valid TOML {0}")]
    Syntax(String),
    #[error("field `{field}` is required ({allowed})")]
    Missing { field: String, allowed: String },
    #[error("field `{field}` is unknown;{} allowed here: {allowed}", did_you_mean(.field, .allowed))]
    Unknown { field: String, allowed: String },
    #[error("field `{field}`: must be {allowed}, not {value}")]
    Invalid {
        field: String,
        value: String,
        allowed: String,
    },
    /// A refused field, on the line of the text that holds it.
    #[error("line {line}: {error}")]
    At {
        line: usize,
        error: Box<ContractError>,
    },
}

impl ContractError {
    /// The field refused, dotted (`reviewer.preset`); `None` for a syntax error.
    pub fn field(&self) -> Option<&str> {
        match self {
            ContractError::Syntax(_) => None,
            ContractError::Missing { field, .. }
            | ContractError::Unknown { field, .. }
            | ContractError::Invalid { field, .. } => Some(field),
            ContractError::At { error, .. } => error.field(),
        }
    }

    /// The error without the line it was found on: for a contract built
    /// from more than one text (a template and flags), whose lines are no
    /// one's.
    pub fn unplaced(self) -> ContractError {
        match self {
            ContractError::At { error, .. } => *error,
            other => other,
        }
    }

    /// The error placed on the line of `text` that holds its field, when
    /// the text has it.
    pub fn placed_in(self, text: &str) -> ContractError {
        let error = self.unplaced();
        match error.field().and_then(|field| locate::line_of(text, field)) {
            Some(line) => ContractError::At {
                line,
                error: Box::new(error),
            },
            None => error,
        }
    }
}

/// " did you mean `max_rounds`?" for an unknown key one slip from an allowed one.
fn did_you_mean(field: &str, allowed: &str) -> String {
    match locate::meant(field, allowed) {
        Some(key) => format!(" did you mean `{key}`?"),
        None => String::new(),
    }
}

impl Contract {
    /// The files the contract names and referee reads during the loop, with
    /// the field that names each: pinned at round 1 like the contract.
    pub fn named_files(&self) -> Vec<(&'static str, &str)> {
        let mut out = Vec::new();
        if let Some(f) = &self.prompt.writer_file {
            out.push(("prompt.writer_file", f.as_str()));
        }
        if let Some(f) = &self.prompt.reviewer_file {
            out.push(("prompt.reviewer_file", f.as_str()));
        }
        if let Some(judge) = &self.judge {
            if let Some(f) = &judge.questions {
                out.push(("judge.questions", f.as_str()));
            }
            if judge.engine == JudgeEngine::Replay {
                out.push((
                    "judge.replay",
                    judge.replay.as_deref().unwrap_or("judge.json"),
                ));
            }
        }
        out
    }

    /// The reviewers of a round, named: the `[[reviewers]]` panel, or
    /// `[reviewer]` as a panel of one named `reviewer`.
    pub fn panel_reviewers(&self) -> Vec<(&str, &Agent)> {
        match &self.reviewer {
            Some(reviewer) => vec![("reviewer", reviewer)],
            None => self
                .reviewers
                .iter()
                .map(|m| (m.name.as_str(), &m.agent))
                .collect(),
        }
    }

    /// Whether the contract names a panel (`[[reviewers]]`), whose
    /// findings say who reported them.
    pub fn is_panel(&self) -> bool {
        !self.reviewers.is_empty()
    }

    /// A contract with every default, for loop `name` starting at `base`.
    pub fn with_defaults(name: LoopName, base: String) -> Contract {
        Contract {
            name,
            max_rounds: 3,
            severity_floor: Severity::Bug,
            scope: vec!["**".to_string()],
            closure: Closure::Absent,
            budget: Budget::default(),
            guards: Guard::ALL.to_vec(),
            base,
            writer: None,
            reviewer: None,
            reviewers: Vec::new(),
            panel: Panel::default(),
            judge: None,
            prompt: Prompts::default(),
        }
    }

    /// The defaults a contract file's missing settings take: `loop` and
    /// `base` are filled in by `from_toml`.
    fn unnamed() -> Contract {
        let name = LoopName::parse("loop").expect("a valid loop name");
        Contract::with_defaults(name, String::new())
    }

    /// Parses and validates contract text. `default_base` fills a missing `base`.
    pub fn from_toml(text: &str, default_base: &str) -> Result<Contract, ContractError> {
        let mut table: toml::Table =
            toml::from_str(text).map_err(|e| ContractError::Syntax(syntax(&e)))?;
        let sections = raw::Sections::take(&mut table);
        if !table.contains_key("loop") {
            return Err(ContractError::Missing {
                field: "loop".into(),
                allowed: "a loop name `[a-z0-9][a-z0-9._-]{0,63}`".into(),
            });
        }
        let has_base = table.contains_key("base");
        let mut contract = Contract::deserialize(de::ValueDe(toml::Value::Table(table)))
            .map_err(|err| raw::Sections::name_in(err.into()).placed_in(text))?;
        if !has_base {
            contract.base = default_base.to_string();
        }
        sections
            .fill(&mut contract)
            .map_err(|err| err.placed_in(text))?;
        Ok(contract)
    }
}

/// The parser's message as it lays it out ("at line 2, column 14", the
/// line's text, a caret under the place, what was wrong), without its
/// "TOML parse error" lead, which `ContractError::Syntax` says itself.
pub fn syntax(error: &toml::de::Error) -> String {
    let shown = error.to_string();
    let shown = shown.trim_end();
    match shown.strip_prefix("TOML parse error ") {
        Some(rest) => rest.to_string(),
        None => format!(": {shown}"),
    }
}

#[cfg(test)]
mod tests;
