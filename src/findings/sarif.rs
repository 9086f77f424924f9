//! SARIF 2.1.0 logs: every run's results become findings. Pure.
//!
//! - severity: the result's `level`; else `none` when its `kind` is not
//!   `fail`; else the rule's `defaultConfiguration.level` (the rule found
//!   through `ruleIndex`/`rule.index`, in `tool.extensions` when
//!   `rule.toolComponent` points there, or by `ruleId`); else `warning`
//!   (the SARIF default). `error` → bug, `warning` → should,
//!   `note`/`none` → nit;
//! - the location is the first physical location (`uri`, or the run
//!   artifact it indexes, and `region.startLine`);
//! - identity comes from `fingerprints` (else `partialFingerprints`) when
//!   present, else from the content fingerprint.
//!
//! A result is left out only when the log says it is no problem (SPEC §4.1,
//! no silent drops), each by the SARIF 2.1.0 spec:
//!
//! - `kind` `pass`, `notApplicable` or `informational` (§3.27.9: no problem
//!   found, rule not applicable, purely informational); such a result with
//!   a `level` other than `none` contradicts itself and is an error;
//! - suppressed: a suppression whose `status` is `accepted` or absent
//!   (§3.27.23, §3.35.3); `underReview` and `rejected` keep the result;
//! - `baselineState: absent`: found in the baseline, gone now (§3.27.24).
//!
//! Everything else that cannot be read is an error naming where
//! (`runs[0].results[3].kind`): an unknown `kind`, `level` or suppression
//! `status`. A log proves a clean review only when it says it ran: `runs`
//! empty, a run without `results` (§3.14.23: the tool did not run) or an
//! invocation with `executionSuccessful: false` are errors.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::identity::sarif_id;
use super::{Draft, Drafts, FindingsError, Format, IdSource, MAX_TITLE, Severity, bound};

#[derive(Deserialize)]
struct Log {
    runs: Option<Vec<Run>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Run {
    #[serde(default)]
    tool: Option<Tool>,
    #[serde(default)]
    results: Option<Vec<SarifResult>>,
    #[serde(default)]
    artifacts: Option<Vec<Artifact>>,
    #[serde(default)]
    invocations: Option<Vec<Invocation>>,
}

#[derive(Deserialize, Default)]
struct Tool {
    #[serde(default)]
    driver: Option<Driver>,
    #[serde(default)]
    extensions: Option<Vec<Driver>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Invocation {
    #[serde(default)]
    execution_successful: Option<bool>,
}

#[derive(Deserialize, Default)]
struct Driver {
    #[serde(default)]
    rules: Option<Vec<Rule>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Rule {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    default_configuration: Option<Configuration>,
}

#[derive(Deserialize, Default)]
struct Configuration {
    #[serde(default)]
    level: Option<String>,
}

#[derive(Deserialize, Default)]
struct Artifact {
    #[serde(default)]
    location: Option<ArtifactLocation>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct SarifResult {
    #[serde(default)]
    rule_id: Option<String>,
    #[serde(default)]
    rule_index: Option<i64>,
    #[serde(default)]
    rule: Option<RuleReference>,
    #[serde(default)]
    level: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    message: Option<Message>,
    #[serde(default)]
    locations: Option<Vec<Location>>,
    #[serde(default)]
    fingerprints: Option<BTreeMap<String, Value>>,
    #[serde(default)]
    partial_fingerprints: Option<BTreeMap<String, Value>>,
    #[serde(default)]
    suppressions: Option<Vec<Suppression>>,
    #[serde(default)]
    baseline_state: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct RuleReference {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    index: Option<i64>,
    #[serde(default)]
    tool_component: Option<ComponentReference>,
}

#[derive(Deserialize, Default)]
struct ComponentReference {
    #[serde(default)]
    index: Option<i64>,
}

#[derive(Deserialize, Default)]
struct Message {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    markdown: Option<String>,
    #[serde(default)]
    id: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Location {
    #[serde(default)]
    physical_location: Option<PhysicalLocation>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    #[serde(default)]
    artifact_location: Option<ArtifactLocation>,
    #[serde(default)]
    region: Option<Region>,
}

#[derive(Deserialize, Default)]
struct ArtifactLocation {
    #[serde(default)]
    uri: Option<String>,
    #[serde(default)]
    index: Option<i64>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Region {
    #[serde(default)]
    start_line: Option<i64>,
    #[serde(default)]
    end_line: Option<i64>,
}

#[derive(Deserialize, Default)]
struct Suppression {
    #[serde(default)]
    status: Option<String>,
}

pub(crate) fn parse(text: &str) -> Result<Drafts, FindingsError> {
    super::require_object(text, Format::Sarif)?;
    let log: Log =
        serde_json::from_str(text).map_err(|err| FindingsError::json(Format::Sarif, &err))?;
    let Some(runs) = log.runs else {
        return Err(FindingsError::invalid(
            Format::Sarif,
            "top level",
            "missing key `runs`: not a sarif 2.1.0 log",
        ));
    };
    if runs.is_empty() {
        return Err(FindingsError::NotProven {
            format: Format::Sarif,
            message: "`runs` is empty: no tool ran".into(),
            hint: "pass the log the analysis tool wrote; a clean run has `\"results\": []`".into(),
        });
    }
    let mut drafts = Drafts::default();
    for (run_index, run) in runs.into_iter().enumerate() {
        let at_run = format!("runs[{run_index}]");
        for (index, invocation) in run.invocations.iter().flatten().enumerate() {
            if invocation.execution_successful == Some(false) {
                return Err(FindingsError::NotProven {
                    format: Format::Sarif,
                    message: format!(
                        "{at_run}.invocations[{index}]: `executionSuccessful` is false: the tool says it failed"
                    ),
                    hint: "rerun the tool; a failed analysis is never a clean round".into(),
                });
            }
        }
        let Some(results) = run.results else {
            return Err(FindingsError::NotProven {
                format: Format::Sarif,
                message: format!(
                    "{at_run}: no `results`: by sarif 2.1.0 the tool did not run or did not start its analysis"
                ),
                hint: "a run that found nothing says `\"results\": []`".into(),
            });
        };
        let tool = run.tool.unwrap_or_default();
        let rules = Rules {
            driver: tool
                .driver
                .and_then(|driver| driver.rules)
                .unwrap_or_default(),
            extensions: tool
                .extensions
                .unwrap_or_default()
                .into_iter()
                .map(|extension| extension.rules.unwrap_or_default())
                .collect(),
        };
        let artifacts = run.artifacts.unwrap_or_default();
        for (result_index, result) in results.into_iter().enumerate() {
            let at = format!("{at_run}.results[{result_index}]");
            if let Some(draft) = convert(result, &rules, &artifacts, &at)? {
                drafts.findings.push(draft);
            }
        }
    }
    Ok(drafts)
}

/// A run's rules: the driver's, and each extension's (`tool.extensions`).
struct Rules {
    driver: Vec<Rule>,
    extensions: Vec<Vec<Rule>>,
}

/// What a result's `kind` says about it.
fn kind_is_a_problem(kind: &str, at: &str) -> Result<bool, FindingsError> {
    match kind {
        "fail" | "open" | "review" => Ok(true),
        "pass" | "notApplicable" | "informational" => Ok(false),
        other => Err(FindingsError::invalid(
            Format::Sarif,
            format!("{at}.kind"),
            format!(
                "unknown kind `{other}`; accepted: fail, open, review, pass, notApplicable, informational"
            ),
        )),
    }
}

/// Whether a result's suppressions suppress it: one `accepted` (or with no
/// status) does; `underReview` and `rejected` do not.
fn is_suppressed(suppressions: &[Suppression], at: &str) -> Result<bool, FindingsError> {
    let mut suppressed = false;
    for (index, suppression) in suppressions.iter().enumerate() {
        match suppression.status.as_deref() {
            None | Some("accepted") => suppressed = true,
            Some("underReview" | "rejected") => {}
            Some(other) => {
                return Err(FindingsError::invalid(
                    Format::Sarif,
                    format!("{at}.suppressions[{index}].status"),
                    format!("unknown status `{other}`; accepted: accepted, underReview, rejected"),
                ));
            }
        }
    }
    Ok(suppressed)
}

fn convert(
    result: SarifResult,
    rules: &Rules,
    artifacts: &[Artifact],
    at: &str,
) -> Result<Option<Draft>, FindingsError> {
    let kind = result.kind.as_deref().unwrap_or("fail");
    if !kind_is_a_problem(kind, at)? {
        return match result.level.as_deref() {
            None | Some("none") => Ok(None),
            Some(level) => Err(FindingsError::invalid(
                Format::Sarif,
                format!("{at}.level"),
                format!(
                    "`{level}` with kind `{kind}`: a result that is no problem has no level\n\
                     hint: sarif 2.1.0 asks for `level: none` (or none at all) when `kind` is not `fail`"
                ),
            )),
        };
    }
    if result.baseline_state.as_deref() == Some("absent") {
        return Ok(None);
    }
    if is_suppressed(result.suppressions.as_deref().unwrap_or_default(), at)? {
        return Ok(None);
    }

    let rule_index = result
        .rule_index
        .or_else(|| result.rule.as_ref().and_then(|rule| rule.index));
    let component = result
        .rule
        .as_ref()
        .and_then(|rule| rule.tool_component.as_ref())
        .and_then(|component| component.index);
    let rules: &[Rule] = match component {
        Some(component) => usize::try_from(component)
            .ok()
            .and_then(|component| rules.extensions.get(component))
            .map(Vec::as_slice)
            .unwrap_or_default(),
        None => &rules.driver,
    };
    let stated_id = result
        .rule_id
        .clone()
        .or_else(|| result.rule.as_ref().and_then(|rule| rule.id.clone()));
    // An index that lands on another rule (a wrong component, a stale
    // index) must not lend that rule's level: the stated id wins.
    let rule_entry = rule_index
        .and_then(|index| usize::try_from(index).ok())
        .and_then(|index| rules.get(index))
        .filter(|rule| match (stated_id.as_deref(), rule.id.as_deref()) {
            (Some(stated), Some(id)) => {
                stated == id
                    || stated
                        .strip_prefix(id)
                        .is_some_and(|sub| sub.starts_with('/'))
            }
            _ => true,
        });
    let rule_id = stated_id.or_else(|| rule_entry.and_then(|rule| rule.id.clone()));
    let rule_entry = rule_entry.or_else(|| {
        let id = rule_id.as_deref()?;
        rules.iter().find(|rule| rule.id.as_deref() == Some(id))
    });

    let level = match result.level.as_deref() {
        Some(level) => level.to_string(),
        None if kind != "fail" => "none".to_string(),
        None => rule_entry
            .and_then(|rule| rule.default_configuration.as_ref())
            .and_then(|config| config.level.clone())
            .unwrap_or_else(|| "warning".to_string()),
    };
    let severity = match level.as_str() {
        "error" => Severity::Bug,
        "warning" => Severity::Should,
        "note" | "none" => Severity::Nit,
        other => {
            return Err(FindingsError::invalid(
                Format::Sarif,
                format!("{at}.level"),
                format!("unknown level `{other}`; accepted: error, warning, note, none"),
            ));
        }
    };

    let message = result.message.unwrap_or_default();
    let text = message
        .text
        .or(message.markdown)
        .or(message.id)
        .filter(|text| !text.trim().is_empty())
        .or_else(|| rule_id.clone())
        .ok_or_else(|| {
            FindingsError::invalid(
                Format::Sarif,
                format!("{at}.message"),
                "no message text and no rule id",
            )
        })?;
    let text = text.trim();
    let first_line = text.lines().next().unwrap_or(text);
    let title = bound(first_line, MAX_TITLE);
    let body = (title != text).then(|| text.to_string());

    let physical = result
        .locations
        .unwrap_or_default()
        .into_iter()
        .find_map(|location| location.physical_location);
    let (file, line, end_line) = match physical {
        Some(physical) => {
            let uri = physical.artifact_location.and_then(|artifact| {
                artifact.uri.or_else(|| {
                    let index = usize::try_from(artifact.index?).ok()?;
                    artifacts.get(index)?.location.as_ref()?.uri.clone()
                })
            });
            let region = physical.region.unwrap_or_default();
            let line = region.start_line.and_then(|line| u64::try_from(line).ok());
            let end = region.end_line.and_then(|line| u64::try_from(line).ok());
            (uri, line, end.filter(|end| Some(*end) != line))
        }
        None => (None, None, None),
    };

    let prints = result
        .fingerprints
        .filter(|map| !map.is_empty())
        .or(result.partial_fingerprints.filter(|map| !map.is_empty()));
    let (id, id_source) = match prints {
        Some(map) => {
            let pairs: Vec<(String, String)> = map
                .into_iter()
                .map(|(key, value)| {
                    let value = match value {
                        Value::String(text) => text,
                        other => other.to_string(),
                    };
                    (key, value)
                })
                .collect();
            (
                Some(sarif_id(rule_id.as_deref(), &pairs)),
                Some(IdSource::Sarif),
            )
        }
        None => (None, None),
    };

    Ok(Some(Draft {
        id,
        id_source,
        severity: Some(severity),
        title,
        file,
        line,
        end_line,
        body,
        undoes: None,
        rule: rule_id,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One run holding `results` (JSON text), with one driver rule `R1`
    /// (default level `error`) and one extension rule `X1` (`note`).
    fn log(results: &str) -> String {
        format!(
            r#"{{"version":"2.1.0","runs":[{{"tool":{{"driver":{{"name":"t","rules":[{{"id":"R1","defaultConfiguration":{{"level":"error"}}}}]}},
               "extensions":[{{"name":"pack","rules":[{{"id":"X0"}},{{"id":"X1","defaultConfiguration":{{"level":"note"}}}}]}}]}},
               "results":{results}}}]}}"#
        )
    }

    fn read(results: &str) -> Result<Vec<Option<Severity>>, String> {
        parse(&log(results))
            .map(|drafts| drafts.findings.iter().map(|d| d.severity).collect())
            .map_err(|err| err.to_string())
    }

    const M: &str = r#""message":{"text":"m"}"#;

    #[test]
    fn results_are_left_out_only_when_the_log_says_they_are_no_problem() {
        use Severity::*;
        let table: [(String, Vec<Option<Severity>>); 12] = [
            (format!(r#"[{{{M}}}]"#), vec![Some(Should)]),
            (format!(r#"[{{"ruleId":"R1",{M}}}]"#), vec![Some(Bug)]),
            (
                format!(r#"[{{"kind":"fail","level":"error",{M}}}]"#),
                vec![Some(Bug)],
            ),
            (format!(r#"[{{"kind":"open",{M}}}]"#), vec![Some(Nit)]),
            (format!(r#"[{{"kind":"review",{M}}}]"#), vec![Some(Nit)]),
            (format!(r#"[{{"kind":"pass",{M}}}]"#), vec![]),
            (
                format!(r#"[{{"kind":"notApplicable","level":"none",{M}}}]"#),
                vec![],
            ),
            (format!(r#"[{{"kind":"informational",{M}}}]"#), vec![]),
            (
                format!(r#"[{{"baselineState":"absent",{M}}},{{"baselineState":"new",{M}}}]"#),
                vec![Some(Should)],
            ),
            (
                format!(
                    r#"[{{"suppressions":[{{"status":"accepted"}}],{M}}},{{"suppressions":[{{"kind":"inSource"}}],{M}}},
                        {{"suppressions":[{{"status":"underReview"}}],{M}}},{{"suppressions":[{{"status":"rejected"}}],{M}}},
                        {{"suppressions":[],{M}}}]"#
                ),
                vec![Some(Should), Some(Should), Some(Should)],
            ),
            // The rule is looked up in the extension `rule.toolComponent` names.
            (
                format!(
                    r#"[{{"ruleId":"X1","rule":{{"id":"X1","index":1,"toolComponent":{{"index":0}}}},{M}}}]"#
                ),
                vec![Some(Nit)],
            ),
            // An index that lands on another rule lends it no level.
            (
                format!(r#"[{{"ruleId":"R9","ruleIndex":0,{M}}}]"#),
                vec![Some(Should)],
            ),
        ];
        for (results, want) in table {
            assert_eq!(read(&results), Ok(want), "{results}");
        }
    }

    #[test]
    fn what_cannot_be_read_is_an_error_naming_where() {
        let table = [
            (
                format!(r#"[{{{M}}},{{"kind":"failure",{M}}}]"#),
                "sarif: runs[0].results[1].kind: unknown kind `failure`; accepted: fail,",
            ),
            (
                format!(r#"[{{"kind":"pass","level":"error",{M}}}]"#),
                "sarif: runs[0].results[0].level: `error` with kind `pass`: a result that is no problem has no level\nhint:",
            ),
            (
                format!(
                    r#"[{{"suppressions":[{{"status":"rejected"}},{{"status":"Accepted"}}],{M}}}]"#
                ),
                "sarif: runs[0].results[0].suppressions[1].status: unknown status `Accepted`",
            ),
            (
                "null".to_string(),
                "sarif: runs[0]: no `results`: by sarif 2.1.0 the tool did not run",
            ),
        ];
        for (results, want) in table {
            let err = read(&results).expect_err(&results);
            assert!(err.starts_with(want), "{results}: {err}");
        }
        let table = [
            (r#"{"runs":[]}"#, "sarif: `runs` is empty: no tool ran"),
            (
                r#"{"runs":[{"tool":{"driver":{"name":"t"}}}]}"#,
                "sarif: runs[0]: no `results`",
            ),
            (
                r#"{"runs":[{"invocations":[{"executionSuccessful":true},{"executionSuccessful":false}],"results":[]}]}"#,
                "sarif: runs[0].invocations[1]: `executionSuccessful` is false: the tool says it failed\nhint:",
            ),
        ];
        for (text, want) in table {
            let err = parse(text).expect_err(text).to_string();
            assert!(err.starts_with(want), "{text}: {err}");
        }
        let clean =
            parse(r#"{"runs":[{"invocations":[{"executionSuccessful":true}],"results":[]}]}"#)
                .expect("a clean run");
        assert!(clean.findings.is_empty());
    }
}
