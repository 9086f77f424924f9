//! The ledger: init, appends through the library API, verify on every kind of
//! damage, repair of a torn tail, concurrency, and `ledger show` formats.

use std::path::{Path, PathBuf};

use referee::ledger::{Counts, Draft, Evidence, Kind, Store, Verdict};

use crate::common::{NOW, Repo, text};

/// Initializes loop `name` and returns its store (pinned to the contract).
/// A loop whose rows these tests append through the library: rows no
/// referee wrote, so the loop's anchor is removed and it reads unanchored,
/// as a ledger from another machine does (tests/it/writer_reach.rs has the
/// anchor's own tests).
fn init(repo: &Repo, name: &str) -> Store {
    repo.referee()
        .args(["init", "--loop", name])
        .assert()
        .success();
    std::fs::remove_dir_all(repo.anchor(name)).unwrap();
    store(repo, name)
}

fn store(repo: &Repo, name: &str) -> Store {
    let contract = repo.join(&format!(".referee/contracts/{name}.toml"));
    let sha = referee::digest::sha256_hex(&std::fs::read(contract).unwrap());
    Store::new(
        repo.join(&format!(".referee/ledgers/{name}.csv")),
        repo.join(&format!(".referee/ledgers/{name}")),
        &sha,
    )
}

fn round_draft(round: u32, must_fix: u32, verdict: Verdict, rule: &str) -> Draft {
    let mut d = Draft::new(Kind::Round, round, NOW);
    d.counts = Some(Counts {
        opened: must_fix + 1,
        closed: round - 1,
        reopened: 0,
        must_fix_left: must_fix,
        below_floor_open: 1,
        diff_added: u64::from(round) * 10,
        diff_removed: 3,
    });
    d.verdict = Some(verdict);
    d.rule = rule.to_string();
    d.cost_usd = Some("0.25".parse().unwrap());
    d.tokens = Some(1000 * u64::from(round));
    d
}

/// Appends `n` round rows, each with two evidence files.
fn append_rounds(store: &Store, n: u32) {
    for round in 1..=n {
        let mut evidence = Evidence::stage(store).unwrap();
        evidence
            .add(
                "findings.json",
                format!("{{\"findings\":[],\"round\":{round}}}").as_bytes(),
            )
            .unwrap();
        evidence.add("patch.diff", b"--- a/x\n+++ b/x\n").unwrap();
        let (verdict, rule) = if round == n {
            (Verdict::Stop, "round-cap")
        } else {
            (Verdict::Continue, "")
        };
        store
            .lock()
            .unwrap()
            .append(round_draft(round, 2, verdict, rule), Some(evidence))
            .unwrap();
    }
}

fn verify(repo: &Repo, name: &str) -> (i32, String, String) {
    let out = repo
        .referee()
        .args(["ledger", "verify", "--loop", name])
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        text(&out.stdout),
        text(&out.stderr),
    )
}

#[test]
fn appended_rows_verify_and_the_chain_starts_at_the_contract() {
    let repo = Repo::new();
    let store = init(&repo, "l");
    append_rounds(&store, 3);
    let (code, out, err) = verify(&repo, "l");
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("ledger `.referee/ledgers/l.csv`: 3 rows (3 rounds) verified; chain head "),
        "{out}"
    );
    let rows = store.read().unwrap().rows;
    let contract = std::fs::read(repo.join(".referee/contracts/l.toml")).unwrap();
    assert_eq!(rows[0].prev_sha256, referee::digest::sha256_hex(&contract));
    assert_eq!(rows[1].prev_sha256, rows[0].row_sha256);
}

#[test]
fn every_single_byte_edit_of_a_committed_row_is_caught_naming_the_row() {
    let repo = Repo::new();
    let store = init(&repo, "l");
    append_rounds(&store, 2);
    let path = repo.join(".referee/ledgers/l.csv");
    let original = std::fs::read(&path).unwrap();
    let header_len = original.iter().position(|&b| b == b'\n').unwrap() + 1;
    let row1_end = header_len
        + original[header_len..]
            .iter()
            .position(|&b| b == b'\n')
            .unwrap()
        + 1;
    // Every byte but the final newline (removing it makes a torn tail, tested below).
    let step = 7; // every 7th byte keeps the test fast while touching each column
    for i in (0..original.len() - 1)
        .step_by(step)
        .chain([0, header_len, row1_end])
    {
        let mut changed = original.clone();
        changed[i] = if changed[i] == b'7' { b'8' } else { b'7' };
        std::fs::write(&path, &changed).unwrap();
        let (code, _, err) = verify(&repo, "l");
        assert_eq!(code, 1, "byte {i} changed unnoticed");
        let expected_row = if i < header_len {
            "header"
        } else if i < row1_end {
            "row 1"
        } else {
            "row 2"
        };
        assert!(
            err.contains(expected_row),
            "byte {i}: expected `{expected_row}` in: {err}"
        );
    }
    std::fs::write(&path, &original).unwrap();
    assert_eq!(verify(&repo, "l").0, 0);
}

#[test]
fn evidence_edits_additions_and_removals_are_caught() {
    let repo = Repo::new();
    let store = init(&repo, "l");
    append_rounds(&store, 2);
    let file = repo.join(".referee/ledgers/l/round-2/findings.json");
    let original = std::fs::read(&file).unwrap();
    make_writable(&file);

    let mut changed = original.clone();
    changed[3] ^= 1;
    std::fs::write(&file, &changed).unwrap();
    let (code, _, err) = verify(&repo, "l");
    assert_eq!(code, 1);
    assert!(err.contains("row 2: evidence digest mismatch"), "{err}");
    std::fs::write(&file, &original).unwrap();
    assert_eq!(verify(&repo, "l").0, 0);

    std::fs::write(repo.join(".referee/ledgers/l/round-1/extra.txt"), "x").unwrap();
    let (code, _, err) = verify(&repo, "l");
    assert_eq!(code, 1);
    assert!(err.contains("row 1: evidence digest mismatch"), "{err}");
    std::fs::remove_file(repo.join(".referee/ledgers/l/round-1/extra.txt")).unwrap();

    std::fs::remove_dir_all(repo.join(".referee/ledgers/l/round-1")).unwrap();
    let (code, _, err) = verify(&repo, "l");
    assert_eq!(code, 1);
    assert!(err.contains("row 1: evidence folder is missing"), "{err}");
}

#[test]
fn evidence_files_are_read_only_after_commit() {
    let repo = Repo::new();
    let store = init(&repo, "l");
    append_rounds(&store, 1);
    let meta = std::fs::metadata(repo.join(".referee/ledgers/l/round-1/patch.diff")).unwrap();
    assert!(meta.permissions().readonly());
}

#[test]
fn a_changed_contract_is_named_by_verify() {
    let repo = Repo::new();
    let store = init(&repo, "l");
    append_rounds(&store, 1);
    let path = repo.join(".referee/contracts/l.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("max_rounds = 3", "max_rounds = 9");
    std::fs::write(&path, text).unwrap();
    let (code, _, err) = verify(&repo, "l");
    assert_eq!(code, 1);
    assert!(
        err.contains("row 1: prev_sha256")
            && err.contains("the contract file changed since round 1"),
        "{err}"
    );
}

#[test]
fn a_torn_tail_is_reported_then_repaired_without_losing_a_row() {
    let repo = Repo::new();
    let store = init(&repo, "l");
    append_rounds(&store, 3);
    let path = repo.join(".referee/ledgers/l.csv");
    let committed = std::fs::read(&path).unwrap();
    // A crash mid-append: part of a fourth row, no newline.
    let mut torn = committed.clone();
    torn.extend_from_slice(b"4,1,0,0,1,0,12,3,contin");
    std::fs::write(&path, &torn).unwrap();

    let (code, _, err) = verify(&repo, "l");
    assert_eq!(code, 1);
    assert!(
        err.contains("torn final line after row 3 (23 bytes"),
        "{err}"
    );
    assert!(err.contains("hint: run `referee ledger repair`"), "{err}");

    // `show` shows the committed rows and names the tail; the CSV is the
    // committed bytes exactly.
    for format in ["csv", "json"] {
        let out = repo
            .referee()
            .args(["ledger", "show", "--loop", "l", "--format", format])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{format}");
        assert!(
            text(&out.stderr).contains("ends in a torn line of 23 bytes (not shown)"),
            "{format}: {}",
            text(&out.stderr)
        );
        if format == "csv" {
            assert_eq!(out.stdout, committed);
        } else {
            assert_eq!(crate::common::ledger_rows(&out.stdout).len(), 3);
        }
    }

    // Appending after a torn tail is refused; nothing is written.
    let refused = store
        .lock()
        .unwrap()
        .append(round_draft(4, 1, Verdict::Continue, ""), None);
    assert!(refused.is_err());
    assert_eq!(std::fs::read(&path).unwrap(), torn);

    let out = repo
        .referee()
        .args(["ledger", "repair", "--loop", "l"])
        .assert()
        .success();
    assert!(text(&out.get_output().stdout).starts_with("removed a torn final line of 23 bytes"));
    assert_eq!(std::fs::read(&path).unwrap(), committed);
    assert_eq!(verify(&repo, "l").0, 0);

    let out = repo
        .referee()
        .args(["ledger", "repair", "--loop", "l"])
        .assert()
        .success();
    assert!(text(&out.get_output().stdout).starts_with("nothing to repair"));
}

#[test]
fn a_torn_first_write_leaves_no_rows() {
    let repo = Repo::new();
    let _ = init(&repo, "l");
    let path = repo.join(".referee/ledgers/l.csv");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "round,opened,clo").unwrap();
    let (code, _, err) = verify(&repo, "l");
    assert_eq!(code, 1);
    assert!(err.contains("torn final line after row 0"), "{err}");
    repo.referee()
        .args(["ledger", "repair", "--loop", "l"])
        .assert()
        .success();
    assert_eq!(std::fs::read(&path).unwrap(), b"");
}

#[test]
fn sixteen_concurrent_appenders_give_sixteen_intact_rows() {
    let repo = Repo::new();
    let store = init(&repo, "l");
    let threads: Vec<_> = (0..16)
        .map(|_| {
            let store = store.clone();
            std::thread::spawn(move || {
                let mut locked = store.lock().unwrap();
                let round = locked.last().unwrap().map_or(1, |r| r.round + 1);
                let mut evidence = Evidence::stage(&store).unwrap();
                evidence.add("n.txt", round.to_string().as_bytes()).unwrap();
                locked
                    .append(round_draft(round, 1, Verdict::Continue, ""), Some(evidence))
                    .unwrap();
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let rows = store.read().unwrap().rows;
    assert_eq!(rows.len(), 16);
    let rounds: Vec<u32> = rows.iter().map(|r| r.round).collect();
    assert_eq!(rounds, (1..=16).collect::<Vec<_>>());
    assert_eq!(verify(&repo, "l").0, 0);
}

#[test]
fn init_refuses_to_overwrite_a_started_loop() {
    let repo = Repo::new();
    let store = init(&repo, "l");
    append_rounds(&store, 1);
    let out = repo
        .referee()
        .args(["init", "--loop", "l", "--force"])
        .assert()
        .code(1);
    let err = text(&out.get_output().stderr);
    assert!(err.contains("loop `l` has started"), "{err}");
    assert_eq!(verify(&repo, "l").0, 0);
}

#[test]
fn amend_raises_the_cap_in_writing_and_refuses_anything_else() {
    let repo = Repo::new();
    let store = init(&repo, "l");
    // Not started: nothing to amend.
    let out = repo
        .referee()
        .args([
            "contract",
            "amend",
            "--loop",
            "l",
            "--max-rounds",
            "5",
            "--by",
            "ann",
            "--reason",
            "more",
        ])
        .assert()
        .code(1);
    assert!(text(&out.get_output().stderr).contains("has not started"));
    append_rounds(&store, 2);
    let out = repo
        .referee()
        .args([
            "contract",
            "amend",
            "--loop",
            "l",
            "--max-rounds",
            "5",
            "--by",
            "ann",
            "--reason",
            "one more try",
        ])
        .assert()
        .success();
    assert_eq!(
        text(&out.get_output().stdout),
        "amended loop `l`: max_rounds 3 -> 5, by ann (ledger row after round 2)\n\
         the loop had stopped at round 2 on `round-cap`: the amendment continues it, and round 3 is next\n"
    );
    let rows = store.read().unwrap().rows;
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[2].kind, Kind::Amend);
    assert_eq!(rows[2].amended_max_rounds(), Some(5));
    assert_eq!(
        (rows[2].by.as_str(), rows[2].reason.as_str()),
        ("ann", "one more try")
    );
    // Lowering, equal and out of range are refused; other fields are not flags.
    for n in ["5", "4"] {
        repo.referee()
            .args([
                "contract",
                "amend",
                "--loop",
                "l",
                "--max-rounds",
                n,
                "--by",
                "ann",
                "--reason",
                "x",
            ])
            .assert()
            .code(1);
    }
    repo.referee()
        .args([
            "contract",
            "amend",
            "--loop",
            "l",
            "--max-rounds",
            "101",
            "--by",
            "a",
            "--reason",
            "x",
        ])
        .assert()
        .code(2);
    repo.referee()
        .args([
            "contract", "amend", "--loop", "l", "--floor", "nit", "--by", "a", "--reason", "x",
        ])
        .assert()
        .code(2);
    repo.referee()
        .args([
            "contract",
            "amend",
            "--loop",
            "l",
            "--max-rounds",
            "7",
            "--by",
            " ",
            "--reason",
            "x",
        ])
        .assert()
        .code(2);
    assert_eq!(store.read().unwrap().rows.len(), 3);
    let json = repo
        .referee()
        .args(["contract", "show", "--loop", "l", "--json"])
        .assert()
        .success();
    let json: serde_json::Value = serde_json::from_slice(&json.get_output().stdout).unwrap();
    assert_eq!(json["contract"]["max_rounds"], 5);
    assert_eq!(json["amendments"][0]["by"], "ann");
    assert_eq!(verify(&repo, "l").0, 0);
}

/// The committed sample ledger: built once by `build_sample` below and kept
/// under tests/fixtures so a change of the row format or hash shows up here.
fn sample_state() -> (Repo, PathBuf) {
    let repo = Repo::new();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ledger/.referee");
    copy_dir(&src, &repo.join(".referee"));
    (repo, src)
}

#[test]
fn the_fixture_ledger_verifies() {
    let (repo, _) = sample_state();
    let (code, out, err) = verify(&repo, "sample");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("5 rows (4 rounds) verified"), "{out}");
}

#[test]
fn ledger_show_in_every_format() {
    let (repo, _) = sample_state();
    for format in ["table", "csv", "json", "markdown"] {
        let out = repo
            .referee()
            .args(["ledger", "show", "--format", format])
            .assert()
            .success();
        insta::assert_snapshot!(
            format!("ledger_show_{format}"),
            text(&out.get_output().stdout)
        );
    }
    let csv = repo
        .referee()
        .args(["ledger", "show", "--format", "csv"])
        .assert()
        .success();
    assert_eq!(
        csv.get_output().stdout,
        std::fs::read(repo.join(".referee/ledgers/sample.csv")).unwrap()
    );
    let json = repo
        .referee()
        .args(["ledger", "show", "--json"])
        .assert()
        .success();
    let doc: serde_json::Value = serde_json::from_slice(&json.get_output().stdout).unwrap();
    assert_eq!(doc["loop"], "sample");
    let rows = &doc["rows"];
    assert_eq!(rows[0]["must_fix_left"], 2);
    assert_eq!(rows[0]["cost_usd"], 0.25);
    assert_eq!(rows[4]["kind"], "amend");
    assert_eq!(rows[4]["opened"], serde_json::Value::Null);
}

/// Regenerates tests/fixtures/ledger: `cargo test --test it build_sample -- --ignored`.
#[test]
#[ignore]
fn build_sample() {
    let dest = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ledger");
    let _ = std::fs::remove_dir_all(&dest);
    let repo = Repo::new();
    let store = init(&repo, "sample");
    append_rounds(&store, 4);
    let mut amend = Draft::new(Kind::Amend, 4, NOW);
    amend.subject = "max_rounds=6".into();
    amend.by = "ann".into();
    amend.reason = "the last finding is close; two more rounds".into();
    store.lock().unwrap().append(amend, None).unwrap();
    copy_dir(&repo.join(".referee"), &dest.join(".referee"));
}

fn copy_dir(src: &Path, dest: &Path) {
    std::fs::create_dir_all(dest).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let to = dest.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to);
        } else {
            std::fs::copy(entry.path(), &to).unwrap();
            make_writable(&to);
        }
    }
}

fn make_writable(path: &Path) {
    let mut perms = std::fs::metadata(path).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(path, perms).unwrap();
}

#[test]
fn show_of_a_ledger_with_a_bad_row_prints_only_the_error() {
    let repo = Repo::new();
    let store = init(&repo, "l");
    append_rounds(&store, 3);
    let path = repo.join(".referee/ledgers/l.csv");
    let written = std::fs::read_to_string(&path).unwrap();
    // Row 3 (line 4) gets a kind no row can have: rows 1 and 2 still read.
    let lines: Vec<String> = written
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 3 {
                l.replacen(",round,", ",rund,", 1)
            } else {
                l.to_string()
            }
        })
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    for format in ["json", "csv", "table", "markdown"] {
        let out = repo
            .referee()
            .args(["ledger", "show", "--format", format])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{format}");
        // No half document: nothing, or (asked for JSON) the error as one.
        if format == "json" {
            let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert!(
                doc["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("row 3: column `kind`")
            );
        } else {
            assert_eq!(text(&out.stdout), "", "{format}: no half document");
        }
        assert!(
            text(&out.stderr).contains("row 3: column `kind`"),
            "{format}: {}",
            text(&out.stderr)
        );
    }
}

/// An edited row: `verify` and `repair` say how to get the committed
/// ledger back, and `repair` never answers "nothing to repair" for it.
#[test]
fn an_edited_ledger_is_named_with_the_way_back() {
    let repo = Repo::with_loop("l", &[]);
    repo.append("src/a.rs", "one");
    repo.record(&crate::common::native(&[("F1", "bug")]))
        .run()
        .assert(10, "");
    let ledger = repo.read(".referee/ledgers/l.csv");
    repo.write(
        ".referee/ledgers/l.csv",
        &ledger.replacen(",continue,", ",stop,", 1),
    );
    let restore =
        "put the committed one back with `git checkout -- .referee/ledgers/l.csv` (or from a copy)";
    let verify = repo.run(&["ledger", "verify"]);
    assert_eq!(verify.code, 1, "{}", verify.stderr);
    assert!(
        verify.stderr.contains("(the row was edited)"),
        "{}",
        verify.stderr
    );
    assert!(verify.stderr.contains(restore), "{}", verify.stderr);
    let repair = repo.run(&["ledger", "repair"]);
    assert_eq!(repair.code, 1, "{}", repair.stderr);
    assert!(
        repair.stderr.contains(
            "`referee ledger repair` removes only a torn last line, never a committed row"
        ),
        "{}",
        repair.stderr
    );
    assert!(repair.stderr.contains(restore), "{}", repair.stderr);
    assert!(!repair.stdout.contains("nothing to repair"));
    // Put back, the ledger verifies again.
    repo.write(".referee/ledgers/l.csv", &ledger);
    assert_eq!(repo.run(&["ledger", "verify"]).code, 0);
    let repair = repo.run(&["ledger", "repair"]);
    assert_eq!(repair.code, 0, "{}", repair.stderr);
    assert!(repair.stdout.contains("nothing to repair"));
}
