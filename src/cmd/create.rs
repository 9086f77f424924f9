//! A new loop's contract, validated and written with its ledger's start:
//! what `init` does, and `run --from` when the loop has no contract yet.

use anyhow::Context;
use clap::Args;
use toml::{Table, Value};

use crate::contract::load;
use crate::contract::{Contract, ContractError, LoopName, Preset, render};
use crate::exit::{UsageError, hinted};
use crate::git;
use crate::ledger::Store;
use crate::state::State;
use crate::statefs;

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Loop name: `[a-z0-9][a-z0-9._-]{0,63}` (default: the template's, else `main`).
    #[arg(long = "loop", value_name = "LOOP")]
    pub name: Option<String>,
    /// Start from a template: a shipped name (`cross-review`, ...) or a TOML file.
    #[arg(long, value_name = "TEMPLATE")]
    pub from: Option<String>,
    /// Round cap.
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub max_rounds: Option<i64>,
    /// Severity floor: findings at or above it are must-fix.
    #[arg(long = "floor", value_name = "LEVEL")]
    pub floor: Option<String>,
    /// Glob of files the writer may touch (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub scope: Vec<String>,
    /// `absent` or `explicit`.
    #[arg(long, value_name = "MODE")]
    pub closure: Option<String>,
    /// Progress guards in force, comma-separated: `stalled,disputed` (the
    /// default), one of them, or `none`.
    #[arg(long, value_name = "LIST")]
    pub guards: Option<String>,
    /// Spend cap in US dollars over the whole loop.
    #[arg(long, allow_negative_numbers = true, value_name = "X")]
    pub budget_usd: Option<f64>,
    /// Token cap over the whole loop.
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub budget_tokens: Option<i64>,
    /// Writer preset.
    #[arg(long, value_name = "PRESET")]
    pub writer: Option<String>,
    /// Reviewer preset; given more than once, a panel of reviewers
    /// (`[[reviewers]]`, each named after its preset) that all review each
    /// round.
    #[arg(long, value_name = "PRESET")]
    pub reviewer: Vec<String>,
    /// The writer's argv for the `command` preset (implied), as one string
    /// split like a shell would split words (`'sh agent.sh --fast'`); no
    /// shell ever runs it.
    #[arg(long, value_name = "ARGV")]
    pub writer_command: Option<String>,
    /// The reviewer's argv for the `command` or `tests` preset (default
    /// `command`), split like `--writer-command`.
    #[arg(long, value_name = "ARGV")]
    pub reviewer_command: Option<String>,
    /// Git revision the loop starts from (default: HEAD).
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// Replace a contract whose loop has not started yet.
    #[arg(long)]
    pub force: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// The name of the loop `args` would write, and the path of its contract.
pub(super) fn target(
    state: &State,
    args: &InitArgs,
) -> anyhow::Result<(LoopName, std::path::PathBuf)> {
    let from_template = match &args.from {
        Some(from) => {
            let (text, origin) = load::template(from)?;
            let table = template_table(&text, &origin)?;
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
    let path = state.paths(&name).contract;
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
            let table = template_table(&text, &origin)?;
            (table, Some((origin, text)))
        }
        None => (Table::new(), None),
    };
    let name_text = match (&args.name, table.get("loop")) {
        (Some(name), _) => name.clone(),
        (None, Some(Value::String(name))) => name.clone(),
        _ => "main".to_string(),
    };
    let name = LoopName::parse(&name_text).map_err(|e| UsageError(format!("--loop: {e}")))?;
    if args.reviewer.len() > 1 && args.reviewer_command.is_some() {
        return Err(UsageError(
            "--reviewer-command: a panel's reviewers (`--reviewer` given more than once) take their commands in the contract's `[[reviewers]]` entries, not from one flag".into(),
        )
        .into());
    }
    apply_flags(&mut table, args, &name);

    if let Some(why) = git::not_a_work_tree(&state.repo)? {
        return Err(hinted(
            format!(
                "`{}` is not inside a git work tree referee can use (it snapshots rounds with git){}",
                super::shown(&state.repo),
                why.said()
            ),
            why.hint,
        ));
    }
    let base_rev = match table.get("base") {
        Some(Value::String(rev)) => rev.clone(),
        _ => "HEAD".to_string(),
    };
    let base = resolve_base(
        state,
        &base_rev,
        args.base.is_some() || table.contains_key("base"),
        args.base.is_some(),
    )?;
    table.insert("base".into(), Value::String(base));

    let contract = Contract::from_toml(&toml::to_string(&table)?, "HEAD")
        .map_err(|e| refused(e.unplaced(), args, &name, origin.as_ref()))?;

    // Files the contract names are read at run time; a question set that
    // does not load is refused now, not discovered as a failed judgement.
    if let Some(judge) = &contract.judge
        && judge.questions.is_some()
    {
        crate::judge::engine::questions(judge, &state.repo)
            .map_err(|e| anyhow::anyhow!("contract field `judge.questions`: {e}"))?;
    }
    let path = state.paths(&name).contract;
    let text = render::to_toml(&contract);
    state.create()?;
    // Replacing a contract happens under the ledger's lock, so that a first
    // `record` either sees the old contract pinned before this check, or
    // waits and then finds the file changed (it re-reads it under the lock).
    let store = Store::new(state.paths(&name).ledger, state.paths(&name).dir, "");
    let (_locked, rows) = if std::fs::symlink_metadata(&path).is_ok() {
        let mut locked = store.lock()?;
        let rows = locked.rows()?;
        refuse_overwrite(&name, &path, args.force, !rows.is_empty())?;
        (Some(locked), rows)
    } else {
        (None, store.read()?.rows)
    };
    // A loop the anchor knows rounds of, whose ledger lost them, is not
    // started over by writing its contract again (SPEC §8.2).
    let anchor = crate::anchor::Anchor::of(&state.repo, &state.root, name.as_str())?;
    let hashes: Vec<&str> = rows.iter().map(|r| r.row_sha256.as_str()).collect();
    if let crate::anchor::chain::Standing::Broken(b) = anchor.check(&hashes)? {
        return Err(hinted(
            format!(
                "loop `{name}`: {b}: its anchor on this machine holds rows its ledger does not; nothing was written"
            ),
            format!(
                "a ledger you committed comes back with `git checkout -- {}`; to start the loop over for good, a person removes its anchor `{}`",
                super::shown(&state.paths(&name).ledger),
                anchor.dir().display()
            ),
        ));
    }
    statefs::replace(&state.root, &path, text.as_bytes())?;
    // The loop's snapshots pin the repository's settings and ignore rules
    // as they are now, before any writer ran (SPEC §8.3).
    let anchor = crate::anchor::Anchor::of(&state.repo, &state.root, name.as_str())?;
    crate::snapshot::Own::start(&state.repo, &anchor)?;
    write_attributes(state)?;
    anchor.adopt(&hashes)?;
    anchor.pin_contract(&crate::digest::sha256_hex(text.as_bytes()))?;
    Ok((name, path, contract, text))
}

/// A template's table, or its parser's message in its own layout.
fn template_table(text: &str, origin: &str) -> anyhow::Result<Table> {
    toml::from_str(text)
        .map_err(|e| anyhow::anyhow!("{origin}: not valid TOML {}", crate::contract::syntax(&e)))
}

/// The flag of `init` that sets each contract field, where one does.
const FLAG_OF_FIELD: &[(&str, &str)] = &[
    ("max_rounds", "--max-rounds"),
    ("severity_floor", "--floor"),
    ("scope", "--scope"),
    ("closure", "--closure"),
    ("guards", "--guards"),
    ("budget.usd", "--budget-usd"),
    ("budget.tokens", "--budget-tokens"),
    ("writer.preset", "--writer"),
    ("reviewer.preset", "--reviewer"),
    ("writer.command", "--writer-command"),
    ("reviewer.command", "--reviewer-command"),
    ("base", "--base"),
];

/// A contract `init` would write that does not validate. A field a flag
/// set is that flag's usage error (exit 2), named by the flag; one the
/// template set is the template's, on its line.
fn refused(
    error: ContractError,
    args: &InitArgs,
    name: &LoopName,
    origin: Option<&(String, String)>,
) -> anyhow::Error {
    let flag = error.field().and_then(|field| {
        FLAG_OF_FIELD
            .iter()
            .find(|(f, _)| *f == field)
            .map(|(_, flag)| *flag)
            .filter(|flag| flag_given(args, flag))
    });
    if let Some(flag) = flag {
        let message = match error {
            ContractError::Invalid { value, allowed, .. } => {
                format!("{flag}: must be {allowed}, not {value}")
            }
            other => format!("{flag}: {other}"),
        };
        return UsageError(message).into();
    }
    match origin {
        Some((origin, text)) => {
            let error = error.placed_in(text);
            anyhow::anyhow!("contract for loop `{name}` (from {origin}): {error}")
        }
        None => anyhow::anyhow!("contract for loop `{name}`: {error}"),
    }
}

/// Whether `flag` (a name of [`FLAG_OF_FIELD`]) was given.
fn flag_given(args: &InitArgs, flag: &str) -> bool {
    match flag {
        "--max-rounds" => args.max_rounds.is_some(),
        "--floor" => args.floor.is_some(),
        "--scope" => !args.scope.is_empty(),
        "--closure" => args.closure.is_some(),
        "--guards" => args.guards.is_some(),
        "--budget-usd" => args.budget_usd.is_some(),
        "--budget-tokens" => args.budget_tokens.is_some(),
        "--writer" => args.writer.is_some(),
        "--reviewer" => !args.reviewer.is_empty(),
        "--writer-command" => args.writer_command.is_some(),
        "--reviewer-command" => args.reviewer_command.is_some(),
        "--base" => args.base.is_some(),
        _ => false,
    }
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
    let lone = match args.reviewer.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    };
    if args.reviewer.len() > 1 {
        table.remove("reviewer");
        let mut names: Vec<String> = Vec::new();
        let mut entries = Vec::new();
        for preset in &args.reviewer {
            // Named after its preset; a preset given twice gets a number.
            let mut name = preset.to_lowercase();
            let mut n = 2;
            while names.contains(&name) {
                name = format!("{}-{n}", preset.to_lowercase());
                n += 1;
            }
            names.push(name.clone());
            let mut entry = Table::new();
            entry.insert("name".into(), Value::String(name));
            entry.insert("preset".into(), Value::String(preset.clone()));
            entries.push(Value::Table(entry));
        }
        table.insert("reviewers".into(), Value::Array(entries));
    } else if lone.is_some() || args.reviewer_command.is_some() {
        table.remove("reviewers");
        table.remove("panel");
    }
    for (section, preset, argv) in [
        ("writer", &args.writer, &args.writer_command),
        ("reviewer", &lone, &args.reviewer_command),
    ] {
        if preset.is_none() && argv.is_none() {
            continue;
        }
        let mut agent = Table::new();
        let preset = preset
            .clone()
            .unwrap_or_else(|| Preset::Command.as_str().into());
        agent.insert("preset".into(), Value::String(preset));
        if let Some(argv) = argv {
            let words = split_words(argv).into_iter().map(Value::String).collect();
            agent.insert("command".into(), Value::Array(words));
        }
        table.insert(section.into(), Value::Table(agent));
    }
    if let Some(base) = &args.base {
        table.insert("base".into(), Value::String(base.clone()));
    }
}

/// Splits a command line into words as a POSIX shell would, quotes and
/// backslashes included, without running anything: `--writer-command` takes
/// one string, and the contract stores the argv.
pub(super) fn split_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut started = false;
    let mut chars = line.chars();
    while let Some(ch) = chars.next() {
        match ch {
            '\'' => {
                started = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    word.push(c);
                }
            }
            '"' => {
                started = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => match chars.next() {
                            Some(next @ ('"' | '\\' | '$' | '`')) => word.push(next),
                            Some(next) => {
                                word.push('\\');
                                word.push(next);
                            }
                            None => word.push('\\'),
                        },
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                started = true;
                if let Some(next) = chars.next() {
                    word.push(next);
                }
            }
            c if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            c => {
                started = true;
                word.push(c);
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

/// The commit the loop starts from, `rev`; a repository without commits
/// starts from git's empty tree unless `explicit` (a flag or the template
/// set it). `from_flag`: the flag did, and a refusal names it.
fn resolve_base(
    state: &State,
    rev: &str,
    explicit: bool,
    from_flag: bool,
) -> anyhow::Result<String> {
    if let Some(commit) = git::resolve_commit(&state.repo, rev)? {
        return Ok(commit);
    }
    if !explicit && rev == "HEAD" {
        return Ok(git::EMPTY_TREE.to_string());
    }
    let field = if from_flag {
        "--base:"
    } else {
        "field `base`:"
    };
    Err(UsageError(format!(
        "{field} `{rev}` names no commit in `{}`",
        super::shown(&state.repo)
    ))
    .into())
}

fn refuse_overwrite(
    name: &LoopName,
    path: &std::path::Path,
    force: bool,
    started: bool,
) -> anyhow::Result<()> {
    if started {
        return Err(hinted(
            format!(
                "loop `{name}` has started: its contract `{}` is frozen by the ledger",
                super::shown(path)
            ),
            format!(
                "`referee contract amend --loop {name} --max-rounds N --by NAME --reason TEXT` raises the cap; \
             start a new loop with another `--loop`"
            ),
        ));
    }
    if !force {
        return Err(hinted(
            format!(
                "contract `{}` exists (loop `{name}` has not started)",
                super::shown(path)
            ),
            "pass `--force` to replace it, or edit it by hand",
        ));
    }
    Ok(())
}

/// What `.referee/.gitattributes` says, should the state ever be committed.
const ATTRIBUTES: &str = "\
# Written by `referee init`. A ledger's hash chain covers its exact bytes:
# git must never convert line endings here (core.autocrlf, eol).
* -text
";

/// Writes `.gitattributes` in the state folder unless one is there (the
/// user's own lines, if they wrote some, are kept).
fn write_attributes(state: &State) -> anyhow::Result<()> {
    let path = state.root.join(".gitattributes");
    match statefs::create_new(&state.root, &path) {
        Ok(mut file) => {
            use std::io::Write;
            file.write_all(ATTRIBUTES.as_bytes())
                .with_context(|| format!("cannot write `{}`", super::shown(&path)))?;
            Ok(())
        }
        Err(statefs::FsError::Io { cause, .. })
            if cause.kind() == std::io::ErrorKind::AlreadyExists =>
        {
            Ok(())
        }
        Err(err) => Err(err.into()),
    }
}

pub(super) fn short(rev: &str) -> &str {
    rev.get(..12).unwrap_or(rev)
}

#[cfg(test)]
mod tests {
    #[test]
    fn command_lines_split_like_a_shell() {
        let table: [(&str, &[&str]); 6] = [
            ("sh agent.sh", &["sh", "agent.sh"]),
            ("  python3 -m  tool  ", &["python3", "-m", "tool"]),
            ("sh -c 'echo \"a b\"'", &["sh", "-c", "echo \"a b\""]),
            ("cmd \"it's\" x\\ y", &["cmd", "it's", "x y"]),
            ("''", &[""]),
            ("", &[]),
        ];
        for (line, want) in table {
            assert_eq!(super::split_words(line), want, "{line}");
        }
    }

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
