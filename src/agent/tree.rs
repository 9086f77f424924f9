//! The processes one agent call started, wherever they went: an agent may
//! move a child into a process group or session of its own (`set -m`,
//! `setsid`), or leave orphans behind, and a timeout must still end them all.
//! [`Family::members`] decides who belongs to a call (pure, over a process
//! table); [`scan`] reads that table from `/proc` (Linux; elsewhere there is
//! no table and the caller falls back to the process group).

use std::collections::{HashMap, HashSet};

/// One process, as `/proc/<pid>/stat` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Proc {
    pub pid: i32,
    pub ppid: i32,
    pub pgid: i32,
    /// Start time in clock ticks since boot: with the pid, the process's
    /// identity (a pid alone may be reused).
    pub start: u64,
    pub zombie: bool,
}

impl Proc {
    /// Parses a `/proc/<pid>/stat` line: `pid (comm) state ppid pgrp …`,
    /// where `comm` may hold spaces and parentheses.
    pub fn parse(stat: &str) -> Option<Proc> {
        let (head, rest) = stat.rsplit_once(')')?;
        let pid = head.split_once('(')?.0.trim().parse().ok()?;
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // `rest` starts at field 3 (state); starttime is field 22.
        Some(Proc {
            pid,
            ppid: fields.get(1)?.parse().ok()?,
            pgid: fields.get(2)?.parse().ok()?,
            start: fields.get(19)?.parse().ok()?,
            zombie: *fields.first()? == "Z",
        })
    }
}

/// Who belongs to one agent call: the agent, everything descended from it,
/// the members of its process group, the orphans re-parented to the referee
/// while it runs, and the processes that carry the call's marker in their
/// environment; then everything descended from those.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Family {
    /// The agent's pid and start time; its pid is also its process group.
    pub agent: (i32, u64),
    /// The referee when it is the child subreaper: orphans of the call come
    /// back to it instead of to init.
    pub reaper: Option<i32>,
    /// Children of the reaper from before the call: not the call's.
    pub before: HashSet<i32>,
    /// Never members: the referee and its ancestors (a `run` started from
    /// inside an old agent must not end itself).
    pub spared: HashSet<i32>,
}

impl Family {
    /// The members among `procs`, zombies included. `mark(pid)` says whose
    /// call's marker a process has in its environment; it is asked only
    /// about the re-parented orphans (one that carries another call's
    /// marker is that call's: a panel's reviewers are called at once) and
    /// the processes no other rule took in.
    pub fn members(&self, procs: &[Proc], mark: &mut dyn FnMut(i32) -> Mark) -> Vec<Proc> {
        let (agent, agent_start) = self.agent;
        // Group `agent` is the call's while its leader is the agent or gone:
        // a pid is not reused while a process group still bears it, so a
        // live group without a leader is the agent's.
        let group_is_ours = procs
            .iter()
            .find(|p| p.pid == agent)
            .is_none_or(|p| p.start == agent_start);
        let mut is_root = |p: &Proc| {
            (p.pid == agent && p.start == agent_start)
                || (p.start >= agent_start
                    && ((group_is_ours && p.pgid == agent)
                        || (self.reaper == Some(p.ppid)
                            && p.pid != agent
                            && !self.before.contains(&p.pid)
                            && mark(p.pid) != Mark::Another)
                        || mark(p.pid) == Mark::Ours))
        };
        let mut children: HashMap<i32, Vec<usize>> = HashMap::new();
        for (i, p) in procs.iter().enumerate() {
            children.entry(p.ppid).or_default().push(i);
        }
        let mut taken = vec![false; procs.len()];
        let mut stack: Vec<usize> = Vec::new();
        for (i, p) in procs.iter().enumerate() {
            if self.spared.contains(&p.pid) {
                continue;
            }
            if is_root(p) {
                taken[i] = true;
                stack.push(i);
            }
        }
        while let Some(i) = stack.pop() {
            for &c in children.get(&procs[i].pid).map_or(&[][..], Vec::as_slice) {
                if !taken[c] && !self.spared.contains(&procs[c].pid) {
                    taken[c] = true;
                    stack.push(c);
                }
            }
        }
        procs
            .iter()
            .zip(taken)
            .filter_map(|(p, t)| t.then_some(*p))
            .collect()
    }
}

/// The process table, or `None` where there is no `/proc` to read.
pub fn scan() -> Option<Vec<Proc>> {
    let entries = std::fs::read_dir("/proc").ok()?;
    Some(
        entries
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter_map(get)
            .collect(),
    )
}

/// One process, if it exists.
pub fn get(pid: i32) -> Option<Proc> {
    Proc::parse(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Whose call a process belongs to by the marker in its environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// It carries this call's marker.
    Ours,
    /// It carries the marker of another call.
    Another,
    /// No marker, or an environment that cannot be read (another user's
    /// process, or gone).
    Unmarked,
}

/// Whether `pid`'s environment holds `entry` (`NAME=value`), or one of
/// `others`, the entries of the other calls under way. A marker no call
/// under way has (one an agent made up for its orphan) is no marker.
pub fn mark(pid: i32, entry: &str, others: &[String]) -> Mark {
    let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return Mark::Unmarked;
    };
    let mut found = Mark::Unmarked;
    for e in env.split(|&b| b == 0) {
        if e == entry.as_bytes() {
            return Mark::Ours;
        }
        if others.iter().any(|o| o.as_bytes() == e) {
            found = Mark::Another;
        }
    }
    found
}

/// `pid` and every ancestor of it.
pub fn lineage(pid: i32) -> HashSet<i32> {
    let mut seen = HashSet::new();
    let mut at = pid;
    while at > 0 && seen.insert(at) {
        match get(at) {
            Some(p) => at = p.ppid,
            None => break,
        }
    }
    seen
}

/// This boot's id: start times count from boot, so a record from another
/// boot names nobody.
pub fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .map(|s| s.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pid: i32, ppid: i32, pgid: i32, start: u64) -> Proc {
        Proc {
            pid,
            ppid,
            pgid,
            start,
            zombie: false,
        }
    }

    fn family(reaper: Option<i32>) -> Family {
        Family {
            agent: (100, 50),
            reaper,
            before: HashSet::from([90]),
            spared: HashSet::from([10, 1]),
        }
    }

    fn pids(members: Vec<Proc>) -> Vec<i32> {
        let mut pids: Vec<i32> = members.iter().map(|p| p.pid).collect();
        pids.sort_unstable();
        pids
    }

    #[test]
    fn parses_stat_lines_whose_command_name_holds_spaces_and_parentheses() {
        let line = "4242 (my (odd) name) S 1 4240 4240 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10 18446744073709551615";
        assert_eq!(
            Proc::parse(line),
            Some(Proc {
                pid: 4242,
                ppid: 1,
                pgid: 4240,
                start: 987654,
                zombie: false
            })
        );
        assert_eq!(
            Proc::parse("12 (x) Z 1 12 12 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0").map(|p| p.zombie),
            Some(true)
        );
        assert_eq!(Proc::parse("garbage"), None);
    }

    #[test]
    fn members_are_the_agent_its_group_its_orphans_and_its_marked_processes() {
        let table = [
            p(1, 0, 1, 0),        // init
            p(10, 1, 10, 10),     // the referee (spared)
            p(90, 10, 90, 20),    // a child of the referee from before the call
            p(100, 10, 100, 50),  // the agent
            p(101, 100, 100, 51), // its child
            p(102, 101, 102, 52), // a grandchild in a group of its own (set -m)
            p(103, 1, 103, 53),   // a setsid orphan, re-parented to init
            p(104, 10, 104, 54),  // an orphan re-parented to the subreaper
            p(105, 104, 105, 55), // its child
            p(106, 1, 100, 56),   // an orphan still in the agent's group
            p(107, 1, 107, 57),   // a stranger that carries the marker
            p(200, 1, 200, 60),   // a stranger
            p(201, 90, 201, 61),  // the child of the earlier child
            p(108, 10, 108, 58),  // a panel's other call, begun after this one
            p(109, 108, 108, 59), // its child
        ];
        let mut marked = |pid| match pid {
            107 => Mark::Ours,
            108 | 109 => Mark::Another,
            _ => Mark::Unmarked,
        };
        assert_eq!(
            pids(family(Some(10)).members(&table, &mut marked)),
            vec![100, 101, 102, 104, 105, 106, 107]
        );
        // Without a subreaper, orphans are found only by group or marker.
        assert_eq!(
            pids(family(None).members(&table, &mut marked)),
            vec![100, 101, 102, 106, 107]
        );
    }

    #[test]
    fn processes_older_than_the_agent_and_the_referees_lineage_are_never_members() {
        let table = [
            p(10, 1, 100, 10),   // the referee, somehow in the agent's group
            p(100, 10, 100, 50), // the agent
            p(104, 10, 104, 40), // a child of the referee older than the agent
            p(107, 1, 107, 30),  // marked, but older than the agent
        ];
        assert_eq!(
            pids(family(Some(10)).members(&table, &mut |_| Mark::Ours)),
            vec![100]
        );
    }

    #[test]
    fn a_reused_group_id_is_not_the_agents_group() {
        // The agent (start 50) is gone and pid 100 now belongs to another
        // process, leader of a new group 100: its members are not ours.
        let table = [p(100, 1, 100, 70), p(101, 100, 100, 71)];
        assert_eq!(
            pids(family(None).members(&table, &mut |_| Mark::Unmarked)),
            Vec::<i32>::new()
        );
        // The agent is gone and no one holds pid 100: the group is ours.
        let table = [p(101, 1, 100, 71)];
        assert_eq!(
            pids(family(None).members(&table, &mut |_| Mark::Unmarked)),
            vec![101]
        );
    }

    #[test]
    fn this_process_is_in_the_table() {
        let Some(table) = scan() else {
            return;
        };
        let me = std::process::id() as i32;
        let found = table.iter().find(|p| p.pid == me).copied();
        assert_eq!(found, get(me));
        assert!(found.is_some_and(|p| p.start > 0 && !p.zombie));
        assert!(lineage(me).contains(&me));
    }
}
