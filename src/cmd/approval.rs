//! `referee approval check`: exit 0 only when the working tree (or a commit's
//! tree), leaving out the state folder, is byte-for-byte the tree a person
//! approved; 20 naming the paths that differ; 1 when nothing is approved.

use clap::Args;
use serde_json::json;

use crate::engine::History;
use crate::exit::{Exit, hinted};
use crate::ledger::Kind;
use crate::report::error::with_hints;
use crate::snapshot;
use crate::state::LoopSelect;
use crate::state::State;

#[derive(Debug, Args)]
pub struct ApprovalCheckArgs {
    #[command(flatten)]
    pub select: LoopSelect,
    /// Check this commit's tree instead of the working tree.
    #[arg(long, value_name = "R")]
    pub rev: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn check(state: &State, args: ApprovalCheckArgs) -> anyhow::Result<Exit> {
    let lp = super::open_loop(state, &args.select)?;
    let history = History::read(&lp, lp.store.read()?.rows)?;
    let decision = history
        .rows
        .iter()
        .rev()
        .find(|r| matches!(r.kind, Kind::Approve | Kind::Reject));
    let approval = match decision {
        Some(row) if row.kind == Kind::Approve => row,
        Some(row) => anyhow::bail!(
            "loop `{}` is not approved: the latest decision is a rejection by {} at {}",
            lp.name,
            row.by,
            row.at
        ),
        None => {
            return Err(hinted(
                format!("loop `{}` has no approval", lp.name),
                format!(
                    "a person approves with `referee approve --loop {} --by NAME`",
                    lp.name
                ),
            ));
        }
    };
    let exclude: Vec<&str> = lp.exclude.iter().map(String::as_str).collect();
    let (what, tree) = match &args.rev {
        Some(rev) => (format!("`{rev}`"), lp.tree_of(rev)?),
        None => ("the working tree".to_string(), lp.worktree_tree()?),
    };
    let approved = &approval.subject;
    // `None`: the trees differ but the approved tree is not in this clone
    // (snapshot refs are not fetched by default), so paths cannot be listed.
    let differ: Option<Vec<String>> = if &tree == approved {
        Some(Vec::new())
    } else {
        snapshot::changed_paths(&lp.repo, approved, &tree)
            .ok()
            .map(|paths| {
                paths
                    .into_iter()
                    .filter(|p| {
                        !lp.frozen.contains(p)
                            && !exclude
                                .iter()
                                .any(|d| p == d || p.starts_with(&format!("{d}/")))
                    })
                    .collect()
            })
    };
    let ok = differ.as_ref().is_some_and(Vec::is_empty);
    let differ_list = differ.clone().unwrap_or_default();
    if args.json {
        let value = json!({
            "loop": lp.name.as_str(),
            "approved": ok,
            "approved_tree": approved,
            "approved_by": approval.by,
            "approved_at": approval.at,
            "round": approval.round,
            "checked": args.rev.as_deref().unwrap_or("working tree"),
            "tree": tree,
            "differ": differ,
            "approved_tree_present": differ.is_some(),
        });
        super::emit_json(&value)?;
    } else if ok {
        super::emit(&format!(
            "approved: {what} is the tree {} approved by {} at {} (loop `{}`, round {})\n",
            approved.get(..12).unwrap_or(approved),
            approval.by,
            approval.at,
            lp.name,
            approval.round
        ))?;
    } else if differ.is_none() {
        let message = format!(
            "not approved: {what} (tree {}) is not the tree approved by {} at {} (tree {}); \
             the approved tree is not in this repository, so the differing paths cannot be listed",
            tree.get(..12).unwrap_or(&tree),
            approval.by,
            approval.at,
            approved.get(..12).unwrap_or(approved),
        );
        let hint = "`git fetch origin 'refs/referee/*:refs/referee/*'` brings the snapshots";
        super::emit(&format!("{}\n", with_hints(&message, &[hint])))?;
    } else {
        let mut out = format!(
            "not approved: {what} differs from the tree approved by {} at {} (loop `{}`, round {}) in {}:\n",
            approval.by,
            approval.at,
            lp.name,
            approval.round,
            crate::text::plural(differ_list.len(), "path")
        );
        for p in &differ_list {
            out.push_str(&format!("  {p}\n"));
        }
        super::emit(&out)?;
    }
    Ok(if ok { Exit::Success } else { Exit::Escalated })
}
