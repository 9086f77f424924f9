//! Loop names: `[a-z0-9][a-z0-9._-]{0,63}`, and a valid git ref component
//! (the round snapshots live at `refs/referee/<loop>/round-<n>`): no `..`,
//! no `.lock` at the end. Pure.

use std::fmt;

use serde::Serialize;
use serde::de::{Deserialize, Deserializer, Error as _, Unexpected};

/// A valid loop name; safe to use as a file name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct LoopName(String);

/// A string that is no loop name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("loop name `{0}` is not valid: {RULE}")]
pub struct BadLoopName(pub String);

/// What a loop name must be, as error messages say it.
pub const RULE: &str = "it must match `[a-z0-9][a-z0-9._-]{0,63}`, \
     without `..` and not ending in `.lock` (it names git refs)";

impl LoopName {
    pub fn parse(text: &str) -> Result<LoopName, BadLoopName> {
        let mut chars = text.chars();
        let first_ok = chars
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
        let rest_ok = chars
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'));
        // What git refuses in a ref component (`git check-ref-format`); a
        // leading `.` and `@{` are already outside the characters allowed.
        let ref_ok = !text.contains("..") && !text.ends_with(".lock");
        if first_ok && rest_ok && ref_ok && text.len() <= 64 {
            Ok(LoopName(text.to_string()))
        } else {
            Err(BadLoopName(text.to_string()))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for LoopName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        LoopName::parse(&text).map_err(|_| {
            D::Error::invalid_value(
                Unexpected::Other(&format!("`{text}`")),
                &format!("a loop name: {RULE}").as_str(),
            )
        })
    }
}

impl fmt::Display for LoopName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for good in [
            "a",
            "0",
            "auth-fix",
            "v1.2_x",
            "a.lock.b",
            "a.",
            "a_lock",
            &"a".repeat(64),
        ] {
            assert!(LoopName::parse(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "A",
            "-a",
            ".a",
            "a/b",
            "a b",
            "é",
            "../x",
            "a.lock",
            "a..b",
            "a@{1}",
            &"a".repeat(65),
        ] {
            assert!(LoopName::parse(bad).is_err(), "{bad}");
        }
    }
}
