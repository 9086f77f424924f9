//! `referee hook stop|install|uninstall`: the Stop hook of an interactive
//! agent session (docs/hooks.md).

mod install;
mod stop;

pub(super) use install::{install, uninstall};
pub(super) use stop::stop;
