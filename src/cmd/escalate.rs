//! `referee escalate`: prints the hand-off (SPEC §5.1) of a loop; `record`
//! prints the same when a loop stops on anything but `clean`.

use std::collections::HashMap;

use crate::cli::{EscalateArgs, HandoffFormat};
use crate::engine::accounting::{FindingStanding, Tracked};
use crate::engine::{History, Loop, LoopStanding};
use crate::exit::Exit;
use crate::findings::responses;
use crate::ledger::Kind;
use crate::report::handoff::{Contested, Decision, Handoff};
use crate::state::State;

pub fn run(state: &State, args: EscalateArgs) -> anyhow::Result<Exit> {
    let lp = super::open_loop(state, &args.select)?;
    let history = History::read(&lp, lp.store.read()?.rows)?;
    let handoff = build(&lp, &history)?;
    let format = if args.json {
        HandoffFormat::Json
    } else {
        args.format
    };
    super::emit_rendered(
        &crate::report::handoff::render(&handoff, format),
        format.for_people(),
    )?;
    Ok(Exit::Success)
}

/// The hand-off of `lp` as its history stands.
pub(super) fn build(lp: &Loop, history: &History) -> anyhow::Result<Handoff> {
    let floor = lp.contract().severity_floor;
    let said = writer_responses(lp, history);
    let last_reports: HashMap<&str, &crate::engine::decide::Reported> = history
        .last
        .iter()
        .flat_map(|(_, s)| s.reported.iter())
        .map(|r| (r.finding.id.as_str(), r))
        .collect();
    // Open must-fix findings, and the earlier findings they say they undo:
    // a flip-flop has two sides.
    let open: Vec<&Tracked> = history
        .registry
        .findings
        .iter()
        .filter(|t| t.standing == FindingStanding::Open && t.finding.severity >= floor)
        .collect();
    let mut undone_by: HashMap<&str, &str> = HashMap::new();
    for t in &open {
        if let Some(undone) = t.finding.undoes.as_deref() {
            undone_by.entry(undone).or_insert(t.finding.id.as_str());
        }
    }
    let findings = history
        .registry
        .findings
        .iter()
        .filter(|t| {
            open.iter().any(|o| o.finding.id == t.finding.id)
                || (undone_by.contains_key(t.finding.id.as_str())
                    && t.standing != FindingStanding::Open)
        })
        .map(|t| {
            let f = &t.finding;
            Contested {
                id: f.id.clone(),
                severity: f.severity.as_str().to_string(),
                title: f.title.clone(),
                location: f.file.as_ref().map(|file| match f.line {
                    Some(line) => format!("{file}:{line}"),
                    None => file.clone(),
                }),
                reviewer_says: f
                    .body
                    .as_deref()
                    .map(crate::ledger::row::one_line)
                    .filter(|b| !b.is_empty())
                    .unwrap_or_else(|| f.title.clone()),
                writer_says: said.get(f.id.as_str()).cloned(),
                undone_by: match t.standing {
                    FindingStanding::Open => None,
                    _ => undone_by.get(f.id.as_str()).map(|s| s.to_string()),
                },
                rounds_contested: t.rounds.clone(),
                reopened_in: t.reopened_in.clone(),
                induced_by: t.induced_by,
                back_after_skip: last_reports
                    .get(f.id.as_str())
                    .and_then(|r| r.back_after_skip),
                stands_for: last_reports
                    .get(f.id.as_str())
                    .map(|r| r.stands_for.clone())
                    .unwrap_or_default(),
            }
        })
        .collect();
    let below_floor_open = history
        .registry
        .findings
        .iter()
        .filter(|t| t.standing == FindingStanding::Open && t.finding.severity < floor)
        .count() as u32;
    let decisions = history
        .rows
        .iter()
        .filter(|r| matches!(r.kind, Kind::Approve | Kind::Reject))
        .map(|r| Decision {
            kind: if r.kind == Kind::Approve {
                "approved".into()
            } else {
                "rejected".into()
            },
            by: r.by.clone(),
            reason: r.reason.clone(),
            at: r.at.clone(),
            after_round: r.round,
            subject: r.subject.clone(),
        })
        .collect();
    let (status, rule) = match history.standing() {
        LoopStanding::Fresh => ("not started", None),
        LoopStanding::Stopped { rule, .. } => ("stopped", Some(rule)),
        LoopStanding::Running { .. } | LoopStanding::Rejected { .. } => {
            let rule = history.last.as_ref().and_then(|(_, s)| s.rule.clone());
            match rule {
                Some(rule) => ("stopped", Some(rule)),
                None => ("running", None),
            }
        }
    };
    let last = history.last.as_ref().map(|(_, s)| s);
    let open_ids: Vec<String> = open.iter().map(|t| t.finding.id.clone()).collect();
    let next = match (status, &rule) {
        ("stopped", Some(rule)) => crate::report::handoff::choices(
            lp.name.as_str(),
            rule,
            history.max_rounds,
            &open_ids,
            last.and_then(|s| s.revert_to.as_ref()),
            last.map(|s| s.out_of_scope.as_slice()).unwrap_or_default(),
            history.contract.budget.usd,
        ),
        _ => Vec::new(),
    };
    Ok(Handoff {
        loop_name: lp.name.to_string(),
        round: history.round(),
        max_rounds: history.max_rounds,
        status: status.to_string(),
        rule,
        reason: last
            .map(|s| s.reason.clone())
            .unwrap_or_else(|| "no round has been recorded".into()),
        findings,
        below_floor_open,
        revert_to: last.and_then(|s| s.revert_to.clone()),
        out_of_scope: last.map(|s| s.out_of_scope.clone()).unwrap_or_default(),
        carried_unconfirmed: last
            .map(|s| s.carried_unconfirmed.clone())
            .unwrap_or_default(),
        skipped: history
            .registry
            .findings
            .iter()
            .filter(|t| t.standing == FindingStanding::Skipped && t.finding.severity >= floor)
            .map(|t| t.finding.id.clone())
            .collect(),
        spent_usd: history.spent_usd,
        spent_tokens: history.spent_tokens,
        decisions,
        judge: last.and_then(|s| s.judge.clone()),
        next,
        rows: history.rows.clone(),
    })
}

/// The writer's latest word on each finding, over every round's responses.
fn writer_responses(lp: &Loop, history: &History) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for e in &history.earlier {
        let Ok(Some(bytes)) = lp.store.evidence_file(e.round, "responses.json") else {
            continue;
        };
        let Ok(list) = responses::parse(&bytes) else {
            continue;
        };
        for r in list {
            let note = crate::ledger::row::one_line(&r.note);
            let text = if note.is_empty() {
                r.status.as_str().to_string()
            } else {
                format!("{}: {note}", r.status.as_str())
            };
            out.insert(r.id, text);
        }
    }
    out
}
