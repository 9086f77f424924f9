//! Who may do what (SPEC §8.1): only the referee records a driven loop's
//! rounds, only a person waives, rejects, approves, amends, resumes, restores,
//! repairs or re-initialises. A driver registers the agent process tree it
//! referees (`run` itself, a subreaper, so its writer's orphans stay below
//! it; the Stop hook the agent that called it) in the per-user state folder,
//! and those commands refuse to run below a registered process. Does I/O
//! (`/proc`, the state folder).
//!
//! The registry is looked up in the state folder the environment names and
//! in the one of the person's home as the password database gives it, so an
//! agent that moves `REFEREE_STATE_DIR` or `HOME` in its own shell is still
//! found.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

use crate::agent::tree;
use crate::exit::hinted;

/// One registered agent process tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registered {
    pub pid: i32,
    /// Its start time in clock ticks since boot: with the pid, its identity.
    pub start: u64,
    /// What it is, for the message: `the writer of \`referee run\``.
    pub what: String,
    /// The loop it works on.
    pub loop_name: String,
    /// The state folder of that loop.
    pub state: String,
}

/// A registration that ends when it is dropped (`run`'s own).
pub struct Registration {
    path: PathBuf,
}

impl Registration {
    /// Leaves the entry in place after this process ends: the Stop hook's
    /// agent lives on between stops (the entry is pruned once it is gone).
    pub fn keep(self) {
        std::mem::forget(self);
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The folder of this boot's registrations below `root`.
fn boot_dir(root: &Path) -> PathBuf {
    let boot = tree::boot_id().unwrap_or_else(|| "unknown-boot".into());
    root.join("agents").join(boot)
}

fn entry(root: &Path, pid: i32, start: u64) -> PathBuf {
    boot_dir(root).join(format!("{pid}.{start}.json"))
}

/// Registers process `pid` and everything below it as a refereed agent.
/// Entries of processes that have ended are removed on the way.
pub fn register(
    pid: i32,
    what: &str,
    loop_name: &str,
    state: &Path,
) -> anyhow::Result<Registration> {
    let root = super::state_root()?;
    let proc = tree::get(pid)
        .ok_or_else(|| anyhow::anyhow!("cannot read process {pid} in `/proc`, so its commands cannot be told from a person's; nothing was done"))?;
    let dir = boot_dir(&root);
    let mut builder = std::fs::DirBuilder::new();
    std::os::unix::fs::DirBuilderExt::mode(builder.recursive(true), 0o700);
    builder
        .create(&dir)
        .with_context(|| format!("cannot create `{}`", dir.display()))?;
    prune(&dir);
    let record = Registered {
        pid,
        start: proc.start,
        what: what.to_string(),
        loop_name: loop_name.to_string(),
        state: state.display().to_string(),
    };
    let path = entry(&root, pid, proc.start);
    crate::statefs::replace(&root, &path, &serde_json::to_vec(&record)?)?;
    Ok(Registration { path })
}

/// The agent `name` (`claude`, `codex`, `gemini`) that started the Stop
/// hook running this process: the nearest ancestor that is not a shell
/// (Claude Code runs hooks through `sh -c`, Codex and Gemini CLI directly),
/// when its command names the agent. `None` otherwise: a person who pipes
/// a payload into `referee hook stop` by hand must not have their terminal
/// registered as an agent.
pub fn hook_agent(name: &str) -> Option<i32> {
    let mut at = tree::get(std::process::id() as i32)?.ppid;
    for _ in 0..8 {
        let comm = std::fs::read_to_string(format!("/proc/{at}/comm")).ok()?;
        if !SHELLS.contains(&comm.trim()) {
            return names(at, comm.trim(), name).then_some(at);
        }
        at = tree::get(at)?.ppid;
    }
    None
}

/// The nearest ancestor of this process that is an agent CLI (`claude`,
/// `codex`, `gemini`, told as [`hook_agent`] tells them), registered or
/// not: its pid and name.
pub fn below_agent_cli() -> Option<(i32, &'static str)> {
    let mut seen = std::collections::HashSet::new();
    let mut at = tree::get(std::process::id() as i32)?.ppid;
    while at > 1 && seen.insert(at) {
        let comm = std::fs::read_to_string(format!("/proc/{at}/comm")).unwrap_or_default();
        if let Some(name) = ["claude", "codex", "gemini"]
            .into_iter()
            .find(|n| names(at, comm.trim(), n))
        {
            return Some((at, name));
        }
        at = tree::get(at)?.ppid;
    }
    None
}

/// Whether process `pid` (its `comm` given) is the agent `name`: its
/// program is named so (a native `claude`, `codex`), or it runs a script
/// from a path that names it (`node …/gemini`, `node …/claude-code/cli.js`).
fn names(pid: i32, comm: &str, name: &str) -> bool {
    if comm.starts_with(name) {
        return true;
    }
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let mut args = cmdline.split(|&b| b == 0).map(String::from_utf8_lossy);
    let program = args.next().unwrap_or_default();
    let script = args.next().unwrap_or_default();
    let base = |p: &str| p.rsplit('/').next().unwrap_or_default().to_string();
    base(&program).starts_with(name)
        || (script.contains('/') && script.split('/').any(|part| part.starts_with(name)))
}

const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "fish", "ksh", "busybox"];

/// Removes the entries whose process is gone (or is another process now).
fn prune(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some((pid, start)) = name
            .to_str()
            .and_then(|n| n.strip_suffix(".json"))
            .and_then(|n| n.split_once('.'))
            .and_then(|(p, s)| Some((p.parse::<i32>().ok()?, s.parse::<u64>().ok()?)))
        else {
            continue;
        };
        if tree::get(pid).is_none_or(|p| p.start != start) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The state folders whose registries count: the one the environment names
/// and the default one of the person's home in the password database.
fn roots() -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Ok(root) = super::state_root() {
        roots.push(root);
    }
    if let Ok(Some(user)) = nix::unistd::User::from_uid(nix::unistd::getuid()) {
        let default = user.dir.join(".local/state/referee");
        if !roots.contains(&default) {
            roots.push(default);
        }
    }
    roots
}

/// The registered agent this process runs below, if any: the nearest
/// registered ancestor.
pub fn inside_agent() -> Option<Registered> {
    let roots = roots();
    let me = std::process::id() as i32;
    let mut seen = std::collections::HashSet::new();
    let mut at = tree::get(me)?.ppid;
    while at > 1 && seen.insert(at) {
        let proc = tree::get(at)?;
        for root in &roots {
            let path = entry(root, proc.pid, proc.start);
            if let Ok(bytes) = std::fs::read(&path) {
                let found = serde_json::from_slice::<Registered>(&bytes)
                    .ok()
                    .filter(|r| r.pid == proc.pid && r.start == proc.start);
                return Some(found.unwrap_or(Registered {
                    pid: proc.pid,
                    start: proc.start,
                    what: "a refereed agent".into(),
                    loop_name: "?".into(),
                    state: "?".into(),
                }));
            }
        }
        at = proc.ppid;
    }
    None
}

/// Refuses `command` when it runs inside a refereed agent's process tree.
pub fn refuse_inside_agent(command: &str) -> anyhow::Result<()> {
    let Some(agent) = inside_agent() else {
        return Ok(());
    };
    Err(hinted(
        format!(
            "`referee {command}` was run from inside {} (pid {}) of loop `{}`: only the referee records a refereed loop's rounds, and only a person waives, rejects, approves, amends, resumes, restores, repairs or starts a loop; nothing was done",
            agent.what, agent.pid, agent.loop_name
        ),
        "a person runs it from their own shell, outside the agent's session",
    ))
}
