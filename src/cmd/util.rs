//! What the commands share: writing output, the clock, opening a loop,
//! reading input and repository files safely, and refusing a change to a
//! loop a driver holds. Commands call these, never each other.

use std::io::{Read, Write};

use anyhow::Context;

use crate::anchor::run_lock::{self, Driving};
use crate::engine::Loop;
use crate::exit::hinted;
use crate::state::State;

pub(crate) use crate::state::shown;

/// Writes text for people to stdout: the one place human output leaves the
/// process, so the one place stored text (a finding's title, body or path)
/// has its control characters made visible and referee's own colors are
/// applied (`report::style::for_people`). A closed pipe comes back as an
/// error that exits quietly.
pub(super) fn emit(text: &str) -> anyhow::Result<()> {
    emit_exact(crate::report::style::for_people(text).as_bytes())
}

/// Whether this process wrote its answer to stdout: a command that printed
/// its own JSON account of a failure (`ledger verify --json`) gets no
/// second document after it.
static EMITTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub(super) fn emitted() -> bool {
    EMITTED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Writes a document for programs (JSON, CSV, SARIF, shell scripts, man
/// pages) byte for byte: its own format escapes what it must.
pub(super) fn emit_exact(bytes: &[u8]) -> anyhow::Result<()> {
    EMITTED.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()?;
    Ok(())
}

/// Writes what a renderer made in `format`: for people, or exactly.
pub(super) fn emit_rendered(bytes: &[u8], for_people: bool) -> anyhow::Result<()> {
    if for_people {
        emit(&String::from_utf8_lossy(bytes))
    } else {
        emit_exact(bytes)
    }
}

/// Writes `value` as pretty JSON and a newline, exactly.
pub(super) fn emit_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    let mut bytes = serde_json::to_vec_pretty(value)?;
    bytes.push(b'\n');
    emit_exact(&bytes)
}

/// The clock: now as RFC 3339 UTC to the second. `REFEREE_NOW` fixes it (for
/// tests and reproducible demos).
pub(super) fn now() -> anyhow::Result<String> {
    match std::env::var("REFEREE_NOW") {
        Ok(fixed) => {
            let parsed = chrono::DateTime::parse_from_rfc3339(&fixed).map_err(|e| {
                anyhow::anyhow!(
                    "environment variable `REFEREE_NOW`: `{fixed}` is not an RFC 3339 time ({e})"
                )
            })?;
            Ok(parsed
                .with_timezone(&chrono::Utc)
                .format("%Y-%m-%dT%H:%M:%SZ")
                .to_string())
        }
        Err(_) => Ok(chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()),
    }
}

/// A person's words for the ledger and its evidence (`--by`, `--reason`,
/// `--idempotency-key`): on one line, with secrets masked as evidence masks
/// them (`redact`), since a ledger is committed and shared.
pub(super) fn person_words(text: &str) -> String {
    crate::redact::redact_str(&crate::text::one_line(text))
}

/// A person's `--by` and `--reason` for a ruling made in writing (a
/// waiver, an amendment, a resume), as [`person_words`]; neither may be
/// blank. `who` names the person's act (`waives the finding`), `what` the
/// ruling (`a waiver is made`).
pub(super) fn in_writing(
    by: &str,
    reason: &str,
    who: &str,
    what: &str,
) -> anyhow::Result<(String, String)> {
    let (by, reason) = (person_words(by), person_words(reason));
    if by.is_empty() {
        return Err(crate::exit::UsageError(format!("--by: name the person who {who}")).into());
    }
    if reason.is_empty() {
        return Err(
            crate::exit::UsageError(format!("--reason: {what} in writing; say why")).into(),
        );
    }
    Ok((by, reason))
}

/// Refuses to edit `path`, a file of the work tree `repo` that referee
/// edits for the person (agent settings, `AGENTS.md`), when a link is on
/// the way to it or is the file itself: the writer could have made
/// `.claude` a link to a folder outside the repository.
pub(super) fn refuse_link_in_repo(
    repo: &std::path::Path,
    path: &std::path::Path,
) -> anyhow::Result<()> {
    use crate::statefs::FsError;
    match crate::statefs::check(repo, path) {
        Ok(_) => Ok(()),
        Err(FsError::Link { path: link }) => Err(hinted(
            format!(
                "`{}` is a symlink: referee writes no file of the repository through a link, which could lead outside it; nothing was written",
                shown(&link)
            ),
            format!(
                "replace the link with what it points to, or edit `{}` by hand",
                shown(path)
            ),
        )),
        Err(FsError::NotFolder { path: file }) => Err(hinted(
            format!(
                "`{}` is not a folder, so `{}` cannot be written; nothing was written",
                shown(&file),
                shown(path)
            ),
            "remove it",
        )),
        Err(err) => Err(err.into()),
    }
}

/// The text of `path`, a file of the work tree `repo` referee is about to
/// edit: never through a link ([`refuse_link_in_repo`]), never a FIFO or a
/// device; `None` when it does not exist.
pub(super) fn read_repo_text(
    repo: &std::path::Path,
    path: &std::path::Path,
) -> anyhow::Result<Option<String>> {
    refuse_link_in_repo(repo, path)?;
    match crate::statefs::read(repo, path)? {
        None => Ok(None),
        Some(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| anyhow::anyhow!("`{}` is not UTF-8 text", shown(path))),
    }
}

/// The program `name` as found on `PATH`, if it is there.
pub(super) fn on_path(name: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// Loads the selected loop's contract (validated) and its store, and
/// removes the scratch folders of killed runs of the loop.
pub(super) fn open_loop(state: &State, select: &crate::state::LoopSelect) -> anyhow::Result<Loop> {
    let name = state.select(select)?;
    let paths = state.paths(&name);
    let loaded = crate::contract::load::load(&paths.contract)?;
    let anchor = crate::anchor::Anchor::of(&state.repo, &state.root, name.as_str())?;
    let store = crate::ledger::Store::new(paths.ledger.clone(), paths.dir.clone(), &loaded.sha256)
        .anchored(anchor.clone());
    let own = crate::snapshot::Own::open(&state.repo, &anchor)?;
    // From the pins a person's installs wrote (and this loop's own `record`
    // inputs), never from `.referee/`.
    let frozen =
        crate::anchor::pins::Pins::of(&state.repo, &state.root)?.frozen_for(name.as_str())?;
    let lp = Loop {
        name,
        paths,
        loaded,
        store,
        repo: state.repo.clone(),
        exclude: state.inside_repo().into_iter().collect(),
        frozen,
        anchor,
        own: Some(own),
    };
    super::scratch::clean(&lp, false);
    Ok(lp)
}

/// Largest reviewer output read; beyond it the input is refused, not cut.
pub(super) const MAX_INPUT: u64 = 256 * 1024 * 1024;

pub(super) fn read_bounded(input: &str) -> anyhow::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    if input == "-" {
        std::io::stdin()
            .lock()
            .take(MAX_INPUT + 1)
            .read_to_end(&mut bytes)
            .context("cannot read stdin")?;
    } else {
        let file = std::fs::File::open(input).context("cannot open the file")?;
        // Sized from the file, so a large review is not copied as it grows.
        let len = file.metadata().map_or(0, |m| m.len());
        bytes.reserve_exact(crate::statefs::capacity_for(len.min(MAX_INPUT)));
        file.take(MAX_INPUT + 1)
            .read_to_end(&mut bytes)
            .context("cannot read the file")?;
    }
    if bytes.len() as u64 > MAX_INPUT {
        return Err(hinted(
            format!("input is larger than {} MiB", MAX_INPUT / 1024 / 1024),
            "a reviewer output this large is not a review; check the command",
        ));
    }
    Ok(bytes)
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `referee run (pid 41, for 3m12s; round 2: the reviewer, for 40s)`.
pub(super) fn describe(d: &Driving) -> String {
    let now = now_secs();
    let mut out = format!(
        "`{}` (pid {}, for {})",
        d.holder,
        d.pid,
        crate::text::duration(now.saturating_sub(d.since))
    );
    if let Some((round, role, since)) = &d.call {
        out.pop();
        out.push_str(&format!(
            "; round {round}: the {role} is working, for {})",
            crate::text::duration(now.saturating_sub(*since))
        ));
    }
    out
}

/// Who drives `lp` now (a live `run` or `hook stop` holds its run lock).
pub(super) fn driving(lp: &Loop) -> Option<Driving> {
    run_lock::driving(&lp.anchor)
}

/// Refuses a hand-made change to a loop that a `run` or a `hook stop` is
/// driving: it would land between that driver's reads and its append, and
/// the driver's paid agent calls would be thrown away.
pub(super) fn refuse_if_driven(lp: &Loop, what: &str) -> anyhow::Result<()> {
    if let Some(d) = driving(lp) {
        return Err(hinted(
            format!(
                "loop `{}` is being driven by {}: {what} now would be overtaken by its next round; nothing was done",
                lp.name,
                describe(&d)
            ),
            format!(
                "wait for it to stop (`referee status --loop {}` shows it), or end it (Ctrl-C where it runs)",
                lp.name
            ),
        ));
    }
    Ok(())
}

/// The Stop hook's note of round `round` of `lp` (empty for a round it did
/// not drive).
pub(crate) fn hook_note(lp: &Loop, round: u32) -> crate::hook::note::SessionNote {
    crate::statefs::read(
        lp.store.base(),
        &lp.store.evidence_dir(round).join(crate::hook::note::FILE),
    )
    .ok()
    .flatten()
    .and_then(|bytes| serde_json::from_slice(&bytes).ok())
    .unwrap_or_default()
}

/// The host's cap of blocks in a row, when it let the last round's stop of
/// `lp` through with fixes asked for: the turn ended, the loop did not.
pub(crate) fn ended_at_host_cap(lp: &Loop, history: &crate::engine::History) -> Option<u32> {
    let (row, last) = history.last.as_ref()?;
    let note = hook_note(lp, row.round);
    (last.verdict == crate::ledger::Verdict::Continue && note.cap_spent())
        .then_some(note.host_cap)
        .flatten()
}
