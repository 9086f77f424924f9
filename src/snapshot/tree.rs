//! The work tree as a git tree, the way `git add -A` would take it into a
//! temporary index of referee's own, trusting nothing the writer can edit
//! (SPEC §8.3). Does I/O: runs git, reads file sizes.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use super::{Frozen, IDENTITY, Pin, Scope, SnapshotError, index, object_id, tree_of, verify};
use crate::git::Git;

/// The largest file a snapshot reads: a file over it refuses the round,
/// by name, rather than have git hash it whole (a sparse 2 GB file took
/// 16 to 20 seconds). GitHub refuses files over 100 MB as well.
pub(super) const MAX_FILE: u64 = 100 << 20;

/// The tree id the working tree snapshots to, without writing a ref or a
/// commit (it does write the blobs and trees, as `git add` would).
pub fn worktree_tree(repo: &Path, scope: &Scope<'_>) -> Result<String, SnapshotError> {
    tree_at(repo, scope, None, 0)
}

/// [`worktree_tree`] of `repo`, or of its submodule at `sub` (`repo` is
/// then the submodule's folder), `depth` submodules down.
///
/// A temporary index starts as the loop's index cache (else as
/// `scope.base`'s tree), takes in what changed, and its tree is written;
/// it then becomes the cache. The person's index is never read for it:
/// its stat data would tell git which files it need not read again, and
/// the writer can edit it. Only the loop's first snapshot (with no cache
/// yet) reads every file.
fn tree_at(
    repo: &Path,
    scope: &Scope<'_>,
    sub: Option<&str>,
    depth: u32,
) -> Result<String, SnapshotError> {
    let top = top_of(repo)?;
    let repo = top.as_path();
    let pin = scope.own.map(|own| &own.pin).filter(|_| sub.is_none());
    if let Some(pin) = pin {
        pin.check_info(repo)?;
    }
    let index = index::temporary(repo, scope.own)?;
    let env = [("GIT_INDEX_FILE", index.as_os_str())];
    let git = Git::at(repo).env(&env).own_index();
    let exclude = left_out(scope.exclude, scope.frozen.as_ref());
    let cache = scope
        .own
        .and_then(|own| Some(own.cache(sub)).filter(|cache| own.usable(cache)));
    match &cache {
        Some(cache) => index::start_from(cache, &index)?,
        None => seed(git, scope.base, &exclude)?,
    }
    add_changes(git, scope, &exclude, pin, depth)?;
    let tree = match git.run(["write-tree"]) {
        Ok(out) => out,
        // The cache names an object the store lacks (pruned by `git gc`
        // after a round that was never recorded, or a repository put back
        // from a copy while the cache went on): it is only a shortcut, so
        // the snapshot starts over as a loop's first does, reading every
        // file. What fails then is the work tree's own.
        Err(_) if cache.is_some() => {
            let _ = std::fs::remove_file(&index);
            seed(git, scope.base, &exclude)?;
            add_changes(git, scope, &exclude, pin, depth)?;
            git.run(["write-tree"])?
        }
        Err(e) => return Err(e.into()),
    };
    let tree = object_id(&tree.stdout, "write-tree")?;
    if let Some(own) = scope.own {
        index::keep_as_cache(&index, &own.cache(sub));
    }
    Ok(tree)
}

/// The top of the work tree `repo` is in: `repo` itself when a command
/// found it as one (every loop's), else as git says.
fn top_of(repo: &Path) -> Result<PathBuf, SnapshotError> {
    if Git::at(repo).layout().is_some() {
        return Ok(repo.to_path_buf());
    }
    let out = Git::at(repo).run(["rev-parse", "--show-toplevel"])?;
    let printed = String::from_utf8_lossy(&out.stdout);
    Ok(PathBuf::from(printed.trim_end_matches(['\n', '\r'])))
}

/// What a snapshot leaves out of the work tree and its listings: the
/// `exclude` folders and the `frozen` files (put back as their commit has
/// them).
fn left_out<'a>(exclude: &[&'a str], frozen: Option<&Frozen<'a>>) -> Vec<&'a str> {
    let mut out: Vec<&str> = exclude
        .iter()
        .map(|d| d.trim_matches('/'))
        .filter(|d| !d.is_empty())
        .collect();
    if let Some(f) = frozen {
        out.extend(f.paths.iter().map(String::as_str));
    }
    out
}

/// Starts the index `git` names from `base`'s tree (when it names one),
/// without the excluded folders: what the loop's base tracks stays
/// tracked, ignored or not, as it would in the person's index. It holds no
/// stat data: [`status`] reads every file once to record it.
fn seed(git: Git<'_>, base: &str, exclude: &[&str]) -> Result<(), SnapshotError> {
    let Some(tree) = verify(git.repo(), &format!("{base}^{{tree}}"))? else {
        return Ok(());
    };
    git.run(["read-tree", &tree])?;
    if holds_any(git.repo(), &tree, exclude)? {
        drop_excluded(git, exclude)?;
    }
    Ok(())
}

/// Takes into the index `git` names what changed in the work tree, as `git
/// add -A` without `exclude` would: one `git status` of the files it would
/// read (new, changed and deleted), each checked for its size and every
/// nested repository refused unless it is a submodule, then one
/// `update-index` of them. Then what the loop's new ignore rules hide is added too (with
/// a pin), dirty submodules as commits, and the frozen files put back.
fn add_changes(
    git: Git<'_>,
    scope: &Scope<'_>,
    exclude: &[&str],
    pin: Option<&Pin>,
    depth: u32,
) -> Result<(), SnapshotError> {
    let repo = git.repo();
    let mut pathspecs: Vec<OsString> = vec![OsString::from(":(top)")];
    pathspecs.extend(exclude.iter().map(|d| excluding(d)));
    let Status { changed, ignored } = status(git, &pathspecs)?;
    refuse_large(repo, &changed)?;
    let nested: Vec<String> = changed
        .iter()
        .filter(|p| p.ends_with('/'))
        .cloned()
        .collect();
    refuse_nested(repo, &nested)?;
    update(git, &changed)?;
    if let Some(pin) = pin {
        let hidden_nested = reveal(git, pin, exclude, &ignored)?;
        refuse_nested(repo, &hidden_nested)?;
    }
    if depth < MAX_SUBMODULE_DEPTH && repo.join(".gitmodules").is_file() {
        dirty_submodules(git, scope, depth)?;
    }
    if let Some(f) = &scope.frozen {
        put_back(git, f)?;
    }
    Ok(())
}

/// What [`status`] found.
struct Status {
    /// What `git add -A` would take in: new files (a nested repository as
    /// its folder with a `/`), changed and deleted ones.
    changed: Vec<String>,
    /// What an ignore rule hides: a folder a rule names as `dir/`, else
    /// each file.
    ignored: Vec<String>,
}

/// One `git status` of the index `git` names against the work tree below
/// `pathspecs`, in one walk of it. Git records the stat data of each file
/// it reads as it goes and writes the index back, so a file is read again
/// only once it changes: the loop's first snapshot reads each file once,
/// and a file only touched is read once more, not every round. Porcelain
/// v2, every option that config could change given on the command line;
/// submodules as their commits (their own changes: [`dirty_submodules`]).
/// Paths are relative to the top of the work tree, where git runs.
fn status(git: Git<'_>, pathspecs: &[OsString]) -> Result<Status, SnapshotError> {
    let mut args: Vec<OsString> = [
        "status",
        "--porcelain=v2",
        "-z",
        "--untracked-files=all",
        "--ignored=matching",
        "--no-renames",
        "--ignore-submodules=dirty",
        "--",
    ]
    .map(OsString::from)
    .to_vec();
    args.extend(pathspecs.iter().cloned());
    let out = git.run(&args)?;
    let mut found = Status {
        changed: Vec::new(),
        ignored: Vec::new(),
    };
    let text = |p: &[u8]| String::from_utf8_lossy(p).into_owned();
    for record in out.stdout.split(|&b| b == 0) {
        match record.split_first() {
            Some((b'?', rest)) => found.changed.push(text(&rest[1..])),
            Some((b'!', rest)) => found.ignored.push(text(&rest[1..])),
            // `1 XY SUB MH MI MW HH HI PATH`: Y, the work tree's side, says
            // whether the file differs from the index.
            Some((b'1', _)) => {
                let fields: Vec<&[u8]> = record.splitn(9, |&b| b == b' ').collect();
                if let [_, xy, .., path] = fields[..]
                    && fields.len() == 9
                    && xy.get(1).is_some_and(|&y| y != b'.')
                {
                    found.changed.push(text(path));
                }
            }
            _ => {}
        }
    }
    Ok(found)
}

/// Takes `paths` (relative to the top of the work tree, where git runs)
/// into the index `git` names as the work tree has them: added,
/// changed, removed when gone; a nested repository (`dir/`) as its commit.
/// A file where a folder was, or the other way, takes its place as `git
/// add` has it: `--replace`, and each path before those below it (a file
/// `d` that became a folder is removed before `d/x` is added).
fn update(git: Git<'_>, paths: &[String]) -> Result<(), SnapshotError> {
    if paths.is_empty() {
        return Ok(());
    }
    let mut paths: Vec<&str> = paths.iter().map(|p| p.trim_end_matches('/')).collect();
    paths.sort_unstable();
    let mut input = Vec::new();
    for path in paths {
        input.extend_from_slice(path.trim_end_matches('/').as_bytes());
        input.push(0);
    }
    git.run_with_input(
        &[
            "update-index",
            "-z",
            "--add",
            "--remove",
            "--replace",
            "--stdin",
        ],
        input,
    )?;
    Ok(())
}

/// The untracked paths below `pathspecs`, ignored or not, that `git
/// ls-files --others` lists in the index `git` names (a nested repository
/// as its folder with a `/`).
fn ls_files_others(git: Git<'_>, pathspecs: &[OsString]) -> Result<Vec<String>, SnapshotError> {
    let mut args: Vec<OsString> = ["ls-files", "-z", "--others", "--"]
        .map(OsString::from)
        .to_vec();
    args.extend(pathspecs.iter().cloned());
    let out = git.run(&args)?;
    Ok(out
        .stdout
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect())
}

/// Refuses the round when a file of `paths` (that a snapshot would read)
/// is larger than [`MAX_FILE`]: its size, from `lstat`, costs nothing.
fn refuse_large(repo: &Path, paths: &[String]) -> Result<(), SnapshotError> {
    let mut large: Vec<(String, u64)> = paths
        .iter()
        .filter_map(|p| {
            let meta = std::fs::symlink_metadata(repo.join(p)).ok()?;
            (meta.is_file() && meta.len() > MAX_FILE).then(|| (p.clone(), meta.len()))
        })
        .collect();
    if large.is_empty() {
        return Ok(());
    }
    large.sort();
    Err(SnapshotError::TooLarge {
        files: large
            .iter()
            .map(|(p, size)| format!("`{p}` ({} MiB)", size >> 20))
            .collect::<Vec<_>>()
            .join(", "),
        first: large[0].0.clone(),
    })
}

/// Refuses the round when a folder of `nested` (a git repository inside the
/// work tree, as `ls-files` lists it) has no commit (git cannot take it in)
/// or is not a submodule `.gitmodules` names (git would store it as a
/// commit id alone, so an edit inside it would be no change to review).
fn refuse_nested(repo: &Path, nested: &[String]) -> Result<(), SnapshotError> {
    if nested.is_empty() {
        return Ok(());
    }
    let mut nested: Vec<&str> = nested.iter().map(|p| p.trim_end_matches('/')).collect();
    nested.sort();
    for path in &nested {
        if verify(&repo.join(path), "HEAD^{commit}")?.is_none() {
            return Err(SnapshotError::EmbeddedWithoutCommit {
                path: path.to_string(),
            });
        }
    }
    let registered: Vec<String> = match repo.join(".gitmodules").is_file() {
        true => Git::at(repo)
            .run_unchecked(&[
                "config",
                "-f",
                ".gitmodules",
                "-z",
                "--get-regexp",
                r"^submodule\..*\.path$",
            ])?
            .stdout
            .split(|&b| b == 0)
            .filter_map(|e| {
                let entry = String::from_utf8_lossy(e);
                let (_, path) = entry.split_once('\n')?;
                Some(path.trim_matches('/').to_string())
            })
            .collect(),
        false => Vec::new(),
    };
    match nested.iter().find(|p| !registered.iter().any(|r| r == *p)) {
        None => Ok(()),
        Some(path) => Err(SnapshotError::Nested {
            path: path.to_string(),
        }),
    }
}

/// Adds to the index `git` names what an ignore rule the loop did not start
/// with hides (a `.gitignore` line the writer added, a folder whose own
/// `.gitignore` says `*`), and what the person's index tracks though it is
/// ignored: the listing of [`add_changes`] leaves both out. Returns the
/// nested repositories among them, for [`refuse_nested`].
///
/// `git check-ignore -v` names the rule that ignores each ignored path;
/// a rule is the loop's when its file was pinned holding that line. The
/// rules of `.git/info/exclude` and `core.excludesFile` are pinned whole.
fn reveal(
    git: Git<'_>,
    pin: &Pin,
    exclude: &[&str],
    ignored: &[String],
) -> Result<Vec<String>, SnapshotError> {
    if ignored.is_empty() {
        return Ok(Vec::new());
    }
    let mut input = Vec::new();
    for path in ignored {
        input.extend_from_slice(path.as_bytes());
        input.push(0);
    }
    let checked = git.run_with_input(
        &["check-ignore", "-v", "-z", "--no-index", "--stdin"],
        input,
    )?;
    let fields: Vec<String> = checked
        .stdout
        .split(|&b| b == 0)
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect();
    let mut hidden: Vec<String> = fields
        .chunks_exact(4)
        .filter(|f| {
            let (source, pattern) = (&f[0], &f[2]);
            let per_folder = (source == ".gitignore" || source.ends_with("/.gitignore"))
                && !source.starts_with('/')
                && !source.starts_with(".git/");
            per_folder && !pin.had_rule(source, pattern)
        })
        .map(|f| f[3].clone())
        .collect();
    // What the person's index tracks is tracked, ignored or not.
    let tracked = Git::at(git.repo()).run([
        "ls-files",
        "-z",
        "--cached",
        "--ignored",
        "--exclude-standard",
    ])?;
    let excluded = |path: &str| {
        exclude.iter().any(|d| {
            path.strip_prefix(d)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
    };
    hidden.extend(
        tracked
            .stdout
            .split(|&b| b == 0)
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .filter(|p| !p.is_empty() && git.repo().join(p).exists()),
    );
    hidden.retain(|p| !excluded(p.trim_end_matches('/')));
    if hidden.is_empty() {
        return Ok(Vec::new());
    }
    let literal: Vec<OsString> = hidden
        .iter()
        .map(|p| OsString::from(format!(":(top,literal){}", p.trim_end_matches('/'))))
        .collect();
    let files = ls_files_others(git, &literal)?;
    refuse_large(git.repo(), &files)?;
    let (nested, files): (Vec<String>, Vec<String>) =
        files.into_iter().partition(|p| p.ends_with('/'));
    update(git, &files)?;
    Ok(nested)
}

/// The pathspec that keeps a listing off the repo-relative `path` and all
/// below it, whatever its name holds (`*`, `?`, `[` match only themselves).
fn excluding(path: &str) -> OsString {
    OsString::from(format!(":(top,exclude,literal){path}"))
}

/// Puts the frozen files, as `frozen.from` has them, into the index that
/// `git` names (they were left out of it).
fn put_back(git: Git<'_>, frozen: &Frozen<'_>) -> Result<(), SnapshotError> {
    if frozen.paths.is_empty() {
        return Ok(());
    }
    let mut args: Vec<OsString> = [
        "ls-tree",
        "-z",
        "--full-tree",
        "--end-of-options",
        frozen.from,
        "--",
    ]
    .map(OsString::from)
    .to_vec();
    // `ls-tree` takes plain paths (no pathspec magic); `--full-tree` reads
    // them from the top.
    args.extend(frozen.paths.iter().map(OsString::from));
    let listed = Git::at(git.repo()).run(&args)?;
    // Only blobs (and symlinks): a frozen path that is a folder in
    // `from` is left out rather than half-taken.
    let entries: Vec<u8> = listed
        .stdout
        .split(|&b| b == 0)
        .filter(|e| e.windows(6).any(|w| w == b" blob "))
        .flat_map(|e| e.iter().copied().chain([0]))
        .collect();
    if !entries.is_empty() {
        git.run_with_input(&["update-index", "-z", "--index-info"], entries)?;
    }
    Ok(())
}

/// How deep snapshots look into submodules of submodules.
const MAX_SUBMODULE_DEPTH: u32 = 3;

/// A submodule whose work tree differs from its commit counts as a change
/// to its path: its gitlink in the snapshot points at a commit made (in the
/// submodule's object store, no ref) of its work tree, with a fixed identity
/// and date, so the same content always gives the same snapshot.
fn dirty_submodules(git: Git<'_>, scope: &Scope<'_>, depth: u32) -> Result<(), SnapshotError> {
    let out = git.run(["ls-files", "-s", "-z"])?;
    for entry in out.stdout.split(|&b| b == 0) {
        let Some(rest) = entry.strip_prefix(b"160000 ") else {
            continue;
        };
        let Some(tab) = rest.iter().position(|&b| b == b'\t') else {
            continue;
        };
        let path = String::from_utf8_lossy(&rest[tab + 1..]).into_owned();
        let sub = git.repo().join(&path);
        if !sub.join(".git").exists() {
            continue;
        }
        // The submodule's own snapshot starts from its `HEAD`, with an index
        // cache of its own in the loop's folder.
        let inner = Scope {
            exclude: &[],
            frozen: None,
            base: "HEAD",
            own: scope.own,
        };
        let tree = tree_at(&sub, &inner, Some(&path), depth + 1)?;
        let head = verify(&sub, "HEAD^{commit}")?;
        let head_tree = match &head {
            Some(h) => verify(&sub, &format!("{h}^{{tree}}"))?,
            None => None,
        };
        if head_tree.as_deref() == Some(tree.as_str()) {
            continue;
        }
        let mut args: Vec<&str> = vec![
            "commit-tree",
            "--no-gpg-sign",
            "-m",
            "referee: the submodule's work tree",
        ];
        if let Some(h) = &head {
            args.extend(["-p", h]);
        }
        args.push(&tree);
        let mut ident: Vec<(&str, &OsStr)> =
            IDENTITY.iter().map(|(k, v)| (*k, OsStr::new(v))).collect();
        ident.push(("GIT_AUTHOR_DATE", OsStr::new("2000-01-01T00:00:00Z")));
        ident.push(("GIT_COMMITTER_DATE", OsStr::new("2000-01-01T00:00:00Z")));
        let made = Git::at(&sub).env(&ident).run(&args)?;
        let commit = object_id(&made.stdout, "commit-tree")?;
        git.run([
            "update-index",
            "--cacheinfo",
            &format!("160000,{commit},{path}"),
        ])?;
    }
    Ok(())
}

/// The tree id of `rev` with the repo-relative directories in `exclude` left
/// out, as a round snapshot leaves them out, and the `frozen` files as
/// `frozen.from` has them. Needs only `rev`'s objects.
pub fn tree_of_frozen(
    repo: &Path,
    rev: &str,
    exclude: &[&str],
    frozen: Option<Frozen<'_>>,
) -> Result<String, SnapshotError> {
    let tree = tree_of(repo, rev)?;
    // Files frozen from `rev` itself come out as they are in it.
    let frozen = frozen.filter(|f| f.from != rev);
    let exclude = left_out(exclude, frozen.as_ref());
    if exclude.is_empty() || (frozen.is_none() && !holds_any(repo, &tree, &exclude)?) {
        return Ok(tree);
    }
    let tmp = index::temporary(repo, None)?;
    let env = [("GIT_INDEX_FILE", tmp.as_os_str())];
    let git = Git::at(repo).env(&env).own_index();
    git.run(["read-tree", &tree])?;
    drop_excluded(git, &exclude)?;
    if let Some(f) = &frozen {
        put_back(git, f)?;
    }
    let out = git.run(["write-tree"])?;
    object_id(&out.stdout, "write-tree")
}

/// Whether `tree` holds any of `paths` (files or folders): a tree without
/// them needs no temporary index to leave them out (a large repository's
/// base compares in two git calls, not five).
fn holds_any(repo: &Path, tree: &str, paths: &[&str]) -> Result<bool, SnapshotError> {
    let mut args: Vec<&str> = vec![
        "ls-tree",
        "--name-only",
        "--full-tree",
        "--end-of-options",
        tree,
        "--",
    ];
    args.extend(paths);
    let out = Git::at(repo).run(&args)?;
    Ok(!out.stdout.is_empty())
}

/// Removes the repo-relative directories `exclude` from the index that `git`
/// names (a temporary one); the work tree is left alone.
fn drop_excluded(git: Git<'_>, exclude: &[&str]) -> Result<(), SnapshotError> {
    if exclude.is_empty() {
        return Ok(());
    }
    let mut args: Vec<OsString> = ["rm", "-r", "--cached", "-q", "--ignore-unmatch", "--"]
        .map(OsString::from)
        .to_vec();
    args.extend(
        exclude
            .iter()
            .map(|d| OsString::from(format!(":(top,literal){d}"))),
    );
    git.run(&args)?;
    Ok(())
}
