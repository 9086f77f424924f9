//! Agent timeouts written as "90s", "30m", "1h30m" (or whole seconds). Pure.

use std::fmt;
use std::time::Duration;

use serde::de::{Deserialize, Deserializer};
use serde::{Serialize, Serializer};
use toml::Value;

use super::value::refuse;

/// A call's time limit: 1 second to 24 hours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeout(Duration);

const MAX_SECS: u64 = 24 * 3600;

impl Timeout {
    /// The default: 30 minutes.
    pub const DEFAULT: Timeout = Timeout(Duration::from_secs(30 * 60));
    /// The judge's default: it is one small call, so 2 minutes.
    pub const JUDGE_DEFAULT: Timeout = Timeout(Duration::from_secs(120));

    pub fn from_secs(secs: u64) -> Option<Timeout> {
        (1..=MAX_SECS)
            .contains(&secs)
            .then(|| Timeout(Duration::from_secs(secs)))
    }

    /// Reads `<n>h`, `<n>m`, `<n>s` parts in that order, such as `1h30m`.
    pub fn parse(text: &str) -> Option<Timeout> {
        let mut total: u64 = 0;
        let mut digits = String::new();
        let mut last_unit = 0u64;
        let mut any = false;
        for c in text.trim().chars() {
            if c.is_ascii_digit() {
                digits.push(c);
                continue;
            }
            let unit = match c {
                'h' => 3600,
                'm' => 60,
                's' => 1,
                _ => return None,
            };
            // Units must come largest first and only once: "30m1h" is a typo.
            if digits.is_empty() || (last_unit != 0 && unit >= last_unit) {
                return None;
            }
            let n: u64 = digits.parse().ok()?;
            total = total.checked_add(n.checked_mul(unit)?)?;
            digits.clear();
            last_unit = unit;
            any = true;
        }
        if !digits.is_empty() || !any {
            return None;
        }
        Timeout::from_secs(total)
    }

    pub fn as_duration(self) -> Duration {
        self.0
    }
}

impl fmt::Display for Timeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.0.as_secs();
        let (h, m, s) = (secs / 3600, secs % 3600 / 60, secs % 60);
        if h > 0 {
            write!(f, "{h}h")?;
        }
        if m > 0 {
            write!(f, "{m}m")?;
        }
        if s > 0 {
            write!(f, "{s}s")?;
        }
        Ok(())
    }
}

/// What a timeout may be, as error messages say it.
const ALLOWED: &str = "a duration such as \"90s\", \"30m\" or \"1h\" (1s to 24h)";

impl<'de> Deserialize<'de> for Timeout {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        let timeout = match &value {
            Value::String(s) => Timeout::parse(s),
            Value::Integer(n) => u64::try_from(*n).ok().and_then(Timeout::from_secs),
            _ => None,
        };
        timeout.ok_or_else(|| refuse(&value, ALLOWED))
    }
}

impl Serialize for Timeout {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints() {
        for (text, secs, shown) in [
            ("30m", 1800, "30m"),
            ("90s", 90, "1m30s"),
            ("1h30m", 5400, "1h30m"),
            ("24h", 86400, "24h"),
            ("1s", 1, "1s"),
        ] {
            let t = Timeout::parse(text).unwrap();
            assert_eq!(t.as_duration().as_secs(), secs, "{text}");
            assert_eq!(t.to_string(), shown, "{text}");
        }
    }

    #[test]
    fn refuses_nonsense() {
        for bad in [
            "",
            "30",
            "m",
            "0s",
            "25h",
            "30m1h",
            "1.5h",
            "-1s",
            "10 m",
            "99999999999999999999h",
        ] {
            assert_eq!(Timeout::parse(bad), None, "{bad}");
        }
    }
}
