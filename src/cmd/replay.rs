//! `referee replay`: re-applies another contract's rules to a loop's stored
//! rounds and shows where it would have stopped. Writes nothing.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;

use crate::contract::Contract;
use crate::engine::History;
use crate::engine::replay::replay;
use crate::exit::Exit;
use crate::state::LoopSelect;
use crate::state::State;

#[derive(Debug, Args)]
pub struct ReplayArgs {
    #[command(flatten)]
    pub select: LoopSelect,
    /// The contract whose rules to apply.
    #[arg(long, value_name = "F")]
    pub contract: PathBuf,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(state: &State, args: ReplayArgs) -> anyhow::Result<Exit> {
    let lp = super::open_loop(state, &args.select)?;
    let history = History::read(&lp, lp.store.read()?.rows)?;
    let path = &args.contract;
    // A file, or a template name as `init --from` takes it.
    let (text, _) = crate::contract::load::template(&path.to_string_lossy())?;
    // The other contract may leave out `loop`: it is replayed on this loop.
    let text = match toml::from_str::<toml::Table>(&text) {
        Ok(table) if !table.contains_key("loop") => {
            format!("loop = \"{}\"\n{text}", lp.name)
        }
        _ => text,
    };
    let other = Contract::from_toml(&text, &lp.contract().base)
        .map_err(|e| anyhow::anyhow!("contract `{}`: {e}", path.display()))?;
    let r = replay(&lp, &history, &other)?;
    if args.json {
        let value = serde_json::json!({
            "loop": lp.name.as_str(),
            "contract": path.display().to_string(),
            "rounds": r.rounds,
            "would_stop": r.stopped.as_ref().map(|(round, rule)| serde_json::json!({"round": round, "rule": rule})),
            "stopped": r.actual.as_ref().map(|(round, rule)| serde_json::json!({"round": round, "rule": rule})),
        });
        super::emit_json(&value)?;
        return Ok(Exit::Success);
    }
    let mut out = format!(
        "replaying loop `{}` under `{}` (max_rounds {}, floor {}, closure {})\n",
        lp.name,
        super::shown(path),
        other.max_rounds,
        other.severity_floor,
        other.closure.as_str()
    );
    let width = r
        .rounds
        .iter()
        .flat_map(|x| [x.recorded.len(), x.replayed.len()])
        .max()
        .unwrap_or(0)
        .max("recorded".len());
    let _ = writeln!(
        out,
        "round  {:<width$}  {:<width$}  must-fix",
        "recorded", "replayed"
    );
    for x in &r.rounds {
        let _ = writeln!(
            out,
            "{:>5}  {:<width$}  {:<width$}  {:>8}",
            x.round, x.recorded, x.replayed, x.must_fix_left
        );
    }
    if r.actual
        .as_ref()
        .is_some_and(|(_, rule)| matches!(rule, crate::rules::Stop::Judge(_)))
    {
        out.push_str(
            "note: judge stops are not replayed: a judge answered the contract that asked it\n",
        );
    }
    let actual = match &r.actual {
        Some((round, rule)) => format!("the loop stopped at round {round} on `{rule}`"),
        None => format!("the loop has not stopped (round {})", history.round()),
    };
    let replayed = match (&r.stopped, r.rounds.last()) {
        (Some((round, rule)), Some(last)) if last.round == *round => {
            format!(
                "this contract would have stopped at round {round} on `{rule}`: {}",
                last.reason
            )
        }
        (Some((round, rule)), _) => {
            format!("this contract would have stopped at round {round} on `{rule}`")
        }
        (None, _) => format!(
            "this contract would still be running after round {}",
            r.rounds.last().map_or(0, |x| x.round)
        ),
    };
    let _ = writeln!(out, "{actual}; {replayed}");
    super::emit(&out)?;
    Ok(Exit::Success)
}
