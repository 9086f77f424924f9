//! The ledger as a table, CSV, JSON or Markdown. Pure.

use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::{Alignment, Padding, Style};

use crate::cli::LedgerFormat;
use crate::ledger::chain::write_record;
use crate::ledger::row::{COLUMNS, header};
use crate::ledger::{Kind, Row};

/// Renders `rows` of loop `name` in `format`.
pub fn render(name: &str, rows: &[Row], format: LedgerFormat) -> Vec<u8> {
    match format {
        LedgerFormat::Table => table(name, rows).into_bytes(),
        LedgerFormat::Csv => csv(rows),
        LedgerFormat::Json => json(rows),
        LedgerFormat::Markdown => markdown(name, rows).into_bytes(),
    }
}

/// `+added/-removed`.
pub fn diff_cell(row: &Row) -> String {
    row.counts
        .map(|c| format!("+{}/-{}", c.diff_added, c.diff_removed))
        .unwrap_or_default()
}

/// What the row decided or records: `continue`, `stop: round-cap`, `amend: max_rounds=5 by ann`.
pub fn outcome_cell(row: &Row) -> String {
    match row.kind {
        Kind::Round => match row.verdict {
            Some(v) if row.rule.is_empty() => v.as_str().to_string(),
            Some(v) => format!("{}: {}", v.as_str(), row.rule),
            None => String::new(),
        },
        Kind::Amend => format!("amend: {} by {}", row.subject, row.by),
        Kind::Waive => format!("waive: {} by {}", row.subject, row.by),
        Kind::Approve | Kind::Reject => format!("{} by {}", row.kind, row.by),
    }
}

fn spend_cell(row: &Row) -> String {
    match (row.cost_usd, row.tokens) {
        (Some(usd), Some(tokens)) => format!("${usd:.2} {tokens}t"),
        (Some(usd), None) => format!("${usd:.2}"),
        (None, Some(tokens)) => format!("{tokens}t"),
        (None, None) => String::new(),
    }
}

fn cells(row: &Row) -> Vec<String> {
    let count = |f: fn(&crate::ledger::Counts) -> u32| {
        row.counts.map(|c| f(&c).to_string()).unwrap_or_default()
    };
    vec![
        row.round.to_string(),
        count(|c| c.opened),
        count(|c| c.closed),
        count(|c| c.reopened),
        count(|c| c.must_fix_left),
        count(|c| c.below_floor_open),
        diff_cell(row),
        spend_cell(row),
        outcome_cell(row),
        row.at.clone(),
    ]
}

const HEADS: [&str; 10] = [
    "round", "opened", "closed", "reopened", "must-fix", "below", "diff", "spend", "verdict", "at",
];

fn table(name: &str, rows: &[Row]) -> String {
    if rows.is_empty() {
        return format!("loop `{name}`: no rounds yet\n");
    }
    let mut builder = Builder::default();
    builder.push_record(HEADS);
    for row in rows {
        builder.push_record(cells(row));
    }
    let mut table = builder.build();
    table.with(Style::empty()).with(Padding::new(0, 2, 0, 0));
    table.modify(Columns::new(0..6), Alignment::right());
    let mut out = String::new();
    for line in table.to_string().lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn csv(rows: &[Row]) -> Vec<u8> {
    let mut out = header().into_bytes();
    out.push(b'\n');
    for row in rows {
        out.extend(write_record(&row.fields()));
    }
    out
}

fn json(rows: &[Row]) -> Vec<u8> {
    let values: Vec<_> = rows.iter().map(Row::to_json).collect();
    let mut out = serde_json::to_vec_pretty(&values).unwrap_or_default();
    out.push(b'\n');
    out
}

fn markdown(name: &str, rows: &[Row]) -> String {
    let mut out = format!("### referee ledger: `{}`\n\n", escape(name));
    if rows.is_empty() {
        out.push_str("_no rounds yet_\n");
        return out;
    }
    out.push_str("| round | opened | closed | reopened | must-fix left | below floor | diff | spend | verdict | at |\n");
    out.push_str("|---:|---:|---:|---:|---:|---:|---:|---:|:---|:---|\n");
    for row in rows {
        let cells: Vec<String> = cells(row).iter().map(|c| escape(c)).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    if let Some(last) = rows.last() {
        out.push_str(&format!(
            "\n{} rows; chain head `{}`\n",
            rows.len(),
            last.row_sha256.get(..12).unwrap_or(&last.row_sha256)
        ));
    }
    out
}

/// Escapes text for a Markdown table cell.
fn escape(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace('`', "\\`")
}

/// Ensures the column list the JSON keys come from is the ledger's.
const _: () = assert!(COLUMNS.len() == 23);
