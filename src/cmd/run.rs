//! `referee run`.

use crate::cli::RunArgs;
use crate::exit::Exit;
use crate::state::State;

pub fn run(_state: &State, _args: RunArgs) -> anyhow::Result<Exit> {
    Err(super::not_available("run"))
}
