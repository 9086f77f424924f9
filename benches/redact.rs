//! Redaction cost on the inputs `record` stores: the first redaction of a
//! process (which compiles the rules), a 1 MB patch, a 5 MB review (its raw
//! bytes, then each finding's title and body, as `record` stores them), the
//! 50,000-result SARIF of scripts/bench.py (about 40 MB, no secret in it),
//! 100,000 short finding texts, and a 10 MB agent log of code, hashes,
//! UUIDs, base64 and a secret every 200 lines. Plain `harness = false`:
//! prints timings, the least thread CPU time of 7 runs (steady on a shared
//! machine) and the median wall time.
//! Run with `cargo bench --bench redact`; figures go in docs/performance.md.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use referee::redact::{redact, redact_str};

const ROUNDS: usize = 7;

/// The SARIF log of scripts/bench.py (round 1), written with one-space indents.
fn sarif() -> Vec<u8> {
    let results: Vec<serde_json::Value> = (0..50_000)
        .map(|i| {
            let msg = format!(
                "variable v{i} shadows an outer binding of the same name declared in the \
                 enclosing scope; rename one of them so that readers and reviewers can tell \
                 them apart at a glance ({})",
                i % 97
            );
            serde_json::json!({
                "ruleId": format!("rule-{}", i % 40), "level": "warning",
                "message": {"text": msg},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": format!("src/module_{}/file_{}.rs", i % 50, i % 500)},
                    "region": {"startLine": 1 + (i / 500) * 3, "startColumn": 5,
                               "endLine": 1 + (i / 500) * 3, "endColumn": 40}}}],
                "partialFingerprints": {"primaryLocationLineHash": format!("{:016x}", hash(i))},
                "properties": {"tags": ["maintainability", "shadowing"], "precision": "high"},
            })
        })
        .collect();
    let doc = serde_json::json!({
        "version": "2.1.0", "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "runs": [{"tool": {"driver": {"name": "bench-lint", "version": "1.0.0"}}, "results": results}],
    });
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    serde::Serialize::serialize(&doc, &mut ser).expect("serialize");
    out
}

fn hash(i: u64) -> u64 {
    // SplitMix64: hex that looks like hashes, without a dependency.
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A unified diff of about 1 MB as `git diff` writes it: Rust code changed
/// across 200 files.
fn patch() -> Vec<u8> {
    let mut out = String::new();
    let mut i = 0u64;
    while out.len() < 1 << 20 {
        let file = format!("src/module_{}/file_{i}.rs", i % 20);
        let _ = write!(
            out,
            "diff --git a/{file} b/{file}\nindex {:07x}..{:07x} 100644\n--- a/{file}\n+++ b/{file}\n",
            hash(i) as u32 >> 4,
            hash(i + 1) as u32 >> 4
        );
        for h in 0..12u64 {
            let at = 1 + h * 40;
            let _ = writeln!(out, "@@ -{at},7 +{at},8 @@ impl Session {{");
            let _ = writeln!(
                out,
                "     /// Checks the token of request {h} against its expiry."
            );
            let _ = writeln!(
                out,
                "     pub fn check_{h}(&self, now: u64) -> Result<(), Error> {{"
            );
            let _ = writeln!(out, "-        if self.expires_at > now {{");
            let _ = writeln!(out, "+        if self.expires_at <= now {{");
            let _ = writeln!(
                out,
                "+            tracing::debug!(id = %self.id, \"expired at {{}}\", self.expires_at);"
            );
            let _ = writeln!(
                out,
                "             return Err(Error::Expired {{ at: self.expires_at }});"
            );
            let _ = writeln!(out, "         }}");
            let _ = writeln!(
                out,
                "         let password_hash = argon2::hash(&self.input, &self.salt)?;"
            );
            let _ = writeln!(out, "         Ok(())");
        }
        i += 1;
    }
    out.into_bytes()
}

/// A native review of about 5 MB: 8,000 findings with titles and bodies,
/// and the texts `record` redacts one by one after the raw bytes.
fn review() -> (Vec<u8>, Vec<String>) {
    let findings: Vec<serde_json::Value> = (0..8_000u64)
        .map(|i| {
            let severity = ["bug", "should", "nit"][(i % 3) as usize];
            serde_json::json!({
                "id": format!("F{i}"), "severity": severity,
                "title": format!("the token refresh in `auth::session` (case {i}) never checks expiry"),
                "file": format!("src/module_{}/file_{}.rs", i % 20, i % 200), "line": 1 + i % 900,
                "body": format!(
                    "`Session::check_{}` compares `expires_at > now` where it means `<=`, so an \
                     expired token passes for as long as the process runs. Seen in commit \
                     {:016x}{:016x}; a test that sets the clock past expiry and expects \
                     `Error::Expired` would have caught it. The password hash is computed before \
                     the check, which costs a hash per rejected request as well: move the check \
                     first, then hash. {}",
                    i % 12, hash(i), hash(i + 1), "x".repeat((i % 40) as usize)
                ),
            })
        })
        .collect();
    let texts = findings
        .iter()
        .flat_map(|f| [f["title"].as_str(), f["body"].as_str()])
        .flatten()
        .map(str::to_string)
        .collect();
    let raw =
        serde_json::to_vec_pretty(&serde_json::json!({ "findings": findings })).expect("serialize");
    (raw, texts)
}

/// Finding titles and bodies as `record` redacts them one by one.
fn texts() -> Vec<String> {
    (0..100_000u64)
        .map(|i| {
            if i % 2 == 0 {
                format!(
                    "variable v{i} shadows an outer binding in src/module_{}.rs",
                    i % 50
                )
            } else {
                format!(
                    "the token refresh in `auth::session` (line {i}) never checks expiry; \
                     see commit {:016x}{:016x}",
                    hash(i),
                    hash(i + 1)
                )
            }
        })
        .collect()
}

/// An agent's log: code, build output, hashes, UUIDs, base64, URLs, and now
/// and then a secret.
fn log() -> Vec<u8> {
    let mut out = String::new();
    let mut i = 0u64;
    while out.len() < 10 << 20 {
        let h = hash(i);
        let line = match i % 10 {
            0 => format!("    let password_hash = argon2::hash(&input, &salt_{i})?;\n"),
            1 => format!(
                "   Compiling serde v1.0.{} (registry+https://github.com/rust-lang/crates.io-index)\n",
                i % 300
            ),
            2 => format!("commit {h:016x}{:016x}{:08x}\n", hash(i + 1), h as u32),
            3 => format!(
                "request_id={:08x}-{:04x}-{:04x}-{:04x}-{:012x} status=200 elapsed_ms={}\n",
                h as u32,
                h as u16,
                (h >> 16) as u16,
                (h >> 32) as u16,
                hash(i + 2) & 0xffff_ffff_ffff,
                i % 900
            ),
            4 => format!(
                "    assert_eq!(decode(\"SGVsbG8sIFdvcmxkIQ=={i}\"), b\"Hello, World!\");\n"
            ),
            5 => format!("sha256:{h:016x}{:016x}{:016x}{:016x}  target/debug/app\n", hash(i + 1), hash(i + 2), hash(i + 3)),
            6 => "error[E0308]: mismatched types: expected `&str`, found `String` --> src/auth.rs:42:17\n".to_string(),
            7 => format!("- fetched https://example.com/api/v2/items?page={i}&per_page=100 in {}ms\n", i % 97),
            8 => format!("  {{\"id\": \"F{i}\", \"title\": \"token: unchecked expiry\", \"line\": {}}}\n", i % 500),
            _ if i % 200 == 9 => format!("export DATABASE_URL=postgres://app:hunter{i}@db.internal:5432/app\n"),
            _ => format!("test auth::tests::case_{i} ... ok\n"),
        };
        out.push_str(&line);
        i += 1;
    }
    out.into_bytes()
}

fn cpu() -> Duration {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(Duration::from)
        .expect("the thread's CPU clock")
}

fn time(mut f: impl FnMut() -> usize) -> (Duration, Duration, usize) {
    let mut cpus = Vec::with_capacity(ROUNDS);
    let mut walls = Vec::with_capacity(ROUNDS);
    let mut kept = 0;
    for _ in 0..ROUNDS {
        let (start, wall) = (cpu(), Instant::now());
        kept = f();
        walls.push(wall.elapsed());
        cpus.push(cpu().saturating_sub(start));
    }
    cpus.sort();
    walls.sort();
    (cpus[0], walls[walls.len() / 2], kept)
}

fn report(what: &str, bytes: usize, (min, median, kept): (Duration, Duration, usize)) {
    let mb = bytes as f64 / 1e6;
    let mut line = String::new();
    let _ = write!(
        line,
        "{what:<40} {mb:>5.1} MB  cpu {:>6.1} ms  wall median {:>6.1} ms  ({:.0} MB/s)  out {kept} bytes",
        min.as_secs_f64() * 1e3,
        median.as_secs_f64() * 1e3,
        mb / min.as_secs_f64(),
    );
    println!("{line}");
}

fn main() {
    // Before anything else: the only call in the process that compiles.
    let (start, wall) = (cpu(), Instant::now());
    let first = redact(b"the first text of a round, no secret in it").len();
    report(
        "the first redaction of a process",
        0,
        (cpu().saturating_sub(start), wall.elapsed(), first),
    );
    let patch = patch();
    report("a 1 MB patch", patch.len(), time(|| redact(&patch).len()));
    let (raw, review_texts) = review();
    report(
        "a 5 MB review: raw, then 16,000 texts",
        raw.len(),
        time(|| {
            redact(&raw).len()
                + review_texts
                    .iter()
                    .map(|t| redact_str(t).len())
                    .sum::<usize>()
        }),
    );
    let sarif = sarif();
    report(
        "the bench SARIF (50,000 results)",
        sarif.len(),
        time(|| redact(&sarif).len()),
    );
    let texts = texts();
    let total: usize = texts.iter().map(String::len).sum();
    report(
        "100,000 finding texts, one by one",
        total,
        time(|| texts.iter().map(|t| redact_str(t).len()).sum()),
    );
    let log = log();
    report("a 10 MB agent log", log.len(), time(|| redact(&log).len()));
}
