//! Approval bound to the exact bytes, and retries that never duplicate a
//! round (SPEC §5.2).

use std::io::Write;

use serde_json::Value;

use crate::common::{Repo, text};

fn started(findings: &str) -> Repo {
    let repo = Repo::with_loop("l", &[]);
    repo.write("src/a.rs", "fn a() {}\n");
    let out = repo.record(findings).run();
    assert!(matches!(out.code, 0 | 10), "{}", out.stderr);
    repo
}

#[test]
fn approve_then_check_binds_to_the_bytes() {
    let repo = started(r#"{"findings": []}"#);
    let out = repo
        .referee()
        .args(["approve", "--by", "ann", "--reason", "reviewed the diff"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("approved loop `l` by ann: round 1 (tree "));

    let ok = repo.referee().args(["approval", "check"]).output().unwrap();
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok.stderr));
    assert!(text(&ok.stdout).starts_with("approved: the working tree is the tree "));

    // One byte changed: exit 20, naming the file.
    repo.write("src/a.rs", "fn a() {}\n ");
    let bad = repo.referee().args(["approval", "check"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(20));
    assert!(
        text(&bad.stdout).contains("in 1 path:\n  src/a.rs\n"),
        "{}",
        text(&bad.stdout)
    );
    let json = repo
        .referee()
        .args(["approval", "check", "--json"])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(json["differ"], serde_json::json!(["src/a.rs"]));

    // Commit the approved bytes (and the state folder): `--rev HEAD` passes.
    repo.write("src/a.rs", "fn a() {}\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "approved work"]);
    repo.referee()
        .args(["approval", "check", "--rev", "HEAD"])
        .assert()
        .code(0);
    repo.referee()
        .args(["approval", "check", "--rev", "HEAD~1"])
        .assert()
        .code(20)
        .stdout(predicates::str::contains("src/a.rs"));

    // The decision shows in the ledger, status and the hand-off.
    let rows = repo.ledger_json();
    assert_eq!(rows[1]["kind"], "approve");
    assert_eq!(rows[1]["by"], "ann");
    assert_eq!(rows[1]["reason"], "reviewed the diff");
    let show = repo.referee().args(["ledger", "show"]).output().unwrap();
    assert!(text(&show.stdout).contains("approve by ann"));
    let status = repo.referee().args(["status"]).output().unwrap();
    assert!(
        text(&status.stdout).contains("done and approved by ann"),
        "{}",
        text(&status.stdout)
    );
    let handoff = repo.referee().args(["escalate"]).output().unwrap();
    assert!(text(&handoff.stdout).contains("approved by ann after round 1"));
}

#[test]
fn approval_of_a_changed_tree_is_refused_with_the_paths() {
    let repo = started(r#"{"findings": []}"#);
    repo.write("src/b.rs", "new\n");
    let out = repo
        .referee()
        .args(["approve", "--by", "ann"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("the working tree is not the tree of round 1 (1 path changed: `src/b.rs`)"),
        "{err}"
    );
    assert!(err.contains("record another round first"));
    assert_eq!(repo.ledger_json().len(), 1);
}

#[test]
fn nothing_approved_is_an_error() {
    let repo = started(r#"{"findings": []}"#);
    let out = repo.referee().args(["approval", "check"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("loop `l` has no approval"));
}

#[test]
fn a_rejected_loop_records_nothing_until_amended() {
    let repo = started(r#"{"findings": [{"id": "F1", "severity": "bug", "title": "x"}]}"#);
    repo.referee()
        .args(["reject", "--by", "bob", "--reason", "wrong approach"])
        .assert()
        .success();
    repo.write("src/a.rs", "fn a() { fixed }\n");
    let record = |repo: &Repo| {
        repo.referee()
            .args(["record", "--findings", "-"])
            .write_stdin(r#"{"findings": []}"#)
            .output()
            .unwrap()
    };
    let out = record(&repo);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("loop `l` was rejected by bob after round 1"),
        "{}",
        text(&out.stderr)
    );
    let check = repo.referee().args(["approval", "check"]).output().unwrap();
    assert_eq!(check.status.code(), Some(1));
    assert!(text(&check.stderr).contains("the latest decision is a rejection by bob"));
    repo.referee()
        .args([
            "contract",
            "amend",
            "--max-rounds",
            "4",
            "--by",
            "bob",
            "--reason",
            "try again",
        ])
        .assert()
        .success();
    assert_eq!(record(&repo).status.code(), Some(0));
}

#[test]
fn a_decision_row_is_covered_by_verify() {
    let repo = started(r#"{"findings": []}"#);
    repo.referee()
        .args(["approve", "--by", "ann"])
        .assert()
        .success();
    repo.referee().args(["ledger", "verify"]).assert().success();
    let path = ".referee/ledgers/l.csv";
    let rows = repo.ledger_json();
    let tree = rows[1]["subject"].as_str().unwrap().to_string();
    let forged = format!(
        "{}{}",
        &tree[..39],
        if tree.ends_with('0') { "1" } else { "0" }
    );
    let body = repo.read(path).replace(&tree, &forged);
    repo.write(path, &body);
    let out = repo.referee().args(["ledger", "verify"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("row 2: hash mismatch"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn eight_racing_records_with_one_key_append_one_row() {
    let repo = Repo::new();
    repo.referee()
        .args(["init", "--loop", "l"])
        .assert()
        .success();
    repo.write("src/a.rs", "x\n");
    let mut children = Vec::new();
    for i in 0..8 {
        let mut cmd = repo.referee_std();
        cmd.args([
            "record",
            "--findings",
            "-",
            "--idempotency-key",
            "retry-1",
            "--json",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        // One call retried: the key makes them one round. Half of them
        // send another review under the key, which is refused.
        let n = i % 2;
        let body =
            format!(r#"{{"findings": [{{"id": "F{n}", "severity": "bug", "title": "t{n}"}}]}}"#);
        child
            .stdin
            .take()
            .unwrap()
            .write_all(body.as_bytes())
            .unwrap();
        children.push(child);
    }
    let (mut fresh, mut refused) = (0, 0);
    for child in children {
        let out = child.wait_with_output().unwrap();
        if out.status.code() == Some(1) {
            let err = text(&out.stderr);
            assert!(
                err.contains("idempotency key `retry-1` was used by round 1 for another call: the review differs"),
                "{err}"
            );
            refused += 1;
            continue;
        }
        assert_eq!(out.status.code(), Some(10), "{}", text(&out.stderr));
        let json: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json["round"], 1);
        if json["already_recorded"] == false {
            fresh += 1;
        }
    }
    assert_eq!((fresh, refused), (1, 4));
    assert_eq!(repo.ledger_json().len(), 1);
}

#[test]
fn a_fresh_clone_without_snapshot_refs_checks_by_tree_id() {
    let repo = started(r#"{"findings": []}"#);
    repo.referee()
        .args(["approve", "--by", "ann"])
        .assert()
        .success();
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "approved work with its ledger"]);
    let ci = tempfile::tempdir().unwrap();
    let clone = ci.path().join("clone");
    // A real transport, as CI fetches: only objects reachable from branches.
    let url = format!("file://{}", repo.path().display());
    repo.git(&["clone", "-q", &url, clone.to_str().unwrap()]);
    let in_clone = |args: &[&str]| {
        let mut cmd = repo.referee();
        cmd.current_dir(&clone).args(args);
        cmd.output().unwrap()
    };
    // Changed bytes, and the approved tree was never in this clone.
    std::fs::write(clone.join("src/a.rs"), "tampered\n").unwrap();
    let out = in_clone(&["approval", "check"]);
    assert_eq!(out.status.code(), Some(20));
    assert!(
        text(&out.stdout).contains("the approved tree is not in this repository"),
        "{}",
        text(&out.stdout)
    );
    // The committed bytes are the approved ones, by tree id alone.
    let out = in_clone(&["approval", "check", "--rev", "HEAD"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    std::fs::write(clone.join("src/a.rs"), "fn a() {}\n").unwrap();
    let out = in_clone(&["approval", "check"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}
