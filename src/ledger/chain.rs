//! Reading ledger bytes into rows and checking the hash chain. Pure: the
//! store hands in the bytes and the evidence digests it computed.

use super::row::{COLUMNS, Row, RowRef, hash_fields, header};

/// A ledger file, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// Committed rows in file order (row 1 first).
    pub rows: Vec<Row>,
    /// Each row's fields hashed as written (the text, not the parsed values,
    /// so an edit that parses the same is still seen).
    pub hashes: Vec<String>,
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
    #[error(
        "torn final line after row {after} ({len} bytes, a crash mid-append; it was never a committed row)\nhint: run `referee ledger repair` to remove it"
    )]
    Torn { after: usize, len: usize },
    /// `line` is `header` or `row N`.
    #[error(
        "{line} ends with `\\r\\n`: the ledger was converted to CRLF line endings, probably by git's autocrlf\n\
         hint: convert it back to LF (`dos2unix FILE`, or `sed -i 's/\\r$//' FILE`): the rows' hashes are over LF lines; \
         `referee init` writes `.referee/.gitattributes` (`* -text`) so that git leaves them alone"
    )]
    Crlf { line: String },
}

impl ChainError {
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
    parse_with(bytes, false)
}

/// [`parse`], also hashing each row's fields as written, for [`verify`].
pub fn parse_hashed(bytes: &[u8]) -> Result<Parsed, ChainError> {
    parse_with(bytes, true)
}

fn parse_with(bytes: &[u8], hash: bool) -> Result<Parsed, ChainError> {
    let mut rows = Vec::new();
    let mut hashes = Vec::new();
    let torn = each_row(bytes, hash, |_, row, computed| {
        rows.push(row.to_row());
        hashes.extend(computed);
        Ok(())
    })?;
    Ok(Parsed { rows, hashes, torn })
}

/// Checks that every committed row `read` gives reads (the header, each
/// row's fields and values), keeping nothing; returns the torn tail, if
/// any. A reader that must not show half a ledger checks it first, then
/// walks it with [`each_view`].
pub fn check(read: &mut impl std::io::Read) -> Result<Option<Torn>, StreamError> {
    each_row_read(read, Lines::default(), false, |_, _, _| Ok(()))
}

/// [`check`] of rows alone: `read` starts at a row (the part of a ledger
/// after a line break past its header), and its rows are numbered from 1.
/// For a ledger checked in parts at once; a part that does not pass is
/// checked again whole, which names the row as it stands in the ledger.
pub fn check_rows(read: &mut impl std::io::Read) -> Result<Option<Torn>, StreamError> {
    each_row_read(read, Lines { rows: Some(0) }, false, |_, _, _| Ok(()))
}

/// Hands each committed row `read` gives to `f`, borrowed from its line,
/// with its number; returns the torn tail, if any.
pub fn each_view(
    read: &mut impl std::io::Read,
    mut f: impl FnMut(usize, &RowRef<'_>) -> Result<(), ChainError>,
) -> Result<Option<Torn>, StreamError> {
    each_row_read(read, Lines::default(), false, |n, row, _| f(n, &row))
}

/// Reads `bytes` row by row, handing each to `f` with its number and (when
/// `hash`) the hash of its fields as written; returns the torn tail, if any.
fn each_row(
    bytes: &[u8],
    hash: bool,
    mut f: impl FnMut(usize, RowRef<'_>, Option<String>) -> Result<(), ChainError>,
) -> Result<Option<Torn>, ChainError> {
    let committed_len = match memchr::memrchr(b'\n', bytes) {
        Some(i) => i + 1,
        None => 0,
    };
    let (committed, tail) = bytes.split_at(committed_len);
    let mut lines = Lines::default();
    lines.each(committed, hash, &mut f)?;
    Ok(torn(committed_len as u64, tail))
}

fn torn(offset: u64, tail: &[u8]) -> Option<Torn> {
    (!tail.is_empty()).then(|| Torn {
        offset,
        bytes: tail.to_vec(),
    })
}

/// What went wrong reading a ledger from a file: the file, or its bytes.
#[derive(Debug)]
pub enum StreamError {
    Io(std::io::Error),
    Chain(ChainError),
}

/// [`each_row`] over a reader, a chunk at a time: the ledger is never held
/// whole (nor copied as it grows, nor paged in fresh).
fn each_row_read(
    read: &mut impl std::io::Read,
    mut lines: Lines,
    hash: bool,
    mut f: impl FnMut(usize, RowRef<'_>, Option<String>) -> Result<(), ChainError>,
) -> Result<Option<Torn>, StreamError> {
    let mut chunks = Chunks::new(read);
    let (mut buf, mut offset) = (Vec::new(), 0u64);
    while let Some(len) = chunks.next(&mut buf).map_err(StreamError::Io)? {
        lines
            .each(&buf[..len], hash, &mut f)
            .map_err(StreamError::Chain)?;
        offset += len as u64;
    }
    Ok(torn(offset, chunks.rest()))
}

/// A ledger's bytes read in chunks of whole lines (about 256 KiB, or one
/// longer line) into buffers the caller keeps and reuses; what follows the
/// last line break is [`Chunks::rest`] once they are all read. A buffer
/// keeps its length between chunks, so it is zeroed only when it grows, and
/// each read asks for all of its room (one `read` call per chunk).
pub struct Chunks<R> {
    read: R,
    /// Bytes read past the last whole line.
    carry: Vec<u8>,
}

impl<R: std::io::Read> Chunks<R> {
    const SIZE: usize = 256 << 10;

    pub fn new(read: R) -> Chunks<R> {
        Chunks {
            read,
            carry: Vec::new(),
        }
    }

    /// The next chunk, as `buf[..len]` (what else `buf` holds is not the
    /// ledger's); `None` at the end.
    pub fn next(&mut self, buf: &mut Vec<u8>) -> std::io::Result<Option<usize>> {
        let room = Self::SIZE.max(self.carry.len() * 2);
        if buf.len() < room {
            buf.resize(room, 0);
        }
        let mut filled = self.carry.len();
        buf[..filled].copy_from_slice(&self.carry);
        self.carry.clear();
        loop {
            if filled == buf.len() {
                // One line longer than the buffer: make room for it.
                buf.resize(buf.len() * 2, 0);
            }
            let n = match self.read.read(&mut buf[filled..]) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            // Only the new bytes can hold the last line break.
            match memchr::memrchr(b'\n', &buf[filled..filled + n]) {
                Some(last) => {
                    let end = filled + last + 1;
                    self.carry.extend_from_slice(&buf[end..filled + n]);
                    return Ok(Some(end));
                }
                None if n > 0 => filled += n,
                None => {
                    self.carry.extend_from_slice(&buf[..filled]);
                    return Ok(None);
                }
            }
        }
    }

    /// The bytes after the last line break, once [`Chunks::next`] said the
    /// end.
    pub fn rest(&self) -> &[u8] {
        &self.carry
    }
}

/// Hands each row of `bytes`, whole lines of a ledger, to `f` with its
/// number: the first line is the header when `rows_before` is `None`, else
/// the row after `rows_before` rows. Lines after the last line break are
/// not read.
pub fn each_view_in(
    bytes: &[u8],
    rows_before: Option<usize>,
    mut f: impl FnMut(usize, &RowRef<'_>) -> Result<(), ChainError>,
) -> Result<(), ChainError> {
    let mut lines = Lines { rows: rows_before };
    lines.each(bytes, false, &mut |n, row, _| f(n, &row))
}

/// The ledger's lines in order: the header first, then rows, numbered from 1.
#[derive(Default)]
struct Lines {
    /// Rows seen so far; `None` until the header has been.
    rows: Option<usize>,
}

impl Lines {
    /// Each complete line of `committed` (which ends with a newline).
    fn each(
        &mut self,
        committed: &[u8],
        hash: bool,
        f: &mut impl FnMut(usize, RowRef<'_>, Option<String>) -> Result<(), ChainError>,
    ) -> Result<(), ChainError> {
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', committed) {
            self.line(&committed[start..end], hash, f)?;
            start = end + 1;
        }
        Ok(())
    }

    fn line(
        &mut self,
        line: &[u8],
        hash: bool,
        f: &mut impl FnMut(usize, RowRef<'_>, Option<String>) -> Result<(), ChainError>,
    ) -> Result<(), ChainError> {
        let Some(rows) = self.rows else {
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
            self.rows = Some(0);
            return Ok(());
        };
        let row_no = rows + 1;
        self.rows = Some(row_no);
        // A row as written ends with its hash, never with a CR.
        if line.ends_with(b"\r") {
            return Err(ChainError::Crlf {
                line: format!("row {row_no}"),
            });
        }
        with_record(line, |fields, plain| {
            let row =
                RowRef::from_fields(fields).map_err(|e| ChainError::row(row_no, e.to_string()))?;
            // The hash covers the row's values; the bytes must also be exactly
            // how referee writes those values, or an edit that keeps the values
            // (a quote added or dropped) would pass. A plain line (no quote,
            // no CR) split at its commas is by construction how referee
            // writes those fields.
            if hash && !plain && !written_as(line, fields) {
                return Err(ChainError::row(
                    row_no,
                    "its bytes are not as referee writes its values (quoting or spacing was edited)",
                ));
            }
            f(row_no, row, hash.then(|| hash_fields(fields)))
        })
        .map_err(|p| ChainError::row(row_no, p))?
    }
}

/// One CSV record from one line.
pub fn read_record(line: &[u8]) -> Result<Vec<String>, String> {
    with_record(line, |fields, _| {
        fields.iter().map(|f| f.to_string()).collect()
    })
}

/// Calls `f` with the fields of the CSV record on `line`, and whether the
/// line was plain. A plain line, with no quote and no carriage return (how
/// referee writes almost every row), is split where it stands, borrowing
/// its fields; any other goes through the CSV state machine, built once per
/// thread and reset per line (building it dominated reading a large ledger).
pub fn with_record<T>(line: &[u8], f: impl FnOnce(&[&str], bool) -> T) -> Result<T, String> {
    thread_local! {
        static READER: std::cell::RefCell<csv_core::Reader> =
            std::cell::RefCell::new(csv_core::ReaderBuilder::new().build());
    }
    let text =
        std::str::from_utf8(line).map_err(|e| format!("not UTF-8 at byte {}", e.valid_up_to()))?;
    if line.is_empty() {
        return Err("empty line".into());
    }
    if memchr::memchr2(b'"', b'\r', line).is_none() {
        let mut fields = [""; COLUMNS.len()];
        let (mut count, mut start) = (0, 0);
        // Commas are ASCII: every split falls on a character boundary.
        each_comma(line, |end| {
            if let Some(field) = fields.get_mut(count) {
                *field = text.get(start..end).unwrap_or_default();
            }
            count += 1;
            start = end + 1;
        });
        if let Some(field) = fields.get_mut(count) {
            *field = text.get(start..).unwrap_or_default();
        }
        count += 1;
        if count != COLUMNS.len() {
            return Err(format!(
                "has {count} fields, the header has {}",
                COLUMNS.len()
            ));
        }
        return Ok(f(&fields, true));
    }
    let owned = READER.with(|reader| split(&mut reader.borrow_mut(), line))?;
    let fields: Vec<&str> = owned.iter().map(String::as_str).collect();
    Ok(f(&fields, false))
}

/// Hands `f` the offset of each comma in `line`, in order, eight bytes at a
/// time: a ledger row has a comma every 15 bytes or so, where a search
/// call per comma costs more than the scan.
fn each_comma(line: &[u8], mut f: impl FnMut(usize)) {
    const COMMAS: u64 = u64::from_le_bytes([b','; 8]);
    const LOW: u64 = u64::from_le_bytes([0x7f; 8]);
    let mut words = line.chunks_exact(8);
    let mut at = 0;
    for word in &mut words {
        let x = u64::from_le_bytes(word.try_into().unwrap_or([0; 8])) ^ COMMAS;
        // The high bit of each byte that was a comma (now 0), exactly: no
        // carry crosses bytes, as each byte's low bits are added alone.
        let mut found = !(((x & LOW) + LOW) | x | LOW);
        while found != 0 {
            f(at + (found.trailing_zeros() / 8) as usize);
            found &= found - 1;
        }
        at += 8;
    }
    for (i, &b) in words.remainder().iter().enumerate() {
        if b == b',' {
            f(at + i);
        }
    }
}

fn split(reader: &mut csv_core::Reader, line: &[u8]) -> Result<Vec<String>, String> {
    use csv_core::ReadRecordResult as R;
    reader.reset();
    let mut out = vec![0u8; line.len() + 1];
    let mut ends = vec![0usize; COLUMNS.len() + 1];
    let (mut input, mut n_out, mut n_ends) = (line, 0usize, 0usize);
    let mut at_eof = false;
    loop {
        let (result, n_in, wrote, ended) =
            reader.read_record(input, &mut out[n_out..], &mut ends[n_ends..]);
        input = &input[n_in..];
        n_out += wrote;
        n_ends += ended;
        match result {
            R::InputEmpty if at_eof => return Err("not a CSV record".into()),
            // The line holds no newline: signal the end of input.
            R::InputEmpty => at_eof = true,
            R::OutputFull => out.resize(out.len() * 2, 0),
            R::OutputEndsFull => ends.resize(ends.len() * 2, 0),
            R::Record => break,
            R::End => return Err("empty line".into()),
        }
    }
    if !input.is_empty() {
        return Err("holds more than one record".into());
    }
    if n_ends != COLUMNS.len() {
        return Err(format!(
            "has {n_ends} fields, the header has {}",
            COLUMNS.len()
        ));
    }
    let mut fields = Vec::with_capacity(n_ends);
    let mut start = 0;
    for &end in &ends[..n_ends] {
        let field = std::str::from_utf8(&out[start..end])
            .map_err(|e| format!("not UTF-8 at byte {}", e.valid_up_to()))?;
        fields.push(field.to_string());
        start = end;
    }
    Ok(fields)
}

/// Whether `line` is exactly the CSV line referee writes for `fields`. The
/// common row needs no quoting: then it is the fields joined by commas.
fn written_as(line: &[u8], fields: &[&str]) -> bool {
    let plain = fields
        .iter()
        .all(|f| !f.bytes().any(|b| matches!(b, b',' | b'"' | b'\n' | b'\r')));
    if plain {
        let mut at = 0;
        for (i, field) in fields.iter().enumerate() {
            if i > 0 {
                if line.get(at) != Some(&b',') {
                    return false;
                }
                at += 1;
            }
            let end = at + field.len();
            if line.get(at..end) != Some(field.as_bytes()) {
                return false;
            }
            at = end;
        }
        return at == line.len();
    }
    let written = write_record(fields);
    written.strip_suffix(b"\n") == Some(line)
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

/// Checks the chain: row 1 links to `contract_sha256`, each later row to the
/// one before, every hash recomputes, and each row's evidence digest equals
/// what `evidence(row)` finds on disk (`None`: no evidence folder). A torn tail
/// is reported after the rows it follows check out.
pub fn verify(
    parsed: &Parsed,
    contract_sha256: &str,
    mut evidence: impl FnMut(&RowRef<'_>) -> Result<Option<String>, String>,
) -> Result<Summary, ChainError> {
    if parsed.hashes.len() != parsed.rows.len() {
        // Parsed by `parse`, not `parse_hashed`: nothing could be checked.
        return Err(ChainError::row(
            0,
            "the ledger was read without its row hashes",
        ));
    }
    let mut prev = contract_sha256.to_string();
    for (i, (row, computed)) in parsed.rows.iter().zip(&parsed.hashes).enumerate() {
        check_row(i + 1, &row.view(), computed, &mut prev, &mut evidence)?;
    }
    if let Some(torn) = &parsed.torn {
        return Err(ChainError::Torn {
            after: parsed.rows.len(),
            len: torn.bytes.len(),
        });
    }
    Ok(Summary {
        rows: parsed.rows.len(),
        rounds: parsed
            .rows
            .iter()
            .filter(|r| r.kind == super::Kind::Round)
            .count(),
        head: parsed.rows.last().map(|r| r.row_sha256.clone()),
    })
}

/// [`verify`] as the ledger is read from `read`, keeping no row and not
/// the file: each checked row is shown to `seen` and dropped (a
/// 100,000-row ledger is never held, as rows or as bytes). Same checks,
/// same messages; the first bad row is named.
pub fn verify_read(
    read: &mut impl std::io::Read,
    contract_sha256: &str,
    mut evidence: impl FnMut(&RowRef<'_>) -> Result<Option<String>, String>,
    mut seen: impl FnMut(usize, &RowRef<'_>),
) -> Result<Summary, StreamError> {
    let mut prev = contract_sha256.to_string();
    let (mut rows, mut rounds) = (0, 0);
    let torn = each_row_read(read, Lines::default(), true, |n, row, computed| {
        check_row(
            n,
            &row,
            computed.as_deref().unwrap_or(""),
            &mut prev,
            &mut evidence,
        )?;
        rows = n;
        rounds += usize::from(row.kind == super::Kind::Round);
        seen(n, &row);
        Ok(())
    })?;
    if let Some(torn) = torn {
        return Err(StreamError::Chain(ChainError::Torn {
            after: rows,
            len: torn.bytes.len(),
        }));
    }
    Ok(Summary {
        rows,
        rounds,
        head: (rows > 0).then_some(prev),
    })
}

/// Row `n` against the chain so far: it links to `prev`, its fields hash to
/// its `row_sha256` (`computed`), and its evidence digest is what is on
/// disk. `prev` moves on to this row's hash.
fn check_row(
    n: usize,
    row: &RowRef<'_>,
    computed: &str,
    prev: &mut String,
    evidence: &mut impl FnMut(&RowRef<'_>) -> Result<Option<String>, String>,
) -> Result<(), ChainError> {
    if row.prev_sha256 != prev.as_str() {
        let problem = if n == 1 {
            format!(
                "prev_sha256 `{}` is not the contract's sha256 `{}`: the contract file changed since round 1, or this row was edited",
                short(row.prev_sha256),
                short(prev)
            )
        } else {
            format!(
                "prev_sha256 `{}` does not link to row {}'s row_sha256 `{}` (a row was edited, removed or reordered)",
                short(row.prev_sha256),
                n - 1,
                short(prev)
            )
        };
        return Err(ChainError::row(n, problem));
    }
    if computed != row.row_sha256 {
        return Err(ChainError::row(
            n,
            format!(
                "hash mismatch: row_sha256 is `{}`, the fields hash to `{}` (the row was edited)",
                short(row.row_sha256),
                short(computed)
            ),
        ));
    }
    let found = evidence(row).map_err(|e| ChainError::row(n, format!("evidence: {e}")))?;
    match (row.evidence_sha256, found) {
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
    prev.clear();
    prev.push_str(row.row_sha256);
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

    /// The word-at-a-time comma scan finds exactly the commas a byte loop
    /// does: every length around the word size, and bytes one off a comma
    /// (`+`, `-`), a comma with its high bit set (0xac), 0x00, 0x7f, 0xff.
    #[test]
    fn each_comma_finds_exactly_the_commas() {
        let alphabet = [b',', b'+', b'-', 0xac, 0x00, 0x7f, 0xff, b'a'];
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        for len in 0..40 {
            for _ in 0..500 {
                let line: Vec<u8> = (0..len)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        alphabet[(seed % 8) as usize]
                    })
                    .collect();
                let mut found = Vec::new();
                each_comma(&line, |at| found.push(at));
                let want: Vec<usize> = (0..len).filter(|&i| line[i] == b',').collect();
                assert_eq!(found, want, "{line:?}");
            }
        }
    }

    fn no_evidence(_: &RowRef<'_>) -> Result<Option<String>, String> {
        Ok(None)
    }

    /// Gives its bytes a few at a time, so lines cross every read.
    struct Trickle<'a>(&'a [u8], usize);

    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.1 = self.1 % 7 + 1;
            let n = self.1.min(buf.len()).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn reading_a_buffer_at_a_time_sees_what_reading_whole_sees() {
        let mut long = Draft::new(Kind::Round, 1, "2026-01-02T03:04:05Z");
        // Longer than the read buffer: it grows for the line.
        long.reason = "r".repeat(600 * 1024);
        let mut bytes = header().into_bytes();
        bytes.push(b'\n');
        let row = Row::seal(long, CONTRACT, "");
        bytes.extend(write_record(&row.fields()));
        let mut prev = row.row_sha256.clone();
        for round in 2..=4 {
            let mut d = Draft::new(Kind::Round, round, "2026-01-02T03:04:05Z");
            d.reason = format!("a \"quoted\", comma'd reason {round}");
            let row = Row::seal(d, &prev, "");
            prev = row.row_sha256.clone();
            bytes.extend(write_record(&row.fields()));
        }
        for cut in [bytes.len(), bytes.len() - 5] {
            let bytes = &bytes[..cut];
            let whole = parse_hashed(bytes).and_then(|p| verify(&p, CONTRACT, no_evidence));
            let mut rows = Vec::new();
            let streamed = verify_read(&mut Trickle(bytes, 0), CONTRACT, no_evidence, |n, r| {
                rows.push((n, r.to_row()))
            });
            let streamed = streamed.map_err(|e| match e {
                StreamError::Chain(e) => e,
                StreamError::Io(e) => panic!("{e}"),
            });
            assert_eq!(streamed, whole, "cut at {cut}");
            let parsed = parse(bytes).unwrap();
            let expected: Vec<(usize, Row)> = parsed
                .rows
                .into_iter()
                .zip(1..)
                .map(|(r, n)| (n, r))
                .collect();
            assert_eq!(rows, expected);
            let mut seen = Vec::new();
            let torn = each_view(&mut Trickle(bytes, 3), |n, r| {
                seen.push((n, r.to_row()));
                Ok(())
            })
            .unwrap_or_else(|_| panic!("each_view"));
            assert_eq!(seen, expected);
            assert_eq!(torn, parsed.torn);
            assert_eq!(check(&mut Trickle(bytes, 5)).ok(), Some(parsed.torn));
        }
    }

    #[test]
    fn a_good_chain_verifies() {
        let parsed = parse_hashed(&ledger(3)).unwrap();
        let summary = verify(&parsed, CONTRACT, no_evidence).unwrap();
        assert_eq!((summary.rows, summary.rounds), (3, 3));
    }

    #[test]
    fn empty_file_has_no_rows() {
        let parsed = parse_hashed(b"").unwrap();
        assert!(parsed.rows.is_empty() && parsed.torn.is_none());
    }

    #[test]
    fn every_single_byte_change_is_caught() {
        let bytes = ledger(3);
        for i in 0..bytes.len() {
            let mut changed = bytes.clone();
            changed[i] = if changed[i] == b'1' { b'2' } else { b'1' };
            let outcome = parse_hashed(&changed).and_then(|p| verify(&p, CONTRACT, no_evidence));
            assert!(outcome.is_err(), "byte {i} changed unnoticed");
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
            let outcome =
                parse_hashed(edited.as_bytes()).and_then(|p| verify(&p, CONTRACT, no_evidence));
            assert!(outcome.is_err(), "{name} passed");
        }
        // The bytes referee writes pass.
        assert!(
            parse_hashed(&bytes)
                .and_then(|p| verify(&p, CONTRACT, no_evidence))
                .is_ok()
        );
    }

    #[test]
    fn a_torn_tail_is_named_after_the_rows_it_follows() {
        let mut bytes = ledger(2);
        let full = ledger(3);
        bytes.extend_from_slice(&full[bytes.len()..bytes.len() + 30]);
        let parsed = parse_hashed(&bytes).unwrap();
        assert_eq!(parsed.rows.len(), 2);
        let err = verify(&parsed, CONTRACT, no_evidence).unwrap_err();
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
        let err = verify(
            &parse_hashed(swapped.as_bytes()).unwrap(),
            CONTRACT,
            no_evidence,
        )
        .unwrap_err();
        assert!(err.to_string().starts_with("row 1: prev_sha256"), "{err}");
        let deleted = format!("{}\n{}\n{}\n", lines[0], lines[1], lines[3]);
        let err = verify(
            &parse_hashed(deleted.as_bytes()).unwrap(),
            CONTRACT,
            no_evidence,
        )
        .unwrap_err();
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
        assert!(
            err.to_string().starts_with(
                "header ends with `\\r\\n`: the ledger was converted to CRLF line endings, probably by git's autocrlf\nhint: "
            ),
            "{err}"
        );
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
        let parsed = parse_hashed(&ledger(1)).unwrap();
        let err = verify(&parsed, &"d".repeat(64), no_evidence).unwrap_err();
        assert!(
            err.to_string()
                .contains("the contract file changed since round 1"),
            "{err}"
        );
    }
}
