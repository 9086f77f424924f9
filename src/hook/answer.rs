//! What `referee hook stop` answers on stdout, in the protocol Claude Code
//! and Codex share: `{"decision": "block", "reason": …}` keeps the agent
//! working and hands it the reason; `{"systemMessage": …}` lets it stop and
//! shows the person the message; nothing at all lets it stop silently.
//! Codex refuses any other key (its output schema is closed), so these are
//! the only three. Pure.

use serde_json::json;

use crate::findings::Finding;
use crate::report::handoff::Handoff;

/// The hook's answer to one stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Let the agent stop; say nothing.
    Allow,
    /// Let the agent stop; show the person this.
    Tell(String),
    /// Keep the agent working; it reads this.
    Block(String),
}

impl Answer {
    /// The line to print on stdout, if any. Both texts reach a terminal
    /// (the person's, or the model's context shown in one), so a control
    /// character a reviewer wrote into a finding is made visible, not obeyed.
    pub fn json(&self) -> Option<String> {
        let shown = |text: &str| crate::report::terminal::escape(text).into_owned();
        match self {
            Answer::Allow => None,
            Answer::Tell(message) => Some(json!({ "systemMessage": shown(message) }).to_string()),
            Answer::Block(reason) => {
                Some(json!({ "decision": "block", "reason": shown(reason) }).to_string())
            }
        }
    }
}

/// A round that says continue: the must-fix findings, and how to answer one
/// the writer disputes.
pub fn block_reason(
    loop_name: &str,
    round: u32,
    max_rounds: u32,
    must_fix: &[&Finding],
    reviewers: usize,
    responses_file: &str,
) -> String {
    let (n, them) = match must_fix.len() {
        1 => ("1 must-fix finding".to_string(), "it"),
        n => (format!("{n} must-fix findings"), "them"),
    };
    let who = match reviewers {
        0 | 1 => "the reviewer".to_string(),
        n => format!("the panel of {n} reviewers"),
    };
    let mut out = format!(
        "referee: loop `{loop_name}`, round {round} of {max_rounds}: {who} found {n}. \
         Fix {them}, then end your turn; the referee reviews the change again.\n\n"
    );
    out.push_str(&crate::agent::prompt::findings_list(must_fix));
    let example = must_fix.first().map_or("F1", |f| f.id.as_str());
    out.push_str(&format!(
        "\nTo dispute a finding instead of fixing it, write {responses_file} before you end your turn:\n\
         {{\"responses\": [{{\"id\": \"{example}\", \"status\": \"disputed\", \"note\": \"why, for a person to read\"}}]}}\n\
         (status `fixed`, `disputed` or `wontfix`; the next review reads it). \
         A finding the reviewer reports again after you dispute it goes to a person. \
         Do not edit `.referee/` otherwise.\n"
    ));
    out
}

/// A round that asked for fixes at a stop the host lets through anyway
/// (its cap of blocks in a row is spent): the person hears that the loop is
/// not done, with the findings the agent would have been handed.
pub fn cap_spent_message(loop_name: &str, cap: u32, reason: &str) -> String {
    format!(
        "referee: the agent host ends this turn whatever the hook answers: it honours {cap} blocked stops in a row \
         (Claude Code: `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP`). Loop `{loop_name}` is NOT done. \
         Ask the agent to go on with the findings below; its next stop reviews the change. \
         `referee hook install --agent claude` raises the cap to the loop's rounds.\n\n{reason}"
    )
}

/// A round that ended the loop done (`clean`, `nit-round`).
pub fn done_message(
    loop_name: &str,
    round: u32,
    max_rounds: u32,
    rule: &str,
    reason: &str,
) -> String {
    format!(
        "referee: loop `{loop_name}` is done at round {round} of {max_rounds}: `{rule}`. {reason}\n\
         The rounds: `referee ledger show --loop {loop_name}`; a person approves the result with \
         `referee approve --loop {loop_name} --by NAME`."
    )
}

/// How many contested findings a stop message lists before it points at
/// `referee escalate`.
const SHOWN: usize = 5;

/// A round that stopped the loop for a person: the rule, a short hand-off,
/// and the command that prints the whole one.
pub fn escalated_message(h: &Handoff) -> String {
    let rule = h.rule.as_ref().map_or("stopped".into(), |r| r.name());
    let mut out = format!(
        "referee: loop `{}` stopped at round {} of {} on `{rule}`: a person decides now. {}\n",
        h.loop_name, h.round, h.max_rounds, h.reason
    );
    for c in h.findings.iter().take(SHOWN) {
        let place = c
            .location
            .as_deref()
            .map(|l| format!(" (`{l}`)"))
            .unwrap_or_default();
        out.push_str(&format!(
            "\nfinding: {} [{} {}]{place}\nreviewer says: {}\nwriter says: {}\n",
            c.title,
            c.id,
            c.severity,
            c.reviewer_says,
            c.writer_says.as_deref().unwrap_or("(no response)")
        ));
    }
    if h.findings.len() > SHOWN {
        out.push_str(&format!("\n… and {} more.\n", h.findings.len() - SHOWN));
    }
    if let Some(r) = &h.revert_to {
        out.push_str(&format!(
            "\nround {} had the fewest must-fix findings: `{}` (the referee never reverts).\n",
            r.round, r.command
        ));
    }
    if !h.out_of_scope.is_empty() {
        out.push_str(&format!(
            "\nout of scope: {}\n",
            h.out_of_scope
                .iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    out.push_str(&format!(
        "\nThe whole hand-off: `referee escalate --loop {}`",
        h.loop_name
    ));
    out
}

/// A round that could not be recorded: the stop goes through, the next
/// stop tries the round again.
pub fn failed_message(why: &str) -> String {
    format!(
        "referee: this stop was not refereed: {why}\n\
         Nothing was recorded; the next stop with changes reviews them."
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Severity;

    fn finding(id: &str) -> Finding {
        Finding {
            id: id.into(),
            severity: Severity::Bug,
            title: "expired tokens pass".into(),
            file: Some("src/auth.rs".into()),
            line: Some(1),
            body: Some("use now >= exp".into()),
            undoes: None,
            rule: None,
            end_line: None,
            fingerprint: String::new(),
            id_source: crate::findings::IdSource::Explicit,
            path_escapes: false,
            reported_by: Vec::new(),
        }
    }

    #[test]
    fn each_answer_is_one_line_of_the_shared_protocol() {
        assert_eq!(Answer::Allow.json(), None);
        assert_eq!(
            Answer::Tell("done\nok".into()).json().unwrap(),
            r#"{"systemMessage":"done\nok"}"#
        );
        assert_eq!(
            Answer::Block("fix \"F1\"".into()).json().unwrap(),
            r#"{"decision":"block","reason":"fix \"F1\""}"#
        );
        // A title that would clear the screen is shown, not obeyed.
        assert_eq!(
            Answer::Tell("title \u{1b}[2J\tok".into()).json().unwrap(),
            r#"{"systemMessage":"title ^[[2J\tok"}"#
        );
    }

    #[test]
    fn a_block_lists_every_must_fix_finding_and_how_to_dispute_one() {
        let f = finding("F1");
        let reason = block_reason(
            "x",
            1,
            3,
            &[&f],
            1,
            "/repo/.referee/ledgers/x/responses.json",
        );
        assert!(reason.starts_with(
            "referee: loop `x`, round 1 of 3: the reviewer found 1 must-fix finding. "
        ));
        assert!(
            reason.contains("- F1 [bug] src/auth.rs:1: expired tokens pass\n  use now >= exp\n"),
            "{reason}"
        );
        assert!(
            reason.contains("write /repo/.referee/ledgers/x/responses.json before you end your turn:\n{\"responses\": [{\"id\": \"F1\", \"status\": \"disputed\""),
            "{reason}"
        );
    }
}
