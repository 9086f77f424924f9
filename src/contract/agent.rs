//! The `[writer]`, `[reviewer]` and `[judge]` sections. Pure.

use std::collections::BTreeMap;

use serde::de::{Deserializer, Error as _, Unexpected};
use serde::{Deserialize, Serialize, Serializer};
use toml::Value;

use super::preset::Preset;
use super::value::{Argv, Bounded, Env, MemberName, RepoFolder, RepoPath, Strings, Text, describe};
use super::{ContractError, Timeout};

/// Which side of the loop an agent plays: the contract's `[writer]` or
/// `[reviewer]`, and the call a preset builds for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Writer,
    Reviewer,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Writer => "writer",
            Role::Reviewer => "reviewer",
        }
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
    /// What a test report with no test case is (the `tests` preset).
    #[serde(skip_serializing_if = "EmptyReport::is_refuse")]
    pub empty_report: EmptyReport,
}

/// What a test report that holds no test case is: no proof of a clean
/// round (`refuse`, the default: test discovery broke, the runner collected
/// nothing), or a clean round (`clean`: a suite that may be empty).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EmptyReport {
    #[default]
    Refuse,
    Clean,
}

impl EmptyReport {
    pub fn as_str(self) -> &'static str {
        match self {
            EmptyReport::Refuse => "refuse",
            EmptyReport::Clean => "clean",
        }
    }

    fn is_refuse(&self) -> bool {
        *self == EmptyReport::Refuse
    }

    /// A review as this setting reads it: under `clean`, a test report
    /// with no test case is a clean round.
    pub fn apply(
        self,
        read: Result<crate::findings::Parsed, crate::findings::FindingsError>,
    ) -> Result<crate::findings::Parsed, crate::findings::FindingsError> {
        match read {
            Err(crate::findings::FindingsError::NoTestCase) if self == EmptyReport::Clean => {
                Ok(crate::findings::Parsed {
                    source_format: crate::findings::Format::Junit,
                    findings: Vec::new(),
                    resolved: Vec::new(),
                })
            }
            other => other,
        }
    }
}

impl<'de> Deserialize<'de> for EmptyReport {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        match value.as_str() {
            Some("refuse") => Ok(EmptyReport::Refuse),
            Some("clean") => Ok(EmptyReport::Clean),
            _ => Err(super::value::refuse(
                &value,
                "`refuse` (a report with no test case proves nothing: the default) or `clean` (a suite that may be empty)",
            )),
        }
    }
}

/// A reviewer of a `[[reviewers]]` panel (SPEC §6.1): its name and agent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Member {
    pub name: String,
    #[serde(flatten)]
    pub agent: Agent,
}

impl Member {
    /// The `index`th `[[reviewers]]` entry (0-based), with its required
    /// name.
    pub(super) fn from_raw(mut raw: RawAgent, index: usize) -> Result<Member, ContractError> {
        let section = format!("reviewers[{index}]");
        let Some(name) = raw.name.take() else {
            return Err(ContractError::Missing {
                field: format!("{section}.name"),
                allowed: format!(
                    "each panel reviewer is named: {}, such as \"codex\"",
                    MemberName::SHAPE
                ),
            });
        };
        let agent = Agent::from_raw(raw, &section, Role::Reviewer)?;
        Ok(Member {
            name: name.0,
            agent,
        })
    }
}

/// A `[writer]` or `[reviewer]` table as written; `Agent::from_raw` checks
/// what serde cannot: the options each preset takes.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAgent {
    /// Only in a `[[reviewers]]` entry.
    name: Option<MemberName>,
    preset: Option<Preset>,
    model: Option<Text>,
    bin: Option<Text>,
    args: Option<Strings>,
    env: Option<Env>,
    timeout: Option<Timeout>,
    command: Option<Argv>,
    junit: Option<RepoPath>,
    cwd: Option<RepoFolder>,
    allowed_tools: Option<Strings>,
    max_turns: Option<Bounded<1, 10_000>>,
    sandbox: Option<Text>,
    empty_report: Option<EmptyReport>,
}

impl Agent {
    /// An agent of `preset` with every option at its default (tests).
    #[cfg(test)]
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
            empty_report: EmptyReport::Refuse,
        }
    }

    pub(super) fn from_raw(
        raw: RawAgent,
        section: &str,
        role: Role,
    ) -> Result<Agent, ContractError> {
        let invalid = |field: &str, value: &Value, allowed: &str| ContractError::Invalid {
            field: format!("{section}.{field}"),
            value: describe(value),
            allowed: allowed.to_string(),
        };
        if let Some(name) = &raw.name {
            return Err(invalid(
                "name",
                &Value::String(name.0.clone()),
                "absent: only a `[[reviewers]]` entry of a panel has a name",
            ));
        }
        let Some(preset) = raw.preset else {
            return Err(ContractError::Missing {
                field: format!("{section}.preset"),
                allowed: format!("one of {}", Preset::names(|_| true)),
            });
        };
        let name = preset.as_str();
        if !preset.info().roles.contains(&role) {
            let plays = match role {
                Role::Writer => "reviews",
                Role::Reviewer => "writes",
            };
            return Err(invalid(
                "preset",
                &Value::String(name.to_string()),
                &format!(
                    "a {} preset ({}); `{name}` only {plays}",
                    role.as_str(),
                    Preset::names(|p| p.info().roles.contains(&role))
                ),
            ));
        }
        if preset.reads("command") && raw.command.is_none() {
            return Err(ContractError::Missing {
                field: format!("{section}.command"),
                allowed: format!("the `{name}` preset runs an argv such as [\"cargo\", \"test\"]"),
            });
        }
        if !preset.reads("command")
            && let Some(command) = &raw.command
        {
            return Err(invalid(
                "command",
                &command.toml(),
                &format!(
                    "absent: the `{name}` preset builds its own command (use `bin` and `args`)"
                ),
            ));
        }
        if preset.reads("junit") && raw.junit.is_none() {
            return Err(ContractError::Missing {
                field: format!("{section}.junit"),
                allowed: format!(
                    "the `{name}` preset reads the JUnit report the test command writes, such as \"target/nextest/ci/junit.xml\""
                ),
            });
        }
        // Options a preset would silently ignore are refused: nothing falls back silently.
        let given = [
            ("sandbox", raw.sandbox.as_ref().map(Text::toml)),
            (
                "allowed_tools",
                raw.allowed_tools.as_ref().map(Strings::toml),
            ),
            ("max_turns", raw.max_turns.map(Bounded::toml)),
            ("model", raw.model.as_ref().map(Text::toml)),
            ("bin", raw.bin.as_ref().map(Text::toml)),
        ];
        for (field, value) in &given {
            if !preset.reads(field)
                && let Some(value) = value
            {
                return Err(invalid(
                    field,
                    value,
                    &format!("absent: the `{name}` preset does not use `{field}`"),
                ));
            }
        }
        if !preset.reads("empty_report")
            && let Some(empty) = raw.empty_report
        {
            return Err(invalid(
                "empty_report",
                &Value::String(empty.as_str().into()),
                &format!(
                    "absent: only the `{}` preset reads a test report",
                    Preset::names(|p| p.reads("empty_report"))
                ),
            ));
        }
        if !preset.reads("junit")
            && let Some(junit) = &raw.junit
        {
            return Err(invalid(
                "junit",
                &junit.toml(),
                &format!(
                    "absent: only the `{}` preset reads a JUnit report",
                    Preset::names(|p| p.reads("junit"))
                ),
            ));
        }
        Ok(Agent {
            preset,
            model: raw.model.map(|t| t.0),
            bin: raw.bin.map(|t| t.0),
            args: raw.args.map(|a| a.0).unwrap_or_default(),
            env: raw.env.map(|e| e.0).unwrap_or_default(),
            timeout: raw.timeout.unwrap_or(Timeout::DEFAULT),
            command: raw.command.map(|c| c.0),
            junit: raw.junit.map(|j| j.0),
            cwd: raw.cwd.map(|c| c.0),
            allowed_tools: raw.allowed_tools.map(|t| t.0).unwrap_or_default(),
            max_turns: raw.max_turns.map(|n| n.0 as u32),
            sandbox: raw.sandbox.map(|t| t.0),
            empty_report: raw.empty_report.unwrap_or_default(),
        })
    }
}

/// How the judge is asked (SPEC §7): answers from a file, a command, or a
/// preset whose row says it judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JudgeEngine {
    Replay,
    Command,
    Preset(Preset),
}

impl JudgeEngine {
    pub fn as_str(self) -> &'static str {
        match self {
            JudgeEngine::Replay => "replay",
            JudgeEngine::Command => "command",
            JudgeEngine::Preset(preset) => preset.as_str(),
        }
    }

    fn parse(text: &str) -> Option<JudgeEngine> {
        match text {
            "replay" => Some(JudgeEngine::Replay),
            "command" => Some(JudgeEngine::Command),
            _ => Preset::parse(text)
                .filter(|p| p.info().judges)
                .map(JudgeEngine::Preset),
        }
    }

    fn allowed() -> String {
        format!(
            "one of replay, command, {}",
            Preset::names(|p| p.info().judges)
        )
    }
}

impl Serialize for JudgeEngine {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for JudgeEngine {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        JudgeEngine::parse(&text).ok_or_else(|| {
            D::Error::invalid_value(Unexpected::Str(&text), &JudgeEngine::allowed().as_str())
        })
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

/// A `[judge]` table as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawJudge {
    engine: Option<JudgeEngine>,
    replay: Option<RepoPath>,
    command: Option<Argv>,
    model: Option<Text>,
    bin: Option<Text>,
    args: Option<Strings>,
    env: Option<Env>,
    use_case: Option<Text>,
    what: Option<Text>,
    questions: Option<RepoPath>,
    max_state_bytes: Option<Bounded<256, { 16 * 1024 * 1024 }>>,
    timeout: Option<Timeout>,
}

impl Judge {
    pub const DEFAULT_MAX_STATE_BYTES: u64 = 24_576;

    pub(super) fn from_raw(raw: RawJudge) -> Result<Judge, ContractError> {
        let Some(engine) = raw.engine else {
            return Err(ContractError::Missing {
                field: "judge.engine".into(),
                allowed: JudgeEngine::allowed(),
            });
        };
        let judge = Judge {
            engine,
            replay: raw.replay.map(|p| p.0),
            command: raw.command.map(|c| c.0),
            model: raw.model.map(|t| t.0),
            bin: raw.bin.map(|t| t.0),
            args: raw.args.map(|a| a.0).unwrap_or_default(),
            env: raw.env.map(|e| e.0).unwrap_or_default(),
            use_case: raw
                .use_case
                .map_or_else(|| "a code change".to_string(), |t| t.0),
            what: raw.what.map_or_else(|| "the patch".to_string(), |t| t.0),
            questions: raw.questions.map(|p| p.0),
            max_state_bytes: raw
                .max_state_bytes
                .map_or(Self::DEFAULT_MAX_STATE_BYTES, |n| n.0 as u64),
            timeout: raw.timeout.unwrap_or(Timeout::JUDGE_DEFAULT),
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
