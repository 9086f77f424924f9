//! The sample ledgers in `ledgers/` are what `scripts/sample-ledgers.sh`
//! makes with this build, byte for byte: real `referee run` loops, one per
//! rule outcome. A change that alters a ledger shows here first; regenerate
//! with `REFEREE=target/debug/referee scripts/sample-ledgers.sh`.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use crate::common::text;

const OUTCOMES: [(&str, &str); 11] = [
    ("budget", "budget"),
    ("clean", "clean"),
    ("diff-growth", "diff-growth"),
    ("disputed", "disputed"),
    ("flip-flop", "flip-flop"),
    ("judge", "judge:over_polishing"),
    ("nit-round", "nit-round"),
    ("reopened", "reopened"),
    ("round-cap", "round-cap"),
    ("scope", "scope"),
    ("stalled", "stalled"),
];

#[test]
fn sample_ledgers_are_reproduced_byte_for_byte() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = tempfile::tempdir().unwrap();
    let run = Command::new("bash")
        .arg(root.join("scripts/sample-ledgers.sh"))
        .arg(out.path())
        .env("REFEREE", assert_cmd::cargo::cargo_bin("referee"))
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", text(&run.stderr));
    for (name, _) in OUTCOMES {
        for ext in ["csv", "md"] {
            let file = format!("{name}.{ext}");
            let made = std::fs::read_to_string(out.path().join(&file)).unwrap();
            let kept = std::fs::read_to_string(root.join("ledgers").join(&file)).unwrap();
            assert_eq!(
                made, kept,
                "ledgers/{file} differs from what this build makes"
            );
        }
    }
}

#[test]
fn each_sample_stops_on_its_rule_and_its_chain_holds() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut cmd = assert_cmd::Command::cargo_bin("referee").unwrap();
    cmd.current_dir(&root).args(["report", "--json"]);
    for (name, _) in OUTCOMES {
        cmd.arg(root.join(format!("ledgers/{name}.csv")));
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    for (name, rule) in OUTCOMES {
        let l = json["loops"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["loop"] == name)
            .unwrap();
        assert_eq!(l["rule"], rule, "{name}");
        assert_eq!(l["chain"], "ok (no contract to pin)", "{name}");
    }
}
