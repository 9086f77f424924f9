//! `referee init`: writes the loop contract before round 1.

use anyhow::Context;
use toml::{Table, Value};

use crate::cli::InitArgs;
use crate::contract::load;
use crate::contract::{Contract, LoopName, render};
use crate::exit::{Exit, UsageError};
use crate::git;
use crate::ledger::Store;
use crate::state::State;

pub fn run(state: &State, args: InitArgs) -> anyhow::Result<Exit> {
    let (name, path, contract, text) = write(state, &args)?;
    print(&name, &path, &contract, &text, args.json)?;
    Ok(Exit::Success)
}

/// The name of the loop `args` would write, and the path of its contract.
pub(super) fn target(
    state: &State,
    args: &InitArgs,
) -> anyhow::Result<(LoopName, std::path::PathBuf)> {
    let from_template = match &args.from {
        Some(from) => {
            let (text, origin) = load::template(from)?;
            let table: Table = toml::from_str(&text)
                .map_err(|e| anyhow::anyhow!("{origin}: not valid TOML: {}", e.message()))?;
            table
                .get("loop")
                .and_then(Value::as_str)
                .map(str::to_string)
        }
        None => None,
    };
    let name_text = args
        .name
        .clone()
        .or(from_template)
        .unwrap_or_else(|| "main".into());
    let name = LoopName::parse(&name_text).map_err(|e| UsageError(format!("--loop: {e}")))?;
    let path = state.contract_path(&name);
    Ok((name, path))
}

/// Validates and writes the contract `args` describe.
pub(super) fn write(
    state: &State,
    args: &InitArgs,
) -> anyhow::Result<(LoopName, std::path::PathBuf, Contract, String)> {
    let (mut table, origin) = match &args.from {
        Some(from) => {
            let (text, origin) = load::template(from)?;
            let table: Table = toml::from_str(&text)
                .map_err(|e| anyhow::anyhow!("{origin}: not valid TOML: {}", e.message()))?;
            (table, Some(origin))
        }
        None => (Table::new(), None),
    };
    let name_text = match (&args.name, table.get("loop")) {
        (Some(name), _) => name.clone(),
        (None, Some(Value::String(name))) => name.clone(),
        _ => "main".to_string(),
    };
    let name = LoopName::parse(&name_text).map_err(|e| UsageError(format!("--loop: {e}")))?;
    apply_flags(&mut table, args, &name);

    if !git::is_work_tree(&state.repo) {
        anyhow::bail!(
            "`{}` is not inside a git work tree: referee snapshots rounds with git\nhint: run `git init` first",
            super::shown(&state.repo)
        );
    }
    let base_rev = match table.get("base") {
        Some(Value::String(rev)) => rev.clone(),
        _ => "HEAD".to_string(),
    };
    let base = resolve_base(
        state,
        &base_rev,
        args.base.is_some() || table.contains_key("base"),
    )?;
    table.insert("base".into(), Value::String(base));

    let contract =
        Contract::from_toml(&toml::to_string(&table)?, "HEAD").map_err(|e| match &origin {
            Some(origin) => anyhow::anyhow!("contract for loop `{name}` (from {origin}): {e}"),
            None => anyhow::anyhow!("contract for loop `{name}`: {e}"),
        })?;

    // Files the contract names are read at run time; a question set that
    // does not load is refused now, not discovered as a failed judgement.
    if let Some(judge) = &contract.judge
        && judge.questions.is_some()
    {
        crate::judge::engine::questions(judge, &state.repo)
            .map_err(|e| anyhow::anyhow!("contract field `judge.questions`: {e}"))?;
    }
    let path = state.contract_path(&name);
    if path.exists() {
        refuse_overwrite(state, &name, &path, args.force)?;
    }
    let text = render::to_toml(&contract);
    write_atomically(&path, text.as_bytes())?;
    Ok((name, path, contract, text))
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
            short(&contract.base),
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

/// Sets the contract fields the flags name, over the template's.
fn apply_flags(table: &mut Table, args: &InitArgs, name: &LoopName) {
    table.insert("loop".into(), Value::String(name.to_string()));
    if let Some(n) = args.max_rounds {
        table.insert("max_rounds".into(), Value::Integer(n));
    }
    if let Some(floor) = &args.floor {
        table.insert("severity_floor".into(), Value::String(floor.clone()));
    }
    if !args.scope.is_empty() {
        let globs = args.scope.iter().cloned().map(Value::String).collect();
        table.insert("scope".into(), Value::Array(globs));
    }
    if let Some(closure) = &args.closure {
        table.insert("closure".into(), Value::String(closure.clone()));
    }
    if let Some(guards) = &args.guards {
        // Validated with the rest of the contract: an unknown name is
        // refused there, naming the field.
        let list = guards
            .split(',')
            .map(str::trim)
            .filter(|g| !g.is_empty() && *g != "none")
            .map(|g| Value::String(g.to_string()))
            .collect();
        table.insert("guards".into(), Value::Array(list));
    }
    if args.budget_usd.is_some() || args.budget_tokens.is_some() {
        let budget = table
            .entry("budget")
            .or_insert_with(|| Value::Table(Table::new()));
        if let Value::Table(budget) = budget {
            if let Some(usd) = args.budget_usd {
                budget.insert("usd".into(), Value::Float(usd));
            }
            if let Some(tokens) = args.budget_tokens {
                budget.insert("tokens".into(), Value::Integer(tokens));
            }
        }
    }
    // A preset from a flag replaces the template's section: its options
    // belonged to the template's preset.
    for (section, preset) in [("writer", &args.writer), ("reviewer", &args.reviewer)] {
        if let Some(preset) = preset {
            let mut agent = Table::new();
            agent.insert("preset".into(), Value::String(preset.clone()));
            table.insert(section.into(), Value::Table(agent));
        }
    }
    if let Some(base) = &args.base {
        table.insert("base".into(), Value::String(base.clone()));
    }
}

/// The commit the loop starts from; a repository without commits starts from
/// git's empty tree.
fn resolve_base(state: &State, rev: &str, explicit: bool) -> anyhow::Result<String> {
    if let Some(commit) = git::resolve_commit(&state.repo, rev)? {
        return Ok(commit);
    }
    if !explicit && rev == "HEAD" {
        return Ok(git::EMPTY_TREE.to_string());
    }
    Err(UsageError(format!(
        "field `base`: `{rev}` names no commit in `{}`",
        super::shown(&state.repo)
    ))
    .into())
}

fn refuse_overwrite(
    state: &State,
    name: &LoopName,
    path: &std::path::Path,
    force: bool,
) -> anyhow::Result<()> {
    let store = Store::new(state.ledger_path(name), state.evidence_dir(name), "");
    if store.has_rows()? {
        anyhow::bail!(
            "loop `{name}` has started: its contract `{}` is frozen by the ledger\n\
             hint: `referee contract amend --loop {name} --max-rounds N --by NAME --reason TEXT` raises the cap; \
             start a new loop with another `--loop`",
            super::shown(path)
        );
    }
    if !force {
        anyhow::bail!(
            "contract `{}` exists (loop `{name}` has not started)\nhint: pass `--force` to replace it, or edit it by hand",
            super::shown(path)
        );
    }
    Ok(())
}

fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = path.parent().context("contract path has no folder")?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create `{}`", dir.display()))?;
    let tmp = dir.join(format!(".{}.tmp-{}", file_name(path), std::process::id()));
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write `{}`", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write `{}`", path.display()))?;
    Ok(())
}

fn file_name(path: &std::path::Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn short(rev: &str) -> &str {
    rev.get(..12).unwrap_or(rev)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::load::TEMPLATES;

    #[test]
    fn every_template_has_a_name_matching_its_loop() {
        for (name, text) in TEMPLATES {
            let table: Table = toml::from_str(text).unwrap();
            assert_eq!(table.get("loop").and_then(Value::as_str), Some(*name));
        }
    }
}
