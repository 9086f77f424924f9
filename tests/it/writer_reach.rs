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

/// Runs the program `agent` (a script named after an agent CLI, playing
/// it) in `f`'s repository with the test's referee environment; it must
/// succeed.
fn run_as_agent(f: &Driven, agent: &Path) {
    let env = f.repo.referee_std();
    let run = || {
        std::process::Command::new(agent)
            .current_dir(f.repo.path())
            .envs(env.get_envs().filter_map(|(k, v)| Some((k, v?))))
            .status()
    };
    // A program just written can be busy a moment: another test thread's
    // fork may still hold the write (ETXTBSY).
    let mut ran = run();
    for _ in 0..100 {
        match &ran {
            Err(e) if e.raw_os_error() == Some(nix::libc::ETXTBSY) => {
                std::thread::sleep(std::time::Duration::from_millis(20));
                ran = run();
            }
            _ => break,
        }
    }
    assert!(ran.unwrap().success());
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// A dry run of the hook, even from inside the agent, registers nothing:
/// the session is refereed only once a real stop saw it, so a `record`
/// after the dry run is not refused as the refereed session's.
#[test]
fn a_dry_run_of_the_hook_does_not_make_the_session_refereed() {
    let f = Driven::new();
    f.repo.write("src/a.rs", "fn a() { 0 }\n");
    let dir = f.script.path();
    let payload = json!({"session_id": "s1", "transcript_path": null, "cwd": f.repo.path(),
                         "hook_event_name": "Stop", "stop_hook_active": false});
    std::fs::write(dir.join("payload.json"), payload.to_string()).unwrap();
    std::fs::write(dir.join("clean.json"), CLEAN).unwrap();
    let agent = dir.join("claude");
    std::fs::write(
        &agent,
        format!(
            "#!/bin/sh\n\
             \"{REFEREE}\" hook stop --dry-run --agent claude < '{d}/payload.json' > '{d}/dry.log' 2>&1\n\
             \"{REFEREE}\" record --findings '{d}/clean.json' > '{d}/record.log' 2>&1; echo rc=$? >> '{d}/record.log'\n",
            d = dir.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&agent, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    run_as_agent(&f, &agent);
    let dry = read(dir, "dry.log");
    assert!(
        dry.contains("this stop would be round 1 of loop `l`"),
        "{dry}"
    );
    let record = read(dir, "record.log");
    assert!(!record.contains("refereed by the Stop hook"), "{record}");
    assert!(record.trim_end().ends_with("rc=0"), "{record}");
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
/// A program named `claude` plays the agent: it runs the hook, then the
/// commands, as Claude Code runs its hook and its Bash tool. The same
/// hook run by the test (no agent above it) registers nobody: a person who
/// pipes a payload into the hook by hand keeps their terminal.
#[test]
fn an_agent_the_hook_referees_cannot_record_or_waive() {
    let f = Driven::new();
    f.file("reviewer-1.print", BUG);
    f.repo.write("src/a.rs", "fn a() { 0 }\n");
    let dir = f.script.path();
    let payload = json!({"session_id": "s1", "transcript_path": null, "cwd": f.repo.path(),
                         "hook_event_name": "Stop", "stop_hook_active": false});
    std::fs::write(dir.join("payload.json"), payload.to_string()).unwrap();
    std::fs::write(dir.join("clean.json"), CLEAN).unwrap();
    let agent = dir.join("claude");
    std::fs::write(
        &agent,
        format!(
            "#!/bin/sh\n\
             \"{REFEREE}\" hook stop --agent claude < '{d}/payload.json' > '{d}/answer.json'\n\
             \"{REFEREE}\" record --findings '{d}/clean.json' > '{d}/record.log' 2>&1; echo rc=$? >> '{d}/record.log'\n\
             \"{REFEREE}\" waive F1 --by lead --reason x > '{d}/waive.log' 2>&1; echo rc=$? >> '{d}/waive.log'\n\
             \"{REFEREE}\" resume --by lead --reason x > '{d}/resume.log' 2>&1; echo rc=$? >> '{d}/resume.log'\n",
            d = dir.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&agent, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    run_as_agent(&f, &agent);
    let answer: Value = serde_json::from_str(&read(dir, "answer.json")).unwrap();
    assert_eq!(answer["decision"], "block", "{answer}");
    let record = read(dir, "record.log");
    assert!(
        record.contains(
            "`referee record` was run from inside the claude session refereed by the Stop hook"
        ),
        "{record}"
    );
    assert!(record.trim_end().ends_with("rc=1"), "{record}");
    let waive = read(dir, "waive.log");
    assert!(waive.contains("only a person waives"), "{waive}");
    assert!(waive.trim_end().ends_with("rc=1"), "{waive}");
    let resume = read(dir, "resume.log");
    assert!(
        resume.contains("`referee resume` was run from inside"),
        "{resume}"
    );
    assert!(resume.trim_end().ends_with("rc=1"), "{resume}");
    assert_eq!(f.rows(), 1);

    // Run by the test itself, the hook registers no agent: the test's own
    // waive goes through.
    f.repo.write("src/a.rs", "fn a() { 1 }\n");
    f.file("reviewer-2.print", BUG);
    let out = f
        .repo
        .referee()
        .args(["hook", "stop", "--agent", "claude"])
        .write_stdin(payload.to_string())
        .output()
        .unwrap();
    assert!(out.status.success());
    let waive = f
        .repo
        .run(&["waive", "F1", "--by", "lead", "--reason", "x"]);
    assert_eq!(waive.code, 0, "{}", waive.stderr);
    // Reading is anyone's.
    let status = f.repo.run(&["status"]);
    assert_eq!(status.code, 0, "{}", status.stderr);
}

/// The ledger as the writer would forge it: every row after `edit` sealed
/// again, so that its chain verifies from the contract on.
fn rehash(repo: &crate::common::Repo, lp: &str, edit: impl Fn(usize, &mut referee::ledger::Draft)) {
    use referee::ledger::{Row, chain};
    let ledger = repo.join(&format!(".referee/ledgers/{lp}.csv"));
    let contract = std::fs::read(repo.join(&format!(".referee/contracts/{lp}.toml"))).unwrap();
    let parsed = chain::parse(&std::fs::read(&ledger).unwrap()).unwrap();
    let mut prev = referee::digest::sha256_hex(&contract);
    let mut out = format!("{}\n", referee::ledger::row::header()).into_bytes();
    for (i, row) in parsed.rows.iter().enumerate() {
        let mut draft = row.draft.clone();
        edit(i + 1, &mut draft);
        let sealed = Row::seal(draft, &prev, &row.evidence_sha256);
        prev = sealed.row_sha256.clone();
        out.extend(chain::write_record(&sealed.fields()));
    }
    std::fs::write(&ledger, out).unwrap();
}

/// A loop `l` of two rounds recorded by hand, F1 open after round 2.
fn two_rounds() -> crate::common::Repo {
    let repo = crate::common::Repo::with_loop("l", &["--max-rounds", "5"]);
    repo.append("src/a.rs", "fn a() {}");
    repo.record(BUG).run().assert(10, "");
    repo.append("src/a.rs", "fn b() {}");
    repo.record(BUG).run().assert(10, "");
    repo
}

fn verify_json(repo: &crate::common::Repo) -> (i32, Value) {
    let out = repo.run(&["ledger", "verify", "--json"]);
    (
        out.code,
        serde_json::from_str(out.stdout.trim()).unwrap_or(Value::Null),
    )
}

/// Case 16: the last rows cut, or the whole ledger deleted, are seen by
/// `verify` (naming the rows and the rounds gone), by `status`, and by the
/// next `record`, which refuses.
#[test]
fn a_ledger_cut_or_deleted_is_seen_by_verify_status_and_record() {
    let repo = two_rounds();
    let (code, v) = verify_json(&repo);
    assert_eq!(
        (code, v["ok"].clone(), v["anchored"].clone()),
        (0, json!(true), json!(true)),
        "{v}"
    );

    // Cut the last row (and its evidence).
    let ledger = repo.join(".referee/ledgers/l.csv");
    let text = std::fs::read_to_string(&ledger).unwrap();
    let kept: Vec<&str> = text.lines().take(2).collect();
    std::fs::write(&ledger, format!("{}\n", kept.join("\n"))).unwrap();
    std::fs::remove_dir_all(repo.join(".referee/ledgers/l/round-2")).unwrap();
    let (code, v) = verify_json(&repo);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["lost_rounds"], json!([2]), "{v}");
    assert!(
        v["problem"]
            .as_str()
            .unwrap()
            .contains("row 2 was committed and is gone"),
        "{v}"
    );
    let status = repo.run(&["status"]);
    assert!(
        status.stdout.contains("warning: ledger"),
        "{}",
        status.stdout
    );
    assert!(
        status.stdout.contains("row 2 was committed and is gone"),
        "{}",
        status.stdout
    );
    repo.append("src/a.rs", "fn c() {}");
    let again = repo.record(CLEAN).run();
    assert_eq!(again.code, 1, "{}", again.stderr);
    assert!(
        again.stderr.contains("nothing was recorded"),
        "{}",
        again.stderr
    );

    // Delete it: not "no rows yet".
    std::fs::remove_file(&ledger).unwrap();
    let (code, v) = verify_json(&repo);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["lost_rounds"], json!([1, 2]), "{v}");
    let init = repo.run(&["init", "--loop", "l", "--force"]);
    assert_eq!(init.code, 1, "{}", init.stderr);
    assert!(
        init.stderr
            .contains("its anchor on this machine holds rows"),
        "{}",
        init.stderr
    );
}

/// Case 17: a row edited to say `stop clean` and the chain hashed again
/// verifies as a chain, but not against the anchor; `status` says so.
#[test]
fn a_ledger_edited_and_hashed_again_is_not_the_referees() {
    let repo = two_rounds();
    rehash(&repo, "l", |n, draft| {
        if n == 2 {
            draft.verdict = Some(referee::ledger::Verdict::Stop);
            draft.rule = "clean".into();
        }
    });
    let (code, v) = verify_json(&repo);
    assert_eq!(code, 1, "{v}");
    assert!(
        v["problem"]
            .as_str()
            .unwrap()
            .contains("row 2 is not the row the referee wrote"),
        "{v}"
    );
    // `status` does not show the forged verdict: the row no longer reads
    // against its evidence, and the anchor says why.
    let status = repo.run(&["status"]);
    assert_eq!(status.code, 1, "{}", status.stdout);
    assert!(
        status
            .stderr
            .contains("row 2 is not the row the referee wrote"),
        "{}",
        status.stderr
    );
    assert!(!status.stdout.contains("clean"), "{}", status.stdout);

    // Where no anchor knows the loop (another machine), the row still
    // disagrees with its own evidence.
    std::fs::remove_dir_all(repo.anchor("l")).unwrap();
    let (code, v) = verify_json(&repo);
    assert_eq!((code, v["anchored"].clone()), (1, json!(false)), "{v}");
    let problem = v["problem"].as_str().unwrap();
    assert!(
        problem.starts_with("row 2: ledger row of round 2 does not match its"),
        "{v}"
    );
    assert!(
        problem.contains("the row says stop `clean`, the state continue"),
        "{v}"
    );
}

/// A loop started on another machine (no anchor here) reads as unanchored,
/// never as an error, and is anchored from its rows at its next round.
#[test]
fn a_loop_without_an_anchor_here_is_unanchored_then_adopted() {
    let repo = two_rounds();
    std::fs::remove_dir_all(repo.anchor("l")).unwrap();
    let (code, v) = verify_json(&repo);
    assert_eq!((code, v["anchored"].clone()), (0, json!(false)), "{v}");
    let text = repo.run(&["ledger", "verify"]).stdout;
    assert!(text.contains("unanchored"), "{text}");
    let s: Value = serde_json::from_str(&repo.run(&["status", "--json"]).stdout).unwrap();
    assert_eq!(
        s["anchor"],
        json!({"anchored": false, "problem": null}),
        "{s}"
    );
    repo.append("src/a.rs", "fn c() {}");
    repo.record(CLEAN).run().assert(0, "clean");
    let (code, v) = verify_json(&repo);
    assert_eq!((code, v["anchored"].clone()), (0, json!(true)), "{v}");
}

/// `referee hook stop` in `f`'s repository, the payload saying `cwd`, with
/// `args` after `hook stop --agent claude`; the one JSON answer.
fn hook_stop(f: &Driven, cwd: &Path, session: &str, args: &[&str]) -> Value {
    let payload = json!({"session_id": session, "transcript_path": null, "cwd": cwd,
                         "hook_event_name": "Stop", "stop_hook_active": false});
    let out = f
        .repo
        .referee()
        .current_dir(cwd)
        .args(["hook", "stop", "--agent", "claude"])
        .args(args)
        .write_stdin(payload.to_string())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} {}", text(&out.stdout), text(&out.stderr)))
}

/// Case 5: the writer `cd`s into a repository of its own and stops there:
/// the hook still referees the project it was installed in, named by
/// `--project` (what `hook install` writes) or by `CLAUDE_PROJECT_DIR`.
#[test]
fn a_writer_that_moves_into_a_repository_of_its_own_is_still_refereed() {
    let f = Driven::new();
    f.file("reviewer-1.print", BUG)
        .file("reviewer-2.print", BUG);
    f.repo.write("src/a.rs", "fn a() { 0 }\n");
    let elsewhere = tempfile::tempdir().unwrap();
    let own = elsewhere.path().join("x");
    std::fs::create_dir_all(&own).unwrap();
    let init = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&own)
        .output()
        .unwrap();
    assert!(init.status.success());
    let project = f.repo.path().to_string_lossy().into_owned();
    let answer = hook_stop(&f, &own, "s1", &["--project", &project]);
    assert_eq!(answer["decision"], "block", "{answer}");
    assert!(
        answer["reason"].as_str().unwrap().contains("F1"),
        "{answer}"
    );

    f.repo.write("src/a.rs", "fn a() { 1 }\n");
    let payload = json!({"session_id": "s1", "transcript_path": null, "cwd": own,
                         "hook_event_name": "Stop", "stop_hook_active": true});
    let out = f
        .repo
        .referee()
        .current_dir(&own)
        .env("CLAUDE_PROJECT_DIR", f.repo.path())
        .args(["hook", "stop", "--agent", "claude"])
        .write_stdin(payload.to_string())
        .output()
        .unwrap();
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["decision"], "block", "{answer}");
    assert_eq!(f.rows(), 2);

    // Its repository inside the project is named, not a way out.
    let inside = f.repo.join("y");
    std::fs::create_dir_all(&inside).unwrap();
    std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&inside)
        .output()
        .unwrap();
    f.repo.write("src/a.rs", "fn a() { 2 }\n");
    let answer = hook_stop(&f, &inside, "s1", &["--project", &project]);
    assert_eq!(answer["decision"], "block", "{answer}");
    assert!(
        answer["reason"].as_str().unwrap().contains("`y/`"),
        "{answer}"
    );
}

/// Case 4: stops the hook cannot judge during a live loop are blocked with
/// the reason, kept as incidents, and after three in a row in one session
/// the agent is let stop with a message to the person.
#[test]
fn a_stop_the_hook_cannot_judge_is_blocked_then_left_to_the_person() {
    let f = Driven::new();
    f.file("reviewer-1.print", BUG);
    f.repo.write("src/a.rs", "fn a() { 0 }\n");
    let root = f.repo.path().to_path_buf();
    let answer = hook_stop(&f, &root, "s1", &[]);
    assert_eq!(answer["decision"], "block", "{answer}");

    // Each move the writer can make to blind the hook, undone after its
    // stop: a broken responses file, a folder there, a broken contract,
    // the contracts folder moved away.
    let responses = f.repo.join(".referee/ledgers/l/responses.json");
    let contract = f.repo.join(".referee/contracts/l.toml");
    let contract_text = std::fs::read_to_string(&contract).unwrap();
    let run_lock = f.repo.anchor("l").join("run.lock");
    let evidence = f.repo.join(".referee/ledgers/l/round-1");
    let evidence_copy = f.repo.join("round-1-copy");
    let decoy = f.repo.join(".referee/contracts/decoy.toml");
    type Move<'a> = (&'a str, Box<dyn Fn() + 'a>, Box<dyn Fn() + 'a>);
    let moves: Vec<Move> = vec![
        (
            "is not a responses file",
            Box::new(|| std::fs::write(&responses, "{not json").unwrap()),
            Box::new(|| std::fs::remove_file(&responses).unwrap()),
        ),
        (
            "responses.json",
            Box::new(|| std::fs::create_dir_all(&responses).unwrap()),
            Box::new(|| std::fs::remove_dir(&responses).unwrap()),
        ),
        (
            "l.toml",
            Box::new(|| {
                std::fs::write(&contract, "loop = \"l\"\nmax_rounds = \"many\"\n").unwrap()
            }),
            Box::new(|| std::fs::write(&contract, &contract_text).unwrap()),
        ),
        (
            "has no contracts folder, but this machine anchors loops of it (`l`)",
            Box::new(|| {
                std::fs::rename(f.repo.join(".referee/contracts"), f.repo.join("moved")).unwrap()
            }),
            Box::new(|| {
                std::fs::rename(f.repo.join("moved"), f.repo.join(".referee/contracts")).unwrap()
            }),
        ),
        // A FIFO at the run lock (in the anchor).
        (
            "is a fifo, not a regular file",
            Box::new(|| {
                let _ = std::fs::remove_file(&run_lock);
                let made = std::process::Command::new("mkfifo")
                    .arg(&run_lock)
                    .status()
                    .unwrap();
                assert!(made.success());
            }),
            Box::new(|| std::fs::remove_file(&run_lock).unwrap()),
        ),
        // Round 1's evidence swapped for a link to a copy of it.
        (
            "is a symlink",
            Box::new(|| {
                std::fs::rename(&evidence, &evidence_copy).unwrap();
                std::os::unix::fs::symlink(&evidence_copy, &evidence).unwrap();
            }),
            Box::new(|| {
                std::fs::remove_file(&evidence).unwrap();
                std::fs::rename(&evidence_copy, &evidence).unwrap();
            }),
        ),
        // A decoy loop beside it, the hook installed without `--loop`.
        (
            "2 loops take rounds here (`decoy`, `l`)",
            Box::new(|| {
                std::fs::write(
                    &decoy,
                    contract_text.replacen("loop = \"l\"", "loop = \"decoy\"", 1),
                )
                .unwrap()
            }),
            Box::new(|| std::fs::remove_file(&decoy).unwrap()),
        ),
    ];
    for (i, (says, make, undo)) in moves.iter().enumerate() {
        f.repo
            .write("src/a.rs", &format!("fn a() {{ {} }}\n", i + 1));
        make();
        let session = format!("t{i}");
        for n in 1..=3 {
            let answer = hook_stop(&f, &root, &session, &[]);
            assert_eq!(answer["decision"], "block", "move {i}, stop {n}: {answer}");
            let reason = answer["reason"].as_str().unwrap();
            assert!(reason.contains("could not judge this stop"), "{reason}");
            assert!(reason.contains(says), "move {i}: {reason}");
        }
        let answer = hook_stop(&f, &root, &session, &[]);
        assert!(answer.get("decision").is_none(), "move {i}: {answer}");
        let message = answer["systemMessage"].as_str().unwrap();
        assert!(
            message.contains("could not judge 3 stops in a row"),
            "{message}"
        );
        undo();
    }
    assert_eq!(f.rows(), 1, "nothing was recorded");
    let status = f.repo.run(&["status", "--json"]);
    let s: Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(s["incidents"].as_array().map(Vec::len), Some(20), "{s}");
    let text = f.repo.run(&["status"]).stdout;
    assert!(
        text.contains("warning: the Stop hook could not judge 20 stops"),
        "{text}"
    );
}

/// Case 3: under `run`, the writer removes the loop's run lock and makes it
/// anew (its holder line copied, unlocked); a `record` from a person's
/// shell meanwhile is still refused, naming the run that drives the loop.
#[test]
fn a_run_lock_made_anew_by_the_writer_still_names_the_run() {
    let f = Driven::new();
    let lock = f.repo.anchor("l").join("run.lock");
    let ready = f.script.path().join("replaced");
    f.file(
        "writer-1.sh",
        format!(
            "echo 'fn a() {{ 0 }}' > src/a.rs\n\
             cp '{lock}' \"$FAKE_DIR/held\"; rm -f '{lock}'; head -n 1 \"$FAKE_DIR/held\" > '{lock}'\n\
             touch '{ready}'\nsleep 3\n",
            lock = lock.display(),
            ready = ready.display()
        ),
    )
    .file("reviewer-1.print", CLEAN);
    let mut run = f
        .repo
        .referee_std()
        .args(["run", "--task", "t", "--quiet"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !ready.exists() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "hang guard"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = f.repo.record(CLEAN).run();
    let _ = run.wait();
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!(
            "is being driven by `referee run` (pid {}",
            run.id()
        )),
        "{}",
        out.stderr
    );
    // The run's own round is the only one.
    assert_eq!(f.rows(), 1);
}

/// The contract before round 1 under the Stop hook: `init` pins its bytes
/// in the anchor, so a writer that rewrites it (here the round cap) before
/// the first stop is not judged by it: the hook blocks. A person pins a
/// change they made with `init --from … --force`.
#[test]
fn a_contract_rewritten_before_round_one_does_not_judge_the_round() {
    let f = Driven::new();
    f.file("reviewer-1.print", BUG);
    let contract = f.repo.join(".referee/contracts/l.toml");
    let text = std::fs::read_to_string(&contract).unwrap();
    let forged = text.replacen("max_rounds = 4", "max_rounds = 1", 1);
    assert_ne!(forged, text);
    std::fs::write(&contract, &forged).unwrap();
    f.repo.write("src/a.rs", "fn a() { 0 }\n");

    let root = f.repo.path().to_path_buf();
    let answer = hook_stop(&f, &root, "s1", &[]);
    assert_eq!(answer["decision"], "block", "{answer}");
    assert!(
        answer["reason"]
            .as_str()
            .unwrap()
            .contains("changed since `referee init` wrote it"),
        "{answer}"
    );
    assert_eq!(f.rows(), 0);

    // The person's own edit, pinned: the hook judges by it.
    let pinned = f
        .repo
        .run(&["init", "--from", contract.to_str().unwrap(), "--force"]);
    assert_eq!(pinned.code, 0, "{}", pinned.stderr);
    let answer = hook_stop(&f, &root, "s2", &[]);
    assert!(answer.get("decision").is_none(), "{answer}");
    assert_eq!(f.rows(), 1);
}

/// A loop's contract removed from the contracts folder while this machine
/// anchors the loop: the stop is blocked, not let go as "no loop".
#[test]
fn a_contract_removed_while_its_loop_is_anchored_blocks_the_stop() {
    let f = Driven::new();
    f.file("reviewer-1.print", BUG);
    f.repo.write("src/a.rs", "fn a() { 0 }\n");
    let root = f.repo.path().to_path_buf();
    assert_eq!(hook_stop(&f, &root, "s1", &[])["decision"], "block");
    std::fs::remove_file(f.repo.join(".referee/contracts/l.toml")).unwrap();
    f.repo.write("src/a.rs", "fn a() { 1 }\n");
    let answer = hook_stop(&f, &root, "s1", &[]);
    assert_eq!(answer["decision"], "block", "{answer}");
    assert!(
        answer["reason"].as_str().unwrap().contains("loop(s) `l`"),
        "{answer}"
    );
}

/// Case 1 before the first stop: the hook has not yet seen the writer, so
/// nothing registers it; but a loop a Stop hook drives takes no `record`
/// from inside an agent CLI (a program named `claude` plays it here). The
/// person's own `record` still works.
#[test]
fn a_loop_a_stop_hook_drives_takes_no_round_from_its_agent() {
    let f = Driven::new();
    f.repo
        .run(&["hook", "install", "--agent", "claude"])
        .assert(0, "");
    f.repo.write("src/a.rs", "fn a() { 0 }\n");
    let dir = f.script.path();
    std::fs::write(dir.join("clean.json"), CLEAN).unwrap();
    let agent = dir.join("claude");
    std::fs::write(
        &agent,
        format!(
            "#!/bin/sh\n\"{REFEREE}\" record --findings '{d}/clean.json' > '{d}/record.log' 2>&1; echo rc=$? >> '{d}/record.log'\n",
            d = dir.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&agent, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    run_as_agent(&f, &agent);
    let said = read(dir, "record.log");
    assert!(
        said.contains("loop `l` is refereed by the claude Stop hook installed here, and this `referee record` runs inside claude"),
        "{said}"
    );
    assert!(said.trim_end().ends_with("rc=1"), "{said}");
    assert_eq!(f.rows(), 0);
    // The person, outside any agent: their round counts.
    f.repo.record(CLEAN).run().assert(0, "clean");
}
