//! Waiting for the ledger's lock, bounded, and naming who holds it (SPEC
//! §8.6). A writer agent runs as the same user and can take the ledger's
//! `flock` and leave the process behind; a wait on it must end. Does I/O
//! (the lock, `/proc`).

use std::fs::File;
use std::time::{Duration, Instant};

use crate::anchor::holder::{self, Holder};

/// How long a command waits for the ledger's lock while the same processes
/// hold it: readers (`status`, `ledger show`, `verify`, …) and appends
/// alike. Each time the lock changes hands the wait starts again, so calls
/// queued behind one another each get their turn; a holder that keeps it
/// this long is named instead. A referee holds it for one append (a round
/// runs no agent under it): well under a second, a few in a very large
/// repository.
pub const LOCK_WAIT: Duration = Duration::from_secs(5);

/// How often a waiting call looks at who holds the lock.
const POLL: Duration = Duration::from_millis(50);

/// The two ways the ledger is locked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Readers: any number at once.
    Shared,
    /// Appends: one, and no reader.
    Exclusive,
}

/// Why the lock was not taken.
#[derive(Debug)]
pub enum Busy {
    /// Every holder is a live process other than a referee, on two looks
    /// in a row: its lock is not honoured (readers read without it; an
    /// append refuses).
    NotHonoured(Vec<Holder>),
    /// The same holders kept it for [`LOCK_WAIT`]: a live referee among
    /// them, or holders that could not be named.
    Held(Vec<Holder>),
    Io(std::io::Error),
}

/// Takes the lock of `mode` on `file`, waiting as [`LOCK_WAIT`] says.
///
/// The wait itself is the kernel's (a blocking `flock` on a second handle
/// of the same open file, whose lock is `file`'s, on a thread of its own):
/// it is granted the moment the lock is free, where trying again and again
/// could miss every gap between readers that overlap. This thread looks at
/// the holders meanwhile and gives up as the bound says; a lock the waiting
/// thread is granted after that is let go at once.
pub fn wait(file: &File, mode: Mode) -> Result<(), Busy> {
    let tried = match mode {
        Mode::Shared => file.try_lock_shared(),
        Mode::Exclusive => file.try_lock(),
    };
    match tried {
        Ok(()) => return Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => {}
        Err(std::fs::TryLockError::Error(e)) => return Err(Busy::Io(e)),
    }
    let waiter = file.try_clone().map_err(Busy::Io)?;
    let (granted, answer) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("ledger lock".into())
        .spawn(move || {
            let got = match mode {
                Mode::Shared => waiter.lock_shared(),
                Mode::Exclusive => waiter.lock(),
            };
            let ok = got.is_ok();
            if granted.send(got).is_err() && ok {
                // Given up on: let go at once.
                let _ = waiter.unlock();
            }
        })
        .map_err(Busy::Io)?;
    let me = std::process::id();
    let mut since = Instant::now();
    let mut seen: Vec<u32> = Vec::new();
    let mut foreign_before = false;
    loop {
        match answer.recv_timeout(POLL) {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(e)) => return Err(Busy::Io(e)),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(Busy::Io(std::io::Error::other(
                    "the thread waiting for the lock stopped",
                )));
            }
        }
        let pids = file
            .metadata()
            .ok()
            .and_then(|meta| holder::lock_holders(&meta))
            .unwrap_or_default();
        let holders: Vec<Holder> = pids.iter().map(|&pid| Holder::of(pid)).collect();
        // This process runs referee's code whatever its name (a test
        // binary, a library caller): another thread of it is honoured. A
        // holder seen exiting is not yet foreign: its lock goes with it.
        // Foreign on two looks in a row, the same holders: not honoured.
        let foreign = !holders.is_empty() && holders.iter().all(|h| h.foreign && h.pid != me);
        if foreign && foreign_before && pids == seen {
            return Err(Busy::NotHonoured(holders));
        }
        foreign_before = foreign;
        if pids != seen {
            seen = pids;
            since = Instant::now();
        }
        if since.elapsed() >= LOCK_WAIT {
            return Err(Busy::Held(holders));
        }
    }
}

/// The holders named in a message: `pid 41 (…) and pid 42 (…)`, or that
/// none could be named.
pub fn named(holders: &[Holder]) -> String {
    if holders.is_empty() {
        return "a process referee cannot name (no `/proc/locks` line for the file)".into();
    }
    let said: Vec<String> = holders.iter().map(Holder::describe).collect();
    said.join(" and ")
}
