//! Writes a contract as commented TOML with every field spelled out. Pure.

use std::collections::BTreeMap;
use std::fmt::Write;

use toml::Value;

use super::{Agent, Contract, EmptyReport, Guard, Judge, SETTINGS, Timeout};

/// The contract file `referee init` writes.
pub fn to_toml(contract: &Contract) -> String {
    let mut out = String::new();
    let c = contract;
    line(
        &mut out,
        "# referee loop contract. Frozen at round 1: after that only",
    );
    line(
        &mut out,
        "# `referee contract amend` may raise the round cap, in writing.",
    );
    line(&mut out, "# Fields: `referee docs contract`");
    let written = toml::Value::try_from(c).expect("a contract is a TOML table");
    for (key, note) in SETTINGS {
        // A setting left unset, serialized as nothing, is written as nothing.
        let Some(value) = written.get(*key) else {
            continue;
        };
        if *key == "guards" {
            let guards: Vec<String> = Guard::ALL
                .iter()
                .map(|g| format!("{g} ({})", g.note()))
                .collect();
            line(&mut out, &format!("# {note}: {}", guards.join(", ")));
        } else if !note.is_empty() {
            line(&mut out, &format!("# {note}"));
        }
        kv(&mut out, key, &value.to_string());
    }
    out.push('\n');
    line(
        &mut out,
        "# spend caps over the whole loop (leave out for none)",
    );
    line(&mut out, "[budget]");
    match c.budget.usd {
        // A TOML float, as `init` always wrote it: `usd = 5.0`, `usd = 2.5`.
        Some(usd) if usd.micros() % 1_000_000 == 0 => {
            kv(&mut out, "usd", &format!("{}.0", usd.plain()))
        }
        Some(usd) => kv(&mut out, "usd", &usd.plain()),
        None => line(&mut out, "# usd = 5.0"),
    }
    match c.budget.tokens {
        Some(tokens) => kv(&mut out, "tokens", &tokens.to_string()),
        None => line(&mut out, "# tokens = 2000000"),
    }
    if let Some(writer) = &c.writer {
        agent(&mut out, "writer", writer);
    }
    if let Some(reviewer) = &c.reviewer {
        agent(&mut out, "reviewer", reviewer);
    }
    for member in &c.reviewers {
        out.push('\n');
        line(&mut out, "[[reviewers]]");
        kv(&mut out, "name", &string(&member.name));
        fields(&mut out, &member.agent);
    }
    if !c.reviewers.is_empty() || !c.panel.is_default() {
        out.push('\n');
        line(
            &mut out,
            "# quorum: reviewers that must answer for a round to count (leave out for all);",
        );
        line(
            &mut out,
            "# veto: any (one reviewer's must-fix is must-fix) or majority (the median severity)",
        );
        line(&mut out, "[panel]");
        match c.panel.quorum {
            Some(q) => kv(&mut out, "quorum", &q.to_string()),
            None => line(
                &mut out,
                &format!("# quorum = {}", c.reviewers.len().max(1)),
            ),
        }
        kv(&mut out, "veto", &string(c.panel.veto.as_str()));
    }
    if let Some(judge) = &c.judge {
        judge_section(&mut out, judge);
    }
    if !c.prompt.is_empty() {
        out.push('\n');
        line(
            &mut out,
            "# prompt templates that replace the built-in ones (`referee docs presets`)",
        );
        line(&mut out, "[prompt]");
        opt(&mut out, "writer", c.prompt.writer.as_deref());
        opt(&mut out, "reviewer", c.prompt.reviewer.as_deref());
        opt(&mut out, "writer_file", c.prompt.writer_file.as_deref());
        opt(&mut out, "reviewer_file", c.prompt.reviewer_file.as_deref());
    }
    out
}

fn agent(out: &mut String, section: &str, a: &Agent) {
    out.push('\n');
    line(out, &format!("[{section}]"));
    fields(out, a);
}

fn fields(out: &mut String, a: &Agent) {
    kv(out, "preset", &string(a.preset.as_str()));
    opt(out, "model", a.model.as_deref());
    opt(out, "bin", a.bin.as_deref());
    if let Some(command) = &a.command {
        kv(out, "command", &strings(command));
    }
    opt(out, "junit", a.junit.as_deref());
    if !a.args.is_empty() {
        kv(out, "args", &strings(&a.args));
    }
    if !a.env.is_empty() {
        kv(out, "env", &env(&a.env));
    }
    opt(out, "cwd", a.cwd.as_deref());
    if !a.allowed_tools.is_empty() {
        kv(out, "allowed_tools", &strings(&a.allowed_tools));
    }
    if let Some(turns) = a.max_turns {
        kv(out, "max_turns", &turns.to_string());
    }
    opt(out, "sandbox", a.sandbox.as_deref());
    if a.empty_report != EmptyReport::Refuse {
        kv(out, "empty_report", &string(a.empty_report.as_str()));
    }
    kv(out, "timeout", &timeout(a.timeout));
}

fn judge_section(out: &mut String, j: &Judge) {
    out.push('\n');
    line(out, "[judge]");
    kv(out, "engine", &string(j.engine.as_str()));
    opt(out, "replay", j.replay.as_deref());
    if let Some(command) = &j.command {
        kv(out, "command", &strings(command));
    }
    opt(out, "model", j.model.as_deref());
    opt(out, "bin", j.bin.as_deref());
    if !j.args.is_empty() {
        kv(out, "args", &strings(&j.args));
    }
    if !j.env.is_empty() {
        kv(out, "env", &env(&j.env));
    }
    kv(out, "use_case", &string(&j.use_case));
    kv(out, "what", &string(&j.what));
    opt(out, "questions", j.questions.as_deref());
    kv(out, "max_state_bytes", &j.max_state_bytes.to_string());
    kv(out, "timeout", &timeout(j.timeout));
}

fn line(out: &mut String, text: &str) {
    out.push_str(text);
    out.push('\n');
}

fn kv(out: &mut String, key: &str, value: &str) {
    let _ = writeln!(out, "{key} = {value}");
}

fn opt(out: &mut String, key: &str, value: Option<&str>) {
    if let Some(value) = value {
        kv(out, key, &string(value));
    }
}

fn string(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

fn strings(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| string(s)).collect();
    format!("[{}]", quoted.join(", "))
}

fn env(env: &BTreeMap<String, String>) -> String {
    let pairs: Vec<String> = env
        .iter()
        .map(|(k, v)| format!("{} = {}", key(k), string(v)))
        .collect();
    format!("{{ {} }}", pairs.join(", "))
}

/// A table key: bare when TOML allows it, quoted otherwise.
fn key(k: &str) -> String {
    let bare = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare { k.to_string() } else { string(k) }
}

fn timeout(t: Timeout) -> String {
    string(&t.to_string())
}
