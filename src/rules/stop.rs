//! `Stop`: why a loop stopped, typed. One of the six rules, a contract guard
//! (`scope`, `budget`), a progress guard (`stalled`, `disputed`) or the
//! judge (`judge:<question>`). Stored as the same strings as before (the
//! ledger's `rule` column, `state.json`'s `rule`); everything that asks
//! "did it end done?" or "does a person take over?" asks this type. Pure.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Guard, Rule};

/// What was stopped on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    Rule(Rule),
    /// The patch touched a file outside the contract's scope.
    Scope,
    /// The loop's spend reached its budget.
    Budget,
    Progress(Guard),
    /// The judge said stop, on the question named.
    Judge(String),
    /// A name this version does not know (a ledger written by a newer
    /// referee): read as an escalation, shown as written.
    Unknown(String),
}

impl Stop {
    /// The stored name: `clean`, `round-cap`, `scope`, `stalled`,
    /// `judge:<question>`…
    pub fn name(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Stop::Rule(rule) => rule.as_str().into(),
            Stop::Scope => "scope".into(),
            Stop::Budget => "budget".into(),
            Stop::Progress(guard) => guard.as_str().into(),
            Stop::Judge(question) => format!("judge:{question}").into(),
            Stop::Unknown(name) => name.as_str().into(),
        }
    }

    /// Reads a stored name; never fails (see [`Stop::Unknown`]).
    pub fn parse(text: &str) -> Stop {
        if let Some(guard) = Guard::parse(text) {
            return Stop::Progress(guard);
        }
        if let Some(question) = text.strip_prefix("judge:") {
            return Stop::Judge(question.to_string());
        }
        if let Some(rule) = Rule::ALL.into_iter().find(|r| r.as_str() == text) {
            return Stop::Rule(rule);
        }
        match text {
            "scope" => Stop::Scope,
            "budget" => Stop::Budget,
            other => Stop::Unknown(other.to_string()),
        }
    }

    /// The loop ended done (exit 0): `clean` or `nit-round`.
    pub fn is_done(&self) -> bool {
        matches!(self, Stop::Rule(rule) if rule.is_done())
    }

    /// A person takes over (exit 20): every stop that is not done.
    pub fn hands_off(&self) -> bool {
        !self.is_done()
    }

    /// The rule is one of the six (not a guard or the judge).
    pub fn rule(&self) -> Option<Rule> {
        match self {
            Stop::Rule(rule) => Some(*rule),
            _ => None,
        }
    }
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl PartialEq<Rule> for Stop {
    fn eq(&self, rule: &Rule) -> bool {
        self.rule() == Some(*rule)
    }
}

impl Serialize for Stop {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

impl<'de> Deserialize<'de> for Stop {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Stop::parse(&String::deserialize(d)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stop_reads_back_from_its_name() {
        let rules = Rule::ALL.map(Stop::Rule);
        let all = rules.into_iter().chain([
            Stop::Scope,
            Stop::Budget,
            Stop::Progress(Guard::Stalled),
            Stop::Progress(Guard::Disputed),
            Stop::Judge("no-progress".into()),
            Stop::Unknown("from-the-future".into()),
        ]);
        for stop in all {
            assert_eq!(Stop::parse(&stop.name()), stop, "{stop}");
            let json = serde_json::to_string(&stop).unwrap();
            assert_eq!(json, format!("\"{stop}\""));
            assert_eq!(serde_json::from_str::<Stop>(&json).unwrap(), stop);
        }
    }

    #[test]
    fn only_clean_and_nit_round_are_done() {
        let done: Vec<String> = [
            "clean",
            "nit-round",
            "reopened",
            "flip-flop",
            "diff-growth",
            "round-cap",
            "scope",
            "budget",
            "stalled",
            "disputed",
            "judge:x",
            "whatever",
        ]
        .iter()
        .map(|name| Stop::parse(name))
        .filter(Stop::is_done)
        .map(|stop| stop.to_string())
        .collect();
        assert_eq!(done, ["clean", "nit-round"]);
        assert!(Stop::parse("judge:x").hands_off());
        assert!(Stop::parse("clean") == Rule::Clean);
    }
}
