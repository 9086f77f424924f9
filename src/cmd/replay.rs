//! `referee replay`.

use crate::cli::ReplayArgs;
use crate::exit::Exit;
use crate::state::State;

pub fn run(_state: &State, _args: ReplayArgs) -> anyhow::Result<Exit> {
    Err(super::not_available("replay"))
}
