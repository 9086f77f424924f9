//! `referee waive`.

use crate::cli::WaiveArgs;
use crate::exit::Exit;
use crate::state::State;

pub fn run(_state: &State, _args: WaiveArgs) -> anyhow::Result<Exit> {
    Err(super::not_available("waive"))
}
