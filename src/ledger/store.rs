//! The ledger on disk: an exclusive lock, whole-row appends with fsync, the
//! write-once evidence folders, and reads. Does I/O, and never through a
//! link: everything below the ledgers folder goes through [`crate::statefs`].

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::chain::{self, ChainError, Parsed, Torn};
use super::lock::{self, Busy, Mode};
use super::row::{Draft, Kind, Row, header};
use crate::digest::Framed;
use crate::exit::Hinted;
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
        "ledger `{}`: {problem}; nothing was recorded",
        crate::statefs::shown(path)
    )]
    Broken { path: PathBuf, problem: String },
    #[error(transparent)]
    Anchor(#[from] crate::anchor::AnchorError),
    /// The ledger is locked by processes that are not a live referee: not
    /// honoured, so an append refuses (SPEC §8.6).
    #[error(
        "ledger `{}` is locked by {}, which is not a live referee: its lock is not honoured, and nothing was written",
        statefs::shown(path),
        lock::named(holders)
    )]
    NotHonoured {
        path: PathBuf,
        holders: Vec<crate::anchor::holder::Holder>,
    },
    /// A live referee (or a holder that cannot be named) kept the lock for
    /// [`lock::LOCK_WAIT`].
    #[error(
        "ledger `{}` is still locked after {}s by {}; nothing was {undone}",
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

impl StoreError {
    /// What to do next, if there is an obvious step.
    pub fn hint(&self) -> Option<String> {
        match self {
            StoreError::Io { cause, .. } => cause
                .get_ref()
                .and_then(|inner| inner.downcast_ref::<Hinted>())
                .and_then(|hinted| hinted.hints.first().cloned()),
            // A row that no longer reads or hashes as written was edited:
            // the committed file comes back from git.
            StoreError::Chain { path, cause } => cause.hint().or_else(|| {
                matches!(cause, ChainError::Row { .. } | ChainError::Header { .. }).then(|| {
                    format!(
                        "a ledger is never edited: put the committed one back with `git checkout -- {}` (or from a copy); `referee ledger verify --json` says what each check found",
                        statefs::shown(path)
                    )
                })
            }),
            StoreError::Evidence { .. } => None,
            StoreError::Fs(err) => err.hint(),
            StoreError::Broken { path, .. } => Some(format!(
                "`referee ledger verify` says what the anchor holds; a ledger you committed comes back with `git checkout -- {}`",
                statefs::shown(path)
            )),
            StoreError::Anchor(err) => err.hint(),
            StoreError::NotHonoured { holders, .. } => Some(format!(
                "if it is a leftover (of a writer agent, say), ending it is your call: `kill {}`; referee never ends it",
                pids(holders)
            )),
            StoreError::Held { .. } => {
                Some("wait for it to finish, then run the command again".into())
            }
        }
    }
}

/// The pids of `holders`, for a `kill` hint.
fn pids(holders: &[crate::anchor::holder::Holder]) -> String {
    let pids: Vec<String> = holders.iter().map(|h| h.pid.to_string()).collect();
    pids.join(" ")
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
        chain::parse(&self.read_bytes()?).map_err(|cause| self.chain(cause))
    }

    /// The ledger's committed bytes (the header and rows as the file holds
    /// them, no torn tail; empty when there is no ledger yet), once every
    /// row reads: a reader printing them never prints half a ledger. With
    /// the torn tail, if any.
    pub fn read_committed(&self) -> Result<(Vec<u8>, Option<Torn>), StoreError> {
        let mut bytes = self.read_bytes()?;
        let torn = chain::parse(&bytes)
            .map_err(|cause| self.chain(cause))?
            .torn;
        if let Some(torn) = &torn {
            bytes.truncate(bytes.len() - torn.bytes.len());
        }
        Ok((bytes, torn))
    }

    /// The ledger's bytes under a shared lock (none: no ledger yet).
    fn read_bytes(&self) -> Result<Vec<u8>, StoreError> {
        self.check_base()?;
        let Some(mut file) = statefs::open_read(&self.base, &self.ledger)? else {
            return Ok(Vec::new());
        };
        self.lock_shared(&file)?;
        let mut bytes = Vec::new();
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
    /// caller that checks more need not read the ledger again).
    pub fn verify_seeing(
        &self,
        seen: impl FnMut(usize, &Row),
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
        // A link in place of the evidence folder is refused even before a
        // row names a round of it; a file there holds no round's evidence.
        let evidence_folder = matches!(
            statefs::check(&self.base, &self.evidence_root)?,
            Some(meta) if meta.is_dir()
        );
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io(&self.ledger))?;
        let evidence = |row: &Row| match row.kind {
            Kind::Round if evidence_folder => self
                .evidence_digest(row.round)
                .map_err(|e| Hinted::maybe(e.to_string(), e.hint())),
            _ => Ok(None),
        };
        chain::verify(&bytes, &self.genesis, evidence, seen).map_err(|cause| self.chain(cause))
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
        let mut whole = bytes;
        whole.push(b'\n');
        // The chain and the row hashes; evidence is `verify`'s to check.
        let recorded =
            |row: &Row| Ok((!row.evidence_sha256.is_empty()).then(|| row.evidence_sha256.clone()));
        if chain::verify(&whole, &self.genesis, recorded, |_, _| {})
            .is_ok_and(|summary| summary.rows == parsed.rows.len() + 1)
        {
            locked.file.write_all(b"\n").map_err(io(&self.ledger))?;
            locked.file.sync_all().map_err(io(&self.ledger))?;
            return Ok(None);
        }
        locked.file.set_len(torn.offset).map_err(io(&self.ledger))?;
        locked.file.sync_all().map_err(io(&self.ledger))?;
        Ok(Some(torn.bytes))
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

    /// The last committed row; refuses a torn tail.
    pub fn last(&mut self) -> Result<Option<Row>, StoreError> {
        Ok(self.rows()?.pop())
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
        // A torn tail must be repaired before anything follows it.
        let rows = self.rows()?;
        let anchored = self.anchored_rows(&rows)?;
        let prev = match rows.last() {
            Some(row) => row.row_sha256.clone(),
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
    fn anchored_rows(&self, rows: &[Row]) -> Result<Option<usize>, StoreError> {
        let Some(anchor) = &self.store.anchor else {
            return Ok(None);
        };
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
            Hinted::new(
                format!("{cause}; the partial row could not be removed ({undo})"),
                "run `referee ledger repair`",
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
    hashed: std::collections::BTreeMap<String, String>,
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
            hashed: std::collections::BTreeMap::new(),
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
    pub fn add(&mut self, name: &str, bytes: &[u8]) -> Result<(), StoreError> {
        self.write(name, |out| out.write_all(bytes))
    }

    /// Stages one file, written by `f` as it makes it (a large state or
    /// findings file is never held whole) and hashed as it is written.
    pub fn write(
        &mut self,
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
        self.hashed.insert(name.to_string(), sha);
        Ok(())
    }

    /// Makes every staged file durable (fsync) and read-only.
    fn seal(&self) -> Result<(), StoreError> {
        let staged = self.dir.path();
        for file in list_files(staged)? {
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
        }
        Ok(())
    }

    /// Moves the staged folder to `dest` and returns its digest. An orphan at
    /// `dest` (a crash after its rename, before its row) is moved aside, never
    /// deleted.
    fn commit(mut self, dest: &Path) -> Result<String, StoreError> {
        let staged = self.dir.path();
        let digest = digest_dir_with(staged, &self.hashed)?;
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

    /// A store in a fresh folder, its `ledgers` folder made, no ledger yet.
    fn empty_store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("ledgers");
        std::fs::create_dir_all(&base).unwrap();
        let store = Store::new(base.join("l.csv"), base.join("l"), "");
        (dir, store)
    }

    /// A ledger's bytes: the header, then `rows` round rows sealed in a
    /// chain after the store's empty genesis, one reason quoted.
    fn chained_ledger(rows: u32) -> Vec<u8> {
        use crate::ledger::{Counts, Verdict};
        let mut bytes = header().into_bytes();
        bytes.push(b'\n');
        let mut prev = String::new();
        for round in 1..=rows {
            let mut d = Draft::new(Kind::Round, round, "2026-01-02T03:04:05Z");
            d.counts = Some(Counts::default());
            d.verdict = Some(Verdict::Continue);
            d.reason = format!("round {round}: \"quoted\", with a comma");
            let row = Row::seal(d, &prev, "");
            prev = row.row_sha256.clone();
            bytes.extend(chain::write_record(&row.fields()));
        }
        bytes
    }

    /// What `ledger show --format csv` prints: the committed bytes as the
    /// file holds them, without a torn tail; nothing but the error when a
    /// row does not read.
    #[test]
    fn the_committed_bytes_are_the_file_without_its_torn_tail() {
        let (_dir, store) = empty_store();
        assert_eq!(store.read_committed().unwrap(), (Vec::new(), None));
        let good = chained_ledger(3);
        std::fs::write(store.path(), &good).unwrap();
        assert_eq!(store.read_committed().unwrap(), (good.clone(), None));
        assert_eq!(store.verify().unwrap().rows, 3);

        let mut torn = good.clone();
        torn.extend_from_slice(b"4,0,0,0,0,0,12,3,contin");
        std::fs::write(store.path(), &torn).unwrap();
        let (bytes, tail) = store.read_committed().unwrap();
        assert_eq!(bytes, good);
        assert_eq!(
            tail.map(|t| (t.offset, t.bytes)),
            Some((good.len() as u64, b"4,0,0,0,0,0,12,3,contin".to_vec()))
        );
        let err = store.verify().unwrap_err().to_string();
        assert!(
            err.contains("torn final line after row 3 (23 bytes"),
            "{err}"
        );

        let bad = String::from_utf8(good)
            .unwrap()
            .replacen(",round,", ",rund,", 2);
        std::fs::write(store.path(), bad).unwrap();
        let err = store.read_committed().unwrap_err().to_string();
        assert!(err.contains("row 1: column `kind`"), "{err}");
    }

    /// `repair` cuts a torn tail, and gives a final row that lost only its
    /// newline that newline back.
    #[test]
    fn repair_cuts_a_torn_tail_and_keeps_a_whole_last_row() {
        let (_dir, store) = empty_store();
        let good = chained_ledger(2);
        std::fs::write(store.path(), &good[..good.len() - 1]).unwrap();
        assert_eq!(store.repair().unwrap(), None);
        assert_eq!(std::fs::read(store.path()).unwrap(), good);

        let mut torn = good.clone();
        torn.extend_from_slice(b"3,1,0");
        std::fs::write(store.path(), &torn).unwrap();
        assert_eq!(store.repair().unwrap(), Some(b"3,1,0".to_vec()));
        assert_eq!(std::fs::read(store.path()).unwrap(), good);
        assert_eq!(store.repair().unwrap(), None);
    }

    /// A row's committed evidence: its folder has every file, each
    /// read-only, and its digest is the folder's.
    #[test]
    fn committed_evidence_is_read_only_and_its_digest_is_the_folders() {
        use crate::ledger::{Counts, Verdict};
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("ledgers");
        let store = Store::new(base.join("l.csv"), base.join("l"), "");
        let mut locked = store.lock().unwrap();
        let mut evidence = Evidence::stage(&store).unwrap();
        evidence.add("patch.diff", b"+x\n").unwrap();
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
