//! Every stop (SPEC §4) as a pure function over the round's facts and the
//! contract's `Terms`: the contract guards (`scope`, `budget`), the six rules
//! and the progress guards (`stalled`, `disputed`), asked in one order
//! ([`ORDER`]); the first that fires stops the loop and writes its reason.
//! The engine turns findings and patches into `RoundFacts`; this module only
//! decides.

use std::fmt;

pub use crate::contract::Guard;
use crate::money::Usd;
pub use stop::Stop;
pub use terms::Terms;

mod stop;
mod terms;

/// What the engine counted in one round. Only findings at or above the
/// floor appear in the id lists: below-floor findings never extend or stop
/// a loop.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RoundFacts {
    pub round: u32,
    /// The round's review was read. A round that ended without one (a guard
    /// fired before the reviewer was called, or no review came) meets only
    /// the guards.
    pub reviewed: bool,
    /// The paths the writer's patch touches outside the contract's scope.
    pub out_of_scope: Vec<String>,
    /// The loop's spend, this round included.
    pub spent_usd: Usd,
    pub spent_tokens: u64,
    /// The writer had its turn and changed nothing: an empty patch.
    pub writer_idle: bool,
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

/// The six rules, in priority order.
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
    /// Every rule, in the order [`ORDER`] asks them.
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

/// A stop that fired, with its one-line reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fired {
    pub stop: Stop,
    pub reason: String,
    /// For `diff-growth`: the round to revert to (fewest must-fix, latest on ties).
    pub revert_to: Option<u32>,
}

/// One check: the terms, the rounds so far, the latest round.
type Check = fn(&Terms, &[RoundFacts], &RoundFacts) -> Option<Fired>;

/// A place in [`ORDER`].
enum Step {
    /// One of the six rules: it judges a review.
    Rule(Check),
    /// A guard: it judges the round as it happened, reviewed or not.
    Guard(Check),
}

/// Every stop, in priority order. The contract guards end a round before
/// the rules, except that a review proving the work done is done: spending
/// the last dollar on a clean review is not an escalation (docs/rules.md).
/// The progress guards stop only a loop the rules would let go on.
const ORDER: [Step; 10] = [
    Step::Guard(scope),
    Step::Rule(clean),
    Step::Guard(budget),
    Step::Rule(reopened),
    Step::Rule(flip_flop),
    Step::Rule(diff_growth),
    Step::Rule(round_cap),
    Step::Rule(nit_round),
    Step::Guard(stalled),
    Step::Guard(disputed),
];

/// Asks every check in [`ORDER`] of the last round of `rounds` (rounds
/// 1..=n in order); the first that fires stops it. `None`: continue.
pub fn evaluate(terms: &Terms, rounds: &[RoundFacts]) -> Option<Fired> {
    let now = rounds.last()?;
    ORDER.iter().find_map(|step| match step {
        Step::Rule(check) if now.reviewed => check(terms, rounds, now),
        Step::Rule(_) => None,
        Step::Guard(check) => check(terms, rounds, now),
    })
}

/// Why a round that nothing stopped goes on, in one line.
pub fn going_on(now: &RoundFacts) -> String {
    if now.reviewed {
        format!(
            "round {}: {} still open",
            now.round,
            crate::text::plural(now.must_fix_left as usize, "must-fix finding")
        )
    } else {
        format!("round {}: unreviewed", now.round)
    }
}

fn fired(stop: Stop, reason: String) -> Option<Fired> {
    Some(Fired {
        stop,
        reason,
        revert_to: None,
    })
}

/// Guard `scope`: the writer's patch touched a file outside the scope.
fn scope(terms: &Terms, _: &[RoundFacts], now: &RoundFacts) -> Option<Fired> {
    (!now.out_of_scope.is_empty()).then_some(())?;
    let quoted = |names: &[String]| {
        names
            .iter()
            .map(|name| format!("`{name}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    fired(
        Stop::Scope,
        format!(
            "round {}: the patch touches {} outside the scope ({}): {}",
            now.round,
            crate::text::plural(now.out_of_scope.len(), "file"),
            quoted(&terms.contract.scope),
            quoted(&now.out_of_scope)
        ),
    )
}

/// Guard `budget`: the loop's spend, this round included, reached a cap.
fn budget(terms: &Terms, _: &[RoundFacts], now: &RoundFacts) -> Option<Fired> {
    let caps = &terms.contract.budget;
    let why = if let Some(cap) = caps.usd
        && now.spent_usd >= cap
    {
        format!("the loop spent {} of its {cap} budget", now.spent_usd)
    } else if let Some(cap) = caps.tokens
        && now.spent_tokens >= cap
    {
        format!(
            "the loop used {} of its {cap} budget tokens",
            now.spent_tokens
        )
    } else {
        return None;
    };
    let when = if now.reviewed {
        ""
    } else {
        " before the review"
    };
    fired(Stop::Budget, format!("round {}: {why}{when}", now.round))
}

fn clean(_: &Terms, _: &[RoundFacts], now: &RoundFacts) -> Option<Fired> {
    (now.must_fix_left == 0).then_some(())?;
    fired(
        Stop::Rule(Rule::Clean),
        format!("round {}: no must-fix finding is open", now.round),
    )
}

fn reopened(_: &Terms, _: &[RoundFacts], now: &RoundFacts) -> Option<Fired> {
    let (id, closed_in) = now.reopened.first()?;
    fired(
        Stop::Rule(Rule::Reopened),
        format!(
            "round {}: {id} closed in round {closed_in} is reported again{}",
            now.round,
            and_more(now.reopened.len())
        ),
    )
}

fn flip_flop(_: &Terms, _: &[RoundFacts], now: &RoundFacts) -> Option<Fired> {
    if let Some((id, undone)) = now.undoes.first() {
        return fired(
            Stop::Rule(Rule::FlipFlop),
            format!(
                "round {}: {id} undoes the earlier required {undone}",
                now.round
            ),
        );
    }
    let what = now.reversed_line.as_ref()?;
    fired(
        Stop::Rule(Rule::FlipFlop),
        format!("round {}: the writer's patch {what}", now.round),
    )
}

fn diff_growth(_: &Terms, rounds: &[RoundFacts], now: &RoundFacts) -> Option<Fired> {
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
        stop: Stop::Rule(Rule::DiffGrowth),
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

fn round_cap(terms: &Terms, _: &[RoundFacts], now: &RoundFacts) -> Option<Fired> {
    let max_rounds = terms.contract.max_rounds;
    (now.round >= max_rounds && now.must_fix_left > 0).then_some(())?;
    fired(
        Stop::Rule(Rule::RoundCap),
        format!(
            "round {} of {max_rounds}: {} still open",
            now.round,
            crate::text::plural(now.must_fix_left as usize, "must-fix finding")
        ),
    )
}

fn nit_round(_: &Terms, _: &[RoundFacts], now: &RoundFacts) -> Option<Fired> {
    let only_below = now.must_fix_reported.is_empty() && now.below_floor_reported > 0;
    (only_below && !now.carried_unconfirmed.is_empty()).then_some(())?;
    fired(
        Stop::Rule(Rule::NitRound),
        format!(
            "round {}: only below-floor findings reported; carried must-fix {} unconfirmed",
            now.round,
            now.carried_unconfirmed.join(", ")
        ),
    )
}

/// Guard `stalled`: the writer changed nothing while must-fix findings
/// were open, and disputed none of them.
fn stalled(terms: &Terms, _: &[RoundFacts], now: &RoundFacts) -> Option<Fired> {
    let open = now.must_fix_open_before;
    (terms.contract.guards.contains(&Guard::Stalled)
        && now.writer_idle
        && open > 0
        && !now.disputed_answered)
        .then_some(())?;
    let was = if open == 1 {
        "1 must-fix finding was".to_string()
    } else {
        format!("{open} must-fix findings were")
    };
    let unreviewed = if now.reviewed {
        ""
    } else {
        "; the reviewer was not called"
    };
    fired(
        Stop::Progress(Guard::Stalled),
        format!(
            "round {}: the writer changed nothing while {was} open and disputed none{unreviewed}",
            now.round
        ),
    )
}

/// Guard `disputed`: the reviewer reports again a must-fix finding the
/// writer disputed.
fn disputed(terms: &Terms, _: &[RoundFacts], now: &RoundFacts) -> Option<Fired> {
    terms
        .contract
        .guards
        .contains(&Guard::Disputed)
        .then_some(())?;
    let id = now.disputed_again.first()?;
    fired(
        Stop::Progress(Guard::Disputed),
        format!(
            "round {}: the writer disputed {id} and the reviewer reports it again{}: a person decides",
            now.round,
            and_more(now.disputed_again.len())
        ),
    )
}

/// ` (and 2 more)` after the first of `n` things named.
fn and_more(n: usize) -> String {
    match n {
        0 | 1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    }
}

#[cfg(test)]
mod tests;
