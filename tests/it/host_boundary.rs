//! The host's boundary (SPEC §8.2, docs/hooks.md): what `hook install`
//! asks Claude Code and Codex to enforce around the writer (deny rules, the
//! sandbox, a read-only profile), what `hook uninstall` takes out again,
//! what `referee doctor` says is in force, and the freeze lists kept in the
//! per-user state folder, where a writer cannot plant one.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::{Repo, text};

/// `referee ARGS` in `repo` with `home` as HOME and the per-user state
/// folder in its default place below it (`~/.local/state/referee`), and
/// `path` first on PATH when given.
fn referee_at(repo: &Repo, home: &Path, path: Option<&Path>, args: &[&str]) -> (i32, String) {
    let mut cmd = repo.referee_std();
    cmd.env("HOME", home)
        .env_remove("REFEREE_STATE_DIR")
        .env_remove("XDG_STATE_HOME")
        .env_remove("CODEX_HOME")
        .args(args);
    if let Some(dir) = path {
        let old = std::env::var("PATH").unwrap_or_default();
        cmd.env("PATH", format!("{}:{old}", dir.display()));
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "referee {args:?}\nstdout:\n{}\nstderr:\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text(&out.stdout))
}

/// A repository with a loop, and a HOME for its referee calls.
fn project() -> (Repo, tempfile::TempDir) {
    let repo = Repo::new();
    let home = tempfile::tempdir().unwrap();
    referee_at(&repo, home.path(), None, &["init", "--loop", "l"]);
    (repo, home)
}

const PERSONS: [&str; 13] = [
    "init",
    "run",
    "record",
    "ledger repair",
    "contract amend",
    "contract restore",
    "resume",
    "waive",
    "approve",
    "reject",
    "skill install",
    "hook install",
    "hook uninstall",
];

fn expected_deny() -> Vec<String> {
    let mut rules: Vec<String> = [
        "Edit(.referee/**)",
        "Edit(.git/**)",
        "Edit(.claude/settings.json)",
        "Edit(.claude/settings.local.json)",
        "Edit(~/.claude/settings.json)",
        "Edit(~/.local/state/referee/**)",
    ]
    .map(String::from)
    .to_vec();
    rules.extend(PERSONS.iter().map(|c| format!("Bash(referee {c}:*)")));
    rules
}

/// `referee hook install --agent claude --program referee` in `repo`: its
/// exit status and what it printed.
fn install_claude(repo: &Repo, home: &Path) -> (i32, String) {
    referee_at(
        repo,
        home,
        None,
        &[
            "hook",
            "install",
            "--agent",
            "claude",
            "--program",
            "referee",
        ],
    )
}

fn settings(repo: &Repo) -> Value {
    serde_json::from_str(&repo.read(".claude/settings.json")).unwrap()
}

#[test]
fn install_writes_the_deny_rules_and_uninstall_takes_out_exactly_those() {
    let (repo, home) = project();
    let original = "{\n  \"permissions\": {\n    \"deny\": [\"Bash(rm -rf:*)\"]\n  },\n  \"model\": \"opus\"\n}\n";
    repo.write(".claude/settings.json", original);
    let (_, out) = install_claude(&repo, home.path());
    assert!(out.contains("`permissions.deny` holds 19 rules"), "{out}");
    assert!(
        out.contains("no sandbox: under `bypassPermissions`"),
        "{out}"
    );
    let value = settings(&repo);
    let deny: Vec<String> = value["permissions"]["deny"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    let mut want = vec!["Bash(rm -rf:*)".to_string()];
    want.extend(expected_deny());
    assert_eq!(deny, want);
    // The rules the CLIs were seen to ignore or to break on are not there.
    assert!(!deny.iter().any(|r| r.starts_with("Write(")), "{deny:?}");
    assert!(!deny.contains(&"Edit(.claude/**)".to_string()));
    // No sandbox without `--sandbox`.
    assert!(value.get("sandbox").is_none(), "{value}");

    // Again: nothing changes.
    let installed = repo.read(".claude/settings.json");
    let (_, again) = install_claude(&repo, home.path());
    assert!(
        again.starts_with("unchanged `.claude/settings.json`"),
        "{again}"
    );
    assert_eq!(repo.read(".claude/settings.json"), installed);

    // Straight after: the bytes come back.
    referee_at(
        &repo,
        home.path(),
        None,
        &["hook", "uninstall", "--agent", "claude"],
    );
    assert_eq!(repo.read(".claude/settings.json"), original);

    // After the person edited the file: their rules stay, referee's go.
    install_claude(&repo, home.path());
    let mut value = settings(&repo);
    value["permissions"]["deny"]
        .as_array_mut()
        .unwrap()
        .push(json!("Bash(curl:*)"));
    value["theme"] = json!("dark");
    repo.write(
        ".claude/settings.json",
        &serde_json::to_string_pretty(&value).unwrap(),
    );
    referee_at(
        &repo,
        home.path(),
        None,
        &["hook", "uninstall", "--agent", "claude"],
    );
    assert_eq!(
        settings(&repo),
        json!({"permissions": {"deny": ["Bash(rm -rf:*)", "Bash(curl:*)"]},
               "model": "opus", "theme": "dark"})
    );
}

#[test]
fn the_sandbox_flag_writes_claudes_sandbox_and_uninstall_removes_what_it_made() {
    let (repo, home) = project();
    let (_, out) = referee_at(
        &repo,
        home.path(),
        None,
        &[
            "hook",
            "install",
            "--agent",
            "claude",
            "--sandbox",
            "--json",
        ],
    );
    let answer: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(answer["sandbox"], true, "{answer}");
    assert_eq!(answer["result"], "created");
    let value = settings(&repo);
    assert_eq!(
        value["sandbox"],
        json!({"enabled": true, "failIfUnavailable": true, "allowUnsandboxedCommands": false,
               "filesystem": {"denyWrite": ["./.referee", "./.git"]}})
    );
    // The hook's program is this build's path, not `referee` on PATH: its
    // commands are denied under that name too.
    let deny = value["permissions"]["deny"].as_array().unwrap();
    assert_eq!(
        deny.len(),
        expected_deny().len() + PERSONS.len(),
        "{deny:?}"
    );
    assert!(
        deny.iter()
            .any(|r| r.as_str().unwrap().ends_with("/referee waive:*)")),
        "{deny:?}"
    );
    // A person's sandbox setting kept through an uninstall after edits.
    let mut edited = value.clone();
    edited["sandbox"]["network"] = json!({"allowLocalBinding": true});
    repo.write(
        ".claude/settings.json",
        &serde_json::to_string_pretty(&edited).unwrap(),
    );
    referee_at(
        &repo,
        home.path(),
        None,
        &["hook", "uninstall", "--agent", "claude"],
    );
    assert_eq!(
        settings(&repo),
        json!({"sandbox": {"network": {"allowLocalBinding": true}}})
    );
}

#[test]
fn codex_gets_a_read_only_profile_for_the_state_folder_and_loses_it_again() {
    let (repo, home) = project();
    let original = "model = \"gpt-5.5\"\n\n[features]\nhooks = true\n";
    repo.write(".codex/config.toml", original);
    let (_, out) = referee_at(
        &repo,
        home.path(),
        None,
        &["hook", "install", "--agent", "codex"],
    );
    assert!(
        out.contains("`.codex/config.toml` makes the permission profile `referee` the default"),
        "{out}"
    );
    assert!(out.contains("trust_level = \"trusted\""), "{out}");
    let config: toml::Table = toml::from_str(&repo.read(".codex/config.toml")).unwrap();
    assert_eq!(config["default_permissions"].as_str(), Some("referee"));
    assert_eq!(
        config["permissions"]["referee"]["extends"].as_str(),
        Some(":workspace")
    );
    assert_eq!(
        config["permissions"]["referee"]["filesystem"][":workspace_roots"][".referee"].as_str(),
        Some("read")
    );
    assert_eq!(config["model"].as_str(), Some("gpt-5.5"));
    referee_at(
        &repo,
        home.path(),
        None,
        &["hook", "uninstall", "--agent", "codex"],
    );
    assert_eq!(repo.read(".codex/config.toml"), original);

    // The person's own default profile is theirs: referee says what to add.
    repo.write(".codex/config.toml", "default_permissions = \"mine\"\n");
    let (_, out) = referee_at(
        &repo,
        home.path(),
        None,
        &["hook", "install", "--agent", "codex"],
    );
    assert!(
        out.contains("makes `mine` the default permission profile: referee left it"),
        "{out}"
    );
    assert!(
        out.contains("hint: add `\".referee\" = \"read\"` to `[permissions.mine.filesystem.\":workspace_roots\"]`"),
        "{out}"
    );
    assert_eq!(
        repo.read(".codex/config.toml"),
        "default_permissions = \"mine\"\n"
    );
}

/// A folder of stand-in programs: `bwrap` and `socat` that do nothing, a
/// `claude` that prints a version, and a `codex` that hangs.
fn fake_tools() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in [
        ("bwrap", "exit 0"),
        ("socat", "exit 0"),
        ("claude", "echo '2.1.332 (Claude Code)'"),
        ("codex", "exec sleep 60"),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir
}

fn doctor_json(repo: &Repo, home: &Path, path: Option<&Path>) -> Value {
    let (_, out) = referee_at(repo, home, path, &["doctor", "--json"]);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn agent<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["agent"] == name)
        .unwrap()
}

fn place<'a>(agent: &'a Value, starts: &str) -> &'a Value {
    agent["places"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["place"].as_str().unwrap().starts_with(starts))
        .unwrap_or_else(|| panic!("no place {starts} in {agent}"))
}

#[test]
fn doctor_on_a_repository_without_the_hook_says_nothing_holds() {
    let (repo, home) = project();
    let report = doctor_json(&repo, home.path(), None);
    let claude = agent(&report, "claude");
    assert_eq!(claude["hook"], Value::Null);
    assert!(
        claude["deny"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["present"] == false)
    );
    assert_eq!(place(claude, ".referee/")["writable_by_agent"], true);
    let codex = agent(&report, "codex");
    assert_eq!(codex["profile"], false);
    assert_eq!(place(codex, ".referee/")["writable_by_agent"], true);
    let (code, out) = referee_at(&repo, home.path(), None, &["doctor"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("claude: no referee hook installed: nothing referees its stops"),
        "{out}"
    );
    assert!(
        out.contains("hint: `referee hook install --agent claude`"),
        "{out}"
    );
    assert!(
        out.contains("  hook: not installed in `.codex/hooks.json`"),
        "{out}"
    );
}

#[test]
fn doctor_names_each_deny_rule_and_what_the_shell_still_reaches_without_a_sandbox() {
    let (repo, home) = project();
    install_claude(&repo, home.path());
    let report = doctor_json(&repo, home.path(), None);
    let claude = agent(&report, "claude");
    assert!(
        claude["hook"]
            .as_str()
            .unwrap()
            .contains("hook stop --agent claude --project ")
    );
    let rules: Vec<(&str, bool)> = claude["deny"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["rule"].as_str().unwrap(), r["present"].as_bool().unwrap()))
        .collect();
    let want = expected_deny();
    assert_eq!(
        rules,
        want.iter().map(|r| (r.as_str(), true)).collect::<Vec<_>>()
    );
    // The tools are denied, but the shell is not sandboxed.
    let state = place(claude, ".referee/");
    assert_eq!(state["writable_by_agent"], true);
    assert!(
        state["why"]
            .as_str()
            .unwrap()
            .contains("the Edit/Write tools are denied (`Edit(.referee/**)`)"),
        "{state}"
    );
    assert_eq!(claude["sandbox"], Value::Null);
    let (_, out) = referee_at(&repo, home.path(), None, &["doctor"]);
    assert!(
        out.contains("  present `Edit(~/.local/state/referee/**)`"),
        "{out}"
    );
    assert!(
        out.contains("  sandbox: not configured: Bash runs unsandboxed"),
        "{out}"
    );
    assert!(
        out.contains("claude: a writer with a shell can still write `.referee/`"),
        "{out}"
    );
    assert!(
        out.contains("because no sandbox holds Claude Code's Bash"),
        "{out}"
    );
}

#[test]
fn doctor_with_the_sandbox_and_its_tools_says_the_state_is_out_of_reach() {
    let (repo, home) = project();
    let tools = fake_tools();
    referee_at(
        &repo,
        home.path(),
        Some(tools.path()),
        &["hook", "install", "--agent", "claude", "--sandbox"],
    );
    referee_at(
        &repo,
        home.path(),
        Some(tools.path()),
        &["hook", "install", "--agent", "codex"],
    );
    let started = std::time::Instant::now();
    let report = doctor_json(&repo, home.path(), Some(tools.path()));
    // The hanging `codex --version` was cut short.
    assert!(started.elapsed().as_secs() < 30, "{:?}", started.elapsed());
    let tool = |name: &str| {
        report["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(tool("claude")["version"], "2.1.332 (Claude Code)");
    assert_eq!(tool("codex")["version"], Value::Null);
    assert!(tool("codex")["path"].is_string());
    assert!(tool("bwrap")["path"].is_string());
    let claude = agent(&report, "claude");
    assert_eq!(claude["sandbox"]["in_force"], true, "{claude}");
    for p in claude["places"].as_array().unwrap() {
        assert_eq!(p["writable_by_agent"], false, "{p}");
    }
    let codex = agent(&report, "codex");
    assert_eq!(codex["profile"], true);
    assert_eq!(codex["project_trusted"], Value::Null);
    assert_eq!(codex["hook_trust_needed"], true);
    assert_eq!(place(codex, ".referee/")["writable_by_agent"], false);

    let (_, out) = referee_at(&repo, home.path(), Some(tools.path()), &["doctor"]);
    assert!(
        out.contains("  `claude`: found, 2.1.332 (Claude Code)"),
        "{out}"
    );
    assert!(
        out.contains("denyWrite [./.referee, ./.git]: in force"),
        "{out}"
    );
    assert!(
        out.contains(
            "claude: a writer with a shell can still edit the work tree outside these places"
        ),
        "{out}"
    );
    assert!(
        out.contains("Codex runs the hook only once you trust its exact text"),
        "{out}"
    );
    // Without the tools, the same settings are not in force.
    let bare = doctor_json(&repo, home.path(), None);
    assert_eq!(agent(&bare, "claude")["sandbox"]["in_force"], false);
}

/// A record whose `file` is the writer's choice, as an older referee read it.
fn planted_hook_record(file: &str) -> String {
    json!({"agent": "claude", "file": file, "command": "referee hook stop",
           "written_sha256": "0", "edits": [],
           "made": {"file": false, "hooks": false, "stop": false, "env": false, "cap": null},
           "created_dirs": []})
    .to_string()
}

#[test]
fn freeze_lists_planted_under_the_state_folder_hide_no_edit() {
    let repo = Repo::new();
    repo.write(
        "src/auth.rs",
        "fn valid(now: u64, exp: u64) -> bool { now > exp }\n",
    );
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "auth"]);
    repo.init_loop("l", &[]);
    // The writer's backdoor, and the lists that would take the file from
    // the base instead.
    repo.write(
        "src/auth.rs",
        "fn valid(_now: u64, _exp: u64) -> bool { true }\n",
    );
    repo.write(
        ".referee/skill-install.json",
        "{\"files\": [\"src/auth.rs\"]}",
    );
    repo.write(
        ".referee/hooks/claude.json",
        &planted_hook_record("src/auth.rs"),
    );
    let out = repo.record("{\"findings\": []}").run();
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let patch = repo.read(".referee/ledgers/l/round-1/patch.diff");
    assert!(
        patch.contains("+fn valid(_now: u64, _exp: u64) -> bool { true }"),
        "{patch}"
    );
}

#[test]
fn the_files_installs_write_are_pinned_outside_the_work_tree() {
    let repo = Repo::new();
    repo.init_loop("l", &[]);
    repo.referee()
        .args(["skill", "install", "--codex"])
        .assert()
        .success();
    repo.referee()
        .args(["hook", "install", "--agent", "claude"])
        .assert()
        .success();
    // What snapshots freeze is in the per-user state folder, by install.
    let frozen = find(repo.state_dir(), "frozen.json").expect("frozen.json");
    let pins: Value = serde_json::from_str(&std::fs::read_to_string(&frozen).unwrap()).unwrap();
    assert_eq!(
        pins,
        json!({"by": {"hook install --agent claude": [".claude/settings.json"],
                      "skill install": ["AGENTS.md"]}})
    );
    assert!(!repo.join(".referee/skill-install.json").exists());
    assert!(!repo.join(".referee/hooks").exists());
    repo.append("src/a.rs", "fn a() {}");
    repo.record("{\"findings\": []}").run().assert(0, "");
    let patch = repo.read(".referee/ledgers/l/round-1/patch.diff");
    assert!(patch.contains("src/a.rs"), "{patch}");
    assert!(!patch.contains("AGENTS.md"), "{patch}");
    assert!(!patch.contains(".claude"), "{patch}");
    // The uninstall takes its pin out; the skill's stays.
    repo.referee()
        .args(["hook", "uninstall", "--agent", "claude"])
        .assert()
        .success();
    let pins: Value = serde_json::from_str(&std::fs::read_to_string(&frozen).unwrap()).unwrap();
    assert_eq!(pins, json!({"by": {"skill install": ["AGENTS.md"]}}));
}

/// The first file named `name` below `dir`.
fn find(dir: &Path, name: &str) -> Option<PathBuf> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).ok()?.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n == name) {
                return Some(path);
            }
        }
    }
    None
}

/// The real Claude Code, under `bypassPermissions` (as root that needs
/// `IS_SANDBOX=1`), with the deny rules `hook install` wrote: the scripted
/// Write and Edit tool calls on `.referee/` are refused, and the files stay
/// as they were. Skips when `claude` is missing, as in agents_real.rs.
#[test]
fn claude_code_denies_its_tools_the_state_folder_after_install() {
    let Some(claude) = crate::agents_real::tool("claude") else {
        return;
    };
    let repo = Repo::new();
    repo.init_loop("l", &[]);
    repo.referee()
        .args(["hook", "install", "--agent", "claude"])
        .assert()
        .success();
    repo.write(".referee/notes.txt", "kept\n");
    let home = tempfile::tempdir().unwrap();
    let planted = repo.join(".referee/x").display().to_string();
    let notes = repo.join(".referee/notes.txt").display().to_string();
    let server = crate::agents_real::Server::start(
        home.path(),
        &json!({"anthropic": [
            {"tool_use": {"name": "Write", "input": {"file_path": planted, "content": "forged\n"}}},
            {"tool_use": {"name": "Read", "input": {"file_path": notes}}},
            {"tool_use": {"name": "Edit", "input": {"file_path": notes,
                "old_string": "kept", "new_string": "forged"}}},
            {"text": "Done."}
        ]}),
    );
    let mut cmd = crate::hook::claude_command(&claude, home.path(), server.port, &repo);
    // The last `--permission-mode` wins; the hook itself is not under test.
    cmd.args(["--permission-mode", "bypassPermissions"])
        .env("IS_SANDBOX", "1")
        .env("REFEREE_STATE_DIR", repo.state_dir());
    let out = crate::hook::run_limited(
        cmd,
        "write the notes\n",
        std::time::Duration::from_secs(180),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        !repo.join(".referee/x").exists(),
        "the Write tool wrote `.referee/x`"
    );
    assert_eq!(repo.read(".referee/notes.txt"), "kept\n");
    // The model was told each call was denied.
    let bodies: Vec<String> = server
        .bodies("/v1/messages")
        .iter()
        .map(Value::to_string)
        .collect();
    let denied = bodies
        .last()
        .map(|b| b.matches("denied").count())
        .unwrap_or(0);
    assert!(denied >= 2, "{bodies:?}");
}

/// `doctor` says where each agent CLI would find its login (never calling
/// a model) and whether each loop's contract reads and its ledger
/// verifies, with the fix.
#[test]
fn doctor_names_the_logins_and_the_loops_health() {
    let (repo, home) = project();
    let tools = fake_tools();
    let old = std::env::var("PATH").unwrap_or_default();
    let doctor = |extra: &[(&str, &str)]| {
        let mut cmd = repo.referee_std();
        cmd.env("HOME", home.path())
            .env("PATH", format!("{}:{old}", tools.path().display()))
            .env_remove("REFEREE_STATE_DIR")
            .env_remove("XDG_STATE_HOME")
            .env_remove("CODEX_HOME")
            .env_remove("CLAUDE_CONFIG_DIR");
        for var in [
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "OPENAI_API_KEY",
            "CODEX_API_KEY",
        ] {
            cmd.env_remove(var);
        }
        cmd.envs(extra.iter().copied()).args(["doctor", "--json"]);
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let tool = |report: &Value, name: &str| {
        report["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()
            .clone()
    };
    let report = doctor(&[]);
    assert_eq!(
        tool(&report, "claude")["login"],
        json!({"found": false, "how": "no login found: `claude /login` (or set `ANTHROPIC_API_KEY`)"})
    );
    assert_eq!(tool(&report, "codex")["login"]["found"], false);
    assert_eq!(
        report["loops"],
        json!([{"name": "l", "problem": null, "hints": []}])
    );
    // A loop it only reads: a contract with no anchor yet (one the writer
    // planted, say) gets no pin taken from the repository as it is now.
    let contract = repo
        .read(".referee/contracts/l.toml")
        .replace("loop = \"l\"", "loop = \"planted\"");
    repo.write(".referee/contracts/planted.toml", &contract);
    let report = doctor(&[]);
    assert_eq!(report["loops"][1]["name"], "planted", "{report}");
    assert_eq!(report["loops"][1]["problem"], Value::Null, "{report}");
    fn pinned(dir: &Path) -> bool {
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                let path = e.path();
                path.ends_with("loops/planted/snapshot/pin.json")
                    || (path.is_dir() && pinned(&path))
            })
    }
    assert!(!pinned(home.path()), "doctor pinned a loop it only reads");
    std::fs::remove_file(repo.join(".referee/contracts/planted.toml")).unwrap();

    std::fs::create_dir_all(home.path().join(".claude")).unwrap();
    std::fs::write(home.path().join(".claude/.credentials.json"), "{}").unwrap();
    let report = doctor(&[("OPENAI_API_KEY", "sk-test")]);
    assert_eq!(tool(&report, "claude")["login"]["found"], true);
    assert_eq!(
        tool(&report, "codex")["login"],
        json!({"found": true, "how": "`OPENAI_API_KEY` is set"})
    );

    // An edited ledger is named, with the way back.
    repo.append("src/a.rs", "one");
    let clean = home.path().join("clean.json");
    std::fs::write(&clean, r#"{"findings": []}"#).unwrap();
    referee_at(
        &repo,
        home.path(),
        None,
        &["record", "--findings", clean.to_str().unwrap()],
    );
    let ledger = repo.read(".referee/ledgers/l.csv");
    repo.write(
        ".referee/ledgers/l.csv",
        &ledger.replacen(",stop,", ",continue,", 1),
    );
    let report = doctor(&[]);
    let l = &report["loops"][0];
    assert!(
        l["problem"]
            .as_str()
            .unwrap()
            .contains("(the row was edited)"),
        "{l}"
    );
    assert!(
        l["hints"][0]
            .as_str()
            .unwrap()
            .contains("git checkout -- .referee/ledgers/l.csv"),
        "{l}"
    );
}

/// `doctor` says whether the installed hook is current: its program runs,
/// it names this project, this agent and a loop that is here; and, when
/// not, what is stale with the install that writes it again.
#[test]
fn doctor_says_whether_the_installed_hook_is_current() {
    let (repo, home) = project();
    let doctor_text = |repo: &Repo| {
        let mut cmd = repo.referee_std();
        cmd.env("HOME", home.path())
            .env_remove("REFEREE_STATE_DIR")
            .env_remove("XDG_STATE_HOME")
            .env_remove("CODEX_HOME")
            .arg("doctor");
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    referee_at(
        &repo,
        home.path(),
        None,
        &["hook", "install", "--agent", "claude", "--loop", "l"],
    );
    let report = doctor_json(&repo, home.path(), None);
    let claude = report["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["agent"] == "claude")
        .unwrap()
        .clone();
    assert!(claude["hook"].is_string(), "{claude}");
    assert!(claude.get("hook_stale").is_none(), "{claude}");
    assert!(
        doctor_text(&repo)
            .contains("  hook: current (its program runs, and it names this project)\n")
    );

    // The program moved away, another agent and a loop that is gone.
    let settings = repo.read(".claude/settings.json");
    let command = claude["hook"].as_str().unwrap();
    let program = command.split(' ').next().unwrap();
    let stale = settings
        .replacen(program, "/nowhere/referee", 1)
        .replacen("--agent claude", "--agent codex", 1)
        .replacen("--loop l", "--loop gone", 1);
    repo.write(".claude/settings.json", &stale);
    let out = doctor_text(&repo);
    for said in [
        "    the hook runs `/nowhere/referee`, which is not there: every stop fails the hook, and the agent lets it through unrefereed\n    hint: `referee hook install --agent claude` writes it again\n",
        "    the hook in claude's settings says `--agent codex`\n",
        "    the hook names loop `gone`, which has no contract here\n",
    ] {
        assert!(out.contains(said), "{said}\nin:\n{out}");
    }
    assert!(!out.contains("hook: current"), "{out}");

    // A copy of the repository names the original's folder.
    repo.write(".claude/settings.json", &settings);
    let copy = Repo::new();
    let status = std::process::Command::new("cp")
        .args(["-a", &format!("{}/.", repo.path().display())])
        .arg(copy.path())
        .status()
        .unwrap();
    assert!(status.success());
    let out = doctor_text(&copy);
    assert!(
        out.contains(&format!(
            "    the hook names project `{}`, not this repository (moved or copied since `hook install`?)",
            repo.path().display()
        )),
        "{out}"
    );
}

/// Gemini's section shows once its hook is installed: whether Gemini
/// trusts the folder (without it, no project hook runs) and that no
/// boundary holds its shell.
#[test]
fn doctor_says_whether_gemini_trusts_the_folder_its_hook_needs() {
    let (repo, home) = project();
    let report = doctor_json(&repo, home.path(), None);
    assert!(
        report["agents"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["agent"] != "gemini"),
        "{report}"
    );
    referee_at(
        &repo,
        home.path(),
        None,
        &["hook", "install", "--agent", "gemini"],
    );
    let report = doctor_json(&repo, home.path(), None);
    let gemini = agent(&report, "gemini");
    assert!(
        gemini["hook"]
            .as_str()
            .unwrap()
            .contains("hook stop --agent gemini"),
        "{gemini}"
    );
    assert_eq!(gemini["project_trusted"], false);
    assert_eq!(place(gemini, ".referee/")["writable_by_agent"], true);
    let (_, out) = referee_at(&repo, home.path(), None, &["doctor"]);
    assert!(
        out.contains(
            "Gemini reads no project settings, its hooks included, in a folder it does not trust"
        ),
        "{out}"
    );
    assert!(
        out.contains("gemini: a writer with a shell can still write the state folder"),
        "{out}"
    );
    // The person trusts the folder as the install said.
    std::fs::create_dir_all(home.path().join(".gemini")).unwrap();
    std::fs::write(
        home.path().join(".gemini/trustedFolders.json"),
        json!({ repo.path().display().to_string(): "TRUST_FOLDER" }).to_string(),
    )
    .unwrap();
    let report = doctor_json(&repo, home.path(), None);
    let gemini = agent(&report, "gemini");
    assert_eq!(gemini["project_trusted"], true);
    assert_eq!(gemini["notes"].as_array().unwrap().len(), 0, "{gemini}");
}
