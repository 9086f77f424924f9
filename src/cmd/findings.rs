//! `referee findings`.

use crate::cli::FindingsArgs;
use crate::exit::Exit;
use crate::state::State;

pub fn run(_state: &State, _args: FindingsArgs) -> anyhow::Result<Exit> {
    Err(super::not_available("findings"))
}
