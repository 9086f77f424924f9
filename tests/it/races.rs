//! Races between commands on one loop (issue: hostile agents and bad luck):
//! `init --force` against the first `record`, and round refs that moved or
//! went missing, which `ledger verify` must name.

use std::io::Write;
use std::process::Stdio;

use crate::common::{Repo, text};

const ONE: &str = r#"{"findings":[{"id":"F1","severity":"bug","title":"expired tokens pass","file":"src/a.rs","line":1}]}"#;

fn run(repo: &Repo, args: &[&str], stdin: &str) -> (i32, String, String) {
    let out = repo.call(args).stdin(stdin).run();
    (out.code, out.stdout, out.stderr)
}

/// Before: the contract the first row was chained to could be replaced
/// between `record` loading it and appending, and the loop could never
/// record again. Now either order is whole: a record that lost the race
/// says so and records nothing, and the loop always records afterwards.
#[test]
fn init_force_racing_the_first_record_never_bricks_the_loop() {
    let repo = Repo::new();
    repo.write("src/a.rs", "fn a() {}\n");
    // CI-sized; `scripts/torture.sh` runs hundreds.
    let trials: usize = std::env::var("REFEREE_RACE_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12);
    let mut lost = 0;
    for trial in 0..trials {
        let lp = format!("r{trial}");
        let (code, _, err) = run(&repo, &["init", "--loop", &lp, "--max-rounds", "4"], "");
        assert_eq!(code, 0, "{err}");
        let mut record = repo.referee_std();
        record
            .args(["record", "--loop", &lp, "--findings", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut record = record.spawn().unwrap();
        let mut init = repo.referee_std();
        init.args(["init", "--loop", &lp, "--max-rounds", "5", "--force"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let init = init.spawn().unwrap();
        record
            .stdin
            .take()
            .unwrap()
            .write_all(ONE.as_bytes())
            .unwrap();
        let record = record.wait_with_output().unwrap();
        let init = init.wait_with_output().unwrap();
        let record_err = text(&record.stderr);
        match record.status.code() {
            Some(10) => {}
            Some(1) => {
                assert!(
                    record_err.contains("changed while this command waited for the ledger lock"),
                    "{record_err}"
                );
                lost += 1;
            }
            other => panic!("record: {other:?}: {record_err}"),
        }
        // `init --force` loses only to a started loop, and says so.
        if init.status.code() != Some(0) {
            assert!(
                text(&init.stderr).contains("has started"),
                "{}",
                text(&init.stderr)
            );
        }
        let (code, out, err) = run(&repo, &["ledger", "verify", "--loop", &lp], "");
        assert_eq!(code, 0, "trial {trial}: {out}{err}");
        repo.write("src/a.rs", &format!("fn a() {{ {trial} }}\n"));
        let (code, _, err) = run(&repo, &["record", "--loop", &lp, "--findings", "-"], ONE);
        assert_eq!(code, 10, "trial {trial}: the loop records again: {err}");
    }
    println!(
        "races: init --force vs the first record, {trials} trials, {lost} records lost the race cleanly, 0 loops bricked"
    );
}

#[test]
fn verify_names_a_round_ref_that_moved_or_went_missing() {
    let repo = Repo::new();
    assert_eq!(run(&repo, &["init", "--loop", "l"], "").0, 0);
    for (i, body) in ["one\n", "two\n"].iter().enumerate() {
        repo.write("src/a.rs", body);
        let (code, _, err) = run(&repo, &["record", "--findings", "-"], ONE);
        assert_eq!(code, 10, "round {}: {err}", i + 1);
    }
    assert_eq!(run(&repo, &["ledger", "verify"], "").0, 0);
    let second = repo.git(&["rev-parse", "refs/referee/l/round-2"]);
    let first = repo.git(&["rev-parse", "refs/referee/l/round-1"]);
    repo.git(&["update-ref", "refs/referee/l/round-1", second.trim()]);
    let (code, _, err) = run(&repo, &["ledger", "verify"], "");
    assert_eq!(code, 1);
    assert!(
        err.contains("row 1: `refs/referee/l/round-1` points at"),
        "{err}"
    );
    repo.git(&["update-ref", "-d", "refs/referee/l/round-1"]);
    let (code, _, err) = run(&repo, &["ledger", "verify"], "");
    assert_eq!(code, 1);
    assert!(
        err.contains("row 1: `refs/referee/l/round-1` is missing"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "git update-ref refs/referee/l/round-1 {}",
            first.trim()
        )),
        "{err}"
    );
    repo.git(&["update-ref", "refs/referee/l/round-1", first.trim()]);
    assert_eq!(run(&repo, &["ledger", "verify"], "").0, 0);
}

/// A ledger whose last byte (the final row's newline) was cut still holds a
/// whole, hash-valid committed row: `repair` gives it its newline back
/// instead of deleting it.
#[test]
fn repair_keeps_a_hash_valid_final_row_that_lost_its_newline() {
    let repo = Repo::new();
    assert_eq!(run(&repo, &["init", "--loop", "l"], "").0, 0);
    for body in ["one\n", "two\n"] {
        repo.write("src/a.rs", body);
        assert_eq!(run(&repo, &["record", "--findings", "-"], ONE).0, 10);
    }
    let path = repo.join(".referee/ledgers/l.csv");
    let whole = std::fs::read(&path).unwrap();
    std::fs::write(&path, &whole[..whole.len() - 1]).unwrap();
    let (code, _, err) = run(&repo, &["ledger", "verify"], "");
    assert_eq!(code, 1, "{err}");
    let (code, out, err) = run(&repo, &["ledger", "repair"], "");
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), whole, "{out}");
    assert_eq!(run(&repo, &["ledger", "verify"], "").0, 0);
    // A final line that really is torn is still removed.
    std::fs::write(&path, [&whole[..], b"3,0,0"].concat()).unwrap();
    assert_eq!(run(&repo, &["ledger", "repair"], "").0, 0);
    assert_eq!(std::fs::read(&path).unwrap(), whole);
}
