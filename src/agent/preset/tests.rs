use super::*;

fn agent(toml_text: &str, role: &str) -> Agent {
    let text = format!("loop = \"t\"\n[{role}]\n{toml_text}");
    let c = crate::contract::Contract::from_toml(&text, "HEAD").unwrap();
    if role == "writer" {
        c.writer.unwrap()
    } else {
        c.reviewer.unwrap()
    }
}

fn files() -> Files {
    Files {
        prompt: "/w/prompt.md".into(),
        patch: "/w/patch.diff".into(),
        findings: "/w/findings.json".into(),
        schema: "/w/schema.json".into(),
        output: "/w/output".into(),
        procs: "/w/agent.procs".into(),
    }
}

fn call(agent: &Agent, role: Role, usd: Option<&str>) -> Call {
    let files = files();
    build(
        agent,
        &Context {
            role,
            loop_name: "l",
            round: 2,
            repo: Path::new("/repo"),
            prompt: "fix it; rm -rf / $(nope)",
            files: &files,
            schema: "{\"type\":\"object\"}",
            remaining_usd: usd.map(|u| u.parse().unwrap()),
            review_base: None,
        },
    )
}

fn argv(call: &Call) -> Vec<String> {
    std::iter::once(call.program.clone())
        .chain(call.args.iter().map(|a| a.to_string_lossy().into_owned()))
        .collect()
}

#[test]
fn claude_writer_accepts_edits_within_the_remaining_budget() {
    let a = agent(
        "preset = \"claude\"\nmodel = \"sonnet\"\nmax_turns = 30\nallowed_tools = [\"Read\", \"Edit\"]\nargs = [\"--verbose\"]",
        "writer",
    );
    let c = call(&a, Role::Writer, Some("1.234"));
    assert_eq!(
        argv(&c),
        [
            "claude",
            "-p",
            "--output-format",
            "json",
            "--permission-mode",
            "acceptEdits",
            "--max-budget-usd",
            "1.234",
            "--model",
            "sonnet",
            "--allowedTools",
            "Read,Edit",
            "--max-turns",
            "30",
            "--verbose"
        ]
    );
    assert_eq!(c.stdin.as_deref(), Some(&b"fix it; rm -rf / $(nope)"[..]));
}

/// What is left of the budget goes to claude exactly: never rounded to a
/// cent, which would let the call spend up to half a cent more than is left.
#[test]
fn claude_writer_is_given_the_remaining_budget_exactly() {
    let a = agent("preset = \"claude\"", "writer");
    for (left, shown) in [
        ("5", "5.00"),
        ("0.3", "0.30"),
        ("0.000123", "0.000123"),
        ("0", "0.00"),
    ] {
        let args = argv(&call(&a, Role::Writer, Some(left)));
        let at = args.iter().position(|a| a == "--max-budget-usd").unwrap();
        assert_eq!(args[at + 1], shown, "{left}");
    }
}

#[test]
fn claude_reviewer_plans_with_the_schema() {
    let a = agent("preset = \"claude\"\nbin = \"/opt/claude\"", "reviewer");
    let c = call(&a, Role::Reviewer, None);
    assert_eq!(
        argv(&c),
        [
            "/opt/claude",
            "-p",
            "--output-format",
            "json",
            "--permission-mode",
            "plan",
            "--json-schema",
            "{\"type\":\"object\"}"
        ]
    );
}

#[test]
fn codex_reads_the_prompt_from_stdin_last() {
    let a = agent("preset = \"codex\"\nmodel = \"gpt-5\"", "reviewer");
    let c = call(&a, Role::Reviewer, None);
    assert_eq!(
        argv(&c),
        [
            "codex",
            "exec",
            "--json",
            "--sandbox",
            "read-only",
            "--skip-git-repo-check",
            "-C",
            "/repo",
            "-o",
            "/w/output",
            "--output-schema",
            "/w/schema.json",
            "-m",
            "gpt-5",
            "-"
        ]
    );
    let w = agent("preset = \"codex\"", "writer");
    assert!(argv(&call(&w, Role::Writer, None)).contains(&"workspace-write".to_string()));
}

#[test]
fn codex_review_and_gemini() {
    let a = agent("preset = \"codex-review\"", "reviewer");
    assert_eq!(
        argv(&call(&a, Role::Reviewer, None)),
        ["codex", "exec", "-C", "/repo", "review", "--uncommitted"]
    );
    let g = agent("preset = \"gemini\"", "writer");
    let c = call(&g, Role::Writer, None);
    assert_eq!(
        argv(&c),
        [
            "gemini",
            "-p",
            "Follow the instructions given on standard input.",
            "--output-format",
            "json",
            "--skip-trust",
            "--approval-mode",
            "auto_edit"
        ]
    );
    assert_eq!(c.stdin.as_deref(), Some(&b"fix it; rm -rf / $(nope)"[..]));
}

#[test]
fn command_runs_the_contract_argv_with_the_referee_environment() {
    let a = agent(
        "preset = \"command\"\ncommand = [\"./agent.sh\", \"--fast\"]\nenv = { TOKEN_FILE = \"t\" }\ncwd = \"sub\"",
        "writer",
    );
    let c = call(&a, Role::Writer, None);
    assert_eq!(argv(&c), ["./agent.sh", "--fast"]);
    assert_eq!(c.cwd, Path::new("/repo/sub"));
    let env: std::collections::HashMap<_, _> = c.env.iter().cloned().collect();
    assert_eq!(env["REFEREE_ROUND"], "2");
    assert_eq!(env["REFEREE_ROLE"], "writer");
    assert_eq!(env["REFEREE_FINDINGS_FILE"], "/w/findings.json");
    assert_eq!(env["REFEREE_OUTPUT_FILE"], "/w/output");
    assert_eq!(env["TOKEN_FILE"], "t");
    assert!(!env.contains_key("REFEREE_PATCH_FILE"));
    let t = agent(
        "preset = \"tests\"\ncommand = [\"cargo\", \"test\"]\njunit = \"junit.xml\"",
        "reviewer",
    );
    let c = call(&t, Role::Reviewer, None);
    assert_eq!(c.stdin, None);
    assert!(c.env.iter().any(|(k, _)| k == "REFEREE_PATCH_FILE"));
}

/// The contract accepts a preset for exactly the roles and options its row
/// in the table names.
#[test]
fn the_contract_accepts_the_roles_and_options_each_row_names() {
    let options = [
        ("model", "\"m\""),
        ("bin", "\"b\""),
        ("allowed_tools", "[\"Read\"]"),
        ("max_turns", "3"),
        ("sandbox", "\"read-only\""),
        ("command", "[\"a\"]"),
        ("junit", "\"j.xml\""),
    ];
    for preset in Preset::ALL {
        let row = preset.info();
        let needed: Vec<(&str, &str)> = options
            .iter()
            .copied()
            .filter(|(name, _)| match preset {
                Preset::Command => *name == "command",
                Preset::Tests => ["command", "junit"].contains(name),
                _ => false,
            })
            .collect();
        let section = |extra: Option<(&str, &str)>| {
            let mut text = format!("preset = \"{}\"\n", preset.as_str());
            for (name, value) in needed.iter().copied().chain(extra) {
                text.push_str(&format!("{name} = {value}\n"));
            }
            text
        };
        for role in [Role::Writer, Role::Reviewer] {
            let text = format!("loop = \"t\"\n[{}]\n{}", role.as_str(), section(None));
            assert_eq!(
                crate::contract::Contract::from_toml(&text, "HEAD").is_ok(),
                row.roles.contains(&role),
                "{} as {}",
                preset.as_str(),
                role.as_str()
            );
        }
        // The options are tried in a section the preset may fill.
        let plays = if row.roles.contains(&Role::Reviewer) {
            Role::Reviewer
        } else {
            Role::Writer
        };
        for option in options {
            let extra = (!needed.contains(&option)).then_some(option);
            let text = format!("loop = \"t\"\n[{}]\n{}", plays.as_str(), section(extra));
            assert_eq!(
                crate::contract::Contract::from_toml(&text, "HEAD").is_ok(),
                row.options.contains(&option.0),
                "{} with `{}`",
                preset.as_str(),
                option.0
            );
        }
    }
}

/// A row that says it judges has a unit that builds the judge's call, and
/// the contract takes it as `[judge] engine`; no other row does either.
#[test]
fn the_presets_that_judge_are_the_rows_that_say_so() {
    let asked = JudgeCall {
        repo: Path::new("/repo"),
        model: None,
        prompt: "judge this",
        schema: "{}",
        schema_file: Path::new("/w/judge.schema.json"),
        output: Path::new("/w/judge.out"),
    };
    for preset in Preset::ALL {
        let judges = preset.info().judges;
        assert_eq!(
            unit(preset).judge_invocation(&asked).is_some(),
            judges,
            "{}",
            preset.as_str()
        );
        let text = format!("loop = \"t\"\n[judge]\nengine = \"{}\"\n", preset.as_str());
        let engine = crate::contract::Contract::from_toml(&text, "HEAD")
            .ok()
            .and_then(|c| c.judge)
            .map(|j| j.engine);
        // `command` is the judge's own engine, not the preset.
        if preset != Preset::Command {
            assert_eq!(
                engine == Some(crate::contract::JudgeEngine::Preset(preset)),
                judges,
                "{}",
                preset.as_str()
            );
        }
    }
}

#[test]
fn each_name_reads_back_as_its_preset() {
    for preset in Preset::ALL {
        assert_eq!(Preset::parse(preset.as_str()), Some(preset));
    }
    assert_eq!(Preset::parse("Claude"), None);
}

/// `codex exec review` prints only its explanation when it has nothing to
/// say: that is a clean review, but nothing at all is no review.
#[test]
fn codex_review_reads_an_explanation_alone_as_no_findings() {
    let clean = findings_of(
        Preset::CodexReview,
        b"I reviewed the change and found nothing to flag.\n",
        "/repo",
    )
    .unwrap();
    assert_eq!(clean.source_format, Format::Codex);
    assert!(clean.findings.is_empty() && clean.resolved.is_empty());
    assert!(findings_of(Preset::CodexReview, b" \n", "/repo").is_err());
    // Another reviewer's explanation alone proves nothing.
    assert!(
        findings_of(
            Preset::Codex,
            b"I reviewed the change and found nothing to flag.\n",
            "/repo"
        )
        .is_err()
    );
}

/// Each row of the table has its line in the overview and its own section in
/// docs/presets.md.
#[test]
fn each_preset_has_its_section_in_the_docs() {
    let doc = include_str!("../../../docs/presets.md");
    for preset in Preset::ALL {
        let name = preset.as_str();
        assert!(doc.contains(&format!("\n| `{name}` |")), "{name}: overview");
        assert!(doc.contains(&format!("\n### `{name}`")), "{name}: section");
    }
}
