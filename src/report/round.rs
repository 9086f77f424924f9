//! One recorded round as `record` (and `run`) print it: human lines or a JSON
//! object keyed by the ledger's columns plus the round's findings. Pure.

use serde_json::{Value, json};

use crate::engine::accounting::FindingStanding;
use crate::engine::decide::Seen;
use crate::engine::{Already, RoundState};
use crate::findings::Severity;
use crate::ledger::Row;

/// What to print about one round.
pub struct RoundView<'a> {
    pub loop_name: &'a str,
    pub row: &'a Row,
    pub state: &'a RoundState,
    pub max_rounds: u32,
    pub already: Already,
    pub floor: Severity,
    /// `run` drives the loop: the next step is the referee's, not the caller's.
    pub driven: bool,
}

/// The human form.
pub fn text(v: &RoundView<'_>) -> String {
    let mut out = String::new();
    match v.already {
        Already::No => {}
        Already::Recorded => out.push_str(&format!(
            "already recorded as round {}: nothing appended (the same tree and review, or the same idempotency key)\n",
            v.row.round
        )),
        Already::Done => out.push_str(&format!(
            "already done: loop `{}` stopped at round {} on `{}`, and the work tree is that round's: {}\n",
            v.loop_name,
            v.row.round,
            v.state.rule.as_ref().map(|r| r.name()).unwrap_or_default(),
            if v.driven {
                "no agent was called, nothing appended"
            } else {
                "this review was not recorded, nothing appended"
            }
        )),
    }
    let outcome = match &v.state.rule {
        Some(rule) => format!("stop: {rule}"),
        None => v.state.verdict.as_str().to_string(),
    };
    let outcome = super::style::paint(&outcome, super::style::tone_of(v.state.rule.as_ref()));
    out.push_str(&format!(
        "round {} of {} · loop `{}` · {outcome}\n",
        v.row.round, v.max_rounds, v.loop_name
    ));
    let c = v.row.counts.unwrap_or_default();
    out.push_str(&format!(
        "  opened {} · closed {} · reopened {} · must-fix left {} · below floor {} · patch +{} -{}\n",
        c.opened, c.closed, c.reopened, c.must_fix_left, c.below_floor_open, c.diff_added, c.diff_removed
    ));
    if !v.state.reviewed {
        out.push_str("  unreviewed: no findings were ingested this round\n");
    }
    for r in &v.state.reported {
        let f = &r.finding;
        let loc = match (&f.file, f.line) {
            (Some(file), Some(line)) => format!(" {file}:{line}"),
            (Some(file), None) => format!(" {file}"),
            _ => String::new(),
        };
        let state = match r.state {
            Seen::New => "new",
            Seen::Open => "open",
            Seen::Reopened => "reopened",
            Seen::Waived => "waived",
        };
        let induced = r
            .induced_by
            .map(|n| format!(" (induced by round {n})"))
            .unwrap_or_default();
        let floor = if r.must_fix || r.state == Seen::Waived {
            ""
        } else {
            " (below floor)"
        };
        let back = r
            .back_after_skip
            .map(|n| format!(" (open again: the reviewer skipped it in round {n})"))
            .unwrap_or_default();
        let merged = if r.stands_for.is_empty() {
            String::new()
        } else {
            format!(" (also stands for {}, kept open)", r.stands_for.join(", "))
        };
        let resembles = r
            .resembles
            .as_ref()
            .map(|id| format!(" (not a reopen of closed {id}: too little in common)"))
            .unwrap_or_default();
        out.push_str(&format!(
            "  {state:<8} {} [{}]{loc} {}{induced}{floor}{back}{merged}{resembles}\n",
            f.id, f.severity, f.title
        ));
    }
    if !v.state.skipped.is_empty() {
        out.push_str(&format!(
            "  skipped  {}: not reported this round and nothing touched {}; not must-fix unless a review reports {} again\n",
            v.state.skipped.join(", "),
            if v.state.skipped.len() == 1 { "its place" } else { "their places" },
            if v.state.skipped.len() == 1 { "it" } else { "them" },
        ));
    }
    let unknown: Vec<&str> = v
        .state
        .responses
        .iter()
        .map(|r| r.id.as_str())
        .filter(|id| {
            !v.state
                .registry
                .findings
                .iter()
                .any(|t| t.finding.id == *id)
        })
        .collect();
    if !unknown.is_empty() {
        out.push_str(&format!(
            "  note: the writer's responses name ids the loop does not know: {}\n",
            unknown.join(", ")
        ));
    }
    if let Some(judge) = &v.state.judge {
        out.push_str(&format!("  {}\n", judge.summary()));
    }
    out.push_str(&format!("{}\n", next_line(v)));
    out
}

fn next_line(v: &RoundView<'_>) -> String {
    let open: Vec<&str> = v
        .state
        .registry
        .findings
        .iter()
        .filter(|t| t.standing == FindingStanding::Open && t.finding.severity >= v.floor)
        .map(|t| t.finding.id.as_str())
        .collect();
    match &v.state.rule {
        None if open.is_empty() => format!(
            "continue: {}; record round {} after the next review",
            v.state.reason,
            v.row.round + 1
        ),
        None if v.driven => format!(
            "continue: round {} asks the writer to fix {}",
            v.row.round + 1,
            open.join(", ")
        ),
        None => format!(
            "continue: fix {}, then record round {}",
            open.join(", "),
            v.row.round + 1
        ),
        Some(stop) if stop.is_done() => format!("done: {}", v.state.reason),
        Some(_) => format!("escalated: {}", v.state.reason),
    }
}

/// The JSON form: the row's columns, then what the round adds.
pub fn json(v: &RoundView<'_>, exit: i32) -> Value {
    let mut value = v.row.to_json();
    if let Value::Object(map) = &mut value {
        let extra = json!({
            "loop": v.loop_name,
            "already_recorded": v.already == Already::Recorded,
            "already_done": v.already == Already::Done,
            "exit": exit,
            "max_rounds": v.max_rounds,
            "reviewed": v.state.reviewed,
            "snapshot_ref": v.state.snapshot.reference,
            "tree": v.state.snapshot.tree,
            "findings": v.state.reported,
            "revert_to": v.state.revert_to,
            "out_of_scope": v.state.out_of_scope,
            "carried_unconfirmed": v.state.carried_unconfirmed,
            "skipped": v.state.skipped,
            "judge": v.state.judge,
        });
        if let Value::Object(extra) = extra {
            map.extend(extra);
        }
    }
    value
}
