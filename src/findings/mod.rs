//! Findings: the model, identity and matching, one parser per format. Pure:
//! bytes and the repository root come in, findings come out; nothing here
//! touches the file system, processes or the clock.

pub mod checkstyle;
pub mod codequality;
pub mod codex;
pub mod detect;
mod foreign;
pub mod github;
pub mod identity;
pub mod junit;
pub mod native;
pub mod panel;
pub mod paths;
pub mod rdjson;
pub mod responses;
pub mod sarif;
pub mod severity;
pub mod tagged;

use std::collections::{HashMap, HashSet};
use std::fmt;

use crate::exit::Hinted;
use serde::{Deserialize, Serialize};

pub use identity::{Known, Matched, match_findings};
pub use severity::Severity;

/// Reviewer output formats. `Auto` asks [`parse`] to detect the format.
/// Also the `--format` of `record` and `parse`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Auto,
    Native,
    Tagged,
    Sarif,
    Junit,
    Codex,
    Checkstyle,
    /// reviewdog's rdjson and rdjsonl.
    Rdjson,
    /// GitLab Code Quality (CodeClimate issues).
    Codequality,
    /// GitHub pull-request review comments, reviews and review threads
    /// (`gh api`).
    Github,
}

impl Format {
    /// The name users see in messages.
    pub fn label(self) -> &'static str {
        match self {
            Format::Auto => "input",
            Format::Native => "native json",
            Format::Tagged => "tagged text",
            Format::Sarif => "sarif",
            Format::Junit => "junit xml",
            Format::Codex => "codex review",
            Format::Checkstyle => "checkstyle xml",
            Format::Rdjson => "rdjson",
            Format::Codequality => "codequality",
            Format::Github => "github",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// Where a finding's id came from; decides how it may be matched later.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IdSource {
    /// The reviewer gave the id.
    Explicit,
    /// Derived from the tool's SARIF `fingerprints`/`partialFingerprints`.
    Sarif,
    /// A test's class and name (JUnit).
    Test,
    /// Derived from the content fingerprint (file, rule, normalized title).
    Derived,
}

/// One finding, normalized: what every format becomes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub id: String,
    pub severity: Severity,
    pub title: String,
    pub file: Option<String>,
    pub line: Option<u64>,
    pub body: Option<String>,
    pub undoes: Option<String>,
    /// The rule or category (SARIF `ruleId`, native `rule`/`category`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Last line of the reported range, when the reviewer gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u64>,
    /// Content fingerprint: file, rule and normalized title (no line numbers).
    pub fingerprint: String,
    pub id_source: IdSource,
    /// The reported path leaves the repository: kept as text, never opened.
    #[serde(default, skip_serializing_if = "is_false")]
    pub path_escapes: bool,
    /// The panel reviewers that reported it, in the panel's order (SPEC
    /// §6.1); empty for a round of one reviewer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reported_by: Vec<String>,
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// One parsed reviewer output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Parsed {
    pub source_format: Format,
    pub findings: Vec<Finding>,
    pub resolved: Vec<String>,
}

/// Why a reviewer output could not be read. Every variant says where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FindingsError {
    #[error("input is empty: a clean round must be proven")]
    Empty,
    #[error("input is not utf-8: invalid byte at offset {offset}")]
    NotUtf8 { offset: usize },
    #[error(
        "input is not utf-8, nor the utf-16 its byte order mark says: invalid unit at byte offset {offset}"
    )]
    NotUtf16 { offset: usize },
    #[error("{format}: line {line} column {column}: {message}")]
    Syntax {
        format: Format,
        line: usize,
        column: usize,
        message: String,
        hint: Option<String>,
    },
    #[error("{format}: {at}: {message}")]
    Invalid {
        format: Format,
        at: String,
        message: String,
        hint: Option<String>,
    },
    #[error("{format}: {message}")]
    NotProven {
        format: Format,
        message: String,
        hint: String,
    },
    /// A test report that holds no test case: no test ran. Not clean,
    /// unless the contract says an empty report is (`empty_report`).
    #[error("junit xml: the report holds no test case: no test ran, which proves no clean round")]
    NoTestCase,
}

impl FindingsError {
    pub(crate) fn invalid(
        format: Format,
        at: impl Into<String>,
        message: impl Into<Hinted>,
    ) -> Self {
        let Hinted { message, hints } = message.into();
        FindingsError::Invalid {
            format,
            at: at.into(),
            message,
            hint: hints.into_iter().next(),
        }
    }

    /// What to do next, if there is an obvious step.
    pub fn hint(&self) -> Option<String> {
        match self {
            FindingsError::Empty => Some(
                "a clean review says `{\"findings\": []}` (native json) or `[clean]` (tagged text)"
                    .into(),
            ),
            FindingsError::NotProven { hint, .. } => Some(hint.clone()),
            FindingsError::NoTestCase => Some(
                "check that the test runner found the tests (pytest exits 5 when it \
                 collects none), then pass the report of a run that ran them; a loop \
                 whose suite may be empty says `empty_report = \"clean\"` in its `[reviewer]`"
                    .into(),
            ),
            FindingsError::Syntax { hint, .. } | FindingsError::Invalid { hint, .. } => {
                hint.clone()
            }
            FindingsError::NotUtf8 { .. } | FindingsError::NotUtf16 { .. } => None,
        }
    }

    /// A serde_json error with its position split out of the message.
    pub(crate) fn json(format: Format, err: &serde_json::Error) -> Self {
        let text = err.to_string();
        let suffix = format!(" at line {} column {}", err.line(), err.column());
        let message = text.strip_suffix(&suffix).unwrap_or(&text).to_string();
        FindingsError::Syntax {
            format,
            line: err.line(),
            column: err.column(),
            message,
            hint: None,
        }
    }
}

/// A finding as a parser read it, before paths, fingerprints and ids.
#[derive(Debug, Clone, Default)]
pub(crate) struct Draft {
    /// The id given; for a SARIF result (`id_source` `Sarif`), the digest
    /// of its fingerprints, made an id with its path by `finish`.
    pub id: Option<String>,
    pub id_source: Option<IdSource>,
    pub severity: Option<Severity>,
    pub title: String,
    pub file: Option<String>,
    pub line: Option<u64>,
    pub end_line: Option<u64>,
    pub body: Option<String>,
    pub undoes: Option<String>,
    pub rule: Option<String>,
}

/// What one parser hands back.
#[derive(Debug, Default)]
pub(crate) struct Drafts {
    pub findings: Vec<Draft>,
    pub resolved: Vec<String>,
}

/// A message as a finding says it: its first line the title (bounded),
/// the whole message the body when it says more.
pub(crate) fn titled(message: &str) -> (String, Option<String>) {
    let first = message.lines().next().unwrap_or(message);
    let title = bound(first, MAX_TITLE);
    let body = (title != message).then(|| message.to_string());
    (title, body)
}

/// Longest title kept; longer ones are cut (the whole text stays in `body`).
pub(crate) const MAX_TITLE: usize = 300;
/// Longest body kept (test output can be huge).
pub(crate) const MAX_BODY: usize = 8000;

/// The text of UTF-16 input, which starts with its byte order mark (what
/// Windows PowerShell 5 writes for `>`); `None` for any other input.
fn from_utf16(input: &[u8]) -> Option<Result<String, FindingsError>> {
    let (little, body) = match input {
        [0xFF, 0xFE, body @ ..] => (true, body),
        [0xFE, 0xFF, body @ ..] => (false, body),
        _ => return None,
    };
    let units = body.chunks(2).map(|pair| match (pair, little) {
        ([a, b], true) => Ok(u16::from_le_bytes([*a, *b])),
        ([a, b], false) => Ok(u16::from_be_bytes([*a, *b])),
        _ => Err(()),
    });
    let mut text = String::with_capacity(body.len() / 2);
    let mut offset = 2;
    for decoded in char::decode_utf16(units.map_while(Result::ok)) {
        match decoded {
            Ok(ch) => {
                text.push(ch);
                offset += 2 * ch.len_utf16();
            }
            Err(_) => return Some(Err(FindingsError::NotUtf16 { offset })),
        }
    }
    if body.len() % 2 == 1 {
        return Some(Err(FindingsError::NotUtf16 { offset }));
    }
    Some(Ok(text))
}

/// Reads one reviewer output. `repo_root` is the absolute repository root,
/// used only to make absolute paths repo-relative.
pub fn parse(input: &[u8], format: Format, repo_root: &str) -> Result<Parsed, FindingsError> {
    let decoded;
    let text = match from_utf16(input) {
        Some(text) => {
            decoded = text?;
            decoded.as_str()
        }
        None => std::str::from_utf8(input).map_err(|err| FindingsError::NotUtf8 {
            offset: err.valid_up_to(),
        })?,
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(FindingsError::Empty);
    }
    let detected = format == Format::Auto;
    let mut format = match format {
        Format::Auto => detect::detect(text),
        other => other,
    };
    // Prose around one fenced ```json block of findings (a chat model's
    // habit) is that block, read as native JSON, when the prose tags none.
    let fenced = match format {
        Format::Tagged if detected => fenced_findings(text)?,
        _ => None,
    };
    if fenced.is_some() {
        format = Format::Native;
    }
    let read = match (format, fenced) {
        (_, Some(drafts)) => Ok(drafts),
        (Format::Native | Format::Auto, None) => native::parse(text),
        (Format::Tagged, None) => tagged::parse(text),
        (Format::Sarif, None) => sarif::parse(text),
        (Format::Junit, None) => junit::parse(text),
        (Format::Codex, None) => codex::parse(text),
        (Format::Checkstyle, None) => checkstyle::parse(text),
        (Format::Rdjson, None) => rdjson::parse(text),
        (Format::Codequality, None) => codequality::parse(text),
        (Format::Github, None) => github::parse(text),
    };
    // A linter's own output that no parser reads is named, with the flag
    // that makes the tool write a format referee reads, in place of the
    // parser's refusal (looked at only then: a review that reads is never
    // parsed twice).
    let drafts = match read {
        Ok(drafts) => drafts,
        Err(err) => match foreign::own_format(text) {
            Some((tool, instead)) => {
                return Err(FindingsError::NotProven {
                    format,
                    message: format!("this is {tool}, which referee does not read"),
                    hint: instead.into(),
                });
            }
            None => return Err(err),
        },
    };
    let findings = finish(drafts.findings, format, repo_root)?;
    Ok(Parsed {
        source_format: format,
        findings,
        resolved: drafts.resolved,
    })
}

/// The findings of text that is prose around fenced ```json blocks: `None`
/// when no block holds a JSON object with `findings`; the one block's,
/// read as native JSON, when the prose around it tags no finding; an error
/// naming the blocks otherwise (two blocks, a block that does not read, or
/// tagged findings beside one): never one half of a review in silence.
fn fenced_findings(text: &str) -> Result<Option<Drafts>, FindingsError> {
    // Each fenced block: its first line, whether its language may be JSON,
    // its text. Lines outside every block are the prose.
    let mut blocks: Vec<(usize, String)> = Vec::new();
    let mut prose = String::new();
    let mut open: Option<(usize, bool, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let fence = line.trim_start().strip_prefix("```");
        match (&mut open, fence) {
            (None, Some(lang)) => {
                let json = matches!(lang.trim(), "json" | "JSON" | "");
                open = Some((i + 1, json, String::new()));
            }
            (Some(_), Some(rest)) if rest.trim().is_empty() => {
                if let Some((at, true, body)) = open.take() {
                    blocks.push((at, body));
                }
            }
            (Some((_, _, body)), _) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {
                prose.push_str(line);
                prose.push('\n');
            }
        }
    }
    let of_findings: Vec<&(usize, String)> = blocks
        .iter()
        .filter(|(_, body)| body.trim_start().starts_with('{') && body.contains("\"findings\""))
        .collect();
    let [(at, body)] = of_findings.as_slice() else {
        if of_findings.len() > 1 {
            let lines: Vec<String> = of_findings.iter().map(|(at, _)| at.to_string()).collect();
            return Err(FindingsError::NotProven {
                format: Format::Tagged,
                message: format!(
                    "{} fenced ```json blocks of findings (at lines {}): which one is the review is not said",
                    of_findings.len(),
                    lines.join(", ")
                ),
                hint: "give the reviewer's findings as one JSON document (`referee schema` prints its schema)".into(),
            });
        }
        return Ok(None);
    };
    let drafts = native::parse(body).map_err(|err| FindingsError::Invalid {
        format: Format::Native,
        at: format!("the ```json block at line {at}"),
        message: err.to_string(),
        hint: err.hint(),
    })?;
    if tagged::parse(&prose).is_ok_and(|tagged| !tagged.findings.is_empty()) {
        return Err(FindingsError::NotProven {
            format: Format::Tagged,
            message: format!(
                "a fenced ```json block of findings (at line {at}) and tagged findings around it: which is the review is not said"
            ),
            hint: "give the findings one way: the JSON block alone, or tagged lines alone".into(),
        });
    }
    Ok(Some(drafts))
}

/// Normalizes paths, computes fingerprints and ids, and keeps ids unique.
fn finish(
    drafts: Vec<Draft>,
    format: Format,
    repo_root: &str,
) -> Result<Vec<Finding>, FindingsError> {
    let mut findings = Vec::with_capacity(drafts.len());
    let mut seen: HashMap<String, usize> = HashMap::with_capacity(drafts.len());
    let mut repeated = HashSet::with_capacity(drafts.len());
    for (index, draft) in drafts.into_iter().enumerate() {
        let (file, path_escapes) = match draft.file.as_deref() {
            Some(raw) => match paths::normalize(raw, repo_root) {
                Some(norm) => (Some(norm.path), norm.escapes),
                None => (None, false),
            },
            None => (None, false),
        };
        // A test's id (and the title it leads) starts with its file as the
        // report wrote it: the same test run on another machine (absolute
        // paths) is the same test, so both take the path made
        // repo-relative.
        let mut draft = draft;
        if draft.id_source == Some(IdSource::Test)
            && let (Some(raw), Some(norm), Some(id)) =
                (draft.file.as_deref(), file.as_deref(), draft.id.as_deref())
            && raw != norm
            && id
                .strip_prefix(raw)
                .is_some_and(|rest| rest.starts_with("::"))
        {
            let relative = format!("{norm}{}", &id[raw.len()..]);
            if let Some(rest) = draft.title.strip_prefix(id) {
                draft.title = format!("{relative}{rest}");
            }
            draft.id = Some(relative);
        }
        let title = bound(draft.title.trim(), MAX_TITLE);
        if title.is_empty() {
            return Err(FindingsError::invalid(
                format,
                format!("finding {}", index + 1),
                "empty title",
            ));
        }
        let fingerprint =
            identity::content_fingerprint(file.as_deref(), draft.rule.as_deref(), &title);
        let severity = draft.severity.unwrap_or(Severity::Bug);
        let line = draft.line.filter(|line| *line > 0);
        let end_line = draft.end_line.filter(|line| *line > 0);
        let body = draft
            .body
            .map(|body| bound(body.trim(), MAX_BODY))
            .filter(|body| !body.is_empty());
        let undoes = draft.undoes.filter(|undoes| !undoes.trim().is_empty());
        let rule = draft.rule.filter(|rule| !rule.trim().is_empty());
        // A finding repeated word for word (a review printed twice) is one
        // finding (SPEC §4.1): the same id as given, place, title and body.
        // Kept as the digest of its words, not a copy of them (a 63,000-result
        // log would hold every title and body twice).
        let words = serde_json::to_vec(&(
            &draft.id, severity, &title, &file, line, end_line, &body, &undoes, &rule,
        ))
        .unwrap_or_default();
        let words: [u8; 32] = <sha2::Sha256 as sha2::Digest>::digest(&words).into();
        if !repeated.insert(words) {
            continue;
        }
        let (id, id_source) = match (draft.id, draft.id_source) {
            // A SARIF id is its fingerprints' digest until the path is known.
            (Some(prints), Some(IdSource::Sarif)) => (
                identity::sarif_id(&prints, file.as_deref()),
                IdSource::Sarif,
            ),
            (Some(id), source) => (id, source.unwrap_or(IdSource::Explicit)),
            (None, _) => (identity::derived_id(&fingerprint), IdSource::Derived),
        };
        let count = seen.entry(id.clone()).or_insert(0);
        *count += 1;
        let id = if *count == 1 {
            id
        } else if id_source == IdSource::Explicit {
            return Err(FindingsError::invalid(
                format,
                format!("finding {}", index + 1),
                format!("id `{id}` is used by an earlier finding; ids must be unique"),
            ));
        } else {
            // Two findings that look alike (same file, rule and title) but
            // say more or point elsewhere stay two findings: the later ones
            // get an occurrence suffix.
            format!("{id}-{count}")
        };
        findings.push(Finding {
            id,
            severity,
            title,
            file,
            line,
            end_line,
            body,
            undoes,
            rule,
            fingerprint,
            id_source,
            path_escapes,
            reported_by: Vec::new(),
        });
    }
    Ok(findings)
}

/// Refuses anything but a JSON object at the top level (serde would read a
/// struct from an array positionally, and `[[]]` must not pass for a clean
/// round).
pub(crate) fn require_object(text: &str, format: Format) -> Result<(), FindingsError> {
    let start = text.len() - text.trim_start().len();
    match text[start..].chars().next() {
        Some('{') | None => Ok(()),
        Some(other) => {
            let (line, column) = line_column(text, start);
            // Linters' own JSON (ruff, eslint) is an array of results: they
            // all print SARIF too, which referee reads.
            let linter = other == '['
                && ["\"filename\"", "\"filePath\"", "\"ruleId\"", "\"code\""]
                    .iter()
                    .any(|key| text.contains(key));
            let hint = linter.then(|| {
                "this looks like a linter's own JSON; ask it for SARIF instead \
                 (`ruff check --output-format sarif`, `eslint --format @microsoft/eslint-formatter-sarif`)"
                    .to_string()
            });
            Err(FindingsError::Syntax {
                format,
                line,
                column,
                message: format!("expected a json object `{{...}}`, found `{other}`"),
                hint,
            })
        }
    }
}

/// `text` cut to at most `max` characters, marked with `…` when cut.
pub(crate) fn bound(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// 1-based line and column of a byte offset in `text`.
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.as_bytes().get(..offset).unwrap_or_default();
    let line = before.iter().filter(|byte| **byte == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|byte| *byte == b'\n')
        .map_or(0, |pos| pos + 1);
    (line, offset - line_start + 1)
}

#[cfg(test)]
mod tests;
