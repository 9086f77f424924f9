//! The contract's validating value types: each reads one TOML value through
//! serde and refuses it saying what is allowed. Pure.
//!
//! They read the value as a `toml::Value` first, so that the refusal can
//! depend on what was written (a string that is no severity, or no string at
//! all) and show it as written.

use std::collections::BTreeMap;

use serde::de::{self, Deserialize, Deserializer, Unexpected};
use toml::Value;

use super::MAX_ROUNDS_LIMIT;
use crate::findings::Severity;
use crate::money::{Problem, Usd};

/// "must be `allowed`, not `value`", the value shown as the file has it.
pub(super) fn refuse<E: de::Error>(value: &Value, allowed: &str) -> E {
    refuse_shown(&describe(value), allowed)
}

/// "must be `allowed`, not `shown`".
pub(super) fn refuse_shown<E: de::Error>(shown: &str, allowed: &str) -> E {
    E::invalid_value(Unexpected::Other(shown), &allowed)
}

/// A value as a message shows it: its TOML text, with its type when that helps.
pub(super) fn describe(value: &Value) -> String {
    let text = match value {
        Value::Table(_) => return "a table".to_string(),
        Value::Array(items) if items.len() > 8 => {
            return format!("a list of {} items", items.len());
        }
        other => other.to_string(),
    };
    let text: String = text.chars().take(120).collect();
    match value {
        Value::String(_) => format!("the string `{text}`"),
        Value::Boolean(_) => format!("the boolean `{text}`"),
        Value::Float(_) => format!("the number `{text}`"),
        Value::Datetime(_) => format!("the date `{text}`"),
        _ => format!("`{text}`"),
    }
}

/// Reads a field through `T`, the type that checks it, and keeps the plain
/// value: `#[serde(deserialize_with = "value::checked::<Floor, _, _>")]`.
pub(super) fn checked<'de, T, U, D>(d: D) -> Result<U, D::Error>
where
    T: Deserialize<'de> + Into<U>,
    D: Deserializer<'de>,
{
    T::deserialize(d).map(Into::into)
}

/// [`checked`] for a field that may be left out.
pub(super) fn checked_some<'de, T, U, D>(d: D) -> Result<Option<U>, D::Error>
where
    T: Deserialize<'de> + Into<U>,
    D: Deserializer<'de>,
{
    T::deserialize(d).map(|t| Some(t.into()))
}

/// `max_rounds`: 1 to [`MAX_ROUNDS_LIMIT`].
pub(super) type Rounds = Bounded<1, { MAX_ROUNDS_LIMIT as i64 }>;

impl From<Rounds> for u32 {
    fn from(n: Rounds) -> u32 {
        n.0 as u32
    }
}

/// `budget.tokens`: 1 or more.
pub(super) type Tokens = Bounded<1, { i64::MAX }>;

impl From<Tokens> for u64 {
    fn from(n: Tokens) -> u64 {
        n.0 as u64
    }
}

/// A whole number in `MIN..=MAX` (`MAX = i64::MAX` for no upper bound).
#[derive(Debug, Clone, Copy)]
pub(super) struct Bounded<const MIN: i64, const MAX: i64>(pub i64);

impl<'de, const MIN: i64, const MAX: i64> Deserialize<'de> for Bounded<MIN, MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Integer(n) if (MIN..=MAX).contains(&n) => Ok(Bounded(n)),
            other if MAX == i64::MAX => Err(refuse(&other, &format!("a whole number >= {MIN}"))),
            other => Err(refuse(&other, &format!("a whole number {MIN}..={MAX}"))),
        }
    }
}

impl<const MIN: i64, const MAX: i64> Bounded<MIN, MAX> {
    pub fn toml(self) -> Value {
        Value::Integer(self.0)
    }
}

/// `budget.usd`: an amount of dollars > 0, written with or without a
/// decimal point, to the micro-dollar (see [`Usd::parse`] for rounding).
#[derive(Debug, Clone, Copy)]
pub(super) struct Dollars(pub Usd);

impl<'de> Deserialize<'de> for Dollars {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        let read = match value {
            // TOML keeps a float as f64; its shortest text is what was written.
            Value::Float(f) => Usd::from_f64(f),
            Value::Integer(i) => Usd::parse(&i.to_string()),
            _ => return Err(refuse(&value, "a number > 0")),
        };
        match read {
            Ok(usd) if !usd.is_zero() => Ok(Dollars(usd)),
            Ok(_) if matches!(value, Value::Float(f) if f > 0.0) => {
                Err(refuse(&value, "at least 0.000001 (a micro-dollar)"))
            }
            Err(e) if e.problem == Problem::TooLarge => Err(refuse(&value, e.problem.allowed())),
            _ => Err(refuse(&value, "a number > 0")),
        }
    }
}

impl From<Dollars> for Usd {
    fn from(n: Dollars) -> Usd {
        n.0
    }
}

/// A string that is not blank.
#[derive(Debug, Clone)]
pub(super) struct Text(pub String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) if !s.trim().is_empty() => Ok(Text(s)),
            other => Err(refuse(&other, "a non-empty string")),
        }
    }
}

impl Text {
    pub fn toml(&self) -> Value {
        Value::String(self.0.clone())
    }
}

/// A git revision: a string that is not blank.
#[derive(Debug, Clone)]
pub(super) struct Revision(pub String);

impl<'de> Deserialize<'de> for Revision {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        match value {
            Value::String(s) if !s.trim().is_empty() => Ok(Revision(s)),
            Value::String(_) => Err(refuse(&value, "a git revision")),
            other => Err(refuse(&other, "a string")),
        }
    }
}

impl From<Revision> for String {
    fn from(r: Revision) -> String {
        r.0
    }
}

/// A path of a file inside the repository, relative to its top: the writer
/// must not be able to point referee at `/etc/hostname` or `../elsewhere`
/// through a file the contract names.
#[derive(Debug, Clone)]
pub(super) struct RepoPath(pub String);

impl<'de> Deserialize<'de> for RepoPath {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Text(path) = Text::deserialize(d)?;
        let escapes = path.starts_with(['/', '\\', '~'])
            || path.get(1..3) == Some(":\\")
            || path.split(['/', '\\']).any(|part| part == "..");
        if escapes {
            return Err(refuse(
                &Value::String(path),
                "a file inside the repository, relative to its top (no `..`, not absolute)",
            ));
        }
        Ok(RepoPath(path))
    }
}

impl RepoPath {
    pub fn toml(&self) -> Value {
        Value::String(self.0.clone())
    }
}

/// A folder inside the repository, relative to its top.
#[derive(Debug, Clone)]
/// A panel reviewer's `name`: shown in the ledger's evidence, status and
/// the hand-off, and part of its evidence files' names: lowercase letters,
/// digits, `.`, `_` and `-`, starting with a letter or digit, at most 32.
pub(super) struct MemberName(pub String);

impl MemberName {
    pub(super) const SHAPE: &'static str = "a name of lowercase letters, digits, `.`, `_` and `-`, starting with a letter or digit, at most 32 long";

    /// Whether `text` is a valid member name.
    pub fn valid(text: &str) -> bool {
        let mut chars = text.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            && text.len() <= 32
            && chars.all(|c| {
                c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-')
            })
    }
}

impl<'de> Deserialize<'de> for MemberName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) if MemberName::valid(&s) => Ok(MemberName(s)),
            other => Err(refuse(&other, MemberName::SHAPE)),
        }
    }
}

pub(super) struct RepoFolder(pub String);

impl<'de> Deserialize<'de> for RepoFolder {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Text(cwd) = Text::deserialize(d)?;
        if cwd.starts_with('/') || cwd.split(['/', '\\']).any(|p| p == "..") {
            return Err(refuse(
                &Value::String(cwd),
                "a folder inside the repository, relative to its top (no `..`, not absolute)",
            ));
        }
        Ok(RepoFolder(cwd))
    }
}

/// A list of strings.
#[derive(Debug, Clone)]
pub(super) struct Strings(pub Vec<String>);

impl<'de> Deserialize<'de> for Strings {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        strings(Value::deserialize(d)?).map(Strings)
    }
}

impl Strings {
    pub fn toml(&self) -> Value {
        strings_value(&self.0)
    }
}

pub(super) fn strings<E: de::Error>(value: Value) -> Result<Vec<String>, E> {
    let allowed = "a list of strings";
    let Value::Array(items) = value else {
        return Err(refuse(&value, allowed));
    };
    items
        .into_iter()
        .map(|item| match item {
            Value::String(s) => Ok(s),
            other => Err(refuse_shown(
                &format!("the item {}", describe(&other)),
                allowed,
            )),
        })
        .collect()
}

fn strings_value(items: &[String]) -> Value {
    Value::Array(items.iter().cloned().map(Value::String).collect())
}

/// An argv: a non-empty list of strings whose first item is not blank.
#[derive(Debug, Clone)]
pub(super) struct Argv(pub Vec<String>);

impl<'de> Deserialize<'de> for Argv {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Strings(argv) = Strings::deserialize(d)?;
        match argv.first() {
            Some(program) if !program.trim().is_empty() => Ok(Argv(argv)),
            _ => Err(refuse(
                &strings_value(&argv),
                "a non-empty list of strings (program, then its arguments)",
            )),
        }
    }
}

impl Argv {
    pub fn toml(&self) -> Value {
        strings_value(&self.0)
    }
}

/// A non-empty list of valid globs.
#[derive(Debug, Clone)]
pub(super) struct Globs(pub Vec<String>);

impl<'de> Deserialize<'de> for Globs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Strings(globs) = Strings::deserialize(d)?;
        if globs.is_empty() {
            return Err(refuse(
                &Value::Array(Vec::new()),
                "a non-empty list of globs",
            ));
        }
        for glob in &globs {
            if let Err(err) = globset::Glob::new(glob) {
                return Err(refuse_shown(
                    &format!("`{glob}` ({})", err.kind()),
                    "a list of valid globs such as `src/**` or `*.md`",
                ));
            }
        }
        Ok(Globs(globs))
    }
}

impl From<Globs> for Vec<String> {
    fn from(globs: Globs) -> Vec<String> {
        globs.0
    }
}

/// `severity_floor`: a severity or one of its aliases.
#[derive(Debug, Clone, Copy)]
pub(super) struct Floor(pub Severity);

impl<'de> Deserialize<'de> for Floor {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) => s.parse().map(Floor).map_err(|_| {
                refuse(
                    &Value::String(s),
                    "one of nit, should, bug, block (or an alias)",
                )
            }),
            other => Err(refuse(&other, "one of nit, should, bug, block")),
        }
    }
}

impl From<Floor> for Severity {
    fn from(floor: Floor) -> Severity {
        floor.0
    }
}

/// An agent's environment: `NAME = "value"` strings.
#[derive(Debug, Clone, Default)]
pub(super) struct Env(pub BTreeMap<String, String>);

const ENV_ALLOWED: &str = "a table of NAME = \"value\" strings";

impl<'de> Deserialize<'de> for Env {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> de::Visitor<'de> for Entries {
            type Value = Env;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(ENV_ALLOWED)
            }
            fn visit_map<M: de::MapAccess<'de>>(self, mut map: M) -> Result<Env, M::Error> {
                let mut env = BTreeMap::new();
                while let Some(name) = map.next_key::<String>()? {
                    // Read through a seed, so that a refusal is raised under
                    // the variable's own key: `writer.env.NAME`.
                    let value = map.next_value_seed(Variable { name: &name })?;
                    env.insert(name, value);
                }
                Ok(Env(env))
            }
        }
        d.deserialize_map(Entries)
    }
}

struct Variable<'a> {
    name: &'a str,
}

impl<'de> de::DeserializeSeed<'de> for Variable<'_> {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        let name = self.name;
        let valid_name = !name.is_empty()
            && !name.contains('=')
            && !name.contains('\0')
            && !name.chars().next().is_some_and(|c| c.is_ascii_digit());
        match Value::deserialize(d)? {
            Value::String(s) if valid_name && !s.contains('\0') => Ok(s),
            other => Err(refuse(&other, ENV_ALLOWED)),
        }
    }
}
