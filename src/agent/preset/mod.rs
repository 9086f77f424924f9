//! Presets (SPEC §6): how each tool is called — argv, environment and stdin —
//! for a writer, a reviewer or the judge, and how its output is read. One unit
//! per preset, each in its own file; this module holds what every call shares
//! (the referee's environment, the working folder, the contract's extra
//! `args`) and the registry. Pure, but for [`resolves`], which looks at the
//! file system.
//!
//! Adding a preset: its row in the contract's preset table, a new file here
//! implementing [`Unit`], its line in [`unit`], and its section in
//! docs/presets.md.

mod claude;
mod codex;
mod codex_review;
mod command;
mod gemini;
// `tests.rs` is this module's unit tests, so the `tests` preset lives here.
mod test_suite;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::output::{Produced, Reply};
use super::process::{Call, Finished};
use crate::contract::{Agent, Preset};
use crate::findings::{self, FindingsError, Format, Parsed};
use crate::money::Usd;

/// The unit that runs and reads `preset`.
pub fn unit(preset: Preset) -> &'static dyn Unit {
    match preset {
        Preset::Claude => &claude::Claude,
        Preset::Codex => &codex::Codex,
        Preset::CodexReview => &codex_review::CodexReview,
        Preset::Gemini => &gemini::Gemini,
        Preset::Command => &command::Command,
        Preset::Tests => &test_suite::Tests,
    }
}

/// One preset's behaviour: how it is called and how what it printed is read.
/// What it runs, the sides it plays and the options it reads are its row in
/// the contract's preset table ([`Preset::info`]).
pub trait Unit: Sync {
    /// The call's arguments and stdin for `agent` in `ctx`, run in `cwd`.
    fn invocation(&self, agent: &Agent, ctx: &Context<'_>, cwd: &Path) -> Invocation;

    /// Whether exiting with a status other than 0 fails the call (a test run
    /// that fails is findings, not a failure).
    fn exit_fails(&self) -> bool {
        true
    }

    /// The tool's own account of why it exited with a failure, when it
    /// prints one a first line would miss.
    fn failure(&self, _finished: &Finished) -> Option<String> {
        None
    }

    /// What a call that finished as it should brought back for `role`.
    fn read(&self, role: Role, out: &Produced<'_>) -> Result<Reply, String>;

    /// The findings in the review it gave (`Reply::review`), read as
    /// `format`, its row's, with absolute paths under `root`.
    fn findings(&self, review: &[u8], format: Format, root: &str) -> Result<Parsed, FindingsError> {
        findings::parse(review, format, root)
    }

    /// The judge's call through this tool (SPEC §7), if the judge can run as
    /// it: the request as the prompt, the answers through structured output.
    fn judge_invocation(&self, _call: &JudgeCall<'_>) -> Option<Invocation> {
        None
    }

    /// The judge's answers and spend from what its call printed (`stdout`)
    /// and left in its output file.
    fn judgement(
        &self,
        _stdout: &[u8],
        _output_file: &std::io::Result<String>,
    ) -> Result<Judged, String> {
        Err("this preset does not judge".into())
    }
}

/// What an agent CLI said when it failed, in words a person acts on: a
/// login it lacks named with the command that gives it, anything else as
/// it said it, on one line and cut at 200 characters.
pub(crate) fn in_words(tool: Preset, said: &str) -> String {
    let said: String = crate::text::one_line(said.trim())
        .chars()
        .take(200)
        .collect();
    let lower = said.to_lowercase();
    let login = match tool {
        Preset::Claude => "`claude /login` (or set `ANTHROPIC_API_KEY`)",
        Preset::Codex => "`codex login` (or set `OPENAI_API_KEY`)",
        _ => return said,
    };
    let name = tool.as_str();
    if lower.contains("not logged in") || lower.contains("please run /login") {
        return format!("{name} is not logged in (it said \"{said}\"); run {login}");
    }
    if lower.contains("invalid api key") || lower.contains("401 unauthorized") {
        return format!("{name} was refused its credentials (it said \"{said}\"); run {login}");
    }
    said
}

/// The next step when a reviewer `preset` ran gave no readable review:
/// for the presets that hand the CLI referee's findings schema themselves,
/// not the parser's advice to pass one (which is for a person's own
/// calls), but what is left to change. `None`: the parser's hint holds.
pub fn unreadable_review_hint(preset: Preset) -> Option<String> {
    let flag = match preset {
        Preset::Claude => "--json-schema",
        Preset::Codex => "--output-schema",
        _ => return None,
    };
    Some(format!(
        "the {} preset passed referee's findings schema itself (`{flag}`), and the answer did not follow it: \
         read what it said in the kept output, then try another `reviewer.model` or a reviewer prompt that asks for the schema's JSON (`referee docs presets`)",
        preset.as_str()
    ))
}

/// The next step when a review of the contract's reviewer `preset`, run
/// by a person or a skill and handed to `record`, does not read: the call
/// that makes that CLI answer in referee's findings schema, not the
/// tagged-text advice meant for a reviewer that writes prose. `None`: the
/// parser's hint holds (a `command` or `tests` reviewer's output is its
/// own, and `codex exec review` prints its own bullets).
pub fn recorded_review_hint(preset: Preset) -> Option<String> {
    let call = match preset {
        Preset::Codex => {
            "`referee schema > /tmp/findings.schema.json`, then `codex exec --json --sandbox read-only --output-schema /tmp/findings.schema.json -`"
        }
        Preset::Claude => {
            "`claude -p --output-format json --permission-mode plan --json-schema \"$(referee schema)\"`"
        }
        Preset::Gemini => {
            "`gemini -p PROMPT --output-format json`, the prompt asking for the JSON `referee schema` describes"
        }
        _ => return None,
    };
    Some(format!(
        "the contract's reviewer is {}: run it so that it answers in referee's findings schema, {call}, \
         and record what it printed (kept outside the work tree)",
        preset.as_str()
    ))
}

/// Which side of the loop a call plays (the contract's).
pub use crate::contract::Role;

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
    pub remaining_usd: Option<Usd>,
    /// `codex exec review --base <rev>` when the loop did not start at HEAD.
    pub review_base: Option<&'a str>,
}

/// What the judge's call is: no writer, no round folder, its own schema.
pub struct JudgeCall<'a> {
    pub repo: &'a Path,
    pub model: Option<&'a str>,
    /// The instructions and the request, given on stdin.
    pub prompt: &'a str,
    /// The answers schema, for flags that take it inline.
    pub schema: &'a str,
    /// The same schema as a file, for flags that take a path.
    pub schema_file: &'a Path,
    /// Where the tool writes its final message.
    pub output: &'a Path,
}

/// What a judge call answered, read by its preset.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    /// The answers document, as the tool's structured output gave it.
    pub answers: Value,
    /// The model the tool says it ran, when it says.
    pub model: Option<String>,
    pub cost_usd: Option<Usd>,
    pub tokens: Option<u64>,
}

/// A preset's part of a call: its arguments, those that go after the
/// contract's extra `args`, and stdin.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Invocation {
    pub args: Vec<OsString>,
    /// After the contract's `args`: codex reads the prompt from stdin (`-`),
    /// which goes last.
    pub last: Vec<OsString>,
    pub stdin: Option<Vec<u8>>,
}

/// Builds the call for `agent` in `ctx`.
pub fn build(agent: &Agent, ctx: &Context<'_>) -> Call {
    let cwd = match &agent.cwd {
        Some(dir) => ctx.repo.join(dir),
        None => ctx.repo.to_path_buf(),
    };
    let unit = unit(agent.preset);
    let Invocation {
        mut args,
        last,
        stdin,
    } = unit.invocation(agent, ctx, &cwd);
    // Extra arguments come after the preset's own.
    args.extend(agent.args.iter().map(OsString::from));
    args.extend(last);
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
        // A `command` with no words cannot pass the contract; `false` fails
        // the call if one ever comes this far.
        program: program_of(agent).unwrap_or_else(|| "false".into()),
        args,
        env,
        stdin,
        cwd,
        timeout: agent.timeout.as_duration(),
        record: Some(ctx.files.procs.clone()),
    }
}

/// The findings in the review the reviewer `preset` gave, run in `root`.
pub fn findings_of(preset: Preset, review: &[u8], root: &str) -> Result<Parsed, FindingsError> {
    unit(preset).findings(review, preset.info().review, root)
}

/// The program a call of `agent` starts: its `bin`, the preset's tool, or
/// the first word of its `command`.
pub fn program_of(agent: &Agent) -> Option<String> {
    match agent.preset.info().tool {
        Some(tool) => Some(agent.bin.clone().unwrap_or_else(|| tool.to_string())),
        // Exactly the contract's argv; `bin` does not apply.
        None => agent.command.as_ref()?.first().cloned(),
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

/// `words` as arguments.
fn os(words: &[&str]) -> Vec<OsString> {
    words.iter().map(OsString::from).collect()
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

#[cfg(test)]
mod tests;
