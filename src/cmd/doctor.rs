//! `referee doctor`: which of the host's boundaries around the writer are in
//! force for this repository (SPEC §8.2): the agent CLIs and sandbox tools
//! found, and for each agent, its hook, its deny rules and sandbox (Claude
//! Code) or permission profile and trust (Codex), and from those settings
//! whether the agent could write the state folder, `.git/`, its settings and
//! the anchors. Derived from the settings as written, never by trying as the
//! agent. Reads files and runs `--version`; writes nothing.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use clap::Args;
use serde::Serialize;
use serde_json::Value;

use crate::contract::Preset;
use crate::exit::Exit;
use crate::hook::boundary::{self, CLAUDE_SETTINGS};
use crate::hook::settings::{self, SANDBOX_SWITCHES};
use crate::report::error::with_hints;
use crate::state::State;

/// Reads the agents' settings for this repository (never writing, never
/// trying as the agent) and says, for each agent, whether referee's hook,
/// deny rules, sandbox or permission profile are there, what the agent
/// could still write, and what that means. Exits 0 unless the repository
/// cannot be read.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// How long one `--version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, Serialize)]
struct Report {
    repo: String,
    state_dir: String,
    anchors: String,
    tools: Vec<Tool>,
    loops: Vec<LoopFacts>,
    agents: Vec<AgentFacts>,
    /// In words: what a writer with a shell can still do.
    overall: Vec<String>,
}

#[derive(Debug, Serialize)]
struct Tool {
    name: &'static str,
    path: Option<String>,
    version: Option<String>,
    /// Claude Code and Codex: where a login was found, or that none was
    /// (`None` for the other tools, or one not on PATH).
    #[serde(skip_serializing_if = "Option::is_none")]
    login: Option<Login>,
    /// What it is for.
    means: String,
}

#[derive(Debug, Serialize)]
struct Login {
    found: bool,
    /// Where (a variable, a file), or what gives one.
    how: String,
}

/// One loop of the state folder: its contract read, its ledger checked.
#[derive(Debug, Serialize)]
struct LoopFacts {
    name: String,
    /// `None`: it reads and its ledger verifies; else what is wrong.
    problem: Option<String>,
    hints: Vec<String>,
}

#[derive(Debug, Serialize)]
struct AgentFacts {
    agent: &'static str,
    settings: String,
    hook: Option<String>,
    /// What is stale in the installed hook entry (its program gone, another
    /// project or agent named, a loop with no contract); empty: current.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    hook_stale: Vec<String>,
    /// Claude Code: each rule `hook install` writes, and whether it is there.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    deny: Vec<Rule>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sandbox: Option<Sandbox>,
    /// Codex: whether `.codex/config.toml` makes the state folder read-only.
    #[serde(skip_serializing_if = "Option::is_none")]
    profile: Option<bool>,
    /// Codex: whether `$CODEX_HOME/config.toml` trusts the project (`None`:
    /// unreadable).
    #[serde(skip_serializing_if = "Option::is_none")]
    project_trusted: Option<bool>,
    /// Codex: a hook runs only once trusted by its text (`/hooks`), which
    /// referee cannot see.
    #[serde(skip_serializing_if = "Option::is_none")]
    hook_trust_needed: Option<bool>,
    places: Vec<Place>,
    notes: Vec<String>,
}

#[derive(Debug, Serialize)]
struct Rule {
    rule: String,
    present: bool,
}

#[derive(Debug, Serialize)]
struct Sandbox {
    enabled: bool,
    fail_if_unavailable: bool,
    allow_unsandboxed_commands: bool,
    deny_write: Vec<String>,
    /// All of the above as `hook install --sandbox` writes them, and the
    /// tools it needs on PATH.
    in_force: bool,
}

#[derive(Debug, Serialize)]
struct Place {
    place: String,
    /// For a command: whether the agent could run it to effect.
    writable_by_agent: bool,
    why: String,
    /// A command to run, not a place to write.
    #[serde(skip)]
    command: bool,
}

pub fn run(state: &State, args: DoctorArgs) -> anyhow::Result<Exit> {
    if !state.repo.is_dir() {
        anyhow::bail!("cannot read the repository `{}`", state.repo.display());
    }
    let anchors = crate::anchor::state_root()?;
    let tools = tools();
    let found = |name: &str| tools.iter().any(|t| t.name == name && t.path.is_some());
    let sandbox_tools = found("bwrap") && found("socat");
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let places = boundary::Places {
        state_rel: state.inside_repo(),
        state_abs: state.root.display().to_string(),
        anchor: boundary::rule_path(&anchors, home.as_deref()),
        programs: vec!["referee".to_string()],
    };
    let claude = claude_facts(state, &places, &anchors, sandbox_tools)?;
    let codex = codex_facts(state, &places, &anchors, home.as_deref())?;
    // Gemini CLI's section only where its hook is installed.
    let gemini = gemini_facts(state, &places, home.as_deref());
    let mut agents = vec![claude, codex];
    agents.extend(gemini);
    let overall = overall(&agents.iter().collect::<Vec<_>>());
    let report = Report {
        repo: state.repo.display().to_string(),
        state_dir: state.root.display().to_string(),
        anchors: anchors.display().to_string(),
        tools,
        loops: loops(state),
        agents,
        overall,
    };
    if args.json {
        super::emit_json(&report)?;
    } else {
        super::emit(&render(&report))?;
    }
    Ok(Exit::Success)
}

/// The agent CLIs the presets run (the two with a hook first, as their
/// sections below are) and the sandbox tools.
fn tools() -> Vec<Tool> {
    let mut list: Vec<(&str, bool, String)> = vec![
        (
            "claude",
            true,
            "Claude Code: its Stop hook, deny rules and sandbox".into(),
        ),
        ("codex", true, "Codex: its Stop hook and sandbox".into()),
        (
            "gemini",
            true,
            "Gemini CLI: the `gemini` preset's tool, and its AfterAgent hook".into(),
        ),
    ];
    for preset in Preset::ALL {
        if let Some(tool) = preset.info().tool
            && !list.iter().any(|(name, _, _)| *name == tool)
        {
            let means = format!(
                "the `{}` preset's tool; no hook installed by referee",
                preset.as_str()
            );
            list.push((tool, true, means));
        }
    }
    list.push((
        "bwrap",
        false,
        "bubblewrap: Claude Code's sandbox on Linux".into(),
    ));
    list.push(("socat", false, "Claude Code's sandbox proxies".into()));
    list.into_iter()
        .map(|(name, versioned, means)| {
            let path = super::on_path(name);
            let version = match (&path, versioned) {
                (Some(path), true) => version(path),
                _ => None,
            };
            let login = path.as_ref().and_then(|_| login(name));
            Tool {
                name,
                path: path.map(|p| p.display().to_string()),
                version,
                login,
                means,
            }
        })
        .collect()
}

/// Where Claude Code or Codex would find a login, as its files and
/// variables say (never by calling a model): an API key in the
/// environment, or the credentials file its login writes.
fn login(tool: &str) -> Option<Login> {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let dir_of = |var: &str, default: &str| {
        std::env::var_os(var)
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(default)))
    };
    let (vars, file, command): (&[&str], Option<PathBuf>, &str) = match tool {
        "claude" => (
            &["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"],
            dir_of("CLAUDE_CONFIG_DIR", ".claude").map(|d| d.join(".credentials.json")),
            "`claude /login` (or set `ANTHROPIC_API_KEY`)",
        ),
        "codex" => (
            &["OPENAI_API_KEY", "CODEX_API_KEY"],
            dir_of("CODEX_HOME", ".codex").map(|d| d.join("auth.json")),
            "`codex login` (or set `OPENAI_API_KEY`)",
        ),
        _ => return None,
    };
    if let Some(var) = vars
        .iter()
        .find(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()))
    {
        return Some(Login {
            found: true,
            how: format!("`{var}` is set"),
        });
    }
    match file.filter(|f| f.is_file()) {
        Some(file) => Some(Login {
            found: true,
            how: format!("`{}`", file.display()),
        }),
        None => Some(Login {
            found: false,
            how: format!("no login found: {command}"),
        }),
    }
}

/// Each loop of the state folder, its contract loaded and its ledger
/// verified against its anchor, as `ledger verify` would: read only, never
/// through `open_loop`, which would pin a loop that has no pin yet (from
/// the repository as it is now) and clean its scratch folders.
fn loops(state: &State) -> Vec<LoopFacts> {
    let names = state.loops().unwrap_or_default();
    names
        .into_iter()
        .map(|name| {
            let (problem, hints) = match loop_health(state, &name) {
                Ok(()) => (None, Vec::new()),
                Err(e) => (Some(format!("{e:#}")), crate::report::error::hints(&e)),
            };
            LoopFacts {
                name: name.to_string(),
                problem,
                hints,
            }
        })
        .collect()
}

fn loop_health(state: &State, name: &crate::contract::LoopName) -> anyhow::Result<()> {
    use crate::anchor::chain::Standing;
    let paths = state.paths(name);
    let loaded = crate::contract::load::load(&paths.contract)?;
    let anchor = crate::anchor::Anchor::of(&state.repo, &state.root, name.as_str())?;
    let store = crate::ledger::Store::new(paths.ledger.clone(), paths.dir.clone(), &loaded.sha256);
    let mut hashes: Vec<String> = Vec::new();
    store.verify_seeing(|_, row| hashes.push(row.row_sha256.to_string()))?;
    let hashes: Vec<&str> = hashes.iter().map(String::as_str).collect();
    if let Standing::Broken(broken) = anchor.check(&hashes)? {
        return Err(crate::exit::hinted(
            format!("ledger `{}`: {broken}", super::shown(&paths.ledger)),
            format!(
                "`referee ledger verify --loop {name}` says what the anchor holds; a ledger you committed comes back with `git checkout -- {}`",
                super::shown(&paths.ledger)
            ),
        ));
    }
    Ok(())
}

/// The first line `program --version` prints, within [`VERSION_TIMEOUT`].
fn version(program: &Path) -> Option<String> {
    let call = crate::agent::process::Call {
        program: program.display().to_string(),
        args: vec!["--version".into()],
        env: Vec::new(),
        stdin: None,
        cwd: std::env::temp_dir(),
        timeout: VERSION_TIMEOUT,
        record: None,
    };
    let done = crate::agent::process::run(&call, &AtomicBool::new(false), &mut |_| {}).ok()?;
    let out = String::from_utf8_lossy(&done.stdout.bytes);
    out.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| l.chars().take(120).collect())
}

/// A settings file of the repository as JSON (`Null` when absent or not JSON).
fn json_at(state: &State, rel: &str) -> (Option<String>, Value) {
    let text = super::read_repo_text(&state.repo, &state.repo.join(rel))
        .ok()
        .flatten();
    let value = text
        .as_deref()
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or(Value::Null);
    (text, value)
}

fn claude_facts(
    state: &State,
    places: &boundary::Places,
    anchors: &Path,
    sandbox_tools: bool,
) -> anyhow::Result<AgentFacts> {
    let file = ".claude/settings.json";
    let (text, value) = json_at(state, file);
    let text = text.unwrap_or_default();
    let hook = settings::installed_command(&text);
    let present = settings::strings_at(&text, &["permissions", "deny"]);
    let wanted = boundary::claude_deny(places, &super::PERSONS_COMMANDS);
    let deny: Vec<Rule> = wanted
        .iter()
        .map(|r| Rule {
            rule: r.clone(),
            present: present.contains(r),
        })
        .collect();
    let has = |rule: &str| present.iter().any(|r| r == rule);
    let sb = &value["sandbox"];
    let switch = |key: &str| sb[key].as_bool();
    let deny_write = settings::strings_at(&text, &["sandbox", "filesystem", "denyWrite"]);
    let switches_on = SANDBOX_SWITCHES
        .iter()
        .all(|(key, want)| switch(key) == Some(*want));
    let wants_write = boundary::claude_deny_write(places);
    let mut notes = Vec::new();
    // The local file overrides the project's, and the agent reloads both.
    let (_, local) = json_at(state, ".claude/settings.local.json");
    let local_off = local["sandbox"]["enabled"] == Value::Bool(false);
    if local["disableAllHooks"] == Value::Bool(true) {
        notes.push(
            "`.claude/settings.local.json` sets `disableAllHooks`: no hook runs, referee's included"
                .to_string(),
        );
    }
    if local_off {
        notes.push(
            "`.claude/settings.local.json` turns the sandbox off, over the project's settings"
                .to_string(),
        );
    }
    let in_force = switches_on
        && wants_write.iter().all(|p| deny_write.contains(p))
        && sandbox_tools
        && !local_off;
    if switches_on && !sandbox_tools {
        notes.push(with_hints(
            "the sandbox is on but `bwrap` or `socat` is not on PATH: with `failIfUnavailable`, Claude Code refuses to start",
            &["`apt install bubblewrap socat`"],
        ));
    }
    let sandbox = (!sb.is_null()).then(|| Sandbox {
        enabled: switch("enabled") == Some(true),
        fail_if_unavailable: switch("failIfUnavailable") == Some(true),
        allow_unsandboxed_commands: switch("allowUnsandboxedCommands") != Some(false),
        deny_write: deny_write.clone(),
        in_force,
    });
    let state_shown = places.state_rel.clone().unwrap_or(places.state_abs.clone());
    let shell = |denied_write: bool, what: &str| -> (bool, String) {
        if in_force && denied_write {
            (false, format!("Bash runs in the sandbox, which {what}"))
        } else if in_force {
            (
                true,
                "the sandbox is on but does not list it in `denyWrite`".to_string(),
            )
        } else {
            (
                true,
                "no sandbox: under `bypassPermissions`, `python3 -c`, `sh -c` or a script write past the path rules"
                    .to_string(),
            )
        }
    };
    let place = |name: String, rule: String, shell: (bool, String)| -> Place {
        let tool = has(&rule);
        let writable = !tool || shell.0;
        let tool_words = match tool {
            true => format!("the Edit/Write tools are denied (`{rule}`)"),
            false => format!("the Edit/Write tools may (no `{rule}`)"),
        };
        Place {
            place: name,
            writable_by_agent: writable,
            why: format!("{tool_words}; {}", shell.1),
            command: false,
        }
    };
    let mut places_out = vec![
        place(
            format!("{state_shown}/"),
            wanted[0].clone(),
            shell(
                deny_write.contains(&wants_write[0]),
                "denies writes to it (`denyWrite`)",
            ),
        ),
        place(
            ".git/".into(),
            "Edit(.git/**)".into(),
            shell(
                deny_write.iter().any(|p| p == "./.git"),
                "denies writes to it (`denyWrite`)",
            ),
        ),
    ];
    for f in CLAUDE_SETTINGS {
        places_out.push(place(
            f.to_string(),
            format!("Edit({f})"),
            shell(true, "keeps the settings files read-only"),
        ));
    }
    places_out.push(place(
        format!("{} (the anchors)", anchors.display()),
        format!("Edit({}/**)", places.anchor),
        shell(
            true,
            "lets it write only the project and `$TMPDIR` (`/tmp/claude-<uid>`)",
        ),
    ));
    let commands_denied = deny
        .iter()
        .filter(|r| r.rule.starts_with("Bash("))
        .all(|r| r.present);
    places_out.push(Place {
        place: "a person's referee commands (`waive`, `record`, ...)".into(),
        writable_by_agent: !(commands_denied && in_force),
        why: match (commands_denied, in_force) {
            (true, true) => "plain calls are denied, and a call that gets past the rules (`sh -c`) cannot write the state from inside the sandbox".into(),
            (true, false) => "plain calls are denied, but under `bypassPermissions` `sh -c`, a script or `python3 -c` run them".into(),
            (false, _) => "no `Bash(referee …)` deny rules".into(),
        },
        command: true,
    });
    Ok(AgentFacts {
        agent: "claude",
        settings: file.into(),
        hook_stale: hook
            .as_deref()
            .map(|c| hook_stale(state, "claude", c))
            .unwrap_or_default(),
        hook,
        deny,
        sandbox,
        profile: None,
        project_trusted: None,
        hook_trust_needed: None,
        places: places_out,
        notes,
    })
}

/// What is stale in the hook entry `command` that `agent`'s settings hold,
/// each with the fix: the program it runs is gone, it names another project
/// (the repository was moved or copied) or another agent, or a loop that
/// has no contract here. Empty: the entry is current.
fn hook_stale(state: &State, agent: &str, command: &str) -> Vec<String> {
    let again = format!("`referee hook install --agent {agent}` writes it again");
    let words = super::create::split_words(command);
    let mut out = Vec::new();
    let Some(program) = words.first() else {
        return vec![with_hints("the hook's command is empty", &[again])];
    };
    let runs = if program.contains('/') {
        executable(Path::new(program))
    } else {
        super::on_path(program).is_some()
    };
    if !runs {
        out.push(with_hints(
            &format!(
                "the hook runs `{program}`, which is not there: every stop fails the hook, and the agent lets it through unrefereed"
            ),
            std::slice::from_ref(&again),
        ));
    }
    if words.get(1..3) != Some(&["hook".to_string(), "stop".to_string()][..]) {
        out.push(with_hints(
            &format!("the hook's command is not `referee hook stop …`: `{command}`"),
            std::slice::from_ref(&again),
        ));
    }
    let value = |flag: &str| {
        words
            .iter()
            .position(|w| w == flag)
            .and_then(|i| words.get(i + 1))
    };
    if let Some(named) = value("--agent")
        && named != agent
    {
        out.push(with_hints(
            &format!("the hook in {agent}'s settings says `--agent {named}`"),
            std::slice::from_ref(&again),
        ));
    }
    if let Some(project) = value("--project") {
        let same = std::fs::canonicalize(project)
            .ok()
            .zip(std::fs::canonicalize(&state.repo).ok())
            .is_some_and(|(a, b)| a == b);
        if !same {
            out.push(with_hints(
                &format!(
                    "the hook names project `{project}`, not this repository (moved or copied since `hook install`?): its stops referee that folder's loop, or none"
                ),
                std::slice::from_ref(&again),
            ));
        }
    }
    if let Some(name) = value("--loop") {
        let known = state.loops().unwrap_or_default();
        if !known.iter().any(|l| l.as_str() == name) {
            out.push(with_hints(
                &format!("the hook names loop `{name}`, which has no contract here"),
                &[format!("`referee init --loop {name}`, or {again}")],
            ));
        }
    }
    out
}

/// Whether `path` is a file this user may run.
fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn codex_facts(
    state: &State,
    places: &boundary::Places,
    anchors: &Path,
    home: Option<&Path>,
) -> anyhow::Result<AgentFacts> {
    let file = ".codex/hooks.json";
    let (text, _) = json_at(state, file);
    let hook = settings::installed_command(text.as_deref().unwrap_or_default());
    let config = super::read_repo_text(&state.repo, &state.repo.join(".codex/config.toml"))
        .ok()
        .flatten()
        .unwrap_or_default();
    let profile = match &places.state_rel {
        Some(rel) => crate::hook::codex_config::in_force(&config, rel),
        None => true,
    };
    let codex_home = std::env::var_os("CODEX_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(".codex")));
    let project_trusted = codex_home.and_then(|h| {
        let bytes = crate::statefs::read_file(&h.join("config.toml")).ok()?;
        let doc: toml::Table = toml::from_str(&String::from_utf8_lossy(&bytes)).ok()?;
        let repo = state.repo.display().to_string();
        Some(
            doc.get("projects")
                .and_then(|p| p.get(&repo))
                .and_then(|p| p.get("trust_level"))
                .and_then(|t| t.as_str())
                == Some("trusted"),
        )
    });
    let tmp = std::env::var_os("TMPDIR").map(PathBuf::from);
    let anchors_in_tmp = anchors.starts_with("/tmp") || tmp.is_some_and(|t| anchors.starts_with(t));
    let state_shown = places.state_rel.clone().unwrap_or(places.state_abs.clone());
    let full = "writable under `danger-full-access`";
    let places_out = vec![
        Place {
            place: format!("{state_shown}/"),
            writable_by_agent: !profile,
            why: match profile {
                true => format!(
                    "the default profile `referee` makes it read-only in the sandbox (not under `-s`, which ignores profiles; {full})"
                ),
                false => "no profile makes it read-only: `workspace-write` lets the agent write it"
                    .into(),
            },
            command: false,
        },
        Place {
            place: ".git/ and .codex/".into(),
            writable_by_agent: false,
            why: format!(
                "read-only in Codex's `read-only` and `workspace-write` sandboxes; {full}"
            ),
            command: false,
        },
        Place {
            place: format!("{} (the anchors)", anchors.display()),
            writable_by_agent: anchors_in_tmp,
            why: match anchors_in_tmp {
                true => {
                    "under `/tmp` or `$TMPDIR`, which `workspace-write` lets the agent write".into()
                }
                false => format!(
                    "outside the workspace, `/tmp` and `$TMPDIR`: read-only in the sandbox; {full}"
                ),
            },
            command: false,
        },
    ];
    let mut notes = Vec::new();
    if hook.is_some() && project_trusted != Some(true) {
        notes.push(with_hints("the project is not trusted in `$CODEX_HOME/config.toml`: Codex skips the project's hook without a word", &[format!("add `[projects.\"{}\"]` `trust_level = \"trusted\"`, or run `codex exec --trust` here once", state.repo.display())]));
    }
    if hook.is_some() {
        notes.push(
            "Codex runs the hook only once you trust its exact text: `/hooks` in `codex` (referee cannot see that trust)"
                .into(),
        );
    }
    Ok(AgentFacts {
        agent: "codex",
        settings: file.into(),
        hook_stale: hook
            .as_deref()
            .map(|c| hook_stale(state, "codex", c))
            .unwrap_or_default(),
        hook: hook.clone(),
        deny: Vec::new(),
        sandbox: None,
        profile: Some(profile),
        project_trusted,
        hook_trust_needed: hook.is_some().then_some(true),
        places: places_out,
        notes,
    })
}

/// Gemini CLI, when `.gemini/settings.json` holds referee's hook: the hook
/// runs only in a folder Gemini trusts, and no boundary holds its shell.
fn gemini_facts(
    state: &State,
    places: &boundary::Places,
    home: Option<&Path>,
) -> Option<AgentFacts> {
    let file = ".gemini/settings.json";
    let (text, _) = json_at(state, file);
    let hook = settings::installed_command(text.as_deref().unwrap_or_default())?;
    let gemini_home = std::env::var_os("GEMINI_CLI_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| home.map(Path::to_path_buf))
        .map(|h| h.join(".gemini"));
    let read_json = |path: PathBuf| -> Option<Value> {
        let bytes = crate::statefs::read_file(&path).ok()?;
        serde_json::from_slice(&bytes).ok()
    };
    let trust_off = gemini_home
        .as_ref()
        .and_then(|h| read_json(h.join("settings.json")))
        .is_some_and(|v| v["security"]["folderTrust"]["enabled"] == Value::Bool(false));
    let trusted_file = std::env::var_os("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| gemini_home.as_ref().map(|h| h.join("trustedFolders.json")));
    let repo = state.repo.display().to_string();

    // A rule trusts its folder and what is below it (`TRUST_PARENT`: its
    // parent's); the longest rule wins in Gemini, a `DO_NOT_TRUST` below a
    // trusted folder is not told apart here.
    let trusted = trusted_file.and_then(read_json).is_some_and(|v| {
        v.as_object().is_some_and(|folders| {
            folders.iter().any(|(folder, level)| {
                let folder = Path::new(folder);
                match level.as_str() {
                    Some("TRUST_FOLDER") => state.repo.starts_with(folder),
                    Some("TRUST_PARENT") => {
                        folder.parent().is_some_and(|p| state.repo.starts_with(p))
                    }
                    _ => false,
                }
            })
        })
    });
    let mut notes = Vec::new();
    if !trust_off && !trusted {
        notes.push(with_hints(
            "Gemini reads no project settings, its hooks included, in a folder it does not trust, and `~/.gemini/trustedFolders.json` does not trust this one",
            &[format!(
                "say \"Trust folder\" when `gemini` asks here, or add `{{\"{repo}\": \"TRUST_FOLDER\"}}` to `~/.gemini/trustedFolders.json`"
            )],
        ));
    }
    let state_shown = places.state_rel.clone().unwrap_or(places.state_abs.clone());
    Some(AgentFacts {
        agent: "gemini",
        settings: file.into(),
        hook_stale: hook_stale(state, "gemini", &hook),
        hook: Some(hook),
        deny: Vec::new(),
        sandbox: None,
        profile: None,
        project_trusted: Some(trust_off || trusted),
        hook_trust_needed: None,
        places: vec![Place {
            place: format!("{state_shown}/ and .gemini/"),
            writable_by_agent: true,
            why: "`hook install` puts no boundary around Gemini CLI's shell".into(),
            command: false,
        }],
        notes,
    })
}

/// The lines that sum it up.
fn overall(agents: &[&AgentFacts]) -> Vec<String> {
    let mut out = Vec::new();
    for a in agents {
        let open = |command: bool| -> Vec<&Place> {
            a.places
                .iter()
                .filter(|p| p.writable_by_agent && p.command == command)
                .collect()
        };
        let (writes, runs) = (open(false), open(true));
        let names = |list: &[&Place]| {
            list.iter()
                .map(|p| format!("`{}`", p.place))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let line = match (&a.hook, a.agent) {
            (None, agent) => with_hints(&format!("{agent}: no referee hook installed: nothing referees its stops, and a writer with a shell can do anything you can"), &[format!("`referee hook install --agent {agent}`")]),
            (Some(_), "claude") if writes.is_empty() && runs.is_empty() => "claude: a writer with a shell can still edit the work tree outside these places and read what you can, because the sandbox denies writes, not reads; the Stop hook runs outside it and records the rounds".to_string(),
            (Some(_), "claude") => {
                let mut what = Vec::new();
                if !writes.is_empty() {
                    what.push(format!("write {}", names(&writes)));
                }
                if !runs.is_empty() {
                    what.push("run the commands only a person runs".to_string());
                }
                let what = what.join(" and ");
                match a.sandbox.as_ref().is_some_and(|s| s.in_force) {
                    true => format!(
                        "claude: a writer with a shell can still {what} because the settings leave them open (see above)"
                    ),
                    false => with_hints(
                        &format!(
                            "claude: a writer with a shell can still {what} because no sandbox holds Claude Code's Bash: the deny rules stop its tools and plain commands, not `python3 -c`, `sh -c` or a script under `bypassPermissions`"
                        ),
                        &["`referee hook install --agent claude --sandbox` (needs `bwrap` and `socat`)"],
                    ),
                }
            }
            (Some(_), "gemini") => "gemini: a writer with a shell can still write the state folder and `.gemini/settings.json`, because no boundary holds Gemini CLI's shell; the anchor shows rows cut or forged, and the commands only a person runs refuse to run below it".to_string(),
            (Some(_), _) if writes.is_empty() => "codex: a writer with a shell can still do anything you can when Codex runs with `danger-full-access` or `--dangerously-bypass-approvals-and-sandbox`, because then no sandbox holds; sandboxed without `-s`, it cannot write the state folder, `.git/` or the anchors".to_string(),
            (Some(_), _) => format!(
                "codex: a writer with a shell can still write {}, and anything you can under `danger-full-access`",
                writes
                    .iter()
                    .map(|p| format!("`{}` ({})", p.place, p.why))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        out.push(line);
    }
    out
}

fn render(r: &Report) -> String {
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    let mut out = format!(
        "repository `{}`, state folder `{}`, anchors `{}`\n\ntools:\n",
        r.repo, r.state_dir, r.anchors
    );
    for t in &r.tools {
        let found = match (&t.path, &t.version) {
            (Some(_), Some(v)) => format!("found, {v}"),
            (Some(p), None) => format!("found at `{p}`"),
            (None, _) => "not on PATH".into(),
        };
        out.push_str(&format!("  `{}`: {found} ({})\n", t.name, t.means));
        if let Some(login) = &t.login {
            let said = if login.found {
                "login: "
            } else {
                "login: none; "
            };
            out.push_str(&format!(
                "    {said}{}\n",
                login.how.trim_start_matches("no login found: ")
            ));
        }
    }
    out.push_str("\nloops:\n");
    if r.loops.is_empty() {
        out.push_str("  none yet (`referee init --loop NAME` starts one)\n");
    }
    for l in &r.loops {
        match &l.problem {
            None => out.push_str(&format!(
                "  `{}`: contract reads, ledger verifies\n",
                l.name
            )),
            Some(problem) => {
                let said = with_hints(&format!("`{}`: {problem}", l.name), &l.hints);
                for line in said.lines() {
                    out.push_str(&format!("  {line}\n"));
                }
            }
        }
    }
    for a in &r.agents {
        out.push_str(&format!("\n{}:\n", a.agent));
        match &a.hook {
            Some(c) => {
                out.push_str(&format!("  hook: installed in `{}`: `{c}`\n", a.settings));
                if a.hook_stale.is_empty() {
                    out.push_str("  hook: current (its program runs, and it names this project)\n");
                }
                for stale in &a.hook_stale {
                    for line in stale.lines() {
                        out.push_str(&format!("    {line}\n"));
                    }
                }
            }
            None => out.push_str(&format!("  hook: not installed in `{}`\n", a.settings)),
        }
        if !a.deny.is_empty() {
            let n = a.deny.iter().filter(|d| d.present).count();
            out.push_str(&format!("  deny rules: {n} of {} present\n", a.deny.len()));
            for d in &a.deny {
                out.push_str(&format!(
                    "    {} `{}`\n",
                    if d.present { "present" } else { "missing" },
                    d.rule
                ));
            }
        }
        if a.agent == "claude" {
            match &a.sandbox {
                None => out.push_str("  sandbox: not configured: Bash runs unsandboxed\n"),
                Some(s) => out.push_str(&format!(
                    "  sandbox: enabled {}, failIfUnavailable {}, allowUnsandboxedCommands {}, denyWrite [{}]: {}\n",
                    yes_no(s.enabled),
                    yes_no(s.fail_if_unavailable),
                    yes_no(s.allow_unsandboxed_commands),
                    s.deny_write.join(", "),
                    if s.in_force { "in force" } else { "not in force" }
                )),
            }
        }
        if let Some(p) = a.profile {
            out.push_str(&format!(
                "  permission profile `referee` (state folder read-only): {}\n",
                if p { "the default" } else { "absent" }
            ));
        }
        if let Some(t) = a.project_trusted {
            out.push_str(&format!("  project trusted: {}\n", yes_no(t)));
        }
        for p in &a.places {
            out.push_str(&format!(
                "  {}: {} by the agent: {}\n",
                p.place,
                if p.writable_by_agent {
                    "writable"
                } else {
                    "not writable"
                },
                p.why
            ));
        }
        for n in &a.notes {
            out.push_str(&format!("  note: {}\n", n.replace('\n', "\n  ")));
        }
    }
    out.push('\n');
    for line in &r.overall {
        out.push_str(&format!("{line}\n"));
    }
    out
}
