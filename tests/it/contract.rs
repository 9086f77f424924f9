//! `referee init` and `referee contract show`: every field round-trips, every
//! bad value is named, nothing falls back silently.

use crate::common::{Repo, native, text};

#[test]
fn init_then_show_round_trips_every_field() {
    let repo = Repo::new();
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.referee()
        .args([
            "init",
            "--loop",
            "full",
            "--max-rounds",
            "7",
            "--floor",
            "P2",
            "--scope",
            "src/**",
            "--scope",
            "docs/*.md",
            "--closure",
            "explicit",
            "--budget-usd",
            "2.5",
            "--budget-tokens",
            "90000",
            "--writer",
            "codex",
            "--reviewer",
            "claude",
        ])
        .assert()
        .success();
    let out = repo
        .referee()
        .args(["contract", "show", "--json"])
        .assert()
        .success();
    let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let c = &json["contract"];
    assert_eq!(c["loop"], "full");
    assert_eq!(c["max_rounds"], 7);
    assert_eq!(c["severity_floor"], "should");
    assert_eq!(c["scope"], serde_json::json!(["src/**", "docs/*.md"]));
    assert_eq!(c["closure"], "explicit");
    assert_eq!(c["budget"]["usd"], 2.5);
    assert_eq!(c["budget"]["tokens"], 90000);
    assert_eq!(c["base"], head.as_str());
    assert_eq!(c["writer"]["preset"], "codex");
    assert_eq!(c["writer"]["timeout"], "30m");
    assert_eq!(c["reviewer"]["preset"], "claude");
    assert_eq!(json["started"], false);
    // The file spells out every field, defaults included.
    let file = repo.read(".referee/contracts/full.toml");
    for field in [
        "loop =",
        "max_rounds =",
        "severity_floor =",
        "scope =",
        "closure =",
        "base =",
        "[budget]",
        "usd =",
        "tokens =",
    ] {
        assert!(file.contains(field), "{field} missing from:\n{file}");
    }
}

#[test]
fn defaults_are_written_out() {
    let repo = Repo::empty();
    repo.referee().args(["init"]).assert().success();
    let out = repo
        .referee()
        .args(["contract", "show", "--json"])
        .assert()
        .success();
    let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let c = &json["contract"];
    assert_eq!(c["loop"], "main");
    assert_eq!(
        (c["max_rounds"].as_u64(), c["severity_floor"].as_str()),
        (Some(3), Some("bug"))
    );
    assert_eq!(c["scope"], serde_json::json!(["**"]));
    assert_eq!(c["closure"], "absent");
    // No commits yet: the loop starts from git's empty tree.
    assert_eq!(c["base"], "4b825dc642cb6eb9a060e54bf8d69288fbee4904");
}

#[test]
fn templates_start_a_contract_and_flags_override_them() {
    let repo = Repo::new();
    repo.referee()
        .args([
            "init",
            "--from",
            "contracts/ci-test-fix.toml",
            "--loop",
            "ci",
            "--max-rounds",
            "9",
        ])
        .assert()
        .success();
    let out = repo
        .referee()
        .args(["contract", "show", "--loop", "ci", "--json"])
        .assert()
        .success();
    let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(json["contract"]["max_rounds"], 9);
    assert_eq!(json["contract"]["reviewer"]["preset"], "tests");
    assert_eq!(
        json["contract"]["reviewer"]["junit"],
        "target/nextest/ci/junit.xml"
    );
    for name in [
        "cross-review",
        "cross-review-reverse",
        "cross-review-panel",
        "doc-review",
    ] {
        repo.referee()
            .args(["init", "--from", name])
            .assert()
            .success();
    }
    let out = repo
        .referee()
        .args(["init", "--from", "nope"])
        .assert()
        .code(1);
    assert!(text(&out.get_output().stderr).contains("no template `nope`"));
}

#[test]
fn bad_flags_name_the_field_and_write_nothing() {
    let repo = Repo::new();
    // A value a flag gave is that flag's usage error (exit 2); what the
    // flags leave unsaid is the contract's (exit 1).
    let table: &[(&[&str], &str, i32)] = &[
        (
            &["--max-rounds", "0"],
            "error: --max-rounds: must be a whole number 1..=100, not `0`",
            2,
        ),
        (
            &["--floor", "urgent"],
            "error: --floor: must be one of nit, should, bug, block",
            2,
        ),
        (
            &["--floor", "sev1"],
            "error: --floor: must be one of nit, should, bug, block",
            2,
        ),
        (
            &["--scope", "a[b"],
            "error: --scope: must be a list of valid globs",
            2,
        ),
        (
            &["--closure", "sometimes"],
            "error: --closure: must be `absent` or `explicit`",
            2,
        ),
        (
            &["--budget-usd", "-1"],
            "error: --budget-usd: must be a number > 0",
            2,
        ),
        (
            &["--budget-tokens", "0"],
            "error: --budget-tokens: must be a whole number >= 1",
            2,
        ),
        (&["--guards", "stalled,loud"], "error: --guards: must be", 2),
        (
            &["--writer", "gpt"],
            "error: --writer: must be one of claude, codex",
            2,
        ),
        (
            &["--writer", "tests"],
            "error: --writer: must be a writer preset",
            2,
        ),
        (
            &["--reviewer", "command"],
            "error: contract for loop `bad`: field `reviewer.command` is required",
            1,
        ),
        (
            &["--base", "no-such-branch"],
            "error: --base: `no-such-branch` names no commit",
            2,
        ),
    ];
    for (flags, expected, code) in table {
        let out = repo
            .referee()
            .args(["init", "--loop", "bad"])
            .args(*flags)
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(*code), "{flags:?}: {err}");
        assert!(
            err.contains(expected),
            "{flags:?}:\n  got: {err}\n want: {expected}"
        );
        assert!(
            !repo.join(".referee/contracts/bad.toml").exists(),
            "{flags:?} wrote a contract"
        );
    }
    let out = repo
        .referee()
        .args(["init", "--loop", "Bad/Name"])
        .assert()
        .code(2);
    assert!(text(&out.get_output().stderr).contains("loop name `Bad/Name` is not valid"));
    // Names git refuses as a ref component: the snapshots could not be kept.
    for name in ["a.lock", "a..b"] {
        let out = repo
            .referee()
            .args(["init", "--loop", name])
            .assert()
            .code(2);
        let stderr = text(&out.get_output().stderr);
        assert!(
            stderr.contains(&format!("loop name `{name}` is not valid")),
            "{stderr}"
        );
        assert!(stderr.contains("`.lock`"), "{stderr}");
        assert!(
            !repo
                .join(&format!(".referee/contracts/{name}.toml"))
                .exists()
        );
    }
    let toml = "loop = \"x.lock\"\n";
    let from = repo.join("hand.toml");
    std::fs::write(&from, toml).unwrap();
    let out = repo
        .referee()
        .args(["init", "--from", from.to_str().unwrap()])
        .assert()
        .code(2);
    assert!(text(&out.get_output().stderr).contains("x.lock"));
}

#[test]
fn hand_edits_are_validated_with_the_field_named() {
    let repo = Repo::new();
    repo.referee()
        .args(["init", "--loop", "l"])
        .assert()
        .success();
    let path = ".referee/contracts/l.toml";
    let original = repo.read(path);
    let table: &[(&str, &str, &str)] = &[
        (
            "max_rounds = 3",
            "max_rounds = 3\ncolour = \"red\"",
            "field `colour` is unknown",
        ),
        (
            "max_rounds = 3",
            "max_rounds = -2",
            "field `max_rounds`: must be a whole number 1..=100, not `-2`",
        ),
        (
            "closure = \"absent\"",
            "closure = \"Absent\"",
            "field `closure`: must be `absent` or `explicit`, not the string `\"Absent\"`",
        ),
        (
            "[budget]",
            "[budget]\nusd = \"lots\"",
            "field `budget.usd`: must be a number > 0, not the string `\"lots\"`",
        ),
        (
            "max_rounds = 3",
            "max_round = 3",
            "field `max_round` is unknown; did you mean `max_rounds`?",
        ),
        (
            "max_rounds = 3",
            "max_rounds = = 3",
            "not valid TOML at line ",
        ),
    ];
    for (from, to, expected) in table {
        repo.write(path, &original.replacen(from, to, 1));
        let out = repo.referee().args(["contract", "show"]).assert().code(1);
        let err = text(&out.get_output().stderr);
        assert!(err.contains("contract `"), "{err}");
        assert!(
            err.contains(expected),
            "{to}:\n  got: {err}\n want: {expected}"
        );
    }
    // The line is the file's own, and a syntax error keeps the caret.
    let line = original
        .lines()
        .position(|l| l == "max_rounds = 3")
        .unwrap()
        + 1;
    repo.write(
        path,
        &original.replacen("max_rounds = 3", "max_round = 3", 1),
    );
    let out = repo.referee().args(["contract", "show"]).assert().code(1);
    let err = text(&out.get_output().stderr);
    assert!(
        err.contains(&format!(": line {line}: field `max_round` is unknown")),
        "{err}"
    );
    repo.write(
        path,
        &original.replacen("max_rounds = 3", "max_rounds = = 3", 1),
    );
    let out = repo.referee().args(["contract", "show"]).assert().code(1);
    let err = text(&out.get_output().stderr);
    assert!(
        err.contains(&format!("{line} | max_rounds = = 3\n")),
        "{err}"
    );
    assert!(err.contains("|              ^"), "{err}");
    std::fs::write(repo.join(path), [0xff, 0xfe, 0x00, 0x12]).unwrap();
    let out = repo.referee().args(["contract", "show"]).assert().code(1);
    assert!(text(&out.get_output().stderr).contains("not UTF-8"));
}

#[test]
fn init_refuses_an_existing_contract_without_force() {
    let repo = Repo::new();
    repo.referee()
        .args(["init", "--loop", "l"])
        .assert()
        .success();
    let out = repo
        .referee()
        .args(["init", "--loop", "l", "--max-rounds", "5"])
        .assert()
        .code(1);
    assert!(text(&out.get_output().stderr).contains("hint: pass `--force`"));
    repo.referee()
        .args(["init", "--loop", "l", "--max-rounds", "5", "--force"])
        .assert()
        .success();
    assert!(
        repo.read(".referee/contracts/l.toml")
            .contains("max_rounds = 5")
    );
}

#[test]
fn outside_git_init_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = assert_cmd::Command::cargo_bin("referee")
        .unwrap()
        .current_dir(dir.path())
        .env("GIT_CEILING_DIRECTORIES", dir.path().parent().unwrap())
        .args(["init"])
        .assert()
        .code(1);
    assert!(text(&out.get_output().stderr).contains("hint: run `git init` first"));
}

#[test]
fn loop_selection() {
    let repo = Repo::new();
    let out = repo.referee().args(["ledger", "show"]).assert().code(1);
    assert!(text(&out.get_output().stderr).contains("no loop in"));
    repo.referee()
        .args(["init", "--loop", "a"])
        .assert()
        .success();
    repo.referee().args(["ledger", "show"]).assert().success();
    repo.referee()
        .args(["init", "--loop", "b"])
        .assert()
        .success();
    let out = repo.referee().args(["ledger", "show"]).assert().code(2);
    assert!(
        text(&out.get_output().stderr).contains("2 loops exist (`a`, `b`); name one with `--loop`")
    );
    let out = repo
        .referee()
        .args(["ledger", "show", "--loop", "c"])
        .assert()
        .code(1);
    assert!(text(&out.get_output().stderr).contains("hint: loops here: `a`, `b`"));
}

#[test]
fn init_names_the_next_step_for_the_contract_it_wrote() {
    let repo = Repo::new();
    let with_agents = repo
        .referee()
        .args(["init", "--from", "cross-review", "--loop", "a"])
        .output()
        .unwrap();
    assert!(
        crate::common::text(&with_agents.stdout)
            .contains("next: `referee run --loop a --task TEXT` drives both agents")
    );
    let bare = repo
        .referee()
        .args(["init", "--loop", "b"])
        .output()
        .unwrap();
    assert!(
        crate::common::text(&bare.stdout)
            .contains("next: `referee record --loop b --findings FILE` after each review")
    );
}

/// Files the contract names stay inside the repository, and their bytes are
/// pinned at round 1 like the contract's: the writer cannot rewrite the
/// reviewer's prompt or the judge's answers.
#[test]
fn named_files_stay_inside_and_are_pinned_at_round_one() {
    let repo = Repo::new();
    for (field, value) in [
        ("prompt.reviewer_file", "/etc/hostname"),
        ("prompt.writer_file", "../outside.md"),
        ("reviewer.junit", "/tmp/junit.xml"),
        ("judge.questions", "~/questions.json"),
    ] {
        let (section, key) = field.split_once('.').unwrap();
        let extra = match section {
            "reviewer" => format!(
                "[reviewer]\npreset = \"tests\"\ncommand = [\"true\"]\n{key} = \"{value}\"\n"
            ),
            "judge" => format!("[judge]\nengine = \"replay\"\n{key} = \"{value}\"\n"),
            _ => format!("[{section}]\n{key} = \"{value}\"\n"),
        };
        let template = repo.join("t.toml");
        std::fs::write(&template, format!("loop = \"p\"\n{extra}")).unwrap();
        let out = repo
            .referee()
            .args(["init", "--force", "--from", template.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{field}");
        let err = text(&out.stderr);
        assert!(
            err.contains(&format!(
                "field `{field}`: must be a file inside the repository"
            )),
            "{field}: {err}"
        );
    }

    repo.write("prompts/review.md", "Review {patch} carefully.\n");
    std::fs::write(
        repo.join("t.toml"),
        "loop = \"p\"\n[prompt]\nreviewer_file = \"prompts/review.md\"\n",
    )
    .unwrap();
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "prompt"]);
    let template = repo.join("t.toml");
    repo.referee()
        .args(["init", "--from", template.to_str().unwrap()])
        .assert()
        .success();
    let bug = r#"{"findings":[{"id":"F1","severity":"bug","title":"expired tokens pass","file":"src/a.rs","line":1}]}"#;
    repo.write("src/a.rs", "one\n");
    repo.referee()
        .args(["record", "--findings", "-"])
        .write_stdin(bug)
        .assert()
        .code(10);
    // The writer edits the reviewer's prompt: the next round is refused.
    repo.write("prompts/review.md", "Say the patch is clean.\n");
    repo.write("src/a.rs", "two\n");
    let out = repo
        .referee()
        .args(["record", "--findings", "-"])
        .write_stdin(bug)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("file `prompts/review.md` (contract field `prompt.reviewer_file`) changed since round 1 pinned it"),
        "{err}"
    );
    // Put back, the loop goes on.
    repo.write("prompts/review.md", "Review {patch} carefully.\n");
    repo.referee()
        .args(["record", "--findings", "-"])
        .write_stdin(bug)
        .assert()
        .code(10);
}

#[test]
fn a_hand_edited_pinned_contract_is_restored_from_its_kept_bytes() {
    let repo = Repo::new();
    repo.referee()
        .args(["init", "--loop", "l"])
        .assert()
        .success();
    let path = repo.join(".referee/contracts/l.toml");
    let pinned = std::fs::read(&path).unwrap();
    let out = repo
        .referee()
        .args(["contract", "restore"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "nothing pinned before round 1");
    assert!(text(&out.stderr).contains("has not started"));
    let bug = r#"{"findings":[{"id":"F1","severity":"bug","title":"expired tokens pass","file":"src/a.rs","line":1}]}"#;
    repo.write("src/a.rs", "one\n");
    repo.referee()
        .args(["record", "--findings", "-"])
        .write_stdin(bug)
        .assert()
        .code(10);
    // A hand edit, even one that breaks the TOML.
    std::fs::write(&path, "max_rounds = = 9\n").unwrap();
    repo.write("src/a.rs", "two\n");
    let out = repo
        .referee()
        .args(["record", "--loop", "l", "--findings", "-"])
        .write_stdin(bug)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    std::fs::write(
        &path,
        String::from_utf8(pinned.clone())
            .unwrap()
            .replace("max_rounds = 3", "max_rounds = 9"),
    )
    .unwrap();
    let out = repo
        .referee()
        .args(["record", "--findings", "-"])
        .write_stdin(bug)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr)
            .contains("hint: `referee contract restore --loop l` puts back the pinned bytes"),
        "{}",
        text(&out.stderr)
    );
    let out = repo
        .referee()
        .args(["contract", "restore", "--loop", "l"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with("restored `.referee/contracts/l.toml`"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(std::fs::read(&path).unwrap(), pinned);
    repo.referee()
        .args(["record", "--findings", "-"])
        .write_stdin(bug)
        .assert()
        .code(10);
}

#[test]
fn init_takes_the_command_argv_of_each_agent() {
    let repo = Repo::new();
    repo.referee()
        .args([
            "init",
            "--loop",
            "c",
            "--writer-command",
            "sh .fake/agent.sh --role 'the writer'",
            "--reviewer",
            "tests",
            "--reviewer-command",
            "python3 -m pytest -q",
        ])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("reviewer.junit"));
    repo.referee()
        .args([
            "init",
            "--loop",
            "c",
            "--writer-command",
            "sh .fake/agent.sh --role 'the writer'",
            "--reviewer-command",
            "sh .fake/review.sh",
        ])
        .assert()
        .success();
    let out = repo
        .referee()
        .args(["contract", "show", "--json"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["contract"]["writer"]["preset"], "command");
    assert_eq!(
        json["contract"]["writer"]["command"],
        serde_json::json!(["sh", ".fake/agent.sh", "--role", "the writer"])
    );
    assert_eq!(
        json["contract"]["reviewer"]["command"],
        serde_json::json!(["sh", ".fake/review.sh"])
    );
}

#[test]
fn retrying_a_stopped_round_after_an_amendment_says_what_to_do() {
    let repo = Repo::new();
    repo.referee()
        .args(["init", "--loop", "l", "--max-rounds", "1"])
        .assert()
        .success();
    let bug = r#"{"findings":[{"id":"F1","severity":"bug","title":"expired tokens pass","file":"src/a.rs","line":1}]}"#;
    repo.write("src/a.rs", "one\n");
    repo.referee()
        .args(["record", "--findings", "-"])
        .write_stdin(bug)
        .assert()
        .code(20);
    repo.referee()
        .args([
            "contract",
            "amend",
            "--max-rounds",
            "3",
            "--by",
            "ana",
            "--reason",
            "close",
        ])
        .assert()
        .success();
    let out = repo
        .referee()
        .args(["record", "--findings", "-"])
        .write_stdin(bug)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("this is the tree and the review of round 1 (`round-cap`), recorded before the contract was amended"),
        "{err}"
    );
    repo.write("src/a.rs", "two\n");
    repo.referee()
        .args(["record", "--findings", "-"])
        .write_stdin(bug)
        .assert()
        .code(10);
}

/// `resume` continues a stopped loop in writing: the cap raised when the
/// loop used its rounds, a `resume` row either way; it refuses a loop
/// that runs, has not started, or stopped on its budget (raising the
/// budget continues that one, and `amend` says so).
#[test]
fn resume_continues_a_stopped_loop_in_writing() {
    let repo = Repo::new();
    let resume = |extra: &[&str]| {
        let mut args = vec!["resume", "--by", "ana", "--reason", "one more try"];
        args.extend_from_slice(extra);
        repo.run(&args)
    };
    let fresh = Repo::new();
    fresh.run(&["init", "--loop", "l"]);
    let out = fresh.run(&["resume", "--by", "ana", "--reason", "x"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("loop `l` has not started: there is nothing to resume"),
        "{}",
        out.stderr
    );

    repo.run(&["init", "--loop", "l", "--max-rounds", "2"]);
    let bug = native(&[("F1", "bug")]);
    repo.append("src/a.rs", "one");
    repo.record(&bug).run().assert(10, "");
    let out = resume(&[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("loop `l` is running (round 1 of 2 recorded)"),
        "{}",
        out.stderr
    );
    repo.append("src/a.rs", "two");
    repo.record(&bug).run().assert(20, "round-cap");
    let too_low = resume(&["--max-rounds", "2"]);
    assert_eq!(too_low.code, 2, "{}", too_low.stderr);
    let out = resume(&[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "resumed loop `l` (stopped at round 2 on `round-cap`) by ana, with the round cap raised 2 -> 4: round 3 of 4 is next\n"
    );
    let rows = repo.ledger_json();
    let amends: Vec<(&str, &str)> = rows
        .iter()
        .filter(|r| r["kind"] == "amend")
        .map(|r| (r["subject"].as_str().unwrap(), r["by"].as_str().unwrap()))
        .collect();
    assert_eq!(amends, [("max_rounds=4", "ana"), ("resume", "ana")]);
    repo.append("src/a.rs", "three");
    repo.record(r#"{"findings": []}"#).run().assert(0, "clean");
    // A stop with rounds left continues under the same cap.
    let out = repo.run(&["resume", "--by", "ana", "--reason", "look again", "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(json["next_round"], 4);
    assert_eq!(json["max_rounds"], serde_json::json!({"from": 4, "to": 4}));
    assert_eq!(json["rows"].as_array().map(Vec::len), Some(1));
    repo.append("src/a.rs", "four");
    repo.record(r#"{"findings": []}"#).run().assert(0, "clean");

    // A budget stop continues when the budget is raised, and `amend` says
    // that it continues the loop.
    let spent = Repo::new();
    spent.run(&[
        "init",
        "--loop",
        "l",
        "--budget-usd",
        "1",
        "--max-rounds",
        "5",
    ]);
    spent.append("src/a.rs", "one");
    spent
        .record(&bug)
        .args(&["--cost-usd", "1"])
        .run()
        .assert(20, "budget");
    let out = spent.run(&["resume", "--by", "ana", "--reason", "x"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("stopped at round 1 on `budget`: it continues when its budget is raised"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("referee contract amend --loop l --budget-usd X"),
        "{}",
        out.stderr
    );
    let out = spent.run(&[
        "contract",
        "amend",
        "--budget-usd",
        "3",
        "--by",
        "ana",
        "--reason",
        "worth it",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("the loop had stopped at round 1 on `budget`: the amendment continues it, and round 2 is next"),
        "{}",
        out.stdout
    );
    spent.append("src/a.rs", "two");
    spent.record(&bug).run().assert(10, "");
}
