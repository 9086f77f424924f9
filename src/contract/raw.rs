//! The contract's sections as serde reads them, and their checks across
//! fields. Pure.
//!
//! Each value is checked by its type (`value`, `LoopName`, `Timeout`, ...)
//! while it is read; the field names are the structs' own, so that the list
//! of fields a table allows cannot drift from what is read.

use serde::Deserialize;
use serde::de::Deserializer;
use toml::Value;

use super::agent::{Member, RawAgent, RawJudge, Role};
use super::de::ValueDe;
use super::value::{Bounded, RepoPath, Text, refuse, refuse_shown, strings};
use super::{Agent, Contract, ContractError, Guard, Judge, Panel, Prompts};
use crate::findings::panel::Veto;

/// The sections of a contract file read after its settings: the agents,
/// which `Agent::from_raw` checks against their presets, and `[prompt]`,
/// whose fields are checked against each other.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Sections {
    writer: Option<RawAgent>,
    reviewer: Option<RawAgent>,
    reviewers: Option<Vec<RawAgent>>,
    panel: Option<RawPanel>,
    judge: Option<RawJudge>,
    prompt: Option<RawPrompts>,
}

/// `[panel]` (SPEC §6.1).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPanel {
    quorum: Option<Bounded<1, 100>>,
    veto: Option<VetoValue>,
}

/// `panel.veto`, checked while read.
struct VetoValue(Veto);

impl<'de> Deserialize<'de> for VetoValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        match value.as_str().and_then(Veto::parse) {
            Some(veto) => Ok(VetoValue(veto)),
            None => Err(refuse(
                &value,
                "`any` (a must-fix from one reviewer is must-fix) or `majority` (the median severity of the answering reviewers)",
            )),
        }
    }
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

/// The keys of [`Sections`], as a contract file spells them.
pub(super) const SECTIONS: [&str; 6] = [
    "writer",
    "reviewer",
    "reviewers",
    "panel",
    "judge",
    "prompt",
];

/// The sections taken out of a contract's table, read once its settings are.
pub(super) struct Taken(toml::Table);

impl Sections {
    /// Takes the sections out of `table`, leaving the settings.
    pub(super) fn take(table: &mut toml::Table) -> Taken {
        let mut taken = toml::Table::new();
        for key in SECTIONS {
            if let Some(value) = table.remove(key) {
                taken.insert(key.to_string(), value);
            }
        }
        Taken(taken)
    }

    /// An error of the settings, a top-level unknown key's list of what is
    /// allowed completed with the sections.
    pub(super) fn name_in(err: ContractError) -> ContractError {
        match err {
            ContractError::Unknown { field, allowed } if !field.contains('.') => {
                ContractError::Unknown {
                    field,
                    allowed: format!("{allowed}, {}", SECTIONS.join(", ")),
                }
            }
            other => other,
        }
    }
}

impl Taken {
    /// Reads the sections into `contract`.
    pub(super) fn fill(self, contract: &mut Contract) -> Result<(), ContractError> {
        let sections = Sections::deserialize(ValueDe(Value::Table(self.0))).map_err(|err| {
            match ContractError::from(err) {
                // Only a `[[reviewers]]` entry takes a `name`.
                ContractError::Unknown { field, allowed }
                    if field.starts_with("writer.") || field.starts_with("reviewer.") =>
                {
                    let allowed = allowed.replacen("name, ", "", 1);
                    ContractError::Unknown { field, allowed }
                }
                other => other,
            }
        })?;
        if let Some(writer) = sections.writer {
            contract.writer = Some(Agent::from_raw(writer, "writer", Role::Writer)?);
        }
        if let Some(reviewer) = sections.reviewer {
            contract.reviewer = Some(Agent::from_raw(reviewer, "reviewer", Role::Reviewer)?);
        }
        if let Some(reviewers) = sections.reviewers {
            contract.reviewers = members(reviewers, contract.reviewer.is_some())?;
        }
        if let Some(panel) = sections.panel {
            contract.panel = panel.check(contract)?;
        }
        if let Some(judge) = sections.judge {
            contract.judge = Some(Judge::from_raw(judge)?);
        }
        if let Some(prompt) = sections.prompt {
            contract.prompt = prompt.check()?;
        }
        Ok(())
    }
}

/// The `[[reviewers]]` entries, each named once; none beside `[reviewer]`.
fn members(raw: Vec<RawAgent>, has_reviewer: bool) -> Result<Vec<Member>, ContractError> {
    if has_reviewer {
        return Err(ContractError::Invalid {
            field: "reviewers".into(),
            value: "given together with `[reviewer]`".into(),
            allowed: "one of the two: `[reviewer]` for one reviewer, or every reviewer of a panel as a `[[reviewers]]` entry".into(),
        });
    }
    if raw.is_empty() {
        return Err(ContractError::Invalid {
            field: "reviewers".into(),
            value: "an empty list".into(),
            allowed: "at least one `[[reviewers]]` entry".into(),
        });
    }
    let mut members: Vec<Member> = Vec::with_capacity(raw.len());
    for (index, entry) in raw.into_iter().enumerate() {
        let member = Member::from_raw(entry, index)?;
        if let Some(first) = members.iter().position(|m| m.name == member.name) {
            return Err(ContractError::Invalid {
                field: format!("reviewers[{index}].name"),
                value: format!("`{}`, the name of `reviewers[{first}]` too", member.name),
                allowed: "a name no other reviewer of the panel has".into(),
            });
        }
        members.push(member);
    }
    Ok(members)
}

impl RawPanel {
    /// The panel's terms, its quorum no more than the reviewers it names.
    fn check(self, contract: &Contract) -> Result<Panel, ContractError> {
        let quorum = self.quorum.map(|q| q.0 as u32);
        let named = match (&contract.reviewer, contract.reviewers.len()) {
            (Some(_), _) => Some(1),
            (None, 0) => None,
            (None, n) => Some(n as u32),
        };
        if let (Some(q), Some(n)) = (quorum, named)
            && q > n
        {
            return Err(ContractError::Invalid {
                field: "panel.quorum".into(),
                value: q.to_string(),
                allowed: format!(
                    "at most the {n} reviewer{} the contract names",
                    if n == 1 { "" } else { "s" }
                ),
            });
        }
        Ok(Panel {
            quorum,
            veto: self.veto.map(|v| v.0).unwrap_or_default(),
        })
    }
}

impl RawPrompts {
    /// The prompts, each role given inline or as a file, not both.
    fn check(self) -> Result<Prompts, ContractError> {
        for (role, inline, file) in [
            ("writer", self.writer.is_some(), self.writer_file.is_some()),
            (
                "reviewer",
                self.reviewer.is_some(),
                self.reviewer_file.is_some(),
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
        Ok(Prompts {
            writer: self.writer.map(|t| t.0),
            reviewer: self.reviewer.map(|t| t.0),
            writer_file: self.writer_file.map(|p| p.0),
            reviewer_file: self.reviewer_file.map(|p| p.0),
        })
    }
}

/// `guards`: the progress guards in force, in their order, each once.
pub(super) struct Guards(Vec<Guard>);

impl From<Guards> for Vec<Guard> {
    fn from(guards: Guards) -> Vec<Guard> {
        guards.0
    }
}

impl<'de> Deserialize<'de> for Guards {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut guards = Vec::new();
        for name in strings(Value::deserialize(d)?)? {
            let guard = Guard::parse(&name).ok_or_else(|| {
                let names: Vec<String> = Guard::ALL.iter().map(|g| format!("`{g}`")).collect();
                refuse_shown(
                    &format!("`{name}`"),
                    &format!(
                        "a list of progress guards: {} (`[]` for none)",
                        names.join(", ")
                    ),
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
