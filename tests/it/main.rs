//! Integration tests: one binary, one module per area. Each test runs the
//! built `referee` in a temporary git repository with an isolated git config.

mod common;

mod cli;
mod findings_props;
mod parse;
