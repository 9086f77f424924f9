//! `referee status`.

use crate::cli::LoopArgs;
use crate::exit::Exit;
use crate::state::State;

pub fn run(_state: &State, _args: LoopArgs) -> anyhow::Result<Exit> {
    Err(super::not_available("status"))
}
