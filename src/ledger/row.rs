//! One ledger row: its columns, its typed form and its hash. Pure.

use std::fmt;

use serde_json::{Map, Value};

use crate::digest::Framed;
use crate::money::{Problem, Usd};

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
    pub cost_usd: Option<Usd>,
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

    /// The row's fields in column order, as the ledger's CSV writes them.
    pub fn fields(&self) -> Vec<String> {
        let d = &self.draft;
        let count = |f: fn(&Counts) -> u64| d.counts.map(|c| f(&c).to_string()).unwrap_or_default();
        vec![
            d.round.to_string(),
            count(|c| c.opened.into()),
            count(|c| c.closed.into()),
            count(|c| c.reopened.into()),
            count(|c| c.must_fix_left.into()),
            count(|c| c.below_floor_open.into()),
            count(|c| c.diff_added),
            count(|c| c.diff_removed),
            d.verdict
                .map(Verdict::as_str)
                .unwrap_or_default()
                .to_string(),
            d.rule.clone(),
            d.at.clone(),
            self.prev_sha256.clone(),
            self.row_sha256.clone(),
            d.kind.as_str().to_string(),
            d.cost_usd.map(Usd::plain).unwrap_or_default(),
            d.tokens.map(|t| t.to_string()).unwrap_or_default(),
            d.snapshot.clone(),
            d.findings_sha256.clone(),
            self.evidence_sha256.clone(),
            d.by.clone(),
            d.reason.clone(),
            d.subject.clone(),
            d.idempotency_key.clone(),
        ]
    }

    /// Reads a row from its fields (already checked to be `COLUMNS.len()` long).
    pub fn from_fields<S: AsRef<str>>(f: &[S]) -> Result<Row, FieldError> {
        let text = |i: usize| f.get(i).map_or("", AsRef::as_ref);
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
            cost => match Usd::parse(cost) {
                Ok(c) => Some(c),
                Err(e) if e.problem == Problem::TooLarge => {
                    return Err(bad(14, "must be at most 1000000000 or empty"));
                }
                Err(_) => return Err(bad(14, "must be a number >= 0 or empty")),
            },
        };
        let tokens = if text(15).is_empty() {
            None
        } else {
            Some(number(f, 15)?)
        };
        let draft = Draft {
            round: number(f, 0)?,
            kind,
            counts,
            verdict,
            rule: text(9).to_string(),
            at: text(10).to_string(),
            cost_usd,
            tokens,
            snapshot: text(16).to_string(),
            findings_sha256: text(17).to_string(),
            by: text(19).to_string(),
            reason: text(20).to_string(),
            subject: text(21).to_string(),
            idempotency_key: text(22).to_string(),
        };
        Ok(Row {
            draft,
            prev_sha256: text(11).to_string(),
            row_sha256: text(12).to_string(),
            evidence_sha256: text(18).to_string(),
        })
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

fn number<T: std::str::FromStr, S: AsRef<str>>(f: &[S], i: usize) -> Result<T, FieldError> {
    let value = f.get(i).map_or("", AsRef::as_ref);
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
        d.cost_usd = Some(Usd::from_micros(125_000));
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
        let mut f = sample().fields();
        f[14] = "-0.5".into();
        assert_eq!(
            Row::from_fields(&f).unwrap_err().to_string(),
            "column `cost_usd`: must be a number >= 0 or empty, not `-0.5`"
        );
    }

    #[test]
    fn costs_keep_the_text_rows_were_written_with() {
        // Whole cents and sub-cent amounts as earlier builds wrote them.
        for text in ["1", "0.25", "0.7", "2.55", "0.000123", "12.5"] {
            let mut f = sample().fields();
            f[14] = text.into();
            let row = Row::from_fields(&f).unwrap();
            assert_eq!(row.fields()[14], text);
        }
    }
}
