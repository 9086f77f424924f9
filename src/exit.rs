//! Exit codes, as SPEC §5 fixes them. Pure.

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
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Error => 1,
            Exit::Usage => 2,
            Exit::Continue => 10,
            Exit::Escalated => 20,
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
        ];
        for (exit, code) in table {
            assert_eq!(exit.code(), code, "{exit:?}");
        }
    }
}
