//! `referee findings`: every finding of a loop with its history.

use crate::cli::{FindingsArgs, FindingsFormat};
use crate::engine::History;
use crate::engine::accounting::Standing;
use crate::exit::Exit;
use crate::report::findings::{self, Listed};
use crate::state::State;

pub fn run(state: &State, args: FindingsArgs) -> anyhow::Result<Exit> {
    let lp = super::open_loop(state, &args.select)?;
    let history = History::read(&lp, lp.store.read()?.rows)?;
    let floor = lp.contract().severity_floor;
    let last = history.last.as_ref().map(|(_, s)| s);
    let list: Vec<Listed<'_>> = history
        .registry
        .findings
        .iter()
        .filter(|t| !args.open || t.standing == Standing::Open)
        .map(|t| {
            let reported =
                last.and_then(|s| s.reported.iter().find(|r| r.finding.id == t.finding.id));
            Listed {
                tracked: t,
                in_last_round: reported.is_some(),
                must_fix: t.finding.severity >= floor && t.standing != Standing::Waived,
                changed: reported.is_some_and(|r| r.changed),
            }
        })
        .collect();
    let format = if args.json {
        FindingsFormat::Json
    } else {
        args.format
    };
    let bytes = match format {
        FindingsFormat::Table => findings::table(lp.name.as_str(), &list).into_bytes(),
        FindingsFormat::Json => findings::json(&list),
        FindingsFormat::Sarif => {
            findings::sarif(lp.name.as_str(), env!("CARGO_PKG_VERSION"), &list)
        }
    };
    super::emit_rendered(&bytes, format.for_people())?;
    Ok(Exit::Success)
}
