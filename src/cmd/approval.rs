//! `referee approval check`.

use crate::cli::ApprovalCheckArgs;
use crate::exit::Exit;
use crate::state::State;

pub fn check(_state: &State, _args: ApprovalCheckArgs) -> anyhow::Result<Exit> {
    Err(super::not_available("approval check"))
}
