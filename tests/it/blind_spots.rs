//! Changes a snapshot must not miss: files flagged in the index, edits
//! inside a submodule, and a `.git/info/exclude` rewritten mid-loop.

use serde_json::Value;

use crate::common::{Repo, text};

const ONE: &str = r#"{"findings":[{"id":"F1","severity":"bug","title":"expired tokens pass","file":"src/a.rs","line":1}]}"#;

fn record(repo: &Repo) -> (i32, Value, String) {
    let out = repo
        .call(&["record", "--json", "--findings", "-"])
        .stdin(ONE)
        .run();
    let json = serde_json::from_str(&out.stdout).unwrap_or(Value::Null);
    (out.code, json, out.stderr)
}

/// In every index layout git writes: referee reads versions 2 to 4 itself
/// and leaves a split index to `git ls-files`.
#[test]
fn index_flags_cannot_hide_a_modified_file() {
    let layouts: &[&[&str]] = &[
        &["--index-version", "2"],
        &["--index-version", "4"],
        &["--split-index"],
    ];
    for flag in ["--assume-unchanged", "--skip-worktree"] {
        for layout in layouts {
            let repo = Repo::new();
            repo.write("src/a.rs", "fn a() {}\n");
            repo.git(&["add", "-A"]);
            repo.git(&["commit", "-q", "-m", "a"]);
            repo.referee()
                .args(["init", "--loop", "l"])
                .assert()
                .success();
            repo.git(&["update-index", flag, "src/a.rs"]);
            let mut args = vec!["update-index"];
            args.extend_from_slice(layout);
            repo.git(&args);
            repo.write("src/a.rs", "fn a() { panic!() }\n");
            let (code, json, err) = record(&repo);
            assert_eq!(code, 10, "{flag} {layout:?}: {err}");
            assert_eq!(
                (json["diff_added"].as_u64(), json["diff_removed"].as_u64()),
                (Some(1), Some(1)),
                "{flag} {layout:?}: the edit is in the patch"
            );
            // The user's index keeps its flag and its layout.
            let listed = repo.git(&["ls-files", "-v", "src/a.rs"]);
            assert!(
                listed.starts_with('h') || listed.starts_with('S'),
                "{flag} {layout:?}: {listed}"
            );
        }
    }
}

/// A repository with a submodule at `vendor/lib` (and the submodule's own
/// repository, kept alive with it).
fn with_submodule() -> (Repo, Repo) {
    let lib = Repo::new();
    lib.write("lib.rs", "pub fn lib() {}\n");
    lib.git(&["add", "-A"]);
    lib.git(&["commit", "-q", "-m", "lib"]);
    let repo = Repo::new();
    repo.git(&[
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        lib.path().to_str().unwrap(),
        "vendor/lib",
    ]);
    repo.git(&["commit", "-q", "-m", "submodule"]);
    (repo, lib)
}

#[test]
fn an_edit_inside_a_submodule_is_a_change_to_its_path() {
    let (repo, _lib) = with_submodule();
    repo.referee()
        .args(["init", "--loop", "l", "--scope", "src/**"])
        .assert()
        .success();
    // The writer edits a file inside the submodule, out of scope.
    std::fs::write(
        repo.join("vendor/lib/lib.rs"),
        "pub fn lib() { unsafe_thing() }\n",
    )
    .unwrap();
    let out = repo
        .referee()
        .args(["record", "--findings", "-"])
        .write_stdin(r#"{"findings":[]}"#)
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(20), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("stop: scope"), "{stdout}");
    assert!(stdout.contains("`vendor/lib`"), "{stdout}");
    // The same dirty content snapshots to the same tree: a retry is a retry.
    let again = repo
        .referee()
        .args(["record", "--findings", "-"])
        .write_stdin(r#"{"findings":[]}"#)
        .output()
        .unwrap();
    assert!(
        text(&again.stdout).contains("already recorded as round 1"),
        "{}",
        text(&again.stdout)
    );
}

#[test]
fn an_approval_does_not_cover_a_later_edit_inside_a_submodule() {
    let (repo, _lib) = with_submodule();
    repo.referee()
        .args(["init", "--loop", "l"])
        .assert()
        .success();
    repo.write("src/a.rs", "fn a() {}\n");
    repo.referee()
        .args(["record", "--findings", "-"])
        .write_stdin(r#"{"findings":[]}"#)
        .assert()
        .code(0);
    repo.referee()
        .args(["approve", "--by", "ana"])
        .assert()
        .success();
    repo.referee().args(["approval", "check"]).assert().code(0);
    std::fs::write(repo.join("vendor/lib/lib.rs"), "pub fn lib() { 1 }\n").unwrap();
    let out = repo.referee().args(["approval", "check"]).output().unwrap();
    assert_eq!(out.status.code(), Some(20));
    assert!(
        text(&out.stdout).contains("vendor/lib"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn info_exclude_may_not_change_during_a_loop() {
    let repo = Repo::new();
    repo.referee()
        .args(["init", "--loop", "l"])
        .assert()
        .success();
    repo.write("src/a.rs", "one\n");
    assert_eq!(record(&repo).0, 10);
    // The writer hides its next file from the snapshot.
    let exclude = repo.join(".git/info/exclude");
    let mut text_now = std::fs::read_to_string(&exclude).unwrap_or_default();
    text_now.push_str("secret_backdoor.rs\n");
    std::fs::write(&exclude, text_now).unwrap();
    repo.write("secret_backdoor.rs", "fn backdoor() {}\n");
    repo.write("src/a.rs", "two\n");
    let (code, _, err) = record(&repo);
    assert_eq!(code, 1);
    assert!(
        err.contains("`.git/info/exclude` changed since round 1"),
        "{err}"
    );
}
