//! `referee init`: writes the loop contract before round 1.

use crate::cmd::create::InitArgs;
use crate::contract::{Contract, LoopName, Preset};
use crate::exit::Exit;
use crate::state::State;

pub fn run(state: &State, args: InitArgs) -> anyhow::Result<Exit> {
    let (name, path, contract, text) = super::create::write(state, &args)?;
    print(&name, &path, &contract, &text, args.json)?;
    Ok(Exit::Success)
}

fn print(
    name: &LoopName,
    path: &std::path::Path,
    contract: &Contract,
    text: &str,
    json: bool,
) -> anyhow::Result<()> {
    if json {
        let json = serde_json::json!({
            "loop": name.as_str(),
            "path": path.display().to_string(),
            "sha256": crate::digest::sha256_hex(text.as_bytes()),
            "contract": contract,
        });
        super::emit_json(&json)?;
    } else {
        let mut out = format!(
            "wrote `{}`: loop `{name}`, max_rounds {}, floor {}, closure {}, base {}\n",
            super::shown(path),
            contract.max_rounds,
            contract.severity_floor,
            contract.closure.as_str(),
            super::create::short(&contract.base),
        );
        out.push_str("the contract may be edited by hand until round 1 pins it\n");
        out.push_str(&next_steps(name, contract));
        super::emit(&out)?;
    }
    Ok(())
}

/// What can drive the loop `contract` describes: `run` needs both agents,
/// the Stop hook (docs/hooks.md) a reviewer, `record` nothing.
fn next_steps(name: &LoopName, contract: &Contract) -> String {
    let record = format!("`referee record --loop {name} --findings FILE` after each review");
    if contract.reviewer.is_none() {
        return format!("next: {record}\n");
    }
    // The session's agent is the writer: the one the contract names, if
    // the hook knows it.
    let hook = match contract.writer.as_ref().map(|w| w.preset) {
        Some(Preset::Claude) => format!("`referee hook install --agent claude --loop {name}`"),
        Some(Preset::Codex) => format!("`referee hook install --agent codex --loop {name}`"),
        _ => format!("`referee hook install --agent claude --loop {name}` (or `--agent codex`)"),
    };
    let hook = format!("{hook} referees your own agent session at each stop");
    match contract.writer {
        Some(_) => format!(
            "next: `referee run --loop {name} --task TEXT` drives both agents;\n      {hook};\n      or {record}\n"
        ),
        None => format!("next: {hook};\n      or {record}\n"),
    }
}
