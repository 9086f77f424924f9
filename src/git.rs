//! Runs the real `git` with an argv (never a shell string). Does I/O.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// The id of git's empty tree: the base of a repository with no commits yet.
pub const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

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
}

/// Runs `git ARGS` in `repo` with extra environment `env`; returns its output
/// when it exits 0.
pub fn run<I, S>(repo: &Path, args: I, env: &[(&str, &OsStr)]) -> Result<Output, GitError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let args: Vec<_> = args
        .into_iter()
        .map(|a| a.as_ref().to_os_string())
        .collect();
    let out = run_unchecked(repo, &args, env)?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(failed(&args, &out))
    }
}

/// Runs `git ARGS` like [`run`] but returns the output whatever the exit
/// status, for commands whose status is an answer (`rev-parse --verify`).
pub fn run_unchecked<S: AsRef<OsStr>>(
    repo: &Path,
    args: &[S],
    env: &[(&str, &OsStr)],
) -> Result<Output, GitError> {
    let mut cmd = Command::new("git");
    cmd.args(args).current_dir(repo).stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().map_err(GitError::Spawn)
}

/// Runs `git ARGS` in `repo` with `input` on its stdin; returns its output
/// when it exits 0. The input is written from a thread, so a git that
/// answers while it reads never deadlocks on a full pipe.
pub fn run_with_input(repo: &Path, args: &[&str], input: Vec<u8>) -> Result<Output, GitError> {
    run_with_input_env(repo, args, &[], input)
}

/// [`run_with_input`] with extra environment `env`.
pub fn run_with_input_env(
    repo: &Path,
    args: &[&str],
    env: &[(&str, &OsStr)],
    input: Vec<u8>,
) -> Result<Output, GitError> {
    use std::io::Write;
    let mut cmd = Command::new("git");
    cmd.args(args)
        .current_dir(repo)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
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
        Err(failed(args, &out))
    }
}

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

/// Whether `dir` is inside a git work tree.
pub fn is_work_tree(dir: &Path) -> bool {
    run(dir, ["rev-parse", "--is-inside-work-tree"], &[])
        .map(|o| o.stdout.starts_with(b"true"))
        .unwrap_or(false)
}

/// The commit id `rev` names, or `None` when it names no commit.
pub fn resolve_commit(repo: &Path, rev: &str) -> Result<Option<String>, GitError> {
    let spec = format!("{rev}^{{commit}}");
    match run(
        repo,
        [
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &spec,
        ],
        &[],
    ) {
        Ok(out) => Ok(Some(
            String::from_utf8_lossy(&out.stdout).trim().to_string(),
        )),
        Err(GitError::Failed { .. }) => Ok(None),
        Err(err) => Err(err),
    }
}
