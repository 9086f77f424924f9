//! `referee record`: one round from outside. Reads the reviewer's output and
//! the writer's responses, hands them to the engine, prints the row and the
//! verdict (and the hand-off when the loop escalates), exits 10/0/20.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;

use crate::engine::{self, History, Recorded, Review, Submission};
use crate::exit::{Exit, Hinted, UsageError, hinted};
use crate::findings::Format;
use crate::findings::{self, responses};
use crate::money::Usd;
use crate::report::handoff::HandoffFormat;
use crate::report::round::{self, RoundView};
use crate::rules::Rule;
use crate::state::LoopSelect;
use crate::state::State;

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
    /// What this round cost in US dollars (`0.25`); costs add exactly, to
    /// the micro-dollar, and a seventh decimal rounds to the nearest one.
    #[arg(long, value_name = "X", allow_negative_numbers = true)]
    pub cost_usd: Option<String>,
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

/// The least address space `record` is started in. A failed allocation
/// aborts the process (it cannot be answered with an error), and a debug
/// build alone maps about 95 MB: a smaller limit is refused before anything
/// is read, with a message instead of an abort.
const LEAST_ADDRESS_SPACE: u64 = 256 * 1024 * 1024;

pub fn run(state: &State, args: RecordArgs) -> anyhow::Result<Exit> {
    refuse_small_address_space()?;
    let cost_usd = match args.cost_usd.as_deref().map(Usd::parse).transpose() {
        Ok(cost) => cost,
        Err(e) => return Err(UsageError(format!("--cost-usd: {e}")).into()),
    };
    let mut lp = super::open_loop(state, &args.select)?;
    super::refuse_if_driven(&lp, "recording a round by hand")?;
    // A loop a Stop hook drives is recorded by the hook alone (SPEC §8.1):
    // else its writer, before the hook first saw (and registered) it, could
    // record a clean round 1 and be let go at every stop after. From below
    // an agent CLI, then, `record` is refused even unregistered.
    let pins = crate::anchor::pins::Pins::of(&state.repo, &state.root)?;
    if let Some(agent) = pins.hook_driving(lp.name.as_str())
        && let Some((pid, cli)) = crate::anchor::authority::below_agent_cli()
    {
        return Err(hinted(
            format!(
                "loop `{}` is refereed by the {agent} Stop hook installed here, and this `referee record` runs inside {cli} (pid {pid}): only the hook records its rounds; nothing was recorded",
                lp.name
            ),
            format!(
                "a person runs it from their own shell; to record by hand for good, take the hook out: `referee hook uninstall --agent {agent}`"
            ),
        ));
    }
    let name = if args.findings == "-" {
        "stdin".to_string()
    } else {
        args.findings.clone()
    };
    let raw = super::read_bounded(&args.findings).with_context(|| format!("findings `{name}`"))?;
    let root = lp.repo.to_string_lossy().into_owned();
    let parsed = findings::parse(&raw, args.format, &root).map_err(|err| {
        let message = format!("findings `{name}`: nothing was recorded: {err}");
        let reviewer = lp.contract().reviewer.as_ref().map(|r| r.preset);
        let hint = reviewer
            .and_then(crate::agent::preset::recorded_review_hint)
            .or_else(|| err.hint());
        Hinted::maybe(message, hint)
    })?;
    let responses = match &args.responses {
        Some(path) => {
            let bytes = super::read_bounded(&path.to_string_lossy())
                .with_context(|| format!("responses `{}`", path.display()))?;
            responses::parse(&bytes)
                .with_context(|| format!("responses `{}`: nothing was recorded", path.display()))?
        }
        None => Vec::new(),
    };
    leave_out_inputs(&mut lp, &pins, &args)?;
    let recorded = engine::record(
        &lp,
        Submission {
            review: Some(Review::new(raw, parsed)),
            responses,
            cost_usd,
            tokens: args.tokens,
            idempotency_key: args.idempotency_key.as_deref().map(super::person_words),
            at: super::now()?,
            evidence: Vec::new(),
            interrupt: None,
            stalled: false,
        },
    )?;
    print(&lp, &recorded, args.json)?;
    Ok(recorded.exit())
}

/// Leaves this call's input files (`--findings`, `--responses`) out of the
/// loop's snapshots when they lie inside the work tree: the reviewer's
/// output is not the writer's work, and a file of it the snapshot took
/// would be part of the round's patch (and, with a scope, outside it). Each
/// is pinned in the anchor for this loop alone, taken as the base has it
/// from then on, and named once.
fn leave_out_inputs(
    lp: &mut engine::Loop,
    pins: &crate::anchor::pins::Pins,
    args: &RecordArgs,
) -> anyhow::Result<()> {
    let findings = Some(Path::new(&args.findings)).filter(|_| args.findings != "-");
    let inside: Vec<String> = [findings, args.responses.as_deref()]
        .into_iter()
        .flatten()
        .filter_map(|path| inside_work_tree(lp, path))
        .collect();
    if inside.is_empty() {
        return Ok(());
    }
    let added = pins.add_inputs(lp.name.as_str(), &inside)?;
    for path in &added {
        eprintln!(
            "note: `{path}` is inside the work tree: loop `{}`'s snapshots leave it out from now on (as its base has it), so it is never part of the writer's patch",
            lp.name
        );
    }
    lp.frozen.extend(added);
    lp.frozen.sort();
    lp.frozen.dedup();
    Ok(())
}

/// The repo-relative path of the file `path` names when it lies in `lp`'s
/// work tree, outside `.git/` and the folders snapshots leave out. The
/// folder is resolved, not the name: a link in the work tree is named as
/// itself.
fn inside_work_tree(lp: &engine::Loop, path: &Path) -> Option<String> {
    let name = path.file_name()?;
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    let dir = std::fs::canonicalize(parent.unwrap_or(Path::new("."))).ok()?;
    let repo = std::fs::canonicalize(&lp.repo).ok()?;
    let full = dir.join(name);
    let rel = full.strip_prefix(&repo).ok()?.to_str()?;
    let under = |folder: &str| {
        let folder = folder.trim_matches('/');
        rel == folder || rel.strip_prefix(folder).is_some_and(|r| r.starts_with('/'))
    };
    if rel.is_empty() || under(".git") || lp.exclude.iter().any(|d| under(d)) {
        return None;
    }
    Some(rel.to_string())
}

/// Prints a recorded round: JSON, or the human lines and, when the loop
/// escalated, the hand-off.
pub(super) fn print(lp: &engine::Loop, recorded: &Recorded, json: bool) -> anyhow::Result<()> {
    let view = RoundView {
        loop_name: lp.name.as_str(),
        row: &recorded.row,
        state: &recorded.state,
        max_rounds: recorded.max_rounds,
        already: recorded.already,
        floor: lp.contract().severity_floor,
        driven: false,
    };
    if json {
        let value = round::json(&view, i32::from(recorded.exit().code()));
        super::emit_json(&value)?;
        return Ok(());
    }
    let mut out = round::text(&view);
    // Every stop but `clean` hands off (SPEC §5.1); `nit-round` lists the unconfirmed.
    if recorded
        .state
        .rule
        .as_ref()
        .is_some_and(|r| *r != Rule::Clean)
    {
        let history = History::read(lp, lp.store.read()?.rows)?;
        let handoff = crate::report::handoff::of(lp, &history);
        out.push('\n');
        out.push_str(&String::from_utf8_lossy(&crate::report::handoff::render(
            &handoff,
            HandoffFormat::Text,
        )));
    }
    super::emit(&out)?;
    Ok(())
}

/// Refuses to start under an address-space limit (`ulimit -v`, `prlimit
/// --as`) below [`LEAST_ADDRESS_SPACE`].
fn refuse_small_address_space() -> anyhow::Result<()> {
    use nix::sys::resource::{RLIM_INFINITY, Resource, getrlimit};
    let Ok((soft, _)) = getrlimit(Resource::RLIMIT_AS) else {
        return Ok(());
    };
    if soft != RLIM_INFINITY && soft < LEAST_ADDRESS_SPACE {
        return Err(hinted(
            format!(
                "the address-space limit (`ulimit -v`) is {} MiB, below the {} MiB `referee record` needs; nothing was recorded",
                soft / 1024 / 1024,
                LEAST_ADDRESS_SPACE / 1024 / 1024
            ),
            "raise it (`ulimit -v unlimited`, or a larger `prlimit --as`) and record again",
        ));
    }
    Ok(())
}
