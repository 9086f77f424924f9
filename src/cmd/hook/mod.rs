//! `referee hook stop|install|uninstall`: the Stop hook of an interactive
//! agent session (Claude Code's and Codex's `Stop`, Gemini CLI's
//! `AfterAgent`; docs/hooks.md).

use clap::ValueEnum;

/// The agents whose Stop hook referee serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HookAgent {
    Claude,
    Codex,
    /// Gemini CLI, through its `AfterAgent` hook.
    Gemini,
}

pub(super) mod install;
pub(super) mod stop;

pub(super) use install::{install, uninstall};
pub(super) use stop::{dry_run as stop_dry_run, stop};
