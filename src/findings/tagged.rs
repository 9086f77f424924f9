//! Tagged text: one finding per line, `[level] path:line: title`. Pure.
//!
//! Every line is one of four things, and nothing that holds a tag is
//! skipped (SPEC §4.1, no silent drops):
//!
//! - **a tagged line**: a level or alias in brackets at the *tag position*,
//!   the start of the line after any indentation and decoration: list
//!   markers (`-`, `*`, `+`, `•`, `1.`, `1)`, `(1)`), a `#` heading, a `>`
//!   quote, a `[ ]`/`[x]` checkbox, emphasis (`**`, `*`, `_`, a backtick)
//!   and emoji, then maybe an id (`- F1 [bug] …`, the shape in which the
//!   referee lists findings to the agents). Emphasis opened before the tag
//!   is closed after it or further on (`**[bug]**`,
//!   `**[bug] src/a.rs:3**: title`). A separator may follow the tag
//!   (`[bug]: …`, `[bug] — …`);
//! - then an optional place: `path:line:`, `path:line:col:`,
//!   `path:start-end:`, `path#L3`, `path:` at the start (also in backticks,
//!   bold, `(…)` or `[…]`, and followed by `:`, ` - `, ` — ` or ` – `);
//!   `path:line` with no separator; or `(path:line)` / `— path:line` at the
//!   end. A path has no spaces and holds a `/` or a `.`;
//! - **a body line**: an indented line after a finding (blank lines in
//!   between do not end the body). Body lines may mention `[bug]`; they are
//!   the reviewer's words about the finding above;
//! - **a control line**: `[resolved] ID…` lists ids the reviewer confirms
//!   fixed; `[clean]` or `no findings` proves a clean review;
//! - **prose**: anything else, ignored.
//!
//! These are errors naming the line, never skipped:
//!
//! - an unknown word in tag position (`[bgu]`: a typo must not hide a
//!   finding; the message suggests the nearest words);
//! - brackets in tag position that hold a level but are no tag
//!   (`[severity: high]`, `[P1 - High]`);
//! - a tag with no title;
//! - a level or alias in brackets anywhere else on a line that is neither a
//!   finding nor a body line (`1) src/a.rs:3 [bug] title`, `| [bug] | … |`).
//!   Not counted: a mention in backticks, a link `[high](…)`, an index
//!   `a[high]`.
//!
//! With no tagged line, the text must say `[clean]` or `no findings` on a
//! line of its own: a clean round must be proven.

use super::{Draft, Drafts, FindingsError, Format, Severity, severity};
use crate::exit::Hinted;

pub(crate) fn parse(text: &str) -> Result<Drafts, FindingsError> {
    let mut reader = Reader::new(Format::Tagged);
    for (index, line) in text.lines().enumerate() {
        reader.line(index + 1, line)?;
    }
    let (drafts, clean) = reader.finish();
    if drafts.findings.is_empty() && drafts.resolved.is_empty() && !clean {
        return Err(FindingsError::NotProven {
            format: Format::Tagged,
            message: "no tagged finding and no `[clean]` or `no findings` line".into(),
            hint:
                "tag each finding like `[bug] src/a.rs:42: text`; say `[clean]` when there is none"
                    .into(),
        });
    }
    Ok(drafts)
}

/// Reads tagged text line by line, keeping the body of the open finding.
/// The Codex rendered review uses it too, for every line that is not one
/// of its own bullets.
pub(crate) struct Reader {
    format: Format,
    drafts: Drafts,
    clean: bool,
    body: Option<Body>,
}

/// The finding that indented lines continue.
struct Body {
    index: usize,
    /// Indentation (in characters) of its first body line, removed from
    /// every body line.
    indent: Option<usize>,
    /// A blank line came since the last body line.
    gap: bool,
}

impl Reader {
    pub(crate) fn new(format: Format) -> Self {
        Reader {
            format,
            drafts: Drafts::default(),
            clean: false,
            body: None,
        }
    }

    /// A finding read by the caller; indented lines after it are its body.
    pub(crate) fn push(&mut self, draft: Draft) {
        self.drafts.findings.push(draft);
        self.body = Some(Body {
            index: self.drafts.findings.len() - 1,
            indent: None,
            gap: false,
        });
    }

    /// Reads line `number` (1-based).
    pub(crate) fn line(&mut self, number: usize, line: &str) -> Result<(), FindingsError> {
        let read = read_line(line).map_err(|message| self.error(number, message))?;
        match read {
            Line::Blank => {
                if let Some(body) = self.body.as_mut() {
                    body.gap = true;
                }
            }
            Line::Finding(draft) => self.push(draft),
            Line::Resolved(ids) => {
                self.body = None;
                self.drafts.resolved.extend(ids);
            }
            Line::Clean => {
                self.body = None;
                self.clean = true;
            }
            Line::Prose { mention } => {
                let indented = line.starts_with([' ', '\t']);
                if indented && self.body.is_some() {
                    self.append_body(line);
                    return Ok(());
                }
                self.body = None;
                if is_clean_line(line) {
                    self.clean = true;
                }
                if let Some(word) = mention {
                    let lower = word.to_ascii_lowercase();
                    return Err(self.error(
                        number,
                        Hinted::new(
                            format!(
                                "`[{word}]` is not at the start of the line, so the line is not read as a finding"
                            ),
                            format!(
                                "start the line with the tag (`[{lower}] path:line: title`), \
                                 or indent it under a finding as that finding's body"
                            ),
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The findings and resolved ids read, and whether a clean line was seen.
    pub(crate) fn finish(self) -> (Drafts, bool) {
        (self.drafts, self.clean)
    }

    fn error(&self, number: usize, message: Hinted) -> FindingsError {
        FindingsError::invalid(self.format, format!("line {number}"), message)
    }

    fn append_body(&mut self, line: &str) {
        let Some(body) = self.body.as_mut() else {
            return;
        };
        let Some(draft) = self.drafts.findings.get_mut(body.index) else {
            return;
        };
        let lead = line.chars().take_while(|ch| ch.is_whitespace()).count();
        let indent = *body.indent.get_or_insert(lead);
        let mut rest = line;
        for _ in 0..indent.min(lead) {
            let mut chars = rest.chars();
            chars.next();
            rest = chars.as_str();
        }
        let text = draft.body.get_or_insert_with(String::new);
        if !text.is_empty() {
            text.push('\n');
            if body.gap {
                text.push('\n');
            }
        }
        body.gap = false;
        text.push_str(rest.trim_end());
    }
}

/// What one line is.
#[derive(Debug)]
enum Line<'a> {
    Blank,
    Finding(Draft),
    Resolved(Vec<String>),
    Clean,
    /// No tag in tag position; `mention` is the first level or alias in
    /// brackets elsewhere on the line.
    Prose {
        mention: Option<&'a str>,
    },
}

/// Reads one line; an error is the message (the caller names the line).
fn read_line(line: &str) -> Result<Line<'_>, Hinted> {
    if line.trim().is_empty() {
        return Ok(Line::Blank);
    }
    match split_tag(line)? {
        Some(tagged) => tagged_line(&tagged),
        None => Ok(Line::Prose {
            mention: mention(line),
        }),
    }
}

fn tagged_line(tagged: &Tagged<'_>) -> Result<Line<'static>, Hinted> {
    let (tag, rest) = (tagged.tag, tagged.rest.as_str());
    match tag.to_ascii_lowercase().as_str() {
        "clean" => Ok(Line::Clean),
        "resolved" => Ok(Line::Resolved(
            rest.split(|ch: char| ch.is_whitespace() || ch == ',')
                .filter(|id| !id.is_empty())
                .map(str::to_string)
                .collect(),
        )),
        _ => {
            let severity = read_severity(tag)?;
            let rest = rest.trim();
            let rest = strip_separator(rest).unwrap_or(rest);
            let place = split_location(rest);
            if place.title.is_empty() {
                let lower = tag.to_ascii_lowercase();
                return Err(Hinted::new(
                    format!("`[{tag}]` has no title"),
                    format!("write `[{lower}] path:line: what is wrong`"),
                ));
            }
            Ok(Line::Finding(Draft {
                id: tagged.id.map(str::to_string),
                severity: Some(severity),
                title: place.title.to_string(),
                file: place.file.map(str::to_string),
                line: place.line,
                end_line: place.end_line.filter(|end| Some(*end) != place.line),
                ..Draft::default()
            }))
        }
    }
}

/// A tag word as a severity, or the error message: the accepted words, and
/// the nearest ones as a hint when the word looks like a typo.
pub(crate) fn read_severity(tag: &str) -> Result<Severity, Hinted> {
    tag.parse::<Severity>().map_err(|err| {
        let near = severity::suggestions(tag);
        if near.is_empty() {
            return err.to_string().into();
        }
        let near: Vec<String> = near.iter().map(|word| format!("`[{word}]`")).collect();
        Hinted::new(err.to_string(), format!("did you mean {}?", or_list(&near)))
    })
}

/// `a`, `a or b`, `a, b or c`.
fn or_list(items: &[String]) -> String {
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// A line's tag, the id before it if any, and the rest of the line.
#[derive(Debug, PartialEq)]
struct Tagged<'a> {
    /// `F1` in `- F1 [bug] src/a.rs:3: title`, the shape in which the
    /// referee lists open findings to the agents.
    id: Option<&'a str>,
    tag: &'a str,
    /// With the emphasis around the tag closed.
    rest: String,
}

/// The tag of a line that holds one in tag position (after an optional
/// id). `[x]` checkboxes, `[2026-01-01]` stamps and links `[text](url)` are
/// not tags; brackets there that hold a level but are not one word are an
/// error.
fn split_tag(line: &str) -> Result<Option<Tagged<'_>>, Hinted> {
    let (start, opened) = decorations(line);
    let (id, start) = if start.starts_with('[') {
        (None, start)
    } else {
        match leading_id(start) {
            Some((id, after)) => (Some(id), after),
            None => return Ok(None),
        }
    };
    let Some(inner) = start.strip_prefix('[') else {
        return Ok(None);
    };
    let Some(close) = inner.find(']') else {
        return Ok(None);
    };
    let raw = &inner[..close];
    let after = &inner[close + 1..];
    let tag = raw.trim().trim_end_matches(':').trim_end();
    if is_tag_word(tag) {
        let known = tag.parse::<Severity>().is_ok()
            || tag.eq_ignore_ascii_case("clean")
            || tag.eq_ignore_ascii_case("resolved");
        if after.starts_with('(') && !known {
            // A Markdown link, not a tag.
            return Ok(None);
        }
        return Ok(Some(Tagged {
            id,
            tag,
            rest: close_emphasis(after, &opened).trim().to_string(),
        }));
    }
    if after.starts_with('(') {
        return Ok(None);
    }
    if let Some(level) = raw
        .split(|ch: char| !ch.is_ascii_alphanumeric())
        .find(|word| word.parse::<Severity>().is_ok())
    {
        let lower = level.to_ascii_lowercase();
        return Err(Hinted::new(
            format!(
                "`[{raw}]` holds a severity but is not a tag: a tag is one level or alias in brackets"
            ),
            format!("write `[{lower}]`"),
        ));
    }
    Ok(None)
}

/// An id and what follows it, when `text` opens with one and a `[` comes
/// next: up to four letters, an optional `-`, then letters and digits with
/// a digit among them (`F1`, `F-1a2b3c4d5e`, `S-0f3c…`), maybe with a `:`.
fn leading_id(text: &str) -> Option<(&str, &str)> {
    let end = text.find(char::is_whitespace)?;
    let (token, after) = text.split_at(end);
    let id = token.strip_suffix(':').unwrap_or(token);
    let letters = id.bytes().take_while(u8::is_ascii_alphabetic).count();
    let tail = &id[letters..];
    let tail = tail.strip_prefix('-').unwrap_or(tail);
    let shaped = (1..=4).contains(&letters)
        && id.len() <= 24
        && !tail.is_empty()
        && tail.bytes().all(|byte| byte.is_ascii_alphanumeric())
        && tail.bytes().any(|byte| byte.is_ascii_digit());
    let after = after.trim_start();
    (shaped && after.starts_with('[')).then_some((id, after))
}

/// A letter, then letters or digits, two characters at least.
fn is_tag_word(tag: &str) -> bool {
    let mut chars = tag.chars();
    chars.next().is_some_and(|ch| ch.is_ascii_alphabetic())
        && tag.len() >= 2
        && chars.all(|ch| ch.is_ascii_alphanumeric())
}

/// The line after its indentation and decoration (list markers, headings,
/// quotes, checkboxes, emphasis, emoji), and the emphasis markers opened.
fn decorations(line: &str) -> (&str, String) {
    let mut rest = line;
    let mut opened = String::new();
    loop {
        rest = rest.trim_start();
        if let Some(after) = strip_marker(rest) {
            rest = after;
            continue;
        }
        let Some(first) = rest.chars().next() else {
            break;
        };
        if matches!(first, '*' | '_' | '`') {
            opened.push(first);
        } else if first.is_ascii() || first.is_alphanumeric() {
            break;
        }
        // Emphasis, or an emoji / symbol such as 🔴 or ⚠.
        rest = &rest[first.len_utf8()..];
    }
    (rest, opened)
}

/// `rest` after one list marker, heading, quote or checkbox at its start.
fn strip_marker(rest: &str) -> Option<&str> {
    if let Some(after) = rest.strip_prefix('>') {
        return Some(after);
    }
    for bullet in ['-', '*', '+', '•'] {
        if let Some(after) = rest.strip_prefix(bullet)
            && let Some(after) = spaced(after)
        {
            return Some(after);
        }
    }
    let hashes = rest.bytes().take_while(|byte| *byte == b'#').count();
    if (1..=6).contains(&hashes)
        && let Some(after) = spaced(&rest[hashes..])
    {
        return Some(after);
    }
    for checkbox in ["[ ]", "[x]", "[X]"] {
        if let Some(after) = rest.strip_prefix(checkbox)
            && let Some(after) = spaced(after)
        {
            return Some(after);
        }
    }
    // `1.`, `1)` and `(1)`.
    let (open, body) = match rest.strip_prefix('(') {
        Some(body) => (true, body),
        None => (false, rest),
    };
    let digits = body.bytes().take_while(u8::is_ascii_digit).count();
    if !(1..=9).contains(&digits) {
        return None;
    }
    let after = &body[digits..];
    let after = if open {
        after.strip_prefix(')')?
    } else {
        after
            .strip_prefix('.')
            .or_else(|| after.strip_prefix(')'))?
    };
    spaced(after)
}

/// `after` when it opens with a space (a marker needs one after it).
fn spaced(after: &str) -> Option<&str> {
    after.starts_with(char::is_whitespace).then_some(after)
}

/// The rest of a tagged line with the emphasis opened before the tag
/// closed: right after the tag (`**[bug]**`) or further on
/// (`**[bug] src/a.rs:3**: title`).
fn close_emphasis(after: &str, opened: &str) -> String {
    if opened.is_empty() {
        return after.to_string();
    }
    let right_after = after.trim_start_matches(['*', '_', '`']);
    if right_after.len() != after.len() {
        return right_after.to_string();
    }
    let closer: String = opened.chars().rev().collect();
    match after.find(&closer) {
        Some(at) => format!("{}{}", &after[..at], &after[at + closer.len()..]),
        None => after.to_string(),
    }
}

/// The first level or alias in brackets on a line read as prose, outside
/// backticks, links (`[high](…)`) and indexing (`a[high]`).
fn mention(line: &str) -> Option<&str> {
    const MENTION_SPAN: usize = 32;
    let mut in_code = false;
    let mut previous: Option<char> = None;
    for (at, ch) in line.char_indices() {
        match ch {
            '`' => in_code = !in_code,
            '[' if !in_code
                && !previous
                    .is_some_and(|p| p.is_alphanumeric() || matches!(p, '_' | ']' | ')')) =>
            {
                let inner = &line[at + 1..];
                // Levels are short words: looking no further than this keeps
                // a line of a million `[` linear.
                let close = inner
                    .char_indices()
                    .take(MENTION_SPAN)
                    .find(|(_, ch)| *ch == ']')
                    .map(|(close, _)| close);
                if let Some(close) = close {
                    let word = inner[..close].trim();
                    let linked = inner[close + 1..].starts_with(['(', '[']);
                    if !linked && word.parse::<Severity>().is_ok() {
                        return Some(word);
                    }
                }
            }
            _ => {}
        }
        previous = Some(ch);
    }
    None
}

fn is_clean_line(line: &str) -> bool {
    let (rest, _) = decorations(line);
    let words = rest
        .trim()
        .trim_end_matches(['*', '_', '`'])
        .trim_end_matches(['.', '!'])
        .to_ascii_lowercase();
    words == "no findings" || words == "no findings found" || words == "[clean]"
}

/// `text` after a leading separator (`:`, `-`, `—`, `–`) and the spaces
/// after it; `None` when it opens with none.
fn strip_separator(text: &str) -> Option<&str> {
    for separator in [":", "-", "—", "–"] {
        if let Some(after) = text.strip_prefix(separator)
            && (after.is_empty() || after.starts_with(char::is_whitespace))
        {
            return Some(after.trim_start());
        }
    }
    None
}

/// Where a finding is, and its title.
#[derive(Debug, PartialEq)]
struct Place<'a> {
    file: Option<&'a str>,
    line: Option<u64>,
    end_line: Option<u64>,
    title: &'a str,
}

impl<'a> Place<'a> {
    fn titled(title: &'a str) -> Self {
        Place {
            file: None,
            line: None,
            end_line: None,
            title,
        }
    }
}

/// Splits the place off the rest of a tagged line: at its start, else at
/// its end, else there is none and the whole rest is the title.
fn split_location(rest: &str) -> Place<'_> {
    let rest = rest.trim();
    leading_place(rest)
        .or_else(|| trailing_place(rest))
        .unwrap_or_else(|| Place::titled(rest))
}

/// `path:line: title`, `` `path:line`: title ``, `**path:line**: title`,
/// `(path:line) title`, `path:line - title`, `path:line — title`,
/// `path:line title`. A place followed by nothing but an explicit
/// separator gives an empty title (an error); with no separator, the words
/// are taken as the title (`[bug] src/a.rs:3` reads as it always did).
fn leading_place(rest: &str) -> Option<Place<'_>> {
    for (open, close) in [("`", "`"), ("**", "**"), ("(", ")"), ("[", "]")] {
        let Some(inner) = rest.strip_prefix(open) else {
            continue;
        };
        let Some(end) = inner.find(close) else {
            continue;
        };
        let wrapped = inner[..end].trim().trim_matches(['`', '*']);
        let (token, inside) = match wrapped.strip_suffix(':') {
            Some(token) => (token, true),
            None => (wrapped, false),
        };
        let Some((file, line, end_line)) = parse_place(token) else {
            continue;
        };
        let after = inner[end + close.len()..].trim_start_matches(['`', '*']);
        let after = after.trim_start();
        let (title, separated) = match strip_separator(after) {
            Some(title) => (title, true),
            None => (after, inside),
        };
        let title = title.trim();
        if title.is_empty() && !separated {
            return None;
        }
        return Some(Place {
            file: Some(file),
            line,
            end_line,
            title,
        });
    }
    let head_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let (head, after) = rest.split_at(head_end);
    let (token, explicit) = match head.strip_suffix(':') {
        Some(token) => (token, true),
        None => (head, false),
    };
    let (file, line, end_line) = parse_place(token)?;
    let after = after.trim_start();
    let (title, separated) = match (explicit, strip_separator(after)) {
        (true, _) => (after, true),
        (false, Some(title)) => (title, true),
        (false, None) => (after, false),
    };
    if !separated && line.is_none() {
        // `README.md is stale`: a file name opening a title.
        return None;
    }
    let title = title.trim();
    if title.is_empty() && !separated {
        return None;
    }
    Some(Place {
        file: Some(file),
        line,
        end_line,
        title,
    })
}

/// `title (path:line)`, `title — path:line`, `title - path:line` (a line
/// number is required at the end).
fn trailing_place(rest: &str) -> Option<Place<'_>> {
    let trimmed = rest.trim_end_matches(['.', ',', ';']);
    let parenthesized = trimmed
        .strip_suffix(')')
        .and_then(|open_end| Some((open_end, open_end.rfind('(')?)))
        .map(|(open_end, open)| (&open_end[..open], &open_end[open + 1..]));
    let dashed = [" — ", " – ", " - "]
        .into_iter()
        .filter_map(|separator| trimmed.rsplit_once(separator));
    for (title, token) in parenthesized.into_iter().chain(dashed) {
        let token = token.trim().trim_matches(['`', '*']);
        let title = title.trim();
        if let Some((file, Some(line), end_line)) = parse_place(token)
            && !title.is_empty()
        {
            return Some(Place {
                file: Some(file),
                line: Some(line),
                end_line,
                title,
            });
        }
    }
    None
}

/// `path`, `path:line`, `path:line:col`, `path:start-end`, `path#L3`,
/// `path#L3-L5` as (path, line, end line).
fn parse_place(token: &str) -> Option<(&str, Option<u64>, Option<u64>)> {
    if token.is_empty() || token.contains(char::is_whitespace) {
        return None;
    }
    let (path, range) = match token.rsplit_once("#L") {
        Some((path, range)) => (path, Some(range)),
        None => match token.split_once(':') {
            Some((path, range)) => (path, Some(range)),
            None => (token, None),
        },
    };
    if !looks_like_path(path) {
        return None;
    }
    let Some(range) = range else {
        return Some((path, None, None));
    };
    let (lines, column) = match range.split_once(':') {
        Some((lines, column)) => (lines, Some(column)),
        None => (range, None),
    };
    if column.is_some_and(|column| number(column).is_none()) {
        return None;
    }
    let (start, end) = match lines.split_once('-') {
        Some((start, end)) => (number(start)?, Some(number(end.trim_start_matches('L'))?)),
        None => (number(lines)?, None),
    };
    Some((path, Some(start), end))
}

/// Digits only (`str::parse` would take a leading `+`).
fn number(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// No spaces, a `/` or a `.`, not a URL, and not a word ending a sentence.
fn looks_like_path(path: &str) -> bool {
    !path.is_empty()
        && (path.contains('/') || path.contains('.'))
        && !path.ends_with('.')
        && !path.contains("//")
        && !path.contains(':')
        && path.chars().any(char::is_alphanumeric)
}

/// The tag and title of a line that opens with a tag (a Codex bullet's
/// title, `[P1] Title`): `None` as severity when it opens with no tag.
pub(crate) fn title_tag(title: &str) -> Result<(Option<Severity>, &str), Hinted> {
    let trimmed = title.trim();
    let Some(inner) = trimmed.strip_prefix('[') else {
        return Ok((None, trimmed));
    };
    let Some((tag, rest)) = inner.split_once(']') else {
        return Ok((None, trimmed));
    };
    if !is_tag_word(tag) {
        return Ok((None, trimmed));
    }
    let severity = read_severity(tag)?;
    let rest = rest.trim();
    if rest.is_empty() {
        return Err(format!("`[{tag}]` has no title").into());
    }
    Ok((Some(severity), rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place<'a>(
        file: Option<&'a str>,
        line: Option<u64>,
        end_line: Option<u64>,
        title: &'a str,
    ) -> Place<'a> {
        Place {
            file,
            line,
            end_line,
            title,
        }
    }

    #[test]
    fn locations_split_from_titles() {
        let a = Some("src/a.rs");
        let table = [
            (
                "src/a.rs:42: text here",
                place(a, Some(42), None, "text here"),
            ),
            ("src/a.rs:42:7: text", place(a, Some(42), None, "text")),
            (
                "README.md: typo",
                place(Some("README.md"), None, None, "typo"),
            ),
            (
                "note: not a path",
                place(None, None, None, "note: not a path"),
            ),
            ("plain title", place(None, None, None, "plain title")),
            ("a.rs:x: odd", place(None, None, None, "a.rs:x: odd")),
            (
                "http://x.y/z: odd",
                place(None, None, None, "http://x.y/z: odd"),
            ),
            ("e.g.: a list", place(None, None, None, "e.g.: a list")),
            // What reviewers write besides `path:line:`.
            ("`src/a.rs:42`: title", place(a, Some(42), None, "title")),
            ("`src/a.rs:42` title", place(a, Some(42), None, "title")),
            ("**src/a.rs:42**: title", place(a, Some(42), None, "title")),
            ("**src/a.rs:42:** title", place(a, Some(42), None, "title")),
            ("(src/a.rs:42) title", place(a, Some(42), None, "title")),
            ("(`src/a.rs:42`): title", place(a, Some(42), None, "title")),
            ("[src/a.rs:42] title", place(a, Some(42), None, "title")),
            ("src/a.rs:42 - title", place(a, Some(42), None, "title")),
            ("src/a.rs:42 — title", place(a, Some(42), None, "title")),
            ("src/a.rs:42 – title", place(a, Some(42), None, "title")),
            ("src/a.rs:42 title", place(a, Some(42), None, "title")),
            ("src/a.rs - title", place(a, None, None, "title")),
            (
                "src/a.rs:42-45: title",
                place(a, Some(42), Some(45), "title"),
            ),
            ("src/a.rs#L42: title", place(a, Some(42), None, "title")),
            (
                "src/a.rs#L42-L45 title",
                place(a, Some(42), Some(45), "title"),
            ),
            ("title (src/a.rs:42)", place(a, Some(42), None, "title")),
            ("title (`src/a.rs:42`).", place(a, Some(42), None, "title")),
            ("title — src/a.rs:42", place(a, Some(42), None, "title")),
            (
                "title — /abs/a.rs:2-4",
                place(Some("/abs/a.rs"), Some(2), Some(4), "title"),
            ),
            // Not places.
            (
                "README.md is stale",
                place(None, None, None, "README.md is stale"),
            ),
            (
                "title (see the docs)",
                place(None, None, None, "title (see the docs)"),
            ),
            ("a - b", place(None, None, None, "a - b")),
            ("+3 is odd", place(None, None, None, "+3 is odd")),
            // A place and no words: the words stay the title, as before.
            ("src/a.rs:3", place(None, None, None, "src/a.rs:3")),
            // A place and an explicit separator, then nothing: no title.
            ("src/a.rs:3:", place(a, Some(3), None, "")),
        ];
        for (input, want) in table {
            assert_eq!(split_location(input), want, "{input}");
        }
    }

    #[test]
    fn tags_are_words_in_brackets_in_tag_position() {
        let table = [
            ("[block] x", Some(("block", "x"))),
            ("  - [P1] x", Some(("P1", "x"))),
            ("* [bug] x", Some(("bug", "x"))),
            ("+ [bug] x", Some(("bug", "x"))),
            ("• [bug] x", Some(("bug", "x"))),
            ("1. [bug] x", Some(("bug", "x"))),
            ("12) [bug] x", Some(("bug", "x"))),
            ("(3) [bug] x", Some(("bug", "x"))),
            ("### [bug] x", Some(("bug", "x"))),
            ("> [bug] x", Some(("bug", "x"))),
            ("- [ ] [bug] x", Some(("bug", "x"))),
            ("- [x] [bug] x", Some(("bug", "x"))),
            ("**[bug]** x", Some(("bug", "x"))),
            ("- **[P1]**: x", Some(("P1", ": x"))),
            ("**[bug] src/a.rs:3**: x", Some(("bug", "src/a.rs:3: x"))),
            ("`[bug]` x", Some(("bug", "x"))),
            ("_[nit]_ x", Some(("nit", "x"))),
            ("1. 🔴 **[P0]** x", Some(("P0", "x"))),
            ("[ bug ] x", Some(("bug", "x"))),
            ("[Bug:] x", Some(("Bug", "x"))),
            ("[bug](src/a.rs:3) x", Some(("bug", "(src/a.rs:3) x"))),
            // Not tags.
            ("[x] done", None),
            ("- [x] done", None),
            ("[2026-01-01] log", None),
            ("text [bug] later", None),
            ("1.5 [bug] x", None),
            ("-[bug] x", None),
            ("[Docs](https://example.com) are stale", None),
            ("[error handling](docs/e.md) is thin", None),
            ("#hashtag [bug]", None),
        ];
        for (line, want) in table {
            let got = split_tag(line).expect("no error");
            let got = got
                .as_ref()
                .map(|tagged| (tagged.tag, tagged.rest.as_str()));
            assert_eq!(got, want, "{line}");
            assert!(
                got.is_none() || split_tag(line).is_ok_and(|t| t.is_some_and(|t| t.id.is_none()))
            );
        }
    }

    #[test]
    fn an_id_may_come_before_the_tag() {
        let table = [
            ("- F1 [bug] src/a.rs:3: x", Some(("F1", "bug"))),
            ("F-1a2b3c4d5e: [nit] x", Some(("F-1a2b3c4d5e", "nit"))),
            ("1. S-0f3caa [P2] x", Some(("S-0f3caa", "P2"))),
            ("Overall [bug] count: 2", None),
            ("F1 has [bug] x", None),
            ("Fabc [bug] x", None),
        ];
        for (line, want) in table {
            let got = split_tag(line).expect("no error");
            let got = got.as_ref().and_then(|t| Some((t.id?, t.tag)));
            assert_eq!(got, want, "{line}");
        }
        let drafts = parse("- F1 [bug] src/lib.rs:2: 0 hides bad input\n").expect("parses");
        assert_eq!(drafts.findings[0].id.as_deref(), Some("F1"));
        assert_eq!(drafts.findings[0].title, "0 hides bad input");
    }

    #[test]
    fn brackets_holding_a_level_in_tag_position_must_be_a_tag() {
        for line in [
            "- [severity: high] src/a.rs:3: x",
            "[P1 - High] x",
            "1. [BUG-12] x",
        ] {
            let err = split_tag(line).expect_err(line);
            assert!(
                err.message.contains("holds a severity but is not a tag"),
                "{err}"
            );
        }
    }

    #[test]
    fn mentions_are_levels_in_brackets_outside_code_links_and_indexes() {
        let table = [
            ("1) src/a.rs:3 [bug] title", Some("bug")),
            ("| [High] | src/a.rs:3 | x |", Some("High")),
            ("see (P1) and [p1].", Some("p1")),
            ("legend: [nit] < [bug]", Some("nit")),
            ("tags like `[bug]` are read", None),
            ("see [error](docs/e.md)", None),
            ("buf[low] may overflow", None),
            ("a[i][high]", None),
            ("[x] and [2026-01-01] and [urgent]", None),
            ("no brackets", None),
        ];
        for (line, want) in table {
            assert_eq!(mention(line), want, "{line}");
        }
    }

    fn error(text: &str) -> String {
        crate::report::error::render(&parse(text).expect_err(text).into())
    }

    #[test]
    fn unknown_tags_are_errors_with_the_line() {
        let err = error("ok\n[urgent] src/a.rs:1: x\n");
        assert!(
            err.starts_with("tagged text: line 2: unknown severity `urgent`; accepted: nit,"),
            "{err}"
        );
        assert!(!err.contains("hint"), "{err}");
    }

    #[test]
    fn typos_suggest_a_level() {
        let err = error("[nit] a.rs: fine\n1. [bgu] src/a.rs:3: x\n");
        assert!(
            err.starts_with("tagged text: line 2: unknown severity `bgu`; accepted:"),
            "{err}"
        );
        assert!(err.ends_with("\nhint: did you mean `[bug]`?"), "{err}");
        let err = error("[P4] x\n");
        assert!(
            err.ends_with("hint: did you mean `[p3]`, `[p2]`, `[p1]` or `[p0]`?"),
            "{err}"
        );
    }

    #[test]
    fn refusals_name_the_line() {
        let table = [
            (
                "[nit] a.rs: x\n[bug]\n",
                "tagged text: line 2: `[bug]` has no title",
            ),
            (
                "[nit] a.rs: x\n- **[bug]**\n",
                "tagged text: line 2: `[bug]` has no title",
            ),
            (
                "[bug] src/a.rs:3:\n",
                "tagged text: line 1: `[bug]` has no title",
            ),
            (
                "[nit] a.rs: x\n\nsrc/a.rs:3 [bug] title\n",
                "tagged text: line 3: `[bug]` is not at the start of the line",
            ),
            (
                "| sev | place |\n| [High] | src/a.rs:3 |\n",
                "tagged text: line 2: `[High]` is not at the start of the line",
            ),
            (
                "[clean]\n- [severity: high] src/a.rs:3: x\n",
                "tagged text: line 2: `[severity: high]` holds a severity but is not a tag",
            ),
        ];
        for (text, want) in table {
            let err = error(text);
            assert!(err.starts_with(want), "{text:?}: {err}");
        }
    }

    #[test]
    fn clean_must_be_said() {
        assert!(parse("looks fine to me\n").is_err());
        assert!(parse("[clean]\n").expect("parses").findings.is_empty());
        assert!(parse("No findings.\n").expect("parses").findings.is_empty());
        assert!(
            parse("**No findings.**\n")
                .expect("parses")
                .findings
                .is_empty()
        );
        assert!(parse("- [clean]\n").expect("parses").findings.is_empty());
    }

    #[test]
    fn indented_lines_are_the_body() {
        let drafts =
            parse("[bug] a.rs:3: boom\n  first\n\tsecond\nafter\n  not body\n").expect("parses");
        assert_eq!(drafts.findings.len(), 1);
        assert_eq!(drafts.findings[0].body.as_deref(), Some("first\nsecond"));
    }

    #[test]
    fn bodies_span_blank_lines_and_may_mention_tags() {
        let text = "1. [bug] a.rs:3: boom\n   first, a [nit] at most\n\n   second\n      indented\nafter\n";
        let drafts = parse(text).expect("parses");
        assert_eq!(drafts.findings.len(), 1);
        assert_eq!(
            drafts.findings[0].body.as_deref(),
            Some("first, a [nit] at most\n\nsecond\n   indented")
        );
    }

    /// The false clean this parser once gave: numbered findings were
    /// skipped, the one `-` finding made the text parse.
    #[test]
    fn every_list_style_is_read() {
        let text = "Review:\n\n\
            1. [bug] src/a.rs:3: off by one\n\
            2) [bug] src/b.rs:4: unchecked index\n\
            (3) [should] src/c.rs:5: missing test\n\
            - [nit] src/d.rs:6: typo\n\
            * [nit] src/d.rs:7: typo again\n\
            + [nit] src/d.rs:8: and again\n\
            ### [block] src/e.rs:9: secret in the log\n\
            - **[P1]** src/f.rs:10: bold tag\n\
            **[bug] src/g.rs:11**: bold tag and place\n\
            - [major] `src/h.rs:12`: backticked place\n\
            - [minor] src/i.rs:13 — dashed title\n\
            - [low] dangling comma (src/j.rs:14)\n";
        let drafts = parse(text).expect("parses");
        type Row<'a> = (Option<Severity>, Option<&'a str>, Option<u64>, &'a str);
        let got: Vec<Row> = drafts
            .findings
            .iter()
            .map(|d| (d.severity, d.file.as_deref(), d.line, d.title.as_str()))
            .collect();
        use Severity::*;
        assert_eq!(
            got,
            vec![
                (Some(Bug), Some("src/a.rs"), Some(3), "off by one"),
                (Some(Bug), Some("src/b.rs"), Some(4), "unchecked index"),
                (Some(Should), Some("src/c.rs"), Some(5), "missing test"),
                (Some(Nit), Some("src/d.rs"), Some(6), "typo"),
                (Some(Nit), Some("src/d.rs"), Some(7), "typo again"),
                (Some(Nit), Some("src/d.rs"), Some(8), "and again"),
                (Some(Block), Some("src/e.rs"), Some(9), "secret in the log"),
                (Some(Bug), Some("src/f.rs"), Some(10), "bold tag"),
                (Some(Bug), Some("src/g.rs"), Some(11), "bold tag and place"),
                (Some(Bug), Some("src/h.rs"), Some(12), "backticked place"),
                (Some(Should), Some("src/i.rs"), Some(13), "dashed title"),
                (Some(Nit), Some("src/j.rs"), Some(14), "dangling comma"),
            ]
        );
    }

    #[test]
    fn codex_titles_split_their_tag() {
        assert_eq!(title_tag("[P0] Boom"), Ok((Some(Severity::Block), "Boom")));
        assert_eq!(title_tag("[nit] Boom"), Ok((Some(Severity::Nit), "Boom")));
        assert_eq!(title_tag("Plain"), Ok((None, "Plain")));
        assert_eq!(title_tag("[2026] Plain"), Ok((None, "[2026] Plain")));
        let err = title_tag("[P9] Boom").expect_err("unknown");
        assert!(err.message.starts_with("unknown severity `P9`"), "{err}");
        assert!(title_tag("[P1]").is_err());
    }
}
