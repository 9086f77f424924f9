//! A stop the hook cannot judge during a live loop (SPEC §8.5): it is
//! blocked with the reason and kept as an incident in the per-user state
//! folder, out of the writer's reach; after [`MAX_ERROR_BLOCKS`] such blocks
//! in a row in one session, the agent is let stop with a message to the
//! person naming the incident. Does I/O (the state folder).

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;

use crate::anchor::pins::Pins;
use crate::hook::Payload;
use crate::hook::answer::Answer;
use crate::report::error::with_hints;

/// Consecutive stops of one session the hook blocks because it could not
/// judge them, before it lets the agent stop and leaves it to the person.
pub const MAX_ERROR_BLOCKS: u32 = 3;

const COUNTS: &str = "hook-errors.json";
const INCIDENTS: &str = "incidents.jsonl";

/// Whether a loop may be live in the state folder `state_dir`: it has
/// contracts, or the per-user state folder anchors loops of it (a contract
/// or ledger the writer removed leaves its anchor behind).
pub fn live(repo: &Path, state_dir: &Path) -> bool {
    if std::fs::symlink_metadata(state_dir.join("contracts")).is_ok() {
        return true;
    }
    Pins::of(repo, state_dir).is_ok_and(|a| !a.anchored_loops().is_empty())
}

/// The answer to a stop that failed with `why` while a loop is live.
pub fn answer(repo: &Path, state_dir: &Path, payload: &Payload, why: &str, at: &str) -> Answer {
    let session = payload.session_id.clone().unwrap_or_else(|| "?".into());
    let Ok(anchor) = Pins::of(repo, state_dir) else {
        return blocked(why, MAX_ERROR_BLOCKS);
    };
    let _ = anchor.create();
    let mut counts = read_counts(&anchor);
    let count = counts.get(&session).copied().unwrap_or(0) + 1;
    let record = serde_json::json!({
        "at": at, "agent": payload.agent.as_str(), "session_id": session,
        "count": count, "problem": crate::redact::redact_str(why),
    });
    if let Ok(mut file) = crate::statefs::open_append(anchor.base(), &anchor.file(INCIDENTS)) {
        let _ = writeln!(file, "{record}");
    }
    if count > MAX_ERROR_BLOCKS {
        counts.remove(&session);
        write_counts(&anchor, &counts);
        return Answer::Tell(with_hints(
            &format!(
                "referee: the Stop hook could not judge {MAX_ERROR_BLOCKS} stops in a row of this session, so it lets the agent stop: {why}\n\
             The loop is not refereed until a person fixes this; nothing was recorded."
            ),
            &[format!(
                "`referee status` shows the loop; the incidents are kept in `{}`",
                anchor.file(INCIDENTS).display()
            )],
        ));
    }
    counts.insert(session, count);
    write_counts(&anchor, &counts);
    blocked(why, MAX_ERROR_BLOCKS + 1 - count)
}

/// A stop was judged: the session's count of error blocks starts over.
pub fn judged(repo: &Path, state_dir: &Path, payload: &Payload) {
    let Some(session) = &payload.session_id else {
        return;
    };
    let Ok(anchor) = Pins::of(repo, state_dir) else {
        return;
    };
    let mut counts = read_counts(&anchor);
    if counts.remove(session).is_some() {
        write_counts(&anchor, &counts);
    }
}

/// The incidents kept for `state_dir`, oldest first (at most `last`).
pub fn incidents(repo: &Path, state_dir: &Path, last: usize) -> Vec<serde_json::Value> {
    let Ok(anchor) = Pins::of(repo, state_dir) else {
        return Vec::new();
    };
    let Ok(Some(bytes)) = crate::statefs::read(anchor.base(), &anchor.file(INCIDENTS)) else {
        return Vec::new();
    };
    let all: Vec<serde_json::Value> = String::from_utf8_lossy(&bytes)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    all[all.len().saturating_sub(last)..].to_vec()
}

fn blocked(why: &str, left: u32) -> Answer {
    Answer::Block(format!(
        "The referee could not judge this stop, so it is not let go: {why}\n\
         Nothing was recorded. Put right what this names if it is yours to put right, then stop again. \
         After {left} more such stop(s) in a row the session is let end and the loop is left to the person."
    ))
}

fn read_counts(anchor: &Pins) -> BTreeMap<String, u32> {
    crate::statefs::read(anchor.base(), &anchor.file(COUNTS))
        .ok()
        .flatten()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

fn write_counts(anchor: &Pins, counts: &BTreeMap<String, u32>) {
    if let Ok(bytes) = serde_json::to_vec(counts) {
        let _ = crate::statefs::replace(anchor.base(), &anchor.file(COUNTS), &bytes);
    }
}
