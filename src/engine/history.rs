//! A loop's past as the engine reads it: the ledger's rows, the cap in force,
//! the spend so far, and the last round's state from its evidence
//! (`state.json`, checked against the row's evidence digest). Does I/O (reads).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::accounting::{Registry, waive};
use super::decide::{Earlier, Reported};
use crate::contract::load::Loaded;
use crate::contract::{Contract, LoopName};
use crate::exit::hinted;
use crate::findings::responses::Response;
use crate::ledger::{Kind, Row, Store, Verdict};
use crate::money::Usd;
use crate::patch::fix_lines::FixLines;

/// A loop: its contract, its ledger store and where its repository is.
pub struct Loop {
    pub name: LoopName,
    /// Every file and folder of the loop.
    pub paths: crate::state::LoopPaths,
    pub loaded: Loaded,
    pub store: Store,
    pub repo: PathBuf,
    /// Repo-relative folders snapshots leave out (the state folder).
    pub exclude: Vec<String>,
    /// Repo-relative files snapshots take from the loop's base, not the work
    /// tree: the agent settings `referee hook install` edited.
    pub frozen: Vec<String>,
    /// The loop's authority outside the work tree (SPEC §8.2).
    pub anchor: crate::anchor::Anchor,
    /// The loop's snapshot pin and index cache, in its anchor (SPEC §8.3):
    /// `snapshot::Own::open`, which also makes the pinned settings the
    /// repository's for every later git command. `None` for a loop only
    /// read, never snapshotted.
    pub own: Option<crate::snapshot::Own>,
}

impl Loop {
    pub fn contract(&self) -> &Contract {
        &self.loaded.contract
    }

    /// The tree the working tree snapshots to (see `snapshot::worktree_tree`).
    pub fn worktree_tree(&self) -> Result<String, crate::snapshot::SnapshotError> {
        let exclude: Vec<&str> = self.exclude.iter().map(String::as_str).collect();
        crate::snapshot::worktree_tree(&self.repo, &self.scope(&exclude))
    }

    /// The tree `rev` would snapshot to.
    pub fn tree_of(&self, rev: &str) -> Result<String, crate::snapshot::SnapshotError> {
        let exclude: Vec<&str> = self.exclude.iter().map(String::as_str).collect();
        crate::snapshot::tree_of_frozen(&self.repo, rev, &exclude, self.frozen_files())
    }

    /// What this loop's snapshots take, and its snapshot state.
    fn scope<'a>(&'a self, exclude: &'a [&'a str]) -> crate::snapshot::Scope<'a> {
        crate::snapshot::Scope {
            exclude,
            frozen: self.frozen_files(),
            base: self.contract().base.as_str(),
            own: self.own.as_ref(),
        }
    }

    fn frozen_files(&self) -> Option<crate::snapshot::Frozen<'_>> {
        (!self.frozen.is_empty()).then(|| crate::snapshot::Frozen {
            from: self.contract().base.as_str(),
            paths: &self.frozen,
        })
    }
}

/// The evidence file holding a round's state.
pub const STATE_FILE: &str = "state.json";
/// The evidence file holding the round's patch.
pub const PATCH_FILE: &str = "patch.diff";
/// The evidence file holding what the fix rounds changed (`FixLines`).
pub const FIX_LINES_FILE: &str = "fix-lines.bin";
/// The same in JSON, as the first loops to keep it stored it.
const FIX_LINES_JSON: &str = "fix-lines.json";

/// A round's snapshot, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotInfo {
    pub commit: String,
    pub tree: String,
    #[serde(rename = "ref")]
    pub reference: String,
}

/// For `diff-growth`: the round a human could go back to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevertTo {
    pub round: u32,
    #[serde(rename = "ref")]
    pub reference: String,
    pub command: String,
}

/// What one round decided, kept in its evidence as `state.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundState {
    pub version: u32,
    #[serde(rename = "loop")]
    pub loop_name: String,
    pub round: u32,
    pub snapshot: SnapshotInfo,
    /// The commit or tree the round's patch starts from.
    pub from: String,
    pub verdict: Verdict,
    pub rule: Option<crate::rules::Stop>,
    pub reason: String,
    pub exit: i32,
    pub revert_to: Option<RevertTo>,
    pub out_of_scope: Vec<String>,
    /// The paths of `out_of_scope` that `from` does not have (the writer
    /// added them): `git restore` cannot bring them back, only remove them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub out_of_scope_added: Vec<String>,
    pub carried_unconfirmed: Vec<String>,
    /// Whether a reviewer's findings were ingested.
    pub reviewed: bool,
    /// Stored as references into `registry` (id and how it stood): the
    /// registry holds each finding's text once.
    #[serde(
        serialize_with = "slim::serialize",
        deserialize_with = "slim::deserialize"
    )]
    pub reported: Vec<Reported>,
    /// Findings the reviewer skipped this round (missing, place untouched).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
    pub responses: Vec<Response>,
    /// Every finding the loop knows after the round.
    pub registry: Registry,
    /// What the judge said, when it was consulted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<crate::judge::engine::Outcome>,
    /// The sha256 of each file the contract names (prompt files, the
    /// judge's question set and replay file), pinned at round 1 and carried
    /// by every round: `absent` for a file that did not exist.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub pinned: std::collections::BTreeMap<String, String>,
    /// A `.gitattributes` file changed in this round or an earlier one:
    /// the patch is listed with the base's attributes from then on (see
    /// `engine::with_base_attributes`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub attributes_changed: bool,
    /// What the caller said the round cost (`--cost-usd`, `--tokens`),
    /// kept when the judge's call added to the row's spend: a retry under
    /// the same idempotency key must say the same. `None`: the row's spend
    /// is the caller's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller_spend: Option<CallerSpend>,
    /// What the fix rounds changed up to this round, for the next round's
    /// reversal check: kept in its own evidence file (`FIX_LINES_FILE`),
    /// which only the next round reads.
    #[serde(skip)]
    pub fix_lines: Option<FixLines>,
}

/// A round's spend as its caller reported it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CallerSpend {
    pub cost_usd: Option<Usd>,
    pub tokens: Option<u64>,
}

/// Where the loop stands for the next `record`.
#[derive(Debug, Clone, PartialEq)]
pub enum LoopStanding {
    /// No round yet.
    Fresh,
    /// The last round said continue.
    Running { round: u32 },
    /// The last round stopped (and no amendment followed).
    Stopped {
        round: u32,
        rule: crate::rules::Stop,
    },
    /// A human rejected the outcome (and no amendment followed).
    Rejected { round: u32, by: String },
}

/// The loop's past.
pub struct History {
    pub rows: Vec<Row>,
    /// The contract in force (amendments applied).
    pub contract: Contract,
    pub max_rounds: u32,
    /// The last round row and its state.
    pub last: Option<(Row, RoundState)>,
    /// The last round's registry with later waivers applied.
    pub registry: Registry,
    pub earlier: Vec<Earlier>,
    pub spent_usd: Usd,
    pub spent_tokens: u64,
}

impl History {
    /// Reads the past from `rows` (the ledger's committed rows): refuses a
    /// contract changed since round 1 and a last round whose evidence was
    /// altered.
    pub fn read(lp: &Loop, rows: Vec<Row>) -> anyhow::Result<History> {
        check_pinned(lp, &rows)?;
        let contract = effective_contract(lp.contract(), &rows);
        let max_rounds = contract.max_rounds;
        let mut earlier = Vec::new();
        let (mut spent_usd, mut spent_tokens) = (Usd::ZERO, 0u64);
        let mut last_index = None;
        for (i, row) in rows.iter().enumerate() {
            spent_usd = spent_usd.saturating_add(row.cost_usd.unwrap_or_default());
            spent_tokens = spent_tokens.saturating_add(row.tokens.unwrap_or(0));
            if row.kind == Kind::Round {
                let counts = row.counts.unwrap_or_default();
                earlier.push(Earlier {
                    round: row.round,
                    diff_size: counts.diff_added + counts.diff_removed,
                    must_fix_left: counts.must_fix_left,
                });
                last_index = Some(i);
            }
        }
        let last = match last_index {
            Some(i) => {
                let row = rows[i].clone();
                let state = read_state(&lp.store, &row)?;
                Some((row, state))
            }
            None => None,
        };
        if let Some((_, state)) = &last {
            check_pinned_files(lp, state)?;
        }
        let mut registry = last
            .as_ref()
            .map(|(_, s)| s.registry.clone())
            .unwrap_or_default();
        for row in &rows[last_index.map_or(0, |i| i + 1)..] {
            if row.kind == Kind::Waive {
                waive(&mut registry, &row.subject);
            }
        }
        Ok(History {
            rows,
            contract,
            max_rounds,
            last,
            registry,
            earlier,
            spent_usd,
            spent_tokens,
        })
    }

    /// The number of the last round, 0 before round 1.
    pub fn round(&self) -> u32 {
        self.last.as_ref().map_or(0, |(row, _)| row.round)
    }

    /// Where the loop stands: the last of its round, decision and amend rows decides.
    pub fn standing(&self) -> LoopStanding {
        standing_of(&self.rows)
    }

    /// Refuses another round of a stopped or rejected loop.
    pub fn ensure_open(&self, name: &LoopName) -> anyhow::Result<()> {
        match self.standing() {
            LoopStanding::Fresh | LoopStanding::Running { .. } => Ok(()),
            LoopStanding::Stopped { round, rule } => Err(hinted(
                format!(
                    "loop `{name}` stopped at round {round} on `{rule}`: it takes no more rounds"
                ),
                format!(
                    "`referee escalate --loop {name}` prints the hand-off; a human may continue it in writing \
                 with `referee resume --loop {name} --by NAME --reason TEXT`"
                ),
            )),
            LoopStanding::Rejected { round, by } => Err(hinted(
                format!(
                    "loop `{name}` was rejected by {by} after round {round}: it takes no more rounds until the contract is amended"
                ),
                format!(
                    "`referee resume --loop {name} --by NAME --reason TEXT` continues it, in writing"
                ),
            )),
        }
    }
}

/// What the fix rounds changed up to the last round, for this round's
/// reversal check: the last round's `FIX_LINES_FILE`, checked against its
/// row like its state.
pub fn fix_lines(store: &Store, history: &History) -> anyhow::Result<FixLines> {
    let Some((row, _)) = &history.last else {
        return Ok(FixLines::default());
    };
    for name in [FIX_LINES_FILE, FIX_LINES_JSON] {
        if let Some(bytes) = read_checked(store, row, name)? {
            return FixLines::from_bytes(&bytes).map_err(|e| {
                let path = store.evidence_dir(row.round).join(name);
                anyhow::anyhow!(
                    "`{}` is not what the fix rounds changed: {e}",
                    path.display()
                )
            });
        }
    }
    fix_lines_from_patches(store, &history.rows)
}

/// What the fix rounds of `rows` changed, read from their patches: for a
/// loop whose last round predates `FIX_LINES_FILE`. Each patch is checked
/// against its row like a state (a patch edited to hide a reversal is
/// refused); a round with no patch changed nothing.
fn fix_lines_from_patches(store: &Store, rows: &[Row]) -> anyhow::Result<FixLines> {
    let mut lines = FixLines::default();
    for row in rows
        .iter()
        .filter(|r| r.kind == Kind::Round && r.round >= 2)
    {
        if let Some(bytes) = read_checked(store, row, PATCH_FILE)? {
            lines.record(row.round, &crate::patch::parse(&bytes));
        }
    }
    Ok(lines)
}

/// Reads `row`'s `state.json` after checking its evidence against the row.
pub fn read_state(store: &Store, row: &Row) -> anyhow::Result<RoundState> {
    let path = store.evidence_dir(row.round).join(STATE_FILE);
    let bytes = read_checked(store, row, STATE_FILE)?
        .ok_or_else(|| anyhow::anyhow!("cannot read `{}`: it is missing", path.display()))?;
    let state = state_from_bytes(&bytes, &path)?;
    if let Some(differs) = disagreement(row, &state) {
        return Err(hinted(
            format!(
                "ledger row of round {} does not match its `{}`: {differs}",
                row.round,
                path.display()
            ),
            "`referee ledger verify` names what changed; evidence is write-once",
        ));
    }
    Ok(state)
}

/// Evidence file `name` of `row`'s round, `None` when the round has none,
/// after checking the round's evidence against the row and the bytes read
/// against the digest checked.
pub fn read_checked(store: &Store, row: &Row, name: &str) -> anyhow::Result<Option<Vec<u8>>> {
    let dir = store.evidence_dir(row.round);
    // The folder is checked before any file of it is read whole: a file a
    // writer planted or swapped is refused before it could fill memory.
    let Some(listing) = store.evidence_listing(row.round)? else {
        return Err(hinted(
            format!(
                "evidence `{}` of round {} is missing",
                dir.display(),
                row.round
            ),
            "`referee ledger verify` names what changed; evidence is write-once",
        ));
    };
    if listing.digest != row.evidence_sha256 {
        return Err(hinted(
            format!(
                "evidence `{}` of round {} does not match its ledger row (digest `{}`, the row pins `{}`)",
                dir.display(),
                row.round,
                short(&listing.digest),
                short(&row.evidence_sha256)
            ),
            "`referee ledger verify` names what changed; evidence is write-once",
        ));
    }
    let path = dir.join(name);
    let Some(bytes) = store.evidence_file(row.round, name)? else {
        return Ok(None);
    };
    // What was read is what the digest checked, not a file swapped since.
    if listing.files.get(name) != Some(&crate::digest::sha256_hex(&bytes)) {
        return Err(hinted(
            format!(
                "`{}` changed while it was read (its bytes are not the ones the evidence digest checked)",
                path.display()
            ),
            "`referee ledger verify` names what changed; evidence is write-once",
        ));
    }
    Ok(Some(bytes))
}

/// What a round row says that its own state does not: its round, verdict,
/// rule or snapshot. A row edited (and its chain hashed again) without its
/// evidence reads here even where no anchor knows the loop.
fn disagreement(row: &Row, state: &RoundState) -> Option<String> {
    let rule = state.rule.as_ref().map(|r| r.name()).unwrap_or_default();
    if state.round != row.round {
        return Some(format!("the state is round {}", state.round));
    }
    if Some(state.verdict) != row.verdict || rule != row.rule {
        let said = |v: Option<Verdict>, r: &str| match (v, r) {
            (Some(Verdict::Stop), r) => format!("stop `{r}`"),
            (Some(Verdict::Continue), _) => "continue".to_string(),
            (None, _) => "no verdict".to_string(),
        };
        return Some(format!(
            "the row says {}, the state {}",
            said(row.verdict, &row.rule),
            said(Some(state.verdict), &rule)
        ));
    }
    if !row.snapshot.is_empty() && row.snapshot != state.snapshot.commit {
        return Some(format!(
            "the row pins snapshot `{}`, the state `{}`",
            short(&row.snapshot),
            short(&state.snapshot.commit)
        ));
    }
    None
}

fn state_from_bytes(bytes: &[u8], path: &Path) -> anyhow::Result<RoundState> {
    let mut state: RoundState = serde_json::from_slice(bytes)
        .map_err(|e| anyhow::anyhow!("`{}` is not a round state: {e}", path.display()))?;
    slim::hydrate(&mut state);
    Ok(state)
}

/// `reported` on disk: what each report adds to the registry's finding.
mod slim {
    use std::collections::HashMap;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::RoundState;
    use crate::engine::decide::{Reported, Seen};
    use crate::findings::identity::MatchedBy;
    use crate::findings::{Finding, IdSource, Severity};

    #[derive(Serialize, Deserialize)]
    struct Ref {
        id: String,
        state: Seen,
        must_fix: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        induced_by: Option<u32>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        changed: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        back_after_skip: Option<u32>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        stands_for: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        matched_by: Option<MatchedBy>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resembles: Option<String>,
    }

    pub fn serialize<S: Serializer>(reported: &[Reported], s: S) -> Result<S::Ok, S::Error> {
        let refs: Vec<Ref> = reported
            .iter()
            .map(|r| Ref {
                id: r.finding.id.clone(),
                state: r.state,
                must_fix: r.must_fix,
                induced_by: r.induced_by,
                changed: r.changed,
                back_after_skip: r.back_after_skip,
                stands_for: r.stands_for.clone(),
                matched_by: r.matched_by,
                resembles: r.resembles.clone(),
            })
            .collect();
        refs.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Reported>, D::Error> {
        let refs = Vec::<Ref>::deserialize(d)?;
        Ok(refs
            .into_iter()
            .map(|r| Reported {
                finding: Finding {
                    id: r.id,
                    severity: Severity::Nit,
                    title: String::new(),
                    file: None,
                    line: None,
                    body: None,
                    undoes: None,
                    rule: None,
                    end_line: None,
                    fingerprint: String::new(),
                    id_source: IdSource::Explicit,
                    path_escapes: false,
                    reported_by: Vec::new(),
                },
                state: r.state,
                must_fix: r.must_fix,
                induced_by: r.induced_by,
                changed: r.changed,
                back_after_skip: r.back_after_skip,
                stands_for: r.stands_for,
                matched_by: r.matched_by,
                resembles: r.resembles,
            })
            .collect())
    }

    /// Puts each reported finding's text back from the registry, which
    /// holds every finding a round reported, as that round reported it.
    pub fn hydrate(state: &mut RoundState) {
        let index: HashMap<String, usize> = state
            .registry
            .findings
            .iter()
            .enumerate()
            .map(|(i, t)| (t.finding.id.clone(), i))
            .collect();
        for r in &mut state.reported {
            if let Some(&i) = index.get(r.finding.id.as_str()) {
                r.finding = state.registry.findings[i].finding.clone();
            }
        }
    }
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

/// Refuses a contract that changed since round 1 pinned it.
pub fn check_pinned(lp: &Loop, rows: &[Row]) -> anyhow::Result<()> {
    if let Some(first) = rows.first()
        && first.prev_sha256 != lp.loaded.sha256
    {
        return Err(hinted(
            format!(
                "contract `{}` changed since round 1: the ledger pins sha256 `{}`, the file now has `{}`",
                crate::state::shown(&lp.loaded.path),
                first.prev_sha256,
                lp.loaded.sha256
            ),
            format!(
                "`referee contract restore --loop {}` puts back the pinned bytes; a running contract changes only through `referee contract amend`",
                lp.name
            ),
        ));
    }
    Ok(())
}

/// The current sha256 of each file the contract names (`absent` for a
/// missing one), keyed by its path.
pub fn file_pins(lp: &Loop) -> std::collections::BTreeMap<String, String> {
    let pin = |path: &Path| match std::fs::read(path) {
        Ok(bytes) => crate::digest::sha256_hex(&bytes),
        Err(_) => "absent".to_string(),
    };
    let mut pins: std::collections::BTreeMap<String, String> = lp
        .contract()
        .named_files()
        .into_iter()
        .map(|(_, rel)| (rel.to_string(), pin(&lp.repo.join(rel))))
        .collect();
    if let Some(path) = info_exclude(&lp.repo) {
        pins.insert(INFO_EXCLUDE.to_string(), pin(&path));
    }
    pins
}

/// The pin key of the repository's `info/exclude` file: what it hides is
/// invisible to snapshots, the scope guard and the reviewer, so it may not
/// change during a loop.
const INFO_EXCLUDE: &str = ".git/info/exclude";

/// Where the repository's `info/exclude` file is.
fn info_exclude(repo: &Path) -> Option<PathBuf> {
    let dot_git = repo.join(".git");
    if dot_git.is_dir() {
        return Some(dot_git.join("info").join("exclude"));
    }
    let out = crate::git::Git::at(repo)
        .run(["rev-parse", "--git-path", "info/exclude"])
        .ok()?;
    let rel = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Some(repo.join(rel))
}

/// Refuses a file the contract names that changed since round 1 pinned it:
/// the writer must not rewrite the reviewer's prompt or the judge's answers.
fn check_pinned_files(lp: &Loop, state: &RoundState) -> anyhow::Result<()> {
    let now = file_pins(lp);
    if let (Some(then), Some(current)) = (state.pinned.get(INFO_EXCLUDE), now.get(INFO_EXCLUDE))
        && then != current
    {
        return Err(hinted(
            format!(
                "`{INFO_EXCLUDE}` changed since round 1: files it hides are invisible to the snapshot, the scope guard and the reviewer (sha256 `{}` then, `{}` now)",
                short(then),
                short(current)
            ),
            "put it back as it was; to ignore a file during a loop, use a `.gitignore` the patch shows",
        ));
    }
    for (field, rel) in lp.contract().named_files() {
        let (Some(then), Some(current)) = (state.pinned.get(rel), now.get(rel)) else {
            continue;
        };
        if then != current {
            return Err(hinted(
                format!(
                    "file `{rel}` (contract field `{field}`) changed since round 1 pinned it: sha256 `{}` then, `{}` now",
                    short(then),
                    short(current)
                ),
                "put the file back as it was; files the contract names are frozen with it",
            ));
        }
    }
    Ok(())
}

/// The round cap in force: the contract's, or the last amendment's.
pub fn effective_max_rounds(contract: &Contract, rows: &[Row]) -> u32 {
    rows.iter()
        .rev()
        .find_map(|r| r.amended_max_rounds())
        .unwrap_or(contract.max_rounds)
}

/// The contract in force: the file's, with the amendments in the ledger
/// applied (the round cap and the budget caps).
pub fn effective_contract(contract: &Contract, rows: &[Row]) -> Contract {
    let mut c = contract.clone();
    c.max_rounds = effective_max_rounds(contract, rows);
    for row in rows {
        if let Some(usd) = row.amendment("budget.usd").and_then(|v| v.parse().ok()) {
            c.budget.usd = Some(usd);
        }
        if let Some(tokens) = row.amendment("budget.tokens").and_then(|v| v.parse().ok()) {
            c.budget.tokens = Some(tokens);
        }
    }
    c
}

/// Where a loop with ledger rows `rows` stands: the last of its round,
/// decision and amend rows decides. Reads the rows alone.
pub fn standing_of(rows: &[Row]) -> LoopStanding {
    for row in rows.iter().rev() {
        match row.kind {
            Kind::Amend => break,
            Kind::Reject => {
                return LoopStanding::Rejected {
                    round: row.round,
                    by: row.by.clone(),
                };
            }
            Kind::Round if row.verdict == Some(Verdict::Stop) => {
                return LoopStanding::Stopped {
                    round: row.round,
                    rule: crate::rules::Stop::parse(&row.rule),
                };
            }
            Kind::Round => break,
            Kind::Waive | Kind::Approve => {}
        }
    }
    let round = rows
        .iter()
        .rev()
        .find(|r| r.kind == Kind::Round)
        .map_or(0, |r| r.round);
    match round {
        0 => LoopStanding::Fresh,
        round => LoopStanding::Running { round },
    }
}
