//! Integration tests: one binary, one module per area. Each test runs the
//! built `referee` in a temporary git repository with an isolated git config.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

mod agents_real;
mod approval;
mod blind_spots;
mod ci;
mod cli;
mod contract;
mod corpus;
mod docs;
mod git_env;
mod hints;
mod hook;
mod host_boundary;
mod hostile;
mod judge;
mod layers;

mod ledger;
mod locks;
mod panel;
mod parse;
mod races;
mod reach;
mod record;
mod reliability;
mod report;
mod run;
mod samples;
mod skill;
mod snapshot_trust;
mod statedir;
mod tools;
mod writer_reach;
