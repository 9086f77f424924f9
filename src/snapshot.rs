//! Round snapshots: the working tree as a git commit stored under
//! `refs/referee/<loop>/round-<n>`, built in a temporary index so the user's
//! index, HEAD, branch, stash and working tree are never touched; and the
//! patch between two snapshots. Does I/O: runs git (see docs/snapshots.md).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::git::{Git, GitError};

mod pin;

pub use pin::{Own, Pin};

/// A round's snapshot: a commit (whose tree is the working tree) and its ref.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub commit: String,
    pub tree: String,
    pub r#ref: String,
}

/// The patch between two snapshots.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Patch {
    /// `git diff-tree -p -M` output (or `diff-index --cached`'s,
    /// the same bytes) with `a/`/`b/` prefixes, no color, no external
    /// diff, no textconv, paths unescaped (byte-faithful).
    pub text: Vec<u8>,
    /// Lines added: the `+` lines of the patch's hunks, as `--numstat`
    /// counts them (a binary file has no hunk and counts 0).
    pub added: u64,
    /// Lines removed: the `-` lines of the patch's hunks.
    pub removed: u64,
    /// Every path touched, both sides of a rename, in git's order.
    pub files: Vec<String>,
}

/// Why a snapshot or a patch could not be made.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(
        "loop name `{0}` cannot be part of the git ref `refs/referee/<loop>/round-<n>`\n\
         hint: use letters, digits, `.`, `_` and `-`, not starting with `.` or `-`"
    )]
    LoopName(String),
    #[error("cannot copy the index `{from}` to `{to}`: {source}")]
    CopyIndex {
        from: PathBuf,
        to: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot make the path `{path}` absolute: {source}")]
    Path {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("`git {command}` printed `{output}`, not {expected}")]
    Unexpected {
        command: &'static str,
        output: String,
        expected: &'static str,
    },
    #[error("`{rev}` names no commit or tree in `{repo}`")]
    NoTree { rev: String, repo: PathBuf },
    #[error(
        "`{path}/` is a git repository inside the work tree with no commit (a `git init` in that folder?): git cannot take it into a snapshot, so nothing was recorded\n\
         hint: remove `{path}/.git`, commit in it, or list `{path}/` in `.gitignore`; then record again"
    )]
    EmbeddedWithoutCommit { path: String },
    #[error(
        "`{file}` changed since the loop started: git reads it whatever referee tells it, and what it ignores or marks binary would be hidden from the snapshot or its patch (sha256 `{then}` then, `{now}` now); nothing was recorded\n\
         hint: put it back as it was; to ignore or mark a file during a loop, use a `.gitignore` or `.gitattributes` the patch shows"
    )]
    InfoChanged {
        file: &'static str,
        then: String,
        now: String,
    },
    #[error(
        "{files}: over the {} MiB a snapshot reads of one file, so nothing was recorded (git would read it whole to store it)\n\
         hint: remove `{first}` or move it out of the work tree (or list it in `.gitignore` before the loop starts); then record again",
        MAX_FILE >> 20
    )]
    TooLarge { files: String, first: String },
    #[error(
        "`{path}/` is a git repository inside the work tree that `.gitmodules` does not name: a snapshot would hold its commit id alone, so an edit inside it would be no change to review; nothing was recorded\n\
         hint: remove `{path}/.git` to have its files reviewed as the repository's own, or make it a submodule (`git submodule add`); then record again"
    )]
    Nested { path: String },
    #[error("the loop's snapshot pin `{}`: {what}", crate::statefs::shown(path))]
    Pin { path: PathBuf, what: String },
}

/// The identity of snapshot commits: fixed, so snapshots work on machines
/// without a configured git identity and never claim to be the user's.
const IDENTITY: [(&str, &str); 4] = [
    ("GIT_AUTHOR_NAME", "referee"),
    ("GIT_AUTHOR_EMAIL", "referee@localhost"),
    ("GIT_COMMITTER_NAME", "referee"),
    ("GIT_COMMITTER_EMAIL", "referee@localhost"),
];

/// Flags that pin the diff format whatever the user's config says
/// (`diff.noprefix`, `diff.mnemonicPrefix`, `color.ui`, `diff.external`,
/// `diff.context`, textconv drivers, …). `diff-tree` is plumbing and reads
/// little config to begin with; these make the rest explicit.
const DIFF_FLAGS: &[&str] = &[
    "-r",
    "-M",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "-U3",
    "--inter-hunk-context=0",
    "--diff-algorithm=myers",
    "--indent-heuristic",
];

/// The refs folder of loop `loop_name` in the work tree `repo`: its round
/// snapshots and kept contract. `refs/referee/<loop>/` in the main
/// worktree; in a linked worktree (`git worktree add`)
/// `refs/referee/<loop>/worktree/<id>/`, `<id>` being git's name for it.
/// All worktrees of a repository share its refs, and each has its own
/// `.referee/`: two loops of one name in two worktrees (the default name
/// in both) would otherwise move each other's round refs, and the first
/// one's `ledger verify` would fail on a ref it did not write.
pub fn loop_refs(repo: &Path, loop_name: &str) -> Result<String, SnapshotError> {
    if !ref_component(loop_name) {
        return Err(SnapshotError::LoopName(loop_name.to_string()));
    }
    match Git::at(repo).worktree_id()? {
        None => Ok(format!("refs/referee/{loop_name}/")),
        Some(id) => Ok(format!(
            "refs/referee/{loop_name}/worktree/{}/",
            worktree_component(&id.to_string_lossy())
        )),
    }
}

/// A linked worktree's id as one ref component. Git keeps ids valid in a
/// ref since 2.28 (save a leading dot, which `git worktree add` keeps from
/// a folder named so); any other is made valid, with a digest of the id
/// after it so that two ids never share a component.
fn worktree_component(id: &str) -> String {
    if ref_component(id) {
        return id.to_string();
    }
    let safe: String = id
        .chars()
        .map(|c| match c.is_ascii_alphanumeric() || "._-".contains(c) {
            true => c,
            false => '-',
        })
        .collect::<String>()
        .replace("..", "--");
    let safe = match safe.trim_start_matches(['.', '-']) {
        "" => "wt",
        trimmed => trimmed,
    };
    let digest = crate::digest::sha256_hex(id.as_bytes());
    format!("{safe}-{}", &digest[..8])
}

/// Whether `name` may be one component of a ref referee writes.
fn ref_component(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        && !name.starts_with(['.', '-'])
        && !name.ends_with('.')
        && !name.ends_with(".lock")
        && !name.contains("..")
}

/// The ref of `loop_name`'s snapshot of `round` in the work tree `repo`:
/// `refs/referee/<loop>/round-<n>` (see [`loop_refs`]).
pub fn round_ref(repo: &Path, loop_name: &str, round: u32) -> Result<String, SnapshotError> {
    Ok(format!("{}round-{round}", loop_refs(repo, loop_name)?))
}

/// Stores `tree` (from [`worktree_tree_frozen`]) as round `round`'s snapshot: a
/// commit with parent `parent`, to be published at
/// `refs/referee/<loop>/round-<round>` by [`publish`] under the loop's lock.
pub fn commit(
    repo: &Path,
    loop_name: &str,
    round: u32,
    parent: Option<&str>,
    tree: &str,
    message: &str,
) -> Result<Snapshot, SnapshotError> {
    let r#ref = round_ref(repo, loop_name, round)?;
    let tree = tree.to_string();
    let mut args: Vec<&str> = vec!["commit-tree", "--no-gpg-sign", "-m", message];
    if let Some(parent) = parent {
        args.extend(["-p", parent]);
    }
    args.push(&tree);
    let env: Vec<(&str, &OsStr)> = IDENTITY.iter().map(|(k, v)| (*k, OsStr::new(v))).collect();
    let out = Git::at(repo).env(&env).run(&args)?;
    let commit = object_id(&out.stdout, "commit-tree")?;

    Ok(Snapshot {
        commit,
        tree,
        r#ref,
    })
}

/// Points the round's ref at its snapshot and, at round 1, the loop's
/// contract ref at the contract [`Storing`] stored: one `git
/// update-ref --stdin` transaction, so both move or neither. The caller
/// holds the loop's ledger lock, so no other referee moves these refs
/// meanwhile. The round's ref is expected not to exist (`create`); a ref
/// left by a retaken round is read and moved from the value read (`update
/// <ref> <new> <old>`), so a writer outside referee is refused, never
/// overwritten.
pub fn publish(
    repo: &Path,
    snap: &Snapshot,
    message: &str,
    contract: Option<&Kept>,
    started: Option<Publishing>,
) -> Result<(), SnapshotError> {
    let transaction = |old: Option<&str>| {
        let mut lines = String::new();
        if let Some(kept) = contract {
            lines.push_str(&format!("update {} {}\n", kept.reference, kept.blob));
        }
        match old {
            None => lines.push_str(&format!("create {} {}\n", snap.r#ref, snap.commit)),
            Some(old) => lines.push_str(&format!("update {} {} {old}\n", snap.r#ref, snap.commit)),
        }
        lines
    };
    let mut refs = vec![snap.r#ref.as_str()];
    refs.extend(contract.map(|k| k.reference.as_str()));
    let Err(err) = update_refs(repo, message, &refs, transaction(None), started) else {
        return Ok(());
    };
    match verify(repo, &format!("{}^{{commit}}", snap.r#ref))? {
        Some(old) => update_refs(repo, message, &refs, transaction(Some(&old)), None),
        None => Err(err),
    }
}

/// `git update-ref --stdin` started ahead of [`publish`] with the same
/// message, so the round's last git command is already loaded when its
/// transaction is ready. Dropped unused, it reads nothing and moves no ref.
#[derive(Debug)]
pub struct Publishing(crate::git::Started);

impl Publishing {
    pub fn start(repo: &Path, message: &str) -> Result<Publishing, SnapshotError> {
        let started = Git::at(repo).start(&["update-ref", "-m", message, "--stdin"])?;
        Ok(Publishing(started))
    }
}

/// Runs the `git update-ref --stdin` transaction `lines` on `refs` while
/// the caller holds the loop's lock. A `git update-ref` killed with its
/// referee (a closed terminal, a cancelled job) leaves `<ref>.lock` behind;
/// under the loop's lock no other referee is updating these refs, so such a
/// lock file is stale: it is removed once and the transaction tried again.
fn update_refs(
    repo: &Path,
    message: &str,
    refs: &[&str],
    lines: String,
    started: Option<Publishing>,
) -> Result<(), SnapshotError> {
    let git = Git::at(repo);
    let args = ["update-ref", "-m", message, "--stdin"];
    let first = match started {
        Some(Publishing(started)) => started.finish(lines.clone().into_bytes()),
        None => git.run_with_input(&args, lines.clone().into_bytes()),
    };
    let Err(err) = first else {
        return Ok(());
    };
    let mut ask: Vec<String> = vec!["rev-parse".into()];
    for reference in refs {
        ask.extend(["--git-path".into(), format!("{reference}.lock")]);
    }
    let stale: Vec<PathBuf> = git
        .run(&ask)
        .map(|out| {
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(|p| repo.join(p))
                .filter(|lock| lock.is_file())
                .collect()
        })
        .unwrap_or_default();
    if stale.is_empty() {
        return Err(err.into());
    }
    for lock in &stale {
        let _ = std::fs::remove_file(lock);
    }
    git.run_with_input(&args, lines.into_bytes())?;
    Ok(())
}

/// The ref that keeps a loop's pinned contract bytes (see [`loop_refs`]).
pub fn contract_ref(repo: &Path, loop_name: &str) -> Result<String, SnapshotError> {
    Ok(format!("{}contract", loop_refs(repo, loop_name)?))
}

/// A contract stored by [`Storing`], for [`publish`] to pin.
#[derive(Debug, Clone)]
pub struct Kept {
    pub reference: String,
    pub blob: String,
}

/// Stores `bytes` (the contract round 1 pins) as a git blob, to be kept
/// under [`contract_ref`] by [`publish`]: `referee contract restore` reads
/// it back. A blob in the repository's own object store, not evidence: a
/// contract may hold environment values that evidence would have to redact.
///
/// In two steps: `git hash-object -w --stdin` is started ahead
/// ([`Storing::start`]) so it has loaded by the time the bytes are given
/// ([`Storing::finish`]). Dropped unfinished, it stores the empty blob,
/// which nothing names.
#[derive(Debug)]
pub struct Storing {
    started: crate::git::Started,
    reference: String,
}

impl Storing {
    pub fn start(repo: &Path, loop_name: &str) -> Result<Storing, SnapshotError> {
        let reference = contract_ref(repo, loop_name)?;
        let started = Git::at(repo).start(&["hash-object", "-w", "--stdin"])?;
        Ok(Storing { started, reference })
    }

    pub fn finish(self, bytes: Vec<u8>) -> Result<Kept, SnapshotError> {
        let out = self.started.finish(bytes)?;
        let blob = object_id(&out.stdout, "hash-object")?;
        Ok(Kept {
            reference: self.reference,
            blob,
        })
    }
}

/// The contract bytes [`publish`] kept, if any.
pub fn kept_contract(repo: &Path, loop_name: &str) -> Result<Option<Vec<u8>>, SnapshotError> {
    let reference = contract_ref(repo, loop_name)?;
    let Some(blob) = verify(repo, &format!("{reference}^{{blob}}"))? else {
        return Ok(None);
    };
    Ok(Some(Git::at(repo).run(["cat-file", "blob", &blob])?.stdout))
}

/// Of `commits`, those that are not commit objects in the repository: one
/// `git cat-file --batch-check` for all of them.
pub fn missing_commits(
    repo: &Path,
    commits: &[&str],
) -> Result<std::collections::HashSet<String>, SnapshotError> {
    let mut input = Vec::with_capacity(commits.len() * 41);
    for commit in commits {
        input.extend_from_slice(commit.as_bytes());
        input.push(b'\n');
    }
    let out = Git::at(repo).run_with_input(
        &["cat-file", "--batch-check=%(objectname) %(objecttype)"],
        input,
    )?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(commits
        .iter()
        .zip(text.lines())
        .filter(|(_, line)| !line.ends_with(" commit"))
        .map(|(commit, _)| commit.to_string())
        .collect())
}

/// Every round ref of `loop_name`: round number to commit id.
pub fn round_refs(
    repo: &Path,
    loop_name: &str,
) -> Result<std::collections::HashMap<u32, String>, SnapshotError> {
    let prefix = loop_refs(repo, loop_name)?;
    let out = Git::at(repo).run(["for-each-ref", "--format=%(refname) %(objectname)", &prefix])?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let (name, id) = line.split_once(' ')?;
            let round = name
                .strip_prefix(&prefix)?
                .strip_prefix("round-")?
                .parse()
                .ok()?;
            Some((round, id.to_string()))
        })
        .collect())
}

/// Files a snapshot takes from a fixed commit instead of the work tree (the
/// agent settings that `referee hook install` edited): a change to them is
/// never part of a round's patch.
#[derive(Debug, Clone, Copy)]
pub struct Frozen<'a> {
    /// The commit (or tree) whose version of each file is taken; a file it
    /// does not have is left out.
    pub from: &'a str,
    /// Repo-relative file paths.
    pub paths: &'a [String],
}

/// What a loop's snapshots take of the work tree, and where they keep
/// their own state.
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    /// Repo-relative folders left out (the state folder).
    pub exclude: &'a [&'a str],
    /// Files taken from a fixed commit instead of the work tree.
    pub frozen: Option<Frozen<'a>>,
    /// The loop's base: a snapshot with no index cache yet starts from its
    /// tree, so that what it tracks stays tracked though ignored.
    pub base: &'a str,
    /// The loop's pin and index cache, in its anchor (none: the index
    /// starts from `base` every time, and nothing is pinned).
    pub own: Option<&'a Own>,
}

/// The largest file a snapshot reads: a file over it refuses the round,
/// by name, rather than have git hash it whole (a sparse 2 GB file took
/// 16 to 20 seconds). GitHub refuses files over 100 MB as well.
const MAX_FILE: u64 = 100 << 20;

/// The tree id the working tree would snapshot to, without writing a ref or
/// a commit (it does write the blobs and trees, as `git add` would).
pub fn worktree_tree_frozen(repo: &Path, scope: &Scope<'_>) -> Result<String, SnapshotError> {
    worktree_tree_at(repo, scope, None, 0, write_tree)
}

/// `git write-tree` of the index `git` names.
fn write_tree(git: Git<'_>) -> Result<String, SnapshotError> {
    let out = git.run(["write-tree"])?;
    object_id(&out.stdout, "write-tree")
}

/// The tree the working tree snapshots to (as [`worktree_tree_frozen`]) and
/// the patch from `from` (a commit or tree) to it. The patch is read from
/// the snapshot's own temporary index (`git diff-index --cached`) while `git
/// write-tree` stores the tree: the same patch [`diff`] gives between
/// `from` and the tree, without waiting for it.
pub fn worktree_with_patch(
    repo: &Path,
    scope: &Scope<'_>,
    from: &str,
) -> Result<(String, Patch), SnapshotError> {
    let (tree, (), patch) = fill(repo, scope)?.tree_and_patch_then(from, |_| Ok(()))?;
    Ok((tree, patch))
}

/// [`fill_at`], then `finish` handed the git that reads the index filled.
fn worktree_tree_at<R>(
    repo: &Path,
    scope: &Scope<'_>,
    sub: Option<&str>,
    depth: u32,
    finish: impl FnOnce(Git<'_>) -> Result<R, SnapshotError>,
) -> Result<R, SnapshotError> {
    fill_at(repo, scope, sub, depth)?.with_git(finish)
}

/// A temporary index filled with the working tree, as a snapshot takes it
/// ([`fill`]); removed when dropped, after it became the loop's index
/// cache (when it has one). What a snapshot does next (its tree, its
/// patch) reads it.
#[derive(Debug)]
pub struct Filled {
    repo: PathBuf,
    index: tempfile::TempPath,
    /// The loop's index cache this index replaces once filled.
    cache: Option<PathBuf>,
}

impl Filled {
    /// `f` handed the git that reads this index.
    fn with_git<R>(&self, f: impl FnOnce(Git<'_>) -> R) -> R {
        let env = [("GIT_INDEX_FILE", self.index.as_os_str())];
        f(Git::at(&self.repo).env(&env).own_index())
    }

    /// The tree of this index (stored), and the patch from `from` (a
    /// commit or tree) to it, as [`worktree_with_patch`] gives them; `then`
    /// is called with the tree's id as soon as `git write-tree` has stored
    /// it, while the patch is still being listed (a round writes its
    /// snapshot commit there).
    pub fn tree_and_patch_then<T: Send>(
        &self,
        from: &str,
        then: impl FnOnce(&str) -> Result<T, SnapshotError> + Send,
    ) -> Result<(String, T, Patch), SnapshotError> {
        self.with_git(|git| tree_and_patch(git, from, then))
    }
}

impl Drop for Filled {
    /// The filled index becomes the loop's index cache: a second name for
    /// it (or a copy), renamed over the cache's. Best effort: without it,
    /// the next snapshot reads every file again.
    fn drop(&mut self) {
        let Some(cache) = &self.cache else {
            return;
        };
        let Some(dir) = cache.parent() else {
            return;
        };
        let next = dir.join(format!("{}next", temp_index_name()));
        let made = std::fs::hard_link(&self.index, &next)
            .or_else(|_| std::fs::copy(&self.index, &next).map(|_| ()));
        if made.is_ok() {
            let _ = std::fs::rename(&next, cache);
        }
        // Left when the rename did nothing: git wrote no new index, so the
        // name and the cache's are links to the same file.
        let _ = std::fs::remove_file(&next);
    }
}

/// The first half of a snapshot, which needs nothing but the work tree:
/// a temporary index filled with it. `record` fills it while it takes the
/// loop's lock and reads its history, and stores the tree once it knows
/// the round (see [`Filled::tree_and_patch_then`]). Nothing is kept until
/// then but the blobs `git add` stored, objects no ref names (as an
/// undone `git add` leaves them).
pub fn fill(repo: &Path, scope: &Scope<'_>) -> Result<Filled, SnapshotError> {
    fill_at(repo, scope, None, 0)
}

/// Fills a temporary index with the working tree: the loop's index cache
/// (else `scope.base`'s tree), then `git add -A` leaving out the excluded
/// folders and the frozen files (put back as `frozen.from` has them), the
/// files the loop's new ignore rules hide added all the same, dirty
/// submodules as commits. `sub`: the submodule's path, when `repo` is one.
///
/// The person's index is never read for it: its stat data would tell git
/// which files it need not read again, and the writer can edit it. Only
/// the loop's first snapshot (with no cache yet) reads every file.
fn fill_at(
    repo: &Path,
    scope: &Scope<'_>,
    sub: Option<&str>,
    depth: u32,
) -> Result<Filled, SnapshotError> {
    let pin = scope.own.map(|own| &own.pin).filter(|_| sub.is_none());
    if let Some(pin) = pin {
        pin.check_info(repo)?;
    }
    let tmp_name = temp_index_name();
    let tmp = match scope.own {
        Some(own) => own.dir().join(&tmp_name),
        None => match Git::at(repo).layout() {
            Some(known) => known.git_dir.join(&tmp_name),
            None => {
                let out = Git::at(repo).run(["rev-parse", "--git-path", &tmp_name])?;
                let printed = out.stdout.strip_suffix(b"\n").unwrap_or(&out.stdout);
                absolute(repo, printed)?
            }
        },
    };
    let tmp = temp_index(tmp)?;
    remove_stale_indexes(&tmp);
    let cache = scope.own.map(|own| own.cache(sub));
    let seeded = match (&cache, scope.own) {
        (Some(cache), Some(own)) if own.usable(cache) => {
            copy_index(cache, &tmp).map_err(|source| SnapshotError::CopyIndex {
                from: cache.clone(),
                to: tmp.to_path_buf(),
                source,
            })?;
            true
        }
        _ => false,
    };
    let mut filled = Filled {
        repo: repo.to_path_buf(),
        index: tmp,
        cache: None,
    };

    let mut exclude: Vec<&str> = scope
        .exclude
        .iter()
        .map(|d| d.trim_matches('/'))
        .filter(|d| !d.is_empty())
        .collect();
    if let Some(f) = &scope.frozen {
        exclude.extend(f.paths.iter().map(String::as_str));
    }
    filled.with_git(|git| {
        if !seeded {
            seed(git, scope.base, &exclude)?;
        }
        fill_index(git, scope, &exclude, pin, depth)
    })?;
    filled.cache = cache;
    Ok(filled)
}

/// Starts the index `git` names from `base`'s tree (when it names one),
/// without the excluded folders: what the loop's base tracks stays
/// tracked, ignored or not, as it would in the person's index.
fn seed(git: Git<'_>, base: &str, exclude: &[&str]) -> Result<(), SnapshotError> {
    let Some(tree) = verify(git.repo(), &format!("{base}^{{tree}}"))? else {
        return Ok(());
    };
    git.run(["read-tree", &tree])?;
    if holds_any(git.repo(), &tree, exclude)? {
        drop_excluded(git, exclude)?;
    }
    Ok(())
}

/// Runs what fills the index `git` names: each file `git add -A` would
/// read checked for its size, `git add -A` without `exclude`, what the
/// loop's new ignore rules hide added too (with a pin), nested
/// repositories checked, dirty submodules and the frozen files put back.
fn fill_index(
    git: Git<'_>,
    scope: &Scope<'_>,
    exclude: &[&str],
    pin: Option<&Pin>,
    depth: u32,
) -> Result<(), SnapshotError> {
    let repo = git.repo();
    let mut pathspecs: Vec<OsString> = vec![OsString::from(":(top)")];
    pathspecs.extend(exclude.iter().flat_map(|d| excluding(d)));
    let read = untracked_and_changed(git, &["--modified", "--exclude-standard"], &pathspecs)?;
    refuse_large(repo, &read)?;
    let mut args: Vec<OsString> = ["-c", "advice.addEmbeddedRepo=false", "add", "-A", "--"]
        .map(OsString::from)
        .to_vec();
    args.extend(pathspecs.iter().cloned());
    git.run(&args).map_err(embedded_without_commit)?;
    let mut nested: Vec<String> = read.iter().filter(|p| p.ends_with('/')).cloned().collect();
    if let Some(pin) = pin {
        nested.extend(reveal(git, pin, exclude, &pathspecs)?);
    }
    refuse_nested(repo, &nested)?;
    if depth < MAX_SUBMODULE_DEPTH && repo.join(".gitmodules").is_file() {
        dirty_submodules(git, scope, depth)?;
    }
    if let Some(f) = &scope.frozen {
        put_back(git, f)?;
    }
    Ok(())
}

/// The paths `git ls-files -z --others OPTIONS -- PATHSPECS` lists in the
/// index `git` names (a nested repository as its folder with a `/`).
fn untracked_and_changed(
    git: Git<'_>,
    options: &[&str],
    pathspecs: &[OsString],
) -> Result<Vec<String>, SnapshotError> {
    let mut args: Vec<OsString> = ["ls-files", "-z", "--others"].map(OsString::from).to_vec();
    args.extend(options.iter().map(OsString::from));
    args.push(OsString::from("--"));
    args.extend(pathspecs.iter().cloned());
    let out = git.run(&args)?;
    Ok(out
        .stdout
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect())
}

/// Refuses the round when a file of `paths` (that a snapshot would read)
/// is larger than [`MAX_FILE`]: its size, from `lstat`, costs nothing.
fn refuse_large(repo: &Path, paths: &[String]) -> Result<(), SnapshotError> {
    let mut large: Vec<(String, u64)> = paths
        .iter()
        .filter_map(|p| {
            let meta = std::fs::symlink_metadata(repo.join(p)).ok()?;
            (meta.is_file() && meta.len() > MAX_FILE).then(|| (p.clone(), meta.len()))
        })
        .collect();
    if large.is_empty() {
        return Ok(());
    }
    large.sort();
    Err(SnapshotError::TooLarge {
        files: large
            .iter()
            .map(|(p, size)| format!("`{p}` ({} MiB)", size >> 20))
            .collect::<Vec<_>>()
            .join(", "),
        first: large[0].0.clone(),
    })
}

/// Refuses the round when a folder of `nested` (a git repository inside the
/// work tree, as `ls-files` lists it) is not a submodule `.gitmodules`
/// names: `git add` stores it as a commit id alone, so an edit inside it
/// would be no change to review.
fn refuse_nested(repo: &Path, nested: &[String]) -> Result<(), SnapshotError> {
    if nested.is_empty() {
        return Ok(());
    }
    let registered: Vec<String> = match repo.join(".gitmodules").is_file() {
        true => Git::at(repo)
            .run_unchecked(&[
                "config",
                "-f",
                ".gitmodules",
                "-z",
                "--get-regexp",
                r"^submodule\..*\.path$",
            ])?
            .stdout
            .split(|&b| b == 0)
            .filter_map(|e| {
                let entry = String::from_utf8_lossy(e);
                let (_, path) = entry.split_once('\n')?;
                Some(path.trim_matches('/').to_string())
            })
            .collect(),
        false => Vec::new(),
    };
    let mut unnamed: Vec<&str> = nested
        .iter()
        .map(|p| p.trim_end_matches('/'))
        .filter(|p| !registered.iter().any(|r| r == p))
        .collect();
    unnamed.sort();
    match unnamed.first() {
        None => Ok(()),
        Some(path) => Err(SnapshotError::Nested {
            path: path.to_string(),
        }),
    }
}

/// Adds to the index `git` names what an ignore rule the loop did not start
/// with hides (a `.gitignore` line the writer added, a folder whose own
/// `.gitignore` says `*`), and what the person's index tracks though it is
/// ignored: `git add -A` leaves both out. Returns the nested repositories
/// among them, for [`refuse_nested`].
///
/// `git check-ignore -v` names the rule that ignores each ignored path;
/// a rule is the loop's when its file was pinned holding that line. The
/// rules of `.git/info/exclude` and `core.excludesFile` are pinned whole.
fn reveal(
    git: Git<'_>,
    pin: &Pin,
    exclude: &[&str],
    pathspecs: &[OsString],
) -> Result<Vec<String>, SnapshotError> {
    let ignored = untracked_and_changed(
        git,
        &["--ignored", "--exclude-standard", "--directory"],
        pathspecs,
    )?;
    if ignored.is_empty() {
        return Ok(Vec::new());
    }
    let mut input = Vec::new();
    for path in &ignored {
        input.extend_from_slice(path.as_bytes());
        input.push(0);
    }
    let checked = git.run_with_input(
        &["check-ignore", "-v", "-z", "--no-index", "--stdin"],
        input,
    )?;
    let fields: Vec<String> = checked
        .stdout
        .split(|&b| b == 0)
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect();
    let mut hidden: Vec<String> = fields
        .chunks_exact(4)
        .filter(|f| {
            let (source, pattern) = (&f[0], &f[2]);
            let per_folder = (source == ".gitignore" || source.ends_with("/.gitignore"))
                && !source.starts_with('/')
                && !source.starts_with(".git/");
            per_folder && !pin.had_rule(source, pattern)
        })
        .map(|f| f[3].clone())
        .collect();
    // What the person's index tracks is tracked, ignored or not.
    let tracked = Git::at(git.repo()).run([
        "ls-files",
        "-z",
        "--cached",
        "--ignored",
        "--exclude-standard",
    ])?;
    let excluded = |path: &str| {
        exclude.iter().any(|d| {
            path.strip_prefix(d)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
    };
    hidden.extend(
        tracked
            .stdout
            .split(|&b| b == 0)
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .filter(|p| !p.is_empty() && git.repo().join(p).exists()),
    );
    hidden.retain(|p| !excluded(p.trim_end_matches('/')));
    if hidden.is_empty() {
        return Ok(Vec::new());
    }
    let literal: Vec<OsString> = hidden
        .iter()
        .map(|p| OsString::from(format!(":(top,literal){}", p.trim_end_matches('/'))))
        .collect();
    let files = untracked_and_changed(git, &[], &literal)?;
    refuse_large(git.repo(), &files)?;
    let (nested, files): (Vec<String>, Vec<String>) =
        files.into_iter().partition(|p| p.ends_with('/'));
    if !files.is_empty() {
        let mut input = Vec::new();
        for path in &files {
            input.extend_from_slice(format!(":(top,literal){path}").as_bytes());
            input.push(0);
        }
        git.run_with_input(
            &["add", "-f", "--pathspec-from-file=-", "--pathspec-file-nul"],
            input,
        )?;
    }
    Ok(nested)
}

/// `git add`'s refusal of a git repository inside the work tree that has
/// no commit (a `git init` the writer or a scaffolding tool ran in a
/// folder), told as what it is and what to do; any other error as it
/// came. Git says it as `error: 'sub/' does not have a commit checked out`
/// (an English build; another language falls back to git's own words).
fn embedded_without_commit(err: GitError) -> SnapshotError {
    let found = match &err {
        GitError::Failed { stderr, .. } => stderr.lines().find_map(|line| {
            let rest = line.strip_prefix("error: '")?;
            let (path, tail) = rest.split_once('\'')?;
            // Git names the folder with its slash (`'sub/'`); kept without.
            (tail == " does not have a commit checked out")
                .then(|| path.trim_end_matches('/').to_string())
        }),
        _ => None,
    };
    match found {
        Some(path) => SnapshotError::EmbeddedWithoutCommit { path },
        None => err.into(),
    }
}

/// The two pathspecs that keep `git add` off the repo-relative `path` and
/// all below it, whatever its name holds: `:(top,exclude,glob)` with every
/// glob character escaped, and the same with `/**`.
///
/// Not `:(exclude,literal)`: `git add` reports every ignored path an item
/// names, exclude items too, and fails (exit 1, "The following paths are
/// ignored by one of your .gitignore files"). Anyone who ignores
/// `.referee/` would have had every round refused. Git finds the paths an
/// item names by its leading characters up to the first glob character, so
/// the first one is escaped as well: `\.referee` names no path to git's
/// check and still matches `.referee` alone.
fn excluding(path: &str) -> [OsString; 2] {
    let mut glob = String::with_capacity(path.len() + 8);
    for (i, c) in path.chars().enumerate() {
        if i == 0 || matches!(c, '*' | '?' | '[' | '\\') {
            glob.push('\\');
        }
        glob.push(c);
    }
    [
        OsString::from(format!(":(top,exclude,glob){glob}")),
        OsString::from(format!(":(top,exclude,glob){glob}/**")),
    ]
}

/// The tree of the index `git` names, what `then` makes of it, and the
/// patch from `from` to it.
fn tree_and_patch<T: Send>(
    git: Git<'_>,
    from: &str,
    then: impl FnOnce(&str) -> Result<T, SnapshotError> + Send,
) -> Result<(String, T, Patch), SnapshotError> {
    // `diff-index --cached` only reads the index; `write-tree` rewrites it
    // (its cache tree) by renaming a new file over it, so the reader sees
    // the same entries either way.
    //
    // `--missing-ok`: `write-tree` need not look up every blob of each
    // folder it rebuilds (one `stat` each while they are loose: a third of
    // its time in the benchmark's repository). The patch answers for them:
    // an entry that differs from `from` is read by `diff-index -p` (a
    // missing blob fails it, and the snapshot with it; a binary file's
    // too, `-diff` or not, though its bytes are not printed), and
    // an entry that does not is `from`'s own blob. Whatever `then` makes
    // of the tree (a commit, no ref) is left unused when the patch fails.
    let (made, listed) = std::thread::scope(|scope| {
        let listed = scope.spawn(|| git.run(listing_args(&["diff-index", "--cached"], &[from])));
        let made = git
            .run(["write-tree", "--missing-ok"])
            .map_err(SnapshotError::from)
            .and_then(|out| object_id(&out.stdout, "write-tree"))
            .and_then(|tree| {
                let made = then(&tree)?;
                Ok((tree, made))
            });
        let listed = listed.join().unwrap_or_else(|_| {
            Err(GitError::Spawn(std::io::Error::other(
                "the `git diff-index` thread panicked",
            )))
        });
        (made, listed)
    });
    let (tree, made) = made?;
    Ok((tree, made, parse_listing(listed?.stdout)?))
}

/// Puts the frozen files, as `frozen.from` has them, into the index that
/// `git` names (they were left out of it).
fn put_back(git: Git<'_>, frozen: &Frozen<'_>) -> Result<(), SnapshotError> {
    if frozen.paths.is_empty() {
        return Ok(());
    }
    let mut args: Vec<OsString> = [
        "ls-tree",
        "-z",
        "--full-tree",
        "--end-of-options",
        frozen.from,
        "--",
    ]
    .map(OsString::from)
    .to_vec();
    // `ls-tree` takes plain paths (no pathspec magic); `--full-tree` reads
    // them from the top.
    args.extend(frozen.paths.iter().map(OsString::from));
    let listed = Git::at(git.repo()).run(&args)?;
    // Only blobs (and symlinks): a frozen path that is a folder in
    // `from` is left out rather than half-taken.
    let entries: Vec<u8> = listed
        .stdout
        .split(|&b| b == 0)
        .filter(|e| e.windows(6).any(|w| w == b" blob "))
        .flat_map(|e| e.iter().copied().chain([0]))
        .collect();
    if !entries.is_empty() {
        git.run_with_input(&["update-index", "-z", "--index-info"], entries)?;
    }
    Ok(())
}

/// How deep snapshots look into submodules of submodules.
const MAX_SUBMODULE_DEPTH: u32 = 3;

/// A submodule whose work tree differs from its commit counts as a change
/// to its path: its gitlink in the snapshot points at a commit made (in the
/// submodule's object store, no ref) of its work tree, with a fixed identity
/// and date, so the same content always gives the same snapshot.
fn dirty_submodules(git: Git<'_>, scope: &Scope<'_>, depth: u32) -> Result<(), SnapshotError> {
    let out = git.run(["ls-files", "-s", "-z"])?;
    for entry in out.stdout.split(|&b| b == 0) {
        let Some(rest) = entry.strip_prefix(b"160000 ") else {
            continue;
        };
        let Some(tab) = rest.iter().position(|&b| b == b'\t') else {
            continue;
        };
        let path = String::from_utf8_lossy(&rest[tab + 1..]).into_owned();
        let sub = git.repo().join(&path);
        if !sub.join(".git").exists() {
            continue;
        }
        // The submodule's own snapshot starts from its `HEAD`, with an index
        // cache of its own in the loop's folder.
        let inner = Scope {
            exclude: &[],
            frozen: None,
            base: "HEAD",
            own: scope.own,
        };
        let tree = worktree_tree_at(&sub, &inner, Some(&path), depth + 1, write_tree)?;
        let head = verify(&sub, "HEAD^{commit}")?;
        let head_tree = match &head {
            Some(h) => verify(&sub, &format!("{h}^{{tree}}"))?,
            None => None,
        };
        if head_tree.as_deref() == Some(tree.as_str()) {
            continue;
        }
        let mut args: Vec<&str> = vec![
            "commit-tree",
            "--no-gpg-sign",
            "-m",
            "referee: the submodule's work tree",
        ];
        if let Some(h) = &head {
            args.extend(["-p", h]);
        }
        args.push(&tree);
        let mut ident: Vec<(&str, &OsStr)> =
            IDENTITY.iter().map(|(k, v)| (*k, OsStr::new(v))).collect();
        ident.push(("GIT_AUTHOR_DATE", OsStr::new("2000-01-01T00:00:00Z")));
        ident.push(("GIT_COMMITTER_DATE", OsStr::new("2000-01-01T00:00:00Z")));
        let made = Git::at(&sub).env(&ident).run(&args)?;
        let commit = object_id(&made.stdout, "commit-tree")?;
        git.run([
            "update-index",
            "--cacheinfo",
            &format!("160000,{commit},{path}"),
        ])?;
    }
    Ok(())
}

/// The tree id of `rev` (a commit, a ref, or a tree).
pub fn tree_of(repo: &Path, rev: &str) -> Result<String, SnapshotError> {
    let spec = format!("{rev}^{{tree}}");
    match verify(repo, &spec)? {
        Some(id) => Ok(id),
        None => Err(SnapshotError::NoTree {
            rev: rev.to_string(),
            repo: repo.to_path_buf(),
        }),
    }
}

/// The tree id of `rev` with the repo-relative directories in `exclude` left
/// out, as a round snapshot leaves them out, and the `frozen` files as
/// `frozen.from` has them. Needs only `rev`'s objects.
pub fn tree_of_frozen(
    repo: &Path,
    rev: &str,
    exclude: &[&str],
    frozen: Option<Frozen<'_>>,
) -> Result<String, SnapshotError> {
    let tree = tree_of(repo, rev)?;
    let mut exclude: Vec<&str> = exclude
        .iter()
        .map(|d| d.trim_matches('/'))
        .filter(|d| !d.is_empty())
        .collect();
    // Files frozen from `rev` itself come out as they are in it.
    let frozen = frozen.filter(|f| f.from != rev);
    if let Some(f) = &frozen {
        exclude.extend(f.paths.iter().map(String::as_str));
    }
    if exclude.is_empty() || (frozen.is_none() && !holds_any(repo, &tree, &exclude)?) {
        return Ok(tree);
    }
    let out = Git::at(repo).run(["rev-parse", "--git-path", &temp_index_name()])?;
    let printed = out.stdout.strip_suffix(b"\n").unwrap_or(&out.stdout);
    let tmp = temp_index(absolute(repo, printed)?)?;
    remove_stale_indexes(&tmp);
    let env = [("GIT_INDEX_FILE", tmp.as_os_str())];
    let git = Git::at(repo).env(&env).own_index();
    git.run(["read-tree", &tree])?;
    drop_excluded(git, &exclude)?;
    if let Some(f) = &frozen {
        put_back(git, f)?;
    }
    let out = git.run(["write-tree"])?;
    object_id(&out.stdout, "write-tree")
}

/// Whether `tree` holds any of `paths` (files or folders): a tree without
/// them needs no temporary index to leave them out (a large repository's
/// base compares in two git calls, not five).
fn holds_any(repo: &Path, tree: &str, paths: &[&str]) -> Result<bool, SnapshotError> {
    let mut args: Vec<&str> = vec![
        "ls-tree",
        "--name-only",
        "--full-tree",
        "--end-of-options",
        tree,
        "--",
    ];
    args.extend(paths);
    let out = Git::at(repo).run(&args)?;
    Ok(!out.stdout.is_empty())
}

/// Removes the repo-relative directories `exclude` from the index that `git`
/// names (a temporary one); the work tree is left alone.
fn drop_excluded(git: Git<'_>, exclude: &[&str]) -> Result<(), SnapshotError> {
    if exclude.is_empty() {
        return Ok(());
    }
    let mut args: Vec<OsString> = ["rm", "-r", "--cached", "-q", "--ignore-unmatch", "--"]
        .map(OsString::from)
        .to_vec();
    args.extend(
        exclude
            .iter()
            .map(|d| OsString::from(format!(":(top,literal){d}"))),
    );
    git.run(&args)?;
    Ok(())
}

/// The paths whose content or mode differs between two trees (or commits),
/// both sides of a rename, sorted.
pub fn changed_paths(
    repo: &Path,
    tree_a: &str,
    tree_b: &str,
) -> Result<Vec<String>, SnapshotError> {
    let out = Git::at(repo).run([
        "-c",
        "core.quotePath=false",
        "diff-tree",
        "-r",
        "-z",
        "--name-only",
        "--no-renames",
        "--no-ext-diff",
        "--no-textconv",
        "--end-of-options",
        tree_a,
        tree_b,
    ])?;
    let mut paths: Vec<String> = out
        .stdout
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    paths.sort();
    paths.dedup();
    Ok(paths)
}

/// The patch from `from` to `to` (commits, refs or trees).
pub fn diff(repo: &Path, from: &str, to: &str) -> Result<Patch, SnapshotError> {
    let out = Git::at(repo).run(listing_args(&["diff-tree"], &[from, to]))?;
    parse_listing(out.stdout)
}

/// [`diff`], with `.gitattributes` read from `attrs` (a commit or tree)
/// rather than the work tree: git 2.40's `GIT_ATTR_SOURCE`, which an older
/// git ignores (it then reads the work tree's). It costs git about 140 µs
/// per changed file (each folder's attributes read from the tree again).
pub fn diff_with_attributes(
    repo: &Path,
    from: &str,
    to: &str,
    attrs: &str,
) -> Result<Patch, SnapshotError> {
    let env = [("GIT_ATTR_SOURCE", OsStr::new(attrs))];
    let out = Git::at(repo)
        .env(&env)
        .run(listing_args(&["diff-tree"], &[from, to]))?;
    parse_listing(out.stdout)
}

/// A diff command that lists the files (`--raw -z`) and the patch in one
/// pass: `git -c core.quotePath=false COMMAND… DIFF_FLAGS --raw -z -p
/// --end-of-options REVS…`. Not `--numstat`: git then diffs every file a
/// second time for its counts (`diff-index` on the benchmark's 50 files took
/// 12.6 ms with it, 10.0 without), and the patch holds the same counts.
///
/// Without `--binary`: a binary file is listed as `Binary files … differ`
/// under its `index` line; the snapshot commit the round's row pins holds
/// its bytes. With `--binary`, a 50 MB file the writer left in the work
/// tree put 64 MB of base85 in the round's evidence and in the reviewer's
/// patch file, and took 4 s and 200 MB of memory to record. Text files
/// print the same either way.
fn listing_args<'a>(command: &'a [&'a str], revs: &[&'a str]) -> Vec<&'a str> {
    let mut args: Vec<&str> = vec!["-c", "core.quotePath=false"];
    args.extend_from_slice(command);
    args.extend_from_slice(DIFF_FLAGS);
    args.extend_from_slice(&["--raw", "-z", "-p", "--end-of-options"]);
    args.extend_from_slice(revs);
    args
}

/// Splits a listing from [`listing_args`]: the raw records, each field
/// ended by a NUL, then one more NUL and the patch. No field is empty (a
/// path never is), so the first two NULs in a row are that separator.
/// Reading past it as records would take a patch line for a file.
fn parse_listing(mut out: Vec<u8>) -> Result<Patch, SnapshotError> {
    let (records, text) = match out.windows(2).position(|w| w == b"\0\0") {
        Some(at) => (at + 1, at + 2),
        None => (out.len(), out.len()),
    };
    let files = parse_raw(&out[..records]);
    let text = out.split_off(text);
    if !text.is_empty() && !text.starts_with(b"diff --git ") {
        return Err(SnapshotError::Unexpected {
            command: "diff --raw -z -p",
            output: String::from_utf8_lossy(&text[..text.len().min(200)]).into_owned(),
            expected: "a patch after the raw records",
        });
    }
    let (added, removed) = crate::patch::line_counts(&text);
    Ok(Patch {
        text,
        added,
        removed,
        files,
    })
}

/// The paths of `--raw -z` records: `:MODES IDS STATUS\0PATH\0`, or
/// `\0OLD\0NEW\0` when the status is a rename or copy (`R100`, `C75`).
/// Each path once, in git's order.
fn parse_raw(out: &[u8]) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    // A set: a patch may touch 20,000 files.
    let mut seen: std::collections::HashSet<&[u8]> = std::collections::HashSet::new();
    let mut fields = out.split(|&b| b == 0);
    while let Some(record) = fields.next() {
        if !record.starts_with(b":") {
            continue;
        }
        let status = record.rsplit(|&b| b == b' ').next().unwrap_or_default();
        let paths = match status.first() {
            Some(b'R' | b'C') => 2,
            _ => 1,
        };
        for path in fields.by_ref().take(paths) {
            if seen.insert(path) {
                files.push(String::from_utf8_lossy(path).into_owned());
            }
        }
    }
    files
}

/// `rev-parse --verify --quiet SPEC`: the id, or `None` when SPEC names
/// nothing (exit 1); any other failure (not a repository) is an error.
fn verify(repo: &Path, spec: &str) -> Result<Option<String>, SnapshotError> {
    let args = ["rev-parse", "--verify", "--quiet", "--end-of-options", spec];
    let out = Git::at(repo).run_unchecked(&args)?;
    match out.status.code() {
        Some(0) => object_id(&out.stdout, "rev-parse --verify").map(Some),
        Some(1) => Ok(None),
        _ => Err(GitError::failed(&args, &out).into()),
    }
}

fn object_id(stdout: &[u8], command: &'static str) -> Result<String, SnapshotError> {
    let id = String::from_utf8_lossy(stdout).trim().to_string();
    if !id.is_empty() && id.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(id)
    } else {
        Err(SnapshotError::Unexpected {
            command,
            output: id,
            expected: "an object id",
        })
    }
}

/// The prefix of temporary index names; the pid of their process follows.
const TEMP_INDEX: &str = "referee-index-";

/// A temporary index older than this is stale even if a process with its
/// pid runs (pids are reused). Its last write (ctime; the copy keeps the
/// user's mtime) is never that old while a snapshot uses it.
const TEMP_INDEX_MAX_AGE_SECS: i64 = 3600;

/// Removes the temporary indexes, and git's `.lock` files of them, that a
/// killed referee left beside `ours` (in the git directory): those whose
/// process is gone, or that are over an hour old. Best effort: a file that
/// cannot be removed now is tried again next time.
fn remove_stale_indexes(ours: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Some(dir) = ours.parent() else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| crate::leftover::pid_in(n, TEMP_INDEX))
        else {
            continue;
        };
        // This process's own (another thread's snapshot) stay.
        if pid == std::process::id() {
            continue;
        }
        // The entry itself (`lstat`): a file or a link, never a folder's contents.
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        let old = now.saturating_sub(meta.ctime()) > TEMP_INDEX_MAX_AGE_SECS;
        if !meta.is_dir() && (old || crate::leftover::gone(pid)) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// A unique name for a temporary index inside the git directory, where it
/// shares the file system (and so the rename semantics) of the real one.
fn temp_index_name() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "{TEMP_INDEX}{}-{}-{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Makes `to` the index `from` (the loop's index cache) as it is now: a
/// second name for the same file (a hard link), else a copy. Git never
/// writes an index in place: it writes `<index>.lock` and renames it over
/// the name, so what git does to `to` replaces that name and leaves the
/// cache's file as it was. The link also keeps the index's modification
/// time, which git needs: it trusts an entry's stat data only when the
/// file is older than the index, and re-reads the "racily clean" ones; a
/// copy stamped now would hide a same-size edit made in the same clock
/// tick as the cache's last write, so the copy is stamped with the
/// original's time.
fn copy_index(from: &Path, to: &Path) -> std::io::Result<()> {
    if std::fs::hard_link(from, to).is_ok() {
        return Ok(());
    }
    let mut source = std::fs::File::open(from)?;
    let meta = source.metadata()?;
    let mut copy = std::fs::File::options()
        .write(true)
        .create_new(true)
        .open(to)?;
    std::io::copy(&mut source, &mut copy)?;
    copy.set_modified(meta.modified()?)?;
    Ok(())
}

/// A path git printed (relative to `repo` unless absolute), made absolute:
/// git changes directory to the top level before it reads `GIT_INDEX_FILE`.
fn absolute(repo: &Path, printed: &[u8]) -> Result<PathBuf, SnapshotError> {
    #[cfg(unix)]
    let printed = {
        use std::os::unix::ffi::OsStrExt;
        PathBuf::from(OsStr::from_bytes(printed))
    };
    #[cfg(not(unix))]
    let printed = PathBuf::from(String::from_utf8_lossy(printed).into_owned());
    let joined = repo.join(printed);
    std::path::absolute(&joined).map_err(|source| SnapshotError::Path {
        path: joined,
        source,
    })
}

/// The temporary index at `path` (named by [`temp_index_name`]), removed
/// when dropped, on success and on error; it may never have been created
/// (an empty repository, an early error), which the removal ignores.
///
/// A path, not a file tempfile creates: git refuses an empty index file
/// ("index file smaller than expected") and writes a new one itself; and
/// the pid in the name is what lets the next snapshot remove the index of
/// a killed referee ([`remove_stale_indexes`]).
fn temp_index(path: PathBuf) -> Result<tempfile::TempPath, SnapshotError> {
    tempfile::TempPath::try_from_path(&path).map_err(|source| SnapshotError::Path { path, source })
}

#[cfg(test)]
mod tests {
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

    fn worktree_tree(repo: &Path, exclude: &[&str]) -> Result<String, SnapshotError> {
        worktree_tree_at(repo, &scope(exclude, None), None, 0, write_tree)
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
        let tree = worktree_tree(repo, exclude)?;
        let snap = commit(repo, loop_name, round, parent, &tree, message)?;
        publish(repo, &snap, message, None, None)?;
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
        let tree = worktree_tree(repo.path(), EXCLUDE).expect("tree");
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
        let tree = worktree_tree(repo.path(), &exclude).expect("tree");
        assert_eq!(
            repo.ls_tree(&tree),
            [".gitignore", "README.md", "aXb/q", "cZd", "xy"]
        );
        assert_eq!(
            excluding("a*b").map(|s| s.into_string().unwrap()),
            [
                ":(top,exclude,glob)\\a\\*b",
                ":(top,exclude,glob)\\a\\*b/**"
            ]
        );
    }

    /// The index reader agrees with `git ls-files -v` on every index git
    /// writes that it reads (versions 2 to 4, SHA-1 and SHA-256, flags and
    /// long paths), and leaves a split index to git.
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
    /// tree, so `add` leaves it): it must fail, naming the blob, never be
    /// stored as a tree. `write-tree --missing-ok` trusts the patch to read
    /// every blob that differs from `from`.
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
        };
        in_cache(&["read-tree", "HEAD"]);
        in_cache(&[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("100644,{ghost},{path}"),
        ]);
        in_cache(&["update-index", "--skip-worktree", path]);
        let scope = Scope {
            own: Some(&own),
            ..scope(EXCLUDE, None)
        };
        let err = worktree_with_patch(repo.path(), &scope, &from)
            .expect_err("a snapshot naming a missing blob");
        assert!(err.to_string().contains(ghost), "{err}");
    }

    #[test]
    fn a_missing_blob_the_patch_needs_fails_the_snapshot() {
        snapshot_with_a_missing_blob(&Repo::new(), "ghost.txt");
    }

    #[test]
    fn a_missing_blob_of_a_binary_file_fails_the_snapshot() {
        // The patch no longer prints a binary file's bytes (no `--binary`),
        // and `-diff` makes a file binary without looking at them. Git
        // still reads the blob, and so still fails on a missing one.
        let repo = Repo::new();
        repo.write(".gitattributes", "*.bin -diff\n");
        snapshot_with_a_missing_blob(&repo, "ghost.bin");
    }

    #[test]
    fn a_repository_with_no_commit_inside_the_work_tree_is_named() {
        // `git add` refuses it ("does not have a commit checked out"), and
        // every round failed with git's "adding files failed".
        let repo = Repo::new();
        repo.write("vendor/tool/main.rs", "fn main() {}\n");
        repo.git(&["-C", "vendor/tool", "init", "-q"]);
        let err = worktree_tree(repo.path(), EXCLUDE).expect_err("refused");
        assert!(
            err.to_string().starts_with(
                "`vendor/tool/` is a git repository inside the work tree with no commit"
            ),
            "{err}"
        );
        assert!(
            err.to_string().contains("remove `vendor/tool/.git`"),
            "{err}"
        );
        // Ignored, it is left out like any ignored folder.
        repo.write(".gitignore", "vendor/tool/\n");
        let tree = worktree_tree(repo.path(), EXCLUDE).expect("tree");
        assert_eq!(repo.ls_tree(&tree), [".gitignore", "README.md"]);
    }

    #[test]
    fn a_patch_may_read_the_attributes_of_another_tree() {
        let repo = Repo::new();
        let base = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
        repo.write(".gitattributes", "*.rs -diff\n");
        repo.write("a.rs", "fn hidden() {}\n");
        let tree = worktree_tree(repo.path(), EXCLUDE).expect("tree");
        let text = |p: Patch| String::from_utf8_lossy(&p.text).into_owned();
        let plain = text(diff(repo.path(), &base, &tree).expect("diff"));
        assert!(
            plain.contains("Binary files /dev/null and b/a.rs differ"),
            "{plain}"
        );
        let based = text(diff_with_attributes(repo.path(), &base, &tree, &base).expect("diff"));
        assert!(based.contains("+fn hidden() {}"), "{based}");
    }

    #[test]
    fn git_started_ahead_and_dropped_unused_changes_no_ref() {
        let repo = Repo::new();
        let tree = worktree_tree(repo.path(), EXCLUDE).expect("tree");
        let snap = commit(repo.path(), "demo", 1, None, &tree, "m").expect("commit");
        // Dropped unused: an empty stdin, nothing moved, the process waited for.
        drop(Publishing::start(repo.path(), "m").expect("start"));
        drop(Storing::start(repo.path(), "demo").expect("start"));
        assert_eq!(read_ref(repo.path(), "demo", 1).expect("ref"), None);
        assert_eq!(kept_contract(repo.path(), "demo").expect("kept"), None);
        // Used: the same transaction `publish` runs without them.
        let kept = Storing::start(repo.path(), "demo")
            .expect("start")
            .finish(b"[loop]\n".to_vec())
            .expect("stored");
        let publishing = Publishing::start(repo.path(), "m").expect("start");
        publish(repo.path(), &snap, "m", Some(&kept), Some(publishing)).expect("published");
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
        let stamp =
            std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
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
        let tree = worktree_tree_frozen(repo.path(), &scope(EXCLUDE, frozen)).unwrap();
        assert_eq!(tree, base_tree);
        // Other changes still show.
        repo.write("README.md", "changed\n");
        let tree = worktree_tree_frozen(repo.path(), &scope(EXCLUDE, frozen)).unwrap();
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
        let tree = worktree_tree_frozen(repo.path(), &scope(EXCLUDE, empty)).unwrap();
        let out = repo.git(&["ls-tree", "-r", "--name-only", &tree]);
        assert_eq!(out, "README.md\n");
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

        let patch = diff(repo.path(), &first.commit, &second.commit).expect("diff");
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

    /// The patch read from the snapshot's index beside `write-tree` is the
    /// patch between the trees, and the one listing splits into what the
    /// numstat and the patch each say alone (no patch line read as a file).
    #[test]
    fn the_patch_from_the_index_is_the_patch_between_the_trees() {
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
            let (tree, patch) =
                worktree_with_patch(repo.path(), &scope(EXCLUDE, None), from).expect("snapshot");
            assert_eq!(tree, worktree_tree(repo.path(), EXCLUDE).expect("tree"));
            assert_eq!(patch, diff(repo.path(), from, &tree).expect("diff"));

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
        let (_, patch) = worktree_with_patch(repo.path(), &scope(EXCLUDE, None), &first.commit)
            .expect("snapshot");
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
        listing.extend_from_slice(
            b"diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1,2 @@\n x\n+x\ty\tz\n",
        );
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
            let (tree, patch) =
                worktree_with_patch(repo.path(), &scope(EXCLUDE, None), from).expect("snapshot");
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
        let patch = diff(repo.path(), &first.tree, &second.tree).expect("diff");
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

        let patch = diff(repo.path(), &first.commit, &second.commit).expect("diff");
        assert_eq!((patch.added, patch.removed), (2, 2));
        assert_eq!(patch.files, ["README.md", "f.txt"]);
        let text = String::from_utf8(patch.text.clone()).expect("utf-8");
        assert!(
            text.starts_with("diff --git a/README.md b/README.md\n"),
            "{text}"
        );
        assert!(text.contains("-b\n+B\n c\n+d\n"), "{text}");

        // From the empty tree (a loop whose base has no commits).
        let all = diff(repo.path(), crate::git::EMPTY_TREE, &first.tree).expect("diff");
        assert_eq!((all.added, all.removed), (4, 0));
        assert_eq!(all.files, ["README.md", "f.txt"]);

        let none = diff(repo.path(), &second.commit, &second.tree).expect("diff");
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
        let plain = diff(repo.path(), &first.commit, &second.commit).expect("diff");

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
        let configured = diff(repo.path(), &first.commit, &second.commit).expect("diff");
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
        assert_eq!(
            worktree_tree(repo.path(), EXCLUDE).expect("tree"),
            first.tree
        );
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
        assert_eq!(
            worktree_tree(repo.path(), EXCLUDE).expect("tree"),
            first.tree
        );

        repo.write("untracked.txt", "changed\n");
        let changed = worktree_tree(repo.path(), EXCLUDE).expect("tree");
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

        let err = take(repo.path(), "demo", 1, Some("no-such-parent"), EXCLUDE, "m")
            .expect_err("bad parent");
        assert!(err.to_string().contains("`git commit-tree"), "{err}");

        let err = diff(repo.path(), "HEAD", "no-such-rev").expect_err("bad rev");
        assert!(
            err.to_string()
                .contains("`git -c core.quotePath=false diff-tree"),
            "{err}"
        );

        let not_repo = tempfile::tempdir().expect("tempdir");
        let err = read_ref(not_repo.path(), "demo", 1).expect_err("not a repo");
        assert!(err.to_string().contains("`git rev-parse"), "{err}");
        let err = worktree_tree(not_repo.path(), EXCLUDE).expect_err("not a repo");
        assert!(
            err.to_string().contains("`git rev-parse --git-path"),
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
}
