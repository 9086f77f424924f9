//! A loop's pin: what its snapshots hold as it was when the loop started
//! (SPEC §8.3), kept in the loop's anchor folder outside the work tree,
//! where the writer cannot edit it. Does I/O (reads the repository, reads
//! and writes the pin file).
//!
//! - the repository's values of the settings `git.rs` pins (`PINNED`):
//!   every later git command gets them, never what `.git/config` says now;
//! - the sha256 of `.git/info/exclude` and `.git/info/attributes`, which
//!   git reads whatever it is told: a round is refused while either differs;
//! - the text of each `.gitignore` git read: a path that a rule not in
//!   them ignores is snapshotted all the same.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::SnapshotError;
use crate::git::Git;

/// The pin file's version.
const VERSION: u32 = 1;

/// The files below the git folder that git reads with no setting to turn
/// them off, as the pin and messages name them.
const INFO_FILES: [&str; 2] = [".git/info/exclude", ".git/info/attributes"];

/// The largest `.gitignore` the pin keeps the text of; a larger one's
/// rules count as new.
const IGNORE_MAX: u64 = 1 << 20;

/// What a loop's snapshots hold fixed from its start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pin {
    pub version: u32,
    /// The repository's own values of the pinned settings.
    pub config: BTreeMap<String, String>,
    /// sha256 of each of [`INFO_FILES`], `absent` when missing.
    pub info: BTreeMap<String, String>,
    /// Each `.gitignore` git read, by repo-relative path: its text.
    pub ignores: BTreeMap<String, String>,
}

impl Pin {
    /// The repository as it is now.
    pub fn take(repo: &Path) -> Result<Pin, SnapshotError> {
        let config = crate::git::repository_settings(repo)?;
        // The ignore files are listed with the settings just read, not
        // with none (which would leave out `core.excludesFile`).
        crate::git::pin_repository(repo, &config);
        Ok(Pin {
            version: VERSION,
            config,
            info: info_files(repo)?,
            ignores: ignore_files(repo)?,
        })
    }

    /// Refuses a `.git/info/` file that differs from the pin.
    pub fn check_info(&self, repo: &Path) -> Result<(), SnapshotError> {
        let now = info_files(repo)?;
        for file in INFO_FILES {
            let (then, current) = (self.info.get(file), now.get(file));
            if let (Some(then), Some(current)) = (then, current)
                && then != current
            {
                return Err(SnapshotError::InfoChanged {
                    file,
                    then: short(then),
                    now: short(current),
                });
            }
        }
        Ok(())
    }

    /// Whether `pattern` of the ignore file `source` (as `git check-ignore
    /// -v` names them) was a rule when the loop started: the file was
    /// there and held that line.
    pub fn had_rule(&self, source: &str, pattern: &str) -> bool {
        self.ignores
            .get(source)
            .is_some_and(|text| text.lines().any(|line| line.trim_end() == pattern))
    }
}

fn short(sha: &str) -> String {
    sha.get(..12).unwrap_or(sha).to_string()
}

/// The sha256 of each of [`INFO_FILES`] (`absent`, or what stands there
/// instead of a file).
fn info_files(repo: &Path) -> Result<BTreeMap<String, String>, SnapshotError> {
    let out = Git::at(repo).run([
        "rev-parse",
        "--git-path",
        "info/exclude",
        "--git-path",
        "info/attributes",
    ])?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut info = BTreeMap::new();
    for (name, printed) in INFO_FILES.iter().zip(text.lines()) {
        let path = repo.join(printed);
        let sha = match crate::statefs::read_file(&path) {
            Ok(bytes) => crate::digest::sha256_hex(&bytes),
            Err(_) if std::fs::symlink_metadata(&path).is_err() => "absent".to_string(),
            Err(err) => format!("unreadable: {err}"),
        };
        info.insert((*name).to_string(), sha);
    }
    Ok(info)
}

/// The `.gitignore` files git reads in the work tree now, with their text:
/// tracked ones, untracked ones it does not ignore, and those that ignore
/// themselves (a folder whose `.gitignore` says `*`).
fn ignore_files(repo: &Path) -> Result<BTreeMap<String, String>, SnapshotError> {
    let git = Git::at(repo);
    let mut paths: Vec<Vec<u8>> = Vec::new();
    let listed = git.run([
        "ls-files",
        "-z",
        "--cached",
        "--others",
        "--exclude-standard",
        "--",
        ":(top,glob)**/.gitignore",
    ])?;
    paths.extend(listed.stdout.split(|&b| b == 0).map(<[u8]>::to_vec));
    let ignored = git.run([
        "ls-files",
        "-z",
        "--others",
        "--ignored",
        "--exclude-standard",
        "--directory",
        "--",
        ":(top)",
    ])?;
    paths.extend(
        ignored
            .stdout
            .split(|&b| b == 0)
            .filter(|p| p == b".gitignore" || p.ends_with(b"/.gitignore"))
            .map(<[u8]>::to_vec),
    );
    let mut ignores = BTreeMap::new();
    for path in paths.iter().filter(|p| !p.is_empty()) {
        let rel = String::from_utf8_lossy(path).into_owned();
        let full: PathBuf = repo.join(&rel);
        let small =
            std::fs::symlink_metadata(&full).is_ok_and(|m| m.is_file() && m.len() <= IGNORE_MAX);
        if !small {
            continue;
        }
        if let Ok(bytes) = crate::statefs::read_file(&full) {
            ignores.insert(rel, String::from_utf8_lossy(&bytes).into_owned());
        }
    }
    Ok(ignores)
}

/// A loop's own snapshot state, in its anchor folder (`snapshot/`): the
/// pin, and the index cache that spares a round re-reading every file.
#[derive(Debug, Clone)]
pub struct Own {
    /// The per-user state folder, below which no link is followed.
    root: PathBuf,
    /// The loop's `snapshot/` folder.
    dir: PathBuf,
    pub pin: Pin,
}

impl Own {
    /// The loop's snapshot state in `anchor`; a loop with no pin yet (one
    /// an older referee started) is pinned now. Its pinned settings are
    /// made the repository's for the rest of the process.
    pub fn open(repo: &Path, anchor: &crate::anchor::Anchor) -> Result<Own, SnapshotError> {
        let (root, dir) = folder(anchor)?;
        let file = dir.join("pin.json");
        let read = crate::statefs::read(&root, &file).map_err(|e| pin_error(&file, e))?;
        let pin = match read.map(|bytes| serde_json::from_slice::<Pin>(&bytes)) {
            Some(Ok(pin)) if pin.version == VERSION => pin,
            Some(_) => {
                return Err(SnapshotError::Pin {
                    path: file,
                    what: "is not a pin referee wrote".to_string(),
                });
            }
            None => return Own::start(repo, anchor),
        };
        crate::git::pin_repository(repo, &pin.config);
        Ok(Own { root, dir, pin })
    }

    /// A new pin of the repository as it is now, and no index cache: what
    /// `init` takes, before the writer has run.
    pub fn start(repo: &Path, anchor: &crate::anchor::Anchor) -> Result<Own, SnapshotError> {
        let (root, dir) = folder(anchor)?;
        let pin = Pin::take(repo)?;
        let file = dir.join("pin.json");
        let bytes = serde_json::to_vec_pretty(&pin).map_err(|e| SnapshotError::Pin {
            path: file.clone(),
            what: e.to_string(),
        })?;
        crate::statefs::replace(&root, &file, &bytes).map_err(|e| pin_error(&file, e))?;
        let cache = dir.join("index");
        if std::fs::symlink_metadata(&cache).is_ok() {
            std::fs::remove_file(&cache).map_err(|e| SnapshotError::Pin {
                path: cache.clone(),
                what: format!("cannot remove: {e}"),
            })?;
        }
        Ok(Own { root, dir, pin })
    }

    /// Snapshot state in the folder `dir`, pinning nothing: for tests.
    #[cfg(test)]
    pub(super) fn in_folder(dir: &Path) -> Own {
        Own {
            root: dir.parent().unwrap_or(dir).to_path_buf(),
            dir: dir.to_path_buf(),
            pin: Pin {
                version: VERSION,
                config: BTreeMap::new(),
                info: BTreeMap::new(),
                ignores: BTreeMap::new(),
            },
        }
    }

    /// The folder a loop's snapshots keep their temporary indexes in.
    pub(super) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The index cache of the main work tree, or of the submodule at `sub`.
    pub(super) fn cache(&self, sub: Option<&str>) -> PathBuf {
        match sub {
            None => self.dir.join("index"),
            Some(path) => {
                let id = crate::digest::sha256_hex(path.as_bytes());
                self.dir.join(format!("index-of-{}", &id[..16]))
            }
        }
    }

    /// Whether `cache` is a file referee may read (no link on the way).
    pub(super) fn usable(&self, cache: &Path) -> bool {
        matches!(crate::statefs::check(&self.root, cache), Ok(Some(meta)) if meta.is_file())
    }
}

/// The per-user state folder and the loop's `snapshot/` folder in it, made
/// private (0700) if missing.
fn folder(anchor: &crate::anchor::Anchor) -> Result<(PathBuf, PathBuf), SnapshotError> {
    use std::os::unix::fs::DirBuilderExt;
    let root = anchor.base().to_path_buf();
    let dir = anchor.dir().join("snapshot");
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .map_err(|e| SnapshotError::Pin {
            path: dir.clone(),
            what: format!("cannot create: {e}"),
        })?;
    crate::statefs::check(&root, &dir).map_err(|e| pin_error(&dir, e))?;
    Ok((root, dir))
}

fn pin_error(path: &Path, cause: crate::statefs::FsError) -> SnapshotError {
    SnapshotError::PinFs {
        path: path.to_path_buf(),
        cause,
    }
}
