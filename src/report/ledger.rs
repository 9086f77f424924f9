//! The ledger as a table, CSV, JSON or Markdown. Pure.

use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::{Alignment, Padding, Style};

use crate::ledger::chain::write_record;
use crate::ledger::row::header;
use crate::ledger::{Kind, Row};

/// Ledger output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LedgerFormat {
    Table,
    Csv,
    Json,
    Markdown,
}

impl LedgerFormat {
    /// Read by people (control characters shown, colors), not programs.
    pub fn for_people(self) -> bool {
        matches!(self, LedgerFormat::Table | LedgerFormat::Markdown)
    }
}

/// Renders `rows` of loop `name` in `format`.
pub fn render(name: &str, rows: &[Row], format: LedgerFormat) -> Vec<u8> {
    match format {
        LedgerFormat::Table => table(name, rows).into_bytes(),
        LedgerFormat::Csv => csv(rows),
        LedgerFormat::Json => json(name, rows),
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
        (Some(usd), Some(tokens)) => format!("{usd} {tokens}t"),
        (Some(usd), None) => usd.to_string(),
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
    if let Some(trend) = trend(rows) {
        out.push_str(&trend);
        out.push('\n');
    }
    out
}

/// Round rows' must-fix left and patch size (added + removed).
fn series(rows: &[Row]) -> Vec<(u32, u32, u64)> {
    rows.iter()
        .filter(|r| r.kind == Kind::Round)
        .filter_map(|r| {
            r.counts
                .map(|c| (r.round, c.must_fix_left, c.diff_added + c.diff_removed))
        })
        .collect()
}

/// `▁▃█` for a list of numbers, scaled to the largest.
pub fn sparkline(values: &[u64]) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let max = values.iter().copied().max().unwrap_or(0);
    values
        .iter()
        .map(|&v| match (v * 7 + max / 2).checked_div(max) {
            Some(level) => BARS[level.min(7) as usize],
            None => BARS[0],
        })
        .collect()
}

/// One line under the table: the trend of must-fix left and patch size.
fn trend(rows: &[Row]) -> Option<String> {
    let s = series(rows);
    if s.len() < 2 {
        return None;
    }
    let must: Vec<u64> = s.iter().map(|x| u64::from(x.1)).collect();
    let size: Vec<u64> = s.iter().map(|x| x.2).collect();
    let list = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>().join(" ");
    Some(format!(
        "trend: must-fix {} ({})  patch {} ({})",
        sparkline(&must),
        list(&must),
        sparkline(&size),
        list(&size)
    ))
}

/// A mermaid `xychart-beta` of must-fix left (line) and patch size (bars)
/// per round; GitHub renders it in PR comments and step summaries.
fn chart(name: &str, rows: &[Row]) -> Option<String> {
    let s = series(rows);
    if s.is_empty() {
        return None;
    }
    let join = |v: Vec<String>| v.join(", ");
    let rounds = join(s.iter().map(|x| x.0.to_string()).collect());
    let must = join(s.iter().map(|x| x.1.to_string()).collect());
    let size = join(s.iter().map(|x| x.2.to_string()).collect());
    let top = s
        .iter()
        .map(|x| x.2.max(u64::from(x.1)))
        .max()
        .unwrap_or(0)
        .max(1);
    let title = name.replace('"', "'");
    Some(format!(
        "```mermaid\nxychart-beta\n    title \"{title}: patch size (bars) and must-fix left (line) per round\"\n    x-axis \"round\" [{rounds}]\n    y-axis \"lines / findings\" 0 --> {top}\n    bar [{size}]\n    line [{must}]\n```\n"
    ))
}

fn csv(rows: &[Row]) -> Vec<u8> {
    let mut out = header().into_bytes();
    out.push(b'\n');
    for row in rows {
        out.extend(write_record(&row.fields()));
    }
    out
}

/// The rows as a pretty JSON array of [`Row::to_json`] objects.
/// `{"loop": NAME, "rows": [ROW, ...]}`: an object, like every command's
/// JSON, so that a field can be added without breaking a reader.
fn json(name: &str, rows: &[Row]) -> Vec<u8> {
    let rows: Vec<serde_json::Value> = rows.iter().map(Row::to_json).collect();
    let doc = serde_json::json!({"loop": name, "rows": rows});
    // JSON values always serialize.
    let mut out = serde_json::to_vec_pretty(&doc).unwrap_or_default();
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
            "\n{}; chain head `{}`\n",
            crate::text::plural(rows.len(), "row"),
            last.row_sha256.get(..12).unwrap_or(&last.row_sha256)
        ));
    }
    if let Some(chart) = chart(name, rows) {
        out.push('\n');
        out.push_str(&chart);
    }
    out
}

/// Escapes text for a Markdown table cell.
fn escape(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace('`', "\\`")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ledger show --format json`: the loop and a pretty array of each
    /// row's object, whole costs as integers and others as their exact
    /// decimal, text escaped; no rows, an empty array.
    #[test]
    fn json_is_the_loop_and_an_array_of_each_rows_object() {
        use crate::ledger::{Counts, Draft, Verdict};
        assert_eq!(
            json("l", &[]),
            b"{\n  \"loop\": \"l\",\n  \"rows\": []\n}\n"
        );
        let rows: Vec<Row> = [Some("1"), Some("0.3"), Some("0.000123"), None]
            .into_iter()
            .zip(1..)
            .map(|(cost, round)| {
                let mut d = Draft::new(Kind::Round, round, "2026-01-02T03:04:05Z");
                d.counts = Some(Counts::default());
                d.verdict = Some(Verdict::Continue);
                d.cost_usd = cost.map(|c| c.parse().unwrap());
                d.reason = "a \"quoted\" reason \u{1b}[2J".into();
                Row::seal(d, &"0".repeat(64), "")
            })
            .collect();
        let text = String::from_utf8(json("l", &rows)).unwrap();
        assert!(
            text.starts_with(
                "{\n  \"loop\": \"l\",\n  \"rows\": [\n    {\n      \"round\": 1,\n      \"opened\": 0,\n"
            ),
            "{text}"
        );
        assert!(text.ends_with("\n    }\n  ]\n}\n"), "{text}");
        for want in [
            "\"cost_usd\": 1,",
            "\"cost_usd\": 0.3,",
            "\"cost_usd\": 0.000123,",
            "\"cost_usd\": null,",
            r#""reason": "a \"quoted\" reason \u001b[2J","#,
        ] {
            assert!(text.contains(want), "{want} in {text}");
        }
        let read: serde_json::Value = serde_json::from_str(&text).unwrap();
        let want: Vec<serde_json::Value> = rows.iter().map(Row::to_json).collect();
        assert_eq!(read["rows"], serde_json::Value::Array(want));
        assert_eq!(read["loop"], "l");
    }

    #[test]
    fn sparklines_scale_to_the_largest() {
        assert_eq!(sparkline(&[0, 7, 14]), "▁▅█");
        assert_eq!(sparkline(&[0, 0]), "▁▁");
        assert_eq!(sparkline(&[3, 2, 1]), "█▆▃");
    }
}
