//! referee: a loop referee for coding-agent pairs.

pub mod agent;
pub mod cli;
pub mod cmd;
pub mod contract;
pub mod digest;
pub mod engine;
pub mod exit;
pub mod findings;
pub mod git;
pub mod hook;
pub mod judge;
pub mod ledger;
pub mod leftover;
pub mod patch;
pub mod redact;
pub mod report;
pub mod rules;
pub mod snapshot;
pub mod state;
pub mod statefs;
