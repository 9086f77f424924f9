//! How a dry run shows an agent call it does not make: the exact command
//! line (added environment, program, arguments, each shell-quoted and
//! uncut), its folder and timeout, and its prompt, secrets masked. Shared
//! by `run --dry-run` and `hook stop --dry-run`; prints nothing itself.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::agent::preset::{self, Files, Role};
use crate::agent::process::Call;
use crate::agent::prompt;
use crate::contract::Agent;
use crate::engine::{History, Loop};
use crate::redact::redact_str as redact;
use crate::text::shell_word;

/// Where the reviewer runs: a checkout made for the round, named here as
/// it is not made.
pub const CHECKOUT: &str = "<a private checkout of the round's snapshot>";

/// One call a dry run shows.
pub struct Shown<'a> {
    pub role: Role,
    /// A panel's reviewer's name.
    pub name: Option<String>,
    pub agent: &'a Agent,
    pub call: Call,
    pub prompt: String,
}

/// The call of `agent` as `role` in round `round` of `lp`, with `prompt`,
/// in `folder`, as the round would make it.
pub fn call<'a>(
    lp: &Loop,
    history: &History,
    agent: &'a Agent,
    role: Role,
    folder: &Path,
    prompt: String,
) -> Shown<'a> {
    let round = history.round() + 1;
    let files = files(lp, round);
    let schema = prompt::schema_for_agents();
    let remaining = history
        .contract
        .budget
        .usd
        .map(|cap| cap.saturating_sub(history.spent_usd));
    let call = preset::build(
        agent,
        &preset::Context {
            role,
            loop_name: lp.name.as_str(),
            round,
            repo: folder,
            prompt: &prompt,
            files: &files,
            schema: &schema,
            remaining_usd: remaining,
            review_base: None,
        },
    );
    Shown {
        role,
        name: None,
        agent,
        call,
        prompt,
    }
}

/// Every reviewer's call of round `history.round() + 1`: the contract's
/// one reviewer, or each of its panel, named (SPEC §6.1: the same prompt).
pub fn reviewer_calls<'a>(
    lp: &'a Loop,
    history: &History,
    task: &str,
    patch: &str,
) -> anyhow::Result<Vec<Shown<'a>>> {
    let panel = lp.contract().is_panel();
    let mut out = Vec::new();
    for (name, agent) in lp.contract().panel_reviewers() {
        let mut shown = reviewer_call(lp, history, agent, task, patch)?;
        shown.name = panel.then(|| name.to_string());
        out.push(shown);
    }
    Ok(out)
}

/// The reviewer's call of round `history.round() + 1`, its prompt holding
/// `patch` where the round's patch goes.
pub fn reviewer_call<'a>(
    lp: &Loop,
    history: &History,
    reviewer: &'a Agent,
    task: &str,
    patch: &str,
) -> anyhow::Result<Shown<'a>> {
    let round = history.round() + 1;
    let owned = super::round::base_vars(lp, history, round, task);
    let mut vars: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (open, _) = super::round::open_findings(lp, history);
    let findings = prompt::findings_list(&open);
    vars.push(("open_findings", findings.as_str()));
    vars.push(("patch", patch));
    let text = prompt::render(&super::round::template(lp, Role::Reviewer)?, &vars);
    Ok(call(
        lp,
        history,
        reviewer,
        Role::Reviewer,
        Path::new(CHECKOUT),
        text,
    ))
}

impl Shown<'_> {
    fn role_name(&self) -> &'static str {
        match self.role {
            Role::Writer => "writer",
            Role::Reviewer => "reviewer",
        }
    }

    /// The call as JSON: preset, program, args, env, cwd, timeout, prompt.
    pub fn json(&self) -> Value {
        let mut value = json!({
            "preset": self.agent.preset.as_str(),
            "program": self.call.program,
            "args": self.call.args.iter().map(|a| redact(&a.to_string_lossy())).collect::<Vec<_>>(),
            "env": self.call.env.iter().map(|(k, v)| json!([k, redact(v)])).collect::<Vec<_>>(),
            "cwd": self.call.cwd.display().to_string(),
            "timeout_secs": self.call.timeout.as_secs(),
            "prompt": redact(&self.prompt),
        });
        if let (Some(name), Some(map)) = (&self.name, value.as_object_mut()) {
            map.insert("name".into(), json!(name));
        }
        value
    }

    /// The call as a person reads it: a heading, the command line, and the
    /// prompt, each line behind `  | `.
    pub fn text(&self) -> String {
        let role = self.role_name();
        let who = match &self.name {
            Some(name) => format!("`{name}` ({})", self.agent.preset.as_str()),
            None => format!("`{}`", self.agent.preset.as_str()),
        };
        let mut out = format!(
            "\n{role} {who}, in `{}`, at most {} s:\n  {}\n{role}'s prompt, on stdin:\n",
            self.call.cwd.display(),
            self.call.timeout.as_secs(),
            redact(&command_line(&self.call))
        );
        for line in redact(&self.prompt).lines() {
            out.push_str(&format!("  | {line}\n"));
        }
        out
    }
}

/// `env K=V … program args…`, each word quoted for a POSIX shell, in full.
fn command_line(call: &Call) -> String {
    let mut words: Vec<String> = Vec::new();
    if !call.env.is_empty() {
        words.push("env".into());
        words.extend(
            call.env
                .iter()
                .map(|(k, v)| shell_word(&format!("{k}={v}"))),
        );
    }
    words.push(shell_word(&call.program));
    words.extend(call.args.iter().map(|a| shell_word(&a.to_string_lossy())));
    words.join(" ")
}

/// The round's scratch files, as a round would name them (not made).
fn files(lp: &Loop, round: u32) -> Files {
    let dir: PathBuf = lp
        .store
        .loop_dir()
        .join(format!(".work-{}-round-{round}-XXXXXX", std::process::id()));
    super::scratch::files_in(&dir)
}
