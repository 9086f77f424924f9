//! Round snapshots: the working tree as a git commit stored under
//! `refs/referee/<loop>/round-<n>`, built in a temporary index so the user's
//! index, HEAD, branch, stash and working tree are never touched; and the
//! patch between two snapshots. Does I/O: runs git (see docs/snapshots.md).
//!
//! `tree` takes the work tree into a tree, `index` keeps its temporary
//! index, `patch` lists the patch between two trees, `refs` names, commits
//! and publishes the round, `pin` holds what the loop started with.

use std::path::{Path, PathBuf};

use crate::git::{Git, GitError};

mod index;
mod patch;
mod pin;
mod refs;
mod tree;

pub use patch::{changed_paths, diff, diff_with_attributes};
pub use pin::{Own, Pin};
pub use refs::{
    commit, contract_ref, kept_contract, missing_commits, publish, round_ref, round_refs,
};
pub use tree::{tree_of_frozen, worktree_tree};

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
    /// `git diff-tree -p -M` output with `a/`/`b/` prefixes, no color, no
    /// external diff, no textconv, paths unescaped (byte-faithful).
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
    #[error("loop name `{0}` cannot be part of the git ref `refs/referee/<loop>/round-<n>`")]
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
        "`{path}/` is a git repository inside the work tree with no commit (a `git init` in that folder?): git cannot take it into a snapshot, so nothing was recorded"
    )]
    EmbeddedWithoutCommit { path: String },
    #[error(
        "`{file}` changed since the loop started: git reads it whatever referee tells it, and what it ignores or marks binary would be hidden from the snapshot or its patch (sha256 `{then}` then, `{now}` now); nothing was recorded"
    )]
    InfoChanged {
        file: &'static str,
        then: String,
        now: String,
    },
    #[error(
        "{files}: over the {} MiB a snapshot reads of one file, so nothing was recorded (git would read it whole to store it)",
        tree::MAX_FILE >> 20
    )]
    TooLarge { files: String, first: String },
    #[error(
        "`{path}/` is a git repository inside the work tree that `.gitmodules` does not name: a snapshot would hold its commit id alone, so an edit inside it would be no change to review; nothing was recorded"
    )]
    Nested { path: String },
    #[error("the loop's snapshot pin `{}`: {what}", crate::statefs::shown(path))]
    Pin { path: PathBuf, what: String },
    #[error("the loop's snapshot pin `{}`: {cause}", crate::statefs::shown(path))]
    PinFs {
        path: PathBuf,
        cause: crate::statefs::FsError,
    },
}

impl SnapshotError {
    /// What to do next, if there is an obvious step.
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            SnapshotError::Git(err) => return err.hint(),
            SnapshotError::PinFs { cause, .. } => return cause.hint(),
            SnapshotError::LoopName(_) => {
                "use letters, digits, `.`, `_` and `-`, not starting with `.` or `-`".into()
            }
            SnapshotError::EmbeddedWithoutCommit { path } => format!(
                "remove `{path}/.git`, commit in it, or list `{path}/` in `.gitignore`; then record again"
            ),
            SnapshotError::InfoChanged { .. } => "put it back as it was; to ignore or mark a file during a loop, use a `.gitignore` or `.gitattributes` the patch shows".into(),
            SnapshotError::TooLarge { first, .. } => format!(
                "remove `{first}` or move it out of the work tree (or list it in `.gitignore` before the loop starts); then record again"
            ),
            SnapshotError::Nested { path } => format!(
                "remove `{path}/.git` to have its files reviewed as the repository's own, or make it a submodule (`git submodule add`); then record again"
            ),
            SnapshotError::CopyIndex { .. }
            | SnapshotError::Path { .. }
            | SnapshotError::Unexpected { .. }
            | SnapshotError::NoTree { .. }
            | SnapshotError::Pin { .. } => return None,
        })
    }
}

/// The identity of snapshot commits: fixed, so snapshots work on machines
/// without a configured git identity and never claim to be the user's.
const IDENTITY: [(&str, &str); 4] = [
    ("GIT_AUTHOR_NAME", "referee"),
    ("GIT_AUTHOR_EMAIL", "referee@localhost"),
    ("GIT_COMMITTER_NAME", "referee"),
    ("GIT_COMMITTER_EMAIL", "referee@localhost"),
];

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

#[cfg(test)]
mod tests;
