//! `referee run --dry-run`: the next round's agent calls as they would be
//! made (program, arguments, added environment, folder) and their prompts,
//! without calling an agent, taking a lock or writing a file.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::agent::preset::{self, Files, Role};
use crate::agent::process::Call;
use crate::agent::prompt;
use crate::contract::Agent;
use crate::engine::{History, Loop};
use crate::text::shell_word;

/// Where the reviewer runs: a checkout made for the round, named here as
/// it is not made.
const CHECKOUT: &str = "<a private checkout of the round's snapshot>";

/// What stands in the reviewer's prompt for the patch the writer has not
/// written yet.
const PATCH: &str = "<the writer's patch of this round>";

/// Prints the next round's calls of `lp`'s `writer` and `reviewer`.
pub(super) fn show(
    lp: &Loop,
    history: &History,
    writer: &Agent,
    reviewer: &Agent,
    task: &str,
    json_out: bool,
) -> anyhow::Result<()> {
    let round = history.round() + 1;
    let files = files(lp, round);
    let schema = prompt::schema_for_agents();
    let owned = super::super::round::base_vars(lp, history, round, task);
    let base: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (open, must_fix) = super::super::round::open_findings(lp, history);

    let list = prompt::findings_list(&must_fix);
    let mut vars = base.clone();
    vars.push(("findings", list.as_str()));
    let writer_prompt = prompt::render(&super::super::round::template(lp, Role::Writer)?, &vars);
    let remaining = history
        .contract
        .budget
        .usd
        .map(|cap| cap.saturating_sub(history.spent_usd));
    let context = |role, repo: &Path, text: &str| {
        preset::build(
            if role == Role::Writer {
                writer
            } else {
                reviewer
            },
            &preset::Context {
                role,
                loop_name: lp.name.as_str(),
                round,
                repo,
                prompt: text,
                files: &files,
                schema: &schema,
                remaining_usd: remaining,
                review_base: None,
            },
        )
    };
    let writer_call = context(Role::Writer, &lp.repo, &writer_prompt);

    let findings = prompt::findings_list(&open);
    let mut vars = base.clone();
    vars.push(("open_findings", findings.as_str()));
    vars.push(("patch", PATCH));
    let reviewer_prompt =
        prompt::render(&super::super::round::template(lp, Role::Reviewer)?, &vars);
    let reviewer_call = context(Role::Reviewer, Path::new(CHECKOUT), &reviewer_prompt);

    let redact = crate::redact::redact_str;
    if json_out {
        let call = |call: &Call, agent: &Agent, text: &str| {
            json!({
                "preset": agent.preset.as_str(),
                "program": call.program,
                "args": call.args.iter().map(|a| redact(&a.to_string_lossy())).collect::<Vec<_>>(),
                "env": call.env.iter().map(|(k, v)| json!([k, redact(v)])).collect::<Vec<_>>(),
                "cwd": call.cwd.display().to_string(),
                "timeout_secs": call.timeout.as_secs(),
                "prompt": redact(text),
            })
        };
        let doc = json!({
            "loop": lp.name.as_str(),
            "round": round,
            "dry_run": true,
            "writer": call(&writer_call, writer, &writer_prompt),
            "reviewer": call(&reviewer_call, reviewer, &reviewer_prompt),
        });
        return super::super::emit_json(&doc);
    }
    let mut out = format!(
        "dry run of round {round} of loop `{}`: nothing is called, locked or recorded\n",
        lp.name
    );
    for (role, agent, call, text) in [
        ("writer", writer, &writer_call, &writer_prompt),
        ("reviewer", reviewer, &reviewer_call, &reviewer_prompt),
    ] {
        out.push_str(&format!(
            "\n{role} `{}`, in `{}`, at most {} s:\n  {}\n{role}'s prompt, on stdin:\n",
            agent.preset.as_str(),
            call.cwd.display(),
            call.timeout.as_secs(),
            redact(&command_line(call))
        ));
        for line in redact(text).lines() {
            out.push_str(&format!("  | {line}\n"));
        }
    }
    super::super::emit(&out)
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

/// The round's scratch files, as `run` would name them (not made).
fn files(lp: &Loop, round: u32) -> Files {
    let dir: PathBuf = lp
        .store
        .loop_dir()
        .join(format!(".work-{}-round-{round}-XXXXXX", std::process::id()));
    super::super::scratch::files_in(&dir)
}
