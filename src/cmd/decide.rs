//! `referee approve` and `referee reject`.

use crate::cli::DecisionArgs;
use crate::exit::Exit;
use crate::state::State;

pub fn approve(_state: &State, _args: DecisionArgs) -> anyhow::Result<Exit> {
    Err(super::not_available("approve"))
}

pub fn reject(_state: &State, _args: DecisionArgs) -> anyhow::Result<Exit> {
    Err(super::not_available("reject"))
}
