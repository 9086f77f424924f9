use super::*;
use crate::contract::Contract;
use crate::findings::responses::{Response, Status};
use crate::findings::{Format, parse};
use crate::patch::fix_lines::FixLines;
use crate::rules::Guard;

fn contract(extra: &str) -> Contract {
    Contract::from_toml(&format!("loop = \"t\"\n{extra}"), "HEAD").unwrap()
}

fn usd(text: &str) -> Usd {
    text.parse().unwrap()
}

fn review(json: &str) -> Parsed {
    parse(json.as_bytes(), Format::Native, "/repo").unwrap()
}

const ONE_BUG: &str =
    r#"{"findings":[{"id":"F1","severity":"bug","title":"t","file":"a.rs","line":1}]}"#;
const CLEAN: &str = r#"{"findings":[]}"#;

fn patch(text: &str) -> ParsedPatch {
    crate::patch::parse(text.as_bytes())
}

const ADD: &str = "diff --git a/a.rs b/a.rs\n--- a/a.rs\n+++ b/a.rs\n@@ -1 +1 @@\n-old\n+new\n";
const UNDO: &str = "diff --git a/a.rs b/a.rs\n--- a/a.rs\n+++ b/a.rs\n@@ -1 +1 @@\n-new\n+old\n";

struct Case {
    terms: Terms,
    registry: Registry,
    earlier: Vec<Earlier>,
    parsed: Option<Parsed>,
    patch: ParsedPatch,
    files: Vec<String>,
    fix_lines: FixLines,
    spent: (Usd, u64),
    round: u32,
    responses: Vec<Response>,
    stalled: bool,
    diff: (u64, u64),
}

impl Case {
    fn new(extra: &str, parsed: Option<&str>) -> Self {
        let c = contract(extra);
        Case {
            terms: Terms::of(&c, c.max_rounds).unwrap(),
            registry: Registry::default(),
            earlier: Vec::new(),
            parsed: parsed.map(review),
            patch: patch(ADD),
            files: vec!["a.rs".into()],
            fix_lines: FixLines::default(),
            spent: (Usd::ZERO, 0),
            round: 1,
            responses: Vec::new(),
            stalled: false,
            diff: (1, 1),
        }
    }

    fn decide(&self) -> Decision {
        decide(
            &self.terms,
            Round {
                round: self.round,
                registry: std::borrow::Cow::Borrowed(&self.registry),
                earlier: &self.earlier,
                parsed: self.parsed.as_ref(),
                patch: &self.patch,
                diff_added: self.diff.0,
                diff_removed: self.diff.1,
                files: &self.files,
                fix_lines: std::borrow::Cow::Borrowed(&self.fix_lines),
                responses: &self.responses,
                same_problem: &[],
                stalled: self.stalled,
                spent_usd: self.spent.0,
                spent_tokens: self.spent.1,
            },
        )
    }
}

#[test]
fn scope_guard_stops_before_ingesting_and_names_the_files() {
    let mut case = Case::new("scope = [\"src/**\", \"*.md\"]", Some(ONE_BUG));
    case.files = vec!["src/a.rs".into(), "docs/x.md".into(), "README.md".into()];
    let d = case.decide();
    assert_eq!(d.stop, Some(Stop::Scope));
    assert_eq!(d.out_of_scope, vec!["docs/x.md"]);
    assert_eq!(d.counts.opened, 0, "findings are not ingested");
    assert!(d.registry.findings.is_empty());
    assert_eq!(
        d.reason,
        "round 1: the patch touches 1 file outside the scope (`src/**`, `*.md`): `docs/x.md`"
    );
}

#[test]
fn budget_stops_a_continuing_round_but_not_a_clean_one() {
    let mut case = Case::new("[budget]\nusd = 1.0", Some(ONE_BUG));
    case.spent = (usd("1.0"), 0);
    let d = case.decide();
    assert_eq!(d.stop, Some(Stop::Budget));
    assert_eq!(
        d.reason,
        "round 1: the loop spent $1.00 of its $1.00 budget"
    );
    assert_eq!(d.counts.opened, 1, "a reviewed round is ingested");

    let mut case = Case::new("[budget]\nusd = 1.0", Some(CLEAN));
    case.spent = (usd("5.0"), 0);
    assert_eq!(case.decide().stop, Some(Stop::Rule(Rule::Clean)));

    let mut case = Case::new("[budget]\ntokens = 100", Some(ONE_BUG));
    case.spent = (Usd::ZERO, 99);
    assert_eq!(case.decide().stop, None);
    case.spent = (Usd::ZERO, 100);
    assert_eq!(case.decide().stop, Some(Stop::Budget));
}

fn earlier(round: u32, diff_size: u64, must_fix_left: u32) -> Earlier {
    Earlier {
        round,
        diff_size,
        must_fix_left,
    }
}

fn two_earlier(case: &mut Case) {
    case.round = 3;
    case.earlier = vec![earlier(1, 2, 1), earlier(2, 2, 1)];
}

#[test]
fn reversing_a_fix_round_line_is_a_flip_flop() {
    let mut case = Case::new("max_rounds = 5", Some(ONE_BUG));
    two_earlier(&mut case);
    // Round 2 (a fix round) turned `old` into `new`; round 3 puts it back.
    case.patch = patch(UNDO);
    case.fix_lines.record(2, &patch(ADD));
    let d = case.decide();
    assert_eq!(d.stop, Some(Stop::Rule(Rule::FlipFlop)));
    assert_eq!(
        d.reason,
        "round 3: the writer's patch puts back a line that round 2 removed in `a.rs`: `old`"
    );
}

#[test]
fn undoing_round_one_at_the_reviewers_request_is_an_ordinary_fix() {
    // Round 1 wrote `new`: deciding it keeps nothing for reversals.
    let mut case = Case::new("max_rounds = 5", Some(ONE_BUG));
    let first = case.decide();
    assert!(first.fix_lines.is_empty());
    two_earlier(&mut case);
    case.fix_lines = first.fix_lines;
    case.patch = patch(UNDO);
    assert_eq!(case.decide().stop, None);
    // Round 2's same change is kept, and undoing it then is a flip-flop.
    case.round = 2;
    case.patch = patch(ADD);
    let second = case.decide();
    assert!(!second.fix_lines.is_empty());
    two_earlier(&mut case);
    case.fix_lines = second.fix_lines;
    case.patch = patch(UNDO);
    assert_eq!(case.decide().stop, Some(Stop::Rule(Rule::FlipFlop)));
}

#[test]
fn an_empty_patch_while_findings_are_open_is_stalled() {
    let mut case = Case::new("", Some(ONE_BUG));
    let first = case.decide();
    case.registry = first.registry;
    case.round = 2;
    case.patch = ParsedPatch::default();
    case.files = Vec::new();
    case.diff = (0, 0);
    let d = case.decide();
    assert_eq!(d.stop, Some(Stop::Progress(Guard::Stalled)));
    // A disputed finding is an answer: the reviewer gets its say.
    case.responses = vec![Response {
        id: "F1".into(),
        status: Status::Disputed,
        note: "the spec says so".into(),
    }];
    assert_eq!(case.decide().stop, Some(Stop::Progress(Guard::Disputed)));
    // Neither guard in force: the round continues.
    let c = contract("guards = []");
    case.terms = Terms::of(&c, c.max_rounds).unwrap();
    assert_eq!(case.decide().stop, None);
    // Under `run` the round ended before the review.
    let mut case = Case::new("", None);
    case.registry = first_registry();
    case.round = 2;
    case.stalled = true;
    case.patch = ParsedPatch::default();
    case.files = Vec::new();
    case.diff = (0, 0);
    let d = case.decide();
    assert_eq!(d.stop, Some(Stop::Progress(Guard::Stalled)));
    assert_eq!(
        d.reason,
        "round 2: the writer changed nothing while 1 must-fix finding was open and disputed none; the reviewer was not called"
    );
    // The guard the driver asked is the one `decide` applies: the same
    // facts, the same stop and reason.
    let pending = Pending {
        round: 2,
        files: &case.files,
        responses: &case.responses,
        spent_usd: Usd::ZERO,
        spent_tokens: 0,
        writer_ran: true,
    };
    let guarded = rules::evaluate(
        &case.terms,
        &[before_review(&case.terms, &case.registry, &pending)],
    );
    assert_eq!(
        guarded.map(|f| (f.stop, f.reason)),
        Some((d.stop.unwrap(), d.reason))
    );
    // Replayed under a contract without the guard, the round goes on.
    let c = contract("guards = [\"disputed\"]");
    case.terms = Terms::of(&c, c.max_rounds).unwrap();
    let d = case.decide();
    assert_eq!((d.stop, d.reason.as_str()), (None, "round 2: unreviewed"));
}

fn first_registry() -> Registry {
    Case::new("", Some(ONE_BUG)).decide().registry
}

#[test]
fn an_unreviewed_round_in_scope_continues_with_what_was_open() {
    let mut case = Case::new("", Some(ONE_BUG));
    let first = case.decide();
    case.registry = first.registry;
    case.parsed = None;
    case.round = 2;
    let d = case.decide();
    assert_eq!(d.stop, None);
    assert_eq!(d.counts.must_fix_left, 1);
    assert_eq!(d.reason, "round 2: unreviewed");
}

#[test]
fn reported_findings_carry_their_state() {
    let mut case = Case::new("", Some(ONE_BUG));
    let first = case.decide();
    assert_eq!(first.reported[0].state, Seen::New);
    assert!(first.reported[0].must_fix);
    case.registry = first.registry;
    case.round = 2;
    case.parsed = Some(review(
        r#"{"findings":[{"id":"F1","severity":"bug","title":"t2","file":"a.rs","line":1}]}"#,
    ));
    let second = case.decide();
    assert_eq!(second.reported[0].state, Seen::Open);
    assert!(second.reported[0].changed);
    assert_eq!(second.stop, None);
}

#[test]
fn stop_names_round_trip() {
    for name in [
        "scope",
        "budget",
        "clean",
        "reopened",
        "flip-flop",
        "diff-growth",
        "round-cap",
        "nit-round",
        "stalled",
        "disputed",
    ] {
        let stop = Stop::parse(name);
        assert!(!matches!(stop, Stop::Unknown(_)), "{name}");
        assert_eq!(stop.name(), name);
    }
    assert_eq!(Stop::parse("judge"), Stop::Unknown("judge".into()));
}

/// The rules read the earlier rounds' patch sizes and what they left open:
/// a patch that grew two rounds in a row while as much stayed open is
/// diff growth, and names the round with the fewest left (round 2 of the
/// three, the latest of a tie).
#[test]
fn earlier_rounds_reach_the_rules_with_their_size_and_what_they_left() {
    let mut case = Case::new("max_rounds = 10", Some(ONE_BUG));
    case.round = 3;
    case.earlier = vec![earlier(1, 2, 1), earlier(2, 3, 1)];
    // 3 added + 1 removed: a size of 4, after 2 and 3.
    case.diff = (3, 1);
    let d = case.decide();
    assert_eq!(d.stop, Some(Stop::Rule(Rule::DiffGrowth)), "{}", d.reason);
    assert_eq!(d.revert_to, Some(2), "{}", d.reason);
    assert!(
        d.reason.starts_with("round 3: the patch grew"),
        "{}",
        d.reason
    );
    // Fewer left two rounds back: the growth bought nothing, still growth.
    case.earlier[0].must_fix_left = 0;
    assert_eq!(case.decide().revert_to, Some(1));
    // More left two rounds back: the growth is a hard finding being fixed.
    case.earlier[0].must_fix_left = 3;
    assert_eq!(case.decide().stop, None);
}

/// The facts the guards are asked on before a review: what is open and
/// disputed in the registry, the spend so far, and whether the writer had
/// a turn that changed nothing.
#[test]
fn the_facts_before_a_review_are_the_registrys_and_the_rounds() {
    let terms = Case::new("", None).terms;
    let registry = first_registry();
    let disputed = [Response {
        id: "F1".into(),
        status: Status::Disputed,
        note: "by design".into(),
    }];
    let none: [String; 0] = [];
    let pending = Pending {
        round: 2,
        files: &none,
        responses: &disputed,
        spent_usd: usd("0.5"),
        spent_tokens: 70,
        writer_ran: true,
    };
    let facts = before_review(&terms, &registry, &pending);
    assert!(!facts.reviewed);
    assert_eq!((facts.round, facts.must_fix_left), (2, 1));
    assert_eq!((facts.spent_usd, facts.spent_tokens), (usd("0.5"), 70));
    assert!(facts.disputed_answered);
    assert!(facts.writer_idle, "the writer ran and changed nothing");
    let files = ["a.rs".to_string()];
    let changed = Pending {
        files: &files,
        responses: &[],
        ..pending
    };
    let facts = before_review(&terms, &registry, &changed);
    assert!(!facts.writer_idle && !facts.disputed_answered);
    let resumed = Pending {
        writer_ran: false,
        ..pending
    };
    assert!(!before_review(&terms, &registry, &resumed).writer_idle);
}

/// Three findings at `bug`, `block` and `nit` under the default floor `bug`.
const THREE: &str = r#"{"findings":[
    {"id":"F1","severity":"bug","title":"null deref in parse","file":"a.rs","line":1},
    {"id":"F2","severity":"block","title":"secret written to the log","file":"b.rs","line":5},
    {"id":"F3","severity":"nit","title":"typo in a comment","file":"c.rs","line":9}
]}"#;

/// What is open, counted by the floor: a must-fix finding at the floor
/// counts as must-fix, a closed one not at all.
#[test]
fn open_findings_are_counted_by_the_floor_and_only_while_open() {
    let registry = Case::new("", Some(THREE)).decide().registry;
    assert_eq!(open_counts(&registry, Severity::Bug), (2, 1));
    assert_eq!(open_counts(&registry, Severity::Block), (1, 2));
    assert_eq!(open_counts(&registry, Severity::Nit), (3, 0));
    let mut closed = registry.clone();
    closed.findings[0].standing = FindingStanding::Closed;
    assert_eq!(open_counts(&closed, Severity::Bug), (1, 1));
    // An unreviewed round counts what stays open the same way.
    let mut case = Case::new("", None);
    case.registry = registry;
    case.round = 2;
    let d = case.decide();
    assert_eq!((d.counts.must_fix_left, d.counts.below_floor_open), (2, 1));
}

/// A finding new in round 2 on lines round 2's patch changed was caused by
/// the fix; in round 1 there is no fix to have caused it.
#[test]
fn a_new_finding_on_lines_the_fix_changed_is_induced_from_round_two() {
    let new_here = r#"{"findings":[{"id":"F9","severity":"bug","title":"off by one in the new loop","file":"a.rs","line":1}]}"#;
    let first = Case::new("", Some(new_here)).decide();
    assert_eq!(first.reported[0].induced_by, None, "round 1 is no fix");
    let mut case = Case::new("max_rounds = 5", Some(new_here));
    case.round = 2;
    case.earlier = vec![earlier(1, 2, 1)];
    let d = case.decide();
    assert_eq!(d.reported[0].induced_by, Some(2));
}

/// The writer's turn is idle only when it changed nothing at all: a round
/// whose patch has no text lines but touches a file (a mode change, a
/// binary) did something.
#[test]
fn a_patch_without_lines_that_touches_a_file_is_no_idle_turn() {
    let mut case = Case::new("", Some(ONE_BUG));
    case.registry = first_registry();
    case.round = 2;
    case.patch = ParsedPatch::default();
    case.diff = (0, 0);
    case.files = vec!["a.bin".into()];
    assert_eq!(case.decide().stop, None, "the writer changed a.bin");
    case.files = Vec::new();
    assert_eq!(
        case.decide().stop,
        Some(Stop::Progress(Guard::Stalled)),
        "nothing changed"
    );
}

/// The must-fix findings a nit round leaves unconfirmed are named only on a
/// nit round; on any other round they are the rules' business, not the
/// decision's.
#[test]
fn carried_findings_are_named_only_on_a_nit_round() {
    let explicit = "closure = \"explicit\"\nmax_rounds = 5";
    let mut case = Case::new(explicit, Some(ONE_BUG));
    case.registry = Case::new(explicit, Some(ONE_BUG)).decide().registry;
    case.round = 2;
    case.earlier = vec![earlier(1, 2, 1)];
    case.parsed = Some(review(
        r#"{"findings":[{"id":"N1","severity":"nit","title":"typo in the readme","file":"r.md","line":3}]}"#,
    ));
    let d = case.decide();
    assert_eq!(d.stop, Some(Stop::Rule(Rule::NitRound)), "{}", d.reason);
    assert_eq!(d.carried_unconfirmed.len(), 1);
    // The same carried finding with a must-fix one reported: no nit round.
    case.parsed = Some(review(
        r#"{"findings":[{"id":"N2","severity":"bug","title":"leaks the file handle","file":"z.rs","line":3}]}"#,
    ));
    let d = case.decide();
    assert_eq!(d.stop, None, "{}", d.reason);
    assert!(d.carried_unconfirmed.is_empty());
}
