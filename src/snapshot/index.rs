//! git's index file, read for the two flags a snapshot must clear
//! (assume-unchanged, skip-worktree) and for whether referee may write its
//! copy without a trailing hash. Pure: bytes in, entries out.
//!
//! The format is git's `gitformat-index(5)`, versions 2 to 4. Anything this
//! reader does not follow to the last byte (another version, a split or
//! sparse index, a truncated entry, extensions that do not end where the
//! trailing hash starts) gives `None`, and the caller asks `git ls-files`
//! instead: a wrong answer here would hide a change from the snapshot, a
//! `None` only costs a process.

use std::borrow::Cow;

/// One index entry: its path and the flags that would hide its change.
/// The path is borrowed from the file's bytes (versions 2 and 3); version
/// 4 compresses paths against the one before, so each is built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<'a> {
    pub path: Cow<'a, [u8]>,
    /// `CE_VALID`: git trusts the entry without looking at the file
    /// (`update-index --assume-unchanged`).
    pub assume_unchanged: bool,
    /// `CE_SKIP_WORKTREE` (`update-index --skip-worktree`, sparse checkout).
    pub skip_worktree: bool,
}

/// What [`read`] found in an index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Index<'a> {
    /// Every entry, in the file's order (unmerged paths once per stage).
    pub entries: Vec<Entry<'a>>,
    /// The file ends in a hash git checks (not the all-zero one
    /// `index.skipHash` writes).
    pub hashed: bool,
}

const ASSUME_VALID: u16 = 0x8000;
const EXTENDED: u16 = 0x4000;
const NAME_MASK: u16 = 0x0fff;
const SKIP_WORKTREE: u16 = 0x4000;
/// The fixed part of an entry before its object id: ten 32-bit stat fields.
const STAT_LEN: usize = 40;
/// A sparse index's folder entries have this mode; the reader leaves them
/// to git, which knows how to expand them.
const MODE_DIR: u32 = 0o040000;

/// The entries of the index `bytes`, whose object ids are `hash_len` bytes
/// long (20 for SHA-1, 32 for SHA-256), or `None` when the file is anything
/// the reader does not follow to its last byte.
pub fn read(bytes: &[u8], hash_len: usize) -> Option<Index<'_>> {
    let mut at = Cursor { bytes, at: 0 };
    if at.take(4)? != b"DIRC" {
        return None;
    }
    let version = at.u32()?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = usize::try_from(at.u32()?).ok()?;
    // Every entry takes at least its fixed part: a count the file cannot
    // hold is refused before anything is reserved for it.
    let fixed = STAT_LEN + hash_len + 2;
    if count > bytes.len() / fixed {
        return None;
    }
    let mut entries: Vec<Entry> = Vec::with_capacity(count);
    for _ in 0..count {
        let start = at.at;
        let stat = at.take(STAT_LEN)?;
        let mode = u32::from_be_bytes(stat[24..28].try_into().ok()?);
        if mode == MODE_DIR {
            return None;
        }
        at.take(hash_len)?;
        let flags = at.u16()?;
        let mut skip_worktree = false;
        if flags & EXTENDED != 0 {
            if version < 3 {
                return None;
            }
            skip_worktree = at.u16()? & SKIP_WORKTREE != 0;
        }
        let path = if version == 4 {
            let strip = usize::try_from(at.varint()?).ok()?;
            let previous: &[u8] = entries.last().map_or(&[], |e| &e.path);
            let keep = previous.len().checked_sub(strip)?;
            let suffix = at.until_nul()?;
            let mut path = Vec::with_capacity(keep + suffix.len());
            path.extend_from_slice(&previous[..keep]);
            path.extend_from_slice(suffix);
            Cow::Owned(path)
        } else {
            let path = at.until_nul()?;
            let named = usize::from(flags & NAME_MASK);
            // The length field is the path's, or 0xfff for "this long or longer".
            if (named < usize::from(NAME_MASK) && named != path.len())
                || (named == usize::from(NAME_MASK) && path.len() < named)
            {
                return None;
            }
            // 1 to 8 NULs pad the entry to a multiple of eight, the
            // path's own NUL among them.
            let used = at.at - start;
            let size = (used - 1 + 8) & !7;
            if at.take(size - used)?.iter().any(|&b| b != 0) {
                return None;
            }
            Cow::Borrowed(path)
        };
        if path.is_empty() {
            return None;
        }
        entries.push(Entry {
            path,
            assume_unchanged: flags & ASSUME_VALID != 0,
            skip_worktree,
        });
    }
    // Extensions (a four-byte name, a 32-bit size, the data) up to the
    // trailing hash. A split index's entries live in another file and a
    // sparse index folds folders: both are git's to read.
    while bytes.len() - at.at > hash_len {
        let name = at.take(4)?;
        if name == b"link" || name == b"sdir" {
            return None;
        }
        let size = usize::try_from(at.u32()?).ok()?;
        at.take(size)?;
    }
    let trailer = at.take(hash_len)?;
    if at.at != bytes.len() {
        return None;
    }
    Some(Index {
        entries,
        hashed: trailer.iter().any(|&b| b != 0),
    })
}

/// A read position in the index's bytes; every step checks its bounds.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let taken = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(taken)
    }

    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_be_bytes(self.take(2)?.try_into().ok()?))
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }

    /// The bytes up to the next NUL, which is consumed.
    fn until_nul(&mut self) -> Option<&'a [u8]> {
        let rest = self.bytes.get(self.at..)?;
        let len = rest.iter().position(|&b| b == 0)?;
        self.at += len + 1;
        Some(&rest[..len])
    }

    /// git's offset varint (`varint.c`): seven bits a byte, most
    /// significant first, each continuation adding one.
    fn varint(&mut self) -> Option<u64> {
        let mut byte = self.take(1)?[0];
        let mut value = u64::from(byte & 0x7f);
        while byte & 0x80 != 0 {
            value = value.checked_add(1)?;
            if value >> 57 != 0 {
                return None;
            }
            byte = self.take(1)?[0];
            value = (value << 7) | u64::from(byte & 0x7f);
        }
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry as git writes it: `version` 2/3 padded, 4 prefix-compressed
    /// against `previous`.
    fn entry(
        version: u32,
        path: &str,
        previous: &str,
        flags: u16,
        extended: Option<u16>,
        mode: u32,
    ) -> Vec<u8> {
        let mut out = vec![0u8; STAT_LEN];
        out[24..28].copy_from_slice(&mode.to_be_bytes());
        out.extend([0xab; 20]);
        let name_len = path.len().min(0xfff) as u16;
        let flags = flags | name_len | if extended.is_some() { EXTENDED } else { 0 };
        out.extend(flags.to_be_bytes());
        if let Some(x) = extended {
            out.extend(x.to_be_bytes());
        }
        if version == 4 {
            let common = path
                .bytes()
                .zip(previous.bytes())
                .take_while(|(a, b)| a == b)
                .count();
            let strip = previous.len() - common;
            assert!(strip < 128, "the test writes one-byte varints");
            out.push(strip as u8);
            out.extend(&path.as_bytes()[common..]);
            out.push(0);
        } else {
            out.extend(path.as_bytes());
            let len = out.len();
            let padded = (len + 8) & !7;
            out.resize(padded, 0);
        }
        out
    }

    fn index(
        version: u32,
        entries: &[(&str, u16, Option<u16>)],
        extensions: &[u8],
        trailer: u8,
    ) -> Vec<u8> {
        let mut out = b"DIRC".to_vec();
        out.extend(version.to_be_bytes());
        out.extend((entries.len() as u32).to_be_bytes());
        let mut previous = "";
        for (path, flags, ext) in entries {
            out.extend(entry(version, path, previous, *flags, *ext, 0o100644));
            previous = path;
        }
        out.extend(extensions);
        out.extend([trailer; 20]);
        out
    }

    fn flags(index: &Index) -> Vec<(String, bool, bool)> {
        index
            .entries
            .iter()
            .map(|e| {
                (
                    String::from_utf8_lossy(&e.path).into_owned(),
                    e.assume_unchanged,
                    e.skip_worktree,
                )
            })
            .collect()
    }

    const ENTRIES: &[(&str, u16, Option<u16>)] = &[
        ("a.txt", 0, None),
        ("src/lib.rs", ASSUME_VALID, None),
        ("src/main.rs", 0, Some(SKIP_WORKTREE)),
        ("src/module/deep.rs", ASSUME_VALID, Some(SKIP_WORKTREE)),
    ];

    #[test]
    fn every_version_gives_the_paths_and_flags_in_order() {
        for version in [3, 4] {
            let bytes = index(version, ENTRIES, &[], 7);
            let read = read(&bytes, 20).expect("readable");
            assert_eq!(
                flags(&read),
                vec![
                    ("a.txt".into(), false, false),
                    ("src/lib.rs".into(), true, false),
                    ("src/main.rs".into(), false, true),
                    ("src/module/deep.rs".into(), true, true),
                ],
                "version {version}"
            );
            assert!(read.hashed);
        }
        let plain: Vec<_> = ENTRIES.iter().map(|(p, f, _)| (*p, *f, None)).collect();
        let bytes = index(2, &plain, &[], 7);
        let v2 = read(&bytes, 20).expect("readable");
        assert_eq!(v2.entries.iter().filter(|e| e.assume_unchanged).count(), 2);
    }

    #[test]
    fn an_all_zero_trailer_is_an_index_written_without_its_hash() {
        assert!(
            !read(&index(2, &[("a", 0, None)], &[], 0), 20)
                .expect("readable")
                .hashed
        );
    }

    #[test]
    fn extensions_are_stepped_over_and_split_or_sparse_ones_refused() {
        let ext = |name: &[u8], data: &[u8]| {
            let mut out = name.to_vec();
            out.extend((data.len() as u32).to_be_bytes());
            out.extend(data);
            out
        };
        let tree = ext(b"TREE", b"\0-1 0\n");
        assert_eq!(
            read(&index(2, &[("a", 0, None)], &tree, 7), 20)
                .expect("readable")
                .entries
                .len(),
            1
        );
        for refused in [&b"link"[..], b"sdir"] {
            assert_eq!(
                read(&index(2, &[("a", 0, None)], &ext(refused, &[1; 20]), 7), 20),
                None
            );
        }
        // An extension longer than what is left.
        let mut long = ext(b"TREE", b"abc");
        long[7] = 200;
        assert_eq!(read(&index(2, &[("a", 0, None)], &long, 7), 20), None);
    }

    #[test]
    fn anything_not_followed_to_the_last_byte_is_none() {
        let good = index(4, ENTRIES, &[], 7);
        // Every truncation, and one byte too many.
        for cut in 0..good.len() {
            assert_eq!(read(&good[..cut], 20), None, "cut at {cut}");
        }
        let mut longer = good.clone();
        longer.push(0);
        assert_eq!(read(&longer, 20), None);
        // A SHA-256 repository's index is not read as SHA-1, nor the reverse.
        assert_eq!(read(&good, 32), None);
        // Another version, another signature, a count the file cannot hold.
        for (at, byte) in [(7, 5u8), (0, b'X'), (8, 0xff)] {
            let mut bad = good.clone();
            bad[at] = byte;
            assert_eq!(read(&bad, 20), None, "byte {at} = {byte}");
        }
        // The extended flag in a version 2 index.
        assert_eq!(
            read(&index(2, &[("a", 0, Some(SKIP_WORKTREE))], &[], 7), 20),
            None
        );
        // A version 4 entry stripping more than the previous path had.
        let mut strip = index(4, &[("a", 0, None)], &[], 7);
        let at = 12 + STAT_LEN + 20 + 2;
        strip[at] = 5;
        assert_eq!(read(&strip, 20), None);
        // A length field that disagrees with the path.
        let mut named = index(2, &[("abc", 0, None)], &[], 7);
        named[12 + STAT_LEN + 20 + 1] = 2;
        assert_eq!(read(&named, 20), None);
    }

    #[test]
    fn a_sparse_folder_entry_is_left_to_git() {
        let mut out = b"DIRC".to_vec();
        out.extend(3u32.to_be_bytes());
        out.extend(1u32.to_be_bytes());
        out.extend(entry(3, "folder/", "", 0, Some(SKIP_WORKTREE), MODE_DIR));
        out.extend([7; 20]);
        assert_eq!(read(&out, 20), None);
    }

    #[test]
    fn long_paths_and_multibyte_varints_are_read() {
        let long = "d/".repeat(3000) + "f";
        let bytes = index(2, &[(long.as_str(), 0, None)], &[], 7);
        let read_long = read(&bytes, 20).expect("readable");
        assert_eq!(&read_long.entries[0].path[..], long.as_bytes());
        let mut cursor = Cursor {
            bytes: &[0x80, 0x00],
            at: 0,
        };
        assert_eq!(cursor.varint(), Some(128));
        let mut cursor = Cursor {
            bytes: &[0x81, 0x7f],
            at: 0,
        };
        assert_eq!(cursor.varint(), Some(((1 + 1) << 7) | 0x7f));
        let mut cursor = Cursor {
            bytes: &[0xff; 12],
            at: 0,
        };
        assert_eq!(cursor.varint(), None);
    }
}
