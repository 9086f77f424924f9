//! The command line: the parser and its subcommands (clap derive). Each
//! subcommand's `<Name>Args` sits in its command's own file. No I/O.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use super::approval::ApprovalCheckArgs;
use super::completions::CompleteArgs;
use super::completions::CompletionsArgs;
use super::completions::ManArgs;
use super::contract::AmendArgs;
use super::create::InitArgs;
use super::decide::DecisionArgs;
use super::doctor::DoctorArgs;
use super::escalate::EscalateArgs;
use super::findings::FindingsArgs;
use super::hook::install::HookInstallArgs;
use super::hook::install::HookUninstallArgs;
use super::hook::stop::HookStopArgs;
use super::ledger::LedgerShowArgs;
use super::parse::ParseArgs;
use super::record::RecordArgs;
use super::replay::ReplayArgs;
use super::report::ReportArgs;
use super::run::RunArgs;
use super::skill::SkillInstallArgs;
use super::waive::WaiveArgs;
use crate::report::style::ColorChoice;
use crate::state::LoopSelect;

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
    #[arg(
        long,
        global = true,
        env = "REFEREE_DIR",
        hide_env_values = true,
        value_name = "DIR"
    )]
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
  2   a usage error
  130 run: ended by Ctrl-C (SIGINT), after its agents; nothing recorded for the round under way
  143 run: ended by SIGTERM, the same way";

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
    /// Continue a stopped loop, in writing (the round cap raised when it is used up).
    #[command(
        after_help = "Exit status:\n  0  resumed\n  1  not resumed: the loop runs, has not started, or stopped on its budget\n  2  usage error"
    )]
    Resume(super::contract::ResumeArgs),
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
    /// Print a user guide built into referee (`referee docs contract`); none: the list.
    Docs(super::docs::DocsArgs),
    /// Print the JSON Schema of native findings, as agent CLIs take it
    /// (`codex exec --output-schema FILE`, `claude --json-schema "$(referee schema)"`).
    Schema,
    /// Install the agent skill into a repository.
    #[command(subcommand)]
    Skill(SkillCommand),
    /// The Stop hook of an interactive agent session (Claude Code, Codex).
    #[command(subcommand)]
    Hook(HookCommand),
    /// Say which of the host's boundaries around the writer are in force.
    Doctor(DoctorArgs),
}

#[derive(Debug, Args)]
pub struct LoopArgs {
    #[command(flatten)]
    pub select: LoopSelect,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
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

#[derive(Debug, Subcommand)]
pub enum ContractCommand {
    /// Print the contract, with amendments applied.
    Show(LoopArgs),
    /// Amend a running contract in writing (only the round cap).
    Amend(AmendArgs),
    /// Put back the contract's bytes as round 1 pinned them, after a hand edit.
    Restore(LoopArgs),
}

#[derive(Debug, Subcommand)]
pub enum ApprovalCommand {
    /// Exit 0 only if the tree is byte-for-byte the approved tree.
    Check(ApprovalCheckArgs),
}

#[derive(Debug, Subcommand)]
pub enum SkillCommand {
    /// Copy the Claude Code skill to `.claude/skills/loop-referee/` and add
    /// the Codex section to `AGENTS.md` (both unless one is named). The
    /// global `--dir` names the repository (default: this one). Idempotent.
    Install(SkillInstallArgs),
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

#[derive(Debug, Subcommand)]
pub enum JudgeCommand {
    /// Build the last round's judge request, ask the judge, and print the
    /// request, the answers and the decision. Records nothing.
    Ask(LoopArgs),
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
