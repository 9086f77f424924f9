//! Presets (SPEC §6): how each tool is called — argv, environment and stdin —
//! for a writer or a reviewer. Pure: everything a call needs comes in as data.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::process::Call;
use crate::contract::{Agent, Preset};

/// Which side of the loop a call plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Writer,
    Reviewer,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Writer => "writer",
            Role::Reviewer => "reviewer",
        }
    }
}

/// Files a call may read or write, in the round's work folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Files {
    /// The prompt, also given on stdin.
    pub prompt: PathBuf,
    /// The round's patch (reviewer).
    pub patch: PathBuf,
    /// The open must-fix findings as native JSON (writer).
    pub findings: PathBuf,
    /// `contracts/findings.schema.json`.
    pub schema: PathBuf,
    /// Where an agent may write its findings or responses instead of stdout
    /// (and the codex `-o` final message).
    pub output: PathBuf,
    /// Where the referee records the call's processes (not for the agent).
    pub procs: PathBuf,
}

/// What a call is for.
pub struct Context<'a> {
    pub role: Role,
    pub loop_name: &'a str,
    pub round: u32,
    pub repo: &'a Path,
    pub prompt: &'a str,
    pub files: &'a Files,
    /// The findings schema, for flags that take it inline.
    pub schema: &'a str,
    /// What is left of the loop's dollar budget, if it has one.
    pub remaining_usd: Option<f64>,
    /// `codex exec review --base <rev>` when the loop did not start at HEAD.
    pub review_base: Option<&'a str>,
}

/// Builds the call for `agent` in `ctx`.
pub fn build(agent: &Agent, ctx: &Context<'_>) -> Call {
    let cwd = match &agent.cwd {
        Some(dir) => ctx.repo.join(dir),
        None => ctx.repo.to_path_buf(),
    };
    let mut args: Vec<OsString> = Vec::new();
    let prompt = Some(ctx.prompt.as_bytes().to_vec());
    let (program, stdin) = match agent.preset {
        Preset::Claude => {
            args.extend(os(&["-p", "--output-format", "json"]));
            match ctx.role {
                Role::Writer => {
                    args.extend(os(&["--permission-mode", "acceptEdits"]));
                    if let Some(usd) = ctx.remaining_usd {
                        let usd = format!("{:.2}", usd.max(0.0));
                        args.extend(os(&["--max-budget-usd", &usd]));
                    }
                }
                Role::Reviewer => {
                    args.extend(os(&[
                        "--permission-mode",
                        "plan",
                        "--json-schema",
                        ctx.schema,
                    ]));
                }
            }
            if let Some(model) = &agent.model {
                args.extend(os(&["--model", model]));
            }
            if !agent.allowed_tools.is_empty() {
                args.extend(os(&["--allowedTools", &agent.allowed_tools.join(",")]));
            }
            if let Some(turns) = agent.max_turns {
                args.extend(os(&["--max-turns", &turns.to_string()]));
            }
            ("claude", prompt)
        }
        Preset::Codex => {
            let sandbox = agent.sandbox.as_deref().unwrap_or(match ctx.role {
                Role::Writer => "workspace-write",
                Role::Reviewer => "read-only",
            });
            args.extend(os(&[
                "exec",
                "--json",
                "--sandbox",
                sandbox,
                "--skip-git-repo-check",
                "-C",
            ]));
            args.push(cwd.clone().into_os_string());
            args.push("-o".into());
            args.push(ctx.files.output.clone().into_os_string());
            if ctx.role == Role::Reviewer {
                args.push("--output-schema".into());
                args.push(ctx.files.schema.clone().into_os_string());
            }
            if let Some(model) = &agent.model {
                args.extend(os(&["-m", model]));
            }
            ("codex", prompt)
        }
        Preset::CodexReview => {
            // `-C` belongs to `exec`, before the `review` subcommand.
            args.extend(os(&["exec", "-C"]));
            args.push(cwd.clone().into_os_string());
            args.push("review".into());
            match ctx.review_base {
                Some(base) => args.extend(os(&["--base", base])),
                None => args.push("--uncommitted".into()),
            }
            if let Some(model) = &agent.model {
                args.extend(os(&["-m", model]));
            }
            ("codex", None)
        }
        Preset::Gemini => {
            // The prompt goes on stdin (gemini puts stdin before the `-p`
            // text): a reviewer prompt with a large patch exceeds the 128 KiB
            // that Linux allows one argument. Headless gemini refuses a folder
            // it has not been told to trust (exit 55); the contract naming
            // this repo is that say-so, as `claude -p` and `codex exec` need
            // none (tests/mock/FACTS.md).
            args.extend(os(&[
                "-p",
                "Follow the instructions given on standard input.",
                "--output-format",
                "json",
                "--skip-trust",
            ]));
            if ctx.role == Role::Writer {
                args.extend(os(&["--approval-mode", "auto_edit"]));
            }
            if let Some(model) = &agent.model {
                args.extend(os(&["-m", model]));
            }
            ("gemini", prompt)
        }
        Preset::Command | Preset::Tests => {
            // Exactly the contract's argv; `bin` does not apply.
            let argv = agent.command.clone().unwrap_or_default();
            let (program, rest) = match argv.split_first() {
                Some((first, rest)) => (first.clone(), rest.to_vec()),
                None => ("false".to_string(), Vec::new()),
            };
            args.extend(rest.iter().map(OsString::from));
            let stdin = (agent.preset == Preset::Command).then(|| ctx.prompt.as_bytes().to_vec());
            let mut call = finish(agent, ctx, &program, args, stdin, cwd);
            call.program = program;
            return call;
        }
    };
    finish(agent, ctx, program, args, stdin, cwd)
}

/// The program a call of `agent` starts: its `bin`, the preset's tool, or
/// the first word of its `command`.
pub fn program_of(agent: &Agent) -> Option<String> {
    match agent.preset {
        Preset::Command | Preset::Tests => agent.command.as_ref()?.first().cloned(),
        preset => Some(agent.bin.clone().unwrap_or_else(|| {
            match preset {
                Preset::Claude => "claude",
                Preset::Codex | Preset::CodexReview => "codex",
                Preset::Gemini => "gemini",
                Preset::Command | Preset::Tests => "",
            }
            .to_string()
        })),
    }
}

/// How to install the tool a preset runs, for a message.
pub fn install_hint(preset: Preset) -> Option<&'static str> {
    match preset {
        Preset::Claude => Some("npm install -g @anthropic-ai/claude-code"),
        Preset::Codex | Preset::CodexReview => Some("npm install -g @openai/codex"),
        Preset::Gemini => Some("npm install -g @google/gemini-cli"),
        Preset::Command | Preset::Tests => None,
    }
}

/// Whether `program` can be started from `cwd`: a path that exists and is
/// executable, or a name found on `PATH`.
pub fn resolves(program: &str, cwd: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let runnable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        return runnable(&cwd.join(program));
    }
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| runnable(&dir.join(program))))
}

fn os(words: &[&str]) -> Vec<OsString> {
    words.iter().map(OsString::from).collect()
}

fn finish(
    agent: &Agent,
    ctx: &Context<'_>,
    default_program: &str,
    mut args: Vec<OsString>,
    stdin: Option<Vec<u8>>,
    cwd: PathBuf,
) -> Call {
    // Extra arguments come after the preset's own. For codex the prompt is
    // read from stdin (`-`), which goes last.
    args.extend(agent.args.iter().map(OsString::from));
    if agent.preset == Preset::Codex {
        args.push(OsString::from("-"));
    }
    let mut env: Vec<(String, String)> = vec![
        ("REFEREE_LOOP".into(), ctx.loop_name.to_string()),
        ("REFEREE_ROUND".into(), ctx.round.to_string()),
        ("REFEREE_ROLE".into(), ctx.role.as_str().to_string()),
        ("REFEREE_PROMPT_FILE".into(), path(&ctx.files.prompt)),
        ("REFEREE_SCHEMA_FILE".into(), path(&ctx.files.schema)),
        ("REFEREE_OUTPUT_FILE".into(), path(&ctx.files.output)),
    ];
    match ctx.role {
        Role::Reviewer => env.push(("REFEREE_PATCH_FILE".into(), path(&ctx.files.patch))),
        Role::Writer => env.push(("REFEREE_FINDINGS_FILE".into(), path(&ctx.files.findings))),
    }
    env.extend(agent.env.iter().map(|(k, v)| (k.clone(), v.clone())));
    Call {
        program: agent
            .bin
            .clone()
            .unwrap_or_else(|| default_program.to_string()),
        args,
        env,
        stdin,
        cwd,
        timeout: agent.timeout.as_duration(),
        record: Some(ctx.files.procs.clone()),
    }
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

#[cfg(test)]
mod tests;
