//! `referee report` over the state folder, several state folders and ledger
//! files (the artifacts of a CI matrix), with totals by rule.

use serde_json::Value;

use crate::common::{Repo, text};

fn loop_ending(repo: &Repo, name: &str, flags: &[&str], reviews: &[&str]) {
    repo.referee()
        .args(["init", "--loop", name])
        .args(flags)
        .assert()
        .success();
    for (i, review) in reviews.iter().enumerate() {
        repo.write(&format!("{name}.txt"), &format!("{i}\n"));
        repo.call(&[
            "record",
            "--loop",
            name,
            "--findings",
            "-",
            "--cost-usd",
            "0.5",
        ])
        .stdin(review)
        .run();
    }
}

const BUG: &str = r#"{"findings":[{"id":"F1","severity":"bug","title":"x"}]}"#;
const CLEAN: &str = r#"{"findings":[]}"#;

#[test]
fn report_sums_loops_across_folders_and_ledger_files() {
    let a = Repo::new();
    loop_ending(&a, "quick", &[], &[CLEAN]);
    loop_ending(&a, "capped", &["--max-rounds", "2"], &[BUG, BUG]);
    let b = Repo::new();
    loop_ending(&b, "other", &[], &[BUG, CLEAN]);
    b.referee()
        .args(["approve", "--loop", "other", "--by", "ann"])
        .assert()
        .success();

    let here = a.referee().args(["report"]).output().unwrap();
    let here = text(&here.stdout);
    assert!(here.contains("capped       2  round-cap"), "{here}");
    assert!(here.contains("quick        1  clean"), "{here}");

    let ledger = b.join(".referee/ledgers/other.csv");
    let out = a
        .referee()
        .args(["report", "--json"])
        .arg(a.join(".referee"))
        .arg(&ledger)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let loops = json["loops"].as_array().unwrap();
    assert_eq!(loops.len(), 3);
    let other = loops.iter().find(|l| l["loop"] == "other").unwrap();
    assert_eq!(other["decision"], "approved by ann");
    assert_eq!(other["chain"], "ok (no contract to pin)");
    assert_eq!(json["totals"]["clean"]["loops"], 2);
    assert_eq!(json["totals"]["clean"]["rounds"], 3);
    assert_eq!(json["totals"]["round-cap"]["spent_usd"], 1.0);

    let md = a
        .referee()
        .args(["report", "--format", "markdown"])
        .output()
        .unwrap();
    assert!(
        text(&md.stdout).contains("| capped | 2 | round-cap | 1 | $1.00 |  | ok |"),
        "{}",
        text(&md.stdout)
    );

    // A broken chain shows in the report, not as an error.
    let path = a.join(".referee/ledgers/quick.csv");
    let body = std::fs::read_to_string(&path)
        .unwrap()
        .replacen(",clean,", ",cleaned,", 1);
    std::fs::write(&path, body).unwrap();
    let out = a.referee().args(["report", "--json"]).output().unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let quick = json["loops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["loop"] == "quick")
        .unwrap()
        .clone();
    assert!(
        quick["chain"]
            .as_str()
            .unwrap()
            .contains("row 1: hash mismatch"),
        "{quick}"
    );

    let missing = a
        .referee()
        .args(["report", "/no/such/place"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(text(&missing.stderr).contains("`/no/such/place`: no such file or folder"));
}
