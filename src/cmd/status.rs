//! `referee status`: where a loop stands, what is open and what comes next.

use std::fmt::Write as _;

use serde_json::json;

use crate::anchor::chain::Standing;
use crate::cmd::cli::LoopArgs;
use crate::engine::accounting::{FindingStanding, Tracked};
use crate::engine::{History, LoopStanding};
use crate::exit::Exit;
use crate::findings::Severity;
use crate::report::error::with_hints;
use crate::state::State;

pub fn run(state: &State, args: LoopArgs) -> anyhow::Result<Exit> {
    let lp = super::open_loop(state, &args.select)?;
    // The ledger and the anchor, read as of one moment.
    let held = lp.store.hold_shared()?;
    let rows = lp.store.read()?.rows;
    let hashes: Vec<String> = rows.iter().map(|r| r.row_sha256.clone()).collect();
    let hashes: Vec<&str> = hashes.iter().map(String::as_str).collect();
    let anchor = lp.anchor.check(&hashes)?;
    drop(held);
    // A ledger the anchor does not know may not read as a loop at all (a
    // row edited away from its evidence): the anchor says why first.
    let history = match (History::read(&lp, rows), &anchor) {
        (Ok(history), _) => history,
        (Err(err), Standing::Broken(b)) => {
            return Err(err.context(format!(
                "ledger `{}`: {b}; its rows are not the referee's",
                crate::state::shown(lp.store.path())
            )));
        }
        (Err(err), _) => return Err(err),
    };
    let c = &history.contract;
    let name = lp.name.as_str();
    let mut open: Vec<&Tracked> = history
        .registry
        .findings
        .iter()
        .filter(|t| t.standing == FindingStanding::Open)
        .collect();
    open.sort_by_key(|t| std::cmp::Reverse(t.finding.severity));
    let skipped: Vec<&Tracked> = history
        .registry
        .findings
        .iter()
        .filter(|t| {
            t.standing == FindingStanding::Skipped && t.finding.severity >= c.severity_floor
        })
        .collect();
    // What the last review said of each finding: open again after a skip,
    // or standing for earlier ones it merged.
    let last_reports: std::collections::HashMap<&str, &crate::engine::decide::Reported> = history
        .last
        .iter()
        .flat_map(|(_, s)| s.reported.iter())
        .map(|r| (r.finding.id.as_str(), r))
        .collect();
    let back_after_skip = |id: &str| last_reports.get(id).and_then(|r| r.back_after_skip);
    let stands_for = |id: &str| {
        last_reports
            .get(id)
            .map(|r| r.stands_for.clone())
            .unwrap_or_default()
    };
    let must_fix: Vec<&str> = open
        .iter()
        .filter(|t| t.finding.severity >= c.severity_floor)
        .map(|t| t.finding.id.as_str())
        .collect();

    let (status, rule) = match history.standing() {
        LoopStanding::Fresh => ("not started".to_string(), None),
        LoopStanding::Running { .. } => ("running".to_string(), None),
        LoopStanding::Stopped { rule, .. } => (format!("stopped on `{rule}`"), Some(rule)),
        LoopStanding::Rejected { by, .. } => (format!("rejected by {by}"), None),
    };
    let approved = history
        .rows
        .iter()
        .rev()
        .find(|r| r.kind == crate::ledger::Kind::Approve)
        .map(|r| r.by.clone());
    // No round rows, yet snapshot refs that hold rounds: the ledger was
    // removed or replaced since (the writer can delete files, and a fresh
    // ledger starts the loop over). Asked of git only then.
    // The anchor (SPEC §8.2) knows the rows the referee wrote: rows cut,
    // edited or re-hashed since are said, and what they show is not the
    // referee's verdict.
    let cut = matches!(&anchor, Standing::Broken(b) if b.lost().is_some());
    let last_round = history
        .rows
        .iter()
        .filter(|r| r.kind == crate::ledger::Kind::Round)
        .map(|r| r.round)
        .max();
    let lost_rounds: Vec<u32> = match last_round {
        Some(last) if cut => {
            let mut rounds: Vec<u32> = crate::snapshot::round_refs(&lp.repo, name)?
                .into_keys()
                .filter(|r| *r > last)
                .collect();
            rounds.sort_unstable();
            rounds
        }
        Some(_) => Vec::new(),
        None => {
            let mut rounds: Vec<u32> = crate::snapshot::round_refs(&lp.repo, name)?
                .into_keys()
                .collect();
            rounds.sort_unstable();
            rounds
        }
    };
    // Stops the hook could not judge since the last row (SPEC §8.5).
    let since = history
        .rows
        .last()
        .map(|r| r.at.clone())
        .unwrap_or_default();
    let incidents: Vec<serde_json::Value> =
        super::incident::incidents(&state.repo, &state.root, 20)
            .into_iter()
            .filter(|i| i["at"].as_str().is_some_and(|at| at >= since.as_str()))
            .collect();
    let anchor_json = match &anchor {
        Standing::Unanchored => json!({"anchored": false, "problem": null}),
        Standing::Holds { .. } => json!({"anchored": true, "problem": null}),
        Standing::Broken(b) => json!({"anchored": true, "problem": b.to_string()}),
    };
    let driving = super::driving(&lp);
    let driven_by_run = c.writer.is_some() && c.reviewer.is_some();
    // A panel's round is given one review per reviewer.
    let given = match lp.contract().reviewers.as_slice() {
        [] => "--findings FILE".to_string(),
        members => members
            .iter()
            .map(|m| format!("--findings {}=FILE", m.name))
            .collect::<Vec<_>>()
            .join(" "),
    };
    // The host's block cap let the last stop through with fixes asked for:
    // the turn ended, the loop did not.
    let host_cap = super::util::ended_at_host_cap(&lp, &history);
    let next = match history.standing() {
        _ if driving.is_some() => format!(
            "wait: {} is driving this loop; `referee status --loop {name}` again to follow it",
            driving.as_ref().map(super::describe).unwrap_or_default()
        ),
        LoopStanding::Running { round } if host_cap.is_some() => format!(
            "the agent's turn ended at the host's cap of {} blocked stops in a row with {} open: the loop is not done; ask the agent to fix them and end its turn (its next stop reviews round {})",
            host_cap.unwrap_or_default(),
            must_fix.join(", "),
            round + 1
        ),
        LoopStanding::Fresh if driven_by_run => format!(
            "`referee run --loop {name} --task TEXT` drives round 1 (or review by hand and `referee record --loop {name} {given}`)"
        ),
        LoopStanding::Running { round } if driven_by_run => format!(
            "`referee run --loop {name}` resumes with round {} (`--review-first` when the writer's work is done and only the review is missing)",
            round + 1
        ),
        LoopStanding::Fresh => {
            format!("review the work, then `referee record --loop {name} {given}` (round 1)")
        }
        LoopStanding::Running { round } if must_fix.is_empty() => format!(
            "review again, then `referee record --loop {name} {given}` (round {})",
            round + 1
        ),
        LoopStanding::Running { round } => format!(
            "the writer fixes {}, then `referee record --loop {name} {given}` (round {})",
            must_fix.join(", "),
            round + 1
        ),
        LoopStanding::Stopped { rule, .. } if rule.is_done() => match &approved {
            Some(by) => format!("done and approved by {by}"),
            None => {
                format!("done; a person decides: `referee approve --loop {name} --by NAME`")
            }
        },
        LoopStanding::Stopped { .. } => {
            format!("a person takes over: `referee escalate --loop {name}`")
        }
        LoopStanding::Rejected { .. } => format!(
            "rejected; to continue, resume it in writing: `referee resume --loop {name} --by NAME --reason TEXT`"
        ),
    };

    if args.json {
        // What every listed finding shows, then what its list adds.
        let with = |t: &Tracked, more: serde_json::Value| {
            let mut value = json!({
                "id": t.finding.id,
                "severity": t.finding.severity,
                "title": t.finding.title,
                "file": t.finding.file,
                "line": t.finding.line,
            });
            if !t.finding.reported_by.is_empty() {
                value["reported_by"] = json!(t.finding.reported_by);
            }
            if let (Some(map), serde_json::Value::Object(more)) = (value.as_object_mut(), more) {
                map.extend(more);
            }
            value
        };
        let findings: Vec<_> = open
            .iter()
            .map(|t| {
                with(
                    t,
                    json!({
                        "must_fix": t.finding.severity >= c.severity_floor,
                        "rounds": t.rounds,
                        "induced_by": t.induced_by,
                        "back_after_skip": back_after_skip(&t.finding.id),
                        "stands_for": stands_for(&t.finding.id),
                    }),
                )
            })
            .collect();
        let skipped_json: Vec<_> = skipped
            .iter()
            .map(|t| with(t, json!({ "skipped_in": t.skipped_in })))
            .collect();
        let value = json!({
            "loop": name,
            "round": history.round(),
            "max_rounds": history.max_rounds,
            "status": match history.standing() {
                LoopStanding::Fresh | LoopStanding::Running { .. } if driving.is_some() => "running",
                LoopStanding::Fresh => "not started",
                LoopStanding::Running { .. } => "running",
                LoopStanding::Stopped { .. } => "stopped",
                LoopStanding::Rejected { .. } => "rejected",
            },
            "rule": rule,
            "approved_by": approved,
            "contract": {
                "severity_floor": c.severity_floor,
                "closure": c.closure.as_str(),
                "scope": c.scope,
                "budget": {"usd": c.budget.usd, "tokens": c.budget.tokens},
                "base": c.base,
            },
            "spent": {"usd": history.spent_usd, "tokens": history.spent_tokens},
            "must_fix": must_fix,
            "driving": driving.as_ref().map(|d| json!({
                "by": d.holder,
                "pid": d.pid,
                "since": d.since,
                "round": d.call.as_ref().map(|c| c.0),
                "role": d.call.as_ref().map(|c| c.1.clone()),
            })),
            "open": findings,
            "skipped": skipped_json,
            "lost_rounds": lost_rounds,
            "anchor": anchor_json,
            "incidents": incidents,
            "ended_at_host_cap": host_cap,
            "next": next,
        });
        super::emit_json(&value)?;
        return Ok(Exit::Success);
    }

    // A live run's round is the one being played, not the last recorded.
    let (round, status) = match (&driving, history.standing()) {
        (Some(d), LoopStanding::Fresh | LoopStanding::Running { .. }) => match &d.call {
            Some((round, role, _)) => (*round, format!("running: the {role} is working")),
            None => (history.round(), "running".to_string()),
        },
        _ => (history.round(), status),
    };
    let mut out = format!(
        "loop `{name}` · round {round} of {} · {status}\n",
        history.max_rounds
    );
    if let Some(d) = &driving {
        let _ = writeln!(out, "driven now by {}", super::describe(d));
    }
    match &anchor {
        Standing::Broken(b) => {
            let warning = format!(
                "warning: ledger `{}`: {b}: what follows is not the referee's verdict",
                crate::state::shown(lp.store.path())
            );
            let hint = format!("`referee ledger verify --loop {name}` says what the anchor holds");
            let _ = writeln!(out, "{}", with_hints(&warning, &[hint]));
        }
        Standing::Unanchored => {
            let _ = writeln!(
                out,
                "note: unanchored: this machine holds no anchor for the loop (it was started elsewhere); its rows are read as the ledger has them"
            );
        }
        Standing::Holds { .. } => {}
    }
    if let Some(last) = incidents.last() {
        let _ = writeln!(
            out,
            "warning: the Stop hook could not judge {} since the last round; the last: {}",
            crate::text::plural(incidents.len(), "stop"),
            last["problem"].as_str().unwrap_or("?")
        );
    }
    let mut budget = String::new();
    if let Some(usd) = c.budget.usd {
        let _ = write!(budget, " · budget {usd} (spent {})", history.spent_usd);
    }
    if let Some(tokens) = c.budget.tokens {
        let _ = write!(
            budget,
            " · budget {tokens} tokens (used {})",
            history.spent_tokens
        );
    }
    let _ = writeln!(
        out,
        "contract: floor {} · closure {} · scope {}{budget}",
        c.severity_floor,
        c.closure.as_str(),
        c.scope
            .iter()
            .map(|g| format!("`{g}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (heading, must) in [("open must-fix", true), ("open below the floor", false)] {
        let group: Vec<&&Tracked> = open
            .iter()
            .filter(|t| (t.finding.severity >= c.severity_floor) == must)
            .collect();
        if group.is_empty() {
            continue;
        }
        let _ = writeln!(out, "{heading} ({}):", group.len());
        for t in group {
            let f = &t.finding;
            let loc = match (&f.file, f.line) {
                (Some(file), Some(line)) => format!("  {file}:{line}"),
                (Some(file), None) => format!("  {file}"),
                _ => String::new(),
            };
            let mut notes = String::new();
            if let Some(n) = t.induced_by {
                let _ = write!(notes, "  (induced by round {n})");
            }
            if let Some(n) = back_after_skip(&f.id) {
                let _ = write!(
                    notes,
                    "  (open again: the reviewer skipped it in round {n})"
                );
            }
            let merged = stands_for(&f.id);
            if !merged.is_empty() {
                let _ = write!(notes, "  (also stands for {})", merged.join(", "));
            }
            if !f.reported_by.is_empty() {
                let panel = c.panel_reviewers().len().max(f.reported_by.len());
                let agreed = crate::report::findings::agreement(&f.reported_by, panel);
                let _ = write!(notes, "  (reported by {agreed})");
            }
            let _ = writeln!(
                out,
                "  {:<6} {}{loc}  {}{notes}",
                severity(f.severity),
                f.id,
                f.title
            );
        }
    }
    if !skipped.is_empty() {
        let _ = writeln!(
            out,
            "skipped by the reviewer ({}), not counted as must-fix unless a review reports them again:",
            skipped.len()
        );
        for t in &skipped {
            let _ = writeln!(
                out,
                "  {:<6} {}  {}  (missing since round {})",
                severity(t.finding.severity),
                t.finding.id,
                t.finding.title,
                t.skipped_in
                    .map_or_else(|| "?".to_string(), |n| n.to_string())
            );
        }
    }
    if let Some(last) = lost_rounds.last().filter(|_| last_round.is_none()) {
        let reference = crate::snapshot::round_ref(&lp.repo, name, *last)?;
        let warning = format!(
            "warning: the ledger `{}` has no rounds, but this loop's snapshot refs hold {}: the ledger was removed or replaced since they were recorded",
            crate::state::shown(lp.store.path()),
            match lost_rounds.len() {
                1 => format!("round {last}"),
                n => format!("{n} rounds (up to {last})"),
            },
        );
        let hint = format!(
            "`git log --oneline {reference}` shows them; a ledger you committed comes back with `git checkout -- {}`",
            crate::state::shown(lp.store.path().parent().unwrap_or(lp.store.path())),
        );
        let _ = writeln!(out, "{}", with_hints(&warning, &[hint]));
    }
    let _ = writeln!(out, "next: {next}");
    super::emit(&out)?;
    Ok(Exit::Success)
}

fn severity(s: Severity) -> &'static str {
    s.as_str()
}
