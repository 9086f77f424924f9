//! Files under the state folder, never through a link. The writer agent can
//! write anywhere in the work tree, `.referee/` included, so a link planted
//! there would send referee's writes (or reads) outside the repository. Every
//! path below a trusted folder is checked component by component (`lstat`):
//! each folder must be a real folder and nothing may be a symlink; files are
//! opened with `O_NOFOLLOW`, and new ones with `O_CREAT|O_EXCL`. Does I/O.
//!
//! The checks are made just before each open, not atomically with it: a
//! process that swaps a folder for a link in between can still win the race.
//! Referee's own agents are not running while it writes state, and `O_NOFOLLOW`
//! still guards the file itself.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

/// Why a path under the state folder was not opened.
#[derive(Debug, thiserror::Error)]
pub enum FsError {
    #[error(
        "`{}` is a symlink: referee never follows links under its state folder",
        shown(path)
    )]
    Link { path: PathBuf },
    #[error(
        "`{}` is not a folder: referee keeps its state in folders it made",
        shown(path)
    )]
    NotFolder { path: PathBuf },
    #[error(
        "`{}` has {links} hard links: referee never writes a file under its state folder that is also elsewhere",
        shown(path)
    )]
    HardLinked { path: PathBuf, links: u64 },
    #[error("`{}` is not a plain path below `{}`", shown(path), shown(base))]
    Outside { path: PathBuf, base: PathBuf },
    #[error(
        "`{}` is {what}, not a regular file: referee reads only files it wrote under its state folder",
        shown(path)
    )]
    NotFile { path: PathBuf, what: &'static str },
    #[error("cannot {action} `{}`: {cause}", shown(path))]
    Io {
        action: &'static str,
        path: PathBuf,
        cause: std::io::Error,
    },
}

impl FsError {
    /// What to do next, if there is an obvious step.
    pub fn hint(&self) -> Option<String> {
        match self {
            FsError::Link { .. } => {
                Some("remove it; to keep state elsewhere use `--dir` or `REFEREE_DIR`".into())
            }
            FsError::NotFolder { .. } | FsError::HardLinked { .. } | FsError::NotFile { .. } => {
                Some("remove it".into())
            }
            FsError::Outside { .. } | FsError::Io { .. } => None,
        }
    }
}

fn io<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> FsError + 'a {
    move |cause| FsError::Io {
        action,
        path: path.to_path_buf(),
        cause,
    }
}

/// `O_NOFOLLOW` refused the last component: it is a link.
fn is_link_error(err: &std::io::Error) -> bool {
    // Linux and macOS say ELOOP; FreeBSD says EMLINK.
    matches!(
        err.raw_os_error(),
        Some(nix::libc::ELOOP) | Some(nix::libc::EMLINK)
    )
}

fn open_error(action: &'static str, path: &Path, err: std::io::Error) -> FsError {
    if is_link_error(&err) {
        return FsError::Link {
            path: path.to_path_buf(),
        };
    }
    // Opening a socket says only ENXIO ("no such device or address"): name
    // what is there instead.
    if err.raw_os_error() == Some(nix::libc::ENXIO)
        && let Ok(meta) = std::fs::symlink_metadata(path)
        && let Some(what) = kind_name(&meta)
    {
        return FsError::NotFile {
            path: path.to_path_buf(),
            what,
        };
    }
    io(action, path)(err)
}

/// What `lstat` says of `path`: `None` when nothing is there.
fn lstat(path: &Path) -> Result<Option<Metadata>, FsError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => Ok(Some(meta)),
        Err(err) if err.kind() == ErrorKind::NotFound => Ok(None),
        Err(err) => Err(io("read", path)(err)),
    }
}

/// The paths from `base` (left out) down to `path` (included), one per
/// component. Only plain names may follow `base`: no `..`, no `.`.
fn steps(base: &Path, path: &Path) -> Result<Vec<PathBuf>, FsError> {
    let outside = || FsError::Outside {
        path: path.to_path_buf(),
        base: base.to_path_buf(),
    };
    let rel = path.strip_prefix(base).map_err(|_| outside())?;
    let mut at = base.to_path_buf();
    let mut out = Vec::new();
    for part in rel.components() {
        match part {
            Component::Normal(name) => {
                at.push(name);
                out.push(at.clone());
            }
            _ => return Err(outside()),
        }
    }
    Ok(out)
}

/// Refuses `dir` when it is a link or not a folder; `None` when it is absent.
fn real_dir(dir: &Path) -> Result<Option<Metadata>, FsError> {
    match lstat(dir)? {
        Some(meta) if meta.file_type().is_symlink() => Err(FsError::Link {
            path: dir.to_path_buf(),
        }),
        Some(meta) if !meta.is_dir() => Err(FsError::NotFolder {
            path: dir.to_path_buf(),
        }),
        found => Ok(found),
    }
}

/// Checks `dir` itself (not the folders above it): a real folder, or absent.
pub fn check_dir(dir: &Path) -> Result<bool, FsError> {
    Ok(real_dir(dir)?.is_some())
}

/// Checks every component below `base` down to `path`: the folders on the
/// way must be real folders, and `path` must not be a link. Returns what is
/// at `path`, `None` when it (or a folder above it) does not exist.
pub fn check(base: &Path, path: &Path) -> Result<Option<Metadata>, FsError> {
    let steps = steps(base, path)?;
    let Some((last, folders)) = steps.split_last() else {
        return lstat(base);
    };
    for dir in folders {
        if real_dir(dir)?.is_none() {
            return Ok(None);
        }
    }
    match lstat(last)? {
        Some(meta) if meta.file_type().is_symlink() => Err(FsError::Link { path: last.clone() }),
        found => Ok(found),
    }
}

/// Creates `dir` and the folders above it, below `base` (which must exist),
/// refusing a link or a file on the way.
pub fn create_dir_all(base: &Path, dir: &Path) -> Result<(), FsError> {
    for step in steps(base, dir)? {
        if real_dir(&step)?.is_some() {
            continue;
        }
        match std::fs::create_dir(&step) {
            Ok(()) => {}
            // Made by another process since the check: check what it is.
            Err(err) if err.kind() == ErrorKind::AlreadyExists => {
                if real_dir(&step)?.is_none() {
                    return Err(io("create", &step)(err));
                }
            }
            Err(err) => return Err(io("create", &step)(err)),
        }
    }
    Ok(())
}

/// Opens `path` for reading without following a link; `None` when absent.
pub fn open_read(base: &Path, path: &Path) -> Result<Option<File>, FsError> {
    if check(base, path)?.is_none() {
        return Ok(None);
    }
    match open_regular(path) {
        Ok(file) => Ok(Some(file)),
        Err(FsError::Io { cause, .. }) if cause.kind() == ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err),
    }
}

/// Opens `path` for reading if it is a regular file: never through a link,
/// and never a fifo, socket or device, whose open or read could block for
/// ever (a writer could plant one where referee reads its own files). The
/// open does not wait (`O_NONBLOCK`, which a regular file ignores); what
/// was opened is then checked.
fn open_regular(path: &Path) -> Result<File, FsError> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
        .map_err(|err| open_error("read", path, err))?;
    regular(file, path)
}

/// `file`, opened at `path`, if it is a regular file.
fn regular(file: File, path: &Path) -> Result<File, FsError> {
    let meta = file.metadata().map_err(io("open", path))?;
    match kind_name(&meta) {
        None => Ok(file),
        Some(what) => Err(FsError::NotFile {
            path: path.to_path_buf(),
            what,
        }),
    }
}

/// What `meta` describes when it is not a regular file (`a fifo`).
pub fn kind_name(meta: &Metadata) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    Some(if kind.is_file() {
        return None;
    } else if kind.is_symlink() {
        "a symbolic link"
    } else if kind.is_fifo() {
        "a fifo"
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else {
        "something else"
    })
}

/// Reads `path` whole without following a link; `None` when absent.
pub fn read(base: &Path, path: &Path) -> Result<Option<Vec<u8>>, FsError> {
    let Some(mut file) = open_read(base, path)? else {
        return Ok(None);
    };
    Ok(Some(read_all(&mut file, path)?))
}

/// Reads the file at `path`, refusing it if it is a link or not a regular
/// file (the folders above it are the caller's to check).
pub fn read_file(path: &Path) -> Result<Vec<u8>, FsError> {
    read_all(&mut open_regular(path)?, path)
}

/// The rest of `file`, in a buffer sized from its length (a large file is
/// not copied as the buffer grows).
fn read_all(file: &mut File, path: &Path) -> Result<Vec<u8>, FsError> {
    let len = file.metadata().map_or(0, |m| m.len());
    let mut bytes = Vec::with_capacity(capacity_for(len));
    file.read_to_end(&mut bytes).map_err(io("read", path))?;
    Ok(bytes)
}

/// A read buffer's first size for a file of `len` bytes: its length (and
/// one, to see the end), but never more than 256 MiB up front: a file that
/// claims a huge size (a sparse file a writer planted) grows the buffer as
/// it is really read instead of asking for all of it at once.
pub fn capacity_for(len: u64) -> usize {
    const MOST: u64 = 256 * 1024 * 1024;
    usize::try_from(len.min(MOST)).unwrap_or(0) + 1
}

/// The sha256 (hex) of the file at `path`, read a buffer at a time (a
/// 40 MB evidence file is never held), refused as [`read_file`] refuses.
pub fn sha256_file(path: &Path) -> Result<String, FsError> {
    use sha2::Digest as _;
    let mut file = open_regular(path)?;
    let mut hasher = sha2::Sha256::new();
    let mut buf = vec![0u8; 128 * 1024];
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => hasher.update(&buf[..n]),
            Err(err) if err.kind() == ErrorKind::Interrupted => {}
            Err(err) => return Err(io("read", path)(err)),
        }
    }
    Ok(crate::digest::hex(&hasher.finalize()))
}

/// Creates the new file `path` (its folders as needed): `O_CREAT|O_EXCL`,
/// so neither an existing file nor a link is ever opened.
pub fn create_new(base: &Path, path: &Path) -> Result<File, FsError> {
    if let Some(parent) = path.parent() {
        create_dir_all(base, parent)?;
    }
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)
        .map_err(|err| match check(base, path) {
            // `O_EXCL` says only "exists": name a link as one.
            Err(link @ FsError::Link { .. }) => link,
            _ => open_error("create", path, err),
        })
}

/// Opens `path` to append (creating it), never through a link nor into a
/// file with other hard links (an append would land in that file too).
pub fn open_append(base: &Path, path: &Path) -> Result<File, FsError> {
    if let Some(parent) = path.parent() {
        create_dir_all(base, parent)?;
    }
    check(base, path)?;
    let file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
        .map_err(|err| open_error("open", path, err))?;
    let file = regular(file, path)?;
    refuse_hard_links(&file, path)?;
    Ok(file)
}

/// Opens (creating) a file that is only locked, never written.
pub fn open_lock(base: &Path, path: &Path) -> Result<File, FsError> {
    if let Some(parent) = path.parent() {
        create_dir_all(base, parent)?;
    }
    check(base, path)?;
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
        .map_err(|err| open_error("open", path, err))?;
    regular(file, path)
}

fn refuse_hard_links(file: &File, path: &Path) -> Result<(), FsError> {
    let links = file.metadata().map_err(io("read", path))?.nlink();
    if links > 1 {
        return Err(FsError::HardLinked {
            path: path.to_path_buf(),
            links,
        });
    }
    Ok(())
}

/// Replaces the file `path` with `bytes`: written to a new file beside it,
/// then renamed over it, so neither a link nor a hard link at `path` is ever
/// written through. A link at `path` is refused, not replaced.
pub fn replace(base: &Path, path: &Path, bytes: &[u8]) -> Result<(), FsError> {
    let parent = path.parent().ok_or_else(|| FsError::Outside {
        path: path.to_path_buf(),
        base: base.to_path_buf(),
    })?;
    create_dir_all(base, parent)?;
    check(base, path)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    let tmp = parent.join(format!(".{name}.tmp-{}-{nanos}", std::process::id()));
    let written = create_new(base, &tmp).and_then(|mut file| {
        file.write_all(bytes).map_err(io("write", &tmp))?;
        std::fs::rename(&tmp, path).map_err(io("write", path))
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// A path as the user should read it: relative to the current folder when inside it.
pub fn shown(path: &Path) -> String {
    let cwd = std::env::current_dir().ok();
    match cwd.as_deref().and_then(|cwd| path.strip_prefix(cwd).ok()) {
        // The current folder itself.
        Some(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Some(rel) => rel.display().to_string(),
        None => path.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    struct Dirs {
        base: tempfile::TempDir,
        outside: tempfile::TempDir,
    }

    fn dirs() -> Dirs {
        let d = Dirs {
            base: tempfile::tempdir().unwrap(),
            outside: tempfile::tempdir().unwrap(),
        };
        std::fs::write(d.outside.path().join("f"), "outside").unwrap();
        d
    }

    fn is_link(err: FsError, want: &Path) -> bool {
        matches!(err, FsError::Link { path } if path == want)
    }

    #[test]
    fn a_link_anywhere_on_the_way_is_refused_and_named() {
        let d = dirs();
        let base = d.base.path();
        std::fs::create_dir(base.join("a")).unwrap();
        symlink(d.outside.path(), base.join("a/b")).unwrap();
        let file = base.join("a/b/f");
        let link = base.join("a/b");
        assert!(is_link(check(base, &file).unwrap_err(), &link));
        assert!(is_link(read(base, &file).unwrap_err(), &link));
        assert!(is_link(
            create_new(base, &base.join("a/b/g")).unwrap_err(),
            &link
        ));
        assert!(is_link(open_append(base, &file).unwrap_err(), &link));
        assert!(is_link(replace(base, &file, b"x").unwrap_err(), &link));
        assert!(is_link(
            create_dir_all(base, &base.join("a/b/c")).unwrap_err(),
            &link
        ));
        assert_eq!(
            std::fs::read(d.outside.path().join("f")).unwrap(),
            b"outside"
        );
        assert!(!d.outside.path().join("g").exists());
        assert!(!d.outside.path().join("c").exists());
    }

    #[test]
    fn a_link_as_the_file_itself_is_refused_and_never_written() {
        let d = dirs();
        let base = d.base.path();
        let target = d.outside.path().join("f");
        let file = base.join("task.md");
        symlink(&target, &file).unwrap();
        assert!(is_link(read(base, &file).unwrap_err(), &file));
        assert!(is_link(read_file(&file).unwrap_err(), &file));
        assert!(is_link(create_new(base, &file).unwrap_err(), &file));
        assert!(is_link(open_append(base, &file).unwrap_err(), &file));
        assert!(is_link(open_lock(base, &file).unwrap_err(), &file));
        assert!(is_link(replace(base, &file, b"x").unwrap_err(), &file));
        assert_eq!(std::fs::read(&target).unwrap(), b"outside");
        // A dangling link too: `O_CREAT` would have made the target.
        let dangling = base.join("new.csv");
        symlink(d.outside.path().join("made"), &dangling).unwrap();
        assert!(is_link(
            open_append(base, &dangling).unwrap_err(),
            &dangling
        ));
        assert!(!d.outside.path().join("made").exists());
    }

    #[test]
    fn a_hard_link_is_neither_appended_to_nor_written_through() {
        let d = dirs();
        let base = d.base.path();
        let other = base.join("other");
        std::fs::write(&other, "theirs").unwrap();
        let file = base.join("l.csv");
        std::fs::hard_link(&other, &file).unwrap();
        assert!(matches!(
            open_append(base, &file).unwrap_err(),
            FsError::HardLinked { links: 2, .. }
        ));
        replace(base, &file, b"ours").unwrap();
        assert_eq!(std::fs::read(&other).unwrap(), b"theirs");
        assert_eq!(std::fs::read(&file).unwrap(), b"ours");
    }

    #[test]
    fn plain_files_and_folders_work() {
        let d = dirs();
        let base = d.base.path();
        let file = base.join("x/y/z.txt");
        assert!(read(base, &file).unwrap().is_none());
        assert!(check(base, &file).unwrap().is_none());
        create_new(base, &file).unwrap().write_all(b"1").unwrap();
        assert!(create_new(base, &file).is_err());
        replace(base, &file, b"2").unwrap();
        assert_eq!(read(base, &file).unwrap().unwrap(), b"2");
        let mut f = open_append(base, &file).unwrap();
        f.write_all(b"3").unwrap();
        assert_eq!(read(base, &file).unwrap().unwrap(), b"23");
        let names: Vec<_> = std::fs::read_dir(base.join("x/y"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec!["z.txt"], "a temporary file was left");
    }

    #[test]
    fn paths_must_stay_below_the_base() {
        let d = dirs();
        let base = d.base.path();
        for bad in [
            base.join("../x"),
            base.join("a/../../x"),
            PathBuf::from("/etc/passwd"),
        ] {
            assert!(
                matches!(check(base, &bad), Err(FsError::Outside { .. })),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn a_file_where_a_folder_belongs_is_refused() {
        let d = dirs();
        let base = d.base.path();
        std::fs::write(base.join("failed"), "").unwrap();
        assert!(matches!(
            create_dir_all(base, &base.join("failed/round-1")),
            Err(FsError::NotFolder { .. })
        ));
    }
}
