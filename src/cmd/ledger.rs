//! `referee ledger show|verify|repair`.

use crate::cli::{LedgerShowArgs, LoopArgs};
use crate::exit::Exit;
use crate::state::State;

pub fn show(_state: &State, _args: LedgerShowArgs) -> anyhow::Result<Exit> {
    Err(super::not_available("ledger show"))
}

pub fn verify(_state: &State, _args: LoopArgs) -> anyhow::Result<Exit> {
    Err(super::not_available("ledger verify"))
}

pub fn repair(_state: &State, _args: LoopArgs) -> anyhow::Result<Exit> {
    Err(super::not_available("ledger repair"))
}
