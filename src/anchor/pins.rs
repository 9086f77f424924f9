//! What the per-user state folder keeps of one state folder (`.referee/`)
//! that belongs to no single loop (the loops it anchors are listed from
//! here, and the Stop hook keeps its incidents here too): which files snapshots take from a loop's base instead of the work
//! tree (the ones `hook install` and `skill install` wrote for the person),
//! and what `hook install` did, for `hook uninstall`. They live in the
//! per-user state folder beside the loops' anchors (SPEC §8.2), written only
//! by the installs a person runs: a freeze list planted under `.referee/`
//! hides nothing. Does I/O.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{AnchorError, state_folder};
use crate::statefs;

/// The file that holds the freeze lists, by the install that wrote them.
const FROZEN: &str = "frozen.json";

/// The pins folder of one state folder: `states/<name>-<id>/`.
#[derive(Debug, Clone)]
pub struct Pins {
    /// The per-user state folder (trusted: the person's).
    root: PathBuf,
    dir: PathBuf,
    repo: PathBuf,
    /// The state folder's canonical path, named in `at` for a person.
    state_dir: PathBuf,
}

/// `frozen.json`: each install's files, and each loop's input files inside
/// the work tree (`record --findings`, `--responses`), repo-relative.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Frozen {
    by: BTreeMap<String, Vec<String>>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    inputs: BTreeMap<String, Vec<String>>,
}

impl Pins {
    /// The pins of the state folder `state_dir` of the work tree `repo`.
    /// Touches nothing.
    pub fn of(repo: &Path, state_dir: &Path) -> Result<Pins, AnchorError> {
        let (root, dir, state_dir) = state_folder(state_dir)?;
        Ok(Pins {
            root,
            dir,
            repo: repo.to_path_buf(),
            state_dir,
        })
    }

    /// The loops anchored here (with a chain), sorted: a loop whose
    /// contract or ledger went missing from the work tree is still named.
    pub fn anchored_loops(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(self.dir.join("loops")) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|e| e.path().join("chain").is_file())
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        names.sort();
        names
    }

    /// The agent whose Stop hook a person installed here for loop `name`
    /// (installed without `--loop`: for every loop), if any: such a loop
    /// is driven by the hook, and only the hook records its rounds.
    pub fn hook_driving(&self, name: &str) -> Option<String> {
        for agent in ["claude", "codex"] {
            let Ok(Some(bytes)) =
                statefs::read(&self.root, &self.file(&format!("hooks/{agent}.json")))
            else {
                continue;
            };
            let Ok(record) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
                continue;
            };
            let command = record["command"].as_str().unwrap_or_default();
            let named = command.split_once(" --loop ").map(|(_, rest)| {
                rest.split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .trim_matches('\'')
                    .to_string()
            });
            if named.is_none_or(|n| n == name) {
                return Some(agent.to_string());
            }
        }
        None
    }

    /// The per-user state folder, below which every file is checked for links.
    pub fn base(&self) -> &Path {
        &self.root
    }

    /// A file of the folder (`rel` may name a subfolder).
    pub fn file(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// Makes the folder (0700) if missing, naming the state folder it serves
    /// in `at`.
    pub fn create(&self) -> Result<(), AnchorError> {
        super::refuse_inside(&self.root, &self.repo)?;
        super::private_dir(&self.root, &self.dir)?;
        let at = self.dir.join("at");
        if std::fs::symlink_metadata(&at).is_err() {
            let shown = format!("{}\n", self.state_dir.display());
            statefs::replace(&self.root, &at, shown.as_bytes())?;
        }
        Ok(())
    }

    /// The files loop `name`'s snapshots take from its base: every
    /// install's, and the loop's own input files (never another loop's: a
    /// `record` of one loop hides nothing from another's snapshots).
    pub fn frozen_for(&self, name: &str) -> Result<Vec<String>, AnchorError> {
        let mut frozen = self.read()?;
        let mut files: Vec<String> = frozen.by.into_values().flatten().collect();
        files.extend(frozen.inputs.remove(name).unwrap_or_default());
        files.sort();
        files.dedup();
        Ok(files)
    }

    /// Adds `files` to loop `name`'s input files; returns those it did not
    /// hold yet.
    pub fn add_inputs(&self, name: &str, files: &[String]) -> Result<Vec<String>, AnchorError> {
        let mut frozen = self.read()?;
        let held = frozen.inputs.entry(name.to_string()).or_default();
        let mut added: Vec<String> = files
            .iter()
            .filter(|f| plain(f) && !held.contains(f))
            .cloned()
            .collect();
        added.sort();
        added.dedup();
        if added.is_empty() {
            return Ok(added);
        }
        held.extend(added.iter().cloned());
        held.sort();
        self.write(&frozen)?;
        Ok(added)
    }

    /// Sets the files install `by` froze (none: it froze nothing now).
    pub fn set_frozen(&self, by: &str, files: &[String]) -> Result<(), AnchorError> {
        let mut frozen = self.read()?;
        let mut files: Vec<String> = files.iter().filter(|f| plain(f)).cloned().collect();
        files.sort();
        files.dedup();
        if files.is_empty() {
            if frozen.by.remove(by).is_none() {
                return Ok(());
            }
        } else {
            frozen.by.insert(by.to_string(), files);
        }
        self.write(&frozen)
    }

    fn write(&self, frozen: &Frozen) -> Result<(), AnchorError> {
        self.create()?;
        let bytes = serde_json::to_vec_pretty(frozen).map_err(|e| AnchorError::Bad {
            path: self.file(FROZEN),
            what: format!("cannot write: {e}"),
        })?;
        statefs::replace(&self.root, &self.file(FROZEN), &bytes)?;
        Ok(())
    }

    /// The files install `by` froze.
    pub fn frozen_by(&self, by: &str) -> Result<Vec<String>, AnchorError> {
        Ok(self.read()?.by.remove(by).unwrap_or_default())
    }

    fn read(&self) -> Result<Frozen, AnchorError> {
        let path = self.file(FROZEN);
        let Some(bytes) = statefs::read(&self.root, &path)? else {
            return Ok(Frozen::default());
        };
        let mut frozen: Frozen = serde_json::from_slice(&bytes).map_err(|e| AnchorError::Bad {
            path: path.clone(),
            what: format!("is not a freeze list referee wrote ({e})"),
        })?;
        for files in frozen.by.values_mut().chain(frozen.inputs.values_mut()) {
            files.retain(|f| plain(f));
        }
        Ok(frozen)
    }
}

/// A repo-relative path that stays inside the repository.
fn plain(path: &str) -> bool {
    !path.is_empty() && !path.starts_with('/') && !path.split('/').any(|p| p == "..")
}

#[cfg(test)]
mod tests {
    use super::plain;

    #[test]
    fn only_paths_inside_the_repository_are_pins() {
        assert!(plain(".claude/settings.json"));
        assert!(plain("AGENTS.md"));
        assert!(!plain("/etc/passwd"));
        assert!(!plain("src/../../x"));
        assert!(!plain(""));
    }
}
