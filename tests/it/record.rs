//! `record` scenarios, one per outcome (SPEC §4): each asserts the exit code,
//! the rule, the round it fired in and the ledger, through the binary, in a
//! temporary git repository.

use serde_json::Value;

use crate::common::{Repo, native, text, title};

fn rounds(repo: &Repo) -> Vec<Value> {
    repo.ledger_json()
        .into_iter()
        .filter(|r| r["kind"] == "round")
        .collect()
}

#[test]
fn clean_at_round_one() {
    let repo = Repo::with_loop("l", &[]);
    repo.append("src/a.rs", "fn a() {}");
    let out = repo.record(r#"{"findings": []}"#).run();
    out.assert(0, "clean");
    assert!(
        out.stdout
            .contains("done: round 1: no must-fix finding is open")
    );
    let rows = rounds(&repo);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["rule"], "clean");
    assert_eq!(rows[0]["verdict"], "stop");
    assert_eq!(rows[0]["diff_added"], 1);
    assert!(!out.stdout.contains("finding:"), "no hand-off on clean");
    repo.referee().args(["ledger", "verify"]).assert().success();
}

#[test]
fn converge_then_clean() {
    let repo = Repo::with_loop("l", &[]);
    repo.append("src/a.rs", "fn a() {}");
    let out = repo.record(&native(&[("F1", "bug"), ("F2", "nit")])).run();
    out.assert(10, "");
    assert!(
        out.stdout.contains("continue: fix F1, then record round 2"),
        "{}",
        out.stdout
    );
    repo.append("src/a.rs", "fn b() {}");
    let out = repo.record(&native(&[("F2", "nit")])).run();
    out.assert(0, "clean");
    let rows = rounds(&repo);
    assert_eq!(rows.len(), 2);
    assert_eq!(
        (
            rows[1]["closed"].as_u64(),
            rows[1]["must_fix_left"].as_u64(),
            rows[1]["below_floor_open"].as_u64()
        ),
        (Some(1), Some(0), Some(1))
    );
    // The snapshots are refs; the user's branch and index are untouched.
    let refs = repo.git(&["for-each-ref", "--format=%(refname)", "refs/referee/"]);
    assert_eq!(
        refs,
        "refs/referee/l/contract\nrefs/referee/l/round-1\nrefs/referee/l/round-2\n"
    );
    assert_eq!(
        repo.git(&["status", "--porcelain"]),
        "?? .referee/\n?? src/\n"
    );
    assert_eq!(repo.git(&["rev-parse", "--abbrev-ref", "HEAD"]), "main\n");
}

#[test]
fn reopened_finding_escalates_with_both_positions() {
    let repo = Repo::with_loop("l", &["--max-rounds", "5"]);
    repo.append("src/a.rs", "a");
    repo.record(&native(&[("F1", "bug")])).run().assert(10, "");
    repo.append("src/a.rs", "b");
    let responses = repo.join("responses.json");
    std::fs::write(
        &responses,
        r#"{"responses": [{"id": "F1", "status": "fixed", "note": "checked the boundary"}, {"id": "F9", "status": "fixed"}]}"#,
    )
    .unwrap();
    let out = repo
        .record(&native(&[("F2", "bug")]))
        .args(&["--responses", responses.to_str().unwrap()])
        .run();
    out.assert(10, "");
    assert!(
        out.stdout
            .contains("note: the writer's responses name ids the loop does not know: F9"),
        "{}",
        out.stdout
    );
    repo.append("src/a.rs", "c");
    let out = repo.record(&native(&[("F1", "bug"), ("F2", "bug")])).run();
    out.assert(20, "reopened");
    assert!(
        out.stdout
            .contains("round 3: F1 closed in round 2 is reported again"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains(&format!("finding: {} (`src/a.rs:1`) [F1 bug]", title("F1"))),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("reviewer says: reviewer on F1"));
    assert!(
        out.stdout
            .contains("writer says: fixed: checked the boundary")
    );
    assert!(out.stdout.contains("writer says: (no response)"));
    assert!(out.stdout.contains("rounds contested: 1, 3"));
    let rows = rounds(&repo);
    assert_eq!(rows[2]["reopened"], 1);
    assert_eq!(rows[2]["rule"], "reopened");

    // A stopped loop takes no more rounds.
    repo.append("src/a.rs", "d");
    let out = repo.record(&native(&[("F1", "bug")])).run();
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("loop `l` stopped at round 3 on `reopened`"),
        "{}",
        out.stderr
    );
    assert_eq!(rounds(&repo).len(), 3);
}

#[test]
fn flip_flop_by_undo_marker() {
    let repo = Repo::with_loop("l", &["--max-rounds", "5"]);
    repo.append("src/a.rs", "a");
    repo.record(&native(&[("F1", "bug")])).run().assert(10, "");
    repo.append("src/a.rs", "b");
    let out = repo
        .record(
            r#"{"findings":[{"id":"F2","severity":"bug","title":"put it back","undoes":"F1"}]}"#,
        )
        .run();
    out.assert(20, "flip-flop");
    assert!(
        out.stdout
            .contains("round 2: F2 undoes the earlier required F1")
    );
    // Both sides of the flip reach the human.
    assert!(
        out.stdout.contains("[F1 bug, closed, undone by F2]"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("[F2 bug]"));
}

#[test]
fn flip_flop_by_inverse_patch() {
    let repo = Repo::with_loop("l", &["--max-rounds", "5"]);
    repo.write("src/a.rs", "let limit = 1;\n");
    repo.record(&native(&[("F1", "bug")])).run().assert(10, "");
    repo.write("src/a.rs", "let limit = 2;\n");
    repo.record(&native(&[("F2", "bug")])).run().assert(10, "");
    // Whitespace differs; the line is still the one round 2's fix removed.
    repo.write("src/a.rs", "let  limit = 1 ;\n");
    let out = repo.record(&native(&[("F3", "bug")])).run();
    out.assert(20, "flip-flop");
    assert!(
        out.stdout.contains(
            "round 3: the writer's patch puts back a line that round 2 removed in `src/a.rs`: `let  limit = 1 ;`"
        ),
        "{}",
        out.stdout
    );
}

#[test]
fn diff_growth_recommends_the_round_with_fewest_must_fix() {
    let repo = Repo::with_loop("l", &["--max-rounds", "6"]);
    repo.append("src/a.rs", "1");
    repo.record(&native(&[("F1", "bug"), ("F2", "bug")]))
        .run()
        .assert(10, "");
    repo.append("src/a.rs", "2");
    repo.append("src/a.rs", "2");
    repo.record(&native(&[("F1", "bug")])).run().assert(10, "");
    for _ in 0..3 {
        repo.append("src/a.rs", "3");
    }
    let out = repo.record(&native(&[("F1", "bug"), ("F3", "bug")])).run();
    out.assert(20, "diff-growth");
    assert!(
        out.stdout.contains(
            "(1 < 2 < 3 lines) while must-fix findings went 2 -> 2; round 2 had the fewest (1)"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("revert to: round 2 (`refs/referee/l/round-2`)")
    );
    assert!(
        out.stdout
            .contains("git restore --source=refs/referee/l/round-2 -- .")
    );
    // The recommended ref holds round 2's tree; the referee reverted nothing.
    let tree = repo.git(&["show", "refs/referee/l/round-2:src/a.rs"]);
    assert_eq!(tree, "1\n2\n2\n");
    assert_eq!(repo.read("src/a.rs"), "1\n2\n2\n3\n3\n3\n");
}

#[test]
fn round_cap_escalates_the_leftovers() {
    let repo = Repo::with_loop("l", &["--max-rounds", "2"]);
    repo.append("src/a.rs", "a");
    repo.record(&native(&[("F1", "bug")])).run().assert(10, "");
    repo.append("src/a.rs", "b");
    let out = repo.record(&native(&[("F1", "bug")])).run();
    out.assert(20, "round-cap");
    assert!(
        out.stdout
            .contains("round 2 of 2: 1 must-fix finding still open")
    );
    // The hand-off ends with what a person can do, as commands.
    assert!(out.stdout.contains("what you can do:"), "{}", out.stdout);
    assert!(
        out.stdout.contains(
            "give the writer more rounds, in writing: `referee resume --loop l --max-rounds 4 --by NAME --reason TEXT`"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("`referee waive F1 --loop l --by NAME --reason TEXT`")
    );
    assert!(
        out.stdout
            .contains("`referee approve --loop l --by NAME --reason TEXT`")
    );
    // Amending to the cap in force says so plainly.
    let same = repo
        .referee()
        .args([
            "contract",
            "amend",
            "--max-rounds",
            "2",
            "--by",
            "ana",
            "--reason",
            "x",
        ])
        .output()
        .unwrap();
    assert_eq!(same.status.code(), Some(1));
    let err = text(&same.stderr);
    assert!(
        err.contains("the round cap is 2 already; nothing to amend"),
        "{err}"
    );
    assert!(!err.contains("stop a loop early"), "{err}");
    assert!(out.stdout.contains("rounds contested: 1, 2"));

    // A human raises the cap in writing; the loop goes on.
    repo.referee()
        .args([
            "contract",
            "amend",
            "--max-rounds",
            "3",
            "--by",
            "ann",
            "--reason",
            "one more",
        ])
        .assert()
        .success();
    repo.append("src/a.rs", "c");
    let out = repo.record(r#"{"findings":[]}"#).run();
    out.assert(0, "clean");
    assert!(out.stdout.contains("round 3 of 3"));
}

#[test]
fn nit_round_with_explicit_closure_lists_the_unconfirmed() {
    let repo = Repo::with_loop("l", &["--closure", "explicit"]);
    repo.append("src/a.rs", "a");
    repo.record(&native(&[("F1", "bug")])).run().assert(10, "");
    repo.append("src/a.rs", "b");
    let out = repo.record(&native(&[("N1", "nit")])).run();
    out.assert(0, "nit-round");
    assert!(
        out.stdout.contains("carried must-fix F1 unconfirmed"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("unconfirmed: F1 carried from earlier rounds"),
        "the hand-off follows a nit-round"
    );
    let rows = rounds(&repo);
    assert_eq!(rows[1]["must_fix_left"], 1);
    let handoff = repo.referee().args(["escalate"]).output().unwrap();
    assert!(text(&handoff.stdout).contains("unconfirmed: F1 carried from earlier rounds"));
}

#[test]
fn explicit_closure_closes_only_resolved() {
    let repo = Repo::with_loop("l", &["--closure", "explicit"]);
    repo.append("src/a.rs", "a");
    repo.record(&native(&[("F1", "bug"), ("F2", "bug")]))
        .run()
        .assert(10, "");
    repo.append("src/a.rs", "b");
    let out = repo.record(r#"{"findings":[],"resolved":["F1"]}"#).run();
    out.assert(10, "");
    let rows = rounds(&repo);
    assert_eq!(
        (
            rows[1]["closed"].as_u64(),
            rows[1]["must_fix_left"].as_u64()
        ),
        (Some(1), Some(1))
    );
}

#[test]
fn scope_guard_ends_the_round_unreviewed() {
    let repo = Repo::with_loop("l", &["--scope", "src/**"]);
    repo.append("src/a.rs", "a");
    repo.write("docs/notes.md", "x\n");
    let out = repo.record(&native(&[("F1", "bug")])).run();
    out.assert(20, "scope");
    assert!(
        out.stdout.contains(
            "round 1: the patch touches 1 file outside the scope (`src/**`): `docs/notes.md`"
        ),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("outside the scope: `docs/notes.md`"));
    let rows = rounds(&repo);
    assert_eq!(
        (rows[0]["opened"].as_u64(), rows[0]["rule"].as_str()),
        (Some(0), Some("scope"))
    );
}

/// The commands a scope stop suggests for what lies outside the scope,
/// run in bash as pasted.
fn run_scope_commands(repo: &Repo, stdout: &str) -> usize {
    let commands: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("  "))
        .filter_map(|l| l.split_once(": `"))
        .filter(|(what, _)| what.contains("outside the scope"))
        .filter_map(|(_, cmd)| cmd.strip_suffix('`'))
        .collect();
    for command in &commands {
        let ran = std::process::Command::new("bash")
            .args(["-c", command])
            .current_dir(repo.path())
            .envs(crate::common::GIT_ENV.iter().copied())
            .output()
            .expect("bash");
        assert!(ran.status.success(), "{command}: {}", text(&ran.stderr));
    }
    commands.len()
}

/// A later round's scope stop: the suggested commands put the tree back as
/// the round found it when pasted into a shell: the changed file restored
/// from the round's start, the added ones removed; a writer's file name is
/// one quoted word that runs nothing.
#[test]
fn the_scope_stop_suggests_commands_that_undo_it() {
    let repo = Repo::with_loop("l", &["--scope", "src/**"]);
    repo.append("src/a.rs", "a");
    repo.record(&native(&[("F1", "bug")])).run().assert(10, "");
    repo.append("src/a.rs", "b");
    repo.append("README.md", "changed");
    let hostile = "notes $(touch pwned); x.md";
    repo.write(hostile, "x\n");
    repo.write("docs/new\nline.md", "y\n");
    let out = repo.record(&native(&[("F1", "bug")])).run();
    out.assert(20, "scope");
    let round_1 = repo.git(&["rev-parse", "refs/referee/l/round-1"]);
    let restore = format!("git restore --source={} -- README.md", round_1.trim());
    assert!(out.stdout.contains(&restore), "{}", out.stdout);
    assert!(
        out.stdout
            .contains(r#"rm -- $'docs/new\nline.md' 'notes $(touch pwned); x.md'"#),
        "{}",
        out.stdout
    );
    assert_eq!(run_scope_commands(&repo, &out.stdout), 2, "{}", out.stdout);
    assert!(!repo.path().join("pwned").exists());
    assert_eq!(repo.read("README.md"), "hello\n");
    assert!(!repo.path().join(hostile).exists());
    assert!(!repo.path().join("docs/new\nline.md").exists());
    assert!(repo.read("src/a.rs").ends_with("b\n"));
}

/// At round 1 the patch starts at the base, so what lies outside the scope
/// may be the person's own work from before `init`: the stop sets it
/// aside in a stash, never `restore` or `rm`, and `git stash pop` brings
/// it back.
#[test]
fn the_scope_stop_at_round_one_sets_the_changes_aside() {
    let repo = Repo::with_loop("l", &["--scope", "src/**"]);
    repo.append("src/a.rs", "a");
    repo.append("README.md", "changed");
    let hostile = "notes $(touch pwned); x.md";
    repo.write(hostile, "x\n");
    let out = repo.record(&native(&[("F1", "bug")])).run();
    out.assert(20, "scope");
    assert!(
        out.stdout.contains(
            r#"git stash push --include-untracked -- README.md 'notes $(touch pwned); x.md'"#
        ),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("git restore") && !out.stdout.contains("rm --"));
    assert_eq!(run_scope_commands(&repo, &out.stdout), 1, "{}", out.stdout);
    assert!(!repo.path().join("pwned").exists());
    assert_eq!(repo.read("README.md"), "hello\n");
    assert!(!repo.path().join(hostile).exists());
    assert!(repo.path().join("src/a.rs").exists());
    repo.git(&["stash", "pop", "-q"]);
    assert!(repo.read("README.md").contains("changed"));
    assert_eq!(repo.read(hostile), "x\n");
}

/// A patch line with two tabs (a Makefile recipe, Go code) is no file:
/// the numstat listing ends where the patch begins. It was read as one, a
/// `scope` stop on a path that was a line of code.
#[test]
fn a_patch_line_with_tabs_is_not_a_file_outside_the_scope() {
    let repo = Repo::with_loop("l", &["--scope", "Makefile"]);
    repo.write("Makefile", "all:\n\techo hi\n\techo there\tand\ttabs\n");
    let out = repo.record(r#"{"findings":[]}"#).run();
    out.assert(0, "clean");
    assert!(!out.stdout.contains("scope"), "{}", out.stdout);
    let rows = rounds(&repo);
    assert_eq!(
        (rows[0]["rule"].as_str(), rows[0]["diff_added"].as_u64()),
        (Some("clean"), Some(3))
    );
}

#[test]
fn budget_guard_stops_when_spend_reaches_the_cap() {
    let repo = Repo::with_loop("l", &["--budget-usd", "1", "--max-rounds", "5"]);
    repo.append("src/a.rs", "a");
    let out = repo
        .record(&native(&[("F1", "bug")]))
        .args(&["--cost-usd", "0.6", "--tokens", "100"])
        .run();
    out.assert(10, "");
    repo.append("src/a.rs", "b");
    let out = repo
        .record(&native(&[("F1", "bug")]))
        .args(&["--cost-usd", "0.4"])
        .run();
    out.assert(20, "budget");
    assert!(
        out.stdout
            .contains("round 2: the loop spent $1.00 of its $1.00 budget"),
        "{}",
        out.stdout
    );
    let rows = rounds(&repo);
    assert_eq!(rows[0]["cost_usd"], 0.6);
    assert_eq!(rows[0]["tokens"], 100);

    // Only a person raises a budget, in writing; then the loop goes on.
    let refused = repo
        .referee()
        .args([
            "contract",
            "amend",
            "--budget-usd",
            "0.5",
            "--by",
            "ann",
            "--reason",
            "x",
        ])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    assert!(text(&refused.stderr).contains("an amendment only raises the budget, and it is 1 now"));
    repo.referee()
        .args([
            "contract",
            "amend",
            "--budget-usd",
            "2",
            "--by",
            "ann",
            "--reason",
            "worth it",
        ])
        .assert()
        .success()
        .stdout(
            "amended loop `l`: budget.usd 1 -> 2, by ann (ledger row after round 2)\n\
             the loop had stopped at round 2 on `budget`: the amendment continues it, and round 3 is next\n",
        );
    repo.append("src/a.rs", "c");
    let out = repo
        .record(r#"{"findings":[]}"#)
        .args(&["--cost-usd", "0.4"])
        .run();
    out.assert(0, "clean");
    let status = repo.referee().args(["status"]).output().unwrap();
    assert!(
        text(&status.stdout).contains("budget $2.00 (spent $1.40)"),
        "{}",
        text(&status.stdout)
    );
}

/// SPEC §4.1 Exact sums: $0.70 + $0.20 + $0.10 reaches a $1.00 budget, so
/// round 3 stops on `budget` (with float sums it fell 1e-16 short, and a
/// fourth round was paid for).
#[test]
fn costs_add_exactly_to_the_budget() {
    let repo = Repo::with_loop("l", &["--budget-usd", "1", "--max-rounds", "6"]);
    for (round, cost) in [(1, "0.7"), (2, "0.2"), (3, "0.1")] {
        repo.append("src/a.rs", cost);
        let out = repo
            .record(&native(&[("F1", "bug")]))
            .args(&["--cost-usd", cost])
            .run();
        if round < 3 {
            out.assert(10, "");
        } else {
            out.assert(20, "budget");
            assert!(
                out.stdout
                    .contains("round 3: the loop spent $1.00 of its $1.00 budget"),
                "{}",
                out.stdout
            );
        }
    }
    let rows = rounds(&repo);
    let costs: Vec<_> = rows.iter().map(|r| r["cost_usd"].clone()).collect();
    assert_eq!(costs, [0.7, 0.2, 0.1]);
    assert_eq!(rows[2]["rule"], "budget");
    let csv = std::fs::read_to_string(repo.path().join(".referee/ledgers/l.csv")).unwrap();
    assert!(
        csv.contains(",round,0.7,") && csv.contains(",round,0.1,"),
        "{csv}"
    );
    let status = repo.referee().args(["status"]).output().unwrap();
    assert!(
        text(&status.stdout).contains("budget $1.00 (spent $1.00)"),
        "{}",
        text(&status.stdout)
    );
}

/// A cost past the micro-dollar rounds to the nearest one; a cost that is
/// no amount is refused, naming the flag and the value.
#[test]
fn costs_are_read_to_the_micro_dollar() {
    let repo = Repo::with_loop("l", &["--budget-usd", "1"]);
    repo.append("src/a.rs", "a");
    for (cost, says) in [
        ("-0.5", "--cost-usd: must be a number >= 0, not `-0.5`"),
        ("nan", "--cost-usd: must be a number >= 0, not `nan`"),
        (
            "2e9",
            "--cost-usd: must be at most 1000000000 (a billion US dollars), not `2e9`",
        ),
    ] {
        let out = repo
            .record(&native(&[("F1", "bug")]))
            .args(&["--cost-usd", cost])
            .run();
        assert_eq!(out.code, 2, "{cost}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{cost}: {}", out.stderr);
    }
    assert!(rounds(&repo).is_empty());
    let out = repo
        .record(&native(&[("F1", "bug")]))
        .args(&["--cost-usd", "0.0000125"])
        .run();
    out.assert(10, "");
    assert_eq!(rounds(&repo)[0]["cost_usd"], 0.000013);
    let show = repo.referee().args(["ledger", "show"]).output().unwrap();
    assert!(
        text(&show.stdout).contains("$0.000013"),
        "{}",
        text(&show.stdout)
    );
    let amend = |usd: &str| {
        repo.referee()
            .args([
                "contract",
                "amend",
                "--budget-usd",
                usd,
                "--by",
                "ann",
                "--reason",
                "x",
            ])
            .output()
            .unwrap()
    };
    let refused = amend("1.0000001");
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        text(&refused.stderr).contains(
            "--budget-usd 1.0000001 (1 to the micro-dollar): an amendment only raises the budget, and it is 1 now"
        ),
        "{}",
        text(&refused.stderr)
    );
    let raised = amend("1.000001");
    assert!(raised.status.success(), "{}", text(&raised.stderr));
    assert!(
        text(&raised.stdout).contains("budget.usd 1 -> 1.000001"),
        "{}",
        text(&raised.stdout)
    );
}

#[test]
fn below_floor_findings_alone_are_clean() {
    let repo = Repo::with_loop("l", &["--floor", "bug"]);
    repo.append("src/a.rs", "a");
    let out = repo
        .record("[should] src/a.rs:1: prefer a const\n[nit] src/a.rs:1: spacing\n")
        .run();
    out.assert(0, "clean");
    let rows = rounds(&repo);
    assert_eq!(
        (
            rows[0]["opened"].as_u64(),
            rows[0]["below_floor_open"].as_u64()
        ),
        (Some(2), Some(2))
    );
}

#[test]
fn a_waived_finding_reported_again_is_noise_not_reopened() {
    let repo = Repo::with_loop("l", &["--max-rounds", "5"]);
    repo.append("src/a.rs", "a");
    repo.record(&native(&[("F1", "bug"), ("F2", "bug")]))
        .run()
        .assert(10, "");
    repo.referee()
        .args(["waive", "F1", "--by", "ann", "--reason", "accepted risk"])
        .assert()
        .success();
    let status = repo.referee().args(["status"]).output().unwrap();
    assert!(
        !text(&status.stdout).contains("F1"),
        "{}",
        text(&status.stdout)
    );
    repo.append("src/a.rs", "b");
    let out = repo.record(&native(&[("F1", "bug"), ("F2", "bug")])).run();
    out.assert(10, "");
    assert!(out.stdout.contains("waived   F1"), "{}", out.stdout);
    repo.append("src/a.rs", "c");
    let out = repo.record(&native(&[("F1", "bug")])).run();
    out.assert(0, "clean");
    let rows = repo.ledger_json();
    assert_eq!(rows[1]["kind"], "waive");
    assert_eq!(rows[1]["subject"], "F1");
    assert!(
        rows.iter()
            .all(|r| r["reopened"].as_u64().unwrap_or(0) == 0)
    );
    // Waiving an unknown id names it.
    let out = repo
        .referee()
        .args(["waive", "F9", "--by", "ann", "--reason", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("loop `l` knows no finding `F9`"));
}

#[test]
fn a_contract_edited_mid_loop_is_refused_naming_both_hashes() {
    let repo = Repo::with_loop("l", &[]);
    repo.append("src/a.rs", "a");
    repo.record(&native(&[("F1", "bug")])).run().assert(10, "");
    let path = ".referee/contracts/l.toml";
    let body = repo.read(path).replace("max_rounds = 3", "max_rounds = 9");
    repo.write(path, &body);
    repo.append("src/a.rs", "b");
    let out = repo.record(&native(&[("F1", "bug")])).run();
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("changed since round 1: the ledger pins sha256 `"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("the file now has `"));
    assert_eq!(rounds(&repo).len(), 1);
}

#[test]
fn malformed_reviewer_output_records_nothing() {
    let repo = Repo::with_loop("l", &[]);
    repo.append("src/a.rs", "a");
    for bad in ["", "{\"findings\": [", "{\"results\": 3}"] {
        let out = repo.record(bad).run();
        assert_eq!(out.code, 1, "{bad:?}: {}", out.stdout);
        assert!(out.stderr.contains("findings `stdin`"), "{}", out.stderr);
        assert!(
            out.stderr.contains("nothing was recorded"),
            "{}",
            out.stderr
        );
    }
    assert!(rounds(&repo).is_empty());
    assert!(repo.git(&["for-each-ref", "refs/referee/"]).is_empty());
}

#[test]
fn a_retried_record_appends_nothing_and_answers_the_same() {
    let repo = Repo::with_loop("l", &[]);
    repo.append("src/a.rs", "a");
    let first = repo.record(&native(&[("F1", "bug")])).run();
    let again = repo.record(&native(&[("F1", "bug")])).run();
    assert_eq!((first.code, again.code), (10, 10));
    assert!(
        again
            .stdout
            .starts_with("already recorded as round 1: nothing appended (the same tree and review, or the same idempotency key)\n")
    );
    assert_eq!(rounds(&repo).len(), 1);

    // An idempotency key answers the first outcome to the same call
    // (tests/it/locks.rs: another call under the key is refused).
    repo.append("src/a.rs", "b");
    let keyed = repo
        .record(r#"{"findings":[]}"#)
        .args(&["--idempotency-key", "k1", "--json"])
        .run();
    assert_eq!(keyed.code, 0);
    let retry = repo
        .record(r#"{"findings":[]}"#)
        .args(&["--idempotency-key", "k1", "--json"])
        .run();
    assert_eq!(retry.code, 0);
    let json: Value = serde_json::from_str(&retry.stdout).unwrap();
    assert_eq!(
        (json["already_recorded"].as_bool(), json["round"].as_u64()),
        (Some(true), Some(2))
    );
    assert_eq!(rounds(&repo).len(), 2);
}

#[test]
fn another_review_of_the_tree_a_loop_stopped_on_is_answered_with_the_stop() {
    // What a CI job run again sends: the same tree, a review whose bytes
    // differ (a report's timestamps, a reviewer's wording).
    let ledger = |repo: &Repo| std::fs::read(repo.join(".referee/ledgers/l.csv")).unwrap();
    let repo = Repo::with_loop("l", &[]);
    repo.append("src/a.rs", "a");
    repo.record(r#"{"findings": []}"#).run().assert(0, "clean");
    let before = ledger(&repo);
    let again = repo.record("{\"findings\": [ ]}\n").run();
    assert_eq!(again.code, 0, "{}{}", again.stdout, again.stderr);
    assert!(
        again.stdout.starts_with(
            "already done: loop `l` stopped at round 1 on `clean`, and the work tree is that round's: this review was not recorded, nothing appended\n"
        ),
        "{}",
        again.stdout
    );
    assert!(
        again
            .stdout
            .contains("done: round 1: no must-fix finding is open")
    );
    assert_eq!(ledger(&repo), before);

    // An escalated stop answers with its code and its hand-off.
    let repo = Repo::with_loop("l", &["--max-rounds", "1"]);
    repo.append("src/a.rs", "a");
    repo.record(&native(&[("F1", "bug")]))
        .run()
        .assert(20, "round-cap");
    let before = ledger(&repo);
    let again = repo
        .record(&native(&[("F1", "bug"), ("F2", "bug")]))
        .args(&["--json"])
        .run();
    assert_eq!(again.code, 20, "{}{}", again.stdout, again.stderr);
    let json: Value = serde_json::from_str(&again.stdout).unwrap();
    assert_eq!(
        (
            json["already_done"].as_bool(),
            json["already_recorded"].as_bool(),
            json["round"].as_u64(),
            json["rule"].as_str(),
            json["exit"].as_i64()
        ),
        (
            Some(true),
            Some(false),
            Some(1),
            Some("round-cap"),
            Some(20)
        )
    );
    assert_eq!(ledger(&repo), before);

    // New work is a new round, which a stopped loop does not take.
    repo.append("src/a.rs", "b");
    let out = repo.record(&native(&[("F1", "bug")])).run();
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains(
            "loop `l` stopped at round 1 on `round-cap`, and the work tree changed since: a stopped loop takes no more rounds; nothing was recorded"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(ledger(&repo), before);
}

#[test]
fn record_json_has_the_columns_and_the_findings_with_states() {
    let repo = Repo::with_loop("l", &[]);
    repo.append("src/a.rs", "a");
    let out = repo
        .record(&native(&[("F1", "bug"), ("N1", "nit")]))
        .args(&["--json"])
        .run();
    assert_eq!(out.code, 10);
    let json: Value = serde_json::from_str(&out.stdout).unwrap();
    for column in [
        "round",
        "opened",
        "closed",
        "reopened",
        "must_fix_left",
        "below_floor_open",
        "diff_added",
        "diff_removed",
        "verdict",
        "rule",
        "at",
        "prev_sha256",
        "row_sha256",
    ] {
        assert!(json.get(column).is_some(), "{column}");
    }
    assert_eq!(json["opened"], 2);
    assert_eq!(json["exit"], 10);
    assert_eq!(json["findings"][0]["id"], "F1");
    assert_eq!(json["findings"][0]["state"], "new");
    assert_eq!(json["findings"][0]["must_fix"], true);
    assert_eq!(json["findings"][1]["must_fix"], false);
    assert_eq!(json["snapshot_ref"], "refs/referee/l/round-1");
}

#[test]
fn escalate_speaks_text_markdown_and_json() {
    let repo = Repo::with_loop("l", &["--max-rounds", "1"]);
    repo.append("src/a.rs", "a");
    repo.record(&native(&[("F1", "block")]))
        .run()
        .assert(20, "round-cap");
    let md = repo
        .referee()
        .args(["escalate", "--format", "markdown"])
        .output()
        .unwrap();
    let md = text(&md.stdout);
    assert!(
        md.starts_with("## loop `l` stopped at round 1 of 1 on `round-cap`"),
        "{md}"
    );
    assert!(md.contains(&format!(
        "- **finding:** {} (`src/a.rs:1`) [F1 block]",
        title("F1")
    )));
    assert!(md.contains("| round | opened |"));
    let json = repo
        .referee()
        .args(["escalate", "--json"])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(json["rule"], "round-cap");
    assert_eq!(json["findings"][0]["writer_says"], Value::Null);
    assert_eq!(
        json["findings"][0]["rounds_contested"],
        serde_json::json!([1])
    );
    assert_eq!(json["ledger"].as_array().map(Vec::len), Some(1));
}

#[test]
fn findings_lists_history_and_sarif_baselines() {
    let repo = Repo::with_loop("l", &["--max-rounds", "5"]);
    repo.append("src/a.rs", "a");
    repo.record(&native(&[("F1", "bug"), ("F2", "bug")]))
        .run()
        .assert(10, "");
    repo.append("src/a.rs", "b");
    repo.record(&native(&[("F2", "bug"), ("F3", "should")]))
        .run()
        .assert(10, "");
    let out = repo
        .referee()
        .args(["findings", "--format", "sarif"])
        .output()
        .unwrap();
    let sarif: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    let states: Vec<(&str, &str)> = results
        .iter()
        .map(|r| {
            (
                r["properties"]["id"].as_str().unwrap(),
                r["baselineState"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        states,
        vec![("F1", "absent"), ("F2", "unchanged"), ("F3", "new")]
    );
    assert_eq!(results[2]["level"], "warning");
    assert!(results[0]["partialFingerprints"]["refereeFingerprint/v1"].is_string());
    let open = repo
        .referee()
        .args(["findings", "--open", "--json"])
        .output()
        .unwrap();
    let open: Value = serde_json::from_slice(&open.stdout).unwrap();
    let ids: Vec<&str> = open["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec!["F2", "F3"]);
}

#[test]
fn replay_shows_where_another_contract_would_stop() {
    let repo = Repo::with_loop("l", &["--max-rounds", "5"]);
    for round in 0..3 {
        repo.append("src/a.rs", &round.to_string());
        repo.record(&native(&[("F1", "bug")])).run().assert(10, "");
    }
    let other = repo.join("strict.toml");
    std::fs::write(&other, "loop = \"l\"\nmax_rounds = 2\n").unwrap();
    let before = repo.read(".referee/ledgers/l.csv");
    let out = repo
        .referee()
        .args(["replay", "--contract", other.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("this contract would have stopped at round 2 on `round-cap`"),
        "{stdout}"
    );
    assert!(stdout.contains("the loop has not stopped (round 3)"));
    assert_eq!(
        repo.read(".referee/ledgers/l.csv"),
        before,
        "replay writes nothing"
    );
    let loose = repo.join("loose.toml");
    std::fs::write(&loose, "loop = \"l\"\nseverity_floor = \"block\"\n").unwrap();
    let out = repo
        .referee()
        .args(["replay", "--json", "--contract", loose.to_str().unwrap()])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["would_stop"]["rule"], "clean");
    assert_eq!(json["would_stop"]["round"], 1);
}

#[test]
fn secrets_are_redacted_in_stored_evidence() {
    let repo = Repo::with_loop("l", &[]);
    repo.write(
        "src/a.rs",
        "const KEY: &str = \"sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345\";\n",
    );
    let out = repo
        .record(
            "[bug] src/a.rs:1: leaked OPENAI_API_KEY=sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX in source\n",
        )
        .run();
    assert_eq!(out.code, 10, "{}", out.stderr);
    let dir = repo.join(".referee/ledgers/l/round-1");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let body = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        assert!(!body.contains("abcdefghijklmnopqrstuvwxyz012345"), "{body}");
        assert!(!body.contains("ABCDEFGHIJKLMNOPQRSTUVWX"), "{body}");
        seen += 1;
    }
    assert!(seen >= 4);
    repo.referee().args(["ledger", "verify"]).assert().success();
}

#[test]
fn a_repository_without_commits_and_odd_file_names() {
    let repo = Repo::empty();
    repo.referee()
        .args(["init", "--loop", "l"])
        .assert()
        .success();
    repo.write("dir with space/ünïcode.rs", "x\n");
    std::fs::write(repo.join("blob.bin"), [0u8, 159, 146, 150, 0, 1]).unwrap();
    let out = repo.record(&native(&[("F1", "bug")])).run();
    assert_eq!(out.code, 10, "{}", out.stderr);
    let patch = repo.read(".referee/ledgers/l/round-1/patch.diff");
    assert!(patch.contains("dir with space/ünïcode.rs"), "{patch}");
    assert!(patch.contains("blob.bin"));
}

#[test]
fn concurrent_records_on_one_loop_and_on_sixteen_loops_keep_every_row() {
    let repo = Repo::new();
    // The tree never changes between these rounds: the `stalled` guard would
    // rightly stop the loop at round 2, so this loop runs without it.
    repo.referee()
        .args([
            "init",
            "--loop",
            "one",
            "--max-rounds",
            "100",
            "--guards",
            "none",
        ])
        .assert()
        .success();
    for i in 0..16 {
        repo.referee()
            .args(["init", "--loop", &format!("l{i}")])
            .assert()
            .success();
    }
    let mut children = Vec::new();
    for i in 0..16 {
        // One loop: each call brings a different review, so each is a round.
        let mut a = repo.referee_std();
        a.args(["record", "--loop", "one", "--findings", "-"]);
        let mut b = repo.referee_std();
        b.args(["record", "--loop", &format!("l{i}"), "--findings", "-"]);
        for mut cmd in [a, b] {
            cmd.stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped());
            let mut child = cmd.spawn().unwrap();
            use std::io::Write;
            let body = native(&[(&format!("F{i}"), "bug")]);
            child
                .stdin
                .take()
                .unwrap()
                .write_all(body.as_bytes())
                .unwrap();
            children.push(child);
        }
    }
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(10), "{}", text(&out.stderr));
    }
    let one = repo
        .referee()
        .args(["ledger", "verify", "--loop", "one"])
        .output()
        .unwrap();
    assert!(
        text(&one.stdout).contains("16 rows (16 rounds) verified"),
        "{}",
        text(&one.stdout)
    );
    let rows = repo
        .referee()
        .args(["ledger", "show", "--loop", "one", "--format", "json"])
        .output()
        .unwrap();
    let rows = crate::common::ledger_rows(&rows.stdout);
    let numbers: Vec<u64> = rows.iter().map(|r| r["round"].as_u64().unwrap()).collect();
    assert_eq!(numbers, (1..=16).collect::<Vec<u64>>());
    for i in 0..16 {
        repo.referee()
            .args(["ledger", "verify", "--loop", &format!("l{i}")])
            .assert()
            .success()
            .stdout(predicates::str::contains("1 row (1 round) verified"));
    }
}

#[test]
fn a_skipped_finding_is_listed_and_comes_back_open_not_reopened() {
    let repo = Repo::with_loop("l", &["--max-rounds", "5"]);
    repo.write("src/a.rs", "fn a() {}\n\n\n\n\n\n\n\n\n\nfn b() {}\n");
    let two = r#"{"findings":[
        {"id":"F1","severity":"bug","title":"a panics on empty input","file":"src/a.rs","line":1},
        {"id":"F2","severity":"bug","title":"b leaks the handle","file":"src/a.rs","line":11}]}"#;
    repo.record(two).run().assert(10, "");
    // The writer fixes line 1 only; the reviewer forgets F2.
    repo.write(
        "src/a.rs",
        "fn a() { check() }\n\n\n\n\n\n\n\n\n\nfn b() {}\n",
    );
    let out = repo.record(r#"{"findings":[{"id":"F3","severity":"bug","title":"check() is undefined","file":"src/a.rs","line":1}]}"#).args(&["--json"]).run();
    assert_eq!(out.code, 10, "{}", out.stderr);
    let json: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(json["closed"], 1);
    assert_eq!(json["must_fix_left"], 1);
    assert_eq!(json["skipped"], serde_json::json!(["F2"]));
    let status = repo.referee().args(["status"]).output().unwrap();
    let status = String::from_utf8_lossy(&status.stdout).to_string();
    assert!(status.contains("skipped by the reviewer (1)"), "{status}");
    assert!(
        status.contains("F2  b leaks the handle  (missing since round 2)"),
        "{status}"
    );
    // F2 comes back: open again, not reopened; the loop goes on.
    repo.write(
        "src/a.rs",
        "fn a() { check() }\nfn check() {}\n\n\n\n\n\n\n\n\n\nfn b() {}\n",
    );
    let out = repo.record(r#"{"findings":[{"id":"F2","severity":"bug","title":"b leaks the handle","file":"src/a.rs","line":12}]}"#).run();
    out.assert(10, "");
    assert!(
        out.stdout.contains("open     F2 [bug] src/a.rs:12 b leaks the handle (open again: the reviewer skipped it in round 2)"),
        "{}",
        out.stdout
    );
    let rows = rounds(&repo);
    assert_eq!(rows[2]["reopened"], 0);
}

#[test]
fn replay_applies_the_progress_guards_to_stored_rounds() {
    let repo = Repo::with_loop("l", &["--max-rounds", "5", "--guards", "none"]);
    repo.append("src/a.rs", "a");
    repo.record(&native(&[("F1", "bug")])).run().assert(10, "");
    // Round 2: the writer changed nothing; without guards the loop goes on.
    let second = native(&[("F1", "bug")]).replace("reviewer on F1", "still there");
    repo.record(&second).run().assert(10, "");
    let guarded = repo.join("guarded.toml");
    std::fs::write(&guarded, "loop = \"l\"\nmax_rounds = 5\n").unwrap();
    let out = repo
        .referee()
        .args(["replay", "--json", "--contract", guarded.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["would_stop"]["rule"], "stalled", "{json}");
    assert_eq!(json["would_stop"]["round"], 2);
}

#[test]
fn replay_takes_template_names_and_tells_the_loops_real_end() {
    let repo = Repo::with_loop("l", &["--max-rounds", "2"]);
    repo.append("src/a.rs", "a");
    repo.record(&native(&[("F1", "bug")])).run().assert(10, "");
    repo.append("src/a.rs", "b");
    repo.record(&native(&[("F1", "bug")]))
        .run()
        .assert(20, "round-cap");
    repo.referee()
        .args([
            "contract",
            "amend",
            "--max-rounds",
            "4",
            "--by",
            "ana",
            "--reason",
            "close",
        ])
        .assert()
        .success();
    repo.append("src/a.rs", "c");
    repo.record(r#"{"findings":[]}"#).run().assert(0, "clean");
    let out = repo
        .referee()
        .args(["replay", "--contract", "ci-test-fix"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("the loop stopped at round 3 on `clean`"),
        "{stdout}"
    );
}

#[test]
fn sarif_places_a_failing_test_without_a_file_at_its_test_file() {
    let repo = Repo::new();
    repo.write(
        "tests/test_auth.py",
        "def test_expiry():\n    assert False\n",
    );
    repo.git(&["add", "."]);
    repo.git(&["commit", "-qm", "tests"]);
    repo.referee()
        .args(["init", "--loop", "l"])
        .assert()
        .success();
    repo.append("src/a.rs", "a");
    // pytest's default (xunit2) report: no `file` attribute on the case.
    let junit = r#"<?xml version="1.0"?><testsuites><testsuite name="pytest" failures="2" errors="0">
<testcase classname="tests.test_auth" name="test_expiry"><failure message="assert False">def test_expiry():
&gt;       assert False
E       assert False

tests/test_auth.py:2: AssertionError</failure></testcase>
<testcase classname="gone.module" name="test_x"><failure message="boom">no place here</failure></testcase>
</testsuite></testsuites>"#;
    repo.record(junit).run().assert(10, "");
    let out = repo
        .referee()
        .args(["findings", "--format", "sarif"])
        .output()
        .unwrap();
    let sarif: Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    let placed = &results[0]["locations"][0]["physicalLocation"];
    assert_eq!(
        results[0]["properties"]["id"],
        "tests.test_auth::test_expiry"
    );
    assert_eq!(placed["artifactLocation"]["uri"], "tests/test_auth.py");
    assert_eq!(placed["region"]["startLine"], 2);
    // A test the repository has no file for stays without a place.
    assert_eq!(results[1]["properties"]["id"], "gone.module::test_x");
    assert!(results[1].get("locations").is_none());
    // The ledger's findings are what the report said: no file was made up.
    let json = repo
        .referee()
        .args(["findings", "--json"])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(json["findings"][0]["file"], Value::Null);
}

#[test]
fn loops_of_one_name_in_two_worktrees_keep_their_own_refs() {
    // Worktrees share the repository's refs and each has its own
    // `.referee/`. With one ref folder per loop name, the second loop's
    // round 1 moved the first one's ref, and the first `ledger verify`
    // failed on it.
    let main = Repo::new();
    let linked = main.worktree("feature");
    let id = std::path::Path::new(
        &main
            .git(&[
                "-C",
                &linked.path().to_string_lossy(),
                "rev-parse",
                "--absolute-git-dir",
            ])
            .trim()
            .to_string(),
    )
    .file_name()
    .unwrap()
    .to_string_lossy()
    .into_owned();
    for (repo, text) in [(&linked, "fn linked() {}"), (&main, "fn main() {}")] {
        repo.init_loop("main", &[]);
        repo.write("src/a.rs", text);
        repo.record(r#"{"findings": []}"#).run().assert(0, "clean");
    }
    let refs = main.git(&["for-each-ref", "--format=%(refname)", "refs/referee/"]);
    let refs: Vec<&str> = refs.lines().collect();
    let linked_base = format!("refs/referee/main/worktree/{id}/");
    assert_eq!(
        refs,
        [
            "refs/referee/main/contract".to_string(),
            "refs/referee/main/round-1".to_string(),
            format!("{linked_base}contract"),
            format!("{linked_base}round-1"),
        ]
    );
    for (repo, text, reference) in [
        (
            &main,
            "fn main() {}",
            "refs/referee/main/round-1".to_string(),
        ),
        (&linked, "fn linked() {}", format!("{linked_base}round-1")),
    ] {
        let out = repo.run(&["ledger", "verify"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_eq!(repo.git(&["show", &format!("{reference}:src/a.rs")]), text);
        let pinned = &rounds(repo)[0]["snapshot"];
        assert_eq!(
            repo.git(&["rev-parse", &reference]).trim(),
            pinned.as_str().unwrap()
        );
        // The kept contract is the loop's own.
        let out = repo.run(&["contract", "restore", "--loop", "main"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    // The linked worktree's refs are ordinary shared refs: `git gc` in the
    // main worktree keeps its snapshots.
    main.git(&["gc", "-q", "--prune=now"]);
    let out = linked.run(&["ledger", "verify"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn a_large_binary_file_is_named_in_the_patch_not_copied() {
    // With `--binary`, the round's patch held every byte of a binary file
    // as base85: a 50 MB file left in the work tree made 64 MB of evidence
    // and of the reviewer's patch file.
    let repo = Repo::with_loop("l", &[]);
    let bytes: Vec<u8> = (0..2_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(repo.join("model.bin"), &bytes).unwrap();
    repo.append("src/a.rs", "fn a() {}");
    repo.record(r#"{"findings": []}"#).run().assert(0, "clean");
    let patch =
        std::fs::read_to_string(repo.join(".referee/ledgers/l/round-1/patch.diff")).unwrap();
    assert!(patch.len() < 2_000, "{} bytes", patch.len());
    let blob = repo.git(&["rev-parse", "--short", "refs/referee/l/round-1:model.bin"]);
    assert!(
        patch.contains(&format!(
            "index 0000000..{}\nBinary files /dev/null and b/model.bin differ\n",
            blob.trim()
        )),
        "{patch}"
    );
    assert!(patch.contains("+fn a() {}"), "{patch}");
    let out = repo.run(&["ledger", "verify"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn status_names_rounds_whose_ledger_is_gone() {
    // A writer can delete `.referee/ledgers/`: the loop then read as not
    // started, with nothing said of the rounds its snapshot refs still hold.
    let repo = Repo::with_loop("l", &[]);
    repo.append("src/a.rs", "fn a() {}");
    repo.record(&native(&[("F1", "bug")])).run().assert(10, "");
    let status: Value = serde_json::from_str(&repo.run(&["status", "--json"]).stdout).unwrap();
    assert_eq!(status["lost_rounds"], serde_json::json!([]));

    std::fs::remove_dir_all(repo.join(".referee/ledgers")).unwrap();
    let out = repo.run(&["status"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains(
            "warning: the ledger `.referee/ledgers/l.csv` has no rounds, but this loop's snapshot refs hold round 1"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("`git log --oneline refs/referee/l/round-1`"),
        "{}",
        out.stdout
    );
    let status: Value = serde_json::from_str(&repo.run(&["status", "--json"]).stdout).unwrap();
    assert_eq!(status["lost_rounds"], serde_json::json!([1]));
}

#[test]
fn the_writers_gitattributes_cannot_hide_a_change_from_the_patch() {
    // A line in `.gitattributes` (`*.rs -diff`) made every change to a Rust
    // file read `Binary files … differ`: the reviewer saw none of them.
    // Once an attributes file differs from the base's, the patch is listed
    // with the base's attributes, in that round and every later one.
    let repo = Repo::new();
    repo.write(".gitattributes", "*.lock -diff\n");
    repo.write("deps.lock", "a 1\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "attributes"]);
    repo.init_loop("l", &[]);
    repo.write(".gitattributes", "*.lock -diff\n*.rs -diff\n");
    repo.write("src/a.rs", "fn hidden() {}\n");
    repo.write("deps.lock", "a 2\n");
    repo.record(&native(&[("F1", "bug")])).run().assert(10, "");
    let patch = |n: u32| {
        std::fs::read_to_string(repo.join(&format!(".referee/ledgers/l/round-{n}/patch.diff")))
            .unwrap()
    };
    let first = patch(1);
    assert!(first.contains("+fn hidden() {}"), "{first}");
    assert!(first.contains("+*.rs -diff"), "{first}");
    // The person's own attributes still decide: their lock file is binary.
    assert!(
        first.contains("Binary files a/deps.lock and b/deps.lock differ"),
        "{first}"
    );
    assert_eq!(rounds(&repo)[0]["diff_added"], 2, "{first}");

    // Round 2 leaves `.gitattributes` alone; the flag carries.
    repo.write("src/a.rs", "fn hidden() {}\nfn more() {}\n");
    repo.record(r#"{"findings": []}"#).run().assert(0, "clean");
    let second = patch(2);
    assert!(second.contains("+fn more() {}"), "{second}");
    assert_eq!(rounds(&repo)[1]["diff_added"], 1, "{second}");
}

#[test]
fn a_fix_put_back_in_the_file_its_code_moved_to_is_a_flip_flop() {
    let repo = Repo::with_loop("l", &["--max-rounds", "6"]);
    let api = |value: &str| {
        format!(
            "import ast\n\n\ndef parse_value(text):\n    value = {value}\n    return clamp(value)\n"
        )
    };
    repo.write("src/api.py", &api("eval(text)"));
    repo.record(&native(&[("F1", "bug")])).run().assert(10, "");
    repo.write("src/api.py", &api("ast.literal_eval(text)"));
    repo.record(&native(&[("F2", "bug")])).run().assert(10, "");
    // Round 3 moves the function to its own module, with eval back.
    repo.write("src/api.py", "from parse import parse_value\n");
    repo.write("src/parse.py", &api("eval(text)"));
    let out = repo.record(&native(&[("F2", "bug")])).run();
    out.assert(20, "flip-flop");
    assert!(
        out.stdout.contains(
            "puts back a line that round 2 removed in `src/api.py`, in `src/parse.py` where the code moved: `value = eval(text)`"
        ),
        "{}",
        out.stdout
    );
}

#[test]
fn a_module_split_that_keeps_a_fix_goes_on() {
    let repo = Repo::with_loop("l", &["--max-rounds", "6"]);
    let load = |guard: &str| {
        format!(
            "import json\n\n\ndef load(path):\n{guard}    with open(path) as fh:\n        return json.load(fh)\n\n\ndef save(path, data):\n    with open(path, \"w\") as fh:\n        json.dump(data, fh)\n"
        )
    };
    repo.write("src/store.py", &load(""));
    repo.record(&native(&[("F1", "bug")])).run().assert(10, "");
    repo.write(
        "src/store.py",
        &load("    if not path:\n        raise ValueError(\"no path\")\n"),
    );
    repo.record(&native(&[("F2", "bug")])).run().assert(10, "");
    // Round 3 splits the module; the guard goes with `load`.
    std::fs::remove_file(repo.path().join("src/store.py")).unwrap();
    repo.write(
        "src/store/load.py",
        "import json\n\n\ndef load(path):\n    if not path:\n        raise ValueError(\"no path\")\n    with open(path) as fh:\n        return json.load(fh)\n",
    );
    repo.write(
        "src/store/save.py",
        "import json\n\n\ndef save(path, data):\n    with open(path, \"w\") as fh:\n        json.dump(data, fh)\n",
    );
    repo.record(&native(&[("F2", "bug")])).run().assert(10, "");
    // Round 4 drops the guard from its new home: a reversal of round 2.
    repo.write(
        "src/store/load.py",
        "import json\n\n\ndef load(path):\n    with open(path) as fh:\n        return json.load(fh)\n",
    );
    let out = repo.record(&native(&[("F2", "bug")])).run();
    out.assert(20, "flip-flop");
    assert!(
        out.stdout
            .contains("removes a line that round 2 added in `src/store/load.py`"),
        "{}",
        out.stdout
    );
}

#[test]
fn an_earlier_patch_emptied_by_the_writer_hides_no_reversal() {
    let repo = Repo::with_loop("l", &["--max-rounds", "6"]);
    repo.write("src/a.rs", "let limit = 1;\n");
    repo.record(&native(&[("F1", "bug")])).run().assert(10, "");
    repo.write("src/a.rs", "let limit = 2;\n");
    repo.record(&native(&[("F2", "bug")])).run().assert(10, "");
    repo.write("src/b.rs", "let other = 3;\n");
    repo.record(&native(&[("F2", "bug")])).run().assert(10, "");
    // The writer empties round 2's stored patch, then undoes its fix: the
    // reversal check reads what the referee kept with round 3, not the
    // patch file (before, an unreadable patch was skipped).
    let patch = repo.path().join(".referee/ledgers/l/round-2/patch.diff");
    assert!(patch.is_file(), "{}", patch.display());
    std::fs::write(&patch, "").unwrap();
    repo.write("src/a.rs", "let limit = 1;\n");
    let out = repo.record(&native(&[("F2", "bug")])).run();
    out.assert(20, "flip-flop");
    assert!(
        out.stdout
            .contains("puts back a line that round 2 removed in `src/a.rs`"),
        "{}",
        out.stdout
    );
    // And `ledger verify` names the emptied file.
    let verify = repo
        .referee()
        .args(["ledger", "verify", "--loop", "l"])
        .output()
        .unwrap();
    assert!(!verify.status.success());
}

#[test]
fn a_review_file_inside_the_work_tree_is_never_part_of_the_patch() {
    // A reviewer's output kept in the repository (a CI job's `report.xml`,
    // a skill's `review.json`) would be a file the writer added: outside
    // the scope it ended the loop on `scope` at round 1.
    let repo = Repo::with_loop("l", &["--scope", "src/**"]);
    repo.init_loop("other", &[]);
    repo.append("src/a.rs", "fn a() {}");
    repo.write("review.json", &native(&[("F1", "bug")]));
    let out = repo
        .call(&["record", "--loop", "l", "--findings", "review.json"])
        .run();
    out.assert(10, "");
    assert!(
        out.stderr.contains(
            "note: `review.json` is inside the work tree: loop `l`'s snapshots leave it out from now on (as its base has it), so it is never part of the writer's patch"
        ),
        "{}",
        out.stderr
    );
    // Round 2 reads a review of another name, in a folder: both stay out,
    // and the first is named no more.
    repo.append("src/a.rs", "fn b() {}");
    repo.write("reviews/2.json", r#"{"findings": []}"#);
    let out = repo
        .call(&["record", "--loop", "l", "--findings", "reviews/2.json"])
        .run();
    out.assert(0, "clean");
    assert!(
        out.stderr
            .contains("`reviews/2.json` is inside the work tree")
    );
    assert!(!out.stderr.contains("`review.json`"), "{}", out.stderr);
    for round in [1, 2] {
        let patch = repo.read(&format!(".referee/ledgers/l/round-{round}/patch.diff"));
        assert!(patch.contains("src/a.rs"), "{patch}");
        assert!(!patch.contains("review"), "round {round}: {patch}");
    }
    // The approved tree is the work tree's, with the reviews left out.
    repo.call(&["approve", "--loop", "l", "--by", "me"])
        .run()
        .assert(0, "");
    repo.call(&["approval", "check", "--loop", "l"])
        .run()
        .assert(0, "");
    // Another loop's snapshots are its own: a `record` of `l` hides
    // nothing from them.
    let out = repo
        .record(r#"{"findings": []}"#)
        .args(&["--loop", "other"])
        .run();
    out.assert(0, "clean");
    let patch = repo.read(".referee/ledgers/other/round-1/patch.diff");
    assert!(
        patch.contains("review.json") && patch.contains("reviews/2.json"),
        "{patch}"
    );
}

/// A review that does not read gets the hint of the reviewer the contract
/// names: for codex or claude, the call that makes it answer in referee's
/// schema; for a `command` reviewer, the tagged-text advice.
#[test]
fn an_unreadable_review_is_told_how_the_contracts_reviewer_gives_one() {
    let prose = "The code looks fine overall, but there is a bug in auth.\n";
    for (reviewer, wants, refuses) in [
        (
            &["--reviewer", "codex"][..],
            "the contract's reviewer is codex: run it so that it answers in referee's findings schema, `referee schema > /tmp/findings.schema.json`, then `codex exec --json --sandbox read-only --output-schema /tmp/findings.schema.json -`",
            "tag each finding",
        ),
        (
            &["--reviewer", "claude"][..],
            "the contract's reviewer is claude: run it so that it answers in referee's findings schema, `claude -p --output-format json --permission-mode plan --json-schema \"$(referee schema)\"`",
            "tag each finding",
        ),
        (
            &["--reviewer-command", "sh review.sh"][..],
            "hint: tag each finding like `[bug] src/a.rs:42: text`",
            "the contract's reviewer",
        ),
    ] {
        let repo = Repo::with_loop("l", reviewer);
        repo.write("src/a.rs", "fn a() {}\n");
        let out = repo.record(prose).run();
        assert_eq!(out.code, 1, "{reviewer:?}: {}", out.stderr);
        assert!(
            out.stderr
                .contains("findings `stdin`: nothing was recorded: tagged text: no tagged finding"),
            "{reviewer:?}: {}",
            out.stderr
        );
        assert!(out.stderr.contains(wants), "{reviewer:?}: {}", out.stderr);
        assert!(
            !out.stderr.contains(refuses),
            "{reviewer:?}: {}",
            out.stderr
        );
        assert_eq!(out.stderr.matches("hint: ").count(), 1, "{}", out.stderr);
        assert!(repo.ledger_json().is_empty());
    }
}

/// A loop whose reviewer is a bot on the pull request, its comments
/// fetched with `gh api repos/O/R/pulls/N/comments` each round: the bot's
/// major finding is open in round 1; in round 2 GitHub shows the comment
/// outdated (the writer changed its lines), so it is closed, and the
/// medium one left is below the floor: clean.
#[test]
fn github_review_comments_drive_a_loop_to_clean() {
    let repo = Repo::with_loop("l", &["--closure", "explicit"]);
    repo.append("src/a.rs", "fn a() {}");
    let major = r#"{"id": 101, "path": "src/a.rs", "line": 1, "original_line": 1, "user": {"login": "coderabbitai[bot]"},
        "body": "_⚠️ Potential issue_ | _🟠 Major_\n\n**Expired tokens pass.**\n\nCompare with `>=`."}"#;
    let medium = r#"{"id": 102, "path": "src/a.rs", "line": 1, "original_line": 1, "user": {"login": "gemini-code-assist[bot]"},
        "body": "![medium](https://www.gstatic.com/codereviewagent/medium-priority.svg)\n\nName the constant."}"#;
    let out = repo
        .record(&format!("[{major}, {medium}]"))
        .args(&["--format", "github"])
        .run();
    out.assert(10, "");
    assert!(
        out.stdout
            .contains("gh-101 [bug] src/a.rs:1 Expired tokens pass."),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("gh-102 [should]"), "{}", out.stdout);

    repo.append("src/a.rs", "fn b() {}");
    let outdated = major.replace("\"line\": 1,", "\"line\": null,");
    let out = repo.record(&format!("[{outdated}, {medium}]")).run();
    out.assert(0, "clean");
    let rows = rounds(&repo);
    assert_eq!(
        (
            rows[1]["closed"].as_u64(),
            rows[1]["must_fix_left"].as_u64()
        ),
        (Some(1), Some(0))
    );
    let findings = repo.run(&["findings", "--loop", "l", "--format", "json"]);
    assert!(
        findings.stdout.contains("\"gh-101\""),
        "{}",
        findings.stdout
    );
}
