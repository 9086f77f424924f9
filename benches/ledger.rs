//! Append cost against ledger size: a 100,000-row ledger takes an append in
//! about the time a 10-row one does, because an append reads only the
//! file's tail (the last row's hash), never the whole ledger.
//! Run with `cargo bench --bench ledger`; figures go in docs/performance.md.

use std::time::{Duration, Instant};

use referee::ledger::{Counts, Draft, Kind, Store, Verdict};

fn draft(round: u32) -> Draft {
    let mut d = Draft::new(Kind::Round, round, "2026-01-02T03:04:05Z");
    d.counts = Some(Counts {
        opened: 1,
        closed: 1,
        reopened: 0,
        must_fix_left: 2,
        below_floor_open: 0,
        diff_added: 12,
        diff_removed: 3,
    });
    d.verdict = Some(Verdict::Continue);
    d.reason = format!("round {round}: 2 must-fix findings still open");
    d
}

/// A store with `rows` rows, written in one go (appending them one by one
/// would fsync 100,000 times).
fn store(dir: &std::path::Path, rows: u32) -> Store {
    let ledger = dir.join(format!("l{rows}.csv"));
    let store = Store::new(
        ledger.clone(),
        dir.join(format!("l{rows}")),
        &"c".repeat(64),
    );
    let mut prev = "c".repeat(64);
    let mut bytes = referee::ledger::row::header().into_bytes();
    bytes.push(b'\n');
    for n in 1..=rows {
        let row = referee::ledger::Row::seal(draft(n), &prev, "");
        prev = row.row_sha256.clone();
        bytes.extend(referee::ledger::chain::write_record(&row.fields()));
    }
    std::fs::write(&ledger, bytes).expect("write the ledger");
    store
}

fn median_append(store: &Store, from: u32, times: u32) -> Duration {
    let mut runs: Vec<Duration> = (0..times)
        .map(|i| {
            let start = Instant::now();
            let mut locked = store.lock().expect("lock");
            locked.append(draft(from + i + 1), None).expect("append");
            start.elapsed()
        })
        .collect();
    runs.sort();
    runs[runs.len() / 2]
}

fn main() {
    let dir = std::env::temp_dir().join(format!("referee-bench-ledger-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let small = store(&dir, 10);
    let big = store(&dir, 100_000);
    let a = median_append(&small, 10, 50);
    let b = median_append(&big, 100_000, 50);
    println!(
        "append at 10 rows:      {:>8.3} ms (median of 50, each with fsync)",
        a.as_secs_f64() * 1e3
    );
    println!(
        "append at 100,000 rows: {:>8.3} ms (median of 50, each with fsync)",
        b.as_secs_f64() * 1e3
    );
    println!(
        "ratio: {:.2}x (target <= 1.5x)",
        b.as_secs_f64() / a.as_secs_f64()
    );
    let verify = Instant::now();
    let summary = big.verify().expect("the generated chain verifies");
    println!(
        "verify 100,050 rows (library): {:.0} ms, {} rows",
        verify.elapsed().as_secs_f64() * 1e3,
        summary.rows
    );
    let _ = std::fs::remove_dir_all(&dir);
}
