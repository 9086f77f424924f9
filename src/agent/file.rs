//! Files the referee and an agent share: the prompt, patch and findings the
//! referee writes into the round's scratch folder, and the output file or
//! JUnit report it reads back. An agent may have put anything at those paths,
//! so they are written fresh (by the scratch folder, `cmd/scratch.rs`, never
//! through a symlink or FIFO left there) and read back here only when they
//! are a regular file of their own: a FIFO
//! would block the referee, a symlink or hard link would copy another file's
//! bytes into evidence. Does I/O.

use std::fs::{Metadata, OpenOptions};
use std::io::{ErrorKind, Read};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::time::{Duration, SystemTime};

/// Neither follows a symlink in the last component nor waits for a FIFO's
/// other end.
const FLAGS: i32 = nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK;

/// Why a shared file was refused.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("`{path}` is {what}, not a regular file")]
    NotRegular { path: String, what: &'static str },
    #[error("`{path}` has {links} hard links: it may be another file's bytes")]
    Linked { path: String, links: u64 },
    #[error("`{path}` is larger than {}", size(*.cap))]
    TooLarge { path: String, cap: usize },
    #[error("cannot read `{path}`: {cause}")]
    Read { path: String, cause: std::io::Error },
}

/// The bytes of the file at `path`, up to `cap`; `None` if there is none, or
/// if `fresh_since` is given and the file is older (a report from an earlier
/// run). Anything but a regular file with a single link is refused.
pub fn read_back(
    path: &Path,
    cap: usize,
    fresh_since: Option<SystemTime>,
) -> Result<Option<Vec<u8>>, FileError> {
    let shown = || path.display().to_string();
    let file = match OpenOptions::new().read(true).custom_flags(FLAGS).open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(cause) => {
            return Err(refused(path).unwrap_or(FileError::Read {
                path: shown(),
                cause,
            }));
        }
    };
    // The opened file itself: what the path names now may differ.
    let meta = file.metadata().map_err(|cause| FileError::Read {
        path: shown(),
        cause,
    })?;
    if let Some(what) = not_regular(&meta) {
        return Err(FileError::NotRegular {
            path: shown(),
            what,
        });
    }
    if meta.nlink() > 1 {
        return Err(FileError::Linked {
            path: shown(),
            links: meta.nlink(),
        });
    }
    if let Some(since) = fresh_since {
        let fresh = meta
            .modified()
            .is_ok_and(|t| t + Duration::from_secs(1) >= since);
        if !fresh {
            return Ok(None);
        }
    }
    if meta.len() > cap as u64 {
        return Err(FileError::TooLarge { path: shown(), cap });
    }
    let mut bytes = Vec::new();
    // The file may grow after the fstat: read one byte past the cap to see.
    file.take(cap as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|cause| FileError::Read {
            path: shown(),
            cause,
        })?;
    if bytes.len() > cap {
        return Err(FileError::TooLarge { path: shown(), cap });
    }
    Ok(Some(bytes))
}

/// `32 MiB`, `64 bytes`.
fn size(bytes: usize) -> String {
    if bytes >= 1024 * 1024 && bytes.is_multiple_of(1024 * 1024) {
        format!("{} MiB", bytes / 1024 / 1024)
    } else {
        format!("{bytes} bytes")
    }
}

/// What is at `path` when it is not a regular file, as an error.
fn refused(path: &Path) -> Option<FileError> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    let what = not_regular(&meta)?;
    Some(FileError::NotRegular {
        path: path.display().to_string(),
        what,
    })
}

fn not_regular(meta: &Metadata) -> Option<&'static str> {
    crate::statefs::kind_name(meta)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAP: usize = 64;

    fn dir() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    fn mkfifo(path: &Path) {
        let made = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap();
        assert!(made.success());
    }

    fn refusal(path: &Path) -> String {
        read_back(path, CAP, None).unwrap_err().to_string()
    }

    #[test]
    fn a_regular_file_is_read_and_a_missing_one_is_none() {
        let d = dir();
        let path = d.path().join("output");
        assert_eq!(read_back(&path, CAP, None).unwrap(), None);
        std::fs::write(&path, "findings").unwrap();
        assert_eq!(
            read_back(&path, CAP, None).unwrap(),
            Some(b"findings".to_vec())
        );
    }

    #[test]
    fn a_fifo_is_refused_at_once() {
        let d = dir();
        let path = d.path().join("output");
        mkfifo(&path);
        assert_eq!(
            refusal(&path),
            format!("`{}` is a fifo, not a regular file", path.display())
        );
    }

    #[test]
    fn a_symlink_is_refused_not_followed() {
        let d = dir();
        let target = d.path().join("secret");
        std::fs::write(&target, "secret").unwrap();
        let path = d.path().join("output");
        std::os::unix::fs::symlink(&target, &path).unwrap();
        assert_eq!(
            refusal(&path),
            format!(
                "`{}` is a symbolic link, not a regular file",
                path.display()
            )
        );
    }

    #[test]
    fn a_hard_link_a_directory_and_an_oversized_file_are_refused() {
        let d = dir();
        let target = d.path().join("secret");
        std::fs::write(&target, "secret").unwrap();
        let path = d.path().join("output");
        std::fs::hard_link(&target, &path).unwrap();
        assert_eq!(
            refusal(&path),
            format!(
                "`{}` has 2 hard links: it may be another file's bytes",
                path.display()
            )
        );
        assert_eq!(
            refusal(d.path()),
            format!(
                "`{}` is a directory, not a regular file",
                d.path().display()
            )
        );
        std::fs::write(&target, vec![b'x'; CAP + 1]).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(
            refusal(&target),
            format!("`{}` is larger than 64 bytes", target.display())
        );
    }

    #[test]
    fn a_stale_report_is_none() {
        let d = dir();
        let path = d.path().join("junit.xml");
        std::fs::write(&path, "<testsuite/>").unwrap();
        let later = SystemTime::now() + Duration::from_secs(60);
        assert_eq!(read_back(&path, CAP, Some(later)).unwrap(), None);
        assert!(
            read_back(&path, CAP, Some(SystemTime::now()))
                .unwrap()
                .is_some()
        );
    }
}
