//! `referee parse` and the findings parsers on real samples
//! (tests/fixtures/findings/, see its README for where each came from).
//! Parsed findings are compared whole, as insta snapshots.

use predicates::str::contains;
use referee::findings::{self, Format, Known, match_findings};

use crate::common::{Repo, text};

/// The repository root each fixture was produced in, so that absolute
/// paths come out repo-relative as they would have there.
const RUFF_ROOT: &str = "/tmp/fx/py";
const TINYCALC_ROOT: &str = "/tmp/fx/rs";
const REPO_ROOT: &str = "/work/repo";

fn fixture_path(rel: &str) -> String {
    format!(
        "{}/tests/fixtures/findings/{rel}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn fixture(rel: &str) -> Vec<u8> {
    std::fs::read(fixture_path(rel)).expect("fixture")
}

fn parsed(rel: &str, format: Format, root: &str) -> findings::Parsed {
    findings::parse(&fixture(rel), format, root).unwrap_or_else(|err| panic!("{rel}: {err}"))
}

fn render(rel: &str, root: &str) -> String {
    serde_json::to_string_pretty(&parsed(rel, Format::Auto, root)).expect("json")
}

fn error(rel: &str, format: Format) -> String {
    findings::parse(&fixture(rel), format, REPO_ROOT)
        .expect_err(rel)
        .to_string()
}

#[test]
fn native_review() {
    insta::assert_snapshot!(render("native/review.json", REPO_ROOT));
}

#[test]
fn native_clean_is_a_clean_round() {
    let clean = parsed("native/clean.json", Format::Auto, REPO_ROOT);
    assert_eq!(clean.source_format, Format::Native);
    assert!(clean.findings.is_empty());
}

#[test]
fn claude_result_with_structured_output() {
    insta::assert_snapshot!(render("native/claude-result.json", TINYCALC_ROOT));
}

#[test]
fn claude_result_without_structured_output_is_no_review() {
    let err = error("native/claude-no-structured-output.json", Format::Auto);
    assert!(err.contains("no structured review"), "{err}");
}

#[test]
fn tagged_review() {
    insta::assert_snapshot!(render("tagged/review.txt", REPO_ROOT));
}

#[test]
fn tagged_clean_needs_proof() {
    assert!(
        parsed("tagged/clean.txt", Format::Auto, REPO_ROOT)
            .findings
            .is_empty()
    );
    let err = error("tagged/untagged.txt", Format::Auto);
    assert!(err.starts_with("tagged text: no tagged finding"), "{err}");
}

#[test]
fn tagged_markdown_review_from_an_llm() {
    // Numbered findings, bold tags wrapping the place, a backticked place,
    // a range, bodies across blank lines that mention `[bug]`, prose.
    insta::assert_snapshot!(render("tagged/llm-markdown.txt", REPO_ROOT));
}

#[test]
fn sarif_from_ruff() {
    insta::assert_snapshot!(render("sarif/ruff.sarif", RUFF_ROOT));
}

#[test]
fn sarif_from_clippy() {
    insta::assert_snapshot!(render("sarif/clippy.sarif", TINYCALC_ROOT));
}

#[test]
fn sarif_runs_fingerprints_and_rule_levels() {
    insta::assert_snapshot!(render("sarif/multi-run-fingerprints.sarif", REPO_ROOT));
}

#[test]
fn junit_from_pytest() {
    insta::assert_snapshot!(render("junit/pytest.xml", RUFF_ROOT));
}

#[test]
fn junit_from_pytest_xunit1_has_files() {
    insta::assert_snapshot!(render("junit/pytest-xunit1.xml", RUFF_ROOT));
}

#[test]
fn junit_from_nextest() {
    insta::assert_snapshot!(render("junit/nextest.xml", TINYCALC_ROOT));
}

#[test]
fn junit_from_jest() {
    insta::assert_snapshot!(render("junit/jest.xml", "/tmp/fx/js"));
}

#[test]
fn junit_all_passing_is_a_clean_round() {
    let clean = parsed("junit/pytest-passing.xml", Format::Auto, RUFF_ROOT);
    assert_eq!(clean.source_format, Format::Junit);
    assert!(clean.findings.is_empty());
}

/// Where the Checkstyle fixtures were made (README.md there).
const CHECKSTYLE_ROOT: &str = "/tmp/cs/proj";

#[test]
fn checkstyle_from_shellcheck() {
    insta::assert_snapshot!(render("checkstyle/shellcheck.xml", CHECKSTYLE_ROOT));
}

#[test]
fn checkstyle_from_jshint() {
    insta::assert_snapshot!(render("checkstyle/jshint.xml", CHECKSTYLE_ROOT));
}

#[test]
fn checkstyle_from_eslint_with_absolute_paths() {
    insta::assert_snapshot!(render("checkstyle/eslint.xml", CHECKSTYLE_ROOT));
}

#[test]
fn checkstyle_of_checked_files_without_errors_is_a_clean_round() {
    for rel in [
        "checkstyle/shellcheck-clean.xml",
        "checkstyle/eslint-clean.xml",
    ] {
        let clean = parsed(rel, Format::Auto, CHECKSTYLE_ROOT);
        assert_eq!(clean.source_format, Format::Checkstyle, "{rel}");
        assert!(clean.findings.is_empty(), "{rel}");
    }
    // Read as JUnit, a Checkstyle report is refused by its root, not read
    // as a clean round.
    let err = error("checkstyle/jshint.xml", Format::Junit);
    assert!(err.contains("root element is `<checkstyle>`"), "{err}");
}

/// Where the ruff fixtures of rdjson and Code Quality were made.
const RD_ROOT: &str = "/tmp/rd/proj";

#[test]
fn rdjson_from_ruff() {
    insta::assert_snapshot!(render("rdjson/ruff.json", RD_ROOT));
}

#[test]
fn rdjson_from_biome() {
    insta::assert_snapshot!(render("rdjson/biome.json", CHECKSTYLE_ROOT));
}

#[test]
fn rdjsonl_reads_as_its_rdjson() {
    for (name, root) in [("ruff", RD_ROOT), ("biome", CHECKSTYLE_ROOT)] {
        let whole = parsed(&format!("rdjson/{name}.json"), Format::Auto, root);
        let lines = parsed(&format!("rdjson/{name}.jsonl"), Format::Auto, root);
        assert_eq!(lines.source_format, Format::Rdjson, "{name}");
        assert_eq!(lines.findings, whole.findings, "{name}");
    }
    let clean = parsed("rdjson/ruff-clean.json", Format::Auto, RD_ROOT);
    assert_eq!(clean.source_format, Format::Rdjson);
    assert!(clean.findings.is_empty());
}

#[test]
fn codequality_from_ruff() {
    insta::assert_snapshot!(render("codequality/ruff.json", RD_ROOT));
}

#[test]
fn codequality_from_pylint() {
    insta::assert_snapshot!(render("codequality/pylint.json", RD_ROOT));
}

#[test]
fn codequality_from_eslint_and_biome() {
    insta::assert_snapshot!(render("codequality/eslint.json", CHECKSTYLE_ROOT));
    let biome = parsed("codequality/biome.json", Format::Auto, CHECKSTYLE_ROOT);
    assert_eq!(biome.source_format, Format::Codequality);
    assert_eq!(biome.findings.len(), 1);
    assert_eq!(biome.findings[0].file.as_deref(), Some("lib/util.js"));
    assert_eq!(biome.findings[0].severity, findings::Severity::Bug);
}

#[test]
fn an_empty_codequality_report_is_clean_when_named() {
    let clean = parsed("codequality/ruff-clean.json", Format::Codequality, RD_ROOT);
    assert!(clean.findings.is_empty());
}

/// A linter's own output is refused naming the tool and the flag that
/// makes it write a format referee reads; none is taken for a clean round.
#[test]
fn a_linters_own_output_is_named_with_the_flag_that_makes_it_readable() {
    for (rel, tool, flag) in [
        (
            "foreign/eslint.json",
            "ESLint's JSON",
            "eslint -f @microsoft/eslint-formatter-sarif",
        ),
        (
            "foreign/ruff.json",
            "ruff's JSON",
            "ruff check --output-format sarif",
        ),
        (
            "foreign/pylint.json",
            "pylint's JSON",
            "pylint_gitlab.GitlabCodeClimateReporter",
        ),
        (
            "foreign/node-test.tap",
            "TAP (Test Anything Protocol)",
            "node --test --test-reporter=junit",
        ),
    ] {
        let err = findings::parse(&fixture(rel), Format::Auto, REPO_ROOT).unwrap_err();
        assert!(
            err.to_string()
                .ends_with(&format!(": this is {tool}, which referee does not read")),
            "{rel}: {err}"
        );
        assert!(
            err.hint().unwrap().contains(flag),
            "{rel}: {:?}",
            err.hint()
        );
    }
}

/// What the real CLIs printed as reviewers against the loopback model
/// server (tests/mock/try_claude.sh, try_gemini.sh): Claude Code's
/// `--output-format json` result with `structured_output`, read as native
/// by `parse` and by the preset; Gemini CLI's `--output-format json`
/// object, whose `response` (a fenced JSON block) the preset reads.
#[test]
fn the_real_claude_and_gemini_results_read_as_their_presets_read_them() {
    use referee::agent::preset::findings_of;
    use referee::contract::Preset;
    let claude = parsed("native/claude-result-real.json", Format::Auto, REPO_ROOT);
    assert_eq!(claude.source_format, Format::Native);
    let by_preset = findings_of(
        Preset::Claude,
        &fixture("native/claude-result-real.json"),
        REPO_ROOT,
    )
    .unwrap();
    // The preset takes the reply from the object's `response`.
    let printed: serde_json::Value =
        serde_json::from_slice(&fixture("gemini/reviewer-result-real.json")).unwrap();
    let response = printed["response"].as_str().unwrap();
    assert!(response.starts_with("```json\n"), "{response}");
    let gemini = findings_of(Preset::Gemini, response.as_bytes(), REPO_ROOT).unwrap();
    for found in [&claude, &by_preset, &gemini] {
        assert_eq!(found.findings.len(), 1);
        assert_eq!(
            found.findings[0].title,
            "hello.txt is not referenced anywhere"
        );
        assert_eq!(found.findings[0].file.as_deref(), Some("hello.txt"));
        assert_eq!(found.findings[0].severity, findings::Severity::Should);
    }
}

#[test]
fn codex_review_json() {
    insta::assert_snapshot!(render("codex/review.json", TINYCALC_ROOT));
}

#[test]
fn codex_shapes_agree() {
    // The review JSON, the rendered text and the JSON event stream of the
    // same review give the same findings (the text has no confidence or
    // overall verdict, which findings do not carry anyway).
    let json = parsed("codex/review.json", Format::Auto, TINYCALC_ROOT);
    let text = parsed("codex/review.txt", Format::Auto, TINYCALC_ROOT);
    let stream = parsed("codex/exec-json-review.jsonl", Format::Auto, TINYCALC_ROOT);
    assert_eq!(text.source_format, Format::Codex);
    assert_eq!(stream.source_format, Format::Codex);
    assert_eq!(json.findings, text.findings);
    assert_eq!(json.findings, stream.findings);
}

#[test]
fn codex_stream_with_native_output_schema() {
    insta::assert_snapshot!(render("codex/exec-json-output-schema.jsonl", TINYCALC_ROOT));
}

#[test]
fn codex_clean_review_and_failed_stream() {
    let clean = parsed("codex/review-clean.json", Format::Auto, TINYCALC_ROOT);
    assert_eq!(clean.source_format, Format::Codex);
    assert!(clean.findings.is_empty());
    let err = error("codex/exec-json-failed.jsonl", Format::Auto);
    assert!(
        err.contains("no completed `agent_message`")
            && err.contains("stream disconnected before completion"),
        "{err}"
    );
}

#[test]
fn forced_formats_refuse_other_formats() {
    let err = error("junit/pytest.xml", Format::Sarif);
    assert!(
        err.starts_with("sarif: line 1 column 1: expected a json object `{...}`, found `<`"),
        "{err}"
    );
    let err = error("sarif/ruff.sarif", Format::Junit);
    assert!(err.starts_with("junit xml: "), "{err}");
    let err = error("native/review.json", Format::Tagged);
    assert!(err.starts_with("tagged text: no tagged finding"), "{err}");
}

#[test]
fn identity_survives_rewording_moving_and_reformatting() {
    let round1 = parsed("native/claude-result.json", Format::Auto, TINYCALC_ROOT);
    let known: Vec<Known> = round1.findings.iter().map(Known::from).collect();
    // Round 2: the same two findings, one reworded, one moved 30 lines,
    // reported as tagged text instead of native JSON, plus a new one in the
    // same file.
    let round2 = findings::parse(
        b"[bug] src/lib.rs:2: add() subtracts instead of adding\n\
          [should] src/lib.rs:36: parse_port panics on bad input\n\
          [nit] src/lib.rs:9: lint_bait takes &Vec instead of a slice\n",
        Format::Auto,
        TINYCALC_ROOT,
    )
    .expect("round 2");
    let matched: Vec<Option<String>> = match_findings(&round2.findings, &known)
        .into_iter()
        .map(|m| m.known.map(|i| known[i].id.to_string()))
        .collect();
    assert_eq!(
        matched,
        vec![
            Some(round1.findings[0].id.clone()),
            Some(round1.findings[1].id.clone()),
            None,
        ]
    );
    // Moving and reformatting alone keeps even the derived id.
    assert_eq!(round2.findings[1].id, round1.findings[1].id);
}

// ---- the command ----------------------------------------------------------

#[test]
fn parse_prints_native_json_with_repo_relative_paths() {
    let repo = Repo::new();
    let root = repo.path().canonicalize().expect("root");
    repo.write(
        "out.json",
        &format!(
            r#"{{"findings":[{{"severity":"P1","title":"boom","file":"{}/src/a.rs","line":3}}]}}"#,
            root.display()
        ),
    );
    let out = repo
        .referee()
        .args(["parse", "out.json"])
        .assert()
        .success();
    let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).expect("json");
    assert_eq!(json["source_format"], "native");
    assert_eq!(json["findings"][0]["severity"], "bug");
    assert_eq!(json["findings"][0]["file"], "src/a.rs");
    assert_eq!(json["findings"][0]["undoes"], serde_json::Value::Null);
    assert!(
        json["findings"][0]["id"]
            .as_str()
            .expect("id")
            .starts_with("F-")
    );
    assert_eq!(json["resolved"], serde_json::json!([]));
}

#[test]
fn parse_reads_stdin_and_honours_format() {
    let repo = Repo::new();
    let out = repo
        .referee()
        .args(["parse", "--format", "tagged", "-"])
        .write_stdin("[block] src/x.rs:1: leak\n")
        .assert()
        .success();
    let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).expect("json");
    assert_eq!(json["source_format"], "tagged");
    assert_eq!(json["findings"][0]["severity"], "block");
    repo.referee()
        .args(["parse", "--format", "native", "-"])
        .write_stdin("[block] src/x.rs:1: leak\n")
        .assert()
        .code(1)
        .stderr(contains("error: findings `stdin`: native json: line 1 column 1: expected a json object `{...}`, found `[`"));
}

#[test]
fn parse_fixture_from_the_docs() {
    let repo = Repo::new();
    let out = repo
        .referee()
        .args(["parse", &fixture_path("junit/nextest.xml")])
        .assert()
        .success();
    let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).expect("json");
    assert_eq!(json["source_format"], "junit");
    assert_eq!(
        json["findings"][0]["id"],
        "tinycalc::tests::adds_small_numbers"
    );
}

/// Each class of malformed input exits 1 with a message naming the problem.
#[test]
fn malformed_inputs_exit_1_with_a_precise_message() {
    let cases: &[(&str, &[u8], &[&str], &str)] = &[
        ("truncated.json", b"{\"findings\": [\n  {\"severity\": \"bug\",\n", &[], "native json: line 3 column 0: EOF while parsing"),
        ("types.json", b"{\"findings\": [{\"severity\": \"bug\", \"title\": \"x\", \"line\": \"3\"}]}", &[], "native json: line 1 column 59: invalid type: string \"3\", expected u64"),
        ("nokey.json", b"{\"resolved\": []}", &[], "native json: missing key `findings`"),
        ("severity.json", b"{\"findings\": [{\"severity\": \"urgent\", \"title\": \"x\"}]}", &[], "native json: findings[0].severity: unknown severity `urgent`; accepted: nit, style"),
        ("noruns.sarif", b"{\"version\": \"2.1.0\", \"$schema\": \"x\"}", &["--format", "sarif"], "sarif: top level: missing key `runs`"),
        ("level.sarif", b"{\"runs\": [{\"results\": [{\"level\": \"fatal\", \"message\": {\"text\": \"x\"}}]}]}", &[], "sarif: runs[0].results[0].level: unknown level `fatal`"),
        ("bad.xml", b"<testsuites>\n<testsuite name=\"a\">\n<testcase name=\"t\"></testsuite>\n</testsuites>", &[], "junit xml: line 3 column"),
        ("open.xml", b"<testsuites><testsuite name=\"a\">", &[], "junit xml: line 1 column 33: unexpected end of input: `<testsuite>` is not closed"),
        ("html.xml", b"<html><body>500</body></html>", &[], "junit xml: line 1 column 1: root element is `<html>`"),
        ("binary.bin", b"\x00\x01\x02\x7fELF\x00garbage", &[], "tagged text: no tagged finding"),
        ("empty.txt", b"", &[], "input is empty: a clean round must be proven"),
        ("latin1.txt", b"[bug] caf\xe9 is broken", &[], "input is not utf-8: invalid byte at offset 9"),
        ("stream.jsonl", b"{\"type\":\"thread.started\"}\n{\"type\":\"item.completed\",\"item\":{\n", &[], "codex review: line 2 column"),
        ("codex.json", b"{\"findings\": [{\"title\": \"x\", \"priority\": 7, \"code_location\": null}]}", &[], "codex review: findings[0].priority: `7` is not a priority"),
        // No silent drops (SPEC §4.1): what cannot be read is named.
        ("codex.txt", b"Full review comments:\n\n- [P7] Bad \xe2\x80\x94 /r/a.rs:1-2\n  body\n", &[], "codex review: line 3: unknown severity `P7`"),
        ("codex-mixed.txt", b"- [P1] Bad \xe2\x80\x94 /r/a.rs:1-2\n1. [bgu] src/b.rs:3: x\n", &[], "codex review: line 2: unknown severity `bgu`"),
        ("kind.sarif", b"{\"runs\": [{\"results\": [{\"kind\": \"failed\", \"message\": {\"text\": \"x\"}}]}]}", &[], "sarif: runs[0].results[0].kind: unknown kind `failed`"),
        ("status.sarif", b"{\"runs\": [{\"results\": [{\"suppressions\": [{\"status\": \"pending\"}], \"message\": {\"text\": \"x\"}}]}]}", &[], "sarif: runs[0].results[0].suppressions[0].status: unknown status `pending`"),
        ("noresults.sarif", b"{\"runs\": [{\"tool\": {\"driver\": {\"name\": \"t\"}}}]}", &[], "sarif: runs[0]: no `results`"),
        ("suite.xml", b"<testsuite name=\"a\">\n<error message=\"setup failed\"/>\n</testsuite>", &[], "junit xml: line 2 column 1: `<error>` outside a `<testcase>`"),
        ("counts.xml", b"<testsuite name=\"a\" failures=\"2\">\n<testcase name=\"t\"><failure/></testcase>\n</testsuite>", &[], "junit xml: line 1 column 1: the suite counts 2 failures and errors but holds 1"),
        ("stray.json", b"{\"findings\": [], \"issues\": [{\"severity\": \"bug\", \"title\": \"x\"}]}", &[], "native json: `issues`: holds finding-shaped objects"),
    ];
    let repo = Repo::new();
    for (name, bytes, flags, want) in cases {
        std::fs::write(repo.join(name), bytes).expect("write");
        let out = repo
            .referee()
            .arg("parse")
            .args(*flags)
            .arg(name)
            .assert()
            .code(1);
        let stderr = text(&out.get_output().stderr);
        assert!(
            stderr.starts_with(&format!("error: findings `{name}`: {want}")),
            "{name}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
    }
}

/// The false clean once seen: the numbered findings were skipped, the `-`
/// nit made the text parse, and the round ended clean.
#[test]
fn parse_reads_numbered_findings() {
    let repo = Repo::new();
    let out = repo
        .referee()
        .args(["parse", &fixture_path("tagged/numbered.txt")])
        .assert()
        .success();
    let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).expect("json");
    let got: Vec<(&str, &str, u64)> = json["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["severity"].as_str().expect("severity"),
                f["file"].as_str().expect("file"),
                f["line"].as_u64().expect("line"),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("bug", "src/a.rs", 3),
            ("bug", "src/b.rs", 10),
            ("nit", "src/c.rs", 1)
        ]
    );
}

#[test]
fn parse_reads_bold_tags() {
    let repo = Repo::new();
    let out = repo
        .referee()
        .args(["parse", "-"])
        .write_stdin(
            "Review:\n\
             - **[P1]** src/a.rs:3: the lock is never released\n\
             **[bug] src/b.rs:4**: the retry loop never ends\n\
             1. **[nit]**: `src/c.rs:5`: spacing\n",
        )
        .assert()
        .success();
    let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).expect("json");
    assert_eq!(json["source_format"], "tagged");
    let got: Vec<(&str, &str, u64, &str)> = json["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["severity"].as_str().expect("severity"),
                f["file"].as_str().expect("file"),
                f["line"].as_u64().expect("line"),
                f["title"].as_str().expect("title"),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("bug", "src/a.rs", 3, "the lock is never released"),
            ("bug", "src/b.rs", 4, "the retry loop never ends"),
            ("nit", "src/c.rs", 5, "spacing"),
        ]
    );
}

/// A line that holds a tag but cannot be read exits 1, names the line and
/// records nothing; it is never skipped.
#[test]
fn parse_refuses_a_tagged_line_it_cannot_read() {
    let cases: &[(&str, &str)] = &[
        (
            "[nit] src/a.rs:1: spacing\n1. [bgu] src/b.rs:2: the index can overflow\n",
            "error: findings `stdin`: tagged text: line 2: unknown severity `bgu`; accepted: nit,",
        ),
        (
            "[nit] src/a.rs:1: spacing\n\nsrc/b.rs:2 [bug] the index can overflow\n",
            "error: findings `stdin`: tagged text: line 3: `[bug]` is not at the start of the line",
        ),
        (
            "[nit] src/a.rs:1: spacing\n- **[bug]**\n",
            "error: findings `stdin`: tagged text: line 2: `[bug]` has no title",
        ),
        (
            "| severity | place |\n|---|---|\n| [High] | src/b.rs:2 |\n",
            "error: findings `stdin`: tagged text: line 3: `[High]` is not at the start of the line",
        ),
    ];
    let repo = Repo::new();
    for (input, want) in cases {
        let out = repo
            .referee()
            .args(["parse", "-"])
            .write_stdin(*input)
            .assert()
            .code(1);
        let stderr = text(&out.get_output().stderr);
        assert!(stderr.starts_with(want), "{input:?}: {stderr}");
        assert!(stderr.contains("\nhint: "), "{input:?}: {stderr}");
        assert!(out.get_output().stdout.is_empty(), "{input:?}");
    }
}

#[test]
fn missing_file_is_an_error_naming_it() {
    let repo = Repo::new();
    repo.referee()
        .args(["parse", "nope.json"])
        .assert()
        .code(1)
        .stderr(contains(
            "error: findings `nope.json`: cannot open the file",
        ));
}

// ---- the schema -----------------------------------------------------------

fn schema() -> serde_json::Value {
    let path = format!(
        "{}/contracts/findings.schema.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_slice(&std::fs::read(path).expect("schema")).expect("schema is json")
}

/// OpenAI strict structured outputs: closed objects, every property required.
#[test]
fn schema_is_strict_mode_compatible() {
    let schema = schema();
    for object in [&schema, &schema["$defs"]["finding"]] {
        assert_eq!(object["additionalProperties"], false);
        let mut properties: Vec<&str> = object["properties"]
            .as_object()
            .expect("properties")
            .keys()
            .map(String::as_str)
            .collect();
        let mut required: Vec<&str> = object["required"]
            .as_array()
            .expect("required")
            .iter()
            .map(|key| key.as_str().expect("key"))
            .collect();
        properties.sort_unstable();
        required.sort_unstable();
        assert_eq!(properties, required);
    }
}

/// Whatever the schema allows, the native parser reads: every severity in
/// its enum, and every nullable field as null or as a value.
#[test]
fn native_parser_accepts_what_the_schema_allows() {
    let schema = schema();
    let severities = schema["$defs"]["finding"]["properties"]["severity"]["enum"]
        .as_array()
        .expect("enum")
        .clone();
    for severity in severities {
        let nulls = serde_json::json!({"findings": [{"id": null, "severity": severity, "title": "t",
            "file": null, "line": null, "body": null, "undoes": null}], "resolved": []});
        let values = serde_json::json!({"findings": [{"id": "F9", "severity": severity, "title": "t",
            "file": "src/a.rs", "line": 3, "body": "b", "undoes": "F1"}], "resolved": ["F1"]});
        for document in [nulls, values] {
            let bytes = serde_json::to_vec(&document).expect("json");
            let parsed =
                findings::parse(&bytes, Format::Native, REPO_ROOT).expect("schema-valid input");
            assert_eq!(
                parsed.findings[0].severity.as_str(),
                severity.as_str().expect("str")
            );
        }
    }
}

#[test]
fn a_linters_own_json_gets_a_hint_to_ask_for_sarif() {
    let ruff = r#"[{"cell":null,"code":"F401","filename":"/r/a.py","location":{"column":8,"row":1},"message":"`os` imported but unused"}]"#;
    let out = assert_cmd::Command::cargo_bin("referee")
        .unwrap()
        .args(["parse", "-"])
        .write_stdin(ruff)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ruff check --output-format sarif"), "{err}");
}

// ---- JUnit as real pipelines write it (issue 30) --------------------------

/// gotestsum's report: its root total counts the failing `TestMain` of a
/// package twice (14 against 13 `<failure>` elements); each package's
/// `<testsuite>` adds up. Its `message` is always `Failed`: titles say
/// what the text says.
#[test]
fn junit_from_gotestsum() {
    insta::assert_snapshot!(render("junit/gotestsum.xml", REPO_ROOT));
}

/// nextest writes no `message`: the title is the failure text's first line
/// (`thread '…' panicked at tests/basic.rs:19:5:`), not its `type`
/// ("test failure"). Its retries are `<rerunFailure>` and `<flakyFailure>`.
#[test]
fn junit_from_nextest_with_retries() {
    insta::assert_snapshot!(render("junit/nextest-retries.xml", REPO_ROOT));
}

/// A report in which no test ran (pytest collected nothing, a surefire
/// class with no test method) proves nothing: refused, naming the file.
#[test]
fn parse_refuses_a_junit_report_with_no_test_case() {
    let repo = Repo::new();
    for rel in ["junit/pytest-no-tests.xml", "junit/surefire-no-tests.xml"] {
        let path = fixture_path(rel);
        let out = repo
            .referee()
            .args(["parse", "--format", "junit", &path])
            .assert()
            .code(1);
        let stderr = text(&out.get_output().stderr);
        assert!(
            stderr.starts_with(&format!(
                "error: findings `{path}`: junit xml: the report holds no test case"
            )),
            "{rel}: {stderr}"
        );
        assert!(stderr.contains("\nhint: "), "{rel}: {stderr}");
        assert!(out.get_output().stdout.is_empty(), "{rel}");
    }
}

/// `record` refuses it too, and records no round.
#[test]
fn record_refuses_a_junit_report_with_no_test_case() {
    let repo = Repo::with_loop("l", &[]);
    repo.append("src/a.rs", "a");
    let report = String::from_utf8(fixture("junit/pytest-no-tests.xml")).expect("utf-8");
    let out = repo.record(&report).run();
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .starts_with("error: findings `stdin`: nothing was recorded: junit xml: the report holds no test case"),
        "{}",
        out.stderr
    );
    let ledger = repo.run(&["ledger", "show", "--json"]);
    assert!(!ledger.stdout.contains("\"round\""), "{}", ledger.stdout);
}

/// A contract whose tests preset says `empty_report = "clean"` (a suite that
/// may be empty) records such a report as a clean round.
#[test]
fn an_empty_report_is_clean_where_the_contract_says_so() {
    let repo = Repo::new();
    let dir = tempfile::tempdir().unwrap();
    let contract = dir.path().join("l.toml");
    std::fs::write(
        &contract,
        "loop = \"l\"\n[reviewer]\npreset = \"tests\"\ncommand = [\"pytest\", \"--junitxml=r.xml\"]\njunit = \"r.xml\"\nempty_report = \"clean\"\n",
    )
    .unwrap();
    let init = repo.run(&["init", "--from", contract.to_str().unwrap()]);
    assert_eq!(init.code, 0, "{}", init.stderr);
    repo.append("src/a.rs", "a");
    let report = String::from_utf8(fixture("junit/pytest-no-tests.xml")).expect("utf-8");
    let out = repo.record(&report).run();
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("stop: clean"), "{}", out.stdout);
}

/// jest-junit with `addFileAttribute`, and with the suite named by its
/// file: the same test name in two files is two tests, each at the line
/// its stack trace cites by absolute path (`/tmp/fx30/js/src/...:3:44`).
#[test]
fn junit_from_jest_names_the_file() {
    insta::assert_snapshot!(render("junit/jest-two-files.xml", "/tmp/fx30/js"));
    let by_suite = parsed(
        "junit/jest-suite-filepath.xml",
        Format::Junit,
        "/tmp/fx30/js",
    );
    let mut ids: Vec<String> = by_suite.findings.into_iter().map(|f| f.id).collect();
    ids.sort();
    assert_eq!(
        ids,
        [
            "src/cart/total.test.js::total is zero when empty",
            "src/cart/total.test.js::total rounds to cents",
            "src/wallet/total.test.js::total is zero when empty",
        ]
    );
}

/// Surefire's `rerunFailingTestsCount`: three `<flakyFailure>`s and a
/// `<flakyError>`, then a pass.
#[test]
fn junit_from_surefire_flaky() {
    insta::assert_snapshot!(render("junit/surefire-flaky.xml", REPO_ROOT));
}

/// pytest-rerunfailures writes every run of a rerun test as its own
/// `<testcase>`: the test that failed all three runs is one finding.
#[test]
fn junit_from_pytest_rerunfailures() {
    insta::assert_snapshot!(render("junit/pytest-rerunfailures.xml", "/tmp/fx30/py"));
}

/// What the binary makes of each real report: the findings' ids and
/// severities.
#[test]
fn parse_junit_from_real_pipelines() {
    let cases: &[(&str, &[(&str, &str)])] = &[
        (
            "junit/gotestsum.xml",
            &[(
                "gotest.tools/gotestsum/testjson/internal/badmain::TestMain",
                "bug",
            )],
        ),
        (
            "junit/nextest-retries.xml",
            &[
                ("fixture-project::basic::test_failure_assert", "bug"),
                ("fixture-project::basic::test_flaky_mod_4", "nit"),
            ],
        ),
        (
            "junit/surefire-flaky.xml",
            &[("org.acme.FlakyTest::testFlaky", "nit")],
        ),
        (
            "junit/pytest-rerunfailures.xml",
            &[("test_flaky::test_always_fails", "bug")],
        ),
        (
            "junit/jest-two-files.xml",
            &[
                ("src/wallet/total.test.js::total is zero when empty", "bug"),
                ("src/cart/total.test.js::total rounds to cents", "bug"),
                ("src/cart/total.test.js::total is zero when empty", "bug"),
            ],
        ),
    ];
    let repo = Repo::new();
    for (rel, want) in cases {
        let out = repo
            .referee()
            .args(["parse", "--format", "junit", &fixture_path(rel)])
            .assert()
            .success();
        let json: serde_json::Value =
            serde_json::from_slice(&out.get_output().stdout).expect("json");
        let findings = json["findings"].as_array().expect("findings");
        let got: Vec<(&str, &str)> = findings
            .iter()
            .map(|f| {
                (
                    f["id"].as_str().expect("id"),
                    f["severity"].as_str().expect("severity"),
                )
            })
            .take(want.len())
            .collect();
        assert_eq!(&got, want, "{rel}");
        if *rel == "junit/gotestsum.xml" {
            assert_eq!(findings.len(), 13, "{rel}");
        }
    }
}

/// `record` reads the same reports: gotestsum's is a round with 13 failing
/// tests, and a flaky test alone is below the floor.
#[test]
fn record_reads_junit_from_real_pipelines() {
    let gotestsum = Repo::with_loop("l", &[]);
    gotestsum.append("src/a.rs", "a");
    let report = String::from_utf8(fixture("junit/gotestsum.xml")).expect("utf-8");
    gotestsum.record(&report).run().assert(10, "");
    let json = gotestsum.run(&["findings", "--json"]);
    let json: serde_json::Value = serde_json::from_str(&json.stdout).expect("json");
    assert_eq!(json["findings"].as_array().expect("findings").len(), 13);

    let flaky = Repo::with_loop("l", &[]);
    flaky.append("src/a.rs", "a");
    let report = String::from_utf8(fixture("junit/surefire-flaky.xml")).expect("utf-8");
    let out = flaky.record(&report).run();
    out.assert(0, "clean");
    assert!(out.stdout.contains("below floor 1"), "{}", out.stdout);
    let json = flaky.run(&["findings", "--json"]);
    let json: serde_json::Value = serde_json::from_str(&json.stdout).expect("json");
    assert_eq!(json["findings"][0]["severity"], "nit", "{out:?}");
    assert_eq!(json["findings"][0]["id"], "org.acme.FlakyTest::testFlaky");
}

const GITHUB: &str = "github";

/// What a real `gh api` capture reads as: the open findings' ids with
/// their severities, and how many are listed resolved.
fn github(rel: &str) -> (Vec<(String, findings::Severity)>, usize) {
    let read = parsed(&format!("{GITHUB}/{rel}"), Format::Auto, REPO_ROOT);
    assert_eq!(read.source_format, Format::Github, "{rel}");
    let open = read
        .findings
        .iter()
        .map(|f| (f.id.clone(), f.severity))
        .collect();
    (open, read.resolved.len())
}

/// Real pull-request review comments from bots and people (sources in
/// tests/fixtures/findings/github/SOURCES.md). The counts were checked
/// against the files with Python: thread-starting comments, less the
/// outdated ones (`line` null with an `original_line`) and those
/// CodeRabbit marked addressed.
#[test]
fn github_review_comments_from_real_bots_read_with_their_markers() {
    use findings::Severity::{Block, Bug, Nit, Should};
    let (open, resolved) =
        github("mixed-bots-codex-copilot-cursor-coderabbit-pulls-comments-claude-commands.json");
    assert_eq!(resolved, 20, "14 outdated, 6 addressed");
    let want = [
        ("gh-2681177102", Bug),    // Codex P1 badge
        ("gh-2681183757", Bug),    // Copilot, no marker
        ("gh-2681219732", Should), // Cursor **Medium Severity**
        ("gh-2681248588", Should),
        ("gh-2681585822", Bug), // CodeRabbit Potential issue | Major
        ("gh-2681585833", Bug),
        ("gh-2681652148", Nit), // Cursor **Low Severity**
    ];
    let want: Vec<(String, findings::Severity)> =
        want.iter().map(|(id, s)| (id.to_string(), *s)).collect();
    assert_eq!(open, want);

    // Gemini's medium badges, Devin's dots, CodeRabbit in Korean.
    let (open, resolved) =
        github("gemini-devin-coderabbit-pulls-comments-pretty-pixel-agents.json");
    let severities: Vec<_> = open.iter().map(|(_, s)| *s).collect();
    assert_eq!(
        severities,
        [
            Should, Should, Should, Should, Bug, Should, Should, Bug, Block, Bug
        ]
    );
    assert_eq!(resolved, 0);

    // People only: replies are no finding, outdated comments are resolved.
    let (open, resolved) =
        github("human-pulls-comments-outdated-replies-DataflowTemplates-pr3325.json");
    assert_eq!((open.len(), resolved), (5, 5));

    // 90 comments, 4 replies, 32 outdated, 9 addressed.
    let (open, resolved) =
        github("coderabbit-github-code-quality-human-pulls-comments-pretty-jellyfin-cleaner.json");
    assert_eq!((open.len(), resolved), (45, 41));

    // Written by Windows PowerShell: UTF-16LE with a byte order mark.
    let (open, resolved) = github("copilot-pulls-comments-UTF16LE-BOM-UpstreamDrift.json");
    assert_eq!((open.len(), resolved), (8, 1));
}

#[test]
fn github_jq_lines_and_graphql_threads_read_like_the_rest_api() {
    use findings::Severity::{Bug, Should};
    // `gh api … --jq '.[] | {author, body, line, path}'`: sorted keys, no
    // ids, `\u003c` escapes; CodeRabbit's three-field headers and Qodo's
    // badges.
    let read = parsed(
        &format!("{GITHUB}/coderabbit-qodo-jq-one-object-per-line-NightRacer.jsonl"),
        Format::Auto,
        REPO_ROOT,
    );
    assert_eq!(read.source_format, Format::Github);
    let titles: Vec<(&str, findings::Severity)> = read
        .findings
        .iter()
        .map(|f| (f.title.as_str(), f.severity))
        .collect();
    assert_eq!(titles.len(), 9);
    assert!(
        titles.contains(&("Read `muted` from `Settings` on demand.", Bug)),
        "{titles:?}"
    );
    assert!(
        titles.contains(&("Tab switch leaves run active", Bug)),
        "{titles:?}"
    );
    assert!(
        titles.contains(&("Camera exposes road gaps", Should)),
        "{titles:?}"
    );

    // Pretty objects back to back (`jq '.[] | {path,line,position,body}'`).
    let read = parsed(
        &format!("{GITHUB}/gemini-and-human-pulls-comments-jq-objects-A2UI.json"),
        Format::Auto,
        REPO_ROOT,
    );
    assert_eq!(read.findings.len(), 18);

    // GraphQL review threads: resolved and outdated threads are resolved.
    let (open, resolved) = github("copilot-graphql-reviewThreads-mojibake-sonde.json");
    assert_eq!((open.len(), resolved), (4, 18));
    let (open, resolved) =
        github("codex-coderabbit-human-graphql-reviewThreads-agent-orchestrator-ts.json");
    assert_eq!((open.len(), resolved), (0, 3), "all three threads resolved");
    // Re-serialised by a Go program: PascalCase keys.
    let (open, resolved) =
        github("copilot-graphql-reviewThreads-isOutdated-PascalCase-vidpipe.json");
    assert_eq!(
        (open.len(), resolved),
        (27, 11),
        "38 threads, 11 resolved or outdated"
    );
}

#[test]
fn github_reviews_and_conversation_comments_are_not_taken_for_a_clean_round() {
    for rel in [
        "copilot-gh-pr-view-json-reviews-AutoRedact.json",
        "gemini-devin-coderabbit-pulls-reviews-pretty-pixel-agents.json",
        "coderabbit-graphql-review-node-github-pr-automation-mcp.json",
    ] {
        let err = error(&format!("{GITHUB}/{rel}"), Format::Auto);
        assert!(
            err.starts_with("github: ") && err.contains("none approving nor requesting changes"),
            "{rel}: {err}"
        );
    }
    let err = error(
        &format!("{GITHUB}/coderabbit-graphql-issue-comment-node-github-pr-automation-mcp.json"),
        Format::Auto,
    );
    assert!(err.contains("not on its code"), "{err}");
}

/// How many findings of each severity (nit, should, bug, block) a real
/// report reads as, and how many point outside the repository.
fn tally(rel: &str) -> ([usize; 4], usize) {
    let read = parsed(rel, Format::Auto, REPO_ROOT);
    let mut counts = [0; 4];
    for finding in &read.findings {
        counts[finding.severity as usize] += 1;
    }
    let escaping = read.findings.iter().filter(|f| f.path_escapes).count();
    (counts, escaping)
}

/// Real SARIF logs of many tools (tests/fixtures/findings/README.md says
/// where each came from), each read as what the tool said: levels,
/// overrides, `security-severity`, artifact indexes, `ROOTPATH` bases.
#[test]
fn real_sarif_logs_of_many_tools_read_as_their_tools_meant() {
    for (rel, counts, escaping) in [
        // Two runs with the same result: one finding; the rule's default
        // `note`.
        ("sarif/codeql-lgtm-two-runs.sarif", [2, 0, 0, 0], 0),
        ("sarif/codeql-artifact-index.sarif", [0, 2, 0, 0], 0),
        ("sarif/gitleaks-simple.sarif", [0, 1, 0, 0], 0),
        // Eight results, four places each found in two commits.
        ("sarif/gitleaks-v7-commits.sarif", [0, 4, 0, 0], 0),
        // `ROOTPATH` is `file:///`: the image's paths are outside.
        ("sarif/trivy-image-rootpath.sarif", [0, 4, 0, 0], 4),
        ("sarif/trivy-fs-rootpath-home.sarif", [3, 7, 10, 0], 20),
        ("sarif/snyk-open-source-multi-run.sarif", [0, 3, 3, 0], 0),
        // Every result suppressed in source: a clean round.
        (
            "sarif/eslint-formatter-sarif-suppressed.sarif",
            [0, 0, 0, 0],
            0,
        ),
        ("sarif/semgrep-clean-syntax-warning.sarif", [0, 0, 0, 0], 0),
        ("sarif/checkov-terraform.sarif", [0, 0, 20, 0], 0),
        // No level anywhere: the rules' `security-severity` (2.1 … 9.8).
        ("sarif/grype-no-level.sarif", [6, 4, 11, 1], 0),
        (
            "sarif/dependency-check-four-slash-uri.sarif",
            [0, 0, 13, 0],
            13,
        ),
        ("sarif/dockle-empty-uri.sarif", [3, 0, 1, 0], 0),
        ("sarif/flawfinder.sarif", [51, 2, 1, 0], 0),
        (
            "sarif/sarif-multitool-message-arguments.sarif",
            [1, 0, 0, 0],
            0,
        ),
        // The SDK's own test: none, none, note (a hierarchical id's
        // override), warning, error.
        ("sarif/sarif-sdk-invocation-override.sarif", [3, 1, 1, 0], 0),
        // Bandit leaves out the level of a MEDIUM issue: warning.
        ("sarif/bandit.sarif", [4, 1, 2, 0], 0),
    ] {
        assert_eq!(tally(rel), (counts, escaping), "{rel}");
    }
    let args = parsed(
        "sarif/sarif-multitool-message-arguments.sarif",
        Format::Auto,
        REPO_ROOT,
    );
    assert!(
        !args.findings[0].title.contains("{0}"),
        "{}",
        args.findings[0].title
    );
    // Semgrep whose rules did not download found nothing: no clean round.
    let err = error("sarif/semgrep-config-download-failed.sarif", Format::Auto);
    assert!(
        err.contains("the tool reported an error (Failed to download configuration"),
        "{err}"
    );
    let err = error("sarif/spotbugs-execution-failed.sarif", Format::Auto);
    assert!(err.contains("`executionSuccessful` is false"), "{err}");
}

/// Real JUnit reports of go-junit-report, JunitXml.TestLogger, PHPUnit,
/// rspec_junit_formatter, mocha-junit-reporter and Bazel: one finding per
/// failing test, titled by what went wrong.
#[test]
fn real_junit_reports_of_many_runners_read_one_finding_per_failing_test() {
    for (rel, failing) in [
        ("junit/go-junit-report-pass-fail-skip.xml", 1),
        ("junit/go-junit-report-stdout-subtests.xml", 9),
        ("junit/go-junit-report-build-failed.xml", 3),
        ("junit/go-junit-report-race.xml", 1),
        ("junit/go-junit-report-testmain-panic.xml", 1),
        // One test written three times (`-count=3`), passing each time.
        ("junit/go-junit-report-repeated-names.xml", 0),
        ("junit/dotnet-junit-testlogger.xml", 14),
        ("junit/phpunit-phpt-absolute.xml", 2),
        ("junit/rspec-junit-formatter.xml", 1),
        ("junit/rspec-junit-formatter-same-names.xml", 0),
        ("junit/mocha-junit-reporter-passing.xml", 0),
        ("junit/bazel-test-xml-error.xml", 1),
        ("junit/mocha-junit-reporter-failing.xml", 1),
    ] {
        assert_eq!(tally(rel), ([0, 0, failing, 0], tally(rel).1), "{rel}");
    }
    let titles = |rel: &str| -> Vec<String> {
        parsed(rel, Format::Auto, REPO_ROOT)
            .findings
            .into_iter()
            .map(|f| f.title)
            .collect()
    };
    // go-junit-report's fixed messages (`Build error`, `Runtime error`)
    // say nothing: the text does.
    assert_eq!(
        titles("junit/go-junit-report-build-failed.xml")[0],
        "package/name/failing1::[build failed] errored: failing1/failing_test.go:15: undefined: x"
    );
    assert_eq!(
        titles("junit/go-junit-report-testmain-panic.xml"),
        ["package/name/paniclate::Failure errored: panic: panic"]
    );
    // The test's own error line, not output it printed before it.
    assert_eq!(
        titles("junit/go-junit-report-stdout-subtests.xml")[0],
        "package/stdout::TestFailWithStdoutAndTestOutput failed: stdout_test.go:11: single-line error"
    );
    let rspec = parsed("junit/rspec-junit-formatter.xml", Format::Auto, REPO_ROOT);
    assert_eq!(
        (rspec.findings[0].file.as_deref(), rspec.findings[0].line),
        (Some("spec/features/managing_admins_spec.rb"), Some(18))
    );
    // mocha-junit-reporter writes the suite's file absolute and the stack
    // cites it relative: the line is where it failed.
    let mocha = parsed(
        "junit/mocha-junit-reporter-failing.xml",
        Format::Auto,
        "/tmp/fx30b/js",
    );
    assert_eq!(
        (mocha.findings[0].file.as_deref(), mocha.findings[0].line),
        (Some("test/cart.test.js"), Some(13))
    );
    // PHPUnit's absolute `file`, read in the repository it ran in: the id
    // holds the path from the repository's top.
    let php = parsed(
        "junit/phpunit-phpt-absolute.xml",
        Format::Auto,
        "/home/matteo/OSS/phpunit",
    );
    assert!(
        php.findings[0]
            .id
            .starts_with("tests/end-to-end/metadata/targeting-traits-with-coversclass"),
        "{}",
        php.findings[0].id
    );
}
