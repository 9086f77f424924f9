//! referee: a loop referee for coding-agent pairs.

pub mod agent;
pub(crate) mod anchor;
pub(crate) mod checkout;
pub(crate) mod children;
pub mod cmd;
pub mod contract;
pub mod digest;
pub(crate) mod engine;
pub(crate) mod exit;
pub mod findings;
pub(crate) mod git;
pub(crate) mod hook;
pub(crate) mod judge;
pub mod ledger;
pub(crate) mod leftover;
pub mod money;
pub mod patch;
pub mod redact;
pub mod report;
pub(crate) mod rules;
pub(crate) mod snapshot;
pub(crate) mod state;
pub(crate) mod statefs;
pub(crate) mod text;
