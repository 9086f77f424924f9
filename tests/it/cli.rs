//! The command line as a whole: help, version, exit codes of usage errors.

use crate::common::{Repo, text};

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
        "hook",
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

#[test]
fn completions_for_every_shell_and_a_man_page() {
    let repo = Repo::new();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = repo
            .referee()
            .args(["completions", shell])
            .output()
            .unwrap();
        assert!(out.status.success(), "{shell}");
        assert!(text(&out.stdout).contains("referee"), "{shell}");
    }
    let man = repo.referee().arg("man").output().unwrap();
    let man = text(&man.stdout);
    assert!(man.contains(".TH referee 1"), "{man}");
    assert!(man.contains("approval"), "every subcommand is listed");
}

#[test]
fn color_follows_the_flag_and_no_color() {
    let repo = Repo::new();
    repo.referee()
        .args(["init", "--loop", "l", "--max-rounds", "1"])
        .assert()
        .success();
    repo.write("a.txt", "x\n");
    repo.referee()
        .args(["record", "--findings", "-"])
        .write_stdin(r#"{"findings":[{"severity":"bug","title":"x"}]}"#)
        .assert()
        .code(20);
    let esc = "\u{1b}[";
    let always = repo
        .referee()
        .args(["--color", "always", "escalate"])
        .output()
        .unwrap();
    assert!(text(&always.stdout).starts_with(&format!("{esc}1;31mloop `l` stopped")));
    let never = repo
        .referee()
        .args(["--color", "never", "escalate"])
        .output()
        .unwrap();
    assert!(!text(&never.stdout).contains(esc));
    // Not a terminal, and NO_COLOR set: plain either way.
    let auto = repo
        .referee()
        .args(["escalate"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(!text(&auto.stdout).contains(esc));
    let bad = repo
        .referee()
        .args(["--color", "sometimes", "status"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn a_closed_pipe_exits_quietly() {
    let repo = Repo::new();
    let mut child = repo
        .referee_std()
        .args(["completions", "bash"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stderr), "");
}

#[test]
fn outside_git_the_current_folder_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = assert_cmd::Command::cargo_bin("referee")
        .unwrap()
        .current_dir(dir.path())
        .env("GIT_CEILING_DIRECTORIES", dir.path().parent().unwrap())
        .args(["init", "--loop", "y"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).starts_with("error: `.` is not inside a git work tree"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stderr).ends_with("hint: run `git init` first\n"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn every_subcommand_has_its_man_page_with_the_exit_status() {
    for args in [
        &["man"][..],
        &["man", "record"],
        &["man", "ledger", "verify"],
        &["man", "hook", "stop"],
    ] {
        let out = assert_cmd::Command::cargo_bin("referee")
            .unwrap()
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}");
        let page = String::from_utf8_lossy(&out.stdout);
        let name = args[1..]
            .iter()
            .fold(String::from("referee"), |n, w| format!("{n}\\-{w}"));
        assert!(
            page.contains(&format!(".SH NAME\n{name} ")),
            "{args:?}: {page}"
        );
        assert!(page.contains(".SH \"EXIT STATUS\""), "{args:?}");
        assert!(page.contains("\\fB20\\fR"), "{args:?}");
    }
    let out = assert_cmd::Command::cargo_bin("referee")
        .unwrap()
        .args(["man", "nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let help = assert_cmd::Command::cargo_bin("referee")
        .unwrap()
        .args(["record", "--help"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&help.stdout).contains("20  the loop stopped and was escalated")
    );
}

#[test]
fn completions_offer_loop_names_and_finding_ids() {
    let repo = crate::common::Repo::new();
    for lp in ["auth", "billing"] {
        repo.referee()
            .args(["init", "--loop", lp])
            .assert()
            .success();
    }
    repo.write("src/a.rs", "x\n");
    repo.referee()
        .args(["record", "--loop", "auth", "--findings", "-"])
        .write_stdin(
            r#"{"findings":[{"id":"F7","severity":"bug","title":"t","file":"src/a.rs","line":1}]}"#,
        )
        .assert()
        .code(10);
    let out = repo.referee().args(["complete", "loops"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "auth\nbilling\n");
    let out = repo
        .referee()
        .args(["complete", "ids", "--loop", "auth"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "F7\n");
    // Through bash itself, as at the prompt.
    let bin = assert_cmd::cargo::cargo_bin("referee");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let script = repo
        .referee()
        .args(["completions", "bash"])
        .output()
        .unwrap()
        .stdout;
    std::fs::write(repo.join("c.bash"), script).unwrap();
    let ask = |words: &str, cword: usize| {
        let out = std::process::Command::new("bash")
            .current_dir(repo.path())
            .env("PATH", &path)
            .arg("-c")
            .arg(format!(
                "source c.bash; COMP_WORDS=({words}); COMP_CWORD={cword}; _referee_dynamic referee; echo \"${{COMPREPLY[*]}}\""
            ))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(ask("referee status --loop ''", 3), "auth billing");
    assert_eq!(ask("referee waive --loop auth ''", 4), "F7");

    // fish, through its own completion engine.
    if crate::common::needs("fish", "apt-get install fish") {
        let script = repo
            .referee()
            .args(["completions", "fish"])
            .output()
            .unwrap()
            .stdout;
        std::fs::write(repo.join("c.fish"), script).unwrap();
        let ask = |line: &str| {
            let out = std::process::Command::new("fish")
                .current_dir(repo.path())
                .env("PATH", &path)
                .arg("-c")
                .arg(format!("source c.fish; complete -C '{line}'"))
                .output()
                .unwrap();
            let mut words: Vec<String> = String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(|l| l.split('\t').next().unwrap_or_default().to_string())
                .collect();
            words.sort();
            words.join(" ")
        };
        assert_eq!(ask("referee status --loop "), "auth billing");
        assert_eq!(ask("referee waive --loop auth "), "F7");
    }
    // zsh: its functions, with compsys's `_describe` standing in.
    if crate::common::needs("zsh", "apt-get install zsh") {
        let script = repo
            .referee()
            .args(["completions", "zsh"])
            .output()
            .unwrap()
            .stdout;
        let script = String::from_utf8(script).unwrap();
        assert!(script.contains("]:LOOP:_referee_loops'"));
        assert!(script.contains("s id:_referee_ids'"));
        std::fs::write(repo.join("c.zsh"), &script).unwrap();
        let ask = |words: &str, current: usize, function: &str| {
            let out = std::process::Command::new("zsh")
                .current_dir(repo.path())
                .env("PATH", &path)
                .arg("-fc")
                .arg(format!(
                    "compdef() {{ :; }}; _describe() {{ print -r -- ${{(P)2}} }}; source c.zsh; \
                     words=({words}); CURRENT={current}; {function}"
                ))
                .output()
                .unwrap();
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        };
        assert_eq!(
            ask("referee status --loop ''", 4, "_referee_loops"),
            "auth billing"
        );
        assert_eq!(ask("referee waive --loop auth ''", 5, "_referee_ids"), "F7");
        assert_eq!(
            ask("referee waive --loop=billing ''", 4, "_referee_ids"),
            ""
        );
    }
}

#[test]
fn help_names_the_dir_variable_without_a_value() {
    let repo = Repo::new();
    for set in [None, Some("/somewhere/else")] {
        let mut cmd = repo.referee();
        cmd.arg("--help");
        if let Some(dir) = set {
            cmd.env("REFEREE_DIR", dir);
        }
        let help = text(&cmd.output().unwrap().stdout);
        // Wrapped or not, the variable is named and no value follows it.
        let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains("[env: REFEREE_DIR]"), "{set:?}: {help}");
        assert!(!help.contains("REFEREE_DIR="), "{set:?}: {help}");
        assert!(!help.contains("/somewhere/else"), "{set:?}: {help}");
    }
}

#[test]
fn the_hidden_complete_command_is_offered_nowhere() {
    let repo = Repo::new();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = repo
            .referee()
            .args(["completions", shell])
            .output()
            .unwrap();
        let script = text(&out.stdout);
        for offered in [
            "What the completion scripts ask for",
            "subcmd__complete",
            "referee;complete",
        ] {
            assert!(
                !script.contains(offered),
                "{shell} offers `complete`: {offered}"
            );
        }
        // The visible commands are still offered.
        assert!(script.contains("approval"), "{shell}");
    }
    let bash = text(
        &repo
            .referee()
            .args(["completions", "bash"])
            .output()
            .unwrap()
            .stdout,
    );
    let top = bash
        .lines()
        .find(|l| l.contains("opts=\"-h -V --dir --color --help --version init "))
        .expect("the top-level word list");
    assert!(!top.contains(" complete "), "{top}");
    assert!(top.contains(" completions man "), "{top}");
    // The dynamic completions still ask it.
    assert!(bash.contains("referee complete loops"));
    let out = repo.referee().args(["man", "nope"]).output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(err.contains("`completions`, `man`"), "{err}");
    assert!(!err.contains("`complete`"), "{err}");
}

#[test]
fn a_man_page_lists_the_exit_codes_once() {
    let repo = Repo::new();
    for command in ["run", "record"] {
        let page = text(
            &repo
                .referee()
                .args(["man", command])
                .output()
                .unwrap()
                .stdout,
        );
        assert_eq!(
            page.matches("the loop stopped and was escalated").count(),
            1,
            "{command}: {page}"
        );
        assert!(!page.contains("Exit status:"), "{command}: {page}");
        assert!(page.contains(".SH \"EXIT STATUS\""), "{command}");
        assert!(
            page.contains("\\fB130\\fR") && page.contains("\\fB143\\fR"),
            "{command}"
        );
        // `--help` keeps them, after the options.
        let help = text(
            &repo
                .referee()
                .args([command, "--help"])
                .output()
                .unwrap()
                .stdout,
        );
        assert!(
            help.contains("Exit status:\n  0   the loop ended done"),
            "{help}"
        );
        assert!(
            help.contains("  130 run: ended by Ctrl-C (SIGINT)"),
            "{help}"
        );
    }
}

#[test]
fn init_suggests_what_can_drive_the_loop_it_wrote() {
    let repo = Repo::new();
    let next = |args: &[&str]| {
        let out = repo.referee().arg("init").args(args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
        let stdout = text(&out.stdout);
        stdout[stdout.find("next: ").expect("a next step")..].to_string()
    };
    // A reviewer alone: the Stop hook of the person's own session, or record.
    assert_eq!(
        next(&["--loop", "a", "--reviewer", "codex"]),
        "next: `referee hook install --agent claude --loop a` (or `--agent codex`) referees your own agent session at each stop;\n      or `referee record --loop a --findings FILE` after each review\n"
    );
    // Both agents: run, the hook for the writer's CLI, or record.
    assert_eq!(
        next(&["--loop", "b", "--writer", "codex", "--reviewer", "claude"]),
        "next: `referee run --loop b --task TEXT` drives both agents;\n      `referee hook install --agent codex --loop b` referees your own agent session at each stop;\n      or `referee record --loop b --findings FILE` after each review\n"
    );
    // No reviewer: only record (the hook and run need one).
    assert_eq!(
        next(&["--loop", "c", "--writer", "claude"]),
        "next: `referee record --loop c --findings FILE` after each review\n"
    );
    // Each suggested command line parses.
    for line in [
        &["hook", "install", "--agent", "claude", "--loop", "a"][..],
        &["record", "--loop", "a", "--findings", "FILE"],
        &["run", "--loop", "b", "--task", "TEXT"],
    ] {
        let parsed = <referee::cmd::cli::Cli as clap::Parser>::try_parse_from(
            std::iter::once("referee").chain(line.iter().copied()),
        );
        assert!(parsed.is_ok(), "{line:?}");
    }
}

/// The guides are built in: a hint or a contract comment points at
/// `referee docs TOPIC`, never at a `docs/` file an installed referee lacks.
#[test]
fn the_guides_are_built_in_and_every_pointer_names_one() {
    let repo = Repo::new();
    let list = repo.referee().args(["docs"]).output().unwrap();
    assert!(list.status.success());
    let list = String::from_utf8_lossy(&list.stdout).to_string();
    assert!(list.contains("contract    The loop contract"), "{list}");
    let page = repo.referee().args(["docs", "contract"]).output().unwrap();
    assert!(String::from_utf8_lossy(&page.stdout).starts_with("# The loop contract"));
    let none = repo.referee().args(["docs", "nope"]).output().unwrap();
    assert_eq!(none.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&none.stderr)
            .contains("no guide `nope`; the guides: guide, contract")
    );
    // Every pointer in the sources names a guide; no user-facing string
    // names a `docs/` file.
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut stack = vec![root.join("src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") || path.ends_with("tests.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for (n, line) in text.lines().enumerate() {
                let code = line.trim_start();
                // A file's own tests follow its `#[cfg(test)]`.
                if code.starts_with("#[cfg(test)]") {
                    break;
                }
                if code.starts_with("//") {
                    continue;
                }
                if let Some(at) = code.find("referee docs ") {
                    let topic: String = code[at + 13..]
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                        .collect();
                    if topic != "TOPIC" && !topic.is_empty() {
                        assert!(
                            list.contains(&format!("  {topic} ")),
                            "{}:{}: `referee docs {topic}` is no guide",
                            path.display(),
                            n + 1
                        );
                    }
                }
                let names_file =
                    code.contains("\"") && code.contains("docs/") && code.contains(".md");
                assert!(
                    !names_file || code.contains("include_str!"),
                    "{}:{}: a user-facing string names a docs/ file: {code}",
                    path.display(),
                    n + 1
                );
            }
        }
    }
}

/// `referee docs rules | head`: the reader closes the pipe after a few
/// lines, and referee ends quietly, not with a panic.
#[test]
fn a_guide_piped_into_head_ends_quietly() {
    use std::io::Read;
    let bin = assert_cmd::cargo::cargo_bin("referee");
    let mut child = std::process::Command::new(bin)
        .args(["docs", "rules"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 64];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // The read end is dropped here: rules.md is larger than a pipe holds.
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(first.starts_with(b"# Stop rules"));
}

/// `init` on a work tree with uncommitted changes says that round 1 will
/// count them, and how to start from them or set them aside; the stash it
/// offers keeps the new contract.
#[test]
fn init_on_a_dirty_tree_says_what_round_one_will_count() {
    let repo = Repo::new();
    let clean = repo.run(&["init", "--loop", "a"]);
    assert_eq!(clean.code, 0, "{}", clean.stderr);
    assert!(!clean.stderr.contains("note:"), "{}", clean.stderr);
    repo.append("README.md", "mine");
    repo.write("draft.md", "my notes\n");
    let out = repo.run(&["init", "--loop", "b"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "note: 2 files in the work tree differ from the last commit (`README.md`, `draft.md`): round 1's patch counts them as the writer's work"
        ),
        "{}",
        out.stderr
    );
    let stash = out
        .stderr
        .split("set them aside before round 1: `")
        .nth(1)
        .and_then(|rest| rest.split('`').next())
        .expect("a stash command");
    let ran = std::process::Command::new("bash")
        .args(["-c", stash])
        .current_dir(repo.path())
        .envs(crate::common::GIT_ENV.iter().copied())
        .output()
        .expect("bash");
    assert!(ran.status.success(), "{stash}: {}", text(&ran.stderr));
    assert!(repo.path().join(".referee/contracts/b.toml").is_file());
    assert!(!repo.path().join("draft.md").exists());
    let again = repo.run(&["init", "--loop", "c"]);
    assert!(!again.stderr.contains("note:"), "{}", again.stderr);
}

/// A command asked for JSON answers an error in JSON on stdout too (the
/// `error:` line stays on stderr): a script or skill reads one stream.
#[test]
fn an_error_is_json_on_stdout_when_json_was_asked() {
    let repo = Repo::with_loop("l", &[]);
    repo.append("src/a.rs", "one");
    repo.record(r#"{"findings": []}"#).run().assert(0, "clean");
    for args in [
        &["approval", "check", "--json"][..],
        &["status", "--loop", "zz", "--json"],
        &["ledger", "show", "--loop", "zz", "--format", "json"],
        &["escalate", "--loop", "zz", "--format=json"],
    ] {
        let out = repo.run(args);
        assert_eq!(out.code, 1, "{args:?}: {}", out.stderr);
        let doc: serde_json::Value = serde_json::from_str(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {:?}", out.stdout));
        let message = doc["error"]["message"].as_str().unwrap();
        assert!(
            out.stderr.starts_with(&format!("error: {message}")),
            "{args:?}: {}",
            out.stderr
        );
        assert_eq!(doc["error"]["exit"], 1);
        assert!(doc["error"]["hints"].is_array());
    }
    let out = repo.run(&["approval", "check", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["error"]["message"], "loop `l` has no approval");
    assert_eq!(
        doc["error"]["hints"],
        serde_json::json!(["a person approves with `referee approve --loop l --by NAME`"])
    );
    // Without it, stdout stays empty; `record --format` names the input.
    let out = repo.run(&["status", "--loop", "zz"]);
    assert_eq!((out.code, out.stdout.as_str()), (1, ""));
    let out = repo.record("{").args(&["--format", "native"]).run();
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(out.stdout, "");
}
