//! Renderers: data in, bytes out; no writing, no clock.

pub mod error;
pub mod findings;
pub mod handoff;
pub mod ledger;
pub mod progress;
pub mod round;
pub mod style;
pub mod summary;
pub mod terminal;
