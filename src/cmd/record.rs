//! `referee record`.

use crate::cli::RecordArgs;
use crate::exit::Exit;
use crate::state::State;

pub fn run(_state: &State, _args: RecordArgs) -> anyhow::Result<Exit> {
    Err(super::not_available("record"))
}
