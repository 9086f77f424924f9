use super::*;

fn parse(text: &str) -> Result<Contract, ContractError> {
    Contract::from_toml(text, "HEAD")
}

#[test]
fn minimal_contract_takes_every_default() {
    let c = parse("loop = \"x\"").unwrap();
    assert_eq!(
        c,
        Contract::with_defaults(LoopName::parse("x").unwrap(), "HEAD".into())
    );
    assert_eq!(c.max_rounds, 3);
    assert_eq!(c.severity_floor, Severity::Bug);
    assert_eq!(c.scope, vec!["**"]);
    assert_eq!(c.closure, Closure::Absent);
}

#[test]
fn rendered_contract_reads_back_the_same() {
    let text = r#"
loop = "full"
max_rounds = 7
severity_floor = "should"
scope = ["src/**", "a \"quoted\" dir/*.rs"]
closure = "explicit"
base = "abc123"
[budget]
usd = 2.5
tokens = 100000
[writer]
preset = "command"
command = ["python3", "fake.py", "--x=$(y)"]
env = { A_B = "1", "with space" = "v" }
args = ["--flag"]
timeout = "1h30m"
[reviewer]
preset = "tests"
command = ["cargo", "test"]
junit = "target/junit.xml"
[judge]
engine = "command"
command = ["judge"]
model = "small"
max_state_bytes = 1000
"#;
    let c = parse(text).unwrap();
    let again = parse(&render::to_toml(&c)).unwrap();
    assert_eq!(c, again);
    assert_eq!(again.writer.unwrap().timeout.to_string(), "1h30m");
}

#[test]
fn bad_values_name_field_value_and_allowed() {
    let table: &[(&str, &str)] = &[
        (
            "max_rounds = 0",
            "field `max_rounds`: must be a whole number 1..=100, not `0`",
        ),
        (
            "max_rounds = 101",
            "field `max_rounds`: must be a whole number 1..=100, not `101`",
        ),
        (
            "max_rounds = \"3\"",
            "field `max_rounds`: must be a whole number 1..=100, not the string `\"3\"`",
        ),
        (
            "severity_floor = \"urgent\"",
            "field `severity_floor`: must be one of nit, should, bug, block (or an alias), not the string `\"urgent\"`",
        ),
        (
            "scope = []",
            "field `scope`: must be a non-empty list of globs, not `[]`",
        ),
        (
            "scope = \"src/**\"",
            "field `scope`: must be a list of strings, not the string `\"src/**\"`",
        ),
        (
            "scope = [\"a[\"]",
            "field `scope`: must be a list of valid globs",
        ),
        (
            "closure = \"never\"",
            "field `closure`: must be `absent` or `explicit`, not the string `\"never\"`",
        ),
        (
            "base = \"\"",
            "field `base`: must be a git revision, not the string `\"\"`",
        ),
        (
            "colour = 1",
            "field `colour` is unknown; allowed here: loop, max_rounds",
        ),
        (
            "[budget]\nusd = -1",
            "field `budget.usd`: must be a number > 0, not `-1`",
        ),
        (
            "[budget]\nusd = nan",
            "field `budget.usd`: must be a number > 0, not the number `nan`",
        ),
        (
            "[budget]\ntokens = 0",
            "field `budget.tokens`: must be a whole number >= 1, not `0`",
        ),
        (
            "[budget]\ndollars = 1",
            "field `budget.dollars` is unknown; allowed here: usd, tokens",
        ),
        (
            "[writer]\npreset = \"gpt\"",
            "field `writer.preset`: must be one of claude, codex, codex-review, gemini, command, tests, not the string `\"gpt\"`",
        ),
        (
            "[writer]\npreset = \"tests\"\ncommand = [\"x\"]",
            "field `writer.preset`: must be a writer preset",
        ),
        (
            "[writer]\npreset = \"command\"",
            "field `writer.command` is required",
        ),
        (
            "[writer]\npreset = \"command\"\ncommand = []",
            "field `writer.command`: must be a non-empty list of strings",
        ),
        (
            "[writer]\npreset = \"claude\"\ncommand = [\"x\"]",
            "field `writer.command`: must be absent",
        ),
        (
            "[writer]\npreset = \"claude\"\ntimeout = \"soon\"",
            "field `writer.timeout`: must be a duration",
        ),
        (
            "[writer]\npreset = \"claude\"\nenv = { A = 1 }",
            "field `writer.env.A`: must be a table of NAME = \"value\" strings, not `1`",
        ),
        (
            "[reviewer]\npreset = \"claude\"\njunit = \"x.xml\"",
            "field `reviewer.junit`: must be absent",
        ),
        (
            "[reviewer]\nmodel = \"x\"",
            "field `reviewer.preset` is required",
        ),
        (
            "[reviewer]\npreset = \"codex\"\nflags = []",
            "field `reviewer.flags` is unknown",
        ),
        (
            "[judge]\nengine = \"oracle\"",
            "field `judge.engine`: must be one of replay, command, claude, codex",
        ),
        (
            "[judge]\nengine = \"replay\"",
            "field `judge.replay` is required",
        ),
        (
            "[judge]\nengine = \"command\"\ncommand = [\"j\"]\nmax_state_bytes = 1",
            "field `judge.max_state_bytes`: must be a whole number 256..=16777216, not `1`",
        ),
        ("writer = 3", "field `writer`: must be a table, not `3`"),
        (
            "[reviewer]\npreset = \"tests\"\ncommand = [\"pytest\"]",
            "field `reviewer.junit` is required",
        ),
        (
            "[writer]\npreset = \"claude\"\nsandbox = \"read-only\"",
            "field `writer.sandbox`: must be absent: the `claude` preset does not use `sandbox`",
        ),
        (
            "[writer]\npreset = \"codex\"\nmax_turns = 3",
            "field `writer.max_turns`: must be absent: the `codex` preset does not use `max_turns`",
        ),
        (
            "[writer]\npreset = \"command\"\ncommand = [\"x\"]\nmodel = \"m\"",
            "field `writer.model`: must be absent: the `command` preset does not use `model`",
        ),
        (
            "[writer]\npreset = \"claude\"\ncwd = \"../other\"",
            "field `writer.cwd`: must be a folder inside the repository",
        ),
    ];
    for (body, expected) in table {
        let text = format!("loop = \"x\"\n{body}\n");
        let err = parse(&text).unwrap_err().to_string();
        assert!(
            err.starts_with(expected),
            "for {body:?}\n  got: {err}\n want: {expected}"
        );
    }
}

#[test]
fn loop_is_required_and_checked() {
    assert_eq!(
        parse("max_rounds = 2").unwrap_err().to_string(),
        "field `loop` is required (a loop name `[a-z0-9][a-z0-9._-]{0,63}`)"
    );
    assert!(
        parse("loop = \"Bad Name\"")
            .unwrap_err()
            .to_string()
            .starts_with("field `loop`: must be a loop name")
    );
}

#[test]
fn syntax_errors_are_one_line() {
    let err = parse("loop = \"x\"\nmax_rounds = = 3\n")
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("not valid TOML: "), "{err}");
    assert!(!err.contains('\n'), "{err}");
}
