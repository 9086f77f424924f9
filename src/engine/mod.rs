//! One round: accounting, guards, rules, judge, append — the single path that
//! `record` calls once and `run` calls in a loop.

pub mod accounting;
