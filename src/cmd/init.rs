//! `referee init`.

use crate::cli::InitArgs;
use crate::exit::Exit;
use crate::state::State;

pub fn run(_state: &State, _args: InitArgs) -> anyhow::Result<Exit> {
    Err(super::not_available("init"))
}
