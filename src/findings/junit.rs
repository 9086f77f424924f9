//! JUnit XML reports (pytest, cargo-nextest, jest-junit, Maven surefire):
//! each failing or erroring test case is a `bug` finding whose id is
//! `classname::name`. Pure.
//!
//! Nested `<testsuites>`/`<testsuite>` are walked; skipped and passing cases
//! are not findings, so an all-passing report is a clean round. The body is
//! the failure message and text, bounded. `file`/`line` come from the test
//! case's attributes (or its suite's `file`) as the tool wrote them.

use quick_xml::XmlVersion;
use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::{BytesStart, Event};
use quick_xml::reader::Reader;

use super::{
    Draft, Drafts, FindingsError, Format, IdSource, MAX_BODY, MAX_TITLE, Severity, bound,
    line_column,
};

/// Most failure text kept per test case while reading (the body is cut
/// again to `MAX_BODY`).
const MAX_TEXT: usize = 2 * MAX_BODY;

#[derive(Default)]
struct Case {
    classname: String,
    name: String,
    file: Option<String>,
    line: Option<u64>,
    failures: Vec<Failure>,
}

struct Failure {
    error: bool,
    message: Option<String>,
    text: String,
}

pub(crate) fn parse(text: &str) -> Result<Drafts, FindingsError> {
    let mut reader = Reader::from_str(text);
    let mut drafts = Drafts::default();
    let mut open: Vec<String> = Vec::new();
    let mut seen_root = false;
    let mut suite_files: Vec<Option<String>> = Vec::new();
    let mut case: Option<Case> = None;
    let mut in_failure = false;

    loop {
        let event_start = offset(reader.buffer_position());
        let event = reader
            .read_event()
            .map_err(|err| syntax_at(text, offset(reader.error_position()), &err))?;
        let position = || line_column(text, event_start);
        match event {
            Event::Start(ref start) | Event::Empty(ref start) => {
                let empty = matches!(event, Event::Empty(_));
                let name = local_name(start);
                if !seen_root {
                    if name != "testsuites" && name != "testsuite" {
                        let (line, column) = position();
                        return Err(FindingsError::Syntax {
                            format: Format::Junit,
                            line,
                            column,
                            message: format!(
                                "root element is `<{name}>`, expected `<testsuites>` or `<testsuite>`"
                            ),
                        });
                    }
                    seen_root = true;
                }
                let attrs = attributes(start, text, event_start)?;
                match name.as_str() {
                    "testsuite" | "testsuites" if !empty => {
                        let inherited = suite_files.last().cloned().flatten();
                        suite_files.push(attr(&attrs, "file").or(inherited));
                    }
                    "testcase" => {
                        let new_case = Case {
                            classname: attr(&attrs, "classname").unwrap_or_default(),
                            name: attr(&attrs, "name").unwrap_or_default(),
                            file: attr(&attrs, "file")
                                .or_else(|| suite_files.last().cloned().flatten()),
                            line: attr(&attrs, "line").and_then(|line| line.trim().parse().ok()),
                            failures: Vec::new(),
                        };
                        if empty {
                            finish_case(new_case, &mut drafts);
                        } else {
                            case = Some(new_case);
                        }
                    }
                    "failure" | "error" => {
                        if let Some(case) = case.as_mut() {
                            case.failures.push(Failure {
                                error: name == "error",
                                message: attr(&attrs, "message").or_else(|| attr(&attrs, "type")),
                                text: String::new(),
                            });
                            in_failure = !empty;
                        }
                    }
                    _ => {}
                }
                if !empty {
                    open.push(name);
                }
            }
            Event::End(ref end) => {
                let name = end.local_name().as_ref().to_string();
                open.pop();
                match name.as_str() {
                    "testsuite" | "testsuites" => {
                        suite_files.pop();
                    }
                    "testcase" => {
                        if let Some(done) = case.take() {
                            finish_case(done, &mut drafts);
                        }
                    }
                    "failure" | "error" => in_failure = false,
                    _ => {}
                }
            }
            Event::Text(ref content) if in_failure => {
                push_text(&mut case, &content.xml10_content());
            }
            Event::CData(ref content) if in_failure => {
                push_text(&mut case, &content.xml10_content());
            }
            Event::GeneralRef(ref reference) if in_failure => {
                let resolved = match reference.resolve_char_ref() {
                    Ok(Some(ch)) => ch.to_string(),
                    _ => resolve_predefined_entity(reference)
                        .unwrap_or_default()
                        .to_string(),
                };
                push_text(&mut case, &resolved);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !seen_root {
        return Err(FindingsError::NotProven {
            format: Format::Junit,
            message: "no `<testsuites>` or `<testsuite>` element".into(),
            hint: "pass the JUnit report the test runner wrote (e.g. pytest `--junitxml`)".into(),
        });
    }
    if let Some(name) = open.last() {
        let (line, column) = line_column(text, text.len());
        return Err(FindingsError::Syntax {
            format: Format::Junit,
            line,
            column,
            message: format!("unexpected end of input: `<{name}>` is not closed"),
        });
    }
    Ok(drafts)
}

fn offset(position: u64) -> usize {
    usize::try_from(position).unwrap_or(usize::MAX)
}

fn local_name(start: &BytesStart<'_>) -> String {
    start.local_name().as_ref().to_string()
}

fn attributes(
    start: &BytesStart<'_>,
    text: &str,
    event_start: usize,
) -> Result<Vec<(String, String)>, FindingsError> {
    let mut out = Vec::new();
    for attribute in start.attributes() {
        let attribute = attribute.map_err(|err| syntax_at(text, event_start, &err))?;
        let key = attribute.key.local_name().as_ref().to_string();
        let value = attribute
            .normalized_value(XmlVersion::Implicit1_0)
            .map_err(|err| {
                let (line, column) = line_column(text, event_start);
                FindingsError::Syntax {
                    format: Format::Junit,
                    line,
                    column,
                    message: format!("attribute `{key}`: {err}"),
                }
            })?
            .into_owned();
        out.push((key, value));
    }
    Ok(out)
}

fn attr(attrs: &[(String, String)], key: &str) -> Option<String> {
    attrs
        .iter()
        .find(|(name, _)| name == key)
        .map(|(_, value)| value.clone())
        .filter(|value| !value.trim().is_empty())
}

fn push_text(case: &mut Option<Case>, text: &str) {
    let Some(failure) = case.as_mut().and_then(|case| case.failures.last_mut()) else {
        return;
    };
    if failure.text.len() < MAX_TEXT {
        failure.text.push_str(text);
    }
}

fn finish_case(case: Case, drafts: &mut Drafts) {
    let Some(first) = case.failures.first() else {
        return;
    };
    let id = match (case.classname.trim(), case.name.trim()) {
        ("", name) => name.to_string(),
        (class, "") => class.to_string(),
        // jest-junit repeats the full name as the class by default.
        (class, name) if class == name => name.to_string(),
        (class, name) => format!("{class}::{name}"),
    };
    let id = if id.is_empty() {
        "unnamed test".to_string()
    } else {
        id
    };
    let verb = if first.error { "errored" } else { "failed" };
    let summary = first
        .message
        .as_deref()
        .map(str::trim)
        .filter(|message| !message.is_empty())
        .or_else(|| {
            first
                .text
                .lines()
                .map(str::trim)
                .find(|line| !line.is_empty())
        })
        .and_then(|message| message.lines().next());
    let title = match summary {
        Some(summary) => format!("{id} {verb}: {summary}"),
        None => format!("{id} {verb}"),
    };
    let mut body = String::new();
    for failure in &case.failures {
        for part in [failure.message.as_deref(), Some(failure.text.as_str())]
            .into_iter()
            .flatten()
        {
            let part = part.trim();
            if !part.is_empty() && !body.contains(part) {
                if !body.is_empty() {
                    body.push_str("\n\n");
                }
                body.push_str(part);
            }
        }
    }
    drafts.findings.push(Draft {
        id: Some(id),
        id_source: Some(IdSource::Test),
        severity: Some(Severity::Bug),
        title: bound(&title, MAX_TITLE),
        file: case.file,
        line: case.line,
        end_line: None,
        body: Some(bound(&body, MAX_BODY)),
        undoes: None,
        rule: None,
    });
}

/// A JUnit syntax error at byte `at` of `text`.
fn syntax_at(text: &str, at: usize, err: &dyn std::fmt::Display) -> FindingsError {
    let (line, column) = line_column(text, at);
    FindingsError::Syntax {
        format: Format::Junit,
        line,
        column,
        message: err.to_string(),
    }
}
