//! `referee findings`: every finding of a loop with its history.

use clap::Args;

use crate::engine::History;
use crate::engine::accounting::FindingStanding;
use crate::exit::Exit;
use crate::findings::{IdSource, junit};
use crate::report::findings::FindingsFormat;
use crate::report::findings::{self, Listed};
use crate::state::LoopSelect;
use crate::state::State;

#[derive(Debug, Args)]
pub struct FindingsArgs {
    #[command(flatten)]
    pub select: LoopSelect,
    /// Only findings still open.
    #[arg(long)]
    pub open: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FindingsFormat::Table)]
    pub format: FindingsFormat,
    /// Same as `--format json`.
    #[arg(long)]
    pub json: bool,
}

pub fn run(state: &State, args: FindingsArgs) -> anyhow::Result<Exit> {
    let lp = super::open_loop(state, &args.select)?;
    let history = History::read(&lp, lp.store.read()?.rows)?;
    let floor = lp.contract().severity_floor;
    let last = history.last.as_ref().map(|(_, s)| s);
    let format = if args.json {
        FindingsFormat::Json
    } else {
        args.format
    };
    // SARIF readers (code scanning) need a place for every result: a failing
    // test without a `file` is placed at its test file when the repository
    // has it.
    let placeless = |t: &crate::engine::accounting::Tracked| {
        t.finding.file.is_none() && t.finding.id_source == IdSource::Test
    };
    let files =
        if format == FindingsFormat::Sarif && history.registry.findings.iter().any(placeless) {
            tracked_files(&state.repo)
        } else {
            Vec::new()
        };
    let list: Vec<Listed<'_>> = history
        .registry
        .findings
        .iter()
        .filter(|t| !args.open || t.standing == FindingStanding::Open)
        .map(|t| {
            let reported =
                last.and_then(|s| s.reported.iter().find(|r| r.finding.id == t.finding.id));
            Listed {
                tracked: t,
                in_last_round: reported.is_some(),
                must_fix: t.finding.severity >= floor && t.standing != FindingStanding::Waived,
                changed: reported.is_some_and(|r| r.changed),
                located: if placeless(t) && !files.is_empty() {
                    junit::locate(
                        &t.finding.id,
                        t.finding.body.as_deref().unwrap_or(""),
                        &files,
                    )
                } else {
                    None
                },
            }
        })
        .collect();
    let bytes = match format {
        FindingsFormat::Table => findings::table(
            lp.name.as_str(),
            &list,
            lp.contract().panel_reviewers().len(),
        )
        .into_bytes(),
        FindingsFormat::Json => findings::json(lp.name.as_str(), &list),
        FindingsFormat::Sarif => {
            findings::sarif(lp.name.as_str(), env!("CARGO_PKG_VERSION"), &list)
        }
    };
    super::emit_rendered(&bytes, format.for_people())?;
    Ok(Exit::Success)
}

/// The repository's tracked paths (empty when git cannot say: the findings
/// then go without a place, as before).
fn tracked_files(repo: &std::path::Path) -> Vec<String> {
    crate::git::Git::at(repo)
        .run(["ls-files", "-z"])
        .map(|out| {
            out.stdout
                .split(|&b| b == 0)
                .filter(|p| !p.is_empty())
                .filter_map(|p| std::str::from_utf8(p).ok().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}
