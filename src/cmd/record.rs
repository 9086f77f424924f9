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
    /// The reviewer's output (`-` for stdin); for a panel, one
    /// `NAME=FILE` per reviewer that answered (repeat the flag).
    #[arg(long, value_name = "F", required = true)]
    pub findings: Vec<String>,
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
    let inputs = inputs(&lp, &args.findings)?;
    let review = match &inputs {
        Inputs::One(path) => one_review(&lp, path, args.format)?,
        Inputs::Panel(named) => panel_review(&lp, named, args.format)?,
    };
    let responses = match &args.responses {
        Some(path) => {
            let bytes = super::read_bounded(&path.to_string_lossy())
                .with_context(|| format!("responses `{}`", path.display()))?;
            responses::parse(&bytes)
                .with_context(|| format!("responses `{}`: nothing was recorded", path.display()))?
        }
        None => Vec::new(),
    };
    let paths: Vec<&str> = match &inputs {
        Inputs::One(path) => vec![path.as_str()],
        Inputs::Panel(named) => named.iter().map(|(_, path)| path.as_str()).collect(),
    };
    leave_out_inputs(&mut lp, &pins, &paths, args.responses.as_deref())?;
    let recorded = engine::record(
        &lp,
        Submission {
            review: Some(review),
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

/// What `--findings` names: one review, or a panel's (`NAME=FILE` each).
enum Inputs {
    One(String),
    Panel(Vec<(String, String)>),
}

/// Reads `--findings`: a panel's reviews when the contract names a panel
/// or the flag is given more than once, each `NAME=FILE` with a name the
/// contract's `[[reviewers]]` has (any panel name when it has none), each
/// once; else one file.
fn inputs(lp: &engine::Loop, given: &[String]) -> anyhow::Result<Inputs> {
    let contract = lp.contract();
    if !contract.is_panel() && given.len() == 1 {
        return Ok(Inputs::One(given[0].clone()));
    }
    let names: Vec<&str> = contract.reviewers.iter().map(|m| m.name.as_str()).collect();
    let shape = |value: &str| {
        UsageError(format!(
            "--findings `{value}`: a panel's review is given as NAME=FILE, NAME {}{}",
            if names.is_empty() {
                format!("({})", crate::contract::MEMBER_NAME_SHAPE)
            } else {
                format!(
                    "one of the contract's `[[reviewers]]`: {}",
                    names.join(", ")
                )
            },
            if contract.reviewer.is_some() {
                "; the contract names one `[reviewer]`: give `--findings FILE` once"
            } else {
                ""
            }
        ))
    };
    let mut named: Vec<(String, String)> = Vec::new();
    for value in given {
        let Some((name, path)) = value.split_once('=') else {
            return Err(shape(value).into());
        };
        let known = if names.is_empty() {
            contract.reviewer.is_none() && crate::contract::is_member_name(name)
        } else {
            names.contains(&name)
        };
        if !known {
            return Err(shape(value).into());
        }
        if path.is_empty() {
            return Err(UsageError(format!(
                "--findings `{value}`: no FILE after `{name}=`; give the file `{name}` wrote (`-` for stdin)"
            ))
            .into());
        }
        if named.iter().any(|(n, _)| n == name) {
            return Err(UsageError(format!(
                "--findings: `{name}` is given twice; each reviewer of the panel answers once"
            ))
            .into());
        }
        if path == "-" && named.iter().any(|(_, p)| p == "-") {
            return Err(UsageError(
                "--findings: only one review can be read from stdin (`-`)".into(),
            )
            .into());
        }
        named.push((name.to_string(), path.to_string()));
    }
    Ok(Inputs::Panel(named))
}

/// The one reviewer's output at `path`, read; refused when unreadable.
fn one_review(lp: &engine::Loop, path: &str, format: Format) -> anyhow::Result<Review> {
    let shown = if path == "-" { "stdin" } else { path };
    let raw = super::read_bounded(path).with_context(|| format!("findings `{shown}`"))?;
    let root = lp.repo.to_string_lossy().into_owned();
    let empty = lp.contract().reviewer.as_ref().map(|r| r.empty_report);
    let read = findings::parse(&raw, format, &root);
    let parsed = empty.unwrap_or_default().apply(read).map_err(|err| {
        let message = format!("findings `{shown}`: nothing was recorded: {err}");
        let reviewer = lp.contract().reviewer.as_ref().map(|r| r.preset);
        let hint = reviewer
            .and_then(crate::agent::preset::recorded_review_hint)
            .or_else(|| err.hint());
        Hinted::maybe(message, hint)
    })?;
    Ok(Review::new(raw, parsed))
}

/// A panel's reviews (SPEC §6.1): a reviewer whose file is not given, or
/// cannot be read or read as a review, did not answer. Recorded only when
/// the quorum answered (by default every reviewer the contract names, or
/// every one given when it names none).
fn panel_review(
    lp: &engine::Loop,
    named: &[(String, String)],
    format: Format,
) -> anyhow::Result<Review> {
    let contract = lp.contract();
    let root = lp.repo.to_string_lossy().into_owned();
    let mut members: Vec<(String, Option<&str>)> = contract
        .reviewers
        .iter()
        .map(|m| (m.name.clone(), None))
        .collect();
    for (name, path) in named {
        match members.iter_mut().find(|(n, _)| n == name) {
            Some(member) => member.1 = Some(path),
            None => members.push((name.clone(), Some(path))),
        }
    }
    let panel = &contract.panel;
    let answers = members
        .into_iter()
        .map(|(name, path)| {
            let empty = contract
                .reviewers
                .iter()
                .find(|m| m.name == name)
                .map(|m| m.agent.empty_report)
                .unwrap_or_default();
            let answer = match path {
                None => Err("no `--findings` was given for it".to_string()),
                Some(path) => super::read_bounded(path)
                    .map_err(|e| format!("findings `{path}`: {e:#}"))
                    .and_then(
                        |raw| match empty.apply(findings::parse(&raw, format, &root)) {
                            Ok(parsed) => Ok(Review::new(raw, parsed)),
                            Err(err) => Err(format!("findings `{path}`: {err}")),
                        },
                    ),
            };
            engine::panel::MemberReview {
                name,
                answer,
                cost_usd: None,
                tokens: None,
            }
        })
        .collect();
    engine::panel::review(answers, *panel).map_err(|why| {
        hinted(
            format!("loop `{}`: {why}; nothing was recorded", lp.name),
            "record again with the review of each reviewer that answers, one `--findings NAME=FILE` each",
        )
    })
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
    findings: &[&str],
    responses: Option<&Path>,
) -> anyhow::Result<()> {
    let inside: Vec<String> = findings
        .iter()
        .filter(|path| **path != "-")
        .map(Path::new)
        .chain(responses)
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
