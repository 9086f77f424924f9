//! The `[writer]`, `[reviewer]` and `[judge]` sections. Pure.

use std::collections::BTreeMap;

use serde::Serialize;
use toml::{Table, Value};

use super::value::Fields;
use super::{ContractError, Timeout};

/// Which side of the loop an agent plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    Writer,
    Reviewer,
}

/// How an agent is run (SPEC §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    Claude,
    Codex,
    CodexReview,
    Gemini,
    Command,
    Tests,
}

impl Preset {
    pub const NAMES: &'static str = "claude, codex, codex-review, gemini, command, tests";

    pub fn parse(text: &str) -> Option<Preset> {
        Some(match text {
            "claude" => Preset::Claude,
            "codex" => Preset::Codex,
            "codex-review" => Preset::CodexReview,
            "gemini" => Preset::Gemini,
            "command" => Preset::Command,
            "tests" => Preset::Tests,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Preset::Claude => "claude",
            Preset::Codex => "codex",
            Preset::CodexReview => "codex-review",
            Preset::Gemini => "gemini",
            Preset::Command => "command",
            Preset::Tests => "tests",
        }
    }

    /// Presets that run an argv given in the contract.
    pub fn needs_command(self) -> bool {
        matches!(self, Preset::Command | Preset::Tests)
    }
}

/// A writer or reviewer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Agent {
    pub preset: Preset,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bin: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    pub timeout: Timeout,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub junit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allowed_tools: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
}

const AGENT_FIELDS: &[&str] = &[
    "preset",
    "model",
    "bin",
    "args",
    "env",
    "timeout",
    "command",
    "junit",
    "cwd",
    "allowed_tools",
    "max_turns",
    "sandbox",
];

impl Agent {
    /// An agent of `preset` with every option at its default.
    pub fn new(preset: Preset) -> Agent {
        Agent {
            preset,
            model: None,
            bin: None,
            args: Vec::new(),
            env: BTreeMap::new(),
            timeout: Timeout::DEFAULT,
            command: None,
            junit: None,
            cwd: None,
            allowed_tools: Vec::new(),
            max_turns: None,
            sandbox: None,
        }
    }

    pub(super) fn from_table(
        table: &Table,
        section: &'static str,
        role: Role,
    ) -> Result<Agent, ContractError> {
        let prefix: &'static str = if section == "writer" {
            "writer."
        } else {
            "reviewer."
        };
        let fields = Fields::new(table, prefix);
        fields.only(AGENT_FIELDS)?;
        let preset_text = fields.required_str("preset", &format!("one of {}", Preset::NAMES))?;
        let preset = Preset::parse(&preset_text).ok_or_else(|| {
            fields.invalid(
                "preset",
                &Value::String(preset_text.clone()),
                &format!("one of {}", Preset::NAMES),
            )
        })?;
        if preset == Preset::Tests && role == Role::Writer {
            return Err(fields.invalid(
                "preset",
                &Value::String(preset_text),
                "a writer preset (claude, codex, gemini, command); `tests` only reviews",
            ));
        }
        if preset == Preset::CodexReview && role == Role::Writer {
            return Err(fields.invalid(
                "preset",
                &Value::String(preset_text),
                "a writer preset (claude, codex, gemini, command); `codex-review` only reviews",
            ));
        }
        let mut agent = Agent::new(preset);
        agent.model = fields.text("model")?;
        agent.bin = fields.text("bin")?;
        agent.args = fields.strings("args")?.unwrap_or_default();
        agent.env = fields.env("env")?.unwrap_or_default();
        agent.timeout = fields.timeout("timeout")?.unwrap_or(Timeout::DEFAULT);
        agent.command = fields.argv("command")?;
        agent.junit = fields.repo_path("junit")?;
        agent.cwd = fields.text("cwd")?;
        agent.allowed_tools = fields.strings("allowed_tools")?.unwrap_or_default();
        agent.max_turns = fields.int("max_turns", 1, 10_000)?.map(|n| n as u32);
        agent.sandbox = fields.text("sandbox")?;
        if preset.needs_command() && agent.command.is_none() {
            return Err(ContractError::Missing {
                field: format!("{prefix}command"),
                allowed: format!(
                    "the `{}` preset runs an argv such as [\"cargo\", \"test\"]",
                    preset.as_str()
                ),
            });
        }
        if !preset.needs_command()
            && let Some(value) = fields.get("command")
        {
            return Err(fields.invalid(
                "command",
                value,
                &format!(
                    "absent: the `{}` preset builds its own command (use `bin` and `args`)",
                    preset.as_str()
                ),
            ));
        }
        if preset == Preset::Tests && agent.junit.is_none() {
            return Err(ContractError::Missing {
                field: format!("{prefix}junit"),
                allowed: "the `tests` preset reads the JUnit report the test command writes, such as \"target/nextest/ci/junit.xml\"".into(),
            });
        }
        // Options a preset would silently ignore are refused: nothing falls back silently.
        let applies: &[(&str, &[Preset])] = &[
            ("sandbox", &[Preset::Codex]),
            ("allowed_tools", &[Preset::Claude]),
            ("max_turns", &[Preset::Claude]),
            (
                "model",
                &[
                    Preset::Claude,
                    Preset::Codex,
                    Preset::CodexReview,
                    Preset::Gemini,
                ],
            ),
            (
                "bin",
                &[
                    Preset::Claude,
                    Preset::Codex,
                    Preset::CodexReview,
                    Preset::Gemini,
                ],
            ),
        ];
        for (field, presets) in applies {
            if !presets.contains(&preset)
                && let Some(value) = fields.get(field)
            {
                return Err(fields.invalid(
                    field,
                    value,
                    &format!(
                        "absent: the `{}` preset does not use `{field}`",
                        preset.as_str()
                    ),
                ));
            }
        }
        if let Some(cwd) = &agent.cwd
            && (cwd.starts_with('/') || cwd.split(['/', '\\']).any(|p| p == ".."))
        {
            return Err(fields.invalid(
                "cwd",
                &Value::String(cwd.clone()),
                "a folder inside the repository, relative to its top (no `..`, not absolute)",
            ));
        }
        if preset != Preset::Tests
            && let Some(value) = fields.get("junit")
        {
            return Err(fields.invalid(
                "junit",
                value,
                "absent: only the `tests` preset reads a JUnit report",
            ));
        }
        Ok(agent)
    }
}

/// How the judge is asked (SPEC §7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JudgeEngine {
    Replay,
    Command,
    Claude,
    Codex,
}

impl JudgeEngine {
    pub fn as_str(self) -> &'static str {
        match self {
            JudgeEngine::Replay => "replay",
            JudgeEngine::Command => "command",
            JudgeEngine::Claude => "claude",
            JudgeEngine::Codex => "codex",
        }
    }
}

/// The optional judge.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Judge {
    pub engine: JudgeEngine,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bin: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    pub use_case: String,
    pub what: String,
    /// A custom question set (JSON, repo-relative); the defaults otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub questions: Option<String>,
    pub max_state_bytes: u64,
    pub timeout: Timeout,
}

const JUDGE_FIELDS: &[&str] = &[
    "engine",
    "replay",
    "command",
    "model",
    "bin",
    "args",
    "env",
    "use_case",
    "what",
    "questions",
    "max_state_bytes",
    "timeout",
];

impl Judge {
    pub const DEFAULT_MAX_STATE_BYTES: u64 = 24_576;

    pub(super) fn from_table(table: &Table) -> Result<Judge, ContractError> {
        let fields = Fields::new(table, "judge.");
        fields.only(JUDGE_FIELDS)?;
        let allowed = "one of replay, command, claude, codex";
        let engine_text = fields.required_str("engine", allowed)?;
        let engine = match engine_text.as_str() {
            "replay" => JudgeEngine::Replay,
            "command" => JudgeEngine::Command,
            "claude" => JudgeEngine::Claude,
            "codex" => JudgeEngine::Codex,
            _ => return Err(fields.invalid("engine", &Value::String(engine_text), allowed)),
        };
        let judge = Judge {
            engine,
            replay: fields.repo_path("replay")?,
            command: fields.argv("command")?,
            model: fields.text("model")?,
            bin: fields.text("bin")?,
            args: fields.strings("args")?.unwrap_or_default(),
            env: fields.env("env")?.unwrap_or_default(),
            use_case: fields
                .text("use_case")?
                .unwrap_or_else(|| "a code change".to_string()),
            what: fields
                .text("what")?
                .unwrap_or_else(|| "the patch".to_string()),
            questions: fields.repo_path("questions")?,
            max_state_bytes: fields
                .int("max_state_bytes", 256, 16 * 1024 * 1024)?
                .map_or(Self::DEFAULT_MAX_STATE_BYTES, |n| n as u64),
            timeout: fields.timeout("timeout")?.unwrap_or(Timeout::JUDGE_DEFAULT),
        };
        if engine == JudgeEngine::Replay && judge.replay.is_none() {
            return Err(ContractError::Missing {
                field: "judge.replay".into(),
                allowed:
                    "the `replay` engine reads answers from a JSON file such as \"judge.json\""
                        .into(),
            });
        }
        if engine == JudgeEngine::Command && judge.command.is_none() {
            return Err(ContractError::Missing {
                field: "judge.command".into(),
                allowed: "the `command` engine runs an argv that reads the request on stdin".into(),
            });
        }
        Ok(judge)
    }
}
