//! `referee run` with scripted agents (tests/fixtures/agents/fake-agent.sh):
//! rounds driven end to end, failures that record nothing, guards before the
//! review, prompts that no shell reads, Ctrl-C.

use std::path::PathBuf;

use serde_json::Value;

use crate::common::{Repo, text};

const BUG: &str = r#"{"findings":[{"id":"F1","severity":"bug","title":"off by one in expiry","file":"src/auth.rs","line":1,"body":"use >="}]}"#;
const CLEAN: &str = r#"{"findings":[]}"#;

fn fake_agent() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agents/fake-agent.sh")
        .display()
        .to_string()
}

/// A repository with a loop driven by the fake agent, and its script folder.
struct Fake {
    repo: Repo,
    script: tempfile::TempDir,
}

impl Fake {
    /// `extra` is TOML for the top of the contract; `writer`/`reviewer` extra
    /// lines go into their sections.
    fn new(extra: &str, writer: &str, reviewer: &str) -> Fake {
        let repo = Repo::new();
        repo.write(
            "src/auth.rs",
            "fn valid(now: u64, exp: u64) -> bool { now > exp }\n",
        );
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "-m", "auth"]);
        let script = tempfile::tempdir().unwrap();
        let dir = script.path().display().to_string();
        let agent = fake_agent();
        let contract = format!(
            "loop = \"l\"\n{extra}\n\
             [writer]\npreset = \"command\"\ncommand = [\"{agent}\"]\nenv = {{ FAKE_DIR = \"{dir}\" }}\n{writer}\n\
             [reviewer]\npreset = \"command\"\ncommand = [\"{agent}\"]\nenv = {{ FAKE_DIR = \"{dir}\" }}\n{reviewer}\n"
        );
        let path = script.path().join("contract.toml");
        std::fs::write(&path, contract).unwrap();
        repo.referee()
            .args(["init", "--from", path.to_str().unwrap()])
            .assert()
            .success();
        Fake { repo, script }
    }

    /// The loop's reviewer made the `tests` preset running `command` (a
    /// TOML argv) that writes `target/junit.xml`, with `more` lines in its
    /// section. The report is ignored from the loop's start: an ignore rule
    /// the writer adds later hides nothing (docs/snapshots.md).
    fn tests_reviewer(&self, command: &str, more: &str) {
        let path = self.repo.join(".referee/contracts/l.toml");
        let contract = std::fs::read_to_string(&path).unwrap();
        let start = contract.find("[reviewer]").unwrap();
        let contract = format!(
            "{}[reviewer]\npreset = \"tests\"\ncommand = {command}\njunit = \"target/junit.xml\"\n{more}",
            &contract[..start],
        );
        self.repo.write(".gitignore", "target/\n");
        let changed = self.script.path().join("tests-contract.toml");
        std::fs::write(&changed, contract).unwrap();
        self.repo
            .referee()
            .args(["init", "--force", "--from", changed.to_str().unwrap()])
            .assert()
            .success();
    }

    fn file(&self, name: &str, body: &str) -> &Fake {
        std::fs::write(self.script.path().join(name), body).unwrap();
        self
    }

    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let out = self.repo.referee().arg("run").args(args).output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            text(&out.stdout),
            text(&out.stderr),
        )
    }

    fn calls(&self) -> String {
        std::fs::read_to_string(self.script.path().join("calls.log")).unwrap_or_default()
    }

    fn rounds(&self) -> Vec<Value> {
        let out = self
            .repo
            .referee()
            .args(["ledger", "show", "--json"])
            .output()
            .unwrap();
        crate::common::ledger_rows(&out.stdout)
    }
}

/// A writer step that rewrites the auth check.
fn fix(body: &str) -> String {
    format!("printf '%s\\n' '{body}' > src/auth.rs\n")
}

#[test]
fn a_loop_converges_round_by_round() {
    let f = Fake::new("max_rounds = 4", "", "");
    f.file("writer-1.sh", &fix("fn valid(now: u64, exp: u64) -> bool { now < exp }"))
        .file("reviewer-1.print", BUG)
        .file("writer-2.sh", &fix("fn valid(now: u64, exp: u64) -> bool { now <= exp }"))
        .file(
            "writer-2.out",
            r#"{"responses":[{"id":"F1","status":"fixed","note":"inclusive now"}],"usage":{"cost_usd":0.25,"tokens":1000}}"#,
        )
        .file("reviewer-2.print", CLEAN);
    let (code, stdout, stderr) = f.run(&["--task", "fix the expiry check"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("round 1 of 4 · loop `l` · continue"),
        "{stdout}"
    );
    assert!(
        stdout.contains("continue: round 2 asks the writer to fix F1"),
        "{stdout}"
    );
    assert!(stdout.contains("round 2 of 4 · loop `l` · stop: clean"));
    assert!(
        stderr.contains("round 1: writer `command` started"),
        "{stderr}"
    );
    let rows = f.rounds();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1]["cost_usd"], 0.25);
    assert_eq!(rows[1]["tokens"], 1000);
    // The writer got the open finding with its id; the reviewer the patch.
    let calls = f.calls();
    assert!(
        calls.contains("- F1 [bug] src/auth.rs:1: off by one in expiry"),
        "{calls}"
    );
    assert!(calls.contains("fix the expiry check"));
    assert!(calls.contains("-fn valid(now: u64, exp: u64) -> bool { now < exp }"));
    // Evidence holds both calls; the snapshots are refs.
    let evidence = f.repo.join(".referee/ledgers/l/round-2");
    for name in [
        "writer.prompt.md",
        "writer.output",
        "reviewer.stdout",
        "reviewer.call.txt",
        "task.md",
        "patch.diff",
        "state.json",
    ] {
        assert!(evidence.join(name).exists(), "{name}");
    }
    f.repo.git(&["rev-parse", "refs/referee/l/round-2"]);
    f.repo
        .referee()
        .args(["ledger", "verify"])
        .assert()
        .success();
}

#[test]
fn an_escalation_prints_the_hand_off_with_the_writers_words() {
    let f = Fake::new("max_rounds = 2", "", "");
    f.file("writer-1.sh", &fix("a"))
        .file("reviewer-1.print", BUG)
        .file("writer-2.sh", &fix("b"))
        .file(
            "writer-2.out",
            r#"{"responses":[{"id":"F1","status":"disputed","note":"the spec reads exp as inclusive"}]}"#,
        )
        .file("reviewer-2.print", BUG);
    let (code, stdout, _) = f.run(&["--task", "t"]);
    assert_eq!(code, 20, "{stdout}");
    assert!(stdout.contains("loop `l` stopped at round 2 of 2 on `round-cap`"));
    assert!(
        stdout.contains("writer says: disputed: the spec reads exp as inclusive"),
        "{stdout}"
    );
    // A stopped loop is not run again: on the tree it stopped on, `run`
    // answers with the stop (and its hand-off), calling no agent.
    let log = std::fs::read_to_string(f.script.path().join("calls.log")).unwrap();
    let (code, stdout, _) = f.run(&[]);
    assert_eq!(code, 20, "{stdout}");
    assert!(
        stdout.starts_with(
            "already done: loop `l` stopped at round 2 on `round-cap`, and the work tree is that round's: no agent was called, nothing appended\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("writer says: disputed: the spec reads exp as inclusive"),
        "{stdout}"
    );
    let again = std::fs::read_to_string(f.script.path().join("calls.log")).unwrap();
    assert_eq!(again, log, "an agent was called");
    assert_eq!(f.rounds().len(), 2);
    // On a changed tree it is refused: new work the stopped loop does not take.
    f.repo.append("src/auth.rs", "// more");
    let (code, _, stderr) = f.run(&[]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains(
            "loop `l` stopped at round 2 on `round-cap`, and the work tree changed since: a stopped loop takes no more rounds"
        ),
        "{stderr}"
    );
    assert_eq!(f.rounds().len(), 2);
}

#[test]
fn a_failed_agent_records_nothing_and_the_next_run_resumes_the_round() {
    let f = Fake::new("", "", "");
    f.file("writer-1.sh", "echo 'model overloaded' >&2; exit 3\n");
    let (code, _, stderr) = f.run(&["--task", "t"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("round 1: writer `command` failed: exited with status 3: model overloaded; nothing was recorded"),
        "{stderr}"
    );
    assert!(stderr.contains("evidence: `"));
    assert!(stderr.contains(".referee/ledgers/l/failed/round-1-writer-"));
    assert!(
        stderr.contains("hint: `referee run --loop l` starts round 1 again"),
        "{stderr}"
    );
    assert!(f.rounds().is_empty());
    // Resume: the task was kept, round 1 starts over.
    f.file("writer-1.sh", &fix("fixed"))
        .file("reviewer-1.print", CLEAN);
    let (code, stdout, stderr) = f.run(&[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(f.rounds().len(), 1);
}

#[test]
fn a_failed_review_says_the_writers_work_can_be_reviewed_alone() {
    let f = Fake::new("", "", "");
    f.file("writer-1.sh", &fix("x"))
        .file("reviewer-1.sh", "echo 'rate limited' >&2; exit 2\n");
    let (code, _, stderr) = f.run(&["--task", "t"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("hint: the writer's round 1 is in the work tree: `referee run --loop l --review-first` reviews it"),
        "{stderr}"
    );
}

#[test]
fn a_hung_agent_times_out_and_its_children_die() {
    let f = Fake::new("", "timeout = \"1s\"", "");
    let marker = f.script.path().join("child-survived");
    f.file(
        "writer-1.sh",
        &format!("(sleep 3; touch {}) &\nsleep 60\n", marker.display()),
    );
    let start = std::time::Instant::now();
    let (code, _, stderr) = f.run(&["--task", "t"]);
    assert_eq!(code, 1);
    assert!(
        stderr
            .contains("round 1: writer `command` timed out after 1s; it and every process it started were killed"),
        "{stderr}"
    );
    // A hang guard: the writer's `sleep 60` is not waited for.
    assert!(
        start.elapsed() < std::time::Duration::from_secs(45),
        "{:?}",
        start.elapsed()
    );
    std::thread::sleep(std::time::Duration::from_secs(4));
    assert!(!marker.exists(), "a child of the hung agent survived");
    assert!(f.rounds().is_empty());
}

#[test]
fn an_unreadable_review_is_a_failure_not_a_clean_round() {
    let f = Fake::new("", "", "");
    f.file("writer-1.sh", &fix("x"))
        .file("reviewer-1.print", "LGTM!\n");
    let (code, _, stderr) = f.run(&["--task", "t"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("round 1: reviewer `command` gave no readable review"),
        "{stderr}"
    );
    assert!(f.rounds().is_empty());
}

#[test]
fn review_first_reviews_before_any_writer_call() {
    let f = Fake::new("", "", "");
    f.repo.write(
        "src/auth.rs",
        "fn valid(now: u64, exp: u64) -> bool { now >= exp }\n",
    );
    f.file("reviewer-1.print", CLEAN);
    let (code, stdout, _) = f.run(&["--task", "t", "--review-first"]);
    assert_eq!(code, 0, "{stdout}");
    let calls = f.calls();
    assert!(!calls.contains("call writer"), "{calls}");
    assert!(calls.contains("call reviewer 1"));
}

#[test]
fn the_scope_guard_ends_the_round_before_the_review() {
    let f = Fake::new("scope = [\"src/**\"]", "", "");
    f.file("writer-1.sh", "echo oops > README.md\n");
    let (code, stdout, _) = f.run(&["--task", "t"]);
    assert_eq!(code, 20, "{stdout}");
    assert!(stdout.contains("stop: scope"));
    assert!(stdout.contains("outside the scope: `README.md`"));
    assert!(
        !f.calls().contains("call reviewer"),
        "the reviewer never ran"
    );
}

#[test]
fn a_writer_that_changes_nothing_is_stalled_before_the_review() {
    let f = Fake::new("max_rounds = 5", "", "");
    f.file("writer-1.sh", &fix("a"))
        .file("reviewer-1.print", BUG)
        // Round 2: no edit, no dispute.
        .file(
            "writer-2.out",
            r#"{"responses":[{"id":"F1","status":"wontfix","note":"later"}]}"#,
        );
    let (code, stdout, _) = f.run(&["--task", "t"]);
    assert_eq!(code, 20, "{stdout}");
    assert!(stdout.contains("stop: stalled"), "{stdout}");
    assert!(
        stdout.contains("the writer changed nothing while 1 must-fix finding was open and disputed none; the reviewer was not called"),
        "{stdout}"
    );
    assert!(f.calls().contains("call reviewer 1"));
    assert!(
        !f.calls().contains("call reviewer 2"),
        "no review is spent on an unchanged tree"
    );
    // A dispute is an answer: the reviewer gets its say, and insisting stops
    // the loop on `disputed`.
    let f = Fake::new("max_rounds = 5", "", "");
    f.file("writer-1.sh", &fix("a"))
        .file("reviewer-1.print", BUG)
        .file(
            "writer-2.out",
            r#"{"responses":[{"id":"F1","status":"disputed","note":"the spec says exclusive"}]}"#,
        )
        .file("reviewer-2.print", BUG);
    let (code, stdout, _) = f.run(&["--task", "t"]);
    assert_eq!(code, 20, "{stdout}");
    assert!(stdout.contains("stop: disputed"), "{stdout}");
    assert!(f.calls().contains("call reviewer 2"));
}

#[test]
fn a_missing_reviewer_program_is_found_before_the_writer_is_called() {
    let f = Fake::new("", "", "");
    // Replace the reviewer's argv before round 1 (the contract may be edited).
    let path = f.repo.join(".referee/contracts/l.toml");
    let contract = std::fs::read_to_string(&path).unwrap();
    let reviewer_at = contract.find("[reviewer]").unwrap();
    let (head, tail) = contract.split_at(reviewer_at);
    let tail = tail.replacen(&fake_agent(), "no-such-reviewer-program", 1);
    std::fs::write(&path, format!("{head}{tail}")).unwrap();
    f.file("writer-1.sh", &fix("x"));
    let (code, stdout, stderr) = f.run(&["--task", "t"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stderr.contains("cannot start: reviewer `no-such-reviewer-program` (check `reviewer.command`) not found on PATH"),
        "{stderr}"
    );
    assert!(f.calls().is_empty(), "no agent was called: {}", f.calls());
    assert!(f.rounds().is_empty());
}

#[test]
fn the_budget_guard_stops_before_the_review_when_the_writer_spends_it() {
    let f = Fake::new("[budget]\nusd = 1.0", "", "");
    f.file("writer-1.sh", &fix("x"))
        .file("writer-1.out", r#"{"usage":{"cost_usd":1.5,"tokens":10}}"#);
    let (code, stdout, _) = f.run(&["--task", "t"]);
    assert_eq!(code, 20, "{stdout}");
    assert!(
        stdout.contains("round 1: the loop spent $1.50 of its $1.00 budget before the review"),
        "{stdout}"
    );
    assert!(!f.calls().contains("call reviewer"));
}

#[test]
fn prompts_never_pass_through_a_shell() {
    let f = Fake::new("", "", "");
    f.file("writer-1.sh", &fix("x"))
        .file("reviewer-1.print", CLEAN);
    let pwned = f.repo.join("pwned");
    let task = format!(
        "fix it $(touch {0}) `touch {0}`; touch {0} | true",
        pwned.display()
    );
    let (code, _, _) = f.run(&["--task", &task]);
    assert_eq!(code, 0);
    assert!(!pwned.exists());
    assert!(
        f.calls().contains(&task),
        "the task reached the agent byte for byte"
    );
}

#[test]
fn secrets_in_agent_output_are_redacted_in_evidence() {
    let f = Fake::new("", "", "");
    f.file(
        "writer-1.sh",
        &format!(
            "{}echo 'using ANTHROPIC_API_KEY=sk-ant-api03-SECRETSECRETSECRETSECRET'\n",
            fix("x")
        ),
    )
    .file("reviewer-1.print", CLEAN);
    let (code, _, _) = f.run(&["--task", "t"]);
    assert_eq!(code, 0);
    let dir = f.repo.join(".referee/ledgers/l/round-1");
    let stdout = std::fs::read_to_string(dir.join("writer.stdout")).unwrap();
    assert_eq!(stdout, "using ANTHROPIC_API_KEY=[REDACTED]\n");
    f.repo
        .referee()
        .args(["ledger", "verify"])
        .assert()
        .success();
}

#[test]
fn json_lines_report_every_event() {
    let f = Fake::new("", "", "");
    f.file("writer-1.sh", &fix("x"))
        .file("reviewer-1.print", CLEAN);
    let (code, stdout, _) = f.run(&["--task", "t", "--json"]);
    assert_eq!(code, 0);
    let events: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<String> = events
        .iter()
        .map(|e| {
            format!(
                "{}:{}",
                e["event"].as_str().unwrap(),
                e["phase"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "call:start",
            "call:end",
            "call:start",
            "call:end",
            "round:",
            "end:"
        ]
    );
    assert_eq!(events[4]["rule"], "clean");
    assert_eq!(events[5]["exit"], 0);
}

/// `run` with a writer that sleeps, sent `signal` by pid once the writer
/// has started: its exit code and stderr.
fn signalled_run(signal: nix::sys::signal::Signal) -> (Option<i32>, String) {
    let f = Fake::new("", "", "");
    f.file("writer-1.sh", "sleep 60\n");
    let child = f
        .repo
        .referee_std()
        .args(["run", "--task", "t"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let log = f.script.path().join("calls.log");
    let start = std::time::Instant::now();
    while !log.exists() && start.elapsed() < std::time::Duration::from_secs(20) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, signal).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(start.elapsed() < std::time::Duration::from_secs(30));
    assert!(f.rounds().is_empty(), "{signal}: a round was recorded");
    (out.status.code(), text(&out.stderr))
}

#[test]
fn ctrl_c_stops_the_agents_records_nothing_and_exits_130() {
    let (code, stderr) = signalled_run(nix::sys::signal::Signal::SIGINT);
    assert_eq!(code, Some(130), "{stderr}");
    assert!(
        stderr.contains(
            "round 1: writer `command` interrupted; it and every process it started were killed"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("hint: `referee run --loop l` starts round 1 again"),
        "{stderr}"
    );
}

#[test]
fn sigterm_stops_the_agents_records_nothing_and_exits_143() {
    let (code, stderr) = signalled_run(nix::sys::signal::Signal::SIGTERM);
    assert_eq!(code, Some(143), "{stderr}");
    assert!(
        stderr.contains(
            "round 1: writer `command` interrupted; it and every process it started were killed"
        ),
        "{stderr}"
    );
}

#[test]
fn the_tests_preset_turns_failing_tests_into_findings() {
    let f = Fake::new("", "", "");
    // Replace the reviewer with the `tests` preset: a script that writes a
    // JUnit report, failing until the writer's fix lands.
    let junit_script = f.script.path().join("tests.sh");
    std::fs::write(
        &junit_script,
        r#"#!/bin/sh
if grep -q '>=' src/auth.rs; then failures=0; body='<testcase classname="auth" name="expiry_boundary"/>'
else failures=1; body='<testcase classname="auth" name="expiry_boundary"><failure message="expired token accepted">assert failed</failure></testcase>'; fi
mkdir -p target
printf '<?xml version="1.0"?><testsuite name="auth" tests="1" failures="%s">%s</testsuite>\n' "$failures" "$body" > target/junit.xml
exit $failures
"#,
    )
    .unwrap();
    let path = f.repo.join(".referee/contracts/l.toml");
    f.tests_reviewer(&format!("[\"sh\", \"{}\"]", junit_script.display()), "");
    assert!(std::fs::read_to_string(&path).unwrap().contains("junit"));
    f.file(
        "writer-1.sh",
        &fix("fn valid(now: u64, exp: u64) -> bool { now > exp } // still wrong"),
    )
    .file(
        "writer-2.sh",
        &fix("fn valid(now: u64, exp: u64) -> bool { now >= exp }"),
    );
    let (code, stdout, stderr) = f.run(&["--task", "make the expiry test pass"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("new      auth::expiry_boundary [bug]"),
        "{stdout}"
    );
    // The report is ignored by git: each round's patch is the writer's change
    // (round 1 also adds the `.gitignore`).
    assert!(
        stdout.contains("must-fix left 1 · below floor 0 · patch +2 -1"),
        "{stdout}"
    );
    assert!(
        stdout.contains("must-fix left 0 · below floor 0 · patch +1 -1"),
        "{stdout}"
    );
    assert!(stdout.contains("round 2 of 3 · loop `l` · stop: clean"));
}

#[test]
fn a_test_command_that_writes_no_report_shows_why() {
    let f = Fake::new("", "", "");
    let path = f.repo.join(".referee/contracts/l.toml");
    let contract = std::fs::read_to_string(&path).unwrap();
    let start = contract.find("[reviewer]").unwrap();
    let contract = format!(
        "{}[reviewer]\npreset = \"tests\"\ncommand = [\"sh\", \"-c\", \"echo collecting tests >&2; echo 'ERROR: file or directory not found: tests/unit' >&2; exit 4\"]\njunit = \"target/junit.xml\"\n",
        &contract[..start]
    );
    std::fs::write(&path, contract).unwrap();
    f.file("writer-1.sh", &fix("x"));
    let (code, stdout, stderr) = f.run(&["--task", "t"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stderr.contains("wrote no JUnit report (the test command exited with status 4); a clean round must be proven; it printed last:\n  collecting tests\n  ERROR: file or directory not found: tests/unit"),
        "{stderr}"
    );
}

#[test]
fn record_and_status_know_a_run_drives_the_loop() {
    let f = Fake::new("", "", "");
    let started = f.script.path().join("writer-started");
    f.file(
        "writer-1.sh",
        &format!("touch '{}'\nsleep 3\n{}", started.display(), fix("x")),
    )
    .file("reviewer-1.print", CLEAN);
    let mut run = f
        .repo
        .referee_std()
        .args(["run", "--task", "t"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let waited = std::time::Instant::now();
    while !started.exists() {
        assert!(waited.elapsed() < std::time::Duration::from_secs(20));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = f
        .repo
        .referee()
        .args(["record", "--findings", "-"])
        .write_stdin(CLEAN)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!(
            "is being driven by `referee run` (pid {}",
            run.id()
        )),
        "{err}"
    );
    assert!(err.contains("round 1: the writer is working"), "{err}");
    // A second `run` is refused the same way, with how to end the first.
    let second = f
        .repo
        .referee()
        .args(["run", "--task", "t"])
        .output()
        .unwrap();
    assert_eq!(second.status.code(), Some(1));
    let err = text(&second.stderr);
    assert!(
        err.contains(&format!(
            "is being driven by `referee run` (pid {}",
            run.id()
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "wait for it to stop, or end it (Ctrl-C where it runs, or `kill {}`)",
            run.id()
        )),
        "{err}"
    );
    let status = text(&f.repo.referee().arg("status").output().unwrap().stdout);
    assert!(status.contains("driven now by `referee run`"), "{status}");
    assert!(
        status.starts_with("loop `l` · round 1 of 3 · running: the writer is working\n"),
        "{status}"
    );
    assert!(status.contains("next: wait:"), "{status}");
    let json: serde_json::Value = serde_json::from_slice(
        &f.repo
            .referee()
            .args(["status", "--json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert_eq!(json["status"], "running", "{json}");
    assert_eq!(json["driving"]["round"], 1, "{json}");
    assert_eq!(run.wait().unwrap().code(), Some(0));
    assert_eq!(f.rounds().len(), 1, "the hand-made record added nothing");
    let status = text(&f.repo.referee().arg("status").output().unwrap().stdout);
    assert!(!status.contains("driven now"), "{status}");
}

#[test]
fn quiet_prints_only_the_outcome() {
    let f = Fake::new("max_rounds = 2", "", "");
    f.file("writer-1.sh", &fix("a"))
        .file("reviewer-1.print", BUG)
        .file("writer-2.sh", &fix("b"))
        .file("reviewer-2.print", BUG);
    let (code, stdout, stderr) = f.run(&["--task", "t", "--quiet"]);
    assert_eq!(code, 20, "{stdout}{stderr}");
    assert!(
        stdout.starts_with(
            "loop `l` stopped at round 2 on `round-cap`: round 2 of 2: 1 must-fix finding still open\n"
        ),
        "{stdout}"
    );
    assert!(
        !stdout.contains("round 1 of 2"),
        "no per-round lines: {stdout}"
    );
    assert!(
        stdout.contains("finding: off by one in expiry"),
        "the hand-off follows"
    );
    assert_eq!(stderr, "", "no progress lines");
}

#[test]
fn on_a_terminal_each_call_gets_a_live_status_line() {
    let f = Fake::new("", "", "");
    f.file("writer-1.sh", &format!("sleep 1\n{}", fix("x")))
        .file("reviewer-1.print", CLEAN);
    // `script` gives referee a pseudo-terminal, as a person's shell would.
    let Some((code, screen)) = crate::common::on_a_terminal(f.repo.path(), "run --task t") else {
        return;
    };
    assert_eq!(code, Some(0), "{screen}");
    assert!(
        screen.contains("round 1 · writer · command"),
        "the spinner's line: {screen}"
    );
    assert!(
        screen.contains("\u{1b}[2K"),
        "the line is redrawn in place: {screen}"
    );
    assert!(
        screen.contains("round 1: writer `command` finished in 1s"),
        "{screen}"
    );
    assert!(screen.contains("stop: clean"), "{screen}");
}

#[test]
fn run_without_agents_gives_an_init_command_that_works() {
    // The hint said `referee init --writer claude --reviewer codex`, which
    // `init` refuses while the contract exists (it needs `--force`).
    let repo = Repo::with_loop("l", &[]);
    let out = repo.run(&["run", "--task", "fix it"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("has no `[writer]` section"),
        "{}",
        out.stderr
    );
    let hinted = out
        .stderr
        .split("write the contract again: `")
        .nth(1)
        .and_then(|rest| rest.split('`').next())
        .unwrap_or_else(|| panic!("no command in: {}", out.stderr));
    let args: Vec<&str> = hinted.split_whitespace().skip(1).collect();
    assert_eq!(args[..2], ["init", "--loop"], "{hinted}");
    let out = repo.run(&args);
    assert_eq!(out.code, 0, "{hinted}: {}", out.stderr);
    assert!(repo.read(".referee/contracts/l.toml").contains("[writer]"));
}

#[test]
fn the_reviewer_sees_changes_the_writers_gitattributes_would_hide() {
    // `run` hands the reviewer the round's patch: with `*.rs -diff` added
    // by the writer it read `Binary files … differ` for every Rust change.
    let f = Fake::new("max_rounds = 2", "", "");
    f.file(
        "writer-1.sh",
        "printf '*.rs -diff\\n' > .gitattributes\necho 'fn hidden() {}' >> src/auth.rs\n",
    )
    .file(
        "reviewer-1.sh",
        "cp \"$REFEREE_PATCH_FILE\" \"$FAKE_DIR/seen.patch\"\n",
    )
    .file("reviewer-1.print", CLEAN);
    let (code, stdout, stderr) = f.run(&["--task", "t"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let seen = std::fs::read_to_string(f.script.path().join("seen.patch")).unwrap();
    assert!(seen.contains("+fn hidden() {}"), "{seen}");
    assert!(!seen.contains("Binary files"), "{seen}");
}

/// A newcomer's walk from a fresh repository, with the `command` preset:
/// `init`, `run` to an escalation, `escalate`, `resume` in writing, `run`
/// again to `clean`, `approve`, and CI's `approval check`.
#[test]
fn a_newcomers_walk_from_init_to_approval() {
    let f = Fake::new("max_rounds = 2", "", "");
    f.file(
        "writer-1.sh",
        &fix("fn valid(now: u64, exp: u64) -> bool { now < exp }"),
    )
    .file("reviewer-1.print", BUG)
    .file(
        "writer-2.sh",
        &fix("fn valid(now: u64, exp: u64) -> bool { exp > now }"),
    )
    .file("reviewer-2.print", BUG)
    .file(
        "writer-3.sh",
        &fix("fn valid(now: u64, exp: u64) -> bool { now <= exp }"),
    )
    .file("reviewer-3.print", CLEAN);
    let (code, stdout, stderr) = f.run(&["--task", "fix the expiry check"]);
    assert_eq!(code, 20, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("round 2 of 2 · loop `l` · stop: round-cap"),
        "{stdout}"
    );

    let escalate = f.repo.run(&["escalate"]);
    assert_eq!(escalate.code, 0, "{}", escalate.stderr);
    assert!(
        escalate.stdout.contains(
            "give the writer more rounds, in writing: `referee resume --loop l --max-rounds 4 --by NAME --reason TEXT`"
        ),
        "{}",
        escalate.stdout
    );
    // Run again on the same tree, a stopped loop answers its stop and
    // appends nothing; changed, it is refused until a person resumes it.
    let rows = f.repo.ledger_json().len();
    let (code, _, stderr) = f.run(&["--task", "fix the expiry check"]);
    assert_eq!(code, 20, "{stderr}");
    assert_eq!(f.repo.ledger_json().len(), rows);
    f.repo.append("NOTES.md", "draft");
    let (code, _, stderr) = f.run(&["--task", "fix the expiry check"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("`referee resume --loop l --by NAME --reason TEXT`"),
        "{stderr}"
    );

    let resume = f.repo.run(&[
        "resume",
        "--by",
        "ana",
        "--reason",
        "one signature change away",
    ]);
    assert_eq!(resume.code, 0, "{}", resume.stderr);
    assert!(
        resume.stdout.contains("round 3 of 4 is next"),
        "{}",
        resume.stdout
    );
    let (code, stdout, stderr) = f.run(&["--task", "fix the expiry check"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("round 3 of 4 · loop `l` · stop: clean"),
        "{stdout}"
    );

    let approve = f
        .repo
        .run(&["approve", "--by", "ana", "--reason", "reviewed"]);
    assert_eq!(approve.code, 0, "{}", approve.stderr);
    let check = f.repo.run(&["approval", "check"]);
    assert_eq!(check.code, 0, "{}", check.stderr);
    let kinds: Vec<String> = f
        .repo
        .ledger_json()
        .iter()
        .map(|r| match r["kind"].as_str().unwrap() {
            "amend" => format!(
                "amend {} {}",
                r["round"],
                r["subject"].as_str().unwrap_or("")
            ),
            kind => format!("{kind} {} ", r["round"]),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "round 1 ",
            "round 2 ",
            "amend 2 max_rounds=4",
            "amend 2 resume",
            "round 3 ",
            "approve 3 ",
        ],
        "{kinds:?}"
    );
    f.repo.run(&["ledger", "verify"]).assert(0, "");
}

/// A claude reviewer that answers in prose under `run`: the hint is what is
/// left to change, not the advice to pass a schema the preset passed.
#[test]
fn a_claude_reviewer_answering_in_prose_gets_a_hint_for_the_preset_that_ran() {
    let repo = Repo::new();
    repo.write("src/auth.rs", "fn valid() {}\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "auth"]);
    let script = tempfile::tempdir().unwrap();
    let claude = script.path().join("claude");
    std::fs::write(
        &claude,
        "#!/bin/sh\ncat > /dev/null\necho '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"Looks fine to me.\"}'\n",
    )
    .unwrap();
    std::fs::set_permissions(&claude, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let dir = script.path().display().to_string();
    std::fs::write(script.path().join("writer-1.sh"), fix("fn valid() { 1 }")).unwrap();
    let contract = format!(
        "loop = \"l\"\n[writer]\npreset = \"command\"\ncommand = [\"{}\"]\nenv = {{ FAKE_DIR = \"{dir}\" }}\n\
         [reviewer]\npreset = \"claude\"\nbin = \"{}\"\n",
        fake_agent(),
        claude.display()
    );
    let path = script.path().join("contract.toml");
    std::fs::write(&path, contract).unwrap();
    repo.run(&["init", "--from", path.to_str().unwrap()])
        .assert(0, "");
    let out = repo.run(&["run", "--task", "t"]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("reviewer `claude` gave no readable review"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(
            "hint: the claude preset passed referee's findings schema itself (`--json-schema`)"
        ),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("run claude with"), "{}", out.stderr);
}

/// `run --dry-run` prints the next round's calls and prompts as they would
/// be made, and calls, locks and writes nothing.
#[test]
fn a_dry_run_shows_the_next_rounds_calls_and_changes_nothing() {
    let f = Fake::new("max_rounds = 3", "", "");
    f.file(
        "writer-1.sh",
        &fix("fn valid(now: u64, exp: u64) -> bool { now < exp }"),
    )
    .file("reviewer-1.print", BUG);
    let ledger = f.repo.join(".referee/ledgers/l.csv");
    let out = f
        .repo
        .run(&["run", "--dry-run", "--task", "fix the expiry check"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .starts_with("dry run of round 1 of loop `l`: nothing is called, locked or recorded\n"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("REFEREE_ROLE=writer"), "{}", out.stdout);
    assert!(
        out.stdout.contains(&crate::common::fake_agent()),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("  | fix the expiry check"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("<the writer's patch of this round>"),
        "{}",
        out.stdout
    );
    assert!(f.calls().is_empty(), "an agent was called");
    assert!(!ledger.exists());
    assert!(!f.repo.join(".referee/task.md").exists() && !f.repo.join(".referee/ledgers").exists());

    // After a round, the writer's prompt holds the open finding, by id.
    f.file("writer-2.sh", "exit 7\n");
    let (code, stdout, stderr) = f.run(&["--task", "fix the expiry check"]);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    let rows = f.repo.ledger_json().len();
    let calls = f.calls();
    let out = f.repo.run(&["run", "--dry-run", "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["round"], 2);
    assert_eq!(doc["writer"]["preset"], "command");
    assert!(
        doc["writer"]["prompt"]
            .as_str()
            .unwrap()
            .contains("F1 [bug] src/auth.rs:1: off by one in expiry")
    );
    // `--review-first`: the round starts with the review, no writer call.
    let out = f
        .repo
        .run(&["run", "--dry-run", "--review-first", "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert!(doc["writer"].is_null(), "{doc}");
    assert!(
        doc["reviewer"]["prompt"]
            .as_str()
            .unwrap()
            .contains("<the changes already in the work tree>"),
        "{doc}"
    );
    let out = f.repo.run(&["run", "--dry-run", "--review-first"]);
    assert!(
        out.stdout.contains(
            "\nno writer call: `--review-first` reviews the changes already in the work tree\n"
        ),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("\nwriter `"), "{}", out.stdout);
    assert_eq!(f.repo.ledger_json().len(), rows);
    assert_eq!(f.calls(), calls);
}

/// A suite that collected no test (an empty report) stops `run` with the
/// refusal, unless the contract says `empty_report = "clean"`.
#[test]
fn an_empty_test_report_is_refused_unless_the_contract_says_it_is_clean() {
    for (setting, code) in [("", 1), ("empty_report = \"clean\"\n", 0)] {
        let f = Fake::new("", "", "");
        f.tests_reviewer(
            "[\"sh\", \"-c\", \"mkdir -p target; echo '<testsuite name=\\\"none\\\" tests=\\\"0\\\"/>' > target/junit.xml; exit 5\"]",
            setting,
        );
        f.file(
            "writer-1.sh",
            &fix("fn valid(now: u64, exp: u64) -> bool { now >= exp }"),
        );
        let (got, stdout, stderr) = f.run(&["--task", "t"]);
        assert_eq!(got, code, "{setting:?}: {stdout}\n{stderr}");
        if code == 0 {
            assert!(stdout.contains("stop: clean"), "{stdout}");
        } else {
            assert!(stderr.contains("the report holds no test case"), "{stderr}");
            assert!(stderr.contains("empty_report = \"clean\""), "{stderr}");
        }
    }
}
