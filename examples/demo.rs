//! A demo of `referee run` on a real git repository with scripted agents (the
//! `command` preset): a writer that edits `auth.rs` and answers the
//! findings, and a reviewer that reports fewer findings each round, until the
//! loop converges on `clean`. No API key, no network. Then the ledger, the
//! status, a person's approval bound to the tree, `ledger verify`, one
//! broken byte, and `verify` naming the row.
//! Every step is the real command, run in-process.
//!
//! Run: `cargo run --example demo`

use std::path::Path;
use std::process::Command;

use clap::Parser;
use referee::cmd::cli::Cli;

/// The scripted pair, one shell script for both roles. `referee` tells it the
/// role and the round in `REFEREE_ROLE` / `REFEREE_ROUND`; it edits files as
/// a writer, and prints native findings JSON as a reviewer. Answers go to
/// `REFEREE_OUTPUT_FILE`.
const AGENT: &str = r#"#!/bin/sh
set -eu
cat > /dev/null   # the prompt, on stdin
case "$REFEREE_ROLE-$REFEREE_ROUND" in
writer-1)
  printf 'fn valid(now: u64, exp: u64) -> bool {\n    now < exp\n}\n\nfn refresh(token: &str) -> String {\n    token.to_string()\n}\n' > auth.rs
  ;;
reviewer-1)
  cat <<'JSON'
{"findings": [
  {"id": "F1", "severity": "block", "title": "expired tokens pass at exact boundary",
   "file": "auth.rs", "line": 2, "body": "use `now >= exp`, the boundary is exploitable"},
  {"id": "F2", "severity": "bug", "title": "refresh keeps the old token",
   "file": "auth.rs", "line": 6, "body": "refresh must mint a new token"},
  {"id": "F3", "severity": "nit", "title": "name `valid` is vague", "file": "auth.rs", "line": 1}
]}
JSON
  ;;
writer-2)
  printf 'fn valid(now: u64, exp: u64) -> bool {\n    now < exp\n}\n\nfn refresh(token: &str) -> String {\n    format!("{token}.next")\n}\n' > auth.rs
  cat > "$REFEREE_OUTPUT_FILE" <<'JSON'
{"responses": [{"id": "F1", "status": "wontfix", "note": "checking spec 4.2 first"},
               {"id": "F2", "status": "fixed", "note": "refresh mints a new token"}]}
JSON
  ;;
reviewer-2)
  echo '{"findings": [{"id": "F1", "severity": "block", "title": "expired tokens pass at exact boundary", "file": "auth.rs", "line": 2, "body": "spec 4.2 says a token expires AT exp"}]}'
  ;;
writer-3)
  printf 'fn valid(now: u64, exp: u64) -> bool {\n    now < exp\n}\n\n// exp is exclusive: a token is invalid at exp (spec 4.2)\nfn refresh(token: &str) -> String {\n    format!("{token}.next")\n}\n' > auth.rs
  echo '{"responses": [{"id": "F1", "status": "fixed", "note": "a token is invalid at exp"}]}' > "$REFEREE_OUTPUT_FILE"
  ;;
reviewer-3)
  echo '{"findings": []}'
  ;;
esac
"#;

fn main() -> anyhow::Result<()> {
    let root = std::env::temp_dir().join(format!("referee-demo-{}", std::process::id()));
    let dir = root.join("repo");
    std::fs::create_dir_all(&dir)?;
    std::env::set_current_dir(&dir)?;
    git(&dir, &["init", "-q", "-b", "main"])?;
    std::fs::write(
        dir.join("auth.rs"),
        "fn valid(now: u64, exp: u64) -> bool {\n    now <= exp\n}\n",
    )?;
    git(&dir, &["add", "-A"])?;
    git(
        &dir,
        &[
            "-c",
            "user.name=demo",
            "-c",
            "user.email=demo@localhost",
            "commit",
            "-q",
            "-m",
            "start",
        ],
    )?;
    // The agent lives outside the work tree: untracked files are part of a
    // round's snapshot.
    let agent = root.join("agent.sh");
    std::fs::write(&agent, AGENT)?;
    let contract = root.join("contract.toml");
    std::fs::write(
        &contract,
        format!(
            "loop = \"auth-fix\"\nmax_rounds = 4\nseverity_floor = \"bug\"\nscope = [\"*.rs\"]\n\n\
             [writer]\npreset = \"command\"\ncommand = [\"sh\", \"{a}\"]\ntimeout = \"1m\"\n\n\
             [reviewer]\npreset = \"command\"\ncommand = [\"sh\", \"{a}\"]\ntimeout = \"1m\"\n",
            a = agent.display()
        ),
    )?;
    println!("demo repository: {}", dir.display());

    run(&["init", "--from", &contract.display().to_string()])?;
    run(&[
        "run",
        "--task",
        "fix the token expiry check and make refresh mint a new token",
    ])?;
    run(&["ledger", "show"])?;
    run(&["status"])?;
    run(&["findings"])?;
    run(&["approve", "--by", "demo", "--reason", "converged on clean"])?;
    run(&["approval", "check"])?;
    run(&["ledger", "verify"])?;

    println!("\n(editing one byte of round 2's row...)");
    let path = dir.join(".referee/ledgers/auth-fix.csv");
    let text = std::fs::read_to_string(&path)?;
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[2] = lines[2].replacen("2,0,1,", "2,0,0,", 1);
    std::fs::write(&path, lines.join("\n") + "\n")?;
    run(&["ledger", "verify"])?;
    Ok(())
}

/// Runs one referee command line in-process, as the binary would, and
/// returns its exit code.
fn run(args: &[&str]) -> anyhow::Result<u8> {
    // Echoed as a shell would need them: words with spaces keep quotes.
    let shown: Vec<String> = args
        .iter()
        .map(|a| {
            if a.is_empty()
                || a.contains(|c: char| c.is_whitespace() || "'\"$`\\*?[]{}()|&;<>#~".contains(c))
            {
                format!("'{}'", a.replace('\'', "'\\''"))
            } else {
                (*a).to_string()
            }
        })
        .collect();
    println!("\n$ referee {}", shown.join(" "));
    let cli = Cli::try_parse_from(std::iter::once("referee").chain(args.iter().copied()))?;
    let code = referee::cmd::main(cli).code();
    println!("(exit {code})");
    Ok(code)
}

fn git(dir: &Path, args: &[&str]) -> anyhow::Result<()> {
    let status = Command::new("git").args(args).current_dir(dir).status()?;
    anyhow::ensure!(status.success(), "git {args:?} failed");
    Ok(())
}
