//! The judge through `record`: consulted only when the rules say continue and
//! no `block` finding is open; every answer validated before it applies; an
//! invalid, failed or omitted judgement recorded while the rules decide.

use serde_json::{Value, json};

use crate::common::{Repo, text};

fn answers(holds: f64, doing: f64, another: f64, reason: &str) -> Value {
    let mut p =
        json!({"holds": 0.1, "over_polishing": 0.1, "not_converging": 0.1, "continue": 0.1});
    p[reason] = json!(0.7);
    json!({"model": "small-judge-1", "answers": {
        "holds": {"probability": holds},
        "worth_doing": {"probability": doing},
        "worth_another_round": {"probability": another},
        "stop_reason": {"choice": reason, "confidence": 0.8, "probabilities": p}}})
}

const GO_ON: (f64, f64, f64, &str) = (0.2, 0.9, 0.9, "continue");

fn with_judge(judge: &str, extra: &str) -> Repo {
    let repo = Repo::new();
    let contract = repo.join("c.toml");
    std::fs::write(
        &contract,
        format!("loop = \"d\"\nmax_rounds = 5\n{extra}\n[judge]\n{judge}\nuse_case = \"a design doc\"\nwhat = \"the document\"\n"),
    )
    .unwrap();
    repo.referee()
        .args(["init", "--from", contract.to_str().unwrap()])
        .assert()
        .success();
    std::fs::remove_file(contract).unwrap();
    repo
}

fn replay(repo: &Repo, rounds: &[Value]) {
    let doc: serde_json::Map<String, Value> = rounds
        .iter()
        .enumerate()
        .map(|(i, v)| ((i + 1).to_string(), v.clone()))
        .collect();
    std::fs::write(
        repo.join(".referee/judge.json"),
        Value::Object(doc).to_string(),
    )
    .unwrap();
}

fn record(repo: &Repo, round: u32, findings: &str) -> (i32, String) {
    repo.write("doc.md", &format!("draft {round}\n"));
    let out = repo.record(findings).run();
    (out.code, out.stdout + &out.stderr)
}

fn judge_json(repo: &Repo, round: u32) -> Option<Value> {
    let path = repo.join(&format!(".referee/ledgers/d/round-{round}/judge.json"));
    std::fs::read(path)
        .ok()
        .map(|b| serde_json::from_slice(&b).unwrap())
}

const SHOULD: &str =
    r#"{"findings":[{"id":"F1","severity":"bug","title":"the intro repeats itself"}]}"#;
const BLOCK: &str =
    r#"{"findings":[{"id":"B1","severity":"block","title":"leaks the admin password"}]}"#;

#[test]
fn the_judge_answer_is_stored_redacted_everywhere() {
    let repo = with_judge("engine = \"replay\"\nreplay = \".referee/judge.json\"", "");
    let (a, b, c, d) = GO_ON;
    let mut answer = answers(a, b, c, d);
    answer["model"] = json!("small-judge-1 PASSWORD=hunter2-judge-answer");
    replay(&repo, &[answer]);
    let (code, out) = record(&repo, 1, SHOULD);
    assert_eq!(code, 10, "{out}");
    let evidence = repo.join(".referee/ledgers/d/round-1");
    let mut checked = 0;
    for name in ["judge.answer", "judge.json", "state.json"] {
        let stored = std::fs::read_to_string(evidence.join(name)).unwrap();
        assert!(stored.contains("small-judge-1"), "{name}: {stored}");
        assert!(!stored.contains("hunter2-judge-answer"), "{name}: {stored}");
        checked += 1;
    }
    assert_eq!(checked, 3);
}

#[test]
fn a_replay_judge_stops_a_loop_that_is_over_polishing() {
    let repo = with_judge("engine = \"replay\"\nreplay = \".referee/judge.json\"", "");
    let (a, b, c, d) = GO_ON;
    replay(
        &repo,
        &[
            answers(a, b, c, d),
            answers(0.6, 0.3, 0.2, "over_polishing"),
        ],
    );
    let (code, out) = record(&repo, 1, SHOULD);
    assert_eq!(code, 10, "{out}");
    assert!(out.contains("judge (small-judge-1): continue"), "{out}");
    let (code, out) = record(&repo, 2, SHOULD);
    assert_eq!(code, 20, "{out}");
    assert!(out.contains("stop: judge:over_polishing"));
    // The hand-off quotes the judge.
    assert!(
        out.contains("judge (small-judge-1): stop_reason `over_polishing` (p 0.7, confidence 0.8)"),
        "{out}"
    );
    let rows = repo
        .referee()
        .args(["ledger", "show", "--json"])
        .output()
        .unwrap();
    let rows = crate::common::ledger_rows(&rows.stdout);
    assert_eq!(rows[1]["rule"], "judge:over_polishing");
    let evidence = repo.join(".referee/ledgers/d/round-2");
    assert!(evidence.join("judge.request.json").exists());
    assert!(evidence.join("judge.answer").exists());
    assert_eq!(
        judge_json(&repo, 2).unwrap()["stop"],
        "judge:over_polishing"
    );
}

#[test]
fn an_invalid_answer_is_recorded_and_the_rules_decide() {
    let repo = with_judge(
        "engine = \"replay\"\nreplay = \".referee/judge.json\"\nmodel = \"small-judge-1\"",
        "",
    );
    let mut bad_sum = answers(0.6, 0.3, 0.2, "over_polishing");
    bad_sum["answers"]["stop_reason"]["probabilities"]["continue"] = json!(0.0);
    let mut other_model = answers(0.9, 0.1, 0.1, "holds");
    other_model["model"] = json!("big-model");
    let mut null_p = answers(0.9, 0.1, 0.1, "holds");
    null_p["answers"]["holds"]["probability"] = Value::Null;
    replay(&repo, &[bad_sum, other_model, null_p]);
    for (round, want) in [
        (1, "stop_reason.probabilities: sum to 0.9"),
        (2, "big-model"),
        (3, "holds.probability"),
    ] {
        let (code, out) = record(&repo, round, SHOULD);
        assert_eq!(code, 10, "round {round}: {out}");
        assert!(out.contains("judge answer invalid:"), "{out}");
        let judged = judge_json(&repo, round).unwrap();
        assert_eq!(judged["outcome"], "invalid");
        assert!(
            judged["reason"].as_str().unwrap().contains(want),
            "{judged}"
        );
    }
    // A round with no replay answer is recorded as not asked.
    let (code, out) = record(&repo, 4, SHOULD);
    assert_eq!(code, 10, "{out}");
    assert!(out.contains("has no answers for round 4"), "{out}");
}

#[test]
fn the_rules_and_block_findings_come_first() {
    let repo = with_judge("engine = \"replay\"\nreplay = \".referee/judge.json\"", "");
    let stop = answers(0.9, 0.1, 0.1, "holds");
    replay(&repo, &[stop.clone(), stop.clone(), stop]);
    // An open block finding always goes back to the writer.
    let (code, out) = record(&repo, 1, BLOCK);
    assert_eq!(code, 10, "{out}");
    assert!(
        out.contains("judge not asked: a `block` finding is open"),
        "{out}"
    );
    assert!(
        !repo
            .join(".referee/ledgers/d/round-1/judge.request.json")
            .exists()
    );
    // A clean round is done by rule 1: the judge is not consulted.
    let (code, _) = record(&repo, 2, r#"{"findings":[]}"#);
    assert_eq!(code, 0);
    assert!(judge_json(&repo, 2).is_none());
}

#[test]
fn a_command_judge_reads_a_sorted_redacted_request_on_stdin() {
    let repo = Repo::new();
    let seen = repo.join(".referee-seen.json");
    let script = repo.join("judge.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncat > {}\ncat <<'EOF'\n{}\nEOF\n",
            seen.display(),
            answers(0.9, 0.8, 0.8, "holds")
        ),
    )
    .unwrap();
    let contract = repo.join("c.toml");
    std::fs::write(
        &contract,
        format!(
            "loop = \"d\"\n[judge]\nengine = \"command\"\ncommand = [\"sh\", \"{}\"]\nuse_case = \"docs <for> humans & agents\"\n",
            script.display()
        ),
    )
    .unwrap();
    // Ignored before the loop starts: `.git/info/exclude` is pinned then.
    std::fs::write(
        repo.join(".git/info/exclude"),
        "judge.sh\nc.toml\n.referee-seen.json\n",
    )
    .unwrap();
    repo.referee()
        .args(["init", "--from", contract.to_str().unwrap()])
        .assert()
        .success();
    let (code, out) = record(
        &repo,
        1,
        r#"{"findings":[{"id":"F1","severity":"bug","title":"uses API_KEY=sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX"}]}"#,
    );
    assert_eq!(code, 20, "{out}");
    assert!(out.contains("stop: judge:holds"), "{out}");
    let request = std::fs::read_to_string(&seen).unwrap();
    assert!(request.starts_with("{\"questions\":["), "{request}");
    assert!(
        request.contains("\"use_case\":\"docs <for> humans & agents\""),
        "no HTML escaping: {request}"
    );
    assert!(request.contains("API_KEY=[REDACTED]"), "{request}");
    assert!(!request.contains("ABCDEFGHIJKLMNOPQRSTUVWX"));
    let state = request.find("\"state\":{").unwrap();
    let keys = ["\"findings\"", "\"rounds\"", "\"use_case\"", "\"what\""];
    let at: Vec<usize> = keys
        .iter()
        .map(|k| request[state..].find(k).unwrap())
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "sorted keys: {request}");
}

#[test]
fn a_state_over_the_limit_is_not_sent_and_the_omission_is_recorded() {
    let repo = with_judge(
        "engine = \"replay\"\nreplay = \".referee/judge.json\"\nmax_state_bytes = 256",
        "",
    );
    replay(&repo, &[answers(0.9, 0.1, 0.1, "holds")]);
    let long: Vec<String> = (0..20)
        .map(|i| format!(r#"{{"id":"F{i}","severity":"bug","title":"a finding long enough to fill the state {i}"}}"#))
        .collect();
    let (code, out) = record(&repo, 1, &format!(r#"{{"findings":[{}]}}"#, long.join(",")));
    assert_eq!(code, 10, "{out}");
    let judged = judge_json(&repo, 1).unwrap();
    assert_eq!(judged["outcome"], "skipped");
    assert!(
        judged["reason"]
            .as_str()
            .unwrap()
            .contains("over `judge.max_state_bytes` (256): not sent")
    );
}

#[test]
fn judge_ask_prints_request_answers_and_decision_and_records_nothing() {
    let repo = with_judge("engine = \"replay\"\nreplay = \".referee/judge.json\"", "");
    let (a, b, c, d) = GO_ON;
    replay(&repo, &[answers(a, b, c, d)]);
    record(&repo, 1, SHOULD);
    let before = repo.read(".referee/ledgers/d.csv");
    let out = repo.referee().args(["judge", "ask"]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with("judge `replay` on loop `d`, round 1 (nothing is recorded)"),
        "{stdout}"
    );
    assert!(stdout.contains("request:\n{"));
    assert!(stdout.contains("\"use_case\": \"a design doc\""));
    assert!(stdout.contains("decision: judge (small-judge-1): continue"));
    let json = repo
        .referee()
        .args(["judge", "ask", "--json"])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(json["outcome"]["outcome"], "decided");
    assert_eq!(repo.read(".referee/ledgers/d.csv"), before);
}

#[test]
fn through_run_two_block_findings_go_back_whatever_the_judge_says_then_clean() {
    let repo = Repo::new();
    let script = tempfile::tempdir().unwrap();
    let agent = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agents/fake-agent.sh");
    let dir = script.path().display();
    let contract = repo.join("c.toml");
    std::fs::write(
        &contract,
        format!(
            "loop = \"d\"\nmax_rounds = 4\n\
             [writer]\npreset = \"command\"\ncommand = [\"{a}\"]\nenv = {{ FAKE_DIR = \"{dir}\" }}\n\
             [reviewer]\npreset = \"command\"\ncommand = [\"{a}\"]\nenv = {{ FAKE_DIR = \"{dir}\" }}\n\
             [judge]\nengine = \"replay\"\nreplay = \".referee/judge.json\"\n",
            a = agent.display()
        ),
    )
    .unwrap();
    repo.referee()
        .args(["init", "--from", contract.to_str().unwrap()])
        .assert()
        .success();
    std::fs::remove_file(contract).unwrap();
    replay(
        &repo,
        &[
            answers(0.9, 0.1, 0.1, "holds"),
            answers(0.9, 0.1, 0.1, "holds"),
        ],
    );
    let file = |name: &str, body: &str| std::fs::write(script.path().join(name), body).unwrap();
    file("writer-1.sh", "echo one > doc.md\n");
    file(
        "reviewer-1.print",
        r#"{"findings":[{"id":"B1","severity":"block","title":"drops user data"},{"id":"B2","severity":"block","title":"no auth on admin route"}]}"#,
    );
    file("writer-2.sh", "echo two > doc.md\n");
    file("reviewer-2.print", r#"{"findings":[]}"#);
    let out = repo
        .referee()
        .args(["run", "--task", "t"])
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("judge not asked: a `block` finding is open"),
        "{stdout}"
    );
    assert!(
        stdout.contains("round 2 of 4 · loop `d` · stop: clean"),
        "{stdout}"
    );
}

#[test]
fn only_should_findings_left_at_floor_should_stop_on_over_polishing() {
    let repo = with_judge(
        "engine = \"replay\"\nreplay = \".referee/judge.json\"",
        "severity_floor = \"should\"",
    );
    let (a, b, c, d) = GO_ON;
    replay(
        &repo,
        &[
            answers(a, b, c, d),
            answers(0.5, 0.4, 0.3, "over_polishing"),
        ],
    );
    let should = r#"{"findings":[{"id":"S1","severity":"should","title":"tighten the wording"}]}"#;
    assert_eq!(record(&repo, 1, should).0, 10);
    let (code, out) = record(&repo, 2, should);
    assert_eq!(code, 20, "{out}");
    assert!(out.contains("stop: judge:over_polishing"), "{out}");
}

#[test]
fn a_loop_that_is_not_converging_stops_on_the_judge_before_the_cap() {
    let repo = with_judge("engine = \"replay\"\nreplay = \".referee/judge.json\"", "");
    let (a, b, c, d) = GO_ON;
    replay(
        &repo,
        &[
            answers(a, b, c, d),
            answers(0.2, 0.9, 0.3, "not_converging"),
        ],
    );
    assert_eq!(record(&repo, 1, SHOULD).0, 10);
    let (code, out) = record(&repo, 2, SHOULD);
    assert_eq!(code, 20, "{out}");
    assert!(
        out.contains("round 2 of 5 · loop `d` · stop: judge:not_converging"),
        "{out}"
    );
}

#[test]
fn the_doc_review_template_runs_its_judge_from_a_replay_file() {
    let repo = Repo::new();
    repo.referee()
        .args(["init", "--from", "doc-review", "--loop", "design-doc"])
        .assert()
        .success();
    let (a, b, c, d) = GO_ON;
    let doc = json!({"1": answers(a, b, c, d), "2": answers(0.7, 0.3, 0.2, "holds")});
    repo.write(".referee/judge.json", &doc.to_string());
    let should = r#"{"findings":[{"id":"S1","severity":"should","title":"define the terms","file":"docs/design.md","line":1}]}"#;
    for (round, want) in [(1, 10), (2, 20)] {
        repo.write("docs/design.md", &format!("# Design\n\nversion {round}\n"));
        let out = repo
            .referee()
            .args(["record", "--findings", "-"])
            .write_stdin(should)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(want),
            "{}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
    }
    let status = repo.referee().args(["status", "--json"]).output().unwrap();
    let status: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["rule"], "judge:holds");
}

/// The judge is a process that may run for minutes: it must not hold the
/// ledger's lock, or `status`, `escalate` and `ledger show` hang meanwhile.
#[test]
fn status_answers_while_a_judge_call_is_in_progress() {
    let repo = Repo::new();
    let marker = repo.join("judge-started");
    let script = repo.join("judge.sh");
    let (a, b, c, d) = GO_ON;
    std::fs::write(
        &script,
        format!(
            "cat > /dev/null\ntouch '{}'\nsleep 4\ntouch '{}.done'\nprintf '%s' '{}'\n",
            marker.display(),
            marker.display(),
            answers(a, b, c, d)
        ),
    )
    .unwrap();
    let contract = repo.join("c.toml");
    std::fs::write(
        &contract,
        format!(
            "loop = \"d\"\n[judge]\nengine = \"command\"\ncommand = [\"sh\", \"{}\"]\nuse_case = \"docs\"\n",
            script.display()
        ),
    )
    .unwrap();
    // Ignored before the loop starts: `.git/info/exclude` is pinned then.
    std::fs::write(
        repo.join(".git/info/exclude"),
        "judge.sh\nc.toml\njudge-started\n",
    )
    .unwrap();
    repo.referee()
        .args(["init", "--from", contract.to_str().unwrap()])
        .assert()
        .success();
    repo.write("doc.md", "draft\n");
    let mut record = repo
        .referee_std()
        .args(["record", "--findings", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        record
            .stdin
            .take()
            .unwrap()
            .write_all(SHOULD.as_bytes())
            .unwrap();
    }
    let waited = std::time::Instant::now();
    while !marker.exists() {
        assert!(
            waited.elapsed() < std::time::Duration::from_secs(20),
            "the judge never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let status = repo.referee().args(["status"]).output().unwrap();
    assert!(status.status.success(), "{}", text(&status.stderr));
    // Answered while the judge still works: it has not finished yet.
    assert!(
        !marker.with_extension("done").exists() && marker.exists(),
        "status waited for the judge"
    );
    let out = record.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(10), "{}", text(&out.stderr));
}

/// Round 1 reports a race in `flush`, round 2's fix closes it, round 3
/// reports a different-sounding problem at the same lines (sharing only the
/// place's nouns) under the closed one's id: identity alone takes it as new,
/// `F-f9d976d86d`, an id made from its content (SPEC §4.1). `same`: the
/// judge's answer to its `same_problem` question, if any. Returns round 3's
/// exit, its output and its stored judge outcome.
fn resembling_round_three(same: Option<f64>) -> (i32, String, Value, Repo) {
    let repo = with_judge("engine = \"replay\"\nreplay = \".referee/judge.json\"", "");
    let sink = |body: &str| {
        let mut lines: Vec<String> = (1..=20).map(|i| format!("step_{i}()")).collect();
        lines[11] = body.to_string();
        lines.join("\n") + "\n"
    };
    let go_on = answers(GO_ON.0, GO_ON.1, GO_ON.2, GO_ON.3);
    let mut third = go_on.clone();
    if let Some(p) = same {
        third["answers"]["same_problem:F-f9d976d86d"] = json!({"probability": p});
    }
    replay(&repo, &[go_on.clone(), go_on, third]);
    let env = r#"{"id":"G1","severity":"bug","title":"config loader ignores the env","file":"conf.py","line":3}"#;
    repo.write("conf.py", "a = 1\nb = 2\nc = 3\n");
    repo.write("sink.py", &sink("buf = self.buffer"));
    let round1 = format!(
        r#"{{"findings":[{{"id":"F1","severity":"bug","title":"flush() reads the buffer without the lock","file":"sink.py","line":12}},{env}]}}"#
    );
    assert_eq!(repo.record(&round1).run().code, 10);
    repo.write("sink.py", &sink("with self.lock: buf = self.buffer"));
    assert_eq!(
        repo.record(&format!(r#"{{"findings":[{env}]}}"#))
            .run()
            .code,
        10
    );
    repo.write("doc.md", "notes\n");
    let round3 = format!(
        r#"{{"findings":[{{"id":"F1","severity":"bug","title":"flush() holds the lock across the network call","file":"sink.py","line":12}},{env}]}}"#
    );
    let out = repo.record(&round3).run();
    let judge = judge_json(&repo, 3).expect("round 3 asked the judge");
    (out.code, out.stdout + &out.stderr, judge, repo)
}

#[test]
fn the_judge_says_whether_a_weak_resemblance_is_the_closed_problem_again() {
    // Yes: the round is decided again with the match, and stops `reopened`.
    let (code, out, judge, repo) = resembling_round_three(Some(0.9));
    assert_eq!(code, 20, "{out}");
    assert!(out.contains("reopened"), "{out}");
    assert_eq!(judge["outcome"], "decided", "{judge}");
    let state: Value = serde_json::from_slice(
        &std::fs::read(repo.join(".referee/ledgers/d/round-3/state.json")).unwrap(),
    )
    .unwrap();
    assert!(
        state.to_string().contains(r#""matched_by":"judge""#),
        "{state}"
    );
    // A replay under a contract with a judge keeps the recorded answer; one
    // without a judge decides on identity alone.
    for (judge, stop) in [
        (
            "\n[judge]\nengine = \"replay\"\nreplay = \".referee/judge.json\"\n",
            "stop: reopened",
        ),
        ("", "continue"),
    ] {
        let other = repo.join("other.toml");
        std::fs::write(&other, format!("loop = \"d\"\nmax_rounds = 5\n{judge}")).unwrap();
        let replayed = repo
            .referee()
            .args([
                "replay",
                "--loop",
                "d",
                "--contract",
                other.to_str().unwrap(),
                "--json",
            ])
            .output()
            .unwrap();
        let replayed = text(&replayed.stdout);
        let doc: Value =
            serde_json::from_str(&replayed).unwrap_or_else(|e| panic!("{e}: {replayed}"));
        assert_eq!(doc["rounds"][2]["replayed"], stop, "{replayed}");
    }
    // No: new, caused by round 2's fix; the loop goes on.
    let (code, out, judge, _) = resembling_round_three(Some(0.2));
    assert_eq!(code, 10, "{out}");
    assert!(out.contains("not a reopen of closed F1"), "{out}");
    assert_eq!(judge["outcome"], "decided", "{judge}");
    // No answer to it: the whole answer is invalid, the finding new.
    let (code, out, judge, _) = resembling_round_three(None);
    assert_eq!(code, 10, "{out}");
    assert_eq!(judge["outcome"], "invalid", "{judge}");
    assert!(
        judge["reason"]
            .as_str()
            .unwrap()
            .contains("same_problem:F-f9d976d86d"),
        "{judge}"
    );
}
