//! Checkstyle XML reports, the output many linters write besides their own
//! (`shellcheck -f checkstyle`, `jshint --reporter=checkstyle`, ESLint's
//! `checkstyle` formatter, PHP_CodeSniffer, ktlint, detekt, hadolint) and
//! reviewdog's default input. Pure.
//!
//! ```xml
//! <checkstyle version="4.3">
//!   <file name="deploy.sh">
//!     <error line="3" column="8" severity="warning" message="Double quote to prevent globbing" source="ShellCheck.SC2086"/>
//!   </file>
//! </checkstyle>
//! ```
//!
//! Each `<error>` is a finding: its `file` the enclosing `<file name>`, its
//! `line` the `line` attribute, its rule the `source`, its title the first
//! line of `message` (the whole message as the body when longer). Severity:
//! `error` → bug, `warning` → should, `info` and `ignore` → nit. A report
//! whose `<file>`s hold no `<error>` is a clean round: the tool wrote every
//! file it checked and found nothing.
//!
//! Nothing is dropped without a word (SPEC §4.1): an `<error>` outside a
//! `<file>`, one without a `message`, an unknown `severity` and a `line`
//! that is no number are errors naming their line.

use quick_xml::XmlVersion;
use quick_xml::events::{BytesStart, Event};
use quick_xml::reader::Reader;

use super::{Draft, Drafts, FindingsError, Format, Severity, line_column};

pub(crate) fn parse(text: &str) -> Result<Drafts, FindingsError> {
    let mut reader = Reader::from_str(text);
    let mut drafts = Drafts::default();
    let mut seen_root = false;
    // The `<file>` the reader is in, by its `name`.
    let mut file: Option<Option<String>> = None;
    loop {
        let at = usize::try_from(reader.buffer_position()).unwrap_or(usize::MAX);
        let event = reader.read_event().map_err(|err| {
            let at = usize::try_from(reader.error_position()).unwrap_or(usize::MAX);
            refusal(text, at, err.to_string())
        })?;
        match event {
            Event::Start(ref start) | Event::Empty(ref start) => {
                let empty = matches!(event, Event::Empty(_));
                let name = start.local_name().as_ref().to_string();
                if !seen_root {
                    if name != "checkstyle" {
                        return Err(refusal(
                            text,
                            at,
                            format!("root element is `<{name}>`, expected `<checkstyle>`"),
                        ));
                    }
                    seen_root = true;
                    continue;
                }
                let attrs = attributes(start, text, at)?;
                match name.as_str() {
                    "file" if !empty => file = Some(attr(&attrs, "name")),
                    "file" => {}
                    "error" => {
                        let Some(in_file) = &file else {
                            return Err(refusal(text, at, "`<error>` outside a `<file>`".into()));
                        };
                        drafts
                            .findings
                            .push(finding(&attrs, in_file.clone(), text, at)?);
                    }
                    // Other elements (`<exception>`, a tool's own) carry no finding.
                    _ => {}
                }
            }
            Event::End(ref end) if end.local_name().as_ref() == "file" => file = None,
            Event::Eof => break,
            _ => {}
        }
    }
    if !seen_root {
        return Err(refusal(text, 0, "no `<checkstyle>` element".into()));
    }
    Ok(drafts)
}

/// The finding one `<error>` reports.
fn finding(
    attrs: &[(String, String)],
    file: Option<String>,
    text: &str,
    at: usize,
) -> Result<Draft, FindingsError> {
    let severity = match attr(attrs, "severity").as_deref().map(str::trim) {
        Some("error") => Severity::Bug,
        // A tool that writes no severity (jshint's reporter writes one
        // always; some do not) is read as a warning, as docs/findings.md says.
        Some("warning") | None => Severity::Should,
        Some("info" | "ignore") => Severity::Nit,
        Some(other) => {
            return Err(refusal(
                text,
                at,
                format!("`<error>` severity `{other}`; accepted: error, warning, info, ignore"),
            ));
        }
    };
    let line = match attr(attrs, "line") {
        None => None,
        Some(line) => Some(line.trim().parse::<u64>().map_err(|_| {
            refusal(
                text,
                at,
                format!("`<error>` line `{line}` is not a line number"),
            )
        })?),
    };
    let message = attr(attrs, "message")
        .map(|m| m.trim().to_string())
        .filter(|m| !m.is_empty())
        .ok_or_else(|| refusal(text, at, "`<error>` without a `message`".into()))?;
    let (title, body) = super::titled(&message);
    Ok(Draft {
        severity: Some(severity),
        title,
        file: file.filter(|f| !f.trim().is_empty()),
        line,
        body,
        rule: attr(attrs, "source").filter(|s| !s.trim().is_empty()),
        ..Draft::default()
    })
}

fn attributes(
    start: &BytesStart<'_>,
    text: &str,
    at: usize,
) -> Result<Vec<(String, String)>, FindingsError> {
    let mut out = Vec::new();
    for attribute in start.attributes() {
        let attribute = attribute.map_err(|err| refusal(text, at, err.to_string()))?;
        let key = attribute.key.local_name().as_ref().to_string();
        let value = attribute
            .normalized_value(XmlVersion::Implicit1_0)
            .map_err(|err| refusal(text, at, format!("attribute `{key}`: {err}")))?
            .into_owned();
        out.push((key, value));
    }
    Ok(out)
}

fn attr(attrs: &[(String, String)], key: &str) -> Option<String> {
    attrs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
}

/// A refusal at byte `at` of `text`, by its line and column.
fn refusal(text: &str, at: usize, message: String) -> FindingsError {
    let (line, column) = line_column(text, at.min(text.len()));
    FindingsError::Syntax {
        format: Format::Checkstyle,
        line,
        column,
        message,
        hint: None,
    }
}

/// Whether `text`, XML, has `<checkstyle>` as its root element.
pub(crate) fn is_checkstyle(text: &str) -> bool {
    let mut rest = text.trim_start();
    // The prolog, comments and a doctype come before the root.
    loop {
        if let Some(after) = rest.strip_prefix("<?") {
            rest = after.split_once("?>").map_or("", |(_, r)| r).trim_start();
        } else if let Some(after) = rest.strip_prefix("<!--") {
            rest = after.split_once("-->").map_or("", |(_, r)| r).trim_start();
        } else if let Some(after) = rest.strip_prefix("<!") {
            rest = after.split_once('>').map_or("", |(_, r)| r).trim_start();
        } else {
            break;
        }
    }
    rest.strip_prefix("<checkstyle")
        .is_some_and(|r| r.starts_with(|c: char| c == '>' || c == '/' || c.is_whitespace()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(xml: &str) -> Result<Vec<Draft>, String> {
        parse(xml)
            .map(|d| d.findings)
            .map_err(|err| err.to_string())
    }

    /// A finding's severity, title, file, line and rule.
    type Seen<'a> = (
        Option<Severity>,
        &'a str,
        Option<&'a str>,
        Option<u64>,
        Option<&'a str>,
    );

    #[test]
    fn each_error_is_a_finding_in_its_file() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<checkstyle version="4.3">
  <file name="deploy.sh">
    <error line="3" column="8" severity="warning" message="Double quote to prevent globbing and word splitting." source="ShellCheck.SC2086"/>
    <error line="9" severity="error" message="Couldn&apos;t parse this test expression.&#10;Fix any mentioned problems." source="ShellCheck.SC1073"/>
  </file>
  <file name="lib/util.js"></file>
  <file name="lib/app.js">
    <error line="1" severity="info" message="Missing &quot;use strict&quot; statement."/>
  </file>
</checkstyle>"#;
        let found = read(xml).unwrap();
        let seen: Vec<Seen> = found
            .iter()
            .map(|d| {
                (
                    d.severity,
                    d.title.as_str(),
                    d.file.as_deref(),
                    d.line,
                    d.rule.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                (
                    Some(Severity::Should),
                    "Double quote to prevent globbing and word splitting.",
                    Some("deploy.sh"),
                    Some(3),
                    Some("ShellCheck.SC2086")
                ),
                (
                    Some(Severity::Bug),
                    "Couldn't parse this test expression.",
                    Some("deploy.sh"),
                    Some(9),
                    Some("ShellCheck.SC1073")
                ),
                (
                    Some(Severity::Nit),
                    "Missing \"use strict\" statement.",
                    Some("lib/app.js"),
                    Some(1),
                    None
                ),
            ]
        );
        assert_eq!(
            found[1].body.as_deref(),
            Some("Couldn't parse this test expression.\nFix any mentioned problems.")
        );
        assert_eq!(found[0].body, None);
    }

    #[test]
    fn a_report_of_checked_files_without_errors_is_clean() {
        assert!(
            read("<checkstyle version=\"8.0\"><file name=\"a.java\"/></checkstyle>")
                .unwrap()
                .is_empty()
        );
        assert!(read("<checkstyle/>").unwrap().is_empty());
    }

    #[test]
    fn what_cannot_be_read_is_refused_by_its_line() {
        for (xml, want) in [
            (
                "<checkstyle>\n<error line=\"1\" message=\"m\"/></checkstyle>",
                "checkstyle xml: line 2 column 1: `<error>` outside a `<file>`",
            ),
            (
                "<checkstyle><file name=\"a\">\n  <error line=\"1\"/></file></checkstyle>",
                "checkstyle xml: line 2 column 3: `<error>` without a `message`",
            ),
            (
                "<checkstyle><file name=\"a\"><error severity=\"fatal\" message=\"m\"/></file></checkstyle>",
                "checkstyle xml: line 1 column 28: `<error>` severity `fatal`; accepted: error, warning, info, ignore",
            ),
            (
                "<checkstyle><file name=\"a\"><error line=\"x\" message=\"m\"/></file></checkstyle>",
                "checkstyle xml: line 1 column 28: `<error>` line `x` is not a line number",
            ),
            (
                "<testsuites/>",
                "checkstyle xml: line 1 column 1: root element is `<testsuites>`, expected `<checkstyle>`",
            ),
            (
                "",
                "checkstyle xml: line 1 column 1: no `<checkstyle>` element",
            ),
        ] {
            assert_eq!(read(xml).unwrap_err(), want, "{xml}");
        }
        assert!(read("<checkstyle><file name=\"a\"><error").is_err());
    }

    #[test]
    fn a_checkstyle_root_is_told_from_other_xml() {
        assert!(is_checkstyle(
            "<?xml version=\"1.0\"?>\n<!-- by shellcheck -->\n<checkstyle version='4.3'>"
        ));
        assert!(is_checkstyle("<checkstyle/>"));
        assert!(!is_checkstyle("<checkstyles>"));
        assert!(!is_checkstyle("<?xml version=\"1.0\"?><testsuites>"));
    }
}
