//! `referee report`: many loops in one table — rounds, the rule that fired,
//! spend, the decision, whether the chain verifies — with totals by rule.
//! Pure: summaries in, bytes out.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::json;
use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::{Alignment, Padding, Style};

use crate::engine::panel::Tally;
use crate::money::Usd;

/// Report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    Table,
    Json,
    Markdown,
}

impl ReportFormat {
    /// Read by people (control characters shown), not programs.
    pub fn for_people(self) -> bool {
        matches!(self, ReportFormat::Table | ReportFormat::Markdown)
    }
}

/// One loop as the report shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoopSummary {
    /// The state folder or ledger file it was read from.
    pub source: String,
    #[serde(rename = "loop")]
    pub loop_name: String,
    pub rounds: u32,
    /// `running`, `stopped`, `not started`.
    pub status: String,
    pub rule: Option<String>,
    pub must_fix_left: u32,
    pub spent_usd: Usd,
    pub spent_tokens: u64,
    /// `approved by ann`, `rejected by bob`.
    pub decision: Option<String>,
    /// `ok`, or what `ledger verify` says is wrong.
    pub chain: String,
    /// A panel's reviewers, each with what it alone found (SPEC §6.1).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reviewers: Vec<Tally>,
}

/// Loops that stopped on one rule (or still run), added up.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Total {
    pub loops: u32,
    pub rounds: u32,
    pub spent_usd: Usd,
    pub spent_tokens: u64,
}

/// Totals keyed by rule (`running` for loops that have not stopped).
pub fn totals(loops: &[LoopSummary]) -> BTreeMap<String, Total> {
    let mut out: BTreeMap<String, Total> = BTreeMap::new();
    for l in loops {
        let key = l.rule.clone().unwrap_or_else(|| l.status.clone());
        let t = out.entry(key).or_default();
        t.loops += 1;
        t.rounds += l.rounds;
        t.spent_usd = t.spent_usd.saturating_add(l.spent_usd);
        t.spent_tokens = t.spent_tokens.saturating_add(l.spent_tokens);
    }
    out
}

pub fn render(loops: &[LoopSummary], format: ReportFormat) -> Vec<u8> {
    match format {
        ReportFormat::Table => table(loops).into_bytes(),
        ReportFormat::Markdown => markdown(loops).into_bytes(),
        ReportFormat::Json => {
            let value = json!({
                "loops": loops,
                "totals": totals(loops),
            });
            let mut out = serde_json::to_vec_pretty(&value).unwrap_or_default();
            out.push(b'\n');
            out
        }
    }
}

fn spend(usd: Usd, tokens: u64) -> String {
    match (!usd.is_zero(), tokens > 0) {
        (true, true) => format!("{usd} {tokens}t"),
        (true, false) => usd.to_string(),
        (false, true) => format!("{tokens}t"),
        (false, false) => String::new(),
    }
}

fn outcome(l: &LoopSummary) -> String {
    match &l.rule {
        Some(rule) => rule.clone(),
        None => l.status.clone(),
    }
}

fn rows(loops: &[LoopSummary]) -> Vec<[String; 7]> {
    loops
        .iter()
        .map(|l| {
            [
                l.loop_name.clone(),
                l.rounds.to_string(),
                outcome(l),
                l.must_fix_left.to_string(),
                spend(l.spent_usd, l.spent_tokens),
                l.decision.clone().unwrap_or_default(),
                l.chain.clone(),
            ]
        })
        .collect()
}

const HEADS: [&str; 7] = [
    "loop", "rounds", "outcome", "must-fix", "spend", "decision", "chain",
];

fn table(loops: &[LoopSummary]) -> String {
    if loops.is_empty() {
        return "no loops found\n".to_string();
    }
    let mut b = Builder::default();
    b.push_record(HEADS);
    for r in rows(loops) {
        b.push_record(r);
    }
    let mut t = b.build();
    t.with(Style::empty()).with(Padding::new(0, 2, 0, 0));
    t.modify(Columns::new(1..2), Alignment::right());
    t.modify(Columns::new(3..4), Alignment::right());
    let mut out = String::new();
    for line in t.to_string().lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push('\n');
    let mut b = Builder::default();
    b.push_record(["by outcome", "loops", "rounds", "spend"]);
    for (rule, t) in totals(loops) {
        b.push_record([
            rule,
            t.loops.to_string(),
            t.rounds.to_string(),
            spend(t.spent_usd, t.spent_tokens),
        ]);
    }
    let mut t = b.build();
    t.with(Style::empty()).with(Padding::new(0, 2, 0, 0));
    t.modify(Columns::new(1..3), Alignment::right());
    for line in t.to_string().lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    let panels = reviewer_rows(loops);
    if !panels.is_empty() {
        out.push('\n');
        let mut b = Builder::default();
        b.push_record(REVIEWER_HEADS);
        for r in panels {
            b.push_record(r);
        }
        let mut t = b.build();
        t.with(Style::empty()).with(Padding::new(0, 2, 0, 0));
        t.modify(Columns::new(2..5), Alignment::right());
        for line in t.to_string().lines() {
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    out
}

const REVIEWER_HEADS: [&str; 5] = ["loop", "reviewer", "found", "alone", "alone, fixed"];

/// Per panel reviewer of each loop: the findings it reported, those it
/// alone reported, and how many of those a fix closed.
fn reviewer_rows(loops: &[LoopSummary]) -> Vec<[String; 5]> {
    loops
        .iter()
        .flat_map(|l| {
            l.reviewers.iter().map(|r| {
                [
                    l.loop_name.clone(),
                    r.reviewer.clone(),
                    r.found.to_string(),
                    r.alone.to_string(),
                    r.alone_fixed.to_string(),
                ]
            })
        })
        .collect()
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

fn markdown(loops: &[LoopSummary]) -> String {
    let mut out = String::from("### referee report\n\n");
    if loops.is_empty() {
        out.push_str("_no loops found_\n");
        return out;
    }
    out.push_str("| loop | rounds | outcome | must-fix left | spend | decision | chain |\n");
    out.push_str("|:---|---:|:---|---:|---:|:---|:---|\n");
    for r in rows(loops) {
        let cells: Vec<String> = r.iter().map(|c| cell(c)).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out.push_str("\n| outcome | loops | rounds | spend |\n|:---|---:|---:|---:|\n");
    for (rule, t) in totals(loops) {
        out.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            cell(&rule),
            t.loops,
            t.rounds,
            spend(t.spent_usd, t.spent_tokens)
        ));
    }
    let panels = reviewer_rows(loops);
    if !panels.is_empty() {
        out.push_str(
            "\n| loop | reviewer | found | alone | alone, fixed |\n|:---|:---|---:|---:|---:|\n",
        );
        for r in panels {
            let cells: Vec<String> = r.iter().map(|c| cell(c)).collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
    }
    out
}
