//! Shared set-up: a temporary git repository with a fixed author, fixed dates
//! and no user or system git config, and a `referee` command pointed at it.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;

/// Environment that isolates git from the machine's config and fixes dates.
pub const GIT_ENV: &[(&str, &str)] = &[
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_AUTHOR_NAME", "Test Author"),
    ("GIT_AUTHOR_EMAIL", "author@example.com"),
    ("GIT_COMMITTER_NAME", "Test Author"),
    ("GIT_COMMITTER_EMAIL", "author@example.com"),
    ("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z"),
    ("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z"),
];

/// The clock referee reads in tests (see docs/ledger.md).
pub const NOW: &str = "2026-01-02T03:04:05Z";

/// A temporary git repository, removed on drop.
pub struct Repo {
    dir: tempfile::TempDir,
}

impl Repo {
    /// An empty repository (no commits).
    pub fn empty() -> Repo {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = Repo { dir };
        repo.git(&["init", "-q", "-b", "main"]);
        repo
    }

    /// A repository with one commit holding `README.md`.
    pub fn new() -> Repo {
        let repo = Repo::empty();
        repo.write("README.md", "hello\n");
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "-m", "initial"]);
        repo
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Keeps the repository on disk after the test, for a person to inspect.
    pub fn keep(self) -> PathBuf {
        self.dir.keep()
    }

    pub fn join(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn write(&self, rel: &str, text: &str) {
        let path = self.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(path, text).expect("write");
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.join(rel)).expect("read")
    }

    /// Runs git in the repository and returns its stdout; panics on failure.
    pub fn git(&self, args: &[&str]) -> String {
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
        String::from_utf8(out.stdout).expect("utf-8")
    }

    /// `referee` with its working folder in the repository and a fixed clock.
    pub fn referee(&self) -> assert_cmd::Command {
        assert_cmd::Command::from_std(self.referee_std())
    }

    /// The same as `referee`, as a std Command (for spawning many at once).
    pub fn referee_std(&self) -> Command {
        let mut cmd = Command::cargo_bin("referee").expect("binary");
        cmd.current_dir(self.path())
            .envs(GIT_ENV.iter().copied())
            .env("REFEREE_NOW", NOW)
            .env_remove("REFEREE_DIR")
            .env("NO_COLOR", "1");
        cmd
    }
}

/// Output as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
