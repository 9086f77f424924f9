//! Reading ledger bytes into rows and checking the hash chain. Pure: the
//! store hands in the bytes and the evidence digests it computed.

use super::row::{COLUMNS, Row, hash_fields, header};
use crate::exit::Hinted;

/// A ledger file, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// Committed rows in file order (row 1 first).
    pub rows: Vec<Row>,
    /// Bytes after the last complete line: a crash mid-append.
    pub torn: Option<Torn>,
}

/// The torn final line a crash can leave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Torn {
    /// Byte offset where the torn line starts (the length to truncate to).
    pub offset: u64,
    pub bytes: Vec<u8>,
}

/// What is wrong with a ledger, naming the row (1 = first row after the header).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChainError {
    #[error("header: expected the referee ledger header, found `{found}`")]
    Header { found: String },
    #[error("row {row}: {problem}")]
    Row { row: usize, problem: String },
    /// The row's evidence folder could not be read.
    #[error("row {row}: evidence: {problem}")]
    Evidence { row: usize, problem: Hinted },
    #[error(
        "torn final line after row {after} ({len} bytes, a crash mid-append; it was never a committed row)"
    )]
    Torn { after: usize, len: usize },
    /// `line` is `header` or `row N`.
    #[error(
        "{line} ends with `\\r\\n`: the ledger was converted to CRLF line endings, probably by git's autocrlf"
    )]
    Crlf { line: String },
}

impl ChainError {
    /// What to do next, if there is an obvious step.
    pub fn hint(&self) -> Option<String> {
        match self {
            ChainError::Header { .. } | ChainError::Row { .. } => None,
            ChainError::Evidence { problem, .. } => problem.hints.first().cloned(),
            ChainError::Torn { .. } => Some("run `referee ledger repair` to remove it".into()),
            ChainError::Crlf { .. } => Some(
                "convert it back to LF (`dos2unix FILE`, or `sed -i 's/\\r$//' FILE`): the rows' hashes are over LF lines; \
                 `referee init` writes `.referee/.gitattributes` (`* -text`) so that git leaves them alone"
                    .into(),
            ),
        }
    }

    fn row(row: usize, problem: impl Into<String>) -> ChainError {
        ChainError::Row {
            row,
            problem: problem.into(),
        }
    }
}

/// Splits ledger bytes into committed rows and a torn tail. An empty file has
/// no rows. Fails on a bad header or a row that does not read.
pub fn parse(bytes: &[u8]) -> Result<Parsed, ChainError> {
    let mut rows = Vec::new();
    let torn = each_row(bytes, |_, _, row| {
        rows.push(row);
        Ok(())
    })?;
    Ok(Parsed { rows, torn })
}

/// Hands each committed row of `bytes` to `f` with its number and its
/// fields as the line (without its newline) holds them, in order; returns
/// the torn tail, if any.
/// Every row is one line: referee writes free text through
/// [`super::row::one_line`], so a torn tail is always the last line.
fn each_row(
    bytes: &[u8],
    mut f: impl FnMut(usize, Line<'_>, Row) -> Result<(), ChainError>,
) -> Result<Option<Torn>, ChainError> {
    let committed = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let (lines, tail) = bytes.split_at(committed);
    let mut lines = lines
        .split_inclusive(|&b| b == b'\n')
        .map(|l| &l[..l.len() - 1]);
    if let Some(line) = lines.next() {
        let expected = header();
        if line.strip_suffix(b"\r") == Some(expected.as_bytes()) {
            return Err(ChainError::Crlf {
                line: "header".into(),
            });
        }
        if line != expected.as_bytes() {
            return Err(ChainError::Header {
                found: shorten(&String::from_utf8_lossy(line)),
            });
        }
    }
    for (n, line) in (1..).zip(lines) {
        // A row as written ends with its hash, never with a CR.
        if line.ends_with(b"\r") {
            return Err(ChainError::Crlf {
                line: format!("row {n}"),
            });
        }
        let fields = read_record(line).map_err(|problem| ChainError::row(n, problem))?;
        let row = Row::from_fields(&fields).map_err(|e| ChainError::row(n, e.to_string()))?;
        f(
            n,
            Line {
                bytes: line,
                fields: &fields,
            },
            row,
        )?;
    }
    Ok((!tail.is_empty()).then(|| Torn {
        offset: committed as u64,
        bytes: tail.to_vec(),
    }))
}

/// A row's line as the ledger holds it, and its fields as read from it.
struct Line<'a> {
    bytes: &'a [u8],
    fields: &'a [String],
}

/// One CSV record from one line, with as many fields as the header.
pub fn read_record(line: &[u8]) -> Result<Vec<String>, String> {
    std::str::from_utf8(line).map_err(|e| format!("not UTF-8 at byte {}", e.valid_up_to()))?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(line);
    let mut records = reader.records();
    let record = match records.next() {
        None => return Err("empty line".into()),
        Some(record) => record.map_err(|e| e.to_string())?,
    };
    // A lone CR ends a record too.
    if records.next().is_some() {
        return Err("holds more than one record".into());
    }
    if record.len() != COLUMNS.len() {
        return Err(format!(
            "has {} fields, the header has {}",
            record.len(),
            COLUMNS.len()
        ));
    }
    Ok(record.iter().map(str::to_string).collect())
}

/// A row as one CSV line, with its newline.
pub fn write_record<S: AsRef<[u8]>>(fields: &[S]) -> Vec<u8> {
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    // Writing to a Vec cannot fail.
    let _ = writer.write_record(fields);
    writer.into_inner().unwrap_or_default()
}

/// What a verified ledger holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub rows: usize,
    pub rounds: usize,
    pub head: Option<String>,
}

/// Checks the chain of the ledger `bytes`: row 1 links to
/// `contract_sha256`, each later row to the one before, every row is
/// written exactly as referee writes its values and its hash recomputes,
/// and each row's evidence digest equals what `evidence(row)` finds on disk
/// (`None`: no evidence folder). Each row that checks out is shown to
/// `seen` before the next is read, so a caller learns the rows before the
/// first bad one. A torn tail is reported after the rows it follows check
/// out.
pub fn verify(
    bytes: &[u8],
    contract_sha256: &str,
    mut evidence: impl FnMut(&Row) -> Result<Option<String>, Hinted>,
    mut seen: impl FnMut(usize, &Row),
) -> Result<Summary, ChainError> {
    let mut prev = contract_sha256.to_string();
    let (mut rows, mut rounds) = (0, 0);
    let torn = each_row(bytes, |n, line, row| {
        check_row(n, line, &row, &prev, &mut evidence)?;
        prev.clone_from(&row.row_sha256);
        rows = n;
        rounds += usize::from(row.kind == super::Kind::Round);
        seen(n, &row);
        Ok(())
    })?;
    if let Some(torn) = torn {
        return Err(ChainError::Torn {
            after: rows,
            len: torn.bytes.len(),
        });
    }
    Ok(Summary {
        rows,
        rounds,
        head: (rows > 0).then_some(prev),
    })
}

/// Row `n`, read from `line`, against the chain so far: its bytes are how
/// referee writes its fields, it links to `prev`, its fields (the text, not
/// the parsed values, so an edit that parses the same is still seen) hash
/// to its `row_sha256`, and its evidence digest is what is on disk.
fn check_row(
    n: usize,
    line: Line<'_>,
    row: &Row,
    prev: &str,
    evidence: &mut impl FnMut(&Row) -> Result<Option<String>, Hinted>,
) -> Result<(), ChainError> {
    // The hash covers the row's fields; the bytes must also be exactly how
    // referee writes those fields, or an edit that keeps them (a quote
    // added or dropped) would pass.
    if write_record(line.fields).strip_suffix(b"\n") != Some(line.bytes) {
        return Err(ChainError::row(
            n,
            "its bytes are not as referee writes its values (quoting or spacing was edited)",
        ));
    }
    if row.prev_sha256 != prev {
        let problem = if n == 1 {
            format!(
                "prev_sha256 `{}` is not the contract's sha256 `{}`: the contract file changed since round 1, or this row was edited",
                short(&row.prev_sha256),
                short(prev)
            )
        } else {
            format!(
                "prev_sha256 `{}` does not link to row {}'s row_sha256 `{}` (a row was edited, removed or reordered)",
                short(&row.prev_sha256),
                n - 1,
                short(prev)
            )
        };
        return Err(ChainError::row(n, problem));
    }
    let computed = hash_fields(line.fields);
    if computed != row.row_sha256 {
        return Err(ChainError::row(
            n,
            format!(
                "hash mismatch: row_sha256 is `{}`, the fields hash to `{}` (the row was edited)",
                short(&row.row_sha256),
                short(&computed)
            ),
        ));
    }
    let found = evidence(row).map_err(|problem| ChainError::Evidence { row: n, problem })?;
    match (row.evidence_sha256.as_str(), found) {
        ("", None) => {}
        ("", Some(_)) => {
            return Err(ChainError::row(
                n,
                "evidence folder exists but the row records none",
            ));
        }
        (_, None) => return Err(ChainError::row(n, "evidence folder is missing")),
        (want, Some(got)) if want != got => {
            return Err(ChainError::row(
                n,
                format!(
                    "evidence digest mismatch: recorded `{}`, the folder hashes to `{}` (an evidence file was changed, added or removed)",
                    short(want),
                    short(&got)
                ),
            ));
        }
        _ => {}
    }
    Ok(())
}

/// The first 12 hex digits: enough to tell hashes apart in a message.
pub fn short(hash: &str) -> String {
    hash.chars().take(12).collect()
}

fn shorten(text: &str) -> String {
    if text.chars().count() > 80 {
        format!("{}…", text.chars().take(80).collect::<String>())
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::super::row::{Counts, Draft, Kind, Verdict};
    use super::*;

    const CONTRACT: &str = "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc";

    fn ledger(n: u32) -> Vec<u8> {
        let mut out = header().into_bytes();
        out.push(b'\n');
        let mut prev = CONTRACT.to_string();
        for round in 1..=n {
            let mut d = Draft::new(Kind::Round, round, "2026-01-02T03:04:05Z");
            d.counts = Some(Counts {
                opened: round,
                ..Counts::default()
            });
            d.verdict = Some(Verdict::Continue);
            let row = Row::seal(d, &prev, "");
            prev = row.row_sha256.clone();
            out.extend(write_record(&row.fields()));
        }
        out
    }

    /// A one-row ledger whose row records `recorded` as its evidence digest.
    fn with_evidence(recorded: &str) -> Vec<u8> {
        let mut out = header().into_bytes();
        out.push(b'\n');
        let mut d = Draft::new(Kind::Round, 1, "2026-01-02T03:04:05Z");
        d.verdict = Some(Verdict::Continue);
        out.extend(write_record(&Row::seal(d, CONTRACT, recorded).fields()));
        out
    }

    /// The evidence on disk against the digest a row records: each of the
    /// four ways they can disagree is named, and agreeing is no error.
    #[test]
    fn evidence_on_disk_must_be_what_the_row_records() {
        let on_disk = |found: Option<&str>| {
            let found = found.map(str::to_string);
            move |_: &Row| Ok(found.clone())
        };
        let check = |bytes: &[u8], found: Option<&str>| {
            verify(bytes, CONTRACT, on_disk(found), |_, _| {})
                .map(|s| s.rows)
                .map_err(|e| e.to_string())
        };
        let recorded = with_evidence("ee11");
        let none = with_evidence("");
        assert_eq!(check(&recorded, Some("ee11")), Ok(1));
        assert_eq!(check(&none, None), Ok(1));
        let err = check(&none, Some("ee11")).unwrap_err();
        assert!(
            err.contains("evidence folder exists but the row records none"),
            "{err}"
        );
        let err = check(&recorded, None).unwrap_err();
        assert!(err.contains("evidence folder is missing"), "{err}");
        let err = check(&recorded, Some("ff22")).unwrap_err();
        assert!(
            err.contains("evidence digest mismatch: recorded `ee11`, the folder hashes to `ff22`"),
            "{err}"
        );
    }

    /// A header that is not referee's is shown as found, cut at 80
    /// characters; one of 80 is shown whole.
    #[test]
    fn a_wrong_header_is_shown_as_found_and_cut_when_long() {
        let shown = |header: &str| match parse(format!("{header}\n").as_bytes()) {
            Err(ChainError::Header { found }) => found,
            other => panic!("{header:?}: {:?}", other.map(|p| p.rows.len())),
        };
        assert_eq!(shown("round,verdict"), "round,verdict");
        let long = "x".repeat(120);
        assert_eq!(shown(&long), format!("{}…", "x".repeat(80)));
        let eighty = "y".repeat(80);
        assert_eq!(shown(&eighty), eighty);
    }

    fn no_evidence(_: &Row) -> Result<Option<String>, Hinted> {
        Ok(None)
    }

    fn verified(bytes: &[u8]) -> Result<Summary, ChainError> {
        verify(bytes, CONTRACT, no_evidence, |_, _| {})
    }

    /// A row with quotes, commas and a long reason reads back as it was
    /// sealed, and its chain verifies.
    #[test]
    fn quoted_and_long_fields_read_back_and_verify() {
        let mut bytes = header().into_bytes();
        bytes.push(b'\n');
        let mut prev = CONTRACT.to_string();
        let mut sealed = Vec::new();
        for (round, reason) in [
            (1, "r".repeat(100_000)),
            (2, "a \"quoted\", comma'd reason".into()),
        ] {
            let mut d = Draft::new(Kind::Round, round, "2026-01-02T03:04:05Z");
            d.reason = reason;
            let row = Row::seal(d, &prev, "");
            prev = row.row_sha256.clone();
            bytes.extend(write_record(&row.fields()));
            sealed.push(row);
        }
        assert_eq!(parse(&bytes).unwrap().rows, sealed);
        let summary = verified(&bytes).unwrap();
        assert_eq!((summary.rows, summary.head), (2, Some(prev)));
    }

    /// `verify` shows each row that checks out, in order, and stops at the
    /// first bad one, naming it (`ledger verify` tells the anchor the rows
    /// before it).
    #[test]
    fn verify_shows_the_rows_before_the_first_bad_one() {
        let text = String::from_utf8(ledger(4)).unwrap();
        let mut lines: Vec<String> = text.lines().map(String::from).collect();
        lines[3] = lines[3].replacen(",continue,", ",stop,", 1);
        let edited = lines.join("\n") + "\n";
        let mut seen = Vec::new();
        let err = verify(edited.as_bytes(), CONTRACT, no_evidence, |n, row| {
            seen.push((n, row.round))
        })
        .unwrap_err();
        assert!(err.to_string().starts_with("row 3: hash mismatch"), "{err}");
        assert_eq!(seen, [(1, 1), (2, 2)]);
    }

    /// Lines that are not one record of the header's fields are named.
    #[test]
    fn rows_that_do_not_read_are_named() {
        let text = String::from_utf8(ledger(1)).unwrap();
        let head = header();
        for (line, problem) in [
            ("", "row 1: empty line"),
            ("a,b", "row 1: has 2 fields, the header has 23"),
            ("1,\ra", "row 1: holds more than one record"),
        ] {
            let bytes = format!("{head}\n{line}\n");
            assert_eq!(parse(bytes.as_bytes()).unwrap_err().to_string(), problem);
        }
        let mut bytes = text.into_bytes();
        let at = bytes.len() - 3;
        bytes[at] = 0xff;
        assert_eq!(
            parse(&bytes).unwrap_err().to_string(),
            format!("row 1: not UTF-8 at byte {}", at - head.len() - 1)
        );
    }

    #[test]
    fn a_good_chain_verifies() {
        let summary = verified(&ledger(3)).unwrap();
        assert_eq!((summary.rows, summary.rounds), (3, 3));
    }

    #[test]
    fn empty_file_has_no_rows() {
        let parsed = parse(b"").unwrap();
        assert!(parsed.rows.is_empty() && parsed.torn.is_none());
        assert_eq!(verified(b"").unwrap().head, None);
    }

    #[test]
    fn every_single_byte_change_is_caught() {
        let bytes = ledger(3);
        for i in 0..bytes.len() {
            let mut changed = bytes.clone();
            changed[i] = if changed[i] == b'1' { b'2' } else { b'1' };
            assert!(verified(&changed).is_err(), "byte {i} changed unnoticed");
        }
    }

    #[test]
    fn edits_that_keep_the_values_are_caught() {
        let bytes = ledger(3);
        let text = String::from_utf8(bytes.clone()).unwrap();
        let rows: Vec<&str> = text.lines().collect();
        let row = rows[2];
        let first_field_end = row.find(',').unwrap();
        let quoted = format!("\"{}\"{}", &row[..first_field_end], &row[first_field_end..]);
        for (name, edited) in [
            (
                "a CR before the newline",
                text.replacen(&format!("{row}\n"), &format!("{row}\r\n"), 1),
            ),
            ("a field quoted", text.replacen(row, &quoted, 1)),
        ] {
            assert_ne!(edited.as_bytes(), bytes.as_slice(), "{name}");
            assert!(verified(edited.as_bytes()).is_err(), "{name} passed");
        }
        // The bytes referee writes pass.
        assert!(verified(&bytes).is_ok());
    }

    #[test]
    fn a_torn_tail_is_named_after_the_rows_it_follows() {
        let mut bytes = ledger(2);
        let full = ledger(3);
        bytes.extend_from_slice(&full[bytes.len()..bytes.len() + 30]);
        let parsed = parse(&bytes).unwrap();
        assert_eq!(parsed.rows.len(), 2);
        assert_eq!(parsed.torn.map(|t| t.offset), Some(bytes.len() as u64 - 30));
        let err = verified(&bytes).unwrap_err();
        assert!(
            matches!(err, ChainError::Torn { after: 2, len: 30 }),
            "{err}"
        );
    }

    #[test]
    fn reordered_and_deleted_rows_break_the_link() {
        let bytes = ledger(3);
        let text = String::from_utf8(bytes).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let swapped = format!("{}\n{}\n{}\n{}\n", lines[0], lines[2], lines[1], lines[3]);
        let err = verified(swapped.as_bytes()).unwrap_err();
        assert!(err.to_string().starts_with("row 1: prev_sha256"), "{err}");
        let deleted = format!("{}\n{}\n{}\n", lines[0], lines[1], lines[3]);
        let err = verified(deleted.as_bytes()).unwrap_err();
        assert!(err.to_string().starts_with("row 2: prev_sha256"), "{err}");
    }

    #[test]
    fn crlf_line_endings_are_named() {
        let lf = ledger(3);
        let crlf: Vec<u8> = lf
            .iter()
            .flat_map(|&b| {
                if b == b'\n' {
                    vec![b'\r', b'\n']
                } else {
                    vec![b]
                }
            })
            .collect();
        let err = parse(&crlf).unwrap_err();
        assert_eq!(
            err,
            ChainError::Crlf {
                line: "header".into()
            }
        );
        assert_eq!(
            err.to_string(),
            "header ends with `\\r\\n`: the ledger was converted to CRLF line endings, probably by git's autocrlf"
        );
        assert!(err.hint().is_some_and(|hint| hint.contains("dos2unix")));
        // One row saved with CRLF (an editor): named by its number.
        let text = String::from_utf8(lf).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let mixed = format!("{}\n{}\n{}\r\n{}\n", lines[0], lines[1], lines[2], lines[3]);
        assert_eq!(
            parse(mixed.as_bytes()).unwrap_err(),
            ChainError::Crlf {
                line: "row 2".into()
            }
        );
    }

    #[test]
    fn another_contract_breaks_row_one() {
        let err = verify(&ledger(1), &"d".repeat(64), no_evidence, |_, _| {}).unwrap_err();
        assert!(
            err.to_string()
                .contains("the contract file changed since round 1"),
            "{err}"
        );
    }
}
