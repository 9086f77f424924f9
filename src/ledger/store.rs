//! The ledger on disk: an exclusive lock, whole-row appends with fsync, the
//! write-once evidence folders, and reads. Does I/O.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::chain::{self, ChainError, Parsed};
use super::row::{Draft, Kind, Row, header};
use crate::digest::{Framed, sha256_hex};

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
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |cause| StoreError::Io {
        path: path.to_path_buf(),
        cause,
    }
}

/// One loop's ledger file and evidence folder.
#[derive(Debug, Clone)]
pub struct Store {
    ledger: PathBuf,
    evidence_root: PathBuf,
    /// The contract's sha256: `prev_sha256` of row 1.
    genesis: String,
}

impl Store {
    pub fn new(ledger: PathBuf, evidence_root: PathBuf, contract_sha256: &str) -> Store {
        Store {
            ledger,
            evidence_root,
            genesis: contract_sha256.to_string(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.ledger
    }

    /// The evidence folder of round `round`.
    pub fn evidence_dir(&self, round: u32) -> PathBuf {
        self.evidence_root.join(format!("round-{round}"))
    }

    /// Whether the ledger has at least one committed row.
    pub fn has_rows(&self) -> Result<bool, StoreError> {
        match std::fs::metadata(&self.ledger) {
            Ok(meta) => Ok(meta.len() > 0 && !self.read()?.rows.is_empty()),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(err) => Err(io(&self.ledger)(err)),
        }
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
        let mut file = match File::open(&self.ledger) {
            Ok(file) => file,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Parsed {
                    rows: Vec::new(),
                    hashes: Vec::new(),
                    torn: None,
                });
            }
            Err(err) => return Err(io(&self.ledger)(err)),
        };
        file.lock_shared().map_err(io(&self.ledger))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io(&self.ledger))?;
        parse(&bytes).map_err(|cause| self.chain(cause))
    }

    /// Takes the exclusive lock that every append holds, creating the file.
    pub fn lock(&self) -> Result<Locked<'_>, StoreError> {
        if let Some(parent) = self.ledger.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&self.ledger)
            .map_err(io(&self.ledger))?;
        file.lock().map_err(io(&self.ledger))?;
        Ok(Locked { store: self, file })
    }

    /// Checks the chain and every evidence digest.
    pub fn verify(&self) -> Result<chain::Summary, StoreError> {
        let parsed = self.read_with(chain::parse_hashed)?;
        // Which rounds have an evidence folder, listed once (not a stat per row).
        let present: std::collections::HashSet<u32> = std::fs::read_dir(&self.evidence_root)
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
        chain::verify(&parsed, &self.genesis, |row| {
            if row.kind != Kind::Round || !present.contains(&row.round) {
                return Ok(None);
            }
            self.evidence_digest_of(row)
        })
        .map_err(|cause| self.chain(cause))
    }

    /// Removes a torn final line, if any; returns the bytes removed.
    pub fn repair(&self) -> Result<Option<Vec<u8>>, StoreError> {
        let mut locked = self.lock()?;
        let bytes = locked.read_all()?;
        let parsed = chain::parse(&bytes).map_err(|cause| self.chain(cause))?;
        let Some(torn) = parsed.torn else {
            return Ok(None);
        };
        locked.file.set_len(torn.offset).map_err(io(&self.ledger))?;
        locked.file.sync_all().map_err(io(&self.ledger))?;
        Ok(Some(torn.bytes))
    }

    fn evidence_digest_of(&self, row: &Row) -> Result<Option<String>, String> {
        if row.kind != Kind::Round {
            return Ok(None);
        }
        let dir = self.evidence_dir(row.round);
        if !dir.exists() {
            return Ok(None);
        }
        digest_dir(&dir).map(Some).map_err(|e| e.to_string())
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
        let prev = match self.last()? {
            Some(row) => row.row_sha256,
            None => self.store.genesis.clone(),
        };
        let evidence_sha256 = match evidence {
            Some(evidence) => {
                if draft.kind != Kind::Round {
                    return Err(StoreError::Evidence {
                        path: evidence.dir.clone(),
                        problem: "only round rows carry evidence".into(),
                    });
                }
                evidence.commit(&self.store.evidence_dir(draft.round))?
            }
            None => String::new(),
        };
        let row = Row::seal(draft, &prev, &evidence_sha256);
        let mut bytes = Vec::new();
        if len == 0 {
            bytes.extend_from_slice(header().as_bytes());
            bytes.push(b'\n');
        }
        bytes.extend(chain::write_record(&row.fields()));
        self.file.write_all(&bytes).map_err(io(&path))?;
        self.file.sync_data().map_err(io(&path))?;
        if len == 0 {
            sync_parent(&path)?;
        }
        Ok(row)
    }
}

/// A round's evidence, staged in a private folder until the row commits it.
#[derive(Debug)]
pub struct Evidence {
    dir: PathBuf,
    committed: bool,
    /// The sha256 of each file written through [`Evidence::add`], so the
    /// digest need not read them back.
    hashed: std::sync::Mutex<std::collections::BTreeMap<String, String>>,
}

impl Evidence {
    /// A new staging folder under the store's evidence root. Call it holding
    /// the ledger lock: staging folders found then were left by a process
    /// killed before its row, and are removed (they were never evidence).
    pub fn stage(store: &Store) -> Result<Evidence, StoreError> {
        let root = &store.evidence_root;
        std::fs::create_dir_all(root).map_err(io(root))?;
        if let Ok(entries) = std::fs::read_dir(root) {
            for entry in entries.flatten() {
                if entry.file_name().to_string_lossy().starts_with(".staging-") {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        for attempt in 0..100u32 {
            let dir = root.join(format!(".staging-{}-{nanos}-{attempt}", std::process::id()));
            match std::fs::create_dir(&dir) {
                Ok(()) => {
                    return Ok(Evidence {
                        dir,
                        committed: false,
                        hashed: std::sync::Mutex::default(),
                    });
                }
                Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(err) => return Err(io(&dir)(err)),
            }
        }
        Err(StoreError::Evidence {
            path: root.clone(),
            problem: "cannot create a staging folder".into(),
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
                path: self.dir.clone(),
                problem: format!("`{name}` is not a plain relative file name"),
            });
        }
        let path = self.dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        Ok(path)
    }

    /// Stages one file; a name is written once.
    pub fn add(&self, name: &str, bytes: &[u8]) -> Result<(), StoreError> {
        let path = self.path_of(name)?;
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(io(&path))?;
        file.write_all(bytes).map_err(io(&path))?;
        if let Ok(mut hashed) = self.hashed.lock() {
            hashed.insert(name.to_string(), sha256_hex(bytes));
        }
        Ok(())
    }

    /// Moves the staged folder to `dest` and returns its digest. An orphan at
    /// `dest` (a crash after its rename, before its row) is moved aside, never
    /// deleted.
    fn commit(mut self, dest: &Path) -> Result<String, StoreError> {
        let known = self.hashed.lock().map(|h| h.clone()).unwrap_or_default();
        let digest = digest_dir_with(&self.dir, &known)?;
        for file in list_files(&self.dir)? {
            let path = self.dir.join(&file);
            let f = File::open(&path).map_err(io(&path))?;
            f.sync_all().map_err(io(&path))?;
            let mut perms = f.metadata().map_err(io(&path))?.permissions();
            perms.set_readonly(true);
            std::fs::set_permissions(&path, perms).map_err(io(&path))?;
        }
        if dest.exists() {
            let parent = dest.parent().unwrap_or(Path::new("."));
            let orphans = parent.join(".orphans");
            std::fs::create_dir_all(&orphans).map_err(io(&orphans))?;
            let name = dest
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let aside = orphans.join(format!(
                "{name}-{}",
                self.dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            ));
            std::fs::rename(dest, &aside).map_err(io(dest))?;
        }
        std::fs::rename(&self.dir, dest).map_err(io(dest))?;
        sync_parent(dest)?;
        self.committed = true;
        Ok(digest)
    }
}

impl Drop for Evidence {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
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
            let kind = entry.file_type().map_err(io(&entry.path()))?;
            if kind.is_dir() {
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
/// path order, framed. Adding, removing, renaming or changing a file changes it.
pub fn digest_dir(dir: &Path) -> Result<String, StoreError> {
    digest_dir_with(dir, &std::collections::BTreeMap::new())
}

/// [`digest_dir`], taking the sha256 of the files in `known` as given (they
/// were hashed as they were written) and hashing the rest from disk.
fn digest_dir_with(
    dir: &Path,
    known: &std::collections::BTreeMap<String, String>,
) -> Result<String, StoreError> {
    let mut framed = Framed::new("referee.evidence.v1");
    for rel in list_files(dir)? {
        let sha = match known.get(&rel) {
            Some(sha) => sha.clone(),
            None => {
                let path = dir.join(&rel);
                let bytes = std::fs::read(&path).map_err(io(&path))?;
                sha256_hex(&bytes)
            }
        };
        framed.field(rel.as_bytes());
        framed.field(sha.as_bytes());
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
