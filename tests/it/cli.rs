//! The command line as a whole: help, version, exit codes of usage errors.

use crate::common::Repo;

#[test]
fn help_lists_every_spec_command() {
    let repo = Repo::new();
    let out = repo.referee().arg("--help").assert().success();
    let help = crate::common::text(&out.get_output().stdout);
    for command in [
        "init",
        "run",
        "record",
        "parse",
        "status",
        "ledger",
        "escalate",
        "contract",
        "waive",
        "findings",
        "replay",
        "approve",
        "reject",
        "approval",
        "report",
        "completions",
    ] {
        assert!(
            help.contains(&format!("  {command} ")),
            "{command} missing from:\n{help}"
        );
    }
}

#[test]
fn usage_errors_exit_2() {
    let repo = Repo::new();
    repo.referee().arg("--no-such-flag").assert().code(2);
    repo.referee()
        .args(["ledger", "show", "--format", "yaml"])
        .assert()
        .code(2);
}

#[test]
fn completions_print_a_script() {
    let repo = Repo::new();
    let out = repo
        .referee()
        .args(["completions", "bash"])
        .assert()
        .success();
    assert!(crate::common::text(&out.get_output().stdout).contains("_referee()"));
}
