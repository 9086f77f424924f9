use super::*;

fn r(round: u32, must_fix_left: u32, diff: u64) -> RoundFacts {
    RoundFacts {
        round,
        must_fix_reported: (0..must_fix_left).map(|i| format!("F{i}")).collect(),
        diff_size: diff,
        must_fix_left,
        ..RoundFacts::default()
    }
}

fn ids(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// Each case: rounds, cap, the rule expected to fire (None: continue).
#[test]
fn rules_fire_in_priority_order() {
    let reopened_and_capped = RoundFacts {
        reopened: vec![("F1".into(), 1)],
        ..r(3, 2, 5)
    };
    let flip_marker = RoundFacts {
        undoes: vec![("F4".into(), "F1".into())],
        ..r(2, 1, 5)
    };
    let flip_patch = RoundFacts {
        reversed_line: Some("puts back a line that round 2 removed in `src/a.rs`: `x`".into()),
        ..r(2, 1, 5)
    };
    let reopened_and_flip = RoundFacts {
        reopened: vec![("F1".into(), 1)],
        undoes: vec![("F4".into(), "F1".into())],
        ..r(2, 1, 5)
    };
    let nit_only = RoundFacts {
        must_fix_reported: vec![],
        below_floor_reported: 2,
        carried_unconfirmed: ids(&["F1"]),
        ..r(2, 1, 5)
    };
    let nit_only_at_cap = RoundFacts {
        round: 3,
        ..nit_only.clone()
    };
    let quiet_round = RoundFacts {
        must_fix_reported: vec![],
        below_floor_reported: 0,
        carried_unconfirmed: ids(&["F1"]),
        ..r(2, 1, 5)
    };
    let table: Vec<(&str, Vec<RoundFacts>, u32, Option<Rule>)> = vec![
        ("clean at round 1", vec![r(1, 0, 10)], 3, Some(Rule::Clean)),
        (
            "clean beats everything",
            vec![
                r(1, 2, 1),
                r(2, 1, 2),
                RoundFacts {
                    reopened: vec![("F".into(), 1)],
                    ..r(3, 0, 3)
                },
            ],
            3,
            Some(Rule::Clean),
        ),
        (
            "converging continues",
            vec![r(1, 3, 40), r(2, 1, 10)],
            3,
            None,
        ),
        (
            "reopened beats round-cap",
            vec![r(1, 2, 5), r(2, 1, 5), reopened_and_capped],
            3,
            Some(Rule::Reopened),
        ),
        (
            "reopened beats flip-flop",
            vec![r(1, 2, 5), reopened_and_flip],
            3,
            Some(Rule::Reopened),
        ),
        (
            "flip-flop by marker",
            vec![r(1, 2, 5), flip_marker],
            3,
            Some(Rule::FlipFlop),
        ),
        (
            "flip-flop by patch",
            vec![r(1, 2, 5), flip_patch],
            3,
            Some(Rule::FlipFlop),
        ),
        (
            "diff growth",
            vec![r(1, 2, 5), r(2, 2, 6), r(3, 2, 7)],
            5,
            Some(Rule::DiffGrowth),
        ),
        (
            "diff growth beats round-cap",
            vec![r(1, 2, 5), r(2, 2, 6), r(3, 2, 7)],
            3,
            Some(Rule::DiffGrowth),
        ),
        (
            "growth while converging is progress, not diff-growth",
            vec![r(1, 4, 10), r(2, 3, 2), r(3, 2, 3), r(4, 1, 37)],
            8,
            None,
        ),
        (
            "growth that bought nothing since two rounds back",
            vec![r(1, 4, 10), r(2, 3, 2), r(3, 2, 3), r(4, 3, 37)],
            8,
            Some(Rule::DiffGrowth),
        ),
        (
            "equal sizes are no growth",
            vec![r(1, 2, 5), r(2, 2, 6), r(3, 2, 6)],
            5,
            None,
        ),
        (
            "growth needs three rounds",
            vec![r(1, 2, 5), r(2, 2, 6)],
            5,
            None,
        ),
        (
            "round cap",
            vec![r(1, 2, 5), r(2, 2, 5), r(3, 1, 5)],
            3,
            Some(Rule::RoundCap),
        ),
        (
            "past an amended cap continues",
            vec![r(1, 2, 5), r(2, 2, 5), r(3, 1, 5)],
            5,
            None,
        ),
        (
            "nit round",
            vec![r(1, 1, 5), nit_only.clone()],
            3,
            Some(Rule::NitRound),
        ),
        (
            "round cap beats nit round",
            vec![r(1, 1, 5), r(2, 1, 4), nit_only_at_cap],
            3,
            Some(Rule::RoundCap),
        ),
        (
            "nothing reported is no nit round",
            vec![r(1, 1, 5), quiet_round],
            3,
            None,
        ),
        ("no rounds, no decision", vec![], 3, None),
    ];
    for (name, rounds, cap, expected) in table {
        let got = evaluate(&rounds, cap).map(|f| f.rule);
        assert_eq!(got, expected, "{name}");
    }
}

#[test]
fn diff_growth_names_the_round_with_fewest_must_fix_latest_on_ties() {
    let rounds = vec![r(1, 3, 5), r(2, 1, 2), r(3, 1, 6), r(4, 2, 9)];
    let fired = evaluate(&rounds, 10).unwrap();
    assert_eq!(fired.rule, Rule::DiffGrowth);
    assert_eq!(fired.revert_to, Some(3));
    assert_eq!(
        fired.reason,
        "round 4: the patch grew two rounds in a row (2 < 6 < 9 lines) while must-fix findings went 1 -> 2; round 3 had the fewest (1)"
    );
}

#[test]
fn diff_growth_never_recommends_the_round_it_fires_in() {
    let rounds = vec![r(1, 2, 1), r(2, 2, 2), r(3, 2, 3)];
    let fired = evaluate(&rounds, 10).unwrap();
    assert_eq!(fired.rule, Rule::DiffGrowth);
    assert_eq!(fired.revert_to, Some(2));
}

#[test]
fn reasons_name_what_happened() {
    let rounds = vec![
        r(1, 2, 5),
        RoundFacts {
            reopened: vec![("F2".into(), 1), ("F3".into(), 1)],
            ..r(3, 2, 5)
        },
    ];
    assert_eq!(
        evaluate(&rounds, 5).unwrap().reason,
        "round 3: F2 closed in round 1 is reported again (and 1 more)"
    );
    assert_eq!(
        evaluate(&[r(1, 0, 0)], 3).unwrap().reason,
        "round 1: no must-fix finding is open"
    );
    assert_eq!(
        evaluate(&[r(1, 1, 1), r(2, 1, 1)], 2).unwrap().reason,
        "round 2 of 2: 1 must-fix finding still open"
    );
}

#[test]
fn done_rules_exit_zero() {
    // Every rule, so that a new one must say whether it is done.
    let done: Vec<Rule> = Rule::ALL.into_iter().filter(|r| r.is_done()).collect();
    assert_eq!(done, vec![Rule::Clean, Rule::NitRound]);
}

#[test]
fn progress_guards() {
    let open = |disputed_answered: bool, again: &[&str]| RoundFacts {
        must_fix_open_before: 2,
        disputed_answered,
        disputed_again: ids(again),
        ..r(2, 2, 0)
    };
    let both = [Guard::Stalled, Guard::Disputed];
    type Case<'a> = (&'a str, RoundFacts, bool, &'a [Guard], Option<Guard>);
    let table: Vec<Case> = vec![
        (
            "empty patch, findings open",
            open(false, &[]),
            true,
            &both,
            Some(Guard::Stalled),
        ),
        (
            "empty patch, a dispute answered",
            open(true, &[]),
            true,
            &both,
            None,
        ),
        ("a patch", open(false, &[]), false, &both, None),
        (
            "empty patch, nothing was open",
            RoundFacts {
                must_fix_open_before: 0,
                ..r(2, 1, 0)
            },
            true,
            &both,
            None,
        ),
        (
            "stalled off",
            open(false, &[]),
            true,
            &[Guard::Disputed],
            None,
        ),
        (
            "disputed and reported again",
            open(true, &["F1"]),
            false,
            &both,
            Some(Guard::Disputed),
        ),
        (
            "disputed and reported again, empty patch",
            open(true, &["F1"]),
            true,
            &both,
            Some(Guard::Disputed),
        ),
        (
            "disputed off",
            open(true, &["F1"]),
            false,
            &[Guard::Stalled],
            None,
        ),
        ("no guards", open(false, &["F1"]), true, &[], None),
    ];
    for (name, facts, empty, guards, want) in table {
        assert_eq!(
            progress(&facts, empty, guards).map(|(g, _)| g),
            want,
            "{name}"
        );
    }
    let (_, why) = progress(&open(true, &["F1", "F2"]), false, &both).unwrap();
    assert_eq!(
        why,
        "round 2: the writer disputed F1 and the reviewer reports it again (and 1 more): a person decides"
    );
    let (_, why) = progress(&open(false, &[]), true, &both).unwrap();
    assert_eq!(
        why,
        "round 2: the writer changed nothing while 2 must-fix findings were open and disputed none"
    );
    assert_eq!(Guard::parse("stalled"), Some(Guard::Stalled));
    assert_eq!(Guard::parse("nope"), None);
}
