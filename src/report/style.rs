//! Color for people at a terminal, never for pipes, `NO_COLOR` or
//! `--color never`. The choice is made once per process from the flags and
//! the environment; renderers only ask `paint`.

use std::io::IsTerminal;
use std::sync::OnceLock;

use crate::cli::ColorChoice;

static ENABLED: OnceLock<bool> = OnceLock::new();

/// Decides, once, whether output is colored.
pub fn choose(choice: ColorChoice) {
    let enabled = match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        }
    };
    let _ = ENABLED.set(enabled);
}

/// A color for a kind of outcome.
#[derive(Debug, Clone, Copy)]
pub enum Tone {
    /// Done: `clean`, `nit-round`, approved.
    Good,
    /// Goes on: `continue`.
    Busy,
    /// A person takes over: every escalation.
    Bad,
}

/// `text` in `tone`'s color when color is on.
pub fn paint(text: &str, tone: Tone) -> String {
    if !ENABLED.get().copied().unwrap_or(false) {
        return text.to_string();
    }
    let code = match tone {
        Tone::Good => "32",
        Tone::Busy => "33",
        Tone::Bad => "31",
    };
    format!("\u{1b}[1;{code}m{text}\u{1b}[0m")
}

/// The tone of a round's outcome (`continue`, `stop: <rule>`).
pub fn tone_of(rule: Option<&str>) -> Tone {
    match rule {
        None => Tone::Busy,
        Some("clean" | "nit-round") => Tone::Good,
        Some(_) => Tone::Bad,
    }
}
