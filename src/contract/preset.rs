//! The preset table (SPEC §6): each preset's name, the tool it runs, how to
//! install that tool, the sides it plays, the contract options it reads, the
//! format of its review and whether the judge can run as it. Contract
//! validation, the units in `agent/preset/`, the judge and `run`'s preflight
//! all read this one table. Pure.

use serde::de::{Deserializer, Error as _, Unexpected};
use serde::{Deserialize, Serialize, Serializer};

use super::agent::Role;
use crate::findings::Format;

/// How an agent is run: a row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    Claude,
    Codex,
    CodexReview,
    Gemini,
    Command,
    Tests,
}

/// What the table says of one preset.
#[derive(Debug)]
pub struct PresetInfo {
    /// As the contract spells it.
    pub name: &'static str,
    /// The program it runs unless the contract names a `bin`; `None`: the
    /// first word of the contract's `command`.
    pub tool: Option<&'static str>,
    /// How to install that tool, for a message.
    pub install: Option<&'static str>,
    /// The sides of the loop it can play.
    pub roles: &'static [Role],
    /// The contract options it reads beyond those every agent has (`args`,
    /// `env`, `timeout`, `cwd`); the contract refuses the others for it, and
    /// requires `command` and `junit` where it reads them.
    pub options: &'static [&'static str],
    /// How its review is read.
    pub review: Format,
    /// Whether `[judge] engine` can name it.
    pub judges: bool,
}

const BOTH: &[Role] = &[Role::Writer, Role::Reviewer];
const REVIEWS: &[Role] = &[Role::Reviewer];

impl Preset {
    /// Every preset, in the order messages list them.
    pub const ALL: [Preset; 6] = [
        Preset::Claude,
        Preset::Codex,
        Preset::CodexReview,
        Preset::Gemini,
        Preset::Command,
        Preset::Tests,
    ];

    pub fn info(self) -> &'static PresetInfo {
        match self {
            Preset::Claude => &PresetInfo {
                name: "claude",
                tool: Some("claude"),
                install: Some("npm install -g @anthropic-ai/claude-code"),
                roles: BOTH,
                options: &["model", "bin", "allowed_tools", "max_turns"],
                review: Format::Auto,
                judges: true,
            },
            Preset::Codex => &PresetInfo {
                name: "codex",
                tool: Some("codex"),
                install: Some("npm install -g @openai/codex"),
                roles: BOTH,
                options: &["model", "bin", "sandbox"],
                review: Format::Auto,
                judges: true,
            },
            Preset::CodexReview => &PresetInfo {
                name: "codex-review",
                tool: Some("codex"),
                install: Some("npm install -g @openai/codex"),
                roles: REVIEWS,
                options: &["model", "bin"],
                review: Format::Codex,
                judges: false,
            },
            Preset::Gemini => &PresetInfo {
                name: "gemini",
                tool: Some("gemini"),
                install: Some("npm install -g @google/gemini-cli"),
                roles: BOTH,
                options: &["model", "bin"],
                review: Format::Auto,
                judges: false,
            },
            Preset::Command => &PresetInfo {
                name: "command",
                tool: None,
                install: None,
                roles: BOTH,
                options: &["command"],
                review: Format::Auto,
                judges: false,
            },
            Preset::Tests => &PresetInfo {
                name: "tests",
                tool: None,
                install: None,
                roles: REVIEWS,
                options: &["command", "junit", "empty_report"],
                review: Format::Junit,
                judges: false,
            },
        }
    }

    pub fn as_str(self) -> &'static str {
        self.info().name
    }

    pub fn parse(text: &str) -> Option<Preset> {
        Preset::ALL.into_iter().find(|p| p.as_str() == text)
    }

    /// Whether the contract's `option` applies to it.
    pub fn reads(self, option: &str) -> bool {
        self.info().options.contains(&option)
    }

    /// The names of the presets `keep` picks, in table order, comma separated.
    pub fn names(keep: impl Fn(Preset) -> bool) -> String {
        Preset::ALL
            .into_iter()
            .filter(|&p| keep(p))
            .map(Preset::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl Serialize for Preset {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Preset {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Preset::parse(&text).ok_or_else(|| {
            D::Error::invalid_value(
                Unexpected::Str(&text),
                &format!("one of {}", Preset::names(|_| true)).as_str(),
            )
        })
    }
}
