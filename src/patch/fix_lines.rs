//! What the fix rounds changed, line by line across files (SPEC §4.1
//! "Reversals", "Reversals across files"), kept from round to round in the
//! round's state so that a later round checks its patch against it without
//! reading any earlier patch again. For each line's content, the latest fix
//! round that added or removed it and the files it has lived in.
//!
//! A later patch reverses a fix when a line a fix round removed comes back
//! (in its file, or in a file the code around it moved to), or when a line a
//! fix round added is removed with nothing in its place (or left behind when
//! the code around it moved). Lines are compared with whitespace removed and
//! across the whole patch: a line moved, within a file or to another one,
//! counts neither way. Pure; never panics, whatever the patch.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt;

use serde::{Deserialize, Serialize};

use super::{FilePatch, Line, ParsedPatch, content_key};

/// Lines of code that must come along for a move between two files to be
/// one: a single line that also appears elsewhere is a coincidence.
const MOVED_LINES: usize = 2;

/// The fix rounds' changes, line by line.
///
/// Held as it is stored: a line's hash (the first 8 bytes of the sha256 of
/// the line without whitespace: no code text is kept) sits in the one
/// change that is its latest. A round reads the whole of it once, looks up
/// only its own patch's lines in one pass, and writes it back, with no
/// index to build or sort: a 100-round loop of 500-line rewrites keeps
/// some 50,000 lines, and building a map of them, or reading them as JSON
/// numbers or hex, cost a round more than the rest of what it does
/// (docs/performance.md, section 6).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct FixLines {
    /// Each file a fix round changed, by every name it has had.
    files: Vec<Vec<String>>,
    /// One per round, kind and file, in the order first made.
    changes: Vec<Change>,
}

/// The lines whose latest change was `round` adding (or removing) them in
/// file `file` (an index into `FixLines::files`), or moving them there
/// since.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
struct Change {
    round: u32,
    added: bool,
    file: u32,
    lines: Vec<u64>,
}

/// A line's latest change, as looked up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Mark {
    round: u32,
    added: bool,
    file: u32,
}

impl Change {
    fn mark(&self) -> Mark {
        Mark {
            round: self.round,
            added: self.added,
            file: self.file,
        }
    }
}

/// The first line of the stored form.
const MAGIC: &[u8] = b"referee fix-lines 1\n";

/// The stored form's second line: the files and the changes, each with
/// how many of the hashes that follow are its.
#[derive(Serialize, Deserialize)]
struct Header {
    files: Vec<Vec<String>>,
    changes: Vec<HeaderChange>,
}

#[derive(Serialize, Deserialize)]
struct HeaderChange {
    round: u32,
    added: bool,
    file: u32,
    lines: usize,
}

/// Why stored bytes are not what the fix rounds changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable(String);

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unreadable {}

impl FixLines {
    /// The stored form: `MAGIC`, a line of JSON (the files, and each
    /// change with its count of lines), then every change's lines in turn,
    /// 8 bytes each, big-endian. Binary because the lines are opaque
    /// hashes: read and written as they lie, where JSON numbers or hex
    /// took a round longer than the rest of it.
    pub fn to_bytes(&self) -> Vec<u8> {
        let header = Header {
            files: self.files.clone(),
            changes: self
                .changes
                .iter()
                .map(|c| HeaderChange {
                    round: c.round,
                    added: c.added,
                    file: c.file,
                    lines: c.lines.len(),
                })
                .collect(),
        };
        let count: usize = self.changes.iter().map(|c| c.lines.len()).sum();
        let mut out = Vec::with_capacity(MAGIC.len() + 256 + count * 8);
        out.extend_from_slice(MAGIC);
        // Compact JSON escapes every newline, so the header is one line.
        if serde_json::to_writer(&mut out, &header).is_err() {
            out.truncate(MAGIC.len());
            out.extend_from_slice(br#"{"files":[],"changes":[]}"#);
        }
        out.push(b'\n');
        for change in &self.changes {
            for line in &change.lines {
                out.extend_from_slice(&line.to_be_bytes());
            }
        }
        out
    }

    /// Reads [`FixLines::to_bytes`]'s form, or the JSON the first loops to
    /// keep the fix lines stored (`{"files":…,"changes":[{…,"lines":[…]}]}`).
    pub fn from_bytes(bytes: &[u8]) -> Result<FixLines, Unreadable> {
        let Some(rest) = bytes.strip_prefix(MAGIC) else {
            return serde_json::from_slice(bytes).map_err(|e| {
                Unreadable(format!("neither referee's fix lines nor their JSON: {e}"))
            });
        };
        let end = rest
            .iter()
            .position(|&b| b == b'\n')
            .ok_or_else(|| Unreadable("its header line has no end".into()))?;
        let header: Header = serde_json::from_slice(&rest[..end])
            .map_err(|e| Unreadable(format!("its header line: {e}")))?;
        let mut hashes = rest[end + 1..].chunks_exact(8);
        if !hashes.remainder().is_empty() {
            return Err(Unreadable(format!(
                "{} bytes of line hashes, not a multiple of 8",
                rest.len() - end - 1
            )));
        }
        let stored = hashes.len();
        let mut changes = Vec::with_capacity(header.changes.len());
        for c in header.changes {
            if c.lines > hashes.len() {
                return Err(Unreadable(format!(
                    "its header counts more lines than the {stored} it holds"
                )));
            }
            let lines = hashes
                .by_ref()
                .take(c.lines)
                .map(|h| u64::from_be_bytes(h.try_into().unwrap_or_default()))
                .collect();
            changes.push(Change {
                round: c.round,
                added: c.added,
                file: c.file,
                lines,
            });
        }
        if hashes.len() != 0 {
            return Err(Unreadable(format!(
                "it holds {stored} line hashes, {} more than its header counts",
                hashes.len()
            )));
        }
        Ok(FixLines {
            files: header.files,
            changes,
        })
    }
}

/// A line of a later patch that reverses an earlier fix round's change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineReversal {
    /// The fix round whose change is reversed.
    pub round: u32,
    /// The file of the later patch where it happened.
    pub file: String,
    /// The line, trimmed.
    pub text: String,
    /// True: the line the fix removed came back; false: the line it added went.
    pub restored: bool,
    /// It happened while code moved: the file the code moved from (a line
    /// restored) or to (a line left behind).
    pub moved: Option<String>,
}

impl fmt::Display for LineReversal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (round, file, text) = (self.round, &self.file, &self.text);
        match (self.restored, &self.moved) {
            (true, None) => write!(
                f,
                "puts back a line that round {round} removed in `{file}`: `{text}`"
            ),
            (true, Some(from)) => write!(
                f,
                "puts back a line that round {round} removed in `{from}`, in `{file}` where the code moved: `{text}`"
            ),
            (false, None) => write!(
                f,
                "removes a line that round {round} added in `{file}`: `{text}`"
            ),
            (false, Some(to)) if to == file => write!(
                f,
                "leaves out a line that round {round} added in `{file}` when the code around it moved: `{text}`"
            ),
            (false, Some(to)) => write!(
                f,
                "leaves out a line that round {round} added in `{file}` when the code around it moved to `{to}`: `{text}`"
            ),
        }
    }
}

impl FixLines {
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// The latest change of each of `wanted`'s lines that has one: one
    /// pass over what is kept (a later change of a line wins, should a
    /// file ever hold two).
    fn marks(&self, wanted: impl IntoIterator<Item = u64>) -> HashMap<u64, Mark> {
        let wanted: HashSet<u64> = wanted.into_iter().collect();
        let mut found = HashMap::new();
        if wanted.is_empty() {
            return found;
        }
        for change in &self.changes {
            for line in change.lines.iter().filter(|l| wanted.contains(l)) {
                found.insert(*line, change.mark());
            }
        }
        found
    }

    /// The first line of `later` that reverses a recorded fix round's
    /// change, in the patch's order: a line put back first, then a line
    /// taken out (a fix rewritten back into what it replaced tells both;
    /// the line put back tells it plainest).
    pub fn reversal(&self, later: &ParsedPatch) -> Option<LineReversal> {
        if self.changes.is_empty() {
            return None;
        }
        let changes = Changes::of(later);
        let marks = self.marks(changes.keys.values().map(|c| c.hash));
        let check = |occ: &Occurrence<'_>| self.reverses(later, &changes, &marks, occ);
        let (back, out): (Vec<_>, Vec<_>) = changes.occurrences.iter().partition(|o| o.added);
        back.into_iter()
            .find_map(check)
            .or_else(|| out.into_iter().find_map(check))
    }

    /// Whether the added or removed line `occ` of `later` reverses a fix.
    fn reverses(
        &self,
        later: &ParsedPatch,
        changes: &Changes<'_>,
        marks: &HashMap<u64, Mark>,
        occ: &Occurrence<'_>,
    ) -> Option<LineReversal> {
        let change = changes.keys.get(&occ.key)?;
        let mark = marks.get(&change.hash)?;
        let (round, added) = (&mark.round, &mark.added);
        let file = &later.files[occ.file];
        let shown = || String::from_utf8_lossy(occ.text).trim().to_string();
        let here = self.lived_in(mark.file, file);
        if occ.added && !added && change.net > 0 {
            // A line the fix removed, back: in its file, or in a file that
            // code moved to from its file.
            let moved = if here {
                None
            } else {
                let from = changes
                    .moved_here_from(occ.file, |i| self.lived_in(mark.file, &later.files[i]))?;
                Some(path(&later.files[from]))
            };
            return Some(LineReversal {
                round: *round,
                file: path(file),
                text: shown(),
                restored: true,
                moved,
            });
        }
        if !occ.added && *added && change.net < 0 && here {
            // A line the fix added, gone with nothing in its place, or left
            // behind by code that moved.
            let block = changes.blocks.get(occ.block)?;
            // `lines` counts this line: at least half moved is one moved.
            let moved = if block.moved * 2 >= block.lines {
                block.moved_to.map(|i| path(&later.files[i]))
            } else if !block.replaces {
                None
            } else {
                return None;
            };
            return Some(LineReversal {
                round: *round,
                file: path(file),
                text: shown(),
                restored: false,
                moved,
            });
        }
        None
    }

    /// Adds fix round `round`'s patch: its net lines become the latest
    /// change of their content; lines it moved to another file and files
    /// it renamed keep their marks under the new names.
    pub fn record(&mut self, round: u32, patch: &ParsedPatch) {
        for fp in &patch.files {
            // A rename: the file's names grow by its new one.
            if let (Some(old), Some(new)) = (&fp.old_path, &fp.new_path) {
                for names in &mut self.files {
                    if names.contains(old) && !names.contains(new) {
                        names.push(new.clone());
                    }
                }
            }
        }
        let changes = Changes::of(patch);
        let moved = changes.keys.values().filter(|c| c.net == 0);
        let known = self.marks(moved.map(|c| c.hash));
        let mut latest: HashMap<u64, Mark> = HashMap::new();
        for change in changes.keys.values() {
            let (added, file) = match change.net.cmp(&0) {
                // Moved: a line that left a mark's file for another one
                // lives there now.
                std::cmp::Ordering::Equal => {
                    let Some(mark) = known.get(&change.hash).copied() else {
                        continue;
                    };
                    let left = change
                        .removed_in
                        .iter()
                        .any(|&i| self.lived_in(mark.file, &patch.files[i]));
                    let Some(&to) = change.added_in.iter().next().filter(|_| left) else {
                        continue;
                    };
                    let file = self.file_index(&patch.files[to]);
                    latest.insert(change.hash, Mark { file, ..mark });
                    continue;
                }
                std::cmp::Ordering::Greater => (true, change.added_in.iter().next()),
                std::cmp::Ordering::Less => (false, change.removed_in.iter().next()),
            };
            let Some(&file) = file else {
                continue;
            };
            let file = self.file_index(&patch.files[file]);
            latest.insert(change.hash, Mark { round, added, file });
        }
        self.update(latest);
    }

    /// Makes `latest` the changes of its lines: each leaves the change it
    /// was in and joins the one of its mark (a new one at the end).
    fn update(&mut self, latest: HashMap<u64, Mark>) {
        if latest.is_empty() {
            return;
        }
        for change in &mut self.changes {
            change.lines.retain(|l| !latest.contains_key(l));
        }
        self.changes.retain(|c| !c.lines.is_empty());
        let mut by_mark: BTreeMap<Mark, Vec<u64>> = BTreeMap::new();
        for (line, mark) in latest {
            by_mark.entry(mark).or_default().push(line);
        }
        for (mark, mut lines) in by_mark {
            lines.sort_unstable();
            match self.changes.iter_mut().find(|c| c.mark() == mark) {
                Some(change) => {
                    change.lines.extend(lines);
                    change.lines.sort_unstable();
                }
                None => self.changes.push(Change {
                    round: mark.round,
                    added: mark.added,
                    file: mark.file,
                    lines,
                }),
            }
        }
    }

    /// Whether file `index` is `fp` under one of its names.
    fn lived_in(&self, index: u32, fp: &FilePatch) -> bool {
        self.files
            .get(index as usize)
            .is_some_and(|names| fp.names().any(|n| names.iter().any(|m| m == n)))
    }

    /// The index of `fp`'s file, added when new.
    fn file_index(&mut self, fp: &FilePatch) -> u32 {
        let i = match self
            .files
            .iter()
            .position(|names| fp.names().any(|n| names.iter().any(|m| m == n)))
        {
            Some(i) => i,
            None => {
                let mut names: Vec<String> = Vec::new();
                for name in fp.names() {
                    if !names.iter().any(|n| n == name) {
                        names.push(name.to_string());
                    }
                }
                self.files.push(names);
                self.files.len() - 1
            }
        };
        u32::try_from(i).unwrap_or(u32::MAX)
    }
}
/// The first 8 bytes of the sha256 of a line's content key.
fn line_hash(key: &[u8]) -> u64 {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(key);
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first)
}

fn path(fp: &FilePatch) -> String {
    fp.path().unwrap_or_default().to_string()
}

/// One patch's changed lines by content, across files.
struct Changes<'p> {
    /// Every added or removed line with content, in the patch's order.
    occurrences: Vec<Occurrence<'p>>,
    keys: BTreeMap<Vec<u8>, KeyChange>,
    blocks: Vec<Block>,
}

struct Occurrence<'p> {
    key: Vec<u8>,
    text: &'p [u8],
    /// Index into the patch's files.
    file: usize,
    added: bool,
    /// Index into `Changes::blocks` (removed lines only).
    block: usize,
}

/// What the patch did to one line's content.
#[derive(Default)]
struct KeyChange {
    hash: u64,
    /// Added minus removed occurrences.
    net: i64,
    added_in: BTreeSet<usize>,
    removed_in: BTreeSet<usize>,
    /// The runs (and their files) that add it.
    added_at: Vec<(usize, usize)>,
}

/// A run of removed and added lines between two context lines.
#[derive(Default)]
struct Block {
    /// The run adds a line of new content (a line re-indented or moved in
    /// from elsewhere in the patch is not new): something in the place of
    /// what it removes.
    replaces: bool,
    /// Removed lines with content, and how many of them the patch adds
    /// again outside this run (moved).
    lines: usize,
    moved: usize,
    /// The file most of the moved lines went to.
    moved_to: Option<usize>,
}

impl<'p> Changes<'p> {
    fn of(patch: &'p ParsedPatch) -> Changes<'p> {
        let mut occurrences = Vec::new();
        let mut keys: BTreeMap<Vec<u8>, KeyChange> = BTreeMap::new();
        // Runs are numbered as they end: at a context line or a hunk's end.
        let mut block = 0;
        for (fi, fp) in patch.files.iter().enumerate() {
            for hunk in &fp.hunks {
                let mut open = false;
                for l in &hunk.lines {
                    let (text, added) = match l {
                        Line::Added(t) => (t, true),
                        Line::Removed(t) => (t, false),
                        Line::Context(_) => {
                            block += usize::from(open);
                            open = false;
                            continue;
                        }
                    };
                    open = true;
                    let Some(key) = content_key(text) else {
                        continue;
                    };
                    let change = keys.entry(key.clone()).or_insert_with(|| KeyChange {
                        hash: line_hash(&key),
                        ..KeyChange::default()
                    });
                    if added {
                        change.net += 1;
                        change.added_in.insert(fi);
                        change.added_at.push((block, fi));
                    } else {
                        change.net -= 1;
                        change.removed_in.insert(fi);
                    }
                    occurrences.push(Occurrence {
                        key,
                        text,
                        file: fi,
                        added,
                        block,
                    });
                }
                block += usize::from(open);
            }
        }
        let mut blocks: Vec<Block> = (0..block).map(|_| Block::default()).collect();
        let mut moved_to: Vec<BTreeMap<usize, usize>> =
            (0..block).map(|_| BTreeMap::new()).collect();
        for occ in &occurrences {
            let change = &keys[&occ.key];
            let Some(b) = blocks.get_mut(occ.block) else {
                continue;
            };
            if occ.added {
                b.replaces |= change.net > 0;
                continue;
            }
            b.lines += 1;
            // Added again outside this run: moved with its code.
            if let Some(&(_, to)) = change.added_at.iter().find(|(b, _)| *b != occ.block) {
                b.moved += 1;
                *moved_to[occ.block].entry(to).or_default() += 1;
            }
        }
        for (b, to) in blocks.iter_mut().zip(moved_to) {
            b.moved_to = to
                .into_iter()
                .max_by(|x, y| x.1.cmp(&y.1).then(y.0.cmp(&x.0)))
                .map(|(file, _)| file);
        }
        Changes {
            occurrences,
            keys,
            blocks,
        }
    }

    /// A file (for which `known` holds) that this patch moved code from
    /// into file `to`: at least `MOVED_LINES` lines removed there and
    /// added in `to`.
    fn moved_here_from(&self, to: usize, known: impl Fn(usize) -> bool) -> Option<usize> {
        let mut count: BTreeMap<usize, usize> = BTreeMap::new();
        for change in self.keys.values() {
            if change.added_in.contains(&to) {
                for &from in change.removed_in.iter().filter(|&&f| f != to) {
                    *count.entry(from).or_default() += 1;
                }
            }
        }
        count
            .into_iter()
            .find(|&(from, n)| n >= MOVED_LINES && known(from))
            .map(|(from, _)| from)
    }
}

#[cfg(test)]
mod tests;
