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
        reversed_hunk: Some((1, "src/a.rs".into())),
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
        "round 4: the patch grew two rounds in a row (2 < 6 < 9 lines); round 3 had the fewest must-fix findings (1)"
    );
}

#[test]
fn diff_growth_never_recommends_the_round_it_fires_in() {
    let rounds = vec![r(1, 2, 1), r(2, 2, 2), r(3, 1, 3)];
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
    let done: Vec<Rule> = [
        Rule::Clean,
        Rule::Reopened,
        Rule::FlipFlop,
        Rule::DiffGrowth,
        Rule::RoundCap,
        Rule::NitRound,
    ]
    .into_iter()
    .filter(|r| r.is_done())
    .collect();
    assert_eq!(done, vec![Rule::Clean, Rule::NitRound]);
}
