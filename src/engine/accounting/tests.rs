use super::*;
use crate::findings::{Format, parse};
use crate::patch::LineRange;

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

fn run(prev: &Registry, round: u32, closure: Closure, parsed: &Parsed) -> Accounted {
    account(
        prev,
        &RoundInput {
            round,
            floor: Severity::Bug,
            closure,
            parsed,
            prev_patch: None,
        },
    )
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

    // F1 and N1 are gone: closed by absence; F2 stays.
    let r2 = run(
        &r1.registry,
        2,
        Closure::Absent,
        &review(&[("F2", "block", "a.rs", 9)], &[]),
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
    let r2 = run(
        &r1.registry,
        2,
        Closure::Absent,
        &review(&[("F1", "bug", "a.rs", 5)], &[]),
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
        &Registry::default(),
        &RoundInput {
            round: 2,
            floor: Severity::Bug,
            closure: Closure::Absent,
            parsed: &parsed,
            prev_patch: Some((1, &changed)),
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
    assert_eq!(r2.reported[0].id, r1.reported[0].id);
}
