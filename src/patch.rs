//! Pure analysis of unified diffs as git prints them: parsing into files and
//! hunks, the new-side lines a patch changed (for `induced_by`), the old-side
//! places it touched ("closed by a fix"), where a line moves through it
//! (finding places carried across rounds), and a line's content for
//! comparing lines across rounds (`engine::fix_lines`, the `flip-flop`
//! rule). No I/O; never panics, whatever the input bytes.

use std::collections::BTreeMap;

pub mod fix_lines;

/// A unified diff, parsed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedPatch {
    pub files: Vec<FilePatch>,
}

/// One file's part of a patch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilePatch {
    /// The path before the change, without the `a/` prefix; `None` for a new file.
    pub old_path: Option<String>,
    /// The path after the change, without the `b/` prefix; `None` for a deleted file.
    pub new_path: Option<String>,
    /// Git said the file is binary (`Binary files … differ` or `GIT binary patch`).
    pub binary: bool,
    pub hunks: Vec<Hunk>,
}

/// One `@@ -a,b +c,d @@` hunk.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hunk {
    pub old_start: u32,
    pub old_len: u32,
    pub new_start: u32,
    pub new_len: u32,
    /// The text after the closing `@@` (git's function context), trimmed.
    pub section: String,
    pub lines: Vec<Line>,
}

/// One body line of a hunk, without its leading marker and newline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    Context(Vec<u8>),
    Added(Vec<u8>),
    Removed(Vec<u8>),
}

/// An inclusive range of line numbers, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct LineRange {
    pub start: u32,
    pub end: u32,
}

impl LineRange {
    pub fn contains(&self, line: u32) -> bool {
        self.start <= line && line <= self.end
    }
}

/// For each file (new-side path), the sorted, merged ranges of new-side lines
/// that a patch added or changed.
pub type ChangedLines = BTreeMap<String, Vec<LineRange>>;

impl Hunk {
    /// The hunk's header as git prints it, without the section text.
    pub fn header(&self) -> String {
        format!(
            "@@ -{},{} +{},{} @@",
            self.old_start, self.old_len, self.new_start, self.new_len
        )
    }
}

impl FilePatch {
    /// The name to report the file by: the new path, or the old one if deleted.
    pub fn path(&self) -> Option<&str> {
        self.new_path.as_deref().or(self.old_path.as_deref())
    }

    /// The path before and the path after (one, for a file not renamed, twice).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.old_path
            .iter()
            .chain(self.new_path.iter())
            .map(String::as_str)
    }
}

/// Parses unified diff text (git's, with `a/` and `b/` prefixes, or plain
/// `diff -u`). Lines it does not understand are skipped; it never fails.
pub fn parse(text: &[u8]) -> ParsedPatch {
    let mut files: Vec<FilePatch> = Vec::new();
    // Lines still expected in the current hunk: (old side, new side).
    let mut left: (u32, u32) = (0, 0);
    let mut in_hunk = false;

    for raw in text.split(|&b| b == b'\n') {
        // A hunk whose counts are spent takes no more lines: the next one
        // falls through below and ends it.
        if in_hunk {
            if let Some(hunk) = files.last_mut().and_then(|f| f.hunks.last_mut()) {
                let (marker, rest) = match raw.split_first() {
                    Some((m, rest)) => (Some(*m), rest),
                    // Some tools strip the space of an empty context line.
                    None => (Some(b' '), raw),
                };
                match marker {
                    Some(b' ') if left.0 > 0 && left.1 > 0 => {
                        hunk.lines.push(Line::Context(rest.to_vec()));
                        left = (left.0 - 1, left.1 - 1);
                        continue;
                    }
                    Some(b'-') if left.0 > 0 => {
                        hunk.lines.push(Line::Removed(rest.to_vec()));
                        left.0 -= 1;
                        continue;
                    }
                    Some(b'+') if left.1 > 0 => {
                        hunk.lines.push(Line::Added(rest.to_vec()));
                        left.1 -= 1;
                        continue;
                    }
                    Some(b'\\') => continue,
                    _ => {}
                }
            }
            // A line that cannot belong to the hunk ends it.
            in_hunk = false;
        }
        if raw.starts_with(b"\\") {
            // `\ No newline at end of file` after a hunk's last line.
            continue;
        }
        // Header lines of a patch that went through a CRLF tool; hunk bodies
        // above keep their bytes, since a CR there is content.
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);

        if let Some(rest) = raw.strip_prefix(b"diff --git ") {
            let (old, new) = git_header_paths(rest);
            files.push(FilePatch {
                old_path: old,
                new_path: new,
                ..FilePatch::default()
            });
            in_hunk = false;
        } else if let Some(rest) = raw.strip_prefix(b"--- ") {
            // A `---` line opens a new file in plain `diff -u` output, and
            // follows a `diff --git` header in git's.
            let starts_new = files.last().is_none_or(|f| !f.hunks.is_empty() || f.binary);
            if starts_new {
                files.push(FilePatch::default());
            }
            if let Some(f) = files.last_mut() {
                f.old_path = side_path(rest, b"a/");
            }
        } else if let Some(rest) = raw.strip_prefix(b"+++ ") {
            if let Some(f) = files.last_mut() {
                f.new_path = side_path(rest, b"b/");
            }
        } else if let Some(rest) = raw
            .strip_prefix(b"rename from ")
            .or_else(|| raw.strip_prefix(b"copy from "))
        {
            if let Some(f) = files.last_mut() {
                f.old_path = Some(unquote(rest));
            }
        } else if let Some(rest) = raw
            .strip_prefix(b"rename to ")
            .or_else(|| raw.strip_prefix(b"copy to "))
        {
            if let Some(f) = files.last_mut() {
                f.new_path = Some(unquote(rest));
            }
        } else if raw.starts_with(b"new file mode ") {
            if let Some(f) = files.last_mut() {
                f.old_path = None;
            }
        } else if raw.starts_with(b"deleted file mode ") {
            if let Some(f) = files.last_mut() {
                f.new_path = None;
            }
        } else if raw.starts_with(b"GIT binary patch")
            || (raw.starts_with(b"Binary files ") && raw.ends_with(b" differ"))
        {
            if let Some(f) = files.last_mut() {
                f.binary = true;
            }
        } else if raw.starts_with(b"@@ ") {
            let Some(hunk) = hunk_header(raw) else {
                continue;
            };
            if files.is_empty() {
                files.push(FilePatch::default());
            }
            if let Some(f) = files.last_mut() {
                left = (hunk.old_len, hunk.new_len);
                in_hunk = true;
                f.hunks.push(hunk);
            }
        }
    }
    ParsedPatch { files }
}

/// Lines added and removed in `text`: the `+` and `-` lines of its hunks
/// as [`parse`] reads them (each hunk for as many lines as its header
/// counts), so that an added `++x` or a removed `-- note` is a line of the
/// hunk and a file's `+++` and `---` headers are not. What git's
/// `--numstat` counts (a binary file has no hunk).
pub fn line_counts(text: &[u8]) -> (u64, u64) {
    let lines = parse(text)
        .files
        .into_iter()
        .flat_map(|f| f.hunks)
        .flat_map(|h| h.lines);
    lines.fold((0, 0), |(added, removed), line| match line {
        Line::Added(_) => (added + 1, removed),
        Line::Removed(_) => (added, removed + 1),
        Line::Context(_) => (added, removed),
    })
}

/// For `induced_by`: the new-side lines each file's hunks added (a changed
/// line is a removed line plus an added one). Pure deletions mark no line:
/// they leave nothing on the new side to point at.
pub fn changed_lines(patch: &ParsedPatch) -> ChangedLines {
    let mut out = ChangedLines::new();
    for file in &patch.files {
        let Some(path) = &file.new_path else {
            continue;
        };
        let mut ranges: Vec<LineRange> = Vec::new();
        for hunk in &file.hunks {
            let mut line = hunk.new_start;
            for l in &hunk.lines {
                match l {
                    Line::Context(_) => line = line.saturating_add(1),
                    Line::Removed(_) => {}
                    Line::Added(_) => {
                        ranges.push(LineRange {
                            start: line,
                            end: line,
                        });
                        line = line.saturating_add(1);
                    }
                }
            }
        }
        if ranges.is_empty() {
            continue;
        }
        // A path may appear twice in a hand-made patch: merge across both.
        let entry = out.entry(path.clone()).or_default();
        entry.extend(ranges);
        *entry = merge(std::mem::take(entry));
    }
    out
}

/// Whether `line` of `file` lies inside the lines in `changed`.
pub fn touches(changed: &ChangedLines, file: &str, line: u32) -> bool {
    changed
        .get(file)
        .is_some_and(|ranges| ranges.iter().any(|r| r.contains(line)))
}

/// Where a patch touched the old side of its files (SPEC §4.1, "closed by
/// a fix"): the old-numbered lines it changed or deleted, and the two lines
/// around each insertion. Keyed by the old path (the new one for a new file).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Touched {
    lines: BTreeMap<String, Vec<LineRange>>,
    /// Files the patch touched as a whole (binary, deleted, renamed).
    whole: std::collections::BTreeSet<String>,
    any: bool,
}

impl Touched {
    /// The patch changed nothing.
    pub fn is_empty(&self) -> bool {
        !self.any
    }

    /// Whether the patch touched `file` at all.
    pub fn file(&self, file: &str) -> bool {
        self.whole.contains(file) || self.lines.contains_key(file)
    }

    /// Whether the patch touched a line of `file` within one line of
    /// `start..=end` (old numbering).
    pub fn near(&self, file: &str, start: u64, end: u64) -> bool {
        if self.whole.contains(file) {
            return true;
        }
        let (lo, hi) = (start.saturating_sub(1), end.max(start).saturating_add(1));
        self.lines.get(file).is_some_and(|ranges| {
            ranges
                .iter()
                .any(|r| u64::from(r.start) <= hi && lo <= u64::from(r.end))
        })
    }
}

/// One run of removed and added lines, as `touched` reads it.
#[derive(Default)]
struct Block {
    /// Old line numbers of the removed lines.
    removed: Vec<u32>,
    added: bool,
    old_text: Vec<u8>,
    new_text: Vec<u8>,
}

impl Block {
    /// Marks what the run touched (`next_old`: the old line after it) and
    /// starts a new run.
    fn flush(&mut self, ranges: &mut Vec<LineRange>, next_old: u32) {
        let whitespace_only = self.old_text == self.new_text;
        if !whitespace_only {
            if self.removed.is_empty() && self.added {
                ranges.push(LineRange {
                    start: next_old.saturating_sub(1).max(1),
                    end: next_old,
                });
            }
            ranges.extend(self.removed.iter().map(|&l| LineRange { start: l, end: l }));
        }
        *self = Block::default();
    }
}

/// The old-side places `patch` touched.
pub fn touched(patch: &ParsedPatch) -> Touched {
    let mut out = Touched::default();
    for file in &patch.files {
        let Some(key) = file.old_path.as_deref().or(file.new_path.as_deref()) else {
            continue;
        };
        out.any = true;
        if file.binary || file.new_path.is_none() {
            out.whole.insert(key.to_string());
            if let Some(new) = &file.new_path {
                out.whole.insert(new.clone());
            }
            continue;
        }
        let mut ranges: Vec<LineRange> = Vec::new();
        for hunk in &file.hunks {
            // `@@ -5,0 +6,2 @@` inserts after old line 5.
            let mut old = if hunk.old_len == 0 {
                hunk.old_start.saturating_add(1)
            } else {
                hunk.old_start
            };
            // A run of removed and added lines between context lines is one
            // change: it touches the removed lines, or for a pure insertion
            // the lines on either side. A change of whitespace only (a
            // formatter's reflow) touches nothing.
            let mut block = Block::default();
            for l in &hunk.lines {
                match l {
                    Line::Context(_) => {
                        block.flush(&mut ranges, old);
                        old = old.saturating_add(1);
                    }
                    Line::Removed(text) => {
                        block.removed.push(old);
                        block
                            .old_text
                            .extend(text.iter().filter(|b| !b.is_ascii_whitespace()));
                        old = old.saturating_add(1);
                    }
                    Line::Added(text) => {
                        block.added = true;
                        block
                            .new_text
                            .extend(text.iter().filter(|b| !b.is_ascii_whitespace()));
                    }
                }
            }
            block.flush(&mut ranges, old);
        }
        if file.old_path.is_none() {
            // A new file: nothing of it existed before.
            out.whole.insert(key.to_string());
        }
        // A file whose changes were all whitespace is not touched at all.
        if !ranges.is_empty() {
            let entry = out.lines.entry(key.to_string()).or_default();
            entry.extend(ranges);
            *entry = merge(std::mem::take(entry));
        }
    }
    out
}

/// Where `line` of `file` (old numbering) is after `patch`: the file's new
/// name and the line's new number. A changed or deleted line lands where the
/// patch's replacement starts. `None`: the patch deleted the file.
pub fn carry(patch: &ParsedPatch, file: &str, line: u64) -> Option<(String, u64)> {
    let Some(fp) = patch
        .files
        .iter()
        .find(|f| f.old_path.as_deref() == Some(file))
    else {
        return Some((file.to_string(), line));
    };
    let new_path = fp.new_path.clone()?;
    // Added minus removed lines of the hunks wholly before `line`.
    let mut delta: i64 = 0;
    for hunk in &fp.hunks {
        let old_start = u64::from(if hunk.old_len == 0 {
            hunk.old_start.saturating_add(1)
        } else {
            hunk.old_start
        });
        let old_end = old_start + u64::from(hunk.old_len);
        if line < old_start {
            break;
        }
        if line >= old_end {
            delta += i64::from(hunk.new_len) - i64::from(hunk.old_len);
            continue;
        }
        let mut old = old_start;
        let mut new = u64::from(if hunk.new_len == 0 {
            hunk.new_start.saturating_add(1)
        } else {
            hunk.new_start
        });
        for l in &hunk.lines {
            match l {
                Line::Context(_) => {
                    if old == line {
                        return Some((new_path, new));
                    }
                    old += 1;
                    new += 1;
                }
                Line::Removed(_) => {
                    if old == line {
                        return Some((new_path, new.max(1)));
                    }
                    old += 1;
                }
                Line::Added(_) => new += 1,
            }
        }
        return Some((new_path, new.max(1)));
    }
    let moved = i64::try_from(line)
        .unwrap_or(i64::MAX)
        .saturating_add(delta);
    Some((new_path, u64::try_from(moved.max(1)).unwrap_or(1)))
}

/// A line's content for comparison: its bytes without whitespace, or `None`
/// when it carries nothing of its own.
pub(crate) fn content_key(line: &[u8]) -> Option<Vec<u8>> {
    let key: Vec<u8> = line
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace() && *b != 0x0b)
        .collect();
    let word: Vec<u8> = key
        .iter()
        .copied()
        .filter(u8::is_ascii_alphanumeric)
        .map(|b| b.to_ascii_lowercase())
        .collect();
    const BARE: &[&[u8]] = &[
        b"else",
        b"return",
        b"break",
        b"continue",
        b"end",
        b"pass",
        b"fi",
        b"done",
        b"default",
        b"try",
        b"finally",
        b"except",
        b"then",
        b"do",
        b"begin",
        b"none",
        b"null",
        b"nil",
        b"true",
        b"false",
        b"ok",
        b"self",
        b"this",
    ];
    if word.len() < 3 || BARE.contains(&word.as_slice()) {
        return None;
    }
    Some(key)
}

fn merge(mut ranges: Vec<LineRange>) -> Vec<LineRange> {
    ranges.sort();
    let mut out: Vec<LineRange> = Vec::with_capacity(ranges.len());
    for r in ranges {
        match out.last_mut() {
            Some(last) if r.start <= last.end.saturating_add(1) => {
                last.end = last.end.max(r.end);
            }
            _ => out.push(r),
        }
    }
    out
}

/// `@@ -a[,b] +c[,d] @@ section`
fn hunk_header(raw: &[u8]) -> Option<Hunk> {
    let rest = raw.strip_prefix(b"@@ -")?;
    let end = find(rest, b" @@")?;
    let ranges = &rest[..end];
    let section = String::from_utf8_lossy(&rest[end + 3..]).trim().to_string();
    let mut parts = ranges.splitn(2, |&b| b == b' ');
    let old = parts.next()?;
    let new = parts.next()?.strip_prefix(b"+")?;
    let (old_start, old_len) = range(old)?;
    let (new_start, new_len) = range(new)?;
    Some(Hunk {
        old_start,
        old_len,
        new_start,
        new_len,
        section,
        lines: Vec::new(),
    })
}

fn range(s: &[u8]) -> Option<(u32, u32)> {
    let s = std::str::from_utf8(s).ok()?;
    match s.split_once(',') {
        Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
        None => Some((s.parse().ok()?, 1)),
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn starts_with_dev_null(rest: &[u8]) -> bool {
    rest == b"/dev/null" || rest.starts_with(b"/dev/null\t")
}

/// The path on a `---`/`+++` line: `/dev/null` is none; git appends a tab to
/// names with spaces, and `diff -u` a tab and a date.
fn side_path(rest: &[u8], prefix: &[u8]) -> Option<String> {
    if starts_with_dev_null(rest) {
        return None;
    }
    if rest.starts_with(b"\"") {
        return Some(strip_prefix_str(&unquote(rest), prefix));
    }
    let name = match rest.iter().position(|&b| b == b'\t') {
        Some(i) => &rest[..i],
        None => rest,
    };
    Some(strip_prefix_str(&String::from_utf8_lossy(name), prefix))
}

fn strip_prefix_str(s: &str, prefix: &[u8]) -> String {
    let prefix = String::from_utf8_lossy(prefix);
    s.strip_prefix(prefix.as_ref()).unwrap_or(s).to_string()
}

/// `a/P b/P` (or C-quoted halves) on a `diff --git` line. Ambiguous with
/// spaces unless both sides are equal, which they are for all but renames,
/// and renames carry `rename from`/`rename to` lines that override this.
fn git_header_paths(rest: &[u8]) -> (Option<String>, Option<String>) {
    if rest.starts_with(b"\"") {
        let (first, after) = quoted_prefix(rest);
        let second = after.strip_prefix(b" ").unwrap_or(after);
        let second = if second.starts_with(b"\"") {
            unquote(second)
        } else {
            String::from_utf8_lossy(second).into_owned()
        };
        return (
            Some(strip_prefix_str(&first, b"a/")),
            Some(strip_prefix_str(&second, b"b/")),
        );
    }
    // Only the second name quoted.
    if rest.ends_with(b"\"")
        && let Some(start) = find(rest, b" \"")
    {
        let first = String::from_utf8_lossy(&rest[..start]).into_owned();
        let second = unquote(&rest[start + 1..]);
        return (
            Some(strip_prefix_str(&first, b"a/")),
            Some(strip_prefix_str(&second, b"b/")),
        );
    }
    // Unquoted: `a/` + P + ` b/` + P when both names are equal, an odd
    // length of 5 + 2 × |P|.
    let n = rest.len();
    if n >= 5 && !n.is_multiple_of(2) {
        let half = (n - 5) / 2;
        let (a, b) = (&rest[..2 + half], &rest[2 + half..]);
        if a.starts_with(b"a/") && b.starts_with(b" b/") && a[2..] == b[3..] {
            let p = String::from_utf8_lossy(&a[2..]).into_owned();
            return (Some(p.clone()), Some(p));
        }
    }
    // Otherwise split at the first ` b/` (renames fix it up later).
    match find(rest, b" b/") {
        Some(i) => (
            Some(strip_prefix_str(
                &String::from_utf8_lossy(&rest[..i]),
                b"a/",
            )),
            Some(String::from_utf8_lossy(&rest[i + 3..]).into_owned()),
        ),
        None => (None, None),
    }
}

/// Unquotes a C-style quoted name (`"a\tb\303\251"`), or returns the text up
/// to a tab as is when it is not quoted.
fn unquote(s: &[u8]) -> String {
    if s.starts_with(b"\"") {
        quoted_prefix(s).0
    } else {
        let end = s.iter().position(|&b| b == b'\t').unwrap_or(s.len());
        String::from_utf8_lossy(&s[..end]).into_owned()
    }
}

/// Decodes the quoted string at the start of `s` (which starts with `"`);
/// returns it and the bytes after the closing quote.
fn quoted_prefix(s: &[u8]) -> (String, &[u8]) {
    let mut out: Vec<u8> = Vec::new();
    let mut i = 1;
    while i < s.len() {
        match s[i] {
            b'"' => return (String::from_utf8_lossy(&out).into_owned(), &s[i + 1..]),
            b'\\' if i + 1 < s.len() => {
                let c = s[i + 1];
                i += 2;
                match c {
                    b'a' => out.push(0x07),
                    b'b' => out.push(0x08),
                    b't' => out.push(b'\t'),
                    b'n' => out.push(b'\n'),
                    b'v' => out.push(0x0b),
                    b'f' => out.push(0x0c),
                    b'r' => out.push(b'\r'),
                    b'0'..=b'7' => {
                        let mut v: u32 = u32::from(c - b'0');
                        let mut k = 0;
                        while k < 2 && i < s.len() && (b'0'..=b'7').contains(&s[i]) {
                            v = v * 8 + u32::from(s[i] - b'0');
                            i += 1;
                            k += 1;
                        }
                        out.push((v & 0xff) as u8);
                    }
                    other => out.push(other),
                }
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    (String::from_utf8_lossy(&out).into_owned(), &[])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hunk is read for as many lines as its header counts: lines that
    /// look like file headers inside it are its lines, and the headers of
    /// the next file are not.
    #[test]
    fn changes_are_counted_by_the_hunk_headers() {
        // As git writes it: a context line starts with a space (an empty
        // one under `diff.suppressBlankEmpty` may be empty).
        let patch = concat!(
            "diff --git a/q.sql b/q.sql\n",
            "--- a/q.sql\n",
            "+++ b/q.sql\n",
            "@@ -1,3 +1,3 @@\n",
            "--- old note\n",
            "+++ new note\n",
            " select 1;\n",
            "-end\n",
            "\\ No newline at end of file\n",
            "+end\n",
            "@@ -9 +9,0 @@ fn f\n",
            "-gone\n",
            "diff --git a/img.png b/img.png\n",
            "Binary files a/img.png and b/img.png differ\n",
            "diff --git a/e b/e\n",
            "--- a/e\n",
            "+++ b/e\n",
            "@@ -1,3 +1,3 @@\n",
            " a\n",
            "\n",
            "-b\n",
            "+c\n",
        )
        .as_bytes();
        assert_eq!(line_counts(patch), (3, 4));
        assert_eq!(line_counts(b""), (0, 0));
        assert_eq!(line_counts(b"@@ -1 +1 @@\n"), (0, 0));
        let lens = |h: &[u8]| hunk_header(h).map(|h| (h.old_len, h.new_len));
        assert_eq!(lens(b"@@ -0,0 +1,12 @@"), Some((0, 12)));
        assert_eq!(lens(b"@@ -5 +7 @@ section"), Some((1, 1)));
        assert_eq!(lens(b"@@ -x +1 @@"), None);
        assert_eq!(lens(b"@@@ -1 -1 +1 @@@"), None);
    }

    const MODIFY: &str = "\
diff --git a/src/lib.rs b/src/lib.rs
index 1111111..2222222 100644
--- a/src/lib.rs
+++ b/src/lib.rs
@@ -1,4 +1,5 @@ fn main() {
 one
-two
+TWO
+two and a half
 three
 four
@@ -10,2 +11,2 @@
 ten
-eleven
+ELEVEN
\\ No newline at end of file
";

    const RENAME_NEW_DELETE_BINARY: &str = "\
diff --git a/old name.txt b/new name.txt
similarity index 90%
rename from old name.txt
rename to new name.txt
index 1111111..2222222 100644
--- a/old name.txt\t
+++ b/new name.txt\t
@@ -1 +1 @@
-a
+b
diff --git a/added.rs b/added.rs
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/added.rs
@@ -0,0 +1,2 @@
+fn x() {}
+fn y() {}
diff --git a/gone.rs b/gone.rs
deleted file mode 100644
index 4444444..0000000
--- a/gone.rs
+++ /dev/null
@@ -1,2 +0,0 @@
-fn x() {}
-fn y() {}
diff --git a/img.png b/img.png
new file mode 100644
index 0000000000000000000000000000000000000000..5555555555555555555555555555555555555555
GIT binary patch
literal 3
KcmZ?wWMT*a01f~E

literal 0
HcmV?d00001

diff --git \"a/caf\\303\\251\\tx.md\" \"b/caf\\303\\251\\tx.md\"
index 1111111..2222222 100644
--- \"a/caf\\303\\251\\tx.md\"
+++ \"b/caf\\303\\251\\tx.md\"
@@ -1 +1,2 @@
 x
+y
";

    #[test]
    fn parses_files_paths_and_kinds() {
        let p = parse(RENAME_NEW_DELETE_BINARY.as_bytes());
        let got: Vec<(Option<&str>, Option<&str>, bool, usize)> = p
            .files
            .iter()
            .map(|f| {
                (
                    f.old_path.as_deref(),
                    f.new_path.as_deref(),
                    f.binary,
                    f.hunks.len(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (Some("old name.txt"), Some("new name.txt"), false, 1),
                (None, Some("added.rs"), false, 1),
                (Some("gone.rs"), None, false, 1),
                (None, Some("img.png"), true, 0),
                (Some("café\tx.md"), Some("café\tx.md"), false, 1),
            ]
        );
    }

    #[test]
    fn parses_hunks_and_no_newline_marker() {
        let p = parse(MODIFY.as_bytes());
        assert_eq!(p.files.len(), 1);
        let f = &p.files[0];
        assert_eq!(f.path(), Some("src/lib.rs"));
        assert_eq!(f.hunks.len(), 2);
        assert_eq!(f.hunks[0].section, "fn main() {");
        assert_eq!(f.hunks[0].header(), "@@ -1,4 +1,5 @@");
        assert_eq!(f.hunks[0].lines.len(), 6);
        assert_eq!(
            f.hunks[1].lines,
            vec![
                Line::Context(b"ten".to_vec()),
                Line::Removed(b"eleven".to_vec()),
                Line::Added(b"ELEVEN".to_vec()),
            ]
        );
    }

    #[test]
    fn header_paths_table() {
        let cases: &[(&[u8], Option<&str>, Option<&str>)] = &[
            (b"a/x b/x", Some("x"), Some("x")),
            (b"a/a b/c b/a b/c", Some("a b/c"), Some("a b/c")),
            (b"a/one b/two", Some("one"), Some("two")),
            (b"\"a/t\\tb\" \"b/t\\tb\"", Some("t\tb"), Some("t\tb")),
            (b"nonsense", None, None),
            (b"", None, None),
            // One side quoted, the other not.
            (b"\"a/t\\tb\" b/plain", Some("t\tb"), Some("plain")),
            (b"a/plain \"b/t\\tb\"", Some("plain"), Some("t\tb")),
            // Equal halves with a ` b/` inside are split in the middle.
            (b"a/x b/y b/x b/y", Some("x b/y"), Some("x b/y")),
            (b"a/ab b/a", Some("ab"), Some("a")),
        ];
        for (input, old, new) in cases {
            let (o, n) = git_header_paths(input);
            assert_eq!((o.as_deref(), n.as_deref()), (*old, *new), "{input:?}");
        }
    }

    #[test]
    fn unquote_table() {
        let cases: &[(&[u8], &str)] = &[
            (b"plain", "plain"),
            (b"plain\t2026-01-01", "plain"),
            (b"\"q\\\"uote\\\\\"", "q\"uote\\"),
            (b"\"\\303\\251\"", "é"),
            (b"\"nl\\nx\"", "nl\nx"),
            (b"\"unterminated\\", "unterminated\\"),
            (b"\"\\777\"", "\u{fffd}"),
            // An octal escape is at most three digits; a fourth is text.
            (b"\"\\1011\"", "A1"),
            (b"\"\\0x\"", "\0x"),
            // Cut short inside an octal escape: read to the end, no further.
            (b"\"ab\\1", "ab\u{1}"),
            (b"\"ab\\12", "ab\n"),
            (b"\"\\a\\b\\t\\v\\f\\r\\q\"", "\x07\x08\t\x0b\x0c\rq"),
            (b"\"end\" after", "end"),
        ];
        for (input, want) in cases {
            assert_eq!(unquote(input), *want, "{input:?}");
        }
    }

    #[test]
    fn changed_lines_table() {
        type Want<'a> = &'a [(&'a str, &'a [(u32, u32)])];
        let cases: &[(&str, Want)] = &[
            (MODIFY, &[("src/lib.rs", &[(2, 3), (12, 12)])]),
            (
                RENAME_NEW_DELETE_BINARY,
                &[
                    ("added.rs", &[(1, 2)]),
                    ("café\tx.md", &[(2, 2)]),
                    ("new name.txt", &[(1, 1)]),
                ],
            ),
            // A pure deletion marks nothing.
            ("--- a/f\n+++ b/f\n@@ -1,3 +1,2 @@\n a\n-b\n c\n", &[]),
            // Headers with CRLF line ends.
            (
                "diff --git a/f b/f\r\n--- a/f\r\n+++ b/f\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n",
                &[("f", &[(1, 1)])],
            ),
            // Plain `diff -u` output with dates.
            (
                "--- f\t2026-01-01\n+++ f\t2026-01-02\n@@ -5,0 +6,2 @@\n+x\n+y\n",
                &[("f", &[(6, 7)])],
            ),
        ];
        for (text, want) in cases {
            let got = changed_lines(&parse(text.as_bytes()));
            let want: ChangedLines = want
                .iter()
                .map(|(f, rs)| {
                    (
                        f.to_string(),
                        rs.iter()
                            .map(|&(start, end)| LineRange { start, end })
                            .collect(),
                    )
                })
                .collect();
            assert_eq!(got, want, "{text}");
        }
        let changed = changed_lines(&parse(MODIFY.as_bytes()));
        assert!(touches(&changed, "src/lib.rs", 3));
        assert!(!touches(&changed, "src/lib.rs", 4));
        assert!(!touches(&changed, "other.rs", 3));
    }

    #[test]
    fn touched_places_are_old_lines_and_insertion_neighbours() {
        // MODIFY: old line 2 replaced by two lines, old line 11 replaced.
        let t = touched(&parse(MODIFY.as_bytes()));
        assert!(!t.is_empty());
        assert!(t.file("src/lib.rs"));
        assert!(!t.file("other.rs"));
        for (start, end, want) in [
            (1, 1, true),
            (2, 2, true),
            (3, 3, true),
            (4, 4, false),
            (5, 5, false),
            (9, 9, false),
            (10, 10, true),
            (12, 12, true),
            (13, 13, false),
            (6, 9, false),
            (6, 10, true),
        ] {
            assert_eq!(t.near("src/lib.rs", start, end), want, "{start}..={end}");
        }
        // A pure insertion after old line 5 touches lines 5 and 6.
        let t = touched(&parse(b"--- a/f\n+++ b/f\n@@ -5,0 +6,2 @@\n+x\n+y\n"));
        assert!(t.near("f", 4, 4));
        assert!(t.near("f", 7, 7));
        assert!(!t.near("f", 3, 3));
        assert!(!t.near("f", 8, 8));
        // Deleted, renamed and new files are touched whole.
        let t = touched(&parse(RENAME_NEW_DELETE_BINARY.as_bytes()));
        assert!(t.file("gone.rs") && t.near("gone.rs", 500, 500));
        // A renamed file is known by its old name, at the lines changed.
        assert!(t.near("old name.txt", 1, 1) && !t.near("old name.txt", 90, 90));
        assert!(t.near("added.rs", 7, 7) && t.near("img.png", 1, 1));
        assert!(!t.near("café\tx.md", 5, 5), "only its line 1 changed");
        assert!(touched(&ParsedPatch::default()).is_empty());
        // A formatter's reflow (whitespace and line breaks only) and blank
        // lines touch nothing; a real change next to them does.
        let reflow = "--- a/f\n+++ b/f\n@@ -1,4 +1,5 @@\n-call(a,b)\n+call(\n+    a, b)\n \n+\n keep\n-x=1\n+x = 2\n";
        let t = touched(&parse(reflow.as_bytes()));
        assert!(!t.near("f", 1, 1), "reflowed");
        assert!(!t.near("f", 2, 2), "blank line inserted after 2");
        assert!(t.near("f", 4, 4), "a real change");
    }

    #[test]
    fn carry_moves_lines_through_a_patch() {
        let p = parse(MODIFY.as_bytes());
        // Old 1 is context; old 2 became new 2 (changed); old 3 moved down by
        // the insertion; old 11 changed; old 20 is after every hunk.
        for (old, new) in [(1, 1), (2, 2), (3, 4), (5, 6), (10, 11), (11, 12), (20, 21)] {
            assert_eq!(
                carry(&p, "src/lib.rs", old),
                Some(("src/lib.rs".to_string(), new)),
                "old line {old}"
            );
        }
        assert_eq!(carry(&p, "other.rs", 7), Some(("other.rs".to_string(), 7)));
        let insert = parse(b"--- a/f\n+++ b/f\n@@ -5,0 +6,2 @@\n+x\n+y\n");
        assert_eq!(carry(&insert, "f", 5), Some(("f".to_string(), 5)));
        assert_eq!(carry(&insert, "f", 6), Some(("f".to_string(), 8)));
        let rename = parse(b"diff --git a/a.rs b/b.rs\nrename from a.rs\nrename to b.rs\n");
        assert_eq!(carry(&rename, "a.rs", 3), Some(("b.rs".to_string(), 3)));
        let delete = parse(b"diff --git a/a.rs b/a.rs\ndeleted file mode 100644\n--- a/a.rs\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n");
        assert_eq!(carry(&delete, "a.rs", 1), None);
    }

    /// A hunk takes as many lines as its header counts on each side: the
    /// line after them belongs to what follows, even when it looks like a
    /// hunk line; `\` lines are no lines of either side.
    #[test]
    fn a_hunk_ends_where_its_counts_do() {
        let p = parse(
            b"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n-not a line\n+nor this\n",
        );
        let lines = &p.files[0].hunks[0].lines;
        assert_eq!(
            lines,
            &[
                Line::Context(b"a".to_vec()),
                Line::Removed(b"b".to_vec()),
                Line::Added(b"c".to_vec())
            ]
        );
        assert_eq!(line_counts(b"@@ -1 +1,2 @@\n-a\n+b\n+c\n+d\n"), (2, 1));
        assert_eq!(line_counts(b"@@ -1,2 +1 @@\n-a\n-b\n-c\n+d\n"), (0, 2));
        assert_eq!(line_counts(b"@@ -1,2 +1 @@\n-a\n+b\n-c\n"), (1, 2));
        // A context line spends one line of each side.
        assert_eq!(line_counts(b"@@ -1,2 +1,2 @@\n x\n-a\n+b\n+c\n"), (1, 1));
    }

    /// After a binary file's header, a `---` line opens the next file (plain
    /// `diff -u` output has no `diff --git` line to do it).
    #[test]
    fn a_file_header_after_a_binary_file_opens_a_new_file() {
        let p = parse(
            b"diff --git a/img.png b/img.png\nBinary files a/img.png and b/img.png differ\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n-c\n+d\n",
        );
        let names: Vec<(Option<&str>, bool)> = p
            .files
            .iter()
            .map(|f| (f.old_path.as_deref(), f.binary))
            .collect();
        assert_eq!(
            names,
            [
                (Some("img.png"), true),
                (Some("f"), false),
                (Some("g"), false)
            ]
        );
        // Only git's whole sentence marks a binary file.
        for line in ["Files a/f and b/f differ", "Binary files a/f and b/f"] {
            let text =
                format!("diff --git a/f b/f\n{line}\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n");
            let p = parse(text.as_bytes());
            assert_eq!(p.files.len(), 1, "{line}");
            assert!(!p.files[0].binary && p.files[0].hunks.len() == 1, "{line}");
        }
    }

    /// A line is carried past a hunk only once it is past the hunk's last
    /// old line; the first line after it moves by the hunk's growth.
    #[test]
    fn carry_counts_a_hunks_growth_from_the_line_after_it() {
        let p = parse(b"--- a/f\n+++ b/f\n@@ -2,2 +2,4 @@\n a\n-b\n+c\n+d\n+e\n");
        let at = |line| carry(&p, "f", line).map(|(_, n)| n);
        assert_eq!(at(1), Some(1));
        assert_eq!(at(2), Some(2));
        assert_eq!(
            at(3),
            Some(3),
            "the removed line lands where its replacement starts"
        );
        assert_eq!(at(4), Some(6));
        assert_eq!(at(10), Some(12));
        // Past a hunk of four old lines from line 3: line 8 is moved by
        // nothing, not taken for the hunk's end.
        let four = parse(b"--- a/f\n+++ b/f\n@@ -3,4 +3,4 @@\n a\n b\n-c\n+C\n d\n");
        assert_eq!(carry(&four, "f", 8).map(|(_, n)| n), Some(8));
        assert_eq!(carry(&four, "f", 7).map(|(_, n)| n), Some(7));
        let shrink = parse(b"--- a/f\n+++ b/f\n@@ -1,3 +1 @@\n-a\n-b\n c\n");
        assert_eq!(carry(&shrink, "f", 3).map(|(_, n)| n), Some(1));
        assert_eq!(carry(&shrink, "f", 4).map(|(_, n)| n), Some(2));
    }

    #[test]
    fn malformed_hunk_headers_are_skipped() {
        for text in [
            "@@ -x +1 @@\n+a\n",
            "@@ -1 +99999999999 @@\n+a\n",
            "@@ -1\n",
            "@@ @@\n",
            "@@ -4294967295,4294967295 +4294967295,4294967295 @@\n+a\n a\n",
        ] {
            let p = parse(text.as_bytes());
            let _ = changed_lines(&p);
            let _ = touched(&p);
            let _ = carry(&p, "", 3);
        }
        let p = parse(b"@@ -4294967295,2 +4294967295,2 @@\n a\n+b\n");
        assert_eq!(
            changed_lines(&p).get("").cloned(),
            None,
            "a file with no name gives no changed lines"
        );
    }

    /// xorshift64*: a seeded generator, so a failure can be replayed.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    #[test]
    fn fuzz_never_panics() {
        let pieces: &[&[u8]] = &[
            b"diff --git ",
            b"a/",
            b" b/",
            b"\"",
            b"\\",
            b"\\3",
            b"--- ",
            b"+++ ",
            b"/dev/null",
            b"@@ -",
            b" +",
            b" @@",
            b",",
            b"1",
            b"0",
            b"4294967295",
            b"\n",
            b"\t",
            b" ",
            b"-",
            b"+",
            b"rename from ",
            b"rename to ",
            b"new file mode ",
            b"deleted file mode ",
            b"GIT binary patch",
            b"Binary files ",
            b" differ",
            b"\xff\xfe",
            "é".as_bytes(),
        ];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for round in 0..3000 {
            let mut input: Vec<u8> = Vec::new();
            let len = rng.below(200);
            for _ in 0..len {
                if round % 2 == 0 {
                    input.push((rng.next() & 0xff) as u8);
                } else {
                    input.extend_from_slice(pieces[rng.below(pieces.len())]);
                }
            }
            let p = parse(&input);
            let _ = changed_lines(&p);
            let t = touched(&p);
            let _ = t.near("a", 0, u64::MAX);
            for f in &p.files {
                if let Some(name) = &f.old_path {
                    let _ = carry(&p, name, 1);
                    let _ = carry(&p, name, u64::MAX);
                }
            }
        }
    }
}
