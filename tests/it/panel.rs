//! Reviewer panels (SPEC §6.1) end to end: `run` with two scripted
//! reviewers (tests/fixtures/agents/fake-agent.sh, each with a script folder
//! of its own), and `record --findings NAME=FILE`.

use std::path::PathBuf;

use serde_json::Value;

use crate::common::{Repo, text};

const CLEAN: &str = r#"{"findings":[]}"#;

fn fake_agent() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agents/fake-agent.sh")
        .display()
        .to_string()
}

fn finding(id: &str, severity: &str, title: &str, line: u32) -> String {
    format!(
        r#"{{"id":"{id}","severity":"{severity}","title":"{title}","file":"src/auth.rs","line":{line}}}"#
    )
}

fn review(findings: &[String]) -> String {
    format!(r#"{{"findings":[{}]}}"#, findings.join(","))
}

/// A repository whose loop has a scripted writer and a panel of two
/// scripted reviewers, `a` and `b`, each playing from its own folder.
struct Panel {
    repo: Repo,
    script: tempfile::TempDir,
}

impl Panel {
    /// `extra` is TOML for the top of the contract; `panel` the `[panel]`
    /// table's lines.
    fn new(extra: &str, panel: &str) -> Panel {
        Panel::with(extra, panel, ["", ""])
    }

    /// [`Panel::new`] with more lines for `a`'s and `b`'s entries.
    fn with(extra: &str, panel: &str, members: [&str; 2]) -> Panel {
        let repo = Repo::new();
        repo.write(
            "src/auth.rs",
            "fn valid(now: u64, exp: u64) -> bool { now > exp }\n",
        );
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "-m", "auth"]);
        let script = tempfile::tempdir().unwrap();
        for who in ["writer", "a", "b"] {
            std::fs::create_dir(script.path().join(who)).unwrap();
        }
        let dir = script.path().display().to_string();
        let agent = fake_agent();
        let member = |name: &str, more: &str| {
            format!(
                "[[reviewers]]\nname = \"{name}\"\npreset = \"command\"\ncommand = [\"{agent}\"]\nenv = {{ FAKE_DIR = \"{dir}/{name}\" }}\n{more}\n"
            )
        };
        let contract = format!(
            "loop = \"l\"\n{extra}\n\
             [writer]\npreset = \"command\"\ncommand = [\"{agent}\"]\nenv = {{ FAKE_DIR = \"{dir}/writer\" }}\n\
             {}{}[panel]\n{panel}\n",
            member("a", members[0]),
            member("b", members[1]),
        );
        let path = script.path().join("contract.toml");
        std::fs::write(&path, contract).unwrap();
        let init = repo.run(&["init", "--from", path.to_str().unwrap()]);
        assert_eq!(init.code, 0, "{}", init.stderr);
        Panel { repo, script }
    }

    /// A script file for `who` (`writer`, `a`, `b`): `reviewer-1.print`.
    fn file(&self, who: &str, name: &str, body: &str) -> &Panel {
        std::fs::write(self.script.path().join(who).join(name), body).unwrap();
        self
    }

    /// Round `round`'s review by `who`.
    fn says(&self, who: &str, round: u32, review: &str) -> &Panel {
        self.file(who, &format!("reviewer-{round}.print"), review)
    }

    /// Round `round`'s writer rewrites the auth check to `body`.
    fn writes(&self, round: u32, body: &str) -> &Panel {
        self.file(
            "writer",
            &format!("writer-{round}.sh"),
            &format!("printf '%s\\n' '{body}' > src/auth.rs\n"),
        )
    }

    fn run(&self) -> (i32, String, String) {
        let out = self
            .repo
            .referee()
            .args(["run", "--task", "fix the expiry check"])
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            text(&out.stdout),
            text(&out.stderr),
        )
    }

    fn calls(&self, who: &str) -> String {
        std::fs::read_to_string(self.script.path().join(who).join("calls.log")).unwrap_or_default()
    }

    fn evidence(&self, round: u32, name: &str) -> String {
        self.repo
            .read(&format!(".referee/ledgers/l/round-{round}/{name}"))
    }

    fn findings(&self, round: u32) -> Vec<Value> {
        let doc: Value = serde_json::from_str(&self.evidence(round, "findings.json")).unwrap();
        doc["findings"].as_array().unwrap().clone()
    }
}

const FIXED: &str = "fn valid(now: u64, exp: u64) -> bool { now <= exp }";

#[test]
fn two_reviewers_finding_different_bugs_give_the_writer_their_union() {
    let p = Panel::new("max_rounds = 3", "");
    p.writes(1, "fn valid(now: u64, exp: u64) -> bool { now < exp }")
        .says(
            "a",
            1,
            &review(&[finding("A1", "bug", "off by one in expiry", 1)]),
        )
        .says(
            "b",
            1,
            &review(&[finding("B1", "bug", "signature never verified", 2)]),
        )
        .writes(2, FIXED)
        .says("a", 2, CLEAN)
        .says("b", 2, CLEAN);
    let (code, stdout, stderr) = p.run();
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("round 1 of 3 · loop `l` · continue"),
        "{stdout}"
    );
    assert!(stdout.contains("stop: clean"), "{stdout}");
    let round1 = p.findings(1);
    assert_eq!(round1.len(), 2, "{round1:?}");
    assert_eq!(round1[0]["reported_by"], serde_json::json!(["a"]));
    assert_eq!(round1[1]["reported_by"], serde_json::json!(["b"]));
    // The writer's round 2 is asked to fix both.
    let writer = p.calls("writer");
    let round2 = &writer[writer.find("call writer 2").unwrap()..];
    assert!(round2.contains("off by one in expiry"), "{round2}");
    assert!(round2.contains("signature never verified"), "{round2}");
    // Both reviewers saw the same patch, each from its own checkout.
    for who in ["a", "b"] {
        let calls = p.calls(who);
        assert!(calls.contains("call reviewer 1"), "{who}: {calls}");
        assert!(
            calls.contains("-fn valid(now: u64, exp: u64) -> bool { now > exp }"),
            "{calls}"
        );
    }
    let panel: Value = serde_json::from_str(&p.evidence(1, "panel.json")).unwrap();
    assert_eq!(panel["quorum"], 2);
    assert_eq!(panel["members"][0]["name"], "a");
    assert_eq!(panel["members"][1]["answered"], true);
    for name in [
        "findings.a.raw",
        "findings.b.raw",
        "reviewer.a.stdout",
        "reviewer.b.call.txt",
    ] {
        assert!(
            p.repo
                .join(&format!(".referee/ledgers/l/round-1/{name}"))
                .exists(),
            "{name}"
        );
    }
    let verify = p.repo.run(&["ledger", "verify"]);
    assert_eq!(verify.code, 0, "{}", verify.stderr);
}

#[test]
fn a_reviewer_that_fails_under_quorum_all_records_nothing_and_is_named() {
    let p = Panel::new("max_rounds = 3", "");
    p.writes(1, FIXED).says("a", 1, CLEAN).file(
        "b",
        "reviewer-1.sh",
        "echo 'model overloaded' >&2; exit 3\n",
    );
    let (code, stdout, stderr) = p.run();
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("the panel's quorum is 2 of 2 reviewers and 1 answered; `b` did not answer: reviewer `b` failed"),
        "{stderr}"
    );
    assert!(stderr.contains("nothing was recorded"), "{stderr}");
    assert!(p.repo.ledger_json().is_empty());
}

#[test]
fn under_quorum_one_a_failed_reviewer_is_shown_absent_and_the_round_counts() {
    let p = Panel::new("max_rounds = 3", "quorum = 1");
    p.writes(1, FIXED).says("a", 1, CLEAN).file(
        "b",
        "reviewer-1.sh",
        "echo 'model overloaded' >&2; exit 3\n",
    );
    let (code, stdout, stderr) = p.run();
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("stop: clean"), "{stdout}");
    let panel: Value = serde_json::from_str(&p.evidence(1, "panel.json")).unwrap();
    assert_eq!(panel["quorum"], 1);
    assert_eq!(panel["members"][1]["answered"], false);
    let why = panel["members"][1]["absent"].as_str().unwrap();
    assert!(why.contains("reviewer `b` failed"), "{why}");
    assert!(why.contains("failed/round-1-reviewer-b-"), "{why}");
    // Nothing found: each reviewer of the contract still has its row.
    let report: Value = serde_json::from_str(&p.repo.run(&["report", "--json"]).stdout).unwrap();
    let rows = &report["loops"][0]["reviewers"];
    assert_eq!(
        rows[0],
        serde_json::json!({"reviewer": "a", "found": 0, "alone": 0, "alone_fixed": 0})
    );
    assert_eq!(rows[1]["reviewer"], "b");
}

#[test]
fn a_blocker_from_one_reviewer_is_must_fix_under_any_and_below_the_floor_under_majority() {
    for (veto, code, rule) in [("any", 20, "round-cap"), ("majority", 0, "clean")] {
        let p = Panel::new("max_rounds = 1", &format!("veto = \"{veto}\""));
        p.writes(1, FIXED)
            .says(
                "a",
                1,
                &review(&[finding("A1", "blocker", "token never expires", 1)]),
            )
            .says("b", 1, CLEAN);
        let (got, stdout, stderr) = p.run();
        assert_eq!(got, code, "{veto}: {stdout}\n{stderr}");
        assert!(
            stdout.contains(&format!("stop: {rule}")),
            "{veto}: {stdout}"
        );
        let f = p.findings(1);
        let severity = if veto == "any" { "block" } else { "nit" };
        assert_eq!(f[0]["severity"], severity, "{veto}: {f:?}");
        assert_eq!(f[0]["reported_by"], serde_json::json!(["a"]));
    }
}

#[test]
fn one_finding_reworded_by_both_reviewers_is_one_finding_agreed_two_of_two() {
    let p = Panel::new("max_rounds = 1", "");
    p.writes(1, FIXED)
        .says(
            "a",
            1,
            &review(&[finding("A1", "bug", "Off-by-one in the expiry check", 1)]),
        )
        .says(
            "b",
            1,
            &review(&[finding("B7", "bug", "off by one in expiry check", 1)]),
        );
    let (code, stdout, stderr) = p.run();
    assert_eq!(code, 20, "{stdout}\n{stderr}");
    let f = p.findings(1);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0]["reported_by"], serde_json::json!(["a", "b"]));
    assert_eq!(f[0]["title"], "Off-by-one in the expiry check");
}

#[test]
fn a_finding_closed_and_raised_again_by_the_other_reviewer_is_reopened() {
    let p = Panel::new("max_rounds = 4", "");
    let bug = review(&[finding("A1", "bug", "off by one in expiry", 1)]);
    p.writes(1, "fn valid(now: u64, exp: u64) -> bool { now < exp }")
        .says("a", 1, &bug)
        .says("b", 1, CLEAN)
        .writes(2, FIXED)
        .says("a", 2, CLEAN)
        .says(
            "b",
            2,
            &review(&[finding("B1", "bug", "token is not checked", 1)]),
        )
        .writes(
            3,
            "fn valid(now: u64, exp: u64) -> bool { now <= exp && exp > 0 }",
        )
        .says("a", 3, CLEAN)
        .says(
            "b",
            3,
            &review(&[finding("B9", "bug", "off by one in expiry", 1)]),
        );
    let (code, stdout, stderr) = p.run();
    assert_eq!(code, 20, "{stdout}\n{stderr}");
    assert!(stdout.contains("stop: reopened"), "{stdout}");
    assert!(
        stdout.contains("closed in round 2 is reported again"),
        "{stdout}"
    );
}

#[test]
fn each_reviewers_spend_counts_against_the_budget() {
    let p = Panel::new("max_rounds = 3\n[budget]\nusd = 0.5", "");
    let spent =
        |cost: &str| format!(r#"{{"findings":[],"usage":{{"cost_usd":{cost},"tokens":100}}}}"#);
    let bug = review(&[finding("A1", "bug", "off by one in expiry", 1)]);
    let bug = bug.replace(r#"]}"#, r#"],"usage":{"cost_usd":0.3,"tokens":100}}"#);
    p.writes(1, FIXED)
        .file("a", "reviewer-1.out", &bug)
        .file("b", "reviewer-1.out", &spent("0.3"));
    let (code, stdout, stderr) = p.run();
    let rows = p.repo.ledger_json();
    assert_eq!(rows.len(), 1, "{stdout}\n{stderr}");
    assert_eq!(rows[0]["cost_usd"], 0.6, "{rows:?}");
    assert_eq!(rows[0]["tokens"], 200, "{rows:?}");
    assert!(
        stdout.contains("stop: budget"),
        "{code}: {stdout}\n{stderr}"
    );
    let panel: Value = serde_json::from_str(&p.evidence(1, "panel.json")).unwrap();
    assert_eq!(panel["members"][0]["cost_usd"], 0.3);
    assert_eq!(panel["members"][1]["tokens"], 100);
}

#[test]
fn record_takes_a_panel_round_by_name_and_weighs_who_did_not_answer() {
    let p = Panel::new("max_rounds = 3", "quorum = 2");
    let dir = p.script.path();
    let a = dir.join("a.json");
    let b = dir.join("b.json");
    std::fs::write(
        &a,
        review(&[finding("A1", "bug", "off by one in expiry", 1)]),
    )
    .unwrap();
    std::fs::write(&b, "I cannot review this change.").unwrap();
    let arg = |name: &str, path: &std::path::Path| format!("{name}={}", path.display());
    // One file for a panel, a name the contract does not have, a name twice.
    let one = p.repo.run(&["record", "--findings", a.to_str().unwrap()]);
    assert_eq!(one.code, 2, "{}", one.stderr);
    assert!(
        one.stderr
            .contains("NAME one of the contract's `[[reviewers]]`: a, b"),
        "{}",
        one.stderr
    );
    let unknown = p.repo.run(&["record", "--findings", &arg("c", &a)]);
    assert_eq!(unknown.code, 2, "{}", unknown.stderr);
    let empty = p
        .repo
        .run(&["record", "--findings", "a=", "--findings", &arg("b", &b)]);
    assert_eq!(empty.code, 2, "{}", empty.stderr);
    assert!(
        empty.stderr.contains("no FILE after `a=`"),
        "{}",
        empty.stderr
    );
    let twice = p.repo.run(&[
        "record",
        "--findings",
        &arg("a", &a),
        "--findings",
        &arg("a", &a),
    ]);
    assert!(
        twice.stderr.contains("`a` is given twice"),
        "{}",
        twice.stderr
    );
    // `b` printed a refusal: under quorum 2, nothing is recorded.
    let short = p.repo.run(&[
        "record",
        "--findings",
        &arg("a", &a),
        "--findings",
        &arg("b", &b),
    ]);
    assert_eq!(short.code, 1, "{}", short.stderr);
    assert!(
        short.stderr.contains("`b` did not answer: findings `"),
        "{}",
        short.stderr
    );
    assert!(
        short.stderr.contains("nothing was recorded"),
        "{}",
        short.stderr
    );
    assert!(p.repo.ledger_json().is_empty());
    std::fs::write(
        &b,
        review(&[finding("B1", "bug", "Off by one in expiry", 1)]),
    )
    .unwrap();
    let both = [
        "record",
        "--findings",
        &arg("a", &a),
        "--findings",
        &arg("b", &b),
        "--idempotency-key",
        "k",
    ];
    let first = p.repo.run(&both);
    assert_eq!(first.code, 10, "{}", first.stderr);
    let f = p.findings(1);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0]["reported_by"], serde_json::json!(["a", "b"]));
    // A retry of the same answers is the same round; other answers under
    // the key are refused.
    let again = p.repo.run(&both);
    assert_eq!(again.code, 10, "{}", again.stderr);
    assert_eq!(p.repo.ledger_json().len(), 1);
    std::fs::write(&b, CLEAN).unwrap();
    let other = p.repo.run(&both);
    assert_ne!(other.code, 10, "{}", other.stdout);
    assert!(
        other.stderr.contains("the review differs"),
        "{}",
        other.stderr
    );
}

#[test]
fn the_stop_hook_blocks_with_the_panels_findings_and_who_reported_each() {
    let p = Panel::new("max_rounds = 3", "");
    p.says(
        "a",
        1,
        &review(&[finding("A1", "bug", "off by one in expiry", 1)]),
    )
    .says(
        "b",
        1,
        &review(&[
            finding("B1", "bug", "Off-by-one in the expiry check", 1),
            finding("B2", "bug", "signature never verified", 2),
        ]),
    )
    .says("a", 2, CLEAN)
    .says("b", 2, CLEAN);
    p.repo.write(
        "src/auth.rs",
        "fn valid(now: u64, exp: u64) -> bool { now < exp }\n",
    );
    let payload = |active: bool| {
        serde_json::json!({"session_id": "s1", "transcript_path": null,
            "cwd": p.repo.path(), "hook_event_name": "Stop", "stop_hook_active": active,
            "last_assistant_message": "Done."})
        .to_string()
    };
    let stop = p.repo.call(&["hook", "stop"]).stdin(&payload(false)).run();
    assert_eq!(stop.code, 0, "{}", stop.stderr);
    let answer: Value = serde_json::from_str(stop.stdout.trim()).unwrap();
    let reason = answer["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(
            "referee: loop `l`, round 1 of 3: the panel of 2 reviewers found 2 must-fix findings."
        ),
        "{reason}"
    );
    assert!(
        reason.contains("off by one in expiry (reported by a, b)"),
        "{reason}"
    );
    assert!(
        reason.contains("signature never verified (reported by b)"),
        "{reason}"
    );
    // `status` and `findings` say who agreed.
    let status = p.repo.run(&["status"]);
    assert!(
        status.stdout.contains("(reported by 2/2 a, b)"),
        "{}",
        status.stdout
    );
    let findings = p.repo.run(&["findings"]);
    assert!(findings.stdout.contains("agreed"), "{}", findings.stdout);
    assert!(findings.stdout.contains("1/2 b"), "{}", findings.stdout);
    let json = p.repo.run(&["findings", "--json"]);
    let doc: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(
        doc["findings"][0]["reported_by"],
        serde_json::json!(["a", "b"])
    );
    // The fix: both reviewers clean, the stop is let go.
    p.repo.write("src/auth.rs", &format!("{FIXED}\n"));
    let stop = p.repo.call(&["hook", "stop"]).stdin(&payload(true)).run();
    let answer: Value = serde_json::from_str(stop.stdout.trim()).unwrap();
    let message = answer["systemMessage"].as_str().unwrap();
    assert!(
        message.contains("is done at round 2 of 3: `clean`"),
        "{message}"
    );
    for who in ["a", "b"] {
        assert!(p.calls(who).contains("call reviewer 2"), "{who}");
    }
}

#[test]
fn the_hand_off_says_who_reported_each_contested_finding() {
    let p = Panel::new("max_rounds = 1", "");
    p.writes(1, FIXED)
        .says(
            "a",
            1,
            &review(&[finding("A1", "bug", "token never expires", 1)]),
        )
        .says("b", 1, CLEAN);
    let (code, stdout, stderr) = p.run();
    assert_eq!(code, 20, "{stdout}\n{stderr}");
    assert!(stdout.contains("stop: round-cap"), "{stdout}");
    assert!(stdout.contains("reported by a]"), "{stdout}");
}

#[test]
fn report_shows_per_reviewer_what_it_alone_found_and_a_fix_closed() {
    let p = Panel::new("max_rounds = 3", "");
    p.writes(1, "fn valid(now: u64, exp: u64) -> bool { now < exp }")
        .says(
            "a",
            1,
            &review(&[
                finding("A1", "bug", "off by one in expiry", 1),
                finding("A2", "bug", "signature never verified", 2),
            ]),
        )
        .says(
            "b",
            1,
            &review(&[finding("B1", "bug", "Off-by-one in the expiry check", 1)]),
        )
        .writes(2, FIXED)
        .says("a", 2, CLEAN)
        .says("b", 2, CLEAN);
    let (code, stdout, stderr) = p.run();
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let report = p.repo.run(&["report", "--json"]);
    assert_eq!(report.code, 0, "{}", report.stderr);
    let doc: Value = serde_json::from_str(&report.stdout).unwrap();
    assert_eq!(
        doc["loops"][0]["reviewers"],
        serde_json::json!([
            {"reviewer": "a", "found": 2, "alone": 1, "alone_fixed": 1},
            {"reviewer": "b", "found": 1, "alone": 0, "alone_fixed": 0},
        ])
    );
    let table = p.repo.run(&["report"]);
    assert!(
        table
            .stdout
            .contains("reviewer  found  alone  alone, fixed"),
        "{}",
        table.stdout
    );
    let markdown = p.repo.run(&["report", "--format", "markdown"]);
    assert!(
        markdown.stdout.contains("| l | a | 2 | 1 | 1 |"),
        "{}",
        markdown.stdout
    );
}

#[test]
fn a_hung_reviewer_times_out_alone_with_all_it_started_and_the_quorum_decides() {
    let p = Panel::with("max_rounds = 3", "quorum = 1", ["", "timeout = \"1s\""]);
    let marker = p.script.path().join("child-survived");
    p.writes(1, FIXED).says("a", 1, CLEAN).file(
        "b",
        "reviewer-1.sh",
        &format!("(sleep 3; touch {}) &\nsleep 60\n", marker.display()),
    );
    let start = std::time::Instant::now();
    let (code, stdout, stderr) = p.run();
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("stop: clean"), "{stdout}");
    // A hang guard: `b`'s `sleep 60` is not waited for.
    assert!(start.elapsed() < std::time::Duration::from_secs(45));
    let panel: Value = serde_json::from_str(&p.evidence(1, "panel.json")).unwrap();
    let why = panel["members"][1]["absent"].as_str().unwrap();
    assert!(
        why.contains(
            "reviewer `b` timed out after 1s; it and every process it started were killed"
        ),
        "{why}"
    );
    assert_eq!(panel["members"][0]["answered"], true);
    std::thread::sleep(std::time::Duration::from_secs(4));
    assert!(!marker.exists(), "a child of the hung reviewer survived");
}

#[test]
fn ctrl_c_during_a_panel_ends_every_reviewer_and_records_nothing() {
    let p = Panel::new("max_rounds = 3", "quorum = 1");
    let marker = p.script.path().join("child-survived");
    for who in ["a", "b"] {
        p.file(
            who,
            "reviewer-1.sh",
            &format!("(sleep 3; touch {}-{who}) &\nsleep 60\n", marker.display()),
        );
    }
    p.writes(1, FIXED);
    let child = p
        .repo
        .referee_std()
        .args(["run", "--task", "t"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    let both = || {
        ["a", "b"]
            .iter()
            .all(|w| p.calls(w).contains("call reviewer 1"))
    };
    while !both() && start.elapsed() < std::time::Duration::from_secs(20) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(start.elapsed() < std::time::Duration::from_secs(30));
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert!(p.repo.ledger_json().is_empty(), "a round was recorded");
    std::thread::sleep(std::time::Duration::from_secs(4));
    for who in ["a", "b"] {
        assert!(
            !p.script
                .path()
                .join(format!("child-survived-{who}"))
                .exists(),
            "a child of reviewer {who} survived"
        );
    }
}

#[test]
fn a_dry_run_shows_every_reviewers_call_with_the_same_prompt() {
    let p = Panel::new("max_rounds = 3", "");
    let out = p.repo.run(&[
        "run",
        "--dry-run",
        "--json",
        "--task",
        "fix the expiry check",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let reviewers = doc["reviewers"].as_array().unwrap();
    let names: Vec<&str> = reviewers
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(reviewers[0]["prompt"], reviewers[1]["prompt"]);
    let text = p
        .repo
        .run(&["run", "--dry-run", "--task", "fix the expiry check"]);
    assert!(
        text.stdout.contains("reviewer `a` (command)"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains("reviewer `b` (command)"),
        "{}",
        text.stdout
    );
    assert!(p.repo.ledger_json().is_empty());
}

#[test]
fn record_reads_a_panel_the_contract_does_not_name_and_a_lone_reviewer_takes_one_file() {
    let repo = Repo::with_loop("r", &[]);
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    std::fs::write(
        &a,
        review(&[finding("X", "bug", "off by one in expiry", 1)]),
    )
    .unwrap();
    std::fs::write(&b, CLEAN).unwrap();
    let given = |name: &str, path: &std::path::Path| format!("{name}={}", path.display());
    // A name must look like one.
    let bad = repo.run(&[
        "record",
        "--findings",
        &given("Bad Name", &a),
        "--findings",
        &given("b", &b),
    ]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(
        bad.stderr.contains("NAME (a name of lowercase letters"),
        "{}",
        bad.stderr
    );
    let out = repo.run(&[
        "record",
        "--findings",
        &given("gpt", &a),
        "--findings",
        &given("opus", &b),
    ]);
    assert_eq!(out.code, 10, "{}", out.stderr);
    let panel: Value =
        serde_json::from_str(&repo.read(".referee/ledgers/r/round-1/panel.json")).unwrap();
    assert_eq!(panel["quorum"], 2);
    assert_eq!(panel["members"][0]["name"], "gpt");
    assert_eq!(panel["members"][1]["findings"], 0);

    let lone = Repo::with_loop("s", &["--reviewer", "codex"]);
    let out = lone.run(&[
        "record",
        "--findings",
        &given("codex", &a),
        "--findings",
        &given("x", &b),
    ]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("the contract names one `[reviewer]`"),
        "{}",
        out.stderr
    );
    let out = lone.run(&["record", "--findings", a.to_str().unwrap()]);
    assert_eq!(out.code, 10, "{}", out.stderr);
}

#[test]
fn on_a_terminal_each_panel_reviewer_gets_its_own_status_line() {
    let p = Panel::new("max_rounds = 3", "");
    p.writes(1, FIXED)
        .file("a", "reviewer-1.sh", "sleep 1\n")
        .file("b", "reviewer-1.sh", "sleep 1\n")
        .says("a", 1, CLEAN)
        .says("b", 1, CLEAN);
    let Some((code, screen)) = crate::common::on_a_terminal(p.repo.path(), "run --task t") else {
        return;
    };
    assert_eq!(code, Some(0), "{screen}");
    for who in ["a", "b"] {
        assert!(
            screen.contains(&format!("round 1 · reviewer · {who}")),
            "{who}'s line: {screen}"
        );
        assert!(
            screen.contains(&format!("round 1: reviewer `{who}` finished in 1s")),
            "{screen}"
        );
    }
    assert!(screen.contains("stop: clean"), "{screen}");
}

#[test]
fn a_disputed_finding_the_other_reviewer_reports_again_goes_to_a_person() {
    let repo = Repo::with_loop("d", &["--max-rounds", "5"]);
    repo.write(
        "src/auth.rs",
        "fn valid(now: u64, exp: u64) -> bool { now < exp }\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let put = |name: &str, body: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, body).unwrap();
        format!("{}", path.display())
    };
    let a1 = put(
        "a1.json",
        &review(&[finding("X", "bug", "off by one in expiry", 1)]),
    );
    let clean = put("clean.json", CLEAN);
    let one = repo.run(&[
        "record",
        "--findings",
        &format!("a={a1}"),
        "--findings",
        &format!("b={clean}"),
    ]);
    assert_eq!(one.code, 10, "{}", one.stderr);
    let id = serde_json::from_str::<Value>(&repo.read(".referee/ledgers/d/round-1/findings.json"))
        .unwrap()["findings"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    // The writer disputes it and changes something else; `b` now reports it.
    repo.write(
        "src/auth.rs",
        "fn valid(now: u64, exp: u64) -> bool { now < exp } // as designed\n",
    );
    let responses = put(
        "responses.json",
        &format!(
            r#"{{"responses":[{{"id":"{id}","status":"disputed","note":"exp is exclusive by design"}}]}}"#
        ),
    );
    let b2 = put(
        "b2.json",
        &review(&[finding("Q", "bug", "Off-by-one in the expiry check", 1)]),
    );
    let two = repo.run(&[
        "record",
        "--findings",
        &format!("a={clean}"),
        "--findings",
        &format!("b={b2}"),
        "--responses",
        &responses,
    ]);
    assert_eq!(two.code, 20, "{}\n{}", two.stdout, two.stderr);
    assert!(two.stdout.contains("stop: disputed"), "{}", two.stdout);
    assert!(two.stdout.contains(&id), "{}", two.stdout);
}
