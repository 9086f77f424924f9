//! The anchor's copy of a loop's chain: one line per committed ledger row,
//! its number and `row_sha256`, MACed with the loop's key (SPEC §8.2). The
//! ledger in the work tree can be cut, deleted, edited and re-hashed by the
//! writer; its rows are then checked against this copy, which names the
//! first row that differs and the rows that are gone. Does I/O.
//!
//! An append writes `pending` (the row about to be appended) before the
//! ledger, and the chain line after it: a crash in between leaves a ledger
//! one row ahead whose hash `pending` names, which counts as committed.

use std::io::Write as _;

use hmac::{KeyInit, Mac};

use super::{Anchor, AnchorError};
use crate::statefs;

/// How a ledger's rows stand against the anchor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// This machine has no anchor for the loop (another machine started it,
    /// or an older referee): nothing to check against.
    Unanchored,
    /// Every anchored row is in the ledger as the referee wrote it.
    Holds {
        /// Rows the anchor has.
        rows: usize,
    },
    /// The ledger is not the one the referee wrote.
    Broken(Break),
}

/// What is wrong with a ledger the anchor knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Break {
    /// Rows `first..=last` were committed and are gone from the ledger.
    Lost { first: usize, last: usize },
    /// Row `row` is not the row the referee wrote there.
    Changed { row: usize },
    /// Rows from `from` on were not written by a referee anchored here.
    Unknown { from: usize },
}

impl Break {
    /// The rows gone, for `lost_rounds` and the like.
    pub fn lost(&self) -> Option<(usize, usize)> {
        match self {
            Break::Lost { first, last } => Some((*first, *last)),
            _ => None,
        }
    }
}

impl std::fmt::Display for Break {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Break::Lost { first, last } if first == last => write!(
                f,
                "row {first} was committed and is gone from the ledger (cut or deleted)"
            ),
            Break::Lost { first, last } => write!(
                f,
                "rows {first} to {last} were committed and are gone from the ledger (cut or deleted)"
            ),
            Break::Changed { row } => write!(
                f,
                "row {row} is not the row the referee wrote (edited, and the chain hashed again?)"
            ),
            Break::Unknown { from } => write!(
                f,
                "the rows from {from} on were not written by the referee that anchors this loop here"
            ),
        }
    }
}

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

fn mac(key: &[u8; 32], loop_name: &str, n: usize, hash: &str) -> String {
    let Ok(mut m) = HmacSha256::new_from_slice(key) else {
        // A 32-byte key is always accepted (HMAC takes any length).
        return String::new();
    };
    m.update(b"referee-anchor-row\0");
    m.update(loop_name.as_bytes());
    m.update(b"\0");
    m.update(n.to_string().as_bytes());
    m.update(b"\0");
    m.update(hash.as_bytes());
    crate::digest::hex(&m.finalize().into_bytes())
}

/// One line of `chain` or `pending`: `N HASH MAC`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Line {
    n: usize,
    hash: String,
}

fn format_line(key: &[u8; 32], loop_name: &str, n: usize, hash: &str) -> String {
    format!("{n} {hash} {}\n", mac(key, loop_name, n, hash))
}

fn parse_lines(
    key: &[u8; 32],
    loop_name: &str,
    text: &str,
    path: &std::path::Path,
) -> Result<Vec<Line>, AnchorError> {
    let bad = |i: usize, what: &str| AnchorError::Bad {
        path: path.to_path_buf(),
        what: format!("line {}: {what}", i + 1),
    };
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let mut words = line.split(' ');
        let (Some(n), Some(hash), Some(tag), None) =
            (words.next(), words.next(), words.next(), words.next())
        else {
            return Err(bad(i, "is not `number hash mac`"));
        };
        let n: usize = n
            .parse()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| bad(i, "has no row number"))?;
        if tag != mac(key, loop_name, n, hash) {
            return Err(bad(
                i,
                "its MAC does not match the loop's key (the anchor was edited)",
            ));
        }
        if n != lines.len() + 1 {
            return Err(bad(i, "rows are not consecutive from 1"));
        }
        lines.push(Line {
            n,
            hash: hash.to_string(),
        });
    }
    Ok(lines)
}

/// How `hashes` (the ledger's rows) stand against the anchored `lines`
/// (rows 1, 2, …) and the row `pending` was about to commit.
fn compare(mut lines: Vec<Line>, pending: Option<&Line>, hashes: &[&str]) -> Standing {
    // A crash between the ledger's append and the chain's: the row the
    // anchor was about to commit is committed.
    if let Some(p) = pending
        && p.n == lines.len() + 1
        && hashes.get(p.n - 1) == Some(&p.hash.as_str())
    {
        lines.push(p.clone());
    }
    for (i, line) in lines.iter().enumerate() {
        match hashes.get(i) {
            Some(hash) if *hash == line.hash => {}
            Some(_) => return Standing::Broken(Break::Changed { row: i + 1 }),
            None => {
                return Standing::Broken(Break::Lost {
                    first: hashes.len() + 1,
                    last: lines.len(),
                });
            }
        }
    }
    if hashes.len() > lines.len() {
        return Standing::Broken(Break::Unknown {
            from: lines.len() + 1,
        });
    }
    Standing::Holds { rows: lines.len() }
}

impl Anchor {
    fn loop_name(&self) -> String {
        self.dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// The lines of the anchor file `name`; `None` when it is missing.
    fn read_lines(&self, key: &[u8; 32], name: &str) -> Result<Option<Vec<Line>>, AnchorError> {
        let path = self.file(name);
        let Some(bytes) = statefs::read(&self.root, &path)? else {
            return Ok(None);
        };
        parse_lines(
            key,
            &self.loop_name(),
            &String::from_utf8_lossy(&bytes),
            &path,
        )
        .map(Some)
    }

    /// How the ledger's rows (their `row_sha256`, in order) stand against
    /// the anchor.
    pub fn check(&self, hashes: &[&str]) -> Result<Standing, AnchorError> {
        let Some(key) = self.key()? else {
            return Ok(Standing::Unanchored);
        };
        // A key without a chain: the loop's folder was made (by a lock)
        // before its ledger was anchored.
        let Some(lines) = self.read_lines(&key, "chain")? else {
            return Ok(Standing::Unanchored);
        };
        let pending = self.read_pending(&key)?;
        Ok(compare(lines, pending.as_ref(), hashes))
    }

    fn read_pending(&self, key: &[u8; 32]) -> Result<Option<Line>, AnchorError> {
        let path = self.file("pending");
        let Some(bytes) = statefs::read(&self.root, &path)? else {
            return Ok(None);
        };
        let text = String::from_utf8_lossy(&bytes);
        let mut words = text.trim_end().split(' ');
        let (Some(n), Some(hash), Some(tag)) = (words.next(), words.next(), words.next()) else {
            return Ok(None);
        };
        let Ok(n) = n.parse::<usize>() else {
            return Ok(None);
        };
        Ok(
            (n > 0 && tag == mac(key, &self.loop_name(), n, hash)).then(|| Line {
                n,
                hash: hash.to_string(),
            }),
        )
    }

    /// Anchors a ledger the referee has not anchored yet (or only partly:
    /// a loop started on another machine, or by an older referee): its
    /// current rows are taken as they are.
    pub fn adopt(&self, hashes: &[&str]) -> Result<(), AnchorError> {
        self.create()?;
        let key = self.key()?.ok_or_else(|| AnchorError::Bad {
            path: self.file("key"),
            what: "is missing".into(),
        })?;
        if self.read_lines(&key, "chain")?.is_some() {
            return Ok(());
        }
        let name = self.loop_name();
        let mut text = String::new();
        for (i, hash) in hashes.iter().enumerate() {
            text.push_str(&format_line(&key, &name, i + 1, hash));
        }
        statefs::replace(&self.root, &self.file("chain"), text.as_bytes())?;
        Ok(())
    }

    /// Under the ledger's exclusive lock, before an append: a row `pending`
    /// names that the ledger holds (an append killed after its row was
    /// written, before the chain had it) goes into the chain; a pending
    /// row the ledger does not hold (killed before its row) is dropped.
    pub fn settle(&self, hashes: &[&str]) -> Result<(), AnchorError> {
        let Some(key) = self.key()? else {
            return Ok(());
        };
        let Some(pending) = self.read_pending(&key)? else {
            return Ok(());
        };
        let Some(lines) = self.read_lines(&key, "chain")? else {
            return Ok(());
        };
        if pending.n == lines.len() + 1 && hashes.get(pending.n - 1) == Some(&pending.hash.as_str())
        {
            return self.commit(pending.n, &pending.hash);
        }
        let _ = std::fs::remove_file(self.file("pending"));
        Ok(())
    }

    /// Before appending row `n` with `hash` to the ledger.
    pub fn pending(&self, n: usize, hash: &str) -> Result<(), AnchorError> {
        let key = self.key_made()?;
        let line = format_line(&key, &self.loop_name(), n, hash);
        statefs::replace(&self.root, &self.file("pending"), line.as_bytes())?;
        Ok(())
    }

    /// After row `n` with `hash` was appended to the ledger and synced.
    pub fn commit(&self, n: usize, hash: &str) -> Result<(), AnchorError> {
        let key = self.key_made()?;
        let path = self.file("chain");
        let lines = self.read_lines(&key, "chain")?.unwrap_or_default();
        if lines.len() + 1 == n {
            let mut file = statefs::open_append(&self.root, &path)?;
            file.write_all(format_line(&key, &self.loop_name(), n, hash).as_bytes())
                .and_then(|()| file.sync_data())
                .map_err(|cause| statefs::FsError::Io {
                    action: "write",
                    path: path.clone(),
                    cause,
                })?;
        }
        let _ = std::fs::remove_file(self.file("pending"));
        Ok(())
    }

    fn key_made(&self) -> Result<[u8; 32], AnchorError> {
        self.create()?;
        self.key()?.ok_or_else(|| AnchorError::Bad {
            path: self.file("key"),
            what: "is missing".into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: [u8; 32] = [7; 32];

    fn chain(hashes: &[&str]) -> String {
        hashes
            .iter()
            .enumerate()
            .map(|(i, h)| format_line(&KEY, "l", i + 1, h))
            .collect()
    }

    #[test]
    fn a_line_reads_back_only_with_its_mac() {
        let path = std::path::Path::new("chain");
        let text = chain(&["aa", "bb"]);
        let lines = parse_lines(&KEY, "l", &text, path).expect("lines");
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1].hash, "bb");
        // Another loop's key or name, an edited hash, a gap: refused.
        assert!(parse_lines(&[8; 32], "l", &text, path).is_err());
        assert!(parse_lines(&KEY, "m", &text, path).is_err());
        let edited = text.replacen("bb", "cc", 1);
        assert!(parse_lines(&KEY, "l", &edited, path).is_err());
        let gap = format!(
            "{}{}",
            format_line(&KEY, "l", 1, "aa"),
            format_line(&KEY, "l", 3, "cc")
        );
        assert!(parse_lines(&KEY, "l", &gap, path).is_err());
        assert!(parse_lines(&KEY, "l", &format_line(&KEY, "l", 2, "bb"), path).is_err());
        assert!(parse_lines(&KEY, "l", "1 aa\n", path).is_err());
    }

    fn lines(from: usize, hashes: &[&str]) -> Vec<Line> {
        hashes
            .iter()
            .enumerate()
            .map(|(i, h)| Line {
                n: from + i,
                hash: (*h).to_string(),
            })
            .collect()
    }

    #[test]
    fn a_ledger_stands_against_its_anchor() {
        let holds = |rows| Standing::Holds { rows };
        let broken = Standing::Broken;
        type Case<'a> = (Vec<Line>, Option<Line>, Vec<&'a str>, Standing);
        let table: Vec<Case> = vec![
            // Nothing anchored yet, nothing written.
            (vec![], None, vec![], holds(0)),
            (lines(1, &["a", "b"]), None, vec!["a", "b"], holds(2)),
            // Rows written where the anchor has none.
            (vec![], None, vec!["x"], broken(Break::Unknown { from: 1 })),
            // Cut: the last row is gone; deleted: every row is.
            (
                lines(1, &["a", "b"]),
                None,
                vec!["a"],
                broken(Break::Lost { first: 2, last: 2 }),
            ),
            (
                lines(1, &["a", "b"]),
                None,
                vec![],
                broken(Break::Lost { first: 1, last: 2 }),
            ),
            // Edited and hashed again: the first row that differs.
            (
                lines(1, &["a", "b", "c"]),
                None,
                vec!["a", "B", "C"],
                broken(Break::Changed { row: 2 }),
            ),
            // A row appended by someone else.
            (
                lines(1, &["a"]),
                None,
                vec!["a", "z"],
                broken(Break::Unknown { from: 2 }),
            ),
            // A crash after the ledger's append: the pending row counts…
            (
                lines(1, &["a"]),
                Some(lines(2, &["b"]).remove(0)),
                vec!["a", "b"],
                holds(2),
            ),
            // …but only as the row it names, and only next in line.
            (
                lines(1, &["a"]),
                Some(lines(2, &["b"]).remove(0)),
                vec!["a", "z"],
                broken(Break::Unknown { from: 2 }),
            ),
            (
                lines(1, &["a"]),
                Some(lines(2, &["b"]).remove(0)),
                vec!["a"],
                holds(1),
            ),
            (
                lines(1, &["a"]),
                Some(lines(3, &["c"]).remove(0)),
                vec!["a", "b", "c"],
                broken(Break::Unknown { from: 2 }),
            ),
        ];
        for (i, (anchored, pending, hashes, want)) in table.into_iter().enumerate() {
            assert_eq!(
                compare(anchored, pending.as_ref(), &hashes),
                want,
                "case {i}"
            );
        }
    }
}
