//! JUnit XML reports (pytest, cargo-nextest, jest-junit, Maven surefire,
//! gotestsum): each test whose last run failed or errored is one `bug`
//! finding, and each test that failed and then passed on a rerun is one
//! `nit` finding saying it was flaky. The id is `classname::name`, after
//! the test's file when the class does not name it. Pure.
//!
//! Nested `<testsuites>`/`<testsuite>` are walked; skipped and passing cases
//! are not findings. Reruns are read as the tools write them: surefire's and
//! nextest's `<rerunFailure>`/`<rerunError>` (failed again) and
//! `<flakyFailure>`/`<flakyError>` (failed, then passed) inside the case, and
//! the same test written again (pytest-rerunfailures, gotestsum
//! `--rerun-fails`), where the last one written is how it ended. The body is
//! the failure message and text, bounded. `file`/`line` come from the test
//! case's attributes (or its suite's `file`, or a suite named by a path) as
//! the tool wrote them.
//!
//! Nothing is dropped without a word (SPEC §4.1): a `<failure>` or
//! `<error>` outside a `<testcase>`, a `<testcase>` inside another, a
//! `<testsuite>` whose `failures` + `errors` count more than the
//! `<failure>` and `<error>` elements it holds, and a report with no test
//! case at all (no test ran: no proof of a clean round) are errors.

use std::collections::HashMap;

use quick_xml::XmlVersion;
use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::{BytesStart, Event};
use quick_xml::reader::Reader;

use super::{
    Draft, Drafts, FindingsError, Format, IdSource, MAX_BODY, MAX_TITLE, Severity, bound,
    line_column,
};

/// Most failure text kept per failure while reading (the body is cut
/// again to `MAX_BODY`).
const MAX_TEXT: usize = 2 * MAX_BODY;

/// One run of a test: a `<testcase>` element.
struct Case {
    /// The `<testsuite>` it is in (its number in the report).
    suite: usize,
    id: String,
    file: Option<String>,
    line: Option<u64>,
    /// Its `<failure>`/`<error>` elements: how this run ended.
    failures: Vec<Failure>,
    /// Its `<rerun…>`/`<flaky…>` elements: runs that failed before it.
    retries: Vec<Failure>,
}

/// A test that failed at least once, over every run the report holds.
struct Test {
    id: String,
    file: Option<String>,
    line: Option<u64>,
    /// How its last run ended; empty when it passed.
    failures: Vec<Failure>,
    /// The runs that failed before the last.
    retries: Vec<Failure>,
}

/// The tests that failed at least once, in the order the report first
/// names them. A test is its id in one `<testsuite>`: the same id in
/// another suite (reports merged from several jobs) is another test.
#[derive(Default)]
struct Tests {
    tests: Vec<Test>,
    by_id: HashMap<(usize, String), usize>,
}

/// An open `<testsuite>`/`<testsuites>`.
struct Suite {
    /// Its number in the report.
    index: usize,
    /// `<testsuites>`: its totals are not checked (gotestsum's count a
    /// package's failure twice).
    root: bool,
    file: Option<String>,
    /// Its `name`: a case without a class is known by it (gotestsum's
    /// `TestMain` of each Go package).
    name: String,
    /// Its `failures` + `errors` attributes.
    declared: u64,
    /// `<failure>`/`<error>` elements found inside it so far.
    found: u64,
    /// Byte offset of its start tag.
    at: usize,
}

struct Failure {
    error: bool,
    message: Option<String>,
    /// The `type` attribute: the title's last resort.
    kind: Option<String>,
    text: String,
}

/// The failure element whose text is being read.
struct Reading {
    retry: bool,
    /// `open.len()` inside it: text deeper down (`<system-out>`) is not
    /// the failure's, except a `<stackTrace>`'s (surefire's flaky runs).
    depth: usize,
}

pub(crate) fn parse(text: &str) -> Result<Drafts, FindingsError> {
    let mut reader = Reader::from_str(text);
    let mut open: Vec<String> = Vec::new();
    let mut seen_root = false;
    let mut suites: Vec<Suite> = Vec::new();
    let mut case: Option<Case> = None;
    let mut cases = 0usize;
    let mut suite_count = 0usize;
    let mut tests = Tests::default();
    let mut reading: Option<Reading> = None;

    loop {
        let event_start = offset(reader.buffer_position());
        let event = reader
            .read_event()
            .map_err(|err| syntax_at(text, offset(reader.error_position()), &err))?;
        match event {
            Event::Start(ref start) | Event::Empty(ref start) => {
                let empty = matches!(event, Event::Empty(_));
                let name = local_name(start);
                if !seen_root {
                    if name != "testsuites" && name != "testsuite" {
                        return Err(syntax_at(
                            text,
                            event_start,
                            &format!(
                                "root element is `<{name}>`, expected `<testsuites>` or `<testsuite>`"
                            ),
                        ));
                    }
                    seen_root = true;
                }
                let attrs = attributes(start, text, event_start)?;
                match name.as_str() {
                    "testsuite" | "testsuites" => {
                        let title = attr(&attrs, "name").unwrap_or_default();
                        let named = Some(title.clone()).filter(|name| is_path(name));
                        let inherited = suites.last().and_then(|suite| suite.file.clone());
                        suite_count += 1;
                        let suite = Suite {
                            index: suite_count,
                            root: name == "testsuites",
                            file: attr(&attrs, "file").or(named).or(inherited),
                            name: title,
                            declared: count(&attrs, "failures") + count(&attrs, "errors"),
                            found: 0,
                            at: event_start,
                        };
                        if empty {
                            close_suite(suite, &mut suites, text)?;
                        } else {
                            suites.push(suite);
                        }
                    }
                    "testcase" => {
                        if case.is_some() {
                            return Err(syntax_at(
                                text,
                                event_start,
                                &"`<testcase>` inside another `<testcase>`",
                            ));
                        }
                        cases += 1;
                        let file = attr(&attrs, "file")
                            .or_else(|| suites.last().and_then(|suite| suite.file.clone()));
                        // No class: the suite's name stands for it.
                        let class = attr(&attrs, "classname")
                            .filter(|class| !class.trim().is_empty())
                            .or_else(|| suites.last().map(|suite| suite.name.clone()))
                            .unwrap_or_default();
                        let new_case = Case {
                            suite: suites.last().map_or(0, |suite| suite.index),
                            id: test_id(
                                &class,
                                &attr(&attrs, "name").unwrap_or_default(),
                                file.as_deref(),
                            ),
                            file,
                            line: attr(&attrs, "line").and_then(|line| line.trim().parse().ok()),
                            failures: Vec::new(),
                            retries: Vec::new(),
                        };
                        if empty {
                            tests.add(new_case);
                        } else {
                            case = Some(new_case);
                        }
                    }
                    "failure" | "error" | "rerunFailure" | "rerunError" | "flakyFailure"
                    | "flakyError" => {
                        let Some(case) = case.as_mut() else {
                            return Err(syntax_at(
                                text,
                                event_start,
                                &format!(
                                    "`<{name}>` outside a `<testcase>`: a failure that names no test"
                                ),
                            ));
                        };
                        let retry = !matches!(name.as_str(), "failure" | "error");
                        let failure = Failure {
                            error: name.ends_with("rror"),
                            message: attr(&attrs, "message"),
                            kind: attr(&attrs, "type"),
                            text: String::new(),
                        };
                        if retry {
                            case.retries.push(failure);
                        } else {
                            case.failures.push(failure);
                            if let Some(suite) = suites.last_mut() {
                                suite.found += 1;
                            }
                        }
                        if !empty {
                            reading = Some(Reading {
                                retry,
                                depth: open.len() + 1,
                            });
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
                if reading.as_ref().is_some_and(|r| r.depth == open.len()) {
                    reading = None;
                }
                open.pop();
                match name.as_str() {
                    "testsuite" | "testsuites" => {
                        if let Some(suite) = suites.pop() {
                            close_suite(suite, &mut suites, text)?;
                        }
                    }
                    "testcase" => {
                        if let Some(done) = case.take() {
                            tests.add(done);
                        }
                    }
                    _ => {}
                }
            }
            Event::Text(ref content) => {
                if let Some(failure) = reading_failure(&reading, &open, &mut case) {
                    push_text(failure, &content.xml10_content());
                }
            }
            Event::CData(ref content) => {
                if let Some(failure) = reading_failure(&reading, &open, &mut case) {
                    push_text(failure, &content.xml10_content());
                }
            }
            Event::GeneralRef(ref reference) => {
                if let Some(failure) = reading_failure(&reading, &open, &mut case) {
                    let resolved = match reference.resolve_char_ref() {
                        Ok(Some(ch)) => ch.to_string(),
                        _ => resolve_predefined_entity(reference)
                            .unwrap_or_default()
                            .to_string(),
                    };
                    push_text(failure, &resolved);
                }
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
        return Err(syntax_at(
            text,
            text.len(),
            &format!("unexpected end of input: `<{name}>` is not closed"),
        ));
    }
    if cases == 0 {
        return Err(FindingsError::NoTestCase);
    }
    Ok(Drafts {
        findings: tests.tests.into_iter().map(finding).collect(),
        resolved: Vec::new(),
    })
}

impl Tests {
    /// Adds one run of a test. A test written again in its suite is a
    /// rerun (gotestsum `--rerun-fails` writes the failed runs first,
    /// pytest-rerunfailures the last run last): this run is how it ends so
    /// far, and the one before becomes a failed attempt if it failed.
    fn add(&mut self, case: Case) {
        let key = (case.suite, case.id);
        if let Some(&index) = self.by_id.get(&key) {
            let test = &mut self.tests[index];
            let before = std::mem::replace(&mut test.failures, case.failures);
            test.retries.extend(before);
            test.retries.extend(case.retries);
            return;
        }
        if case.failures.is_empty() && case.retries.is_empty() {
            return;
        }
        self.tests.push(Test {
            id: key.1.clone(),
            file: case.file,
            line: case.line,
            failures: case.failures,
            retries: case.retries,
        });
        self.by_id.insert(key, self.tests.len() - 1);
    }
}

/// The failure whose text the current event is, if any.
fn reading_failure<'c>(
    reading: &Option<Reading>,
    open: &[String],
    case: &'c mut Option<Case>,
) -> Option<&'c mut Failure> {
    let reading = reading.as_ref()?;
    let inside =
        open.len() == reading.depth || open.last().is_some_and(|name| name == "stackTrace");
    if !inside {
        return None;
    }
    let case = case.as_mut()?;
    let failures = if reading.retry {
        &mut case.retries
    } else {
        &mut case.failures
    };
    failures.last_mut()
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
            .map_err(|err| syntax_at(text, event_start, &format!("attribute `{key}`: {err}")))?
            .into_owned();
        out.push((key, value));
    }
    Ok(out)
}

/// A count attribute (`failures`, `errors`); 0 when absent or unreadable.
fn count(attrs: &[(String, String)], key: &str) -> u64 {
    attr(attrs, key)
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or(0)
}

/// Checks a closed `<testsuite>`'s counts against the failures found in
/// it, and hands them to the suite around it. The line is worked out only
/// here, for the error: from byte 0 for every suite, it made a report of
/// many suites quadratic to read.
fn close_suite(suite: Suite, outer: &mut [Suite], text: &str) -> Result<(), FindingsError> {
    if !suite.root && suite.declared > suite.found {
        return Err(syntax_at(
            text,
            suite.at,
            &format!(
                "the suite counts {} failures and errors but holds {} `<failure>`/`<error>` elements",
                suite.declared, suite.found
            ),
        ));
    }
    if let Some(parent) = outer.last_mut() {
        parent.found += suite.found;
    }
    Ok(())
}

fn attr(attrs: &[(String, String)], key: &str) -> Option<String> {
    attrs
        .iter()
        .find(|(name, _)| name == key)
        .map(|(_, value)| value.clone())
        .filter(|value| !value.trim().is_empty())
}

/// Whether a suite's name is a test file's path (jest-junit's
/// `suiteNameTemplate: "{filepath}"`), not a class or a Go package.
fn is_path(name: &str) -> bool {
    const EXTENSIONS: &[&str] = &[
        "js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts", "py", "rb", "go", "rs", "java", "kt",
        "php", "cs", "swift", "ex", "exs",
    ];
    !name.contains(char::is_whitespace)
        && name
            .rsplit_once('.')
            .is_some_and(|(stem, ext)| !stem.is_empty() && EXTENSIONS.contains(&ext))
}

/// A test's id: `classname::name`, after its file when the class does not
/// already name it (jest-junit's classes are the test's title, so the same
/// title in two files is two tests).
fn test_id(class: &str, name: &str, file: Option<&str>) -> String {
    let test = match (class.trim(), name.trim()) {
        ("", name) => name.to_string(),
        (class, "") => class.to_string(),
        // jest-junit repeats the full name as the class by default.
        (class, name) if class == name => name.to_string(),
        (class, name) => format!("{class}::{name}"),
    };
    match file.map(str::trim).filter(|file| !file.is_empty()) {
        Some(file) if !class_names_file(class.trim(), file) => {
            if test.is_empty() {
                file.to_string()
            } else {
                format!("{file}::{test}")
            }
        }
        _ if test.is_empty() => "unnamed test".to_string(),
        _ => test,
    }
}

/// Whether a dotted class (`tests.test_app.TestLogin`) names the module
/// `file` is (`tests/test_app.py`), or is that path itself.
fn class_names_file(class: &str, file: &str) -> bool {
    if class.is_empty() {
        return false;
    }
    if class == file {
        return true;
    }
    let stem = file.rsplit_once('.').map_or(file, |(stem, _)| stem);
    let module = stem.replace(['/', '\\'], ".");
    let mut prefixes = class
        .match_indices('.')
        .map(|(at, _)| &class[..at])
        .chain([class]);
    prefixes.any(|prefix| module == prefix || module.ends_with(&format!(".{prefix}")))
}

fn push_text(failure: &mut Failure, text: &str) {
    if failure.text.len() < MAX_TEXT {
        failure.text.push_str(text);
    }
}

/// A `message` that says no more than that the test failed (gotestsum's
/// `Failed`, go-junit-report's `Build error` and `Runtime error`, the same
/// words on every case) is no summary.
fn says_something(message: &str) -> bool {
    let word = message.trim().trim_end_matches(['.', '!', ':']);
    [
        "failed",
        "failure",
        "error",
        "errored",
        "build error",
        "runtime error",
    ]
    .iter()
    .all(|plain| !word.eq_ignore_ascii_case(plain))
}

/// The first line of failure text that says what went wrong: not blank,
/// not a rule of `=` or `-` (the race detector's frame), and not `go
/// test`'s framing (`=== RUN   TestX`, `--- FAIL: TestX`). A Go test's own
/// error line (`    calc_test.go:11: got 3`) wins over output it printed
/// before it.
fn meaningful_line(text: &str) -> Option<&str> {
    const FRAMING: &[&str] = &["=== RUN", "=== PAUSE", "=== CONT", "=== NAME", "--- FAIL"];
    let mut lines = text.lines().map(str::trim).filter(|line| {
        line.chars().any(char::is_alphanumeric) && !FRAMING.iter().any(|f| line.starts_with(f))
    });
    let first = lines.clone().next();
    lines.find(|line| go_error_line(line)).or(first)
}

/// `name_test.go:11: message`, as `t.Error` prints it.
fn go_error_line(line: &str) -> bool {
    line.split_once(".go:").is_some_and(|(file, rest)| {
        !file.is_empty()
            && !file.contains(char::is_whitespace)
            && rest
                .split_once(": ")
                .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// One line saying why a failure failed: its message, else the first
/// meaningful line of its text, else its `type`.
fn summary(failure: &Failure) -> Option<&str> {
    failure
        .message
        .as_deref()
        .and_then(|message| message.lines().map(str::trim).find(|line| !line.is_empty()))
        .filter(|message| says_something(message))
        .or_else(|| meaningful_line(&failure.text))
        .or_else(|| failure.kind.as_deref().map(str::trim))
}

/// The messages and texts of `failures`, each once, in order (a message
/// that says nothing is left out).
fn texts(failures: &[Failure], body: &mut String) {
    for failure in failures {
        let message = failure.message.as_deref().filter(|m| says_something(m));
        for part in [message, Some(failure.text.as_str())].into_iter().flatten() {
            let part = part.trim();
            if !part.is_empty() && !body.contains(part) {
                if !body.is_empty() {
                    body.push_str("\n\n");
                }
                body.push_str(part);
            }
        }
    }
}

fn finding(test: Test) -> Draft {
    let runs = test.retries.len() + 1;
    let (severity, title, body) = match test.failures.first() {
        Some(first) => {
            let verb = if first.error { "errored" } else { "failed" };
            let title = match summary(first) {
                Some(summary) => format!("{} {verb}: {summary}", test.id),
                None => format!("{} {verb}", test.id),
            };
            let mut body = String::new();
            texts(&test.failures, &mut body);
            if !test.retries.is_empty() {
                body.push_str(&format!("\n\nIt {verb} on each of its {runs} runs."));
            }
            (Severity::Bug, title, body)
        }
        None => {
            let failed = test.retries.len();
            let times = if failed == 1 { "once" } else { "times" };
            let count = if failed == 1 {
                String::new()
            } else {
                format!("{failed} ")
            };
            let title = match test.retries.first().and_then(summary) {
                Some(summary) => format!(
                    "{} is flaky: failed {count}{times}, then passed on a rerun: {summary}",
                    test.id
                ),
                None => format!(
                    "{} is flaky: failed {count}{times}, then passed on a rerun",
                    test.id
                ),
            };
            let mut body = format!("Flaky: it failed {count}{times}, then passed on a rerun.");
            texts(&test.retries, &mut body);
            (Severity::Nit, title, body)
        }
    };
    // The line the failure text cites in the case's own file (pytest's
    // `test_app.py:11: AssertionError`) is where it failed; a `line`
    // attribute is where the test starts, and pytest writes it 0-based.
    let cited = test.file.as_deref().and_then(|file| {
        cited_lines(&body, file)
            .last()
            .map(|&(_, line)| u64::from(line))
    });
    Draft {
        id: Some(test.id),
        id_source: Some(IdSource::Test),
        severity: Some(severity),
        title: bound(&title, MAX_TITLE),
        file: test.file,
        line: cited.or(test.line),
        end_line: None,
        body: Some(bound(&body, MAX_BODY)),
        undoes: None,
        rule: None,
    }
}

/// A JUnit syntax error at byte `at` of `text`.
fn syntax_at(text: &str, at: usize, err: &dyn std::fmt::Display) -> FindingsError {
    let (line, column) = line_column(text, at);
    FindingsError::Syntax {
        format: Format::Junit,
        line,
        column,
        message: err.to_string(),
        hint: None,
    }
}

/// Where in the repository a test finding without a `file` was found, for
/// outputs that need a place (SARIF for code scanning): the test file that
/// the id's class names (`tests.test_auth::test_x` → `tests/test_auth.py`,
/// `com.acme.AuthTest::x` → `src/test/java/com/acme/AuthTest.java`, or a
/// class name that is itself a path), with the last line of that file the
/// failure text points at (`tests/test_auth.py:12:`, `AuthTest.java:42)`);
/// failing a class match, the first `path:line` in the text that names one
/// of `files`. `files` are the repository's paths; only one of them is
/// ever answered, so a hostile report cannot name a place outside.
pub fn locate(id: &str, body: &str, files: &[String]) -> Option<(String, Option<u32>)> {
    let class = id.split_once("::").map_or(id, |(class, _)| class).trim();
    let file = class_file(class, files);
    match file {
        Some(file) => {
            let line = cited_lines(body, file).last().map(|&(_, line)| line);
            Some((file.to_string(), line))
        }
        None => files
            .iter()
            .filter_map(|file| {
                let &(at, line) = cited_lines(body, file).first()?;
                Some((at, file, line))
            })
            .min_by_key(|&(at, _, _)| at)
            .map(|(_, file, line)| (file.clone(), Some(line))),
    }
}

/// The one file of `files` a test class names, if exactly one.
fn class_file<'f>(class: &str, files: &'f [String]) -> Option<&'f str> {
    if class.is_empty() || class.contains(char::is_whitespace) {
        return None;
    }
    if let Some(file) = files.iter().find(|f| f.as_str() == class) {
        return Some(file);
    }
    let parts: Vec<&str> = class.split('.').filter(|p| !p.is_empty()).collect();
    for k in (1..=parts.len()).rev() {
        let suffix = parts[..k].join("/");
        let mut found = files.iter().filter(|f| {
            let stem = f.rsplit_once('.').map_or(f.as_str(), |(stem, _)| stem);
            !stem.contains('.') && (stem == suffix || stem.ends_with(&format!("/{suffix}")))
        });
        match (found.next(), found.next()) {
            (Some(file), None) => return Some(file),
            (Some(_), Some(_)) => return None,
            _ => {}
        }
    }
    None
}

/// Line numbers `text` cites for `file` as `file:N` (or `name:N` after a
/// non-path character, as Java stack traces write it), with where each
/// citation starts, in order.
fn cited_lines(text: &str, file: &str) -> Vec<(usize, u32)> {
    let name = file.rsplit('/').next().unwrap_or(file);
    let mut lines = Vec::new();
    for (at, _) in text.match_indices(name) {
        let boundary = |before: &str| {
            before
                .chars()
                .next_back()
                .is_none_or(|c| !(c.is_alphanumeric() || "/._-\\".contains(c)))
        };
        let before = &text[..at];
        let dir = &file[..file.len() - name.len()];
        // The file's whole relative path, or an absolute path ending in it
        // (jest cites `/home/ci/app/src/cart/total.test.js:3:44`).
        let absolute = |before: &str| {
            let start = before
                .rfind(|c: char| !(c.is_alphanumeric() || "/._-\\".contains(c)))
                .map_or(0, |i| {
                    i + before[i..].chars().next().map_or(1, char::len_utf8)
                });
            let path = &before[start..];
            path.starts_with('/') && path.ends_with('/')
        };
        // Or, for a file written absolute (mocha-junit-reporter's suite
        // `file`), a relative path its tail is (`test/cart.test.js:13:11`).
        let tail = |before: &str| {
            let start = before
                .rfind(|c: char| !(c.is_alphanumeric() || "/._-\\".contains(c)))
                .map_or(0, |i| {
                    i + before[i..].chars().next().map_or(1, char::len_utf8)
                });
            let cited = &before[start..];
            file.starts_with('/')
                && !cited.is_empty()
                && !cited.starts_with('/')
                && dir
                    .strip_suffix(cited)
                    .is_some_and(|rest| rest.ends_with('/'))
        };
        let whole = before
            .strip_suffix(dir)
            .is_some_and(|before| (!dir.is_empty() && boundary(before)) || absolute(before));
        if !(whole || boundary(before) || tail(before)) {
            continue;
        }
        let Some(rest) = text[at + name.len()..].strip_prefix(':') else {
            continue;
        };
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if let Ok(line) = digits.parse::<u32>()
            && line >= 1
        {
            lines.push((at, line));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_citation_is_the_files_relative_path_or_an_absolute_one_ending_in_it() {
        let lines = |text: &str, file: &str| -> Vec<u32> {
            cited_lines(text, file)
                .into_iter()
                .map(|(_, l)| l)
                .collect()
        };
        let file = "src/cart/total.test.js";
        assert_eq!(
            lines("at toBe (/ci/app/src/cart/total.test.js:3:44)", file),
            [3]
        );
        assert_eq!(lines("src/cart/total.test.js:7: failed", file), [7]);
        assert_eq!(
            lines("at f (/ci/app/src/wallet/total.test.js:6:1)", file),
            Vec::<u32>::new()
        );
        assert_eq!(
            lines("at f (/ci/app/node_modules/x/total.test.js:6:1)", file),
            Vec::<u32>::new()
        );
        // A file at the top: its name after an absolute folder, not after a
        // relative one (another file of that name).
        assert_eq!(lines("at f (/ci/app/sum.test.js:5:3)", "sum.test.js"), [5]);
        assert_eq!(lines("lib/sum.test.js:5", "sum.test.js"), Vec::<u32>::new());
        assert_eq!(lines("sum.test.js:8: boom", "sum.test.js"), [8]);
        // A file written absolute (mocha-junit-reporter's suite `file`),
        // cited relative: a tail of its path, not another folder's file.
        let absolute = "/ci/app/test/cart.test.js";
        assert_eq!(
            lines("at Context (test/cart.test.js:13:11)", absolute),
            [13]
        );
        assert_eq!(lines("at f (app/test/cart.test.js:2:1)", absolute), [2]);
        assert_eq!(
            lines("at f (lib/cart.test.js:2:1)", absolute),
            Vec::<u32>::new()
        );
        assert_eq!(
            lines("at f (est/cart.test.js:2:1)", absolute),
            Vec::<u32>::new()
        );
    }

    fn ids(xml: &str) -> Result<Vec<String>, String> {
        parse(xml)
            .map(|drafts| drafts.findings.into_iter().filter_map(|d| d.id).collect())
            .map_err(|err| err.to_string())
    }

    /// Each finding's id, severity and title.
    fn findings(xml: &str) -> Vec<(String, Severity, String)> {
        parse(xml)
            .unwrap_or_else(|err| panic!("{xml}: {err}"))
            .findings
            .into_iter()
            .map(|d| {
                (
                    d.id.unwrap_or_default(),
                    d.severity.unwrap_or(Severity::Bug),
                    d.title,
                )
            })
            .collect()
    }

    #[test]
    fn only_failing_cases_are_findings() {
        let table: [(&str, &[&str]); 5] = [
            (
                r#"<testsuite failures="1" errors="1"><testcase classname="c" name="a"><failure/></testcase>
                   <testcase classname="c" name="b"><error message="boom"/></testcase>
                   <testcase classname="c" name="ok"/><testcase classname="c" name="s"><skipped/></testcase></testsuite>"#,
                &["c::a", "c::b"],
            ),
            // A root `<testsuites>` whose total disagrees (gotestsum counts a
            // package's failure in `failures` and in `errors`) is no refusal.
            (
                r#"<testsuites failures="1" errors="1"><testsuite failures="1"><testcase name="TestMain"><failure/></testcase></testsuite></testsuites>"#,
                &["TestMain"],
            ),
            // Counts add up through nested suites.
            (
                r#"<testsuites failures="2"><testsuite failures="1"><testcase name="a"><failure/></testcase></testsuite>
                   <testsuite failures="1"><testcase name="b"><failure/></testcase></testsuite></testsuites>"#,
                &["a", "b"],
            ),
            // A case failing twice (call and teardown) counts twice.
            (
                r#"<testsuite failures="1" errors="1"><testcase name="a"><failure/><error/></testcase></testsuite>"#,
                &["a"],
            ),
            (
                r#"<testsuite failures="0"><testcase name="ok"/></testsuite>"#,
                &[],
            ),
        ];
        for (xml, want) in table {
            assert_eq!(
                ids(xml),
                Ok(want.iter().map(|s| s.to_string()).collect()),
                "{xml}"
            );
        }
    }

    #[test]
    fn failures_that_cannot_be_placed_are_errors_naming_the_line() {
        let table = [
            (
                "<testsuite>\n<error message=\"setup failed\"/>\n</testsuite>",
                "junit xml: line 2 column 1: `<error>` outside a `<testcase>`",
            ),
            (
                "<testsuite>\n<testcase name=\"a\">\n  <testcase name=\"b\"><failure/></testcase>\n</testcase>\n</testsuite>",
                "junit xml: line 3 column 3: `<testcase>` inside another `<testcase>`",
            ),
            (
                "<testsuites>\n<testsuite name=\"s\" failures=\"2\">\n<testcase name=\"a\"><failure/></testcase>\n</testsuite>\n</testsuites>",
                "junit xml: line 2 column 1: the suite counts 2 failures and errors but holds 1 `<failure>`/`<error>` elements",
            ),
            (
                "<testsuite tests=\"3\" failures=\"3\"/>",
                "junit xml: line 1 column 1: the suite counts 3 failures and errors but holds 0",
            ),
            // The count is checked per suite, in a report of many.
            (
                "<testsuites>\n<testsuite><testcase name=\"a\"/></testsuite>\n  <testsuite failures=\"1\"><testcase name=\"b\"/></testsuite>\n</testsuites>",
                "junit xml: line 3 column 3: the suite counts 1 failures and errors but holds 0",
            ),
            (
                "<testsuite>\n<testcase name=\"a\">\n<rerunFailure/></testcase>\n<flakyError/></testsuite>",
                "junit xml: line 4 column 1: `<flakyError>` outside a `<testcase>`",
            ),
            // No test ran: not a clean round.
            (
                "<testsuites><testsuite name=\"pytest\" tests=\"0\"/></testsuites>",
                "junit xml: the report holds no test case",
            ),
            ("<testsuite/>", "junit xml: the report holds no test case"),
        ];
        for (xml, want) in table {
            let err = ids(xml).expect_err(xml);
            assert!(err.starts_with(want), "{xml}: {err}");
        }
    }
    #[test]
    fn a_test_without_a_file_is_located_by_its_class_and_the_text() {
        let files: Vec<String> = [
            "tests/test_auth.py",
            "src/auth.py",
            "src/test/java/com/acme/AuthTest.java",
            "web/src/a.test.ts",
        ]
        .map(String::from)
        .to_vec();
        let pytest = "def test_x():\n>       assert 1 == 2\nE       assert 1 == 2\n\ntests/test_auth.py:3: in test_x\n    helper()\ntests/test_auth.py:9: AssertionError";
        assert_eq!(
            locate("tests.test_auth::test_x", pytest, &files),
            Some(("tests/test_auth.py".into(), Some(9)))
        );
        // A class inside the module still finds the module.
        assert_eq!(
            locate("tests.test_auth.TestLogin::test_y", "", &files),
            Some(("tests/test_auth.py".into(), None))
        );
        let java = "java.lang.AssertionError\n\tat com.acme.AuthTest.expires(AuthTest.java:42)";
        assert_eq!(
            locate("com.acme.AuthTest::expires", java, &files),
            Some(("src/test/java/com/acme/AuthTest.java".into(), Some(42)))
        );
        assert_eq!(
            locate("web/src/a.test.ts::renders", "", &files),
            Some(("web/src/a.test.ts".into(), None))
        );
        // No class match: the first cited tracked file.
        assert_eq!(
            locate(
                "suite::case",
                "boom at src/auth.py:7 then tests/test_auth.py:1",
                &files
            ),
            Some(("src/auth.py".into(), Some(7)))
        );
        // Nothing to go on, or a path that is not the repository's: no place.
        assert_eq!(locate("suite::case", "/etc/passwd:1", &files), None);
        assert_eq!(locate("", "", &files), None);
        // `xsrc/auth.py:3` is not `src/auth.py`.
        assert_eq!(locate("suite::case", "xsrc/auth.py:3", &files), None);
    }

    #[test]
    fn a_title_says_why_the_test_failed() {
        let table = [
            // The message first.
            (
                r#"<failure message="boom" type="AssertionError">trace</failure>"#,
                "t failed: boom",
            ),
            // No message: the text's first line, not the type (nextest).
            (
                "<failure type=\"test failure\">\n\nthread 't' panicked at src/lib.rs:2:5:\nleft: 1</failure>",
                "t failed: thread 't' panicked at src/lib.rs:2:5:",
            ),
            // A message that only says it failed (gotestsum's `Failed`), and
            // `go test`'s framing lines, say nothing.
            (
                "<failure message=\"Failed\" type=\"\">=== RUN   t\n    a_test.go:9: want 2\n--- FAIL: t (0.00s)</failure>",
                "t failed: a_test.go:9: want 2",
            ),
            // The type only when nothing else is there.
            (r#"<error type="TimeoutError"/>"#, "t errored: TimeoutError"),
            (r#"<failure message="Failed"/>"#, "t failed"),
            // go-junit-report's fixed messages say nothing either.
            (
                "<error message=\"Build error\">failing_test.go:15: undefined: x</error>",
                "t errored: failing_test.go:15: undefined: x",
            ),
            (
                "<error message=\"Runtime error\">panic: boom\n\ngoroutine 1</error>",
                "t errored: panic: boom",
            ),
            // A rule of `=` is no line of text (the race detector's frame).
            (
                "<failure message=\"Failed\">==================\nWARNING: DATA RACE</failure>",
                "t failed: WARNING: DATA RACE",
            ),
            // The test's own error line wins over output it printed first.
            (
                "<failure message=\"Failed\">=== RUN   t\nmulti\nline\n    stdout_test.go:11: single-line error\n--- FAIL: t</failure>",
                "t failed: stdout_test.go:11: single-line error",
            ),
        ];
        for (failure, want) in table {
            let xml = format!("<testsuite><testcase name=\"t\">{failure}</testcase></testsuite>");
            assert_eq!(findings(&xml)[0].2, want, "{xml}");
        }
    }

    #[test]
    fn a_rerun_test_is_one_finding_and_flaky_when_it_passed() {
        let flaky = "c::t is flaky: failed once, then passed on a rerun: first";
        type Case<'a> = (&'a str, &'a [(&'a str, Severity, &'a str)]);
        let table: [Case; 6] = [
            // Surefire and nextest: failed again on every rerun.
            (
                r#"<testcase classname="c" name="t"><failure message="first"/><rerunFailure message="second"/><rerunError message="third"/></testcase>"#,
                &[("c::t", Severity::Bug, "c::t failed: first")],
            ),
            // Failed, then passed: flaky, below any floor but `nit`.
            (
                r#"<testcase classname="c" name="t"><flakyFailure message="first"/></testcase>"#,
                &[("c::t", Severity::Nit, flaky)],
            ),
            (
                r#"<testcase classname="c" name="t"><flakyError message="first"/><flakyFailure message="second"/></testcase>"#,
                &[(
                    "c::t",
                    Severity::Nit,
                    "c::t is flaky: failed 2 times, then passed on a rerun: first",
                )],
            ),
            // nextest's flaky-fail: flaky, but reported failing.
            (
                r#"<testcase classname="c" name="t"><failure message="last"/><flakyFailure message="first"/></testcase>"#,
                &[("c::t", Severity::Bug, "c::t failed: last")],
            ),
            // gotestsum `--rerun-fails`: the failed runs, then the pass, each
            // a `<testcase>` of the package's suite.
            (
                r#"<testcase classname="c" name="t"><failure message="first"/></testcase><testcase classname="c" name="t"><failure message="again"/></testcase><testcase classname="c" name="t"/>"#,
                &[(
                    "c::t",
                    Severity::Nit,
                    "c::t is flaky: failed 2 times, then passed on a rerun: first",
                )],
            ),
            (
                r#"<testcase classname="c" name="t"><failure message="first"/></testcase><testcase classname="c" name="t"><failure message="again"/></testcase>"#,
                &[("c::t", Severity::Bug, "c::t failed: again")],
            ),
        ];
        for (cases, want) in table {
            let xml = format!("<testsuite>{cases}</testsuite>");
            let want: Vec<(String, Severity, String)> = want
                .iter()
                .map(|(id, severity, title)| (id.to_string(), *severity, title.to_string()))
                .collect();
            assert_eq!(findings(&xml), want, "{xml}");
        }
        // The same test in two suites (reports merged from two jobs) is
        // not a rerun: each suite's failure stands.
        let merged = r#"<testsuites><testsuite><testcase name="t"><failure message="py3.9"/></testcase></testsuite><testsuite><testcase name="t"/></testsuite></testsuites>"#;
        assert_eq!(
            findings(merged),
            vec![(
                "t".to_string(),
                Severity::Bug,
                "t failed: py3.9".to_string()
            )]
        );
        // A rerun that holds no failure (pytest-rerunfailures writes a failed
        // run it reran as a bare case) proves none.
        let bare = r#"<testsuite><testcase name="t"/><testcase name="t"/></testsuite>"#;
        assert_eq!(findings(bare), vec![]);
    }

    #[test]
    fn a_test_is_named_with_its_file_unless_its_class_names_it() {
        let table = [
            // jest-junit `addFileAttribute`: the title alone names no file.
            (
                r#"<testsuite name="total"><testcase classname="total is zero" name="total is zero" file="src/cart/total.test.js">"#,
                "src/cart/total.test.js::total is zero",
            ),
            // jest-junit `suiteNameTemplate: "{filepath}"`.
            (
                r#"<testsuite name="src/cart/total.test.js"><testcase classname="total is zero" name="total is zero">"#,
                "src/cart/total.test.js::total is zero",
            ),
            // pytest xunit1: the module is the class.
            (
                r#"<testsuite name="pytest"><testcase classname="tests.test_app.TestMath" name="test_div" file="tests/test_app.py">"#,
                "tests.test_app.TestMath::test_div",
            ),
            // A Go package or a Java class is no file; a case without a
            // class is known by its suite (gotestsum's `TestMain` of each
            // package).
            (
                r#"<testsuite name="example.com/m/pkg"><testcase classname="" name="TestMain">"#,
                "example.com/m/pkg::TestMain",
            ),
            (
                r#"<testsuite name="com.acme.AuthTest"><testcase classname="com.acme.AuthTest" name="expires">"#,
                "com.acme.AuthTest::expires",
            ),
        ];
        for (open, want) in table {
            let xml = format!("{open}<failure message=\"x\"/></testcase></testsuite>");
            assert_eq!(ids(&xml), Ok(vec![want.to_string()]), "{xml}");
        }
    }
}
