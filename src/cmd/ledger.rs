//! `referee ledger show|verify|repair`.

use anyhow::Context as _;
use clap::Args;

use crate::anchor::chain::Standing;
use crate::cmd::cli::LoopArgs;
use crate::digest::sha256_hex;
use crate::exit::{Exit, hinted};
use crate::ledger::Store;
use crate::report;
use crate::report::error::{render, with_hints};
use crate::report::ledger::LedgerFormat;
use crate::state::LoopSelect;
use crate::state::State;

#[derive(Debug, Args)]
pub struct LedgerShowArgs {
    #[command(flatten)]
    pub select: LoopSelect,
    /// Output format.
    #[arg(long, value_enum, default_value_t = LedgerFormat::Table)]
    pub format: LedgerFormat,
    /// Same as `--format json`.
    #[arg(long)]
    pub json: bool,
}

pub fn show(state: &State, args: LedgerShowArgs) -> anyhow::Result<Exit> {
    let (name, store) = store_of(state, &args.select)?;
    let format = if args.json {
        LedgerFormat::Json
    } else {
        args.format
    };
    // Every row is read before any is shown: a ledger with a bad row prints
    // nothing but the error, never half a document.
    let torn = if format == LedgerFormat::Csv {
        // The committed rows are the CSV, as the file holds them (a ledger
        // not yet written shows its header).
        let (bytes, torn) = store.read_committed()?;
        if bytes.is_empty() {
            super::emit_exact(&report::ledger::render(name.as_str(), &[], format))?;
        } else {
            super::emit_exact(&bytes)?;
        }
        torn
    } else {
        let parsed = store.read()?;
        super::emit_rendered(
            &report::ledger::render(name.as_str(), &parsed.rows, format),
            format.for_people(),
        )?;
        parsed.torn
    };
    if let Some(torn) = torn {
        eprintln_quiet(&with_hints(
            &format!(
                "warning: ledger `{}` ends in a torn line of {} bytes (not shown)",
                super::shown(store.path()),
                torn.bytes.len()
            ),
            &["run `referee ledger repair`"],
        ));
    }
    Ok(Exit::Success)
}

pub fn verify(state: &State, args: LoopArgs) -> anyhow::Result<Exit> {
    let (name, store) = store_of(state, &args.select)?;
    let anchor = crate::anchor::Anchor::of(&state.repo, &state.root, name.as_str())?;
    // Each round row's number, round and snapshot, kept as the chain is
    // checked, and every row's hash, for the anchor.
    let mut rounds: Vec<(usize, u32, String)> = Vec::new();
    let mut hashes: Vec<String> = Vec::new();
    // The ledger and the anchor, read as of one moment: an append landing
    // between the read and the anchor's check would read as a row cut.
    let held = store.hold_shared()?;
    let checked = store
        .verify_seeing(|n, row| {
            hashes.push(row.row_sha256.to_string());
            if row.kind == crate::ledger::Kind::Round && !row.snapshot.is_empty() {
                rounds.push((n, row.round, row.snapshot.to_string()));
            }
        })
        .map_err(anyhow::Error::from)
        .and_then(|summary| {
            snapshots_hold(state, &name, &rounds)?;
            Ok(summary)
        });
    let hashes: Vec<&str> = hashes.iter().map(String::as_str).collect();
    let standing = anchor.check(&hashes)?;
    drop(held);
    // The rounds gone with the rows: their snapshot refs outlive them.
    let lost_rounds: Vec<u32> = match &standing {
        Standing::Broken(b) if b.lost().is_some() => {
            let last = rounds.last().map_or(0, |(_, r, _)| *r);
            let mut gone: Vec<u32> = crate::snapshot::round_refs(&state.repo, name.as_str())?
                .into_keys()
                .filter(|r| *r > last)
                .collect();
            gone.sort_unstable();
            gone
        }
        _ => Vec::new(),
    };
    let anchored = !matches!(standing, Standing::Unanchored);
    let checked = checked.and_then(|summary| match &standing {
        Standing::Broken(b) => Err(hinted(format!("ledger `{}`: {b}", super::shown(store.path())), format!("the loop's anchor `{}` holds what the referee wrote; a ledger you committed comes back with `git checkout -- {}`", anchor.dir().display(), super::shown(store.path())))),
        // An anchored row pins its evidence, and so its state, by a MAC the
        // writer cannot make: only an unanchored chain needs its states read.
        Standing::Holds { .. } => Ok(summary),
        Standing::Unanchored => states_agree(&store).map(|()| summary),
    });
    match checked {
        Ok(summary) => {
            if args.json {
                let json = serde_json::json!({"loop": name.as_str(), "ok": true, "rows": summary.rows,
                                   "rounds": summary.rounds, "head": summary.head,
                                   "anchored": anchored, "lost_rounds": lost_rounds});
                super::emit_exact(format!("{json}\n").as_bytes())?;
                return Ok(Exit::Success);
            }
            let anchor_says = match standing {
                Standing::Unanchored => "; unanchored: this machine holds no anchor for the loop (it was started elsewhere), so only the chain was checked".to_string(),
                _ => "; anchored".to_string(),
            };
            let text = match &summary.head {
                Some(head) => format!(
                    "ledger `{}`: {} ({}) verified; chain head {}{anchor_says}\n",
                    super::shown(store.path()),
                    crate::text::plural(summary.rows, "row"),
                    crate::text::plural(summary.rounds, "round"),
                    head
                ),
                None => format!(
                    "ledger `{}`: no rows yet; nothing to verify{anchor_says}\n",
                    super::shown(store.path())
                ),
            };
            super::emit(&text)?;
            Ok(Exit::Success)
        }
        Err(err) => {
            if args.json {
                let json = serde_json::json!({"loop": name.as_str(), "ok": false, "problem": render(&err),
                                              "anchored": anchored, "lost_rounds": lost_rounds});
                super::emit_exact(format!("{json}\n").as_bytes())?;
            }
            Err(err)
        }
    }
}

/// Every round row says what its own `state.json` says (round, verdict,
/// rule, snapshot): where no anchor knows the loop, a row edited and its
/// chain hashed again without its evidence is still named. (An anchored
/// loop's rows are held by the anchor's MACs, evidence digest included.)
fn states_agree(store: &Store) -> anyhow::Result<()> {
    for (i, row) in store.read()?.rows.iter().enumerate() {
        // Only looked for here: `read_state` checks the folder's digest.
        let state_file = store
            .evidence_dir(row.round)
            .join(crate::engine::history::STATE_FILE);
        let has_state = row.kind == crate::ledger::Kind::Round
            && crate::statefs::check(store.base(), &state_file)?.is_some_and(|m| m.is_file());
        if has_state {
            crate::engine::history::read_state(store, row)
                .with_context(|| format!("row {}", i + 1))?;
        }
    }
    Ok(())
}

/// Every round row's snapshot commit is in the repository, and its round
/// ref points at it: a snapshot a race or a `git gc` lost is named here,
/// not discovered by the next `record`.
fn snapshots_hold(
    state: &State,
    name: &crate::contract::LoopName,
    rounds: &[(usize, u32, String)],
) -> anyhow::Result<()> {
    use crate::snapshot;
    if rounds.is_empty() {
        return Ok(());
    }
    let ids: Vec<&str> = rounds.iter().map(|(_, _, s)| s.as_str()).collect();
    let missing = snapshot::missing_commits(&state.repo, &ids)?;
    let refs = snapshot::round_refs(&state.repo, name.as_str())?;
    for (n, round, pinned) in rounds {
        let short = pinned.get(..12).unwrap_or(pinned);
        if missing.contains(pinned) {
            return Err(hinted(
                format!(
                    "row {n}: round {}'s snapshot commit `{short}` is not in this repository",
                    *round
                ),
                "a clone without referee's refs lacks them: `git fetch origin 'refs/referee/*:refs/referee/*'`",
            ));
        }
        let reference = snapshot::round_ref(&state.repo, name.as_str(), *round)?;
        match refs.get(round) {
            Some(commit) if commit == pinned => {}
            Some(commit) => anyhow::bail!(
                "row {n}: `{reference}` points at `{}`, but the row pins round {}'s snapshot `{short}`",
                commit.get(..12).unwrap_or(commit),
                *round
            ),
            None => {
                return Err(hinted(
                    format!(
                        "row {n}: `{reference}` is missing (the row pins round {}'s snapshot `{short}`)",
                        *round
                    ),
                    format!("`git update-ref {reference} {}` puts it back", pinned),
                ));
            }
        }
    }
    Ok(())
}

pub fn repair(state: &State, args: LoopArgs) -> anyhow::Result<Exit> {
    let (name, store) = store_of(state, &args.select)?;
    let removed = store.repair()?;
    // A torn last line is all repair removes: a committed row that no
    // longer verifies is said, with the way back, never "nothing to repair".
    if let Err(e) = store.verify_seeing(|_, _| {}) {
        let hint = e.hint().unwrap_or_else(|| {
            format!(
                "put the committed ledger back with `git checkout -- {}` (or from a copy)",
                super::shown(store.path())
            )
        });
        let torn = if removed.is_some() {
            " (a torn last line was removed)"
        } else {
            ""
        };
        return Err(hinted(
            format!(
                "{e}: `referee ledger repair` removes only a torn last line, never a committed row{torn}"
            ),
            hint,
        ));
    }
    if args.json {
        let json = match &removed {
            Some(bytes) => serde_json::json!({"loop": name.as_str(), "removed_bytes": bytes.len(),
                                              "removed": String::from_utf8_lossy(bytes)}),
            None => serde_json::json!({"loop": name.as_str(), "removed_bytes": 0}),
        };
        super::emit_exact(format!("{json}\n").as_bytes())?;
        return Ok(Exit::Success);
    }
    let text = match &removed {
        Some(bytes) => format!(
            "removed a torn final line of {} bytes from `{}` (never a committed row): {}\n",
            bytes.len(),
            super::shown(store.path()),
            String::from_utf8_lossy(bytes).escape_debug()
        ),
        None => format!(
            "nothing to repair: `{}` ends on a complete row\n",
            super::shown(store.path())
        ),
    };
    super::emit(&text)?;
    Ok(Exit::Success)
}

/// The loop's store, pinned to the contract file's bytes as they are now (a
/// contract that no longer validates can still have its ledger checked).
fn store_of(
    state: &State,
    select: &crate::state::LoopSelect,
) -> anyhow::Result<(crate::contract::LoopName, Store)> {
    let name = state.select(select)?;
    let path = state.paths(&name).contract;
    let bytes = crate::contract::load::read(&path)?;
    let store = Store::new(
        state.paths(&name).ledger,
        state.paths(&name).dir,
        &sha256_hex(&bytes),
    );
    Ok((name, store))
}

fn eprintln_quiet(text: &str) {
    use std::io::Write;
    let text = crate::report::terminal::escape(text);
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}
