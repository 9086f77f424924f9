//! The one door to the real `git`: [`Git`] runs it with an argv (never a
//! shell string) in the repository referee means, whatever the caller's
//! environment or the repository's config says. Does I/O.
//!
//! Three things every command gets (docs/reliability.md, "Git hygiene"):
//!
//! - the variables that would send git to another repository, index or
//!   object store are removed from its environment ([`REDIRECTING`]); referee's
//!   own deliberate ones (a temporary `GIT_INDEX_FILE`, a fixed identity) are
//!   set after that, through [`Git::env`];
//! - no program the repository's config names runs: no fsmonitor hook and no
//!   hook at all ([`NO_PROGRAMS`]);
//! - git is at least [`MIN_VERSION`], checked once per process.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// The id of git's empty tree: the base of a repository with no commits yet.
pub const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// The oldest git referee runs. The newest feature it relies on is
/// `git rev-parse --end-of-options` (2.30.0; `ls-tree` and `diff-tree` took
/// it in 2.24): a revision spelled `-x` must never be read as an option. The
/// rest is older: `rev-parse --git-path` (2.5), `core.hooksPath` (2.9),
/// `--indent-heuristic` (2.11), `advice.addEmbeddedRepo` (2.13).
pub const MIN_VERSION: Version = Version(2, 30, 0);

/// Variables that would point git at another repository than the one in
/// whose folder it runs: set by a user's shell, or by git itself when
/// referee runs from a git hook (a `pre-commit` hook gets `GIT_DIR` and
/// `GIT_INDEX_FILE=.git/index.lock`). git(1), "The Git Repository". cargo and
/// jj remove the same before they run git. Config variables
/// (`GIT_CONFIG_GLOBAL`, `GIT_CONFIG_PARAMETERS`, …) stay: they are the
/// user's config, as `~/.gitconfig` is, and cannot name another repository
/// in a way `-c` below does not override. `GIT_CEILING_DIRECTORIES` stays
/// too: it can only stop the search for a repository, never redirect it.
const REDIRECTING: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
];

/// Config that would make referee's git start a program the repository
/// names. The writer agent can edit `.git/config` and `.git/hooks/`, and the
/// plumbing referee runs does start such programs: `add`, `ls-files` and
/// `update-index` ask `core.fsmonitor`'s hook; every index write runs the
/// `post-index-change` hook and `update-ref` runs `reference-transaction`.
/// An empty `core.fsmonitor` turns it off on every git (a bool `false` only
/// from 2.36; before, `false` would be run as the hook's name), and hooks are
/// looked up below `/dev/null`, where none can be. `submodule.recurse` would
/// let `read-tree` touch submodules' work trees (jj turns it off too).
const NO_PROGRAMS: &[&str] = &[
    "-c",
    "core.fsmonitor=",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "submodule.recurse=false",
];

/// A git command that failed, with what it said.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cannot run `git`: {0}\nhint: install git and make sure it is on PATH")]
    Spawn(std::io::Error),
    #[error("`git {args}` failed ({status}): {stderr}")]
    Failed {
        args: String,
        status: String,
        stderr: String,
    },
    #[error(
        "git {found} is older than {minimum}, the oldest referee supports\n\
         hint: install a newer git (https://git-scm.com/downloads) and put it first on PATH"
    )]
    TooOld { found: Version, minimum: Version },
}

impl GitError {
    /// The error for a git command that exited non-zero.
    pub fn failed<S: AsRef<OsStr>>(args: &[S], out: &Output) -> GitError {
        GitError::Failed {
            args: args
                .iter()
                .map(|a| a.as_ref().to_string_lossy())
                .collect::<Vec<_>>()
                .join(" "),
            status: out.status.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        }
    }
}

/// A git version: major, minor, patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(pub u32, pub u32, pub u32);

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

impl Version {
    /// Reads `git version` output: `git version 2.47.3`, `git version 2.39.5
    /// (Apple Git-154)`, `git version 2.50.0.windows.1`, `git version
    /// 2.45.0-rc1`. `None` when it is not that shape.
    pub fn parse(text: &str) -> Option<Version> {
        let number = text.trim().strip_prefix("git version ")?;
        let number = number.split_whitespace().next()?;
        let mut parts = number.split('.').map(|part| {
            let digits = part
                .find(|c: char| !c.is_ascii_digit())
                .map_or(part, |end| &part[..end]);
            digits.parse::<u32>().ok()
        });
        let major = parts.next()??;
        let minor = parts.next()??;
        let patch = parts.next().flatten().unwrap_or(0);
        Some(Version(major, minor, patch))
    }
}

/// Why the version check refused git, kept for the rest of the process
/// (an `io::Error` is not `Clone`, so its kind and text are kept).
#[derive(Debug, Clone)]
enum Refused {
    Spawn(std::io::ErrorKind, String),
    TooOld(Version),
}

/// Checks once per process that git runs and is at least [`MIN_VERSION`].
/// A version it cannot read is let through: the command itself then says
/// what is wrong, and an unusual build is not refused on a guess.
fn check_version() -> Result<(), GitError> {
    static CHECKED: OnceLock<Result<(), Refused>> = OnceLock::new();
    let checked = CHECKED.get_or_init(|| {
        let mut cmd = Command::new("git");
        cmd.arg("version").stdin(Stdio::null());
        for name in REDIRECTING {
            cmd.env_remove(name);
        }
        let out = cmd
            .output()
            .map_err(|err| Refused::Spawn(err.kind(), err.to_string()))?;
        match Version::parse(&String::from_utf8_lossy(&out.stdout)) {
            Some(found) if found < MIN_VERSION => Err(Refused::TooOld(found)),
            _ => Ok(()),
        }
    });
    match checked {
        Ok(()) => Ok(()),
        Err(Refused::Spawn(kind, text)) => {
            Err(GitError::Spawn(std::io::Error::new(*kind, text.clone())))
        }
        Err(Refused::TooOld(found)) => Err(GitError::TooOld {
            found: *found,
            minimum: MIN_VERSION,
        }),
    }
}

/// Git in one repository: every git command referee runs goes through it.
/// `Git::at(repo).run(["rev-parse", "HEAD"])`; with a variable referee sets
/// on purpose, `Git::at(repo).env(&[("GIT_INDEX_FILE", tmp)]).run(…)`.
#[derive(Debug, Clone, Copy)]
pub struct Git<'a> {
    repo: &'a Path,
    env: &'a [(&'a str, &'a OsStr)],
}

impl<'a> Git<'a> {
    /// Git run in the folder `repo` (its top level, or any folder inside it).
    pub fn at(repo: &'a Path) -> Git<'a> {
        Git { repo, env: &[] }
    }

    /// The same git with `env` set in every command's environment, after
    /// the redirecting variables of the caller's were removed.
    pub fn env(self, env: &'a [(&'a str, &'a OsStr)]) -> Git<'a> {
        Git { env, ..self }
    }

    /// The folder git runs in.
    pub fn repo(&self) -> &'a Path {
        self.repo
    }

    /// Runs `git ARGS`; returns its output when it exits 0.
    pub fn run<I, S>(&self, args: I) -> Result<Output, GitError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<_> = args
            .into_iter()
            .map(|a| a.as_ref().to_os_string())
            .collect();
        let out = self.run_unchecked(&args)?;
        if out.status.success() {
            Ok(out)
        } else {
            Err(GitError::failed(&args, &out))
        }
    }

    /// Runs `git ARGS` like [`Git::run`] but returns the output whatever the
    /// exit status, for commands whose status is an answer
    /// (`rev-parse --verify`).
    pub fn run_unchecked<S: AsRef<OsStr>>(&self, args: &[S]) -> Result<Output, GitError> {
        let mut cmd = self.command(args)?;
        cmd.stdin(Stdio::null());
        cmd.output().map_err(GitError::Spawn)
    }

    /// Runs `git ARGS` with `input` on its stdin; returns its output when it
    /// exits 0. The input is written from a thread, so a git that answers
    /// while it reads never deadlocks on a full pipe.
    pub fn run_with_input(&self, args: &[&str], input: Vec<u8>) -> Result<Output, GitError> {
        use std::io::Write;
        let mut cmd = self.command(args)?;
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(GitError::Spawn)?;
        let stdin = child.stdin.take();
        let writer = std::thread::spawn(move || {
            if let Some(mut stdin) = stdin {
                let _ = stdin.write_all(&input);
            }
        });
        let out = child.wait_with_output().map_err(GitError::Spawn)?;
        let _ = writer.join();
        if out.status.success() {
            Ok(out)
        } else {
            Err(GitError::failed(args, &out))
        }
    }

    /// Whether the folder is inside a git work tree. Err: git cannot be
    /// used at all (missing, too old), which is not "no".
    pub fn is_work_tree(&self) -> Result<bool, GitError> {
        match self.run(["rev-parse", "--is-inside-work-tree"]) {
            Ok(out) => Ok(out.stdout.starts_with(b"true")),
            Err(GitError::Failed { .. }) => Ok(false),
            Err(err) => Err(err),
        }
    }

    /// The commit id `rev` names, or `None` when it names no commit.
    pub fn resolve_commit(&self, rev: &str) -> Result<Option<String>, GitError> {
        let spec = format!("{rev}^{{commit}}");
        match self.run([
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &spec,
        ]) {
            Ok(out) => Ok(Some(
                String::from_utf8_lossy(&out.stdout).trim().to_string(),
            )),
            Err(GitError::Failed { .. }) => Ok(None),
            Err(err) => Err(err),
        }
    }

    /// The command for `git ARGS`: the version checked, the environment
    /// cleaned, then referee's own variables and config applied.
    fn command<S: AsRef<OsStr>>(&self, args: &[S]) -> Result<Command, GitError> {
        check_version()?;
        let mut cmd = Command::new("git");
        for name in REDIRECTING {
            cmd.env_remove(name);
        }
        for (name, value) in self.env {
            cmd.env(name, value);
        }
        cmd.args(NO_PROGRAMS).args(args).current_dir(self.repo);
        Ok(cmd)
    }
}

/// Whether `dir` is inside a git work tree: [`Git::is_work_tree`].
pub fn is_work_tree(dir: &Path) -> Result<bool, GitError> {
    Git::at(dir).is_work_tree()
}

/// The commit id `rev` names in `repo`: [`Git::resolve_commit`].
pub fn resolve_commit(repo: &Path, rev: &str) -> Result<Option<String>, GitError> {
    Git::at(repo).resolve_commit(rev)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_as_git_prints_them() {
        let cases: &[(&str, Option<Version>)] = &[
            ("git version 2.47.3\n", Some(Version(2, 47, 3))),
            (
                "git version 2.39.5 (Apple Git-154)\n",
                Some(Version(2, 39, 5)),
            ),
            ("git version 2.50.0.windows.1\n", Some(Version(2, 50, 0))),
            ("git version 2.45.0-rc1", Some(Version(2, 45, 0))),
            ("git version 2.30", Some(Version(2, 30, 0))),
            ("git version 1.8.3.1", Some(Version(1, 8, 3))),
            ("git version 10.0.0", Some(Version(10, 0, 0))),
            ("git version ", None),
            ("git version x.y.z", None),
            ("git version 2", None),
            ("hub version 2.47.3", None),
            ("", None),
        ];
        for (text, want) in cases {
            assert_eq!(Version::parse(text), *want, "{text:?}");
        }
    }

    #[test]
    fn the_minimum_refuses_older_gits_only() {
        let read = |t: &str| Version::parse(t).expect("a version");
        assert!(read("git version 2.29.9") < MIN_VERSION);
        assert!(read("git version 1.99.0") < MIN_VERSION);
        assert!(read("git version 2.30.0") >= MIN_VERSION);
        assert!(read("git version 2.39.5 (Apple Git-154)") >= MIN_VERSION);
        assert!(read("git version 3.0.0") >= MIN_VERSION);
    }

    #[test]
    fn a_too_old_git_is_named_with_the_minimum_and_a_hint() {
        let err = GitError::TooOld {
            found: Version(2, 25, 1),
            minimum: MIN_VERSION,
        };
        assert_eq!(
            err.to_string(),
            "git 2.25.1 is older than 2.30.0, the oldest referee supports\n\
             hint: install a newer git (https://git-scm.com/downloads) and put it first on PATH"
        );
    }
}
