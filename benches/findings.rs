//! Parse + match benchmark: a generated 50,000-result SARIF log against
//! 50,000 known findings. Plain `harness = false`: prints timings.
//! Run with `cargo bench --bench findings`; figures go in docs/performance.md.

use std::time::{Duration, Instant};

use referee::findings::{self, Format, Known, match_findings};

const RESULTS: usize = 50_000;
const FILES: usize = 500;
const ROUNDS: usize = 5;

/// A word for `n` (titles lose their digits when normalized).
fn word(mut n: usize) -> String {
    let mut out = String::new();
    loop {
        out.push((b'a' + (n % 26) as u8) as char);
        n /= 26;
        if n == 0 {
            return out;
        }
    }
}

/// One round's SARIF log. `round` 2 rewords every 10th message, moves
/// every 7th result 30 lines down, and replaces every 20th with a new one.
fn sarif(round: u32) -> String {
    let mut results = Vec::with_capacity(RESULTS);
    for i in 0..RESULTS {
        let file = format!("src/module_{}/file_{}.rs", i % 50, i % FILES);
        let mut line = 1 + (i / FILES) * 3;
        let mut message = format!(
            "variable {} shadows the binding of {} in {}",
            word(i),
            word(i * 7 + 3),
            word(i / FILES)
        );
        if round == 2 {
            if i % 10 == 0 {
                message = format!("the {message} here");
            }
            if i % 7 == 0 {
                line += 30;
            }
            if i % 20 == 1 {
                message = format!(
                    "unchecked arithmetic on {} may overflow",
                    word(i + 1_000_000)
                );
            }
        }
        results.push(format!(
            r#"{{"ruleId":"R{}","level":"warning","message":{{"text":"{message}"}},"locations":[{{"physicalLocation":{{"artifactLocation":{{"uri":"{file}"}},"region":{{"startLine":{line}}}}}}}]}}"#,
            i % 40
        ));
    }
    format!(
        r#"{{"version":"2.1.0","runs":[{{"tool":{{"driver":{{"name":"bench"}}}},"results":[{}]}}]}}"#,
        results.join(",")
    )
}

/// Worst case for the similarity fallback: every finding in one file, and
/// every one reworded, so none matches by id or fingerprint.
fn hot_file() {
    const HOT: usize = 20_000;
    let round = |reworded: bool| {
        let mut text = String::new();
        for i in 0..HOT {
            let extra = if reworded { " again" } else { "" };
            text.push_str(&format!(
                "[should] src/hot.rs:{}: value {} is cloned before {} returns{extra}\n",
                i + 1,
                word(i),
                word(i * 13 + 5)
            ));
        }
        findings::parse(text.as_bytes(), Format::Tagged, "/repo").expect("tagged parses")
    };
    let old = round(false);
    let known: Vec<Known> = old.findings.iter().map(Known::from).collect();
    let new = round(true);
    let start = Instant::now();
    let matched = match_findings(&new.findings, &known);
    let elapsed = start.elapsed();
    let kept = matched
        .iter()
        .enumerate()
        .filter(|(i, m)| m.known == Some(*i))
        .count();
    println!(
        "findings: one file, {HOT} reworded findings against {HOT} known: match {:.1} ms; {kept} kept their id",
        elapsed.as_secs_f64() * 1e3
    );
}

fn main() {
    hot_file();
    let first = sarif(1);
    let second = sarif(2);
    let old = findings::parse(first.as_bytes(), Format::Auto, "/repo").expect("round 1 parses");
    let known: Vec<Known> = old.findings.iter().map(Known::from).collect();
    assert_eq!(known.len(), RESULTS);

    let mut parse_times = Vec::new();
    let mut match_times = Vec::new();
    let mut matched = 0;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let parsed =
            findings::parse(second.as_bytes(), Format::Auto, "/repo").expect("round 2 parses");
        parse_times.push(start.elapsed());
        let start = Instant::now();
        let ids = match_findings(&parsed.findings, &known);
        match_times.push(start.elapsed());
        matched = ids.iter().filter(|m| m.known.is_some()).count();
        // Every surviving finding keeps its own id; replaced ones are new.
        for (i, m) in ids.iter().enumerate() {
            let want = (i % 20 != 1).then_some(i);
            assert_eq!(m.known, want, "result {i}");
        }
    }
    let median = |times: &mut Vec<Duration>| {
        times.sort();
        times[times.len() / 2]
    };
    let parse = median(&mut parse_times);
    let matching = median(&mut match_times);
    println!(
        "findings: parse {RESULTS} SARIF results ({:.1} MiB): {:.1} ms; match against {} known: {:.1} ms; total {:.1} ms (median of {ROUNDS}); {matched} matched, {} new",
        second.len() as f64 / 1024.0 / 1024.0,
        parse.as_secs_f64() * 1e3,
        known.len(),
        matching.as_secs_f64() * 1e3,
        (parse + matching).as_secs_f64() * 1e3,
        RESULTS - matched,
    );
}
