//! `referee report`.

use crate::cli::ReportArgs;
use crate::exit::Exit;
use crate::state::State;

pub fn run(_state: &State, _args: ReportArgs) -> anyhow::Result<Exit> {
    Err(super::not_available("report"))
}
