//! The reviewer's private checkout (SPEC §8.4): the round's snapshot
//! written to a folder in the loop's anchor, outside the work tree and out
//! of the writer's reach, with the agent settings and the reviewer's own
//! files as they were in the loop's base commit. A reviewer started in the
//! work tree would read the writer's `.claude/settings.local.json` (its
//! model server, its `SessionStart` hook) and run the writer's rewrite of
//! `scripts/review.sh`.
//!
//! The checkout is a small repository of its own whose objects are the work
//! tree's (an `alternates` file): nothing is written to the work tree's
//! `.git` (no `git worktree add`), the work tree's config (the hooks and
//! filters a writer may plant) is never read, and a reviewer's `git diff`,
//! `git status` or `codex exec review` sees the change as it would in the
//! work tree: `HEAD` is the work tree's, the files are the snapshot's.
//! Links are checked out as small files holding their target
//! (`core.symlinks=false`), so nothing in the checkout leads back into the
//! live tree. Removed when dropped; one a killed referee left is removed
//! by the next. Does I/O (git, files).

use std::os::unix::fs::DirBuilderExt;
use std::path::{Component, Path, PathBuf};

use crate::git::{Git, GitError};
use crate::statefs::{self, FsError};

/// What an agent reads as its settings, instructions or tools from the
/// folder it runs in: always taken from the loop's base.
pub const AGENT_SETTINGS: &[&str] = &[
    ".claude",
    ".codex",
    ".gemini",
    ".agents",
    ".mcp.json",
    "AGENTS.md",
    "CLAUDE.md",
    "CLAUDE.local.md",
    "GEMINI.md",
];

/// The checkout's folder in the loop's anchor.
const FOLDER: &str = "review";

/// Why the checkout could not be made.
#[derive(Debug, thiserror::Error)]
pub enum CheckoutError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error(
        "the reviewer's file `{path}` is not in the loop's base commit: the writer may have written it, so the reviewer does not run it"
    )]
    NotInBase { path: String },
}

impl CheckoutError {
    /// What to do next, if there is an obvious step.
    pub fn hint(&self) -> Option<String> {
        match self {
            CheckoutError::Git(err) => err.hint(),
            CheckoutError::Fs(err) => err.hint(),
            CheckoutError::NotInBase { path } => Some(format!(
                "commit `{path}`, then start the loop again (`referee init --force`)"
            )),
        }
    }
}

/// One file of the checkout that is the base's, not the snapshot's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pinned {
    pub path: String,
    /// `added` (left out), `changed` or `deleted` (put back) since the base.
    pub since: &'static str,
}

/// A private checkout of one round's snapshot; removed when dropped.
#[derive(Debug)]
pub struct Checkout {
    dir: PathBuf,
    /// The files the writer changed since the base that the reviewer gets
    /// as the base has them.
    pub pinned: Vec<Pinned>,
}

impl Checkout {
    /// Checks out `tree` (the round's snapshot, in `repo`'s objects) into
    /// `<anchor>/review/`, with [`AGENT_SETTINGS`] and `files` (the
    /// reviewer's own, repository-relative) taken from `base`. A file of
    /// `files` that is in `tree` but not in `base` is refused.
    pub fn new(
        repo: &Path,
        anchor: &crate::anchor::Anchor,
        tree: &str,
        base: &str,
        files: &[String],
        member: Option<&str>,
    ) -> Result<Checkout, CheckoutError> {
        let io = |action: &'static str, path: &Path| {
            let path = path.to_path_buf();
            move |cause| FsError::Io {
                action,
                path,
                cause,
            }
        };
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(anchor.dir())
            .map_err(io("create", anchor.dir()))?;
        // Each reviewer of a panel, called at once, has a folder of its own.
        let dir = match member {
            None => anchor.file(FOLDER),
            Some(name) => anchor.file(&format!("{FOLDER}-{name}")),
        };
        statefs::check(anchor.base(), &dir)?;
        // What a killed referee left (`remove_dir_all` removes a link
        // itself, never its target).
        if std::fs::symlink_metadata(&dir).is_ok() {
            std::fs::remove_dir_all(&dir).map_err(io("remove", &dir))?;
        }
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(io("create", &dir))?;
        let checkout = Checkout {
            dir,
            pinned: Vec::new(),
        };
        checkout.fill(repo, tree, base, files)
    }

    /// The folder the reviewer runs in.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// What the round's evidence says of the files the reviewer got from
    /// the base, when there are any.
    pub fn note(&self, tree: &str, base: &str) -> Option<String> {
        if self.pinned.is_empty() {
            return None;
        }
        let mut text = format!(
            "The reviewer ran in a private checkout of the round's snapshot (tree {tree}), \
             with these files as the loop's base {base} has them, not as the writer left them:\n"
        );
        for p in &self.pinned {
            let what = match p.since {
                "added" => "added since the base: left out",
                "deleted" => "deleted since the base: put back",
                _ => "changed since the base: the base's version",
            };
            text.push_str(&format!("- `{}` ({what})\n", p.path));
        }
        Some(text)
    }

    fn fill(
        mut self,
        repo: &Path,
        tree: &str,
        base: &str,
        files: &[String],
    ) -> Result<Checkout, CheckoutError> {
        let work = Git::at(repo);
        let out = work.run(["rev-parse", "--show-object-format", "--git-common-dir"])?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut lines = text.lines();
        let format = lines.next().unwrap_or("sha1").to_string();
        let common = repo.join(lines.next().unwrap_or(".git"));
        let head = work.resolve_commit("HEAD")?;

        let git = Git::at(&self.dir);
        git.run([
            "init",
            "-q",
            "--template=",
            &format!("--object-format={format}"),
        ])?;
        let info = self.dir.join(".git/objects/info");
        std::fs::create_dir_all(&info).map_err(|cause| FsError::Io {
            action: "create",
            path: info.clone(),
            cause,
        })?;
        let alternates = info.join("alternates");
        let objects = format!("{}\n", common.join("objects").display());
        std::fs::write(&alternates, objects).map_err(|cause| FsError::Io {
            action: "write",
            path: alternates.clone(),
            cause,
        })?;
        git.run(["config", "core.symlinks", "false"])?;

        // The reviewer's own files must be the base's: one the writer
        // added, or one git does not keep (an ignored file), is not run.
        for file in files {
            let in_tree = blob_in(&git, tree, file)?
                || std::fs::symlink_metadata(repo.join(file)).is_ok_and(|m| !m.is_dir());
            if in_tree && !blob_in(&git, base, file)? {
                return Err(CheckoutError::NotInBase { path: file.clone() });
            }
        }
        let mut paths: Vec<&str> = AGENT_SETTINGS.to_vec();
        paths.extend(files.iter().map(String::as_str));

        git.run(["read-tree", tree])?;
        let mut rm = vec![
            "--literal-pathspecs",
            "rm",
            "--cached",
            "-r",
            "-f",
            "-q",
            "--ignore-unmatch",
            "--",
        ];
        rm.extend(&paths);
        git.run(&rm)?;
        let mut ls = vec!["--literal-pathspecs", "ls-tree", "-r", "-z", base, "--"];
        ls.extend(&paths);
        let listed = git.run(&ls)?;
        git.run_with_input(&["update-index", "-z", "--index-info"], listed.stdout)?;
        git.run(["checkout-index", "-a", "-f"])?;

        let mut diff = vec![
            "--literal-pathspecs",
            "diff-tree",
            "-r",
            "-z",
            "--no-renames",
            "--name-status",
            base,
            tree,
            "--",
        ];
        diff.extend(&paths);
        let changed = git.run(&diff)?;
        let mut words = changed.stdout.split(|&b| b == 0).filter(|w| !w.is_empty());
        while let (Some(status), Some(path)) = (words.next(), words.next()) {
            let since = match status.first() {
                Some(b'A') => "added",
                Some(b'D') => "deleted",
                _ => "changed",
            };
            self.pinned.push(Pinned {
                path: String::from_utf8_lossy(path).into_owned(),
                since,
            });
        }

        // The work tree's `HEAD`, so the change reads as uncommitted there.
        if let Some(head) = head {
            git.run(["update-ref", "--no-deref", "HEAD", &head])?;
            git.run(["read-tree", &head])?;
        }
        Ok(self)
    }
}

impl Drop for Checkout {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether `path` is a file (not a folder) in `tree_ish`.
fn blob_in(git: &Git<'_>, tree_ish: &str, path: &str) -> Result<bool, GitError> {
    let out = git.run(["--literal-pathspecs", "ls-tree", "-z", tree_ish, "--", path])?;
    // `<mode> SP <type> SP <object> TAB <path>`: a folder is a `tree`.
    Ok(out
        .stdout
        .split(|&b| b == 0)
        .any(|entry| entry.split(|&b| b == b' ').nth(1) == Some(b"blob")))
}

/// The repository-relative files an agent's argv names: each word (the
/// program included) that is a plain relative path, joined to the agent's
/// `cwd`. Words that name no file in the repository are dropped by the
/// checkout's own test ([`Checkout::new`] pins only files).
pub fn argv_files(words: &[String], cwd: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    for word in words {
        if word.is_empty() || word.starts_with('-') || word.starts_with('/') {
            continue;
        }
        let joined = match cwd {
            Some(dir) => Path::new(dir).join(word),
            None => PathBuf::from(word),
        };
        let mut parts = Vec::new();
        let mut plain = true;
        for part in joined.components() {
            match part {
                Component::Normal(name) => parts.push(name.to_string_lossy().into_owned()),
                Component::CurDir => {}
                _ => plain = false,
            }
        }
        if plain && !parts.is_empty() {
            let path = parts.join("/");
            if !out.contains(&path) {
                out.push(path);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv_files_are_the_plain_relative_words() {
        let words: Vec<String> = [
            "sh",
            "./scripts/review.sh",
            "-x",
            "/bin/true",
            "../up",
            "a b",
        ]
        .iter()
        .map(|w| w.to_string())
        .collect();
        assert_eq!(argv_files(&words, None), ["sh", "scripts/review.sh", "a b"]);
        assert_eq!(
            argv_files(&words[..2], Some("sub")),
            ["sub/sh", "sub/scripts/review.sh"]
        );
    }
}
