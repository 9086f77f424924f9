//! Where a repository's referee state lives (`.referee/`) and which loop a
//! command means. Does I/O: asks git for the repository's top and lists loops.

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::contract::LoopName;
use crate::exit::{UsageError, hinted};
use crate::statefs::{self, FsError};

/// Selects a loop; may be left out when exactly one loop exists.
#[derive(Debug, clap::Args, Clone, Default)]
pub struct LoopSelect {
    /// Loop name (may be left out when exactly one loop exists).
    #[arg(long = "loop", value_name = "LOOP")]
    pub name: Option<String>,
}

/// The state folder and the repository it belongs to.
#[derive(Debug, Clone)]
pub struct State {
    /// The `.referee/` folder (or `--dir`).
    pub root: PathBuf,
    /// The top of the git work tree (the current folder outside git).
    pub repo: PathBuf,
    /// Whether the user named the folder (`--dir`, `REFEREE_DIR`): then it
    /// may be a link, since they chose where it points.
    pub named: bool,
}

/// The git folder the work tree `top` names itself: its `.git` folder (or
/// the folder a `.git` link points at), or the one its `.git` file names
/// (a linked worktree, a submodule, `git init --separate-git-dir`). `None`
/// when it has neither: git was sent to it by `core.worktree` from a
/// repository elsewhere.
fn git_dir_at(top: &Path) -> Option<PathBuf> {
    let dot_git = top.join(".git");
    let meta = std::fs::metadata(&dot_git).ok()?;
    if meta.is_dir() {
        return Some(dot_git);
    }
    let text = std::fs::read_to_string(&dot_git).ok()?;
    let named = text
        .strip_prefix("gitdir: ")?
        .trim_end_matches(['\n', '\r']);
    Some(top.join(named))
}

impl State {
    /// Finds the state folder: `dir` if given, else `.referee/` at the top of
    /// the git work tree that holds the current folder. Refuses a layout
    /// with a link in it (see [`State::check`]).
    pub fn locate(dir: Option<&Path>) -> anyhow::Result<State> {
        let cwd = std::env::current_dir().context("cannot read the current folder")?;
        let repo = crate::git::Git::at(&cwd)
            .toplevel()
            .unwrap_or_else(|| cwd.clone());
        State::at(&cwd, repo, dir)
    }

    /// The state of `repo`, seen from `cwd`: `dir` (relative to `cwd`) or
    /// `.referee/` at the top of `repo`, refused when a link is in it.
    pub fn at(cwd: &Path, repo: PathBuf, dir: Option<&Path>) -> anyhow::Result<State> {
        // Git's work tree holds the folder it was asked from, unless the
        // repository's config moves it (`core.worktree`, which the writer
        // can set): then referee would snapshot another folder, and keep
        // its state there, while the work goes on here.
        let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let moved = !canon(cwd).starts_with(canon(&repo))
            || crate::git::Git::at(&repo).layout().is_some_and(|known| {
                git_dir_at(&repo).map(|d| canon(&d)) != Some(canon(&known.git_dir))
            });
        if moved {
            return Err(hinted(
                format!(
                    "git gives `{}` as the work tree of `{}`, not the folder its repository is in (`core.worktree` in the repository's config?); referee snapshots only that folder, and nothing was done",
                    repo.display(),
                    cwd.display()
                ),
                "`git config --get core.worktree` shows the setting; `git config --unset core.worktree` removes it",
            ));
        }
        let root = match dir {
            Some(dir) if dir.is_absolute() => dir.to_path_buf(),
            Some(dir) => cwd.join(dir),
            None => repo.join(".referee"),
        };
        let state = State {
            root,
            repo,
            named: dir.is_some(),
        };
        state.check()?;
        Ok(state)
    }

    /// The writer agent can write `.referee/` too: a link there would send
    /// referee's writes outside the repository. `.referee` itself must be a
    /// real folder unless the user named it, and `contracts/` and `ledgers/`
    /// always (the store checks everything below `ledgers/`).
    pub fn check(&self) -> Result<(), FsError> {
        if !self.named {
            statefs::check_dir(&self.root)?;
        }
        statefs::check_dir(&self.contracts_dir())?;
        statefs::check_dir(&self.ledgers_dir())?;
        Ok(())
    }

    /// Creates the state folder if it is missing.
    pub fn create(&self) -> anyhow::Result<()> {
        std::fs::create_dir_all(&self.root)
            .with_context(|| format!("cannot create `{}`", shown(&self.root)))?;
        Ok(self.check()?)
    }

    /// The state folder relative to the repository, when it lies inside it
    /// (snapshots leave it out).
    pub fn inside_repo(&self) -> Option<String> {
        let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let rel = self
            .root
            .strip_prefix(&self.repo)
            .map(Path::to_path_buf)
            .or_else(|_| {
                canon(&self.root)
                    .strip_prefix(canon(&self.repo))
                    .map(Path::to_path_buf)
            })
            .ok()?;
        let rel = rel.to_string_lossy().replace('\\', "/");
        (!rel.is_empty()).then_some(rel)
    }

    pub fn contracts_dir(&self) -> PathBuf {
        self.root.join("contracts")
    }

    pub fn ledgers_dir(&self) -> PathBuf {
        self.root.join("ledgers")
    }

    /// Every file and folder of loop `name`.
    pub fn paths(&self, name: &LoopName) -> LoopPaths {
        LoopPaths {
            contract: self.contracts_dir().join(format!("{name}.toml")),
            ledger: self.ledgers_dir().join(format!("{name}.csv")),
            dir: self.ledgers_dir().join(name.as_str()),
        }
    }

    /// Every loop with a contract, sorted by name.
    pub fn loops(&self) -> anyhow::Result<Vec<LoopName>> {
        let dir = self.contracts_dir();
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => {
                return Err(err).with_context(|| format!("cannot list `{}`", dir.display()));
            }
        };
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.with_context(|| format!("cannot list `{}`", dir.display()))?;
            let file_name = entry.file_name();
            let Some(stem) = file_name.to_str().and_then(|f| f.strip_suffix(".toml")) else {
                continue;
            };
            if let Ok(name) = LoopName::parse(stem) {
                names.push(name);
            }
        }
        names.sort();
        Ok(names)
    }

    /// The loop a command means: `--loop`, or the only loop there is.
    pub fn select(&self, select: &LoopSelect) -> anyhow::Result<LoopName> {
        if let Some(name) = &select.name {
            let name = LoopName::parse(name).map_err(|e| UsageError(e.to_string()))?;
            // A link is there too: loading it names it as one.
            if std::fs::symlink_metadata(self.paths(&name).contract).is_err() {
                let known = self.loops()?;
                let hint = if known.is_empty() {
                    "start one with `referee init --loop NAME`".to_string()
                } else {
                    format!("loops here: {}", join_names(&known))
                };
                return Err(hinted(
                    format!("no loop `{name}` in `{}`", self.contracts_dir().display()),
                    hint,
                ));
            }
            return Ok(name);
        }
        let mut loops = self.loops()?;
        let not_work_tree = match loops.is_empty() {
            true => crate::git::not_a_work_tree(&self.repo)?,
            false => None,
        };
        match (loops.len(), not_work_tree) {
            (1, _) => Ok(loops.remove(0)),
            (0, Some(why)) => Err(hinted(
                format!(
                    "no loop in `{}`, and `{}` is not inside a git work tree referee can use (it snapshots rounds with git){}",
                    self.root.display(),
                    shown(&self.repo),
                    why.said()
                ),
                why.hint,
            )),
            (0, None) => Err(hinted(
                format!("no loop in `{}`", self.root.display()),
                "start one with `referee init --loop NAME`",
            )),
            _ => Err(UsageError(format!(
                "{} loops exist ({}); name one with `--loop`",
                loops.len(),
                join_names(&loops)
            ))
            .into()),
        }
    }
}

fn join_names(names: &[LoopName]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub use crate::statefs::shown;

/// Every file and folder of one loop, under the state folder:
///
/// ```text
/// contracts/<loop>.toml          the contract
/// ledgers/<loop>.csv             the ledger (and its .lock beside it)
/// ledgers/<loop>/round-N/        each round's evidence
/// ledgers/<loop>/task.md         the task `run` was given
/// ledgers/<loop>/responses.json  the writer's answers for the Stop hook
/// ledgers/<loop>/failed/         a failed agent call's output
/// ledgers/<loop>/.work-…         a round's scratch folder while it runs
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopPaths {
    pub contract: PathBuf,
    pub ledger: PathBuf,
    /// The loop's folder: evidence and the files above.
    pub dir: PathBuf,
}

impl LoopPaths {
    pub fn task(&self) -> PathBuf {
        self.dir.join("task.md")
    }

    pub fn responses(&self) -> PathBuf {
        self.dir.join("responses.json")
    }

    /// Where a failed call of `role` in `round` keeps its output.
    pub fn failed(&self, round: u32, role: &str, stamp: &str) -> PathBuf {
        self.dir
            .join("failed")
            .join(format!("round-{round}-{role}-{stamp}"))
    }
}
