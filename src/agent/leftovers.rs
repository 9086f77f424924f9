//! What a SIGKILLed referee leaves running, ended by the next one. The kernel
//! ends the agent itself with its referee (`PR_SET_PDEATHSIG`), but not the
//! children the agent started: while a call runs, a small record in the
//! round's scratch folder names the referee, the agent and the call's
//! environment marker, and the next `run` of the loop ends every process of
//! that call before it removes the folder. Does I/O (the record, `/proc`,
//! signals); the record's format is parsed purely.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::tree::{self, Family};

/// The record's file name in the scratch folder.
pub const RECORD: &str = "agent.procs";

/// One call, as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub boot: String,
    /// The referee's pid and start time.
    pub referee: (i32, u64),
    /// The agent's pid (also its process group) and start time.
    pub agent: (i32, u64),
    /// `NAME=value` in the environment of every process of the call.
    pub marker: String,
}

impl Record {
    pub fn render(&self) -> String {
        format!(
            "boot {}\nreferee {} {}\nagent {} {}\nmarker {}\n",
            self.boot, self.referee.0, self.referee.1, self.agent.0, self.agent.1, self.marker
        )
    }

    pub fn parse(text: &str) -> Option<Record> {
        let mut boot = None;
        let mut referee = None;
        let mut agent = None;
        let mut marker = None;
        for line in text.lines() {
            let (key, value) = line.split_once(' ')?;
            let pair = || -> Option<(i32, u64)> {
                let (pid, start) = value.split_once(' ')?;
                Some((pid.parse().ok()?, start.parse().ok()?))
            };
            match key {
                "boot" => boot = Some(value.to_string()),
                "referee" => referee = Some(pair()?),
                "agent" => agent = Some(pair()?),
                "marker" => marker = Some(value.to_string()),
                _ => return None,
            }
        }
        let record = Record {
            boot: boot?,
            referee: referee?,
            agent: agent?,
            marker: marker?,
        };
        // A pid of 0 or below would make `kill` hit a whole group.
        (record.agent.0 > 0 && record.referee.0 > 0).then_some(record)
    }
}

/// Writes the record for a call; the caller ignores a failure (the record
/// only matters if this referee is killed).
pub fn write(path: &Path, record: &Record) -> std::io::Result<()> {
    std::fs::write(path, record.render())
}

/// Ends what the call recorded at `path` left running, if its referee is
/// gone; returns how many processes it ended. Nothing to do, or a record it
/// cannot read, is 0.
pub fn sweep(path: &Path) -> usize {
    let Some(record) = std::fs::read_to_string(path)
        .ok()
        .and_then(|t| Record::parse(&t))
    else {
        return 0;
    };
    if tree::boot_id().as_deref() != Some(record.boot.as_str()) {
        return 0;
    }
    let (pid, start) = record.referee;
    if tree::get(pid).is_some_and(|p| p.start == start && !p.zombie) {
        // Its referee still runs and ends its own calls.
        return 0;
    }
    let family = Family {
        agent: record.agent,
        reaper: None,
        before: HashSet::new(),
        spared: tree::lineage(std::process::id() as i32),
    };
    let mut ended = HashSet::new();
    for _ in 0..5 {
        let Some(table) = tree::scan() else {
            return ended.len();
        };
        let live: Vec<_> = family
            .members(&table, &mut |pid| tree::mark(pid, &record.marker, &[]))
            .into_iter()
            .filter(|p| !p.zombie)
            .collect();
        if live.is_empty() {
            break;
        }
        for p in live {
            // The same process as scanned, not a new one with its pid.
            if tree::get(p.pid).is_some_and(|now| now.start == p.start)
                && kill(Pid::from_raw(p.pid), Signal::SIGKILL).is_ok()
            {
                ended.insert((p.pid, p.start));
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    ended.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_round_trips_and_a_damaged_one_names_nobody() {
        let record = Record {
            boot: "6f1c-42".into(),
            referee: (10, 1234),
            agent: (4242, 1300),
            marker: "REFEREE_CALL=10-1234-1".into(),
        };
        assert_eq!(Record::parse(&record.render()), Some(record.clone()));
        let text = record.render();
        assert_eq!(Record::parse(&text.replace("agent 4242", "agent -1")), None);
        assert_eq!(Record::parse(&text.replace("agent 4242", "agent 0")), None);
        assert_eq!(Record::parse(&text[..text.len() / 2]), None);
        assert_eq!(Record::parse(""), None);
        assert_eq!(Record::parse(&format!("{text}extra line\n")), None);
    }

    #[test]
    fn a_sweep_ends_the_call_only_once_its_referee_is_gone_in_this_boot() {
        use std::os::unix::process::CommandExt;
        let (Some(boot), Some(me)) = (tree::boot_id(), tree::get(std::process::id() as i32)) else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(RECORD);
        let mut agent = std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = agent.id() as i32;
        let start = tree::get(pid).unwrap().start;
        let live = Record {
            boot: boot.clone(),
            referee: (me.pid, me.start),
            agent: (pid, start),
            marker: "REFEREE_CALL=test".into(),
        };
        write(&path, &live).unwrap();
        assert_eq!(sweep(&path), 0, "its referee (this test) still runs");
        // A referee with this pid but another start time is another process:
        // the recorded one is gone.
        let gone = Record {
            referee: (me.pid, me.start + 1),
            ..live
        };
        write(
            &path,
            &Record {
                boot: "another-boot".into(),
                ..gone.clone()
            },
        )
        .unwrap();
        assert_eq!(sweep(&path), 0, "a record from another boot names nobody");
        assert_eq!(agent.try_wait().unwrap(), None);
        write(&path, &gone).unwrap();
        assert_eq!(sweep(&path), 1);
        let status = agent.wait().unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(9)
        );
    }
}
