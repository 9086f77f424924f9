//! The contract file as serde reads it, and its checks across fields. Pure.
//!
//! Each value is checked by its type (`value`, `LoopName`, `Timeout`, ...)
//! while it is read; the field names are the structs' own, so that the list
//! of fields a table allows cannot drift from what is read.

use serde::Deserialize;
use serde::de::Deserializer;
use toml::Value;

use super::agent::{RawAgent, RawJudge, Role};
use super::value::{
    Bounded, Floor, Globs, PositiveNumber, RepoPath, Revision, Text, refuse_shown, strings,
};
use super::{
    Agent, Budget, Closure, Contract, ContractError, Guard, Judge, LoopName, MAX_ROUNDS_LIMIT,
    Prompts,
};

/// The top of a contract file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawContract {
    #[serde(rename = "loop")]
    name: Option<LoopName>,
    max_rounds: Option<Bounded<1, { MAX_ROUNDS_LIMIT as i64 }>>,
    severity_floor: Option<Floor>,
    scope: Option<Globs>,
    closure: Option<Closure>,
    budget: Option<RawBudget>,
    guards: Option<Guards>,
    base: Option<Revision>,
    writer: Option<RawAgent>,
    reviewer: Option<RawAgent>,
    judge: Option<RawJudge>,
    prompt: Option<RawPrompts>,
}

/// `[budget]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawBudget {
    usd: Option<PositiveNumber>,
    tokens: Option<Bounded<1, { i64::MAX }>>,
}

/// `[prompt]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPrompts {
    writer: Option<Text>,
    reviewer: Option<Text>,
    writer_file: Option<RepoPath>,
    reviewer_file: Option<RepoPath>,
}

/// `guards`: the progress guards in force, in their order, each once.
pub(super) struct Guards(Vec<Guard>);

impl<'de> Deserialize<'de> for Guards {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut guards = Vec::new();
        for name in strings(Value::deserialize(d)?)? {
            let guard = Guard::parse(&name).ok_or_else(|| {
                refuse_shown(
                    &format!("`{name}`"),
                    "a list of progress guards: `stalled`, `disputed` (`[]` for none)",
                )
            })?;
            if !guards.contains(&guard) {
                guards.push(guard);
            }
        }
        guards.sort();
        Ok(Guards(guards))
    }
}

impl RawContract {
    /// The contract, defaults filled in (`default_base` for a missing `base`).
    pub(super) fn into_contract(self, default_base: &str) -> Result<Contract, ContractError> {
        let Some(name) = self.name else {
            return Err(ContractError::Missing {
                field: "loop".into(),
                allowed: "a loop name `[a-z0-9][a-z0-9._-]{0,63}`".into(),
            });
        };
        let mut contract = Contract::with_defaults(name, default_base.to_string());
        if let Some(n) = self.max_rounds {
            contract.max_rounds = n.0 as u32;
        }
        if let Some(floor) = self.severity_floor {
            contract.severity_floor = floor.0;
        }
        if let Some(scope) = self.scope {
            contract.scope = scope.0;
        }
        if let Some(closure) = self.closure {
            contract.closure = closure;
        }
        if let Some(budget) = self.budget {
            contract.budget = Budget {
                usd: budget.usd.map(|n| n.0),
                tokens: budget.tokens.map(|n| n.0 as u64),
            };
        }
        if let Some(guards) = self.guards {
            contract.guards = guards.0;
        }
        if let Some(base) = self.base {
            contract.base = base.0;
        }
        if let Some(writer) = self.writer {
            contract.writer = Some(Agent::from_raw(writer, "writer", Role::Writer)?);
        }
        if let Some(reviewer) = self.reviewer {
            contract.reviewer = Some(Agent::from_raw(reviewer, "reviewer", Role::Reviewer)?);
        }
        if let Some(judge) = self.judge {
            contract.judge = Some(Judge::from_raw(judge)?);
        }
        if let Some(prompt) = self.prompt {
            for (role, inline, file) in [
                (
                    "writer",
                    prompt.writer.is_some(),
                    prompt.writer_file.is_some(),
                ),
                (
                    "reviewer",
                    prompt.reviewer.is_some(),
                    prompt.reviewer_file.is_some(),
                ),
            ] {
                if inline && file {
                    return Err(ContractError::Invalid {
                        field: format!("prompt.{role}_file"),
                        value: format!("set together with `prompt.{role}`"),
                        allowed: "one of the two: an inline template or a file".into(),
                    });
                }
            }
            contract.prompt = Prompts {
                writer: prompt.writer.map(|t| t.0),
                reviewer: prompt.reviewer.map(|t| t.0),
                writer_file: prompt.writer_file.map(|p| p.0),
                reviewer_file: prompt.reviewer_file.map(|p| p.0),
            };
        }
        Ok(contract)
    }
}
