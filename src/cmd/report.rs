//! `referee report`: every loop under the state folder — or under several
//! state folders or ledger files given as arguments, such as the artifacts of
//! a CI matrix — with rounds, the rule fired, spend and totals by rule.

use std::path::{Path, PathBuf};

use clap::Args;

use crate::contract::LoopName;
use crate::engine::History;
use crate::exit::Exit;
use crate::ledger::{Kind, Store, Verdict};
use crate::report::error::render;
use crate::report::summary::ReportFormat;
use crate::report::summary::{self, LoopSummary};
use crate::state::State;

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Table)]
    pub format: ReportFormat,
    /// Same as `--format json`.
    #[arg(long)]
    pub json: bool,
    /// State folders or ledger files (default: the state folder).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

pub fn run(state: &State, args: ReportArgs) -> anyhow::Result<Exit> {
    let mut loops = Vec::new();
    if args.paths.is_empty() {
        loops.extend(folder(&state.root, &state.repo)?);
    }
    for path in &args.paths {
        if path.is_dir() {
            // A state folder, or a folder holding one (`.referee/`).
            let root = if path.join("ledgers").is_dir() || path.join("contracts").is_dir() {
                path.clone()
            } else {
                path.join(".referee")
            };
            if !root.join("ledgers").is_dir() && !root.join("contracts").is_dir() {
                anyhow::bail!(
                    "`{}` is neither a state folder (with `ledgers/`) nor a folder holding `.referee/`",
                    path.display()
                );
            }
            let repo = root
                .parent()
                .map_or_else(|| root.clone(), Path::to_path_buf);
            loops.extend(folder(&root, &repo)?);
        } else if path.is_file() {
            loops.push(ledger_file(path)?);
        } else {
            anyhow::bail!("`{}`: no such file or folder", path.display());
        }
    }
    let format = if args.json {
        ReportFormat::Json
    } else {
        args.format
    };
    super::emit_rendered(&summary::render(&loops, format), format.for_people())?;
    Ok(Exit::Success)
}

/// Every loop of one state folder: with a contract, or a ledger alone.
fn folder(root: &Path, repo: &Path) -> anyhow::Result<Vec<LoopSummary>> {
    let state = State {
        root: root.to_path_buf(),
        repo: repo.to_path_buf(),
        named: true,
    };
    state.check()?;
    let mut names = state.loops()?;
    // Ledgers whose contract was not kept (an artifact of ledgers alone).
    if let Ok(entries) = std::fs::read_dir(state.ledgers_dir()) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(stem) = name.strip_suffix(".csv")
                && let Ok(loop_name) = LoopName::parse(stem)
                && !names.contains(&loop_name)
            {
                names.push(loop_name);
            }
        }
    }
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let contract = state.paths(&name).contract;
        if contract.is_file() {
            out.push(with_contract(&state, &name)?);
        } else {
            out.push(ledger_file(&state.paths(&name).ledger)?);
        }
    }
    Ok(out)
}

fn with_contract(state: &State, name: &LoopName) -> anyhow::Result<LoopSummary> {
    let source = state.root.display().to_string();
    let paths = state.paths(name);
    let loaded = crate::contract::load::load(&paths.contract)?;
    let store = Store::new(paths.ledger.clone(), paths.dir.clone(), &loaded.sha256);
    let rows = store.read()?.rows;
    let chain = match store.verify() {
        Ok(_) => "ok".to_string(),
        Err(e) => chain_problem(&render(&e.into())),
    };
    let lp = crate::engine::Loop {
        name: name.clone(),
        paths,
        loaded,
        store,
        repo: state.repo.clone(),
        exclude: Vec::new(),
        frozen: Vec::new(),
        anchor: crate::anchor::Anchor::of(&state.repo, &state.root, name.as_str())?,
        own: None,
    };
    // A loop whose contract changed since round 1 still reports its rows.
    let mut reviewers = Vec::new();
    let (rounds, status, rule, must_fix) = match History::read(&lp, rows.clone()) {
        Ok(history) => {
            // What each panel reviewer brought; a round whose state cannot
            // be read leaves the table out (`ledger verify` names it).
            reviewers = crate::engine::panel::tally(&lp, &history).unwrap_or_default();
            let (status, rule) = match history.standing() {
                crate::engine::LoopStanding::Fresh => ("not started", None),
                crate::engine::LoopStanding::Running { .. } => ("running", None),
                crate::engine::LoopStanding::Stopped { rule, .. } => {
                    ("stopped", Some(rule.to_string()))
                }
                crate::engine::LoopStanding::Rejected { .. } => ("rejected", None),
            };
            let must_fix = history
                .last
                .as_ref()
                .and_then(|(r, _)| r.counts)
                .map_or(0, |c| c.must_fix_left);
            (history.round(), status.to_string(), rule, must_fix)
        }
        Err(_) => from_rows(&rows),
    };
    let mut summary = summarize(
        source,
        name.to_string(),
        &rows,
        rounds,
        status,
        rule,
        must_fix,
        chain,
    );
    summary.reviewers = reviewers;
    Ok(summary)
}

/// A ledger file on its own (no contract): its rows, and a chain checked
/// from its own first link.
fn ledger_file(path: &Path) -> anyhow::Result<LoopSummary> {
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let evidence: PathBuf = path.with_extension("");
    let probe = Store::new(path.to_path_buf(), evidence.clone(), "");
    let rows = probe.read()?.rows;
    let genesis = rows
        .first()
        .map(|r| r.prev_sha256.clone())
        .unwrap_or_default();
    let store = Store::new(path.to_path_buf(), evidence, &genesis);
    let chain = match store.verify() {
        Ok(_) => "ok (no contract to pin)".to_string(),
        Err(e) => chain_problem(&render(&e.into())),
    };
    let (rounds, status, rule, must_fix) = from_rows(&rows);
    Ok(summarize(
        path.display().to_string(),
        name,
        &rows,
        rounds,
        status,
        rule,
        must_fix,
        chain,
    ))
}

/// Where a loop stands from its rows alone.
fn from_rows(rows: &[crate::ledger::Row]) -> (u32, String, Option<String>, u32) {
    let last = rows.iter().rev().find(|r| r.kind == Kind::Round);
    match last {
        None => (0, "not started".into(), None, 0),
        Some(r) => {
            let must_fix = r.counts.map_or(0, |c| c.must_fix_left);
            let amended_after = rows
                .iter()
                .skip_while(|x| !std::ptr::eq(*x, r))
                .any(|x| x.kind == Kind::Amend);
            if r.verdict == Some(Verdict::Stop) && !amended_after {
                (r.round, "stopped".into(), Some(r.rule.clone()), must_fix)
            } else {
                (r.round, "running".into(), None, must_fix)
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn summarize(
    source: String,
    loop_name: String,
    rows: &[crate::ledger::Row],
    rounds: u32,
    status: String,
    rule: Option<String>,
    must_fix_left: u32,
    chain: String,
) -> LoopSummary {
    let decision = rows
        .iter()
        .rev()
        .find(|r| matches!(r.kind, Kind::Approve | Kind::Reject))
        .map(|r| {
            let verb = if r.kind == Kind::Approve {
                "approved"
            } else {
                "rejected"
            };
            format!("{verb} by {}", r.by)
        });
    LoopSummary {
        reviewers: Vec::new(),
        source,
        loop_name,
        rounds,
        status,
        rule,
        must_fix_left,
        spent_usd: rows.iter().filter_map(|r| r.cost_usd).sum(),
        spent_tokens: rows
            .iter()
            .filter_map(|r| r.tokens)
            .fold(0, u64::saturating_add),
        decision,
        chain,
    }
}

/// `ledger `x.csv`: row 2: hash mismatch…` → `row 2: hash mismatch…`.
fn chain_problem(text: &str) -> String {
    text.split_once(": ")
        .map_or(text.to_string(), |(_, rest)| rest.to_string())
}
