//! `referee contract show|amend`.

use std::fmt::Write;

use clap::Args;

use crate::cmd::cli::LoopArgs;
use crate::contract::MAX_ROUNDS_LIMIT;
use crate::exit::{Exit, UsageError, hinted};
use crate::ledger::{Draft, Kind, Row};
use crate::money::{Problem, Usd};
use crate::state::LoopSelect;
use crate::state::State;

#[derive(Debug, Args)]
pub struct AmendArgs {
    #[command(flatten)]
    pub select: LoopSelect,
    /// A higher round cap.
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub max_rounds: Option<i64>,
    /// A higher spend cap in US dollars (`budget.usd`), to the micro-dollar.
    #[arg(long, allow_negative_numbers = true, value_name = "X")]
    pub budget_usd: Option<String>,
    /// A higher token cap (`budget.tokens`).
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub budget_tokens: Option<i64>,
    /// Who amends.
    #[arg(long, value_name = "NAME")]
    pub by: String,
    /// Why, in writing.
    #[arg(long, value_name = "TEXT")]
    pub reason: String,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn show(state: &State, args: LoopArgs) -> anyhow::Result<Exit> {
    let files = super::open_loop(state, &args.select)?;
    let rows = files.store.read()?.rows;
    let pinned = rows.first().map(|r| r.prev_sha256.clone());
    let amendments: Vec<&Row> = rows.iter().filter(|r| r.kind == Kind::Amend).collect();
    let effective = crate::engine::history::effective_contract(files.contract(), &rows);

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
                "amends": r.subject,
                "by": r.by,
                "reason": r.reason,
                "at": r.at,
            })).collect::<Vec<_>>(),
        });
        super::emit_json(&json)?;
        return Ok(Exit::Success);
    }

    let bytes = crate::contract::load::read(&files.loaded.path)?;
    let text = String::from_utf8_lossy(&bytes);
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
            "# amended after round {}: {} by {} at {}: {}",
            r.round,
            r.subject.replacen('=', " = ", 1),
            r.by,
            r.at,
            r.reason
        );
    }
    super::emit(&out)?;
    Ok(Exit::Success)
}

pub fn amend(state: &State, args: AmendArgs) -> anyhow::Result<Exit> {
    let (by, reason) = super::in_writing(
        &args.by,
        &args.reason,
        "amends the contract",
        "an amendment is made",
    )?;
    let files = super::open_loop(state, &args.select)?;
    super::refuse_if_driven(&files, "an amendment")?;
    let at = super::now()?;
    let mut locked = files.store.lock()?;
    let rows = locked.rows()?;
    let Some(last) = rows.last() else {
        return Err(hinted(
            format!(
                "loop `{}` has not started: nothing is pinned yet",
                files.name
            ),
            format!(
                "edit `{}` by hand before round 1",
                super::shown(&files.loaded.path)
            ),
        ));
    };
    crate::engine::history::check_pinned(&files, &rows)?;
    let current = crate::engine::history::effective_contract(files.contract(), &rows);
    let mut changes: Vec<(String, String, String)> = Vec::new();
    if let Some(n) = args.max_rounds {
        let n = max_rounds_arg(n)?;
        let now = current.max_rounds;
        if n == now {
            return Err(hinted(
                format!("--max-rounds {n}: the round cap is {now} already; nothing to amend"),
                format!(
                    "to give the writer more rounds, pass a larger number, such as `--max-rounds {}`",
                    now + 2
                ),
            ));
        }
        if n < now {
            return Err(hinted(
                format!(
                    "--max-rounds {n}: an amendment only raises the round cap, and it is {now} now"
                ),
                "to stop a loop early, leave it: the hand-off is `referee escalate`",
            ));
        }
        changes.push(("max_rounds".into(), now.to_string(), n.to_string()));
    }
    if let Some(text) = &args.budget_usd {
        let usd = match Usd::parse(text) {
            Ok(usd) if !usd.is_zero() => usd,
            Err(e) if e.problem == Problem::TooLarge => {
                return Err(UsageError(format!("--budget-usd: {e}")).into());
            }
            _ => {
                return Err(UsageError(format!(
                    "--budget-usd: must be a number > 0, not `{text}`"
                ))
                .into());
            }
        };
        match current.budget.usd {
            Some(now) if usd > now => {
                changes.push(("budget.usd".into(), now.plain(), usd.plain()));
            }
            Some(now) => {
                // `0.5000001` is $0.50 to the micro-dollar: say so.
                let rounded = if usd.plain() == *text {
                    String::new()
                } else {
                    format!(" ({} to the micro-dollar)", usd.plain())
                };
                anyhow::bail!(
                    "--budget-usd {text}{rounded}: an amendment only raises the budget, and it is {} now",
                    now.plain()
                )
            }
            None => anyhow::bail!(
                "--budget-usd: loop `{}` has no dollar budget to raise (it was never capped)",
                files.name
            ),
        }
    }
    if let Some(tokens) = args.budget_tokens {
        if tokens < 1 {
            return Err(UsageError(format!(
                "--budget-tokens: must be a whole number > 0, not `{tokens}`"
            ))
            .into());
        }
        match current.budget.tokens {
            Some(now) if tokens as u64 > now => {
                changes.push(("budget.tokens".into(), now.to_string(), tokens.to_string()));
            }
            Some(now) => anyhow::bail!(
                "--budget-tokens {tokens}: an amendment only raises the budget, and it is {now} now"
            ),
            None => anyhow::bail!(
                "--budget-tokens: loop `{}` has no token budget to raise (it was never capped)",
                files.name
            ),
        }
    }
    if changes.is_empty() {
        return Err(UsageError(
            "name what to raise: --max-rounds N, --budget-usd X or --budget-tokens N".into(),
        )
        .into());
    }
    let continues = stopped_standing(&rows);
    let mut appended = Vec::new();
    for (field, _, to) in &changes {
        let mut draft = Draft::new(Kind::Amend, last.round, &at);
        draft.subject = format!("{field}={to}");
        draft.by = by.clone();
        draft.reason = reason.clone();
        appended.push(locked.append(draft, None)?);
    }
    drop(locked);

    if args.json {
        let mut json = serde_json::json!({
            "loop": files.name.as_str(),
            "rows": appended.iter().map(Row::to_json).collect::<Vec<_>>(),
        });
        for (field, from, to) in &changes {
            json[field] =
                serde_json::json!({"from": from.parse::<f64>().ok(), "to": to.parse::<f64>().ok()});
        }
        json["continues"] = serde_json::Value::Bool(continues.is_some());
        super::emit_json(&json)?;
    } else {
        let what: Vec<String> = changes
            .iter()
            .map(|(field, from, to)| format!("{field} {from} -> {to}"))
            .collect();
        let mut out = format!(
            "amended loop `{}`: {}, by {by} (ledger row after round {})\n",
            files.name,
            what.join(", "),
            last.round
        );
        if let Some(stopped) = &continues {
            out.push_str(&format!(
                "the loop had {stopped}: the amendment continues it, and round {} is next\n",
                last.round + 1
            ));
        }
        super::emit(&out)?;
    }
    Ok(Exit::Success)
}

/// `referee contract restore`: writes back the contract bytes round 1
/// pinned, kept in the repository when round 1 was recorded. The file now
/// on disk is not parsed: a hand edit may have broken it.
pub fn restore(state: &State, args: LoopArgs) -> anyhow::Result<Exit> {
    let name = state.select(&args.select)?;
    let path = state.paths(&name).contract;
    let store = crate::ledger::Store::new(state.paths(&name).ledger, state.paths(&name).dir, "");
    let rows = store.read()?.rows;
    let Some(first) = rows.first() else {
        anyhow::bail!(
            "loop `{name}` has not started: no round pinned its contract, and `{}` may still be edited by hand",
            super::shown(&path)
        );
    };
    let pinned = first.prev_sha256.clone();
    if let Ok(bytes) = std::fs::read(&path)
        && crate::digest::sha256_hex(&bytes) == pinned
    {
        let text = format!(
            "contract `{}` already has the bytes round 1 pinned (sha256 `{}`): nothing to restore\n",
            super::shown(&path),
            pinned.get(..12).unwrap_or(&pinned)
        );
        super::emit(&text)?;
        return Ok(Exit::Success);
    }
    let kept = crate::snapshot::kept_contract(&state.repo, name.as_str())?.ok_or_else(|| {
        hinted(format!("the pinned bytes of loop `{name}`'s contract are not kept in this repository (`{}` is missing; loops started before referee kept them have none)", crate::snapshot::contract_ref(&state.repo, name.as_str()).unwrap_or_default()), format!("restore the file from a backup or version control; the ledger pins sha256 `{pinned}`"))
    })?;
    let kept_sha = crate::digest::sha256_hex(&kept);
    if kept_sha != pinned {
        anyhow::bail!(
            "the kept contract of loop `{name}` hashes to `{}`, but the ledger pins `{}`: it was not restored",
            kept_sha.get(..12).unwrap_or(&kept_sha),
            pinned.get(..12).unwrap_or(&pinned)
        );
    }
    crate::statefs::replace(&state.root, &path, &kept)?;
    let text = format!(
        "restored `{}`: the bytes round 1 pinned (sha256 `{}`)\n",
        super::shown(&path),
        pinned.get(..12).unwrap_or(&pinned)
    );
    super::emit(&text)?;
    Ok(Exit::Success)
}

/// `--max-rounds N` as a round cap a contract allows.
fn max_rounds_arg(n: i64) -> anyhow::Result<u32> {
    let limit = i64::from(MAX_ROUNDS_LIMIT);
    match u32::try_from(n) {
        Ok(cap) if (1..=limit).contains(&n) => Ok(cap),
        _ => Err(UsageError(format!(
            "--max-rounds: must be a whole number 1..={limit}, not `{n}`"
        ))
        .into()),
    }
}

/// How a loop ended when its rows `rows` stopped it (`stopped at round 2
/// on `flip-flop``, `been rejected by ana after round 2`); `None` while it
/// runs or has not started. Reads the rows alone.
fn stopped_standing(rows: &[Row]) -> Option<String> {
    use crate::engine::history::{LoopStanding, standing_of};
    match standing_of(rows) {
        LoopStanding::Stopped { round, rule } => {
            Some(format!("stopped at round {round} on `{rule}`"))
        }
        LoopStanding::Rejected { round, by } => {
            Some(format!("been rejected by {by} after round {round}"))
        }
        LoopStanding::Fresh | LoopStanding::Running { .. } => None,
    }
}

/// `referee resume`.
#[derive(Debug, Args)]
pub struct ResumeArgs {
    #[command(flatten)]
    pub select: LoopSelect,
    /// The round cap to continue under, when the loop has used its rounds
    /// (default: two more than it has run).
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub max_rounds: Option<i64>,
    /// Who resumes it.
    #[arg(long, value_name = "NAME")]
    pub by: String,
    /// Why, in writing.
    #[arg(long, value_name = "TEXT")]
    pub reason: String,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `referee resume`: a stopped (or rejected) loop continues, in writing: an
/// amendment row `resume` after its last round, with the round cap raised
/// first when the loop has no round left. A budget stop is continued by
/// raising the budget (`contract amend`), which says so.
pub fn resume(state: &State, args: ResumeArgs) -> anyhow::Result<Exit> {
    use crate::engine::history::{History, LoopStanding};
    let (by, reason) = super::in_writing(
        &args.by,
        &args.reason,
        "resumes the loop",
        "a loop is resumed",
    )?;
    let lp = super::open_loop(state, &args.select)?;
    super::refuse_if_driven(&lp, "resuming it")?;
    let name = lp.name.clone();
    let at = super::now()?;
    let mut locked = lp.store.lock()?;
    let rows = locked.rows()?;
    let history = History::read(&lp, rows)?;
    let (round, stopped) = match history.standing() {
        LoopStanding::Stopped { round, rule } => {
            if rule == crate::rules::Stop::Budget {
                return Err(hinted(
                    format!(
                        "loop `{name}` stopped at round {round} on `budget`: it continues when its budget is raised"
                    ),
                    format!(
                        "`referee contract amend --loop {name} --budget-usd X --by NAME --reason TEXT` (or `--budget-tokens N`) raises it and continues the loop"
                    ),
                ));
            }
            (round, format!("stopped at round {round} on `{rule}`"))
        }
        LoopStanding::Rejected { round, by } => {
            (round, format!("rejected by {by} after round {round}"))
        }
        LoopStanding::Fresh => {
            return Err(hinted(
                format!("loop `{name}` has not started: there is nothing to resume"),
                format!("`referee record --loop {name} --findings FILE` records round 1"),
            ));
        }
        LoopStanding::Running { round } => {
            return Err(hinted(
                format!(
                    "loop `{name}` is running (round {round} of {} recorded): there is nothing to resume",
                    history.max_rounds
                ),
                format!("`referee status --loop {name}` says what it waits for"),
            ));
        }
    };
    let cap = history.max_rounds;
    let raised = match args.max_rounds {
        Some(n) => {
            let n = max_rounds_arg(n)?;
            if n <= round {
                return Err(UsageError(format!(
                    "--max-rounds {n}: the loop has run {round} rounds; to continue, the cap must be above {round}"
                ))
                .into());
            }
            (n > cap).then_some(n)
        }
        None if round >= cap => Some((round + 2).min(MAX_ROUNDS_LIMIT)),
        None => None,
    };
    if round >= MAX_ROUNDS_LIMIT {
        anyhow::bail!(
            "loop `{name}` has run {round} rounds, the most a contract allows: it cannot continue; start a new loop (`referee init --loop NAME`)"
        );
    }
    let mut appended = Vec::new();
    if let Some(n) = raised {
        let mut draft = Draft::new(Kind::Amend, round, &at);
        draft.subject = format!("max_rounds={n}");
        draft.by = by.clone();
        draft.reason = reason.clone();
        appended.push(locked.append(draft, None)?);
    }
    let mut draft = Draft::new(Kind::Amend, round, &at);
    draft.subject = "resume".into();
    draft.by = by.clone();
    draft.reason = reason;
    appended.push(locked.append(draft, None)?);
    drop(locked);
    let max_rounds = raised.unwrap_or(cap);
    if args.json {
        let json = serde_json::json!({
            "loop": name.as_str(),
            "resumed_after": round,
            "was": stopped,
            "next_round": round + 1,
            "max_rounds": {"from": cap, "to": max_rounds},
            "rows": appended.iter().map(Row::to_json).collect::<Vec<_>>(),
        });
        super::emit_json(&json)?;
    } else {
        let cap_note = match raised {
            Some(n) => format!(", with the round cap raised {cap} -> {n}"),
            None => String::new(),
        };
        super::emit(&format!(
            "resumed loop `{name}` ({stopped}) by {by}{cap_note}: round {} of {max_rounds} is next\n",
            round + 1
        ))?;
    }
    Ok(Exit::Success)
}
