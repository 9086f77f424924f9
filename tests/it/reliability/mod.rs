//! Reliability: `record` killed at random moments, parallel appenders with
//! readers, every byte of a ledger tampered with, the parsers fuzzed, agents
//! that misbehave, hostile paths and secrets. CI-sized here (well under a
//! minute on two cores); `scripts/torture.sh` runs the long versions through
//! `REFEREE_CRASH_TRIALS`, `REFEREE_TORTURE_SEED` and `PROPTEST_CASES`.
//! docs/reliability.md says what each test proves.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{Driven, Out, Repo, text};

mod agents;
mod concurrency;
mod crash;
mod fuzz;
mod security;
mod tamper;

/// A generous bound on anything that could hang: reaching it is a failure,
/// never a measurement.
const HANG_GUARD: Duration = Duration::from_secs(60);

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// SplitMix64: a deterministic generator, seeded per trial, so a failing
/// trial replays with the seed its message prints.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn referee(repo: &Repo, args: &[&str]) -> Out {
    repo.run(args)
}

/// Waits for `child` with a hang guard; returns its status and stderr.
fn finish(mut child: Child, what: &str) -> (std::process::ExitStatus, String) {
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > HANG_GUARD {
            let _ = child.kill();
            panic!("hang guard: {what} still ran after {HANG_GUARD:?}");
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let mut stderr = Vec::new();
    if let Some(mut pipe) = child.stderr.take() {
        let _ = pipe.read_to_end(&mut stderr);
    }
    (status, text(&stderr))
}

/// Processes of group `pgid` that still run (zombies excluded), from /proc.
fn live_in_group(pgid: u32) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let want = pgid.to_string();
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter(|stat| {
            // `pid (comm) state ppid pgrp ...`; comm may hold spaces and parentheses.
            let Some(close) = stat.rfind(')') else {
                return false;
            };
            let mut fields = stat[close + 1..].split_whitespace();
            let state = fields.next();
            let _ppid = fields.next();
            state != Some("Z") && fields.next() == Some(want.as_str())
        })
        .count()
}

/// A killed `record` may leave the git command it started running: wait for
/// it, so the next trial does not race a dead call's `update-ref`.
fn wait_group_gone(pgid: u32) {
    let start = Instant::now();
    while live_in_group(pgid) > 0 {
        assert!(
            start.elapsed() < HANG_GUARD,
            "hang guard: children of a killed record still run after {HANG_GUARD:?}"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Every file below `dir` (following no symlink), sorted, with its bytes.
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(path) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&path) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let kind = entry.file_type().expect("file type");
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_file() {
                out.insert(entry.path(), std::fs::read(entry.path()).expect("read"));
            } else {
                out.insert(entry.path(), b"<not a regular file>".to_vec());
            }
        }
    }
    out
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// A different finding per trial (own id, own file), so every call appends
/// and no rule but `continue` ever fires.
fn crash_finding(trial: u64) -> String {
    format!(
        r#"{{"findings":[{{"id":"C{trial}","severity":"bug","title":"crash trial {trial}","file":"src/crash{trial}.rs","line":1}}]}}"#
    )
}

fn spawn_record(repo: &Repo, lp: &str, findings: &str) -> Child {
    let mut cmd = repo.referee_std();
    cmd.args(["record", "--loop", lp, "--findings", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        // Its own group: the test can wait for the git commands it started.
        .process_group(0);
    let mut child = cmd.spawn().expect("spawn referee");
    if let Some(mut stdin) = child.stdin.take() {
        // A call killed before it read its input gets a broken pipe: fine.
        let _ = stdin.write_all(findings.as_bytes());
    }
    child
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}
