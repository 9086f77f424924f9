//! A snapshot's own temporary index: where it lives, how it starts as a
//! loop's index cache, and how it becomes the next one. Does I/O (files).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::{Own, SnapshotError};
use crate::git::Git;

/// The prefix of temporary index names; the pid of their process follows.
const TEMP_INDEX: &str = "referee-index-";

/// A temporary index older than this is stale even if a process with its
/// pid runs (pids are reused). Its last write (ctime; the copy keeps the
/// cache's mtime) is never that old while a snapshot uses it.
const TEMP_INDEX_MAX_AGE_SECS: i64 = 3600;

/// A new temporary index path, removed when dropped: in the loop's
/// snapshot folder (`own`), else in the git directory, where it shares the
/// file system (and so the rename semantics) of the real one. Those a
/// killed referee left beside it are removed first.
pub(super) fn temporary(
    repo: &Path,
    own: Option<&Own>,
) -> Result<tempfile::TempPath, SnapshotError> {
    let name = temp_index_name();
    let path = match own {
        Some(own) => own.dir().join(&name),
        None => match Git::at(repo).layout() {
            Some(known) => known.git_dir.join(&name),
            None => {
                let out = Git::at(repo).run(["rev-parse", "--git-path", &name])?;
                let printed = out.stdout.strip_suffix(b"\n").unwrap_or(&out.stdout);
                absolute(repo, printed)?
            }
        },
    };
    remove_stale(&path);
    tempfile::TempPath::try_from_path(&path).map_err(|source| SnapshotError::Path { path, source })
}

/// Makes `to` the index `from` (the loop's index cache) as it is now: a
/// second name for the same file (a hard link), else a copy. Git never
/// writes an index in place: it writes `<index>.lock` and renames it over
/// the name, so what git does to `to` replaces that name and leaves the
/// cache's file as it was. The link also keeps the index's modification
/// time, which git needs: it trusts an entry's stat data only when the
/// file is older than the index, and re-reads the "racily clean" ones; a
/// copy stamped now would hide a same-size edit made in the same clock
/// tick as the cache's last write, so the copy is stamped with the
/// original's time.
pub(super) fn start_from(from: &Path, to: &Path) -> Result<(), SnapshotError> {
    let copied = || -> std::io::Result<()> {
        if std::fs::hard_link(from, to).is_ok() {
            return Ok(());
        }
        let mut source = std::fs::File::open(from)?;
        let meta = source.metadata()?;
        let mut copy = std::fs::File::options()
            .write(true)
            .create_new(true)
            .open(to)?;
        std::io::copy(&mut source, &mut copy)?;
        copy.set_modified(meta.modified()?)
    };
    copied().map_err(|source| SnapshotError::CopyIndex {
        from: from.to_path_buf(),
        to: to.to_path_buf(),
        source,
    })
}

/// Makes the filled index `index` the loop's index cache `cache`: a second
/// name for it (or a copy), renamed over the cache's. Best effort: without
/// it, the next snapshot reads every file again.
pub(super) fn keep_as_cache(index: &Path, cache: &Path) {
    let Some(dir) = cache.parent() else {
        return;
    };
    let next = dir.join(format!("{}next", temp_index_name()));
    let made =
        std::fs::hard_link(index, &next).or_else(|_| std::fs::copy(index, &next).map(|_| ()));
    if made.is_ok() {
        let _ = std::fs::rename(&next, cache);
    }
    // Left when the rename did nothing: git wrote no new index, so the
    // name and the cache's are links to the same file.
    let _ = std::fs::remove_file(&next);
}

/// Removes the temporary indexes, and git's `.lock` files of them, that a
/// killed referee left beside `ours`: those whose process is gone, or that
/// are over an hour old. Best effort: a file that cannot be removed now is
/// tried again next time.
fn remove_stale(ours: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Some(dir) = ours.parent() else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| crate::leftover::pid_in(n, TEMP_INDEX))
        else {
            continue;
        };
        // This process's own (a submodule's snapshot under way) stay.
        if pid == std::process::id() {
            continue;
        }
        // The entry itself (`lstat`): a file or a link, never a folder's contents.
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        let old = now.saturating_sub(meta.ctime()) > TEMP_INDEX_MAX_AGE_SECS;
        if !meta.is_dir() && (old || crate::leftover::gone(pid)) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// A unique name for a temporary index.
fn temp_index_name() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "{TEMP_INDEX}{}-{}-{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// A path git printed (relative to `repo` unless absolute), made absolute:
/// git changes directory to the top level before it reads `GIT_INDEX_FILE`.
fn absolute(repo: &Path, printed: &[u8]) -> Result<PathBuf, SnapshotError> {
    use std::os::unix::ffi::OsStrExt;
    let joined = repo.join(OsStr::from_bytes(printed));
    std::path::absolute(&joined).map_err(|source| SnapshotError::Path {
        path: joined,
        source,
    })
}
