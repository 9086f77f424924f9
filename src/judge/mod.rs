//! The judge's pure core (SPEC §7): the questions, the request sent to the
//! judge, the validation every answer passes before it applies, and the
//! routing of a valid judgement. No file system, processes or clock: the
//! engines that ask a judge (replay, command) live above this and hand their
//! bytes in.

pub mod engine;
pub mod questions;
pub mod request;
pub mod route;
pub mod validate;

pub use questions::{Question, default_questions, questions_from_json, same_problem};
pub use request::{Request, State, StateFinding, StateRound, answers_schema, build_request};
pub use route::{Route, route};
pub use validate::{Judgement, Validation, validate};

/// Why a question set or a request could not be made. Judge answers never
/// produce this: an answer that does not validate is an outcome the loop
/// records ([`Validation::Invalid`]), not an error that stops it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JudgeError {
    #[error("question set field `{field}` is required ({allowed})")]
    Missing { field: String, allowed: String },
    #[error("question set field `{field}` is unknown; allowed here: {allowed}")]
    Unknown { field: String, allowed: String },
    #[error("question set field `{field}`: must be {allowed}, not {value}")]
    Invalid {
        field: String,
        value: String,
        allowed: String,
    },
    #[error("question set field `{field}`: `{id}` is already used by `{first}`")]
    Duplicate {
        field: String,
        id: String,
        first: String,
    },
    /// serde reports encoding failures generically; the request holds only
    /// strings and numbers, so this is a bug to report, never bad input.
    #[error("the judge request could not be encoded: {0}")]
    Encode(String),
}

/// A computed number as people read it: at most six decimals, no trailing
/// zeros, so `0.7 + 0.1 + 0.1` shows as `0.9`, not `0.8999999999999999`.
pub(crate) fn show_number(n: f64) -> String {
    if !n.is_finite() {
        return n.to_string();
    }
    let text = format!("{n:.6}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    match text {
        "-0" | "" => "0".to_string(),
        _ => text.to_string(),
    }
}

/// A JSON value as it appears in a one-line message: compact JSON (strings
/// quoted, newlines escaped) and cut short, since it may come from a model.
pub(crate) fn show_value(value: &serde_json::Value) -> String {
    const MAX: usize = 60;
    let text = value.to_string();
    if text.chars().count() <= MAX {
        return text;
    }
    let cut: String = text.chars().take(MAX).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_show_rounded_and_trimmed() {
        for (n, shown) in [
            (0.7 + 0.1 + 0.1, "0.9"),
            (1.0, "1"),
            (0.0, "0"),
            (-0.0, "0"),
            (0.125, "0.125"),
            (1.0 / 3.0, "0.333333"),
            (-0.5, "-0.5"),
            (f64::NAN, "NaN"),
        ] {
            assert_eq!(show_number(n), shown, "{n}");
        }
    }

    #[test]
    fn values_show_as_one_short_line() {
        assert_eq!(show_value(&json!("a\nb")), r#""a\nb""#);
        assert_eq!(show_value(&json!(null)), "null");
        let long = show_value(&json!("x".repeat(100)));
        assert_eq!(long.chars().count(), 61);
        assert!(long.ends_with('…'));
    }
}
