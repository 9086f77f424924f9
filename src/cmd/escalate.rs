//! `referee escalate`: prints the hand-off (SPEC §5.1) of a loop; `record`
//! prints the same when a loop stops on anything but `clean`.

use clap::Args;

use crate::engine::History;
use crate::exit::Exit;
use crate::report::handoff::HandoffFormat;
use crate::state::LoopSelect;
use crate::state::State;

#[derive(Debug, Args)]
pub struct EscalateArgs {
    #[command(flatten)]
    pub select: LoopSelect,
    /// Output format.
    #[arg(long, value_enum, default_value_t = HandoffFormat::Text)]
    pub format: HandoffFormat,
    /// Same as `--format json`.
    #[arg(long)]
    pub json: bool,
}

pub fn run(state: &State, args: EscalateArgs) -> anyhow::Result<Exit> {
    let lp = super::open_loop(state, &args.select)?;
    let history = History::read(&lp, lp.store.read()?.rows)?;
    let handoff = crate::report::handoff::of(&lp, &history);
    let format = if args.json {
        HandoffFormat::Json
    } else {
        args.format
    };
    super::emit_rendered(
        &crate::report::handoff::render(&handoff, format),
        format.for_people(),
    )?;
    Ok(Exit::Success)
}
