//! `referee waive`: a binding human ruling on one finding, appended to the
//! ledger. The finding stops counting as must-fix; reported again, it is
//! waived noise, never reopened.

use clap::Args;

use crate::engine::History;
use crate::engine::accounting::FindingStanding;
use crate::exit::{Exit, hinted};
use crate::ledger::{Draft, Kind};
use crate::state::LoopSelect;
use crate::state::State;
use crate::text::one_line;

#[derive(Debug, Args)]
pub struct WaiveArgs {
    #[command(flatten)]
    pub select: LoopSelect,
    /// The finding's id.
    #[arg(value_name = "ID")]
    pub id: String,
    /// Who waives.
    #[arg(long, value_name = "NAME")]
    pub by: String,
    /// Why.
    #[arg(long, value_name = "TEXT")]
    pub reason: String,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(state: &State, args: WaiveArgs) -> anyhow::Result<Exit> {
    let (by, reason) = super::in_writing(
        &args.by,
        &args.reason,
        "waives the finding",
        "a waiver is made",
    )?;
    let id = one_line(&args.id);
    let lp = super::open_loop(state, &args.select)?;
    super::refuse_if_driven(&lp, "a waiver")?;
    let at = super::now()?;
    let mut locked = lp.store.lock()?;
    let history = History::read(&lp, locked.rows()?)?;
    let Some(tracked) = history
        .registry
        .findings
        .iter()
        .find(|t| t.finding.id == id)
    else {
        return Err(hinted(
            format!("loop `{}` knows no finding `{id}`", lp.name),
            format!("`referee findings --loop {}` lists every id", lp.name),
        ));
    };
    if tracked.standing == FindingStanding::Waived {
        anyhow::bail!("finding `{id}` of loop `{}` is already waived", lp.name);
    }
    let mut draft = Draft::new(Kind::Waive, history.round(), &at);
    draft.subject = id.clone();
    draft.by = by.clone();
    draft.reason = reason;
    let row = locked.append(draft, None)?;
    drop(locked);
    if args.json {
        let value = serde_json::json!({
            "loop": lp.name.as_str(),
            "waived": id,
            "row": row.to_json(),
        });
        super::emit_json(&value)?;
    } else {
        super::emit(&format!(
            "waived `{id}` of loop `{}` by {by} (ledger row after round {}): it no longer counts as must-fix\n",
            lp.name, row.round
        ))?;
    }
    Ok(Exit::Success)
}
