//! `referee init`: writes the loop contract before round 1.

use crate::cmd::create::InitArgs;
use crate::contract::{Contract, LoopName};
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
        if contract.writer.is_some() && contract.reviewer.is_some() {
            out.push_str(&format!(
                "next: `referee run --loop {name} --task TEXT` drives both agents, or `referee record --loop {name} --findings FILE` after each review\n"
            ));
        } else {
            out.push_str(&format!(
                "next: `referee record --loop {name} --findings FILE` after each review\n"
            ));
        }
        super::emit(&out)?;
    }
    Ok(())
}
