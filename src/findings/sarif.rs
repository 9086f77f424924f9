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

use serde::Deserialize;
use serde_json::Value;

use super::identity::sarif_id;
use super::{Draft, Drafts, FindingsError, Format, IdSource, MAX_TITLE, Severity, bound};

/// A string from the log, borrowed from its text unless it had escapes:
/// a large log's messages and paths are not copied to be read.
#[derive(Deserialize, Default, Clone)]
struct Str<'a>(#[serde(borrow)] std::borrow::Cow<'a, str>);

impl std::ops::Deref for Str<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

#[derive(Deserialize)]
struct Log<'a> {
    #[serde(borrow)]
    runs: Option<Vec<Run<'a>>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Run<'a> {
    #[serde(default)]
    tool: Option<Tool>,
    #[serde(default)]
    #[serde(borrow)]
    results: Option<Chunks<SarifResult<'a>>>,
    #[serde(default)]
    #[serde(borrow)]
    artifacts: Option<Vec<Artifact<'a>>>,
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
struct Artifact<'a> {
    #[serde(default)]
    #[serde(borrow)]
    location: Option<ArtifactLocation<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct SarifResult<'a> {
    #[serde(default)]
    #[serde(borrow)]
    rule_id: Option<Str<'a>>,
    #[serde(default)]
    rule_index: Option<i64>,
    #[serde(default)]
    rule: Option<RuleReference>,
    #[serde(default)]
    #[serde(borrow)]
    level: Option<Str<'a>>,
    #[serde(default)]
    #[serde(borrow)]
    kind: Option<Str<'a>>,
    #[serde(default)]
    #[serde(borrow)]
    message: Option<Message<'a>>,
    /// The first location that has a physical location: the only one read.
    #[serde(default, rename = "locations", borrow)]
    physical: FirstPhysical<'a>,
    #[serde(default)]
    fingerprints: Option<Prints>,
    #[serde(default)]
    partial_fingerprints: Option<Prints>,
    #[serde(default)]
    #[serde(borrow)]
    suppressions: Option<Vec<Suppression<'a>>>,
    #[serde(default)]
    #[serde(borrow)]
    baseline_state: Option<Str<'a>>,
}

/// A fingerprint map as (key, text) pairs in key order, a repeated key
/// keeping its last value (as a map would): a map per result cost a tree
/// node of about a kilobyte, most of a large log's memory.
#[derive(Default)]
struct Prints(Vec<(String, String)>);

impl<'de> Deserialize<'de> for Prints {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Prints, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Prints;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Prints, A::Error> {
                let mut pairs: Vec<(String, String)> = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, Value>()? {
                    let value = match value {
                        Value::String(text) => text,
                        other => other.to_string(),
                    };
                    pairs.push((key, value));
                }
                // Stable: of equal keys the last stays last, then wins.
                pairs.sort_by(|a, b| a.0.cmp(&b.0));
                let mut kept: Vec<(String, String)> = Vec::with_capacity(pairs.len());
                for pair in pairs {
                    match kept.last_mut() {
                        Some(last) if last.0 == pair.0 => *last = pair,
                        _ => kept.push(pair),
                    }
                }
                Ok(Prints(kept))
            }
        }
        deserializer.deserialize_map(Visit)
    }
}

/// A JSON list read into chunks of at most [`Chunks::SIZE`] items: a log of
/// 50,000 results never grows (and copies) one large array to hold them.
struct Chunks<T>(Vec<Vec<T>>);

impl<T> Chunks<T> {
    const SIZE: usize = 1024;

    fn len(&self) -> usize {
        self.0.iter().map(Vec::len).sum()
    }

    fn into_iter(self) -> impl Iterator<Item = T> {
        self.0.into_iter().flatten()
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Chunks<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Chunks<T>, D::Error> {
        struct Visit<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Visit<T> {
            type Value = Chunks<T>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a sequence")
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Chunks<T>, A::Error> {
                let mut chunks: Vec<Vec<T>> = Vec::new();
                let mut chunk = Vec::new();
                while let Some(item) = seq.next_element::<T>()? {
                    if chunk.len() == Chunks::<T>::SIZE {
                        chunks.push(std::mem::take(&mut chunk));
                    }
                    if chunk.capacity() == 0 {
                        chunk.reserve_exact(Chunks::<T>::SIZE);
                    }
                    chunk.push(item);
                }
                if !chunk.is_empty() {
                    chunk.shrink_to_fit();
                    chunks.push(chunk);
                }
                Ok(Chunks(chunks))
            }
        }
        deserializer.deserialize_seq(Visit(std::marker::PhantomData))
    }
}

/// Of a result's `locations`, the first with a physical location, the rest
/// read and dropped (no list of locations is kept per result).
#[derive(Default)]
struct FirstPhysical<'a>(Option<PhysicalLocation<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for FirstPhysical<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> Result<FirstPhysical<'a>, D::Error> {
        struct Visit<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visit<'a> {
            type Value = FirstPhysical<'a>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a list of locations or null")
            }

            fn visit_unit<E: serde::de::Error>(self) -> Result<FirstPhysical<'a>, E> {
                Ok(FirstPhysical(None))
            }

            fn visit_none<E: serde::de::Error>(self) -> Result<FirstPhysical<'a>, E> {
                Ok(FirstPhysical(None))
            }

            fn visit_some<D: serde::Deserializer<'de>>(
                self,
                deserializer: D,
            ) -> Result<FirstPhysical<'a>, D::Error> {
                deserializer.deserialize_seq(self)
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<FirstPhysical<'a>, A::Error> {
                let mut first = None;
                while let Some(location) = seq.next_element::<Location<'a>>()? {
                    if first.is_none() {
                        first = location.physical_location;
                    }
                }
                Ok(FirstPhysical(first))
            }
        }
        deserializer.deserialize_option(Visit(std::marker::PhantomData))
    }
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
struct Message<'a> {
    #[serde(default)]
    #[serde(borrow)]
    text: Option<Str<'a>>,
    #[serde(default)]
    #[serde(borrow)]
    markdown: Option<Str<'a>>,
    #[serde(default)]
    #[serde(borrow)]
    id: Option<Str<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Location<'a> {
    #[serde(default)]
    #[serde(borrow)]
    physical_location: Option<PhysicalLocation<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation<'a> {
    #[serde(default)]
    #[serde(borrow)]
    artifact_location: Option<ArtifactLocation<'a>>,
    #[serde(default)]
    region: Option<Region>,
}

#[derive(Deserialize, Default)]
struct ArtifactLocation<'a> {
    #[serde(default)]
    #[serde(borrow)]
    uri: Option<Str<'a>>,
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
struct Suppression<'a> {
    #[serde(default)]
    #[serde(borrow)]
    status: Option<Str<'a>>,
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
        drafts.findings.reserve(results.len());
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
                crate::exit::Hinted::new(
                    format!(
                        "`{level}` with kind `{kind}`: a result that is no problem has no level"
                    ),
                    "sarif 2.1.0 asks for `level: none` (or none at all) when `kind` is not `fail`",
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
        .as_deref()
        .map(str::to_string)
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
        .map(|text| text.0)
        .filter(|text| !text.trim().is_empty())
        .or_else(|| rule_id.clone().map(std::borrow::Cow::Owned))
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

    let physical = result.physical.0;
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
            (
                uri.map(|uri| uri.0.into_owned()),
                line,
                end.filter(|end| Some(*end) != line),
            )
        }
        None => (None, None, None),
    };

    let prints = result
        .fingerprints
        .filter(|prints| !prints.0.is_empty())
        .or(result
            .partial_fingerprints
            .filter(|prints| !prints.0.is_empty()));
    let (id, id_source) = match prints {
        Some(Prints(pairs)) => (
            Some(sarif_id(rule_id.as_deref(), &pairs)),
            Some(IdSource::Sarif),
        ),
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
            .map_err(|err| crate::report::error::render(&err.into()))
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

    fn drafts(results: &str) -> Vec<Draft> {
        parse(&log(results)).unwrap().findings
    }

    /// Fingerprints are read as a map would hold them: key order does not
    /// matter, a repeated key keeps its last value, numbers count as text.
    #[test]
    fn fingerprints_read_as_a_map() {
        let id = |prints: &str| {
            drafts(&format!(
                r#"[{{"ruleId":"R1","partialFingerprints":{prints},{M}}}]"#
            ))[0]
                .id
                .clone()
                .unwrap()
        };
        let base = id(r#"{"a":"1","b":"2"}"#);
        assert_eq!(id(r#"{"b":"2","a":"1"}"#), base);
        assert_eq!(id(r#"{"a":"0","b":"2","a":"1"}"#), base);
        assert_ne!(id(r#"{"a":"1","b":"2","a":"0"}"#), base);
        assert_eq!(id(r#"{"a":1,"b":"2"}"#), base);
        assert_ne!(id(r#"{"a":"1"}"#), base);
        // What the id is made of, spelled out: the rule, then key and text in key order.
        assert_eq!(
            base,
            sarif_id(
                Some("R1"),
                &[("a".into(), "1".into()), ("b".into(), "2".into())]
            )
        );
        // `fingerprints` wins over `partialFingerprints`; an empty map is none.
        let both = drafts(&format!(
            r#"[{{"ruleId":"R1","fingerprints":{{"a":"1","b":"2"}},"partialFingerprints":{{"z":"9"}},{M}}},
                {{"ruleId":"R1","fingerprints":{{}},"partialFingerprints":{{"a":"1","b":"2"}},{M}}},
                {{"ruleId":"R1","fingerprints":null,{M}}}]"#
        ));
        assert_eq!(both[0].id.as_deref(), Some(base.as_str()));
        assert_eq!(both[1].id.as_deref(), Some(base.as_str()));
        assert_eq!(both[2].id, None);
    }

    /// The first location with a physical location places the finding.
    #[test]
    fn the_first_physical_location_places_a_finding() {
        let at = |locations: &str| {
            let d = &drafts(&format!(r#"[{{"locations":{locations},{M}}}]"#))[0];
            (d.file.clone(), d.line)
        };
        let place = |uri: &str, line: u64| {
            r#"{"physicalLocation":{"artifactLocation":{"uri":"URI"},"region":{"startLine":LINE}}}"#
                .replace("URI", uri)
                .replace("LINE", &line.to_string())
        };
        assert_eq!(
            at(&format!(
                r#"[{{"logicalLocations":[]}},{},{}]"#,
                place("a.rs", 3),
                place("b.rs", 4)
            )),
            (Some("a.rs".into()), Some(3))
        );
        assert_eq!(at("null"), (None, None));
        assert_eq!(at("[]"), (None, None));
        // A path with an escape is read (and owned), not borrowed.
        assert_eq!(
            at(&format!("[{}]", place(r"src\/x.rs", 1))),
            (Some("src/x.rs".into()), Some(1))
        );
        let err = parse(&log(&format!(r#"[{{"locations":"here",{M}}}]"#))).unwrap_err();
        assert!(
            err.to_string().contains("a list of locations or null"),
            "{err}"
        );
    }

    /// Results past the first chunk keep their order and their index in messages.
    #[test]
    fn many_results_keep_their_order_and_indexes() {
        let n = Chunks::<()>::SIZE * 2 + 7;
        let results: Vec<String> = (0..n)
            .map(|i| format!(r#"{{"message":{{"text":"finding {i}"}}}}"#))
            .collect();
        let read = drafts(&format!("[{}]", results.join(",")));
        assert_eq!(read.len(), n);
        assert!(
            read.iter()
                .enumerate()
                .all(|(i, d)| d.title == format!("finding {i}"))
        );
        let mut bad = results.clone();
        bad[n - 2] = r#"{"kind":"nope","message":{"text":"x"}}"#.into();
        let err = parse(&log(&format!("[{}]", bad.join(",")))).unwrap_err();
        assert!(
            err.to_string()
                .contains(&format!("runs[0].results[{}].kind", n - 2)),
            "{err}"
        );
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
            let err = parse(text).expect_err(text);
            let err = crate::report::error::render(&err.into());
            assert!(err.starts_with(want), "{text}: {err}");
        }
        let clean =
            parse(r#"{"runs":[{"invocations":[{"executionSuccessful":true}],"results":[]}]}"#)
                .expect("a clean run");
        assert!(clean.findings.is_empty());
    }
}
