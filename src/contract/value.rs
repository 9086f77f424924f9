//! Typed reads of one TOML table's fields, each failure naming the field, the
//! value and what is allowed. Pure.

use std::collections::BTreeMap;

use toml::{Table, Value};

use super::{Closure, ContractError, Timeout};
use crate::findings::Severity;

/// One table of the contract, read field by field.
pub(super) struct Fields<'a> {
    table: &'a Table,
    prefix: &'static str,
}

impl<'a> Fields<'a> {
    pub fn new(table: &'a Table, prefix: &'static str) -> Self {
        Fields { table, prefix }
    }

    fn path(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    /// Refuses any key not in `allowed`.
    pub fn only(&self, allowed: &[&str]) -> Result<(), ContractError> {
        for key in self.table.keys() {
            if !allowed.contains(&key.as_str()) {
                return Err(ContractError::Unknown {
                    field: self.path(key),
                    allowed: allowed.join(", "),
                });
            }
        }
        Ok(())
    }

    pub fn invalid(&self, key: &str, value: &Value, allowed: &str) -> ContractError {
        ContractError::Invalid {
            field: self.path(key),
            value: describe(value),
            allowed: allowed.to_string(),
        }
    }

    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.table.get(key)
    }

    pub fn required_str(&self, key: &str, allowed: &str) -> Result<String, ContractError> {
        match self.string(key)? {
            Some(s) => Ok(s),
            None => Err(ContractError::Missing {
                field: self.path(key),
                allowed: allowed.to_string(),
            }),
        }
    }

    pub fn string(&self, key: &str) -> Result<Option<String>, ContractError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.invalid(key, other, "a string")),
        }
    }

    /// A string that must not be blank.
    pub fn text(&self, key: &str) -> Result<Option<String>, ContractError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
            Some(other) => Err(self.invalid(key, other, "a non-empty string")),
        }
    }

    /// A path of a file inside the repository, relative to its top: the
    /// writer must not be able to point referee at `/etc/hostname` or
    /// `../elsewhere` through a file the contract names.
    pub fn repo_path(&self, key: &str) -> Result<Option<String>, ContractError> {
        let Some(path) = self.text(key)? else {
            return Ok(None);
        };
        let escapes = path.starts_with(['/', '\\', '~'])
            || path.get(1..3) == Some(":\\")
            || path.split(['/', '\\']).any(|part| part == "..");
        if escapes {
            return Err(self.invalid(
                key,
                &Value::String(path),
                "a file inside the repository, relative to its top (no `..`, not absolute)",
            ));
        }
        Ok(Some(path))
    }

    pub fn int(&self, key: &str, min: i64, max: i64) -> Result<Option<i64>, ContractError> {
        let allowed = if max == i64::MAX {
            format!("a whole number >= {min}")
        } else {
            format!("a whole number {min}..={max}")
        };
        match self.get(key) {
            None => Ok(None),
            Some(Value::Integer(n)) if (min..=max).contains(n) => Ok(Some(*n)),
            Some(other) => Err(self.invalid(key, other, &allowed)),
        }
    }

    pub fn positive_float(&self, key: &str) -> Result<Option<f64>, ContractError> {
        let (value, n) = match self.get(key) {
            None => return Ok(None),
            Some(value @ Value::Float(f)) => (value, *f),
            Some(value @ Value::Integer(i)) => (value, *i as f64),
            Some(other) => return Err(self.invalid(key, other, "a number > 0")),
        };
        if n.is_finite() && n > 0.0 {
            Ok(Some(n))
        } else {
            Err(self.invalid(key, value, "a number > 0"))
        }
    }

    pub fn strings(&self, key: &str) -> Result<Option<Vec<String>>, ContractError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| match item {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(ContractError::Invalid {
                        field: self.path(key),
                        value: format!("the item {}", describe(other)),
                        allowed: "a list of strings".into(),
                    }),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(other) => Err(self.invalid(key, other, "a list of strings")),
        }
    }

    /// An argv: a non-empty list of strings whose first item is not blank.
    pub fn argv(&self, key: &str) -> Result<Option<Vec<String>>, ContractError> {
        let Some(argv) = self.strings(key)? else {
            return Ok(None);
        };
        match argv.first() {
            Some(program) if !program.trim().is_empty() => Ok(Some(argv)),
            _ => Err(self.invalid(
                key,
                self.get(key).unwrap_or(&Value::Array(Vec::new())),
                "a non-empty list of strings (program, then its arguments)",
            )),
        }
    }

    pub fn globs(&self, key: &str) -> Result<Option<Vec<String>>, ContractError> {
        let Some(globs) = self.strings(key)? else {
            return Ok(None);
        };
        if globs.is_empty() {
            return Err(self.invalid(key, &Value::Array(Vec::new()), "a non-empty list of globs"));
        }
        for glob in &globs {
            if let Err(err) = globset::Glob::new(glob) {
                return Err(ContractError::Invalid {
                    field: self.path(key),
                    value: format!("`{glob}` ({})", err.kind()),
                    allowed: "a list of valid globs such as `src/**` or `*.md`".into(),
                });
            }
        }
        Ok(Some(globs))
    }

    pub fn severity(&self, key: &str) -> Result<Option<Severity>, ContractError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => s.parse::<Severity>().map(Some).map_err(|_| {
                self.invalid(
                    key,
                    &Value::String(s.clone()),
                    "one of nit, should, bug, block (or an alias)",
                )
            }),
            Some(other) => Err(self.invalid(key, other, "one of nit, should, bug, block")),
        }
    }

    pub fn closure(&self, key: &str) -> Result<Option<Closure>, ContractError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) if s == "absent" => Ok(Some(Closure::Absent)),
            Some(Value::String(s)) if s == "explicit" => Ok(Some(Closure::Explicit)),
            Some(other) => Err(self.invalid(key, other, "`absent` or `explicit`")),
        }
    }

    pub fn timeout(&self, key: &str) -> Result<Option<Timeout>, ContractError> {
        let allowed = "a duration such as \"90s\", \"30m\" or \"1h\" (1s to 24h)";
        match self.get(key) {
            None => Ok(None),
            Some(value @ Value::String(s)) => Timeout::parse(s)
                .map(Some)
                .ok_or_else(|| self.invalid(key, value, allowed)),
            Some(value @ Value::Integer(n)) => u64::try_from(*n)
                .ok()
                .and_then(Timeout::from_secs)
                .map(Some)
                .ok_or_else(|| self.invalid(key, value, allowed)),
            Some(other) => Err(self.invalid(key, other, allowed)),
        }
    }

    pub fn env(&self, key: &str) -> Result<Option<BTreeMap<String, String>>, ContractError> {
        let allowed = "a table of NAME = \"value\" strings";
        match self.get(key) {
            None => Ok(None),
            Some(Value::Table(table)) => {
                let mut env = BTreeMap::new();
                for (name, value) in table {
                    let valid_name = !name.is_empty()
                        && !name.contains('=')
                        && !name.contains('\0')
                        && !name.chars().next().is_some_and(|c| c.is_ascii_digit());
                    match value {
                        Value::String(s) if valid_name && !s.contains('\0') => {
                            env.insert(name.clone(), s.clone());
                        }
                        other => {
                            return Err(ContractError::Invalid {
                                field: format!("{}.{name}", self.path(key)),
                                value: describe(other),
                                allowed: allowed.into(),
                            });
                        }
                    }
                }
                Ok(Some(env))
            }
            Some(other) => Err(self.invalid(key, other, allowed)),
        }
    }

    pub fn table(&self, key: &str) -> Result<Option<&'a Table>, ContractError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Table(t)) => Ok(Some(t)),
            Some(other) => Err(self.invalid(key, other, "a table")),
        }
    }
}

/// A value as a message shows it: its TOML text, with its type when that helps.
fn describe(value: &Value) -> String {
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
