//! SPEC §8: a hostile writer with a shell cannot overrule the referee. Each
//! test plays one move a writer agent can make and checks that the verdict
//! holds: authority (who may record, waive, reject), the anchor (a ledger
//! cut, re-hashed or deleted is seen), the run lock, exact retries.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::{Driven, text};

const REFEREE: &str = env!("CARGO_BIN_EXE_referee");

const BUG: &str = r#"{"findings":[{"id":"F1","severity":"bug","title":"expired tokens pass","file":"src/a.rs","line":1}]}"#;
const CLEAN: &str = r#"{"findings":[]}"#;

/// A writer step that runs `referee ARGS` as the writer would, keeping what
/// it printed and its exit status in `FAKE_DIR/<log>`.
fn writer_runs(log: &str, args: &str) -> String {
    // The fake agent runs its steps under `set -e`.
    format!(
        "if \"{REFEREE}\" {args} > \"$FAKE_DIR/{log}\" 2>&1; then rc=0; else rc=$?; fi; echo \"rc=$rc\" >> \"$FAKE_DIR/{log}\"\n"
    )
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Case 1 and 2 under `run`: the writer's `referee record`, `waive` and
/// `reject`, also from a process it orphaned with `setsid`, are refused;
/// the loop goes on as the reviewer says.
#[test]
fn a_writer_under_run_cannot_record_waive_or_reject() {
    let f = Driven::new();
    std::fs::write(f.script.path().join("clean.json"), CLEAN).unwrap();
    let clean = f.script.path().join("clean.json");
    let mut writer2 = String::from("echo 'fn a() { 1 }' > src/a.rs\n");
    writer2.push_str(&writer_runs(
        "record.log",
        &format!("record --findings \"{}\"", clean.display()),
    ));
    writer2.push_str(&writer_runs(
        "waive.log",
        "waive F1 --by lead --reason trust-me",
    ));
    writer2.push_str(&writer_runs("reject.log", "reject --by lead --reason no"));
    // An orphan: `setsid -f` leaves the writer's process group and session.
    writer2.push_str(&format!(
        "setsid -f sh -c '\"{REFEREE}\" waive F1 --by lead --reason orphan > \"$FAKE_DIR/orphan.log\" 2>&1; echo \"rc=$?\" >> \"$FAKE_DIR/orphan.log\"'\n\
         i=0; while [ ! -s \"$FAKE_DIR/orphan.log\" ] || ! grep -q rc= \"$FAKE_DIR/orphan.log\"; do i=$((i+1)); [ $i -gt 200 ] && break; sleep 0.05; done\n"
    ));
    f.file("writer-1.sh", "echo 'fn a() { 0 }' > src/a.rs\n")
        .file("reviewer-1.print", BUG)
        .file("writer-2.sh", writer2)
        .file("reviewer-2.print", BUG)
        .file("writer-3.sh", "echo 'fn a() { 2 }' > src/a.rs\n")
        .file("reviewer-3.print", CLEAN);
    let out = f.repo.run(&["run", "--task", "fix it", "--quiet"]);
    for log in ["record.log", "waive.log", "reject.log", "orphan.log"] {
        let said = read(f.script.path(), log);
        assert!(
            said.contains("was run from inside the agents of `referee run`"),
            "{log}: {said}"
        );
        assert!(
            said.contains("hint: a person runs it from their own shell"),
            "{log}: {said}"
        );
        assert!(said.trim_end().ends_with("rc=1"), "{log}: {said}");
    }
    // Three rounds, all the referee's: the writer's clean review, its
    // waiver and its rejection never landed.
    let rows = f.repo.ledger_json();
    let kinds: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| {
            (
                r["verdict"].as_str().unwrap_or("?"),
                r["rule"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [("continue", ""), ("continue", ""), ("stop", "clean")],
        "{}",
        out.stderr
    );
}

/// Case 1 and 2 under the Stop hook: once the hook has refereed a stop of
/// an agent, that agent's `referee record` and `referee waive` are refused.
/// Here the test process plays the agent: it runs the hook, then the
/// commands, as Claude Code runs its hook and its Bash tool.
#[test]
fn an_agent_the_hook_referees_cannot_record_or_waive() {
    let f = Driven::new();
    f.file("reviewer-1.print", BUG);
    f.repo.write("src/a.rs", "fn a() { 0 }\n");
    let payload = json!({"session_id": "s1", "transcript_path": null, "cwd": f.repo.path(),
                         "hook_event_name": "Stop", "stop_hook_active": false});
    let out = f
        .repo
        .referee()
        .args(["hook", "stop", "--agent", "claude"])
        .write_stdin(payload.to_string())
        .output()
        .unwrap();
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        answer["decision"],
        "block",
        "{answer} {}",
        text(&out.stderr)
    );

    let record = f.repo.record(CLEAN).run();
    assert_eq!(record.code, 1, "{}", record.stderr);
    assert!(
        record.stderr.contains(
            "`referee record` was run from inside the claude session refereed by the Stop hook"
        ),
        "{}",
        record.stderr
    );
    let waive = f
        .repo
        .run(&["waive", "F1", "--by", "lead", "--reason", "x"]);
    assert_eq!(waive.code, 1, "{}", waive.stderr);
    assert!(
        waive.stderr.contains("only a person waives"),
        "{}",
        waive.stderr
    );
    assert_eq!(f.rows(), 1);
    // Reading is anyone's.
    let status = f.repo.run(&["status"]);
    assert_eq!(status.code, 0, "{}", status.stderr);
}
