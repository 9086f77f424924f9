//! Reliability: `record` killed at random moments, parallel appenders with
//! readers, every byte of a ledger tampered with, the parsers fuzzed, agents
//! that misbehave, hostile paths and secrets. CI-sized here (well under a
//! minute on two cores); `scripts/torture.sh` runs the long versions through
//! `REFEREE_CRASH_TRIALS`, `REFEREE_TORTURE_SEED` and `PROPTEST_CASES`.
//! docs/reliability.md says what each test proves.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::LazyLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use proptest::prelude::*;
use referee::digest::sha256_hex;
use referee::ledger::{Store, chain};
use serde_json::Value;

use crate::common::{Repo, text};

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

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn output(cmd: &mut Command) -> Out {
    let out = cmd.output().expect("run referee");
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: text(&out.stdout),
        stderr: text(&out.stderr),
    }
}

fn referee(repo: &Repo, args: &[&str]) -> Out {
    output(repo.referee_std().args(args))
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

// ---------------------------------------------------------------------------
// 1. Crash: SIGKILL at a random moment of `record`.

/// Rows per crash loop: under the round cap (100), so no trial stops a loop.
const ROUNDS_PER_LOOP: u64 = 90;

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

#[derive(Debug, Default)]
struct CrashTally {
    completed: u64,
    killed_before_commit: u64,
    killed_after_commit: u64,
    torn_found: u64,
    torn_injected: u64,
    orphans_injected: u64,
    /// `*.lock` files a killed git command left under `.git` (group kills only).
    stale_git_locks: u64,
    /// The most temporary indexes (`.git/referee-index-*`, with their
    /// `.lock` files) that killed calls had left at one time; each
    /// completed `record` removes them.
    temp_indexes_max: u64,
}

/// Whether `path` is a temporary index of a snapshot or git's lock of one.
fn is_temp_index(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("referee-index-"))
}

/// Lock files below `dir` (a killed git command's `refs/…/round-N.lock`),
/// but for those of temporary indexes: referee removes them itself.
fn lock_files(dir: &Path) -> Vec<PathBuf> {
    tree(dir)
        .into_keys()
        .filter(|p| p.extension().is_some_and(|e| e == "lock") && !is_temp_index(p))
        .collect()
}

/// Temporary indexes and their locks in the git directory `dir`.
fn temp_indexes(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| is_temp_index(p))
                .collect()
        })
        .unwrap_or_default()
}

/// A crash mid-append, simulated: part of a row and no newline. (A SIGKILL
/// practically never splits the single `write` of a ~400-byte row, and a
/// power cut cannot be had in a test, so the torn tail that `repair` exists
/// for is made by hand.) `verify` names it, `record` refuses to append after
/// it, `repair` removes exactly it.
fn inject_torn_tail(repo: &Repo, lp: &str, csv: &Path, rng: &mut SplitMix, trial: u64) {
    let committed = std::fs::read(csv).expect("ledger");
    let rows = chain::parse(&committed).expect("parse").rows.len();
    let body = &committed[..committed.len() - 1];
    let last = &body[body.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)..];
    let cut = 1 + rng.below(last.len() as u64 - 1) as usize;
    let mut torn = committed.clone();
    torn.extend_from_slice(&last[..cut]);
    std::fs::write(csv, &torn).expect("write");

    let out = referee(repo, &["ledger", "verify", "--loop", lp]);
    assert_eq!(out.code, 1, "trial {trial}: a torn tail verified");
    assert!(
        out.stderr
            .contains(&format!("torn final line after row {rows} ({cut} bytes")),
        "trial {trial}: {}",
        out.stderr
    );
    let (status, stderr) = finish(
        spawn_record(repo, lp, &crash_finding(1_000_000 + trial)),
        "record after a torn tail",
    );
    assert_eq!(status.code(), Some(1), "trial {trial}: {stderr}");
    assert!(
        stderr.contains("torn final line"),
        "trial {trial}: {stderr}"
    );
    assert_eq!(
        std::fs::read(csv).unwrap(),
        torn,
        "trial {trial}: appended after a torn tail"
    );

    let out = referee(repo, &["ledger", "repair", "--loop", lp]);
    assert!(
        out.code == 0
            && out
                .stdout
                .starts_with(&format!("removed a torn final line of {cut} bytes")),
        "trial {trial}: {} {}",
        out.stdout,
        out.stderr
    );
    assert_eq!(
        std::fs::read(csv).unwrap(),
        committed,
        "trial {trial}: repair"
    );
}

#[test]
fn sigkill_at_a_random_moment_keeps_every_committed_row() {
    let trials = env_u64("REFEREE_CRASH_TRIALS", 30);
    let seed = env_u64("REFEREE_TORTURE_SEED", 1);
    // 1: kill the git commands `record` started as well (a killed terminal
    // or CI job), not only `record`.
    let kill_group = env_u64("REFEREE_CRASH_KILL_GROUP", 0) == 1;
    let repo = Repo::new();
    let mut tally = CrashTally::default();
    let mut window_ms = 40u64;
    // (loop, round, content) of each orphan evidence folder made by hand.
    let mut orphans: Vec<(String, usize, String)> = Vec::new();
    // Every row committed, by the sha256 of the findings its call sent.
    let mut committed_by: BTreeSet<String> = BTreeSet::new();

    // Every tenth trial runs to its end: it times a whole call, and the kill
    // window covers the slowest so timed (a debug `record` takes 30-70 ms
    // here; a 0-40 ms window alone would rarely reach the append).
    let mut kills = 0;
    let mut last_trial = 0;
    for trial in 0u64.. {
        let timing = trial % 10 == 0;
        if !timing && kills == trials {
            break;
        }
        last_trial = trial;
        let mut rng = SplitMix(seed ^ trial.wrapping_mul(0x2545_f491_4f6c_dd1d));
        let lp = format!("c{}", trial / ROUNDS_PER_LOOP);
        if trial % ROUNDS_PER_LOOP == 0 {
            // Rounds on an unchanged tree: without the `stalled` guard.
            let out = referee(
                &repo,
                &[
                    "init",
                    "--loop",
                    &lp,
                    "--max-rounds",
                    "100",
                    "--guards",
                    "none",
                ],
            );
            assert_eq!(out.code, 0, "{}", out.stderr);
        }
        let csv = repo.join(&format!(".referee/ledgers/{lp}.csv"));
        let before = std::fs::read(&csv).unwrap_or_default();
        let rows_before = chain::parse(&before).expect("ledger").rows.len();
        let findings = crash_finding(trial);

        let started = Instant::now();
        let child = spawn_record(&repo, &lp, &findings);
        let pgid = child.id();
        if !timing {
            kills += 1;
            std::thread::sleep(Duration::from_millis(rng.below(window_ms + 1)));
            if kill_group {
                let _ = nix::sys::signal::killpg(Pid::from_raw(pgid as i32), Signal::SIGKILL);
            } else {
                // Not yet reaped, so the pid is still this child's.
                let _ = kill(Pid::from_raw(pgid as i32), Signal::SIGKILL);
            }
        }
        let (status, stderr) = finish(child, "record");
        if timing {
            window_ms = window_ms.max(started.elapsed().as_millis() as u64 * 5 / 4);
        }
        wait_group_gone(pgid);
        let killed = status.signal() == Some(Signal::SIGKILL as i32);
        let context = format!("trial {trial} (seed {seed}, loop {lp})");
        let locks = lock_files(&repo.join(".git"));
        if kill_group {
            // A git command killed mid-`update-ref` leaves its ref locked, and
            // every later `record` of that round fails until the lock goes
            // (a known bug, pinned by
            // `a_stale_git_ref_lock_left_by_a_crash_does_not_block_the_loop`):
            // remove it as a person would, and count it.
            tally.stale_git_locks += locks.len() as u64;
            locks
                .iter()
                .for_each(|l| std::fs::remove_file(l).expect("remove lock"));
        } else {
            // Only `record` died: the git commands it started ran to their end.
            assert!(locks.is_empty(), "{context}: {locks:?}");
        }
        // Killed calls leave their temporary index (and, with their git
        // command, its lock); the next snapshot removes those of dead pids.
        let indexes = temp_indexes(&repo.join(".git"));
        tally.temp_indexes_max = tally.temp_indexes_max.max(indexes.len() as u64);
        if timing {
            assert!(
                indexes.is_empty(),
                "{context}: a completed record left {indexes:?}"
            );
        }

        // Committed bytes never change: the file only grows.
        let after = std::fs::read(&csv).unwrap_or_default();
        assert!(
            after.starts_with(&before),
            "{context}: a committed row changed"
        );
        let parsed = chain::parse(&after).unwrap_or_else(|e| panic!("{context}: {e}"));
        if let Some(torn) = &parsed.torn {
            tally.torn_found += 1;
            let out = referee(&repo, &["ledger", "repair", "--loop", &lp]);
            assert!(
                out.stdout.starts_with("removed a torn final line"),
                "{context}"
            );
            assert_eq!(
                std::fs::read(&csv).unwrap(),
                after[..torn.offset as usize],
                "{context}"
            );
        }
        let grew = parsed.rows.len() - rows_before;
        match (killed, status.code()) {
            (false, Some(10)) => {
                assert_eq!(grew, 1, "{context}: exited 10 without a row");
                tally.completed += 1;
            }
            (true, _) if grew == 0 => tally.killed_before_commit += 1,
            (true, _) => {
                assert_eq!(grew, 1, "{context}");
                tally.killed_after_commit += 1;
            }
            (false, code) => panic!("{context}: record exited {code:?}: {stderr}"),
        }
        if grew == 1 {
            let row = parsed.rows.last().expect("row");
            assert_eq!(
                row.findings_sha256,
                sha256_hex(findings.as_bytes()),
                "{context}"
            );
            assert_eq!(row.round as usize, parsed.rows.len(), "{context}");
            assert!(
                committed_by.insert(row.findings_sha256.clone()),
                "{context}"
            );
        }

        let out = referee(&repo, &["ledger", "verify", "--loop", &lp]);
        assert_eq!(out.code, 0, "{context}: {}", out.stderr);
        let rows = parsed.rows.len();
        if rows > 0 {
            assert!(
                out.stdout.contains(&if rows == 1 {
                    "1 row (1 round) verified".to_string()
                } else {
                    format!("{rows} rows ({rows} rounds) verified")
                }),
                "{context}: {}",
                out.stdout
            );
        }

        if trial % 7 == 3 && rows > 0 {
            tally.torn_injected += 1;
            inject_torn_tail(&repo, &lp, &csv, &mut rng, trial);
        }
        if trial % 7 == 5 {
            // A crash after the evidence folder was renamed into place and
            // before its row: the next append must move it aside, not fail.
            let dir = repo.join(&format!(".referee/ledgers/{lp}/round-{}", rows + 1));
            if !dir.exists() {
                tally.orphans_injected += 1;
                let content = format!("orphan made by trial {trial}");
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(dir.join("orphan.txt"), &content).unwrap();
                orphans.push((lp.clone(), rows + 1, content));
            }
        }
    }

    // The totals: every row is a call's whole row, none is counted twice.
    let mut total_rows = 0;
    for n in 0..=last_trial / ROUNDS_PER_LOOP {
        let lp = format!("c{n}");
        let out = referee(&repo, &["ledger", "show", "--loop", &lp, "--json"]);
        let rows: Vec<Value> = serde_json::from_str(&out.stdout).expect("json");
        total_rows += rows.len() as u64;
        assert_eq!(referee(&repo, &["status", "--loop", &lp]).code, 0);
        assert_eq!(referee(&repo, &["ledger", "verify", "--loop", &lp]).code, 0);
    }
    assert_eq!(
        total_rows,
        tally.completed + tally.killed_after_commit,
        "{tally:?}"
    );
    assert_eq!(committed_by.len() as u64, total_rows);
    // Orphans made by hand are moved aside when their round is appended (or
    // by a later call that was killed), never deleted.
    for (lp, round, content) in &orphans {
        let dir = repo.join(&format!(".referee/ledgers/{lp}"));
        let holds = |d: PathBuf| {
            std::fs::read_to_string(d.join("orphan.txt")).ok().as_ref() == Some(content)
        };
        let aside = std::fs::read_dir(dir.join(".orphans"))
            .map(|entries| {
                entries.filter_map(Result::ok).any(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with(&format!("round-{round}-"))
                        && holds(e.path())
                })
            })
            .unwrap_or(false);
        let in_place = holds(dir.join(format!("round-{round}")));
        assert!(
            aside || in_place,
            "the orphan of loop {lp} round {round} was lost"
        );
        let rows =
            chain::parse(&std::fs::read(repo.join(&format!(".referee/ledgers/{lp}.csv"))).unwrap())
                .unwrap()
                .rows
                .len();
        assert!(
            !(in_place && rows >= *round),
            "loop {lp} round {round}: a row over an orphan"
        );
    }
    let staging: usize = (0..=last_trial / ROUNDS_PER_LOOP)
        .map(|n| {
            std::fs::read_dir(repo.join(&format!(".referee/ledgers/c{n}")))
                .map(|d| {
                    d.filter_map(Result::ok)
                        .filter(|e| e.file_name().to_string_lossy().starts_with(".staging-"))
                        .count()
                })
                .unwrap_or(0)
        })
        .sum();
    println!(
        "crash: {trials} killed trials, window 0-{window_ms} ms, seed {seed}: {tally:?}, \
         {total_rows} rows, {staging} staging folders left by killed calls"
    );
}

// ---------------------------------------------------------------------------
// 2. Concurrency: parallel appenders on two loops, readers all along.

#[test]
fn parallel_records_on_two_loops_with_readers_never_show_a_torn_ledger() {
    let repo = Repo::new();
    // Rounds on an unchanged tree: without the `stalled` guard.
    for lp in ["a", "b"] {
        let out = referee(
            &repo,
            &[
                "init",
                "--loop",
                lp,
                "--max-rounds",
                "100",
                "--guards",
                "none",
            ],
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    let done = AtomicBool::new(false);
    let (during, midway, failures) = std::thread::scope(|s| {
        let readers: Vec<_> = (0..3)
            .map(|k| {
                let repo = &repo;
                let done = &done;
                s.spawn(move || {
                    // Calls begun while the appends ran, and calls that saw
                    // a loop part-way (1 to 7 rows of 8): readers wait on the
                    // ledger's lock while a `record` holds it, so most see a
                    // loop before or after a run of appends.
                    let (mut during, mut midway) = (0u32, 0u32);
                    let mut failures = Vec::new();
                    // Rows seen per loop never go down.
                    let mut seen = [0u64; 2];
                    let mut i = k;
                    // A last pass after the writers are done, too.
                    let mut last = false;
                    loop {
                        let lp = ["a", "b"][i % 2];
                        let args: Vec<&str> = match (i / 2) % 3 {
                            0 => vec!["ledger", "verify", "--json", "--loop", lp],
                            1 => vec!["status", "--loop", lp],
                            _ => vec!["ledger", "show", "--json", "--loop", lp],
                        };
                        during += u32::from(!done.load(Ordering::SeqCst));
                        let out = referee(repo, &args);
                        if out.code != 0 {
                            failures.push(format!("{args:?}: exit {}: {}", out.code, out.stderr));
                        } else if args[1] == "verify" {
                            let json: Value = serde_json::from_str(&out.stdout).expect("json");
                            let rows = json["rows"].as_u64().unwrap_or(0);
                            if json["ok"] != true || rows < seen[i % 2] {
                                failures.push(format!("{args:?}: {json} after {}", seen[i % 2]));
                            }
                            seen[i % 2] = rows;
                            midway += u32::from((1..8).contains(&rows));
                        } else if args[1] == "show" {
                            let rows: Vec<Value> = serde_json::from_str(&out.stdout).expect("json");
                            midway += u32::from((1..8).contains(&rows.len()));
                        }
                        i += 1;
                        if last {
                            break;
                        }
                        last = done.load(Ordering::SeqCst);
                    }
                    (during, midway, failures)
                })
            })
            .collect();

        let children: Vec<(usize, Child)> = (0..16)
            .map(|i| {
                let lp = ["a", "b"][i % 2];
                let findings = format!(
                    r#"{{"findings":[{{"id":"P{i}","severity":"bug","title":"parallel {i}","file":"src/p{i}.rs","line":1}}]}}"#
                );
                (i, spawn_record(&repo, lp, &findings))
            })
            .collect();
        for (i, child) in children {
            let (status, stderr) = finish(child, "parallel record");
            assert_eq!(status.code(), Some(10), "record {i}: {stderr}");
        }
        done.store(true, Ordering::SeqCst);
        readers.into_iter().map(|r| r.join().expect("reader")).fold(
            (0, 0, Vec::new()),
            |(d, m, mut all), (during, midway, failures)| {
                all.extend(failures);
                (d + during, m + midway, all)
            },
        )
    });
    assert!(failures.is_empty(), "readers saw: {failures:#?}");
    assert!(
        during >= 3,
        "only {during} reader calls while the appends ran"
    );
    for lp in ["a", "b"] {
        let out = referee(&repo, &["ledger", "show", "--json", "--loop", lp]);
        let rows: Vec<Value> = serde_json::from_str(&out.stdout).expect("json");
        let rounds: Vec<u64> = rows.iter().map(|r| r["round"].as_u64().unwrap()).collect();
        assert_eq!(rounds, (1..=8).collect::<Vec<u64>>(), "loop {lp}");
        let out = referee(&repo, &["ledger", "verify", "--loop", lp]);
        assert!(
            out.stdout.contains("8 rows (8 rounds) verified"),
            "{}",
            out.stdout
        );
    }
    println!(
        "concurrency: 16 appends on two loops, {during} reader calls while they ran ({midway} saw a loop part-way), all exit 0"
    );
}

// ---------------------------------------------------------------------------
// 3. Tamper: every byte of every committed row, every evidence file.

/// A loop `t` of three real rounds recorded through the binary, with
/// responses, so each round holds several evidence files.
fn three_rounds() -> Repo {
    let repo = Repo::new();
    assert_eq!(
        referee(&repo, &["init", "--loop", "t", "--max-rounds", "5"]).code,
        0
    );
    let responses = repo.join("responses.json");
    std::fs::write(
        &responses,
        r#"{"responses":[{"id":"T1","status":"disputed","note":"on purpose"}]}"#,
    )
    .unwrap();
    for round in 1..=3 {
        repo.write("src/t.rs", &"x\n".repeat(round));
        let mut cmd = repo.referee_std();
        cmd.args(["record", "--loop", "t", "--findings", "-"]);
        if round > 1 {
            cmd.args(["--responses", responses.to_str().unwrap()]);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Titles that differ in words, not only in numbers (which the
        // fingerprint leaves out): three findings.
        let word = ["alpha", "beta", "gamma"][round - 1];
        let findings = format!(
            r#"{{"findings":[{{"id":"T{round}","severity":"bug","title":"tamper {word}","file":"src/t.rs","line":{round}}}]}}"#
        );
        // Dropped at once: `record` reads its findings to the end.
        child
            .stdin
            .take()
            .unwrap()
            .write_all(findings.as_bytes())
            .unwrap();
        let (status, stderr) = finish(child, "record");
        assert_eq!(status.code(), Some(10), "{stderr}");
    }
    repo
}

fn store_of(repo: &Repo, lp: &str) -> Store {
    let contract = std::fs::read(repo.join(&format!(".referee/contracts/{lp}.toml"))).unwrap();
    Store::new(
        repo.join(&format!(".referee/ledgers/{lp}.csv")),
        repo.join(&format!(".referee/ledgers/{lp}")),
        &sha256_hex(&contract),
    )
}

/// What `verify` must name when byte `i` of `ledger` changes: the header,
/// the row holding the byte, or (for the final newline) a torn tail.
fn expected_name(ledger: &[u8], i: usize) -> String {
    if i == ledger.len() - 1 {
        let rows = ledger.iter().filter(|&&b| b == b'\n').count() - 1;
        return format!("torn final line after row {}", rows - 1);
    }
    match ledger[..i].iter().filter(|&&b| b == b'\n').count() {
        0 => "header:".to_string(),
        row => format!("row {row}:"),
    }
}

#[test]
fn every_byte_of_every_row_and_every_evidence_file_is_guarded() {
    let repo = three_rounds();
    let store = store_of(&repo, "t");
    let path = store.path().to_path_buf();
    let original = std::fs::read(&path).unwrap();
    assert_eq!(store.verify().expect("a fresh ledger verifies").rows, 3);
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();

    // In process, through the library: each byte three ways (the lowest bit,
    // ASCII case, and the top bit that breaks UTF-8), restored after each.
    let mut checked = 0;
    for (i, &byte) in original.iter().enumerate() {
        let want = expected_name(&original, i);
        for mask in [0x01u8, 0x20, 0x80] {
            file.write_all_at(&[byte ^ mask], i as u64).unwrap();
            match store.verify() {
                Ok(summary) => panic!(
                    "byte {i} ({:?} -> {:?}) changed unnoticed: {summary:?}",
                    byte as char,
                    (byte ^ mask) as char
                ),
                Err(err) => {
                    let message = err.to_string();
                    assert!(
                        message.contains(&want),
                        "byte {i} ^ {mask:#04x}: expected `{want}` in: {message}"
                    );
                }
            }
            checked += 1;
        }
        file.write_all_at(&[byte], i as u64).unwrap();
    }
    assert_eq!(std::fs::read(&path).unwrap(), original);
    assert_eq!(checked, original.len() * 3);

    // Through the binary, for a sample: exit 1 and the same name.
    for i in (0..original.len()).step_by(97).chain([original.len() - 1]) {
        file.write_all_at(&[original[i] ^ 0x01], i as u64).unwrap();
        let out = referee(&repo, &["ledger", "verify", "--loop", "t"]);
        file.write_all_at(&[original[i]], i as u64).unwrap();
        assert_eq!(out.code, 1, "byte {i}");
        let want = expected_name(&original, i);
        assert!(
            out.stderr.contains(&want),
            "byte {i}: `{want}` in {}",
            out.stderr
        );
    }

    // Each evidence file of each round: one byte changed names that round.
    let mut files = 0;
    for round in 1..=3 {
        let dir = store.evidence_dir(round);
        for (file_path, bytes) in tree(&dir) {
            let mut perms = std::fs::metadata(&file_path).unwrap().permissions();
            let read_only = perms.readonly();
            #[allow(clippy::permissions_set_readonly_false)]
            perms.set_readonly(false);
            std::fs::set_permissions(&file_path, perms.clone()).unwrap();
            let mut changed = bytes.clone();
            match changed.get_mut(bytes.len() / 2) {
                Some(b) => *b ^= 0x01,
                None => changed.push(b'x'),
            }
            std::fs::write(&file_path, &changed).unwrap();
            let err = store.verify().expect_err("an evidence edit went unnoticed");
            let sample = files == 0;
            let cli = sample.then(|| referee(&repo, &["ledger", "verify", "--loop", "t"]));
            std::fs::write(&file_path, &bytes).unwrap();
            perms.set_readonly(read_only);
            std::fs::set_permissions(&file_path, perms).unwrap();
            let want = format!("row {round}: evidence digest mismatch");
            assert!(
                err.to_string().contains(&want),
                "{}: {err}",
                file_path.display()
            );
            if let Some(out) = cli {
                assert_eq!(out.code, 1);
                assert!(out.stderr.contains(&want), "{}", out.stderr);
            }
            files += 1;
        }
    }
    assert!(files >= 12, "only {files} evidence files");
    assert!(store.verify().is_ok());
    println!(
        "tamper: {} ledger bytes x 3 changes and {files} evidence files, each caught and named",
        original.len()
    );
}

// ---------------------------------------------------------------------------
// 4. Fuzz: no parser panics or hangs, whatever the bytes.
//
// tests/it/findings_props.rs already feeds the findings parsers random bytes
// and mutated fixtures; here they get structured documents (JSON shaped like
// the fixtures, JUnit-like XML, tagged and Codex lines), and the other
// parsers get all three kinds of input.

fn config() -> ProptestConfig {
    // Reads `PROPTEST_*` from the environment.
    let defaults = ProptestConfig::default();
    ProptestConfig {
        cases: env_u64("PROPTEST_CASES", 2000) as u32,
        // A fixed seed keeps CI repeatable; scripts/torture.sh picks a new
        // one per run through `PROPTEST_RNG_SEED`.
        rng_seed: match std::env::var_os("PROPTEST_RNG_SEED") {
            Some(_) => defaults.rng_seed,
            None => proptest::test_runner::RngSeed::Fixed(0x5eed),
        },
        failure_persistence: None,
        ..defaults
    }
}

/// Runs `f` on another thread: a panic or a hang is a failure that names
/// `what`. The hang guard is generous: a parser that reaches it loops.
fn bounded<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(10)) {
        Ok(value) => value,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("hang guard: {what} ran for more than 10 s")
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => panic!("{what} panicked"),
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file below `rel` (relative to the crate) whose name passes `keep`.
fn files_under(rel: &str, keep: impl Fn(&Path) -> bool) -> Vec<Vec<u8>> {
    tree(&root().join(rel))
        .into_iter()
        .filter(|(path, _)| keep(path))
        .map(|(_, bytes)| bytes)
        .collect()
}

fn named(name: &'static str) -> impl Fn(&Path) -> bool {
    move |p: &Path| p.file_name().is_some_and(|n| n == name)
}

fn ext(ext: &'static str) -> impl Fn(&Path) -> bool {
    move |p: &Path| p.extension().is_some_and(|e| e == ext)
}

/// The real samples each parser is fuzzed from, and the words the
/// structured generators use, taken from them.
struct Samples {
    findings_json: Vec<Vec<Value>>,
    junit: Vec<Vec<u8>>,
    responses: Vec<Vec<u8>>,
    contracts: Vec<Vec<u8>>,
    ledgers: Vec<Vec<u8>>,
    patches: Vec<Vec<u8>>,
    keys: Vec<String>,
    strings: Vec<String>,
    xml_names: Vec<String>,
}

/// Collects the object keys and the short strings of a sample document.
fn walk(v: &Value, keys: &mut BTreeSet<String>, strings: &mut BTreeSet<String>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                keys.insert(k.clone());
                walk(v, keys, strings);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| walk(v, keys, strings)),
        Value::String(s) if s.chars().count() <= 40 => {
            strings.insert(s.clone());
        }
        _ => {}
    }
}

static SAMPLES: LazyLock<Samples> = LazyLock::new(|| {
    let findings = files_under("tests/fixtures/findings", |p| !ext("md")(p));
    let mut findings_json = Vec::new();
    for bytes in &findings {
        let text = String::from_utf8_lossy(bytes);
        if let Ok(doc) = serde_json::from_str::<Value>(&text) {
            findings_json.push(vec![doc]);
        } else {
            let lines: Vec<Value> = text
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect();
            if !lines.is_empty() {
                findings_json.push(lines);
            }
        }
    }
    let mut keys = BTreeSet::new();
    let mut strings = BTreeSet::new();
    findings_json
        .iter()
        .flatten()
        .for_each(|v| walk(v, &mut keys, &mut strings));
    for word in [
        "responses",
        "status",
        "note",
        "fixed",
        "disputed",
        "wontfix",
    ] {
        keys.insert(word.into());
        strings.insert(word.into());
    }
    let junit = files_under("tests/fixtures/findings/junit", |_| true);
    let names = regex::Regex::new(r"</?([A-Za-z_][A-Za-z0-9_.:-]*)|\s([A-Za-z_][A-Za-z0-9_.:-]*)=")
        .expect("regex");
    let xml_names: BTreeSet<String> = junit
        .iter()
        .flat_map(|b| {
            names
                .captures_iter(&String::from_utf8_lossy(b))
                .filter_map(|c| {
                    c.get(1)
                        .or_else(|| c.get(2))
                        .map(|m| m.as_str().to_string())
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let mut responses = files_under("ledgers", |p| {
        named("responses.json")(p) || named("writer.output")(p)
    });
    responses.push(
        br#"{"responses":[{"id":"F1","status":"fixed","note":"n"},{"id":2,"status":"wontfix"}]}"#
            .to_vec(),
    );
    let mut contracts = files_under("contracts", ext("toml"));
    contracts.extend(files_under("tests/fixtures/ledger", ext("toml")));
    let mut ledgers = files_under("ledgers", ext("csv"));
    ledgers.extend(files_under("tests/fixtures/ledger", ext("csv")));
    let mut patches = files_under("ledgers", named("patch.diff"));
    patches.extend(files_under("tests/fixtures/ledger", named("patch.diff")));
    patches.retain(|p| !p.is_empty());
    Samples {
        findings_json,
        junit,
        responses,
        contracts,
        ledgers,
        patches,
        keys: keys.into_iter().collect(),
        strings: strings.into_iter().collect(),
        xml_names: xml_names.into_iter().collect(),
    }
});

#[test]
fn the_fuzz_samples_are_there() {
    let s = &*SAMPLES;
    let counts = [
        ("findings json", s.findings_json.len(), 8),
        ("junit", s.junit.len(), 4),
        ("responses", s.responses.len(), 3),
        ("contracts", s.contracts.len(), 4),
        ("ledgers", s.ledgers.len(), 8),
        ("patches", s.patches.len(), 8),
        ("json keys", s.keys.len(), 30),
        ("xml names", s.xml_names.len(), 8),
    ];
    for (what, have, least) in counts {
        assert!(have >= least, "{what}: {have} samples, expected {least}+");
    }
}

/// Bytes a mutation inserts: the syntax each format cares about, and the
/// edge cases it might mishandle.
#[rustfmt::skip]
const TOKENS: &[&str] = &[
    "{", "}", "[", "]", "\"", ",", ":", "\\", "\\u0000", "\\ud800", "1e999", "-1",
    "18446744073709551616", "null", "true", "\n", "\r\n", "\r", "\t", "<", ">", "&#0;",
    "&#xD800;", "&amp;", "]]>", "<![CDATA[", "<!DOCTYPE x [<!ENTITY a \"b\">]>", "\u{feff}",
    "\u{2028}", "\u{0}", "\u{ff}", "@@ -1,4294967295 +0,0 @@", "@@ -0 +0 @@", "\n+", "\n-",
    "\n ", "\ndiff --git a/x b/x\n", "\\ No newline at end of file\n", "\"a\\377\\t\"",
    "../", "/", "%00", "round", "continue", "stop", "[bug]", "[P0]", "= ", "[[x]]", "'''",
];

#[derive(Debug, Clone)]
enum Edit {
    Flip(usize, u8),
    Insert(usize, usize),
    InsertBytes(usize, Vec<u8>),
    Delete(usize, usize),
    Truncate(usize),
    Duplicate(usize, usize),
    Splice(usize, usize, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    let pos = any::<usize>();
    prop_oneof![
        (pos, any::<u8>()).prop_map(|(p, b)| Edit::Flip(p, b)),
        (pos, 0..TOKENS.len()).prop_map(|(p, t)| Edit::Insert(p, t)),
        (pos, prop::collection::vec(any::<u8>(), 1..16)).prop_map(|(p, b)| Edit::InsertBytes(p, b)),
        (pos, 1..64usize).prop_map(|(p, n)| Edit::Delete(p, n)),
        pos.prop_map(Edit::Truncate),
        (pos, 1..128usize).prop_map(|(p, n)| Edit::Duplicate(p, n)),
        (pos, any::<usize>(), any::<usize>()).prop_map(|(p, s, o)| Edit::Splice(p, s, o)),
    ]
}

/// Applies `edits` to a copy of `input`; `pool` lends bytes to splices.
fn mutate(input: &[u8], edits: &[Edit], pool: &[Vec<u8>]) -> Vec<u8> {
    let mut out = input.to_vec();
    for e in edits {
        let at = |p: usize, len: usize| if len == 0 { 0 } else { p % (len + 1) };
        match e {
            Edit::Flip(p, b) => {
                if !out.is_empty() {
                    let i = p % out.len();
                    out[i] = *b;
                }
            }
            Edit::Insert(p, t) => {
                let i = at(*p, out.len());
                out.splice(i..i, TOKENS[*t].bytes());
            }
            Edit::InsertBytes(p, bytes) => {
                let i = at(*p, out.len());
                out.splice(i..i, bytes.iter().copied());
            }
            Edit::Delete(p, n) => {
                let i = at(*p, out.len());
                let end = (i + n).min(out.len());
                out.drain(i..end);
            }
            Edit::Truncate(p) => {
                let i = at(*p, out.len());
                out.truncate(i);
            }
            Edit::Duplicate(p, n) => {
                let i = at(*p, out.len());
                let end = (i + n).min(out.len());
                let copy = out[i..end].to_vec();
                out.splice(end..end, copy);
            }
            Edit::Splice(p, s, o) => {
                if let Some(other) = pool.get(s % pool.len().max(1))
                    && !other.is_empty()
                {
                    let from = o % other.len();
                    let i = at(*p, out.len());
                    out.splice(i..i, other[from..].iter().copied().take(96));
                }
            }
        }
    }
    out
}

/// Inputs for a parser: arbitrary bytes, or a sample mutated.
fn bytes_or_mutated(pool: &'static [Vec<u8>]) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        1 => prop::collection::vec(any::<u8>(), 0..512),
        3 => (0..pool.len(), prop::collection::vec(edit(), 1..8))
            .prop_map(move |(i, edits)| mutate(&pool[i], &edits, pool)),
    ]
}

fn word(words: &'static [String]) -> impl Strategy<Value = String> {
    prop::sample::select(words)
}

/// A short string: a word from the samples, an edge case, or anything.
fn json_string() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => word(&SAMPLES.strings),
        1 => prop::sample::select(vec![
            String::new(), " ".into(), "\u{0}".into(), "../../etc/passwd".into(), "/abs/x.rs".into(),
            "file:///C:/x%zz".into(), "C:\\w\\x.rs".into(), "x".repeat(400), "é🦀\u{202e}".into(),
        ]),
        2 => any::<String>(),
    ]
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        prop::sample::select(vec![0i64, 1, -1, 2, 3, i64::from(u32::MAX) + 1])
            .prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        json_string().prop_map(Value::String),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((word(&SAMPLES.keys), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Where in a sample document a structural edit lands, and what it does.
#[derive(Debug, Clone)]
enum JsonEdit {
    Replace(usize, Value),
    Remove(usize),
    DuplicateIn(usize),
    Wrap(usize),
}

fn json_edit() -> impl Strategy<Value = JsonEdit> {
    prop_oneof![
        3 => (any::<usize>(), json_value()).prop_map(|(n, v)| JsonEdit::Replace(n, v)),
        1 => any::<usize>().prop_map(JsonEdit::Remove),
        1 => any::<usize>().prop_map(JsonEdit::DuplicateIn),
        1 => any::<usize>().prop_map(JsonEdit::Wrap),
    ]
}

fn count_nodes(v: &Value) -> usize {
    1 + match v {
        Value::Array(items) => items.iter().map(count_nodes).sum(),
        Value::Object(map) => map.values().map(count_nodes).sum(),
        _ => 0,
    }
}

/// Applies `edit` at node number `*n` (pre-order); returns whether it did.
fn apply_json(v: &mut Value, n: &mut usize, edit: &JsonEdit) -> bool {
    if *n == 0 {
        match edit {
            JsonEdit::Replace(_, new) => *v = new.clone(),
            JsonEdit::Wrap(_) => *v = Value::Array(vec![v.take()]),
            JsonEdit::DuplicateIn(_) => match v {
                Value::Array(items) if !items.is_empty() => items.push(items[0].clone()),
                Value::Object(map) => {
                    map.insert("duplicate".into(), Value::Object(map.clone()));
                }
                _ => {}
            },
            JsonEdit::Remove(_) => *v = Value::Null,
        }
        return true;
    }
    *n -= 1;
    match v {
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                if *n == 0 && matches!(edit, JsonEdit::Remove(_)) {
                    items.remove(i);
                    return true;
                }
                if apply_json(item, n, edit) {
                    return true;
                }
            }
            false
        }
        Value::Object(map) => {
            let keys: Vec<String> = map.keys().cloned().collect();
            for key in keys {
                if *n == 0 && matches!(edit, JsonEdit::Remove(_)) {
                    map.remove(&key);
                    return true;
                }
                if let Some(item) = map.get_mut(&key)
                    && apply_json(item, n, edit)
                {
                    return true;
                }
            }
            false
        }
        _ => false,
    }
}

/// A findings sample (a document, or JSON lines) with structural edits.
fn edited_json_sample() -> impl Strategy<Value = Vec<u8>> {
    (
        0..SAMPLES.findings_json.len(),
        prop::collection::vec(json_edit(), 1..5),
        any::<bool>(),
    )
        .prop_map(|(i, edits, pretty)| {
            let mut docs = SAMPLES.findings_json[i].clone();
            for e in &edits {
                let n = match e {
                    JsonEdit::Replace(n, _)
                    | JsonEdit::Remove(n)
                    | JsonEdit::DuplicateIn(n)
                    | JsonEdit::Wrap(n) => *n,
                };
                let total: usize = docs.iter().map(count_nodes).sum();
                let mut at = n % total.max(1);
                for doc in docs.iter_mut() {
                    if apply_json(doc, &mut at, e) {
                        break;
                    }
                }
            }
            let texts: Vec<String> = docs
                .iter()
                .map(|d| {
                    if pretty && docs.len() == 1 {
                        serde_json::to_string_pretty(d).unwrap_or_default()
                    } else {
                        d.to_string()
                    }
                })
                .collect();
            texts.join("\n").into_bytes()
        })
}

fn xml_text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-zA-Z0-9 :/._()=-]{0,30}",
        1 => prop::sample::select(vec![
            "&amp;".to_string(), "&lt;".into(), "&#10;".into(), "&#0;".into(), "&#xD800;".into(),
            "&#x110000;".into(), "&bogus;".into(), "&".into(), "<![CDATA[ a ]]>".into(),
            "src/a.rs:12: in test".into(), "/abs/path.py:3".into(),
        ]),
        1 => any::<String>().prop_map(|s| s.replace(['<', '&'], "")),
    ]
}

#[derive(Debug, Clone)]
struct Element {
    name: String,
    attrs: Vec<(String, String)>,
    children: Vec<Element>,
    text: String,
}

fn element() -> impl Strategy<Value = Element> {
    let name = || word(&SAMPLES.xml_names);
    let leaf = (
        name(),
        prop::collection::vec((name(), xml_text()), 0..5),
        xml_text(),
    )
        .prop_map(|(name, attrs, text)| Element {
            name,
            attrs,
            children: Vec::new(),
            text,
        });
    leaf.prop_recursive(4, 32, 5, move |inner| {
        (
            name(),
            prop::collection::vec((name(), xml_text()), 0..5),
            prop::collection::vec(inner, 0..5),
            xml_text(),
        )
            .prop_map(|(name, attrs, children, text)| Element {
                name,
                attrs,
                children,
                text,
            })
    })
}

fn render_xml(e: &Element, out: &mut String) {
    out.push('<');
    out.push_str(&e.name);
    for (k, v) in &e.attrs {
        out.push_str(&format!(" {k}=\"{}\"", v.replace('"', "&quot;")));
    }
    out.push('>');
    out.push_str(&e.text);
    for c in &e.children {
        render_xml(c, out);
    }
    out.push_str(&format!("</{}>", e.name));
}

fn junit_doc() -> impl Strategy<Value = Vec<u8>> {
    (element(), any::<bool>()).prop_map(|(e, decl)| {
        let mut out = String::new();
        if decl {
            out.push_str("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n");
        }
        render_xml(&e, &mut out);
        out.into_bytes()
    })
}

/// Lines shaped like tagged text and Codex review text.
fn text_review() -> impl Strategy<Value = Vec<u8>> {
    let tag = prop::sample::select(vec![
        "[block]",
        "[bug]",
        "[should]",
        "[nit]",
        "[P0]",
        "[P1]",
        "[P3]",
        "[Minor]",
        "[resolved]",
        "[clean]",
        "[x]",
        "[",
        "- [P2]",
        "* [bug]",
        "",
    ]);
    let number = prop::sample::select(vec![
        "0",
        "1",
        "12",
        "4294967296",
        "18446744073709551616",
        "-1",
        "1-3",
        "3-1",
        "1:5",
        "",
    ]);
    let path = prop_oneof![
        3 => "[a-z/._]{1,20}",
        1 => prop::sample::select(vec!["../x.rs", "/abs/x.rs", "C:\\x.rs", "file:///x%20y.rs", " "])
            .prop_map(String::from),
    ];
    let line = (tag, path, number, any::<bool>(), json_string()).prop_map(
        |(tag, path, n, dash, title)| {
            if dash {
                format!("{tag} {title} — {path}:{n}")
            } else {
                format!("{tag} {path}:{n}: {title}")
            }
        },
    );
    prop::collection::vec(prop_oneof![4 => line, 1 => json_string()], 0..12)
        .prop_map(|lines| lines.join("\n").into_bytes())
}

const FORMATS: [referee::findings::Format; 6] = [
    referee::findings::Format::Auto,
    referee::findings::Format::Native,
    referee::findings::Format::Tagged,
    referee::findings::Format::Sarif,
    referee::findings::Format::Junit,
    referee::findings::Format::Codex,
];

fn check_findings(input: Vec<u8>) {
    bounded("findings::parse", move || {
        for format in FORMATS {
            match referee::findings::parse(&input, format, "/work/repo") {
                Ok(parsed) => {
                    for f in &parsed.findings {
                        assert!(!f.id.is_empty() && !f.title.is_empty(), "{f:?}");
                    }
                    // What the engine stores as evidence must serialize.
                    serde_json::to_vec(&parsed).expect("findings serialize");
                }
                Err(err) => assert!(!err.to_string().is_empty()),
            }
        }
    });
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn findings_parsers_survive_structured_documents(
        input in prop_oneof![3 => edited_json_sample(), 2 => junit_doc(), 2 => text_review(),
                             1 => json_value().prop_map(|v| v.to_string().into_bytes())]
    ) {
        check_findings(input);
    }

    #[test]
    fn the_responses_parser_survives_anything(
        input in prop_oneof![
            2 => bytes_or_mutated(&SAMPLES.responses),
            1 => json_value().prop_map(|v| serde_json::json!({"responses": v}).to_string().into_bytes()),
            1 => prop::collection::vec(json_value(), 0..4)
                .prop_map(|v| serde_json::json!({"responses": v}).to_string().into_bytes()),
        ]
    ) {
        bounded("responses::parse", move || {
            match referee::findings::responses::parse(&input) {
                Ok(list) => list.iter().for_each(|r| assert!(!r.id.trim().is_empty(), "{r:?}")),
                Err(err) => assert!(!err.to_string().is_empty()),
            }
        });
    }

    #[test]
    fn the_contract_loader_survives_anything_and_round_trips(
        input in prop_oneof![2 => bytes_or_mutated(&SAMPLES.contracts), 2 => contract_toml()]
    ) {
        bounded("Contract::from_toml", move || {
            let text = String::from_utf8_lossy(&input);
            match referee::contract::Contract::from_toml(&text, "HEAD") {
                Ok(contract) => {
                    // What `init` and `amend` write must read back the same.
                    let again = referee::contract::render::to_toml(&contract);
                    let back = referee::contract::Contract::from_toml(&again, "HEAD");
                    assert_eq!(back.as_ref().ok(), Some(&contract), "{again}\n{back:?}");
                }
                Err(err) => assert!(!err.to_string().is_empty()),
            }
        });
    }

    #[test]
    fn the_ledger_chain_parser_survives_anything(
        input in prop_oneof![2 => bytes_or_mutated(&SAMPLES.ledgers), 2 => csv_ledger()]
    ) {
        bounded("chain::parse", move || check_chain(&input));
    }

    #[test]
    fn the_patch_parser_survives_anything(
        a in prop_oneof![2 => bytes_or_mutated(&SAMPLES.patches), 2 => diff_text()],
        b in prop_oneof![bytes_or_mutated(&SAMPLES.patches), diff_text()],
        line in any::<u32>(),
    ) {
        bounded("patch::parse", move || {
            let (pa, pb) = (referee::patch::parse(&a), referee::patch::parse(&b));
            for p in [&pa, &pb] {
                let changed = referee::patch::changed_lines(p);
                for f in &p.files {
                    let _ = f.path();
                    for h in &f.hunks {
                        let _ = h.header();
                    }
                    if let Some(path) = f.path() {
                        let _ = referee::patch::touches(&changed, path, line);
                    }
                }
            }
            for (x, y) in [(&pa, &pb), (&pb, &pa), (&pa, &pa)] {
                if let Some(r) = referee::patch::reverses_line(x, &[(2, y)]) {
                    assert!(!r.to_string().is_empty());
                }
                let touched = referee::patch::touched(y);
                for f in &x.files {
                    if let Some(path) = f.path() {
                        let _ = touched.near(path, u64::from(line), u64::from(line));
                        let _ = referee::patch::carry(y, path, u64::from(line));
                    }
                }
            }
        });
    }
}

fn check_chain(input: &[u8]) {
    let Ok(parsed) = chain::parse_hashed(input) else {
        return;
    };
    // What was parsed verifies or is refused with a message, and renders.
    let genesis = "0".repeat(64);
    if let Err(err) = chain::verify(&parsed, &genesis, |_| Ok(None)) {
        assert!(!err.to_string().is_empty());
    }
    let _ = chain::verify(&parsed, &genesis, |r| Ok(Some(r.evidence_sha256.clone())));
    for format in [
        referee::cli::LedgerFormat::Table,
        referee::cli::LedgerFormat::Csv,
        referee::cli::LedgerFormat::Json,
        referee::cli::LedgerFormat::Markdown,
    ] {
        let _ = referee::report::ledger::render("fuzz", &parsed.rows, format);
    }
    for row in &parsed.rows {
        let _ = row.to_json();
        // A row written back reads as the same fields.
        let fields = row.fields();
        let line = chain::write_record(&fields);
        let again = chain::read_record(&line[..line.len() - 1]);
        assert_eq!(again, Ok(fields), "{}", String::from_utf8_lossy(&line));
    }
}

/// A ledger: the real header, then rows of 23 fields of plausible and edge values.
fn csv_ledger() -> impl Strategy<Value = Vec<u8>> {
    let field = prop_oneof![
        2 => Just(String::new()),
        2 => prop::sample::select(vec![
            "0", "1", "3", "4294967296", "-1", "+1", "01", "1e3", "NaN", "inf", "-0", "0.25",
            "1e309", "continue", "stop", "round", "amend", "waive", "approve", "reject",
            "round-cap", "2026-01-02T03:04:05Z", "max_rounds=5", "a,b", "\"q\"", "x\ny", "\r",
        ])
        .prop_map(String::from),
        2 => "[0-9a-f]{64}",
        1 => any::<String>(),
    ];
    let row = prop::collection::vec(field, 20..26).prop_map(|f| chain::write_record(&f));
    (prop::collection::vec(row, 0..5), any::<bool>(), 0..40usize).prop_map(|(rows, torn, cut)| {
        let mut out = referee::ledger::row::header().into_bytes();
        out.push(b'\n');
        rows.iter().for_each(|r| out.extend_from_slice(r));
        if torn && let Some(last) = rows.last() {
            out.extend_from_slice(&last[..cut.min(last.len())]);
        }
        out
    })
}

/// Lines of a unified diff, with the header and hunk edge cases.
fn diff_text() -> impl Strategy<Value = Vec<u8>> {
    let num = prop::sample::select(vec![
        "0",
        "1",
        "2",
        "3",
        "4294967295",
        "4294967296",
        "-1",
        "",
    ]);
    let name = prop_oneof![
        3 => "[a-z/ ._]{1,16}",
        1 => Just("\"a/\\303\\251\\t\\777\\\"x\"".to_string()),
        1 => Just("/dev/null".to_string()),
    ];
    let line = prop_oneof![
        2 => (name.clone(), name.clone()).prop_map(|(a, b)| format!("diff --git a/{a} b/{b}")),
        1 => name.clone().prop_map(|a| format!("--- a/{a}")),
        1 => name.clone().prop_map(|b| format!("+++ b/{b}")),
        3 => (num.clone(), num.clone(), num.clone(), num, ".{0,8}")
            .prop_map(|(a, b, c, d, s)| format!("@@ -{a},{b} +{c},{d} @@ {s}")),
        4 => ("[-+ ]", ".{0,20}").prop_map(|(m, t)| format!("{m}{t}")),
        1 => prop::sample::select(vec![
            "\\ No newline at end of file", "new file mode 100644", "deleted file mode 100644",
            "GIT binary patch", "Binary files a/x and b/x differ", "rename from a b", "rename to c",
            "copy from \"q\\", "", "\r", "@@ -1 +1 @@",
        ])
        .prop_map(String::from),
    ];
    prop::collection::vec(line, 0..30).prop_map(|l| l.join("\n").into_bytes())
}

/// A contract: known sections and fields with values of every TOML type.
fn contract_toml() -> impl Strategy<Value = Vec<u8>> {
    use toml::Value as T;
    let value = prop_oneof![
        3 => prop::sample::select(vec![
            "l", "claude", "codex", "gemini", "command", "tests", "bug", "nit", "block",
            "explicit", "absent", "30m", "1s", "0s", "10h", "**", "src/**", "[", "HEAD", "",
            "replay", "read-only", "Loop", "a b",
        ])
        .prop_map(|s| T::String(s.to_string())),
        1 => any::<String>().prop_map(T::String),
        2 => prop::sample::select(vec![0i64, 1, 3, 100, 101, -1, i64::MAX, i64::MIN]).prop_map(T::Integer),
        1 => any::<f64>().prop_map(T::Float),
        1 => any::<bool>().prop_map(T::Boolean),
        1 => prop::collection::vec(
            prop_oneof![Just(T::String("**".into())), any::<String>().prop_map(T::String),
                        any::<i64>().prop_map(T::Integer)],
            0..4,
        )
        .prop_map(T::Array),
    ];
    let key = prop::sample::select(vec![
        "loop",
        "max_rounds",
        "severity_floor",
        "scope",
        "closure",
        "base",
        "preset",
        "model",
        "bin",
        "args",
        "env",
        "timeout",
        "command",
        "junit",
        "cwd",
        "allowed_tools",
        "max_turns",
        "sandbox",
        "engine",
        "replay",
        "use_case",
        "what",
        "questions",
        "max_state_bytes",
        "usd",
        "tokens",
        "writer",
        "reviewer",
        "writer_file",
        "reviewer_file",
        "bogus",
    ]);
    let table = prop::collection::vec((key.clone(), value.clone()), 0..6)
        .prop_map(|kv| T::Table(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect()));
    let section = prop::sample::select(vec![
        "budget", "writer", "reviewer", "judge", "prompt", "env", "bogus",
    ]);
    (
        prop::collection::vec((key, value), 0..8),
        prop::collection::vec((section, table), 0..4),
        any::<bool>(),
    )
        .prop_map(|(top, sections, with_loop)| {
            let mut root = toml::Table::new();
            if with_loop {
                root.insert("loop".into(), T::String("l".into()));
            }
            for (k, v) in top {
                root.insert(k.to_string(), v);
            }
            for (k, v) in sections {
                root.insert(k.to_string(), v);
            }
            toml::to_string(&root).unwrap_or_default().into_bytes()
        })
}

// ---------------------------------------------------------------------------
// 5. Agents that misbehave, through `referee run` and the fake agent.

fn fake_agent() -> String {
    root()
        .join("tests/fixtures/agents/fake-agent.sh")
        .display()
        .to_string()
}

/// A repository whose loop `l` is driven by the fake agent, and its scripts.
struct Driven {
    repo: Repo,
    script: tempfile::TempDir,
}

impl Driven {
    fn new() -> Driven {
        let repo = Repo::new();
        repo.write("src/a.rs", "fn a() {}\n");
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "-m", "a"]);
        let script = tempfile::tempdir().unwrap();
        let dir = script.path().display().to_string();
        let agent = fake_agent();
        let section = |role: &str| {
            format!(
                "[{role}]\npreset = \"command\"\ncommand = [\"{agent}\"]\nenv = {{ FAKE_DIR = \"{dir}\" }}\n"
            )
        };
        let contract = format!(
            "loop = \"l\"\nmax_rounds = 4\n{}{}",
            section("writer"),
            section("reviewer")
        );
        let path = script.path().join("contract.toml");
        std::fs::write(&path, contract).unwrap();
        let out = referee(&repo, &["init", "--from", path.to_str().unwrap()]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        Driven { repo, script }
    }

    fn file(&self, name: &str, body: impl AsRef<[u8]>) -> &Driven {
        std::fs::write(self.script.path().join(name), body).unwrap();
        self
    }

    fn rows(&self) -> usize {
        let out = referee(&self.repo, &["ledger", "show", "--json"]);
        serde_json::from_str::<Vec<Value>>(&out.stdout)
            .expect("json")
            .len()
    }
}

fn vm_hwm_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs `cmd` to its end, polling its peak resident memory (`VmHWM`, KiB).
fn peak_memory(cmd: &mut Command) -> (std::process::ExitStatus, String, u64) {
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut peak_kib = 0;
    while child.try_wait().unwrap().is_none() {
        if let Some(kib) = vm_hwm_kib(pid) {
            peak_kib = peak_kib.max(kib);
        }
        assert!(
            start.elapsed() < HANG_GUARD * 3,
            "hang guard: referee did not end"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let (status, stderr) = finish(child, "referee");
    (status, stderr, peak_kib)
}

/// 300 MB: the most referee itself may use while an agent floods it; the
/// agent runner keeps 32 MiB per stream.
const RSS_CAP_KIB: u64 = 300 * 1000 * 1000 / 1024;

#[test]
fn a_reviewer_printing_a_gigabyte_costs_bounded_memory_and_records_nothing() {
    let f = Driven::new();
    f.file("writer-1.sh", "echo 'fn a() { 1 }' > src/a.rs\n")
        .file("reviewer-1.sh", "head -c 1073741824 /dev/zero\n");
    let start = Instant::now();
    let (status, stderr, peak_kib) = peak_memory(f.repo.referee_std().args(["run", "--task", "t"]));
    let elapsed = start.elapsed();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "round 1: reviewer `command` failed: printed 1040187392 bytes more than the 32 MiB kept; nothing was recorded"
        ),
        "{stderr}"
    );
    assert!(peak_kib > 0, "no memory reading of the referee process");
    assert!(
        peak_kib < RSS_CAP_KIB,
        "referee peaked at {peak_kib} KiB while the agent printed 1 GiB (cap {RSS_CAP_KIB} KiB)"
    );
    assert_eq!(f.rows(), 0);
    // What is kept of the output is capped on disk too.
    let kept: u64 = tree(&f.repo.join(".referee/ledgers/l/failed"))
        .values()
        .map(|b| b.len() as u64)
        .max()
        .unwrap_or(0);
    assert!(
        kept <= referee::agent::process::OUTPUT_CAP as u64,
        "{kept} bytes kept"
    );
    println!(
        "1 GiB reviewer: referee peak RSS {} MiB, {:.1} s",
        peak_kib / 1024,
        elapsed.as_secs_f64()
    );
}

#[test]

fn a_stale_git_ref_lock_left_by_a_crash_does_not_block_the_loop() {
    let repo = Repo::new();
    assert_eq!(referee(&repo, &["init", "--loop", "l"]).code, 0);
    // What git leaves when it is killed between taking the ref's lock and
    // renaming it into place.
    std::fs::create_dir_all(repo.join(".git/refs/referee/l")).unwrap();
    std::fs::write(repo.join(".git/refs/referee/l/round-1.lock"), "").unwrap();
    let (status, stderr) = finish(
        spawn_record(&repo, "l", &crash_finding(1)),
        "record after a crash",
    );
    assert_eq!(status.code(), Some(10), "{stderr}");
    assert_eq!(referee(&repo, &["ledger", "verify", "--loop", "l"]).code, 0);
}

#[test]

fn a_huge_responses_file_is_refused_with_bounded_memory() {
    let repo = Repo::new();
    assert_eq!(referee(&repo, &["init", "--loop", "l"]).code, 0);
    let findings = repo.join("findings.json");
    std::fs::write(&findings, r#"{"findings":[]}"#).unwrap();
    // 1 GiB that takes no disk: a sparse file.
    let responses = repo.join("responses.json");
    std::fs::File::create(&responses)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    let (status, stderr, peak_kib) = peak_memory(repo.referee_std().args([
        "record",
        "--findings",
        findings.to_str().unwrap(),
        "--responses",
        responses.to_str().unwrap(),
    ]));
    assert!(
        peak_kib < RSS_CAP_KIB,
        "referee peaked at {peak_kib} KiB reading a 1 GiB responses file (cap {RSS_CAP_KIB} KiB)"
    );
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("larger than"), "{stderr}");
}

#[test]
fn a_review_that_is_not_utf8_is_refused_and_records_nothing() {
    let f = Driven::new();
    f.file("writer-1.sh", "echo 'fn a() { 2 }' > src/a.rs\n")
        .file("reviewer-1.print", b"\xff\xfe{\"findings\": []}\n");
    let out = referee(&f.repo, &["run", "--task", "t"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stderr.contains(
            "round 1: reviewer `command` gave no readable review: input is not utf-8: invalid byte at offset 0"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("nothing was recorded"),
        "{}",
        out.stderr
    );
    assert_eq!(f.rows(), 0);
}

#[test]
fn a_reviewer_that_exits_zero_with_nothing_is_not_a_clean_round() {
    let f = Driven::new();
    f.file("writer-1.sh", "echo 'fn a() { 3 }' > src/a.rs\n");
    let out = referee(&f.repo, &["run", "--task", "t"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stderr
            .contains("round 1: reviewer `command` gave no readable review: input is empty"),
        "{}",
        out.stderr
    );
    assert_eq!(f.rows(), 0);
}

// ---------------------------------------------------------------------------
// 6. Security: paths that leave the repository, secrets in every input.

#[test]
fn finding_paths_outside_the_repository_are_never_opened() {
    let repo = Repo::new();
    assert_eq!(referee(&repo, &["init", "--loop", "l"]).code, 0);
    // A folder beside the repository with a file whose content must never
    // reach the referee's state, and one the repository links to.
    let outside = tempfile::tempdir().unwrap();
    let marker = "OUTSIDE-CONTENT-do-not-read-4f1c";
    std::fs::write(outside.path().join("secret.txt"), marker).unwrap();
    std::os::unix::fs::symlink(outside.path(), repo.join("link")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), repo.join("leak.txt")).unwrap();
    let before = tree(outside.path());
    let sibling = outside
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let abs = outside.path().join("secret.txt").display().to_string();
    let findings = serde_json::json!({"findings": [
        {"id": "E1", "severity": "bug", "title": "dot dot", "file": format!("../{sibling}/secret.txt"), "line": 1},
        {"id": "E2", "severity": "bug", "title": "absolute", "file": abs, "line": 1},
        {"id": "E3", "severity": "bug", "title": "through a link", "file": "link/secret.txt", "line": 1},
        {"id": "E4", "severity": "bug", "title": "a linked file", "file": "leak.txt", "line": 1},
        {"id": "E5", "severity": "bug", "title": "uri", "file": format!("file://{abs}"), "line": 1},
        {"id": "E6", "severity": "bug", "title": "new file", "file": format!("../{sibling}/created.txt"), "line": 1},
        {"id": "E7", "severity": "bug", "title": "one-slash uri", "file": format!("file:{abs}"), "line": 1},
        {"id": "E8", "severity": "bug", "title": "home", "file": "~/.ssh/id_rsa", "line": 1},
    ]});
    let mut cmd = repo.referee_std();
    cmd.args(["record", "--findings", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let mut child = cmd.stderr(Stdio::piped()).spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(findings.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(10), "{}", text(&out.stderr));
    // Every command that shows findings, too.
    for args in [
        &["status"][..],
        &["escalate"],
        &["findings"],
        &["findings", "--format", "sarif"],
        &["report"],
        &["ledger", "verify"],
    ] {
        let out = referee(&repo, args);
        assert!(
            !out.stdout.contains(marker),
            "{args:?} read the outside file"
        );
    }

    assert_eq!(
        tree(outside.path()),
        before,
        "something outside the repository changed"
    );
    assert!(!outside.path().join("created.txt").exists());
    for (path, bytes) in tree(&repo.join(".referee")) {
        assert!(
            !contains(&bytes, marker.as_bytes()),
            "{} holds the outside file",
            path.display()
        );
    }
    // Snapshots store the links as links, never what they point at.
    let listing = repo.git(&["ls-tree", "-r", "refs/referee/l/round-1"]);
    for name in ["link", "leak.txt"] {
        assert!(
            listing
                .lines()
                .any(|l| l.starts_with("120000 ") && l.ends_with(&format!("\t{name}"))),
            "{listing}"
        );
    }
    // The findings are kept as text: escaping paths flagged, the others normalized.
    let stored: Value = serde_json::from_slice(
        &std::fs::read(repo.join(".referee/ledgers/l/round-1/findings.json")).unwrap(),
    )
    .unwrap();
    let by_id: BTreeMap<String, (String, bool)> = stored["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["id"].as_str().unwrap().to_string(),
                (
                    f["file"].as_str().unwrap_or_default().to_string(),
                    f["path_escapes"].as_bool().unwrap_or(false),
                ),
            )
        })
        .collect();
    assert_eq!(by_id["E1"], (format!("../{sibling}/secret.txt"), true));
    assert_eq!(by_id["E2"], (abs.clone(), true));
    assert_eq!(by_id["E3"], ("link/secret.txt".to_string(), false));
    assert_eq!(by_id["E4"], ("leak.txt".to_string(), false));
    assert_eq!(by_id["E5"], (abs.clone(), true));
    assert_eq!(by_id["E6"], (format!("../{sibling}/created.txt"), true));
    assert_eq!(by_id["E7"], (abs, true));
    assert_eq!(by_id["E8"], ("~/.ssh/id_rsa".to_string(), true));
}

/// One secret of each rule in docs/secrets.md that text carries, as it is
/// written and with the part that must never be stored. Built with
/// `concat!` so that no secret scanner takes this file for a leak.
const SECRETS: &[(&str, &str)] = &[
    (
        concat!(
            "sk-ant-api03-",
            "R3liab1l1tyT3stK3yAAAAAAAAAAAAAAAAAAAAAAAA"
        ),
        "R3liab1l1tyT3stK3y",
    ),
    (
        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.cmVsaWFiaWxpdHk.c2lnbmF0dXJl",
        "cmVsaWFiaWxpdHk",
    ),
    ("PASSWORD=hunter2-reliability-42", "hunter2-reliability"),
    ("postgres://app:pgPass-rel1@db.internal/app", "pgPass-rel1"),
    ("mysql://root:myPass-rel2@127.0.0.1:3306/x", "myPass-rel2"),
    (
        "mongodb+srv://admin:mongoPass-rel3@cluster0.example.net/db",
        "mongoPass-rel3",
    ),
    ("redis://:redisPass-rel4@cache:6379/0", "redisPass-rel4"),
    ("amqps://guest:amqpPass-rel5@rabbit/vhost", "amqpPass-rel5"),
    ("password:yamlPass-rel6", "yamlPass-rel6"),
    (
        concat!("sk_", "live_", "R3l1ab1l1tyStr1peK3y0007"),
        "R3l1ab1l1tyStr1peK3y0007",
    ),
    (
        concat!("rk_", "live_", "R3l1ab1l1tyRestr1ct0008"),
        "R3l1ab1l1tyRestr1ct0008",
    ),
    (
        concat!(
            "eyJhbGciOiJIUzI1NiJ9",
            ".",
            "eyJzdWIiOiJyZWxpYWJpbGl0eTkifQ",
            ".",
            "U2lnbmF0dXJlUmVsOQ"
        ),
        "eyJzdWIiOiJyZWxpYWJpbGl0eTkifQ",
    ),
    (
        concat!("npm_", "R3l1ab1l1tyNpmT0k3nAAAAAAAAAAAAAAA10"),
        "R3l1ab1l1tyNpmT0k3n",
    ),
    (
        concat!(
            "https://hooks.slack.com/services/",
            "T0REL1AB1/B0REL1AB1/R3l1ab1l1tySl4ckH00k11"
        ),
        "R3l1ab1l1tySl4ckH00k11",
    ),
    (
        concat!("xoxb-", "123456789012-R3l1ab1l1tySl4ck12"),
        "R3l1ab1l1tySl4ck12",
    ),
    (
        "Authorization: token T0kenRel13abcdef0123",
        "T0kenRel13abcdef0123",
    ),
    (
        "Authorization: Basic dXNlcjpyZWxpYWJpbGl0eTE0",
        "dXNlcjpyZWxpYWJpbGl0eTE0",
    ),
    ("mysql --password cliPass-rel15 db", "cliPass-rel15"),
    ("deploy --api-key=cliKey-rel16", "cliKey-rel16"),
    (
        "DefaultEndpointsProtocol=https;AccountName=rel;AccountKey=QXp1cmVSZWwxNw==;EndpointSuffix=core.windows.net",
        "QXp1cmVSZWwxNw",
    ),
    (
        r#"password = "a long passphrase rel18""#,
        "passphrase rel18",
    ),
    (r#"{"api_key": "jsonKey-rel19"}"#, "jsonKey-rel19"),
    (concat!("AKIA", "RELIAB1L1TY20AWS"), "RELIAB1L1TY20AWS"),
    (
        concat!("AIza", "SyR3l1ab1l1ty21GcpK3yAAAAAAAAAAAAAA"),
        "R3l1ab1l1ty21GcpK3y",
    ),
    (
        concat!("ghp_", "R3l1ab1l1ty22G1tHubT0k3nAAAAAAAAAAA"),
        "R3l1ab1l1ty22G1tHub",
    ),
    (
        concat!("glpat-", "R3l1ab1l1ty23GitLabT0k"),
        "R3l1ab1l1ty23GitLab",
    ),
    (
        concat!("sk-proj-", "R3l1ab1l1ty24OpenAiK3yAAAAAAAA"),
        "R3l1ab1l1ty24OpenAi",
    ),
    (
        concat!("hf_", "R3l1ab1l1ty25HuggingFaceT0k3nAAAAA"),
        "R3l1ab1l1ty25Hugging",
    ),
    (
        concat!(
            "dop_v1_",
            "2626262626262626262626262626262626262626262626262626262626262626"
        ),
        "26262626262626262626",
    ),
    (
        concat!(
            "SG.",
            "R3l1ab1l1ty27SendGr",
            ".",
            "R3l1ab1l1ty27SendGridSecretPartAAAAAAAAAAAAAA"
        ),
        "R3l1ab1l1ty27SendGridSecret",
    ),
    (
        concat!(
            "pypi-",
            "AgEIcHlwaS5vcmc",
            "R3l1ab1l1ty28PyPIUploadT0k3nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
        ),
        "R3l1ab1l1ty28PyPI",
    ),
    (
        concat!(
            "-----BEGIN RSA ",
            "PRIVATE KEY-----\nMIIR3l1ab1l1ty29PemB0dy\n-----END RSA ",
            "PRIVATE KEY-----"
        ),
        "MIIR3l1ab1l1ty29PemB0dy",
    ),
];

fn all_secrets() -> String {
    SECRETS
        .iter()
        .map(|(s, _)| *s)
        .collect::<Vec<_>>()
        .join(" and\n")
}

/// A two-round `run` with the secrets in the task, the writer's output (stdout,
/// stderr, its patch and its responses file) and the reviewer's findings.
fn run_with_secrets() -> Driven {
    let f = Driven::new();
    let s = all_secrets();
    let finding = serde_json::json!({"findings": [{"id": "S1", "severity": "bug",
        "title": format!("leaks {}", SECRETS[0].0), "file": "src/a.rs", "line": 1,
        "body": format!("found {s}")}]});
    let responses = serde_json::json!({"responses": [{"id": "S1", "status": "disputed",
        "note": format!("it is a test key: {s}")}]});
    f.file("secrets.txt", &s)
        .file(
            "writer-1.sh",
            "echo 'fn a() { 4 }' > src/a.rs\ncp \"$FAKE_DIR/secrets.txt\" config.env\n\
             echo \"writer says $(cat \"$FAKE_DIR/secrets.txt\")\"\n\
             echo \"debug $(cat \"$FAKE_DIR/secrets.txt\")\" >&2\n",
        )
        .file("reviewer-1.print", finding.to_string())
        .file("writer-2.sh", "echo 'fn a() { 5 }' > src/a.rs\n")
        .file("writer-2.out", responses.to_string())
        .file("reviewer-2.print", r#"{"findings":[]}"#);
    let task = format!("fix the leak; meanwhile use {s}");
    let out = referee(&f.repo, &["run", "--task", &task]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(f.rows(), 2);
    f
}

/// Stored files of `.referee/` that hold a secret, with the secret.
fn leaks(f: &Driven) -> Vec<(String, &'static str)> {
    let state = f.repo.join(".referee");
    let mut found = Vec::new();
    let files = tree(&state);
    assert!(files.len() >= 10, "only {} stored files", files.len());
    for (path, bytes) in files {
        for (_, needle) in SECRETS.iter().copied() {
            if contains(&bytes, needle.as_bytes()) {
                let rel = path.strip_prefix(&state).unwrap().display().to_string();
                found.push((rel, needle));
            }
        }
    }
    found
}

/// Where `run` keeps the task between runs (see `task` in src/cmd/run.rs).
const SAVED_TASK: &str = "ledgers/l/task.md";

#[test]
fn secrets_in_every_input_are_redacted_in_every_stored_file() {
    let f = run_with_secrets();
    // Each secret did reach the agents and the stored review: the test can fail.
    let calls = std::fs::read_to_string(f.script.path().join("calls.log")).unwrap();
    for (_, part) in SECRETS {
        assert!(calls.contains(part), "`{part}` never reached the writer");
    }
    let leaks: Vec<_> = leaks(&f)
        .into_iter()
        .filter(|(path, _)| path != SAVED_TASK)
        .collect();
    assert!(leaks.is_empty(), "secrets stored in: {leaks:?}");
    // Every kind of stored file had secrets to mask, and masked them.
    let state = f.repo.join(".referee");
    let files = tree(&state);
    let stored = |suffix: &str| -> Vec<String> {
        files
            .iter()
            .filter(|(path, _)| path.to_string_lossy().ends_with(suffix))
            .map(|(_, bytes)| String::from_utf8_lossy(bytes).into_owned())
            .collect()
    };
    for suffix in [
        "round-1/task.md",
        "round-1/findings.raw",
        "round-1/findings.json",
        "round-1/state.json",
        "round-1/patch.diff",
        "round-2/responses.json",
        "round-2/state.json",
        ".stdout",
        ".stderr",
        ".prompt.md",
    ] {
        let texts = stored(suffix);
        assert!(!texts.is_empty(), "no stored `*{suffix}`");
        assert!(
            texts.iter().any(|t| t.contains(referee::redact::MASK)),
            "`*{suffix}` holds no mask"
        );
    }
    // Redaction kept the stored JSON documents readable.
    for suffix in [
        "findings.raw",
        "findings.json",
        "state.json",
        "responses.json",
    ] {
        for text in stored(suffix) {
            serde_json::from_str::<Value>(&text).unwrap_or_else(|e| panic!("{suffix}: {e}"));
        }
    }
}

#[test]

fn the_saved_task_is_redacted_too() {
    let f = run_with_secrets();
    let leaks: Vec<_> = leaks(&f)
        .into_iter()
        .filter(|(path, _)| path == SAVED_TASK)
        .collect();
    assert!(leaks.is_empty(), "secrets stored in: {leaks:?}");
}

#[test]

fn a_killed_run_leaves_no_unredacted_scratch_files() {
    let f = Driven::new();
    // The writer says where it is, then hangs until it is killed.
    f.file(
        "writer-1.sh",
        "echo $$ > \"$FAKE_DIR/agent.pid\"\nsleep 60\n",
    );
    let child = f
        .repo
        .referee_std()
        .args(["run", "--task", &format!("fix it with {}", all_secrets())])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid_file = f.script.path().join("agent.pid");
    let start = Instant::now();
    let agent = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse::<i32>().ok())
        {
            break pid;
        }
        assert!(
            start.elapsed() < HANG_GUARD,
            "hang guard: the writer never started"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL);
    let _ = finish(child, "killed run");
    // The agent has its own process group: end it too.
    let _ = nix::sys::signal::killpg(Pid::from_raw(agent), Signal::SIGKILL);

    // The next run finishes the loop; nothing of the killed one may keep a secret.
    f.file("writer-1.sh", "echo 'fn a() { 6 }' > src/a.rs\n")
        .file("reviewer-1.print", r#"{"findings":[]}"#);
    let out = referee(&f.repo, &["run"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let leaks: Vec<_> = leaks(&f)
        .into_iter()
        .filter(|(path, _)| path != SAVED_TASK)
        .collect();
    assert!(leaks.is_empty(), "secrets stored in: {leaks:?}");
}

/// A title that clears the screen and retitles the window, a body with a C1
/// CSI and DEL, and a path that turns the terminal red.
const HOSTILE_TITLE: &str = "\u{1b}[2J\u{1b}]0;pwned\u{7} title";

/// The control characters in `text` other than `\n` and `\t`, and other than
/// referee's own colors when `colors` is on.
fn raw_controls(text: &str, colors: bool) -> Vec<String> {
    let own = ["\u{1b}[1;31m", "\u{1b}[1;32m", "\u{1b}[1;33m", "\u{1b}[0m"];
    let mut found = Vec::new();
    let mut rest = text;
    while let Some((i, c)) = rest
        .char_indices()
        .find(|&(_, c)| c.is_control() && c != '\n' && c != '\t')
    {
        let tail = &rest[i..];
        match own.iter().find(|o| colors && tail.starts_with(**o)) {
            Some(o) => rest = &tail[o.len()..],
            None => {
                found.push(format!("{:?} at {:?}", c, &tail[..tail.len().min(12)]));
                rest = &tail[c.len_utf8()..];
            }
        }
    }
    found
}

#[test]
fn control_characters_in_findings_never_reach_the_terminal_raw() {
    let repo = Repo::new();
    let out = referee(&repo, &["init", "--loop", "l", "--max-rounds", "1"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    repo.write("src/a.rs", "fn a() {}\n");
    let dir = tempfile::tempdir().unwrap();
    let review = dir.path().join("review.json");
    let doc = serde_json::json!({"findings": [{
        "id": "T1", "severity": "bug", "title": HOSTILE_TITLE,
        "body": "a C1 CSI \u{9b}31m and DEL \u{7f} and CR \r over it",
        "file": "src/\u{1b}[31mred.rs", "line": 1,
    }]});
    std::fs::write(&review, doc.to_string()).unwrap();
    let review = review.to_str().unwrap();

    let record = referee(&repo, &["record", "--findings", review]);
    assert_eq!(record.code, 20, "{}", record.stderr);
    let mut shown = vec![("record", record)];
    for args in [
        &["status"][..],
        &["findings"],
        &["escalate"],
        &["escalate", "--format", "markdown"],
        &["ledger", "show"],
        &["report"],
    ] {
        shown.push((args[0], referee(&repo, args)));
    }
    for colors in ["always", "never"] {
        for cmd in ["status", "escalate", "findings"] {
            shown.push((cmd, referee(&repo, &["--color", colors, cmd])));
        }
    }
    for (cmd, out) in &shown {
        assert!(out.code == 0 || *cmd == "record", "{cmd}: {}", out.stderr);
        for (stream, text) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            let raw = raw_controls(text, true);
            assert!(raw.is_empty(), "{cmd} {stream}: raw {raw:?} in\n{text}");
        }
    }
    // The title was printed, visibly, where people read findings.
    for (cmd, out) in &shown[..4] {
        assert!(
            out.stdout.contains("^[[2J^[]0;pwned^G title"),
            "{cmd}: {}",
            out.stdout
        );
    }
    // Referee's own colors still work.
    let colored = referee(&repo, &["--color", "always", "escalate"]);
    assert!(
        colored.stdout.starts_with("\u{1b}[1;31m"),
        "{}",
        colored.stdout
    );
    assert!(raw_controls(&colored.stdout, false).len() >= 2);

    // JSON is exact: the title comes back as it was stored.
    for args in [
        &["findings", "--json"][..],
        &["escalate", "--json"],
        &["status", "--json"],
    ] {
        let out = referee(&repo, args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        assert!(
            out.stdout.contains(r"\u001b[2J\u001b]0;pwned\u0007 title"),
            "{args:?}: {}",
            out.stdout
        );
        serde_json::from_str::<Value>(&out.stdout).unwrap();
    }
}
