//! SARIF 2.1.0 logs: every run's results become findings. Pure.
//!
//! - severity: the result's `level`; else `none` when its `kind` is not
//!   `fail`; else the rule's `defaultConfiguration.level` (the rule found
//!   through `ruleIndex`/`rule.index`, in `tool.extensions` when
//!   `rule.toolComponent` points there, or by `ruleId`); else `warning`
//!   (the SARIF default). `error` → bug, `warning` → should,
//!   `note`/`none` → nit;
//!   A rule's level may be overridden by the run's
//!   `invocations[].ruleConfigurationOverrides` (§3.20.5), which win over
//!   its `defaultConfiguration`;
//! - the title is the message's `text` (else `markdown`), else the rule's
//!   `messageStrings[message.id]` (else the driver's
//!   `globalMessageStrings`) with `{0}`… filled from `message.arguments`
//!   (§3.11.7), else the rule id;
//! - the location is the first physical location (`uri`, or the run
//!   artifact it indexes, and `region.startLine`). A relative `uri` is
//!   resolved against its `uriBaseId` through the run's
//!   `originalUriBaseIds` (a chain of them, §3.14.14); every URI is
//!   percent-decoded (`config%20file.xml`), and one that resolves outside
//!   the repository is kept as written and flagged;
//! - identity comes from `fingerprints` (else `partialFingerprints`) when
//!   present and not all empty, with the path, else from the content
//!   fingerprint.
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

use super::identity::sarif_prints;
use super::{Draft, Drafts, FindingsError, Format, IdSource, Severity};

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
    #[serde(default, rename = "originalUriBaseIds")]
    #[serde(borrow)]
    base_ids: Option<std::collections::HashMap<String, ArtifactLocation<'a>>>,
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
    #[serde(default)]
    rule_configuration_overrides: Option<Vec<Override>>,
    #[serde(default)]
    tool_execution_notifications: Option<Vec<Notification>>,
    #[serde(default)]
    tool_configuration_notifications: Option<Vec<Notification>>,
}

/// What a tool said about its own run (§3.58): an `error` one means the
/// analysis stopped or is incomplete.
#[derive(Deserialize, Default)]
struct Notification {
    #[serde(default)]
    level: Option<String>,
    #[serde(default)]
    message: Option<NotificationText>,
}

#[derive(Deserialize, Default)]
struct NotificationText {
    #[serde(default)]
    text: Option<String>,
}

/// A level an invocation set for one rule (§3.51).
#[derive(Deserialize, Default)]
struct Override {
    #[serde(default)]
    descriptor: Option<RuleReference>,
    #[serde(default)]
    configuration: Option<Configuration>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Driver {
    #[serde(default)]
    rules: Option<Vec<Rule>>,
    #[serde(default)]
    global_message_strings: Option<std::collections::HashMap<String, MessageString>>,
}

/// A message text a result names by its `message.id` (§3.12).
#[derive(Deserialize, Default, Clone)]
struct MessageString {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    markdown: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Rule {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    default_configuration: Option<Configuration>,
    #[serde(default)]
    message_strings: Option<std::collections::HashMap<String, MessageString>>,
    #[serde(default)]
    properties: Option<RuleProperties>,
}

/// GitHub code scanning's `security-severity`: a CVSS score, written as a
/// string ("9.8") by CodeQL, Grype and Trivy.
#[derive(Deserialize, Default)]
struct RuleProperties {
    #[serde(default, rename = "security-severity")]
    security_severity: Option<serde_json::Value>,
}

impl Rule {
    /// The level its `security-severity` means, the way GitHub ranks it
    /// (critical from 9.0, high from 7.0, medium from 4.0, else low).
    fn security_level(&self) -> Option<Severity> {
        let score = match self.properties.as_ref()?.security_severity.as_ref()? {
            serde_json::Value::String(text) => text.trim().parse::<f64>().ok()?,
            serde_json::Value::Number(number) => number.as_f64()?,
            _ => return None,
        };
        Some(match score {
            s if s >= 9.0 => Severity::Block,
            s if s >= 7.0 => Severity::Bug,
            s if s >= 4.0 => Severity::Should,
            s if s > 0.0 => Severity::Nit,
            _ => return None,
        })
    }
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
    #[serde(default)]
    arguments: Option<Vec<String>>,
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

#[derive(Deserialize, Default, Clone)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation<'a> {
    #[serde(default)]
    #[serde(borrow)]
    uri: Option<Str<'a>>,
    #[serde(default)]
    index: Option<i64>,
    #[serde(default)]
    #[serde(borrow)]
    uri_base_id: Option<Str<'a>>,
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
        // A tool that says it hit an error and found nothing proves no
        // clean round (Semgrep whose rules did not download).
        if results.len() == 0 {
            let mut errors = run
                .invocations
                .iter()
                .flatten()
                .enumerate()
                .flat_map(|(i, inv)| {
                    [
                        (
                            "toolExecutionNotifications",
                            &inv.tool_execution_notifications,
                        ),
                        (
                            "toolConfigurationNotifications",
                            &inv.tool_configuration_notifications,
                        ),
                    ]
                    .into_iter()
                    .flat_map(move |(key, list)| {
                        list.iter()
                            .flatten()
                            .enumerate()
                            .map(move |(j, n)| (format!("invocations[{i}].{key}[{j}]"), n))
                    })
                });
            if let Some((at, said)) = errors.find(|(_, n)| n.level.as_deref() == Some("error")) {
                let text = said
                    .message
                    .as_ref()
                    .and_then(|m| m.text.as_deref())
                    .unwrap_or("no text");
                return Err(FindingsError::NotProven {
                    format: Format::Sarif,
                    message: format!(
                        "{at_run}.{at}: the tool reported an error ({}) and no result: its run proves no clean round",
                        super::bound(text.trim(), 200)
                    ),
                    hint: "fix what the tool says and rerun it".into(),
                });
            }
        }
        let tool = run.tool.unwrap_or_default();
        let driver = tool.driver.unwrap_or_default();
        let overrides = run
            .invocations
            .iter()
            .flatten()
            .flat_map(|invocation| invocation.rule_configuration_overrides.iter().flatten())
            .filter_map(|o| {
                let level = o.configuration.as_ref()?.level.clone()?;
                Some((o.descriptor.as_ref()?, level))
            })
            .map(|(descriptor, level)| Overridden {
                id: descriptor.id.clone(),
                index: descriptor.index,
                component: descriptor
                    .tool_component
                    .as_ref()
                    .and_then(|component| component.index),
                level,
            })
            .collect();
        let rules = Rules {
            driver: driver.rules.unwrap_or_default(),
            extensions: tool
                .extensions
                .unwrap_or_default()
                .into_iter()
                .map(|extension| extension.rules.unwrap_or_default())
                .collect(),
            global_strings: driver.global_message_strings.unwrap_or_default(),
            overrides,
        };
        let places = Places {
            artifacts: run.artifacts.unwrap_or_default(),
            base_ids: run.base_ids.unwrap_or_default(),
        };
        drafts.findings.reserve(results.len());
        for (result_index, result) in results.into_iter().enumerate() {
            let at = format!("{at_run}.results[{result_index}]");
            if let Some(draft) = convert(result, &rules, &places, &at)? {
                drafts.findings.push(draft);
            }
        }
    }
    Ok(drafts)
}

/// A run's rules: the driver's, and each extension's (`tool.extensions`),
/// the driver's message strings and the levels its invocations override.
struct Rules {
    driver: Vec<Rule>,
    extensions: Vec<Vec<Rule>>,
    global_strings: std::collections::HashMap<String, MessageString>,
    overrides: Vec<Overridden>,
}

/// A level an invocation set for the rule its descriptor names.
struct Overridden {
    id: Option<String>,
    index: Option<i64>,
    component: Option<i64>,
    level: String,
}

impl Rules {
    /// The level the run's invocations set for the rule `id` (at `index`
    /// of component `component`, `None`: the driver), if one did.
    fn overridden(
        &self,
        id: Option<&str>,
        index: Option<i64>,
        component: Option<i64>,
    ) -> Option<&str> {
        // The rule's own override, else one of a rule it descends from
        // (`Rule` for `Rule/Sub`).
        let find = |named: &dyn Fn(&str, &str) -> bool| {
            self.overrides.iter().rev().find(|o| {
                o.component == component
                    && match (&o.id, id, o.index, index) {
                        (Some(over), Some(id), _, _) => named(id, over),
                        (_, _, Some(at), Some(index)) => at == index,
                        _ => false,
                    }
            })
        };
        find(&|id, over| id == over)
            .or_else(|| find(&names_rule))
            .map(|o| o.level.as_str())
    }
}

/// Whether the hierarchical rule id `id` (`Rule/Sub/Leaf`) is a
/// descendant of `rule`: its leading components are `rule`'s.
fn names_rule(id: &str, rule: &str) -> bool {
    !rule.is_empty()
        && id
            .strip_prefix(rule)
            .is_some_and(|sub| sub.starts_with('/'))
}

/// Where a run's results point: its artifacts, and the bases relative URIs
/// are taken from (`originalUriBaseIds`).
struct Places<'a> {
    artifacts: Vec<Artifact<'a>>,
    base_ids: std::collections::HashMap<String, ArtifactLocation<'a>>,
}

/// How many `uriBaseId`s a chain may pass through: a longer one is a loop.
const MAX_BASE_CHAIN: usize = 16;

impl Places<'_> {
    /// The URI `location` names, resolved against its `uriBaseId` chain
    /// and percent-decoded (a `file:` URI is decoded where it is read, as
    /// every format's). A base the run does not define (CodeQL's
    /// `%SRCROOT%`) leaves the URI relative: the repository's top.
    fn uri(&self, location: &ArtifactLocation) -> Option<String> {
        let mut uri = location.uri.as_deref()?.to_string();
        let mut base = location.uri_base_id.as_deref().map(str::to_string);
        for _ in 0..MAX_BASE_CHAIN {
            if has_scheme(&uri) || uri.starts_with('/') {
                break;
            }
            let Some(at) = base.take().and_then(|id| self.base_ids.get(&id)) else {
                break;
            };
            let Some(prefix) = at.uri.as_deref() else {
                break;
            };
            uri = match prefix.ends_with('/') || prefix.is_empty() {
                true => format!("{prefix}{uri}"),
                false => format!("{prefix}/{uri}"),
            };
            base = at.uri_base_id.as_deref().map(str::to_string);
        }
        match uri
            .get(..5)
            .is_some_and(|s| s.eq_ignore_ascii_case("file:"))
        {
            true => Some(uri),
            false => Some(super::paths::percent_decode(&uri)),
        }
    }
}

/// Whether `uri` starts with a URI scheme (`file:`, `https:`), not a path
/// (a Windows drive `C:` is one letter, no scheme).
fn has_scheme(uri: &str) -> bool {
    match uri.split_once(':') {
        Some((scheme, _)) => {
            scheme.len() > 1
                && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => false,
    }
}

/// A message string with `{0}`, `{1}`… replaced by `arguments` and `{{`,
/// `}}` by a brace (§3.11.5); a placeholder with no argument stays.
fn fill(template: &str, arguments: &[String]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(at) = rest.find(['{', '}']) {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..1]);
            rest = &tail[2..];
            continue;
        }
        if let Some(inside) = tail.strip_prefix('{')
            && let Some(close) = inside.find('}')
            && let Ok(n) = inside[..close].parse::<usize>()
            && let Some(argument) = arguments.get(n)
        {
            out.push_str(argument);
            rest = &inside[close + 1..];
            continue;
        }
        out.push_str(&tail[..1]);
        rest = &tail[1..];
    }
    out.push_str(rest);
    out
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
    run_rules: &Rules,
    places: &Places,
    at: &str,
) -> Result<Option<Draft>, FindingsError> {
    let rules = run_rules;
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
    // A hierarchical id (`Rule/Sub`, §3.27.5) names the rule its leading
    // components name when no rule has the whole id.
    let rule_entry = rule_entry.or_else(|| {
        let id = rule_id.as_deref()?;
        rules
            .iter()
            .find(|rule| rule.id.as_deref() == Some(id))
            .or_else(|| {
                rules
                    .iter()
                    .filter(|rule| rule.id.as_deref().is_some_and(|rule| names_rule(id, rule)))
                    .max_by_key(|rule| rule.id.as_deref().map_or(0, str::len))
            })
    });
    let entry_index = rule_entry
        .and_then(|entry| rules.iter().position(|rule| std::ptr::eq(rule, entry)))
        .and_then(|index| i64::try_from(index).ok());

    let level = match result.level.as_deref() {
        Some(level) => Some(level.to_string()),
        None if kind != "fail" => Some("none".to_string()),
        None => run_rules
            .overridden(rule_id.as_deref(), entry_index.or(rule_index), component)
            .map(str::to_string)
            .or_else(|| {
                rule_entry
                    .and_then(|rule| rule.default_configuration.as_ref())
                    .and_then(|config| config.level.clone())
            }),
    };
    // No level anywhere: the rule's `security-severity` (Grype writes
    // only that), else the SARIF default, warning.
    let scored = match level {
        None => rule_entry.and_then(Rule::security_level),
        Some(_) => None,
    };
    let severity = match (scored, level.as_deref().unwrap_or("warning")) {
        (Some(scored), _) => scored,
        (None, "error") => Severity::Bug,
        (None, "warning") => Severity::Should,
        (None, "note" | "none") => Severity::Nit,
        (None, other) => {
            return Err(FindingsError::invalid(
                Format::Sarif,
                format!("{at}.level"),
                format!("unknown level `{other}`; accepted: error, warning, note, none"),
            ));
        }
    };

    let message = result.message.unwrap_or_default();
    // A message by id: the rule's string, else the driver's (§3.11.7).
    let by_id = message.id.as_deref().and_then(|id| {
        let string = rule_entry
            .and_then(|rule| rule.message_strings.as_ref())
            .and_then(|strings| strings.get(id))
            .or_else(|| run_rules.global_strings.get(id))?;
        let template = string.text.as_deref().or(string.markdown.as_deref())?;
        Some(fill(
            template,
            message.arguments.as_deref().unwrap_or_default(),
        ))
    });
    let text = message
        .text
        .or(message.markdown)
        .map(|text| text.0)
        .or(by_id.map(std::borrow::Cow::Owned))
        .filter(|text| !text.trim().is_empty())
        .or_else(|| rule_id.clone().map(std::borrow::Cow::Owned))
        .ok_or_else(|| {
            FindingsError::invalid(
                Format::Sarif,
                format!("{at}.message"),
                "no message text and no rule id",
            )
        })?;
    let (title, body) = super::titled(text.trim());

    let physical = result.physical.0;
    let (file, line, end_line) = match physical {
        Some(physical) => {
            let uri = physical.artifact_location.and_then(|artifact| {
                if artifact.uri.is_some() {
                    return places.uri(&artifact);
                }
                let index = usize::try_from(artifact.index?).ok()?;
                places.uri(places.artifacts.get(index)?.location.as_ref()?)
            });
            let region = physical.region.unwrap_or_default();
            let line = region.start_line.and_then(|line| u64::try_from(line).ok());
            let end = region.end_line.and_then(|line| u64::try_from(line).ok());
            (uri, line, end.filter(|end| Some(*end) != line))
        }
        None => (None, None, None),
    };

    // A map whose every value is empty says nothing (gitleaks without git
    // writes `commitSha`, `email`, … all `""`).
    let says = |prints: &Prints| prints.0.iter().any(|(_, value)| !value.is_empty());
    let prints = result
        .fingerprints
        .filter(says)
        .or(result.partial_fingerprints.filter(says));
    let (id, id_source) = match prints {
        Some(Prints(pairs)) => (
            Some(sarif_prints(rule_id.as_deref(), &pairs)),
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
            sarif_prints(
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

    /// Findings of a whole log as `record` reads it, the repository at `/work/repo`.
    fn finished(log: &str) -> Vec<crate::findings::Finding> {
        crate::findings::parse(log.as_bytes(), Format::Sarif, "/work/repo")
            .unwrap()
            .findings
    }

    /// A run of `results` with `extra` run keys (`"originalUriBaseIds":…,`).
    fn run_with(extra: &str, results: &str) -> String {
        format!(
            r#"{{"version":"2.1.0","runs":[{{{extra}"tool":{{"driver":{{"name":"t"}}}},"results":{results}}}]}}"#
        )
    }

    fn at(uri: &str, base: Option<&str>) -> String {
        let base = base.map_or(String::new(), |b| format!(r#","uriBaseId":"{b}""#));
        format!(
            r#"{{"message":{{"text":"m"}},"locations":[{{"physicalLocation":{{"artifactLocation":{{"uri":"{uri}"{base}}},"region":{{"startLine":3}}}}}}]}}"#
        )
    }

    /// Every artifact URI is percent-decoded, relative ones too (Meterian's
    /// `Apache%3A%3ALogFormat`), once: `%2520` is a `%20` in the name.
    #[test]
    fn every_artifact_uri_is_percent_decoded_once() {
        let files: Vec<(Option<String>, bool)> = finished(&run_with(
            "",
            &format!(
                "[{},{},{},{}]",
                at("config%20with%20spaces.xml", None),
                at("perl/Apache%3A%3ALogFormat.pm", None),
                at("file:///work/repo/src/a%20b.rs", None),
                at("odd%2520name.txt", None)
            ),
        ))
        .into_iter()
        .map(|f| (f.file, f.path_escapes))
        .collect();
        assert_eq!(
            files,
            [
                (Some("config with spaces.xml".to_string()), false),
                (Some("perl/Apache::LogFormat.pm".to_string()), false),
                (Some("src/a b.rs".to_string()), false),
                (Some("odd%20name.txt".to_string()), false),
            ]
        );
    }

    /// A relative URI is taken from its `uriBaseId`, through a chain of
    /// bases; one that resolves outside the repository (Trivy's `ROOTPATH`
    /// of `/`) is flagged; an undefined base (`%SRCROOT%`) is the
    /// repository's top; a loop of bases ends.
    #[test]
    fn a_relative_uri_is_resolved_through_its_base_ids() {
        let bases = r#""originalUriBaseIds":{"REPO":{"uri":"file:///work/repo/"},"SRC":{"uri":"src","uriBaseId":"REPO"},
            "ROOTPATH":{"uri":"file:///"},"A":{"uri":"a/","uriBaseId":"B"},"B":{"uri":"b/","uriBaseId":"A"}},"#;
        let files: Vec<(Option<String>, bool)> = finished(&run_with(
            bases,
            &format!(
                "[{},{},{},{},{}]",
                at("lib/x.rs", Some("SRC")),
                at("Cargo.toml", Some("REPO")),
                at("requirements.txt", Some("ROOTPATH")),
                at("app.ts", Some("%SRCROOT%")),
                at("loop.rs", Some("A")),
            ),
        ))
        .into_iter()
        .map(|f| (f.file, f.path_escapes))
        .collect();
        assert_eq!(files[0], (Some("src/lib/x.rs".into()), false));
        assert_eq!(files[1], (Some("Cargo.toml".into()), false));
        assert_eq!(files[2], (Some("/requirements.txt".into()), true));
        assert_eq!(files[3], (Some("app.ts".into()), false));
        assert!(!files[4].1, "{:?}", files[4]);
        assert!(
            files[4].0.as_deref().unwrap().ends_with("loop.rs"),
            "{:?}",
            files[4]
        );
    }

    /// A message given by id reads its rule's string (else the driver's),
    /// its placeholders filled from the arguments, not the id itself.
    #[test]
    fn a_message_by_id_reads_the_rules_string_with_its_arguments() {
        let log = r#"{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"t",
            "globalMessageStrings":{"shared":{"text":"shared text about {0}"}},
            "rules":[{"id":"R1","messageStrings":{"default":{"text":"Variable '{0}' is unused in {1} ({{kept}})"}}}]}},
            "results":[{"ruleId":"R1","message":{"id":"default","arguments":["x","main"]}},
                       {"ruleId":"R1","message":{"id":"shared","arguments":["y"]}},
                       {"ruleId":"R1","message":{"id":"default","arguments":["only-one"]}},
                       {"ruleId":"R1","message":{"id":"missing"}},
                       {"ruleId":"R1","message":{"text":"plain","id":"default"}}]}]}"#;
        let titles: Vec<String> = finished(log).into_iter().map(|f| f.title).collect();
        assert_eq!(
            titles,
            [
                "Variable 'x' is unused in main ({kept})",
                "shared text about y",
                "Variable 'only-one' is unused in {1} ({kept})",
                "R1",
                "plain",
            ]
        );
    }

    /// The run's `ruleConfigurationOverrides` set a rule's level over its
    /// default, found by id or by index; a result's own level still wins.
    #[test]
    fn an_invocations_rule_override_sets_the_level() {
        let log = |overrides: &str| {
            format!(
                r#"{{"version":"2.1.0","runs":[{{"invocations":[{{"executionSuccessful":true,"ruleConfigurationOverrides":{overrides}}}],
                "tool":{{"driver":{{"name":"t","rules":[{{"id":"R0"}},{{"id":"R1","defaultConfiguration":{{"level":"note"}}}}]}}}},
                "results":[{{"ruleId":"R1","message":{{"text":"a"}}}},{{"ruleId":"R1","ruleIndex":1,"message":{{"text":"b"}}}},
                           {{"ruleId":"R1","level":"note","message":{{"text":"c"}}}},{{"ruleId":"R0","message":{{"text":"d"}}}}]}}]}}"#
            )
        };
        let levels = |overrides: &str| -> Vec<Severity> {
            finished(&log(overrides))
                .into_iter()
                .map(|f| f.severity)
                .collect()
        };
        use Severity::*;
        assert_eq!(levels("[]"), [Nit, Nit, Nit, Should]);
        assert_eq!(
            levels(r#"[{"descriptor":{"id":"R1"},"configuration":{"level":"error"}}]"#),
            [Bug, Bug, Nit, Should]
        );
        assert_eq!(
            levels(r#"[{"descriptor":{"index":1},"configuration":{"level":"error"}}]"#),
            [Bug, Bug, Nit, Should]
        );
        assert_eq!(
            levels(
                r#"[{"descriptor":{"id":"R1","toolComponent":{"index":0}},"configuration":{"level":"error"}}]"#
            ),
            [Nit, Nit, Nit, Should],
            "an override of an extension's rule is not the driver's"
        );
    }

    /// A hierarchical rule id (`Rule/Sub`, §3.27.5) takes the level of the
    /// rule it descends from, and that rule's override; a rule with the
    /// whole id, or an override of it, comes first.
    #[test]
    fn a_hierarchical_rule_id_takes_its_rules_level() {
        let log = |rules: &str, overrides: &str| {
            format!(
                r#"{{"version":"2.1.0","runs":[{{"invocations":[{{"executionSuccessful":true,"ruleConfigurationOverrides":{overrides}}}],
                "tool":{{"driver":{{"name":"t","rules":{rules}}}}},
                "results":[{{"ruleId":"R/Sub","message":{{"text":"a"}}}},{{"ruleId":"RX","message":{{"text":"b"}}}}]}}]}}"#
            )
        };
        let levels = |rules: &str, overrides: &str| -> Vec<Severity> {
            finished(&log(rules, overrides))
                .into_iter()
                .map(|f| f.severity)
                .collect()
        };
        use Severity::*;
        let rule = r#"[{"id":"R","defaultConfiguration":{"level":"error"}}]"#;
        // `RX` is not below `R`: the SARIF default, warning.
        assert_eq!(levels(rule, "[]"), [Bug, Should]);
        let note = r#"[{"descriptor":{"id":"R"},"configuration":{"level":"note"}}]"#;
        assert_eq!(levels(rule, note), [Nit, Should]);
        let both = r#"[{"id":"R","defaultConfiguration":{"level":"error"}},{"id":"R/Sub","defaultConfiguration":{"level":"note"}}]"#;
        assert_eq!(levels(both, "[]"), [Nit, Should]);
        let exact = r#"[{"descriptor":{"id":"R/Sub"},"configuration":{"level":"warning"}},{"descriptor":{"id":"R"},"configuration":{"level":"note"}}]"#;
        assert_eq!(levels(rule, exact), [Should, Should]);
    }

    /// With no level anywhere, a rule's `security-severity` ranks its
    /// results as GitHub does; a level, where one is given, wins.
    #[test]
    fn a_rules_security_severity_stands_in_for_a_missing_level() {
        let log = |score: &str, config: &str| {
            format!(
                r#"{{"version":"2.1.0","runs":[{{"tool":{{"driver":{{"name":"grype","rules":[{{"id":"CVE-1"{config},"properties":{{"security-severity":{score}}}}}]}}}},
                "results":[{{"ruleId":"CVE-1","message":{{"text":"a"}}}}]}}]}}"#
            )
        };
        use Severity::*;
        for (score, want) in [
            ("\"9.8\"", Block),
            ("\"7.5\"", Bug),
            ("5.0", Should),
            ("\"2.1\"", Nit),
            ("\"high\"", Should),
        ] {
            assert_eq!(finished(&log(score, ""))[0].severity, want, "{score}");
        }
        let stated = r#","defaultConfiguration":{"level":"error"}"#;
        assert_eq!(finished(&log("\"2.1\"", stated))[0].severity, Bug);
    }

    /// A tool that reports an error about its own run and no result proves
    /// no clean round (Semgrep whose rules failed to download); with
    /// results, they are read.
    #[test]
    fn an_error_notification_and_no_result_is_no_clean_round() {
        let log = |results: &str, key: &str, level: &str| {
            format!(
                r#"{{"version":"2.1.0","runs":[{{"invocations":[{{"executionSuccessful":true,"{key}":[{{"level":"{level}","message":{{"text":"Failed to download configuration"}}}}]}}],
                "tool":{{"driver":{{"name":"semgrep","rules":[]}}}},"results":{results}}}]}}"#
            )
        };
        for key in [
            "toolExecutionNotifications",
            "toolConfigurationNotifications",
        ] {
            let err = parse(&log("[]", key, "error")).unwrap_err().to_string();
            assert_eq!(
                err,
                format!(
                    "sarif: runs[0].invocations[0].{key}[0]: the tool reported an error (Failed to download configuration) and no result: its run proves no clean round"
                )
            );
            assert!(
                parse(&log("[]", key, "warning"))
                    .unwrap()
                    .findings
                    .is_empty()
            );
        }
        let one = r#"[{"ruleId":"R","message":{"text":"m"}}]"#;
        let read = parse(&log(one, "toolExecutionNotifications", "error")).unwrap();
        assert_eq!(read.findings.len(), 1);
    }

    /// The path is part of a fingerprinted result's id: the same line hash
    /// in two files is two findings, and fingerprints whose values are all
    /// empty (gitleaks without git) are no fingerprints.
    #[test]
    fn a_fingerprinted_results_id_holds_its_path() {
        let result = |uri: &str, prints: &str| {
            format!(
                r#"{{"ruleId":"R1","partialFingerprints":{prints},"message":{{"text":"m"}},"locations":[{{"physicalLocation":{{"artifactLocation":{{"uri":"{uri}"}},"region":{{"startLine":3}}}}}}]}}"#
            )
        };
        let hash = r#"{"primaryLocationLineHash":"5f0e3d:1"}"#;
        let empty = r#"{"commitSha":"","email":"","date":""}"#;
        let found = finished(&run_with(
            "",
            &format!(
                "[{},{},{},{}]",
                result("app.ts", hash),
                result("dist/app.js", hash),
                result("a.env", empty),
                result("b.env", empty)
            ),
        ));
        let ids: Vec<&str> = found.iter().map(|f| f.id.as_str()).collect();
        assert!(
            ids[0].starts_with("S-") && ids[1].starts_with("S-"),
            "{ids:?}"
        );
        assert_ne!(ids[0], ids[1]);
        assert!(
            ids[2].starts_with("F-") && ids[3].starts_with("F-"),
            "{ids:?}"
        );
        assert_ne!(ids[2], ids[3]);
        assert_eq!(found[2].id_source, IdSource::Derived);
        // The same result read again, or from another checkout of the
        // repository, keeps its id.
        let again = crate::findings::parse(
            run_with(
                "",
                &format!("[{}]", result("file:///elsewhere/co/app.ts", hash)),
            )
            .as_bytes(),
            Format::Sarif,
            "/elsewhere/co",
        )
        .unwrap()
        .findings;
        assert_eq!(again[0].id, ids[0]);
    }

    #[test]
    fn a_message_string_fills_its_placeholders() {
        let args = ["a".to_string(), "b".to_string()];
        assert_eq!(fill("{1}{0}", &args), "ba");
        assert_eq!(fill("{{0}} {0}", &args), "{0} a");
        assert_eq!(fill("{2} {x} {", &args), "{2} {x} {");
        assert_eq!(fill("}} }", &args), "} }");
    }
}
