//! The command line: clap derive types, one `<Name>Args` per subcommand. No I/O.

use std::path::PathBuf;

use crate::findings::Format;
use crate::report::findings::FindingsFormat;
use crate::report::handoff::HandoffFormat;
use crate::report::ledger::LedgerFormat;
use crate::report::style::ColorChoice;
use crate::report::summary::ReportFormat;
use crate::state::LoopSelect;
use clap::{Args, Parser, Subcommand, ValueEnum};

/// A loop referee for coding-agent pairs: it writes the loop contract, keeps a
/// tamper-evident ledger, applies ordered stop rules and hands a human the
/// escalation. It never writes or fixes code itself.
#[derive(Debug, Parser)]
#[command(
    name = "referee",
    version,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    /// State folder (default: `.referee/` at the top of the git repository).
    #[arg(long, global = true, env = "REFEREE_DIR", value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// When to color output (`NO_COLOR` set means never, unless `always`).
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,

    #[command(subcommand)]
    pub command: Command,
}

/// The exit codes (SPEC §5), for `--help` of the loop commands.
pub const EXIT_STATUS: &str = "Exit status:
  0   the loop ended done (clean, nit-round), or the command succeeded
  10  record: continue (fix the must-fix findings, record the next round)
  20  the loop stopped and was escalated (reopened, flip-flop, diff-growth, round-cap,
      scope, budget, stalled, disputed, judge:*)
  1   an error: bad input, a failed agent, I/O; nothing was recorded
  2   a usage error";

/// `referee man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// The command whose page to print (`record`, `ledger verify`); none:
    /// the page of `referee` itself.
    #[arg(value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write a loop contract before round 1.
    Init(InitArgs),
    /// Drive writer and reviewer agents round by round until a rule fires.
    #[command(after_help = EXIT_STATUS)]
    Run(RunArgs),
    /// Record one round from outside: findings in, verdict out.
    #[command(after_help = EXIT_STATUS)]
    Record(RecordArgs),
    /// Read one reviewer output and print its findings as native JSON.
    Parse(ParseArgs),
    /// Show the loop's round, open findings and what the writer must fix next.
    Status(LoopArgs),
    /// Show, verify or repair the ledger.
    #[command(subcommand)]
    Ledger(LedgerCommand),
    /// Print the hand-off for a stopped loop.
    Escalate(EscalateArgs),
    /// Show or amend the loop contract.
    #[command(subcommand)]
    Contract(ContractCommand),
    /// Waive one finding: a binding human ruling, appended to the ledger.
    Waive(WaiveArgs),
    /// Every finding of the loop with its history.
    Findings(FindingsArgs),
    /// Re-apply another contract's rules to the stored rounds.
    Replay(ReplayArgs),
    /// Approve the loop's outcome, bound to the last snapshot's tree.
    Approve(DecisionArgs),
    /// Reject the loop's outcome.
    Reject(DecisionArgs),
    /// Check the working tree against the approved tree.
    #[command(subcommand)]
    Approval(ApprovalCommand),
    /// Summarize every loop under the state folder.
    Report(ReportArgs),
    /// Ask the loop's judge about its last round, without recording anything.
    #[command(subcommand)]
    Judge(JudgeCommand),
    /// Print shell completions.
    Completions(CompletionsArgs),
    /// What the completion scripts ask for at the prompt: loop names, or
    /// finding ids of a loop (`referee complete loops|ids [--loop L]`).
    #[command(hide = true)]
    Complete(CompleteArgs),
    /// Print a manual page (roff) to stdout: `referee man record | man -l -`.
    Man(ManArgs),
    /// Install the agent skill into a repository.
    #[command(subcommand)]
    Skill(SkillCommand),
    /// The Stop hook of an interactive agent session (Claude Code, Codex).
    #[command(subcommand)]
    Hook(HookCommand),
    /// Say which of the host's boundaries around the writer are in force.
    Doctor(DoctorArgs),
}

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

#[derive(Debug, Args)]
pub struct LoopArgs {
    #[command(flatten)]
    pub select: LoopSelect,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Loop name: `[a-z0-9][a-z0-9._-]{0,63}` (default: the template's, else `main`).
    #[arg(long = "loop", value_name = "LOOP")]
    pub name: Option<String>,
    /// Start from a template: a shipped name (`cross-review`, ...) or a TOML file.
    #[arg(long, value_name = "TEMPLATE")]
    pub from: Option<String>,
    /// Round cap.
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub max_rounds: Option<i64>,
    /// Severity floor: findings at or above it are must-fix.
    #[arg(long = "floor", value_name = "LEVEL")]
    pub floor: Option<String>,
    /// Glob of files the writer may touch (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub scope: Vec<String>,
    /// `absent` or `explicit`.
    #[arg(long, value_name = "MODE")]
    pub closure: Option<String>,
    /// Progress guards in force, comma-separated: `stalled,disputed` (the
    /// default), one of them, or `none`.
    #[arg(long, value_name = "LIST")]
    pub guards: Option<String>,
    /// Spend cap in US dollars over the whole loop.
    #[arg(long, allow_negative_numbers = true, value_name = "X")]
    pub budget_usd: Option<f64>,
    /// Token cap over the whole loop.
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub budget_tokens: Option<i64>,
    /// Writer preset.
    #[arg(long, value_name = "PRESET")]
    pub writer: Option<String>,
    /// Reviewer preset.
    #[arg(long, value_name = "PRESET")]
    pub reviewer: Option<String>,
    /// The writer's argv for the `command` preset (implied), as one string
    /// split like a shell would split words (`'sh agent.sh --fast'`); no
    /// shell ever runs it.
    #[arg(long, value_name = "ARGV")]
    pub writer_command: Option<String>,
    /// The reviewer's argv for the `command` or `tests` preset (default
    /// `command`), split like `--writer-command`.
    #[arg(long, value_name = "ARGV")]
    pub reviewer_command: Option<String>,
    /// Git revision the loop starts from (default: HEAD).
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// Replace a contract whose loop has not started yet.
    #[arg(long)]
    pub force: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub select: LoopSelect,
    /// Write the contract from this template (a shipped name or a TOML file)
    /// when the loop has none yet; an existing contract is kept (for CI).
    #[arg(long, value_name = "TEMPLATE")]
    pub from: Option<String>,
    /// The task for the writer.
    #[arg(long, value_name = "TEXT", conflicts_with = "task_file")]
    pub task: Option<String>,
    /// Read the task from a file.
    #[arg(long, value_name = "F")]
    pub task_file: Option<PathBuf>,
    /// Review the existing changes before any writer call.
    #[arg(long)]
    pub review_first: bool,
    /// Print only the outcome (and the hand-off), no progress.
    #[arg(long, conflicts_with = "json")]
    pub quiet: bool,
    /// Print JSON lines of round events on stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RecordArgs {
    #[command(flatten)]
    pub select: LoopSelect,
    /// The reviewer's output (`-` for stdin).
    #[arg(long, value_name = "F")]
    pub findings: String,
    /// Input format.
    #[arg(long, value_enum, default_value_t = Format::Auto)]
    pub format: Format,
    /// The writer's responses (`{"responses": [...]}`).
    #[arg(long, value_name = "F")]
    pub responses: Option<PathBuf>,
    /// What this round cost in US dollars.
    #[arg(long, value_name = "X", allow_negative_numbers = true)]
    pub cost_usd: Option<f64>,
    /// Tokens this round used.
    #[arg(long, value_name = "N")]
    pub tokens: Option<u64>,
    /// Callers that retry pass the same key; a second call returns the first's outcome.
    #[arg(long, value_name = "K")]
    pub idempotency_key: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ParseArgs {
    /// Input format.
    #[arg(long, value_enum, default_value_t = Format::Auto)]
    pub format: Format,
    /// The reviewer's output (`-` for stdin).
    #[arg(value_name = "F")]
    pub input: String,
}

#[derive(Debug, Subcommand)]
pub enum LedgerCommand {
    /// Print the ledger.
    Show(LedgerShowArgs),
    /// Check the hash chain and the evidence digests.
    Verify(LoopArgs),
    /// Remove a torn final line (never a committed row).
    Repair(LoopArgs),
}

#[derive(Debug, Args)]
pub struct LedgerShowArgs {
    #[command(flatten)]
    pub select: LoopSelect,
    /// Output format.
    #[arg(long, value_enum, default_value_t = LedgerFormat::Table)]
    pub format: LedgerFormat,
    /// Same as `--format json`.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct EscalateArgs {
    #[command(flatten)]
    pub select: LoopSelect,
    /// Output format.
    #[arg(long, value_enum, default_value_t = HandoffFormat::Text)]
    pub format: HandoffFormat,
    /// Same as `--format json`.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum ContractCommand {
    /// Print the contract, with amendments applied.
    Show(LoopArgs),
    /// Amend a running contract in writing (only the round cap).
    Amend(AmendArgs),
    /// Put back the contract's bytes as round 1 pinned them, after a hand edit.
    Restore(LoopArgs),
}

#[derive(Debug, Args)]
pub struct AmendArgs {
    #[command(flatten)]
    pub select: LoopSelect,
    /// A higher round cap.
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub max_rounds: Option<i64>,
    /// A higher spend cap in US dollars (`budget.usd`).
    #[arg(long, allow_negative_numbers = true, value_name = "X")]
    pub budget_usd: Option<f64>,
    /// A higher token cap (`budget.tokens`).
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub budget_tokens: Option<i64>,
    /// Who amends.
    #[arg(long, value_name = "NAME")]
    pub by: String,
    /// Why, in writing.
    #[arg(long, value_name = "TEXT")]
    pub reason: String,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct WaiveArgs {
    #[command(flatten)]
    pub select: LoopSelect,
    /// The finding's id.
    #[arg(value_name = "ID")]
    pub id: String,
    /// Who waives.
    #[arg(long, value_name = "NAME")]
    pub by: String,
    /// Why.
    #[arg(long, value_name = "TEXT")]
    pub reason: String,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct FindingsArgs {
    #[command(flatten)]
    pub select: LoopSelect,
    /// Only findings still open.
    #[arg(long)]
    pub open: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FindingsFormat::Table)]
    pub format: FindingsFormat,
    /// Same as `--format json`.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    #[command(flatten)]
    pub select: LoopSelect,
    /// The contract whose rules to apply.
    #[arg(long, value_name = "F")]
    pub contract: PathBuf,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DecisionArgs {
    #[command(flatten)]
    pub select: LoopSelect,
    /// Who decides.
    #[arg(long, value_name = "NAME")]
    pub by: String,
    /// Why.
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum ApprovalCommand {
    /// Exit 0 only if the tree is byte-for-byte the approved tree.
    Check(ApprovalCheckArgs),
}

#[derive(Debug, Args)]
pub struct ApprovalCheckArgs {
    #[command(flatten)]
    pub select: LoopSelect,
    /// Check this commit's tree instead of the working tree.
    #[arg(long, value_name = "R")]
    pub rev: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Table)]
    pub format: ReportFormat,
    /// Same as `--format json`.
    #[arg(long)]
    pub json: bool,
    /// State folders or ledger files (default: the state folder).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum SkillCommand {
    /// Copy the Claude Code skill to `.claude/skills/loop-referee/` and add
    /// the Codex section to `AGENTS.md` (both unless one is named). The
    /// global `--dir` names the repository (default: this one). Idempotent.
    Install(SkillInstallArgs),
}

#[derive(Debug, Args)]
pub struct SkillInstallArgs {
    /// Only the Claude Code skill.
    #[arg(long)]
    pub claude: bool,
    /// Only the Codex `AGENTS.md` section.
    #[arg(long)]
    pub codex: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum HookCommand {
    /// Referee one stop of the agent: read its Stop payload on stdin; when
    /// the work tree changed since the last round, review the change with
    /// the contract's reviewer, record the round, and answer on stdout:
    /// block the stop with the must-fix findings, or let it end with the
    /// verdict. Always exits 0: a hook must never wedge the agent.
    Stop(HookStopArgs),
    /// Add referee's Stop hook to the project's `.claude/settings.json`
    /// (`--agent claude`) or `.codex/hooks.json` (`--agent codex`), merged
    /// with what is there. Idempotent.
    Install(HookInstallArgs),
    /// Take out the entry `hook install` added; the file's other bytes stay.
    Uninstall(HookUninstallArgs),
}

/// The agents whose Stop hook referee serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HookAgent {
    Claude,
    Codex,
}

#[derive(Debug, Args)]
pub struct HookStopArgs {
    #[command(flatten)]
    pub select: LoopSelect,
    /// The agent sending the payload (default: told from the payload).
    #[arg(long, value_enum)]
    pub agent: Option<HookAgent>,
    /// The project whose loop this hook referees, as `hook install` wrote
    /// it (default: the host's `CLAUDE_PROJECT_DIR` or `GEMINI_PROJECT_DIR`,
    /// else the payload's `cwd`).
    #[arg(long, value_name = "DIR")]
    pub project: Option<std::path::PathBuf>,
}

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

#[derive(Debug, Subcommand)]
pub enum JudgeCommand {
    /// Build the last round's judge request, ask the judge, and print the
    /// request, the answers and the decision. Records nothing.
    Ask(LoopArgs),
}

#[derive(Debug, Args)]
pub struct CompleteArgs {
    /// `loops` or `ids`.
    #[arg(value_parser = ["loops", "ids"])]
    pub what: String,
    #[command(flatten)]
    pub select: LoopSelect,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }
}
