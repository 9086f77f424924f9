//! Money: US dollars as a whole number of micro-dollars, so that costs add
//! exactly (SPEC §4.1 "Exact sums": $0.70 + $0.20 + $0.10 reaches a $1.00
//! budget, which binary floating point misses by 1e-16). Pure.
//!
//! Amounts are read from decimal text (`0.25`, `1`, `1e-3`); a digit past
//! the sixth decimal is rounded to the nearest micro-dollar, half a
//! micro-dollar rounding up (`0.0000005` is `$0.000001`). Agents print their
//! costs with more decimals than that (`0.01234567`), so a refusal would lose
//! a whole call's cost over a fraction of a micro-dollar. Negative, non-finite
//! and non-numeric values are refused, and so is anything above
//! [`Usd::MAX`].

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Micro-dollars in a dollar.
const MICROS: u64 = 1_000_000;

/// An amount of US dollars >= 0, to the micro-dollar.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Usd(u64);

/// Why a text is no amount of dollars.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("must be {}, not `{value}`", self.problem.allowed())]
pub struct UsdError {
    /// The value as it was given (cut at 40 characters).
    pub value: String,
    pub problem: Problem,
}

/// What is wrong with an amount.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Problem {
    /// Not a decimal number (`nan`, `inf`, `1,50`, `$1`).
    NotANumber,
    Negative,
    /// Above [`Usd::MAX`].
    TooLarge,
}

impl Problem {
    /// What is allowed instead, as "must be ..." says it.
    pub fn allowed(self) -> &'static str {
        match self {
            Problem::NotANumber | Problem::Negative => "a number >= 0",
            Problem::TooLarge => "at most 1000000000 (a billion US dollars)",
        }
    }
}

impl Usd {
    pub const ZERO: Usd = Usd(0);
    /// A billion dollars: no agent loop spends that, and a cap far above
    /// it is a typo.
    pub const MAX: Usd = Usd(1_000_000_000 * MICROS);

    /// `micros` micro-dollars.
    pub const fn from_micros(micros: u64) -> Usd {
        Usd(micros)
    }

    pub const fn micros(self) -> u64 {
        self.0
    }

    pub fn is_zero(self) -> bool {
        self.0 == 0
    }

    /// Reads decimal text: digits with an optional point and exponent
    /// (`0.7`, `.5`, `3`, `1.5e-3`); see the module's summary for rounding.
    pub fn parse(text: &str) -> Result<Usd, UsdError> {
        let refuse = |problem| UsdError {
            value: text.chars().take(40).collect(),
            problem,
        };
        let (negative, rest) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text.strip_prefix('+').unwrap_or(text)),
        };
        let (mantissa, exponent) = match rest.find(['e', 'E']) {
            Some(at) => (&rest[..at], Some(&rest[at + 1..])),
            None => (rest, None),
        };
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let digits_only = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if whole.is_empty() && fraction.is_empty() || !digits_only(whole) || !digits_only(fraction)
        {
            return Err(refuse(Problem::NotANumber));
        }
        let exponent: i64 = match exponent {
            None => 0,
            Some(e) => {
                let body = e.strip_prefix(['+', '-']).unwrap_or(e);
                if body.is_empty() || !digits_only(body) {
                    return Err(refuse(Problem::NotANumber));
                }
                // Past six digits the amount is 0 or far too large either way.
                let body = body.trim_start_matches('0');
                let size: i64 = if body.len() > 6 {
                    999_999
                } else {
                    body.parse().unwrap_or(0)
                };
                if e.starts_with('-') { -size } else { size }
            }
        };
        let digits: String = [whole, fraction].concat();
        let digits = digits.trim_start_matches('0');
        if digits.is_empty() {
            return Ok(Usd::ZERO);
        }
        if negative {
            return Err(refuse(Problem::Negative));
        }
        // The amount in micro-dollars is `digits` times 10^shift.
        let shift = exponent - fraction.len() as i64 + 6;
        let micros = if shift >= 0 {
            if digits.len() as i64 + shift > 20 {
                return Err(refuse(Problem::TooLarge));
            }
            let padded = format!("{digits}{}", "0".repeat(shift as usize));
            padded.parse::<u128>().ok()
        } else {
            let cut = -shift;
            if cut > digits.len() as i64 {
                Some(0)
            } else {
                let (kept, dropped) = digits.split_at(digits.len() - cut as usize);
                let up = dropped.as_bytes().first().is_some_and(|&d| d >= b'5');
                if kept.len() > 20 {
                    None
                } else if kept.is_empty() {
                    Some(u128::from(up))
                } else {
                    kept.parse::<u128>().ok().map(|k| k + u128::from(up))
                }
            }
        };
        match micros {
            Some(m) if m <= u128::from(Usd::MAX.0) => Ok(Usd(m as u64)),
            _ => Err(refuse(Problem::TooLarge)),
        }
    }

    /// A float as the decimal it was written as: its shortest decimal text
    /// (`0.7`, never 0.69999999999999996), read by [`Usd::parse`].
    pub fn from_f64(x: f64) -> Result<Usd, UsdError> {
        Usd::parse(&format!("{x}"))
    }

    /// A JSON number as an amount; `None` for anything else. serde_json
    /// keeps a number with a point as its nearest f64, which prints back as
    /// the text the agent wrote.
    pub fn from_json(value: &serde_json::Value) -> Option<Usd> {
        let n = value.as_number()?;
        match n.as_u64() {
            Some(whole) => Usd::parse(&whole.to_string()).ok(),
            None => Usd::from_f64(n.as_f64()?).ok(),
        }
    }

    pub fn saturating_add(self, other: Usd) -> Usd {
        Usd(self.0.saturating_add(other.0))
    }

    pub fn saturating_sub(self, other: Usd) -> Usd {
        Usd(self.0.saturating_sub(other.0))
    }

    /// Twice the amount, as far as [`Usd::MAX`] (a raised budget to suggest).
    pub fn doubled(self) -> Usd {
        Usd(self.0.saturating_mul(2).min(Usd::MAX.0))
    }

    /// The amount as the ledger, CSV and JSON write it: the shortest decimal
    /// (`1`, `0.7`, `0.000123`), the text a float of it printed, so that
    /// rows written when costs were floats read and hash the same.
    pub fn plain(self) -> String {
        let (whole, fraction) = (self.0 / MICROS, self.0 % MICROS);
        if fraction == 0 {
            return whole.to_string();
        }
        let digits = format!("{fraction:06}");
        format!("{whole}.{}", digits.trim_end_matches('0'))
    }

    /// The amount with at least two decimals and every sub-cent digit
    /// (`1.00`, `0.70`, `0.000123`): what a person reads, and what
    /// `claude --max-budget-usd` is given.
    pub fn decimal(self) -> String {
        let (whole, fraction) = (self.0 / MICROS, self.0 % MICROS);
        let digits = format!("{fraction:06}");
        let kept = digits.trim_end_matches('0');
        let kept = if kept.len() < 2 { &digits[..2] } else { kept };
        format!("{whole}.{kept}")
    }

    /// The nearest float, for a JSON number.
    pub fn to_f64(self) -> f64 {
        self.plain().parse().unwrap_or(f64::MAX)
    }
}

/// `$1.00`, `$0.70`, `$0.000123`.
impl fmt::Display for Usd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "${}", self.decimal())
    }
}

impl std::str::FromStr for Usd {
    type Err = UsdError;

    fn from_str(text: &str) -> Result<Usd, UsdError> {
        Usd::parse(text)
    }
}

/// Saturating, like every sum of spend.
impl std::iter::Sum for Usd {
    fn sum<I: Iterator<Item = Usd>>(iter: I) -> Usd {
        iter.fold(Usd::ZERO, Usd::saturating_add)
    }
}

/// A JSON number, as costs were written when they were floats.
impl Serialize for Usd {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.to_f64())
    }
}

impl<'de> Deserialize<'de> for Usd {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Usd, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        Usd::from_json(&value).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "must be {}, not `{value}`",
                Problem::NotANumber.allowed()
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_table() {
        let ok = [
            ("0", 0),
            ("0.1", 100_000),
            ("0.7", 700_000),
            ("1", 1_000_000),
            ("1.00", 1_000_000),
            ("1.000001", 1_000_001),
            ("0.000123", 123),
            (".5", 500_000),
            ("5.", 5_000_000),
            ("+2", 2_000_000),
            ("-0", 0),
            ("-0.0", 0),
            // Past six decimals: the nearest micro-dollar, half rounds up.
            ("0.0000005", 1),
            ("0.00000049", 0),
            ("0.0000004999", 0),
            ("0.01234567", 12_346),
            ("1.9999995", 2_000_000),
            ("0.0000001", 0),
            // Exponent form, as JSON writers print small numbers.
            ("1e3", 1_000_000_000),
            ("1E3", 1_000_000_000),
            ("1.5e-3", 1_500),
            ("1e-7", 0),
            ("5e-7", 1),
            ("2e+2", 200_000_000),
            ("1e-99999999", 0),
            ("0e99999999", 0),
            ("1000000000", 1_000_000_000_000_000),
            ("1000000000.000000", 1_000_000_000_000_000),
            ("000000000000000000000000000001", 1_000_000),
        ];
        for (text, micros) in ok {
            assert_eq!(Usd::parse(text), Ok(Usd(micros)), "{text}");
        }
        let refused = [
            ("-1", Problem::Negative),
            ("-0.000001", Problem::Negative),
            ("nan", Problem::NotANumber),
            ("NaN", Problem::NotANumber),
            ("inf", Problem::NotANumber),
            ("-inf", Problem::NotANumber),
            ("", Problem::NotANumber),
            (".", Problem::NotANumber),
            ("1.2.3", Problem::NotANumber),
            ("1,50", Problem::NotANumber),
            ("$1", Problem::NotANumber),
            (" 1", Problem::NotANumber),
            ("1e", Problem::NotANumber),
            ("e3", Problem::NotANumber),
            ("1e3.5", Problem::NotANumber),
            ("0x10", Problem::NotANumber),
            ("1000000000.000001", Problem::TooLarge),
            ("1e10", Problem::TooLarge),
            ("1e99999999", Problem::TooLarge),
            ("18446744073709551616", Problem::TooLarge),
            (&"9".repeat(400), Problem::TooLarge),
        ];
        for (text, problem) in refused {
            assert_eq!(
                Usd::parse(text).map_err(|e| e.problem),
                Err(problem),
                "{text}"
            );
        }
    }

    #[test]
    fn refusals_name_the_value() {
        assert_eq!(
            Usd::parse("-1").unwrap_err().to_string(),
            "must be a number >= 0, not `-1`"
        );
        assert_eq!(
            Usd::parse("1e12").unwrap_err().to_string(),
            "must be at most 1000000000 (a billion US dollars), not `1e12`"
        );
        assert_eq!(Usd::from_f64(f64::NAN).unwrap_err().value, "NaN");
        assert_eq!(
            Usd::from_f64(f64::INFINITY).unwrap_err().problem,
            Problem::NotANumber
        );
        assert_eq!(Usd::parse(&"1".repeat(100)).unwrap_err().value.len(), 40);
    }

    #[test]
    fn floats_read_as_the_decimal_they_print() {
        assert_eq!(Usd::from_f64(0.7), Ok(Usd(700_000)));
        assert_eq!(Usd::from_f64(0.1 + 0.2), Ok(Usd(300_000)));
        assert_eq!(Usd::from_f64(1e-6), Ok(Usd(1)));
        assert_eq!(Usd::from_f64(0.0123456789), Ok(Usd(12_346)));
        assert_eq!(Usd::from_f64(1e300).unwrap_err().problem, Problem::TooLarge);
        let json: serde_json::Value =
            serde_json::from_str(r#"[0.7, 3, 1.5e-5, -0.1, "0.1", null]"#).unwrap();
        let read: Vec<Option<Usd>> = json
            .as_array()
            .unwrap()
            .iter()
            .map(Usd::from_json)
            .collect();
        assert_eq!(
            read,
            [
                Some(Usd(700_000)),
                Some(Usd(3_000_000)),
                Some(Usd(15)),
                None,
                None,
                None
            ]
        );
    }

    #[test]
    fn sums_are_exact_and_saturate() {
        let costs = ["0.7", "0.2", "0.1"].map(|c| Usd::parse(c).unwrap());
        let total: Usd = costs.into_iter().sum();
        assert_eq!(total, Usd::parse("1.00").unwrap());
        assert!(total >= Usd::parse("1").unwrap());
        let floats: f64 = [0.7, 0.2, 0.1].into_iter().sum();
        assert!(floats < 1.0, "the float sum this type replaces falls short");
        assert_eq!(Usd(u64::MAX).saturating_add(Usd(1)), Usd(u64::MAX));
        assert_eq!(
            [Usd(u64::MAX), Usd(5)].into_iter().sum::<Usd>(),
            Usd(u64::MAX)
        );
        assert_eq!(Usd(3).saturating_sub(Usd(5)), Usd::ZERO);
        assert_eq!(Usd::MAX.doubled(), Usd::MAX);
        assert_eq!(Usd(250_000).doubled(), Usd(500_000));
    }

    #[test]
    fn display_plain_and_decimal() {
        let table = [
            (0, "$0.00", "0", "0.00"),
            (1_000_000, "$1.00", "1", "1.00"),
            (700_000, "$0.70", "0.7", "0.70"),
            (250_000, "$0.25", "0.25", "0.25"),
            (123, "$0.000123", "0.000123", "0.000123"),
            (1, "$0.000001", "0.000001", "0.000001"),
            (1_234_500, "$1.2345", "1.2345", "1.2345"),
            (2_550_000, "$2.55", "2.55", "2.55"),
            (
                1_000_000_000_000_000,
                "$1000000000.00",
                "1000000000",
                "1000000000.00",
            ),
        ];
        for (micros, shown, plain, decimal) in table {
            let usd = Usd(micros);
            assert_eq!(usd.to_string(), shown);
            assert_eq!(usd.plain(), plain);
            assert_eq!(usd.decimal(), decimal);
            assert_eq!(Usd::parse(&usd.plain()), Ok(usd), "plain text reads back");
        }
    }

    #[test]
    fn plain_is_what_a_float_of_the_amount_printed() {
        // Rows written when costs were floats hold `format!("{}", f)` of the
        // cost rounded to the micro-dollar; the same text must come back.
        for micros in (0..3_000_000u64)
            .step_by(7919)
            .chain([1, 10, 999_999, 123_456_789_012])
        {
            let float = (micros as f64 / 1e6 * 1e6).round() / 1e6;
            assert_eq!(Usd(micros).plain(), float.to_string(), "{micros}");
            assert_eq!(Usd(micros).to_f64(), float);
        }
    }

    #[test]
    fn serde_writes_a_number_and_reads_it_back() {
        let json = serde_json::to_string(&[Usd(700_000), Usd(1), Usd(1_000_000)]).unwrap();
        assert_eq!(json, "[0.7,1e-6,1.0]");
        let back: Vec<Usd> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, [Usd(700_000), Usd(1), Usd(1_000_000)]);
        assert!(serde_json::from_str::<Usd>("-1").is_err());
    }
}
