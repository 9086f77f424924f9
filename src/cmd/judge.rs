//! `referee judge ask`: asks the loop's judge about its last round and prints
//! the request, the answers and the decision. Records nothing: it is for
//! debugging a judge.

use std::sync::atomic::AtomicBool;

use serde_json::json;

use crate::cmd::cli::LoopArgs;
use crate::engine::accounting::FindingStanding;
use crate::engine::{History, judge_state};
use crate::exit::{Exit, hinted};
use crate::findings::Severity;
use crate::judge::engine::ask as ask_judge;
use crate::state::State;

pub fn ask(state: &State, args: LoopArgs) -> anyhow::Result<Exit> {
    let lp = super::open_loop(state, &args.select)?;
    let rows = lp.store.read()?.rows;
    let history = History::read(&lp, rows)?;
    let Some(judge) = history.contract.judge.clone() else {
        return Err(hinted(
            format!(
                "contract `{}` has no `[judge]` section",
                super::shown(&lp.loaded.path)
            ),
            "`referee docs judge` shows one",
        ));
    };
    let Some((row, last)) = history.last.clone() else {
        anyhow::bail!(
            "loop `{}` has no round yet: the judge judges rounds",
            lp.name
        );
    };
    // The request the judge was (or would have been) sent after the last
    // round: the rounds before it, that round's counts and findings.
    let judge_state = judge_state(
        &judge,
        &history.rows,
        row.round,
        &row.counts.unwrap_or_default(),
        &last.reported,
    );
    let block_open = last
        .registry
        .findings
        .iter()
        .any(|t| t.standing == FindingStanding::Open && t.finding.severity == Severity::Block);
    let asked = ask_judge(
        &judge,
        &lp.repo,
        row.round,
        &judge_state,
        block_open,
        &[],
        &AtomicBool::new(false),
    );
    let request: Option<serde_json::Value> = asked
        .request
        .as_deref()
        .and_then(|r| serde_json::from_str(r).ok());
    let answer = asked
        .answer
        .as_deref()
        .map(|a| String::from_utf8_lossy(a).into_owned());
    if args.json {
        let value = json!({
            "loop": lp.name.as_str(),
            "round": row.round,
            "request": request,
            "answer": answer.as_deref().and_then(|a| serde_json::from_str::<serde_json::Value>(a).ok()).or(answer.clone().map(serde_json::Value::String)),
            "outcome": asked.outcome,
        });
        super::emit_json(&value)?;
        return Ok(Exit::Success);
    }
    let mut out = format!(
        "judge `{}` on loop `{}`, round {} (nothing is recorded)\n\n",
        judge.engine.as_str(),
        lp.name,
        row.round
    );
    match &request {
        Some(r) => out.push_str(&format!(
            "request:\n{}\n\n",
            serde_json::to_string_pretty(r)?
        )),
        None => out.push_str("request: (not sent)\n\n"),
    }
    match &answer {
        Some(a) => out.push_str(&format!("answer:\n{}\n\n", a.trim_end())),
        None => out.push_str("answer: (none)\n\n"),
    }
    out.push_str(&format!("decision: {}\n", asked.outcome.summary()));
    super::emit(&out)?;
    Ok(Exit::Success)
}
