//! The floors of docs/architecture.md hold: a module imports only the
//! modules on floors below its own. Read from the source, not the docs, so
//! an import that climbs fails here the day it is written.

use std::collections::BTreeMap;
use std::path::Path;

/// Every top-level module of `src/`, bottom floor first. A module may name
/// (`crate::x`) only modules of a lower floor; a module on the same floor
/// is off limits too, so no two modules can lean on each other.
const FLOORS: &[&[&str]] = &[
    &["children"],
    &[
        "text", "digest", "exit", "patch", "redact", "git", "leftover", "money",
    ],
    &["statefs", "findings"],
    &["contract"],
    &["rules", "state"],
    &["agent"],
    &["anchor"],
    &["ledger", "snapshot", "checkout"],
    &["judge"],
    &["engine"],
    &["report"],
    &["hook"],
    &["cmd"],
];

fn floor_of(module: &str) -> Option<usize> {
    FLOORS.iter().position(|floor| floor.contains(&module))
}

/// The product code of `text`: test modules (`#[cfg(test)] mod … { … }`)
/// and line comments left out.
fn product_code(text: &str) -> String {
    let mut out = String::new();
    for line in without_tests(text).lines() {
        out.push_str(line.split("//").next().unwrap_or(""));
        out.push('\n');
    }
    out
}

/// `text` with its test modules (`#[cfg(test)] mod … { … }`) left out.
pub(crate) fn without_tests(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]" {
            let Some(next) = lines.peek() else { break };
            if next.trim_end().ends_with(';') {
                lines.next();
                continue;
            }
            // Skip the item: braces counted to its end.
            let mut depth = 0i32;
            let mut opened = false;
            for line in lines.by_ref() {
                depth += line.matches('{').count() as i32 - line.matches('}').count() as i32;
                opened |= line.contains('{');
                if opened && depth <= 0 {
                    break;
                }
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The top-level modules `code` names: `crate::x` paths and the names in
/// `use crate::{x, y::z}` groups.
fn named_modules(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    names.push(name);
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            names.push(name);
        }
    }
    names
}

pub(crate) fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_module_imports_one_on_its_own_floor_or_above() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut climbs: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut unplaced = Vec::new();
    for path in &files {
        let rel = path.strip_prefix(&src).unwrap();
        let module = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        if module == "main" || module == "lib" || rel.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let Some(floor) = floor_of(&module) else {
            unplaced.push(module);
            continue;
        };
        let code = product_code(&std::fs::read_to_string(path).unwrap());
        for name in named_modules(&code) {
            if name == module {
                continue;
            }
            match floor_of(&name) {
                Some(theirs) if theirs < floor => {}
                Some(_) => climbs
                    .entry(format!("{} -> {name}", rel.display()))
                    .or_default()
                    .push(name.clone()),
                // A crate-root item that is no module (`crate::VERSION`).
                None => {}
            }
        }
    }
    unplaced.sort();
    unplaced.dedup();
    assert!(
        unplaced.is_empty(),
        "modules on no floor (add them to FLOORS and docs/architecture.md): {unplaced:?}"
    );
    let climbs: Vec<&String> = climbs.keys().collect();
    assert!(
        climbs.is_empty(),
        "imports of a module on the same floor or above (docs/architecture.md):\n{}",
        climbs
            .iter()
            .map(|c| format!("  {c}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_reader_sees_paths_and_groups_and_skips_tests() {
    let code = product_code(
        "use crate::ledger::Row;\nuse crate::{engine::History, report};\n// crate::cmd in a comment\nfn f() { crate::text::one_line(\"\"); }\n#[cfg(test)]\nmod tests {\n    use crate::cmd::cli::Cli;\n}\n",
    );
    assert_eq!(named_modules(&code), ["ledger", "engine", "report", "text"]);
}

/// The modules of `src/cmd/` that commands share; every other one is a
/// command, and no command calls into another.
const SHARED_IN_CMD: &[&str] = &[
    "cli", "util", "round", "scratch", "incident", "create", "dry_run",
];

#[test]
fn no_command_calls_into_another() {
    let cmd = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cmd");
    let mut commands: Vec<String> = std::fs::read_dir(&cmd)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            path.file_stem().unwrap().to_string_lossy().into_owned()
        })
        .filter(|name| name != "mod" && !SHARED_IN_CMD.contains(&name.as_str()))
        .collect();
    commands.sort();
    commands.dedup();
    let mut files = Vec::new();
    sources(&cmd, &mut files);
    let mut leans = Vec::new();
    for path in &files {
        let rel = path.strip_prefix(&cmd).unwrap();
        let own = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let own = own.trim_end_matches(".rs");
        // The dispatchers name every command: `cli.rs` its arguments,
        // `mod.rs` its `run`.
        if own == "cli" || own == "mod" {
            continue;
        }
        let code = product_code(&std::fs::read_to_string(path).unwrap());
        for other in &commands {
            if other == own {
                continue;
            }
            for spelled in [
                format!("super::{other}::"),
                format!("super::super::{other}::"),
                format!("crate::cmd::{other}::"),
                format!("super::{{{other}"),
            ] {
                // `super::x::` from a file directly in `src/cmd/` names the
                // command `x`; from `src/cmd/hook/` it names `hook/x`.
                let nested = rel.components().count() > 1;
                if spelled.starts_with("super::") && !spelled.starts_with("super::super") && nested
                {
                    continue;
                }
                if code.contains(&spelled) {
                    leans.push(format!("cmd/{} -> {other}", rel.display()));
                }
            }
        }
    }
    assert!(
        leans.is_empty(),
        "commands calling into other commands (move what they share to cmd/util.rs): {leans:?}"
    );
}
