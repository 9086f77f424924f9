//! What the writer can reach (SPEC §8.4, §8.6): the reviewer runs in a
//! private checkout of the round's snapshot with the base's agent settings
//! and scripts; files the writer can touch are read bounded; installs never
//! write through a link out of the repository; secrets in a person's words
//! are redacted; `record` fails cleanly where it cannot start a thread.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::{Driven, Repo, fake_agent, text};

const CLEAN: &str = r#"{"findings":[]}"#;
/// The settings the person committed before the loop.
const BASE_SETTINGS: &str = "{\"permissions\":{\"allow\":[]}}\n";
/// What a writer plants: its own model server and a hook of its own.
const PLANTED_SETTINGS: &str = r#"{"env":{"ANTHROPIC_BASE_URL":"http://127.0.0.1:9/"},"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"touch /tmp/planted"}]}]}}"#;

/// A repository whose committed base holds `files`, with loop `l` driven by
/// the fake agent as writer and `reviewer` (a `[reviewer]` section body;
/// empty: the fake agent).
fn driven_with(files: &[(&str, &str)], reviewer: &str) -> Driven {
    let repo = Repo::new();
    repo.write("src/a.rs", "fn a() {}\n");
    for (path, body) in files {
        repo.write(path, body);
    }
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "base"]);
    let script = tempfile::tempdir().unwrap();
    let dir = script.path().display().to_string();
    let agent = fake_agent();
    let fake = format!("preset = \"command\"\ncommand = [\"{agent}\"]\n");
    let reviewer = if reviewer.is_empty() {
        fake.as_str()
    } else {
        reviewer
    };
    let contract = format!(
        "loop = \"l\"\nmax_rounds = 4\n[writer]\n{fake}env = {{ FAKE_DIR = \"{dir}\" }}\n\
         [reviewer]\n{reviewer}env = {{ FAKE_DIR = \"{dir}\" }}\n"
    );
    let path = script.path().join("contract.toml");
    std::fs::write(&path, contract).unwrap();
    repo.run(&["init", "--from", path.to_str().unwrap()])
        .assert(0, "");
    Driven { repo, script }
}

fn canon(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// The evidence file `name` of round `n` of loop `lp`, or "".
fn evidence(repo: &Repo, lp: &str, n: u32, name: &str) -> String {
    std::fs::read_to_string(repo.join(&format!(".referee/ledgers/{lp}/round-{n}/{name}")))
        .unwrap_or_default()
}

#[test]
fn the_reviewer_runs_in_a_private_checkout_with_the_bases_agent_settings() {
    let d = driven_with(&[(".claude/settings.local.json", BASE_SETTINGS)], "");
    let fake = d.script.path();
    d.file(
        "writer-1.sh",
        format!(
            "printf '%s' '{PLANTED_SETTINGS}' > .claude/settings.local.json\n\
             printf 'be nice\\n' > CLAUDE.md\n\
             echo 'fn a() {{ 1 }}' > src/a.rs\n"
        ),
    )
    .file(
        "reviewer-1.sh",
        "pwd > \"$FAKE_DIR/cwd\"\ncat .claude/settings.local.json > \"$FAKE_DIR/settings\"\n\
         cat src/a.rs > \"$FAKE_DIR/src\"\nls CLAUDE.md > \"$FAKE_DIR/claude-md\" 2>&1 || true\n",
    )
    .file("reviewer-1.print", CLEAN);
    let out = d.repo.run(&["run", "--task", "t"]);
    out.assert(0, "clean");
    let cwd = PathBuf::from(std::fs::read_to_string(fake.join("cwd")).unwrap().trim());
    // Not the work tree nor anywhere in it: the loop's anchor folder.
    assert!(
        !canon(&cwd).starts_with(canon(d.repo.path())),
        "the reviewer ran in the work tree: {}",
        cwd.display()
    );
    assert!(
        canon(&cwd).starts_with(canon(d.repo.state_dir())),
        "{}",
        cwd.display()
    );
    // The base's settings, the round's code; the writer's new CLAUDE.md is
    // left out.
    assert_eq!(
        std::fs::read_to_string(fake.join("settings")).unwrap(),
        BASE_SETTINGS
    );
    assert_eq!(
        std::fs::read_to_string(fake.join("src")).unwrap(),
        "fn a() { 1 }\n"
    );
    assert!(
        std::fs::read_to_string(fake.join("claude-md"))
            .unwrap()
            .contains("No such file"),
    );
    // The checkout is gone with the round; the patch still shows the
    // writer's settings, and the evidence names what the reviewer did not get.
    assert!(!cwd.exists(), "{} was left behind", cwd.display());
    let calls = std::fs::read_to_string(fake.join("calls.log")).unwrap();
    assert!(calls.contains("ANTHROPIC_BASE_URL"), "{calls}");
    let note = evidence(&d.repo, "l", 1, "reviewer.checkout.txt");
    assert!(
        note.contains("- `.claude/settings.local.json` (changed since the base")
            && note.contains("- `CLAUDE.md` (added since the base: left out)"),
        "{note}"
    );
}

#[test]
fn the_checkout_is_removed_when_the_reviewer_times_out() {
    let reviewer = format!(
        "preset = \"command\"\ncommand = [\"{}\"]\ntimeout = \"2s\"\n",
        fake_agent()
    );
    let d = driven_with(&[], &reviewer);
    d.file("writer-1.sh", "echo 'fn a() { 1 }' > src/a.rs\n")
        .file("reviewer-1.sh", "pwd > \"$FAKE_DIR/cwd\"\nsleep 30\n");
    let out = d.repo.run(&["run", "--task", "t"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("timed out"), "{}", out.stderr);
    let cwd = PathBuf::from(
        std::fs::read_to_string(d.script.path().join("cwd"))
            .unwrap()
            .trim(),
    );
    assert!(!cwd.exists(), "{} was left behind", cwd.display());
}

/// A Claude Code Stop payload from `repo`.
fn payload(repo: &Repo, transcript: Option<&Path>) -> String {
    json!({"session_id": "s1", "transcript_path": transcript,
           "cwd": repo.path(), "prompt_id": "p1", "permission_mode": "acceptEdits",
           "hook_event_name": "Stop", "stop_hook_active": false,
           "last_assistant_message": "Done.", "background_tasks": [], "session_crons": []})
    .to_string()
}

/// `referee hook stop` in `repo` with `input`, and `env` set.
fn stop(repo: &Repo, input: &str, env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = repo.referee();
    cmd.args(["hook", "stop"]).write_stdin(input.to_string());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        text(&out.stdout),
        text(&out.stderr),
    )
}

#[test]
fn a_claude_reviewer_starts_in_the_checkout_with_the_bases_settings() {
    let repo = Repo::new();
    repo.write(".claude/settings.local.json", BASE_SETTINGS);
    repo.write("src/a.rs", "fn a() {}\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "base"]);
    // A fake `claude` on PATH: says where it ran and what it read there.
    let bin = tempfile::tempdir().unwrap();
    let log = bin.path().join("log");
    let claude = bin.path().join("claude");
    std::fs::write(
        &claude,
        "#!/bin/sh\ncat > /dev/null\n{ pwd; cat .claude/settings.local.json; } > \"$CLAUDE_LOG\"\n\
         echo '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"\",\"structured_output\":{\"findings\":[]}}'\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    repo.referee()
        .env("PATH", &path)
        .args(["init", "--loop", "c", "--reviewer", "claude"])
        .assert()
        .success();
    // The writer plants its server and hook, and changes the code.
    repo.write(".claude/settings.local.json", PLANTED_SETTINGS);
    repo.write("src/a.rs", "fn a() { 1 }\n");
    let env = [
        ("PATH", path.as_str()),
        ("CLAUDE_LOG", log.to_str().unwrap()),
    ];
    let (code, stdout, stderr) = stop(&repo, &payload(&repo, None), &env);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("clean"), "{stdout}{stderr}");
    let seen = std::fs::read_to_string(&log).unwrap();
    let (cwd, settings) = seen.split_once('\n').unwrap();
    assert!(
        !canon(Path::new(cwd)).starts_with(canon(repo.path())),
        "claude ran in the work tree: {cwd}"
    );
    assert_eq!(settings, BASE_SETTINGS);
    assert!(!Path::new(cwd).exists(), "{cwd} was left behind");
}

/// A loop `r` whose reviewer is `sh scripts/review.sh`, the script
/// committed in the base (unless `committed` is false).
fn scripted_reviewer(committed: bool) -> Repo {
    let repo = Repo::new();
    repo.write("src/a.rs", "fn a() {}\n");
    let script = format!("cat > /dev/null\necho base > \"$REVIEW_LOG\"\necho '{CLEAN}'\n");
    if committed {
        repo.write("scripts/review.sh", &script);
    }
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "base"]);
    if !committed {
        repo.write("scripts/review.sh", &script);
    }
    repo.referee()
        .args([
            "init",
            "--loop",
            "r",
            "--reviewer-command",
            "sh scripts/review.sh",
        ])
        .assert()
        .success();
    repo
}

#[test]
fn a_repository_reviewer_script_the_writer_rewrote_runs_as_the_base_has_it() {
    let repo = scripted_reviewer(true);
    let log = tempfile::NamedTempFile::new().unwrap();
    repo.write(
        "scripts/review.sh",
        &format!("cat > /dev/null\necho planted > \"$REVIEW_LOG\"\necho '{CLEAN}'\n"),
    );
    repo.write("src/a.rs", "fn a() { 1 }\n");
    let env = [("REVIEW_LOG", log.path().to_str().unwrap())];
    let (code, stdout, stderr) = stop(&repo, &payload(&repo, None), &env);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("clean"), "{stdout}{stderr}");
    assert_eq!(std::fs::read_to_string(log.path()).unwrap(), "base\n");
    let note = evidence(&repo, "r", 1, "reviewer.checkout.txt");
    assert!(
        note.contains("- `scripts/review.sh` (changed since the base: the base's version)"),
        "{note}"
    );
}

#[test]
fn a_repository_reviewer_script_not_in_the_base_is_not_run() {
    let repo = scripted_reviewer(false);
    let log = tempfile::NamedTempFile::new().unwrap();
    repo.write("src/a.rs", "fn a() { 1 }\n");
    let env = [("REVIEW_LOG", log.path().to_str().unwrap())];
    let (code, stdout, stderr) = stop(&repo, &payload(&repo, None), &env);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("the reviewer's file `scripts/review.sh` is not in the loop's base commit"),
        "{stdout}{stderr}"
    );
    assert_eq!(std::fs::read_to_string(log.path()).unwrap(), "");
    let rows: Vec<Value> = repo.ledger_json();
    assert!(rows.is_empty(), "{rows:?}");
}

/// Runs `referee hook stop` in `repo` with `input`, killing it after
/// `limit`: its exit code (None: it hung), stdout and stderr.
fn stop_within(
    repo: &Repo,
    input: &str,
    limit: std::time::Duration,
) -> (Option<i32>, String, String) {
    let mut cmd = repo.referee_std();
    cmd.args(["hook", "stop"]);
    let mut child = crate::common::spawn_fed(&mut cmd, input.as_bytes());
    let start = std::time::Instant::now();
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if start.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let out = child.wait_with_output().unwrap();
    (code, text(&out.stdout), text(&out.stderr))
}

/// A loop whose fake reviewer finds nothing, with a change in the tree.
fn changed_loop() -> Driven {
    let d = driven_with(&[], "");
    d.file("reviewer-1.print", CLEAN);
    d.repo.write("src/a.rs", "fn a() { 1 }\n");
    d
}

#[test]
fn a_transcript_swapped_for_a_fifo_is_refused_not_waited_on() {
    let d = changed_loop();
    let outside = tempfile::tempdir().unwrap();
    let fifo = outside.path().join("session.jsonl");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let (code, stdout, stderr) = stop_within(
        &d.repo,
        &payload(&d.repo, Some(&fifo)),
        std::time::Duration::from_secs(30),
    );
    assert_eq!(code, Some(0), "the hook hung on the FIFO: {stdout}{stderr}");
    assert!(
        stderr.contains("session.jsonl` is a fifo, not a regular file"),
        "{stderr}"
    );
    assert!(stdout.contains("clean"), "{stdout}{stderr}");
    assert_eq!(d.rows(), 1);
}

#[test]
fn a_transcript_linked_to_dev_zero_is_refused_not_read() {
    let d = changed_loop();
    let outside = tempfile::tempdir().unwrap();
    let link = outside.path().join("session.jsonl");
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    let start = std::time::Instant::now();
    let (code, stdout, stderr) = stop_within(
        &d.repo,
        &payload(&d.repo, Some(&link)),
        std::time::Duration::from_secs(30),
    );
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stderr.contains("session.jsonl` is a character device, not a regular file"),
        "{stderr}"
    );
    assert!(stdout.contains("clean"), "{stdout}{stderr}");
    assert!(start.elapsed() < std::time::Duration::from_secs(20));
    let note = evidence(&d.repo, "l", 1, "hook.json");
    assert!(note.contains("\"writer_tokens\": null"), "{note}");
}

/// Every file below `dir`, with its bytes.
fn files_below(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_below(&path));
        } else {
            out.push((path.clone(), std::fs::read(&path).unwrap()));
        }
    }
    out.sort();
    out
}

#[test]
fn hook_install_and_uninstall_never_write_through_a_linked_claude_folder() {
    let repo = Repo::with_loop("l", &[]);
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("settings.json"), "{}\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), repo.join(".claude")).unwrap();
    let out = repo.run(&["hook", "install", "--agent", "claude"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains(
            "`.claude` is a symlink: referee writes no file of the repository through a link"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(
        files_below(outside.path()),
        [(outside.path().join("settings.json"), b"{}\n".to_vec())]
    );
    // Installed into a real folder, then the folder swapped for a link to
    // a copy: uninstall edits nothing outside either.
    std::fs::remove_file(repo.join(".claude")).unwrap();
    repo.run(&["hook", "install", "--agent", "claude"])
        .assert(0, "");
    let installed = std::fs::read(repo.join(".claude/settings.json")).unwrap();
    std::fs::write(outside.path().join("settings.json"), &installed).unwrap();
    std::fs::remove_dir_all(repo.join(".claude")).unwrap();
    std::os::unix::fs::symlink(outside.path(), repo.join(".claude")).unwrap();
    let out = repo.run(&["hook", "uninstall", "--agent", "claude"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("`.claude` is a symlink"),
        "{}",
        out.stderr
    );
    assert_eq!(
        files_below(outside.path()),
        [(outside.path().join("settings.json"), installed)]
    );
}

#[test]
fn skill_install_never_appends_to_an_agents_md_linked_outside() {
    let repo = Repo::new();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("AGENTS.md");
    std::fs::write(&target, "# mine\n").unwrap();
    std::os::unix::fs::symlink(&target, repo.join("AGENTS.md")).unwrap();
    let out = repo.run(&["skill", "install", "--codex"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("`AGENTS.md` is a symlink"),
        "{}",
        out.stderr
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "# mine\n");
    // The same for the Claude skill below a linked `.claude`.
    let claude = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(claude.path(), repo.join(".claude")).unwrap();
    let out = repo.run(&["skill", "install", "--claude"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("`.claude` is a symlink"),
        "{}",
        out.stderr
    );
    assert!(files_below(claude.path()).is_empty());
}

const GITHUB_TOKEN: &str = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
const AWS_SECRET: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

/// Every file below `.referee/` that holds `needle`.
fn holding(repo: &Repo, needle: &str) -> Vec<PathBuf> {
    files_below(&repo.join(".referee"))
        .into_iter()
        .filter(|(_, bytes)| String::from_utf8_lossy(bytes).contains(needle))
        .map(|(path, _)| path)
        .collect()
}

#[test]
fn secrets_in_a_persons_words_are_redacted_in_the_ledger_and_its_evidence() {
    let repo = Repo::with_loop("l", &[]);
    repo.init_loop("m", &[]);
    repo.write("src/a.rs", "fn a() {}\n");
    let key = format!("AWS_SECRET_ACCESS_KEY={AWS_SECRET}");
    let by = format!("ann {GITHUB_TOKEN}");
    let reason = format!("token {GITHUB_TOKEN} and AWS_SECRET_ACCESS_KEY={AWS_SECRET}");
    let bug = crate::common::native(&[("F1", "bug")]);
    let out = repo
        .record(&bug)
        .args(&["--loop", "l", "--idempotency-key", &key])
        .run();
    out.assert(10, "");
    // A retry with the same key is still a retry.
    let again = repo
        .record(&bug)
        .args(&["--loop", "l", "--idempotency-key", &key, "--json"])
        .run();
    assert!(
        again.stdout.contains("already_recorded"),
        "{}",
        again.stdout
    );
    for args in [
        vec![
            "waive", "--loop", "l", "F1", "--by", &by, "--reason", &reason,
        ],
        vec![
            "contract",
            "amend",
            "--loop",
            "l",
            "--max-rounds",
            "5",
            "--by",
            &by,
            "--reason",
            &reason,
        ],
    ] {
        let out = repo.run(&args);
        assert_eq!(out.code, 0, "{args:?}: {}{}", out.stdout, out.stderr);
    }
    repo.record(CLEAN).args(&["--loop", "l"]).run();
    repo.run(&["approve", "--loop", "l", "--by", &by, "--reason", &reason])
        .assert(0, "");
    repo.record(&bug)
        .args(&["--loop", "m"])
        .run()
        .assert(10, "");
    repo.run(&["reject", "--loop", "m", "--by", &by, "--reason", &reason])
        .assert(0, "");
    for secret in [GITHUB_TOKEN, AWS_SECRET] {
        assert_eq!(holding(&repo, secret), Vec::<PathBuf>::new(), "{secret}");
    }
    let ledger = std::fs::read_to_string(repo.join(".referee/ledgers/l.csv")).unwrap();
    assert!(ledger.contains("[REDACTED]"), "{ledger}");
}

#[test]
fn record_under_a_small_address_space_limit_fails_cleanly() {
    let repo = Repo::with_loop("l", &[]);
    repo.write("src/a.rs", "fn a() {}\n");
    // `referee record` as the tests run it, under `prlimit --as`.
    let referee = repo.referee_std();
    let mut cmd = std::process::Command::new("prlimit");
    cmd.arg("--as=100000000")
        .arg(referee.get_program())
        .args(["record", "--findings", "-"])
        .current_dir(repo.path());
    for (k, v) in referee.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let child = crate::common::spawn_fed(&mut cmd, CLEAN.as_bytes());
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the address-space limit (`ulimit -v`) is 95 MiB, below the 256 MiB `referee record` needs; nothing was recorded")
            && stderr.contains("hint: raise it"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(repo.ledger_json().is_empty());
}
