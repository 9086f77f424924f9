//! A loop's run lock: one driver at a time (`run`, or a `hook stop` round),
//! kept in the loop's anchor, out of the writer's reach, and naming its
//! holder (pid, start time, command) so that a lock held by anything but a
//! live referee is not honoured (SPEC §8.2, §8.6). Does I/O.

use std::fs::File;
use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use super::{Anchor, AnchorError};
use crate::agent::tree;
use crate::statefs;

/// Who holds a loop's run lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    Run,
    Hook,
}

impl Holder {
    pub fn as_str(self) -> &'static str {
        match self {
            Holder::Run => "referee run",
            Holder::Hook => "referee hook stop",
        }
    }
}

/// The run lock, held until dropped.
pub struct RunLock {
    _file: File,
}

/// Who drives a loop right now, as its run lock says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Driving {
    /// `referee run` or `referee hook stop`.
    pub holder: String,
    pub pid: u32,
    /// Seconds since the epoch when it took the loop.
    pub since: u64,
    /// The holder's start time in clock ticks since boot.
    pub start: u64,
    /// The call in progress: round, role, and when it started.
    pub call: Option<(u32, String, u64)>,
}

/// Why the lock was not taken.
#[derive(Debug)]
pub enum NotTaken {
    /// A live referee holds it.
    Held(Driving),
    Error(AnchorError),
}

impl From<AnchorError> for NotTaken {
    fn from(err: AnchorError) -> Self {
        NotTaken::Error(err)
    }
}

impl RunLock {
    /// Takes the lock now, or says which live referee holds it.
    pub fn take(anchor: &Anchor, holder: Holder) -> Result<RunLock, NotTaken> {
        Self::wait(anchor, holder, Duration::ZERO)
    }

    /// Takes the lock, waiting up to `patience` while another `hook stop`
    /// holds it; a `referee run` holder is not waited for (it drives for far
    /// longer than a stop can wait).
    pub fn wait(anchor: &Anchor, holder: Holder, patience: Duration) -> Result<RunLock, NotTaken> {
        let path = anchor.file("run.lock");
        let started = Instant::now();
        let mut broke_foreign = false;
        // Bounded: a process swapping the file under us again and again
        // gets an error, not a spinning referee.
        for _ in 0..100 {
            let file = statefs::open_lock(anchor.base(), &path).map_err(AnchorError::from)?;
            match file.try_lock() {
                Ok(()) => {
                    // Another process may have swapped the file while we
                    // opened it: the lock counts only on the file at `path`.
                    if !same_file(&file, &path) {
                        continue;
                    }
                    // A file made anew under a live driver (the old one
                    // removed, its holder line copied) still names it.
                    if let Some(d) =
                        read_holder(&path).filter(|d| d.is_live_referee() && !d.is_me())
                    {
                        return Err(NotTaken::Held(d));
                    }
                    return Ok(Self::taken(file, holder));
                }
                Err(std::fs::TryLockError::WouldBlock) => {}
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(NotTaken::Error(AnchorError::Bad {
                        path,
                        what: format!("cannot lock: {e}"),
                    }));
                }
            }
            match read_holder(&path) {
                Some(d) if d.is_live_referee() => {
                    if d.holder == Holder::Run.as_str() || started.elapsed() >= patience {
                        return Err(NotTaken::Held(d));
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
                // Held, but not by a live referee (a leftover process that
                // took it, a planted holder): not honoured. The file is
                // replaced, so the foreign lock locks nothing.
                _ if !broke_foreign => {
                    broke_foreign = true;
                    let _ = std::fs::remove_file(&path);
                }
                _ => break,
            }
        }
        Err(NotTaken::Error(AnchorError::Bad {
            path,
            what: "is held by a process that is not a live referee, and could not be replaced"
                .into(),
        }))
    }

    fn taken(mut file: File, holder: Holder) -> RunLock {
        let me = std::process::id();
        let start = tree::get(me as i32).map_or(0, |p| p.start);
        let _ = file
            .set_len(0)
            .and_then(|()| writeln!(file, "{} {me} {} {start}", holder.as_str(), now_secs()));
        RunLock { _file: file }
    }
}

/// Notes in the run lock of `anchor` which call is in progress, for `status`.
pub fn note_call(anchor: &Anchor, round: u32, role: &str) {
    let path = anchor.file("run.lock");
    let Ok(text) = statefs::read_file(&path) else {
        return;
    };
    let text = String::from_utf8_lossy(&text);
    let Some(first) = text.lines().next() else {
        return;
    };
    let body = format!("{first}\nround {round} {role} {}\n", now_secs());
    if let Ok(mut file) = statefs::open_lock(anchor.base(), &path) {
        let _ = file
            .set_len(0)
            .and_then(|()| file.write_all(body.as_bytes()));
    }
}

fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    match (file.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
        _ => false,
    }
}

/// Who drives the loop of `anchor` now: a live referee holding its run
/// lock. `None` when nobody, or nobody who counts, holds it.
pub fn driving(anchor: &Anchor) -> Option<Driving> {
    let path = anchor.file("run.lock");
    // Opened without following a link or blocking on a FIFO.
    let file = statefs::open_read(anchor.base(), &path).ok().flatten()?;
    // Held or not: a lock file made anew under a live driver, its holder
    // line copied, still names that driver.
    match file.try_lock_shared() {
        Ok(()) => {
            let _ = file.unlock();
        }
        Err(std::fs::TryLockError::WouldBlock) => {}
        Err(std::fs::TryLockError::Error(_)) => return None,
    }
    read_holder(&path).filter(Driving::is_live_referee)
}

fn read_holder(path: &Path) -> Option<Driving> {
    let text = statefs::read_file(path).ok()?;
    parse_driving(&String::from_utf8_lossy(&text))
}

impl Driving {
    /// Whether it names this process.
    fn is_me(&self) -> bool {
        self.pid == std::process::id()
    }

    /// Whether the process the lock names is alive, is the same process
    /// (its start time), and is a referee.
    pub fn is_live_referee(&self) -> bool {
        super::holder::is_live_referee(self.pid, self.start)
    }
}

fn parse_driving(text: &str) -> Option<Driving> {
    let mut lines = text.lines();
    let first = lines.next()?;
    let mut words: Vec<&str> = first.split(' ').collect();
    let start = words.pop()?.parse().ok()?;
    let since = words.pop()?.parse().ok()?;
    let pid = words.pop()?.parse().ok()?;
    let holder = words.join(" ");
    if holder != Holder::Run.as_str() && holder != Holder::Hook.as_str() {
        return None;
    }
    let call = lines.next().and_then(|line| {
        let w: Vec<&str> = line.split(' ').collect();
        match w.as_slice() {
            ["round", round, role, since] => Some((
                round.parse().ok()?,
                (*role).to_string(),
                since.parse().ok()?,
            )),
            _ => None,
        }
    });
    Some(Driving {
        holder,
        pid,
        since,
        start,
        call,
    })
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_lock_says_who_drives_the_loop() {
        assert_eq!(
            parse_driving("referee run 41 1000 77\nround 2 reviewer 1100\n"),
            Some(Driving {
                holder: "referee run".into(),
                pid: 41,
                since: 1000,
                start: 77,
                call: Some((2, "reviewer".into(), 1100)),
            })
        );
        assert_eq!(
            parse_driving("referee hook stop 7 5 9\n").map(|d| (d.holder, d.call)),
            Some(("referee hook stop".into(), None))
        );
        assert_eq!(parse_driving("someone 7 5 9\n"), None);
        assert_eq!(parse_driving("referee run 7 5\n"), None);
        assert_eq!(parse_driving("garbage"), None);
        assert_eq!(parse_driving(""), None);
    }

    #[test]
    fn a_holder_is_live_only_as_the_process_it_names() {
        let me = std::process::id();
        let start = tree::get(me as i32).expect("me").start;
        let d = |start| Driving {
            holder: "referee run".into(),
            pid: me,
            since: 0,
            start,
            call: None,
        };
        // The test binary is not named referee…
        let named_referee = std::env::args().next().is_some_and(|a| {
            Path::new(&a)
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("referee"))
        });
        assert_eq!(d(start).is_live_referee(), named_referee);
        // …and another start time is another process, whatever its name.
        assert!(!d(start + 1).is_live_referee());
    }
}
