//! Unit tests of `parse` across formats: ids, paths and errors.

use super::*;

const ROOT: &str = "/work/repo";

fn one(input: &str, format: Format) -> Finding {
    let parsed = parse(input.as_bytes(), format, ROOT).expect("parses");
    assert_eq!(parsed.findings.len(), 1, "{parsed:?}");
    parsed.findings.into_iter().next().expect("parses")
}

#[test]
fn the_same_finding_from_three_formats_has_one_id() {
    let native = one(
        r#"{"findings":[{"severity":"bug","title":"Expired tokens pass","file":"src/auth.rs","line":42}]}"#,
        Format::Auto,
    );
    let tagged = one(
        "[error] ./src/auth.rs:12: expired tokens pass\n",
        Format::Auto,
    );
    let codex = one(
        r#"{"findings":[{"title":"[P1] Expired tokens pass","body":"b","confidence_score":0.8,"priority":1,
            "code_location":{"absolute_file_path":"/work/repo/src/auth.rs","line_range":{"start":72,"end":75}}}],
            "overall_correctness":"patch is incorrect","overall_explanation":"x","overall_confidence_score":0.7}"#,
        Format::Auto,
    );
    assert_eq!(native.id, tagged.id);
    assert_eq!(native.id, codex.id);
    assert_eq!(native.id_source, IdSource::Derived);
    assert!(native.id.starts_with("F-") && native.id.len() == 12);
    assert_eq!(codex.file.as_deref(), Some("src/auth.rs"));
    assert_eq!((codex.line, codex.end_line), (Some(72), Some(75)));
}

#[test]
fn look_alike_findings_get_distinct_ids() {
    let parsed = parse(
        b"[should] a.py:3: line too long (99 > 88)\n[should] a.py:9: line too long (120 > 88)\n",
        Format::Tagged,
        ROOT,
    )
    .expect("parses");
    let ids: Vec<&str> = parsed.findings.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids[1], format!("{}-2", ids[0]));
}

/// A review printed twice, or one finding repeated word for word, is one
/// finding per distinct report (SPEC §4.1); the same title at another line,
/// or with another body, stays a finding of its own.
#[test]
fn a_finding_repeated_word_for_word_is_one_finding() {
    let once = "[bug] a.py:3: shared cache read without the lock\n[should] b.py:9: name shadows a builtin\n";
    let parsed = parse(once.repeat(2).as_bytes(), Format::Tagged, ROOT).expect("parses");
    assert_eq!(parsed.findings.len(), 2);
    let twice = r#"{"findings":[
        {"id":"F1","severity":"bug","title":"t","file":"a.rs","line":4,"body":"b"},
        {"id":"F1","severity":"bug","title":"t","file":"a.rs","line":4,"body":"b"}]}"#;
    let parsed = parse(twice.as_bytes(), Format::Native, ROOT).expect("parses");
    assert_eq!(parsed.findings.len(), 1);
    let other_body = r#"{"findings":[
        {"severity":"bug","title":"t","file":"a.rs","line":4,"body":"one"},
        {"severity":"bug","title":"t","file":"a.rs","line":4,"body":"two"}]}"#;
    let parsed = parse(other_body.as_bytes(), Format::Native, ROOT).expect("parses");
    assert_eq!(parsed.findings.len(), 2);
    // Codex's review captured twice: its rendered text, and its event stream.
    for fixture in ["review.txt", "exec-json-review.jsonl"] {
        let path = format!(
            "{}/tests/fixtures/findings/codex/{fixture}",
            env!("CARGO_MANIFEST_DIR")
        );
        let once = std::fs::read_to_string(&path).unwrap();
        let single = parse(once.as_bytes(), Format::Codex, ROOT).expect("parses");
        let doubled =
            parse(format!("{once}\n{once}").as_bytes(), Format::Codex, ROOT).expect("parses");
        assert_eq!(single.findings.len(), 3, "{fixture}");
        assert_eq!(doubled.findings, single.findings, "{fixture}");
    }
}

#[test]
fn duplicate_explicit_ids_are_errors() {
    let err = parse(
        br#"{"findings":[{"id":"F1","severity":"nit","title":"a"},{"id":"F1","severity":"nit","title":"b"}]}"#,
        Format::Native,
        ROOT,
    )
    .expect_err("an error");
    assert_eq!(
        err.to_string(),
        "native json: finding 2: id `F1` is used by an earlier finding; ids must be unique"
    );
}

#[test]
fn escaping_paths_are_flagged() {
    let finding = one("[bug] ../../etc/passwd:1: read outside\n", Format::Tagged);
    assert!(finding.path_escapes);
    assert_eq!(finding.file.as_deref(), Some("../../etc/passwd"));
}

#[test]
fn errors_name_the_position() {
    let table: [(&[u8], Format, &str); 13] = [
        (
            b"[[]]",
            Format::Auto,
            "native json: line 1 column 1: expected a json object `{...}`, found `[`",
        ),
        (
            b"\n  [\"bug\"]",
            Format::Sarif,
            "sarif: line 2 column 3: expected a json object",
        ),
        (b"", Format::Auto, "input is empty"),
        (b"  \n", Format::Native, "input is empty"),
        (
            b"{\"findings\": [\n  {\"severity\": 3",
            Format::Auto,
            "native json: line 2 column",
        ),
        (
            b"{\"findings\": [{\"severity\": \"bug\", \"title\": 7}]}",
            Format::Auto,
            "native json: line 1 column 44: invalid type: integer `7`, expected a string",
        ),
        (
            b"{\"resolved\": []}",
            Format::Auto,
            "native json: missing key `findings`",
        ),
        (
            b"{\"findings\": [{\"severity\": \"urgent\", \"title\": \"x\"}]}",
            Format::Auto,
            "native json: findings[0].severity: unknown severity `urgent`; accepted: nit,",
        ),
        (
            b"ok\xff\xfe",
            Format::Auto,
            "input is not utf-8: invalid byte at offset 2",
        ),
        (
            b"\xff\xfe{\x00\x00\xdc",
            Format::Auto,
            "input is not utf-8, nor the utf-16 its byte order mark says: invalid unit at byte offset 4",
        ),
        (
            b"\xff\xfe{\"findings\": []}\n",
            Format::Auto,
            "input is not utf-8, nor the utf-16 its byte order mark says: invalid unit at byte offset 18",
        ),
        (
            b"\xff\xfe{\x00\x22",
            Format::Auto,
            "input is not utf-8, nor the utf-16 its byte order mark says: invalid unit at byte offset 4",
        ),
        (
            b"{\"version\": \"2.1.0\"}",
            Format::Sarif,
            "sarif: top level: missing key `runs`",
        ),
    ];
    for (input, format, want) in table {
        let err = parse(input, format, ROOT)
            .expect_err("an error")
            .to_string();
        assert!(
            err.starts_with(want),
            "{}: {err}",
            String::from_utf8_lossy(input)
        );
    }
}

#[test]
fn claude_results_need_structured_output() {
    let ok = parse(
        br#"{"type":"result","subtype":"success","is_error":false,"result":"done","structured_output":{"findings":[],"resolved":["F1"]}}"#,
        Format::Auto,
        ROOT,
    )
    .expect("parses");
    assert_eq!(
        (ok.source_format, ok.findings.len(), ok.resolved),
        (Format::Native, 0, vec!["F1".to_string()])
    );
    let err = parse(
        br#"{"type":"result","subtype":"success","result":"looks good"}"#,
        Format::Auto,
        ROOT,
    )
    .expect_err("an error")
    .to_string();
    assert!(err.contains("no structured review"), "{err}");
}

#[test]
fn utf16_with_a_byte_order_mark_reads_as_its_text() {
    // Windows PowerShell 5 writes `>` as UTF-16 with a byte order mark.
    let text = "{\"findings\": [{\"id\": \"F1\", \"severity\": \"bug\", \"title\": \"naïve 🦀 check\", \"file\": \"src/a.rs\", \"line\": 1}]}\r\n";
    let utf8 = parse(text.as_bytes(), Format::Auto, ROOT).expect("utf-8");
    for little in [true, false] {
        let mut bytes = match little {
            true => vec![0xFF, 0xFE],
            false => vec![0xFE, 0xFF],
        };
        for unit in text.encode_utf16() {
            bytes.extend(match little {
                true => unit.to_le_bytes(),
                false => unit.to_be_bytes(),
            });
        }
        assert_eq!(parse(&bytes, Format::Auto, ROOT).expect("utf-16"), utf8);
    }
    let tagged: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain("[clean]\n".encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    assert!(
        parse(&tagged, Format::Auto, ROOT)
            .expect("tagged")
            .findings
            .is_empty()
    );
}

#[test]
fn prose_around_one_fenced_json_block_is_that_block() {
    let block = r#"{"findings":[{"id":"F1","severity":"bug","title":"expiry is exclusive","file":"src/a.rs","line":3,"body":"use >="}]}"#;
    let reply = format!(
        "Here is my review.\n\n```json\n{block}\n```\n\nThanks, and `a` is fine:\n```python\nx = 1\n```\n"
    );
    let parsed = parse(reply.as_bytes(), Format::Auto, "/repo").unwrap();
    assert_eq!(parsed.source_format, Format::Native);
    assert_eq!(parsed.findings.len(), 1);
    assert_eq!(parsed.findings[0].title, "expiry is exclusive");
    // A block that does not read is named by its line.
    let broken = "Review:\n```json\n{\"findings\": [{\"severity\": \"bug\"}]}\n```\n";
    let err = parse(broken.as_bytes(), Format::Auto, "/repo")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("native json: the ```json block at line 2: "),
        "{err}"
    );
    // Two blocks, or tagged findings beside one: refused, never half read.
    let two = format!("```json\n{block}\n```\nand\n```json\n{block}\n```\n");
    let err = parse(two.as_bytes(), Format::Auto, "/repo")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("2 fenced ```json blocks of findings (at lines 1, 5)"),
        "{err}"
    );
    let both = format!("[bug] src/b.rs:1: another\n```json\n{block}\n```\n");
    let err = parse(both.as_bytes(), Format::Auto, "/repo")
        .unwrap_err()
        .to_string();
    assert!(err.contains("and tagged findings around it"), "{err}");
    // A block of other JSON leaves tagged text as it was.
    let other = "[clean]\n```json\n{\"ok\": true}\n```\n";
    assert_eq!(
        parse(other.as_bytes(), Format::Auto, "/repo")
            .unwrap()
            .source_format,
        Format::Tagged
    );
    // Asked for tagged text, it is tagged text.
    assert!(parse(reply.as_bytes(), Format::Tagged, "/repo").is_err());
}

#[test]
fn a_tests_id_takes_its_file_relative_to_the_repository() {
    // PHPUnit writes the absolute path of a `.phpt` case as its `file`,
    // with no class: the id must not change with the machine.
    let report = |root: &str| {
        format!(
            r#"<testsuites><testsuite name="s"><testcase name="a.phpt" file="{root}/tests/a.phpt" line="28"><failure type="F">{root}/tests/a.phpt:28</failure></testcase></testsuite></testsuites>"#
        )
    };
    let here = one(&report(ROOT), Format::Junit);
    let there = parse(
        report("/home/ci/src").as_bytes(),
        Format::Junit,
        "/home/ci/src",
    )
    .unwrap()
    .findings
    .remove(0);
    assert_eq!(here.file.as_deref(), Some("tests/a.phpt"));
    assert!(here.id.starts_with("tests/a.phpt::"), "{}", here.id);
    assert!(here.title.starts_with("tests/a.phpt::"), "{}", here.title);
    assert_eq!((&here.id, here.line), (&there.id, there.line));
}
