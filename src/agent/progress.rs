//! What a driver shows while an agent runs (`run`'s printer in
//! `report::progress`); the Stop hook shows nothing. No I/O of its own.

use std::time::Duration;

use super::output::Reply;
use super::preset::Role;
use super::process::{Call, Finished};
use crate::money::Usd;

/// What a driver shows while an agent runs. `hook stop` shows nothing: its
/// stdout is the agent's protocol.
pub trait Progress: Sync {
    fn call_started(&self, _round: u32, _role: Role, _agent: &str, _call: &Call) {}
    fn tick(&self, _round: u32, _role: Role, _agent: &str, _elapsed: Duration, _spent: Usd) {}
    fn call_failed(&self, _agent: &str) {}
    fn call_finished(
        &self,
        _round: u32,
        _role: Role,
        _agent: &str,
        _f: &Finished,
        _reply: Option<&Reply>,
    ) {
    }
}

/// Shows nothing.
pub struct Silent;

impl Progress for Silent {}
