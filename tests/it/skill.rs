//! `referee skill install`: the skill lands where the agents look, once.

use crate::common::{Repo, text};

#[test]
fn install_is_idempotent_and_keeps_agents_md() {
    let repo = Repo::new();
    repo.write("AGENTS.md", "# Rules\n\nRun `make test`.\n");
    let out = repo.referee().args(["skill", "install"]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "created: .claude/skills/loop-referee/SKILL.md\nupdated: AGENTS.md\n"
    );
    let skill = repo.read(".claude/skills/loop-referee/SKILL.md");
    assert!(skill.starts_with("---\nname: loop-referee\n"));
    let agents = repo.read("AGENTS.md");
    assert!(agents.starts_with("# Rules\n\nRun `make test`.\n\n<!-- referee:loop-referee:start"));
    let again = repo.referee().args(["skill", "install"]).output().unwrap();
    assert_eq!(
        text(&again.stdout),
        "unchanged: .claude/skills/loop-referee/SKILL.md\nunchanged: AGENTS.md\n"
    );
    assert_eq!(repo.read("AGENTS.md"), agents);

    let other = tempfile::tempdir().unwrap();
    let out = repo
        .referee()
        .args(["skill", "install", "--codex", "--dir"])
        .arg(other.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(other.path().join("AGENTS.md").is_file());
    assert!(!other.path().join(".claude").exists());
}

/// The guide's order, `skill install` then `init --scope 'src/**'`: the
/// skill's own files are in no round's patch, so round 1 does not stop on
/// `scope` because of them.
#[test]
fn the_skills_files_do_not_count_against_the_loop() {
    let repo = Repo::new();
    repo.write("AGENTS.md", "# Rules\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "agents"]);
    repo.referee().args(["skill", "install"]).assert().success();
    repo.referee()
        .args(["init", "--loop", "l", "--scope", "src/**"])
        .assert()
        .success();
    repo.write("src/a.rs", "fn a() {}\n");
    let out = repo
        .referee()
        .args(["record", "--json", "--findings", "-"])
        .write_stdin(r#"{"findings":[{"id":"F1","severity":"bug","title":"a is empty","file":"src/a.rs","line":1}]}"#)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(10),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        json["diff_added"], 1,
        "only src/a.rs is in the patch: {json}"
    );
}

/// The commands in the installed skill (SKILL.md and the `AGENTS.md`
/// section), as written: `referee` pieces of code spans and fenced blocks.
fn skill_commands(repo: &Repo) -> Vec<String> {
    let mut spans = Vec::new();
    for file in [".claude/skills/loop-referee/SKILL.md", "AGENTS.md"] {
        let doc = repo.read(file);
        let mut fenced = false;
        for line in doc.lines() {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                continue;
            }
            if fenced {
                spans.push(line.trim().to_string());
                continue;
            }
            spans.extend(line.split('`').skip(1).step_by(2).map(str::to_string));
        }
    }
    spans
        .iter()
        .flat_map(|s| {
            s.split(['|', ';'])
                .map(str::trim)
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter(|piece| piece.starts_with("referee "))
        .collect()
}

/// Every `referee` command the installed skill tells the agent to run
/// names a command and flags that exist, and every schema the reviewer
/// commands name is one `referee schema` prints: the skill once named
/// `contracts/findings.schema.json`, a file the user's repository lacks.
#[test]
fn the_installed_skills_commands_run_as_written() {
    let repo = Repo::new();
    repo.referee().args(["skill", "install"]).assert().success();
    let commands = skill_commands(&repo);
    assert!(commands.len() >= 8, "{commands:?}");
    for command in &commands {
        let words: Vec<&str> = command.split_whitespace().skip(1).collect();
        // The command's path: the words before its first flag or value.
        let path: Vec<&str> = words
            .iter()
            .take_while(|w| {
                w.chars().all(|c| c.is_ascii_lowercase() || c == '-') && !w.starts_with('-')
            })
            .copied()
            .collect();
        assert!(!path.is_empty(), "{command}");
        let help = repo.run(&[path.as_slice(), &["--help"]].concat());
        assert_eq!(
            help.code,
            0,
            "`referee {}` is no command ({command}): {}",
            path.join(" "),
            help.stderr
        );
        for flag in words.iter().filter(|w| w.starts_with("--")) {
            let flag = flag.split('=').next().unwrap_or(flag);
            assert!(
                help.stdout.contains(flag),
                "`{command}`: `referee {}` has no `{flag}`",
                path.join(" ")
            );
        }
    }
    let skill = repo.read(".claude/skills/loop-referee/SKILL.md") + &repo.read("AGENTS.md");
    assert!(!skill.contains("contracts/findings.schema.json"));
    assert!(skill.contains("referee schema > /tmp/findings.schema.json"));
    assert!(skill.contains("--output-schema /tmp/findings.schema.json"));
    assert!(skill.contains(r#"--json-schema "$(referee schema)""#));
    // What `referee schema` prints is the schema the presets pass.
    let printed = repo.run(&["schema"]);
    assert_eq!(printed.code, 0, "{}", printed.stderr);
    let printed: serde_json::Value = serde_json::from_str(&printed.stdout).unwrap();
    let mut shipped: serde_json::Value =
        serde_json::from_str(include_str!("../../contracts/findings.schema.json")).unwrap();
    let shipped_map = shipped.as_object_mut().unwrap();
    shipped_map.remove("$schema");
    shipped_map.remove("$id");
    assert_eq!(printed, shipped);
}
