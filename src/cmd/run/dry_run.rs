//! `referee run --dry-run`: the next round's agent calls as they would be
//! made (program, arguments, added environment, folder) and their prompts,
//! without calling an agent, taking a lock or writing a file.

use serde_json::json;

use super::super::dry_run;
use crate::agent::preset::Role;
use crate::agent::prompt;
use crate::contract::Agent;
use crate::engine::{History, Loop};

/// What stands in the reviewer's prompt for the patch the writer has not
/// written yet.
const PATCH: &str = "<the writer's patch of this round>";

/// What stands for the patch a `--review-first` round reviews.
const REVIEWED_FIRST: &str = "<the changes already in the work tree>";

/// Prints the next round's calls of `lp`'s `writer` and reviewer (each
/// reviewer of a panel); with `review_first`, the reviewers' alone (the
/// round reviews the changes already made).
pub(super) fn show(
    lp: &Loop,
    history: &History,
    writer: &Agent,
    task: &str,
    review_first: bool,
    json_out: bool,
) -> anyhow::Result<()> {
    let round = history.round() + 1;
    let owned = super::super::round::base_vars(lp, history, round, task);
    let mut vars: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (_, must_fix) = super::super::round::open_findings(lp, history);
    let list = prompt::findings_list(&must_fix);
    vars.push(("findings", list.as_str()));
    let writer_prompt = prompt::render(&super::super::round::template(lp, Role::Writer)?, &vars);
    let writer_call = (!review_first)
        .then(|| dry_run::call(lp, history, writer, Role::Writer, &lp.repo, writer_prompt));
    let patch = if review_first { REVIEWED_FIRST } else { PATCH };
    let reviewer_calls = dry_run::reviewer_calls(lp, history, task, patch)?;

    if json_out {
        let doc = json!({
            "loop": lp.name.as_str(),
            "round": round,
            "dry_run": true,
            "writer": writer_call.as_ref().map(|c| c.json()),
            "reviewer": reviewer_calls.first().map(|c| c.json()),
            "reviewers": reviewer_calls.iter().map(|c| c.json()).collect::<Vec<_>>(),
        });
        return super::super::emit_json(&doc);
    }
    let mut out = format!(
        "dry run of round {round} of loop `{}`: nothing is called, locked or recorded\n",
        lp.name
    );
    match &writer_call {
        Some(call) => out.push_str(&call.text()),
        None => out.push_str(
            "\nno writer call: `--review-first` reviews the changes already in the work tree\n",
        ),
    }
    for call in &reviewer_calls {
        out.push_str(&call.text());
    }
    super::super::emit(&out)
}
