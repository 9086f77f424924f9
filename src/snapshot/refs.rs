//! A loop's refs: where its round snapshots and kept contract live, the
//! snapshot commit, and the one `git update-ref` transaction that publishes
//! a round. Does I/O: runs git.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::{IDENTITY, Snapshot, SnapshotError, object_id, verify};
use crate::git::Git;

/// The refs folder of loop `loop_name` in the work tree `repo`: its round
/// snapshots and kept contract. `refs/referee/<loop>/` in the main
/// worktree; in a linked worktree (`git worktree add`)
/// `refs/referee/<loop>/worktree/<id>/`, `<id>` being git's name for it.
/// All worktrees of a repository share its refs, and each has its own
/// `.referee/`: two loops of one name in two worktrees (the default name
/// in both) would otherwise move each other's round refs, and the first
/// one's `ledger verify` would fail on a ref it did not write.
pub fn loop_refs(repo: &Path, loop_name: &str) -> Result<String, SnapshotError> {
    if !ref_component(loop_name) {
        return Err(SnapshotError::LoopName(loop_name.to_string()));
    }
    match Git::at(repo).worktree_id()? {
        None => Ok(format!("refs/referee/{loop_name}/")),
        Some(id) => Ok(format!(
            "refs/referee/{loop_name}/worktree/{}/",
            worktree_component(&id.to_string_lossy())
        )),
    }
}

/// A linked worktree's id as one ref component. Git keeps ids valid in a
/// ref since 2.28 (save a leading dot, which `git worktree add` keeps from
/// a folder named so); any other is made valid, with a digest of the id
/// after it so that two ids never share a component.
pub(super) fn worktree_component(id: &str) -> String {
    if ref_component(id) {
        return id.to_string();
    }
    let safe: String = id
        .chars()
        .map(|c| match c.is_ascii_alphanumeric() || "._-".contains(c) {
            true => c,
            false => '-',
        })
        .collect::<String>()
        .replace("..", "--");
    let safe = match safe.trim_start_matches(['.', '-']) {
        "" => "wt",
        trimmed => trimmed,
    };
    let digest = crate::digest::sha256_hex(id.as_bytes());
    format!("{safe}-{}", &digest[..8])
}

/// Whether `name` may be one component of a ref referee writes.
pub(super) fn ref_component(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        && !name.starts_with(['.', '-'])
        && !name.ends_with('.')
        && !name.ends_with(".lock")
        && !name.contains("..")
}

/// The ref of `loop_name`'s snapshot of `round` in the work tree `repo`:
/// `refs/referee/<loop>/round-<n>` (see [`loop_refs`]).
pub fn round_ref(repo: &Path, loop_name: &str, round: u32) -> Result<String, SnapshotError> {
    Ok(format!("{}round-{round}", loop_refs(repo, loop_name)?))
}

/// The ref that keeps a loop's pinned contract bytes (see [`loop_refs`]).
pub fn contract_ref(repo: &Path, loop_name: &str) -> Result<String, SnapshotError> {
    Ok(format!("{}contract", loop_refs(repo, loop_name)?))
}

/// Stores `tree` (from `worktree_tree`) as round `round`'s snapshot: a
/// commit with parent `parent`, to be published at
/// `refs/referee/<loop>/round-<round>` by [`publish`] under the loop's lock.
pub fn commit(
    repo: &Path,
    loop_name: &str,
    round: u32,
    parent: Option<&str>,
    tree: &str,
    message: &str,
) -> Result<Snapshot, SnapshotError> {
    let r#ref = round_ref(repo, loop_name, round)?;
    let mut args: Vec<&str> = vec!["commit-tree", "--no-gpg-sign", "-m", message];
    if let Some(parent) = parent {
        args.extend(["-p", parent]);
    }
    args.push(tree);
    let env: Vec<(&str, &OsStr)> = IDENTITY.iter().map(|(k, v)| (*k, OsStr::new(v))).collect();
    let out = Git::at(repo).env(&env).run(&args)?;
    Ok(Snapshot {
        commit: object_id(&out.stdout, "commit-tree")?,
        tree: tree.to_string(),
        r#ref,
    })
}

/// Points the round's ref at its snapshot and, at round 1, the loop's
/// contract ref at `contract` (the bytes round 1 pins, stored as a blob for
/// `referee contract restore`; in the repository's own object store, not
/// evidence, since a contract may hold environment values evidence would
/// have to redact): one `git update-ref --stdin` transaction, so both move
/// or neither. The caller holds the loop's ledger lock, so no other referee
/// moves these refs meanwhile. The round's ref is expected not to exist
/// (`create`); a ref left by a retaken round is read and moved from the
/// value read (`update <ref> <new> <old>`), so a writer outside referee is
/// refused, never overwritten.
pub fn publish(
    repo: &Path,
    loop_name: &str,
    snap: &Snapshot,
    message: &str,
    contract: Option<&[u8]>,
) -> Result<(), SnapshotError> {
    let kept = match contract {
        Some(bytes) => {
            let out =
                Git::at(repo).run_with_input(&["hash-object", "-w", "--stdin"], bytes.to_vec())?;
            Some((
                contract_ref(repo, loop_name)?,
                object_id(&out.stdout, "hash-object")?,
            ))
        }
        None => None,
    };
    let transaction = |old: Option<&str>| {
        let mut lines = String::new();
        if let Some((reference, blob)) = &kept {
            lines.push_str(&format!("update {reference} {blob}\n"));
        }
        match old {
            None => lines.push_str(&format!("create {} {}\n", snap.r#ref, snap.commit)),
            Some(old) => lines.push_str(&format!("update {} {} {old}\n", snap.r#ref, snap.commit)),
        }
        lines
    };
    let mut refs = vec![snap.r#ref.as_str()];
    refs.extend(kept.as_ref().map(|(reference, _)| reference.as_str()));
    let Err(err) = update_refs(repo, message, &refs, transaction(None)) else {
        return Ok(());
    };
    match verify(repo, &format!("{}^{{commit}}", snap.r#ref))? {
        Some(old) => update_refs(repo, message, &refs, transaction(Some(&old))),
        None => Err(err),
    }
}

/// Runs the `git update-ref --stdin` transaction `lines` on `refs` while
/// the caller holds the loop's lock. A `git update-ref` killed with its
/// referee (a closed terminal, a cancelled job) leaves `<ref>.lock` behind;
/// under the loop's lock no other referee is updating these refs, so such a
/// lock file is stale: it is removed once and the transaction tried again.
fn update_refs(
    repo: &Path,
    message: &str,
    refs: &[&str],
    lines: String,
) -> Result<(), SnapshotError> {
    let git = Git::at(repo);
    let args = ["update-ref", "-m", message, "--stdin"];
    let Err(err) = git.run_with_input(&args, lines.clone().into_bytes()) else {
        return Ok(());
    };
    let mut ask: Vec<String> = vec!["rev-parse".into()];
    for reference in refs {
        ask.extend(["--git-path".into(), format!("{reference}.lock")]);
    }
    let stale: Vec<PathBuf> = git
        .run(&ask)
        .map(|out| {
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(|p| repo.join(p))
                .filter(|lock| lock.is_file())
                .collect()
        })
        .unwrap_or_default();
    if stale.is_empty() {
        return Err(err.into());
    }
    for lock in &stale {
        let _ = std::fs::remove_file(lock);
    }
    git.run_with_input(&args, lines.into_bytes())?;
    Ok(())
}

/// The contract bytes [`publish`] kept, if any.
pub fn kept_contract(repo: &Path, loop_name: &str) -> Result<Option<Vec<u8>>, SnapshotError> {
    let reference = contract_ref(repo, loop_name)?;
    let Some(blob) = verify(repo, &format!("{reference}^{{blob}}"))? else {
        return Ok(None);
    };
    Ok(Some(Git::at(repo).run(["cat-file", "blob", &blob])?.stdout))
}

/// Of `commits`, those that are not commit objects in the repository: one
/// `git cat-file --batch-check` for all of them.
pub fn missing_commits(
    repo: &Path,
    commits: &[&str],
) -> Result<std::collections::HashSet<String>, SnapshotError> {
    let mut input = Vec::with_capacity(commits.len() * 41);
    for commit in commits {
        input.extend_from_slice(commit.as_bytes());
        input.push(b'\n');
    }
    let out = Git::at(repo).run_with_input(
        &["cat-file", "--batch-check=%(objectname) %(objecttype)"],
        input,
    )?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(commits
        .iter()
        .zip(text.lines())
        .filter(|(_, line)| !line.ends_with(" commit"))
        .map(|(commit, _)| commit.to_string())
        .collect())
}

/// Every round ref of `loop_name`: round number to commit id.
pub fn round_refs(
    repo: &Path,
    loop_name: &str,
) -> Result<std::collections::HashMap<u32, String>, SnapshotError> {
    let prefix = loop_refs(repo, loop_name)?;
    let out = Git::at(repo).run(["for-each-ref", "--format=%(refname) %(objectname)", &prefix])?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let (name, id) = line.split_once(' ')?;
            let round = name
                .strip_prefix(&prefix)?
                .strip_prefix("round-")?
                .parse()
                .ok()?;
            Some((round, id.to_string()))
        })
        .collect())
}
