//! The anchor: each loop's authority, kept in a per-user state folder outside
//! every work tree (SPEC §8.2), where the writer agent's edits to the
//! repository and `.referee/` cannot reach it. Does I/O.
//!
//! ```text
//! $REFEREE_STATE_DIR (or $XDG_STATE_HOME/referee, ~/.local/state/referee)
//!   states/<name>-<id>/          one per `.referee/` folder (id: its path's sha256)
//!     at                         that folder's path, for a person reading this
//!     loops/<loop>/              one per loop
//!       key                      the loop's row MAC key (hex, 0600)
//!       chain                    one line per committed row: number, hash, MAC
//!       pending                  the row being appended, until it is committed
//!       run.lock                 held by the loop's driver, naming it
//!       agents                   the agent processes a driver started or serves
//!       ...                      what else a loop pins (snapshot cache, files)
//!     frozen.json                the files snapshots take from a loop's base,
//!                                 by the install that wrote them (`pins.rs`)
//!     hooks/<agent>.json         what `hook install` did, for `hook uninstall`
//! ```
//!
//! A loop with no folder here was started on another machine (a CI runner,
//! a teammate's clone) or by an older referee: it is *unanchored*, said so,
//! and anchored from its current rows the first time this machine drives it.

use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::statefs::{self, FsError, shown};

pub mod authority;
pub mod chain;
pub mod holder;
pub mod pins;
pub mod run_lock;

/// Why the anchor could not be used.
#[derive(Debug, thiserror::Error)]
pub enum AnchorError {
    #[error(
        "no per-user state folder: neither `REFEREE_STATE_DIR`, `XDG_STATE_HOME` nor `HOME` is set"
    )]
    NoHome,
    #[error(
        "the state folder `{}` is inside the work tree `{}`, where the writer agent can reach it",
        shown(root),
        shown(repo)
    )]
    InsideRepo { root: PathBuf, repo: PathBuf },
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error("`{}`: {what}", shown(path))]
    Bad { path: PathBuf, what: String },
    /// `sha256` and `pinned` are the first 12 digits of each.
    #[error(
        "`{}`: changed since `referee init` wrote it (sha256 `{sha256}`, pinned `{pinned}`), and only a person changes a contract",
        shown(path)
    )]
    ContractChanged {
        path: PathBuf,
        sha256: String,
        pinned: String,
    },
}

impl AnchorError {
    /// What to do next, if there is an obvious step.
    pub fn hint(&self) -> Option<String> {
        match self {
            AnchorError::NoHome => {
                Some("set `REFEREE_STATE_DIR` to a folder outside every work tree".into())
            }
            AnchorError::InsideRepo { .. } => {
                Some("set `REFEREE_STATE_DIR` to a folder outside the repository".into())
            }
            AnchorError::Fs(err) => err.hint(),
            AnchorError::Bad { .. } => None,
            AnchorError::ContractChanged { path, .. } => Some(format!(
                "if you made the change, pin it with `referee init --from {} --force`",
                shown(path)
            )),
        }
    }
}

/// Where the per-user state folder is.
pub fn state_root() -> Result<PathBuf, AnchorError> {
    let absolute = |v: std::ffi::OsString| {
        let p = PathBuf::from(v);
        match p.is_absolute() {
            true => Some(p),
            false => std::env::current_dir().ok().map(|cwd| cwd.join(p)),
        }
    };
    if let Some(dir) = std::env::var_os("REFEREE_STATE_DIR").filter(|v| !v.is_empty()) {
        return absolute(dir).ok_or(AnchorError::NoHome);
    }
    if let Some(dir) = std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()) {
        // The XDG spec says a relative value is to be ignored.
        let dir = PathBuf::from(dir);
        if dir.is_absolute() {
            return Ok(dir.join("referee"));
        }
    }
    let home = std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .ok_or(AnchorError::NoHome)?;
    Ok(PathBuf::from(home).join(".local/state/referee"))
}

/// One loop's anchor: its folder in the per-user state folder.
#[derive(Debug, Clone)]
pub struct Anchor {
    /// The per-user state folder (trusted: the person's).
    root: PathBuf,
    /// The loop's folder below it.
    dir: PathBuf,
    /// The work tree it anchors a loop of.
    repo: PathBuf,
    /// The state folder (`.referee/`) whose loop it anchors.
    state_dir: PathBuf,
}

impl Anchor {
    /// The anchor of loop `name` of the state folder (a
    /// `.referee/`, `state_dir`) of the work tree `repo`. Touches nothing.
    pub fn of(repo: &Path, state_dir: &Path, name: &str) -> Result<Anchor, AnchorError> {
        let (root, folder, canon) = state_folder(state_dir)?;
        Ok(Anchor {
            root,
            dir: folder.join("loops").join(name),
            repo: repo.to_path_buf(),
            state_dir: canon,
        })
    }

    /// The loop's folder in the per-user state folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether this machine anchors the loop (it has its key).
    pub fn exists(&self) -> bool {
        std::fs::symlink_metadata(self.dir.join("key")).is_ok_and(|m| m.is_file())
    }

    /// Makes the loop's folder and its key, if missing, and names the state
    /// folder it anchors beside it, for a person.
    pub fn create(&self) -> Result<(), AnchorError> {
        let at = &self.state_dir;
        refuse_inside(&self.root, &self.repo)?;
        self.create_dirs()?;
        if let Some(state_dir) = self.dir.parent().and_then(Path::parent) {
            let at_file = state_dir.join("at");
            if std::fs::symlink_metadata(&at_file).is_err() {
                let shown = format!("{}\n", at.display());
                statefs::replace(&self.root, &at_file, shown.as_bytes())?;
            }
        }
        let key = self.dir.join("key");
        if statefs::check(&self.root, &key)?.is_none() {
            let mut bytes = [0u8; 32];
            random(&mut bytes).map_err(|e| AnchorError::Bad {
                path: PathBuf::from("/dev/urandom"),
                what: format!("cannot read: {e}"),
            })?;
            let tmp = self.dir.join(format!(".key.tmp-{}", std::process::id()));
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(nix::libc::O_NOFOLLOW)
                .open(&tmp)
                .map_err(|cause| FsError::Io {
                    action: "create",
                    path: tmp.clone(),
                    cause,
                })?;
            let written = file
                .write_all(format!("{}\n", crate::digest::hex(&bytes)).as_bytes())
                .and_then(|()| file.sync_all())
                // Two processes making the key at once: the first one stays.
                .and_then(|()| {
                    std::fs::hard_link(&tmp, &key).or_else(|e| match e.kind() {
                        std::io::ErrorKind::AlreadyExists => Ok(()),
                        _ => Err(e),
                    })
                });
            let _ = std::fs::remove_file(&tmp);
            written.map_err(|cause| FsError::Io {
                action: "write",
                path: key.clone(),
                cause,
            })?;
        }
        Ok(())
    }

    /// The loop's MAC key, when this machine anchors the loop.
    pub fn key(&self) -> Result<Option<[u8; 32]>, AnchorError> {
        let path = self.dir.join("key");
        let Some(bytes) = statefs::read(&self.root, &path)? else {
            return Ok(None);
        };
        let text = String::from_utf8_lossy(&bytes);
        parse_key(text.trim())
            .map(Some)
            .ok_or_else(|| AnchorError::Bad {
                path,
                what: "is not a key referee wrote (64 hex digits)".into(),
            })
    }

    /// The folders down to the loop's, private to the person (0700).
    fn create_dirs(&self) -> Result<(), AnchorError> {
        private_dir(&self.root, &self.dir)
    }

    /// Pins the contract's bytes (their sha256) as `init` wrote them: the
    /// Stop hook refuses a contract changed since, so a writer cannot
    /// rewrite the reviewer before round 1 pins it. (`run` needs no such
    /// pin: it reads the contract before its writer starts, and the ledger
    /// pins those bytes.)
    pub fn pin_contract(&self, sha256: &str) -> Result<(), AnchorError> {
        self.create()?;
        statefs::replace(
            &self.root,
            &self.file("contract.sha256"),
            format!("{sha256}\n").as_bytes(),
        )?;
        Ok(())
    }

    /// Refuses a contract whose sha256 is not the one `init` pinned (no pin:
    /// a loop started elsewhere or by an older referee, nothing to hold).
    pub fn check_contract(&self, sha256: &str, path: &Path) -> Result<(), AnchorError> {
        let Some(bytes) = statefs::read(&self.root, &self.file("contract.sha256"))? else {
            return Ok(());
        };
        let pinned = String::from_utf8_lossy(&bytes).trim().to_string();
        if pinned == sha256 {
            return Ok(());
        }
        Err(AnchorError::ContractChanged {
            path: path.to_path_buf(),
            sha256: sha256.get(..12).unwrap_or(sha256).to_string(),
            pinned: pinned.get(..12).unwrap_or(&pinned).to_string(),
        })
    }

    /// A file of the loop's anchor folder.
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The per-user state folder, below which every anchor file is checked
    /// for links.
    pub fn base(&self) -> &Path {
        &self.root
    }
}

/// The per-user state folder, the folder in it that belongs to the state
/// folder `state_dir` (a `.referee/`: `states/<name>-<id>`, its id the
/// sha256 of its canonical path), and that canonical path. Touches nothing.
pub(crate) fn state_folder(state_dir: &Path) -> Result<(PathBuf, PathBuf, PathBuf), AnchorError> {
    let root = state_root()?;
    let canon = std::fs::canonicalize(state_dir).unwrap_or_else(|_| state_dir.to_path_buf());
    let id = crate::digest::sha256_hex(canon.as_os_str().as_encoded_bytes());
    let label: String = canon
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                true => c,
                false => '_',
            },
        )
        .take(40)
        .collect();
    let folder = root.join("states").join(format!("{label}-{}", &id[..16]));
    Ok((root, folder, canon))
}

/// Makes `dir` below the per-user state folder `root` with its folders,
/// private to the person (0700), and checks that no link is on the way.
pub(crate) fn private_dir(root: &Path, dir: &Path) -> Result<(), AnchorError> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true).mode(0o700);
    builder.create(dir).map_err(|cause| FsError::Io {
        action: "create",
        path: dir.to_path_buf(),
        cause,
    })?;
    statefs::check(root, dir)?;
    Ok(())
}

/// Refuses a per-user state folder `root` that lies inside `repo`.
pub(crate) fn refuse_inside(root: &Path, repo: &Path) -> Result<(), AnchorError> {
    let canon = |p: &Path| {
        // The folder may not exist yet: canonicalize its nearest parent.
        let mut at = p.to_path_buf();
        let mut rest = Vec::new();
        while std::fs::symlink_metadata(&at).is_err() {
            match (at.file_name().map(|n| n.to_os_string()), at.parent()) {
                (Some(name), Some(parent)) => {
                    rest.push(name);
                    at = parent.to_path_buf();
                }
                _ => break,
            }
        }
        let mut out = std::fs::canonicalize(&at).unwrap_or(at);
        out.extend(rest.iter().rev());
        out
    };
    let repo_canon = canon(repo);
    if canon(root).starts_with(&repo_canon) {
        return Err(AnchorError::InsideRepo {
            root: root.to_path_buf(),
            repo: repo.to_path_buf(),
        });
    }
    Ok(())
}

fn parse_key(text: &str) -> Option<[u8; 32]> {
    if text.len() != 64 {
        return None;
    }
    let mut key = [0u8; 32];
    for (i, byte) in key.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(key)
}

fn random(out: &mut [u8]) -> std::io::Result<()> {
    use std::io::Read as _;
    std::fs::File::open("/dev/urandom")?.read_exact(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_reads_back_as_its_bytes_and_nothing_else_does() {
        let hex = "00ff".repeat(16);
        let key = parse_key(&hex).expect("key");
        assert_eq!(key[0], 0);
        assert_eq!(key[1], 0xff);
        assert_eq!(parse_key(&hex[..62]), None);
        assert_eq!(parse_key(&format!("{}zz", &hex[..62])), None);
        assert_eq!(parse_key("é".repeat(32).as_str()), None);
    }
}
