//! Agents: presets build each call's argv (pure), one process module runs it
//! (duct, process groups, timeouts, capped output), and the output module
//! reads what the tool printed (pure).

pub mod output;
pub mod preset;
pub mod process;
pub mod prompt;
