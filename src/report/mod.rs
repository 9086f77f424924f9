//! Renderers: data in, bytes out; no writing, no clock.

pub mod findings;
pub mod handoff;
pub mod ledger;
pub mod progress;
pub mod round;
pub mod style;
pub mod summary;
pub mod terminal;

/// A span of time as people read it: `41s`, `3m07s`, `2h05m`.
pub fn duration(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m{:02}s", secs / 60, secs % 60),
        _ => format!("{}h{:02}m", secs / 3600, secs % 3600 / 60),
    }
}
