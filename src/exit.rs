//! Exit codes, as SPEC §5 fixes them; the usage error that exits 2, and
//! the error that carries its hints as data. Pure.

/// What the process tells its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The loop ended done (`clean`, `nit-round`) or the command succeeded.
    Success,
    /// An error: bad input, a failed agent, I/O; nothing recorded for the failed round.
    Error,
    /// A usage error.
    Usage,
    /// `record` says continue.
    Continue,
    /// The loop stopped and was escalated.
    Escalated,
    /// `run` was ended by SIGINT (Ctrl-C), after its agents: 128 + 2, as a
    /// shell reports a process that signal ended.
    Interrupted,
    /// `run` was ended by SIGTERM, after its agents: 128 + 15.
    Terminated,
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Error => 1,
            Exit::Usage => 2,
            Exit::Continue => 10,
            Exit::Escalated => 20,
            Exit::Interrupted => 130,
            Exit::Terminated => 143,
        }
    }

    /// The exit of a process ended by the signal numbered `signal`, for
    /// the two `run` ends its agents on.
    pub fn signalled(signal: i32) -> Option<Exit> {
        match signal {
            2 => Some(Exit::Interrupted),
            15 => Some(Exit::Terminated),
            _ => None,
        }
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> Self {
        std::process::ExitCode::from(exit.code())
    }
}

/// An error that is the caller's wording, not the input's: exits 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// An error with the next steps a person can take: its `Display` is the
/// message alone, and `report::error::render` prints the hints after the
/// whole cause chain, so a hint never lands in the middle of a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hinted {
    pub message: String,
    pub hints: Vec<String>,
}

impl Hinted {
    pub fn new(message: impl Into<String>, hint: impl Into<String>) -> Hinted {
        Hinted::maybe(message, Some(hint.into()))
    }

    /// `message` with `hint`, if there is one.
    pub fn maybe(message: impl Into<String>, hint: Option<String>) -> Hinted {
        Hinted {
            message: message.into(),
            hints: hint.into_iter().collect(),
        }
    }
}

/// A message with no hint.
impl From<String> for Hinted {
    fn from(message: String) -> Hinted {
        Hinted::maybe(message, None)
    }
}

impl From<&str> for Hinted {
    fn from(message: &str) -> Hinted {
        Hinted::maybe(message, None)
    }
}

impl std::fmt::Display for Hinted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Hinted {}

/// `message`, with `hint` for what to do next.
pub fn hinted(message: impl Into<String>, hint: impl Into<String>) -> anyhow::Error {
    Hinted::new(message, hint).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_the_spec() {
        let table = [
            (Exit::Success, 0),
            (Exit::Error, 1),
            (Exit::Usage, 2),
            (Exit::Continue, 10),
            (Exit::Escalated, 20),
            (Exit::Interrupted, 130),
            (Exit::Terminated, 143),
        ];
        for (exit, code) in table {
            assert_eq!(exit.code(), code, "{exit:?}");
        }
    }

    #[test]
    fn a_signal_exits_128_plus_its_number() {
        for signal in [
            nix::sys::signal::Signal::SIGINT,
            nix::sys::signal::Signal::SIGTERM,
        ] {
            let exit = Exit::signalled(signal as i32).expect("handled");
            assert_eq!(i32::from(exit.code()), 128 + signal as i32, "{signal}");
        }
        assert_eq!(
            Exit::signalled(nix::sys::signal::Signal::SIGHUP as i32),
            None
        );
        assert_eq!(Exit::signalled(0), None);
    }
}
