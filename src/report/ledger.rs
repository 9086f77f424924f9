//! The ledger as a table, CSV, JSON or Markdown. Pure.

use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::{Alignment, Padding, Style};

use crate::digest::push_decimal;
use crate::ledger::chain::write_record;
use crate::ledger::row::{COLUMNS, header};
use crate::ledger::{Field, Kind, Row, RowRef};

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

/// The CSV header line, as a ledger with no rows shows it.
pub fn write_header(out: &mut impl std::io::Write) -> std::io::Result<()> {
    out.write_all(header().as_bytes())?;
    out.write_all(b"\n")
}

fn csv(rows: &[Row]) -> Vec<u8> {
    let mut out = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = write_header(&mut out);
    for row in rows {
        out.extend(write_record(&row.fields()));
    }
    out
}

/// The rows as a pretty JSON array, written directly (a large ledger never
/// holds its rows as JSON values): the same bytes as `Row::to_json` pretty-
/// printed in an array.
fn json(rows: &[Row]) -> Vec<u8> {
    let mut out = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = write_json(rows, &mut out);
    out
}

/// The rows as a JSON array, written as it is made: a 100,000-row ledger
/// is never held as one document.
pub fn write_json(rows: &[Row], out: &mut impl std::io::Write) -> std::io::Result<()> {
    let mut json = JsonRows::new(out);
    for row in rows {
        json.row(&row.view())?;
    }
    json.finish()
}

/// A JSON array of rows written as they come: one at a time
/// ([`JsonRows::row`]), or a run of rows formatted elsewhere
/// ([`JsonRows::formatted`]; `ledger show --format json` formats them on
/// two threads).
pub struct JsonRows<W> {
    out: W,
    /// What comes before each column's value: its key, and from the second
    /// on the end of the value before (`,\n    "round": `).
    keys: Vec<Key>,
    /// Rows formatted but not yet handed to `out`: appending to a `Vec` is
    /// cheaper than the seventy `write_all` calls of a row, each a `Result`.
    buf: Vec<u8>,
    /// How many rows, or runs of rows, were written: none means `[]`.
    written: usize,
}

/// How much [`JsonRows`] formats before it writes.
const JSON_CHUNK: usize = 256 << 10;

impl<W: std::io::Write> JsonRows<W> {
    pub fn new(out: W) -> JsonRows<W> {
        let keys = COLUMNS
            .iter()
            .enumerate()
            .map(|(j, column)| {
                let sep = if j == 0 { "" } else { ",\n" };
                Key::new(format!("{sep}    \"{column}\": ").into_bytes())
            })
            .collect();
        JsonRows {
            out,
            keys,
            buf: Vec::with_capacity(JSON_CHUNK + 4096),
            written: 0,
        }
    }

    pub fn row(&mut self, row: &RowRef<'_>) -> std::io::Result<()> {
        let at = self.buf.len();
        format_row(&self.keys, row, &mut self.buf);
        if self.written == 0 {
            self.buf[at..at + 2].copy_from_slice(b"[\n");
        }
        self.written += 1;
        if self.buf.len() >= JSON_CHUNK {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Rows [`JsonRows::format`] formatted, in order: as many as `rows`
    /// holds, each after a `,\n` (the first one's becomes the `[`).
    pub fn formatted(&mut self, rows: &[u8]) -> std::io::Result<()> {
        let Some(rest) = rows.strip_prefix(b",\n") else {
            return Ok(());
        };
        if self.written == 0 {
            self.buf.extend_from_slice(b"[\n");
        } else {
            self.buf.extend_from_slice(b",\n");
        }
        self.written += 1;
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        self.out.write_all(rest)
    }

    /// A function that appends `row` to a buffer as [`JsonRows::row`]
    /// writes it, after a `,\n`, for [`JsonRows::formatted`]: rows may be
    /// formatted on other threads.
    pub fn format(&self) -> impl Fn(&RowRef<'_>, &mut Vec<u8>) + Sync + use<W> {
        let keys = self.keys.clone();
        move |row, out| format_row(&keys, row, out)
    }

    pub fn finish(mut self) -> std::io::Result<()> {
        self.buf
            .extend_from_slice(if self.written == 0 { b"[]\n" } else { b"\n]\n" });
        self.out.write_all(&self.buf)?;
        self.out.flush()
    }
}

/// A column's key as [`format_row`] writes it, padded to a fixed width:
/// a copy of a known length is a few moves, where one of a length known
/// only at run time is a call (a 100,000-row ledger writes 2.3 million
/// keys).
#[derive(Clone)]
struct Key {
    padded: [u8; KEY_WIDTH],
    len: usize,
    /// The key itself when it is longer than the padding.
    long: Vec<u8>,
}

const KEY_WIDTH: usize = 32;

impl Key {
    fn new(bytes: Vec<u8>) -> Key {
        let mut padded = [b' '; KEY_WIDTH];
        if let Some(to) = padded.get_mut(..bytes.len()) {
            to.copy_from_slice(&bytes);
            return Key {
                padded,
                len: bytes.len(),
                long: Vec::new(),
            };
        }
        Key {
            padded,
            len: bytes.len(),
            long: bytes,
        }
    }

    fn write(&self, out: &mut Vec<u8>) {
        if self.long.is_empty() {
            let at = out.len();
            out.extend_from_slice(&self.padded);
            out.truncate(at + self.len);
        } else {
            out.extend_from_slice(&self.long);
        }
    }
}

/// `row` as a JSON object after `,\n`, its keys from [`JsonRows`].
fn format_row(keys: &[Key], row: &RowRef<'_>, out: &mut Vec<u8>) {
    out.extend_from_slice(b",\n  {\n");
    for (key, value) in keys.iter().zip(row.values()) {
        key.write(out);
        match value {
            Field::Text("") | Field::Number(None) | Field::Cost(None) => {
                out.extend_from_slice(b"null");
            }
            Field::Number(Some(n)) => push_decimal(out, n),
            Field::Cost(Some(c)) => write_cost(out, c),
            Field::Text(text) => write_text(out, text),
        }
    }
    out.extend_from_slice(b"\n  }");
}

/// `cost_usd` as `Row::to_json` writes it (the CSV's text read as a JSON
/// number): a whole amount as an integer, any other as serde_json writes
/// the same `f64` (the shortest text that reads back as it).
fn write_cost(out: &mut Vec<u8>, c: f64) {
    // Below 2^53 every whole f64 is exactly its integer.
    if c.fract() == 0.0 && (0.0..9_007_199_254_740_992.0).contains(&c) {
        return push_decimal(out, c as u64);
    }
    // Whole amounts past 2^53 and negative ones as their integer too, as
    // a JSON number read from their text would be.
    if c.fract() == 0.0 && (0.0..18_446_744_073_709_551_616.0).contains(&c) {
        return push_decimal(out, c as u64);
    }
    if c.fract() == 0.0 && (-9_223_372_036_854_775_808.0..0.0).contains(&c) {
        out.push(b'-');
        return push_decimal(out, (c as i64).unsigned_abs());
    }
    if c.is_finite() {
        // Writing into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *out, &c);
        return;
    }
    write_text(out, &c.to_string());
}

/// Whether `bytes` holds a byte JSON escapes (a control byte, `"` or
/// `\\`), 32 at a time: the test of each block has no branch, so the
/// compiler does it 16 bytes to an instruction (a ledger's text is mostly
/// 64-digit hashes).
fn needs_escape(bytes: &[u8]) -> bool {
    bytes.chunks(32).any(|block| {
        block.iter().fold(false, |any, &b| {
            any | (b < 0x20) | (b == b'"') | (b == b'\\')
        })
    })
}

/// A JSON string; text with nothing to escape (hashes, times, most
/// reasons) is written as it stands.
fn write_text(out: &mut Vec<u8>, text: &str) {
    if !needs_escape(text.as_bytes()) {
        out.push(b'"');
        // A sha256 in hex, copied as a known length (see `Key`).
        match <&[u8; 64]>::try_from(text.as_bytes()) {
            Ok(hash) => out.extend_from_slice(hash),
            Err(_) => out.extend_from_slice(text.as_bytes()),
        }
        return out.push(b'"');
    }
    // Writing into a Vec cannot fail.
    let _ = serde_json::to_writer(out, text);
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

/// Ensures the column list the JSON keys come from is the ledger's.
const _: () = assert!(COLUMNS.len() == 23);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_json_is_each_rows_own_json() {
        use crate::ledger::{Counts, Draft, Verdict};
        let mut rows = Vec::new();
        // Whole amounts are integers, others the shortest f64 text.
        let costs = [
            Some(0.125),
            Some(0.000_000_1),
            None,
            Some(1.0),
            Some(0.0),
            Some(0.1 + 0.2),
            Some(1e20),
            Some(123_456.5),
        ];
        for (i, cost) in costs.into_iter().enumerate() {
            let mut d = Draft::new(Kind::Round, i as u32 + 1, "2026-01-02T03:04:05Z");
            d.counts = (i != 2).then_some(Counts {
                opened: 1,
                diff_added: 40,
                ..Counts::default()
            });
            d.verdict = Some(Verdict::Continue);
            d.cost_usd = cost;
            d.reason = "a \"quoted\", comma'd reason \u{1b}[2J".into();
            rows.push(Row::seal(d, &"0".repeat(64), ""));
        }
        let bytes = json(&rows);
        let read: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        let want: Vec<serde_json::Value> = rows.iter().map(Row::to_json).collect();
        assert_eq!(read, serde_json::Value::Array(want));
        assert_eq!(json(&[]), b"[]\n");
        // Costs byte for byte as the CSV's text read as a JSON number.
        for c in [
            0.125,
            0.000_000_1,
            0.1 + 0.2,
            1e20,
            1e300,
            123_456.5,
            0.01,
            2.5e-12,
            9_007_199_254_740_994.0,
            -5.0,
            -0.5,
            f64::INFINITY,
        ] {
            let mut out = Vec::new();
            write_cost(&mut out, c);
            let want = match serde_json::from_str::<serde_json::Number>(&c.to_string()) {
                Ok(n) => n.to_string(),
                Err(_) => serde_json::to_string(&c.to_string()).unwrap(),
            };
            assert_eq!(String::from_utf8(out).unwrap(), want, "{c}");
        }
    }

    #[test]
    fn fixed_width_copies_write_exactly_their_bytes() {
        // Keys shorter than, as long as and longer than the padding.
        for len in [0, 1, 24, KEY_WIDTH - 1, KEY_WIDTH, KEY_WIDTH + 1, 90] {
            let key: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            let mut out = b"x".to_vec();
            Key::new(key.clone()).write(&mut out);
            assert_eq!(out[1..], key[..], "a key of {len}");
        }
        for n in (0..1_100).chain([u64::MAX / 10, u64::MAX]) {
            let mut out = Vec::new();
            push_decimal(&mut out, n);
            assert_eq!(out, n.to_string().as_bytes());
        }
        // Text of a hash's length, plain or with something to escape.
        for text in ["f".repeat(64), format!("{}\"", "f".repeat(63))] {
            let mut out = Vec::new();
            write_text(&mut out, &text);
            assert_eq!(out, serde_json::to_vec(&text).unwrap());
        }
    }

    #[test]
    fn escapes_are_found_wherever_they_are() {
        assert!(!needs_escape(b""));
        assert!(!needs_escape(
            "plain text, é and 漢字 and \u{7f}".as_bytes()
        ));
        for len in 1..70 {
            for at in 0..len {
                for b in (0u8..0x20).chain([b'"', b'\\']) {
                    let mut text = vec![b'a'; len];
                    text[at] = b;
                    assert!(needs_escape(&text), "{b:#x} at {at} of {len}");
                }
                for b in [0x20u8, 0x21, b'#', b'[', b']', 0x7f, 0x80, 0xff] {
                    let mut text = vec![b'a'; len];
                    text[at] = b;
                    assert!(!needs_escape(&text), "{b:#x} at {at} of {len}");
                }
            }
        }
    }

    #[test]
    fn sparklines_scale_to_the_largest() {
        assert_eq!(sparkline(&[0, 7, 14]), "▁▅█");
        assert_eq!(sparkline(&[0, 0]), "▁▁");
        assert_eq!(sparkline(&[3, 2, 1]), "█▆▃");
    }
}
