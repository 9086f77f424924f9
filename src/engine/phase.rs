//! A driven round in phases, for callers that run agents between them
//! (`run`, the Stop hook): `begin` (snapshot, patch, terms), `guard` (scope,
//! budget and `stalled`, asked before a reviewer call is spent), then
//! `commit`: under the ledger's lock, refuse if a row was appended since
//! `begin` read the history, then decide, ask the judge (with the lock
//! released), stage the evidence, publish the refs and append
//! ([`super::finish`]). `record` walks the same steps while holding the
//! lock from the start ([`super::record`]). Does I/O through the snapshot
//! and ledger modules.

use super::decide::Terms;
use super::{History, Loop, Recorded, Snapped, Submission};

use crate::exit::hinted;
use crate::money::Usd;

/// A round begun: its snapshot, its patch and the terms it is decided by.
pub struct Begun {
    pub round: u32,
    pub snapped: Snapped,
    pub terms: Terms,
    /// How many rows the history `begin` saw had: `commit` refuses a
    /// ledger that grew meanwhile.
    rows_seen: usize,
}

/// What the guards say before the review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guarded {
    /// The guard that ends the round before its review, if one fires.
    pub stop: Option<crate::rules::Stop>,
}

impl Guarded {
    /// Whether a reviewer call is worth spending: no guard ends the round.
    pub fn wants_review(&self) -> bool {
        self.stop.is_none()
    }

    /// The round ends as `stalled` (scope and budget come first).
    pub fn stalled_round(&self) -> bool {
        self.stop == Some(crate::rules::Stop::Progress(crate::rules::Guard::Stalled))
    }
}

/// Phase `begin`: stores `tree` (the working tree, from
/// `Loop::worktree_tree`) as the next round's snapshot, with the patch to
/// it from `previous_snapshot`, and reads the contract's terms.
pub fn begin(lp: &Loop, history: &History, tree: String) -> anyhow::Result<Begun> {
    let terms = Terms::of(&history.contract, history.max_rounds)
        .map_err(|e| anyhow::anyhow!("contract field `scope`: {e}"))?;
    let snapped = super::snap(lp, history, tree)?;
    Ok(Begun {
        round: history.round() + 1,
        snapped,
        terms,
        rows_seen: history.rows.len(),
    })
}

impl Begun {
    /// Phase `guard`: the guards `decide` applies, asked before a review is
    /// paid for. `spent` is this round's spend so far (usd, tokens);
    /// `writer_ran`: a writer worked this round (a round resumed with only
    /// its review missing is never `stalled`).
    pub fn guard(
        &self,
        history: &History,
        spent: (Option<Usd>, Option<u64>),
        responses: &[crate::findings::responses::Response],
        writer_ran: bool,
    ) -> Guarded {
        let pending = super::decide::Pending {
            round: self.round,
            files: &self.snapped.patch.files,
            responses,
            spent_usd: history
                .spent_usd
                .saturating_add(spent.0.unwrap_or_default()),
            spent_tokens: history.spent_tokens.saturating_add(spent.1.unwrap_or(0)),
            writer_ran,
        };
        let facts = super::decide::before_review(&self.terms, &history.registry, &pending);
        // An unreviewed round meets only the guards, which ask nothing of
        // earlier rounds.
        Guarded {
            stop: crate::rules::evaluate(&self.terms, &[facts]).map(|fired| fired.stop),
        }
    }

    /// Phase `commit`: takes the ledger's lock, refuses if another process
    /// appended since `begin` (nothing is recorded; `while` says what this
    /// process was doing, `hint` what to do), then decides, asks the judge
    /// and appends.
    pub fn commit(
        self,
        lp: &Loop,
        guarded: Guarded,
        mut sub: Submission,
        while_: &str,
        hint: &str,
    ) -> anyhow::Result<Recorded> {
        let mut locked = lp.store.lock()?;
        let rows = locked.rows()?;
        if rows.len() != self.rows_seen {
            return Err(hinted(
                format!(
                    "loop `{}` changed while round {} {while_} (another process appended to its ledger); nothing was recorded",
                    lp.name, self.round
                ),
                hint,
            ));
        }
        let mut history = History::read(lp, rows)?;
        sub.stalled = guarded.stalled_round();
        super::finish(lp, locked, &mut history, self.snapped, sub)
    }
}
