//! GitLab Code Quality reports (the CodeClimate issue format GitLab reads:
//! `ruff check --output-format gitlab`, Biome's `--reporter=gitlab`,
//! `eslint-formatter-gitlab`, `pylint-gitlab`): a JSON array of issues.
//! Pure.
//!
//! Each issue is a finding: `location.path` and `location.lines.begin`
//! (or `location.positions.begin.line`) place it, `check_name` is its rule,
//! the first line of `description` its title. `severity` maps `info` →
//! nit, `minor` → should, `major` → bug, `critical` and `blocker` → block;
//! none given is `minor`. `[]` is a clean round. An issue without a
//! `description`, or with an unknown severity, is an error naming it
//! (`[3].severity`). Only `--format codequality` reads `[]`: detection
//! needs an issue to tell the format by.

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

use super::{Draft, Drafts, FindingsError, Format, Severity};

pub(crate) fn parse(text: &str) -> Result<Drafts, FindingsError> {
    let doc: Value =
        serde_json::from_str(text).map_err(|err| FindingsError::json(Format::Codequality, &err))?;
    let Some(issues) = doc.as_array() else {
        return Err(FindingsError::invalid(
            Format::Codequality,
            "top level",
            "not a JSON array of issues",
        ));
    };
    let mut drafts = Drafts::default();
    for (index, issue) in issues.iter().enumerate() {
        drafts.findings.push(finding(issue, &format!("[{index}]"))?);
    }
    Ok(drafts)
}

/// Whether `text` is a Code Quality report: an array whose first item has
/// `check_name`, or a `description` and a `location` with a `path`. Read
/// without keeping any value: only the first item's keys are looked at.
pub(crate) fn looks_like(text: &str) -> bool {
    #[derive(Deserialize)]
    struct Location {
        #[serde(default)]
        path: Option<IgnoredAny>,
    }
    #[derive(Deserialize)]
    struct Issue {
        #[serde(default)]
        check_name: Option<IgnoredAny>,
        #[serde(default)]
        description: Option<IgnoredAny>,
        #[serde(default)]
        location: Option<Location>,
    }
    /// The first item of an array, the rest skipped.
    struct First(Option<Issue>);
    impl<'de> Deserialize<'de> for First {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<First, D::Error> {
            struct Visit;
            impl<'de> serde::de::Visitor<'de> for Visit {
                type Value = First;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("an array")
                }
                fn visit_seq<A: serde::de::SeqAccess<'de>>(
                    self,
                    mut seq: A,
                ) -> Result<First, A::Error> {
                    let first = seq.next_element::<Issue>()?;
                    while seq.next_element::<IgnoredAny>()?.is_some() {}
                    Ok(First(first))
                }
            }
            d.deserialize_seq(Visit)
        }
    }
    serde_json::from_str::<First>(text.trim_start()).is_ok_and(|first| {
        first.0.is_some_and(|issue| {
            issue.check_name.is_some()
                || (issue.description.is_some() && issue.location.is_some_and(|l| l.path.is_some()))
        })
    })
}

fn finding(issue: &Value, at: &str) -> Result<Draft, FindingsError> {
    let Some(object) = issue.as_object() else {
        return Err(FindingsError::invalid(
            Format::Codequality,
            at,
            "not a JSON object",
        ));
    };
    let description = object
        .get("description")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .ok_or_else(|| FindingsError::invalid(Format::Codequality, at, "no `description`"))?;
    let severity = match object.get("severity") {
        None | Some(Value::Null) => Severity::Should,
        Some(Value::String(word)) => match word.as_str() {
            "info" => Severity::Nit,
            "minor" => Severity::Should,
            "major" => Severity::Bug,
            "critical" | "blocker" => Severity::Block,
            other => {
                return Err(FindingsError::invalid(
                    Format::Codequality,
                    format!("{at}.severity"),
                    format!(
                        "unknown severity `{other}`; accepted: info, minor, major, critical, blocker"
                    ),
                ));
            }
        },
        Some(other) => {
            return Err(FindingsError::invalid(
                Format::Codequality,
                format!("{at}.severity"),
                format!("must be a string, not {other}"),
            ));
        }
    };
    let location = object.get("location");
    let file = location
        .and_then(|l| l.get("path"))
        .and_then(Value::as_str)
        .filter(|p| !p.trim().is_empty())
        .map(str::to_string);
    let begin = |key: &str| {
        location.and_then(|l| {
            l.pointer(&format!("/lines/{key}"))
                .or_else(|| l.pointer(&format!("/positions/{key}/line")))
                .and_then(Value::as_u64)
        })
    };
    let line = begin("begin");
    let end_line = begin("end").filter(|end| Some(*end) != line);
    let rule = object
        .get("check_name")
        .and_then(Value::as_str)
        .filter(|c| !c.trim().is_empty())
        .map(str::to_string);
    let (title, body) = super::titled(description);
    Ok(Draft {
        severity: Some(severity),
        title,
        file,
        line,
        end_line,
        body,
        rule,
        ..Draft::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Vec<Draft>, String> {
        parse(text).map(|d| d.findings).map_err(|e| e.to_string())
    }

    #[test]
    fn each_issue_is_a_finding_placed_by_lines_or_positions() {
        let report = r#"[
          {"check_name":"F401","description":"F401: `os` imported but unused","severity":"major","fingerprint":"7ba7",
           "location":{"path":"app.py","positions":{"begin":{"line":1,"column":8},"end":{"line":1,"column":10}}}},
          {"type":"issue","check_name":"no-eval","description":"eval can be harmful.","severity":"critical",
           "location":{"path":"lib/a.js","lines":{"begin":3,"end":5}}},
          {"description":"style","severity":"info","location":{"path":"b.py"}},
          {"description":"no severity","location":{"path":"c.py","lines":{"begin":2}}}
        ]"#;
        let found = read(report).unwrap();
        type Placed<'a> = (Option<Severity>, Option<&'a str>, Option<u64>, Option<u64>);
        let seen: Vec<Placed> = found
            .iter()
            .map(|d| (d.severity, d.file.as_deref(), d.line, d.end_line))
            .collect();
        assert_eq!(
            seen,
            [
                (Some(Severity::Bug), Some("app.py"), Some(1), None),
                (Some(Severity::Block), Some("lib/a.js"), Some(3), Some(5)),
                (Some(Severity::Nit), Some("b.py"), None, None),
                (Some(Severity::Should), Some("c.py"), Some(2), None),
            ]
        );
        assert_eq!(found[0].rule.as_deref(), Some("F401"));
        assert_eq!(found[0].title, "F401: `os` imported but unused");
        assert!(looks_like(report));
        assert!(!looks_like("[]"));
        assert!(!looks_like(r#"[{"severity":"bug","title":"t"}]"#));
    }

    #[test]
    fn an_empty_report_is_clean_and_what_is_unreadable_is_named() {
        assert!(read("[]").unwrap().is_empty());
        for (text, want) in [
            (
                r#"[{"severity":"minor"}]"#,
                "codequality: [0]: no `description`",
            ),
            (
                r#"[{"description":"d","severity":"high"}]"#,
                "codequality: [0].severity: unknown severity `high`; accepted: info, minor, major, critical, blocker",
            ),
            (
                r#"{"issues":[]}"#,
                "codequality: top level: not a JSON array of issues",
            ),
        ] {
            assert_eq!(read(text).unwrap_err(), want, "{text}");
        }
    }
}
