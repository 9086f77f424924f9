//! Leftovers of a killed referee: files and folders named after the pid of
//! the process that made them (`.git/referee-index-<pid>-…`,
//! `.work-<pid>-round-<n>-<random>/`), stale once that process is gone. Does I/O
//! (asks the kernel whether a process exists).

use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::Pid;

/// The pid in `name` after `prefix` (up to the next `-`), if it is one.
pub fn pid_in(name: &str, prefix: &str) -> Option<u32> {
    let rest = name.strip_prefix(prefix)?;
    let digits = rest.split('-').next()?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Whether process `pid` is gone. Signal 0 checks without sending anything:
/// `ESRCH` says no such process; anything else (a process of another user
/// answers `EPERM`) counts as alive, so a leftover is never removed on doubt.
pub fn gone(pid: u32) -> bool {
    match i32::try_from(pid) {
        Ok(pid) if pid > 0 => kill(Pid::from_raw(pid), None) == Err(Errno::ESRCH),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pids_are_read_from_names() {
        let cases = [
            ("referee-index-123-0-456", "referee-index-", Some(123)),
            ("referee-index-123-0-456.lock", "referee-index-", Some(123)),
            (".work-42-round-3", ".work-", Some(42)),
            ("referee-index-notapid", "referee-index-", None),
            ("referee-index--1-2", "referee-index-", None),
            ("other-123", "referee-index-", None),
            (".work-99999999999999-round-1", ".work-", None),
        ];
        for (name, prefix, want) in cases {
            assert_eq!(pid_in(name, prefix), want, "{name}");
        }
    }

    #[test]
    fn a_reaped_child_is_gone_and_this_process_is_not() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(gone(pid));
        assert!(!gone(std::process::id()));
        // Never a process group, never on doubt.
        assert!(!gone(0));
        assert!(!gone(u32::MAX));
    }
}
