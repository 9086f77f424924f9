//! The scratch folder of a `run` round, `<ledgers>/<loop>/.work-<pid>-round-<n>-<random>/`:
//! the files an agent call reads and writes (snapshots leave the state folder
//! out). A [`tempfile::TempDir`], removed when the round ends; one a killed `run` left is removed by
//! the next command that opens the loop once its pid is gone, and by the
//! next `run` of the loop in any case. Does I/O, never through a link.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::agent::preset::Files;
use crate::engine::Loop;
use crate::statefs;

const PREFIX: &str = ".work-";

/// The round's scratch folder, removed when dropped.
pub(super) struct WorkDir {
    dir: tempfile::TempDir,
    /// The store's ledgers folder: the base of the link checks.
    base: PathBuf,
}

impl WorkDir {
    pub(super) fn new(lp: &Loop, round: u32) -> anyhow::Result<WorkDir> {
        let parent = lp.store.loop_dir();
        // The loop's folder is checked (no link on the way from the store's
        // base); the scratch folder is then a new name in it (`mkdir`: never
        // an existing folder, nor a link an agent planted), with the pid
        // `clean` reads first and the mode `mkdir` gives by default.
        statefs::create_dir_all(lp.store.base(), parent)?;
        let dir = tempfile::Builder::new()
            .prefix(&format!("{PREFIX}{}-round-{round}-", std::process::id()))
            .permissions(std::fs::Permissions::from_mode(0o777))
            .tempdir_in(parent)
            .map_err(|err| {
                anyhow::anyhow!(
                    "cannot create a scratch folder in `{}`: {err}",
                    statefs::shown(parent)
                )
            })?;
        Ok(WorkDir {
            dir,
            base: lp.store.base().to_path_buf(),
        })
    }

    pub(super) fn files(&self) -> Files {
        files_in(self.dir.path())
    }

    /// Writes one of [`WorkDir::files`]. The agent of the previous call could
    /// write here too: a link or FIFO it left in a file's place is replaced.
    pub(super) fn write(&self, path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
        // Whatever an agent left at this path (a link, a FIFO) is removed
        // itself, never followed: referee writes its own files fresh.
        if std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_dir()) {
            let _ = std::fs::remove_file(path);
        }
        Ok(statefs::replace(&self.base, path, bytes)?)
    }
}

/// Removes the scratch folders a killed `run` of `lp` left: all of them when
/// `all` (the caller holds the loop's driver lock, so no run uses one), else
/// those whose run is gone. They hold prompts and findings; nothing there is
/// evidence. First it ends what that run's agent left running (the folder's
/// process record). Best effort: what cannot be removed now is tried next
/// time. Returns how many leftover processes were ended.
pub(super) fn clean(lp: &Loop, all: bool) -> usize {
    let dir = lp.store.loop_dir();
    // Only a real folder is listed: never one a link points to.
    if !matches!(statefs::check(lp.store.base(), dir), Ok(Some(meta)) if meta.is_dir()) {
        return 0;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut ended = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str().filter(|n| n.starts_with(PREFIX)) else {
            continue;
        };
        let stale = all
            || crate::leftover::pid_in(name, PREFIX)
                .is_some_and(|pid| pid != std::process::id() && crate::leftover::gone(pid));
        if stale {
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                ended +=
                    crate::agent::leftovers::sweep(&path.join(crate::agent::leftovers::RECORD));
            }
            // `remove_dir_all` removes a link itself, never its target.
            let _ = std::fs::remove_dir_all(path);
        }
    }
    ended
}

/// The files of a round's scratch folder `dir`.
pub(super) fn files_in(dir: &Path) -> Files {
    Files {
        prompt: dir.join("prompt.md"),
        patch: dir.join("patch.diff"),
        findings: dir.join("findings.json"),
        schema: dir.join("findings.schema.json"),
        output: dir.join("output"),
        procs: dir.join(crate::agent::leftovers::RECORD),
    }
}
