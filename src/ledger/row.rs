//! One ledger row: its columns, its typed form and its hash. Pure.

use std::fmt;

use serde_json::{Map, Value};

use crate::digest::Framed;

/// The ledger's columns, in file order. The first thirteen are SPEC §2.2's
/// required columns; the rest are referee's own.
pub const COLUMNS: [&str; 23] = [
    "round",
    "opened",
    "closed",
    "reopened",
    "must_fix_left",
    "below_floor_open",
    "diff_added",
    "diff_removed",
    "verdict",
    "rule",
    "at",
    "prev_sha256",
    "row_sha256",
    "kind",
    "cost_usd",
    "tokens",
    "snapshot",
    "findings_sha256",
    "evidence_sha256",
    "by",
    "reason",
    "subject",
    "idempotency_key",
];

/// Index of `row_sha256`, the one column its own hash does not cover.
const ROW_SHA_COLUMN: usize = 12;

/// Columns whose values are numbers in JSON output.
pub const NUMERIC: [&str; 10] = [
    "round",
    "opened",
    "closed",
    "reopened",
    "must_fix_left",
    "below_floor_open",
    "diff_added",
    "diff_removed",
    "cost_usd",
    "tokens",
];

/// The header line, without its newline.
pub fn header() -> String {
    COLUMNS.join(",")
}

/// What a row records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// One reviewed (or guarded) round.
    Round,
    /// A human raised the round cap in writing.
    Amend,
    /// A human waived one finding.
    Waive,
    /// A human approved the outcome.
    Approve,
    /// A human rejected the outcome.
    Reject,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Round => "round",
            Kind::Amend => "amend",
            Kind::Waive => "waive",
            Kind::Approve => "approve",
            Kind::Reject => "reject",
        }
    }

    fn parse(text: &str) -> Option<Kind> {
        Some(match text {
            "round" => Kind::Round,
            "amend" => Kind::Amend,
            "waive" => Kind::Waive,
            "approve" => Kind::Approve,
            "reject" => Kind::Reject,
            _ => return None,
        })
    }
}

/// A round's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Continue,
    Stop,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Continue => "continue",
            Verdict::Stop => "stop",
        }
    }
}

/// One value of a row, as [`Row::values`] gives it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Field<'a> {
    Text(&'a str),
    /// A whole number, or empty.
    Number(Option<u64>),
    /// `cost_usd`, or empty.
    Cost(Option<f64>),
}

impl Field<'_> {
    /// The field as the ledger's CSV writes it.
    pub fn to_text(&self) -> String {
        match self {
            Field::Text(text) => (*text).to_string(),
            Field::Number(n) => n.map(|n| n.to_string()).unwrap_or_default(),
            Field::Cost(c) => c.map(|c| c.to_string()).unwrap_or_default(),
        }
    }
}

/// A round's counts (SPEC §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    pub opened: u32,
    pub closed: u32,
    pub reopened: u32,
    pub must_fix_left: u32,
    pub below_floor_open: u32,
    pub diff_added: u64,
    pub diff_removed: u64,
}

/// A row as the caller drafts it; the store fills in the chain.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    pub round: u32,
    pub kind: Kind,
    /// Present on round rows only.
    pub counts: Option<Counts>,
    pub verdict: Option<Verdict>,
    pub rule: String,
    /// RFC 3339 UTC.
    pub at: String,
    pub cost_usd: Option<f64>,
    pub tokens: Option<u64>,
    pub snapshot: String,
    pub findings_sha256: String,
    pub by: String,
    pub reason: String,
    pub subject: String,
    pub idempotency_key: String,
}

impl Draft {
    /// A row of `kind` for `round` at `at`, every other field empty.
    pub fn new(kind: Kind, round: u32, at: &str) -> Draft {
        Draft {
            round,
            kind,
            counts: None,
            verdict: None,
            rule: String::new(),
            at: at.to_string(),
            cost_usd: None,
            tokens: None,
            snapshot: String::new(),
            findings_sha256: String::new(),
            by: String::new(),
            reason: String::new(),
            subject: String::new(),
            idempotency_key: String::new(),
        }
    }
}

/// A committed row.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub draft: Draft,
    pub prev_sha256: String,
    pub row_sha256: String,
    /// Digest of the row's evidence folder; empty when it has none.
    pub evidence_sha256: String,
}

impl std::ops::Deref for Row {
    type Target = Draft;

    fn deref(&self) -> &Draft {
        &self.draft
    }
}

/// A field that does not read as its column says.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("column `{column}`: {problem}, not `{value}`")]
pub struct FieldError {
    pub column: &'static str,
    pub value: String,
    pub problem: &'static str,
}

impl Row {
    /// Seals a draft into the chain after `prev_sha256`.
    pub fn seal(draft: Draft, prev_sha256: &str, evidence_sha256: &str) -> Row {
        let mut row = Row {
            draft,
            prev_sha256: prev_sha256.to_string(),
            row_sha256: String::new(),
            evidence_sha256: evidence_sha256.to_string(),
        };
        row.row_sha256 = hash_fields(&row.fields());
        row
    }

    /// The row's fields in column order.
    pub fn fields(&self) -> Vec<String> {
        self.values().iter().map(Field::to_text).collect()
    }

    /// The row's values in column order, unconverted: what [`Row::fields`]
    /// writes as text, for renderers that write numbers as numbers.
    pub fn values(&self) -> [Field<'_>; COLUMNS.len()] {
        self.view().values()
    }

    /// The row, borrowed.
    pub fn view(&self) -> RowRef<'_> {
        let d = &self.draft;
        RowRef {
            round: d.round,
            kind: d.kind,
            counts: d.counts,
            verdict: d.verdict,
            rule: &d.rule,
            at: &d.at,
            cost_usd: d.cost_usd,
            tokens: d.tokens,
            snapshot: &d.snapshot,
            findings_sha256: &d.findings_sha256,
            by: &d.by,
            reason: &d.reason,
            subject: &d.subject,
            idempotency_key: &d.idempotency_key,
            prev_sha256: &self.prev_sha256,
            row_sha256: &self.row_sha256,
            evidence_sha256: &self.evidence_sha256,
        }
    }

    /// Reads a row from its fields (already checked to be `COLUMNS.len()` long).
    pub fn from_fields<S: AsRef<str>>(f: &[S]) -> Result<Row, FieldError> {
        let text: Vec<&str> = f.iter().map(AsRef::as_ref).collect();
        RowRef::from_fields(&text).map(|view| view.to_row())
    }

    /// The row as a JSON object keyed by column name; numbers as numbers,
    /// empty fields as null.
    pub fn to_json(&self) -> Value {
        let mut map = Map::new();
        for (column, value) in COLUMNS.iter().zip(self.fields()) {
            let json = if value.is_empty() {
                Value::Null
            } else if NUMERIC.contains(column) {
                serde_json::from_str::<serde_json::Number>(&value)
                    .map(Value::Number)
                    .unwrap_or(Value::String(value))
            } else {
                Value::String(value)
            };
            map.insert((*column).to_string(), json);
        }
        Value::Object(map)
    }

    /// For an amend row: the round cap it sets.
    pub fn amended_max_rounds(&self) -> Option<u32> {
        self.amendment("max_rounds")?.parse().ok()
    }

    /// For an amend row: the value it gives contract field `field`
    /// (`subject` is `field=value`).
    pub fn amendment(&self, field: &str) -> Option<&str> {
        if self.kind != Kind::Amend {
            return None;
        }
        let (key, value) = self.subject.split_once('=')?;
        (key == field).then_some(value)
    }
}

/// A row borrowed from the line it was read from (or from a [`Row`]): the
/// same values without an owned string, so a reader that only checks or
/// prints rows allocates nothing per row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowRef<'a> {
    pub round: u32,
    pub kind: Kind,
    pub counts: Option<Counts>,
    pub verdict: Option<Verdict>,
    pub rule: &'a str,
    pub at: &'a str,
    pub cost_usd: Option<f64>,
    pub tokens: Option<u64>,
    pub snapshot: &'a str,
    pub findings_sha256: &'a str,
    pub by: &'a str,
    pub reason: &'a str,
    pub subject: &'a str,
    pub idempotency_key: &'a str,
    pub prev_sha256: &'a str,
    pub row_sha256: &'a str,
    pub evidence_sha256: &'a str,
}

impl<'a> RowRef<'a> {
    /// Reads a row from its fields (already checked to be `COLUMNS.len()`
    /// long), borrowing its text.
    pub fn from_fields(f: &[&'a str]) -> Result<RowRef<'a>, FieldError> {
        let text = |i: usize| f.get(i).copied().unwrap_or("");
        let bad = |i: usize, problem: &'static str| FieldError {
            column: COLUMNS[i],
            value: text(i).to_string(),
            problem,
        };
        let kind = Kind::parse(text(13))
            .ok_or_else(|| bad(13, "must be round, amend, waive, approve or reject"))?;
        let counts = if text(1).is_empty() {
            None
        } else {
            Some(Counts {
                opened: number(f, 1)?,
                closed: number(f, 2)?,
                reopened: number(f, 3)?,
                must_fix_left: number(f, 4)?,
                below_floor_open: number(f, 5)?,
                diff_added: number(f, 6)?,
                diff_removed: number(f, 7)?,
            })
        };
        let verdict = match text(8) {
            "" => None,
            "continue" => Some(Verdict::Continue),
            "stop" => Some(Verdict::Stop),
            _ => return Err(bad(8, "must be continue, stop or empty")),
        };
        let cost_usd = match text(14) {
            "" => None,
            cost => match cost.parse::<f64>() {
                Ok(c) if c.is_finite() && c >= 0.0 => Some(c),
                _ => return Err(bad(14, "must be a number >= 0 or empty")),
            },
        };
        let tokens = if text(15).is_empty() {
            None
        } else {
            Some(number(f, 15)?)
        };
        Ok(RowRef {
            round: number(f, 0)?,
            kind,
            counts,
            verdict,
            rule: text(9),
            at: text(10),
            cost_usd,
            tokens,
            snapshot: text(16),
            findings_sha256: text(17),
            by: text(19),
            reason: text(20),
            subject: text(21),
            idempotency_key: text(22),
            prev_sha256: text(11),
            row_sha256: text(12),
            evidence_sha256: text(18),
        })
    }

    /// The row, owned.
    pub fn to_row(&self) -> Row {
        Row {
            draft: Draft {
                round: self.round,
                kind: self.kind,
                counts: self.counts,
                verdict: self.verdict,
                rule: self.rule.to_string(),
                at: self.at.to_string(),
                cost_usd: self.cost_usd,
                tokens: self.tokens,
                snapshot: self.snapshot.to_string(),
                findings_sha256: self.findings_sha256.to_string(),
                by: self.by.to_string(),
                reason: self.reason.to_string(),
                subject: self.subject.to_string(),
                idempotency_key: self.idempotency_key.to_string(),
            },
            prev_sha256: self.prev_sha256.to_string(),
            row_sha256: self.row_sha256.to_string(),
            evidence_sha256: self.evidence_sha256.to_string(),
        }
    }

    /// The row's values in column order (see [`Row::values`]).
    pub fn values(&self) -> [Field<'a>; COLUMNS.len()] {
        let count = |f: fn(&Counts) -> u64| Field::Number(self.counts.as_ref().map(f));
        [
            Field::Number(Some(u64::from(self.round))),
            count(|c| u64::from(c.opened)),
            count(|c| u64::from(c.closed)),
            count(|c| u64::from(c.reopened)),
            count(|c| u64::from(c.must_fix_left)),
            count(|c| u64::from(c.below_floor_open)),
            count(|c| c.diff_added),
            count(|c| c.diff_removed),
            Field::Text(self.verdict.map(Verdict::as_str).unwrap_or_default()),
            Field::Text(self.rule),
            Field::Text(self.at),
            Field::Text(self.prev_sha256),
            Field::Text(self.row_sha256),
            Field::Text(self.kind.as_str()),
            Field::Cost(self.cost_usd),
            Field::Number(self.tokens),
            Field::Text(self.snapshot),
            Field::Text(self.findings_sha256),
            Field::Text(self.evidence_sha256),
            Field::Text(self.by),
            Field::Text(self.reason),
            Field::Text(self.subject),
            Field::Text(self.idempotency_key),
        ]
    }
}

fn number<T: std::str::FromStr>(f: &[&str], i: usize) -> Result<T, FieldError> {
    let value = f.get(i).copied().unwrap_or("");
    value.parse().map_err(|_| FieldError {
        column: COLUMNS[i],
        value: value.to_string(),
        problem: "must be a whole number",
    })
}

/// The hash of a row's fields: every column but `row_sha256`, framed, under a
/// versioned domain. `prev_sha256` and `evidence_sha256` are columns, so the
/// hash covers the chain link and the evidence digest.
pub fn hash_fields<S: AsRef<str>>(fields: &[S]) -> String {
    let mut framed = Framed::new("referee.ledger.row.v1");
    for (i, field) in fields.iter().enumerate() {
        if i != ROW_SHA_COLUMN {
            framed.field(field.as_ref().as_bytes());
        }
    }
    framed.finish()
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Row {
        let mut d = Draft::new(Kind::Round, 2, "2026-01-02T03:04:05Z");
        d.counts = Some(Counts {
            opened: 1,
            closed: 2,
            reopened: 0,
            must_fix_left: 3,
            below_floor_open: 4,
            diff_added: 40,
            diff_removed: 7,
        });
        d.verdict = Some(Verdict::Stop);
        d.rule = "round-cap".into();
        d.cost_usd = Some(0.125);
        d.tokens = Some(1200);
        Row::seal(d, &"0".repeat(64), &"e".repeat(64))
    }

    #[test]
    fn fields_round_trip() {
        let row = sample();
        let again = Row::from_fields(&row.fields()).unwrap();
        assert_eq!(row, again);
        assert_eq!(row.fields().len(), COLUMNS.len());
    }

    #[test]
    fn hash_covers_every_column_but_its_own() {
        let row = sample();
        let base = row.fields();
        for i in 0..COLUMNS.len() {
            let mut changed = base.clone();
            changed[i].push('x');
            let same = hash_fields(&changed) == row.row_sha256;
            assert_eq!(same, i == ROW_SHA_COLUMN, "column {}", COLUMNS[i]);
        }
    }

    #[test]
    fn json_uses_numbers_and_nulls() {
        let json = sample().to_json();
        assert_eq!(json["round"], 2);
        assert_eq!(json["cost_usd"], 0.125);
        assert_eq!(json["verdict"], "stop");
        assert_eq!(json["by"], Value::Null);
    }

    #[test]
    fn bad_fields_are_named() {
        let mut f = sample().fields();
        f[8] = "maybe".into();
        assert_eq!(
            Row::from_fields(&f).unwrap_err().to_string(),
            "column `verdict`: must be continue, stop or empty, not `maybe`"
        );
    }
}
