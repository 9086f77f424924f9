//! The corpus: realistic review loops under `tests/corpus/`, one TOML file
//! each (format: tests/corpus/README.md). Each loop is played through the
//! binary in a temporary git repository, round by round, and must stop on the
//! rule, in the round and with the exit code its file gives from SPEC §4. All
//! loops are played before the assertion, which lists every loop that
//! disagrees. The test also prints what the loops cost in agent calls, and
//! writes it as a markdown table to `$REFEREE_CORPUS_REPORT` when that is set.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::common::Repo;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Loop {
    /// What real behaviour the loop models, and which SPEC sentence gives
    /// its stop.
    description: String,
    kind: Kind,
    expect: Expect,
    /// The default input format of the reviews (`auto` when absent).
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    contract: Contract,
    /// The files committed before `init`: path → whole contents.
    files: BTreeMap<String, String>,
    rounds: Vec<Round>,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
enum Kind {
    Converging,
    NonConverging,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    rule: String,
    round: usize,
    exit: i32,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Contract {
    max_rounds: Option<usize>,
    floor: Option<String>,
    closure: Option<String>,
    #[serde(default)]
    scope: Vec<String>,
    budget_usd: Option<f64>,
    /// Written into the contract by hand before round 1 (`init` has no flag).
    guards: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Round {
    /// What the writer did and why; for the reader only.
    #[serde(default)]
    note: String,
    /// Whole files written: `[path, contents]`.
    #[serde(default)]
    write: Vec<(String, String)>,
    /// Exact replacements, in order: `[path, old, new]`; `old` must occur
    /// exactly once in the file.
    #[serde(default)]
    replace: Vec<(String, String, String)>,
    /// Files removed.
    #[serde(default)]
    delete: Vec<String>,
    /// The reviewer's output as printed; `{repo}` is the repository's
    /// absolute path and `{id:WORDS}` the id of the finding whose title
    /// contains WORDS.
    review: String,
    /// Reviewer outputs printed before `review` that are no review (a
    /// refusal, an empty answer, a Claude result without
    /// `structured_output`): each must be refused (exit 1) with nothing
    /// recorded, under the same idempotency key as the review that follows.
    #[serde(default)]
    refused: Vec<String>,
    #[serde(default)]
    format: Option<String>,
    /// The writer's `{"responses": [...]}`, with the same placeholders.
    #[serde(default)]
    responses: Option<String>,
    #[serde(default)]
    cost_usd: Option<f64>,
}

/// Where a loop stopped when the binary played it.
#[derive(Debug)]
struct Stop {
    rule: String,
    round: usize,
    exit: i32,
    reason: String,
}

/// What playing a loop gave: the stop, or `None` when the binary still said
/// continue after the last scripted round.
#[derive(Debug)]
struct Played {
    stop: Option<Stop>,
    rounds: usize,
    /// The binary's `reason` for the last round it recorded.
    last_reason: String,
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

fn load() -> Vec<(String, Loop)> {
    let mut loops = Vec::new();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("tests/corpus")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    paths.sort();
    for path in paths {
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("utf-8 name")
            .to_string();
        let body = std::fs::read_to_string(&path).expect("read loop");
        let parsed: Loop =
            toml::from_str(&body).unwrap_or_else(|e| panic!("tests/corpus/{name}.toml: {e}"));
        loops.push((name, parsed));
    }
    loops
}

/// Runs `referee` and returns (exit code, stdout, stderr).
fn referee(repo: &Repo, args: &[&str], stdin: &str) -> (i32, String, String) {
    let out = repo.call(args).stdin(stdin).run();
    (out.code, out.stdout, out.stderr)
}

/// Replaces `{repo}`, every `{id:WORDS}` and every `{ids:WORDS}` in `raw`.
fn fill(raw: &str, repo: &Repo, name: &str) -> Result<String, String> {
    let root = std::fs::canonicalize(repo.path()).map_err(|e| e.to_string())?;
    let mut out = raw.replace("{repo}", &root.to_string_lossy());
    for (open, all) in [("{id:", false), ("{ids:", true)] {
        while let Some(start) = out.find(open) {
            let end = start
                + out[start..]
                    .find('}')
                    .ok_or_else(|| format!("unclosed `{open}` placeholder"))?;
            let words = out[start + open.len()..end].to_lowercase();
            let ids = ids_of(repo, name, &words)?;
            let id = match ids.as_slice() {
                [id] => id.clone(),
                [] => return Err(format!("no finding's title contains `{words}`")),
                _ if all => ids.join(" "),
                _ => {
                    return Err(format!(
                        "several findings' titles contain `{words}`: {ids:?}"
                    ));
                }
            };
            out.replace_range(start..=end, &id);
        }
    }
    Ok(out)
}

/// The ids of the loop's findings whose titles contain `words`: the open
/// ones when any is open, else all of them.
fn ids_of(repo: &Repo, name: &str, words: &str) -> Result<Vec<String>, String> {
    let (code, stdout, stderr) =
        referee(repo, &["findings", "--loop", name, "--format", "json"], "");
    if code != 0 {
        return Err(format!("`referee findings` exited {code}: {stderr}"));
    }
    let json: Value = serde_json::from_str(&stdout).map_err(|e| e.to_string())?;
    let hits: Vec<&Value> = json["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| {
            f["title"]
                .as_str()
                .is_some_and(|t| t.to_lowercase().contains(words))
        })
        .collect();
    let open: Vec<&Value> = hits
        .iter()
        .copied()
        .filter(|f| f["standing"] == "open")
        .collect();
    let chosen = if open.is_empty() { hits } else { open };
    Ok(chosen
        .iter()
        .filter_map(|f| f["id"].as_str().map(str::to_string))
        .collect())
}

fn apply_edits(repo: &Repo, round: &Round) -> Result<(), String> {
    for (path, contents) in &round.write {
        repo.write(path, contents);
    }
    for (path, old, new) in &round.replace {
        let body = std::fs::read_to_string(repo.join(path))
            .map_err(|e| format!("replace in `{path}`: {e}"))?;
        match body.matches(old.as_str()).count() {
            1 => repo.write(path, &body.replacen(old.as_str(), new, 1)),
            n => return Err(format!("replace in `{path}`: {old:?} occurs {n} times")),
        }
    }
    for path in &round.delete {
        std::fs::remove_file(repo.join(path)).map_err(|e| format!("delete `{path}`: {e}"))?;
    }
    Ok(())
}

fn round_rows(repo: &Repo, name: &str) -> Result<usize, String> {
    let (code, stdout, stderr) = referee(
        repo,
        &["ledger", "show", "--loop", name, "--format", "json"],
        "",
    );
    if code != 0 {
        return Err(format!("`referee ledger show` exited {code}: {stderr}"));
    }
    let doc: Value = serde_json::from_str(&stdout).map_err(|e| e.to_string())?;
    let rows = doc["rows"]
        .as_array()
        .ok_or("`ledger show --json` has no rows")?;
    Ok(rows.iter().filter(|r| r["kind"] == "round").count())
}

/// Plays `lp` through the binary. An `Err` is a loop the harness could not
/// play (bad edit, input the binary refused): a defect of the corpus or an
/// error of the binary, never a stop.
fn play(name: &str, lp: &Loop) -> Result<Played, String> {
    let repo = Repo::empty();
    for (path, contents) in &lp.files {
        repo.write(path, contents);
    }
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "base"]);

    let mut init: Vec<String> = vec!["init".into(), "--loop".into(), name.into()];
    let c = &lp.contract;
    if let Some(n) = c.max_rounds {
        init.extend(["--max-rounds".into(), n.to_string()]);
    }
    if let Some(f) = &c.floor {
        init.extend(["--floor".into(), f.clone()]);
    }
    if let Some(m) = &c.closure {
        init.extend(["--closure".into(), m.clone()]);
    }
    for glob in &c.scope {
        init.extend(["--scope".into(), glob.clone()]);
    }
    if let Some(usd) = c.budget_usd {
        init.extend(["--budget-usd".into(), usd.to_string()]);
    }
    if let Some(guards) = &c.guards {
        let list = if guards.is_empty() {
            "none".to_string()
        } else {
            guards.join(",")
        };
        init.extend(["--guards".into(), list]);
    }
    let args: Vec<&str> = init.iter().map(String::as_str).collect();
    let (code, _, stderr) = referee(&repo, &args, "");
    if code != 0 {
        return Err(format!("init exited {code}: {}", stderr.trim()));
    }
    // Reviews and responses live outside the work tree: anything inside it
    // would be part of the round's patch.
    let side = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut last_reason = String::new();
    for (i, round) in lp.rounds.iter().enumerate() {
        let n = i + 1;
        apply_edits(&repo, round).map_err(|e| format!("round {n}: {e}"))?;
        let review = fill(&round.review, &repo, name).map_err(|e| format!("round {n}: {e}"))?;
        let key = format!("{name}-round-{n}");
        let mut args: Vec<String> = [
            "record",
            "--loop",
            name,
            "--findings",
            "-",
            "--json",
            "--idempotency-key",
            &key,
        ]
        .map(String::from)
        .to_vec();
        if let Some(format) = round.format.as_ref().or(lp.format.as_ref()) {
            args.extend(["--format".into(), format.clone()]);
        }
        if let Some(raw) = &round.responses {
            let body = fill(raw, &repo, name).map_err(|e| format!("round {n}: {e}"))?;
            let path = side.path().join(format!("responses-{n}.json"));
            std::fs::write(&path, body).map_err(|e| e.to_string())?;
            args.extend(["--responses".into(), path.to_string_lossy().into_owned()]);
        }
        if let Some(usd) = round.cost_usd {
            args.extend(["--cost-usd".into(), usd.to_string()]);
        }
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        for (k, raw) in round.refused.iter().enumerate() {
            let output = fill(raw, &repo, name).map_err(|e| format!("round {n}: {e}"))?;
            let (code, stdout, _) = referee(&repo, &argv, &output);
            if code != 1 {
                return Err(format!(
                    "round {n}: refused output {} was taken as a review (exit {code}): {}",
                    k + 1,
                    stdout.trim()
                ));
            }
            let rows = round_rows(&repo, name)?;
            if rows != n - 1 {
                return Err(format!(
                    "round {n}: refused output {} left the ledger with {rows} rounds",
                    k + 1
                ));
            }
        }
        let (code, stdout, stderr) = referee(&repo, &argv, &review);
        if code == 1 || code == 2 {
            return Err(format!(
                "round {n}: record exited {code}: {}",
                stderr.trim()
            ));
        }
        let json: Value = serde_json::from_str(&stdout)
            .map_err(|e| format!("round {n}: record --json: {e}: {stdout}"))?;
        if json["already_recorded"] == true {
            return Err(format!(
                "round {n}: answered as a retry of an earlier round"
            ));
        }
        if json["round"].as_u64() != Some(n as u64) {
            return Err(format!("round {n}: recorded as round {}", json["round"]));
        }
        if code == 10 {
            last_reason = json["reason"].as_str().unwrap_or("").to_string();
            continue;
        }
        let stop = Stop {
            rule: json["rule"].as_str().unwrap_or("").to_string(),
            round: n,
            exit: code,
            reason: format!(
                "{} [round {n}: {}]",
                json["reason"].as_str().unwrap_or(""),
                round.note
            ),
        };
        // A stopped loop takes no more rounds: another review of the tree
        // it stopped on is answered with the stop, and nothing after the
        // stop was recorded.
        let (after, again, _) = referee(
            &repo,
            &["record", "--loop", name, "--findings", "-", "--json"],
            r#"{"findings": []}"#,
        );
        let again: Value = serde_json::from_str(&again).unwrap_or_default();
        let answered = again["already_done"] == true || again["already_recorded"] == true;
        if after != code || !answered || again["round"].as_u64() != Some(n as u64) {
            return Err(format!(
                "round {n}: stopped on `{}` (exit {code}), yet a further record exited {after}: {again}",
                stop.rule
            ));
        }
        let rows = round_rows(&repo, name)?;
        if rows != n {
            return Err(format!(
                "stopped at round {n} but the ledger has {rows} rounds"
            ));
        }
        keep(repo);
        return Ok(Played {
            stop: Some(stop),
            rounds: n,
            last_reason,
        });
    }
    keep(repo);
    Ok(Played {
        stop: None,
        rounds: lp.rounds.len(),
        last_reason,
    })
}

/// With `REFEREE_CORPUS_KEEP` set, leaves the loop's repository on disk and
/// names it, to look at with `git diff refs/referee/...` and `referee ledger show`.
fn keep(repo: Repo) {
    if std::env::var_os("REFEREE_CORPUS_KEEP").is_some() {
        eprintln!("kept {}", repo.keep().display());
    }
}

/// What a loop cost in agent calls (a writer and a reviewer call per round).
#[derive(Default)]
struct Economy {
    loops: usize,
    referee: usize,
    cap_only: usize,
    ideal: usize,
    /// Loops the binary had not stopped when the script ran out; counted at
    /// their cap.
    unstopped: usize,
    /// Loops the binary ended as done (exit 0): calls saved by shipping
    /// what a person should have seen.
    false_done: Vec<String>,
    /// Loops a cap-only runner would have ended on a review without a
    /// must-fix finding.
    cap_only_clean: Vec<String>,
}

/// When a cap-only runner ends `lp`: at the first review of the script with
/// no finding at or above the floor (read with `referee parse`), else at the
/// cap. The second value says it ended on such a review.
fn cap_only_rounds(lp: &Loop, parser: &Repo) -> (usize, bool) {
    const LADDER: [&str; 4] = ["nit", "should", "bug", "block"];
    let cap = lp.contract.max_rounds.unwrap_or(3);
    let floor = lp.contract.floor.as_deref().unwrap_or("bug");
    let floor = LADDER.iter().position(|l| *l == floor).unwrap_or(2);
    for (i, round) in lp.rounds.iter().enumerate() {
        let format = round
            .format
            .as_ref()
            .or(lp.format.as_ref())
            .map_or("auto", String::as_str);
        let review = round.review.replace("{repo}", "/repo");
        let (code, stdout, _) = referee(parser, &["parse", "--format", format, "-"], &review);
        let Ok(json) = serde_json::from_str::<Value>(&stdout) else {
            continue;
        };
        let must_fix = json["findings"].as_array().into_iter().flatten().any(|f| {
            f["severity"]
                .as_str()
                .and_then(|s| LADDER.iter().position(|l| *l == s))
                .is_some_and(|level| level >= floor)
        });
        if code == 0 && !must_fix {
            return (i + 1, true);
        }
    }
    (cap, false)
}

#[test]
fn corpus_is_well_formed() {
    let loops = load();
    let converging = loops
        .iter()
        .filter(|(_, l)| l.kind == Kind::Converging)
        .count();
    assert!(loops.len() >= 30, "{} loops", loops.len());
    assert!(converging >= 12, "{converging} converging loops");
    assert!(
        loops.len() - converging >= 12,
        "too few non-converging loops"
    );
    const RULES: [&str; 10] = [
        "clean",
        "nit-round",
        "reopened",
        "flip-flop",
        "diff-growth",
        "round-cap",
        "scope",
        "budget",
        "stalled",
        "disputed",
    ];
    for (name, lp) in &loops {
        assert!(
            name.len() <= 64
                && name.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
            "{name}: not a loop name"
        );
        assert!(!lp.description.trim().is_empty(), "{name}: no description");
        assert!(
            RULES.contains(&lp.expect.rule.as_str()),
            "{name}: unknown rule `{}`",
            lp.expect.rule
        );
        assert_eq!(
            lp.rounds.len(),
            lp.expect.round,
            "{name}: the script must end at the expected stop"
        );
        let done = matches!(lp.expect.rule.as_str(), "clean" | "nit-round");
        assert_eq!(
            done,
            lp.kind == Kind::Converging,
            "{name}: kind and rule disagree"
        );
        assert_eq!(
            lp.expect.exit,
            if done { 0 } else { 20 },
            "{name}: exit code"
        );
        let cap = lp.contract.max_rounds.unwrap_or(3);
        assert!(lp.expect.round <= cap, "{name}: stops after its cap");
        if lp.kind == Kind::NonConverging {
            assert!((5..=8).contains(&cap), "{name}: cap {cap} is not realistic");
        }
    }
}

#[test]
fn corpus_loops_stop_where_the_spec_says() {
    let loops = load();
    let mut failures = Vec::new();
    let mut spent = Economy::default();
    let mut converging = 0;
    let mut early = Vec::new();
    let mut count = 0;
    let only = std::env::var("REFEREE_CORPUS_ONLY").ok();
    let parser = Repo::new();
    for (name, lp) in &loops {
        if only.as_ref().is_some_and(|o| !name.contains(o.as_str())) {
            continue;
        }
        count += 1;
        let cap = lp.contract.max_rounds.unwrap_or(3);
        let want = &lp.expect;
        let expected = format!(
            "`{}` at round {} (exit {})",
            want.rule, want.round, want.exit
        );
        let played = match play(name, lp) {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!("{name}: expected {expected}; error: {e}"));
                if lp.kind == Kind::Converging {
                    converging += 1;
                    early.push(format!("{name} (not played)"));
                }
                if lp.kind == Kind::NonConverging {
                    let (rounds, clean) = cap_only_rounds(lp, &parser);
                    if clean {
                        spent.cap_only_clean.push(name.clone());
                    }
                    spent.loops += 1;
                    spent.ideal += 2 * want.round;
                    spent.cap_only += 2 * rounds;
                    spent.referee += 2 * cap;
                    spent.unstopped += 1;
                }
                continue;
            }
        };
        let got = match &played.stop {
            Some(s) => format!(
                "`{}` at round {} (exit {}): {}",
                s.rule, s.round, s.exit, s.reason
            ),
            None => format!(
                "continue after round {}: {}",
                played.rounds, played.last_reason
            ),
        };
        let agrees = played
            .stop
            .as_ref()
            .is_some_and(|s| s.rule == want.rule && s.round == want.round && s.exit == want.exit);
        if !agrees {
            failures.push(format!("{name}: expected {expected}; got {got}"));
        }
        match lp.kind {
            Kind::NonConverging => {
                let (rounds, clean) = cap_only_rounds(lp, &parser);
                if clean {
                    spent.cap_only_clean.push(name.clone());
                }
                spent.loops += 1;
                spent.ideal += 2 * want.round;
                spent.cap_only += 2 * rounds;
                if played.stop.as_ref().is_some_and(|s| s.exit == 0) {
                    spent.false_done.push(name.clone());
                }
                spent.referee += 2 * match &played.stop {
                    Some(s) => s.round,
                    None => {
                        spent.unstopped += 1;
                        cap
                    }
                };
            }
            Kind::Converging => {
                converging += 1;
                let escalated_or_early = played
                    .stop
                    .as_ref()
                    .is_some_and(|s| s.round < want.round || s.exit == 20);
                if escalated_or_early {
                    early.push(name.clone());
                }
            }
        }
    }
    let report = economy_table(&spent, converging, &early);
    eprintln!("{report}");
    if let Ok(path) = std::env::var("REFEREE_CORPUS_REPORT") {
        std::fs::write(&path, &report).expect("write the corpus report");
    }
    assert!(
        failures.is_empty(),
        "{} of {} loops disagree with their expected stop:\n{}",
        failures.len(),
        count,
        failures.join("\n")
    );
}

fn economy_table(spent: &Economy, converging: usize, early: &[String]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## Corpus economy\n\nAgent calls (a writer and a reviewer call per round) over the {} non-converging loops:\n",
        spent.loops
    );
    let _ = writeln!(out, "| loop runner | agent calls |");
    let _ = writeln!(out, "|---|---:|");
    let _ = writeln!(out, "| referee (this build) | {} |", spent.referee);
    let _ = writeln!(
        out,
        "| cap only (runs to `max_rounds` unless a review has no must-fix finding) | {} |",
        spent.cap_only
    );
    let _ = writeln!(out, "| ideal (the expected stops) | {} |", spent.ideal);
    if spent.unstopped > 0 {
        let _ = writeln!(
            out,
            "\n{} non-converging loop(s) had not stopped when their script ended, or could not be played; counted at their cap.",
            spent.unstopped
        );
    }
    if !spent.cap_only_clean.is_empty() {
        let _ = writeln!(
            out,
            "\nA cap-only runner ends {} of them early on a review without must-fix findings, shipping what a person should have seen: {}",
            spent.cap_only_clean.len(),
            spent.cap_only_clean.join(", ")
        );
    }
    if !spent.false_done.is_empty() {
        let _ = writeln!(
            out,
            "\nNon-converging loops this build ended as done (exit 0), counted at the round it stopped: {} ({})",
            spent.false_done.len(),
            spent.false_done.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "\nEarly or false stops (or loops not played) among the {converging} converging loops: {}{}",
        early.len(),
        if early.is_empty() {
            String::new()
        } else {
            format!(" ({})", early.join(", "))
        }
    );
    out
}
