//! Renderers: data in, bytes out; no writing, no clock.

pub mod ledger;
