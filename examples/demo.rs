//! A demo of a whole record loop on a real git repository: `referee init`,
//! then three rounds of a scripted writer (file edits) and reviewer (findings
//! files) through `referee record`, until the round cap escalates with the
//! hand-off; then `status`, `ledger verify`, one broken byte, and `verify`
//! naming the row. Every step is the real command, run in-process.
//!
//! Run: `cargo run --example demo`

use std::path::Path;
use std::process::Command;

use clap::Parser;
use referee::cli::Cli;

/// One round of the scripted pair: what the writer leaves in `auth.rs`, what
/// the reviewer reports, and what the writer says about earlier findings.
struct Round {
    code: &'static str,
    review: &'static str,
    responses: Option<&'static str>,
}

const ROUNDS: [Round; 3] = [
    Round {
        code: "fn valid(now: u64, exp: u64) -> bool {\n    now < exp\n}\n\nfn refresh(token: &str) -> String {\n    token.to_string()\n}\n",
        review: r#"{"findings": [
  {"id": "F1", "severity": "block", "title": "expired tokens pass at exact boundary",
   "file": "auth.rs", "line": 2, "body": "use `now >= exp`, the boundary is exploitable"},
  {"id": "F2", "severity": "bug", "title": "refresh keeps the old token",
   "file": "auth.rs", "line": 6, "body": "refresh must mint a new token"},
  {"id": "F3", "severity": "nit", "title": "name `valid` is vague", "file": "auth.rs", "line": 1}
]}"#,
        responses: None,
    },
    Round {
        code: "fn valid(now: u64, exp: u64) -> bool {\n    now < exp\n}\n\nfn refresh(token: &str) -> String {\n    format!(\"{token}.next\")\n}\n",
        review: r#"{"findings": [
  {"id": "F1", "severity": "block", "title": "expired tokens pass at exact boundary",
   "file": "auth.rs", "line": 2, "body": "use `now >= exp`, the boundary is exploitable"}
]}"#,
        responses: Some(
            r#"{"responses": [
  {"id": "F1", "status": "disputed", "note": "spec reads exp as inclusive; changing it breaks token refresh tests"},
  {"id": "F2", "status": "fixed", "note": "refresh mints a new token"}
]}"#,
        ),
    },
    Round {
        code: "fn valid(now: u64, exp: u64) -> bool {\n    // exp is inclusive (spec 4.2)\n    now < exp\n}\n\nfn refresh(token: &str) -> String {\n    format!(\"{token}.next\")\n}\n",
        review: r#"{"findings": [
  {"id": "F1", "severity": "block", "title": "expired tokens pass at exact boundary",
   "file": "auth.rs", "line": 3, "body": "a comment does not change the comparison"}
]}"#,
        responses: Some(
            r#"{"responses": [{"id": "F1", "status": "disputed", "note": "documented the inclusive reading"}]}"#,
        ),
    },
];

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
    println!("demo repository: {}\n", dir.display());

    run(&[
        "init",
        "--loop",
        "auth-fix",
        "--max-rounds",
        "3",
        "--floor",
        "bug",
    ])?;

    for (i, round) in ROUNDS.iter().enumerate() {
        let n = i + 1;
        println!("\n--- round {n}: the writer edits auth.rs, the reviewer reports ---");
        std::fs::write(dir.join("auth.rs"), round.code)?;
        // Reviewer output lives outside the work tree: untracked files are
        // part of a round's snapshot.
        let review = root.join(format!("review-{n}.json"));
        std::fs::write(&review, round.review)?;
        let review = review.display().to_string();
        let mut args = vec!["record", "--findings", review.as_str()];
        let responses = root.join(format!("responses-{n}.json"));
        let responses = responses.display().to_string();
        if let Some(text) = round.responses {
            std::fs::write(&responses, text)?;
            args.extend(["--responses", responses.as_str()]);
        }
        if run(&args)? != 10 {
            break;
        }
    }

    run(&["status"])?;
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
    println!("\n$ referee {}", args.join(" "));
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
