//! Linters' own outputs that referee does not read, told apart so that the
//! refusal names the tool and the flag that makes it write a format that is
//! read (SARIF, Checkstyle, rdjson, Code Quality, JUnit). Pure.

use serde_json::Value;

/// A tool's own format, when `text` is one: the tool, and what to run instead.
pub(crate) fn own_format(text: &str) -> Option<(&'static str, &'static str)> {
    let start = text.trim_start();
    if is_tap(start) {
        return Some((
            "TAP (Test Anything Protocol)",
            "have the test runner write JUnit XML instead (`node --test --test-reporter=junit`, `prove --formatter TAP::Formatter::JUnit`, `tap-junit`)",
        ));
    }
    let value: Value = serde_json::from_str(start).ok()?;
    if let Some(object) = value.as_object() {
        if object.contains_key("Issues") && object.contains_key("Report") {
            return Some((
                "golangci-lint's JSON",
                "run `golangci-lint run --output.sarif.path=stdout` (v2; v1: `--out-format sarif`), or Checkstyle with `--output.checkstyle.path=stdout`",
            ));
        }
        return None;
    }
    let first = value.as_array()?.first()?.as_object()?;
    let has = |key: &str| first.contains_key(key);
    if has("filePath") && has("messages") {
        return Some((
            "ESLint's JSON",
            "run `eslint -f @microsoft/eslint-formatter-sarif` (SARIF) or `eslint -f checkstyle` (the `eslint-formatter-checkstyle` package)",
        ));
    }
    if has("filename") && has("code") && has("location") {
        return Some((
            "ruff's JSON",
            "run `ruff check --output-format sarif` (or `rdjson`, or `gitlab`)",
        ));
    }
    if has("message-id") && has("symbol") {
        return Some((
            "pylint's JSON",
            "run `pylint --output-format=pylint_gitlab.GitlabCodeClimateReporter` (the `pylint-gitlab` package: GitLab Code Quality)",
        ));
    }
    None
}

/// TAP: a `TAP version` line, or a plan (`1..N`) with `ok`/`not ok` lines.
fn is_tap(text: &str) -> bool {
    let mut lines = text.lines().map(str::trim);
    let Some(first) = lines.next() else {
        return false;
    };
    if first.starts_with("TAP version ") {
        return true;
    }
    let plan = |l: &str| {
        l.strip_prefix("1..").is_some_and(|n| {
            n.split_whitespace()
                .next()
                .is_some_and(|n| n.parse::<u64>().is_ok())
        })
    };
    plan(first)
        && text
            .lines()
            .any(|l| l.starts_with("ok ") || l.starts_with("not ok "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tools_own_output_is_told_by_its_shape() {
        let table = [
            (
                r#"[{"filePath":"/r/a.js","messages":[{"ruleId":"semi"}],"errorCount":1}]"#,
                Some("ESLint's JSON"),
            ),
            (
                r#"[{"cell":null,"code":"F401","filename":"/r/a.py","location":{"row":1,"column":8},"message":"m"}]"#,
                Some("ruff's JSON"),
            ),
            (
                r#"[{"type":"convention","path":"a.py","symbol":"missing-module-docstring","message-id":"C0114","line":1}]"#,
                Some("pylint's JSON"),
            ),
            (
                r#"{"Issues":[{"FromLinter":"errcheck","Text":"t"}],"Report":{"Linters":[]}}"#,
                Some("golangci-lint's JSON"),
            ),
            (
                "TAP version 13\n1..2\nok 1 - a\nnot ok 2 - b\n",
                Some("TAP (Test Anything Protocol)"),
            ),
            (
                "1..1\nnot ok 1 - fails\n",
                Some("TAP (Test Anything Protocol)"),
            ),
            (r#"{"findings":[]}"#, None),
            (r#"[{"check_name":"F401","description":"d"}]"#, None),
            ("[bug] a.rs:1: x", None),
            ("1..3 is a range", None),
        ];
        for (text, want) in table {
            assert_eq!(own_format(text).map(|(tool, _)| tool), want, "{text}");
        }
    }
}
