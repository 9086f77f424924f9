//! A demo of referee's foundation on a real git repository: it writes a loop
//! contract with `referee init`, appends three rounds through the ledger's
//! library API (what `referee record` will do once it lands), then shows the
//! ledger, verifies the chain, breaks one byte and verifies again.
//!
//! Run: `cargo run --example demo`

use std::path::Path;
use std::process::Command;

use clap::Parser;
use referee::cli::Cli;
use referee::ledger::{Counts, Draft, Evidence, Kind, Store, Verdict};

fn main() -> anyhow::Result<()> {
    let dir = std::env::temp_dir().join(format!("referee-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    std::env::set_current_dir(&dir)?;
    git(&dir, &["init", "-q", "-b", "main"])?;
    std::fs::write(
        dir.join("auth.rs"),
        "fn valid(now: u64, exp: u64) -> bool { now < exp }\n",
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

    referee(&[
        "init",
        "--loop",
        "auth-fix",
        "--max-rounds",
        "3",
        "--floor",
        "bug",
    ])?;

    let contract = std::fs::read(dir.join(".referee/contracts/auth-fix.toml"))?;
    let store = Store::new(
        dir.join(".referee/ledgers/auth-fix.csv"),
        dir.join(".referee/ledgers/auth-fix"),
        &referee::digest::sha256_hex(&contract),
    );
    // Three rounds of a loop that converges: 2 must-fix, then 1, then 0.
    for (round, must_fix, closed, verdict, rule) in [
        (1, 2, 0, Verdict::Continue, ""),
        (2, 1, 1, Verdict::Continue, ""),
        (3, 0, 1, Verdict::Stop, "clean"),
    ] {
        let mut draft = Draft::new(
            Kind::Round,
            round,
            &chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        );
        draft.counts = Some(Counts {
            opened: if round == 1 { 2 } else { 0 },
            closed,
            reopened: 0,
            must_fix_left: must_fix,
            below_floor_open: 1,
            diff_added: 12 / u64::from(round),
            diff_removed: 4,
        });
        draft.verdict = Some(verdict);
        draft.rule = rule.to_string();
        let evidence = Evidence::stage(&store)?;
        evidence.add(
            "findings.json",
            format!("{{\"findings\":[],\"round\":{round}}}\n").as_bytes(),
        )?;
        store.lock()?.append(draft, Some(evidence))?;
    }

    println!("\n$ referee ledger show");
    referee(&["ledger", "show"])?;
    println!("\n$ referee ledger verify");
    referee(&["ledger", "verify"])?;

    println!("\n(editing one byte of round 2's row...)");
    let path = dir.join(".referee/ledgers/auth-fix.csv");
    let text = std::fs::read_to_string(&path)?;
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[2] = lines[2].replacen(",1,", ",0,", 1);
    std::fs::write(&path, lines.join("\n") + "\n")?;
    println!("$ referee ledger verify");
    referee(&["ledger", "verify"])?;
    Ok(())
}

/// Runs one referee command line in-process, as the binary would.
fn referee(args: &[&str]) -> anyhow::Result<()> {
    let cli = Cli::try_parse_from(std::iter::once("referee").chain(args.iter().copied()))?;
    let exit = referee::cmd::main(cli);
    println!("(exit {})", exit.code());
    Ok(())
}

fn git(dir: &Path, args: &[&str]) -> anyhow::Result<()> {
    let status = Command::new("git").args(args).current_dir(dir).status()?;
    anyhow::ensure!(status.success(), "git {args:?} failed");
    Ok(())
}
