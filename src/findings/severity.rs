//! The four-level severity ladder and its accepted aliases. Pure.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How much a finding matters, lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Nit,
    Should,
    Bug,
    Block,
}

/// Every accepted word, lowercase, with the level it means (SPEC §3).
const WORDS: &[(&str, Severity)] = &[
    ("nit", Severity::Nit),
    ("style", Severity::Nit),
    ("note", Severity::Nit),
    ("none", Severity::Nit),
    ("info", Severity::Nit),
    ("p3", Severity::Nit),
    ("low", Severity::Nit),
    ("should", Severity::Should),
    ("warning", Severity::Should),
    ("minor", Severity::Should),
    ("p2", Severity::Should),
    ("medium", Severity::Should),
    ("bug", Severity::Bug),
    ("error", Severity::Bug),
    ("major", Severity::Bug),
    ("failure", Severity::Bug),
    ("p1", Severity::Bug),
    ("high", Severity::Bug),
    ("block", Severity::Block),
    ("critical", Severity::Block),
    ("security", Severity::Block),
    ("blocker", Severity::Block),
    ("p0", Severity::Block),
];

/// A word that is no severity level or alias.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown severity `{word}`; accepted: {}", accepted_words())]
pub struct UnknownSeverity {
    pub word: String,
}

/// The accepted words, for error messages.
pub fn accepted_words() -> String {
    WORDS.iter().map(|(w, _)| *w).collect::<Vec<_>>().join(", ")
}

/// The accepted words nearest to a typo: an optimal string alignment
/// distance (a swap of two neighbours counts once) of at most 2, or 1 for a
/// word of three letters or fewer (else `[ok]` would suggest `p0`), and only
/// the nearest. Empty when nothing is that close.
pub fn suggestions(word: &str) -> Vec<&'static str> {
    let lower = word.trim().to_ascii_lowercase();
    let limit = if lower.chars().count() <= 3 { 1 } else { 2 };
    let scored: Vec<(usize, &'static str)> = WORDS
        .iter()
        .map(|(known, _)| (distance(&lower, known), *known))
        .filter(|(score, _)| (1..=limit).contains(score))
        .collect();
    let Some(best) = scored.iter().map(|(score, _)| *score).min() else {
        return Vec::new();
    };
    scored
        .into_iter()
        .filter(|(score, _)| *score == best)
        .map(|(_, known)| known)
        .collect()
}

/// Optimal string alignment distance between two short words.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // rows[i][j]: distance between a[..i] and b[..j].
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    if let Some(first) = rows.first_mut() {
        for (j, cell) in first.iter_mut().enumerate() {
            *cell = j;
        }
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Nit => "nit",
            Severity::Should => "should",
            Severity::Bug => "bug",
            Severity::Block => "block",
        }
    }
}

impl FromStr for Severity {
    type Err = UnknownSeverity;

    fn from_str(word: &str) -> Result<Self, Self::Err> {
        let lower = word.trim().to_ascii_lowercase();
        WORDS
            .iter()
            .find(|(w, _)| *w == lower)
            .map(|(_, level)| *level)
            .ok_or_else(|| UnknownSeverity {
                word: word.to_string(),
            })
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_alias_maps_as_the_spec_says() {
        let table = [
            ("nit style note none info P3 low", Severity::Nit),
            ("should warning minor P2 medium", Severity::Should),
            ("bug error major failure P1 high", Severity::Bug),
            ("block critical security blocker P0", Severity::Block),
        ];
        for (words, level) in table {
            for word in words.split(' ') {
                assert_eq!(word.parse::<Severity>(), Ok(level), "{word}");
                assert_eq!(word.to_uppercase().parse::<Severity>(), Ok(level), "{word}");
            }
        }
    }

    #[test]
    fn unknown_words_are_errors_naming_the_word() {
        let err = "urgent".parse::<Severity>().expect_err("an error");
        assert!(
            err.to_string()
                .starts_with("unknown severity `urgent`; accepted: nit, style")
        );
    }

    #[test]
    fn typos_suggest_the_nearest_words() {
        let table: [(&str, &[&str]); 9] = [
            ("bgu", &["bug"]),
            ("BGU", &["bug"]),
            ("nti", &["nit"]),
            ("shuold", &["should"]),
            ("critcal", &["critical"]),
            ("blokcer", &["blocker"]),
            ("P4", &["p3", "p2", "p1", "p0"]),
            ("ok", &[]),
            ("urgent", &[]),
        ];
        for (word, want) in table {
            assert_eq!(suggestions(word), want, "{word}");
        }
        assert_eq!(
            suggestions("bug"),
            Vec::<&str>::new(),
            "a known word is no typo"
        );
    }

    #[test]
    fn ladder_is_ordered() {
        assert!(Severity::Nit < Severity::Should);
        assert!(Severity::Should < Severity::Bug);
        assert!(Severity::Bug < Severity::Block);
    }
}
