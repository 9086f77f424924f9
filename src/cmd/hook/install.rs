//! `referee hook install|uninstall`: adds referee's Stop hook to the
//! project's `.claude/settings.json` or `.codex/hooks.json`, merged with what
//! is there, with what the host can enforce around the writer (Claude Code's
//! deny rules and, with `--sandbox`, its sandbox; Codex's permission profile
//! in `.codex/config.toml`), and takes it all out again. What an install did
//! is kept in the pins of the state folder, in the per-user state folder
//! (`anchor::pins`: no copy of the file, settings may hold secrets), so an
//! uninstall right after puts the original bytes back, and snapshots know to
//! take the files from the loop's base (docs/hooks.md).

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::Args;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::anchor::pins::Pins;
use crate::cmd::hook::HookAgent;
use crate::digest::sha256_hex;
use crate::engine::Loop;
use crate::exit::Exit;
use crate::hook::boundary::{self, Places};
use crate::hook::codex_config::{self, Profile};
use crate::hook::json_edit::Edit;
use crate::hook::note::CLAUDE_BLOCK_CAP;
use crate::hook::settings::{self, CAP_VAR, Entry, Guard, Made};
use crate::report::error::with_hints;
use crate::state::LoopSelect;
use crate::state::State;

#[derive(Debug, Args)]
pub struct HookInstallArgs {
    /// The agent whose settings get the hook.
    #[arg(long, value_enum)]
    pub agent: HookAgent,
    /// The loop the hook referees (default: the one loop in progress when
    /// the agent stops).
    #[arg(long = "loop", value_name = "LOOP")]
    pub name: Option<String>,
    /// How the agent runs referee (default: `referee` when that is this
    /// program on PATH, else this program's absolute path).
    #[arg(long, value_name = "PROGRAM")]
    pub program: Option<String>,
    /// Also turn on Claude Code's sandbox for Bash, failing closed, with
    /// `.referee/` and `.git/` denied to writes (needs `bwrap` and `socat`).
    #[arg(long)]
    pub sandbox: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct HookUninstallArgs {
    /// The agent whose settings lose the hook.
    #[arg(long, value_enum)]
    pub agent: HookAgent,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// What the hook needs besides the reviewer's call: the snapshot, waiting
/// for another stop of the same loop, the record.
const MARGIN_SECS: u64 = 300;
/// The reviewer timeout when no loop names one (the contract's default).
const DEFAULT_TIMEOUT_SECS: u64 = 30 * 60;
/// Codex's project config, where its permission profile goes.
pub const CODEX_CONFIG: &str = ".codex/config.toml";

/// What `hook install` did to one agent's settings file.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Record {
    agent: String,
    /// The settings file, repo-relative.
    file: String,
    command: String,
    /// The file as the install left it.
    written_sha256: String,
    /// The edits that made it, in order (undone in reverse).
    edits: Vec<Edit>,
    made: Made,
    /// Folders the install created for the file, deepest first.
    created_dirs: Vec<String>,
    /// Codex's `config.toml`, when the install added referee's profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    config: Option<ConfigRecord>,
}

/// What `hook install --agent codex` did to `.codex/config.toml`.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct ConfigRecord {
    edits: Vec<Edit>,
    /// The file did not exist.
    made_file: bool,
}

fn file_of(agent: HookAgent) -> &'static str {
    match agent {
        HookAgent::Claude => ".claude/settings.json",
        HookAgent::Codex => ".codex/hooks.json",
        HookAgent::Gemini => ".gemini/settings.json",
    }
}

fn name_of(agent: HookAgent) -> &'static str {
    match agent {
        HookAgent::Claude => "claude",
        HookAgent::Codex => "codex",
        HookAgent::Gemini => "gemini",
    }
}

/// The install's name in the pins' freeze lists.
fn frozen_by(agent: HookAgent) -> String {
    format!("hook install --agent {}", name_of(agent))
}

fn record_name(agent: HookAgent) -> String {
    format!("hooks/{}.json", name_of(agent))
}

/// Where an older referee kept the record, under the state folder: read for
/// an uninstall (a person's command), never for what snapshots freeze.
fn legacy_record_path(state: &State, agent: HookAgent) -> PathBuf {
    state.root.join(record_name(agent))
}

fn read_record(state: &State, pins: &Pins, agent: HookAgent) -> anyhow::Result<Option<Record>> {
    let path = pins.file(&record_name(agent));
    let (path, bytes) = match crate::statefs::read(pins.base(), &path)? {
        Some(bytes) => (path, bytes),
        None => {
            let legacy = legacy_record_path(state, agent);
            match crate::statefs::read(&state.root, &legacy)? {
                Some(bytes) => (legacy, bytes),
                None => return Ok(None),
            }
        }
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .with_context(|| format!("`{}` is not a hook install record", path.display()))
}

/// Where the writer must not write and how it would start referee.
fn places(state: &State, program: &str) -> anyhow::Result<Places> {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let anchor = crate::anchor::state_root()?;
    let mut programs = vec!["referee".to_string()];
    if program != "referee" {
        programs.push(program.to_string());
    }
    Ok(Places {
        state_rel: state.inside_repo(),
        state_abs: state.root.display().to_string(),
        anchor: boundary::rule_path(&anchor, home.as_deref()),
        programs,
    })
}

pub fn install(state: &State, args: HookInstallArgs) -> anyhow::Result<Exit> {
    let agent = args.agent;
    let file = file_of(agent);
    let path = state.repo.join(file);
    let loops = loops(state, args.name.as_deref())?;
    let mut warnings = Vec::new();
    if loops.is_empty() {
        warnings.push(format!(
            "no loop in `{}` yet: the hook lets every stop through until `referee init` writes one",
            super::super::shown(&state.root)
        ));
    }
    if args.name.is_none() && loops.len() > 1 {
        warnings.push(with_hints(&format!("{} loops here: the hook referees the one that takes rounds when the agent stops, and refuses to guess between several", loops.len()), &[format!("`referee hook install --agent {} --loop NAME` names it", name_of(agent))]));
    }
    let mut timeout = 0u64;
    let mut max_rounds = 0u32;
    for (lp, rounds) in &loops {
        match &lp.contract().reviewer {
            Some(reviewer) => timeout = timeout.max(reviewer.timeout.as_duration().as_secs()),
            None => warnings.push(with_hints(
                &format!(
                    "loop `{}` has no `[reviewer]`: the hook cannot review its rounds",
                    lp.name
                ),
                &[format!(
                    "`referee init --loop {} --reviewer PRESET --force` (before round 1)",
                    lp.name
                )],
            )),
        }
        max_rounds = max_rounds.max(*rounds);
    }
    if timeout == 0 {
        timeout = DEFAULT_TIMEOUT_SECS;
    }
    // Every round but the last may block a stop, all in one turn.
    let cap = (agent == HookAgent::Claude && max_rounds.saturating_sub(1) > CLAUDE_BLOCK_CAP)
        .then_some(max_rounds);
    let program = match &args.program {
        Some(p) => p.clone(),
        None => default_program()?,
    };
    // The project named, so that the hook finds its loop wherever the
    // agent's shell has gone.
    let mut command = format!(
        "{} hook stop --agent {} --project {}",
        crate::text::shell_word(&program),
        name_of(agent),
        crate::text::shell_word(&state.repo.to_string_lossy())
    );
    if let Some(name) = &args.name {
        command.push_str(&format!(" --loop {}", crate::text::shell_word(name)));
    }
    let entry = Entry {
        agent: match agent {
            HookAgent::Claude => crate::hook::Agent::Claude,
            HookAgent::Codex => crate::hook::Agent::Codex,
            HookAgent::Gemini => crate::hook::Agent::Gemini,
        },
        command: command.clone(),
        timeout_secs: timeout + MARGIN_SECS,
    };
    state.create()?;
    let pins = Pins::of(&state.repo, &state.root)?;
    let places = places(state, &program)?;

    let before = read_text(&state.repo, &path)?;
    let shown_path = super::super::shown(&path);
    let mut installed = settings::install(before.as_deref().unwrap_or_default(), &entry, cap)
        .with_context(|| format!("`{shown_path}`"))?;
    let mut deny = Vec::new();
    if agent == HookAgent::Claude {
        let guard = Guard {
            deny: boundary::claude_deny(&places, &super::super::PERSONS_COMMANDS),
            sandbox: args.sandbox.then(|| boundary::claude_deny_write(&places)),
        };
        let guarded =
            settings::guard(&installed.text, &guard).with_context(|| format!("`{shown_path}`"))?;
        installed.text = guarded.text;
        installed.edits.extend(guarded.edits);
        installed.made = installed.made.and(Made {
            file: false,
            ..guarded.made
        });
        deny = guard.deny;
    }
    let mut created_dirs = Vec::new();
    let result = if installed.edits.is_empty() {
        "unchanged"
    } else {
        created_dirs = create_parents(&state.repo, &path)?;
        write_text(&path, &installed.text)?;
        if before.is_some() {
            "updated"
        } else {
            "created"
        }
    };

    let old = read_record(state, &pins, agent)?;
    let mut profile_lines = Vec::new();
    let mut config = old.as_ref().and_then(|r| r.config.clone());
    if agent == HookAgent::Codex {
        let (lines, added) = codex_profile(state, &places)?;
        profile_lines = lines;
        if let Some(added) = added {
            config = Some(match config {
                Some(old) => ConfigRecord {
                    edits: old.edits.into_iter().chain(added.edits).collect(),
                    made_file: old.made_file || added.made_file,
                },
                None => added,
            });
        }
    }
    let before_sha = sha256_hex(before.as_deref().unwrap_or_default().as_bytes());
    let record = match old {
        // This install continues the last one: both sets of edits undo.
        Some(old) if old.file == file && old.written_sha256 == before_sha => Record {
            edits: old.edits.into_iter().chain(installed.edits).collect(),
            made: old.made.and(installed.made.clone()),
            created_dirs: old.created_dirs.into_iter().chain(created_dirs).collect(),
            config,
            ..new_record(agent, &command, &installed.text)
        },
        // The file changed since: the old edits no longer undo, but what
        // they added is still the install's to take out.
        Some(old) if old.file == file => Record {
            edits: installed.edits,
            made: old.made.and(installed.made.clone()),
            created_dirs: old.created_dirs.into_iter().chain(created_dirs).collect(),
            config,
            ..new_record(agent, &command, &installed.text)
        },
        _ => Record {
            edits: installed.edits,
            made: installed.made.clone(),
            created_dirs,
            config,
            ..new_record(agent, &command, &installed.text)
        },
    };
    pins.create()?;
    crate::statefs::replace(
        pins.base(),
        &pins.file(&record_name(agent)),
        &serde_json::to_vec_pretty(&record)?,
    )?;
    let mut frozen = vec![file.to_string()];
    if record.config.is_some() {
        frozen.push(CODEX_CONFIG.to_string());
    }
    pins.set_frozen(&frozen_by(agent), &frozen)?;
    // The record an older referee kept where the writer can write it.
    let _ = std::fs::remove_file(legacy_record_path(state, agent));

    let cap_line = installed.made.cap.as_ref().map(|c| {
        format!(
            "set `{CAP_VAR}` to {} in its `env`: a loop of {max_rounds} rounds may block {} stops in a row, and Claude Code honours {CLAUDE_BLOCK_CAP} unless told",
            c.after,
            max_rounds - 1
        )
    });
    let mut boundary_lines = Vec::new();
    if agent == HookAgent::Claude {
        boundary_lines.push(format!(
            "`permissions.deny` holds {} rules: no `Edit`/`Write` of `{}/`, `.git/`, the settings files and the anchors (`{}`), no `referee` command only a person runs",
            deny.len(),
            places.state_rel.as_deref().unwrap_or(&places.state_abs),
            places.anchor
        ));
        if args.sandbox {
            boundary_lines.push(
                "`sandbox` is on, fails closed and runs nothing outside it; Bash cannot write `.referee/` or `.git/` (`filesystem.denyWrite`)".to_string(),
            );
            for tool in ["bwrap", "socat"] {
                if super::super::on_path(tool).is_none() {
                    warnings.push(with_hints(&format!("`{tool}` is not on PATH: Claude Code will refuse to start with this sandbox"), &["install it (`apt install bubblewrap socat`)"]));
                }
            }
        } else {
            boundary_lines.push(with_hints(
                "no sandbox: under `bypassPermissions` the writer can still run referee and write `.referee/` through `sh -c`, a script or `python3 -c`",
                &["`referee hook install --agent claude --sandbox` (needs `bwrap` and `socat`); `referee doctor` says what holds"],
            ));
        }
    }
    let next = next_steps(agent, &state.repo);
    if args.json {
        let value = json!({
            "agent": name_of(agent),
            "file": path.display().to_string(),
            "result": result,
            "command": command,
            "timeout": entry.timeout_secs,
            "block_cap": installed.made.cap.as_ref().map(|c| c.after.clone()),
            "deny": deny,
            "sandbox": args.sandbox && agent == HookAgent::Claude,
            "codex_profile": (agent == HookAgent::Codex).then(|| record.config.is_some()),
            "frozen": frozen,
            "warnings": warnings,
            "next": next,
        });
        super::super::emit_exact(
            format!("{}\n", serde_json::to_string_pretty(&value)?).as_bytes(),
        )?;
        return Ok(Exit::Success);
    }
    let mut out = format!(
        "{result} `{shown_path}`: {} hook `{command}` (timeout {} s: the reviewer's {} s and {MARGIN_SECS} s for the rest)\n",
        entry.event(),
        entry.timeout_secs,
        timeout
    );
    if let Some(line) = cap_line {
        out.push_str(&format!("{line}\n"));
    }
    for line in boundary_lines.iter().chain(&profile_lines) {
        out.push_str(&format!("{line}\n"));
    }
    out.push_str(&format!(
        "snapshots take `{}` from the loop's base: the hook's entry is part of no round's patch\n",
        frozen.join("`, `")
    ));
    for w in &warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out.push('\n');
    out.push_str(&next.join("\n"));
    out.push('\n');
    super::super::emit(&out)?;
    Ok(Exit::Success)
}

/// Adds referee's permission profile to `.codex/config.toml`: what to say,
/// and what was added (none when it was there, or the person's own default
/// profile is left as it is).
fn codex_profile(
    state: &State,
    places: &Places,
) -> anyhow::Result<(Vec<String>, Option<ConfigRecord>)> {
    let path = state.repo.join(CODEX_CONFIG);
    let shown = super::super::shown(&path);
    let Some(rel) = &places.state_rel else {
        return Ok((
            vec![format!(
                "the state folder `{}` is outside the work tree: Codex's sandbox already keeps it read-only",
                places.state_abs
            )],
            None,
        ));
    };
    let before = read_text(&state.repo, &path)?;
    let added = codex_config::add(before.as_deref().unwrap_or_default(), rel)
        .with_context(|| format!("`{shown}`"))?;
    let profile = format!(
        "`{shown}` makes the permission profile `{}` the default: Codex's sandbox keeps `{rel}/` read-only",
        codex_config::PROFILE
    );
    let caveat = "  it holds only when Codex runs sandboxed with no `-s`/`--sandbox` (which makes Codex ignore profiles) and not `danger-full-access`";
    match added {
        Profile::Present => Ok((vec![profile, caveat.into()], None)),
        Profile::Added { text, edits } => {
            create_parents(&state.repo, &path)?;
            write_text(&path, &text)?;
            Ok((
                vec![profile, caveat.into()],
                Some(ConfigRecord {
                    edits,
                    made_file: before.is_none(),
                }),
            ))
        }
        Profile::Other(name) => Ok((
            vec![with_hints(
                &format!(
                    "`{shown}` makes `{name}` the default permission profile: referee left it, so `{rel}/` stays writable to Codex"
                ),
                &[format!(
                    "add `\"{rel}\" = \"read\"` to `[permissions.{name}.filesystem.\":workspace_roots\"]` in `{shown}`"
                )],
            )],
            None,
        )),
    }
}

fn new_record(agent: HookAgent, command: &str, written: &str) -> Record {
    Record {
        agent: name_of(agent).to_string(),
        file: file_of(agent).to_string(),
        command: command.to_string(),
        written_sha256: sha256_hex(written.as_bytes()),
        edits: Vec::new(),
        made: Made::default(),
        created_dirs: Vec::new(),
        config: None,
    }
}

pub fn uninstall(state: &State, args: HookUninstallArgs) -> anyhow::Result<Exit> {
    let agent = args.agent;
    let path = state.repo.join(file_of(agent));
    let pins = Pins::of(&state.repo, &state.root)?;
    let record = read_record(state, &pins, agent)?;
    let current = read_text(&state.repo, &path)?;
    let made = record.as_ref().map(|r| r.made.clone()).unwrap_or_default();
    let result = match &current {
        None => "absent",
        Some(current) => {
            let mut text = match &record {
                // Nothing changed since the install: undo its edits exactly.
                Some(r) if r.written_sha256 == sha256_hex(current.as_bytes()) => {
                    let mut text = current.clone();
                    for edit in r.edits.iter().rev() {
                        text = edit.inverse().apply(&text).with_context(|| {
                            format!(
                                "`{}`: the install's edits do not undo (this is a bug in referee)",
                                path.display()
                            )
                        })?;
                    }
                    if settings::installed_command(&text).is_some() {
                        text = settings::uninstall(&text, &Made::default())
                            .with_context(|| format!("`{}`", path.display()))?;
                    }
                    text
                }
                _ => settings::uninstall(current, &made)
                    .with_context(|| format!("`{}`", path.display()))?,
            };
            // What an earlier install added that its edits no longer undo.
            text =
                settings::unguard(&text, &made).with_context(|| format!("`{}`", path.display()))?;
            let made_file = record.as_ref().is_some_and(|r| r.made.file);
            if made_file && (text.trim().is_empty() || settings::is_empty_object(&text)) {
                std::fs::remove_file(&path)
                    .with_context(|| format!("cannot remove `{}`", path.display()))?;
                remove_dirs(state, record.iter().flat_map(|r| &r.created_dirs));
                "removed"
            } else if &text != current {
                write_text(&path, &text)?;
                "updated"
            } else {
                "unchanged"
            }
        }
    };
    let mut notes = Vec::new();
    if let Some(config) = record.as_ref().and_then(|r| r.config.as_ref()) {
        notes.extend(remove_codex_profile(state, config)?);
        if let Some(r) = &record {
            remove_dirs(state, &r.created_dirs);
        }
    }
    let file = pins.file(&record_name(agent));
    if std::fs::symlink_metadata(&file).is_ok() {
        std::fs::remove_file(&file)
            .with_context(|| format!("cannot remove `{}`", file.display()))?;
    }
    let _ = std::fs::remove_file(legacy_record_path(state, agent));
    pins.set_frozen(&frozen_by(agent), &[])?;
    if args.json {
        let value = json!({
            "agent": name_of(agent),
            "file": path.display().to_string(),
            "result": result,
            "notes": notes,
        });
        super::super::emit_exact(
            format!("{}\n", serde_json::to_string_pretty(&value)?).as_bytes(),
        )?;
    } else {
        let shown = super::super::shown(&path);
        let line = match result {
            "absent" => format!("`{shown}` does not exist: no hook to remove"),
            "unchanged" => format!("`{shown}` holds no referee hook: unchanged"),
            "removed" => format!("removed `{shown}`: the install had created it"),
            _ => format!("updated `{shown}`: referee's Stop hook is out"),
        };
        let mut out = format!("{line}\n");
        for note in &notes {
            out.push_str(&format!("{note}\n"));
        }
        super::super::emit(&out)?;
    }
    Ok(Exit::Success)
}

/// Takes referee's profile out of `.codex/config.toml`; what to say.
fn remove_codex_profile(state: &State, config: &ConfigRecord) -> anyhow::Result<Vec<String>> {
    let path = state.repo.join(CODEX_CONFIG);
    let shown = super::super::shown(&path);
    let Some(current) = read_text(&state.repo, &path)? else {
        return Ok(Vec::new());
    };
    let (text, all) = codex_config::remove(&current, &config.edits);
    let mut notes = Vec::new();
    if config.made_file && text.trim().is_empty() {
        std::fs::remove_file(&path).with_context(|| format!("cannot remove `{shown}`"))?;
        notes.push(format!("removed `{shown}`: the install had created it"));
    } else if text != current {
        write_text(&path, &text)?;
        notes.push(format!(
            "updated `{shown}`: referee's permission profile is out"
        ));
    }
    if !all {
        notes.push(with_hints(&format!("warning: part of referee's permission profile in `{shown}` was edited since, and stays"), &[format!("take out `default_permissions = \"{}\"` and the `[permissions.{}]` tables by hand", codex_config::PROFILE, codex_config::PROFILE)]));
    }
    Ok(notes)
}

/// Removes the folders an install made, deepest first, when empty:
/// something else may live there now.
fn remove_dirs<'a>(state: &State, dirs: impl IntoIterator<Item = &'a String>) {
    for dir in dirs {
        let _ = std::fs::remove_dir(state.repo.join(dir));
    }
}

/// The loops the hook serves, with their round caps in force.
fn loops(state: &State, name: Option<&str>) -> anyhow::Result<Vec<(Loop, u32)>> {
    let names: Vec<String> = match name {
        Some(name) => {
            let select = LoopSelect {
                name: Some(name.to_string()),
            };
            vec![state.select(&select)?.to_string()]
        }
        None => state.loops()?.iter().map(|n| n.to_string()).collect(),
    };
    let mut out = Vec::new();
    for name in names {
        let lp = super::super::open_loop(state, &LoopSelect { name: Some(name) })?;
        let rows = lp.store.read()?.rows;
        let cap = crate::engine::history::effective_max_rounds(lp.contract(), &rows);
        out.push((lp, cap));
    }
    Ok(out)
}

/// What the person does next for the hook to run.
fn next_steps(agent: HookAgent, repo: &Path) -> Vec<String> {
    match agent {
        HookAgent::Claude => vec![
            "next: start a new Claude Code session in this repository (it reads hooks when a session starts);".into(),
            "      `/hooks` in the session lists referee's Stop hook.".into(),
        ],
        HookAgent::Codex => {
            let repo = repo.display();
            vec![
                "next: Codex runs a project's hook only in a trusted project, and only once you trust the hook itself;".into(),
                "      until then it skips the hook without a word.".into(),
                "  1. trust the project: run Codex there once and say yes to its trust question (`codex exec --trust …` does it without asking),".into(),
                "     or add to ~/.codex/config.toml ($CODEX_HOME/config.toml):".into(),
                format!("       [projects.\"{repo}\"]"),
                "       trust_level = \"trusted\"".into(),
                format!("  2. trust the hook: run `codex` in {repo}, open `/hooks`, review referee's Stop hook and trust it."),
                "     Trust covers the hook's exact text: after `referee hook install` changes it, trust it again.".into(),
                "  Automation that vetted the hook may run `codex exec --dangerously-bypass-hook-trust …` instead of step 2.".into(),
            ]
        }
        HookAgent::Gemini => {
            let repo = repo.display();
            vec![
                "next: start a new Gemini CLI session in this repository; it prints a warning naming the project hook `referee` and runs it.".into(),
                "  With folder trust on (`security.folderTrust.enabled` in ~/.gemini/settings.json), Gemini reads no project settings,".into(),
                "  hooks included, until you trust the folder: say \"Trust folder\" when `gemini` asks in it, or add to ~/.gemini/trustedFolders.json:".into(),
                format!("    {{\"{repo}\": \"TRUST_FOLDER\"}}"),
                "  (`gemini --skip-trust` runs in an untrusted folder without its project settings: without the hook). Gemini has no block cap: the loop's `max_rounds` ends it.".into(),
            ]
        }
    }
}

/// `referee` when that is this program on PATH, else this program's path.
fn default_program() -> anyhow::Result<String> {
    let exe = std::env::current_exe().context("cannot tell where this program is")?;
    let exe = std::fs::canonicalize(&exe).unwrap_or(exe);
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("referee"))
            .find(|p| p.is_file())
    });
    if let Some(found) = on_path
        && std::fs::canonicalize(&found).is_ok_and(|f| f == exe)
    {
        return Ok("referee".to_string());
    }
    Ok(exe.display().to_string())
}

/// The settings file's text, or `None` when it does not exist; a link on
/// the way to it (`.claude` linked out of the repository) is refused, so
/// nothing outside is ever read or written.
fn read_text(repo: &Path, path: &Path) -> anyhow::Result<Option<String>> {
    super::super::read_repo_text(repo, path)
}

/// Writes through a temporary file and a rename, so an agent starting a
/// session meanwhile reads the old file or the new one, never half of one.
fn write_text(path: &Path, text: &str) -> anyhow::Result<()> {
    let dir = path.parent().context("the settings file has no folder")?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.referee-{}", std::process::id()));
    std::fs::write(&tmp, text).with_context(|| format!("cannot write `{}`", tmp.display()))?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&tmp, meta.permissions());
    }
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write `{}`", path.display()))
}

/// Creates the folders `path` needs; the ones it made, repo-relative,
/// deepest first.
fn create_parents(repo: &Path, path: &Path) -> anyhow::Result<Vec<String>> {
    let mut missing = Vec::new();
    let mut dir = path.parent();
    while let Some(d) = dir {
        if d.exists() || d == repo {
            break;
        }
        missing.push(d.to_path_buf());
        dir = d.parent();
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create `{}`", parent.display()))?;
    }
    Ok(missing
        .iter()
        .filter_map(|d| d.strip_prefix(repo).ok())
        .map(|d| d.to_string_lossy().replace('\\', "/"))
        .collect())
}
