//! The six stop rules (SPEC §4) as pure functions over the rounds so far,
//! evaluated in order; the first that fires stops the loop and is named.
//! Then the progress guards (`stalled`, `disputed`), which stop a loop the
//! rules would let continue. The engine turns findings and patches into
//! `RoundFacts`; this module only decides.

use std::fmt;

pub use crate::contract::Guard;
pub use stop::Stop;

mod stop;

/// What the engine counted in one reviewed round. Only findings at or above
/// the floor appear in the id lists: below-floor findings never extend or stop
/// a loop.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RoundFacts {
    pub round: u32,
    /// Must-fix findings the reviewer reported this round.
    pub must_fix_reported: Vec<String>,
    /// How many below-floor findings it reported this round.
    pub below_floor_reported: u32,
    /// Must-fix findings reported again after being closed: (id, round it closed in).
    pub reopened: Vec<(String, u32)>,
    /// Findings that say they undo an earlier must-fix one: (id, undone id).
    pub undoes: Vec<(String, String)>,
    /// A line of this round's writer patch that reverses a change of an
    /// earlier fix round (SPEC §4.1): what it is, in words.
    pub reversed_line: Option<String>,
    /// The writer's patch size: added + removed lines.
    pub diff_size: u64,
    /// Must-fix findings open after the round.
    pub must_fix_left: u32,
    /// Must-fix findings from earlier rounds neither re-reported nor resolved
    /// this round while they stay open (`closure = explicit`).
    pub carried_unconfirmed: Vec<String>,
    /// Must-fix findings open before the round (skipped ones excluded).
    pub must_fix_open_before: u32,
    /// The writer answered at least one of them `disputed` this round.
    pub disputed_answered: bool,
    /// Must-fix findings the writer answered `disputed` this round that this
    /// round's review reports again at or above the floor.
    pub disputed_again: Vec<String>,
}

/// The rules, in priority order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    Clean,
    Reopened,
    FlipFlop,
    DiffGrowth,
    RoundCap,
    NitRound,
}

impl Rule {
    /// Every rule, in priority order.
    pub const ALL: [Rule; 6] = [
        Rule::Clean,
        Rule::Reopened,
        Rule::FlipFlop,
        Rule::DiffGrowth,
        Rule::RoundCap,
        Rule::NitRound,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Clean => "clean",
            Rule::Reopened => "reopened",
            Rule::FlipFlop => "flip-flop",
            Rule::DiffGrowth => "diff-growth",
            Rule::RoundCap => "round-cap",
            Rule::NitRound => "nit-round",
        }
    }

    /// Whether stopping on this rule means the loop is done (exit 0) rather
    /// than escalated (exit 20).
    pub fn is_done(self) -> bool {
        matches!(self, Rule::Clean | Rule::NitRound)
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A rule that fired, with its one-line reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fired {
    pub rule: Rule,
    pub reason: String,
    /// For `diff-growth`: the round to revert to (fewest must-fix, latest on ties).
    pub revert_to: Option<u32>,
}

/// One rule: the rounds so far, the latest round, the round cap.
type Check = fn(&[RoundFacts], &RoundFacts, u32) -> Option<Fired>;

/// Applies the rules in order to the last round of `rounds` (rounds 1..=n in
/// order). `None`: continue.
pub fn evaluate(rounds: &[RoundFacts], max_rounds: u32) -> Option<Fired> {
    let now = rounds.last()?;
    Rule::ALL
        .iter()
        .find_map(|rule| rule.check()(rounds, now, max_rounds))
}

impl Rule {
    /// The function that decides this rule.
    fn check(self) -> Check {
        match self {
            Rule::Clean => clean,
            Rule::Reopened => reopened,
            Rule::FlipFlop => flip_flop,
            Rule::DiffGrowth => diff_growth,
            Rule::RoundCap => round_cap,
            Rule::NitRound => nit_round,
        }
    }
}

fn fired(rule: Rule, reason: String) -> Option<Fired> {
    Some(Fired {
        rule,
        reason,
        revert_to: None,
    })
}

fn clean(_: &[RoundFacts], now: &RoundFacts, _: u32) -> Option<Fired> {
    (now.must_fix_left == 0).then_some(())?;
    fired(
        Rule::Clean,
        format!("round {}: no must-fix finding is open", now.round),
    )
}

fn reopened(_: &[RoundFacts], now: &RoundFacts, _: u32) -> Option<Fired> {
    let (id, closed_in) = now.reopened.first()?;
    let more = match now.reopened.len() {
        1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    };
    fired(
        Rule::Reopened,
        format!(
            "round {}: {id} closed in round {closed_in} is reported again{more}",
            now.round
        ),
    )
}

fn flip_flop(_: &[RoundFacts], now: &RoundFacts, _: u32) -> Option<Fired> {
    if let Some((id, undone)) = now.undoes.first() {
        return fired(
            Rule::FlipFlop,
            format!(
                "round {}: {id} undoes the earlier required {undone}",
                now.round
            ),
        );
    }
    let what = now.reversed_line.as_ref()?;
    fired(
        Rule::FlipFlop,
        format!("round {}: the writer's patch {what}", now.round),
    )
}

fn diff_growth(rounds: &[RoundFacts], now: &RoundFacts, _: u32) -> Option<Fired> {
    let [a, b, c] = rounds.last_chunk::<3>()?;
    (c.diff_size > b.diff_size && b.diff_size > a.diff_size).then_some(())?;
    // Growth that bought progress is a hard finding being fixed, not churn.
    (c.must_fix_left >= a.must_fix_left).then_some(())?;
    // Fewest must-fix findings left among the rounds before this one (going
    // back to this round would restore nothing); the latest wins a tie.
    let before = &rounds[..rounds.len() - 1];
    let best = before.iter().min_by(|x, y| {
        x.must_fix_left
            .cmp(&y.must_fix_left)
            .then(y.round.cmp(&x.round))
    })?;
    Some(Fired {
        rule: Rule::DiffGrowth,
        reason: format!(
            "round {}: the patch grew two rounds in a row ({} < {} < {} lines) while must-fix findings went {} -> {}; round {} had the fewest ({})",
            now.round,
            a.diff_size,
            b.diff_size,
            c.diff_size,
            a.must_fix_left,
            c.must_fix_left,
            best.round,
            best.must_fix_left
        ),
        revert_to: Some(best.round),
    })
}

fn round_cap(_: &[RoundFacts], now: &RoundFacts, max_rounds: u32) -> Option<Fired> {
    (now.round >= max_rounds && now.must_fix_left > 0).then_some(())?;
    fired(
        Rule::RoundCap,
        format!(
            "round {} of {max_rounds}: {} must-fix finding{} still open",
            now.round,
            now.must_fix_left,
            if now.must_fix_left == 1 { "" } else { "s" }
        ),
    )
}

fn nit_round(_: &[RoundFacts], now: &RoundFacts, _: u32) -> Option<Fired> {
    let only_below = now.must_fix_reported.is_empty() && now.below_floor_reported > 0;
    (only_below && !now.carried_unconfirmed.is_empty()).then_some(())?;
    fired(
        Rule::NitRound,
        format!(
            "round {}: only below-floor findings reported; carried must-fix {} unconfirmed",
            now.round,
            now.carried_unconfirmed.join(", ")
        ),
    )
}

/// Whether a round that changed nothing is stalled: must-fix findings were
/// open and the writer disputed none of them. `run` asks this before it
/// calls the reviewer; `record` after the rules.
pub fn stalled(patch_empty: bool, must_fix_open_before: u32, disputed_answered: bool) -> bool {
    patch_empty && must_fix_open_before > 0 && !disputed_answered
}

/// The progress guard in `guards` that stops `now`, if any, with its reason.
/// Call it only when the six rules said continue.
pub fn progress(now: &RoundFacts, patch_empty: bool, guards: &[Guard]) -> Option<(Guard, String)> {
    if guards.contains(&Guard::Stalled)
        && stalled(patch_empty, now.must_fix_open_before, now.disputed_answered)
    {
        return Some((
            Guard::Stalled,
            format!(
                "round {}: the writer changed nothing while {} open and disputed none",
                now.round,
                if now.must_fix_open_before == 1 {
                    "1 must-fix finding was".to_string()
                } else {
                    format!("{} must-fix findings were", now.must_fix_open_before)
                }
            ),
        ));
    }
    if guards.contains(&Guard::Disputed)
        && let Some(id) = now.disputed_again.first()
    {
        let more = match now.disputed_again.len() {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        return Some((
            Guard::Disputed,
            format!(
                "round {}: the writer disputed {id} and the reviewer reports it again{more}: a person decides",
                now.round
            ),
        ));
    }
    None
}

#[cfg(test)]
mod tests;
