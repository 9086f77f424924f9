//! The CI recipe (docs/ci/test-fix-loop.sh) end to end: a real pytest suite
//! with a failing test reviews, a scripted writer fixes the code, and the
//! recipe leaves the Markdown summary, the SARIF and the exit code.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::{GIT_ENV, NOW, Repo, text};

fn pytest_available() -> bool {
    let ok = Command::new("python3")
        .args(["-m", "pytest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        crate::common::missing("pytest", "pip install pytest");
    }
    ok
}

fn project() -> (Repo, tempfile::TempDir) {
    let repo = Repo::new();
    repo.write("calc.py", "def add(a, b):\n    return a - b\n");
    repo.write(
        "test_calc.py",
        "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n\ndef test_zero():\n    assert add(0, 0) == 0\n",
    );
    repo.write(".gitignore", "target/\n__pycache__/\n.pytest_cache/\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "calc with a bug"]);
    let work = tempfile::tempdir().unwrap();
    let agent =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agents/fake-agent.sh");
    std::fs::write(
        work.path().join("contract.toml"),
        format!(
            "loop = \"ci-fix\"\nmax_rounds = 2\nscope = [\"*.py\"]\n\
             [writer]\npreset = \"command\"\ncommand = [\"{}\"]\nenv = {{ FAKE_DIR = \"{}\" }}\n\
             [reviewer]\npreset = \"tests\"\ncommand = [\"python3\", \"-m\", \"pytest\", \"-q\", \"--junitxml=target/junit.xml\"]\n\
             junit = \"target/junit.xml\"\n",
            agent.display(),
            work.path().display()
        ),
    )
    .unwrap();
    (repo, work)
}

fn recipe(repo: &Repo, work: &Path) -> (i32, String) {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/ci/test-fix-loop.sh");
    let out = Command::new("bash")
        .arg(script)
        .current_dir(repo.path())
        .envs(GIT_ENV.iter().copied())
        .env("REFEREE_NOW", NOW)
        .env("REFEREE_STATE_DIR", repo.state_dir())
        .env_remove("REFEREE_DIR")
        .env("NO_COLOR", "1")
        .env("REFEREE", assert_cmd::cargo::cargo_bin("referee"))
        .env("CONTRACT", work.join("contract.toml"))
        .env("OUT", work.join("out"))
        .env("GITHUB_STEP_SUMMARY", work.join("step-summary.md"))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        text(&out.stdout) + &text(&out.stderr),
    )
}

#[test]
fn the_recipe_fixes_a_real_failing_test_and_leaves_its_receipts() {
    if !pytest_available() {
        return;
    }
    let (repo, work) = project();
    std::fs::write(
        work.path().join("writer-1.sh"),
        "printf 'def add(a, b):\\n    return a + b\\n' > calc.py\n",
    )
    .unwrap();
    let (code, log) = recipe(&repo, work.path());
    assert_eq!(code, 0, "{log}");
    assert!(log.contains("referee: the loop ended done"), "{log}");
    // Round 1: the writer fixed it, the suite passed: clean at once.
    let summary = std::fs::read_to_string(work.path().join("out/referee-summary.md")).unwrap();
    assert!(summary.contains("stop: clean"), "{summary}");
    assert!(summary.contains("```mermaid\nxychart-beta"));
    let step = std::fs::read_to_string(work.path().join("step-summary.md")).unwrap();
    assert_eq!(step, summary);
    let sarif: Value =
        serde_json::from_slice(&std::fs::read(work.path().join("out/referee.sarif")).unwrap())
            .unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    assert_eq!(repo.read("calc.py"), "def add(a, b):\n    return a + b\n");
}

#[test]
fn the_recipe_exits_20_and_writes_the_hand_off_when_the_loop_escalates() {
    if !pytest_available() {
        return;
    }
    let (repo, work) = project();
    // The writer touches only a comment: the tests keep failing.
    std::fs::write(
        work.path().join("writer-1.sh"),
        "echo '# looked at it' >> calc.py\n",
    )
    .unwrap();
    std::fs::write(
        work.path().join("writer-2.sh"),
        "echo '# still looking' >> calc.py\n",
    )
    .unwrap();
    let (code, log) = recipe(&repo, work.path());
    assert_eq!(code, 20, "{log}");
    let report = std::fs::read_to_string(work.path().join("out/referee-report.txt")).unwrap();
    assert!(report.contains("on `round-cap`"), "{report}");
    assert!(
        report.contains("test_calc::test_add") || report.contains("test_add"),
        "{report}"
    );
    let sarif: Value =
        serde_json::from_slice(&std::fs::read(work.path().join("out/referee.sarif")).unwrap())
            .unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "only test_add fails: {sarif}");
    assert_eq!(results[0]["baselineState"], "unchanged");
    assert_eq!(results[0]["level"], "error");
    // pytest's report names no file: the SARIF places the test at its file.
    let placed = &results[0]["locations"][0]["physicalLocation"];
    assert_eq!(placed["artifactLocation"]["uri"], "test_calc.py", "{sarif}");
    assert_eq!(placed["region"]["startLine"], 4, "{sarif}");
}

/// The loop's ledger, byte for byte.
fn ledger(repo: &Repo) -> Vec<u8> {
    std::fs::read(repo.join(".referee/ledgers/ci-fix.csv")).unwrap()
}

/// How many times the fake writer was called.
fn writer_calls(work: &Path) -> usize {
    std::fs::read_to_string(work.join("calls.log"))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with("call writer"))
        .count()
}

#[test]
fn the_recipe_run_again_on_a_clean_loop_is_already_done() {
    if !pytest_available() {
        return;
    }
    let (repo, work) = project();
    std::fs::write(
        work.path().join("writer-1.sh"),
        "printf 'def add(a, b):\\n    return a + b\\n' > calc.py\n",
    )
    .unwrap();
    let (code, log) = recipe(&repo, work.path());
    assert_eq!(code, 0, "{log}");
    let before = ledger(&repo);
    assert_eq!(writer_calls(work.path()), 1);
    // The job run again on the same tree: the stop, no agent, nothing appended.
    let (code, log) = recipe(&repo, work.path());
    assert_eq!(code, 0, "{log}");
    assert!(
        log.contains(
            "already done: loop `ci-fix` stopped at round 1 on `clean`, and the work tree is that round's: no agent was called, nothing appended"
        ),
        "{log}"
    );
    assert!(
        log.contains("round 1 of 2 · loop `ci-fix` · stop: clean"),
        "{log}"
    );
    assert!(log.contains("referee: the loop ended done"), "{log}");
    assert_eq!(ledger(&repo), before, "the ledger changed");
    assert_eq!(writer_calls(work.path()), 1, "the writer was called again");
    // The receipts are written again all the same.
    let summary = std::fs::read_to_string(work.path().join("out/referee-summary.md")).unwrap();
    assert!(summary.contains("stop: clean"), "{summary}");
    // `--json` says so too.
    let out = repo.run(&["run", "--loop", "ci-fix", "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let events: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events.len(), 2, "{}", out.stdout);
    assert_eq!(events[0]["event"], "round");
    assert_eq!(events[0]["already_done"], true);
    assert_eq!(events[0]["already_recorded"], false);
    assert_eq!(events[1]["event"], "end");
    assert_eq!(events[1]["already_done"], true);
    assert_eq!(events[1]["rule"], "clean");
    assert_eq!(events[1]["exit"], 0);
    assert_eq!(ledger(&repo), before, "the ledger changed");

    // New work after the stop is no re-run: refused, as before.
    repo.append("calc.py", "# more");
    let out = repo.run(&["run", "--loop", "ci-fix"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains(
            "loop `ci-fix` stopped at round 1 on `clean`, and the work tree changed since: a stopped loop takes no more rounds; nothing was recorded"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(ledger(&repo), before, "the ledger changed");
    assert_eq!(writer_calls(work.path()), 1, "the writer was called again");
}

#[test]
fn the_recipe_run_again_on_an_escalated_loop_exits_20_with_the_hand_off() {
    if !pytest_available() {
        return;
    }
    let (repo, work) = project();
    std::fs::write(
        work.path().join("writer-1.sh"),
        "echo '# looked at it' >> calc.py\n",
    )
    .unwrap();
    std::fs::write(
        work.path().join("writer-2.sh"),
        "echo '# still looking' >> calc.py\n",
    )
    .unwrap();
    let (code, log) = recipe(&repo, work.path());
    assert_eq!(code, 20, "{log}");
    let before = ledger(&repo);
    std::fs::remove_file(work.path().join("out/referee-report.txt")).unwrap();
    let (code, log) = recipe(&repo, work.path());
    assert_eq!(code, 20, "{log}");
    assert!(
        log.contains("already done: loop `ci-fix` stopped at round 2 on `round-cap`"),
        "{log}"
    );
    assert_eq!(ledger(&repo), before, "the ledger changed");
    assert_eq!(writer_calls(work.path()), 2, "the writer was called again");
    let report = std::fs::read_to_string(work.path().join("out/referee-report.txt")).unwrap();
    assert!(report.contains("on `round-cap`"), "{report}");
}
