//! `referee escalate`.

use crate::cli::EscalateArgs;
use crate::exit::Exit;
use crate::state::State;

pub fn run(_state: &State, _args: EscalateArgs) -> anyhow::Result<Exit> {
    Err(super::not_available("escalate"))
}
