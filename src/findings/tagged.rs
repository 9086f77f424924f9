//! Tagged text: one finding per line, `[level] path:line: title`. Pure.
//!
//! - the tag is any severity level or alias, in brackets, at the start of the
//!   line (after optional indentation and a `-`/`*` bullet);
//! - `path:line:`, `path:line:col:` or `path:` may follow, where the path has
//!   no spaces and holds a `/` or a `.`;
//! - lines indented under a tagged line are its body;
//! - `[resolved] ID` lists an id the reviewer confirms fixed;
//! - other lines are ignored, and a word in brackets that is no level is an
//!   error (a typo must not hide a finding);
//! - with no tagged line, the text must say `[clean]` or `no findings` on a
//!   line of its own: a clean round must be proven.

use super::{Draft, Drafts, FindingsError, Format, Severity};

pub(crate) fn parse(text: &str) -> Result<Drafts, FindingsError> {
    let mut drafts = Drafts::default();
    let mut clean = false;
    // Index of the finding that indented lines continue.
    let mut open: Option<usize> = None;
    for (number, line) in text.lines().enumerate() {
        let number = number + 1;
        let indented = line.starts_with(' ') || line.starts_with('\t');
        let Some((tag, rest)) = split_tag(line) else {
            match open {
                Some(index) if indented && !line.trim().is_empty() => {
                    let draft = &mut drafts.findings[index];
                    let body = draft.body.get_or_insert_with(String::new);
                    if !body.is_empty() {
                        body.push('\n');
                    }
                    body.push_str(line.trim());
                }
                _ => {
                    open = None;
                    if is_clean_line(line) {
                        clean = true;
                    }
                }
            }
            continue;
        };
        open = None;
        let lower = tag.to_ascii_lowercase();
        match lower.as_str() {
            "clean" => clean = true,
            "resolved" => drafts.resolved.extend(
                rest.split(|ch: char| ch.is_whitespace() || ch == ',')
                    .filter(|id| !id.is_empty())
                    .map(str::to_string),
            ),
            _ => {
                let severity: Severity = tag.parse().map_err(|err| {
                    FindingsError::invalid(
                        Format::Tagged,
                        format!("line {number}"),
                        format!("{err}"),
                    )
                })?;
                let (file, line_no, title) = split_location(rest);
                if title.trim().is_empty() {
                    return Err(FindingsError::invalid(
                        Format::Tagged,
                        format!("line {number}"),
                        format!("`[{tag}]` has no title"),
                    ));
                }
                drafts.findings.push(Draft {
                    severity: Some(severity),
                    title: title.to_string(),
                    file: file.map(str::to_string),
                    line: line_no,
                    ..Draft::default()
                });
                open = Some(drafts.findings.len() - 1);
            }
        }
    }
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

/// The tag word and the rest of the line, when the line opens with
/// `[word]` (a letter, then letters or digits: `[x]` checkboxes and
/// `[2026-01-01]` stamps are not tags).
fn split_tag(line: &str) -> Option<(&str, &str)> {
    let trimmed = line.trim_start();
    let trimmed = trimmed
        .strip_prefix("- ")
        .or_else(|| trimmed.strip_prefix("* "))
        .unwrap_or(trimmed)
        .trim_start();
    let inner = trimmed.strip_prefix('[')?;
    let close = inner.find(']')?;
    let tag = &inner[..close];
    let mut chars = tag.chars();
    let first = chars.next()?;
    if !first.is_ascii_alphabetic() || tag.len() < 2 || !chars.all(|ch| ch.is_ascii_alphanumeric())
    {
        return None;
    }
    Some((tag, inner[close + 1..].trim()))
}

fn is_clean_line(line: &str) -> bool {
    let words = line
        .trim()
        .trim_end_matches(['.', '!'])
        .to_ascii_lowercase();
    words == "no findings" || words == "no findings found" || words == "[clean]"
}

/// `path:line[:col]: title`, `path: title` or just a title.
fn split_location(rest: &str) -> (Option<&str>, Option<u64>, &str) {
    let first_space = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let head = &rest[..first_space];
    let Some(head) = head.strip_suffix(':') else {
        return (None, None, rest);
    };
    let title = rest[first_space..].trim();
    let mut parts = head.splitn(3, ':');
    let path = parts.next().unwrap_or_default();
    let line = parts.next();
    let column = parts.next();
    let looks_like_path = !path.is_empty() && (path.contains('/') || path.contains('.'));
    if !looks_like_path {
        return (None, None, rest);
    }
    match (line, column) {
        (None, _) => (Some(path), None, title),
        (Some(line), column) => match line.parse::<u64>() {
            Ok(number) if column.is_none_or(|col| col.parse::<u64>().is_ok()) => {
                (Some(path), Some(number), title)
            }
            _ => (None, None, rest),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_split_from_titles() {
        let table = [
            (
                "src/a.rs:42: text here",
                (Some("src/a.rs"), Some(42), "text here"),
            ),
            ("src/a.rs:42:7: text", (Some("src/a.rs"), Some(42), "text")),
            ("README.md: typo", (Some("README.md"), None, "typo")),
            ("note: not a path", (None, None, "note: not a path")),
            ("plain title", (None, None, "plain title")),
            ("a.rs:x: odd", (None, None, "a.rs:x: odd")),
            ("http://x.y/z: odd", (None, None, "http://x.y/z: odd")),
        ];
        for (input, want) in table {
            assert_eq!(split_location(input), want, "{input}");
        }
    }

    #[test]
    fn tags_are_words_in_brackets() {
        assert_eq!(split_tag("[block] x"), Some(("block", "x")));
        assert_eq!(split_tag("  - [P1] x"), Some(("P1", "x")));
        assert_eq!(split_tag("[x] done"), None);
        assert_eq!(split_tag("[2026-01-01] log"), None);
        assert_eq!(split_tag("text [bug] later"), None);
    }

    #[test]
    fn unknown_tags_are_errors_with_the_line() {
        let err = parse("ok\n[urgent] src/a.rs:1: x\n").expect_err("an error");
        assert!(
            err.to_string()
                .starts_with("tagged text: line 2: unknown severity `urgent`; accepted: nit,"),
            "{err}"
        );
    }

    #[test]
    fn clean_must_be_said() {
        assert!(parse("looks fine to me\n").is_err());
        assert!(parse("[clean]\n").expect("parses").findings.is_empty());
        assert!(parse("No findings.\n").expect("parses").findings.is_empty());
    }

    #[test]
    fn indented_lines_are_the_body() {
        let drafts =
            parse("[bug] a.rs:3: boom\n  first\n\tsecond\nafter\n  not body\n").expect("parses");
        assert_eq!(drafts.findings.len(), 1);
        assert_eq!(drafts.findings[0].body.as_deref(), Some("first\nsecond"));
    }
}
