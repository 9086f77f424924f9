//! `referee contract show|amend`.

use crate::cli::{AmendArgs, LoopArgs};
use crate::exit::Exit;
use crate::state::State;

pub fn show(_state: &State, _args: LoopArgs) -> anyhow::Result<Exit> {
    Err(super::not_available("contract show"))
}

pub fn amend(_state: &State, _args: AmendArgs) -> anyhow::Result<Exit> {
    Err(super::not_available("contract amend"))
}
