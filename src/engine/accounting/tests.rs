use super::*;
use crate::findings::{Format, parse};
use crate::patch::LineRange;

/// A patch that changes line `line` of each `(file, line)`.
fn touching(places: &[(&str, u32)]) -> ParsedPatch {
    let mut text = String::new();
    for (file, line) in places {
        text.push_str(&format!(
            "diff --git a/{file} b/{file}\n--- a/{file}\n+++ b/{file}\n@@ -{line},1 +{line},1 @@\n-old {line}\n+new {line}\n"
        ));
    }
    crate::patch::parse(text.as_bytes())
}

/// A round's reviewer output as native JSON: (id, severity, file, line).
fn review(findings: &[(&str, &str, &str, u64)], resolved: &[&str]) -> Parsed {
    let items: Vec<String> = findings
        .iter()
        .map(|(id, sev, file, line)| {
            format!(r#"{{"id":"{id}","severity":"{sev}","title":"finding {id}","file":"{file}","line":{line}}}"#)
        })
        .collect();
    let resolved: Vec<String> = resolved.iter().map(|r| format!("\"{r}\"")).collect();
    let json = format!(
        r#"{{"findings":[{}],"resolved":[{}]}}"#,
        items.join(","),
        resolved.join(",")
    );
    parse(json.as_bytes(), Format::Native, "/repo").unwrap()
}

/// A round whose writer changed nothing and answered nothing.
fn run(prev: &Registry, round: u32, closure: Closure, parsed: &Parsed) -> Accounted {
    run_with(prev, round, closure, parsed, &ParsedPatch::default(), &[])
}

fn run_with(
    prev: &Registry,
    round: u32,
    closure: Closure,
    parsed: &Parsed,
    patch: &ParsedPatch,
    responses: &[Response],
) -> Accounted {
    account(
        prev.clone(),
        &RoundInput {
            round,
            floor: Severity::Bug,
            closure,
            parsed,
            patch,
            responses,
            induced: None,
            same_problem: &[],
        },
    )
}

fn response(id: &str, status: Status) -> Response {
    Response {
        id: id.into(),
        status,
        note: String::new(),
    }
}

#[test]
fn opened_closed_reopened_and_must_fix_are_counted() {
    let r1 = run(
        &Registry::default(),
        1,
        Closure::Absent,
        &review(
            &[
                ("F1", "bug", "a.rs", 1),
                ("F2", "block", "a.rs", 9),
                ("N1", "nit", "b.rs", 2),
            ],
            &[],
        ),
    );
    assert_eq!(
        (r1.counts.opened, r1.counts.closed, r1.counts.reopened),
        (3, 0, 0)
    );
    assert_eq!(
        (r1.counts.must_fix_left, r1.counts.below_floor_open),
        (2, 1)
    );
    assert_eq!(r1.facts.must_fix_reported, vec!["F1", "F2"]);
    assert_eq!(r1.facts.below_floor_reported, 1);

    // F1 and N1 are gone and the writer touched their lines: closed by a
    // fix; F2 stays.
    let r2 = run_with(
        &r1.registry,
        2,
        Closure::Absent,
        &review(&[("F2", "block", "a.rs", 9)], &[]),
        &touching(&[("a.rs", 1), ("b.rs", 2)]),
        &[],
    );
    assert_eq!(
        (r2.counts.opened, r2.counts.closed, r2.counts.reopened),
        (0, 2, 0)
    );
    assert_eq!(
        (r2.counts.must_fix_left, r2.counts.below_floor_open),
        (1, 0)
    );

    // F1 comes back: reopened, and the rule sees it with the round it closed in.
    let r3 = run(
        &r2.registry,
        3,
        Closure::Absent,
        &review(&[("F1", "bug", "a.rs", 1), ("F2", "block", "a.rs", 9)], &[]),
    );
    assert_eq!(r3.counts.reopened, 1);
    assert_eq!(r3.facts.reopened, vec![("F1".to_string(), 2)]);
    assert_eq!(r3.counts.must_fix_left, 2);
}

#[test]
fn below_floor_reopen_is_counted_but_not_a_rule_fact() {
    let r1 = run(
        &Registry::default(),
        1,
        Closure::Absent,
        &review(&[("N1", "nit", "a.rs", 1), ("F1", "bug", "a.rs", 5)], &[]),
    );
    let r2 = run_with(
        &r1.registry,
        2,
        Closure::Absent,
        &review(&[("F1", "bug", "a.rs", 5)], &[]),
        &touching(&[("a.rs", 1)]),
        &[],
    );
    let r3 = run(
        &r2.registry,
        3,
        Closure::Absent,
        &review(&[("N1", "nit", "a.rs", 1), ("F1", "bug", "a.rs", 5)], &[]),
    );
    assert_eq!(r3.counts.reopened, 1);
    assert!(r3.facts.reopened.is_empty());
}

#[test]
fn explicit_closure_needs_resolved_and_carries_the_rest() {
    let r1 = run(
        &Registry::default(),
        1,
        Closure::Explicit,
        &review(&[("F1", "bug", "a.rs", 1), ("F2", "bug", "a.rs", 9)], &[]),
    );
    let r2 = run(
        &r1.registry,
        2,
        Closure::Explicit,
        &review(&[("N1", "nit", "c.rs", 3)], &["F1"]),
    );
    assert_eq!(r2.counts.closed, 1);
    assert_eq!(r2.counts.must_fix_left, 1);
    assert_eq!(r2.facts.carried_unconfirmed, vec!["F2"]);
    assert!(r2.facts.must_fix_reported.is_empty());
    assert_eq!(r2.facts.below_floor_reported, 1);
}

#[test]
fn waived_findings_stop_counting_and_never_reopen() {
    let mut r1 = run(
        &Registry::default(),
        1,
        Closure::Absent,
        &review(&[("F1", "bug", "a.rs", 1)], &[]),
    );
    assert!(waive(&mut r1.registry, "F1"));
    assert!(!waive(&mut r1.registry, "nope"));
    let r2 = run(
        &r1.registry,
        2,
        Closure::Absent,
        &review(&[("F1", "bug", "a.rs", 1)], &[]),
    );
    assert_eq!(
        (
            r2.counts.reopened,
            r2.counts.opened,
            r2.counts.must_fix_left
        ),
        (0, 0, 0)
    );
    assert!(r2.facts.must_fix_reported.is_empty());
}

#[test]
fn undo_markers_name_an_earlier_must_fix_finding() {
    let r1 = run(
        &Registry::default(),
        1,
        Closure::Absent,
        &review(&[("F1", "bug", "a.rs", 1), ("N1", "nit", "a.rs", 7)], &[]),
    );
    let json = r#"{"findings":[{"id":"F9","severity":"bug","title":"put it back","undoes":"F1"},
                               {"id":"F8","severity":"bug","title":"undo a nit","undoes":"N1"}]}"#;
    let parsed = parse(json.as_bytes(), Format::Native, "/repo").unwrap();
    let r2 = run(&r1.registry, 2, Closure::Absent, &parsed);
    assert_eq!(r2.facts.undoes, vec![("F9".to_string(), "F1".to_string())]);
}

#[test]
fn findings_on_lines_the_last_patch_changed_are_induced() {
    let mut changed = ChangedLines::new();
    changed.insert("a.rs".into(), vec![LineRange { start: 10, end: 12 }]);
    let parsed = review(&[("F1", "bug", "a.rs", 11), ("F2", "bug", "a.rs", 13)], &[]);
    let out = account(
        Registry::default(),
        &RoundInput {
            round: 2,
            floor: Severity::Bug,
            closure: Closure::Absent,
            parsed: &parsed,
            patch: &ParsedPatch::default(),
            responses: &[],
            induced: Some((1, &changed)),
            same_problem: &[],
        },
    );
    let induced: Vec<Option<u32>> = out.registry.findings.iter().map(|t| t.induced_by).collect();
    assert_eq!(induced, vec![Some(1), None]);
}

#[test]
fn a_reworded_finding_keeps_its_id() {
    let first = r#"{"findings":[{"severity":"bug","title":"expired tokens pass the auth check","file":"src/auth.rs","line":42}]}"#;
    let again = r#"{"findings":[{"severity":"bug","title":"expired tokens still pass the auth check","file":"src/auth.rs","line":71}]}"#;
    let r1 = run(
        &Registry::default(),
        1,
        Closure::Absent,
        &parse(first.as_bytes(), Format::Native, "/repo").unwrap(),
    );
    let r2 = run(
        &r1.registry,
        2,
        Closure::Absent,
        &parse(again.as_bytes(), Format::Native, "/repo").unwrap(),
    );
    assert_eq!((r2.counts.opened, r2.counts.closed), (0, 0));
    assert_eq!(r2.reported[0].finding.id, r1.reported[0].finding.id);
}

#[test]
fn a_finding_missing_while_nothing_touched_it_was_skipped() {
    let r1 = run(
        &Registry::default(),
        1,
        Closure::Absent,
        &review(&[("F1", "bug", "a.rs", 10), ("F2", "bug", "b.rs", 20)], &[]),
    );
    // The writer fixed F1 (line 10); the reviewer forgot F2.
    let r2 = run_with(
        &r1.registry,
        2,
        Closure::Absent,
        &review(&[], &[]),
        &touching(&[("a.rs", 10)]),
        &[],
    );
    assert_eq!((r2.counts.closed, r2.counts.must_fix_left), (1, 0));
    assert_eq!(r2.skipped, vec!["F2"]);
    assert_eq!(r2.registry.findings[1].standing, FindingStanding::Skipped);
    // F2 comes back: open again, not reopened.
    let r3 = run(
        &r2.registry,
        3,
        Closure::Absent,
        &review(&[("F2", "bug", "b.rs", 20)], &[]),
    );
    assert_eq!(
        (
            r3.counts.reopened,
            r3.counts.opened,
            r3.counts.must_fix_left
        ),
        (0, 0, 1)
    );
    assert!(r3.facts.reopened.is_empty());
    assert_eq!(r3.reported[0].state, Seen::Open);
    assert_eq!(r3.reported[0].back_after_skip, Some(2));
}

#[test]
fn a_fixed_answer_or_a_resolved_id_closes_an_untouched_finding() {
    let r1 = run(
        &Registry::default(),
        1,
        Closure::Absent,
        &review(&[("F1", "bug", "a.rs", 10), ("F2", "bug", "b.rs", 20)], &[]),
    );
    let r2 = run_with(
        &r1.registry,
        2,
        Closure::Absent,
        &review(&[], &["F2"]),
        &ParsedPatch::default(),
        &[response("F1", Status::Fixed)],
    );
    assert_eq!(r2.counts.closed, 2);
    assert!(r2.skipped.is_empty());
}

#[test]
fn the_touch_is_within_one_line_in_the_numbering_before_the_patch() {
    let r1 = run(
        &Registry::default(),
        1,
        Closure::Absent,
        &review(&[("F1", "bug", "a.rs", 10), ("F2", "bug", "a.rs", 30)], &[]),
    );
    let r2 = run_with(
        &r1.registry,
        2,
        Closure::Absent,
        &review(&[], &[]),
        &touching(&[("a.rs", 11), ("a.rs", 32)]),
        &[],
    );
    assert_eq!(
        r2.counts.closed, 1,
        "line 11 is next to F1; 32 is two from F2"
    );
    assert_eq!(r2.skipped, vec!["F2"]);
}

#[test]
fn a_failing_test_closes_on_any_change() {
    let junit = r#"<testsuite><testcase classname="t" name="test_a" file="t.py" line="3"><failure message="boom"/></testcase></testsuite>"#;
    let parsed = parse(junit.as_bytes(), Format::Junit, "/repo").unwrap();
    let r1 = run(&Registry::default(), 1, Closure::Absent, &parsed);
    let passing = parse(
        b"<testsuite><testcase classname=\"t\" name=\"test_a\"/></testsuite>",
        Format::Junit,
        "/repo",
    )
    .unwrap();
    let r2 = run_with(
        &r1.registry,
        2,
        Closure::Absent,
        &passing,
        &touching(&[("src/x.py", 80)]),
        &[],
    );
    assert_eq!(r2.counts.closed, 1);
    let r2 = run(&r1.registry, 2, Closure::Absent, &passing);
    assert_eq!(r2.skipped.len(), 1, "nothing changed: the run skipped it");
}

#[test]
fn places_are_carried_through_patches() {
    let first = r#"{"findings":[{"severity":"bug","title":"Off-by-one in expiry check","file":"src/auth.rs","line":42}]}"#;
    let r1 = run(
        &Registry::default(),
        1,
        Closure::Absent,
        &parse(first.as_bytes(), Format::Native, "/repo").unwrap(),
    );
    // Ten lines inserted at the top; the reviewer rewords it at its new line.
    let mut insert = String::from(
        "diff --git a/src/auth.rs b/src/auth.rs\n--- a/src/auth.rs\n+++ b/src/auth.rs\n@@ -0,0 +1,10 @@\n",
    );
    for i in 0..10 {
        insert.push_str(&format!("+use m{i};\n"));
    }
    let again = r#"{"findings":[{"severity":"bug","title":"Token expiry comparison uses > instead of >=","file":"src/auth.rs","line":52}]}"#;
    let r2 = run_with(
        &r1.registry,
        2,
        Closure::Absent,
        &parse(again.as_bytes(), Format::Native, "/repo").unwrap(),
        &crate::patch::parse(insert.as_bytes()),
        &[],
    );
    assert_eq!((r2.counts.opened, r2.counts.closed), (0, 0));
    assert_eq!(r2.reported[0].finding.id, r1.reported[0].finding.id);
    // The first wording again, anywhere in the file: its earlier fingerprint.
    let third = r#"{"findings":[{"severity":"bug","title":"Off-by-one in expiry check","file":"src/auth.rs","line":90}]}"#;
    let r3 = run(
        &r2.registry,
        3,
        Closure::Absent,
        &parse(third.as_bytes(), Format::Native, "/repo").unwrap(),
    );
    assert_eq!(r3.reported[0].finding.id, r1.reported[0].finding.id);
    assert_eq!(r3.counts.reopened, 0);
}

#[test]
fn a_renumbered_id_on_another_finding_is_refused() {
    let r1 = run(
        &Registry::default(),
        1,
        Closure::Absent,
        &review(&[("F1", "bug", "a.rs", 10), ("F2", "bug", "b.rs", 20)], &[]),
    );
    let r2 = run_with(
        &r1.registry,
        2,
        Closure::Absent,
        &review(&[], &[]),
        &touching(&[("b.rs", 20)]),
        &[],
    );
    // F2 closed by a fix; a reviewer numbering afresh calls a new finding in
    // c.rs "F2": it is new, not F2 reopened.
    let json = r#"{"findings":[{"id":"F1","severity":"bug","title":"finding F1","file":"a.rs","line":10},
                               {"id":"F2","severity":"bug","title":"cache grows without bound","file":"c.rs","line":3}]}"#;
    let r3 = run(
        &r2.registry,
        3,
        Closure::Absent,
        &parse(json.as_bytes(), Format::Native, "/repo").unwrap(),
    );
    assert_eq!((r3.counts.reopened, r3.counts.opened), (0, 1));
    assert!(r3.facts.reopened.is_empty());
    assert_eq!(r3.reported[1].state, Seen::New);
    assert_ne!(r3.reported[1].finding.id, "F2");
}

#[test]
fn a_merge_keeps_both_open_and_a_split_reopens_neither() {
    let first = r#"{"findings":[
        {"severity":"bug","title":"expiry compared with > instead of >=","file":"auth.rs","line":40},
        {"severity":"bug","title":"refresh window expiry ignores clock skew","file":"auth.rs","line":42}]}"#;
    let r1 = run(
        &Registry::default(),
        1,
        Closure::Absent,
        &parse(first.as_bytes(), Format::Native, "/repo").unwrap(),
    );
    let merged = r#"{"findings":[{"severity":"bug","title":"expiry handling is wrong (comparison and skew)","file":"auth.rs","line":41}]}"#;
    let r2 = run_with(
        &r1.registry,
        2,
        Closure::Absent,
        &parse(merged.as_bytes(), Format::Native, "/repo").unwrap(),
        &touching(&[("auth.rs", 41)]),
        &[],
    );
    assert_eq!(
        (r2.counts.opened, r2.counts.closed, r2.counts.must_fix_left),
        (0, 0, 2)
    );
    assert_eq!(r2.reported[0].stands_for.len(), 1);
    let r3 = run(
        &r2.registry,
        3,
        Closure::Absent,
        &parse(first.as_bytes(), Format::Native, "/repo").unwrap(),
    );
    assert_eq!(
        (
            r3.counts.opened,
            r3.counts.reopened,
            r3.counts.must_fix_left
        ),
        (0, 0, 2)
    );
}

#[test]
fn disputes_are_facts_for_the_progress_guards() {
    let r1 = run(
        &Registry::default(),
        1,
        Closure::Absent,
        &review(&[("F1", "bug", "a.rs", 10), ("F2", "bug", "b.rs", 20)], &[]),
    );
    let r2 = run_with(
        &r1.registry,
        2,
        Closure::Absent,
        &review(&[("F1", "bug", "a.rs", 10)], &[]),
        &touching(&[("b.rs", 20)]),
        &[
            response("F1", Status::Disputed),
            response("F2", Status::Disputed),
        ],
    );
    assert_eq!(r2.facts.must_fix_open_before, 2);
    assert!(r2.facts.disputed_answered);
    assert_eq!(r2.facts.disputed_again, vec!["F1"]);
}

fn titled(findings: &[(&str, &str, u64)]) -> Parsed {
    let items: Vec<String> = findings
        .iter()
        .map(|(title, file, line)| {
            format!(r#"{{"severity":"bug","title":"{title}","file":"{file}","line":{line}}}"#)
        })
        .collect();
    let json = format!(r#"{{"findings":[{}]}}"#, items.join(","));
    parse(json.as_bytes(), Format::Native, "/repo").unwrap()
}

/// A report at a closed finding's place that shares only a noun of the
/// place with it is new, not a reopen, and caused by the round whose fix
/// closed the other; the evidence each match rests on is kept (SPEC §4.1).
#[test]
fn a_weak_match_to_a_closed_finding_is_new_and_induced_by_its_fix() {
    let first = titled(&[("flush() reads the buffer without the lock", "sink.py", 12)]);
    let round1 = run(&Registry::default(), 1, Closure::Absent, &first);
    assert_eq!(round1.reported[0].matched_by, None);
    // Round 2's patch touches line 12: the finding is closed by the fix.
    let clean = titled(&[]);
    let round2 = run_with(
        &round1.registry,
        2,
        Closure::Absent,
        &clean,
        &touching(&[("sink.py", 12)]),
        &[],
    );
    assert_eq!(round2.counts.closed, 1);
    let closed_id = round1.reported[0].finding.id.clone();
    // Round 3: a new problem at the same lines, the lock its only shared noun.
    let third = titled(&[(
        "flush() holds the lock across the network call",
        "sink.py",
        12,
    )]);
    let round3 = run(&round2.registry, 3, Closure::Absent, &third);
    let r = &round3.reported[0];
    assert_eq!(r.state, Seen::New);
    assert_eq!(round3.counts.reopened, 0);
    assert!(round3.facts.reopened.is_empty());
    assert_eq!(r.induced_by, Some(2));
    assert_eq!(r.resembles.as_deref(), Some(closed_id.as_str()));
    // The same problem reworded comes back: a reopen, on its place and words.
    let fourth = titled(&[(
        "flush() still reads the shared buffer without taking the lock",
        "sink.py",
        13,
    )]);
    let round3b = run(&round2.registry, 3, Closure::Absent, &fourth);
    let r = &round3b.reported[0];
    assert_eq!(
        (r.state, r.matched_by),
        (Seen::Reopened, Some(MatchedBy::Place))
    );
}

/// The judge's `same_problem` yes makes a weak resemblance a reopen; a
/// finding that resembles nothing, or whose closed finding another report
/// of the round already took, stays as it was.
#[test]
fn the_judge_confirms_a_weak_resemblance_as_a_reopen() {
    let first = titled(&[("flush() reads the buffer without the lock", "sink.py", 12)]);
    let round1 = run(&Registry::default(), 1, Closure::Absent, &first);
    let round2 = run_with(
        &round1.registry,
        2,
        Closure::Absent,
        &titled(&[]),
        &touching(&[("sink.py", 12)]),
        &[],
    );
    let closed_id = round1.reported[0].finding.id.clone();
    let third = titled(&[
        ("config loader ignores the env", "conf.py", 3),
        (
            "flush() holds the lock across the network call",
            "sink.py",
            12,
        ),
    ]);
    let decide = |same_problem: &[usize]| {
        account(
            round2.registry.clone(),
            &RoundInput {
                round: 3,
                floor: Severity::Bug,
                closure: Closure::Absent,
                parsed: &third,
                patch: &ParsedPatch::default(),
                responses: &[],
                induced: None,
                same_problem,
            },
        )
    };
    let confirmed = decide(&[1]);
    let r = &confirmed.reported[1];
    assert_eq!(
        (r.state, r.matched_by),
        (Seen::Reopened, Some(MatchedBy::Judge))
    );
    assert_eq!(r.finding.id, closed_id);
    assert_eq!(r.resembles, None);
    assert_eq!(confirmed.facts.reopened, vec![(closed_id.clone(), 2)]);
    assert_eq!(confirmed.reported[0].state, Seen::New);
    // Position 0 resembles nothing: a yes about it changes nothing.
    let nothing = decide(&[0]);
    assert_eq!(nothing.counts.reopened, 0);
    assert_eq!(
        nothing.reported[1].resembles.as_deref(),
        Some(closed_id.as_str())
    );
    // Out of range: ignored.
    assert_eq!(decide(&[7]).counts.reopened, 0);
}

/// A finding with no file to point at is closed by whatever the writer
/// changed, as a failing test is; with nothing changed the reviewer skipped it.
#[test]
fn a_finding_without_a_place_closes_on_any_change() {
    let json = r#"{"findings":[{"id":"F1","severity":"bug","title":"the build warns about an unused crate"}]}"#;
    let parsed = parse(json.as_bytes(), Format::Native, "/repo").unwrap();
    let r1 = run(&Registry::default(), 1, Closure::Absent, &parsed);
    let gone = review(&[], &[]);
    let fixed = run_with(
        &r1.registry,
        2,
        Closure::Absent,
        &gone,
        &touching(&[("src/lib.rs", 3)]),
        &[],
    );
    assert_eq!((fixed.counts.closed, fixed.skipped.len()), (1, 0));
    let idle = run(&r1.registry, 2, Closure::Absent, &gone);
    assert_eq!(
        (idle.counts.closed, idle.skipped),
        (0, vec!["F1".to_string()])
    );
}

/// A rename carries a finding to the file's new name: reported there
/// reworded, at its line, it is the same finding.
#[test]
fn a_finding_in_a_renamed_file_is_carried_to_its_new_name() {
    let first = titled(&[("session cookie lacks the secure flag", "web/a.py", 10)]);
    let r1 = run(&Registry::default(), 1, Closure::Absent, &first);
    let rename = crate::patch::parse(
        b"diff --git a/web/a.py b/web/b.py\nsimilarity index 100%\nrename from web/a.py\nrename to web/b.py\n",
    );
    let again = titled(&[("session cookie is sent without secure", "web/b.py", 10)]);
    let r2 = run_with(&r1.registry, 2, Closure::Absent, &again, &rename, &[]);
    assert_eq!((r2.counts.opened, r2.counts.must_fix_left), (0, 1));
    assert_eq!(r2.reported[0].finding.id, r1.reported[0].finding.id);
    assert_eq!(r2.reported[0].matched_by, Some(MatchedBy::Place));
}

/// Lines inserted inside a finding's range stretch its end and leave its
/// start; a finding the patch did not move keeps no place of its own.
#[test]
fn a_range_stretches_with_lines_inserted_inside_it() {
    let mut first = titled(&[
        ("token expiry compared with >", "auth.rs", 10),
        ("config loader ignores the env", "auth.rs", 3),
    ]);
    first.findings[0].end_line = Some(12);
    let r1 = run(&Registry::default(), 1, Closure::Explicit, &first);
    let insert = crate::patch::parse(
        b"diff --git a/auth.rs b/auth.rs\n--- a/auth.rs\n+++ b/auth.rs\n@@ -10,0 +11,2 @@\n+let now = clock.now();\n+let skew = config.skew;\n",
    );
    let r2 = run_with(
        &r1.registry,
        2,
        Closure::Explicit,
        &titled(&[]),
        &insert,
        &[],
    );
    let places: Vec<_> = r2.registry.findings.iter().map(Tracked::place).collect();
    assert_eq!(
        places,
        vec![
            (Some("auth.rs"), Some(10), Some(14)),
            (Some("auth.rs"), Some(3), None)
        ]
    );
    assert_eq!(r2.registry.findings[1].place, None);
    // Reported reworded two lines below its new end: the same finding.
    let near_end = titled(&[("expired tokens accepted a second late", "auth.rs", 16)]);
    let r3 = run(&r2.registry, 3, Closure::Explicit, &near_end);
    assert_eq!(r3.counts.opened, 0);
    assert_eq!(r3.reported[0].finding.id, r1.reported[0].finding.id);
}

/// What the progress guards read as open before a round: the must-fix
/// findings still open, not a closed one nor one below the floor, and a
/// dispute only of those.
#[test]
fn open_must_fix_counts_only_open_findings_at_the_floor() {
    let r1 = run(
        &Registry::default(),
        1,
        Closure::Absent,
        &review(
            &[
                ("F1", "bug", "a.rs", 1),
                ("F2", "bug", "b.rs", 5),
                ("N1", "nit", "c.rs", 9),
            ],
            &[],
        ),
    );
    let r2 = run(
        &r1.registry,
        2,
        Closure::Absent,
        &review(
            &[("F1", "bug", "a.rs", 1), ("N1", "nit", "c.rs", 9)],
            &["F2"],
        ),
    );
    let disputes = [
        response("F2", Status::Disputed),
        response("N1", Status::Disputed),
    ];
    assert_eq!(
        open_must_fix(&r2.registry, Severity::Bug, &disputes),
        (1, vec![])
    );
    let r3 = run_with(
        &r2.registry,
        3,
        Closure::Absent,
        &review(&[("F1", "bug", "a.rs", 1)], &[]),
        &ParsedPatch::default(),
        &disputes,
    );
    assert_eq!(r3.facts.must_fix_open_before, 1);
    assert!(!r3.facts.disputed_answered);
}

/// Reported again, a waived finding and one below the floor are shown as
/// not must-fix; an open one at the floor is.
#[test]
fn a_waived_or_below_floor_finding_reported_again_is_not_must_fix() {
    let findings = [
        ("F1", "bug", "a.rs", 1),
        ("N1", "nit", "b.rs", 2),
        ("F2", "bug", "c.rs", 3),
    ];
    let mut r1 = run(
        &Registry::default(),
        1,
        Closure::Absent,
        &review(&findings, &[]),
    );
    assert!(waive(&mut r1.registry, "F1"));
    let r2 = run(&r1.registry, 2, Closure::Absent, &review(&findings, &[]));
    let shown: Vec<(&str, Seen, bool)> = r2
        .reported
        .iter()
        .map(|r| (r.finding.id.as_str(), r.state, r.must_fix))
        .collect();
    assert_eq!(
        shown,
        vec![
            ("F1", Seen::Waived, false),
            ("N1", Seen::Open, false),
            ("F2", Seen::Open, true)
        ]
    );
}

/// A reworded finding keeps its earlier wording, once: a reviewer who
/// reports that wording again under an id of its own is reporting it. The
/// same words again add nothing to keep.
#[test]
fn a_findings_earlier_wordings_are_kept_once_and_still_match() {
    let first = "expired tokens pass the auth check";
    let r1 = run(
        &Registry::default(),
        1,
        Closure::Absent,
        &titled(&[(first, "src/auth.rs", 42)]),
    );
    let same = run(
        &r1.registry,
        2,
        Closure::Absent,
        &titled(&[(first, "src/auth.rs", 42)]),
    );
    assert!(same.registry.findings[0].aliases.is_empty());
    let r2 = run(
        &r1.registry,
        2,
        Closure::Absent,
        &titled(&[(
            "expired tokens still pass the auth check",
            "src/auth.rs",
            71,
        )]),
    );
    let was = content_fingerprint(Some("src/auth.rs"), None, first);
    assert_eq!(r2.registry.findings[0].aliases, vec![was]);
    let json = format!(
        r#"{{"findings":[{{"id":"R9","severity":"bug","title":"{first}","file":"src/auth.rs","line":200}}]}}"#
    );
    let r3 = run(
        &r2.registry,
        3,
        Closure::Absent,
        &parse(json.as_bytes(), Format::Native, "/repo").unwrap(),
    );
    assert_eq!(r3.counts.opened, 0);
    assert_eq!(r3.reported[0].finding.id, r1.reported[0].finding.id);
    assert_eq!(r3.reported[0].matched_by, Some(MatchedBy::Fingerprint));
}

/// A refused id gives its finding the derived id; another new finding of
/// the round with the same words, and so that id, gets one of its own: no
/// two findings share an id.
#[test]
fn new_findings_never_share_an_id() {
    let r1 = run(
        &Registry::default(),
        1,
        Closure::Absent,
        &review(&[("F1", "bug", "a.rs", 3)], &[]),
    );
    let json = r#"{"findings":[{"id":"F1","severity":"bug","title":"sql built by string concatenation","file":"b.rs","line":9},
                               {"severity":"bug","title":"sql built by string concatenation","file":"b.rs","line":40}]}"#;
    let r2 = run(
        &r1.registry,
        2,
        Closure::Absent,
        &parse(json.as_bytes(), Format::Native, "/repo").unwrap(),
    );
    assert_eq!(r2.counts.opened, 2);
    let ids: HashSet<&str> = r2
        .registry
        .findings
        .iter()
        .map(|t| t.finding.id.as_str())
        .collect();
    assert_eq!(ids.len(), 3, "{ids:?}");
    let derived = derived_id(&content_fingerprint(
        Some("b.rs"),
        None,
        "sql built by string concatenation",
    ));
    let given: Vec<&str> = r2.reported.iter().map(|r| r.finding.id.as_str()).collect();
    assert_eq!(given, [derived.clone(), format!("{derived}-2")]);
}

/// Under explicit closure, what the rules hear as carried unconfirmed is the
/// must-fix findings the review left out, not one below the floor.
#[test]
fn only_must_fix_findings_are_carried_unconfirmed() {
    let r1 = run(
        &Registry::default(),
        1,
        Closure::Explicit,
        &review(&[("F1", "bug", "a.rs", 1), ("N1", "nit", "b.rs", 2)], &[]),
    );
    let r2 = run(&r1.registry, 2, Closure::Explicit, &review(&[], &[]));
    assert_eq!(r2.facts.carried_unconfirmed, vec!["F1"]);
    assert_eq!(
        (r2.counts.must_fix_left, r2.counts.below_floor_open),
        (1, 1)
    );
}

/// A merge keeps open only findings that are open or skipped: a closed
/// finding a new report sits next to, sharing a word of its subject, stays
/// closed.
#[test]
fn a_closed_finding_is_never_kept_open_by_a_merge() {
    let first = titled(&[("flush() reads the buffer without the lock", "sink.py", 12)]);
    let r1 = run(&Registry::default(), 1, Closure::Absent, &first);
    let r2 = run_with(
        &r1.registry,
        2,
        Closure::Absent,
        &titled(&[]),
        &touching(&[("sink.py", 12)]),
        &[],
    );
    let third = titled(&[(
        "flush() holds the lock across the network call",
        "sink.py",
        13,
    )]);
    let r3 = run(&r2.registry, 3, Closure::Absent, &third);
    assert_eq!(r3.registry.findings[0].standing, FindingStanding::Closed);
    assert!(r3.reported[0].stands_for.is_empty());
    assert_eq!(r3.counts.must_fix_left, 1);
}

fn with_severity(mut parsed: Parsed, severities: &[Severity]) -> Parsed {
    for (finding, severity) in parsed.findings.iter_mut().zip(severities) {
        finding.severity = *severity;
    }
    parsed
}

/// Of two findings next to each other, a below-floor report of one keeps
/// only that one: the must-fix one beside it is not kept open by it.
#[test]
fn a_below_floor_report_keeps_no_must_fix_finding_open() {
    let first = titled(&[
        ("expiry compared with > instead of >=", "auth.rs", 40),
        ("refresh window expiry ignores clock skew", "auth.rs", 42),
    ]);
    let r1 = run(&Registry::default(), 1, Closure::Absent, &first);
    let nit = with_severity(
        titled(&[("expiry comparison reads oddly", "auth.rs", 41)]),
        &[Severity::Nit],
    );
    let r2 = run(&r1.registry, 2, Closure::Absent, &nit);
    assert_eq!(r2.reported[0].finding.id, r1.reported[0].finding.id);
    assert!(r2.reported[0].stands_for.is_empty());
    assert_eq!(r2.skipped, vec![r1.reported[1].finding.id.clone()]);
    // Both below the floor, the report keeps the other one open.
    let nits = with_severity(first, &[Severity::Nit, Severity::Nit]);
    let r1 = run(&Registry::default(), 1, Closure::Absent, &nits);
    let r2 = run(&r1.registry, 2, Closure::Absent, &nit);
    assert_eq!(
        r2.reported[0].stands_for,
        vec![r1.reported[1].finding.id.clone()]
    );
    assert!(r2.skipped.is_empty());
}

/// A report keeps open only findings at its own place: one in another file
/// sharing its subject, left out of the review, was skipped.
#[test]
fn a_merge_needs_the_same_place() {
    let first = titled(&[
        ("expiry check accepts expired tokens", "a.rs", 10),
        ("token expiry ignores clock skew", "b.rs", 50),
    ]);
    let r1 = run(&Registry::default(), 1, Closure::Absent, &first);
    let r2 = run(
        &r1.registry,
        2,
        Closure::Absent,
        &titled(&[("token expiry compared with >", "a.rs", 10)]),
    );
    assert_eq!(r2.reported[0].finding.id, r1.reported[0].finding.id);
    assert!(r2.reported[0].stands_for.is_empty());
    assert_eq!(r2.skipped, vec![r1.reported[1].finding.id.clone()]);
}

/// Findings as `titled` gives them, each with a linter rule or none.
fn ruled(findings: &[(&str, u64, Option<&str>)]) -> Parsed {
    let items: Vec<String> = findings
        .iter()
        .map(|(title, line, rule)| {
            let rule = rule
                .map(|r| format!(r#","rule":"{r}""#))
                .unwrap_or_default();
            format!(
                r#"{{"severity":"bug","title":"{title}","file":"auth.rs","line":{line}{rule}}}"#
            )
        })
        .collect();
    let json = format!(r#"{{"findings":[{}]}}"#, items.join(","));
    parse(json.as_bytes(), Format::Native, "/repo").unwrap()
}

/// A merge across rules: a report of one linter rule never stands for a
/// finding of another; the same rule, or a side with no rule, may.
#[test]
fn a_linter_rules_report_stands_only_for_its_own_rules_findings() {
    // (the rule of the finding the report matches, of the one beside it, of
    // the report) and whether the report stands for the one beside it.
    let cases = [
        (Some("R2"), Some("R1"), Some("R2"), false),
        (Some("R1"), Some("R1"), Some("R1"), true),
        (Some("R1"), None, Some("R1"), true),
        (None, Some("R1"), None, true),
    ];
    for (matched, beside, report, stands) in cases {
        let r1 = run(
            &Registry::default(),
            1,
            Closure::Absent,
            &ruled(&[
                ("expiry compared with > instead of >=", 40, matched),
                ("refresh window expiry ignores clock skew", 42, beside),
            ]),
        );
        let r2 = run(
            &r1.registry,
            2,
            Closure::Absent,
            &ruled(&[("expiry comparison is off by one", 41, report)]),
        );
        let case = format!("{matched:?} {beside:?} {report:?}");
        assert_eq!(
            r2.reported[0].finding.id, r1.reported[0].finding.id,
            "{case}"
        );
        let beside_id = r1.reported[1].finding.id.clone();
        assert_eq!(
            r2.reported[0].stands_for == vec![beside_id.clone()],
            stands,
            "{case}"
        );
        assert_eq!(r2.skipped == vec![beside_id], !stands, "{case}");
    }
}

/// A reviewer that keeps its ids merges too: F1 reported again, reworded to
/// cover F2 beside it, stands for F2.
#[test]
fn a_known_id_reported_again_may_stand_for_the_finding_beside_it() {
    let first = r#"{"findings":[
        {"id":"F1","severity":"bug","title":"expiry compared with > instead of >=","file":"auth.rs","line":40},
        {"id":"F2","severity":"bug","title":"refresh window expiry ignores clock skew","file":"auth.rs","line":42}]}"#;
    let merged = r#"{"findings":[{"id":"F1","severity":"bug","title":"expiry handling is wrong (comparison and skew)","file":"auth.rs","line":41}]}"#;
    let r1 = run(
        &Registry::default(),
        1,
        Closure::Absent,
        &parse(first.as_bytes(), Format::Native, "/repo").unwrap(),
    );
    let r2 = run(
        &r1.registry,
        2,
        Closure::Absent,
        &parse(merged.as_bytes(), Format::Native, "/repo").unwrap(),
    );
    assert_eq!(
        (r2.reported[0].state, r2.reported[0].matched_by),
        (Seen::Open, Some(MatchedBy::Id))
    );
    assert_eq!(r2.reported[0].stands_for, vec!["F2"]);
    assert_eq!(r2.counts.must_fix_left, 2);
}

/// A linter's new result (its own fingerprint id, matched by nothing else)
/// at the place of findings the review left out stands for them: only a
/// reviewer's brand-new id never does.
#[test]
fn a_new_linter_result_may_stand_for_the_findings_at_its_place() {
    let r1 = run(
        &Registry::default(),
        1,
        Closure::Absent,
        &titled(&[
            ("expiry compared with > instead of >=", "auth.rs", 40),
            ("refresh window expiry ignores clock skew", "auth.rs", 42),
        ]),
    );
    let sarif = r#"{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"lint"}},"results":[
        {"ruleId":"R1","level":"error","message":{"text":"expiry handling is wrong (comparison and skew)"},
         "partialFingerprints":{"k":"1"},
         "locations":[{"physicalLocation":{"artifactLocation":{"uri":"auth.rs"},"region":{"startLine":41}}}]}]}]}"#;
    let parsed = parse(sarif.as_bytes(), Format::Sarif, "/repo").unwrap();
    assert_eq!(parsed.findings[0].id_source, IdSource::Sarif);
    let r2 = run(&r1.registry, 2, Closure::Absent, &parsed);
    assert_eq!(r2.reported[0].state, Seen::New);
    let ids: Vec<String> = r1.reported.iter().map(|r| r.finding.id.clone()).collect();
    assert_eq!(r2.reported[0].stands_for, ids);
    assert_eq!((r2.counts.must_fix_left, r2.skipped.len()), (3, 0));
}
