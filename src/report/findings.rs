//! Every finding of a loop with its history: a table, JSON, or SARIF 2.1.0
//! for code-scanning upload (with `baselineState`, the referee's
//! fingerprints and a `reopened` property). Pure.

use serde_json::{Value, json};
use tabled::builder::Builder;
use tabled::settings::{Padding, Style};

use crate::engine::accounting::{FindingStanding, Tracked};
use crate::findings::Severity;

/// Findings listing formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FindingsFormat {
    Table,
    Json,
    Sarif,
}

impl FindingsFormat {
    /// Read by people (control characters shown), not programs.
    pub fn for_people(self) -> bool {
        self == FindingsFormat::Table
    }
}

/// One finding as listed.
pub struct Listed<'a> {
    pub tracked: &'a Tracked,
    /// Whether the loop's last round reported it.
    pub in_last_round: bool,
    pub must_fix: bool,
    /// The last round's report changed its reported text or place.
    pub changed: bool,
    /// Where a finding without a file was found in the repository (a failing
    /// test's file, see `junit::locate`), for SARIF, whose readers need a place.
    pub located: Option<(String, Option<u32>)>,
}

fn standing(t: &Tracked) -> &'static str {
    match t.standing {
        FindingStanding::Open => "open",
        FindingStanding::Closed => "closed",
        FindingStanding::Waived => "waived",
        FindingStanding::Skipped => "skipped",
    }
}

fn rounds(list: &[u32]) -> String {
    list.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

pub fn table(name: &str, list: &[Listed<'_>], panel: usize) -> String {
    if list.is_empty() {
        return format!("loop `{name}`: no findings\n");
    }
    let mut b = Builder::default();
    let mut head = vec!["id", "severity", "state", "rounds", "where", "title"];
    if panel > 1 {
        head.insert(5, "agreed");
    }
    b.push_record(head);
    for l in list {
        let f = &l.tracked.finding;
        let mut state = standing(l.tracked).to_string();
        if !l.tracked.reopened_in.is_empty() {
            state.push_str(" (reopened)");
        }
        if l.tracked.standing == FindingStanding::Open && !l.must_fix {
            state.push_str(" (below floor)");
        }
        let place = match (&f.file, f.line) {
            (Some(file), Some(line)) => format!("{file}:{line}"),
            (Some(file), None) => file.clone(),
            _ => String::new(),
        };
        let title: String = f.title.chars().take(80).collect();
        let mut row = vec![
            f.id.clone(),
            f.severity.as_str().to_string(),
            state,
            rounds(&l.tracked.rounds),
            place,
            title,
        ];
        if panel > 1 {
            row.insert(5, agreement(&f.reported_by, panel));
        }
        b.push_record(row);
    }
    let mut t = b.build();
    t.with(Style::empty()).with(Padding::new(0, 2, 0, 0));
    let mut out = String::new();
    for line in t.to_string().lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Who of a panel of `panel` reported a finding when it was last
/// reported: `2/3 codex, claude`.
pub fn agreement(reported_by: &[String], panel: usize) -> String {
    if reported_by.is_empty() {
        return String::new();
    }
    format!("{}/{panel} {}", reported_by.len(), reported_by.join(", "))
}

/// `{"loop": NAME, "findings": [...]}`: each finding with its standing.
pub fn json(name: &str, list: &[Listed<'_>]) -> Vec<u8> {
    let items: Vec<Value> = list
        .iter()
        .map(|l| {
            let t = l.tracked;
            let mut v = serde_json::to_value(&t.finding).unwrap_or(Value::Null);
            if let Value::Object(map) = &mut v {
                map.insert("standing".into(), json!(standing(t)));
                map.insert("must_fix".into(), json!(l.must_fix));
                map.insert("rounds".into(), json!(t.rounds));
                map.insert("closed_in".into(), json!(t.closed_in));
                map.insert("reopened_in".into(), json!(t.reopened_in));
                map.insert("induced_by".into(), json!(t.induced_by));
            }
            v
        })
        .collect();
    let mut out =
        serde_json::to_vec_pretty(&json!({ "loop": name, "findings": items })).unwrap_or_default();
    out.push(b'\n');
    out
}

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Block | Severity::Bug => "error",
        Severity::Should => "warning",
        Severity::Nit => "note",
    }
}

/// `new`: first reported in the last round; `unchanged`/`updated`: reported
/// before and again in the last round (updated when its text or place moved,
/// or it was reopened); `absent`: not reported in the last round.
fn baseline(l: &Listed<'_>) -> &'static str {
    let t = l.tracked;
    if !l.in_last_round {
        "absent"
    } else if t.rounds.len() == 1 {
        "new"
    } else if l.changed || t.reopened_in.last() == t.rounds.last() {
        "updated"
    } else {
        "unchanged"
    }
}

pub fn sarif(name: &str, version: &str, list: &[Listed<'_>]) -> Vec<u8> {
    let results: Vec<Value> = list
        .iter()
        .map(|l| {
            let f = &l.tracked.finding;
            let mut result = json!({
                "ruleId": f.rule.clone().unwrap_or_else(|| format!("referee/{}", f.severity.as_str())),
                "level": level(f.severity),
                "message": {"text": match &f.body {
                    Some(body) if !body.is_empty() => format!("{}\n\n{body}", f.title),
                    _ => f.title.clone(),
                }},
                "baselineState": baseline(l),
                "partialFingerprints": {
                    "refereeFingerprint/v1": f.fingerprint,
                    "refereeId/v1": f.id,
                },
                "properties": {
                    "refereeLoop": name,
                    "id": f.id,
                    "severity": f.severity.as_str(),
                    "standing": standing(l.tracked),
                    "mustFix": l.must_fix,
                    "rounds": l.tracked.rounds,
                    "reopened": !l.tracked.reopened_in.is_empty(),
                    "reopenedIn": l.tracked.reopened_in,
                    "inducedBy": l.tracked.induced_by,
                },
            });
            let place = match (&f.file, &l.located) {
                (Some(file), _) if !f.path_escapes => Some((file, f.line, f.end_line)),
                (None, Some((file, line))) => Some((file, line.map(u64::from), None)),
                _ => None,
            };
            if let (Some((file, line, end_line)), Value::Object(map)) = (place, &mut result) {
                let mut region = serde_json::Map::new();
                if let Some(line) = line.filter(|&n| n >= 1) {
                    region.insert("startLine".into(), json!(line));
                    if let Some(end) = end_line.filter(|&e| e >= line) {
                        region.insert("endLine".into(), json!(end));
                    }
                }
                let mut physical = json!({"artifactLocation": {"uri": file, "uriBaseId": "%SRCROOT%"}});
                if !region.is_empty()
                    && let Value::Object(p) = &mut physical
                {
                    p.insert("region".into(), Value::Object(region));
                }
                map.insert(
                    "locations".into(),
                    json!([{ "physicalLocation": physical }]),
                );
            }
            result
        })
        .collect();
    let doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "referee",
                "version": version,
                "rules": [],
            }},
            "automationDetails": {"id": format!("referee/{name}/")},
            "results": results,
        }],
    });
    let mut out = serde_json::to_vec_pretty(&doc).unwrap_or_default();
    out.push(b'\n');
    out
}
