//! The snapshot against real git repositories.
use super::patch::{DIFF_FLAGS, parse_listing};
use super::refs::{ref_component, worktree_component};
use super::*;

/// Parses `--numstat -z` output: `A\tR\tPATH\0`, or `A\tR\t\0OLD\0NEW\0` for
/// a rename, with `-` for both counts of a binary file. The tests hold the
/// listing's files and counts to git's own.
fn parse_numstat<'o>(out: &'o [u8]) -> (u64, u64, Vec<String>) {
    let (mut added, mut removed) = (0u64, 0u64);
    let mut files: Vec<String> = Vec::new();
    let mut seen: std::collections::HashSet<&[u8]> = std::collections::HashSet::new();
    let mut push = |p: &'o [u8]| {
        if seen.insert(p) {
            files.push(String::from_utf8_lossy(p).into_owned());
        }
    };
    let mut fields = out.split(|&b| b == 0);
    while let Some(record) = fields.next() {
        if record.is_empty() {
            continue;
        }
        let mut parts = record.splitn(3, |&b| b == b'\t');
        let (Some(a), Some(r), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        added = added.saturating_add(count(a));
        removed = removed.saturating_add(count(r));
        if path.is_empty() {
            for side in [fields.next(), fields.next()].into_iter().flatten() {
                push(side);
            }
        } else {
            push(path);
        }
    }
    (added, removed, files)
}

fn count(field: &[u8]) -> u64 {
    std::str::from_utf8(field)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// The tree the work tree at `repo` snapshots to, leaving out `exclude`.
fn worktree(repo: &Path, exclude: &[&str]) -> Result<String, SnapshotError> {
    worktree_tree(repo, &scope(exclude, None))
}

/// The work tree's snapshot tree and the patch to it from `from`, as a
/// round takes them.
fn with_patch(
    repo: &Path,
    scope: &Scope<'_>,
    from: &str,
) -> Result<(String, Patch), SnapshotError> {
    let tree = worktree_tree(repo, scope)?;
    let patch = diff(repo, None, from, &tree)?;
    Ok((tree, patch))
}

/// A scope with no pin or index cache, starting from `HEAD`.
fn scope<'a>(exclude: &'a [&'a str], frozen: Option<Frozen<'a>>) -> Scope<'a> {
    Scope {
        exclude,
        frozen,
        base: "HEAD",
        own: None,
    }
}

/// The commit id stored for `round` of `loop_name`, or `None`.
fn read_ref(repo: &Path, loop_name: &str, round: u32) -> Result<Option<String>, SnapshotError> {
    verify(
        repo,
        &format!("{}^{{commit}}", round_ref(repo, loop_name, round)?),
    )
}
use std::process::Command;

/// Git isolated from the machine's config, with fixed dates: for the
/// commands the tests run themselves (the code under test inherits the
/// environment, as it would for a user).
const GIT_ENV: &[(&str, &str)] = &[
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_AUTHOR_NAME", "Test Author"),
    ("GIT_AUTHOR_EMAIL", "author@example.com"),
    ("GIT_COMMITTER_NAME", "Test Author"),
    ("GIT_COMMITTER_EMAIL", "author@example.com"),
    ("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z"),
    ("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z"),
];

const EXCLUDE: &[&str] = &[".referee"];

/// A round's snapshot as `record` makes it: the tree, the commit, and
/// (under the loop's lock, in the engine) its published ref.
fn take(
    repo: &Path,
    loop_name: &str,
    round: u32,
    parent: Option<&str>,
    exclude: &[&str],
    message: &str,
) -> Result<Snapshot, SnapshotError> {
    let tree = worktree(repo, exclude)?;
    let snap = commit(repo, loop_name, round, parent, &tree, message)?;
    publish(repo, loop_name, &snap, message, None)?;
    Ok(snap)
}

#[test]
fn a_tracked_state_folder_and_flagged_files_are_handled_in_the_copy() {
    let repo = Repo::new();
    repo.write("a.txt", "a\n");
    repo.write(".referee/ledgers/l.csv", "row\n");
    repo.git(&["add", "-f", "a.txt", ".referee/ledgers/l.csv"]);
    repo.git(&["commit", "-q", "-m", "tracked state"]);
    repo.git(&["update-index", "--assume-unchanged", "a.txt"]);
    repo.write("a.txt", "changed\n");
    let tree = worktree(repo.path(), EXCLUDE).expect("tree");
    // The state folder is left out though the index tracks it, and the
    // flagged file's change is seen.
    assert_eq!(repo.ls_tree(&tree), ["README.md", "a.txt"]);
    assert_eq!(
        repo.git(&["cat-file", "-p", &format!("{tree}:a.txt")]),
        "changed\n"
    );
    // The user's index is untouched: it still tracks both, flag and all.
    assert!(repo.git(&["ls-files", "-v"]).contains("h a.txt"));
    assert!(repo.git(&["ls-files"]).contains(".referee/ledgers/l.csv"));
}

#[test]
fn a_worktree_id_becomes_one_ref_component() {
    assert_eq!(worktree_component("feature-2"), "feature-2");
    for (id, start) in [
        (".tmpAb12", "tmpAb12-"),
        ("a b", "a-b-"),
        ("x.lock", "x.lock-"),
        ("a..b", "a--b-"),
        ("wt.", "wt.-"),
        ("", "wt-"),
    ] {
        let made = worktree_component(id);
        assert!(made.starts_with(start), "{id:?}: {made}");
        assert!(ref_component(&made), "{id:?}: {made}");
    }
    assert_ne!(worktree_component(".x"), worktree_component("-x"));
}

#[test]
fn an_excluded_name_is_taken_literally_and_may_be_ignored() {
    let repo = Repo::new();
    // Glob characters in an excluded name match only themselves.
    for file in [
        "a*b/q",
        "aXb/q",
        "[x]y",
        "xy",
        "c?d",
        "cZd",
        "e\\f",
        ".referee/l.csv",
    ] {
        repo.write(file, "x\n");
    }
    // An excluded path the user ignores is still left out, and the
    // ignoring does not fail `git add`.
    repo.write(".gitignore", ".referee/\nc[?]d\n");
    let exclude = [".referee", "a*b", "[x]y", "c?d", "e\\f"];
    let tree = worktree(repo.path(), &exclude).expect("tree");
    assert_eq!(
        repo.ls_tree(&tree),
        [".gitignore", "README.md", "aXb/q", "cZd", "xy"]
    );
}

#[test]
fn publish_is_refused_when_the_ref_moved_under_it() {
    let repo = Repo::new();
    let first = take(repo.path(), "demo", 1, None, EXCLUDE, "m").expect("snapshot");
    assert_eq!(
        read_ref(repo.path(), "demo", 1).expect("ref"),
        Some(first.commit.clone())
    );
    assert!(
        missing_commits(repo.path(), &[&first.commit])
            .expect("check")
            .is_empty()
    );
    let gone = "1111111111111111111111111111111111111111";
    assert!(
        missing_commits(repo.path(), &[gone])
            .expect("check")
            .contains(gone)
    );
    assert_eq!(
        round_refs(repo.path(), "demo").expect("refs").get(&1),
        Some(&first.commit)
    );
}

/// A snapshot of `repo` whose index cache names, for `path`, a blob
/// the store lacks (kept by `skip-worktree` with no file in the work
/// tree, so the listing leaves it, as a blob `git gc` pruned would be): it
/// starts over without the cache, and its tree is the work tree's, never
/// one naming the missing blob. The cache it leaves works.
fn snapshot_with_a_missing_blob(repo: &Repo, path: &str) {
    let from = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let ghost = "1234567890123456789012345678901234567890";
    let folder = tempfile::tempdir().expect("tempdir");
    let own = Own::in_folder(folder.path());
    let cache = own.cache(None);
    let in_cache = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(repo.path())
            .envs(GIT_ENV.iter().copied())
            .env("GIT_INDEX_FILE", &cache)
            .output()
            .expect("git");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    in_cache(&["read-tree", "HEAD"]);
    in_cache(&[
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("100644,{ghost},{path}"),
    ]);
    in_cache(&["update-index", "--skip-worktree", path]);
    repo.write("new.txt", "a change\n");
    let scope = Scope {
        own: Some(&own),
        ..scope(EXCLUDE, None)
    };
    let (tree, _) = with_patch(repo.path(), &scope, &from).expect("a snapshot without the cache");
    assert_eq!(tree, worktree(repo.path(), EXCLUDE).expect("with no cache"));
    let listed = repo.ls_tree(&tree);
    assert!(listed.iter().any(|p| p == "new.txt") && !listed.iter().any(|p| p == path));
    assert!(!in_cache(&["ls-files", "--stage"]).contains(ghost));
    let (again, _) = with_patch(repo.path(), &scope, &from).expect("the cache left works");
    assert_eq!(again, tree);
}

#[test]
fn a_cache_naming_a_missing_blob_starts_the_snapshot_over() {
    snapshot_with_a_missing_blob(&Repo::new(), "ghost.txt");
}

#[test]
fn a_cache_naming_a_missing_blob_of_a_binary_file_starts_over_too() {
    // `-diff` makes a file binary without git looking at its bytes; the
    // tree is still written, and checked, whole.
    let repo = Repo::new();
    repo.write(".gitattributes", "*.bin -diff\n");
    repo.git(&["add", ".gitattributes"]);
    repo.git(&["commit", "-q", "-m", "attributes"]);
    snapshot_with_a_missing_blob(&repo, "ghost.bin");
}

#[test]
fn a_repository_with_no_commit_inside_the_work_tree_is_named() {
    // `git add` refuses it ("does not have a commit checked out"), and
    // every round failed with git's "adding files failed".
    let repo = Repo::new();
    repo.write("vendor/tool/main.rs", "fn main() {}\n");
    repo.git(&["-C", "vendor/tool", "init", "-q"]);
    let err = worktree(repo.path(), EXCLUDE).expect_err("refused");
    assert!(
        err.to_string()
            .starts_with("`vendor/tool/` is a git repository inside the work tree with no commit"),
        "{err}"
    );
    assert!(
        err.hint()
            .is_some_and(|hint| hint.contains("remove `vendor/tool/.git`")),
        "{err}"
    );
    // Ignored, it is left out like any ignored folder.
    repo.write(".gitignore", "vendor/tool/\n");
    let tree = worktree(repo.path(), EXCLUDE).expect("tree");
    assert_eq!(repo.ls_tree(&tree), [".gitignore", "README.md"]);
}

#[test]
fn a_patch_may_read_the_attributes_of_another_tree() {
    let repo = Repo::new();
    let base = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.write(".gitattributes", "*.rs -diff\n");
    repo.write("a.rs", "fn hidden() {}\n");
    let tree = worktree(repo.path(), EXCLUDE).expect("tree");
    let text = |p: Patch| String::from_utf8_lossy(&p.text).into_owned();
    let plain = text(diff(repo.path(), None, &base, &tree).expect("diff"));
    assert!(
        plain.contains("Binary files /dev/null and b/a.rs differ"),
        "{plain}"
    );
    let based = text(diff_with_attributes(repo.path(), None, &base, &tree, &base).expect("diff"));
    assert!(based.contains("+fn hidden() {}"), "{based}");
}

#[test]
fn round_1_publishes_its_contract_with_its_ref() {
    let repo = Repo::new();
    let tree = worktree(repo.path(), EXCLUDE).expect("tree");
    let snap = commit(repo.path(), "demo", 1, None, &tree, "m").expect("commit");
    assert_eq!(kept_contract(repo.path(), "demo").expect("kept"), None);
    publish(repo.path(), "demo", &snap, "m", Some(b"[loop]\n")).expect("published");
    assert_eq!(
        read_ref(repo.path(), "demo", 1).expect("ref"),
        Some(snap.commit.clone())
    );
    assert_eq!(
        kept_contract(repo.path(), "demo").expect("kept"),
        Some(b"[loop]\n".to_vec())
    );
}

struct Repo {
    dir: tempfile::TempDir,
}

impl Repo {
    fn empty() -> Repo {
        let repo = Repo {
            dir: tempfile::tempdir().expect("tempdir"),
        };
        repo.git(&["init", "-q", "-b", "main"]);
        repo
    }

    fn new() -> Repo {
        let repo = Repo::empty();
        repo.write("README.md", "hello\n");
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "-m", "initial"]);
        repo
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        let path = self.path().join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(path, bytes).expect("write");
    }

    fn git_bytes(&self, args: &[&str]) -> Vec<u8> {
        let out = Command::new("git")
            .args(args)
            .current_dir(self.path())
            .envs(GIT_ENV.iter().copied())
            .output()
            .expect("run git");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    }

    fn git(&self, args: &[&str]) -> String {
        String::from_utf8(self.git_bytes(args)).expect("utf-8")
    }

    /// The paths in a tree, `-z` so odd names come out whole.
    fn ls_tree(&self, rev: &str) -> Vec<String> {
        self.git_bytes(&["ls-tree", "-r", "-z", "--name-only", rev])
            .split(|&b| b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| String::from_utf8(p.to_vec()).expect("utf-8"))
            .collect()
    }

    /// Entries of the git directory (to prove no temporary file is left).
    fn git_dir_entries(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.path().join(".git"))
            .expect("read .git")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    fn take(&self, round: u32, parent: Option<&str>) -> Snapshot {
        take(
            self.path(),
            "demo",
            round,
            parent,
            EXCLUDE,
            "referee snapshot",
        )
        .expect("snapshot")
    }
}

#[test]
fn snapshots_a_repository_with_no_commits() {
    let repo = Repo::empty();
    repo.write("a.txt", "a\n");
    repo.write("dir/b.txt", "b\n");
    let before = repo.git_dir_entries();
    let snap = repo.take(1, None);

    assert_eq!(snap.r#ref, "refs/referee/demo/round-1");
    assert_eq!(repo.ls_tree(&snap.commit), ["a.txt", "dir/b.txt"]);
    assert_eq!(tree_of(repo.path(), &snap.r#ref).expect("tree"), snap.tree);
    assert_eq!(
        read_ref(repo.path(), "demo", 1).expect("read"),
        Some(snap.commit.clone())
    );
    assert!(!repo.path().join(".git/index").exists(), "no index created");
    assert_eq!(repo.git_dir_entries(), before, "no temporary file left");
    let author = repo.git(&["log", "-1", "--format=%an <%ae>|%cn <%ce>", &snap.commit]);
    assert_eq!(
        author.trim(),
        "referee <referee@localhost>|referee <referee@localhost>"
    );
    // HEAD still points at an unborn branch.
    let head = Command::new("git")
        .args(["rev-parse", "--verify", "--quiet", "HEAD"])
        .current_dir(repo.path())
        .envs(GIT_ENV.iter().copied())
        .status()
        .expect("git");
    assert!(!head.success());
}

#[test]
fn an_empty_working_tree_snapshots_to_the_empty_tree() {
    let repo = Repo::empty();
    let snap = repo.take(1, None);
    assert_eq!(snap.tree, crate::git::EMPTY_TREE);
}

#[test]
fn leaves_index_head_branch_stash_and_working_tree_alone() {
    let repo = Repo::new();
    repo.write("stashed.txt", "s\n");
    repo.git(&["add", "stashed.txt"]);
    repo.git(&["stash", "push", "-q", "-m", "keep me"]);
    repo.write("README.md", "hello\nstaged\n");
    repo.git(&["add", "README.md"]);
    repo.write("README.md", "hello\nstaged\nunstaged\n");
    repo.write("new.txt", "untracked\n");

    let state = |repo: &Repo| {
        (
            repo.git(&[
                "status",
                "--porcelain=v2",
                "--branch",
                "-z",
                "--untracked-files=all",
            ]),
            repo.git(&["rev-parse", "HEAD"]),
            repo.git(&["symbolic-ref", "HEAD"]),
            repo.git(&["stash", "list"]),
            std::fs::read(repo.path().join(".git/index")).expect("index"),
            std::fs::read(repo.path().join("README.md")).expect("file"),
            repo.git_dir_entries(),
        )
    };
    let before = state(&repo);
    let head = repo.git(&["rev-parse", "HEAD"]);
    let snap = repo.take(1, Some(head.trim()));
    assert_eq!(state(&repo), before);

    // The snapshot holds the working tree, not the index.
    let readme = repo.git(&["show", &format!("{}:README.md", snap.commit)]);
    assert_eq!(readme, "hello\nstaged\nunstaged\n");
    assert_eq!(repo.ls_tree(&snap.commit), ["README.md", "new.txt"]);
    assert_eq!(repo.git(&["rev-parse", &format!("{}^", snap.commit)]), head);
}

/// The temporary index starts as a second name of the user's (a hard
/// link): git replaces that name when it writes, and the user's file
/// keeps its bytes, its time, its inode and its one name.
#[test]
fn the_linked_index_leaves_the_users_file_alone() {
    use std::os::unix::fs::MetadataExt;
    let repo = Repo::new();
    repo.write("README.md", "hello\nchanged\n");
    repo.write("new.txt", "untracked\n");
    let index = repo.path().join(".git/index");
    let seen = || {
        let meta = std::fs::metadata(&index).expect("index");
        let bytes = std::fs::read(&index).expect("index");
        (
            meta.ino(),
            meta.nlink(),
            meta.modified().expect("time"),
            bytes,
        )
    };
    let before = seen();
    assert_eq!(before.1, 1);
    let head = repo.git(&["rev-parse", "HEAD"]);
    let snap = repo.take(1, Some(head.trim()));
    assert_eq!(seen(), before);
    assert_eq!(repo.ls_tree(&snap.commit), ["README.md", "new.txt"]);
    let readme = repo.git(&["show", &format!("{}:README.md", snap.commit)]);
    assert_eq!(readme, "hello\nchanged\n");
}

/// An index that is a symlink is copied, not linked (a link to a
/// symlink would be one), and neither it nor its target changes.
#[test]
fn a_symlinked_index_is_copied_and_left_alone() {
    let repo = Repo::new();
    let index = repo.path().join(".git/index");
    let real = repo.path().join(".git/real-index");
    std::fs::rename(&index, &real).expect("move");
    std::os::unix::fs::symlink("real-index", &index).expect("symlink");
    let bytes = std::fs::read(&real).expect("index");
    repo.write("README.md", "hello\nchanged\n");
    let head = repo.git(&["rev-parse", "HEAD"]);
    let snap = repo.take(1, Some(head.trim()));
    let readme = repo.git(&["show", &format!("{}:README.md", snap.commit)]);
    assert_eq!(readme, "hello\nchanged\n");
    let link = std::fs::symlink_metadata(&index).expect("link");
    assert!(link.file_type().is_symlink());
    assert_eq!(std::fs::read(&real).expect("index"), bytes);
}

/// A same-size edit whose stat data matches the index entry must still
/// be seen: git re-reads entries not older than the index file, so the
/// temporary index must keep the real index's modification time.
#[test]
fn sees_racily_clean_edits() {
    let repo = Repo::new();
    repo.git(&["config", "core.trustctime", "false"]);
    let file = repo.path().join("racy.txt");
    let stamp = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
    let set_mtime = |path: &Path| {
        std::fs::File::options()
            .write(true)
            .open(path)
            .and_then(|f| f.set_modified(stamp))
            .expect("set mtime");
    };
    repo.write("racy.txt", "aaaa\n");
    set_mtime(&file);
    repo.git(&["add", "racy.txt"]);
    set_mtime(&repo.path().join(".git/index"));
    repo.write("racy.txt", "bbbb\n");
    set_mtime(&file);

    let snap = repo.take(1, None);
    let content = repo.git(&["show", &format!("{}:racy.txt", snap.commit)]);
    assert_eq!(content, "bbbb\n");
}

#[test]
fn includes_untracked_and_leaves_out_ignored_and_referee_state() {
    let repo = Repo::new();
    // A `.referee/` file the user once committed is left out too.
    repo.write(".referee/contracts/demo.toml", "loop = \"demo\"\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "track referee state"]);
    repo.write(".gitignore", "target/\n*.log\n");
    repo.write("target/debug/app", "binary");
    repo.write("run.log", "log");
    repo.write("src/main.rs", "fn main() {}\n");
    repo.write(".referee/ledgers/demo.csv", "round\n");
    repo.write(
        "docs/.referee/kept.md",
        "only the top-level one is excluded\n",
    );

    let snap = repo.take(1, None);
    assert_eq!(
        repo.ls_tree(&snap.commit),
        [
            ".gitignore",
            "README.md",
            "docs/.referee/kept.md",
            "src/main.rs"
        ]
    );
    // The user's index still tracks the file.
    assert!(
        repo.git(&["ls-files"])
            .contains(".referee/contracts/demo.toml")
    );
}

#[test]
fn frozen_files_are_taken_from_the_base_whatever_the_work_tree_says() {
    let repo = Repo::new();
    repo.write(".claude/settings.json", "{\"model\": \"opus\"}\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "settings"]);
    let base = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let base_tree = repo.git(&["rev-parse", "HEAD^{tree}"]).trim().to_string();
    let paths = [
        ".claude/settings.json".to_string(),
        ".codex/hooks.json".to_string(),
    ];
    let frozen = Some(Frozen {
        from: &base,
        paths: &paths,
    });
    // A hook installed in both (one tracked at the base, one not), and
    // the tracked one staged too: neither reaches the tree.
    repo.write(
        ".claude/settings.json",
        "{\"model\": \"opus\", \"hooks\": {}}\n",
    );
    repo.git(&["add", ".claude/settings.json"]);
    repo.write(".codex/hooks.json", "{\"hooks\": {}}\n");
    let tree = worktree_tree(repo.path(), &scope(EXCLUDE, frozen)).unwrap();
    assert_eq!(tree, base_tree);
    // Other changes still show.
    repo.write("README.md", "changed\n");
    let tree = worktree_tree(repo.path(), &scope(EXCLUDE, frozen)).unwrap();
    assert_ne!(tree, base_tree);
    assert_eq!(
        changed_paths(repo.path(), &base_tree, &tree).unwrap(),
        ["README.md"]
    );
    // A commit holding the hook reads as the base has it too.
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "hook"]);
    assert_eq!(
        tree_of_frozen(repo.path(), "HEAD", EXCLUDE, frozen).unwrap(),
        tree
    );
    // From the empty tree, a frozen file is absent.
    let empty = Some(Frozen {
        from: crate::git::EMPTY_TREE,
        paths: &paths,
    });
    let tree = worktree_tree(repo.path(), &scope(EXCLUDE, empty)).unwrap();
    let out = repo.git(&["ls-tree", "-r", "--name-only", &tree]);
    assert_eq!(out, "README.md\n");
}

/// A file that became a folder, and a folder that became a file, each
/// take the other's place in the snapshot.
#[test]
fn a_file_and_a_folder_may_swap_places() {
    let repo = Repo::new();
    repo.write("d", "file\n");
    repo.write("e/x", "inside\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "d and e/x"]);
    let first = repo.take(1, None);
    std::fs::remove_file(repo.path().join("d")).expect("rm");
    repo.write("d/x", "now a folder\n");
    std::fs::remove_dir_all(repo.path().join("e")).expect("rm");
    repo.write("e", "now a file\n");
    let second = repo.take(2, Some(&first.commit));
    assert_eq!(repo.ls_tree(&second.commit), ["README.md", "d/x", "e"]);
    let patch = diff(repo.path(), None, &first.commit, &second.commit).expect("diff");
    assert_eq!(patch.files, ["d", "d/x", "e", "e/x"]);
}

/// The status settings a writer could put in `.git/config` change nothing
/// a snapshot takes: a new file, an edit, a deletion, a file in a new
/// folder are all in its tree.
#[test]
fn status_settings_in_the_repository_hide_nothing() {
    let repo = Repo::new();
    repo.write("gone.txt", "bye\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "gone"]);
    for (key, value) in [
        ("status.showUntrackedFiles", "no"),
        ("status.renames", "copies"),
        ("status.showStash", "true"),
        ("status.branch", "true"),
        ("diff.ignoreSubmodules", "all"),
        ("status.relativePaths", "true"),
        ("core.quotePath", "true"),
    ] {
        repo.git(&["config", key, value]);
    }
    repo.write("README.md", "edited\n");
    std::fs::remove_file(repo.path().join("gone.txt")).expect("rm");
    repo.write("new dir/ünï.txt", "new\n");
    let tree = worktree(repo.path(), EXCLUDE).expect("tree");
    assert_eq!(repo.ls_tree(&tree), ["README.md", "new dir/ünï.txt"]);
    assert_eq!(
        repo.git(&["cat-file", "-p", &format!("{tree}:README.md")]),
        "edited\n"
    );
}

#[test]
fn works_from_a_subdirectory() {
    let repo = Repo::new();
    repo.write("sub/x.txt", "x\n");
    repo.write(".referee/state", "s\n");
    let snap = take(&repo.path().join("sub"), "demo", 1, None, EXCLUDE, "m").expect("snapshot");
    assert_eq!(repo.ls_tree(&snap.commit), ["README.md", "sub/x.txt"]);
}

#[test]
fn renames_binary_files_and_odd_names() {
    let repo = Repo::new();
    let body: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    repo.write("old name.txt", &body);
    let first = repo.take(1, None);

    std::fs::rename(
        repo.path().join("old name.txt"),
        repo.path().join("new name.txt"),
    )
    .expect("rename");
    repo.write("img.bin", [0u8, 1, 2, 255, 0, 10, 13]);
    repo.write("café/ünïcode.md", "bonjour\n");
    repo.write("tab\tand \"quote\".txt", "odd\n");
    let second = repo.take(2, Some(&first.commit));

    let patch = diff(repo.path(), None, &first.commit, &second.commit).expect("diff");
    assert_eq!(
        patch.files,
        [
            "café/ünïcode.md",
            "img.bin",
            "old name.txt",
            "new name.txt",
            "tab\tand \"quote\".txt"
        ]
    );
    // The rename is pure: only the new files' lines count; binary is 0/0.
    assert_eq!((patch.added, patch.removed), (2, 0));

    let parsed = crate::patch::parse(&patch.text);
    let names: Vec<(Option<&str>, Option<&str>, bool)> = parsed
        .files
        .iter()
        .map(|f| (f.old_path.as_deref(), f.new_path.as_deref(), f.binary))
        .collect();
    assert_eq!(
        names,
        [
            (None, Some("café/ünïcode.md"), false),
            (None, Some("img.bin"), true),
            (Some("old name.txt"), Some("new name.txt"), false),
            (None, Some("tab\tand \"quote\".txt"), false),
        ]
    );
    let text = String::from_utf8_lossy(&patch.text);
    // A binary file is named under its blob id, not spelled out.
    let blob = repo.git(&[
        "rev-parse",
        "--short",
        &format!("{}:img.bin", second.commit),
    ]);
    assert!(
        text.contains(&format!(
            "index 0000000..{}\nBinary files /dev/null and b/img.bin differ\n",
            blob.trim()
        )),
        "{text}"
    );
    assert!(!text.contains("GIT binary patch"), "{text}");
    assert!(
        text.contains("diff --git a/café/ünïcode.md b/café/ünïcode.md"),
        "{text}"
    );

    assert_eq!(
        changed_paths(repo.path(), &first.tree, &second.tree).expect("paths"),
        [
            "café/ünïcode.md",
            "img.bin",
            "new name.txt",
            "old name.txt",
            "tab\tand \"quote\".txt"
        ]
    );
}

/// The one listing of a round's patch splits into what the numstat and
/// the patch each say alone (no patch line read as a file), over renames,
/// mode changes, deletions, binary files, symlinks and odd names.
#[test]
fn the_listing_is_what_numstat_and_the_patch_say_alone() {
    use std::os::unix::fs::PermissionsExt;
    let repo = Repo::new();
    let body: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    repo.write("moved.txt", &body);
    repo.write("Makefile", "all:\n\techo hi\n");
    repo.write("run.sh", "echo\n");
    repo.write("gone.txt", "bye\n");
    repo.write("img.bin", [0u8, 1, 2]);
    std::os::unix::fs::symlink("moved.txt", repo.path().join("link")).expect("link");
    let first = repo.take(1, None);

    std::fs::rename(repo.path().join("moved.txt"), repo.path().join("to.txt")).expect("mv");
    repo.write("to.txt", format!("{body}line 21\n"));
    repo.write("Makefile", "all:\n\techo hi\n\techo a\tb\tc\n");
    std::fs::set_permissions(
        repo.path().join("run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .expect("chmod");
    std::fs::remove_file(repo.path().join("gone.txt")).expect("rm");
    repo.write("img.bin", [0u8, 1, 2, 3, 255]);
    std::fs::remove_file(repo.path().join("link")).expect("rm link");
    std::os::unix::fs::symlink("Makefile", repo.path().join("link")).expect("link");
    repo.write("new\nline \"q\".txt", "x\ty\tz\n");

    for from in [first.commit.as_str(), crate::git::EMPTY_TREE] {
        let (tree, patch) = with_patch(repo.path(), &scope(EXCLUDE, None), from).expect("snapshot");

        // Each part as git prints it alone (`-U3` implies `-p`: the
        // numstat-only call leaves the pinned flags out).
        let q = ["-c", "core.quotePath=false", "diff-tree", "-r", "-M"];
        let mut alone: Vec<&str> = q.to_vec();
        alone.extend(["--numstat", "-z", from, &tree]);
        let numstat = repo.git_bytes(&alone);
        let (added, removed, files) = parse_numstat(&numstat);
        assert_eq!(
            (patch.added, patch.removed, &patch.files),
            (added, removed, &files)
        );
        let mut alone: Vec<&str> = vec!["-c", "core.quotePath=false", "diff-tree"];
        alone.extend_from_slice(DIFF_FLAGS);
        alone.extend(["-p", from, &tree]);
        assert_eq!(
            String::from_utf8_lossy(&patch.text),
            String::from_utf8_lossy(&repo.git_bytes(&alone))
        );
    }
    let (_, patch) =
        with_patch(repo.path(), &scope(EXCLUDE, None), &first.commit).expect("snapshot");
    assert_eq!(
        patch.files,
        [
            "Makefile",
            "gone.txt",
            "img.bin",
            "link",
            "new\nline \"q\".txt",
            "run.sh",
            "moved.txt",
            "to.txt"
        ]
    );
    assert_eq!((patch.added, patch.removed), (4, 2));
}

#[test]
fn a_listing_splits_at_the_patch() {
    let z = "0".repeat(40);
    let mut listing =
        format!(":100644 100644 {z} {z} M\0a\0:000000 100644 {z} {z} A\0b\0\0").into_bytes();
    listing
        .extend_from_slice(b"diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1,2 @@\n x\n+x\ty\tz\n");
    let patch = parse_listing(listing).expect("listing");
    assert_eq!(
        (patch.added, patch.removed, patch.files),
        (1, 0, vec!["a".into(), "b".into()])
    );
    assert!(patch.text.starts_with(b"diff --git a/a b/a\n"));
    assert_eq!(parse_listing(Vec::new()).expect("empty"), Patch::default());
    let rename = format!(":100644 100644 {z} {z} R100\0old\0new\0").into_bytes();
    let rename = parse_listing(rename).expect("records only");
    assert_eq!(
        (rename.files, rename.text),
        (vec!["old".into(), "new".into()], vec![])
    );
    let bad = format!(":100644 100644 {z} {z} M\0a\0\0not a patch").into_bytes();
    let err = parse_listing(bad).expect_err("no patch");
    assert!(err.to_string().contains("not a patch"), "{err}");
}

/// The counts read from the patch are git's own `--numstat` counts,
/// whatever the lines hold, and under the config that prints blank
/// context lines empty.
#[test]
fn changes_counted_in_the_patch_are_the_numstat_counts() {
    let repo = Repo::new();
    repo.git(&["config", "diff.suppressBlankEmpty", "true"]);
    repo.write("q.sql", "-- note\nselect 1;\n\n++i;\nend\n");
    repo.write("tail.txt", "a\nb");
    repo.write("blank.txt", "1\n\n2\n\n3\n4\n5\n6\n7\n8\n");
    repo.write("img.bin", [0u8, 1, 2]);
    let first = repo.take(1, None);
    repo.write("q.sql", "--- note\nselect 1;\n\n+++i;\nend");
    repo.write("tail.txt", "a\nb\nc\n");
    repo.write("blank.txt", "1\n\n2\n\nthree\n4\n5\n6\n7\n\n8\n");
    repo.write("img.bin", [0u8, 1, 2, 3]);
    repo.write("new.txt", "--\n++\n");
    for from in [first.commit.as_str(), crate::git::EMPTY_TREE] {
        let (tree, patch) = with_patch(repo.path(), &scope(EXCLUDE, None), from).expect("snapshot");
        let q = ["-c", "core.quotePath=false", "diff-tree", "-r", "-M"];
        let mut alone: Vec<&str> = q.to_vec();
        alone.extend(["--numstat", "-z", from, &tree]);
        let (added, removed, files) = parse_numstat(&repo.git_bytes(&alone));
        assert_eq!(
            (patch.added, patch.removed, &patch.files),
            (added, removed, &files)
        );
        assert!(added > 0 && removed + u64::from(from == crate::git::EMPTY_TREE) > 0);
    }
}

#[test]
fn a_renamed_and_edited_file_counts_its_edits() {
    let repo = Repo::new();
    let body: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    repo.write("a.txt", &body);
    let first = repo.take(1, None);
    std::fs::remove_file(repo.path().join("a.txt")).expect("rm");
    repo.write("b.txt", body.replace("line 5\n", "line five\n"));
    let second = repo.take(2, Some(&first.commit));
    let patch = diff(repo.path(), None, &first.tree, &second.tree).expect("diff");
    assert_eq!(patch.files, ["a.txt", "b.txt"]);
    assert_eq!((patch.added, patch.removed), (1, 1));
}

#[test]
fn diff_between_snapshots_counts_lines() {
    let repo = Repo::new();
    repo.write("f.txt", "a\nb\nc\n");
    let first = repo.take(1, None);
    repo.write("f.txt", "a\nB\nc\nd\n");
    repo.write("README.md", "");
    let second = repo.take(2, Some(&first.commit));

    let patch = diff(repo.path(), None, &first.commit, &second.commit).expect("diff");
    assert_eq!((patch.added, patch.removed), (2, 2));
    assert_eq!(patch.files, ["README.md", "f.txt"]);
    let text = String::from_utf8(patch.text.clone()).expect("utf-8");
    assert!(
        text.starts_with("diff --git a/README.md b/README.md\n"),
        "{text}"
    );
    assert!(text.contains("-b\n+B\n c\n+d\n"), "{text}");

    // From the empty tree (a loop whose base has no commits).
    let all = diff(repo.path(), None, crate::git::EMPTY_TREE, &first.tree).expect("diff");
    assert_eq!((all.added, all.removed), (4, 0));
    assert_eq!(all.files, ["README.md", "f.txt"]);

    let none = diff(repo.path(), None, &second.commit, &second.tree).expect("diff");
    assert_eq!(none, Patch::default());
}

#[test]
fn user_diff_config_does_not_change_the_patch() {
    let repo = Repo::new();
    repo.write("f.txt", "a\nb\nc\n");
    repo.write("ü.txt", "x\n");
    let first = repo.take(1, None);
    repo.write("f.txt", "a\nB\nc\n");
    repo.write("ü.txt", "y\n");
    repo.write("pic.dat", [0u8, 159, 146, 150]);
    let second = repo.take(2, Some(&first.commit));
    let plain = diff(repo.path(), None, &first.commit, &second.commit).expect("diff");

    for (key, value) in [
        ("diff.noprefix", "true"),
        ("diff.mnemonicPrefix", "true"),
        ("color.ui", "always"),
        ("color.diff", "always"),
        ("diff.external", "false"),
        ("diff.context", "0"),
        ("diff.algorithm", "histogram"),
        ("diff.renames", "false"),
        ("diff.relative", "true"),
        ("core.quotePath", "true"),
        ("diff.dat.textconv", "false"),
        ("diff.dat.command", "false"),
    ] {
        repo.git(&["config", key, value]);
    }
    repo.write(".git/info/attributes", "*.dat diff=dat\n*.txt diff=dat\n");
    let configured = diff(repo.path(), None, &first.commit, &second.commit).expect("diff");
    assert_eq!(
        String::from_utf8_lossy(&configured.text),
        String::from_utf8_lossy(&plain.text)
    );
    assert_eq!(configured, plain);
    assert!(plain.text.starts_with(b"diff --git a/f.txt b/f.txt\n"));
}

#[test]
fn an_unchanged_tree_snapshots_to_the_same_tree() {
    let repo = Repo::new();
    repo.write("untracked.txt", "u\n");
    let first = repo.take(1, None);
    let second = repo.take(2, Some(&first.commit));
    assert_eq!(first.tree, second.tree);
    assert_eq!(worktree(repo.path(), EXCLUDE).expect("tree"), first.tree);
    assert!(
        changed_paths(repo.path(), &first.tree, &second.tree)
            .expect("paths")
            .is_empty()
    );
    assert_eq!(
        repo.git(&["rev-parse", &format!("{}^", second.commit)])
            .trim(),
        first.commit
    );

    // Changing only excluded state changes nothing either.
    repo.write(".referee/ledgers/demo.csv", "round\n1\n");
    assert_eq!(worktree(repo.path(), EXCLUDE).expect("tree"), first.tree);

    repo.write("untracked.txt", "changed\n");
    let changed = worktree(repo.path(), EXCLUDE).expect("tree");
    assert_ne!(changed, first.tree);
    assert_eq!(
        changed_paths(repo.path(), &first.tree, &changed).expect("paths"),
        ["untracked.txt"]
    );
}

#[test]
fn retaking_a_round_replaces_its_ref() {
    let repo = Repo::new();
    let first = repo.take(1, None);
    repo.write("x", "x\n");
    let again = repo.take(1, None);
    assert_ne!(first.tree, again.tree);
    assert_eq!(
        read_ref(repo.path(), "demo", 1).expect("read"),
        Some(again.commit)
    );
    assert_eq!(read_ref(repo.path(), "demo", 2).expect("read"), None);
    assert_eq!(read_ref(repo.path(), "other", 1).expect("read"), None);
}

#[test]
fn errors_name_what_failed() {
    let repo = Repo::new();
    for bad in [
        "", ".hidden", "-flag", "a..b", "x.lock", "a/b", "a b", "a~1", "end.",
    ] {
        let err = take(repo.path(), bad, 1, None, EXCLUDE, "m").expect_err(bad);
        assert!(matches!(err, SnapshotError::LoopName(_)), "{bad}: {err}");
    }
    assert!(repo.git(&["for-each-ref", "refs/referee"]).is_empty());

    let err = tree_of(repo.path(), "no-such-rev").expect_err("no rev");
    assert!(
        err.to_string()
            .starts_with("`no-such-rev` names no commit or tree"),
        "{err}"
    );

    let err =
        take(repo.path(), "demo", 1, Some("no-such-parent"), EXCLUDE, "m").expect_err("bad parent");
    assert!(err.to_string().contains("`git commit-tree"), "{err}");

    let err = diff(repo.path(), None, "HEAD", "no-such-rev").expect_err("bad rev");
    assert!(
        err.to_string()
            .contains("`git -c core.quotePath=false diff-tree"),
        "{err}"
    );

    let not_repo = tempfile::tempdir().expect("tempdir");
    let err = read_ref(not_repo.path(), "demo", 1).expect_err("not a repo");
    assert!(err.to_string().contains("`git rev-parse"), "{err}");
    let err = worktree(not_repo.path(), EXCLUDE).expect_err("not a repo");
    assert!(
        err.to_string().contains("`git rev-parse --show-toplevel"),
        "{err}"
    );
}

#[test]
fn numstat_table() {
    type Want<'a> = (u64, u64, &'a [&'a str]);
    let cases: &[(&[u8], Want)] = &[
        (b"", (0, 0, &[])),
        (b"1\t2\ta.txt\0", (1, 2, &["a.txt"])),
        (b"-\t-\timg.png\0", (0, 0, &["img.png"])),
        (b"3\t1\t\0old\0new\0", (3, 1, &["old", "new"])),
        (
            b"1\t0\ta\0-\t-\tb\x00\x002\t2\t\0c\0d\0",
            (3, 2, &["a", "b", "c", "d"]),
        ),
        (b"garbage", (0, 0, &[])),
        (b"x\ty\tz\0", (0, 0, &["z"])),
        (b"1\t1\t\0only-old", (1, 1, &["only-old"])),
    ];
    for (input, (added, removed, files)) in cases {
        let got = parse_numstat(input);
        assert_eq!(
            got,
            (
                *added,
                *removed,
                files.iter().map(|s| s.to_string()).collect()
            ),
            "{input:?}"
        );
    }
}
