//! Routing a valid judgement to stop or continue (SPEC §7). Pure. The engine
//! consults it only when the six rules say continue.

use super::questions::{CONTINUE, HOLDS, STOP_REASON, WORTH_ANOTHER_ROUND, WORTH_DOING};
use super::show_number;
use super::validate::{Answer, Judgement};

/// Where a judgement sends the loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The stop's name (`judge:holds`, `judge:over_polishing`…), or `None`
    /// to continue.
    pub stop: Option<String>,
    /// One line quoting the numbers the decision read.
    pub reason: String,
}

/// A yes/no answer at or above this means yes.
pub const YES_AT: f64 = 0.5;

/// The route for `judgement`, first match wins: an open `block` finding
/// continues (it always goes back to the writer, whatever the judge says);
/// a `stop_reason` other than `continue` stops; `holds` ≥ 0.5 stops;
/// `worth_doing` < 0.5 stops; `worth_another_round` < 0.5 stops; else
/// continue. Only the default ids route, and only in their default kinds: a
/// custom question informs the record, never the loop.
pub fn route(judgement: &Judgement, block_open: bool) -> Route {
    if block_open {
        return Route {
            stop: None,
            reason: "a `block` finding is open: it always goes back to the writer".to_string(),
        };
    }
    // (question id, clause quoting its answer); the stop is (id, stop name).
    let mut clauses: Vec<(&str, String)> = Vec::new();
    let mut stop: Option<(&str, String)> = None;
    if let Some(Answer::Choice {
        choice,
        probabilities,
        confidence,
    }) = judgement.answers.get(STOP_REASON)
    {
        let p = probabilities.get(choice).copied().unwrap_or(0.0);
        clauses.push((
            STOP_REASON,
            format!("{STOP_REASON} `{choice}` (p {p}, confidence {confidence})"),
        ));
        if choice != CONTINUE {
            stop = Some((STOP_REASON, choice.clone()));
        }
    }
    for (id, stops_on_yes, name) in [
        (HOLDS, true, "holds"),
        (WORTH_DOING, false, "not_worth_doing"),
        (WORTH_ANOTHER_ROUND, false, "not_worth_another_round"),
    ] {
        let Some(p) = judgement.probability(id) else {
            continue;
        };
        let yes = p >= YES_AT;
        let cmp = if yes { "≥" } else { "<" };
        clauses.push((id, format!("{id} {p} {cmp} {}", show_number(YES_AT))));
        if stop.is_none() && yes == stops_on_yes {
            stop = Some((id, name.to_string()));
        }
    }
    match stop {
        Some((id, name)) => {
            let (decisive, rest): (Vec<_>, Vec<_>) = clauses
                .into_iter()
                .partition(|(clause_id, _)| *clause_id == id);
            let mut reason: Vec<String> = decisive.into_iter().map(|(_, c)| c).collect();
            if !rest.is_empty() {
                let rest: Vec<String> = rest.into_iter().map(|(_, c)| c).collect();
                reason.push(format!("also {}", rest.join(", ")));
            }
            Route {
                stop: Some(format!("judge:{name}")),
                reason: reason.join("; "),
            }
        }
        None if clauses.is_empty() => Route {
            stop: None,
            reason: format!(
                "continue: none of {STOP_REASON}, {HOLDS}, {WORTH_DOING}, \
                 {WORTH_ANOTHER_ROUND} was answered"
            ),
        },
        None => {
            let all: Vec<String> = clauses.into_iter().map(|(_, c)| c).collect();
            Route {
                stop: None,
                reason: format!("continue: {}", all.join(", ")),
            }
        }
    }
}

#[cfg(test)]
mod tests;
