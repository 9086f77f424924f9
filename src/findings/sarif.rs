//! SARIF 2.1.0 logs: every run's results become findings. Pure.
//!
//! - severity: the result's `level`; else `none` when its `kind` is not
//!   `fail`; else the rule's `defaultConfiguration.level`; else `warning`
//!   (the SARIF default). `error` → bug, `warning` → should, `note`/`none` → nit;
//! - results of kind `pass` or `notApplicable`, suppressed results (a
//!   suppression not `rejected`) and `baselineState: absent` are skipped;
//! - the location is the first physical location (`uri`, or the run
//!   artifact it indexes, and `region.startLine`);
//! - identity comes from `fingerprints` (else `partialFingerprints`) when
//!   present, else from the content fingerprint.

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
}

#[derive(Deserialize, Default)]
struct Tool {
    #[serde(default)]
    driver: Option<Driver>,
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
struct RuleReference {
    #[serde(default)]
    id: Option<String>,
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
    let mut drafts = Drafts::default();
    for (run_index, run) in runs.into_iter().enumerate() {
        let rules = run
            .tool
            .and_then(|tool| tool.driver)
            .and_then(|driver| driver.rules)
            .unwrap_or_default();
        let artifacts = run.artifacts.unwrap_or_default();
        for (result_index, result) in run.results.unwrap_or_default().into_iter().enumerate() {
            let at = format!("runs[{run_index}].results[{result_index}]");
            if let Some(draft) = convert(result, &rules, &artifacts, &at)? {
                drafts.findings.push(draft);
            }
        }
    }
    Ok(drafts)
}

fn convert(
    result: SarifResult,
    rules: &[Rule],
    artifacts: &[Artifact],
    at: &str,
) -> Result<Option<Draft>, FindingsError> {
    let kind = result.kind.as_deref().unwrap_or("fail");
    if matches!(kind, "pass" | "notApplicable")
        || result.baseline_state.as_deref() == Some("absent")
    {
        return Ok(None);
    }
    let suppressed = result.suppressions.as_ref().is_some_and(|list| {
        list.iter()
            .any(|s| !matches!(s.status.as_deref(), Some("rejected") | Some("underReview")))
    });
    if suppressed {
        return Ok(None);
    }

    let rule_index = result
        .rule_index
        .or_else(|| result.rule.as_ref().and_then(|rule| rule.index));
    let rule_entry = rule_index
        .and_then(|index| usize::try_from(index).ok())
        .and_then(|index| rules.get(index));
    let rule_id = result
        .rule_id
        .clone()
        .or_else(|| result.rule.as_ref().and_then(|rule| rule.id.clone()))
        .or_else(|| rule_entry.and_then(|rule| rule.id.clone()));
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
