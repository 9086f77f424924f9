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

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

use serde::{Deserialize, Serialize};

use super::{FilePatch, Line, ParsedPatch, content_key};

/// Lines of code that must come along for a move between two files to be
/// one: a single line that also appears elsewhere is a coincidence.
const MOVED_LINES: usize = 2;

/// The fix rounds' changes, line by line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(from = "Kept")]
pub struct FixLines {
    /// Each file a fix round changed, by every name it has had.
    files: Vec<Vec<String>>,
    /// A line's content (the first 8 bytes of the sha256 of the line
    /// without whitespace: no code text is kept) → its latest change.
    lines: Lines,
}

/// Lines by their hash.
type Lines = HashMap<u64, Mark>;

/// The latest fix round that changed a line, and the file (an index into
/// `FixLines::files`) where it did or where the line has moved since.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Mark {
    round: u32,
    added: bool,
    file: u32,
}

/// `FixLines` as stored: the lines grouped by their change, so that a
/// line costs its hash alone (a 100-round loop of 1,000-line patches keeps
/// some 50,000 lines).
#[derive(Serialize, Deserialize)]
struct Kept {
    files: Vec<Vec<String>>,
    changes: Vec<KeptChange>,
}

#[derive(Serialize, Deserialize)]
struct KeptChange {
    round: u32,
    added: bool,
    file: u32,
    lines: Vec<u64>,
}

impl From<Kept> for FixLines {
    fn from(kept: Kept) -> FixLines {
        let count = kept.changes.iter().map(|c| c.lines.len()).sum();
        let mut lines = Lines::with_capacity(count);
        for c in kept.changes {
            let mark = Mark {
                round: c.round,
                added: c.added,
                file: c.file,
            };
            lines.extend(c.lines.into_iter().map(|l| (l, mark)));
        }
        FixLines {
            files: kept.files,
            lines,
        }
    }
}

impl Serialize for FixLines {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut all: Vec<((u32, bool, u32), u64)> = self
            .lines
            .iter()
            .map(|(&line, m)| ((m.round, m.added, m.file), line))
            .collect();
        all.sort_unstable();
        let mut changes: Vec<KeptChange> = Vec::new();
        for ((round, added, file), line) in all {
            match changes.last_mut() {
                Some(c) if (c.round, c.added, c.file) == (round, added, file) => c.lines.push(line),
                _ => changes.push(KeptChange {
                    round,
                    added,
                    file,
                    lines: vec![line],
                }),
            }
        }
        Kept {
            files: self.files.clone(),
            changes,
        }
        .serialize(serializer)
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
        self.lines.is_empty()
    }

    /// The first line of `later` that reverses a recorded fix round's
    /// change, in the patch's order: a line put back first, then a line
    /// taken out (a fix rewritten back into what it replaced tells both;
    /// the line put back tells it plainest).
    pub fn reversal(&self, later: &ParsedPatch) -> Option<LineReversal> {
        if self.lines.is_empty() {
            return None;
        }
        let changes = Changes::of(later);
        let check = |occ: &Occurrence<'_>| self.reverses(later, &changes, occ);
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
        occ: &Occurrence<'_>,
    ) -> Option<LineReversal> {
        let change = changes.keys.get(&occ.key)?;
        let mark = self.lines.get(&change.hash)?;
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
            if let (Some(old), Some(new)) = (&fp.old_path, &fp.new_path)
                && old != new
            {
                for names in &mut self.files {
                    if names.contains(old) && !names.contains(new) {
                        names.push(new.clone());
                    }
                }
            }
        }
        let changes = Changes::of(patch);
        for change in changes.keys.values() {
            let (added, file) = match change.net {
                // Moved: a line that left a mark's file for another one
                // lives there now.
                0 => {
                    let Some(mark) = self.lines.get(&change.hash).copied() else {
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
                    self.lines.insert(change.hash, Mark { file, ..mark });
                    continue;
                }
                net if net > 0 => (true, change.added_in.iter().next()),
                _ => (false, change.removed_in.iter().next()),
            };
            let Some(&file) = file else {
                continue;
            };
            let file = self.file_index(&patch.files[file]);
            self.lines.insert(change.hash, Mark { round, added, file });
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
