//! The children this process starts itself, agents and git alike, each
//! started and listed under one lock. An agent call's end looks for the
//! orphans that came back to the referee (the child subreaper): a child the
//! referee started for another call under way (a panel's reviewers run at
//! once, each with its own checkout) is not one of them, and neither is a
//! child being started, whose environment does not yet carry its marker.
//! Does I/O (starts processes, reads `/proc`).

use std::io;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};

/// The children started, by pid and start time (a pid alone may be reused
/// by an orphan once the child is reaped).
pub struct Started(Vec<(i32, u64)>);

impl Started {
    /// Whether the process `pid` that started at `start` is one of them.
    pub fn contains(&self, pid: i32, start: u64) -> bool {
        self.0.contains(&(pid, start))
    }
}

/// The list, held: no child is started while it is held.
pub fn held() -> MutexGuard<'static, Started> {
    static STARTED: Mutex<Started> = Mutex::new(Started(Vec::new()));
    // A thread that panicked while it held the list left it whole.
    STARTED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts `cmd`, listed as one of this process's own children.
pub fn spawn(cmd: &mut Command) -> io::Result<Child> {
    let mut started = held();
    let child = cmd.spawn()?;
    // Those gone (or reaped, their pid now another's) leave the list.
    started
        .0
        .retain(|&(pid, start)| start_of(pid) == Some(start));
    if let Some(start) = start_of(child.id() as i32) {
        started.0.push((child.id() as i32, start));
    }
    Ok(child)
}

/// [`Command::output`] for a child started by [`spawn`]: stdout and stderr
/// captured, stdin as `cmd` sets it (else inherited, as `output` would
/// give it none: callers set it).
pub fn output(cmd: &mut Command) -> io::Result<Output> {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    spawn(cmd)?.wait_with_output()
}

/// When process `pid` started, in clock ticks since boot (`/proc/<pid>/stat`
/// field 22); `None` where it is gone or there is no `/proc`.
pub fn start_of(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_started_child_is_listed_by_pid_and_start_until_it_is_gone() {
        let mut child = spawn(Command::new("sleep").arg("5")).expect("sleep");
        let pid = child.id() as i32;
        let start = start_of(pid).expect("a start time");
        assert!(held().contains(pid, start));
        assert!(!held().contains(pid, start + 1));
        child.kill().expect("kill");
        child.wait().expect("reaped");
        let _ = spawn(Command::new("true").stdin(Stdio::null())).and_then(|mut c| c.wait());
        assert!(!held().contains(pid, start));
    }
}
