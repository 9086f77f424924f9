//! Pure analysis of unified diffs as git prints them: parsing into files and
//! hunks, the new-side lines a patch changed (for `induced_by`), and whether a
//! later patch exactly reverses a hunk of an earlier one (the `flip-flop`
//! rule). No I/O; never panics, whatever the input bytes.

use std::collections::BTreeMap;
use std::fmt;

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

/// A hunk of a later patch that exactly reverses a hunk of an earlier one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reversal {
    /// The file, as the later patch names it (new side, or old side if deleted).
    pub file: String,
    /// The later hunk's header, e.g. `@@ -3,2 +3,1 @@`.
    pub later_hunk: String,
    /// The earlier hunk's header that it reverses.
    pub earlier_hunk: String,
}

impl fmt::Display for Reversal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}`: hunk `{}` reverses earlier hunk `{}`",
            self.file, self.later_hunk, self.earlier_hunk
        )
    }
}

impl Hunk {
    /// The hunk's header as git prints it, without the section text.
    pub fn header(&self) -> String {
        format!(
            "@@ -{},{} +{},{} @@",
            self.old_start, self.old_len, self.new_start, self.new_len
        )
    }

    fn added(&self) -> impl Iterator<Item = &[u8]> {
        self.lines.iter().filter_map(|l| match l {
            Line::Added(t) => Some(t.as_slice()),
            _ => None,
        })
    }

    fn removed(&self) -> impl Iterator<Item = &[u8]> {
        self.lines.iter().filter_map(|l| match l {
            Line::Removed(t) => Some(t.as_slice()),
            _ => None,
        })
    }
}

impl FilePatch {
    /// The name to report the file by: the new path, or the old one if deleted.
    pub fn path(&self) -> Option<&str> {
        self.new_path.as_deref().or(self.old_path.as_deref())
    }

    fn names(&self) -> impl Iterator<Item = &str> {
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
        if in_hunk && (left.0 > 0 || left.1 > 0) {
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

/// The first hunk of `later` that exactly reverses a hunk of `earlier` on the
/// same file: its removed lines are the earlier hunk's added lines and its
/// added lines the earlier hunk's removed ones. Lines are compared ignoring
/// whitespace; lines blank after that are dropped, and hunks that are empty
/// after that (whitespace-only changes, whose removed and added lines then
/// match) never count.
pub fn reverses(later: &ParsedPatch, earlier: &ParsedPatch) -> Option<Reversal> {
    for lf in &later.files {
        for lh in &lf.hunks {
            let l_removed = normalized(lh.removed());
            let l_added = normalized(lh.added());
            // Nothing left, or a whitespace-only change: nothing to reverse.
            if l_removed == l_added {
                continue;
            }
            for ef in &earlier.files {
                if !lf.names().any(|n| ef.names().any(|m| m == n)) {
                    continue;
                }
                for eh in &ef.hunks {
                    if normalized(eh.added()) == l_removed && normalized(eh.removed()) == l_added {
                        return Some(Reversal {
                            file: lf.path().unwrap_or_default().to_string(),
                            later_hunk: lh.header(),
                            earlier_hunk: eh.header(),
                        });
                    }
                }
            }
        }
    }
    None
}

fn normalized<'a>(lines: impl Iterator<Item = &'a [u8]>) -> Vec<Vec<u8>> {
    lines
        .map(|l| {
            l.iter()
                .copied()
                .filter(|b| !b.is_ascii_whitespace() && *b != 0x0b)
                .collect::<Vec<u8>>()
        })
        .filter(|l| !l.is_empty())
        .collect()
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
    // Unquoted: `a/` + P + ` b/` + P when both names are equal.
    let n = rest.len();
    if n >= 5 && (n - 5).is_multiple_of(2) {
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

    fn one_hunk(file: &str, removed: &[&str], added: &[&str]) -> String {
        let mut s = format!(
            "diff --git a/{file} b/{file}\n--- a/{file}\n+++ b/{file}\n@@ -1,{} +1,{} @@\n",
            removed.len() + 1,
            added.len() + 1
        );
        s.push_str(" ctx\n");
        for r in removed {
            s.push_str(&format!("-{r}\n"));
        }
        for a in added {
            s.push_str(&format!("+{a}\n"));
        }
        s
    }

    #[test]
    fn reverses_table() {
        struct Case {
            name: &'static str,
            earlier: String,
            later: String,
            reverses: bool,
        }
        let cases = [
            Case {
                name: "exact reversal",
                earlier: one_hunk("f.rs", &["a < b"], &["a <= b"]),
                later: one_hunk("f.rs", &["a <= b"], &["a < b"]),
                reverses: true,
            },
            Case {
                name: "reversal with different whitespace",
                earlier: one_hunk("f.rs", &["if a<b {"], &["if a <= b {", ""]),
                later: one_hunk("f.rs", &["  if a<=b {"], &["\tif a < b {"]),
                reverses: true,
            },
            Case {
                name: "reverting an addition",
                earlier: one_hunk("f.rs", &[], &["check();"]),
                later: one_hunk("f.rs", &["check();"], &[]),
                reverses: true,
            },
            Case {
                name: "same change again is not a reversal",
                earlier: one_hunk("f.rs", &["a < b"], &["a <= b"]),
                later: one_hunk("f.rs", &["a < b"], &["a <= b"]),
                reverses: false,
            },
            Case {
                name: "other file",
                earlier: one_hunk("f.rs", &["a < b"], &["a <= b"]),
                later: one_hunk("g.rs", &["a <= b"], &["a < b"]),
                reverses: false,
            },
            Case {
                name: "partial reversal",
                earlier: one_hunk("f.rs", &["a", "b"], &["A", "B"]),
                later: one_hunk("f.rs", &["A"], &["a"]),
                reverses: false,
            },
            Case {
                name: "whitespace-only hunks never count",
                earlier: one_hunk("f.rs", &["x  y"], &["x y"]),
                later: one_hunk("f.rs", &["x y"], &["x  y"]),
                reverses: false,
            },
            Case {
                name: "empty patches",
                earlier: String::new(),
                later: String::new(),
                reverses: false,
            },
        ];
        for c in cases {
            let got = reverses(&parse(c.later.as_bytes()), &parse(c.earlier.as_bytes()));
            assert_eq!(got.is_some(), c.reverses, "{}: {got:?}", c.name);
        }
        let r = reverses(
            &parse(one_hunk("f.rs", &["new"], &["old"]).as_bytes()),
            &parse(one_hunk("f.rs", &["old"], &["new"]).as_bytes()),
        );
        assert_eq!(
            r.map(|r| r.to_string()).as_deref(),
            Some("`f.rs`: hunk `@@ -1,2 +1,2 @@` reverses earlier hunk `@@ -1,2 +1,2 @@`")
        );
    }

    #[test]
    fn reversal_across_a_rename() {
        let earlier = one_hunk("old.rs", &["x"], &["y"]);
        let later = "diff --git a/old.rs b/new.rs\nrename from old.rs\nrename to new.rs\n\
--- a/old.rs\n+++ b/new.rs\n@@ -1,2 +1,2 @@\n ctx\n-y\n+x\n";
        assert!(reverses(&parse(later.as_bytes()), &parse(earlier.as_bytes())).is_some());
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
            let _ = reverses(&p, &p);
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
        let mut previous = ParsedPatch::default();
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
            let _ = reverses(&p, &previous);
            let _ = reverses(&previous, &p);
            previous = p;
        }
    }
}
