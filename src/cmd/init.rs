//! `referee init`: writes the loop contract before round 1.

use crate::cmd::create::InitArgs;
use crate::contract::{Contract, LoopName, Preset};
use crate::exit::Exit;
use crate::state::State;

pub fn run(state: &State, args: InitArgs) -> anyhow::Result<Exit> {
    let (name, path, contract, text) = super::create::write(state, &args)?;
    print(&name, &path, &contract, &text, args.json)?;
    if let Some(note) = uncommitted_note(state, &name) {
        eprint!("{note}");
    }
    Ok(Exit::Success)
}

/// What `init` says when the work tree holds changes no commit has: round
/// 1's patch is measured from the base, so they count as the writer's work
/// (and a scope stop would ask to set them aside). `None` for a clean tree,
/// or when git cannot say.
fn uncommitted_note(state: &State, name: &LoopName) -> Option<String> {
    let out = crate::git::Git::at(&state.repo)
        .run([
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--no-renames",
        ])
        .ok()?;
    let skip = state.inside_repo();
    let pinned = crate::anchor::pins::Pins::of(&state.repo, &state.root)
        .and_then(|p| p.frozen_for(name.as_str()))
        .unwrap_or_default();
    let files: Vec<String> = out
        .stdout
        .split(|&b| b == 0)
        .filter(|entry| entry.len() > 3)
        .map(|entry| String::from_utf8_lossy(&entry[3..]).into_owned())
        .filter(|path| {
            let under = |dir: &str| path == dir || path.starts_with(&format!("{dir}/"));
            !skip.as_deref().is_some_and(under) && !pinned.contains(path)
        })
        .collect();
    if files.is_empty() {
        return None;
    }
    let mut shown: Vec<String> = files.iter().take(3).map(|f| format!("`{f}`")).collect();
    if files.len() > 3 {
        shown.push(format!("{} more", files.len() - 3));
    }
    let count = files.len();
    let (files_word, differ) = if count == 1 {
        ("file", "differs")
    } else {
        ("files", "differ")
    };
    let note = format!(
        "note: {count} {files_word} in the work tree {differ} from the last commit ({}): round 1's patch counts them as the writer's work",
        shown.join(", ")
    );
    let hint = format!(
        "to start the loop from them, commit them (`git add -A && git commit -m wip`) and `referee init --loop {name} --force` again; \
         to keep them out of it, set them aside before round 1: `git stash push --include-untracked -- ':(exclude){}'`",
        skip.as_deref().unwrap_or(".referee")
    );
    Some(crate::report::error::with_hints(&note, &[hint]) + "\n")
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
    let record = match contract.reviewers.as_slice() {
        [] => format!("`referee record --loop {name} --findings FILE` after each review"),
        members => {
            let each: Vec<String> = members
                .iter()
                .map(|m| format!("--findings {}=FILE", m.name))
                .collect();
            format!(
                "`referee record --loop {name} {}` after each panel review",
                each.join(" ")
            )
        }
    };
    if contract.reviewer.is_none() && !contract.is_panel() {
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
