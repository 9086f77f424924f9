//! `referee hook stop|install|uninstall`. First the answers to stops as
//! Claude Code and Codex send them, with a scripted reviewer
//! (tests/fixtures/agents/fake-agent.sh); then the real Claude Code and
//! Codex running the installed hook in print mode against the loopback
//! mock model server (tests/mock/model_server.py), which plays the writer.
//! The real CLIs skip when missing, as in agents_real.rs
//! (`REFEREE_REQUIRE_TOOLS=1` makes that a failure).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::agents_real::{Server, codex_home, gemini_home, tool};
use crate::common::{GIT_ENV, Repo, spawn_fed, text};

const BUG: &str = r#"{"findings":[{"id":"F1","severity":"bug","title":"expired tokens pass at the boundary","file":"src/auth.rs","line":1,"body":"use now >= exp"}]}"#;
const CLEAN: &str = r#"{"findings":[],"resolved":["F1"]}"#;
const ORIGINAL: &str = "fn valid(now: u64, exp: u64) -> bool { now > exp }\n";

fn fake_agent() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agents/fake-agent.sh")
        .display()
        .to_string()
}

/// A repository whose loop `h` reviews with the scripted agent.
struct Hooked {
    repo: Repo,
    script: tempfile::TempDir,
}

impl Hooked {
    /// `extra`: TOML for the top of the contract; `reviewer`: lines for the
    /// `[reviewer]` section.
    fn new(extra: &str, reviewer: &str) -> Hooked {
        let repo = Repo::new();
        repo.write("src/auth.rs", ORIGINAL);
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "-m", "auth"]);
        let script = tempfile::tempdir().unwrap();
        let contract = format!(
            "loop = \"h\"\n{extra}\n[reviewer]\npreset = \"command\"\ncommand = [\"{}\"]\nenv = {{ FAKE_DIR = \"{}\" }}\n{reviewer}\n",
            fake_agent(),
            script.path().display()
        );
        let path = script.path().join("contract.toml");
        std::fs::write(&path, contract).unwrap();
        repo.referee()
            .args(["init", "--from", path.to_str().unwrap()])
            .assert()
            .success();
        Hooked { repo, script }
    }

    fn file(&self, name: &str, body: &str) -> &Hooked {
        std::fs::write(self.script.path().join(name), body).unwrap();
        self
    }

    /// A Claude Code Stop payload for this repository.
    fn payload(&self, session: &str, active: bool) -> Value {
        json!({"session_id": session, "transcript_path": null,
               "cwd": self.repo.path(), "prompt_id": "p1", "permission_mode": "acceptEdits",
               "hook_event_name": "Stop", "stop_hook_active": active,
               "last_assistant_message": "Done.", "background_tasks": [], "session_crons": []})
    }

    fn stop(&self, payload: &Value) -> Answered {
        stop_in(self.repo.path(), &self.repo, &payload.to_string())
    }

    fn calls(&self) -> usize {
        std::fs::read_to_string(self.script.path().join("calls.log"))
            .unwrap_or_default()
            .matches("call reviewer")
            .count()
    }

    fn rows(&self) -> Vec<Value> {
        let out = self
            .repo
            .referee()
            .args(["ledger", "show", "--json"])
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&out.stdout)
            .ok()
            .and_then(|doc| doc["rows"].as_array().cloned())
            .unwrap_or_default()
    }

    fn fix(&self, body: &str) {
        self.repo.write("src/auth.rs", body);
    }
}

/// What a stop printed.
struct Answered {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Answered {
    /// The one JSON line on stdout.
    fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("{e}: stdout {:?} stderr {}", self.stdout, self.stderr))
    }

    fn reason(&self) -> String {
        let v = self.json();
        assert_eq!(v["decision"], "block", "{v}");
        v["reason"].as_str().unwrap().to_string()
    }

    fn message(&self) -> String {
        let v = self.json();
        assert!(v.get("decision").is_none(), "{v}");
        v["systemMessage"].as_str().unwrap().to_string()
    }
}

fn stop_in(cwd: &Path, repo: &Repo, input: &str) -> Answered {
    let out = repo
        .referee()
        .current_dir(cwd)
        .args(["hook", "stop"])
        .write_stdin(input.to_string())
        .output()
        .unwrap();
    Answered {
        code: out.status.code().unwrap_or(-1),
        stdout: text(&out.stdout),
        stderr: text(&out.stderr),
    }
}

#[test]
fn no_contract_or_no_repository_lets_the_stop_through_silently() {
    let repo = Repo::new();
    repo.write("a.txt", "changed\n");
    let payload = json!({"session_id": "s", "cwd": repo.path(), "hook_event_name": "Stop",
                         "stop_hook_active": false, "prompt_id": "p"});
    let a = stop_in(repo.path(), &repo, &payload.to_string());
    assert_eq!((a.code, a.stdout.as_str(), a.stderr.as_str()), (0, "", ""));
    let outside = tempfile::tempdir().unwrap();
    let payload = json!({"cwd": outside.path(), "hook_event_name": "Stop"});
    let a = stop_in(outside.path(), &repo, &payload.to_string());
    assert_eq!((a.code, a.stdout.as_str(), a.stderr.as_str()), (0, "", ""));
}

#[test]
fn a_stop_from_a_subfolder_or_a_linked_worktree_finds_the_loop() {
    let h = Hooked::new("", "");
    h.file("reviewer-1.print", BUG);
    h.fix("fn valid(now: u64, exp: u64) -> bool { now < exp }\n");
    let src = h.repo.join("src");
    let mut payload = h.payload("s1", false);
    payload["cwd"] = json!(src);
    let a = stop_in(&src, &h.repo, &payload.to_string());
    assert!(
        a.reason().contains("- F1 [bug] src/auth.rs:1"),
        "{}",
        a.stderr
    );
    // A linked worktree has a `.git` file and no `.referee/` of its own: no loop.
    let linked = tempfile::tempdir().unwrap();
    let wt = linked.path().join("wt");
    h.repo
        .git(&["worktree", "add", "-q", wt.to_str().unwrap(), "HEAD"]);
    std::fs::write(wt.join("x.txt"), "x\n").unwrap();
    payload["cwd"] = json!(wt);
    let a = stop_in(&wt, &h.repo, &payload.to_string());
    assert_eq!((a.code, a.stdout.as_str(), a.stderr.as_str()), (0, "", ""));
    assert_eq!(h.calls(), 1);
}

#[test]
fn an_unchanged_tree_is_no_round_and_is_answered_fast() {
    let h = Hooked::new("", "");
    h.file("reviewer-1.print", BUG);
    // The hook's own settings file is no change either.
    h.repo
        .referee()
        .args(["hook", "install", "--agent", "claude"])
        .assert()
        .success();
    let started = Instant::now();
    let a = h.stop(&h.payload("s1", false));
    let took = started.elapsed();
    assert_eq!((a.code, a.stdout.as_str(), a.stderr.as_str()), (0, "", ""));
    assert_eq!(h.calls(), 0);
    assert!(h.rows().is_empty());
    eprintln!(
        "an unchanged stop took {} ms (debug build; speed is scripts/bench.sh's)",
        took.as_millis()
    );
}

#[test]
fn a_round_that_continues_blocks_with_the_findings_and_the_fix_ends_clean() {
    let h = Hooked::new("", "");
    h.file("reviewer-1.print", BUG)
        .file("reviewer-2.print", CLEAN);
    h.fix("fn valid(now: u64, exp: u64) -> bool { now < exp }\n");
    let a = h.stop(&h.payload("s1", false));
    assert_eq!(a.code, 0, "{}", a.stderr);
    let reason = a.reason();
    assert!(
        reason.starts_with("referee: loop `h`, round 1 of 3: the reviewer found 1 must-fix finding. Fix it, then end your turn"),
        "{reason}"
    );
    assert!(
        reason.contains(
            "- F1 [bug] src/auth.rs:1: expired tokens pass at the boundary\n  use now >= exp\n"
        ),
        "{reason}"
    );
    let responses = h.repo.join(".referee/ledgers/h/responses.json");
    assert!(
        reason.contains(&format!(
            "write {} before you end your turn",
            responses.display()
        )),
        "{reason}"
    );
    // The reviewer got the patch, as under `run`; the evidence keeps the payload.
    let r1 = h.repo.join(".referee/ledgers/h/round-1");
    let prompt = std::fs::read_to_string(r1.join("reviewer.prompt.md")).unwrap();
    assert!(
        prompt.contains("+fn valid(now: u64, exp: u64) -> bool { now < exp }"),
        "{prompt}"
    );
    assert!(r1.join("hook.payload.json").exists());
    assert!(r1.join("hook.json").exists());

    h.fix("fn valid(now: u64, exp: u64) -> bool { now >= exp }\n");
    let a = h.stop(&h.payload("s1", true));
    let message = a.message();
    assert!(
        message.starts_with("referee: loop `h` is done at round 2 of 3: `clean`."),
        "{message}"
    );
    assert!(
        message.contains("referee approve --loop h --by NAME"),
        "{message}"
    );
    let rows = h.rows();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1]["rule"], "clean");
    h.repo
        .referee()
        .args(["ledger", "verify"])
        .assert()
        .success();
    // Done: later stops are let through silently.
    h.fix("fn valid(now: u64, exp: u64) -> bool { exp <= now }\n");
    let a = h.stop(&h.payload("s1", false));
    assert_eq!(a.stdout, "");
    assert_eq!(h.calls(), 2);
}

/// Gemini CLI's `AfterAgent` payload (as Gemini CLI 0.61 sends it) is a
/// stop like the others: blocked with the findings, let go with the
/// verdict, the agent named in the round's evidence.
#[test]
fn a_gemini_after_agent_stop_is_refereed_like_a_stop() {
    let h = Hooked::new("", "");
    h.file("reviewer-1.print", BUG)
        .file("reviewer-2.print", CLEAN);
    let payload = |active: bool| {
        json!({"session_id": "g1", "transcript_path": null, "cwd": h.repo.path(),
               "hook_event_name": "AfterAgent", "timestamp": "2026-12-03T12:03:05.622Z",
               "prompt": "fix the expiry check", "prompt_response": "Done.",
               "stop_hook_active": active})
    };
    h.fix("fn valid(now: u64, exp: u64) -> bool { now < exp }\n");
    let reason = h.stop(&payload(false)).reason();
    assert!(
        reason.contains("- F1 [bug] src/auth.rs:1: expired tokens pass"),
        "{reason}"
    );
    let seen: Value = serde_json::from_slice(
        &std::fs::read(h.repo.join(".referee/ledgers/h/round-1/hook.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        (seen["agent"].as_str(), seen.get("host_cap")),
        (Some("gemini"), None)
    );
    h.fix("fn valid(now: u64, exp: u64) -> bool { now >= exp }\n");
    let message = h.stop(&payload(true)).message();
    assert!(
        message.starts_with("referee: loop `h` is done at round 2 of 3: `clean`."),
        "{message}"
    );
}

/// referee counts its own blocks in a row: at the stop Claude Code lets
/// through whatever the hook says (its cap spent), the person is told the
/// loop is not done, `status` says so, and a later stop that changed
/// nothing says so again; a host without a cap is blocked every time.
#[test]
fn a_hosts_spent_block_cap_is_said_not_taken_for_the_end() {
    let h = Hooked::new("max_rounds = 6", "");
    for n in 1..=5 {
        h.file(&format!("reviewer-{n}.print"), BUG);
    }
    let stop = |session: &str, active: bool, cap: &str| {
        let out = h
            .repo
            .referee()
            .args(["hook", "stop"])
            .env("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", cap)
            .write_stdin(h.payload(session, active).to_string())
            .output()
            .unwrap();
        Answered {
            code: out.status.code().unwrap_or(-1),
            stdout: text(&out.stdout),
            stderr: text(&out.stderr),
        }
    };
    h.fix("fn valid(now: u64, exp: u64) -> bool { now < exp }\n");
    stop("s1", false, "2").reason();
    h.fix("fn valid(now: u64, exp: u64) -> bool { now < exp + 1 }\n");
    stop("s1", true, "2").reason();
    h.fix("fn valid(now: u64, exp: u64) -> bool { now < exp + 2 }\n");
    // The third stop in a row: Claude Code honours 2 blocks, so this one
    // goes through whatever the answer; the person hears why.
    let told = stop("s1", true, "2").message();
    assert!(
        told.starts_with("referee: the agent host ends this turn whatever the hook answers: it honours 2 blocked stops in a row"),
        "{told}"
    );
    assert!(told.contains("Loop `h` is NOT done."), "{told}");
    assert!(
        told.contains("- F1 [bug] src/auth.rs:1: expired tokens pass"),
        "{told}"
    );
    let status = h.repo.run(&["status", "--loop", "h"]);
    assert!(
        status.stdout.contains("next: the agent's turn ended at the host's cap of 2 blocked stops in a row with F1 open: the loop is not done"),
        "{}",
        status.stdout
    );
    let json = h.repo.run(&["status", "--loop", "h", "--json"]);
    assert!(
        json.stdout.contains("\"ended_at_host_cap\": 2"),
        "{}",
        json.stdout
    );
    // A new turn that changed nothing: not silence.
    let again = stop("s1", false, "2").message();
    assert!(again.starts_with("referee: loop `h` is not done: round 3 asked for fixes, and the turn ended at the host's cap of 2 blocked stops in a row"), "{again}");
    // A new turn with a change: blocked again, the count started over.
    h.fix("fn valid(now: u64, exp: u64) -> bool { now < exp + 3 }\n");
    stop("s1", false, "2").reason();
    // No cap (0): every stop is blocked while the loop asks for fixes.
    h.fix("fn valid(now: u64, exp: u64) -> bool { now < exp + 4 }\n");
    stop("s1", true, "0").reason();
    assert_eq!(h.rows().len(), 5);
}

#[test]
fn the_round_cap_lets_the_stop_through_with_the_hand_off() {
    let h = Hooked::new("max_rounds = 2", "");
    h.file("reviewer-1.print", BUG)
        .file("reviewer-2.print", BUG);
    h.fix("fn valid(now: u64, exp: u64) -> bool { now < exp }\n");
    h.stop(&h.payload("s1", false)).reason();
    h.fix("fn valid(now: u64, exp: u64) -> bool { now <= exp + 1 }\n");
    let message = h.stop(&h.payload("s1", true)).message();
    assert!(
        message.starts_with(
            "referee: loop `h` stopped at round 2 of 2 on `round-cap`: a person decides now."
        ),
        "{message}"
    );
    assert!(
        message.contains("finding: expired tokens pass at the boundary [F1 bug] (`src/auth.rs:1`)\nreviewer says: use now >= exp\nwriter says: (no response)\n"),
        "{message}"
    );
    assert!(
        message.ends_with("The whole hand-off: `referee escalate --loop h`"),
        "{message}"
    );
}

#[test]
fn a_failed_or_timed_out_reviewer_records_nothing_and_lets_the_stop_through() {
    let h = Hooked::new("", "timeout = \"1s\"");
    h.file("reviewer-1.sh", "echo 'no review today' >&2; exit 3\n");
    h.fix("fn valid(now: u64, exp: u64) -> bool { now < exp }\n");
    let a = h.stop(&h.payload("s1", false));
    assert_eq!(a.code, 0);
    let message = a.message();
    assert!(
        message.starts_with("referee: this stop was not refereed: loop `h`: round 1: reviewer `command` failed: exited with status 3"),
        "{message}"
    );
    assert!(message.contains("evidence: `"), "{message}");
    assert!(
        message.contains(".referee/ledgers/h/failed/round-1-reviewer-"),
        "{message}"
    );
    assert!(h.rows().is_empty());

    // A reviewer that hangs is killed at the contract's timeout.
    h.file("reviewer-1.sh", "sleep 30\n");
    let started = Instant::now();
    let message = h.stop(&h.payload("s1", false)).message();
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(message.contains("timed out"), "{message}");
    assert!(h.rows().is_empty());

    // A reviewer that prints no review is no round either.
    h.file("reviewer-1.sh", "")
        .file("reviewer-1.print", "looks fine\n");
    let message = h.stop(&h.payload("s1", false)).message();
    assert!(message.contains("gave no readable review"), "{message}");
    assert!(h.rows().is_empty());
}

#[test]
fn a_malformed_payload_is_named_on_stderr_and_the_stop_goes_through() {
    let repo = Repo::new();
    for input in ["", "not json", "[1, 2]", "{\"session_id\": \"s\"}"] {
        let a = stop_in(repo.path(), &repo, input);
        assert_eq!(a.code, 0, "{input}");
        assert_eq!(a.stdout, "", "{input}");
        assert!(
            a.stderr.starts_with("referee hook stop: the payload"),
            "{input}: {}",
            a.stderr
        );
        assert!(a.stderr.contains("the stop is allowed"), "{}", a.stderr);
    }
}

#[test]
fn a_writer_blocked_here_that_changes_nothing_stalls_unless_it_disputes() {
    let h = Hooked::new("", "");
    h.file("reviewer-1.print", BUG)
        .file("reviewer-2.print", BUG);
    h.fix("fn valid(now: u64, exp: u64) -> bool { now < exp }\n");
    h.stop(&h.payload("s1", false)).reason();
    // A new turn (the person asks a question): no change, no round.
    assert_eq!(h.stop(&h.payload("s2", false)).stdout, "");
    assert_eq!(h.stop(&h.payload("s1", false)).stdout, "");
    // The blocked writer disputes instead of fixing: a round, reviewed.
    let responses = h.repo.join(".referee/ledgers/h/responses.json");
    std::fs::write(
        &responses,
        r#"{"responses": [{"id": "F1", "status": "disputed", "note": "exp is exclusive by spec"}]}"#,
    )
    .unwrap();
    let message = h.stop(&h.payload("s1", true)).message();
    assert!(
        message.starts_with("referee: loop `h` stopped at round 2 of 3 on `disputed`"),
        "{message}"
    );
    assert!(
        message.contains("writer says: disputed: exp is exclusive by spec"),
        "{message}"
    );
    assert!(!responses.exists(), "the responses went into the round");
    assert!(
        h.repo
            .join(".referee/ledgers/h/round-2/responses.json")
            .exists()
    );
    assert_eq!(h.calls(), 2);
}

#[test]
fn a_writer_blocked_here_that_changes_nothing_and_says_nothing_is_stalled() {
    let h = Hooked::new("", "");
    h.file("reviewer-1.print", BUG);
    h.fix("fn valid(now: u64, exp: u64) -> bool { now < exp }\n");
    h.stop(&h.payload("s1", false)).reason();
    let message = h.stop(&h.payload("s1", true)).message();
    assert!(
        message.starts_with("referee: loop `h` stopped at round 2 of 3 on `stalled`"),
        "{message}"
    );
    assert_eq!(h.calls(), 1, "no review of an unchanged tree");
}

#[test]
fn two_stops_at_once_record_one_round_and_answer_alike() {
    let h = Hooked::new("", "");
    h.file("reviewer-1.sh", "sleep 2\n")
        .file("reviewer-1.print", BUG);
    h.fix("fn valid(now: u64, exp: u64) -> bool { now < exp }\n");
    let input = h.payload("s1", false).to_string();
    let spawn = || {
        let mut cmd = h.repo.referee_std();
        cmd.args(["hook", "stop"]);
        spawn_fed(&mut cmd, input.as_bytes())
    };
    let first = spawn();
    std::thread::sleep(Duration::from_millis(300));
    let second = spawn();
    let a = first.wait_with_output().unwrap();
    let b = second.wait_with_output().unwrap();
    assert_eq!(h.rows().len(), 1);
    assert_eq!(h.calls(), 1);
    let (a, b) = (text(&a.stdout), text(&b.stdout));
    assert!(a.contains("\"decision\":\"block\""), "{a}");
    assert_eq!(a, b);
}

#[test]
fn a_stop_while_referee_run_drives_the_loop_is_refused_at_once() {
    let writer = format!(
        "[writer]\npreset = \"command\"\ncommand = [\"{}\"]\n",
        fake_agent()
    );
    let h = Hooked::new(&writer, "");
    // The writer section reads FAKE_DIR from the environment here.
    h.file("writer-1.sh", "sleep 4\n");
    let mut run = h
        .repo
        .referee_std()
        .args(["run", "--task", "t", "--quiet"])
        .env("FAKE_DIR", h.script.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !std::fs::read_to_string(h.repo.anchor("h").join("run.lock"))
        .is_ok_and(|t| t.starts_with("referee run"))
    {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "run never took the lock (a hang guard, not a speed check)"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    h.fix("fn valid(now: u64, exp: u64) -> bool { now < exp }\n");
    let message = h.stop(&h.payload("s1", false)).message();
    // Refused while `run` still drives the loop, not after waiting for it.
    assert!(run.try_wait().unwrap().is_none(), "the stop waited for run");
    assert!(
        message.starts_with(&format!(
            "referee: loop `h` is busy: `referee run` (pid {}",
            run.id()
        )),
        "{message}"
    );
    assert!(message.ends_with("this stop was not refereed"), "{message}");
    let _ = run.wait();
}

#[test]
fn the_writers_tokens_come_from_its_transcript_once() {
    let h = Hooked::new("", "");
    h.file("reviewer-1.print", BUG)
        .file("reviewer-2.print", CLEAN);
    let transcript = h.script.path().join("session.jsonl");
    let turn = |id: &str, input: u64| {
        format!(
            "{{\"type\":\"assistant\",\"message\":{{\"id\":\"{id}\",\"usage\":{{\"input_tokens\":{input},\"output_tokens\":10}}}}}}\n"
        )
    };
    std::fs::write(
        &transcript,
        format!(
            "{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"make expiry inclusive\"}}}}\n{}{}",
            turn("m1", 1000),
            turn("m1", 1000)
        ),
    )
    .unwrap();
    let mut payload = h.payload("s1", false);
    payload["transcript_path"] = json!(transcript);
    h.fix("fn valid(now: u64, exp: u64) -> bool { now < exp }\n");
    h.stop(&payload).reason();
    let mut more = std::fs::read_to_string(&transcript).unwrap();
    more.push_str(&turn("m2", 2000));
    std::fs::write(&transcript, more).unwrap();
    h.fix("fn valid(now: u64, exp: u64) -> bool { now >= exp }\n");
    payload["stop_hook_active"] = json!(true);
    h.stop(&payload).message();
    let rows = h.rows();
    assert_eq!(rows[0]["tokens"], 1010);
    assert_eq!(rows[1]["tokens"], 2010);
    // The reviewer read the person's request as the task.
    let prompt =
        std::fs::read_to_string(h.repo.join(".referee/ledgers/h/round-1/reviewer.prompt.md"))
            .unwrap();
    assert!(prompt.contains("make expiry inclusive"), "{prompt}");
}

#[test]
fn a_contract_without_a_reviewer_is_said_once_there_is_a_change() {
    let repo = Repo::new();
    repo.referee()
        .args(["init", "--loop", "n"])
        .assert()
        .success();
    let out = repo
        .referee()
        .args(["hook", "install", "--agent", "claude"])
        .output()
        .unwrap();
    assert!(
        text(&out.stdout).contains("warning: loop `n` has no `[reviewer]`"),
        "{}",
        text(&out.stdout)
    );
    let payload = json!({"session_id": "s", "cwd": repo.path(), "hook_event_name": "Stop",
                         "stop_hook_active": false, "prompt_id": "p"});
    assert_eq!(stop_in(repo.path(), &repo, &payload.to_string()).stdout, "");
    repo.write("a.txt", "new\n");
    let a = stop_in(repo.path(), &repo, &payload.to_string());
    assert!(
        a.message().contains("loop `n` has no `[reviewer]`"),
        "{}",
        a.stdout
    );
}

#[test]
fn the_installed_settings_are_not_part_of_the_patch_or_the_scope() {
    let h = Hooked::new("scope = [\"src/**\"]", "");
    h.file("reviewer-1.print", CLEAN);
    // A settings file the project already tracks, and one it does not.
    h.repo
        .write(".claude/settings.json", "{\"model\": \"opus\"}\n");
    h.repo.git(&["add", "-A"]);
    h.repo.git(&["commit", "-q", "-m", "settings"]);
    for agent in ["claude", "codex"] {
        h.repo
            .referee()
            .args(["hook", "install", "--agent", agent])
            .assert()
            .success();
    }
    h.fix("fn valid(now: u64, exp: u64) -> bool { now >= exp }\n");
    let message = h.stop(&h.payload("s1", false)).message();
    assert!(message.contains("`clean`"), "{message}");
    let patch =
        std::fs::read_to_string(h.repo.join(".referee/ledgers/h/round-1/patch.diff")).unwrap();
    assert!(patch.contains("src/auth.rs"), "{patch}");
    assert!(!patch.contains(".claude"), "{patch}");
    assert!(!patch.contains(".codex"), "{patch}");
}

#[test]
fn install_merges_into_existing_settings_and_uninstall_restores_the_bytes() {
    let h = Hooked::new("max_rounds = 12", "timeout = \"10m\"");
    // Hand-formatted, with the person's own hooks and settings.
    let original = "{\n    \"permissions\": { \"allow\": [\"Bash(cargo test:*)\"] },\n    \"hooks\": {\n        \"Stop\": [\n            { \"hooks\": [ { \"type\": \"command\", \"command\": \"notify-send done\" } ] }\n        ]\n    },\n    \"env\": { \"RUST_LOG\": \"info\" }\n}\n";
    h.repo.write(".claude/settings.json", original);
    let out = h
        .repo
        .referee()
        .args(["hook", "install", "--agent", "claude", "--loop", "h"])
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.starts_with("updated `.claude/settings.json`: Stop hook `"),
        "{stdout}"
    );
    // The project is named, so the hook finds its loop wherever the
    // agent's shell goes.
    assert!(
        stdout.contains(" hook stop --agent claude --project /"),
        "{stdout}"
    );
    assert!(stdout.contains(" --loop h` (timeout 900 s"), "{stdout}");
    assert!(
        stdout.contains("set `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP` to 12 in its `env`"),
        "{stdout}"
    );
    let installed = h.repo.read(".claude/settings.json");
    // Every byte before the new entries is the person's; the deny rules go
    // after their allow rules.
    assert!(
        installed.starts_with(
            "{\n    \"permissions\": { \"allow\": [\"Bash(cargo test:*)\"], \"deny\": ["
        ),
        "{installed}"
    );
    assert!(
        installed.contains(
            "\n    \"hooks\": {\n        \"Stop\": [\n            { \"hooks\": [ { \"type\": \"command\", \"command\": \"notify-send done\" } ] },\n            {\n"
        ),
        "{installed}"
    );
    let value: Value = serde_json::from_str(&installed).unwrap();
    assert_eq!(
        value["hooks"]["Stop"][0]["hooks"][0]["command"],
        "notify-send done"
    );
    let ours = &value["hooks"]["Stop"][1]["hooks"][0];
    assert_eq!(ours["type"], "command");
    assert_eq!(ours["timeout"], 900);
    assert!(ours["command"].as_str().unwrap().ends_with(&format!(
        " hook stop --agent claude --project {} --loop h",
        h.repo.path().canonicalize().unwrap().display()
    )));
    assert_eq!(value["env"]["RUST_LOG"], "info");
    assert_eq!(value["env"]["CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"], "12");

    // Again: nothing changes.
    let out = h
        .repo
        .referee()
        .args(["hook", "install", "--agent", "claude", "--loop", "h"])
        .output()
        .unwrap();
    assert!(text(&out.stdout).starts_with("unchanged `.claude/settings.json`"));
    assert_eq!(h.repo.read(".claude/settings.json"), installed);

    h.repo
        .referee()
        .args(["hook", "uninstall", "--agent", "claude"])
        .assert()
        .success()
        .stdout("updated `.claude/settings.json`: referee's Stop hook is out\n");
    assert_eq!(h.repo.read(".claude/settings.json"), original);
    assert!(!h.repo.join(".referee/hooks/claude.json").exists());
}

#[test]
fn uninstall_after_the_person_edited_the_file_takes_out_only_the_entry() {
    let repo = Repo::new();
    repo.referee()
        .args(["init", "--loop", "n"])
        .assert()
        .success();
    repo.referee()
        .args(["hook", "install", "--agent", "codex"])
        .assert()
        .success();
    let installed = repo.read(".codex/hooks.json");
    let mut value: Value = serde_json::from_str(&installed).unwrap();
    value["hooks"]["PostToolUse"] = json!([{"hooks": [{"type": "command", "command": "fmt.sh"}]}]);
    repo.write(
        ".codex/hooks.json",
        &serde_json::to_string_pretty(&value).unwrap(),
    );
    repo.referee()
        .args(["hook", "uninstall", "--agent", "codex"])
        .assert()
        .success();
    let left: Value = serde_json::from_str(&repo.read(".codex/hooks.json")).unwrap();
    assert_eq!(
        left,
        json!({"hooks": {"PostToolUse": [{"hooks": [{"type": "command", "command": "fmt.sh"}]}]}})
    );
}

#[test]
fn install_into_a_fresh_project_and_uninstall_leave_nothing_behind() {
    let repo = Repo::new();
    repo.referee()
        .args(["init", "--loop", "n", "--reviewer", "codex"])
        .assert()
        .success();
    let out = repo
        .referee()
        .args([
            "hook",
            "install",
            "--agent",
            "codex",
            "--program",
            "referee",
        ])
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with(
            "created `.codex/hooks.json`: Stop hook `referee hook stop --agent codex --project /"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("` (timeout 2100 s"), "{stdout}");
    // The trust Codex asks for, plainly.
    let repo_path = repo.path().display().to_string();
    for line in [
        "Codex runs a project's hook only in a trusted project, and only once you trust the hook itself;",
        "until then it skips the hook without a word.",
        &format!("[projects.\"{repo_path}\"]"),
        "trust_level = \"trusted\"",
        "(`codex exec --trust …` does it without asking)",
        "open `/hooks`, review referee's Stop hook and trust it.",
        "`codex exec --dangerously-bypass-hook-trust …`",
    ] {
        assert!(stdout.contains(line), "{line} in:\n{stdout}");
    }
    let value: Value = serde_json::from_str(&repo.read(".codex/hooks.json")).unwrap();
    assert_eq!(
        value,
        json!({"hooks": {"Stop": [{"hooks": [{"type": "command",
               "command": format!("referee hook stop --agent codex --project {repo_path}"),
               "timeout": 2100}]}]}})
    );
    repo.referee()
        .args(["hook", "uninstall", "--agent", "codex"])
        .assert()
        .success()
        .stdout(
            "removed `.codex/hooks.json`: the install had created it\n\
             removed `.codex/config.toml`: the install had created it\n",
        );
    assert!(!repo.join(".codex").exists());
    assert_eq!(repo.git(&["status", "--short", "--", ".codex"]), "");
}

#[test]
fn gemini_gets_an_after_agent_hook_and_the_trust_it_needs_said() {
    let repo = Repo::new();
    repo.referee()
        .args(["init", "--loop", "n", "--reviewer", "codex"])
        .assert()
        .success();
    let out = repo
        .referee()
        .args([
            "hook",
            "install",
            "--agent",
            "gemini",
            "--program",
            "referee",
        ])
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with(
            "created `.gemini/settings.json`: AfterAgent hook `referee hook stop --agent gemini --project /"
        ),
        "{stdout}"
    );
    let repo_path = repo.path().display().to_string();
    for line in [
        "it prints a warning naming the project hook `referee` and runs it.",
        "~/.gemini/trustedFolders.json",
        &format!("{{\"{repo_path}\": \"TRUST_FOLDER\"}}"),
        "Gemini has no block cap: the loop's `max_rounds` ends it.",
    ] {
        assert!(stdout.contains(line), "{line} in:\n{stdout}");
    }
    let value: Value = serde_json::from_str(&repo.read(".gemini/settings.json")).unwrap();
    assert_eq!(
        value,
        json!({"hooks": {"AfterAgent": [{"hooks": [{"type": "command", "name": "referee",
               "command": format!("referee hook stop --agent gemini --project {repo_path}"),
               "timeout": 2_100_000}]}]}})
    );
    repo.referee()
        .args(["hook", "uninstall", "--agent", "gemini"])
        .assert()
        .success()
        .stdout("removed `.gemini/settings.json`: the install had created it\n");
    assert!(!repo.join(".gemini").exists());
    assert_eq!(repo.git(&["status", "--short", "--", ".gemini"]), "");
}

// ---- the real CLIs

/// Runs `cmd` with `input` on stdin, killing it (by its pid) past `limit`.
pub(crate) fn run_limited(mut cmd: Command, input: &str, limit: Duration) -> Output {
    let mut child = spawn_fed(&mut cmd, input.as_bytes());
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "timed out after {limit:?}\nstdout:\n{}\nstderr:\n{}",
                text(&out.stdout),
                text(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.wait_with_output().unwrap()
}

/// A repository with a loop reviewed by the scripted agent and the hook
/// installed for `agent`.
fn hooked_for(agent: &str, max_rounds: u32, reviews: &[&str]) -> Hooked {
    let h = Hooked::new(&format!("max_rounds = {max_rounds}"), "timeout = \"1m\"");
    for (i, review) in reviews.iter().enumerate() {
        h.file(&format!("reviewer-{}.print", i + 1), review);
    }
    h.repo
        .referee()
        .args(["hook", "install", "--agent", agent])
        .assert()
        .success();
    h
}

/// Claude Code in print mode in `repo`, against the mock on `port`; its
/// hooks keep their anchors where this test's own referee calls do.
pub(crate) fn claude_command(claude: &Path, home: &Path, port: u16, repo: &Repo) -> Command {
    let state = repo.state_dir();
    let repo = repo.path();
    std::fs::create_dir_all(home.join("claude")).unwrap();
    let mut cmd = Command::new(claude);
    cmd.args([
        "-p",
        "--output-format",
        "json",
        "--permission-mode",
        "acceptEdits",
        "--model",
        "claude-sonnet-4-5",
    ])
    .current_dir(repo)
    .envs(GIT_ENV.iter().copied())
    .env("HOME", home)
    .env("CLAUDE_CONFIG_DIR", home.join("claude"))
    .env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{port}"))
    .env("ANTHROPIC_API_KEY", "dummy")
    .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
    .env("DISABLE_AUTOUPDATER", "1")
    .env("DISABLE_TELEMETRY", "1")
    .env("DISABLE_ERROR_REPORTING", "1")
    .env("CLAUDE_CODE_MAX_RETRIES", "0")
    .env("REFEREE_STATE_DIR", state)
    .env_remove("REFEREE_DIR")
    .env("NO_COLOR", "1");
    cmd
}

/// The Claude Code writer's turns: read and edit the file, stop; after the
/// block, edit again (`second`) and stop.
fn claude_writer(auth: &str, second: &str) -> Value {
    json!([
        {"text": "Reading the check.", "tool_use": {"name": "Read", "input": {"file_path": auth}}},
        {"tool_use": {"name": "Edit", "input": {"file_path": auth,
            "old_string": "now > exp", "new_string": "now < exp"}}},
        {"text": "Done."},
        // The block's own words: Claude Code 2.1.197 hands them over as a
        // user message (`Stop hook feedback:`), 2.1.332 as a system one
        // (`Stop hook blocking error from command: …`).
        {"match": "must-fix finding", "tool_use": {"name": "Edit", "input": {"file_path": auth,
            "old_string": "now < exp", "new_string": second}}},
        {"text": "Fixed."}
    ])
}

/// The transcript entries Claude Code wrote for what hooks told the person.
fn claude_system_messages(home: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![home.join("claude/projects")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                for line in std::fs::read_to_string(&path).unwrap_or_default().lines() {
                    let Ok(v) = serde_json::from_str::<Value>(line) else {
                        continue;
                    };
                    if v["attachment"]["type"] == "hook_system_message" {
                        out.push(
                            v["attachment"]["content"]
                                .as_str()
                                .unwrap_or("")
                                .to_string(),
                        );
                    }
                }
            }
        }
    }
    out
}

#[test]
fn claude_code_is_refereed_by_its_stop_hook() {
    if let Some(claude) = tool("claude") {
        refereed_by_the_stop_hook(&claude);
    }
}

/// The same on the latest Claude Code (`REFEREE_TEST_CLAUDE_LATEST`, which
/// `.ci/run` installs), so that a change of the host shows here first.
#[test]
fn the_latest_claude_code_is_refereed_by_its_stop_hook() {
    if let Some(claude) = tool("claude_latest") {
        refereed_by_the_stop_hook(&claude);
    }
}

fn refereed_by_the_stop_hook(claude: &Path) {
    let h = hooked_for("claude", 3, &[BUG, CLEAN]);
    let home = tempfile::tempdir().unwrap();
    let auth = h.repo.join("src/auth.rs").display().to_string();
    let server = Server::start(
        home.path(),
        &json!({"usage": {"input_tokens": 1000, "output_tokens": 100},
                "anthropic": claude_writer(&auth, "now >= exp")}),
    );
    let out = run_limited(
        claude_command(claude, home.path(), server.port, &h.repo),
        "fix the expiry check in src/auth.rs\n",
        Duration::from_secs(180),
    );
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "stdout:\n{stdout}\nstderr:\n{}",
        text(&out.stderr)
    );
    let result: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(result["result"], "Fixed.", "{result}");
    assert_eq!(
        h.repo.read("src/auth.rs"),
        "fn valid(now: u64, exp: u64) -> bool { now >= exp }\n"
    );

    // The block reached the model, findings and all.
    let bodies = server.bodies("/v1/messages");
    let fed = bodies
        .iter()
        .position(|b| b.to_string().contains("must-fix finding"))
        .expect("a request carries the hook's reason");
    let body = bodies[fed].to_string();
    assert!(
        body.contains("- F1 [bug] src/auth.rs:1: expired tokens pass at the boundary"),
        "{body}"
    );
    assert!(body.contains("responses.json"), "{body}");

    // Two rounds, clean, a chain that verifies, and the writer's tokens.
    let rows = h.rows();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0]["verdict"], "continue");
    assert_eq!(rows[1]["rule"], "clean");
    assert!(rows[0]["tokens"].as_u64().unwrap() > 0, "{}", rows[0]);
    h.repo
        .referee()
        .args(["ledger", "verify"])
        .assert()
        .success();
    let seen: Value = serde_json::from_slice(
        &std::fs::read(h.repo.join(".referee/ledgers/h/round-1/hook.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(seen["agent"], "claude", "{seen}");
    // The person was told the verdict when the stop went through.
    let told = claude_system_messages(home.path());
    assert!(
        told.iter()
            .any(|m| m.starts_with("referee: loop `h` is done at round 2 of 3: `clean`.")),
        "{told:?}"
    );
    // The settings file the hook lives in is in no patch.
    let patch =
        std::fs::read_to_string(h.repo.join(".referee/ledgers/h/round-1/patch.diff")).unwrap();
    assert!(!patch.contains(".claude"), "{patch}");
}

#[test]
fn claude_code_stopped_at_the_round_cap_tells_the_hand_off() {
    if let Some(claude) = tool("claude") {
        stopped_at_the_round_cap(&claude);
    }
}

#[test]
fn the_latest_claude_code_stopped_at_the_round_cap_tells_the_hand_off() {
    if let Some(claude) = tool("claude_latest") {
        stopped_at_the_round_cap(&claude);
    }
}

fn stopped_at_the_round_cap(claude: &Path) {
    let h = hooked_for("claude", 2, &[BUG, BUG]);
    let home = tempfile::tempdir().unwrap();
    let auth = h.repo.join("src/auth.rs").display().to_string();
    let server = Server::start(
        home.path(),
        &json!({"anthropic": claude_writer(&auth, "now <= exp + 1")}),
    );
    let out = run_limited(
        claude_command(claude, home.path(), server.port, &h.repo),
        "fix the expiry check in src/auth.rs\n",
        Duration::from_secs(180),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rows = h.rows();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[1]["rule"], "round-cap");
    let told = claude_system_messages(home.path());
    let handoff = told
        .iter()
        .find(|m| m.contains("on `round-cap`"))
        .unwrap_or_else(|| panic!("{told:?}"));
    assert!(
        handoff.starts_with(
            "referee: loop `h` stopped at round 2 of 2 on `round-cap`: a person decides now."
        ),
        "{handoff}"
    );
    assert!(
        handoff.contains("finding: expired tokens pass at the boundary [F1 bug] (`src/auth.rs:1`)\nreviewer says: use now >= exp\n"),
        "{handoff}"
    );
    assert!(
        handoff.ends_with("`referee escalate --loop h`"),
        "{handoff}"
    );
    // One model turn per scripted reply: the stop was let through.
    assert_eq!(server.bodies("/v1/messages").len(), 5);
}

/// Gemini CLI in headless mode in `repo`, against the mock on `port`. The
/// person trusted the folder as docs/hooks.md says (`trustedFolders.json`):
/// Gemini reads no project settings, hooks included, in a folder it does
/// not trust, and `--skip-trust` runs it there without them.
fn gemini_command(gemini: &Path, home: &Path, port: u16, repo: &Repo) -> Command {
    gemini_home(home);
    std::fs::write(
        home.join(".gemini/trustedFolders.json"),
        json!({ repo.path().display().to_string(): "TRUST_FOLDER" }).to_string(),
    )
    .unwrap();
    let mut cmd = Command::new(gemini);
    cmd.args([
        "-p",
        "Follow the instructions given on standard input.",
        "--output-format",
        "json",
        "--approval-mode",
        "auto_edit",
        "-m",
        "gemini-2.5-pro",
    ])
    .current_dir(repo.path())
    .envs(GIT_ENV.iter().copied())
    .env("HOME", home)
    .env("TMPDIR", home.join("tmp"))
    .env("GOOGLE_GEMINI_BASE_URL", format!("http://127.0.0.1:{port}"))
    .env("GEMINI_API_KEY", "dummy")
    .env("REFEREE_STATE_DIR", repo.state_dir())
    .env_remove("REFEREE_DIR")
    .env("NO_COLOR", "1");
    cmd
}

/// The Gemini writer's turns: edit, stop; after the block (the reason
/// comes back as a user message), edit again (`second`) and stop.
fn gemini_writer(auth: &str, second: &str) -> Value {
    json!([
        {"text": "Fixing the check.", "function_call": {"name": "replace", "args": {
            "file_path": auth, "old_string": "now > exp", "new_string": "now < exp",
            "instruction": "flip the comparison"}}},
        {"text": "Done."},
        {"match": "must-fix finding", "function_call": {"name": "replace", "args": {
            "file_path": auth, "old_string": "now < exp", "new_string": second,
            "instruction": "the review's fix"}}},
        {"text": "Fixed."}
    ])
}

#[test]
fn gemini_cli_is_refereed_by_its_after_agent_hook() {
    let Some(gemini) = tool("gemini") else {
        return;
    };
    let h = hooked_for("gemini", 3, &[BUG, CLEAN]);
    let home = tempfile::tempdir().unwrap();
    let auth = h.repo.join("src/auth.rs").display().to_string();
    let server = Server::start(
        home.path(),
        &json!({"usage": {"input_tokens": 1000, "output_tokens": 100},
                "gemini": gemini_writer(&auth, "now >= exp")}),
    );
    let out = run_limited(
        gemini_command(&gemini, home.path(), server.port, &h.repo),
        "fix the expiry check in src/auth.rs\n",
        Duration::from_secs(180),
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert_eq!(
        h.repo.read("src/auth.rs"),
        "fn valid(now: u64, exp: u64) -> bool { now >= exp }\n"
    );
    // The block reached the model as a user message, findings and all.
    let bodies = server.bodies("/v1beta/models");
    let fed = bodies
        .iter()
        .find(|b| b.to_string().contains("must-fix finding"))
        .expect("a request carries the hook's reason");
    let turns = fed["contents"].as_array().unwrap();
    let last = turns.last().unwrap();
    assert_eq!(last["role"], "user", "{last}");
    assert!(
        last.to_string()
            .contains("- F1 [bug] src/auth.rs:1: expired tokens pass at the boundary"),
        "{last}"
    );
    // Two rounds, clean, the writer's tokens from Gemini's transcript, and
    // the person's request as the task.
    let rows = h.rows();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0]["verdict"], "continue");
    assert_eq!(rows[1]["rule"], "clean");
    assert_eq!(rows[0]["tokens"].as_u64(), Some(2200), "{}", rows[0]);
    let r1 = h.repo.join(".referee/ledgers/h/round-1");
    let seen: Value =
        serde_json::from_slice(&std::fs::read(r1.join("hook.json")).unwrap()).unwrap();
    assert_eq!(seen["agent"], "gemini", "{seen}");
    let task = std::fs::read_to_string(r1.join("task.md")).unwrap();
    assert!(
        task.contains("fix the expiry check in src/auth.rs"),
        "{task}"
    );
    // The person was told the verdict when the stop went through.
    assert!(
        stderr.contains("referee: loop `h` is done at round 2 of 3: `clean`."),
        "{stderr}"
    );
    h.repo
        .referee()
        .args(["ledger", "verify"])
        .assert()
        .success();
}

/// Gemini has no cap of blocks: the loop's round cap ends it, and the
/// hand-off reaches the person.
#[test]
fn gemini_cli_stopped_at_the_round_cap_tells_the_hand_off() {
    let Some(gemini) = tool("gemini") else {
        return;
    };
    let h = hooked_for("gemini", 2, &[BUG, BUG]);
    let home = tempfile::tempdir().unwrap();
    let auth = h.repo.join("src/auth.rs").display().to_string();
    let server = Server::start(
        home.path(),
        &json!({"gemini": gemini_writer(&auth, "now <= exp + 1")}),
    );
    let out = run_limited(
        gemini_command(&gemini, home.path(), server.port, &h.repo),
        "fix the expiry check in src/auth.rs\n",
        Duration::from_secs(180),
    );
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let rows = h.rows();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[1]["rule"], "round-cap");
    assert!(
        stderr.contains(
            "referee: loop `h` stopped at round 2 of 2 on `round-cap`: a person decides now."
        ),
        "{stderr}"
    );
    assert!(stderr.contains("`referee escalate --loop h`"), "{stderr}");
    // One model turn per scripted reply: the stop was let through.
    assert_eq!(
        server
            .bodies("/v1beta/models")
            .iter()
            .filter(|b| b.get("tools").is_some())
            .count(),
        4
    );
}

fn codex_command(codex: &Path, home: &Path, repo: &Repo, bypass: bool) -> Command {
    codex_command_in(codex, home, repo, bypass, Some("workspace-write"))
}

/// `codex exec` in `repo` with `-s SANDBOX`, or with none (its config's
/// permission profile decides).
fn codex_command_in(
    codex: &Path,
    home: &Path,
    repo: &Repo,
    bypass: bool,
    sandbox: Option<&str>,
) -> Command {
    let state = repo.state_dir();
    let repo = repo.path();
    let mut cmd = Command::new(codex);
    cmd.args(["exec", "--json"]);
    if let Some(sandbox) = sandbox {
        cmd.args(["--sandbox", sandbox]);
    }
    cmd.args(["-m", "gpt-5.5"]);
    if bypass {
        cmd.arg("--dangerously-bypass-hook-trust");
    }
    cmd.arg("-C")
        .arg(repo)
        .arg("-")
        .current_dir(repo)
        .envs(GIT_ENV.iter().copied())
        .env("HOME", home)
        .env("CODEX_HOME", home.join("codex"))
        .env("MOCK_API_KEY", "dummy")
        .env("REFEREE_STATE_DIR", state)
        .env_remove("REFEREE_DIR")
        .env("NO_COLOR", "1");
    cmd
}

/// A mock serving the Codex writer (in `home/<name>`), and a CODEX_HOME
/// pointing at it in which `repo` is trusted (as `codex exec --trust`
/// records it).
fn serve_codex(home: &Path, name: &str, repo: &Path, second: &str) -> Server {
    let dir = home.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let server = Server::start(&dir, &json!({"openai": codex_writer(second)}));
    codex_home(home, server.port);
    let config = home.join("codex/config.toml");
    let mut toml = std::fs::read_to_string(&config).unwrap();
    toml.push_str(&format!(
        "\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
        repo.display()
    ));
    std::fs::write(&config, toml).unwrap();
    server
}

/// The Codex writer's turns: patch, stop; after the block, patch again (to
/// `second`) and stop.
fn codex_writer(second: &str) -> Value {
    let patch = |from: &str, to: &str| {
        format!(
            "*** Begin Patch\n*** Update File: src/auth.rs\n@@\n-fn valid(now: u64, exp: u64) -> bool {{ {from} }}\n+fn valid(now: u64, exp: u64) -> bool {{ {to} }}\n*** End Patch\n"
        )
    };
    json!([
        {"text": "Patching.", "apply_patch": patch("now > exp", "now < exp")},
        {"text": "Done."},
        {"match": "hook_prompt", "apply_patch": patch("now < exp", second)},
        {"text": "Fixed."}
    ])
}

#[test]
fn codex_is_refereed_by_its_stop_hook_in_a_trusted_project() {
    let Some(codex) = tool("codex") else {
        return;
    };
    let h = hooked_for("codex", 3, &[BUG, CLEAN]);
    let home = tempfile::tempdir().unwrap();
    // A mock for each run, and a CODEX_HOME pointing at it in which the
    // project is trusted (as `codex exec --trust` records it).
    let serve = |name: &str| serve_codex(home.path(), name, h.repo.path(), "now >= exp");

    // Without the hook trusted (no `/hooks` review here), Codex skips the
    // hook without a word: no round.
    let first = serve("untrusted");
    let untrusted = run_limited(
        codex_command(&codex, home.path(), &h.repo, false),
        "fix the expiry check in src/auth.rs\n",
        Duration::from_secs(180),
    );
    assert!(untrusted.status.success(), "{}", text(&untrusted.stderr));
    assert_eq!(
        first.bodies("/v1/responses").len(),
        2,
        "no hook, no second turn"
    );
    assert!(h.rows().is_empty(), "an untrusted hook ran");
    drop(first);
    h.fix(ORIGINAL);

    let server = serve("bypass");
    let out = run_limited(
        codex_command(&codex, home.path(), &h.repo, true),
        "fix the expiry check in src/auth.rs\n",
        Duration::from_secs(180),
    );
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "stdout:\n{stdout}\nstderr:\n{}",
        text(&out.stderr)
    );
    assert_eq!(
        h.repo.read("src/auth.rs"),
        "fn valid(now: u64, exp: u64) -> bool { now >= exp }\n"
    );
    let bodies = server.bodies("/v1/responses");
    let fed = bodies
        .iter()
        .map(Value::to_string)
        .find(|b| b.contains("hook_prompt"))
        .expect("a request carries the hook's reason");
    assert!(
        fed.contains("- F1 [bug] src/auth.rs:1: expired tokens pass at the boundary"),
        "{fed}"
    );
    let rows = h.rows();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[1]["rule"], "clean");
    assert!(rows[0]["tokens"].as_u64().unwrap() > 0, "{}", rows[0]);
    h.repo
        .referee()
        .args(["ledger", "verify"])
        .assert()
        .success();
    let seen: Value = serde_json::from_slice(
        &std::fs::read(h.repo.join(".referee/ledgers/h/round-1/hook.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(seen["agent"], "codex", "{seen}");
}

#[test]
fn codex_stopped_at_the_round_cap_is_let_through() {
    let Some(codex) = tool("codex") else {
        return;
    };
    let h = hooked_for("codex", 2, &[BUG, BUG]);
    let home = tempfile::tempdir().unwrap();
    let server = serve_codex(home.path(), "cap", h.repo.path(), "now <= exp + 1");
    let out = run_limited(
        codex_command(&codex, home.path(), &h.repo, true),
        "fix the expiry check in src/auth.rs\n",
        Duration::from_secs(180),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rows = h.rows();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[1]["rule"], "round-cap");
    // Blocked once, then let through: four model turns, no fifth.
    assert_eq!(server.bodies("/v1/responses").len(), 4);
    let handoff = h
        .repo
        .referee()
        .args(["escalate", "--loop", "h"])
        .output()
        .unwrap();
    assert!(
        text(&handoff.stdout).contains("stopped at round 2 of 2 on `round-cap`"),
        "{}",
        text(&handoff.stdout)
    );
}

/// A Claude Code writer's first turns: read the check and break it.
fn claude_breaks_the_check(auth: &str) -> [Value; 2] {
    [
        json!({"tool_use": {"name": "Read", "input": {"file_path": auth}}}),
        json!({"tool_use": {"name": "Edit", "input": {"file_path": auth,
            "old_string": "now > exp", "new_string": "now < exp"}}}),
    ]
}

/// Runs the real Claude Code in `h`'s repository under `bypassPermissions`
/// (as root that needs `IS_SANDBOX=1`), playing `turns`, with `path` as its
/// PATH when given; it must succeed. The mock is returned for its log.
fn claude_bypassing(
    claude: &Path,
    h: &Hooked,
    home: &Path,
    turns: Vec<Value>,
    path: Option<std::ffi::OsString>,
) -> Server {
    let server = Server::start(home, &json!({ "anthropic": turns }));
    let mut cmd = claude_command(claude, home, server.port, &h.repo);
    cmd.args(["--permission-mode", "bypassPermissions"])
        .env("IS_SANDBOX", "1");
    if let Some(path) = path {
        cmd.env("PATH", path);
    }
    let out = run_limited(cmd, "fix the expiry check\n", Duration::from_secs(180));
    assert!(out.status.success(), "{}", text(&out.stderr));
    server
}

/// A Bash command that runs `script` through `sh -c` (past the deny rules
/// `hook install` wrote, as SPEC's facts file, section 3, shows), each
/// step's exit status appended to `log` as `rc=N`.
fn through_sh(steps: &[String], log: &str) -> String {
    let script: Vec<String> = steps
        .iter()
        .map(|step| format!("{{ {step}; }} >> '{log}' 2>&1; echo rc=$? >> '{log}'"))
        .collect();
    let script = script.join("; ");
    format!(
        "sh -c \"{}\"",
        script.replace('"', "\\\"").replace('$', "\\$")
    )
}

/// SPEC §8 case 1 with the real Claude Code: blocked by the hook, the
/// writer's Bash runs `referee record` with a clean review and `referee
/// waive F1` (through `sh -c` under `bypassPermissions`, so what refuses is
/// referee itself, not the deny rules); both are refused, since the hook
/// registered its session, and the loop goes on as the reviewer says.
#[test]
fn claude_code_cannot_record_or_waive_its_way_out() {
    let Some(claude) = tool("claude") else {
        return;
    };
    let h = hooked_for("claude", 2, &[BUG, BUG]);
    let home = tempfile::tempdir().unwrap();
    let auth = h.repo.join("src/auth.rs").display().to_string();
    let clean = home.path().join("clean.json");
    std::fs::write(&clean, CLEAN).unwrap();
    let log = home.path().join("writer.log").display().to_string();
    let referee = env!("CARGO_BIN_EXE_referee");
    let escape = through_sh(
        &[
            format!(
                "'{referee}' record --loop h --findings '{}'",
                clean.display()
            ),
            format!("'{referee}' waive F1 --loop h --by lead --reason trust-me"),
        ],
        &log,
    );
    let mut turns = claude_breaks_the_check(&auth).to_vec();
    turns.extend([
        json!({"text": "Done."}),
        json!({"match": "Stop hook feedback", "tool_use": {"name": "Bash", "input": {"command": escape}}}),
        json!({"text": "Recorded it clean."}),
    ]);
    claude_bypassing(&claude, &h, home.path(), turns, None);
    let said = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(said.matches("rc=1").count(), 2, "{said}");
    assert!(
        said.contains(
            "`referee record` was run from inside the claude session refereed by the Stop hook"
        ),
        "{said}"
    );
    assert!(
        said.contains("`referee waive` was run from inside"),
        "{said}"
    );
    // Two rounds, both the hook's: the writer changed nothing after the
    // block, so the loop stalled; never the writer's clean review.
    let rows = h.rows();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[1]["rule"], "stalled", "{rows:?}");
}

/// SPEC §8 case 5 with the real Claude Code: the writer makes a git
/// repository of its own in the project and stops from inside it. The
/// hook, installed with the project named, still referees the loop: the
/// snapshot refuses the nested repository by name, so the stop is blocked
/// as one it cannot judge; the writer removes it, and the loop goes on.
#[test]
fn claude_code_that_moves_into_a_repository_of_its_own_is_still_refereed() {
    let Some(claude) = tool("claude") else {
        return;
    };
    let h = hooked_for("claude", 3, &[BUG, CLEAN]);
    let home = tempfile::tempdir().unwrap();
    let auth = h.repo.join("src/auth.rs").display().to_string();
    let mut turns = claude_breaks_the_check(&auth).to_vec();
    turns.extend([
        json!({"tool_use": {"name": "Bash", "input": {"command": "mkdir -p scratch && cd scratch && git init -q"}}}),
        json!({"text": "Done."}),
        json!({"match": "could not judge", "tool_use": {"name": "Bash", "input": {"command": "cd .. && rm -rf scratch"}}}),
        json!({"text": "Done again."}),
        json!({"match": "expired tokens", "tool_use": {"name": "Edit", "input": {"file_path": auth,
            "old_string": "now < exp", "new_string": "now >= exp"}}}),
        json!({"text": "Fixed."}),
    ]);
    let server = claude_bypassing(&claude, &h, home.path(), turns, None);
    // The stop from inside `scratch/` was refereed: blocked, naming it.
    assert!(
        server.bodies("/v1/messages").iter().any(|b| b
            .to_string()
            .contains("`scratch/` is a git repository inside the work tree")),
        "the block named no nested repository"
    );
    let rows = h.rows();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[1]["rule"], "clean", "{rows:?}");
}

/// SPEC §8 case 25 with the real Claude Code under `bypassPermissions`:
/// the writer writes `{"disableAllHooks": true}` to
/// `.claude/settings.local.json` and strips the hook from
/// `.claude/settings.json` with its Write tool. The deny rules `hook
/// install` wrote refuse both, and the Stop hook still referees the stop.
#[test]
fn claude_code_cannot_switch_its_stop_hook_off() {
    let Some(claude) = tool("claude") else {
        return;
    };
    let h = hooked_for("claude", 3, &[BUG, CLEAN]);
    let installed = h.repo.read(".claude/settings.json");
    let home = tempfile::tempdir().unwrap();
    let auth = h.repo.join("src/auth.rs").display().to_string();
    let local = h
        .repo
        .join(".claude/settings.local.json")
        .display()
        .to_string();
    let shared = h.repo.join(".claude/settings.json").display().to_string();
    let mut turns = vec![
        json!({"tool_use": {"name": "Write", "input": {"file_path": local,
            "content": "{\"disableAllHooks\": true}\n"}}}),
        json!({"tool_use": {"name": "Read", "input": {"file_path": shared}}}),
        json!({"tool_use": {"name": "Write", "input": {"file_path": shared, "content": "{}\n"}}}),
    ];
    turns.extend(claude_breaks_the_check(&auth));
    turns.extend([
        json!({"text": "Done."}),
        json!({"match": "Stop hook feedback", "tool_use": {"name": "Edit", "input": {"file_path": auth,
            "old_string": "now < exp", "new_string": "now >= exp"}}}),
        json!({"text": "Fixed."}),
    ]);
    claude_bypassing(&claude, &h, home.path(), turns, None);
    assert!(!h.repo.join(".claude/settings.local.json").exists());
    assert_eq!(h.repo.read(".claude/settings.json"), installed);
    // The hook ran: blocked once, then let the fixed tree go clean.
    let rows = h.rows();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[1]["rule"], "clean", "{rows:?}");
}

/// The host's boundary, in a real sandboxed session: `hook install
/// --sandbox` turns Claude Code's bubblewrap sandbox on. Blocked by the
/// hook, the writer's Bash (past the deny rules with `sh -c`, under
/// `bypassPermissions`) runs `referee waive`, appends to `.referee/` and
/// writes into the per-user state folder: every one fails, and the loop
/// goes on by the reviewer. Skips without `bwrap` and `socat`, which
/// `.ci/run` provides (bwrap on Claude Code's PATH alone: `.ci/run` says
/// why).
#[test]
fn claude_code_in_its_sandbox_cannot_reach_the_referees_state() {
    let Some(claude) = tool("claude") else {
        return;
    };
    let (Some(bwrap), Some(_)) = (tool("bwrap"), tool("socat")) else {
        return;
    };
    let h = hooked_for("claude", 3, &[BUG, CLEAN]);
    h.repo
        .referee()
        .args(["hook", "install", "--agent", "claude", "--sandbox"])
        .assert()
        .success();
    let home = tempfile::tempdir().unwrap();
    let auth = h.repo.join("src/auth.rs").display().to_string();
    let referee = env!("CARGO_BIN_EXE_referee");
    let log = h.repo.join("sandbox.log").display().to_string();
    let state_probe = h.repo.state_dir().join("probe");
    let escape = through_sh(
        &[
            format!("'{referee}' waive F1 --loop h --by lead --reason x"),
            "echo forged > .referee/probe".to_string(),
            format!("echo forged > '{}'", state_probe.display()),
        ],
        &log,
    );
    let mut turns = claude_breaks_the_check(&auth).to_vec();
    turns.extend([
        json!({"text": "Done."}),
        json!({"match": "Stop hook feedback", "tool_use": {"name": "Bash", "input": {"command": escape}}}),
        json!({"tool_use": {"name": "Edit", "input": {"file_path": auth,
            "old_string": "now < exp", "new_string": "now >= exp"}}}),
        json!({"text": "Fixed."}),
    ]);
    let path = std::env::join_paths(
        std::iter::once(bwrap.parent().unwrap().to_path_buf()).chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )),
    )
    .unwrap();
    claude_bypassing(&claude, &h, home.path(), turns, Some(path));
    let said = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(said.matches("rc=0").count(), 0, "{said}");
    assert_eq!(said.matches("rc=").count(), 3, "{said}");
    assert!(said.contains("Read-only file system"), "{said}");
    assert!(!h.repo.join(".referee/probe").exists());
    assert!(!state_probe.exists());
    let rows = h.rows();
    assert!(rows.iter().all(|r| r["kind"] == "round"), "{rows:?}");
    assert_eq!(rows.last().unwrap()["rule"], "clean", "{rows:?}");
}

/// The host's boundary with Codex's `workspace-write` sandbox: blocked by
/// the hook, the writer's shell runs `referee waive` and appends to
/// `.git/config`; the sandbox keeps both the per-user state folder (outside
/// the workspace and `/tmp`) and `.git` read-only, so both fail, and the
/// loop goes on.
#[test]
fn codex_in_workspace_write_cannot_waive_or_edit_git() {
    codex_sandboxed_cannot_reach(false);
}

/// The same with no `-s`: the read-only profile for `.referee` that `hook
/// install` wrote into the project's `.codex/config.toml` is in force, so
/// an append to `.referee/` fails too.
#[test]
fn codex_under_the_installed_profile_cannot_edit_the_state_folder() {
    codex_sandboxed_cannot_reach(true);
}

fn codex_sandboxed_cannot_reach(profile: bool) {
    let Some(codex) = tool("codex") else {
        return;
    };
    let h = hooked_for("codex", 3, &[BUG, CLEAN]);
    let config_before = std::fs::read(h.repo.join(".git/config")).unwrap();
    let home = tempfile::tempdir().unwrap();
    let referee = env!("CARGO_BIN_EXE_referee");
    let log = h.repo.join("sandbox.log").display().to_string();
    let patch = |from: &str, to: &str| {
        format!(
            "*** Begin Patch\n*** Update File: src/auth.rs\n@@\n-fn valid(now: u64, exp: u64) -> bool {{ {from} }}\n+fn valid(now: u64, exp: u64) -> bool {{ {to} }}\n*** End Patch\n"
        )
    };
    let dir = home.path().join("mock");
    std::fs::create_dir_all(&dir).unwrap();
    let server = Server::start(
        &dir,
        &json!({"openai": [
            {"text": "Patching.", "apply_patch": patch("now > exp", "now < exp")},
            {"text": "Done."},
            {"match": "hook_prompt", "shell": format!(
                "'{referee}' waive F1 --loop h --by lead --reason x > '{log}' 2>&1; echo rc=$? >> '{log}'; \
                 echo '[core]' 2>> '{log}' >> .git/config; echo rc=$? >> '{log}'{}",
                 if profile { format!("; echo x 2>> '{log}' >> .referee/probe; echo rc=$? >> '{log}'") } else { String::new() })},
            {"apply_patch": patch("now < exp", "now >= exp")},
            {"text": "Fixed."}
        ]}),
    );
    codex_home(home.path(), server.port);
    let config = home.path().join("codex/config.toml");
    let mut toml = std::fs::read_to_string(&config).unwrap();
    toml.push_str(&format!(
        "\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
        h.repo.path().display()
    ));
    std::fs::write(&config, toml).unwrap();
    // No `-s` under the profile: the project's `.codex/config.toml` (that
    // `hook install` wrote) decides.
    let sandbox = (!profile).then_some("workspace-write");
    let cmd = codex_command_in(&codex, home.path(), &h.repo, true, sandbox);
    let out = run_limited(
        cmd,
        "fix the expiry check in src/auth.rs\n",
        Duration::from_secs(180),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = std::fs::read_to_string(&log).unwrap_or_default();
    // Inside Codex's sandbox the command has a PID namespace of its own,
    // so referee cannot see the agent above it; the sandbox keeps the
    // per-user state folder read-only, and the waiver finds no way in.
    assert!(said.contains("Read-only file system"), "{said}");
    assert_eq!(
        said.matches("rc=1").count(),
        if profile { 3 } else { 2 },
        "{said}"
    );
    assert!(!h.repo.join(".referee/probe").exists(), "{said}");
    assert!(!said.contains("waived `F1`"), "{said}");
    assert_eq!(
        std::fs::read(h.repo.join(".git/config")).unwrap(),
        config_before
    );
    let rows = h.rows();
    assert!(rows.iter().all(|r| r["kind"] == "round"), "{rows:?}");
    assert_eq!(rows.last().unwrap()["rule"], "clean", "{rows:?}");
}

/// Every file under `dir` with its bytes, sorted: what a command that
/// writes nothing leaves as it was.
fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(at) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else {
                out.push((path.clone(), std::fs::read(&path).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

/// `hook stop --dry-run` says what a stop would come to, with the reviewer
/// call of the round it would be, and changes nothing: no call, no file
/// of the loop or of its anchor, and the next real stop records round 1
/// as if no dry run had been.
#[test]
fn a_dry_run_of_a_stop_says_what_it_would_do_and_changes_nothing() {
    let h = Hooked::new("", "");
    h.file("reviewer-1.print", BUG);
    let dry = |stdin: &str, json: bool| {
        let mut cmd = h.repo.referee();
        cmd.current_dir(h.repo.path())
            .args(["hook", "stop", "--dry-run"])
            .write_stdin(stdin.to_string());
        if json {
            cmd.arg("--json");
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let out = dry("", false);
    assert_eq!(
        out,
        "dry run of a stop: nothing is called, locked or recorded\n\
         the stop would be let go: loop `h`: the work tree is as the loop's base, so this stop is no round\n"
    );

    h.fix("fn valid(now: u64, exp: u64) -> bool { now < exp }\n");
    let before = (
        files_under(&h.repo.join(".referee")),
        files_under(h.repo.state_dir()),
    );
    let payload = h.payload("s1", false).to_string();
    let out = dry(&payload, false);
    assert!(
        out.starts_with(
            "dry run of a stop: nothing is called, locked or recorded\n\
             this stop would be round 1 of loop `h`: the hook would review the change, record the round, then block the stop"
        ),
        "{out}"
    );
    assert!(
        out.contains("\nreviewer `command`, in `<a private checkout of the round's snapshot>`, at most 1800 s:\n"),
        "{out}"
    );
    assert!(out.contains(&format!(" {}\n", fake_agent())), "{out}");
    assert!(
        out.contains("  | <the patch from the loop's base to the work tree>"),
        "{out}"
    );
    let doc: Value = serde_json::from_str(&dry(&payload, true)).unwrap();
    assert_eq!(doc["answer"], "round", "{doc}");
    assert_eq!(doc["loop"], "h", "{doc}");
    assert_eq!(doc["round"], 1, "{doc}");
    assert_eq!(doc["reviewer"]["program"], fake_agent(), "{doc}");
    let subagent = payload.replace("\"Stop\"", "\"SubagentStop\"");
    let doc: Value = serde_json::from_str(&dry(&subagent, true)).unwrap();
    assert_eq!(doc["answer"], "allow", "{doc}");
    assert_eq!(
        doc["reason"],
        "the stop would be let go: the payload's event is `SubagentStop`, not `Stop`"
    );
    // The snapshot's own index cache is refreshed, as by any reading of
    // the work tree: a shortcut for the next snapshot, no record.
    let cache = |files: Vec<(PathBuf, Vec<u8>)>| -> Vec<(PathBuf, Vec<u8>)> {
        files
            .into_iter()
            .filter(|(p, _)| !p.ends_with("snapshot/index"))
            .collect()
    };
    let before = (before.0, cache(before.1));
    let after = (
        files_under(&h.repo.join(".referee")),
        cache(files_under(h.repo.state_dir())),
    );
    let changed = |a: &[(PathBuf, Vec<u8>)], b: &[(PathBuf, Vec<u8>)]| -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = a
            .iter()
            .filter(|f| !b.contains(f))
            .chain(b.iter().filter(|f| !a.contains(f)))
            .map(|(p, _)| p.clone())
            .collect();
        paths.dedup();
        paths
    };
    assert!(
        before == after,
        "a dry run changed {:?} {:?}",
        changed(&before.0, &after.0),
        changed(&before.1, &after.1)
    );
    assert_eq!(h.calls(), 0, "a dry run called the reviewer");
    assert!(h.rows().is_empty());

    let a = h.stop(&h.payload("s1", false));
    assert!(
        a.reason().starts_with("referee: loop `h`, round 1 of 3"),
        "{}",
        a.stdout
    );
    assert_eq!(h.calls(), 1);
    assert_eq!(h.rows().len(), 1);
}
