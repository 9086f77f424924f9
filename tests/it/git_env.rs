//! Git hygiene (docs/reliability.md, "Git hygiene"): referee's git works on
//! the repository referee means whatever the caller's environment says, runs
//! no program the repository's config names, and refuses a too-old git with
//! a hint.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Repo, spawn_fed, text};

const BUG: &str = r#"{"findings":[{"id":"F1","severity":"bug","title":"off by one","file":"src/a.rs","line":1}]}"#;

struct Out {
    code: i32,
    stderr: String,
}

/// `record --loop l --findings -` with `BUG` on stdin, through `cmd`.
fn record(mut cmd: Command) -> Out {
    cmd.args(["record", "--loop", "l", "--findings", "-"]);
    let out = spawn_fed(&mut cmd, BUG.as_bytes())
        .wait_with_output()
        .unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stderr: text(&out.stderr),
    }
}

/// A repository with loop `l` (no agents, no guards) and a change to record.
fn with_loop() -> Repo {
    let repo = Repo::new();
    let out = repo
        .referee()
        .args(["init", "--loop", "l", "--guards", "none"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    repo.write("src/a.rs", "fn a() {}\n");
    repo
}

/// An executable shell script at `path`.
fn script(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Every ref under `refs/referee/` of `repo`.
fn referee_refs(repo: &Repo) -> String {
    repo.git(&["for-each-ref", "--format=%(refname)", "refs/referee/"])
}

#[test]
fn a_hostile_git_environment_does_not_redirect_record() {
    let repo = with_loop();
    let other = Repo::new();
    other.write("other.txt", "not referee's\n");
    let index_before = std::fs::read(other.join(".git/index")).unwrap();
    let git_dir = other.join(".git");
    let mut cmd = repo.referee_std();
    cmd.env("GIT_DIR", &git_dir)
        .env("GIT_WORK_TREE", other.path())
        .env("GIT_INDEX_FILE", git_dir.join("index"))
        .env("GIT_COMMON_DIR", &git_dir)
        .env("GIT_OBJECT_DIRECTORY", git_dir.join("objects"))
        .env("GIT_ALTERNATE_OBJECT_DIRECTORIES", git_dir.join("objects"));
    let out = record(cmd);
    assert_eq!(out.code, 10, "{}", out.stderr);

    // The snapshot is the repository's own, of its own work tree.
    assert!(
        referee_refs(&repo).contains("refs/referee/l/round-1"),
        "{}",
        referee_refs(&repo)
    );
    let files = repo.git(&["ls-tree", "-r", "--name-only", "refs/referee/l/round-1"]);
    assert!(files.contains("src/a.rs"), "{files}");
    assert!(!files.contains("other.txt"), "{files}");
    // The other repository is untouched: no ref, the same index, no state.
    assert_eq!(referee_refs(&other), "");
    assert_eq!(
        std::fs::read(other.join(".git/index")).unwrap(),
        index_before
    );
    assert!(!other.join(".referee").exists());
}

#[test]
fn pathspec_variables_in_the_callers_environment_do_not_break_record() {
    // Under `GIT_LITERAL_PATHSPECS` git read the snapshot's `:(top)` as a
    // file of that name and every round failed with exit 1.
    for (name, value) in [
        ("GIT_LITERAL_PATHSPECS", "1"),
        ("GIT_NOGLOB_PATHSPECS", "1"),
        ("GIT_GLOB_PATHSPECS", "1"),
        ("GIT_ICASE_PATHSPECS", "1"),
    ] {
        let repo = with_loop();
        let mut cmd = repo.referee_std();
        cmd.env(name, value);
        let out = record(cmd);
        assert_eq!(out.code, 10, "{name}: {}", out.stderr);
        let files = repo.git(&["ls-tree", "-r", "--name-only", "refs/referee/l/round-1"]);
        assert!(files.contains("src/a.rs"), "{name}: {files}");
        assert!(!files.contains(".referee"), "{name}: {files}");
    }
}

#[test]
fn an_ignored_state_folder_or_frozen_file_does_not_break_record() {
    // `git add` fails on an ignored path that an exclude pathspec names
    // literally: a user who ignores `.referee/` had every round refused.
    for (file, line) in [
        (".gitignore", ".referee/\n"),
        (".git/info/exclude", ".referee\n"),
        (".gitignore", "/.referee/ledgers/\n.codex/\n"),
    ] {
        // The person ignores them before the loop starts (`.git/info/exclude`
        // is pinned then).
        let repo = Repo::new();
        let path = repo.join(file);
        let mut text_before = std::fs::read_to_string(&path).unwrap_or_default();
        text_before.push_str(line);
        std::fs::write(&path, text_before).unwrap();
        let out = repo
            .referee()
            .args(["init", "--loop", "l", "--guards", "none"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        repo.write("src/a.rs", "fn a() {}\n");
        let out = repo
            .referee()
            .args(["hook", "install", "--agent", "codex"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        repo.write(".codex/hooks.json", "{\"hooks\": {}}\n");
        repo.write(".referee/notes.txt", "mine\n");

        let out = record(repo.referee_std());
        assert_eq!(out.code, 10, "{file} {line:?}: {}", out.stderr);
        let files = repo.git(&["ls-tree", "-r", "--name-only", "refs/referee/l/round-1"]);
        assert!(files.contains("src/a.rs"), "{files}");
        assert!(!files.contains(".referee/"), "{file} {line:?}: {files}");
        assert!(!files.contains(".codex/"), "{file} {line:?}: {files}");
    }
}

#[test]
fn a_repository_git_refuses_as_another_users_is_named_not_sent_to_git_init() {
    // git's own test switch for a repository another user owns (as in a
    // container that mounts the checkout): git 2.35.2 refuses it. referee
    // said "not inside a git work tree" and "run `git init` first".
    let repo = Repo::new();
    for args in [&["init", "--loop", "l"][..], &["status"][..]] {
        let out = repo
            .referee_std()
            .env("GIT_TEST_ASSUME_DIFFERENT_OWNER", "1")
            .args(args)
            .output()
            .unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("git says:\n  fatal: detected dubious ownership"),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains("safe.directory"), "{args:?}: {stderr}");
        assert!(!stderr.contains("git init"), "{args:?}: {stderr}");
        assert!(!stderr.contains(" \n"), "trailing blanks: {stderr:?}");
    }
    assert!(!repo.join(".referee").exists());
}

#[test]
fn a_work_tree_moved_by_core_worktree_is_refused() {
    // The writer can set `core.worktree` in `.git/config`: git then takes
    // another folder for the work tree. With a copy of `.referee/` there,
    // the loop went on against a decoy tree.
    let repo = with_loop();
    let decoy = tempfile::tempdir().unwrap();
    let copy = Command::new("cp")
        .args([
            "-r",
            &repo.join(".referee").to_string_lossy(),
            &decoy.path().to_string_lossy(),
        ])
        .status()
        .unwrap();
    assert!(copy.success());
    std::fs::write(decoy.path().join("decoy.rs"), "fn decoy() {}\n").unwrap();
    let parent = repo.path().parent().unwrap().to_string_lossy().into_owned();
    for place in [decoy.path().to_string_lossy().into_owned(), parent] {
        repo.git(&["config", "core.worktree", &place]);
        let out = record(repo.referee_std());
        assert_eq!(out.code, 1, "{place}: {}", out.stderr);
        assert!(
            out.stderr
                .contains(&format!("git gives `{place}` as the work tree of")),
            "{}",
            out.stderr
        );
        assert!(out.stderr.contains("core.worktree"), "{}", out.stderr);
        assert_eq!(referee_refs(&repo), "");
    }
    assert!(!decoy.path().join(".referee/ledgers/l/round-1").exists());
    // Without the setting the same round records.
    repo.git(&["config", "--unset", "core.worktree"]);
    assert_eq!(record(repo.referee_std()).code, 10);

    // A `.git` that is a link to the git folder is the repository's own.
    let linked = with_loop();
    let moved = tempfile::tempdir().unwrap();
    let git_dir = moved.path().join("git");
    std::fs::rename(linked.join(".git"), &git_dir).unwrap();
    std::os::unix::fs::symlink(&git_dir, linked.join(".git")).unwrap();
    let out = record(linked.referee_std());
    assert_eq!(out.code, 10, "{}", out.stderr);
}

#[test]
fn no_fsmonitor_or_hook_the_repository_names_is_run() {
    let repo = with_loop();
    let outside = tempfile::tempdir().unwrap();
    let marker = outside.path().join("ran");
    let touch = format!("echo \"$0\" >> '{}'", marker.display());
    let fsmonitor = outside.path().join("fsmonitor.sh");
    script(&fsmonitor, &format!("{touch}\nexit 1"));
    repo.git(&["config", "core.fsmonitor", &fsmonitor.to_string_lossy()]);
    let hooks = repo.join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    for hook in ["post-index-change", "reference-transaction"] {
        script(&hooks.join(hook), &touch);
    }

    let out = record(repo.referee_std());
    assert_eq!(out.code, 10, "{}", out.stderr);
    assert!(referee_refs(&repo).contains("refs/referee/l/round-1"));
    assert!(
        !marker.exists(),
        "referee's git ran: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );

    // The same config does run them for a git that is not referee's: the
    // test above could fail.
    repo.git(&["add", "-A"]);
    repo.git(&["update-ref", "refs/heads/other", "HEAD"]);
    let ran = std::fs::read_to_string(&marker).unwrap_or_default();
    for program in ["fsmonitor.sh", "post-index-change", "reference-transaction"] {
        assert!(ran.contains(program), "{program} did not run: {ran}");
    }
}

#[test]
fn a_filter_the_repository_config_plants_is_not_run_and_a_trusted_one_is() {
    let repo = with_loop();
    let outside = tempfile::tempdir().unwrap();
    let marker = outside.path().join("ran");
    let clean = outside.path().join("clean.sh");
    script(
        &clean,
        &format!("echo \"$0\" >> '{}'\ncat", marker.display()),
    );
    repo.git(&["config", "filter.planted.clean", &clean.to_string_lossy()]);
    repo.git(&["config", "filter.planted.required", "true"]);
    repo.write(".gitattributes", "*.rs filter=planted\n");

    let out = record(repo.referee_std());
    assert_eq!(out.code, 10, "{}", out.stderr);
    assert!(
        !marker.exists(),
        "referee's git ran the planted filter: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
    let blob = repo.git(&["cat-file", "-p", "refs/referee/l/round-1:src/a.rs"]);
    assert_eq!(blob, "fn a() {}\n");

    // A filter the person configured (here on the command line, as their
    // global config would) still runs, even where the repository's config
    // names the same driver.
    repo.write("src/a.rs", "fn b() {}\n");
    let mut cmd = repo.referee_std();
    cmd.env(
        "GIT_CONFIG_PARAMETERS",
        "'filter.planted.clean'='tr a-z A-Z'",
    );
    let out = record(cmd);
    assert_eq!(out.code, 10, "{}", out.stderr);
    assert!(!marker.exists());
    let blob = repo.git(&["cat-file", "-p", "refs/referee/l/round-2:src/a.rs"]);
    assert_eq!(blob, "FN B() {}\n");

    // The planted filter does run for a git that is not referee's.
    repo.git(&["add", "-A"]);
    assert!(
        std::fs::read_to_string(&marker)
            .unwrap_or_default()
            .contains("clean.sh")
    );
}

/// The real git, for the fake one to hand every other command to.
fn real_git() -> PathBuf {
    let out = Command::new("sh")
        .args(["-c", "command -v git"])
        .output()
        .unwrap();
    PathBuf::from(text(&out.stdout).trim())
}

#[test]
fn a_new_enough_git_is_not_asked_its_version() {
    // The top-level `rev-parse` answers for the version (`--path-format` is
    // git 2.31's); `git version` is one process more at every start.
    let repo = with_loop();
    let bin = tempfile::tempdir().unwrap();
    let log = bin.path().join("calls.log");
    script(
        &bin.path().join("git"),
        &format!(
            "echo \"$*\" >> '{}'\nexec '{}' \"$@\"",
            log.display(),
            real_git().display()
        ),
    );
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = repo.referee_std();
    cmd.env("PATH", &path);
    let out = record(cmd);
    assert_eq!(out.code, 10, "{}", out.stderr);
    let calls = std::fs::read_to_string(&log).unwrap();
    assert!(
        calls.contains("rev-parse --path-format=absolute"),
        "{calls}"
    );
    assert!(calls.contains("update-ref"), "{calls}");
    assert!(
        !calls.lines().any(|l| l == "version"),
        "git was asked its version:\n{calls}"
    );
}

#[test]
fn a_too_old_git_is_refused_with_the_minimum_and_a_hint() {
    let repo = with_loop();
    let ledger_before = std::fs::read(repo.join(".referee/ledgers/l.csv")).unwrap_or_default();
    let bin = tempfile::tempdir().unwrap();
    // A git 2.25 as referee meets it: `git version` says so, and
    // `rev-parse` prints back the option it does not know (`--path-format`
    // is 2.31's) before its answers.
    script(
        &bin.path().join("git"),
        &format!(
            "if [ \"$1\" = version ]; then echo 'git version 2.25.1'; exit 0; fi\n\
             case \" $* \" in *' rev-parse --path-format=absolute '*) echo --path-format=absolute ;; esac\n\
             exec '{}' \"$@\"",
            real_git().display()
        ),
    );
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // `init` says so too, rather than "not inside a git work tree".
    let init = repo
        .referee_std()
        .env("PATH", &path)
        .args(["init", "--loop", "other"])
        .output()
        .unwrap();
    assert_eq!(init.status.code(), Some(1));
    assert!(
        text(&init.stderr).contains("git 2.25.1 is older than 2.30.0"),
        "{}",
        text(&init.stderr)
    );
    let mut cmd = repo.referee_std();
    cmd.env("PATH", path);
    let out = record(cmd);
    assert_ne!(out.code, 0);
    assert_ne!(out.code, 10);
    assert!(
        out.stderr
            .contains("git 2.25.1 is older than 2.30.0, the oldest referee supports\nhint: "),
        "{}",
        out.stderr
    );
    assert_eq!(referee_refs(&repo), "");
    assert_eq!(
        std::fs::read(repo.join(".referee/ledgers/l.csv")).unwrap_or_default(),
        ledger_before
    );
}

/// A SHA-256 repository: round 1 publishes its ref and pins the contract
/// (an all-zero SHA-1 "must not exist" value once made git refuse it:
/// "not a valid old SHA1"), round 2 follows, and both verify.
#[test]
fn a_sha256_repository_records_and_verifies() {
    let repo = Repo::empty_with(&["--object-format=sha256"]);
    repo.write("README.md", "hello\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "initial"]);
    repo.init_loop("l", &["--guards", "none"]);
    for (round, body) in ["fn a() {}\n", "fn a() { 1 }\n"].iter().enumerate() {
        repo.write("src/a.rs", body);
        let out = record(repo.referee_std());
        assert_eq!(out.code, 10, "round {}: {}", round + 1, out.stderr);
    }
    assert_eq!(
        referee_refs(&repo),
        "refs/referee/l/contract\nrefs/referee/l/round-1\nrefs/referee/l/round-2\n"
    );
    let round_2 = repo.git(&["rev-parse", "refs/referee/l/round-2"]);
    assert_eq!(round_2.trim().len(), 64, "a SHA-256 id: {round_2}");
    repo.referee()
        .args(["ledger", "verify", "--loop", "l"])
        .assert()
        .success();
    std::fs::write(repo.join(".referee/contracts/l.toml"), "edited = = 1\n").unwrap();
    repo.referee()
        .args(["contract", "restore", "--loop", "l"])
        .assert()
        .success();
}
