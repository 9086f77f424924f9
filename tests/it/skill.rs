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
