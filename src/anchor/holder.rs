//! Who holds a lock: the process a lock file names or `/proc/locks` shows,
//! by pid, start time and command, and whether it is a live referee. A lock
//! whose holder is not a live referee is not honoured (SPEC §8.6): a writer
//! agent runs as the same user and can take any lock referee takes. Reads
//! `/proc` (Linux; elsewhere no holder can be named, and every holder reads
//! as unknown).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

use crate::agent::tree;

/// One process holding a lock, as it is now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub pid: u32,
    /// When it started (RFC 3339 UTC); `None` when it is gone.
    pub started: Option<String>,
    /// Its command line, on one line, secrets masked, cut short; `None`
    /// when it cannot be read (gone, or another user's).
    pub command: Option<String>,
    /// It is alive and a referee (its argv0's file name starts with
    /// `referee`).
    pub referee: bool,
    /// It is alive, its command line was read, and it is not a referee:
    /// a holder whose lock is not honoured. A process that is exiting (its
    /// command line already gone) or gone is not known to be foreign.
    pub foreign: bool,
}

/// The longest command line shown in a message.
const COMMAND_SHOWN: usize = 120;

impl Holder {
    /// The process `pid` as it is now.
    pub fn of(pid: u32) -> Holder {
        let proc = i32::try_from(pid).ok().and_then(tree::get);
        let alive = proc.filter(|p| !p.zombie);
        let argv = alive.and_then(|_| std::fs::read(format!("/proc/{pid}/cmdline")).ok());
        let argv = argv.filter(|a| !a.is_empty());
        let referee = argv.as_deref().is_some_and(argv0_is_referee);
        Holder {
            pid,
            started: alive.and_then(|p| started_at(p.start)),
            command: argv.as_deref().and_then(command_line),
            referee,
            foreign: argv.is_some() && !referee,
        }
    }

    /// `pid 41 (`python3 -c …`, started 2026-01-02T03:04:05Z)`.
    pub fn describe(&self) -> String {
        let Some(command) = &self.command else {
            return match &self.started {
                Some(started) => format!("pid {} (started {started})", self.pid),
                None => format!(
                    "pid {} (no longer running: a process it started holds the lock)",
                    self.pid
                ),
            };
        };
        match &self.started {
            Some(started) => format!("pid {} (`{command}`, started {started})", self.pid),
            None => format!("pid {} (`{command}`)", self.pid),
        }
    }
}

/// Whether `pid` is alive, is the process that started at `start` (clock
/// ticks since boot: a pid may be reused), and is a referee.
pub fn is_live_referee(pid: u32, start: u64) -> bool {
    let Ok(id) = i32::try_from(pid) else {
        return false;
    };
    if tree::get(id).is_none_or(|p| p.start != start || p.zombie) {
        return false;
    }
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|argv| argv0_is_referee(&argv))
}

/// Whether the first word of `cmdline` (NUL-separated, as
/// `/proc/<pid>/cmdline`) is a file name starting with `referee`.
fn argv0_is_referee(cmdline: &[u8]) -> bool {
    let argv0 = cmdline.split(|&b| b == 0).next().unwrap_or_default();
    Path::new(OsStr::from_bytes(argv0))
        .file_name()
        .is_some_and(|name| name.to_string_lossy().starts_with("referee"))
}

/// A command line (NUL-separated) as [`Holder::command`] shows it.
fn command_line(bytes: &[u8]) -> Option<String> {
    let words: Vec<String> = bytes
        .split(|&b| b == 0)
        .filter(|w| !w.is_empty())
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    if words.is_empty() {
        return None;
    }
    let line = crate::text::one_line(&crate::redact::redact_str(&words.join(" ")));
    Some(match line.char_indices().nth(COMMAND_SHOWN) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    })
}

/// The wall-clock time of `start` clock ticks after boot, RFC 3339 UTC.
fn started_at(start: u64) -> Option<String> {
    let ticks = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK).ok()??;
    let ticks = u64::try_from(ticks).ok().filter(|&t| t > 0)?;
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let boot: u64 = stat
        .lines()
        .find_map(|line| line.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    let secs = i64::try_from(boot + start / ticks).ok()?;
    let at = chrono::DateTime::from_timestamp(secs, 0)?;
    Some(at.format("%Y-%m-%dT%H:%M:%SZ").to_string())
}

/// The pids that hold a lock on the file `meta` describes, from
/// `/proc/locks`; `None` where that cannot be read (not Linux).
pub fn lock_holders(meta: &std::fs::Metadata) -> Option<Vec<u32>> {
    let text = std::fs::read_to_string("/proc/locks").ok()?;
    let dev = meta.dev();
    let (major, minor) = (nix::libc::major(dev), nix::libc::minor(dev));
    Some(holders_in(
        &text,
        &format!("{major:02x}:{minor:02x}"),
        meta.ino(),
    ))
}

/// The pids holding a lock on inode `ino` of device `dev` (`fe:00`, as
/// `/proc/locks` writes it) in `text`, a `/proc/locks`; waiters (`->`) are
/// not holders. Some file systems (overlayfs) show another device than
/// `stat` says: when no line names the device, lines naming the inode on
/// any device are taken.
fn holders_in(text: &str, dev: &str, ino: u64) -> Vec<u32> {
    // (device, pid) of each lock held on the inode.
    let mut on_inode: Vec<(&str, u32)> = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // `1: FLOCK  ADVISORY  WRITE 4242 fe:00:5423409 0 EOF`
        if fields.get(1) == Some(&"->") {
            continue;
        }
        let (Some(pid), Some(file)) = (fields.get(4), fields.get(5)) else {
            continue;
        };
        let Some((device, inode)) = file.rsplit_once(':') else {
            continue;
        };
        if inode.parse() != Ok(ino) {
            continue;
        }
        if let Ok(pid) = pid.parse() {
            on_inode.push((device, pid));
        }
    }
    let on_device = on_inode.iter().any(|(device, _)| *device == dev);
    let mut pids: Vec<u32> = on_inode
        .into_iter()
        .filter(|(device, _)| !on_device || *device == dev)
        .map(|(_, pid)| pid)
        .collect();
    pids.sort_unstable();
    pids.dedup();
    pids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_locks_names_the_holders_of_one_file() {
        let text = "1: FLOCK  ADVISORY  WRITE 4242 fe:00:77 0 EOF\n\
                    1: -> FLOCK  ADVISORY  WRITE 5151 fe:00:77 0 EOF\n\
                    2: FLOCK  ADVISORY  READ 10 fe:00:78 0 EOF\n\
                    3: FLOCK  ADVISORY  READ 11 fe:00:77 0 EOF\n\
                    4: POSIX  ADVISORY  WRITE 12 08:01:77 0 EOF\n\
                    5: garbage\n";
        assert_eq!(holders_in(text, "fe:00", 77), [11, 4242]);
        assert_eq!(holders_in(text, "fe:00", 78), [10]);
        assert_eq!(holders_in(text, "fe:00", 79), Vec::<u32>::new());
        // No line names the device (overlayfs): the inode decides.
        assert_eq!(holders_in(text, "00:2a", 77), [11, 12, 4242]);
        assert_eq!(holders_in("", "fe:00", 77), Vec::<u32>::new());
    }

    #[test]
    fn a_holder_is_described_by_pid_command_and_start() {
        let me = Holder::of(std::process::id());
        assert!(me.started.is_some(), "{me:?}");
        let command = me.command.clone().unwrap_or_default();
        assert!(!command.is_empty(), "{me:?}");
        let said = me.describe();
        assert!(said.starts_with(&format!("pid {} (`", me.pid)), "{said}");
        assert!(said.contains(", started 20"), "{said}");
        assert!(!me.foreign || !me.referee);
        let gone = Holder {
            pid: 7,
            started: None,
            command: None,
            referee: false,
            foreign: false,
        };
        assert_eq!(
            gone.describe(),
            "pid 7 (no longer running: a process it started holds the lock)"
        );
    }
}
