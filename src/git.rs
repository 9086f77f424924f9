//! The one door to the real `git`: [`Git`] runs it with an argv (never a
//! shell string) in the repository referee means, whatever the caller's
//! environment or the repository's config says. Does I/O.
//!
//! Three things every command gets (docs/reliability.md, "Git hygiene"):
//!
//! - the variables that would send git to another repository, index or
//!   object store, or make it read pathspecs otherwise, are removed from
//!   its environment ([`REDIRECTING`]); referee's own deliberate ones (a
//!   temporary `GIT_INDEX_FILE`, a fixed identity) are set after that,
//!   through [`Git::env`];
//! - no program the repository's config names runs: no fsmonitor hook and no
//!   hook at all ([`NO_PROGRAMS`]), and no filter driver its own config
//!   defines ([`Git::listed_config`]);
//! - what git reads of the repository is what is there: no replace refs, no
//!   grafts, no commit-graph ([`NO_PROGRAMS`], [`UNREDIRECTED`]), and the
//!   settings that decide what a snapshot sees ([`PINNED`]) are the loop's
//!   pin, the person's, or git's defaults, never what the repository's
//!   config says since the loop started ([`pin_repository`]);
//! - git is at least [`MIN_VERSION`], checked once per process.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};

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
///
/// With them go the variables that change what a pathspec means (git(1),
/// "Other"): under `GIT_LITERAL_PATHSPECS` the `:(top)` every snapshot
/// names is a file called `:(top)`, and `git add` fails on every round.
const REDIRECTING: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_LITERAL_PATHSPECS",
    "GIT_GLOB_PATHSPECS",
    "GIT_NOGLOB_PATHSPECS",
    "GIT_ICASE_PATHSPECS",
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
///
/// With them go the settings that would let the writer's repository tell
/// git a commit or an index is other than it is: a commit-graph file in
/// `.git/objects/info/` gives each commit's tree and parents without
/// reading the commit, and a split or sparse index keeps part of a
/// snapshot's index outside the file referee owns.
const NO_PROGRAMS: &[&str] = &[
    "-c",
    "core.fsmonitor=",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "submodule.recurse=false",
    "-c",
    "core.commitGraph=false",
    "-c",
    "core.splitIndex=false",
    "-c",
    "index.sparse=false",
    "-c",
    "core.untrackedCache=false",
];

/// Variables every command gets: replace refs (`git replace`, in
/// `refs/replace/`) would let the writer make git read a round's snapshot
/// as another commit, and `.git/info/grafts` give a commit other parents.
/// Both are off, in every command (git(1), `GIT_NO_REPLACE_OBJECTS`,
/// `GIT_GRAFT_FILE`).
const UNREDIRECTED: &[(&str, &str)] = &[
    ("GIT_NO_REPLACE_OBJECTS", "1"),
    ("GIT_GRAFT_FILE", "/dev/null"),
];

/// Where a [`PINNED`] setting falls back to when neither the loop's pin nor
/// the person's config sets it.
#[derive(Debug, Clone, Copy)]
enum Fallback {
    /// git's default value.
    Value(&'static str),
    /// git's default file below `$XDG_CONFIG_HOME/git/` (or `~/.config/git/`).
    ConfigFile(&'static str),
}

/// The repository settings that decide what a snapshot holds and how its
/// patch reads (SPEC §8.3). The writer can edit `.git/config`: an excludes
/// or attributes file, `core.ignorecase` (a file differing by case is then
/// the tracked one), `core.fileMode` (no mode change is seen),
/// `core.trustctime`/`core.checkStat` (a forged modification time is
/// trusted), line-ending conversion, `core.bigFileThreshold` (every file
/// bigger than it diffs as binary), a sparse checkout. Each command gets
/// each of them with `-c`: the repository's value when the loop started
/// (its pin), else the person's (global, system, command line), else git's
/// default. Keys as `git config --list` prints them.
const PINNED: &[(&str, Fallback)] = &[
    ("core.excludesfile", Fallback::ConfigFile("ignore")),
    ("core.attributesfile", Fallback::ConfigFile("attributes")),
    ("core.ignorecase", Fallback::Value("false")),
    ("core.filemode", Fallback::Value("true")),
    ("core.symlinks", Fallback::Value("true")),
    ("core.trustctime", Fallback::Value("true")),
    ("core.checkstat", Fallback::Value("default")),
    ("core.autocrlf", Fallback::Value("false")),
    ("core.eol", Fallback::Value("native")),
    ("core.safecrlf", Fallback::Value("warn")),
    ("core.bigfilethreshold", Fallback::Value("512m")),
    ("core.sparsecheckout", Fallback::Value("false")),
    ("core.precomposeunicode", Fallback::Value("false")),
];

/// The repository values of [`PINNED`] settings a loop pinned, by work
/// tree top ([`pin_repository`]). A repository with no pin (a submodule, a
/// command outside a loop) gets the person's values or git's defaults.
static PINS: std::sync::LazyLock<Mutex<HashMap<PathBuf, BTreeMap<String, String>>>> =
    std::sync::LazyLock::new(Default::default);

/// Makes `pinned` (a loop's pin: the repository's values of the [`PINNED`]
/// settings when it started) the repository's values for every later git
/// command in `repo` in this process.
pub fn pin_repository(repo: &Path, pinned: &BTreeMap<String, String>) {
    if let Ok(mut pins) = PINS.lock() {
        pins.insert(repo.to_path_buf(), pinned.clone());
    }
}

/// The repository's own values (local and worktree config, with what they
/// include) of the [`PINNED`] settings now: what a loop pins when it starts.
pub fn repository_settings(repo: &Path) -> Result<BTreeMap<String, String>, GitError> {
    let listed = Git::at(repo).listed_config(true)?;
    Ok(listed
        .entries
        .iter()
        .filter(|e| !e.trusted && PINNED.iter().any(|(key, _)| *key == e.key))
        .map(|e| (e.key.clone(), e.value.clone()))
        .collect())
}

/// A git command that failed, with what it said.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cannot run `git`: {0}")]
    Spawn(std::io::Error),
    #[error("`git {args}` failed ({status}): {stderr}")]
    Failed {
        args: String,
        status: String,
        stderr: String,
    },
    #[error("git {found} is older than {minimum}, the oldest referee supports")]
    TooOld { found: Version, minimum: Version },
}

impl GitError {
    /// What to do next, if there is an obvious step.
    pub fn hint(&self) -> Option<String> {
        match self {
            GitError::Spawn(_) => Some("install git and make sure it is on PATH".into()),
            GitError::Failed { .. } => None,
            GitError::TooOld { .. } => Some(
                "install a newer git (https://git-scm.com/downloads) and put it first on PATH"
                    .into(),
            ),
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

/// The version check's answer, once per process.
static CHECKED: OnceLock<Result<(), Refused>> = OnceLock::new();

/// `git version`, started (the caller waits for it with [`version_of`]).
fn start_version() -> std::io::Result<std::process::Child> {
    let mut cmd = Command::new("git");
    cmd.arg("version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for name in REDIRECTING {
        cmd.env_remove(name);
    }
    crate::children::spawn(&mut cmd)
}

/// The check's answer from a `git version` started by [`start_version`]:
/// git runs and is at least [`MIN_VERSION`]. A version it cannot read is
/// let through: the command itself then says what is wrong, and an unusual
/// build is not refused on a guess.
fn version_of(started: std::io::Result<std::process::Child>) -> Result<(), Refused> {
    let out = started
        .and_then(|child| child.wait_with_output())
        .map_err(|err| Refused::Spawn(err.kind(), err.to_string()))?;
    match Version::parse(&String::from_utf8_lossy(&out.stdout)) {
        Some(found) if found < MIN_VERSION => Err(Refused::TooOld(found)),
        _ => Ok(()),
    }
}

/// Checks once per process that git runs and is at least [`MIN_VERSION`].
fn check_version() -> Result<(), GitError> {
    let checked = CHECKED.get_or_init(|| version_of(start_version()));
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

/// Where a work tree's repository keeps its files, as `git rev-parse` told
/// [`Git::toplevel`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// `--absolute-git-dir`: the work tree's own git folder (a linked
    /// worktree's, not the common one), where `--git-path index` points.
    pub git_dir: PathBuf,
    /// `--show-object-format`: `sha1` or `sha256`.
    pub object_format: String,
}

/// Why a folder is no git work tree: [`Git::not_a_work_tree`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotWorkTree {
    /// What git printed (empty when it only answered "false").
    pub git_said: String,
    /// What to do.
    pub hint: String,
}

impl NotWorkTree {
    /// `; git says: …` (or nothing), to follow "`DIR` is not inside a git
    /// work tree".
    pub fn said(&self) -> String {
        match self.git_said.is_empty() {
            true => String::new(),
            false => {
                let lines: Vec<String> = self
                    .git_said
                    .trim()
                    .lines()
                    .map(|l| match l.trim_end() {
                        "" => String::new(),
                        l => format!("  {l}"),
                    })
                    .collect();
                format!("; git says:\n{}", lines.join("\n"))
            }
        }
    }
}

/// Layouts by work tree top, for the rest of the process.
static LAYOUTS: std::sync::LazyLock<Mutex<HashMap<PathBuf, Layout>>> =
    std::sync::LazyLock::new(Default::default);

/// Git in one repository: every git command referee runs goes through it.
/// `Git::at(repo).run(["rev-parse", "HEAD"])`; with a variable referee sets
/// on purpose, `Git::at(repo).env(&[("GIT_INDEX_FILE", tmp)]).run(…)`.
#[derive(Debug, Clone, Copy)]
pub struct Git<'a> {
    repo: &'a Path,
    env: &'a [(&'a str, &'a OsStr)],
    own_index: bool,
}

impl<'a> Git<'a> {
    /// Git run in the folder `repo` (its top level, or any folder inside it).
    pub fn at(repo: &'a Path) -> Git<'a> {
        Git {
            repo,
            env: &[],
            own_index: false,
        }
    }

    /// The same git with `env` set in every command's environment, after
    /// the redirecting variables of the caller's were removed.
    pub fn env(self, env: &'a [(&'a str, &'a OsStr)]) -> Git<'a> {
        Git { env, ..self }
    }

    /// The same git on an index that is referee's own (a temporary one
    /// `GIT_INDEX_FILE` names, read by nothing but referee's git): written
    /// without its trailing hash (`index.skipHash`, git 2.40; older gits
    /// ignore the setting), so the commands that read and write it do not
    /// hash the whole file each time (a sixth of a round in a 20,000-file
    /// repository). Never for a split index, which keeps its hash.
    pub fn own_index(self) -> Git<'a> {
        Git {
            own_index: true,
            ..self
        }
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
        crate::children::output(&mut cmd).map_err(GitError::Spawn)
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
        let mut child = crate::children::spawn(&mut cmd).map_err(GitError::Spawn)?;
        let stdin = child.stdin.take();
        let writer = std::thread::Builder::new().spawn(move || {
            if let Some(mut stdin) = stdin {
                let _ = stdin.write_all(&input);
            }
        });
        let out = child.wait_with_output().map_err(GitError::Spawn)?;
        // No thread (a limit on processes): git got an empty stdin and
        // failed or did nothing; the limit is the error to tell.
        writer.map_err(GitError::Spawn)?.join().ok();
        if out.status.success() {
            Ok(out)
        } else {
            Err(GitError::failed(args, &out))
        }
    }

    /// The top of the work tree holding the folder, when it is in one. Its
    /// git folder and object format come with it and are kept for
    /// [`Git::layout`] (a snapshot needs them: one git process less).
    pub fn toplevel(&self) -> Option<PathBuf> {
        // `rev-parse` runs no program the repository names, filter or
        // other: it starts beside the process's first `git config` instead
        // of after it (one git start less to wait for). Its answer counts
        // only once git's version is accepted.
        //
        // It also answers for the version: `--path-format` is git 2.31's,
        // and an older git prints an option it does not know back as a
        // line of its own. Exactly the three answers, then, is a git newer
        // than the oldest referee supports, and `git version` (one process
        // more at every start) is asked only otherwise.
        let early = crate::children::spawn(
            self.unchecked_command()
                .args([
                    "rev-parse",
                    "--path-format=absolute",
                    "--show-toplevel",
                    "--absolute-git-dir",
                    "--show-object-format",
                ])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped()),
        );
        let planted = self.listed_config(false);
        let out = early.and_then(|child| child.wait_with_output()).ok();
        let text = out
            .filter(|out| out.status.success())
            .and_then(|out| String::from_utf8(out.stdout).ok());
        let answered = text
            .as_deref()
            .map(|t| t.trim_end_matches(['\n', '\r']).split('\n').count());
        if answered == Some(3) {
            let _ = CHECKED.set(Ok(()));
        }
        check_version().ok()?;
        planted.ok()?;
        let text = text?;
        let lines: Vec<&str> = text.trim_end_matches(['\n', '\r']).split('\n').collect();
        // A newline in the path makes the three lines ambiguous: then the
        // top is asked alone, as git prints it, and no layout is kept.
        let [top, git_dir, format] = lines[..] else {
            let out = self.run(["rev-parse", "--show-toplevel"]).ok()?;
            let text = String::from_utf8(out.stdout).ok()?;
            let top = text.trim_end_matches(['\n', '\r']);
            return (!top.is_empty()).then(|| PathBuf::from(top));
        };
        let top = PathBuf::from(Some(top.trim_end_matches('\r')).filter(|t| !t.is_empty())?);
        let (git_dir, format) = (
            git_dir.trim_end_matches('\r'),
            format.trim_end_matches('\r'),
        );
        if let Ok(mut known) = LAYOUTS.lock() {
            known.insert(
                top.clone(),
                Layout {
                    git_dir: PathBuf::from(git_dir),
                    object_format: format.to_string(),
                },
            );
        }
        Some(top)
    }

    /// The layout [`Git::toplevel`] found for this folder (a work tree's
    /// top), if it was asked in this process.
    pub fn layout(&self) -> Option<Layout> {
        LAYOUTS.lock().ok()?.get(self.repo).cloned()
    }

    /// The id of the linked worktree (`git worktree add`) this folder is
    /// in: the name of its git folder, `worktrees/<id>` in the common one.
    /// `None` in the main worktree. A linked worktree's git folder holds a
    /// `commondir` file (gitrepository-layout(5)); the main one does not.
    pub fn worktree_id(&self) -> Result<Option<OsString>, GitError> {
        let git_dir = match self.layout() {
            Some(known) => known.git_dir,
            None => {
                use std::os::unix::ffi::OsStrExt;
                let out = self.run(["rev-parse", "--absolute-git-dir"])?;
                let printed = out.stdout.strip_suffix(b"\n").unwrap_or(&out.stdout);
                PathBuf::from(OsStr::from_bytes(printed))
            }
        };
        if !git_dir.join("commondir").is_file() {
            return Ok(None);
        }
        Ok(git_dir.file_name().map(OsStr::to_os_string))
    }

    /// `None` when the folder is inside a git work tree; else why not, for
    /// a person: what git said and what to do. A repository another user
    /// owns is one git refuses ("dubious ownership", git 2.35.2): telling
    /// that person to run `git init` would be wrong, so git's words come
    /// first and the hint follows them. Err: git cannot be used at all.
    pub fn not_a_work_tree(&self) -> Result<Option<NotWorkTree>, GitError> {
        match self.run(["rev-parse", "--is-inside-work-tree"]) {
            Ok(out) if out.stdout.starts_with(b"true") => Ok(None),
            Ok(_) => Ok(Some(NotWorkTree {
                git_said: String::new(),
                hint: "run referee in the work tree, not in a bare repository or `.git` itself"
                    .to_string(),
            })),
            Err(GitError::Failed { stderr, .. }) => {
                // `safe.directory` is a config key: git prints it untranslated.
                let hint = match stderr.contains("safe.directory") {
                    true => {
                        "git refuses a repository another user owns: run the `git config` line git gives above as the user who runs referee, or run referee as the repository's owner"
                    }
                    false => "run `git init` first",
                };
                Ok(Some(NotWorkTree {
                    git_said: stderr,
                    hint: hint.to_string(),
                }))
            }
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
        let listed = self.listed_config(true)?;
        let pinned = PINS.lock().ok().and_then(|p| p.get(self.repo).cloned());
        let mut cmd = self.bare_command()?;
        cmd.args(&listed.filters)
            .args(pinned_settings(&listed.entries, pinned.as_ref()))
            .args(args);
        Ok(cmd)
    }

    /// `git` with the version checked, the environment cleaned, referee's
    /// variables and [`NO_PROGRAMS`], and no arguments yet.
    fn bare_command(&self) -> Result<Command, GitError> {
        check_version()?;
        Ok(self.unchecked_command())
    }

    /// [`Git::bare_command`] before the version is checked.
    fn unchecked_command(&self) -> Command {
        let mut cmd = Command::new("git");
        for name in REDIRECTING {
            cmd.env_remove(name);
        }
        for (name, value) in UNREDIRECTED {
            cmd.env(name, value);
        }
        for (name, value) in self.env {
            cmd.env(name, value);
        }
        cmd.args(NO_PROGRAMS).current_dir(self.repo);
        if self.own_index {
            cmd.args(["-c", "index.skipHash=true"]);
        }
        cmd
    }

    /// The config git reads in this repository, and the `-c` settings
    /// that undo what the repository's own config says of filter drivers
    /// (`.git/config`, the worktree config and what they
    /// include are the writer's to edit, as the fsmonitor and hooks settings
    /// are). Any git command that reads the work tree may run a driver's
    /// `clean` (`add`, and `write-tree` re-reading a racily clean file), so
    /// every command gets them. Each `clean`, `process` or `required` the
    /// repository sets takes the person's global, system or command-line
    /// value instead, or none (`required` false); drivers only those define
    /// (Git LFS as `git lfs install` sets it up) run as before. Where the
    /// repository sets a `process` and the person only a `clean`, the
    /// driver stays off: git reads an empty `process` as "no filter".
    ///
    /// These and the [`PINNED`] settings come from the config git reads in
    /// this repository, listed once per repository and process.
    /// `version`: the version is checked here (else the caller checks it
    /// before it trusts the answer).
    fn listed_config(&self, version: bool) -> Result<Listed, GitError> {
        static SEEN: OnceLock<Mutex<HashMap<PathBuf, Listed>>> = OnceLock::new();
        let seen = SEEN.get_or_init(Default::default);
        if let Some(listed) = seen.lock().ok().and_then(|s| s.get(self.repo).cloned()) {
            return Ok(listed);
        }
        // The process's first git command: `git version` runs beside this
        // one (which starts no program the repository names on any git),
        // and is answered before anything else runs.
        let started = (version && CHECKED.get().is_none()).then(start_version);
        let mut cmd = self.unchecked_command();
        cmd.args(["config", "--list", "--show-scope", "--includes", "-z"])
            .stdin(Stdio::null());
        let out = crate::children::output(&mut cmd);
        if let Some(started) = started {
            let _ = CHECKED.set(version_of(started));
        }
        if version {
            check_version()?;
        }
        let out = out.map_err(GitError::Spawn)?;
        // Exit 1 or more: nothing is configured anywhere (or no repository,
        // which the command itself then reports).
        let entries = match out.status.success() {
            true => config_entries(&out.stdout),
            false => Vec::new(),
        };
        let listed = Listed {
            filters: filter_overrides(&entries)?,
            entries,
        };
        if let Ok(mut seen) = seen.lock() {
            seen.insert(self.repo.to_path_buf(), listed.clone());
        }
        Ok(listed)
    }
}

/// What `git config --list --show-scope` said in one repository.
#[derive(Debug, Clone)]
struct Listed {
    entries: Vec<ConfigEntry>,
    /// The `-c` settings of [`Git::listed_config`].
    filters: Vec<OsString>,
}

/// One setting git reads, and whether it is the person's.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ConfigEntry {
    key: String,
    value: String,
    /// Global, system or command line: the person's. Else the repository's
    /// (local, worktree), which the writer can edit.
    trusted: bool,
}

/// The entries of `git config --show-scope -z` output
/// (`scope\0key\nvalue\0`…). A bare key (`ignorecase` with no `=`) means
/// true.
fn config_entries(listed: &[u8]) -> Vec<ConfigEntry> {
    let mut entries = Vec::new();
    let mut items = listed.split(|&b| b == 0);
    while let (Some(scope), Some(entry)) = (items.next(), items.next()) {
        let entry = String::from_utf8_lossy(entry);
        let (key, value) = entry.split_once('\n').unwrap_or((&entry, "true"));
        entries.push(ConfigEntry {
            key: key.to_string(),
            value: value.to_string(),
            trusted: matches!(scope, b"system" | b"global" | b"command"),
        });
    }
    entries
}

/// The `-c` settings that give each [`PINNED`] key its value: `pinned`'s
/// (the loop's pin), else the person's last one in `entries`, else the
/// fallback. With no pin, the repository's own value is never used.
fn pinned_settings(
    entries: &[ConfigEntry],
    pinned: Option<&BTreeMap<String, String>>,
) -> Vec<OsString> {
    let mut args = Vec::with_capacity(PINNED.len() * 2);
    for (key, fallback) in PINNED {
        let persons = entries
            .iter()
            .rev()
            .find(|e| e.trusted && e.key == *key)
            .map(|e| e.value.clone());
        let value = pinned
            .and_then(|p| p.get(*key).cloned())
            .or(persons)
            .unwrap_or_else(|| match fallback {
                Fallback::Value(value) => value.to_string(),
                Fallback::ConfigFile(name) => config_file(name),
            });
        args.push(OsString::from("-c"));
        args.push(OsString::from(format!("{key}={value}")));
    }
    args
}

/// git's default path of its per-user file `name` (`ignore`, `attributes`):
/// `$XDG_CONFIG_HOME/git/NAME`, or `~/.config/git/NAME`; empty (no file)
/// without a home.
fn config_file(name: &str) -> String {
    let base = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(xdg) => PathBuf::from(xdg),
        None => match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
            Some(home) => PathBuf::from(home).join(".config"),
            None => return String::new(),
        },
    };
    base.join("git").join(name).to_string_lossy().into_owned()
}

/// The `-c` settings for [`Git::listed_config`] from the config's entries.
fn filter_overrides(entries: &[ConfigEntry]) -> Result<Vec<OsString>, GitError> {
    let mut trusted: HashMap<&str, &str> = HashMap::new();
    // The keys the repository's config sets, each overridden on its own: an
    // empty `process` would also silence a trusted `clean`.
    let mut planted: BTreeSet<(&str, &str)> = BTreeSet::new();
    for entry in entries {
        let Some((driver, var)) = entry
            .key
            .strip_prefix("filter.")
            .and_then(|rest| rest.rsplit_once('.'))
        else {
            continue;
        };
        if !matches!(var, "clean" | "process" | "required") {
            continue;
        }
        match entry.trusted {
            true => {
                trusted.insert(&entry.key, &entry.value);
            }
            false => {
                planted.insert((driver, var));
            }
        }
    }
    let mut args = Vec::new();
    for (driver, var) in planted {
        // `-c` splits at the first `=`: such a driver cannot be turned off.
        if driver.contains('=') {
            return Err(GitError::Failed {
                args: "config --list".into(),
                status: "refused".into(),
                stderr: format!(
                    "the repository's config defines the filter driver `{driver}`, whose name referee cannot turn off (it holds `=`)"
                ),
            });
        }
        let key = format!("filter.{driver}.{var}");
        let value = trusted
            .get(key.as_str())
            .copied()
            .unwrap_or(if var == "required" { "false" } else { "" });
        args.push(OsString::from("-c"));
        args.push(OsString::from(format!("{key}={value}")));
    }
    Ok(args)
}

/// Why `dir` is no git work tree, if it is not: [`Git::not_a_work_tree`].
pub fn not_a_work_tree(dir: &Path) -> Result<Option<NotWorkTree>, GitError> {
    Git::at(dir).not_a_work_tree()
}

/// The commit id `rev` names in `repo`: [`Git::resolve_commit`].
pub fn resolve_commit(repo: &Path, rev: &str) -> Result<Option<String>, GitError> {
    Git::at(repo).resolve_commit(rev)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The top level comes with its layout; a newline in the path (which
    /// makes rev-parse's lines ambiguous) still gives the top, without one.
    #[test]
    fn the_top_level_is_found_with_its_layout_or_alone() {
        let base = tempfile::tempdir().expect("tempdir");
        for (name, kept) in [("plain", true), ("new\nline", false)] {
            let dir = base.path().join(name);
            std::fs::create_dir(&dir).expect("mkdir");
            let init = Command::new("git")
                .args(["init", "-q"])
                .current_dir(&dir)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .status()
                .expect("git init");
            assert!(init.success());
            let inner = dir.join("sub");
            std::fs::create_dir(&inner).expect("mkdir");
            let top = std::fs::canonicalize(&dir).expect("canonical");
            assert_eq!(Git::at(&inner).toplevel(), Some(top.clone()), "{name:?}");
            let layout = Git::at(&top).layout();
            assert_eq!(layout.is_some(), kept, "{name:?}");
            if let Some(layout) = layout {
                assert_eq!(layout.git_dir, top.join(".git"));
                assert_eq!(layout.object_format, "sha1");
            }
        }
    }

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
    fn the_repositorys_filter_settings_are_undone_and_the_persons_kept() {
        let listed = b"global\0filter.lfs.clean\ngit-lfs clean -- %f\0\
local\0filter.lfs.clean\nevil\0local\0filter.x.process\nevil\0\
local\0filter.x.required\0command\0filter.y.clean\ntr a-z A-Z\0";
        let args: Vec<String> = filter_overrides(&config_entries(listed))
            .unwrap()
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args,
            [
                "-c",
                "filter.lfs.clean=git-lfs clean -- %f",
                "-c",
                "filter.x.process=",
                "-c",
                "filter.x.required=false",
            ]
        );
        assert!(filter_overrides(&[]).unwrap().is_empty());
        let err =
            filter_overrides(&config_entries(b"local\0filter.a=b.clean\nevil\0")).unwrap_err();
        assert!(err.to_string().contains("`a=b`"), "{err}");
    }

    /// A pinned setting takes the pin's value, else the person's, else git's
    /// default; the repository's own value now is never used.
    #[test]
    fn pinned_settings_take_the_pin_then_the_persons_then_the_default() {
        let entries = config_entries(
            b"local\0core.filemode\nfalse\0local\0core.ignorecase\ntrue\0\
global\0core.autocrlf\ninput\0local\0core.autocrlf\nfalse\0local\0core.symlinks\0",
        );
        let pin: BTreeMap<String, String> = [("core.ignorecase".into(), "true".into())].into();
        let set = |pinned: Option<&BTreeMap<String, String>>| -> Vec<String> {
            pinned_settings(&entries, pinned)
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .filter(|a| a != "-c")
                .collect()
        };
        let with_pin = set(Some(&pin));
        for want in [
            "core.filemode=true",
            "core.ignorecase=true",
            "core.autocrlf=input",
            "core.symlinks=true",
        ] {
            assert!(with_pin.iter().any(|a| a == want), "{want}: {with_pin:?}");
        }
        let without = set(None);
        assert!(
            without.iter().any(|a| a == "core.ignorecase=false"),
            "{without:?}"
        );
        assert_eq!(without.len(), PINNED.len());
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
            "git 2.25.1 is older than 2.30.0, the oldest referee supports"
        );
        assert_eq!(
            err.hint().as_deref(),
            Some("install a newer git (https://git-scm.com/downloads) and put it first on PATH")
        );
    }
}
