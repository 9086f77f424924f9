//! The hand-off (SPEC §5.1): the rule that fired and why, the ledger, then
//! each unresolved finding in four lines. Text, Markdown or JSON. Pure.

use serde::Serialize;
use serde_json::Value;

use std::collections::HashMap;

use crate::engine::accounting::{FindingStanding, Tracked};
use crate::engine::{History, Loop, LoopStanding, RevertTo};
use crate::ledger::Kind;
use crate::ledger::Row;
use crate::money::Usd;
use crate::report::ledger::LedgerFormat;
use crate::rules::{Guard, Rule, Stop};

/// Hand-off formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HandoffFormat {
    Text,
    Markdown,
    Json,
}

impl HandoffFormat {
    /// Read by people (control characters shown, colors), not programs.
    pub fn for_people(self) -> bool {
        matches!(self, HandoffFormat::Text | HandoffFormat::Markdown)
    }
}

/// Everything a human needs to take over a loop, and nothing more.
#[derive(Debug, Clone, Serialize)]
pub struct Handoff {
    #[serde(rename = "loop")]
    pub loop_name: String,
    pub round: u32,
    pub max_rounds: u32,
    /// `stopped`, `running` or `not started`.
    pub status: String,
    pub rule: Option<Stop>,
    pub reason: String,
    pub findings: Vec<Contested>,
    /// Open findings below the floor: logged, not listed.
    pub below_floor_open: u32,
    pub revert_to: Option<RevertTo>,
    pub out_of_scope: Vec<String>,
    pub carried_unconfirmed: Vec<String>,
    /// Must-fix findings the reviewer skipped (missing while nothing touched
    /// them): not counted, listed so a person knows.
    pub skipped: Vec<String>,
    pub spent_usd: Usd,
    pub spent_tokens: u64,
    pub decisions: Vec<Decision>,
    /// What the judge said in the last round, quoted.
    pub judge: Option<crate::judge::engine::Outcome>,
    /// What a person can do now, as commands ([`choices`]).
    pub next: Vec<Choice>,
    #[serde(skip)]
    pub rows: Vec<Row>,
}

/// The hand-off of `lp` as `history` stands, with the writer's word on
/// each finding read from the rounds' responses.
pub fn of(lp: &Loop, history: &History) -> Handoff {
    build(lp.name.as_str(), history, &writer_responses(lp, history))
}

/// The writer's latest word on each finding, over every round's responses.
fn writer_responses(lp: &Loop, history: &History) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for e in &history.earlier {
        let Ok(Some(bytes)) = lp.store.evidence_file(e.round, "responses.json") else {
            continue;
        };
        let Ok(list) = crate::findings::responses::parse(&bytes) else {
            continue;
        };
        for r in list {
            let note = crate::text::one_line(&r.note);
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

/// The hand-off of loop `name` as `history` stands; `said` is the writer's
/// latest word on each finding (from its responses).
pub fn build(name: &str, history: &History, said: &HashMap<String, String>) -> Handoff {
    let floor = history.contract.severity_floor;
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
                    .map(crate::text::one_line)
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
                reported_by: f.reported_by.clone(),
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
            name,
            rule,
            history.max_rounds,
            &open_ids,
            last.and_then(|s| s.revert_to.as_ref()),
            last.map(|s| OutOfScope {
                round: s.round,
                from: &s.from,
                files: &s.out_of_scope,
                added: &s.out_of_scope_added,
            }),
            history.contract.budget.usd,
        ),
        _ => Vec::new(),
    };
    Handoff {
        loop_name: name.to_string(),
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
    }
}

/// What the last round touched outside the scope, for [`choices`].
pub struct OutOfScope<'a> {
    /// The round that touched them.
    pub round: u32,
    /// The commit (or tree) the round's patch starts from.
    pub from: &'a str,
    pub files: &'a [String],
    /// The paths of `files` that `from` does not have.
    pub added: &'a [String],
}

/// One thing a person can do about a stopped loop, and the command for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Choice {
    pub what: String,
    pub command: String,
}

/// The choices a person has when a loop stops on `rule`, as commands: the
/// rule decides which come first. `ids` are the open must-fix findings.
pub fn choices(
    loop_name: &str,
    rule: &Stop,
    max_rounds: u32,
    ids: &[String],
    revert_to: Option<&RevertTo>,
    out_of_scope: Option<OutOfScope<'_>>,
    budget_usd: Option<Usd>,
) -> Vec<Choice> {
    let l = loop_name;
    let c = |what: &str, command: String| Choice {
        what: what.to_string(),
        command,
    };
    let more = max_rounds + 2;
    let amend = c(
        "give the writer more rounds, in writing",
        format!("referee resume --loop {l} --max-rounds {more} --by NAME --reason TEXT"),
    );
    let waive = ids.first().map(|id| {
        c(
            "rule a finding not worth fixing (it stops counting)",
            // The id is the reviewer's text: one quoted word, after `--`
            // when it could be read as an option.
            match id.starts_with('-') {
                false => format!(
                    "referee waive {} --loop {l} --by NAME --reason TEXT",
                    crate::text::shell_word(id)
                ),
                true => format!(
                    "referee waive --loop {l} --by NAME --reason TEXT -- {}",
                    crate::text::shell_word(id)
                ),
            },
        )
    });
    let approve = c(
        "accept the work as it stands",
        format!("referee approve --loop {l} --by NAME --reason TEXT"),
    );
    let reject = c(
        "reject it",
        format!("referee reject --loop {l} --by NAME --reason TEXT"),
    );
    let fresh = c(
        "start over with another contract",
        format!("referee init --loop {l}-2 [flags]"),
    );
    let mut out = Vec::new();
    if rule.is_done() {
        out.push(approve);
        out.push(reject);
        return out;
    }
    match rule {
        Stop::Rule(Rule::DiffGrowth) => {
            if let Some(r) = revert_to {
                out.push(c(
                    &format!("go back to round {} (the referee never reverts)", r.round),
                    r.command.clone(),
                ));
            }
            out.push(amend);
        }
        Stop::Scope => {
            // Back to where the round began: files `from` has are
            // restored from it, files the writer added are removed (set
            // aside, at round 1).
            if let Some(scope) = out_of_scope {
                let words = |added: bool| {
                    scope
                        .files
                        .iter()
                        .filter(|f| scope.added.contains(f) == added)
                        .map(|f| crate::text::shell_word(f))
                        .collect::<Vec<_>>()
                };
                let (had, added) = (words(false), words(true));
                if scope.round == 1 {
                    // Round 1's patch starts at the base: what it shows may
                    // be the person's work from before `init`, which
                    // `restore` and `rm` would throw away. A stash keeps it.
                    let all: Vec<String> = had.into_iter().chain(added).collect();
                    out.push(c(
                        "set the changes outside the scope aside (at round 1 they may be yours from before `init`; `git stash pop` brings them back)",
                        format!("git stash push --include-untracked -- {}", all.join(" ")),
                    ));
                } else {
                    if !had.is_empty() {
                        out.push(c(
                            "undo the changes outside the scope",
                            format!(
                                "git restore --source={} -- {}",
                                crate::text::shell_word(scope.from),
                                had.join(" ")
                            ),
                        ));
                    }
                    if !added.is_empty() {
                        out.push(c(
                            "remove the files it added outside the scope",
                            format!("rm -- {}", added.join(" ")),
                        ));
                    }
                }
            }
            out.push(fresh.clone());
        }
        Stop::Budget => {
            let raise = budget_usd.map_or_else(
                || format!("referee contract amend --loop {l} --budget-tokens N --by NAME --reason TEXT"),
                |usd| {
                    format!(
                        "referee contract amend --loop {l} --budget-usd {} --by NAME --reason TEXT",
                        usd.doubled().decimal()
                    )
                },
            );
            out.push(c("raise the budget, in writing", raise));
        }
        Stop::Progress(Guard::Disputed) | Stop::Rule(Rule::Reopened | Rule::FlipFlop) => {
            if let Some(waive) = waive.clone() {
                out.push(Choice {
                    what: "side with the writer: waive the finding".into(),
                    ..waive
                });
            }
            out.push(Choice {
                what: "side with the reviewer: give the writer another round to fix it".into(),
                ..amend
            });
        }
        _ => {
            out.push(amend);
            if let Some(waive) = waive {
                out.push(waive);
            }
        }
    }
    out.push(approve);
    out.push(reject);
    if *rule != Stop::Scope {
        out.push(fresh);
    }
    out
}

/// One unresolved finding and both positions on it.
#[derive(Debug, Clone, Serialize)]
pub struct Contested {
    pub id: String,
    pub severity: String,
    pub title: String,
    pub location: Option<String>,
    pub reviewer_says: String,
    /// `status: note`, or `None` when the writer never answered.
    pub writer_says: Option<String>,
    /// For a closed finding listed because an open one says it undoes it.
    pub undone_by: Option<String>,
    pub rounds_contested: Vec<u32>,
    pub reopened_in: Vec<u32>,
    pub induced_by: Option<u32>,
    /// Open again after the reviewer skipped it in this round.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub back_after_skip: Option<u32>,
    /// Earlier findings the last review reported as part of this one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stands_for: Vec<String>,
    /// A panel's reviewers that reported it when it was last reported.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reported_by: Vec<String>,
}

/// A human decision on the loop.
#[derive(Debug, Clone, Serialize)]
pub struct Decision {
    pub kind: String,
    pub by: String,
    pub reason: String,
    pub at: String,
    pub after_round: u32,
    pub subject: String,
}

pub fn render(h: &Handoff, format: HandoffFormat) -> Vec<u8> {
    match format {
        HandoffFormat::Text => text(h).into_bytes(),
        HandoffFormat::Markdown => markdown(h).into_bytes(),
        HandoffFormat::Json => json(h),
    }
}

fn headline(h: &Handoff) -> String {
    match (h.status.as_str(), &h.rule) {
        ("stopped", Some(rule)) => format!(
            "loop `{}` stopped at round {} of {} on `{rule}`",
            h.loop_name, h.round, h.max_rounds
        ),
        ("not started", _) => format!("loop `{}` has not started", h.loop_name),
        _ => format!(
            "loop `{}` is running: round {} of {} said continue",
            h.loop_name, h.round, h.max_rounds
        ),
    }
}

fn writer_says(c: &Contested) -> &str {
    c.writer_says.as_deref().unwrap_or("(no response)")
}

fn rounds(list: &[u32]) -> String {
    list.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn finding_line(c: &Contested, code: fn(&str) -> String) -> String {
    let mut notes = Vec::new();
    if let Some(by) = &c.undone_by {
        notes.push(format!("closed, undone by {by}"));
    }
    if let Some(round) = c.back_after_skip {
        notes.push(format!(
            "open again after the reviewer skipped it in round {round}"
        ));
    }
    if !c.stands_for.is_empty() {
        notes.push(format!("also stands for {}", c.stands_for.join(", ")));
    }
    if !c.reported_by.is_empty() {
        notes.push(format!("reported by {}", c.reported_by.join(", ")));
    }
    let tag = if notes.is_empty() {
        format!("[{} {}]", c.id, c.severity)
    } else {
        format!("[{} {}, {}]", c.id, c.severity, notes.join(", "))
    };
    match &c.location {
        Some(loc) => format!("{} ({}) {tag}", c.title, code(loc)),
        None => format!("{} {tag}", c.title),
    }
}

fn extras(h: &Handoff, code: fn(&str) -> String) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(r) = &h.revert_to {
        out.push(format!(
            "revert to: round {} ({}), the round with the fewest must-fix findings; the referee never reverts. A human could run:\n  {}",
            r.round,
            code(&r.reference),
            r.command
        ));
    }
    if !h.out_of_scope.is_empty() {
        let files: Vec<String> = h.out_of_scope.iter().map(|f| code(f)).collect();
        out.push(format!("outside the scope: {}", files.join(", ")));
    }
    if !h.carried_unconfirmed.is_empty() {
        out.push(format!(
            "unconfirmed: {} carried from earlier rounds, neither reported again nor resolved",
            h.carried_unconfirmed.join(", ")
        ));
    }
    if !h.skipped.is_empty() {
        out.push(format!(
            "skipped by the reviewer: {} (missing from a review while nothing touched {}; not counted as must-fix unless reported again)",
            h.skipped.join(", "),
            if h.skipped.len() == 1 { "it" } else { "them" }
        ));
    }
    if let Some(judge) = &h.judge {
        out.push(judge.summary());
    }
    if h.below_floor_open > 0 {
        out.push(format!(
            "below the floor: {} open, not listed (`referee findings --open`)",
            h.below_floor_open
        ));
    }
    if !h.spent_usd.is_zero() || h.spent_tokens > 0 {
        out.push(format!("spent: {}, {} tokens", h.spent_usd, h.spent_tokens));
    }
    for d in &h.decisions {
        let reason = if d.reason.is_empty() {
            String::new()
        } else {
            format!(": {}", d.reason)
        };
        out.push(format!(
            "{} by {} after round {} at {} (tree {}){reason}",
            d.kind,
            d.by,
            d.after_round,
            d.at,
            code(d.subject.get(..12).unwrap_or(&d.subject))
        ));
    }
    out
}

fn plain(s: &str) -> String {
    format!("`{s}`")
}

fn text(h: &Handoff) -> String {
    let tone = super::style::tone_of(if h.status == "stopped" {
        h.rule.as_ref()
    } else {
        None
    });
    let mut out = format!(
        "{}\nwhy: {}\n\n",
        super::style::paint(&headline(h), tone),
        h.reason
    );
    out.push_str(&String::from_utf8_lossy(&super::ledger::render(
        &h.loop_name,
        &h.rows,
        LedgerFormat::Table,
    )));
    for c in &h.findings {
        out.push('\n');
        out.push_str(&format!("finding: {}\n", finding_line(c, plain)));
        out.push_str(&format!("reviewer says: {}\n", c.reviewer_says));
        out.push_str(&format!("writer says: {}\n", writer_says(c)));
        out.push_str(&format!(
            "rounds contested: {}\n",
            rounds(&c.rounds_contested)
        ));
    }
    let extras = extras(h, plain);
    if !extras.is_empty() {
        out.push('\n');
        for line in extras {
            out.push_str(&line);
            out.push('\n');
        }
    }
    if !h.next.is_empty() {
        out.push_str("\nwhat you can do:\n");
        for choice in &h.next {
            out.push_str(&format!("  {}: `{}`\n", choice.what, choice.command));
        }
    }
    out
}

fn markdown(h: &Handoff) -> String {
    let mut out = format!("## {}\n\n**why:** {}\n\n", headline(h), h.reason);
    out.push_str(&String::from_utf8_lossy(&super::ledger::render(
        &h.loop_name,
        &h.rows,
        LedgerFormat::Markdown,
    )));
    if !h.findings.is_empty() {
        out.push_str("\n### unresolved findings\n");
    }
    for c in &h.findings {
        out.push('\n');
        out.push_str(&format!("- **finding:** {}\n", finding_line(c, plain)));
        out.push_str(&format!("  **reviewer says:** {}\n", c.reviewer_says));
        out.push_str(&format!("  **writer says:** {}\n", writer_says(c)));
        out.push_str(&format!(
            "  **rounds contested:** {}\n",
            rounds(&c.rounds_contested)
        ));
    }
    let extras = extras(h, plain);
    if !extras.is_empty() {
        out.push('\n');
        for line in extras {
            out.push_str(&format!("- {}\n", line.replace("\n  ", "\n\n  ")));
        }
    }
    if !h.next.is_empty() {
        out.push_str("\n### what you can do\n\n");
        for choice in &h.next {
            out.push_str(&format!("- {}: `{}`\n", choice.what, choice.command));
        }
    }
    out
}

fn json(h: &Handoff) -> Vec<u8> {
    let mut value = serde_json::to_value(h).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut value {
        map.insert(
            "ledger".into(),
            Value::Array(h.rows.iter().map(Row::to_json).collect()),
        );
    }
    let mut out = serde_json::to_vec_pretty(&value).unwrap_or_default();
    out.push(b'\n');
    out
}
