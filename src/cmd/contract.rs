//! `referee contract show|amend`.

use std::fmt::Write;

use anyhow::Context;

use crate::cli::{AmendArgs, LoopArgs};
use crate::contract::MAX_ROUNDS_LIMIT;
use crate::exit::{Exit, UsageError};
use crate::ledger::row::one_line;
use crate::ledger::{Draft, Kind, Row};
use crate::state::State;

pub fn show(state: &State, args: LoopArgs) -> anyhow::Result<Exit> {
    let files = super::open_loop(state, &args.select)?;
    let rows = files.store.read()?.rows;
    let pinned = rows.first().map(|r| r.prev_sha256.clone());
    let amendments: Vec<&Row> = rows.iter().filter(|r| r.kind == Kind::Amend).collect();
    let mut effective = files.loaded.contract.clone();
    effective.max_rounds = crate::engine::history::effective_max_rounds(files.contract(), &rows);

    if args.json {
        let json = serde_json::json!({
            "loop": files.name.as_str(),
            "path": files.loaded.path.display().to_string(),
            "sha256": files.loaded.sha256,
            "started": pinned.is_some(),
            "pinned_sha256": pinned,
            "matches_pin": pinned.as_deref().is_none_or(|p| p == files.loaded.sha256),
            "contract": effective,
            "amendments": amendments.iter().map(|r| serde_json::json!({
                "round": r.round,
                "max_rounds": r.amended_max_rounds(),
                "by": r.by,
                "reason": r.reason,
                "at": r.at,
            })).collect::<Vec<_>>(),
        });
        super::emit(format!("{}\n", serde_json::to_string_pretty(&json)?).as_bytes())?;
        return Ok(Exit::Success);
    }

    let text = std::fs::read_to_string(&files.loaded.path)
        .with_context(|| format!("cannot read `{}`", files.loaded.path.display()))?;
    let mut out = format!("# {}\n", super::shown(&files.loaded.path));
    out.push_str(&text);
    if !text.ends_with('\n') {
        out.push('\n');
    }
    out.push('\n');
    match &pinned {
        None => out.push_str("# not started: the file may still be edited by hand\n"),
        Some(p) if *p == files.loaded.sha256 => {
            let _ = writeln!(out, "# pinned at round 1: sha256 {}", files.loaded.sha256);
        }
        Some(p) => {
            let _ = writeln!(
                out,
                "# CHANGED since round 1: pinned sha256 {p}, file now {}",
                files.loaded.sha256
            );
        }
    }
    for r in &amendments {
        let _ = writeln!(
            out,
            "# amended after round {}: max_rounds = {} by {} at {}: {}",
            r.round,
            r.amended_max_rounds()
                .map(|n| n.to_string())
                .unwrap_or_default(),
            r.by,
            r.at,
            r.reason
        );
    }
    super::emit(out.as_bytes())?;
    Ok(Exit::Success)
}

pub fn amend(state: &State, args: AmendArgs) -> anyhow::Result<Exit> {
    let by = one_line(&args.by);
    let reason = one_line(&args.reason);
    if by.is_empty() {
        return Err(UsageError("--by: name the person who amends the contract".into()).into());
    }
    if reason.is_empty() {
        return Err(UsageError("--reason: an amendment is made in writing; say why".into()).into());
    }
    let files = super::open_loop(state, &args.select)?;
    let at = super::now()?;
    let mut locked = files.store.lock()?;
    let rows = locked.rows()?;
    let Some(last) = rows.last() else {
        anyhow::bail!(
            "loop `{}` has not started: nothing is pinned yet\nhint: edit `{}` by hand before round 1",
            files.name,
            super::shown(&files.loaded.path)
        );
    };
    crate::engine::history::check_pinned(&files, &rows)?;
    let current = crate::engine::history::effective_max_rounds(files.contract(), &rows);
    let limit = i64::from(MAX_ROUNDS_LIMIT);
    if !(1..=limit).contains(&args.max_rounds) {
        return Err(UsageError(format!(
            "--max-rounds: must be a whole number 1..={limit}, not `{}`",
            args.max_rounds
        ))
        .into());
    }
    let new = args.max_rounds as u32;
    if new <= current {
        anyhow::bail!(
            "--max-rounds {new}: an amendment only raises the round cap, and it is {current} now\n\
             hint: to stop a loop early, leave it: the hand-off is `referee escalate`"
        );
    }
    let mut draft = Draft::new(Kind::Amend, last.round, &at);
    draft.subject = format!("max_rounds={new}");
    draft.by = by.clone();
    draft.reason = reason;
    let row = locked.append(draft, None)?;
    drop(locked);

    if args.json {
        let json = serde_json::json!({
            "loop": files.name.as_str(),
            "max_rounds": {"from": current, "to": new},
            "row": row.to_json(),
        });
        super::emit(format!("{}\n", serde_json::to_string_pretty(&json)?).as_bytes())?;
    } else {
        let out = format!(
            "amended loop `{}`: max_rounds {current} -> {new}, by {by} (ledger row after round {})\n",
            files.name, row.round
        );
        super::emit(out.as_bytes())?;
    }
    Ok(Exit::Success)
}
