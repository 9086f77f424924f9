//! `referee approve` and `referee reject`: a person's decision on the loop's
//! outcome, appended to the ledger and bound to the exact bytes — the tree of
//! the last round's snapshot. An approval of a tree that changed since is
//! refused.

use clap::Args;
use serde_json::json;

use crate::engine::History;
use crate::exit::{Exit, UsageError, hinted};
use crate::ledger::{Draft, Kind};
use crate::snapshot;
use crate::state::LoopSelect;
use crate::state::State;

#[derive(Debug, Args)]
pub struct DecisionArgs {
    #[command(flatten)]
    pub select: LoopSelect,
    /// Who decides.
    #[arg(long, value_name = "NAME")]
    pub by: String,
    /// Why.
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn approve(state: &State, args: DecisionArgs) -> anyhow::Result<Exit> {
    decide(state, args, Kind::Approve)
}

pub fn reject(state: &State, args: DecisionArgs) -> anyhow::Result<Exit> {
    decide(state, args, Kind::Reject)
}

fn decide(state: &State, args: DecisionArgs, kind: Kind) -> anyhow::Result<Exit> {
    let by = super::person_words(&args.by);
    if by.is_empty() {
        return Err(UsageError("--by: name the person who decides".into()).into());
    }
    let reason = super::person_words(args.reason.as_deref().unwrap_or_default());
    let lp = super::open_loop(state, &args.select)?;
    super::refuse_if_driven(&lp, "a decision on its outcome")?;
    let at = super::now()?;
    let mut locked = lp.store.lock()?;
    let history = History::read(&lp, locked.rows()?)?;
    let Some((row, last)) = &history.last else {
        return Err(hinted(
            format!(
                "loop `{}` has no round yet: there is nothing to decide on",
                lp.name
            ),
            format!(
                "`referee record --loop {} --findings FILE` records round 1",
                lp.name
            ),
        ));
    };
    let verb = if kind == Kind::Approve {
        "approve"
    } else {
        "reject"
    };
    if kind == Kind::Approve {
        let now = lp.worktree_tree()?;
        if now != last.snapshot.tree {
            let changed = snapshot::changed_paths(&lp.repo, &last.snapshot.tree, &now)?;
            return Err(hinted(
                format!(
                    "cannot approve loop `{}`: the working tree is not the tree of round {} ({} changed: {})",
                    lp.name,
                    row.round,
                    crate::text::plural(changed.len(), "path"),
                    changed
                        .iter()
                        .map(|p| format!("`{p}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                format!(
                    "record another round first (`referee record --loop {} --findings FILE`), or restore the round's tree",
                    lp.name
                ),
            ));
        }
    }
    let mut draft = Draft::new(kind, row.round, &at);
    draft.by = by.clone();
    draft.reason = reason;
    draft.subject = last.snapshot.tree.clone();
    draft.snapshot = last.snapshot.commit.clone();
    let appended = locked.append(draft, None)?;
    drop(locked);
    if args.json {
        let value = json!({
            "loop": lp.name.as_str(),
            "decision": verb,
            "by": by,
            "round": row.round,
            "tree": last.snapshot.tree,
            "row": appended.to_json(),
        });
        super::emit_json(&value)?;
    } else {
        let what = if kind == Kind::Approve {
            "approved"
        } else {
            "rejected"
        };
        let mut out = format!(
            "{what} loop `{}` by {by}: round {} (tree {}, {})\n",
            lp.name,
            row.round,
            &last.snapshot.tree.get(..12).unwrap_or(&last.snapshot.tree),
            last.snapshot.reference
        );
        if kind == Kind::Approve {
            out.push_str(&format!(
                "CI can hold merges to these bytes: `referee approval check --loop {}`\n",
                lp.name
            ));
        } else {
            out.push_str(&format!(
                "the loop takes no more rounds until a person resumes it: `referee resume --loop {} --by NAME --reason TEXT`\n",
                lp.name
            ));
        }
        super::emit(&out)?;
    }
    Ok(Exit::Success)
}
