//! The patch between two snapshots, as git writes it with fixed format
//! flags, and the paths it touches. Does I/O: runs git.

use std::ffi::OsStr;
use std::path::Path;

use super::{Own, Patch, SnapshotError};
use crate::git::Git;

/// Flags that pin the diff format whatever the user's config says
/// (`diff.noprefix`, `diff.mnemonicPrefix`, `color.ui`, `diff.external`,
/// `diff.context`, textconv drivers, …). `diff-tree` is plumbing and reads
/// little config to begin with; these make the rest explicit.
pub(super) const DIFF_FLAGS: &[&str] = &[
    "-r",
    "-M",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "-U3",
    "--inter-hunk-context=0",
    "--diff-algorithm=myers",
    "--indent-heuristic",
];

/// The paths whose content or mode differs between two trees (or commits),
/// both sides of a rename, sorted.
pub fn changed_paths(
    repo: &Path,
    tree_a: &str,
    tree_b: &str,
) -> Result<Vec<String>, SnapshotError> {
    let out = Git::at(repo).run([
        "-c",
        "core.quotePath=false",
        "diff-tree",
        "-r",
        "-z",
        "--name-only",
        "--no-renames",
        "--no-ext-diff",
        "--no-textconv",
        "--end-of-options",
        tree_a,
        tree_b,
    ])?;
    let mut paths: Vec<String> = out
        .stdout
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    paths.sort();
    paths.dedup();
    Ok(paths)
}

/// The patch from `from` to `to` (commits, refs or trees). `own`: the
/// loop's snapshot folder, where git is told its index is (see [`run`]).
pub fn diff(repo: &Path, own: Option<&Own>, from: &str, to: &str) -> Result<Patch, SnapshotError> {
    run(repo, own, None, from, to)
}

/// [`diff`], with `.gitattributes` read from `attrs` (a commit or tree)
/// rather than the work tree: git 2.40's `GIT_ATTR_SOURCE`, which an older
/// git ignores (it then reads the work tree's). Git then reads each
/// folder's attributes from the tree again, per changed file: the engine
/// asks for it only once an attributes file differs from the base's.
pub fn diff_with_attributes(
    repo: &Path,
    own: Option<&Own>,
    from: &str,
    to: &str,
    attrs: &str,
) -> Result<Patch, SnapshotError> {
    run(repo, own, Some(attrs), from, to)
}

/// Lists the patch from `from` to `to` with git's index pointed at a file
/// that does not exist (a temporary index name never written): git reads
/// a blob from the work tree instead of the object store when the index
/// says the file there holds it, and the writer can edit the person's
/// index (an edited file's stat data on the old entry made both sides of
/// the patch the new text).
fn run(
    repo: &Path,
    own: Option<&Own>,
    attrs: Option<&str>,
    from: &str,
    to: &str,
) -> Result<Patch, SnapshotError> {
    let no_index = super::index::temporary(repo, own)?;
    let mut env = vec![("GIT_INDEX_FILE", no_index.as_os_str())];
    if let Some(attrs) = attrs {
        env.push(("GIT_ATTR_SOURCE", OsStr::new(attrs)));
    }
    let out = Git::at(repo).env(&env).run(listing_args(from, to))?;
    parse_listing(out.stdout)
}

/// `git diff-tree` listing the files (`--raw -z`) and the patch in one
/// pass: `git -c core.quotePath=false diff-tree DIFF_FLAGS --raw -z -p
/// --end-of-options FROM TO`. Not `--numstat`: git would diff every file a
/// second time for its counts, and the patch holds the same counts.
///
/// Without `--binary`: a binary file is listed as `Binary files … differ`
/// under its `index` line; the snapshot commit the round's row pins holds
/// its bytes. With it, a large file the writer left in the work tree would
/// put its whole base85 in the round's evidence and the reviewer's patch
/// file. Text files print the same either way.
fn listing_args<'a>(from: &'a str, to: &'a str) -> Vec<&'a str> {
    let mut args: Vec<&str> = vec!["-c", "core.quotePath=false", "diff-tree"];
    args.extend_from_slice(DIFF_FLAGS);
    args.extend_from_slice(&["--raw", "-z", "-p", "--end-of-options", from, to]);
    args
}

/// Splits a listing from [`listing_args`]: the raw records, each field
/// ended by a NUL, then one more NUL and the patch. No field is empty (a
/// path never is), so the first two NULs in a row are that separator.
/// Reading past it as records would take a patch line for a file.
pub(super) fn parse_listing(mut out: Vec<u8>) -> Result<Patch, SnapshotError> {
    let (records, text) = match out.windows(2).position(|w| w == b"\0\0") {
        Some(at) => (at + 1, at + 2),
        None => (out.len(), out.len()),
    };
    let files = parse_raw(&out[..records]);
    let text = out.split_off(text);
    if !text.is_empty() && !text.starts_with(b"diff --git ") {
        return Err(SnapshotError::Unexpected {
            command: "diff --raw -z -p",
            output: String::from_utf8_lossy(&text[..text.len().min(200)]).into_owned(),
            expected: "a patch after the raw records",
        });
    }
    let (added, removed) = crate::patch::line_counts(&text);
    Ok(Patch {
        text,
        added,
        removed,
        files,
    })
}

/// The paths of `--raw -z` records: `:MODES IDS STATUS\0PATH\0`, or
/// `\0OLD\0NEW\0` when the status is a rename or copy (`R100`, `C75`).
/// Each path once, in git's order.
fn parse_raw(out: &[u8]) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    // A set: a patch may touch 20,000 files.
    let mut seen: std::collections::HashSet<&[u8]> = std::collections::HashSet::new();
    let mut fields = out.split(|&b| b == 0);
    while let Some(record) = fields.next() {
        if !record.starts_with(b":") {
            continue;
        }
        let status = record.rsplit(|&b| b == b' ').next().unwrap_or_default();
        let paths = match status.first() {
            Some(b'R' | b'C') => 2,
            _ => 1,
        };
        for path in fields.by_ref().take(paths) {
            if seen.insert(path) {
                files.push(String::from_utf8_lossy(path).into_owned());
            }
        }
    }
    files
}
