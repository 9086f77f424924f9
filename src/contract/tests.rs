use super::*;

/// The contract `text` holds, or its error without the line it is on.
fn parse(text: &str) -> Result<Contract, ContractError> {
    placed(text).map_err(ContractError::unplaced)
}

/// The contract `text` holds, or its error as `from_toml` places it.
fn placed(text: &str) -> Result<Contract, ContractError> {
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
            "[budget]\nusd = 0",
            "field `budget.usd`: must be a number > 0, not `0`",
        ),
        (
            "[budget]\nusd = 0.0000001",
            "field `budget.usd`: must be at least 0.000001 (a micro-dollar), not the number `0.0000001`",
        ),
        (
            "[budget]\nusd = 2e9",
            "field `budget.usd`: must be at most 1000000000 (a billion US dollars), not the number `2000000000.0`",
        ),
        (
            "[budget]\nusd = \"1\"",
            "field `budget.usd`: must be a number > 0, not the string `\"1\"`",
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
fn a_syntax_error_keeps_the_parsers_layout_with_the_line_and_a_caret() {
    let err = placed("loop = \"x\"\nmax_rounds = = 3\n")
        .unwrap_err()
        .to_string();
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines[0], "not valid TOML at line 2, column 14", "{err}");
    assert_eq!(lines[2], "2 | max_rounds = = 3", "{err}");
    assert_eq!(lines[3].trim_end(), "  |              ^", "{err}");
    assert!(lines.len() > 4, "{err}");
    assert!(!err.ends_with('\n'), "{err}");
}

#[test]
fn a_refused_field_is_named_with_its_line() {
    let err = placed("loop = \"x\"\n\nmax_rounds = 0\n").unwrap_err();
    assert_eq!(err.field(), Some("max_rounds"));
    assert!(
        err.to_string()
            .starts_with("line 3: field `max_rounds`: must be"),
        "{err}"
    );
    let err = placed("loop = \"x\"\n[reviewer]\npreset = \"codex\"\nmodle = \"o3\"\n").unwrap_err();
    assert!(
        err.to_string().starts_with(
            "line 4: field `reviewer.modle` is unknown; did you mean `model`? allowed here: preset, model,"
        ),
        "{err}"
    );
    let err = placed("max_rounds = 3").unwrap_err();
    assert!(
        err.to_string().starts_with("field `loop` is required"),
        "{err}"
    );
}

#[test]
fn an_unknown_key_one_slip_from_an_allowed_one_is_told_which() {
    let err = placed("loop = \"x\"\nmax_round = 4\n")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(
            "line 2: field `max_round` is unknown; did you mean `max_rounds`? allowed here: loop, max_rounds,"
        ),
        "{err}"
    );
    let err = placed("loop = \"x\"\ncolour = 4\n")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("line 2: field `colour` is unknown; allowed here:"),
        "{err}"
    );
}

#[test]
fn an_error_placed_in_one_text_can_be_placed_again_in_another() {
    let err = placed("loop = \"x\"\nmax_rounds = 0\n").unwrap_err();
    let unplaced = err.clone().unplaced();
    assert!(
        unplaced.to_string().starts_with("field `max_rounds`"),
        "{unplaced}"
    );
    let again = err.placed_in("# the template\nloop = \"x\"\n\nmax_rounds = 0\n");
    assert!(
        again.to_string().starts_with("line 4: field `max_rounds`"),
        "{again}"
    );
    let nowhere = unplaced.placed_in("loop = \"x\"\n");
    assert!(
        nowhere.to_string().starts_with("field `max_rounds`"),
        "{nowhere}"
    );
}

/// The fields a serde struct reads, as its derive lists them.
fn fields_of<'de, T: serde::Deserialize<'de>>() -> &'static [&'static str] {
    struct Fields(Option<&'static [&'static str]>);
    impl<'de> serde::Deserializer<'de> for &mut Fields {
        type Error = serde::de::value::Error;
        fn deserialize_any<V: serde::de::Visitor<'de>>(
            self,
            _: V,
        ) -> Result<V::Value, Self::Error> {
            Err(serde::de::Error::custom("only structs"))
        }
        fn deserialize_struct<V: serde::de::Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            self.0 = Some(fields);
            Err(serde::de::Error::custom("listed"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
            bytes byte_buf option unit unit_struct newtype_struct seq tuple
            tuple_struct map enum identifier ignored_any
        }
    }
    let mut fields = Fields(None);
    let _ = T::deserialize(&mut fields);
    fields.0.unwrap_or(&[])
}

/// `render` writes each field by hand; a field the structs read but `init`
/// would not write fails here.
#[test]
fn render_writes_every_field_the_contract_reads() {
    let mut c = Contract::with_defaults(LoopName::parse("x").unwrap(), "HEAD".into());
    c.budget = Budget {
        usd: Some("1.0".parse().unwrap()),
        tokens: Some(2),
    };
    let s = |t: &str| Some(t.to_string());
    let v = |t: &str| vec![t.to_string()];
    let agent = Agent {
        model: s("m"),
        bin: s("b"),
        args: v("a"),
        env: [("K".to_string(), "v".to_string())].into(),
        command: Some(v("c")),
        junit: s("j.xml"),
        cwd: s("d"),
        allowed_tools: v("t"),
        max_turns: Some(2),
        sandbox: s("s"),
        empty_report: EmptyReport::Clean,
        ..Agent::new(Preset::Claude)
    };
    c.writer = Some(agent.clone());
    c.reviewer = Some(agent.clone());
    // `[reviewer]` and `[[reviewers]]` are one or the other: a panel is
    // written from a second contract.
    let mut p = c.clone();
    p.reviewer = None;
    p.reviewers = vec![agent::Member {
        name: "a".into(),
        agent,
    }];
    p.panel = Panel {
        quorum: Some(1),
        veto: Veto::Majority,
    };
    c.judge = Some(Judge {
        engine: JudgeEngine::Replay,
        replay: s("r.json"),
        command: Some(v("c")),
        model: s("m"),
        bin: s("b"),
        args: v("a"),
        env: [("K".to_string(), "v".to_string())].into(),
        use_case: "u".into(),
        what: "w".into(),
        questions: s("q.json"),
        max_state_bytes: 300,
        timeout: Timeout::DEFAULT,
    });
    c.prompt = Prompts {
        writer: s("w"),
        reviewer: s("r"),
        writer_file: s("w.md"),
        reviewer_file: s("r.md"),
    };
    let mut written: toml::Table = toml::from_str(&render::to_toml(&c)).unwrap();
    let panel: toml::Table = toml::from_str(&render::to_toml(&p)).unwrap();
    for section in ["reviewers", "panel"] {
        written.insert(section.into(), panel[section].clone());
    }
    let keys = |table: &toml::Table| {
        let mut keys: Vec<String> = table.keys().cloned().collect();
        keys.sort();
        keys
    };
    let sorted = |fields: &[&str]| {
        let mut fields: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
        fields.sort();
        fields
    };
    let read: Vec<&str> = fields_of::<Contract>()
        .iter()
        .chain(fields_of::<raw::Sections>())
        .copied()
        .collect();
    assert_eq!(keys(&written), sorted(&read));
    let settings: Vec<&str> = SETTINGS.iter().map(|(key, _)| *key).collect();
    let scalars: Vec<&str> = fields_of::<Contract>()
        .iter()
        .copied()
        .filter(|key| *key != "budget" && !raw::SECTIONS.contains(key))
        .collect();
    assert_eq!(
        sorted(&settings),
        sorted(&scalars),
        "SETTINGS lists each setting"
    );
    // Only a panel's entries are named.
    let lone: &[&str] = &fields_of::<agent::RawAgent>()[1..];
    assert_eq!(fields_of::<agent::RawAgent>()[0], "name");
    for (section, fields) in [
        ("budget", fields_of::<Budget>()),
        ("writer", lone),
        ("reviewer", lone),
        ("judge", fields_of::<agent::RawJudge>()),
        ("prompt", fields_of::<raw::RawPrompts>()),
    ] {
        let table = written[section].as_table().unwrap();
        assert_eq!(keys(table), sorted(fields), "[{section}]");
    }
    let entry = written["reviewers"].as_array().unwrap()[0]
        .as_table()
        .unwrap();
    assert_eq!(
        keys(entry),
        sorted(fields_of::<agent::RawAgent>()),
        "[[reviewers]]"
    );
    let terms = written["panel"].as_table().unwrap();
    assert_eq!(keys(terms), sorted(fields_of::<raw::RawPanel>()), "[panel]");
}

#[test]
fn values_as_written_reach_the_message() {
    let table: &[(&str, &str)] = &[
        (
            "base = 1979-05-27",
            "field `base`: must be a string, not the date `1979-05-27`",
        ),
        (
            "[writer]\npreset = \"claude\"\nmodel = 1979-05-27T07:32:00Z",
            "field `writer.model`: must be a non-empty string, not the date `1979-05-27T07:32:00Z`",
        ),
        (
            "[judge]\nengine = \"claude\"\nenv = { TOKEN = 1979-05-27 }",
            "field `judge.env.TOKEN`: must be a table of NAME = \"value\" strings, not the date `1979-05-27`",
        ),
        (
            "[writer]\npreset = \"claude\"\nenv = 1979-05-27",
            "field `writer.env`: must be a table of NAME = \"value\" strings, not the date `1979-05-27`",
        ),
        (
            "guards = [\"stalled\", 2]",
            "field `guards`: must be a list of strings, not the item `2`",
        ),
        (
            "guards = [\"stuck\"]",
            "field `guards`: must be a list of progress guards: `stalled`, `disputed` (`[]` for none), not `stuck`",
        ),
        ("budget = [1]", "field `budget`: must be a table, not `[1]`"),
        (
            "max_rounds = true",
            "field `max_rounds`: must be a whole number 1..=100, not the boolean `true`",
        ),
        (
            "loop = \"Bad Name\"",
            "field `loop`: must be a loop name: it must match",
        ),
        (
            // A misspelt key is named before a bad value in the same table.
            "[reviewer]\npreset = \"gpt\"\nflags = []",
            "field `reviewer.flags` is unknown; allowed here: preset, model, bin, args, env, timeout, command, junit, cwd, allowed_tools, max_turns, sandbox",
        ),
        (
            "[judge]\nmodel = \"m\"",
            "field `judge.engine` is required (one of replay, command, claude, codex)",
        ),
        (
            "[prompt]\nreviewer = \"r\"\nreviewer_file = \"r.md\"",
            "field `prompt.reviewer_file`: must be one of the two: an inline template or a file, not set together with `prompt.reviewer`",
        ),
    ];
    for (body, expected) in table {
        let text = if body.starts_with("loop") {
            body.to_string()
        } else {
            format!("loop = \"x\"\n{body}\n")
        };
        let err = parse(&text).unwrap_err().to_string();
        assert!(
            err.starts_with(expected),
            "for {body:?}\n  got: {err}\n want: {expected}"
        );
    }
}

#[test]
fn each_closure_reads_back_from_the_word_it_is_shown_as() {
    for closure in [Closure::Absent, Closure::Explicit] {
        let text = format!("loop = \"x\"\nclosure = \"{}\"", closure.as_str());
        assert_eq!(parse(&text).unwrap().closure, closure);
    }
}

#[test]
fn the_guards_are_written_with_when_each_stops_a_loop() {
    let c = Contract::with_defaults(LoopName::parse("x").unwrap(), "HEAD".into());
    let text = render::to_toml(&c);
    assert!(
        text.contains(
            "\n# progress guards: stalled (an empty patch while must-fix findings are open), disputed (a disputed finding reported again)\nguards = "
        ),
        "{text}"
    );
}

#[test]
fn a_contract_without_prompts_is_written_without_a_prompt_table() {
    let c = Contract::with_defaults(LoopName::parse("x").unwrap(), "HEAD".into());
    let written: toml::Table = toml::from_str(&render::to_toml(&c)).unwrap();
    assert!(!written.contains_key("prompt"), "{written:?}");
}

#[test]
fn the_files_a_contract_names_come_with_their_fields() {
    let c = parse(
        "loop = \"x\"\n[prompt]\nwriter_file = \"w.md\"\nreviewer_file = \"r.md\"\n\
         [judge]\nengine = \"replay\"\nreplay = \"answers.json\"\nquestions = \"q.json\"\n",
    )
    .unwrap();
    assert_eq!(
        c.named_files(),
        [
            ("prompt.writer_file", "w.md"),
            ("prompt.reviewer_file", "r.md"),
            ("judge.questions", "q.json"),
            ("judge.replay", "answers.json"),
        ]
    );
    let command =
        parse("loop = \"x\"\n[judge]\nengine = \"command\"\ncommand = [\"j\"]\n").unwrap();
    assert!(
        command.named_files().is_empty(),
        "a command judge reads no answers file"
    );
}

#[test]
fn an_unknown_key_is_told_what_its_own_table_allows() {
    assert_eq!(
        parse("loop = \"x\"\ncolour = 1").unwrap_err().to_string(),
        "field `colour` is unknown; allowed here: loop, max_rounds, severity_floor, scope, closure, budget, guards, base, writer, reviewer, reviewers, panel, judge, prompt"
    );
    assert_eq!(
        parse("loop = \"x\"\n[budget]\ndollars = 1")
            .unwrap_err()
            .to_string(),
        "field `budget.dollars` is unknown; allowed here: usd, tokens"
    );
}

#[test]
fn a_prompt_may_be_inline_for_one_role_and_a_file_for_the_other() {
    let c = parse("loop = \"x\"\n[prompt]\nwriter = \"w\"\nreviewer_file = \"r.md\"\n").unwrap();
    assert_eq!(
        c.prompt,
        Prompts {
            writer: Some("w".into()),
            reviewer_file: Some("r.md".into()),
            ..Prompts::default()
        }
    );
}

#[test]
fn a_list_of_more_than_eight_items_is_shown_by_its_length() {
    let refused = |list: &str| {
        parse(&format!("loop = \"x\"\nmax_rounds = {list}"))
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        refused("[1, 2, 3, 4, 5, 6, 7, 8, 9]"),
        "field `max_rounds`: must be a whole number 1..=100, not a list of 9 items"
    );
    assert_eq!(
        refused("[1, 2, 3, 4, 5, 6, 7, 8]"),
        "field `max_rounds`: must be a whole number 1..=100, not `[1, 2, 3, 4, 5, 6, 7, 8]`"
    );
}

#[test]
fn a_budget_in_whole_dollars_needs_no_decimal_point() {
    let c = parse("loop = \"x\"\n[budget]\nusd = 2\n").unwrap();
    assert_eq!(c.budget.usd, Some(Usd::parse("2").unwrap()));
}

#[test]
fn a_blank_string_is_no_text() {
    for body in [
        "[writer]\npreset = \"claude\"\nmodel = \"  \"",
        "[judge]\nengine = \"claude\"\nuse_case = \"\"",
    ] {
        let err = parse(&format!("loop = \"x\"\n{body}\n"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("must be a non-empty string"),
            "for {body:?}: {err}"
        );
    }
}

#[test]
fn a_base_is_kept_as_written() {
    assert_eq!(parse("loop = \"x\"\nbase = \"v1.2\"").unwrap().base, "v1.2");
}

#[test]
fn a_file_the_contract_names_must_stay_inside_the_repository() {
    for path in [
        "/etc/hostname",
        r"\\server\share",
        "~/answers.json",
        r"C:\answers.json",
        "../answers.json",
        "judge/../../answers.json",
        r"judge\..\..\answers.json",
    ] {
        let text = format!("loop = \"x\"\n[judge]\nengine = \"replay\"\nreplay = '{path}'\n");
        let err = parse(&text).unwrap_err().to_string();
        assert!(
            err.starts_with("field `judge.replay`: must be a file inside the repository"),
            "for {path:?}: {err}"
        );
    }
    let inside = "loop = \"x\"\n[judge]\nengine = \"replay\"\nreplay = 'judge/answers..json'\n";
    assert_eq!(
        parse(inside).unwrap().judge.unwrap().replay.as_deref(),
        Some("judge/answers..json")
    );
}

#[test]
fn a_command_must_name_its_program() {
    for command in ["[\"\"]", "[\" \", \"test\"]"] {
        let text = format!("loop = \"x\"\n[writer]\npreset = \"command\"\ncommand = {command}\n");
        let err = parse(&text).unwrap_err().to_string();
        assert!(
            err.starts_with("field `writer.command`: must be a non-empty list of strings (program, then its arguments)"),
            "for {command}: {err}"
        );
    }
}

#[test]
fn an_environment_variable_needs_a_name_a_process_can_take_and_a_value_without_nul() {
    for entry in [
        "\"\" = \"1\"",
        "\"A=B\" = \"1\"",
        "\"A\\u0000B\" = \"1\"",
        "1A = \"1\"",
        "A = \"x\\u0000y\"",
    ] {
        let text = format!("loop = \"x\"\n[writer]\npreset = \"claude\"\nenv = {{ {entry} }}\n");
        let err = parse(&text).unwrap_err().to_string();
        assert!(
            err.starts_with("field `writer.env.")
                && err.contains("must be a table of NAME = \"value\" strings"),
            "for {entry}: {err}"
        );
    }
    let c =
        parse("loop = \"x\"\n[writer]\npreset = \"claude\"\nenv = { A_1 = \"1\", _b = \"\" }\n")
            .unwrap();
    let env = c.writer.unwrap().env;
    let expected = [("A_1", "1"), ("_b", "")].map(|(k, v)| (k.to_string(), v.to_string()));
    assert_eq!(env, expected.into());
}

const PANEL: &str = r#"
loop = "p"

[[reviewers]]
name = "codex"
preset = "codex"

[[reviewers]]
name = "claude"
preset = "claude"
model = "sonnet"

[panel]
quorum = 1
veto = "majority"
"#;

#[test]
fn a_panel_names_each_reviewer_and_its_quorum_and_veto() {
    let c = parse(PANEL).unwrap();
    let names: Vec<&str> = c.panel_reviewers().iter().map(|(n, _)| *n).collect();
    assert_eq!(names, ["codex", "claude"]);
    assert!(c.is_panel());
    assert_eq!(c.reviewers[1].agent.model.as_deref(), Some("sonnet"));
    assert_eq!(c.panel.quorum, Some(1));
    assert_eq!(c.panel.veto, Veto::Majority);
    let back = parse(&render::to_toml(&c)).unwrap();
    assert_eq!(back, c, "{}", render::to_toml(&c));
    let lone = parse("loop = \"x\"\n[reviewer]\npreset = \"codex\"\n").unwrap();
    assert_eq!(lone.panel_reviewers()[0].0, "reviewer");
    assert!(!lone.is_panel());
    assert_eq!(lone.panel, Panel::default());
}

#[test]
fn a_panel_is_refused_with_the_entry_and_field_named() {
    let err = |text: &str| placed(text).unwrap_err().to_string();
    let unnamed = PANEL.replacen("name = \"claude\"\n", "", 1);
    assert!(
        err(&unnamed).contains("field `reviewers[1].name` is required"),
        "{}",
        err(&unnamed)
    );
    let twice = PANEL.replacen("name = \"claude\"", "name = \"codex\"", 1);
    let shown = err(&twice);
    assert!(
        shown.contains("line 9: field `reviewers[1].name`"),
        "{shown}"
    );
    assert!(shown.contains("the name of `reviewers[0]` too"), "{shown}");
    let typo = PANEL.replacen("model = \"sonnet\"", "modle = \"sonnet\"", 1);
    let shown = err(&typo);
    assert!(
        shown.contains("line 11: field `reviewers[1].modle` is unknown; did you mean `model`?"),
        "{shown}"
    );
    let bad_name = PANEL.replacen("name = \"claude\"", "name = \"Claude Code\"", 1);
    assert!(
        err(&bad_name).contains("lowercase letters"),
        "{}",
        err(&bad_name)
    );
    let too_many = PANEL.replacen("quorum = 1", "quorum = 3", 1);
    assert!(
        err(&too_many).contains(
            "field `panel.quorum`: must be at most the 2 reviewers the contract names, not 3"
        ),
        "{}",
        err(&too_many)
    );
    let veto = PANEL.replacen("\"majority\"", "\"all\"", 1);
    assert!(
        err(&veto).contains("field `panel.veto`: must be `any`"),
        "{}",
        err(&veto)
    );
    let both = format!("{PANEL}\n[reviewer]\npreset = \"codex\"\n");
    assert!(
        err(&both).contains("field `reviewers`: must be one of the two"),
        "{}",
        err(&both)
    );
    let named = "loop = \"x\"\n[reviewer]\nname = \"a\"\npreset = \"codex\"\n";
    assert!(
        err(named).contains("field `reviewer.name`: must be absent"),
        "{}",
        err(named)
    );
    let writer = "loop = \"x\"\n[[reviewers]]\nname = \"a\"\npreset = \"claude\"\n[[reviewers]]\nname = \"b\"\npreset = \"tests\"\n";
    assert!(
        err(writer).contains("reviewers[1].command"),
        "{}",
        err(writer)
    );
    let lone_quorum = "loop = \"x\"\n[reviewer]\npreset = \"codex\"\n[panel]\nquorum = 2\n";
    assert!(
        err(lone_quorum).contains("at most the 1 reviewer the contract names"),
        "{}",
        err(lone_quorum)
    );
    // Without reviewers a panel's terms are for `record --findings NAME=FILE`.
    let c = parse("loop = \"x\"\n[panel]\nquorum = 2\n").unwrap();
    assert_eq!(c.panel.quorum, Some(2));
}

#[test]
fn an_empty_test_report_is_clean_only_where_the_tests_preset_says_so() {
    let tests =
        "loop = \"x\"\n[reviewer]\npreset = \"tests\"\ncommand = [\"pytest\"]\njunit = \"r.xml\"\n";
    let c = parse(tests).unwrap();
    assert_eq!(
        c.reviewer.as_ref().unwrap().empty_report,
        EmptyReport::Refuse
    );
    let clean = parse(&format!("{tests}empty_report = \"clean\"\n")).unwrap();
    assert_eq!(
        clean.reviewer.as_ref().unwrap().empty_report,
        EmptyReport::Clean
    );
    assert_eq!(parse(&render::to_toml(&clean)).unwrap(), clean);
    let err = |text: &str| placed(text).unwrap_err().to_string();
    let wrong = err(&format!("{tests}empty_report = \"ok\"\n"));
    assert!(
        wrong.starts_with("line 6: field `reviewer.empty_report`: must be `refuse`"),
        "{wrong}"
    );
    let codex = err("loop = \"x\"\n[reviewer]\npreset = \"codex\"\nempty_report = \"clean\"\n");
    assert!(
        codex.contains("field `reviewer.empty_report`: must be absent: only the `tests` preset reads a test report"),
        "{codex}"
    );
}
