use super::*;
use crate::contract::Contract;
use crate::money::Usd;

/// The terms of a contract with `extra` lines and round cap `cap`.
fn terms(extra: &str, cap: u32) -> Terms {
    let contract = Contract::from_toml(&format!("loop = \"t\"\n{extra}"), "HEAD").unwrap();
    Terms::of(&contract, cap).unwrap()
}

/// The stop that fires on the last of `rounds`.
fn stop(terms: &Terms, rounds: &[RoundFacts]) -> Option<Stop> {
    evaluate(terms, rounds).map(|f| f.stop)
}

/// A reviewed round.
fn r(round: u32, must_fix_left: u32, diff: u64) -> RoundFacts {
    RoundFacts {
        round,
        reviewed: true,
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
    let must_fix_and_nits = RoundFacts {
        must_fix_reported: ids(&["F2"]),
        below_floor_reported: 2,
        carried_unconfirmed: ids(&["F1"]),
        ..r(2, 2, 5)
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
            "growth in one round of two is no growth",
            vec![r(1, 2, 5), r(2, 2, 5), r(3, 2, 6)],
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
        (
            "a must-fix report beside the nits is no nit round",
            vec![r(1, 1, 5), must_fix_and_nits],
            3,
            None,
        ),
        ("no rounds, no decision", vec![], 3, None),
    ];
    for (name, rounds, cap, expected) in table {
        let got = stop(&terms("", cap), &rounds);
        assert_eq!(got, expected.map(Stop::Rule), "{name}");
    }
}

#[test]
fn diff_growth_names_the_round_with_fewest_must_fix_latest_on_ties() {
    let rounds = vec![r(1, 3, 5), r(2, 1, 2), r(3, 1, 6), r(4, 2, 9)];
    let fired = evaluate(&terms("", 10), &rounds).unwrap();
    assert_eq!(fired.stop, Rule::DiffGrowth);
    assert_eq!(fired.revert_to, Some(3));
    assert_eq!(
        fired.reason,
        "round 4: the patch grew two rounds in a row (2 < 6 < 9 lines) while must-fix findings went 1 -> 2; round 3 had the fewest (1)"
    );
}

#[test]
fn diff_growth_never_recommends_the_round_it_fires_in() {
    let rounds = vec![r(1, 2, 1), r(2, 2, 2), r(3, 2, 3)];
    let fired = evaluate(&terms("", 10), &rounds).unwrap();
    assert_eq!(fired.stop, Rule::DiffGrowth);
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
    let reason =
        |cap: u32, rounds: &[RoundFacts]| evaluate(&terms("", cap), rounds).unwrap().reason;
    assert_eq!(
        reason(5, &rounds),
        "round 3: F2 closed in round 1 is reported again (and 1 more)"
    );
    assert_eq!(
        reason(3, &[r(1, 0, 0)]),
        "round 1: no must-fix finding is open"
    );
    assert_eq!(
        reason(2, &[r(1, 1, 1), r(2, 1, 1)]),
        "round 2 of 2: 1 must-fix finding still open"
    );
    assert_eq!(
        reason(2, &[r(1, 3, 1), r(2, 3, 1)]),
        "round 2 of 2: 3 must-fix findings still open"
    );
    assert_eq!(
        going_on(&r(2, 1, 1)),
        "round 2: 1 must-fix finding still open"
    );
    let unreviewed = RoundFacts {
        reviewed: false,
        ..r(2, 1, 1)
    };
    assert_eq!(going_on(&unreviewed), "round 2: unreviewed");
}

#[test]
fn done_rules_exit_zero() {
    // Every rule, so that a new one must say whether it is done.
    let done: Vec<Rule> = Rule::ALL.into_iter().filter(|r| r.is_done()).collect();
    assert_eq!(done, vec![Rule::Clean, Rule::NitRound]);
}

#[test]
fn progress_guards() {
    let open = |disputed_answered: bool, again: &[&str], idle: bool| RoundFacts {
        must_fix_open_before: 2,
        disputed_answered,
        disputed_again: ids(again),
        writer_idle: idle,
        ..r(2, 2, 0)
    };
    let both = "";
    let stalled = Some(Stop::Progress(Guard::Stalled));
    let disputed = Some(Stop::Progress(Guard::Disputed));
    type Case<'a> = (&'a str, RoundFacts, &'a str, Option<Stop>);
    let table: Vec<Case> = vec![
        (
            "empty patch, findings open",
            open(false, &[], true),
            both,
            stalled.clone(),
        ),
        (
            "empty patch, a dispute answered",
            open(true, &[], true),
            both,
            None,
        ),
        ("a patch", open(false, &[], false), both, None),
        (
            "empty patch, nothing was open",
            RoundFacts {
                must_fix_open_before: 0,
                writer_idle: true,
                ..r(2, 1, 0)
            },
            both,
            None,
        ),
        (
            "stalled off",
            open(false, &[], true),
            "guards = [\"disputed\"]",
            None,
        ),
        (
            "disputed and reported again",
            open(true, &["F1"], false),
            both,
            disputed.clone(),
        ),
        (
            "disputed and reported again, empty patch",
            open(true, &["F1"], true),
            both,
            disputed.clone(),
        ),
        (
            "disputed off",
            open(true, &["F1"], false),
            "guards = [\"stalled\"]",
            None,
        ),
        ("no guards", open(false, &["F1"], true), "guards = []", None),
        (
            "a rule that fires outranks the progress guards",
            RoundFacts {
                reopened: vec![("F1".into(), 1)],
                ..open(true, &["F1"], true)
            },
            both,
            Some(Stop::Rule(Rule::Reopened)),
        ),
    ];
    for (name, facts, extra, want) in table {
        assert_eq!(stop(&terms(extra, 5), &[facts]), want, "{name}");
    }
    let reason = |facts: RoundFacts| evaluate(&terms("", 5), &[facts]).unwrap().reason;
    assert_eq!(
        reason(open(true, &["F1", "F2"], false)),
        "round 2: the writer disputed F1 and the reviewer reports it again (and 1 more): a person decides"
    );
    assert_eq!(
        reason(open(false, &[], true)),
        "round 2: the writer changed nothing while 2 must-fix findings were open and disputed none"
    );
    assert_eq!(
        reason(RoundFacts {
            reviewed: false,
            must_fix_open_before: 1,
            ..open(false, &[], true)
        }),
        "round 2: the writer changed nothing while 1 must-fix finding was open and disputed none; the reviewer was not called"
    );
    assert_eq!(Guard::parse("stalled"), Some(Guard::Stalled));
    assert_eq!(Guard::parse("nope"), None);
}

/// The contract guards around the rules: `scope` first, `clean` before
/// `budget`, `budget` before the other rules; a round that ended unreviewed
/// meets only the guards.
#[test]
fn contract_guards_come_before_the_rules_but_after_clean() {
    let outside = |facts: RoundFacts| RoundFacts {
        out_of_scope: ids(&["docs/x.md"]),
        ..facts
    };
    let spent = |usd: &str, facts: RoundFacts| RoundFacts {
        spent_usd: usd.parse().unwrap(),
        ..facts
    };
    let unreviewed = |facts: RoundFacts| RoundFacts {
        reviewed: false,
        ..facts
    };
    let capped = RoundFacts {
        reopened: vec![("F1".into(), 1)],
        ..r(3, 2, 5)
    };
    let budget = "[budget]\nusd = 1.0";
    type Case<'a> = (&'a str, RoundFacts, &'a str, Option<Stop>);
    let table: Vec<Case> = vec![
        (
            "scope beats clean",
            outside(r(1, 0, 5)),
            "",
            Some(Stop::Scope),
        ),
        (
            "scope beats budget",
            outside(spent("2.0", r(1, 1, 5))),
            budget,
            Some(Stop::Scope),
        ),
        (
            "clean beats budget",
            spent("2.0", r(1, 0, 5)),
            budget,
            Some(Stop::Rule(Rule::Clean)),
        ),
        (
            "budget beats the other rules",
            spent("1.0", capped.clone()),
            budget,
            Some(Stop::Budget),
        ),
        (
            "under the budget the rules decide",
            spent("0.99", capped.clone()),
            budget,
            Some(Stop::Rule(Rule::Reopened)),
        ),
        (
            "budget beats stalled",
            spent(
                "1.0",
                RoundFacts {
                    writer_idle: true,
                    must_fix_open_before: 1,
                    ..unreviewed(r(2, 1, 0))
                },
            ),
            budget,
            Some(Stop::Budget),
        ),
        (
            "tokens reach their cap too",
            RoundFacts {
                spent_tokens: 100,
                ..r(1, 1, 5)
            },
            "[budget]\ntokens = 100",
            Some(Stop::Budget),
        ),
        (
            "an unreviewed round with nothing open is not clean",
            unreviewed(r(1, 0, 5)),
            "",
            None,
        ),
        (
            "an unreviewed round meets no rule",
            unreviewed(capped),
            "",
            None,
        ),
    ];
    for (name, facts, extra, want) in table {
        assert_eq!(stop(&terms(extra, 3), &[facts]), want, "{name}");
    }

    let reason =
        |extra: &str, facts: RoundFacts| evaluate(&terms(extra, 3), &[facts]).unwrap().reason;
    assert_eq!(
        reason(
            "scope = [\"src/**\", \"*.md\"]",
            RoundFacts {
                out_of_scope: ids(&["docs/x.md", "a b/c"]),
                ..r(1, 1, 5)
            }
        ),
        "round 1: the patch touches 2 files outside the scope (`src/**`, `*.md`): `docs/x.md`, `a b/c`"
    );
    assert_eq!(
        reason(budget, spent("1.5", r(2, 1, 5))),
        "round 2: the loop spent $1.50 of its $1.00 budget"
    );
    assert_eq!(
        reason(budget, spent("1.5", unreviewed(r(2, 1, 5)))),
        "round 2: the loop spent $1.50 of its $1.00 budget before the review"
    );
    assert_eq!(
        reason(
            "[budget]\ntokens = 100",
            RoundFacts {
                spent_tokens: 120,
                ..r(2, 1, 5)
            }
        ),
        "round 2: the loop used 120 of its 100 budget tokens"
    );
}

/// SPEC §4.1 Exact sums: $0.70 + $0.20 + $0.10 reaches a $1.00 budget
/// (in floats it is 0.9999999999999999, and a fourth round gets paid).
#[test]
fn costs_add_exactly_to_the_budget() {
    let terms = terms("[budget]\nusd = 1.00", 6);
    let costs = ["0.70", "0.20", "0.10"].map(|c| c.parse::<Usd>().unwrap());
    let mut spent = Usd::ZERO;
    let mut rounds = Vec::new();
    for (i, cost) in costs.into_iter().enumerate() {
        spent = spent.saturating_add(cost);
        rounds.push(RoundFacts {
            spent_usd: spent,
            ..r(i as u32 + 1, 1, 5)
        });
        let want = (i == 2).then_some(Stop::Budget);
        assert_eq!(stop(&terms, &rounds), want, "round {}", i + 1);
    }
    assert_eq!(
        evaluate(&terms, &rounds).unwrap().reason,
        "round 3: the loop spent $1.00 of its $1.00 budget"
    );
    let sub_cent = RoundFacts {
        spent_usd: "0.999999".parse().unwrap(),
        ..r(3, 1, 5)
    };
    assert_eq!(stop(&terms, &[sub_cent]), None, "a micro-dollar short");
}

#[test]
fn a_rule_reads_as_its_ledger_name() {
    for rule in Rule::ALL {
        assert_eq!(rule.to_string(), rule.as_str());
    }
    assert_eq!(Rule::NitRound.to_string(), "nit-round");
}

/// `round_cap` alone (in `ORDER`, `clean` answers a round with no must-fix
/// left before it is asked): the cap stops only a loop with work left.
#[test]
fn the_round_cap_holds_only_a_loop_with_must_fix_left() {
    let t = terms("", 3);
    assert!(round_cap(&t, &[], &r(3, 0, 5)).is_none());
    assert!(round_cap(&t, &[], &r(3, 1, 5)).is_some());
    assert!(round_cap(&t, &[], &r(2, 1, 5)).is_none());
}
