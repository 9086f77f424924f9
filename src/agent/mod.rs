//! Agents: one unit per preset builds each call's argv and reads what the
//! tool printed (pure), one process module runs it (process groups, timeouts,
//! capped output) with the process tree that finds everything a call started,
//! the leftovers a killed referee left, and the files an agent shares with
//! the referee; the output module holds the reading every preset shares
//! (pure).

pub mod file;
pub mod leftovers;
pub mod output;
pub mod preset;
pub mod process;
pub mod progress;
pub mod prompt;
pub mod tree;
