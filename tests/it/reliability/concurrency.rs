//! 2. Concurrency: parallel appenders on two loops, readers all along.

use std::sync::atomic::{AtomicBool, Ordering};

use super::*;

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
                            let rows = crate::common::ledger_rows(out.stdout.as_bytes());
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
        let finished: Vec<_> = children
            .into_iter()
            .map(|(i, child)| (i, finish(child, "parallel record")))
            .collect();
        // Before any assertion: a failed record must not leave the readers
        // looping (the scope would wait on them for ever).
        done.store(true, Ordering::SeqCst);
        for (i, (status, stderr)) in finished {
            assert_eq!(status.code(), Some(10), "record {i}: {stderr}");
        }
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
        let rows = crate::common::ledger_rows(out.stdout.as_bytes());
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
