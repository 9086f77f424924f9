//! The ledger on disk: an exclusive lock, whole-row appends with fsync, the
//! write-once evidence folders, and reads. Does I/O, and never through a
//! link: everything below the ledgers folder goes through [`crate::statefs`].

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::chain::{self, ChainError, Parsed};
use super::lock::{self, Busy, Mode};
use super::row::{Draft, Kind, Row, RowRef, header};
use crate::digest::Framed;
use crate::statefs::{self, FsError};

/// A ledger store failure, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("ledger `{}`: {cause}", path.display())]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("ledger `{}`: {cause}", path.display())]
    Chain { path: PathBuf, cause: ChainError },
    #[error("evidence `{}`: {problem}", path.display())]
    Evidence { path: PathBuf, problem: String },
    /// A link (or a file where a folder belongs) under the ledgers folder.
    #[error(transparent)]
    Fs(#[from] FsError),
    /// The ledger is not the one the loop's anchor knows (SPEC §8.2).
    #[error(
        "ledger `{}`: {problem}; nothing was recorded\n\
         hint: `referee ledger verify` says what the anchor holds; a ledger you committed comes back with `git checkout -- {}`",
        crate::statefs::shown(path),
        crate::statefs::shown(path)
    )]
    Broken { path: PathBuf, problem: String },
    #[error(transparent)]
    Anchor(#[from] crate::anchor::AnchorError),
    /// The ledger is locked by processes that are not a live referee: not
    /// honoured, so an append refuses (SPEC §8.6).
    #[error(
        "ledger `{}` is locked by {}, which is not a live referee: its lock is not honoured, and nothing was written\n\
         hint: if it is a leftover (of a writer agent, say), ending it is your call: `kill {}`; referee never ends it",
        statefs::shown(path),
        lock::named(holders),
        pids(holders)
    )]
    NotHonoured {
        path: PathBuf,
        holders: Vec<crate::anchor::holder::Holder>,
    },
    /// A live referee (or a holder that cannot be named) kept the lock for
    /// [`lock::LOCK_WAIT`].
    #[error(
        "ledger `{}` is still locked after {}s by {}; nothing was {undone}\n\
         hint: wait for it to finish, then run the command again",
        statefs::shown(path),
        lock::LOCK_WAIT.as_secs(),
        lock::named(holders)
    )]
    Held {
        path: PathBuf,
        holders: Vec<crate::anchor::holder::Holder>,
        undone: &'static str,
    },
}

/// The pids of `holders`, for a `kill` hint.
fn pids(holders: &[crate::anchor::holder::Holder]) -> String {
    let pids: Vec<String> = holders.iter().map(|h| h.pid.to_string()).collect();
    pids.join(" ")
}

/// The smallest ledger [`Store::each_row_formatted`] and
/// [`Store::copy_committed`] check in two halves at once
/// (about 3,000 rows): below it a thread costs more than it saves.
const CHECK_IN_TWO_MIN: u64 = 1 << 20;

/// The offset just past the first line break at or after `from` in
/// `file`, when one comes before `len` ends and the line after it is not
/// empty; `None` otherwise.
fn line_after(file: &mut File, from: u64, len: u64) -> Option<u64> {
    file.seek(SeekFrom::Start(from)).ok()?;
    let mut buf = vec![0u8; 64 * 1024];
    let mut at = from;
    while at < len {
        let n = match file.read(&mut buf) {
            Ok(0) => return None,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return None,
        };
        if let Some(i) = memchr::memchr(b'\n', &buf[..n]) {
            let split = at + i as u64 + 1;
            return (split < len).then_some(split);
        }
        at += n as u64;
    }
    None
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |cause| StoreError::Io {
        path: path.to_path_buf(),
        cause,
    }
}

/// An evidence folder's digest and the sha256 of each file in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    pub digest: String,
    /// Relative path → sha256 (hex).
    pub files: std::collections::BTreeMap<String, String>,
}

/// One loop's ledger file and evidence folder.
#[derive(Debug, Clone)]
pub struct Store {
    ledger: PathBuf,
    evidence_root: PathBuf,
    /// The folder holding the ledger (`ledgers/`). Nothing the store touches
    /// below it may be a link, nor may it be one itself; the folders above
    /// it are the state folder's, checked by [`crate::state::State`].
    base: PathBuf,
    /// The contract's sha256: `prev_sha256` of row 1.
    genesis: String,
    /// The loop's anchor, which every append is checked against and told of.
    anchor: Option<crate::anchor::Anchor>,
}

impl Store {
    pub fn new(ledger: PathBuf, evidence_root: PathBuf, contract_sha256: &str) -> Store {
        let base = ledger.parent().map(Path::to_path_buf).unwrap_or_default();
        Store {
            ledger,
            evidence_root,
            base,
            genesis: contract_sha256.to_string(),
            anchor: None,
        }
    }

    /// The store with every append checked against `anchor` first (a ledger
    /// cut, edited or re-hashed since is refused) and recorded in it.
    pub fn anchored(mut self, anchor: crate::anchor::Anchor) -> Store {
        self.anchor = Some(anchor);
        self
    }

    pub fn path(&self) -> &Path {
        &self.ledger
    }

    /// The ledgers folder: files the loop keeps beside its ledger (the saved
    /// task, scratch and `failed/` folders) go through [`crate::statefs`]
    /// with this base.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// The folder holding the loop's evidence, scratch and saved task.
    pub fn loop_dir(&self) -> &Path {
        &self.evidence_root
    }

    /// Creates the ledgers folder if it is missing (refusing a link there).
    pub fn create_base(&self) -> Result<(), StoreError> {
        if !self.check_base()? {
            std::fs::create_dir_all(&self.base).map_err(io(&self.base))?;
            self.check_base()?;
        }
        Ok(())
    }

    /// Refuses a ledgers folder that is a link or not a folder; says
    /// whether it exists.
    fn check_base(&self) -> Result<bool, StoreError> {
        let base = if self.base.as_os_str().is_empty() {
            Path::new(".")
        } else {
            &self.base
        };
        Ok(statefs::check_dir(base)?)
    }

    /// The evidence folder of round `round`.
    pub fn evidence_dir(&self, round: u32) -> PathBuf {
        self.evidence_root.join(format!("round-{round}"))
    }

    /// Reads every committed row under a shared lock. A missing file is an
    /// empty ledger. A torn tail is returned, not an error.
    pub fn read(&self) -> Result<Parsed, StoreError> {
        self.read_with(chain::parse)
    }

    fn read_with(
        &self,
        parse: fn(&[u8]) -> Result<Parsed, ChainError>,
    ) -> Result<Parsed, StoreError> {
        parse(&self.read_bytes()?).map_err(|cause| self.chain(cause))
    }

    /// Reads the ledger under a shared lock, checks that every committed row
    /// reads, and only then has `format` turn each row into bytes and hands
    /// them to `write`, in the ledger's order: nothing is written unless
    /// every row reads (a reader printing rows never prints half a ledger).
    /// Returns the torn tail, if any, as [`Store::read`] does. Appends wait
    /// for the lock held throughout; only a writer that ignores it could
    /// change the rows between the two reads, and a row that then no longer
    /// reads is still an error.
    ///
    /// Neither the file nor its rows are ever held whole: the rows are
    /// formatted a chunk of lines at a time, every other chunk on a second
    /// thread (formatting is most of `ledger show --format json`), with
    /// four buffers reused. The inner result is `write`'s: a closed pipe is
    /// no fault of the ledger's.
    pub fn each_row_formatted(
        &self,
        format: impl Fn(&RowRef<'_>, &mut Vec<u8>) + Sync,
        mut write: impl FnMut(&[u8]) -> std::io::Result<()>,
    ) -> Result<std::io::Result<Option<chain::Torn>>, StoreError> {
        use std::io::Read as _;
        self.check_base()?;
        let Some(mut file) = statefs::open_read(&self.base, &self.ledger)? else {
            return Ok(Ok(None));
        };
        self.lock_shared(&file)?;
        let (committed, torn) = self.check_whole(&mut file)?;
        file.seek(SeekFrom::Start(0)).map_err(io(&self.ledger))?;
        let mut chunks = chain::Chunks::new((&mut file).take(committed));
        // Each chunk's length, with the number of rows before it (`None`
        // for the first, which holds the header): the second thread numbers
        // its rows from there.
        let mut rows: Option<usize> = None;
        let mut next = |buf: &mut Vec<u8>| -> Result<Option<Chunk>, StoreError> {
            let Some(len) = chunks.next(buf).map_err(io(&self.ledger))? else {
                return Ok(None);
            };
            let before = rows;
            let lines = memchr::memchr_iter(b'\n', &buf[..len]).count();
            rows = Some(match before {
                None => lines.saturating_sub(1),
                Some(rows) => rows + lines,
            });
            Ok(Some((len, before)))
        };
        let formatted = |bytes: &[u8], (len, rows_before): Chunk, out: &mut Vec<u8>| {
            out.clear();
            chain::each_view_in(&bytes[..len], rows_before, |_, row| {
                format(row, out);
                Ok(())
            })
            .map_err(|cause| self.chain(cause))
        };
        // Every other chunk goes to the second thread with an output buffer,
        // and comes back with both: four buffers in all, reused.
        type Chunk = (usize, Option<usize>);
        type Work = (Vec<u8>, Chunk, Vec<u8>);
        type Done = (Vec<u8>, Result<Vec<u8>, StoreError>);
        std::thread::scope(|scope| {
            let (to_second, work) = std::sync::mpsc::sync_channel::<Work>(1);
            let (done, from_second) = std::sync::mpsc::sync_channel::<Done>(1);
            let formatted = &formatted;
            scope.spawn(move || {
                for (input, chunk, mut out) in work {
                    let result = formatted(&input, chunk, &mut out).map(|()| out);
                    if done.send((input, result)).is_err() {
                        return;
                    }
                }
            });
            let (mut input, mut out) = (Vec::new(), Vec::new());
            let mut spare = Some((Vec::new(), Vec::new()));
            let stopped =
                || io(&self.ledger)(std::io::Error::other("the thread formatting rows stopped"));
            while let Some(chunk) = next(&mut input)? {
                let (mut theirs, their_out) = spare.take().ok_or_else(stopped)?;
                let more = match next(&mut theirs)? {
                    Some(their_chunk) => {
                        to_second
                            .send((theirs, their_chunk, their_out))
                            .map_err(|_| stopped())?;
                        true
                    }
                    None => {
                        spare = Some((theirs, their_out));
                        false
                    }
                };
                formatted(&input, chunk, &mut out)?;
                if let Err(e) = write(&out) {
                    return Ok(Err(e));
                }
                if more {
                    let (theirs, result) = from_second.recv().map_err(|_| stopped())?;
                    let their_out = result?;
                    if let Err(e) = write(&their_out) {
                        return Ok(Err(e));
                    }
                    spare = Some((theirs, their_out));
                }
            }
            Ok(Ok(torn))
        })
    }

    /// Checks every row (as [`Store::each_row_formatted`]), then copies the committed
    /// bytes (header and rows, as they are in the file) to `out`: nothing
    /// is written unless every row reads. The inner result is `out`'s: a
    /// closed pipe is no fault of the ledger's. Gives the bytes copied (0:
    /// no ledger yet) and the torn tail, if any.
    pub fn copy_committed(
        &self,
        out: &mut impl std::io::Write,
    ) -> Result<std::io::Result<(u64, Option<chain::Torn>)>, StoreError> {
        use std::io::Read as _;
        self.check_base()?;
        let Some(mut file) = statefs::open_read(&self.base, &self.ledger)? else {
            return Ok(Ok((0, None)));
        };
        self.lock_shared(&file)?;
        let (committed, torn) = self.check_whole(&mut file)?;
        file.seek(SeekFrom::Start(0)).map_err(io(&self.ledger))?;
        let mut left = committed;
        let mut buf = vec![0u8; 256 * 1024];
        while left > 0 {
            let want = usize::try_from(left).map_or(buf.len(), |l| l.min(buf.len()));
            let n = match file.read(&mut buf[..want]) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(io(&self.ledger)(e)),
            };
            if let Err(e) = out.write_all(&buf[..n]) {
                return Ok(Err(e));
            }
            left -= n as u64;
        }
        Ok(Ok((committed - left, torn)))
    }

    /// Checks that every committed row of `file` (locked) reads, as
    /// [`chain::check`]; gives the committed length and the torn tail. A
    /// large ledger is checked in two halves at once when two cores are
    /// there; if either half finds anything (a bad row, a torn tail, an
    /// error reading), the ledger is checked again from the start, in one
    /// pass, which answers exactly as it always has.
    fn check_whole(&self, file: &mut File) -> Result<(u64, Option<chain::Torn>), StoreError> {
        if let Some(len) = self.check_in_two(file) {
            return Ok((len, None));
        }
        file.seek(SeekFrom::Start(0)).map_err(io(&self.ledger))?;
        let torn = chain::check(file).map_err(|e| self.stream(e))?;
        let committed = match &torn {
            Some(torn) => torn.offset,
            None => file.stream_position().map_err(io(&self.ledger))?,
        };
        Ok((committed, torn))
    }

    /// The length of `file` when its two halves (split at the first line
    /// break past the middle) both read whole and end in a line break;
    /// `None` otherwise, or when the file is small or one core is all.
    fn check_in_two(&self, file: &mut File) -> Option<u64> {
        let len = file.metadata().ok()?.len();
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        if len < CHECK_IN_TWO_MIN || cores < 2 {
            return None;
        }
        // A second handle for the second half; the first one's shared lock
        // keeps appends out of both. It must be the same file: one renamed
        // over the ledger in between would leave half the rows unchecked.
        let mut second = statefs::open_read(&self.base, &self.ledger).ok()??;
        let (a, b) = (file.metadata().ok()?, second.metadata().ok()?);
        if (a.dev(), a.ino(), a.len()) != (b.dev(), b.ino(), len) {
            return None;
        }
        let split = line_after(&mut second, len / 2, len)?;
        second.seek(SeekFrom::Start(split)).ok()?;
        file.seek(SeekFrom::Start(0)).ok()?;
        let (first, rest) = std::thread::scope(|scope| {
            let rest = scope.spawn(|| chain::check_rows(&mut (&mut second).take(len - split)));
            let first = chain::check(&mut (&mut *file).take(split));
            (first, rest.join())
        });
        matches!((first, rest), (Ok(None), Ok(Ok(None)))).then_some(len)
    }

    fn stream(&self, e: chain::StreamError) -> StoreError {
        match e {
            chain::StreamError::Io(e) => io(&self.ledger)(e),
            chain::StreamError::Chain(cause) => self.chain(cause),
        }
    }

    /// The ledger's bytes under a shared lock (none: no ledger yet).
    fn read_bytes(&self) -> Result<Vec<u8>, StoreError> {
        self.check_base()?;
        let Some(mut file) = statefs::open_read(&self.base, &self.ledger)? else {
            return Ok(Vec::new());
        };
        self.lock_shared(&file)?;
        // Sized from the file, so the buffer is not copied as it grows.
        let len = file.metadata().map_err(io(&self.ledger))?.len();
        let mut bytes = Vec::with_capacity(statefs::capacity_for(len));
        file.read_to_end(&mut bytes).map_err(io(&self.ledger))?;
        Ok(bytes)
    }

    /// Holds the readers' shared lock until the file given back is dropped
    /// (`None`: no ledger yet): a reader that checks the rows it read
    /// against the loop's anchor does so before any append can follow its
    /// read (the anchor learns of a row right after its write). Reads made
    /// meanwhile take their own shared lock, which this one never blocks.
    pub fn hold_shared(&self) -> Result<Option<File>, StoreError> {
        self.check_base()?;
        let Some(file) = statefs::open_read(&self.base, &self.ledger)? else {
            return Ok(None);
        };
        self.lock_shared(&file)?;
        Ok(Some(file))
    }

    /// Takes the exclusive lock that every append holds, creating the file.
    pub fn lock(&self) -> Result<Locked<'_>, StoreError> {
        self.create_base()?;
        let file = statefs::open_append(&self.base, &self.ledger)?;
        match lock::wait(&file, Mode::Exclusive) {
            Ok(()) => Ok(Locked { store: self, file }),
            Err(Busy::NotHonoured(holders)) => Err(StoreError::NotHonoured {
                path: self.ledger.clone(),
                holders,
            }),
            Err(Busy::Held(holders)) => Err(StoreError::Held {
                path: self.ledger.clone(),
                holders,
                undone: "written",
            }),
            Err(Busy::Io(e)) => Err(io(&self.ledger)(e)),
        }
    }

    /// Takes the shared lock readers hold, waiting as [`lock::LOCK_WAIT`]
    /// says. A lock held by processes that are not a live referee is not
    /// honoured: the ledger is read without it, and a note on stderr says
    /// so. That read is safe: the ledger is append-only, and every row is
    /// one write and an fsync under the exclusive lock, which no referee
    /// takes while that holder keeps it; a committed row always reads
    /// whole.
    fn lock_shared(&self, file: &File) -> Result<(), StoreError> {
        match lock::wait(file, Mode::Shared) {
            Ok(()) => Ok(()),
            Err(Busy::NotHonoured(holders)) => {
                // Once per command: a command may read the ledger twice.
                static NOTED: std::sync::atomic::AtomicBool =
                    std::sync::atomic::AtomicBool::new(false);
                if NOTED.swap(true, std::sync::atomic::Ordering::Relaxed) {
                    return Ok(());
                }
                let _ = writeln!(
                    std::io::stderr(),
                    "note: ledger `{}` is locked by {}, which is not a live referee: read without its lock (appends are refused while it holds it)",
                    statefs::shown(&self.ledger),
                    lock::named(&holders)
                );
                Ok(())
            }
            Err(Busy::Held(holders)) => Err(StoreError::Held {
                path: self.ledger.clone(),
                holders,
                undone: "read",
            }),
            Err(Busy::Io(e)) => Err(io(&self.ledger)(e)),
        }
    }

    /// Checks the chain and every evidence digest.
    pub fn verify(&self) -> Result<chain::Summary, StoreError> {
        self.verify_seeing(|_, _| {})
    }

    /// [`Store::verify`], showing each checked row to `seen` as it goes (a
    /// caller that checks more need not read the ledger again); no row is
    /// kept.
    pub fn verify_seeing(
        &self,
        seen: impl FnMut(usize, &RowRef<'_>),
    ) -> Result<chain::Summary, StoreError> {
        self.check_base()?;
        let Some(mut file) = statefs::open_read(&self.base, &self.ledger)? else {
            return Ok(chain::Summary {
                rows: 0,
                rounds: 0,
                head: None,
            });
        };
        self.lock_shared(&file)?;
        // Which rounds have an evidence folder, listed once (not a stat per row).
        let listed = match statefs::check(&self.base, &self.evidence_root)? {
            Some(meta) if meta.is_dir() => std::fs::read_dir(&self.evidence_root),
            _ => Err(std::io::ErrorKind::NotFound.into()),
        };
        let present: std::collections::HashSet<u32> = listed
            .map(|entries| {
                entries
                    .flatten()
                    .filter_map(|e| {
                        e.file_name()
                            .to_str()
                            .and_then(|n| n.strip_prefix("round-"))
                            .and_then(|n| n.parse().ok())
                    })
                    .collect()
            })
            .unwrap_or_default();
        chain::verify_read(
            &mut file,
            &self.genesis,
            |row| {
                if row.kind != Kind::Round || !present.contains(&row.round) {
                    return Ok(None);
                }
                self.evidence_digest_of(row)
            },
            seen,
        )
        .map_err(|e| self.stream(e))
    }

    /// Removes a torn final line, if any; returns the bytes removed.
    pub fn repair(&self) -> Result<Option<Vec<u8>>, StoreError> {
        let mut locked = self.lock()?;
        let bytes = locked.read_all()?;
        let parsed = chain::parse(&bytes).map_err(|cause| self.chain(cause))?;
        let Some(torn) = parsed.torn else {
            return Ok(None);
        };
        // A final row that lost only its newline, and whose hash links and
        // verifies, is a committed row: it gets its newline back.
        let mut whole = bytes.clone();
        whole.push(b'\n');
        if let Ok(again) = chain::parse_hashed(&whole)
            && again.torn.is_none()
            && again.rows.len() == parsed.rows.len() + 1
            // The chain and the row hashes; evidence is `verify`'s to check.
            && chain::verify(&again, &self.genesis, |row| {
                Ok((!row.evidence_sha256.is_empty()).then(|| row.evidence_sha256.to_string()))
            })
            .is_ok()
        {
            locked.file.write_all(b"\n").map_err(io(&self.ledger))?;
            locked.file.sync_all().map_err(io(&self.ledger))?;
            return Ok(None);
        }
        locked.file.set_len(torn.offset).map_err(io(&self.ledger))?;
        locked.file.sync_all().map_err(io(&self.ledger))?;
        Ok(Some(torn.bytes))
    }

    fn evidence_digest_of(&self, row: &RowRef<'_>) -> Result<Option<String>, String> {
        if row.kind != Kind::Round {
            return Ok(None);
        }
        self.evidence_digest(row.round).map_err(|e| e.to_string())
    }

    /// The digest of round `round`'s evidence folder, `None` when there is
    /// none. A link anywhere in it is refused, never read through.
    pub fn evidence_digest(&self, round: u32) -> Result<Option<String>, StoreError> {
        let dir = self.evidence_dir(round);
        match statefs::check(&self.base, &dir)? {
            None => Ok(None),
            Some(meta) if meta.is_dir() => digest_dir(&dir).map(Some),
            Some(_) => Err(FsError::NotFolder { path: dir }.into()),
        }
    }

    /// Round `round`'s evidence folder digest and the sha256 of each of its
    /// files, every file hashed a buffer at a time (nothing is held, so a
    /// huge file planted there costs time, never memory). `None` when there
    /// is no folder. A caller that then reads a file compares what it read
    /// with its sha256 here: the file it uses is the file the digest checked.
    pub fn evidence_listing(&self, round: u32) -> Result<Option<Listing>, StoreError> {
        let dir = self.evidence_dir(round);
        match statefs::check(&self.base, &dir)? {
            None => Ok(None),
            Some(meta) if meta.is_dir() => {
                statefs::check_dir(&dir)?;
                let mut files = std::collections::BTreeMap::new();
                let digest = digest_dir_into(&dir, &Default::default(), &mut files)?;
                Ok(Some(Listing { digest, files }))
            }
            Some(_) => Err(FsError::NotFolder { path: dir }.into()),
        }
    }

    /// The evidence file `name` of round `round`, `None` when absent; never
    /// read through a link.
    pub fn evidence_file(&self, round: u32, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.evidence_dir(round).join(name);
        Ok(statefs::read(&self.base, &path)?)
    }

    fn chain(&self, cause: ChainError) -> StoreError {
        StoreError::Chain {
            path: self.ledger.clone(),
            cause,
        }
    }
}

/// The ledger while this process holds its exclusive lock (released on drop).
pub struct Locked<'a> {
    store: &'a Store,
    file: File,
}

impl Locked<'_> {
    fn read_all(&mut self) -> Result<Vec<u8>, StoreError> {
        let path = &self.store.ledger;
        self.file.seek(SeekFrom::Start(0)).map_err(io(path))?;
        let mut bytes = Vec::new();
        self.file.read_to_end(&mut bytes).map_err(io(path))?;
        Ok(bytes)
    }

    /// Every committed row; refuses a torn tail (an append must not follow one).
    pub fn rows(&mut self) -> Result<Vec<Row>, StoreError> {
        let bytes = self.read_all()?;
        let parsed = chain::parse(&bytes).map_err(|cause| self.store.chain(cause))?;
        self.refuse_torn(&parsed)?;
        Ok(parsed.rows)
    }

    /// The last committed row, reading only the file's tail.
    pub fn last(&mut self) -> Result<Option<Row>, StoreError> {
        let path = &self.store.ledger;
        let len = self.file.metadata().map_err(io(path))?.len();
        if len == 0 {
            return Ok(None);
        }
        let mut window: u64 = 16 * 1024;
        loop {
            let start = len.saturating_sub(window);
            self.file.seek(SeekFrom::Start(start)).map_err(io(path))?;
            let mut tail = Vec::new();
            self.file.read_to_end(&mut tail).map_err(io(path))?;
            if tail.last() != Some(&b'\n') {
                let rows = self.rows()?;
                return Ok(rows.last().cloned());
            }
            let body = &tail[..tail.len() - 1];
            match body.iter().rposition(|&b| b == b'\n') {
                // A CRLF line: the whole read names the first such line.
                Some(_) if body.ends_with(b"\r") => return Ok(self.rows()?.last().cloned()),
                Some(i) => {
                    let line = &body[i + 1..];
                    if line == header().as_bytes() {
                        return Ok(None);
                    }
                    return self.row_from_line(line).map(Some);
                }
                None if start == 0 => {
                    // Only the header, or a header and one row.
                    return Ok(self.rows()?.last().cloned());
                }
                None => window *= 4,
            }
        }
    }

    fn row_from_line(&mut self, line: &[u8]) -> Result<Row, StoreError> {
        let fields = chain::read_record(line).map_err(|problem| {
            self.store.chain(ChainError::Row {
                row: 0,
                problem: format!("last row: {problem}"),
            })
        })?;
        Row::from_fields(&fields).map_err(|e| {
            self.store.chain(ChainError::Row {
                row: 0,
                problem: format!("last row: {e}"),
            })
        })
    }

    fn refuse_torn(&self, parsed: &Parsed) -> Result<(), StoreError> {
        match &parsed.torn {
            Some(torn) => Err(self.store.chain(ChainError::Torn {
                after: parsed.rows.len(),
                len: torn.bytes.len(),
            })),
            None => Ok(()),
        }
    }

    /// Appends one row after the last: commits `evidence` (if any) as the
    /// round's write-once folder, then writes the whole line in one write and
    /// fsyncs. Returns the sealed row.
    pub fn append(&mut self, draft: Draft, evidence: Option<Evidence>) -> Result<Row, StoreError> {
        let path = self.store.ledger.clone();
        let len = self.file.metadata().map_err(io(&path))?.len();
        if len > 0 {
            // A torn tail must be repaired before anything follows it.
            self.file
                .seek(SeekFrom::Start(len - 1))
                .map_err(io(&path))?;
            let mut last = [0u8; 1];
            self.file.read_exact(&mut last).map_err(io(&path))?;
            if last[0] != b'\n' {
                let bytes = self.read_all()?;
                let parsed = chain::parse(&bytes).map_err(|cause| self.store.chain(cause))?;
                self.refuse_torn(&parsed)?;
            }
        }
        let anchored = self.anchored_rows()?;
        let prev = match self.last()? {
            Some(row) => row.row_sha256,
            None => self.store.genesis.clone(),
        };
        let evidence_sha256 = match evidence {
            Some(evidence) => {
                if draft.kind != Kind::Round {
                    return Err(StoreError::Evidence {
                        path: evidence.dir.path().to_path_buf(),
                        problem: "only round rows carry evidence".into(),
                    });
                }
                evidence.commit(&self.store.evidence_dir(draft.round))?
            }
            None => String::new(),
        };
        let row = Row::seal(draft, &prev, &evidence_sha256);
        if let (Some(anchor), Some(n)) = (&self.store.anchor, anchored) {
            anchor.pending(n + 1, &row.row_sha256)?;
        }
        let mut bytes = Vec::new();
        if len == 0 {
            bytes.extend_from_slice(header().as_bytes());
            bytes.push(b'\n');
        }
        bytes.extend(chain::write_record(&row.fields()));
        write_or_undo(&mut self.file, len, &bytes, |file, bytes| {
            file.write_all(bytes)?;
            file.sync_data()
        })
        .map_err(io(&path))?;
        if len == 0 {
            sync_parent(&path)?;
        }
        if let (Some(anchor), Some(n)) = (&self.store.anchor, anchored) {
            // The row is committed: should the anchor's line fail, its
            // `pending` still names the row, which counts.
            let _ = anchor.commit(n + 1, &row.row_sha256);
        }
        Ok(row)
    }

    /// Checks the ledger's rows against the store's anchor (anchoring a
    /// loop this machine has not anchored yet) and says how many there are;
    /// `None` without an anchor.
    fn anchored_rows(&mut self) -> Result<Option<usize>, StoreError> {
        let Some(anchor) = self.store.anchor.clone() else {
            return Ok(None);
        };
        let rows = self.rows()?;
        let hashes: Vec<&str> = rows.iter().map(|r| r.row_sha256.as_str()).collect();
        anchor.settle(&hashes)?;
        match anchor.check(&hashes)? {
            crate::anchor::chain::Standing::Unanchored => anchor.adopt(&hashes)?,
            crate::anchor::chain::Standing::Holds { .. } => {}
            crate::anchor::chain::Standing::Broken(b) => {
                return Err(StoreError::Broken {
                    path: self.store.ledger.clone(),
                    problem: b.to_string(),
                });
            }
        }
        Ok(Some(rows.len()))
    }
}

/// Writes `bytes` after the `len` committed bytes of `file` with `write`.
/// When the write (or its fsync) fails part-way, as on a full disk, the file
/// is cut back to `len` before the error is returned: a failed append leaves
/// no torn tail of its own for `repair` to remove. The caller holds the lock.
fn write_or_undo(
    file: &mut File,
    len: u64,
    bytes: &[u8],
    write: impl FnOnce(&mut File, &[u8]) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let Err(cause) = write(file, bytes) else {
        return Ok(());
    };
    match file.set_len(len).and_then(|()| file.sync_data()) {
        Ok(()) => Err(cause),
        Err(undo) => Err(std::io::Error::new(
            cause.kind(),
            format!(
                "{cause}; the partial row could not be removed ({undo})\nhint: run `referee ledger repair`"
            ),
        )),
    }
}

/// A round's evidence, staged in a private folder until the row commits it.
/// The folder is a [`tempfile::TempDir`]: removed when dropped, unless
/// [`Evidence::commit`] renamed it into place.
#[derive(Debug)]
pub struct Evidence {
    dir: tempfile::TempDir,
    /// The store's ledgers folder, for the links checks.
    base: PathBuf,
    /// The sha256 of each file written through [`Evidence::add`], so the
    /// digest need not read them back.
    hashed: std::sync::Mutex<std::collections::BTreeMap<String, String>>,
    /// The files [`Evidence::seal`] made durable and read-only already.
    sealed: std::sync::Mutex<std::collections::BTreeSet<String>>,
}

impl Evidence {
    /// A new staging folder under the store's evidence root. Call it holding
    /// the ledger lock: staging folders found then were left by a process
    /// killed before its row, and are removed (they were never evidence).
    pub fn stage(store: &Store) -> Result<Evidence, StoreError> {
        let root = &store.evidence_root;
        store.create_base()?;
        statefs::create_dir_all(&store.base, root)?;
        if let Ok(entries) = std::fs::read_dir(root) {
            for entry in entries.flatten() {
                // `remove_dir_all` removes a link itself, never its target.
                if entry.file_name().to_string_lossy().starts_with(".staging-") {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
        // A new name (`mkdir`, never an existing folder or a link), made
        // with the mode `mkdir` gives by default, as evidence always had: the
        // folder is renamed into place and stays.
        let dir = tempfile::Builder::new()
            .prefix(&format!(".staging-{}-", std::process::id()))
            .permissions(std::fs::Permissions::from_mode(0o777))
            .tempdir_in(root)
            .map_err(io(root))?;
        Ok(Evidence {
            dir,
            base: store.base.clone(),
            hashed: std::sync::Mutex::default(),
            sealed: std::sync::Mutex::default(),
        })
    }

    /// Where a file named `name` is staged, for callers that stream into it.
    pub fn path_of(&self, name: &str) -> Result<PathBuf, StoreError> {
        let ok = !name.is_empty()
            && name
                .split('/')
                .all(|part| !part.is_empty() && part != "." && part != "..")
            && !name.contains('\\');
        if !ok {
            return Err(StoreError::Evidence {
                path: self.dir.path().to_path_buf(),
                problem: format!("`{name}` is not a plain relative file name"),
            });
        }
        let path = self.dir.path().join(name);
        if let Some(parent) = path.parent() {
            statefs::create_dir_all(self.dir.path(), parent)?;
        }
        Ok(path)
    }

    /// Stages one file; a name is written once.
    pub fn add(&self, name: &str, bytes: &[u8]) -> Result<(), StoreError> {
        self.write(name, |out| out.write_all(bytes))
    }

    /// Stages one file, written by `f` as it makes it (a large state or
    /// findings file is never held whole) and hashed as it is written.
    /// Files may be staged from several threads at once.
    pub fn write(
        &self,
        name: &str,
        f: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<(), StoreError> {
        use sha2::Digest as _;
        let path = self.path_of(name)?;
        let file = statefs::create_new(self.dir.path(), &path)?;
        // Buffered before the hash: a serializer writes a few bytes at a
        // time, and the hash takes them a buffer at a time.
        let mut out = std::io::BufWriter::with_capacity(
            256 * 1024,
            Hashing {
                out: file,
                hasher: sha2::Sha256::new(),
            },
        );
        f(&mut out).map_err(io(&path))?;
        let hashed = out.into_inner().map_err(|e| io(&path)(e.into_error()))?;
        let sha = crate::digest::hex(&hashed.hasher.finalize());
        if let Ok(mut hashed) = self.hashed.lock() {
            hashed.insert(name.to_string(), sha);
        }
        Ok(())
    }

    /// Makes every file staged so far durable (fsync) and read-only, as
    /// the commit does first, so that the waits can overlap: a
    /// round seals its evidence while git moves its ref. A file staged
    /// after this is sealed by the commit.
    pub fn seal(&self) -> Result<(), StoreError> {
        let staged = self.dir.path();
        for file in list_files(staged)? {
            let done = self.sealed.lock().is_ok_and(|s| s.contains(&file));
            if done {
                continue;
            }
            let path = staged.join(&file);
            let f = OpenOptions::new()
                .read(true)
                .custom_flags(nix::libc::O_NOFOLLOW)
                .open(&path)
                .map_err(io(&path))?;
            f.sync_all().map_err(io(&path))?;
            let mut perms = f.metadata().map_err(io(&path))?.permissions();
            perms.set_readonly(true);
            f.set_permissions(perms).map_err(io(&path))?;
            if let Ok(mut sealed) = self.sealed.lock() {
                sealed.insert(file);
            }
        }
        Ok(())
    }

    /// Moves the staged folder to `dest` and returns its digest. An orphan at
    /// `dest` (a crash after its rename, before its row) is moved aside, never
    /// deleted.
    fn commit(mut self, dest: &Path) -> Result<String, StoreError> {
        let known = self.hashed.lock().map(|h| h.clone()).unwrap_or_default();
        let staged = self.dir.path();
        let digest = digest_dir_with(staged, &known)?;
        self.seal()?;
        if statefs::check(&self.base, dest)?.is_some() {
            let parent = dest.parent().unwrap_or(Path::new("."));
            let orphans = parent.join(".orphans");
            statefs::create_dir_all(&self.base, &orphans)?;
            let name = dest
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let aside = orphans.join(format!(
                "{name}-{}",
                staged
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            ));
            std::fs::rename(dest, &aside).map_err(io(dest))?;
        }
        std::fs::rename(staged, dest).map_err(io(dest))?;
        // The folder is evidence at `dest` now: nothing is left to remove.
        self.dir.disable_cleanup(true);
        sync_parent(dest)?;
        Ok(digest)
    }
}

/// A writer that hashes what it writes.
struct Hashing<W> {
    out: W,
    hasher: sha2::Sha256,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        use sha2::Digest as _;
        let n = self.out.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Every file below `dir`, as sorted `/`-separated relative paths.
fn list_files(dir: &Path) -> Result<Vec<String>, StoreError> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), String::new())];
    while let Some((path, rel)) = stack.pop() {
        for entry in std::fs::read_dir(&path).map_err(io(&path))? {
            let entry = entry.map_err(io(&path))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel_name = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            // The entry's own type (`lstat`): a link is refused, never followed.
            let kind = entry.file_type().map_err(io(&entry.path()))?;
            if kind.is_symlink() {
                return Err(FsError::Link { path: entry.path() }.into());
            } else if kind.is_dir() {
                stack.push((entry.path(), rel_name));
            } else {
                out.push(rel_name);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The digest of an evidence folder: each file's relative path and sha256, in
/// path order, framed. Adding, removing, renaming or changing a file changes
/// it. A link (the folder itself, or anything in it) is refused.
pub fn digest_dir(dir: &Path) -> Result<String, StoreError> {
    statefs::check_dir(dir)?;
    digest_dir_with(dir, &std::collections::BTreeMap::new())
}

/// [`digest_dir`], taking the sha256 of the files in `known` as given (they
/// were hashed as they were written) and hashing the rest from disk.
fn digest_dir_with(
    dir: &Path,
    known: &std::collections::BTreeMap<String, String>,
) -> Result<String, StoreError> {
    digest_dir_into(dir, known, &mut Default::default())
}

/// [`digest_dir_with`], also putting each file's sha256 in `files`.
fn digest_dir_into(
    dir: &Path,
    known: &std::collections::BTreeMap<String, String>,
    files: &mut std::collections::BTreeMap<String, String>,
) -> Result<String, StoreError> {
    let mut framed = Framed::new("referee.evidence.v1");
    for rel in list_files(dir)? {
        let sha = match known.get(&rel) {
            Some(sha) => sha.clone(),
            None => {
                let path = dir.join(&rel);
                statefs::sha256_file(&path)?
            }
        };
        framed.field(rel.as_bytes());
        framed.field(sha.as_bytes());
        files.insert(rel, sha);
    }
    Ok(framed.finish())
}

fn sync_parent(path: &Path) -> Result<(), StoreError> {
    if let Some(parent) = path.parent() {
        let dir = File::open(parent).map_err(io(parent))?;
        dir.sync_all().map_err(io(parent))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_with(bytes: &[u8]) -> (tempfile::TempDir, File) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.csv");
        std::fs::write(&path, bytes).unwrap();
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(&path)
            .unwrap();
        (dir, file)
    }

    fn contents(dir: &tempfile::TempDir) -> Vec<u8> {
        std::fs::read(dir.path().join("l.csv")).unwrap()
    }

    #[test]
    fn a_write_that_fails_part_way_leaves_the_committed_bytes_only() {
        let committed = b"header\nrow 1\n";
        let (dir, mut file) = file_with(committed);
        let len = committed.len() as u64;
        // A full disk: half the row lands, then ENOSPC.
        let err = write_or_undo(&mut file, len, b"row 2 is long\n", |file, bytes| {
            file.write_all(&bytes[..6])?;
            Err(std::io::Error::from_raw_os_error(nix::libc::ENOSPC))
        })
        .unwrap_err();
        assert_eq!(err.raw_os_error(), Some(nix::libc::ENOSPC), "{err}");
        assert_eq!(contents(&dir), committed);

        // The next append goes after the committed bytes, as if nothing failed.
        write_or_undo(&mut file, len, b"row 2\n", |file, bytes| {
            file.write_all(bytes)
        })
        .unwrap();
        assert_eq!(contents(&dir), b"header\nrow 1\nrow 2\n");
    }

    #[test]
    fn a_failed_fsync_also_takes_the_row_back() {
        let (dir, mut file) = file_with(b"");
        let err = write_or_undo(&mut file, 0, b"header\nrow 1\n", |file, bytes| {
            file.write_all(bytes)?;
            Err(std::io::Error::from_raw_os_error(nix::libc::EIO))
        })
        .unwrap_err();
        assert_eq!(err.raw_os_error(), Some(nix::libc::EIO));
        assert!(contents(&dir).is_empty());
    }

    #[test]
    fn a_store_refuses_a_linked_ledgers_folder_and_reads_no_evidence_link() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("ledgers")).unwrap();
        let base = dir.path().join("ledgers");
        let store = Store::new(base.join("l.csv"), base.join("l"), "");
        for err in [
            store.read().map(|_| ()).unwrap_err(),
            store.lock().map(|_| ()).unwrap_err(),
            store.verify().map(|_| ()).unwrap_err(),
        ] {
            assert!(
                matches!(&err, StoreError::Fs(FsError::Link { path }) if *path == base),
                "{err}"
            );
        }
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);

        let base = dir.path().join("real");
        std::fs::create_dir_all(base.join("l/round-1")).unwrap();
        std::fs::write(outside.path().join("state.json"), "{}").unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("state.json"),
            base.join("l/round-1/state.json"),
        )
        .unwrap();
        let store = Store::new(base.join("l.csv"), base.join("l"), "");
        assert!(matches!(
            store.evidence_file(1, "state.json"),
            Err(StoreError::Fs(FsError::Link { .. }))
        ));
        assert!(matches!(
            store.evidence_digest(1),
            Err(StoreError::Fs(FsError::Link { .. }))
        ));
        assert!(matches!(
            store.evidence_listing(1),
            Err(StoreError::Fs(FsError::Link { .. }))
        ));
    }

    /// The rows of `store` read in one pass, after the same check
    /// [`Store::each_row_formatted`] makes: what the tests hold the
    /// two-thread pass to.
    fn each_row_one_pass(
        store: &Store,
        mut f: impl FnMut(&RowRef<'_>),
    ) -> Result<Option<chain::Torn>, StoreError> {
        let Some(mut file) = statefs::open_read(&store.base, &store.ledger)? else {
            return Ok(None);
        };
        let (committed, torn) = store.check_whole(&mut file)?;
        file.seek(SeekFrom::Start(0)).map_err(io(&store.ledger))?;
        chain::each_view(&mut (&mut file).take(committed), |_, row| {
            f(row);
            Ok(())
        })
        .map_err(|e| store.stream(e))?;
        Ok(torn)
    }

    /// A store in a fresh folder, its `ledgers` folder made, no ledger yet.
    fn empty_store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("ledgers");
        std::fs::create_dir_all(&base).unwrap();
        let store = Store::new(base.join("l.csv"), base.join("l"), "");
        (dir, store)
    }

    /// A ledger's bytes, the header then rows `draft(1)`, `draft(2)`, …
    /// sealed in a chain, until it holds at least `len` bytes; with its
    /// number of rows.
    fn chained_ledger(len: usize, mut draft: impl FnMut(u32) -> Draft) -> (Vec<u8>, u32) {
        let mut bytes = header().into_bytes();
        bytes.push(b'\n');
        let (mut prev, mut rows) = ("0".repeat(64), 0);
        while bytes.len() < len {
            rows += 1;
            let row = Row::seal(draft(rows), &prev, "");
            prev = row.row_sha256.clone();
            bytes.extend(chain::write_record(&row.fields()));
        }
        (bytes, rows)
    }

    /// `ledger show --format json`'s path: rows formatted chunk by chunk on
    /// two threads and joined by `JsonRows::formatted` make the same
    /// document as the rows read whole and written in one pass, over many
    /// chunks, quoted rows among them; a ledger of only its header is `[]`.
    #[test]
    fn json_formatted_in_chunks_is_the_one_pass_document() {
        use crate::ledger::{Counts, Verdict};
        use crate::report::ledger::{JsonRows, write_json};
        let (_dir, store) = empty_store();
        let shown = |store: &Store| {
            let mut chunked = Vec::new();
            let mut json = JsonRows::new(&mut chunked);
            let format = json.format();
            store
                .each_row_formatted(format, |rows| json.formatted(rows))
                .unwrap()
                .unwrap();
            json.finish().unwrap();
            let mut whole = Vec::new();
            write_json(&store.read().unwrap().rows, &mut whole).unwrap();
            (chunked, whole)
        };
        std::fs::write(store.path(), header() + "\n").unwrap();
        assert_eq!(shown(&store), (b"[]\n".to_vec(), b"[]\n".to_vec()));
        let (bytes, _) = chained_ledger(2 << 20, |rows| {
            let mut d = Draft::new(Kind::Round, rows, "2026-01-02T03:04:05Z");
            d.counts = Some(Counts {
                opened: rows % 13,
                diff_added: u64::from(rows) * 7,
                ..Counts::default()
            });
            d.verdict = Some(Verdict::Continue);
            d.cost_usd = Some(f64::from(rows) / 8.0);
            d.reason = match rows % 3 {
                0 => format!("round {rows}: \"quoted\", with a comma"),
                _ => format!("round {rows}: plain"),
            };
            d
        });
        std::fs::write(store.path(), &bytes).unwrap();
        let (chunked, whole) = shown(&store);
        assert_eq!(
            String::from_utf8(chunked).unwrap(),
            String::from_utf8(whole).unwrap()
        );
    }

    /// A ledger checked in two halves at once answers as one checked whole,
    /// and its rows formatted on two threads as one pass reads them: every
    /// row seen when all read; the same error, naming the same row,
    /// wherever the bad row is; the same torn tail.
    #[test]
    fn a_large_ledger_checked_in_two_halves_answers_as_one_pass() {
        use crate::ledger::{Counts, Verdict};
        let (dir, store) = empty_store();
        let (good, rows) = chained_ledger(3 << 20, |rows| {
            let mut d = Draft::new(Kind::Round, rows, "2026-01-02T03:04:05Z");
            d.counts = Some(Counts::default());
            d.verdict = Some(Verdict::Continue);
            d.reason = format!("round {rows}: a reason long enough to fill the file");
            if rows == 5 {
                // A line longer than a chunk of the formatting pass.
                d.reason = "a very long reason ".repeat(20_000);
            }
            d
        });
        assert!(rows > 10_000, "{rows}");
        let seen = |bytes: &[u8]| {
            std::fs::write(store.path(), bytes).unwrap();
            let mut n = 0;
            let mut by_row = Vec::new();
            let line = |row: &RowRef<'_>| format!("{} {}\n", row.round, row.reason.len());
            let got = each_row_one_pass(&store, |row| {
                n += 1;
                by_row.extend_from_slice(line(row).as_bytes());
            })
            .map(|torn| (n, torn.map(|t| t.offset)));
            // Formatted on two threads: the same rows in the same order,
            // and the same answer.
            let mut formatted = Vec::new();
            let two = store.each_row_formatted(
                |row, out| out.extend_from_slice(line(row).as_bytes()),
                |bytes| {
                    formatted.extend_from_slice(bytes);
                    Ok(())
                },
            );
            match (&got, two) {
                (Ok((_, torn)), Ok(Ok(two))) => {
                    assert_eq!(two.map(|t| t.offset), *torn);
                    assert_eq!(formatted, by_row);
                }
                (Err(one), Err(two)) => {
                    assert_eq!(one.to_string(), two.to_string());
                    assert!(formatted.is_empty());
                }
                (one, two) => panic!("{one:?} but formatted: {two:?}"),
            }
            let mut out = Vec::new();
            let copied = store.copy_committed(&mut out).map(|r| r.unwrap().0);
            (
                got.map_err(|e| e.to_string()),
                copied.map_err(|e| e.to_string()),
                out,
            )
        };
        let in_two = |bytes: &[u8]| {
            std::fs::write(store.path(), bytes).unwrap();
            store.check_in_two(&mut File::open(store.path()).unwrap())
        };
        // Two halves where there are two cores; one pass on one.
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let whole = (cores > 1).then_some(good.len() as u64);
        assert_eq!(in_two(&good), whole);
        let (got, copied, out) = seen(&good);
        assert_eq!(got, Ok((rows as usize, None)));
        assert_eq!(copied, Ok(good.len() as u64));
        assert_eq!(out, good);

        // A bad row early, just past the middle, and last.
        let lines: Vec<&[u8]> = good.split_inclusive(|&b| b == b'\n').collect();
        for bad in [3, lines.len() / 2, lines.len() / 2 + 1, lines.len() - 1] {
            let mut bytes = Vec::new();
            for (i, line) in lines.iter().enumerate() {
                if i == bad {
                    let line = String::from_utf8_lossy(line).replacen(",round,", ",rund,", 1);
                    bytes.extend_from_slice(line.as_bytes());
                } else {
                    bytes.extend_from_slice(line);
                }
            }
            assert_eq!(in_two(&bytes), None, "{bad}");
            let (got, copied, out) = seen(&bytes);
            let want = format!("row {bad}: column `kind`");
            assert!(
                got.as_ref().is_err_and(|e| e.contains(&want)),
                "{bad}: {got:?}"
            );
            assert!(
                copied.as_ref().is_err_and(|e| e.contains(&want)),
                "{bad}: {copied:?}"
            );
            assert!(out.is_empty());
        }

        // A ledger replaced after it was opened (renamed over): the halves
        // would be of two files, so it is checked in one pass.
        let opened = dir.path().join("opened.csv");
        std::fs::write(&opened, &good).unwrap();
        std::fs::write(store.path(), &good).unwrap();
        assert_eq!(store.check_in_two(&mut File::open(&opened).unwrap()), None);

        // A torn tail.
        let mut torn = good.clone();
        torn.extend_from_slice(b"9,1,0,0,1,0,12,3,contin");
        assert_eq!(in_two(&torn), None);
        let (got, copied, out) = seen(&torn);
        assert_eq!(got, Ok((rows as usize, Some(good.len() as u64))));
        assert_eq!(copied, Ok(good.len() as u64));
        assert_eq!(out, good);
    }

    /// Evidence sealed early (while git moves the round's refs) and a file
    /// staged after that: the row's folder has every file, each read-only,
    /// and its digest is the folder's.
    #[test]
    fn evidence_staged_after_the_seal_is_sealed_by_the_commit() {
        use crate::ledger::{Counts, Verdict};
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("ledgers");
        let store = Store::new(base.join("l.csv"), base.join("l"), "");
        let mut locked = store.lock().unwrap();
        let evidence = Evidence::stage(&store).unwrap();
        evidence.add("patch.diff", b"+x\n").unwrap();
        evidence.seal().unwrap();
        evidence.add("state.json", b"{}\n").unwrap();
        let mut d = Draft::new(Kind::Round, 1, "2026-01-02T03:04:05Z");
        d.counts = Some(Counts::default());
        d.verdict = Some(Verdict::Continue);
        let row = locked.append(d, Some(evidence)).unwrap();
        let folder = store.evidence_dir(1);
        for name in ["patch.diff", "state.json"] {
            let mode = std::fs::metadata(folder.join(name))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o222, 0, "{name} is writable: {mode:o}");
        }
        assert_eq!(Some(row.evidence_sha256), store.evidence_digest(1).unwrap());
    }

    /// The listing's digest is the folder's digest, and it names each
    /// file's sha256 (what `read_state` compares the bytes it read with).
    #[test]
    fn an_evidence_listing_is_the_digest_and_each_files_hash() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("ledgers");
        std::fs::create_dir_all(base.join("l/round-1/sub")).unwrap();
        std::fs::write(base.join("l/round-1/state.json"), "{}\n").unwrap();
        std::fs::write(base.join("l/round-1/sub/x"), "x").unwrap();
        let store = Store::new(base.join("l.csv"), base.join("l"), "");
        let listing = store.evidence_listing(1).unwrap().unwrap();
        assert_eq!(Some(listing.digest), store.evidence_digest(1).unwrap());
        let want: std::collections::BTreeMap<String, String> = [
            ("state.json".to_string(), crate::digest::sha256_hex(b"{}\n")),
            ("sub/x".to_string(), crate::digest::sha256_hex(b"x")),
        ]
        .into();
        assert_eq!(listing.files, want);
        assert_eq!(store.evidence_listing(2).unwrap(), None);
    }
}
