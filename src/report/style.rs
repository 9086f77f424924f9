//! Color for people at a terminal, never for pipes, `NO_COLOR` or
//! `--color never`. The choice is made once per process from the flags and
//! the environment; renderers only ask `paint`.
//!
//! `paint` does not write escape sequences: it marks where a color starts
//! and ends, with a key drawn afresh by each process. [`for_people`], on
//! the way out, makes every control character visible (stored text is
//! untrusted: a finding's title may carry `ESC [2J`) and only then turns
//! the marks into colors. A mark cannot be forged by stored text, which was
//! written before the key existed.

use std::hash::{BuildHasher, RandomState};
use std::io::IsTerminal;
use std::sync::OnceLock;

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

static ENABLED: OnceLock<bool> = OnceLock::new();
static CHOICE: OnceLock<ColorChoice> = OnceLock::new();

/// Decides, once, whether output is colored.
pub fn choose(choice: ColorChoice) {
    let _ = CHOICE.set(choice);
    let enabled = match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => no_color_unset() && std::io::stdout().is_terminal(),
    };
    let _ = ENABLED.set(enabled);
}

/// `NO_COLOR` unset or empty (no-color.org: "when present and not an
/// empty string").
fn no_color_unset() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Whether stderr may show an animation (`run`'s spinner): a terminal, and
/// the same say-so as color: not `--color never`, not `NO_COLOR`.
pub fn animate() -> bool {
    let wanted = match CHOICE.get().copied().unwrap_or(ColorChoice::Auto) {
        ColorChoice::Never => false,
        ColorChoice::Always => true,
        ColorChoice::Auto => no_color_unset(),
    };
    wanted && std::io::stderr().is_terminal()
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

/// The start of a mark: a private-use character and this process's key.
static MARK: OnceLock<String> = OnceLock::new();

fn mark() -> &'static str {
    MARK.get_or_init(|| {
        let key = RandomState::new().hash_one(std::process::id());
        format!("\u{f8ff}{key:016x}")
    })
}

/// `text` in `tone`'s color when color is on (applied by [`for_people`]).
pub fn paint(text: &str, tone: Tone) -> String {
    if !ENABLED.get().copied().unwrap_or(false) {
        return text.to_string();
    }
    let code = match tone {
        Tone::Good => 'g',
        Tone::Busy => 'y',
        Tone::Bad => 'r',
    };
    let mark = mark();
    format!("{mark}{code}{text}{mark}0")
}

/// Human output as it is written: control characters made visible
/// (`report::terminal::escape`), then the marks of [`paint`] turned into
/// colors. The one way text for people leaves the process.
pub fn for_people(text: &str) -> String {
    let escape = super::terminal::escape;
    // No mark was ever made, so the text holds none.
    let Some(mark) = MARK.get() else {
        return escape(text).into_owned();
    };
    let mut pieces = text.split(mark.as_str());
    let mut out = String::with_capacity(text.len());
    out.push_str(&escape(pieces.next().unwrap_or_default()));
    for piece in pieces {
        let rest = match piece.as_bytes().first() {
            Some(&code @ (b'g' | b'y' | b'r' | b'0')) => {
                out.push_str(match code {
                    b'g' => "\u{1b}[1;32m",
                    b'y' => "\u{1b}[1;33m",
                    b'r' => "\u{1b}[1;31m",
                    _ => "\u{1b}[0m",
                });
                &piece[1..]
            }
            _ => piece,
        };
        out.push_str(&escape(rest));
    }
    out
}

/// The tone of a round's outcome (`continue`, `stop: <rule>`).
pub fn tone_of(rule: Option<&crate::rules::Stop>) -> Tone {
    match rule {
        None => Tone::Busy,
        Some(stop) if stop.is_done() => Tone::Good,
        Some(_) => Tone::Bad,
    }
}
