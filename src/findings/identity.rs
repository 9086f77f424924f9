//! Finding identity: content fingerprints, derived ids, and matching a
//! round's findings against the known ones (SPEC §3, §4.1). Pure.
//!
//! Matching order, one-to-one, for each new finding (docs/findings.md):
//! 1. an exact identity: a test name, a tool's SARIF fingerprint or a derived
//!    id; or a reviewer's id the loop has seen, trusted only when it agrees
//!    with the finding it names (the same file, and titles sharing a subject
//!    word). A disagreeing id is refused and the finding matched as if it had
//!    none (reviewers that number F1, F2… afresh each run);
//! 2. the content fingerprint (file, rule, normalized title), against every
//!    wording a known finding has had. A reviewer's id the loop has not seen
//!    stops here: the reviewer called it new;
//! 3. the same place: the same file, lines within [`NEAR_LINES`] of the known
//!    finding's line carried through the patches since, and titles sharing a
//!    subject word; the best-sharing, closest pairs first, so two problems on
//!    one line stay two findings;
//! 4. a similar title in the same file (token-set Jaccard at least
//!    [`SIMILARITY_THRESHOLD`]), wherever its line went.
//!
//! A closed finding is matched by a reviewer's id, place or similar title
//! only on strong evidence ([`strong`]): a reopen stops the loop, a finding
//! wrongly called new costs a round. A weaker match leaves the finding new,
//! and `resembles` names the closed one.
//!
//! Test findings have no place: only their test id matches them.

use std::collections::{HashMap, HashSet};

use crate::digest::Framed;

use super::{Finding, IdSource};

/// Lowest title similarity that keeps an id across rewording anywhere in a file.
pub const SIMILARITY_THRESHOLD: f64 = 0.6;

/// How far apart (in lines) two reports may point and still be at the same place.
pub const NEAR_LINES: u64 = 3;

/// The longest reported range the place pass looks back over.
const MAX_SPAN: u64 = 200;

/// Tokens shared by more known findings of one file than this are too common
/// to pick candidates by (they still count in the score).
const MAX_POSTING: usize = 64;

/// Most candidates scored per new finding, bounding the work in huge files.
const MAX_CANDIDATES: usize = 256;

/// A finding the loop already knows, as matching needs it: borrowed from
/// the registry (matching 50,000 against 50,000 copies no string).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Known<'a> {
    pub id: &'a str,
    /// Its file and line now: carried through the patches since it was reported.
    pub file: Option<&'a str>,
    pub line: Option<u64>,
    pub end_line: Option<u64>,
    pub title: &'a str,
    /// Its content fingerprint ([`content_fingerprint`]).
    pub fingerprint: &'a str,
    /// The fingerprints of its earlier wordings.
    pub aliases: &'a [String],
    pub rule: Option<&'a str>,
    pub id_source: IdSource,
    /// It was closed by a fix: matching a report to it reopens it, which
    /// stops the loop, so only strong evidence may ([`strong`]).
    pub closed: bool,
}

impl<'a> From<&'a Finding> for Known<'a> {
    fn from(finding: &'a Finding) -> Self {
        Known {
            id: &finding.id,
            file: finding.file.as_deref(),
            line: finding.line,
            end_line: finding.end_line,
            title: &finding.title,
            fingerprint: &finding.fingerprint,
            aliases: &[],
            rule: finding.rule.as_deref(),
            id_source: finding.id_source,
            closed: false,
        }
    }
}

/// How one new finding was matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Matched {
    /// The index of the known finding it is.
    pub known: Option<usize>,
    /// The evidence the match rests on.
    pub by: Option<MatchedBy>,
    /// Its id names a known finding it does not agree with: it must not keep it.
    pub id_refused: bool,
    /// A closed finding it resembles at its place, on evidence too weak for
    /// a reopen: it is new, and the round that closed that one caused it.
    pub resembles: Option<usize>,
}

/// What a match rests on, as the round's evidence records it (`matched_by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchedBy {
    /// The same identity: a test id, a tool's fingerprint, a derived id, or
    /// a reviewer's id that agrees with the finding it names.
    Id,
    /// The same file, rule and normalized title.
    Fingerprint,
    /// The same place, titles sharing what is wrong.
    Place,
    /// A similar title in the same file.
    Title,
    /// The contract's judge answered yes to `same_problem`: a finding that
    /// resembled a closed one on weak evidence is that finding again.
    Judge,
}

/// Lowercase, without digits, quotes or backticks, whitespace runs collapsed.
pub fn normalize_title(title: &str) -> String {
    let mut out = String::with_capacity(title.len());
    let mut space = false;
    for ch in title.chars() {
        if ch.is_numeric() || matches!(ch, '"' | '\'' | '`' | '“' | '”' | '‘' | '’') {
            continue;
        }
        if ch.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        out.extend(ch.to_lowercase());
    }
    out
}

/// The fingerprint of a finding's content: its file, rule and normalized
/// title. Line numbers are left out: they move between rounds.
pub fn content_fingerprint(file: Option<&str>, rule: Option<&str>, title: &str) -> String {
    let mut framed = Framed::new("referee-finding-v1");
    framed.field(file.unwrap_or("").as_bytes());
    framed.field(rule.unwrap_or("").as_bytes());
    framed.field(normalize_title(title).as_bytes());
    let mut hex = framed.finish();
    hex.truncate(16);
    hex
}

/// The id of a finding that came without one: `F-` and 10 hex digits.
pub fn derived_id(fingerprint: &str) -> String {
    format!("F-{}", fingerprint.get(..10).unwrap_or(fingerprint))
}

/// What a SARIF result's tool fingerprints say, with its rule: the part of
/// its id the parser can tell before the path is known (hex).
pub fn sarif_prints(rule: Option<&str>, fingerprints: &[(String, String)]) -> String {
    let mut framed = Framed::new("referee-sarif-fingerprint-v1");
    framed.field(rule.unwrap_or("").as_bytes());
    for (key, value) in fingerprints {
        framed.field(key.as_bytes());
        framed.field(value.as_bytes());
    }
    framed.finish()
}

/// The id for a SARIF result that carries tool fingerprints: its
/// [`sarif_prints`] and its repository path. The path is part of it: a
/// line hash (CodeQL's `primaryLocationLineHash`) is the same for the same
/// line in two files (`app.ts` and the `dist/app.js` built from it), and
/// fingerprints that say nothing of the place (gitleaks without git) are
/// the same for every file.
pub fn sarif_id(prints: &str, file: Option<&str>) -> String {
    let mut framed = Framed::new("referee-sarif-id-v2");
    framed.field(prints.as_bytes());
    framed.field(file.unwrap_or("").as_bytes());
    format!("S-{}", framed.finish().get(..10).unwrap_or_default())
}

/// The title's words (letters, no numbers), for similarity.
fn tokens(title: &str) -> HashSet<String> {
    normalize_title(title)
        .split(|ch: char| !ch.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_string)
        .collect()
}

/// Words that say nothing about what a finding is about: severities, the
/// words reviewers put on every finding, and English glue.
const NOT_A_SUBJECT: &[&str] = &[
    // severities and their aliases
    "nit",
    "style",
    "note",
    "none",
    "info",
    "low",
    "should",
    "warning",
    "minor",
    "medium",
    "bug",
    "error",
    "major",
    "failure",
    "high",
    "block",
    "critical",
    "security",
    "blocker",
    // what every finding says
    "bugs",
    "issue",
    "issues",
    "problem",
    "problems",
    "finding",
    "findings",
    "fix",
    "fixed",
    "fixes",
    "must",
    "need",
    "needs",
    "wrong",
    "incorrect",
    "incorrectly",
    "missing",
    "potential",
    "possible",
    "possibly",
    "line",
    "lines",
    "code",
    "file",
    "function",
    "method",
    "value",
    "values",
    "instead",
    "still",
    "again",
    "use",
    "uses",
    "used",
    "using",
    "check",
    "checks",
    // glue
    "the",
    "and",
    "for",
    "with",
    "when",
    "this",
    "that",
    "these",
    "those",
    "are",
    "was",
    "were",
    "not",
    "but",
    "from",
    "into",
    "onto",
    "than",
    "then",
    "there",
    "here",
    "also",
    "only",
    "may",
    "can",
    "could",
    "does",
    "did",
    "doesn",
    "don",
    "will",
    "would",
    "its",
    "has",
    "have",
    "been",
    "being",
    "which",
    "what",
    "where",
    "while",
    "all",
    "any",
    "some",
    "each",
    "every",
    "more",
    "less",
    "too",
    "very",
    "just",
    "via",
    "per",
    "out",
    "off",
    "one",
    "two",
    "before",
    "after",
];

/// The words of a title that name its subject, cut to a common stem: a
/// plural `s` dropped, then the first five letters (`expired`, `expiry` and
/// `expires` are one word; so are `test` and `tests`).
pub fn subject_words(title: &str) -> HashSet<String> {
    normalize_title(title)
        .split(|ch: char| !ch.is_alphanumeric())
        .filter(|word| word.chars().count() >= 3 && !NOT_A_SUBJECT.contains(word))
        .map(|word| {
            let singular = match word.strip_suffix('s') {
                Some(stem) if stem.chars().count() >= 3 && !stem.ends_with('s') => stem,
                _ => word,
            };
            singular.chars().take(5).collect()
        })
        .collect()
}

/// Whether two titles share a subject word.
pub fn share_subject(a: &str, b: &str) -> bool {
    let a = subject_words(a);
    subject_words(b).iter().any(|word| a.contains(word))
}

/// How far apart two places are in lines (ranges count from their nearest
/// ends); `None` when either has no line.
pub fn line_distance(a: (Option<u64>, Option<u64>), b: (Option<u64>, Option<u64>)) -> Option<u64> {
    let (a_start, b_start) = (a.0?, b.0?);
    let a_end = a.1.unwrap_or(a_start).max(a_start);
    let b_end = b.1.unwrap_or(b_start).max(b_start);
    Some(if a_end < b_start {
        b_start - a_end
    } else {
        a_start.saturating_sub(b_end)
    })
}

fn jaccard(a: &HashSet<String>, b: &HashSet<String>) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 0.0;
    }
    let shared = a.intersection(b).count();
    let union = a.len() + b.len() - shared;
    shared as f64 / union as f64
}

/// The words of a title that name code: a token with `_`, `.`, `::`, `(`,
/// `/` or `=` in it, in backticks, or in camelCase (`fetch_groups`,
/// `session.get`, `flush()`, `UPLOAD_DIR`, `parseConfig`). They say where a
/// finding is, not what is wrong there.
fn code_words(title: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    for (i, part) in title.split('`').enumerate() {
        if i % 2 == 1 {
            out.extend(subject_words(part));
            continue;
        }
        for token in part.split_whitespace() {
            let bare = token.trim_matches(|c: char| !c.is_alphanumeric() && c != '_');
            let camel = bare
                .chars()
                .zip(bare.chars().skip(1))
                .any(|(a, b)| a.is_lowercase() && b.is_uppercase());
            let dotted = bare.split('.').filter(|p| !p.is_empty()).count() > 1;
            // `_(` needs no rule of its own: the `_` makes it code.
            let called = token
                .char_indices()
                .any(|(i, c)| c == '(' && token[..i].ends_with(char::is_alphanumeric));
            let marked = ["::", "/", "="].iter().any(|mark| token.contains(mark));
            if camel || dotted || called || marked || bare.contains('_') {
                out.extend(subject_words(token));
            }
        }
    }
    out
}

/// What a title says is wrong: its subject words without the names of the
/// code it sits in, and without `template` (the words every finding of its
/// review shares).
fn wrong_words(title: &str, template: &HashSet<String>) -> HashSet<String> {
    let code = code_words(title);
    subject_words(title)
        .into_iter()
        .filter(|word| !code.contains(word) && !template.contains(word))
        .collect()
}

/// The words every finding of a review shares, when it has at least three:
/// a template ("No timeout on session.get in fetch_users", `fetch_roles`…)
/// whose common words say nothing about one finding.
fn template_words(review: &[Finding]) -> HashSet<String> {
    if review.len() < 3 {
        return HashSet::new();
    }
    let mut shared = subject_words(&review[0].title);
    for finding in &review[1..] {
        let words = subject_words(&finding.title);
        shared.retain(|word| words.contains(word));
    }
    shared
}

/// Whether a report is strong evidence that it is the closed finding `known`
/// come back (SPEC §4.1, a reopen needs strong evidence): the same
/// normalized title, or two words of what is wrong in common. Names of the
/// code and a review's template words do not count: "fetch_groups swallows
/// HTTP errors" is not "No timeout on session.get in fetch_groups", and
/// "flush() holds the lock across the network call" is not "flush() reads
/// the buffer without the lock".
fn strong(finding: &Finding, template: &HashSet<String>, known: &Known) -> bool {
    normalize_title(&finding.title) == normalize_title(known.title)
        || wrong_words(&finding.title, template)
            .intersection(&wrong_words(known.title, &HashSet::new()))
            .count()
            >= 2
}

/// An explicit id that names `known` is believed when the finding agrees
/// with it: the same file (when both name one) and a shared subject word.
fn id_agrees(finding: &Finding, known: &Known) -> bool {
    let same_file = match (finding.file.as_deref(), known.file) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    };
    same_file
        && (normalize_title(&finding.title) == normalize_title(known.title)
            || share_subject(&finding.title, known.title))
}

/// How a new finding may be matched beyond its exact identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    /// Exact identity only (test names, tool fingerprints).
    Exact,
    /// Also by fingerprint (a reviewer's id the loop has not seen).
    Fingerprint,
    /// By fingerprint, place and similar title.
    Anywhere,
}

/// For each new finding, the known finding it is, if any.
///
/// One-to-one: no known finding is given to two new ones. About linear
/// time: ids and fingerprints are hashed, and place and similarity only
/// compare findings of the same file, bounded per finding.
pub fn match_findings(new: &[Finding], known: &[Known]) -> Vec<Matched> {
    let mut result: Vec<Matched> = vec![Matched::default(); new.len()];
    let mut reach: Vec<Reach> = new
        .iter()
        .map(|f| match f.id_source {
            IdSource::Test | IdSource::Sarif => Reach::Exact,
            IdSource::Explicit | IdSource::Derived => Reach::Anywhere,
        })
        .collect();
    let mut taken = vec![false; known.len()];

    let mut by_id: HashMap<&str, usize> = HashMap::with_capacity(known.len());
    let mut by_fingerprint: HashMap<&str, Vec<usize>> = HashMap::with_capacity(known.len());
    for (index, finding) in known.iter().enumerate() {
        by_id.entry(finding.id).or_insert(index);
        if finding.id_source == IdSource::Test {
            continue;
        }
        let aliases = finding.aliases.iter().map(String::as_str);
        for fingerprint in std::iter::once(finding.fingerprint).chain(aliases) {
            by_fingerprint.entry(fingerprint).or_default().push(index);
        }
    }

    let template = template_words(new);
    // 1. Exact identities, and reviewer ids that agree with what they name.
    for (i, finding) in new.iter().enumerate() {
        match by_id.get(finding.id.as_str()) {
            Some(&index) if finding.id_source != IdSource::Explicit && !taken[index] => {
                taken[index] = true;
                result[i].known = Some(index);
                result[i].by = Some(MatchedBy::Id);
            }
            Some(_) if finding.id_source != IdSource::Explicit => {}
            Some(&index) => {
                let other = &known[index];
                let agrees = id_agrees(finding, other);
                if !taken[index] && agrees && (!other.closed || strong(finding, &template, other)) {
                    taken[index] = true;
                    result[i].known = Some(index);
                    result[i].by = Some(MatchedBy::Id);
                } else {
                    result[i].id_refused = true;
                    if agrees && other.closed {
                        result[i].resembles = Some(index);
                    }
                }
            }
            None if finding.id_source == IdSource::Explicit => reach[i] = Reach::Fingerprint,
            None => {}
        }
    }
    // 2. The fingerprint, against every wording a known finding has had.
    for (i, finding) in new.iter().enumerate() {
        if result[i].known.is_some() || reach[i] == Reach::Exact {
            continue;
        }
        if let Some(indexes) = by_fingerprint.get(finding.fingerprint.as_str())
            && let Some(&index) = indexes.iter().find(|index| !taken[**index])
        {
            taken[index] = true;
            result[i].known = Some(index);
            result[i].by = Some(MatchedBy::Fingerprint);
            result[i].resembles = None;
        }
    }
    let open: Vec<bool> = (0..new.len())
        .map(|i| result[i].known.is_none() && reach[i] == Reach::Anywhere)
        .collect();
    // 3. The same place, 4. a similar title in the same file; a closed
    // finding only on strong evidence.
    let weak = |i: usize, k: usize| known[k].closed && !strong(&new[i], &template, &known[k]);
    place_pass(new, known, &open, &weak, &mut result, &mut taken);
    similarity_pass(new, known, &open, &weak, &mut result, &mut taken);
    result
}

/// Whether two findings' rules allow them to be one (both named: equal).
fn rules_agree(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    }
}

/// Unmatched known findings with a file, grouped by file, tests left out.
fn by_file<'a>(known: &'a [Known], taken: &[bool]) -> HashMap<&'a str, Vec<usize>> {
    let mut files: HashMap<&str, Vec<usize>> = HashMap::new();
    for (index, finding) in known.iter().enumerate() {
        if taken[index] || finding.id_source == IdSource::Test {
            continue;
        }
        if let Some(file) = finding.file {
            files.entry(file).or_default().push(index);
        }
    }
    files
}

/// Assigns `pairs` (score, distance, new, known) best first, one-to-one;
/// a pair `weak` names is no match, only a resemblance.
fn assign(
    mut pairs: Vec<(f64, u64, usize, usize)>,
    by: MatchedBy,
    weak: &dyn Fn(usize, usize) -> bool,
    result: &mut [Matched],
    taken: &mut [bool],
) {
    // Best score, then closest, then by position: deterministic.
    pairs.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then(a.1.cmp(&b.1))
            .then(a.2.cmp(&b.2))
            .then(a.3.cmp(&b.3))
    });
    for (_, _, new_index, known_index) in pairs {
        let matched = &mut result[new_index];
        if matched.known.is_some() || taken[known_index] {
            continue;
        }
        if weak(new_index, known_index) {
            matched.resembles.get_or_insert(known_index);
            continue;
        }
        taken[known_index] = true;
        matched.known = Some(known_index);
        matched.by = Some(by);
        matched.resembles = None;
    }
}

fn place_pass(
    new: &[Finding],
    known: &[Known],
    open: &[bool],
    weak: &dyn Fn(usize, usize) -> bool,
    result: &mut [Matched],
    taken: &mut [bool],
) {
    let mut files = by_file(known, taken);
    for list in files.values_mut() {
        list.sort_by_key(|&index| known[index].line.unwrap_or(0));
    }
    // How far up a known finding's range may start and still reach a line:
    // its file's longest reported range, capped.
    let span = |list: &[usize]| -> u64 {
        list.iter()
            .filter_map(|&k| Some(known[k].end_line?.saturating_sub(known[k].line?)))
            .max()
            .unwrap_or(0)
            .min(MAX_SPAN)
    };
    let spans: HashMap<&str, u64> = files.iter().map(|(f, list)| (*f, span(list))).collect();
    let mut words: HashMap<usize, HashSet<String>> = HashMap::new();
    let mut pairs = Vec::new();
    for (i, finding) in new.iter().enumerate() {
        if !open[i] {
            continue;
        }
        let (Some(file), Some(line)) = (finding.file.as_deref(), finding.line) else {
            continue;
        };
        let Some(list) = files.get(file) else {
            continue;
        };
        let mine = subject_words(&finding.title);
        if mine.is_empty() {
            continue;
        }
        let reach = NEAR_LINES + spans.get(file).copied().unwrap_or(0);
        let from = list.partition_point(|&k| known[k].line.unwrap_or(0) + reach < line);
        for &k in list[from..].iter().take(MAX_CANDIDATES) {
            let other = &known[k];
            if other
                .line
                .is_some_and(|l| l > finding.end_line.unwrap_or(line) + NEAR_LINES)
            {
                break;
            }
            let Some(distance) =
                line_distance((Some(line), finding.end_line), (other.line, other.end_line))
            else {
                continue;
            };
            if distance > NEAR_LINES || !rules_agree(finding.rule.as_deref(), other.rule) {
                continue;
            }
            let theirs = words.entry(k).or_insert_with(|| subject_words(other.title));
            let shared = mine.intersection(theirs).count();
            if shared > 0 {
                pairs.push((jaccard(&mine, theirs), distance, i, k));
            }
        }
    }
    assign(pairs, MatchedBy::Place, weak, result, taken);
}

fn similarity_pass(
    new: &[Finding],
    known: &[Known],
    open: &[bool],
    weak: &dyn Fn(usize, usize) -> bool,
    result: &mut [Matched],
    taken: &mut [bool],
) {
    let files = by_file(known, taken);
    let mut wanted: HashMap<&str, Vec<usize>> = HashMap::new();
    for (index, finding) in new.iter().enumerate() {
        if !open[index] || result[index].known.is_some() {
            continue;
        }
        if let Some(file) = finding.file.as_deref()
            && files.contains_key(file)
        {
            wanted.entry(file).or_default().push(index);
        }
    }

    let mut pairs: Vec<(f64, u64, usize, usize)> = Vec::new();
    for (file, new_indexes) in wanted {
        let Some(known_indexes) = files.get(file) else {
            continue;
        };
        let known_tokens: Vec<HashSet<String>> = known_indexes
            .iter()
            .map(|index| tokens(known[*index].title))
            .collect();
        let mut postings: HashMap<&str, Vec<usize>> = HashMap::new();
        for (slot, set) in known_tokens.iter().enumerate() {
            for token in set {
                postings.entry(token.as_str()).or_default().push(slot);
            }
        }
        for new_index in new_indexes {
            let finding = &new[new_index];
            let mine = tokens(&finding.title);
            let mut candidates: Vec<usize> = Vec::new();
            let mut seen: HashSet<usize> = HashSet::new();
            let mut common: Option<&Vec<usize>> = None;
            for token in &mine {
                let Some(list) = postings.get(token.as_str()) else {
                    continue;
                };
                if list.len() > MAX_POSTING {
                    if common.is_none_or(|best| list.len() < best.len()) {
                        common = Some(list);
                    }
                    continue;
                }
                for slot in list {
                    if seen.insert(*slot) {
                        candidates.push(*slot);
                    }
                }
            }
            if candidates.is_empty()
                && let Some(list) = common
            {
                candidates.extend(list.iter().copied());
            }
            candidates.truncate(MAX_CANDIDATES);
            for slot in candidates {
                let known_index = known_indexes[slot];
                let other = &known[known_index];
                if !rules_agree(finding.rule.as_deref(), other.rule) {
                    continue;
                }
                let score = jaccard(&mine, &known_tokens[slot]);
                if score >= SIMILARITY_THRESHOLD {
                    pairs.push((score, 0, new_index, known_index));
                }
            }
        }
    }
    assign(pairs, MatchedBy::Title, weak, result, taken);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Severity;

    fn finding(id_source: IdSource, id: &str, file: Option<&str>, title: &str) -> Finding {
        let fingerprint = content_fingerprint(file, None, title);
        let id = if id.is_empty() {
            derived_id(&fingerprint)
        } else {
            id.to_string()
        };
        Finding {
            id,
            severity: Severity::Bug,
            title: title.to_string(),
            file: file.map(str::to_string),
            line: Some(1),
            body: None,
            undoes: None,
            rule: None,
            end_line: None,
            fingerprint,
            id_source,
            path_escapes: false,
            reported_by: Vec::new(),
        }
    }

    fn derived(file: &str, title: &str) -> Finding {
        finding(IdSource::Derived, "", Some(file), title)
    }

    fn at(mut f: Finding, line: u64) -> Finding {
        f.line = Some(line);
        f
    }

    fn explicit(id: &str, file: &str, line: u64, title: &str) -> Finding {
        at(finding(IdSource::Explicit, id, Some(file), title), line)
    }

    /// The ids the new findings were matched to.
    fn ids(new: &[Finding], known: &[Known]) -> Vec<Option<String>> {
        match_findings(new, known)
            .into_iter()
            .map(|m| m.known.map(|i| known[i].id.to_string()))
            .collect()
    }

    /// A closed finding, as the registry hands it to matching.
    fn closed(f: &Finding) -> Known<'_> {
        Known {
            closed: true,
            ..Known::from(f)
        }
    }

    #[test]
    fn names_of_code_are_not_what_is_wrong() {
        let words = |t: &str| {
            let mut w: Vec<String> = code_words(t).into_iter().collect();
            w.sort();
            w
        };
        assert_eq!(
            words("No timeout on session.get in fetch_groups"),
            ["fetch", "get", "group", "sessi"]
        );
        assert_eq!(
            words("flush() reads `self._buffer` without the lock"),
            ["buffe", "flush", "self"]
        );
        assert_eq!(
            words("parseConfig drops UPLOAD_DIR"),
            ["dir", "parse", "uploa"]
        );
        assert!(words("the lock is held (see below) for too long.").is_empty());
        let none = HashSet::new();
        let wrong = wrong_words("fetch_groups swallows HTTP errors", &none);
        assert!(
            wrong.contains("swall") && !wrong.contains("fetch"),
            "{wrong:?}"
        );
    }

    /// A closed finding is matched again only on strong evidence; the same
    /// report against an open finding matches as before (SPEC §4.1).
    #[test]
    fn a_reopen_needs_strong_evidence() {
        let was = at(
            derived("app/client.py", "No timeout on session.get in fetch_groups"),
            40,
        );
        let now = [at(
            derived("app/client.py", "fetch_groups swallows HTTP errors"),
            41,
        )];
        let got = match_findings(&now, &[closed(&was)]);
        // Nothing in common but the function's name: new, caused where the
        // closed one was fixed.
        assert_eq!((got[0].known, got[0].resembles), (None, Some(0)));

        let was = at(
            derived("app/sink.py", "flush() reads the buffer without the lock"),
            12,
        );
        let now = [at(
            derived(
                "app/sink.py",
                "flush() holds the lock across the network call",
            ),
            12,
        )];
        let got = match_findings(&now, &[closed(&was)]);
        assert_eq!(got[0].known, None, "one shared noun of the place: new");
        assert_eq!(
            got[0].resembles,
            Some(0),
            "it sits where the closed one did"
        );
        // Open, the same pair is one finding reworded.
        let got = match_findings(&now, &[Known::from(&was)]);
        assert_eq!((got[0].known, got[0].by), (Some(0), Some(MatchedBy::Place)));

        // Two words of what is wrong in common: the closed one is back.
        let was = at(
            derived(
                "up/store.py",
                "the filename is joined unchecked, so ../ escapes the upload directory",
            ),
            13,
        );
        let now = [at(
            derived(
                "up/store.py",
                "stripping ../ once is bypassable: ....// still escapes the upload directory",
            ),
            13,
        )];
        let got = match_findings(&now, &[closed(&was)]);
        assert_eq!((got[0].known, got[0].by), (Some(0), Some(MatchedBy::Place)));
        // The same title is always strong: its derived id is the closed one's.
        let now = [at(
            derived(
                "up/store.py",
                "the filename is joined unchecked, so ../ escapes the upload directory",
            ),
            90,
        )];
        let got = match_findings(&now, &[closed(&was)]);
        assert_eq!((got[0].known, got[0].by), (Some(0), Some(MatchedBy::Id)));
        let reworded_id = [explicit(
            "R7",
            "up/store.py",
            90,
            "The filename is joined unchecked, so ../ escapes the upload directory",
        )];
        let got = match_findings(&reworded_id, &[closed(&was)]);
        assert_eq!(
            (got[0].known, got[0].by),
            (Some(0), Some(MatchedBy::Fingerprint))
        );
    }

    /// A reviewer's id for a closed finding is believed only on the same
    /// strong evidence; refused, the finding is new and resembles it.
    #[test]
    fn a_reviewer_id_for_a_closed_finding_needs_strong_evidence_too() {
        let was = explicit(
            "F3",
            "app/sink.py",
            12,
            "flush() reads the buffer without the lock",
        );
        let weak = [explicit(
            "F3",
            "app/sink.py",
            12,
            "flush() holds the lock across the network call",
        )];
        let got = match_findings(&weak, &[closed(&was)]);
        assert_eq!(
            (got[0].known, got[0].id_refused, got[0].resembles),
            (None, true, Some(0))
        );
        let strong = [explicit(
            "F3",
            "app/sink.py",
            14,
            "flush() still reads the shared buffer without taking the lock",
        )];
        let got = match_findings(&strong, &[closed(&was)]);
        assert_eq!((got[0].known, got[0].by), (Some(0), Some(MatchedBy::Id)));
    }

    /// A finding that met a closed one on weak evidence but is an open one
    /// resembles nothing: it is that open finding.
    #[test]
    fn a_finding_matched_after_all_resembles_nothing() {
        let was = explicit(
            "F3",
            "app/sink.py",
            12,
            "flush() reads the buffer without the lock",
        );
        let open = derived(
            "app/sink.py",
            "flush() holds the lock across the network call",
        );
        let known = [closed(&was), Known::from(&open)];
        let now = [explicit(
            "F3",
            "app/sink.py",
            12,
            "flush() holds the lock across the network call",
        )];
        let got = match_findings(&now, &known);
        assert_eq!(
            (got[0].known, got[0].by, got[0].resembles),
            (Some(1), Some(MatchedBy::Fingerprint), None)
        );
    }

    /// Words every finding of a review shares (a template) are no subject.
    #[test]
    fn a_reviews_template_words_are_no_subject() {
        let review: Vec<Finding> = ["users", "roles", "projects"]
            .iter()
            .map(|name| {
                derived(
                    "api.py",
                    &format!("Missing retry budget for the {name} request"),
                )
            })
            .collect();
        let mut template: Vec<String> = template_words(&review).into_iter().collect();
        template.sort();
        assert_eq!(template, ["budge", "reque", "retry"]);
        assert!(
            template_words(&review[..2]).is_empty(),
            "two findings make no template"
        );
        // A closed finding sharing only the template's words stays closed.
        let was = at(
            derived("api.py", "Missing retry budget for the groups request"),
            30,
        );
        let mut now = review.clone();
        now.push(at(
            derived(
                "api.py",
                "groups request retries without a budget or backoff",
            ),
            30,
        ));
        let got = match_findings(&now, &[closed(&was)]);
        assert_eq!(got[3].known, None, "{got:?}");
    }

    #[test]
    fn titles_normalize_without_numbers_quotes_or_space_runs() {
        assert_eq!(
            normalize_title("  Line 42: `foo`  is \"unused\"\t(3 times) "),
            "line : foo is unused ( times)"
        );
    }

    #[test]
    fn an_unseen_reviewer_id_is_matched_by_fingerprint_only_not_by_place() {
        // A reviewer's new id at a known finding's place, in other words:
        // a new finding, not the known one reworded.
        let was = explicit("F1", "src/a.rs", 10, "token expiry is off by one");
        let now = explicit("F7", "src/a.rs", 10, "token expiry check is off by one");
        assert_eq!(ids(&[now], &[Known::from(&was)]), [None]);
        // Without an id it is the known one, by its place and words.
        let plain = at(derived("src/a.rs", "token expiry check is off by one"), 10);
        assert_eq!(
            ids(&[plain], &[Known::from(&was)]),
            [Some("F1".to_string())]
        );
    }

    #[test]
    fn a_second_report_of_a_taken_id_is_neither_refused_nor_like_it() {
        let was = explicit("F1", "src/a.rs", 10, "token expiry is off by one");
        let known = [Known::from(&was)];
        // Two reports naming open F1: the first takes it; the second is
        // refused, and resembles nothing (F1 is open, not closed).
        let twice = [
            explicit("F1", "src/a.rs", 10, "token expiry is off by one"),
            explicit("F1", "src/a.rs", 10, "token expiry still off by one"),
        ];
        let got = match_findings(&twice, &known);
        assert_eq!(got[0].known, Some(0));
        assert!(got[1].id_refused && got[1].resembles.is_none(), "{got:?}");
        // A test's or a tool's id seen twice: the second is no reviewer's
        // claim to refuse.
        let test = finding(IdSource::Test, "auth::expiry", None, "auth::expiry failed");
        let known = [Known::from(&test)];
        let got = match_findings(&[test.clone(), test.clone()], &known);
        assert_eq!(got[0].known, Some(0));
        assert!(!got[1].id_refused && got[1].known.is_none(), "{got:?}");
    }

    #[test]
    fn the_place_pass_reaches_exactly_near_lines_and_past_many_findings_above() {
        let was = at(derived("src/a.rs", "token expiry is off by one"), 10);
        let by = |new: Finding, known: &[Known]| match_findings(&[new], known)[0].by;
        // NEAR_LINES below is still the same place.
        let below = at(
            derived("src/a.rs", "token expiry check is off by one"),
            10 + NEAR_LINES,
        );
        assert_eq!(by(below, &[Known::from(&was)]), Some(MatchedBy::Place));
        // Far more findings above it than one place looks at: the pass starts
        // from the line, not from the top of the file.
        let mut above: Vec<Finding> = (400..=400 + MAX_CANDIDATES as u64 + 10)
            .map(|n| at(derived("src/a.rs", "widget renders blank"), n))
            .collect();
        above.push(at(derived("src/a.rs", "token expiry is off by one"), 1_000));
        let known: Vec<Known> = above.iter().map(Known::from).collect();
        let near = at(
            derived("src/a.rs", "token expiry check is off by one"),
            1_001,
        );
        assert_eq!(by(near, &known), Some(MatchedBy::Place));
    }

    #[test]
    fn the_place_pass_reaches_near_lines_above_the_first_line_too() {
        let by = |new: Finding, was: &Finding| match_findings(&[new], &[Known::from(was)])[0].by;
        // A known finding NEAR_LINES below the new one, the new one on line 1.
        let was = at(
            derived("src/a.rs", "token expiry is off by one"),
            1 + NEAR_LINES,
        );
        let new = at(derived("src/a.rs", "token expiry check is off by one"), 1);
        assert_eq!(by(new, &was), Some(MatchedBy::Place));
        let was = at(
            derived("src/a.rs", "token expiry is off by one"),
            10 + NEAR_LINES,
        );
        let new = at(derived("src/a.rs", "token expiry check is off by one"), 10);
        assert_eq!(by(new, &was), Some(MatchedBy::Place));
    }

    /// Words as many letters as `n` is in base 26: `qa`, `qb`, ... distinct
    /// words for generated titles (digits are dropped from titles).
    fn word(n: usize) -> String {
        let mut n = n;
        let mut out = String::from("q");
        loop {
            out.push((b'a' + (n % 26) as u8) as char);
            n /= 26;
            if n == 0 {
                return out;
            }
        }
    }

    #[test]
    fn the_similarity_pass_looks_through_a_rare_word_before_a_common_one() {
        // No lines: the place pass has nothing to go by.
        let placeless = |title: &str| Finding {
            line: None,
            ..derived("src/a.rs", title)
        };
        // Three hundred known findings share `widget` and `sprocket`; the
        // one the new finding is shares both and the rare `frobnicator`,
        // and comes last: it is found through the rare word, where the
        // common words' lists would be cut before it.
        let mut known: Vec<Finding> = (0..300)
            .map(|n| placeless(&format!("widget sprocket {}", word(n))))
            .collect();
        known.push(placeless("widget sprocket frobnicator overflow"));
        let k: Vec<Known> = known.iter().map(Known::from).collect();
        let new = placeless("widget sprocket frobnicator overflow check");
        assert_eq!(match_findings(&[new], &k)[0].known, Some(300));
        // Every word common: through the rarer list (66 long), not the
        // longer one, which the candidate cap cuts before its end. The one it
        // is has the same words in another order, last; the longer list's
        // first 256 hold only weaker matches.
        let mut known: Vec<Finding> = (0..300)
            .map(|n| {
                let gizmo = if n >= 235 { " gizmo" } else { "" };
                placeless(&format!("widget{gizmo} {}", word(n)))
            })
            .collect();
        known.push(placeless("gizmo widget"));
        let k: Vec<Known> = known.iter().map(Known::from).collect();
        let new = placeless("widget gizmo");
        assert_eq!(match_findings(&[new], &k)[0].known, Some(300));
        // A word on exactly MAX_POSTING known findings is still looked
        // through, beside a rare word that leads elsewhere.
        let mut known: Vec<Finding> = (0..MAX_POSTING - 1)
            .map(|n| placeless(&format!("gadget {}", word(n))))
            .collect();
        known.extend((0..70).map(|n| placeless(&format!("widget sprocket {}", word(1_000 + n)))));
        known.push(placeless("zorp lever"));
        known.push(placeless("gadget widget sprocket"));
        let k: Vec<Known> = known.iter().map(Known::from).collect();
        let new = placeless("gadget widget sprocket zorp");
        assert_eq!(match_findings(&[new], &k)[0].known, Some(known.len() - 1));
    }

    #[test]
    fn titles_normalize_other_scripts_digits_and_letters_alike() {
        // Arabic-Indic and full-width digits are digits; other scripts'
        // capitals are lowercased, `İ` into its two characters.
        assert_eq!(normalize_title("ÉCHEC ٣ fois ３"), "échec fois");
        assert_eq!(normalize_title("İstanbul ΣΟΦΊΑ"), "i\u{307}stanbul σοφία");
        assert_eq!(normalize_title("“quoted” ‘too’"), "quoted too");
    }

    #[test]
    fn subject_words_drop_a_plural_s_then_keep_five_letters() {
        let words = |t: &str| {
            let mut w: Vec<String> = subject_words(t).into_iter().collect();
            w.sort();
            w
        };
        // `tests` and `maps` lose their `s`; `class` keeps its double `s`;
        // `bus` and `ids` are too short to lose one; short and stop words go.
        assert_eq!(words("Tests"), ["test"]);
        assert_eq!(words("maps"), ["map"]);
        assert_eq!(words("class"), ["class"]);
        assert_eq!(words("bus ids"), ["bus", "ids"]);
        assert_eq!(words("expired expiry expires"), ["expir"]);
        assert_eq!(words("an ok leak of the db"), ["leak"]);
    }

    #[test]
    fn code_words_are_the_names_a_title_cites() {
        let words = |t: &str| {
            let mut w: Vec<String> = code_words(t).into_iter().collect();
            w.sort();
            w
        };
        assert_eq!(words("`fetch groups` swallows errors"), ["fetch", "group"]);
        assert_eq!(words("_private_helper leaks"), ["helpe", "priva"]);
        // Only its `_`s make `__init__` code: they are kept when punctuation is trimmed.
        assert_eq!(words("__init__ leaks"), ["init"]);
        assert_eq!(words("flush() holds the lock"), ["flush"]);
        assert_eq!(words("parseConfig reads twice"), ["parse"]);
        assert_eq!(words("session.get has no timeout"), ["get", "sessi"]);
        assert_eq!(
            words("UPLOAD_DIR=/tmp is world-writable"),
            ["dir", "tmp", "uploa"]
        );
        // A bracket after a space or a symbol is prose, not a call.
        assert_eq!(
            words("retries (forever) when offline"),
            Vec::<String>::new()
        );
        assert_eq!(words("sum+(total) overflows"), Vec::<String>::new());
    }

    #[test]
    fn jaccard_is_shared_words_over_all_words() {
        let set = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<HashSet<_>>();
        assert_eq!(jaccard(&set(&["a", "b"]), &set(&["b", "c"])), 1.0 / 3.0);
        assert_eq!(jaccard(&set(&["a"]), &set(&["a"])), 1.0);
        assert_eq!(jaccard(&set(&[]), &set(&["a"])), 0.0);
        assert_eq!(jaccard(&set(&[]), &set(&[])), 0.0);
    }

    #[test]
    fn fingerprints_ignore_line_numbers_and_case_but_not_files() {
        let a = content_fingerprint(Some("a.rs"), None, "Overflow at line 10");
        assert_eq!(
            a,
            content_fingerprint(Some("a.rs"), None, "overflow at line 40")
        );
        assert_ne!(
            a,
            content_fingerprint(Some("b.rs"), None, "overflow at line 10")
        );
        assert_ne!(
            a,
            content_fingerprint(Some("a.rs"), Some("R1"), "overflow at line 10")
        );
        assert_eq!(derived_id(&a).len(), 12);
    }

    #[test]
    fn subjects_leave_out_severities_and_glue_and_share_stems() {
        let words = subject_words("Bug: the expired token check is wrong");
        assert_eq!(words, ["expir", "token"].map(String::from).into());
        assert!(share_subject(
            "Off-by-one in expiry check",
            "Token expiry comparison uses > instead of >="
        ));
        assert!(!share_subject(
            "[bug] missing check",
            "critical bug: wrong value"
        ));
    }

    #[test]
    fn an_agreeing_id_wins_and_a_disagreeing_one_is_refused() {
        let kept = [
            explicit("F1", "a.rs", 10, "expired tokens pass"),
            explicit("F2", "b.rs", 5, "cache never evicts"),
        ];
        let known: Vec<Known> = kept.iter().map(Known::from).collect();
        let new = vec![
            // F1 reworded at another line: the same file and subject.
            explicit("F1", "a.rs", 30, "Token expiry compared with >"),
            // A fresh F2 in another file about something else.
            explicit("F2", "c.rs", 1, "sql built by string concatenation"),
        ];
        let got = match_findings(&new, &known);
        assert_eq!(
            got[0],
            Matched {
                known: Some(0),
                by: Some(MatchedBy::Id),
                ..Matched::default()
            }
        );
        assert_eq!(
            got[1],
            Matched {
                id_refused: true,
                ..Matched::default()
            }
        );
        // The same id, same file, no shared subject: refused too.
        let got = match_findings(&[explicit("F2", "b.rs", 5, "log line is too long")], &known);
        assert!(got[0].id_refused);
        // The same id and subject in another file: refused.
        let got = match_findings(
            &[explicit("F2", "c.rs", 5, "the cache never evicts")],
            &known,
        );
        assert!(got[0].id_refused);
        // The same id and subject with no file: nothing says it moved.
        let placeless = finding(IdSource::Explicit, "F2", None, "the cache never evicts");
        assert_eq!(match_findings(&[placeless], &known)[0].known, Some(1));
    }

    #[test]
    fn an_unseen_id_is_new_unless_its_fingerprint_is_known() {
        let kept = [explicit("F1", "a.rs", 10, "expired tokens pass")];
        let known: Vec<Known> = kept.iter().map(Known::from).collect();
        let new = vec![
            explicit("F7", "a.rs", 10, "expiry check lets expired tokens through"),
            explicit("F8", "a.rs", 44, "Expired tokens pass"),
        ];
        // F7 sits at F1's place, but the reviewer called it new; F8 has F1's
        // file and words, wherever its line went.
        assert_eq!(ids(&new, &known), vec![None, Some("F1".into())]);
    }

    #[test]
    fn a_reworded_finding_at_the_same_place_keeps_its_id() {
        let kept = [at(derived("src/auth.rs", "Off-by-one in expiry check"), 42)];
        let known: Vec<Known> = kept.iter().map(Known::from).collect();
        let new = vec![at(
            derived(
                "src/auth.rs",
                "Token expiry comparison uses > instead of >=",
            ),
            43,
        )];
        assert_eq!(ids(&new, &known), vec![Some(known[0].id.to_string())]);
        // Too far away, or in another file: another finding.
        let far = vec![at(
            derived(
                "src/auth.rs",
                "Token expiry comparison uses > instead of >=",
            ),
            60,
        )];
        assert_eq!(ids(&far, &known), vec![None]);
        let other = vec![at(
            derived("src/other.rs", "Token expiry comparison uses >"),
            42,
        )];
        assert_eq!(ids(&other, &known), vec![None]);
    }

    #[test]
    fn two_problems_on_one_line_stay_two_findings() {
        let kept = [
            at(derived("db.rs", "SQL injection through the user name"), 42),
            at(derived("db.rs", "Unhandled error from query execution"), 42),
        ];
        let known: Vec<Known> = kept.iter().map(Known::from).collect();
        let new = vec![
            at(derived("db.rs", "query execution error is swallowed"), 42),
            at(derived("db.rs", "user name concatenated into SQL"), 42),
            at(derived("db.rs", "connection pool is never closed"), 42),
        ];
        assert_eq!(
            ids(&new, &known),
            vec![
                Some(known[1].id.to_string()),
                Some(known[0].id.to_string()),
                None
            ]
        );
    }

    #[test]
    fn earlier_wordings_match_by_fingerprint() {
        let old = at(derived("a.rs", "token expiry compared with >"), 40);
        let aliases = [content_fingerprint(
            Some("a.rs"),
            None,
            "Off-by-one in expiry check",
        )];
        let k = Known {
            aliases: &aliases,
            ..Known::from(&old)
        };
        let new = vec![at(derived("a.rs", "Off-by-one in expiry check"), 90)];
        assert_eq!(ids(&new, &[k]), vec![Some(k.id.to_string())]);
    }

    #[test]
    fn exact_id_wins_then_fingerprint() {
        let kept = [
            finding(IdSource::Explicit, "F1", Some("a.rs"), "first thing"),
            derived("a.rs", "second thing at 3"),
        ];
        let known: Vec<Known> = kept.iter().map(Known::from).collect();
        let new = vec![
            finding(
                IdSource::Explicit,
                "F1",
                Some("a.rs"),
                "first thing, reworded",
            ),
            derived("a.rs", "Second thing at 99"),
            derived("b.rs", "a brand new problem"),
        ];
        assert_eq!(
            ids(&new, &known),
            vec![Some("F1".into()), Some(known[1].id.to_string()), None]
        );
    }

    #[test]
    fn reworded_finding_keeps_its_id_within_the_same_file() {
        let old = at(
            derived("src/auth.rs", "expired tokens pass the auth check"),
            10,
        );
        let kept = [old.clone()];
        let known: Vec<Known> = kept.iter().map(Known::from).collect();
        let new = vec![at(
            derived("src/auth.rs", "Expired tokens still pass the auth check"),
            200,
        )];
        assert_ne!(new[0].id, old.id);
        assert_eq!(ids(&new, &known), vec![Some(old.id.clone())]);
        // The same words in another file are another finding.
        let elsewhere = vec![derived(
            "src/other.rs",
            "expired tokens still pass the auth check",
        )];
        assert_eq!(ids(&elsewhere, &known), vec![None]);
    }

    #[test]
    fn two_findings_in_one_file_never_merge() {
        let kept = [
            derived("a.rs", "sql injection in the query builder"),
            derived("a.rs", "missing null check on user input"),
        ];
        let known: Vec<Known> = kept.iter().map(Known::from).collect();
        let new = vec![
            derived("a.rs", "sql injection in query builder"),
            derived("a.rs", "sql injection in the query builders"),
            derived("a.rs", "race condition in the cache"),
        ];
        let got = ids(&new, &known);
        assert_eq!(got[0], Some(known[0].id.to_string()));
        assert_eq!(got[1], None, "one known finding is never given twice");
        assert_eq!(got[2], None);
    }

    #[test]
    fn best_match_wins_regardless_of_order() {
        let kept = [derived("a.rs", "unchecked index into the buffer slice")];
        let known: Vec<Known> = kept.iter().map(Known::from).collect();
        let new = vec![
            derived("a.rs", "unchecked index into buffer"),
            derived("a.rs", "unchecked index into the buffer slices"),
        ];
        let got = ids(&new, &known);
        assert_eq!(got, vec![None, Some(known[0].id.to_string())]);
    }

    #[test]
    fn test_names_never_match_by_similarity_or_place() {
        let kept = [finding(
            IdSource::Test,
            "pkg::test_div_a",
            Some("t.py"),
            "pkg::test_div_a failed: assert 1 == 2",
        )];
        let known: Vec<Known> = kept.iter().map(Known::from).collect();
        let new = vec![
            finding(
                IdSource::Test,
                "pkg::test_div_b",
                Some("t.py"),
                "pkg::test_div_b failed: assert 1 == 2",
            ),
            derived("t.py", "test_div_a failed: assert 1 == 2"),
        ];
        assert_eq!(ids(&new, &known), vec![None, None]);
    }

    #[test]
    fn different_rules_never_match_by_similarity() {
        let mut a = derived("a.rs", "variable is never used here");
        a.rule = Some("R1".into());
        let mut b = derived("a.rs", "variable is never used there");
        b.rule = Some("R2".into());
        assert_eq!(ids(&[b], &[Known::from(&a)]), vec![None]);
    }

    #[test]
    fn line_distance_counts_from_the_nearest_ends() {
        assert_eq!(line_distance((Some(10), None), (Some(12), None)), Some(2));
        assert_eq!(
            line_distance((Some(10), Some(20)), (Some(15), None)),
            Some(0)
        );
        assert_eq!(
            line_distance((Some(30), None), (Some(10), Some(28))),
            Some(2)
        );
        assert_eq!(line_distance((None, None), (Some(1), None)), None);
    }
}
