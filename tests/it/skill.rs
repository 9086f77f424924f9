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
