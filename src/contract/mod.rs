//! The loop contract: its types and their validation from TOML text. Pure; the
//! file I/O lives in `load`, the TOML writer in `render`.

mod agent;
mod duration;
pub mod load;
mod name;
pub mod render;
mod value;

use serde::Serialize;

pub use agent::{Agent, Judge, JudgeEngine, Preset};
pub use duration::Timeout;
pub use name::LoopName;

use crate::findings::Severity;
use value::Fields;

/// The hard upper bound of `max_rounds`: a loop longer than this is no loop.
pub const MAX_ROUNDS_LIMIT: u32 = 100;

/// A loop contract, validated.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Contract {
    #[serde(rename = "loop")]
    pub name: LoopName,
    pub max_rounds: u32,
    pub severity_floor: Severity,
    pub scope: Vec<String>,
    pub closure: Closure,
    pub budget: Budget,
    /// The progress guards in force.
    pub guards: Vec<Guard>,
    pub base: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub writer: Option<Agent>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reviewer: Option<Agent>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge: Option<Judge>,
    #[serde(skip_serializing_if = "Prompts::is_empty")]
    pub prompt: Prompts,
}

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

    pub fn parse(text: &str) -> Option<Guard> {
        Guard::ALL.into_iter().find(|g| g.as_str() == text)
    }
}

impl std::fmt::Display for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Spend caps over the whole loop.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Budget {
    pub usd: Option<f64>,
    pub tokens: Option<u64>,
}

/// A contract that does not validate: names the field, the value and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContractError {
    #[error("not valid TOML: {0}")]
    Syntax(String),
    #[error("field `{field}` is required ({allowed})")]
    Missing { field: String, allowed: String },
    #[error("field `{field}` is unknown; allowed here: {allowed}")]
    Unknown { field: String, allowed: String },
    #[error("field `{field}`: must be {allowed}, not {value}")]
    Invalid {
        field: String,
        value: String,
        allowed: String,
    },
}

const TOP_FIELDS: &[&str] = &[
    "loop",
    "max_rounds",
    "severity_floor",
    "scope",
    "closure",
    "budget",
    "guards",
    "base",
    "writer",
    "reviewer",
    "judge",
    "prompt",
];

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
            judge: None,
            prompt: Prompts::default(),
        }
    }

    /// Parses and validates contract text. `default_base` fills a missing `base`.
    pub fn from_toml(text: &str, default_base: &str) -> Result<Contract, ContractError> {
        let table: toml::Table =
            toml::from_str(text).map_err(|e| ContractError::Syntax(one_line(&e.to_string())))?;
        let fields = Fields::new(&table, "");
        fields.only(TOP_FIELDS)?;
        let name = fields.required_str("loop", "a loop name `[a-z0-9][a-z0-9._-]{0,63}`")?;
        let name = LoopName::parse(&name).map_err(|_| ContractError::Invalid {
            field: "loop".into(),
            value: format!("`{name}`"),
            allowed: format!("a loop name: {}", crate::contract::name::RULE),
        })?;
        let mut contract = Contract::with_defaults(name, default_base.to_string());
        if let Some(n) = fields.int("max_rounds", 1, i64::from(MAX_ROUNDS_LIMIT))? {
            contract.max_rounds = n as u32;
        }
        if let Some(floor) = fields.severity("severity_floor")? {
            contract.severity_floor = floor;
        }
        if let Some(scope) = fields.globs("scope")? {
            contract.scope = scope;
        }
        if let Some(closure) = fields.closure("closure")? {
            contract.closure = closure;
        }
        if let Some(budget) = fields.table("budget")? {
            let budget = Fields::new(budget, "budget.");
            budget.only(&["usd", "tokens"])?;
            contract.budget.usd = budget.positive_float("usd")?;
            contract.budget.tokens = budget.int("tokens", 1, i64::MAX)?.map(|n| n as u64);
        }
        if let Some(guards) = fields.strings("guards")? {
            let mut parsed = Vec::new();
            for name in &guards {
                let guard = Guard::parse(name).ok_or_else(|| ContractError::Invalid {
                    field: "guards".into(),
                    value: format!("`{name}`"),
                    allowed: "a list of progress guards: `stalled`, `disputed` (`[]` for none)"
                        .into(),
                })?;
                if !parsed.contains(&guard) {
                    parsed.push(guard);
                }
            }
            parsed.sort();
            contract.guards = parsed;
        }
        if let Some(base) = fields.string("base")? {
            if base.trim().is_empty() {
                return Err(fields.invalid("base", &toml::Value::String(base), "a git revision"));
            }
            contract.base = base;
        }
        if let Some(writer) = fields.table("writer")? {
            contract.writer = Some(Agent::from_table(writer, "writer", agent::Role::Writer)?);
        }
        if let Some(reviewer) = fields.table("reviewer")? {
            contract.reviewer = Some(Agent::from_table(
                reviewer,
                "reviewer",
                agent::Role::Reviewer,
            )?);
        }
        if let Some(judge) = fields.table("judge")? {
            contract.judge = Some(Judge::from_table(judge)?);
        }
        if let Some(prompt) = fields.table("prompt")? {
            let p = Fields::new(prompt, "prompt.");
            p.only(&["writer", "reviewer", "writer_file", "reviewer_file"])?;
            contract.prompt = Prompts {
                writer: p.text("writer")?,
                reviewer: p.text("reviewer")?,
                writer_file: p.repo_path("writer_file")?,
                reviewer_file: p.repo_path("reviewer_file")?,
            };
            for role in ["writer", "reviewer"] {
                let file = format!("{role}_file");
                if p.get(role).is_some() && p.get(&file).is_some() {
                    return Err(ContractError::Invalid {
                        field: format!("prompt.{file}"),
                        value: "set together with `prompt.".to_string() + role + "`",
                        allowed: "one of the two: an inline template or a file".into(),
                    });
                }
            }
        }
        Ok(contract)
    }
}

/// Flattens a multi-line parser message into one line.
fn one_line(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && *l != "|")
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests;
