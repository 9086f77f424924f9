//! Finding identity: content fingerprints, derived ids, and matching a
//! round's findings against the known ones. Pure.
//!
//! Matching order, for each new finding (see docs/findings.md):
//! 1. the same id (explicit, SARIF-fingerprint, test name or derived);
//! 2. the same content fingerprint (file, rule, normalized title);
//! 3. only for reviewer findings (explicit or derived ids): the most similar
//!    known finding in the same file, token-set Jaccard over normalized titles
//!    at least [`SIMILARITY_THRESHOLD`], assigned greedily best-first and
//!    one-to-one, so two findings in one file never merge into one id.

use std::collections::{HashMap, HashSet};

use crate::digest::Framed;

use super::{Finding, IdSource};

/// Lowest title similarity that keeps an id across rewording.
pub const SIMILARITY_THRESHOLD: f64 = 0.6;

/// Tokens shared by more known findings of one file than this are too common
/// to pick candidates by (they still count in the score).
const MAX_POSTING: usize = 64;

/// Most candidates scored per new finding, bounding the work in huge files.
const MAX_CANDIDATES: usize = 256;

/// A finding the loop already knows, as matching needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Known {
    pub id: String,
    pub file: Option<String>,
    pub title: String,
    /// Its content fingerprint ([`content_fingerprint`]).
    pub fingerprint: String,
    pub rule: Option<String>,
}

impl From<&Finding> for Known {
    fn from(finding: &Finding) -> Self {
        Known {
            id: finding.id.clone(),
            file: finding.file.clone(),
            title: finding.title.clone(),
            fingerprint: finding.fingerprint.clone(),
            rule: finding.rule.clone(),
        }
    }
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

/// The id for a SARIF result that carries tool fingerprints.
pub fn sarif_id(rule: Option<&str>, fingerprints: &[(String, String)]) -> String {
    let mut framed = Framed::new("referee-sarif-fingerprint-v1");
    framed.field(rule.unwrap_or("").as_bytes());
    for (key, value) in fingerprints {
        framed.field(key.as_bytes());
        framed.field(value.as_bytes());
    }
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

fn jaccard(a: &HashSet<String>, b: &HashSet<String>) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 0.0;
    }
    let shared = a.intersection(b).count();
    let union = a.len() + b.len() - shared;
    shared as f64 / union as f64
}

/// For each new finding, the id of the known finding it is, if any.
///
/// One-to-one: no known id is given to two new findings. Runs in about
/// linear time: ids and fingerprints are hashed, and similarity only compares
/// findings of the same file, through a token index, bounded per finding.
pub fn match_findings(new: &[Finding], known: &[Known]) -> Vec<Option<String>> {
    let mut result: Vec<Option<usize>> = vec![None; new.len()];
    let mut taken = vec![false; known.len()];

    let mut by_id: HashMap<&str, usize> = HashMap::with_capacity(known.len());
    let mut by_fingerprint: HashMap<&str, Vec<usize>> = HashMap::with_capacity(known.len());
    for (index, finding) in known.iter().enumerate() {
        by_id.entry(finding.id.as_str()).or_insert(index);
        by_fingerprint
            .entry(finding.fingerprint.as_str())
            .or_default()
            .push(index);
    }

    for (slot, finding) in result.iter_mut().zip(new) {
        if let Some(&index) = by_id.get(finding.id.as_str())
            && !taken[index]
        {
            taken[index] = true;
            *slot = Some(index);
        }
    }
    for (slot, finding) in result.iter_mut().zip(new) {
        if slot.is_some() || !reworded_may_match(finding) {
            continue;
        }
        if let Some(indexes) = by_fingerprint.get(finding.fingerprint.as_str())
            && let Some(&index) = indexes.iter().find(|index| !taken[**index])
        {
            taken[index] = true;
            *slot = Some(index);
        }
    }
    similarity_pass(new, known, &mut result, &mut taken);

    result
        .into_iter()
        .map(|slot| slot.map(|index| known[index].id.clone()))
        .collect()
}

/// Test names and tool fingerprints are exact identities: a differently
/// named test is a different test, whatever its message says.
fn reworded_may_match(finding: &Finding) -> bool {
    matches!(finding.id_source, IdSource::Explicit | IdSource::Derived)
}

fn similarity_pass(
    new: &[Finding],
    known: &[Known],
    result: &mut [Option<usize>],
    taken: &mut [bool],
) {
    // Unmatched known findings with a file, grouped by file.
    let mut files: HashMap<&str, Vec<usize>> = HashMap::new();
    for (index, finding) in known.iter().enumerate() {
        if let (false, Some(file)) = (taken[index], finding.file.as_deref()) {
            files.entry(file).or_default().push(index);
        }
    }
    let mut wanted: HashMap<&str, Vec<usize>> = HashMap::new();
    for (index, finding) in new.iter().enumerate() {
        if result[index].is_some() || !reworded_may_match(finding) {
            continue;
        }
        if let Some(file) = finding.file.as_deref()
            && files.contains_key(file)
        {
            wanted.entry(file).or_default().push(index);
        }
    }

    let mut pairs: Vec<(f64, usize, usize)> = Vec::new();
    for (file, new_indexes) in wanted {
        let Some(known_indexes) = files.get(file) else {
            continue;
        };
        let known_tokens: Vec<HashSet<String>> = known_indexes
            .iter()
            .map(|index| tokens(&known[*index].title))
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
                if let (Some(a), Some(b)) = (&finding.rule, &other.rule)
                    && a != b
                {
                    continue;
                }
                let score = jaccard(&mine, &known_tokens[slot]);
                if score >= SIMILARITY_THRESHOLD {
                    pairs.push((score, new_index, known_index));
                }
            }
        }
    }

    // Best first; ties broken by position so the outcome is deterministic.
    pairs.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    for (_, new_index, known_index) in pairs {
        if result[new_index].is_none() && !taken[known_index] {
            taken[known_index] = true;
            result[new_index] = Some(known_index);
        }
    }
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
        }
    }

    fn derived(file: &str, title: &str) -> Finding {
        finding(IdSource::Derived, "", Some(file), title)
    }

    #[test]
    fn titles_normalize_without_numbers_quotes_or_space_runs() {
        assert_eq!(
            normalize_title("  Line 42: `foo`  is \"unused\"\t(3 times) "),
            "line : foo is unused ( times)"
        );
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
    fn exact_id_wins_then_fingerprint() {
        let known = vec![
            Known::from(&finding(
                IdSource::Explicit,
                "F1",
                Some("a.rs"),
                "first thing",
            )),
            Known::from(&derived("a.rs", "second thing at 3")),
        ];
        let new = vec![
            finding(IdSource::Explicit, "F1", Some("b.rs"), "totally different"),
            derived("a.rs", "Second thing at 99"),
            derived("a.rs", "a brand new problem"),
        ];
        assert_eq!(
            match_findings(&new, &known),
            vec![Some("F1".into()), Some(known[1].id.clone()), None]
        );
    }

    #[test]
    fn reworded_finding_keeps_its_id_within_the_same_file() {
        let old = derived("src/auth.rs", "expired tokens pass the auth check");
        let known = vec![Known::from(&old)];
        let new = vec![derived(
            "src/auth.rs",
            "Expired tokens still pass the auth check",
        )];
        assert_ne!(new[0].id, old.id);
        assert_eq!(match_findings(&new, &known), vec![Some(old.id.clone())]);
        // The same words in another file are another finding.
        let elsewhere = vec![derived(
            "src/other.rs",
            "expired tokens still pass the auth check",
        )];
        assert_eq!(match_findings(&elsewhere, &known), vec![None]);
    }

    #[test]
    fn two_findings_in_one_file_never_merge() {
        let known = vec![
            Known::from(&derived("a.rs", "sql injection in the query builder")),
            Known::from(&derived("a.rs", "missing null check on user input")),
        ];
        let new = vec![
            derived("a.rs", "sql injection in query builder"),
            derived("a.rs", "sql injection in the query builders"),
            derived("a.rs", "race condition in the cache"),
        ];
        let got = match_findings(&new, &known);
        assert_eq!(got[0], Some(known[0].id.clone()));
        assert_eq!(got[1], None, "one known finding is never given twice");
        assert_eq!(got[2], None);
    }

    #[test]
    fn best_match_wins_regardless_of_order() {
        let known = vec![Known::from(&derived(
            "a.rs",
            "unchecked index into the buffer slice",
        ))];
        let new = vec![
            derived("a.rs", "unchecked index into buffer"),
            derived("a.rs", "unchecked index into the buffer slices"),
        ];
        let got = match_findings(&new, &known);
        assert_eq!(got, vec![None, Some(known[0].id.clone())]);
    }

    #[test]
    fn test_names_never_match_by_similarity() {
        let known = vec![Known::from(&finding(
            IdSource::Test,
            "pkg::test_div_a",
            Some("t.py"),
            "pkg::test_div_a failed: assert 1 == 2",
        ))];
        let new = vec![finding(
            IdSource::Test,
            "pkg::test_div_b",
            Some("t.py"),
            "pkg::test_div_b failed: assert 1 == 2",
        )];
        assert_eq!(match_findings(&new, &known), vec![None]);
    }

    #[test]
    fn different_rules_never_match_by_similarity() {
        let mut a = derived("a.rs", "variable is never used here");
        a.rule = Some("R1".into());
        let mut b = derived("a.rs", "variable is never used there");
        b.rule = Some("R2".into());
        assert_eq!(match_findings(&[b], &[Known::from(&a)]), vec![None]);
    }
}
