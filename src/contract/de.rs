//! A serde `Deserializer` over a parsed TOML table whose errors keep their
//! structure: the dotted path of the field, the value as written and what is
//! allowed there. `toml`'s own errors flatten all three into one message
//! string; `serde_path_to_error` would add the path but not the rest, and a
//! contract error must name all three (docs/contract.md). Pure.

use std::fmt;

use serde::de::{self, DeserializeSeed, Expected, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use toml::Value;

use super::ContractError;
use super::value::describe;

/// A value of the contract refused while it was read.
#[derive(Debug, Clone)]
pub(super) struct FieldError {
    /// The keys from the top of the contract down to the field, outermost first.
    path: Vec<String>,
    problem: Problem,
}

#[derive(Debug, Clone)]
enum Problem {
    /// `value` is `None` until the table that holds the field fills it in.
    Invalid {
        value: Option<String>,
        allowed: String,
    },
    Unknown {
        allowed: String,
    },
    Missing,
}

impl FieldError {
    fn invalid(value: Option<String>, allowed: &dyn Expected) -> FieldError {
        FieldError {
            path: Vec::new(),
            problem: Problem::Invalid {
                value,
                allowed: allowed.to_string(),
            },
        }
    }

    /// The error as raised under `key`, whose value was `value`.
    fn under(mut self, key: &str, value: &Value) -> FieldError {
        self.path.insert(0, key.to_string());
        if let Problem::Invalid {
            value: shown @ None,
            ..
        } = &mut self.problem
        {
            *shown = Some(describe(value));
        }
        self
    }
}

impl From<FieldError> for ContractError {
    fn from(err: FieldError) -> ContractError {
        // `reviewers[1].preset`: an index follows its array without a dot.
        let mut field = String::new();
        for part in &err.path {
            if !field.is_empty() && !part.starts_with('[') {
                field.push('.');
            }
            field.push_str(part);
        }
        match err.problem {
            Problem::Invalid { value, allowed } => ContractError::Invalid {
                field,
                // Only the top table has no holder, and it is always a table.
                value: value.unwrap_or_else(|| "a table".to_string()),
                allowed,
            },
            Problem::Unknown { allowed } => ContractError::Unknown { field, allowed },
            Problem::Missing => ContractError::Missing {
                field,
                allowed: "see `referee docs contract`".to_string(),
            },
        }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        ContractError::from(self.clone()).fmt(f)
    }
}

impl std::error::Error for FieldError {}

/// The contract's types raise their refusals through these: a value is shown
/// as the type wrote it when given as `Unexpected::Other`, else as written
/// in the file (filled in by the table that holds it).
impl de::Error for FieldError {
    fn custom<T: fmt::Display>(msg: T) -> FieldError {
        FieldError::invalid(None, &msg.to_string().as_str())
    }

    fn invalid_type(_: de::Unexpected<'_>, allowed: &dyn Expected) -> FieldError {
        FieldError::invalid(None, allowed)
    }

    fn invalid_value(unexpected: de::Unexpected<'_>, allowed: &dyn Expected) -> FieldError {
        let shown = match unexpected {
            de::Unexpected::Other(shown) => Some(shown.to_string()),
            _ => None,
        };
        FieldError::invalid(shown, allowed)
    }

    fn invalid_length(_: usize, allowed: &dyn Expected) -> FieldError {
        FieldError::invalid(None, allowed)
    }

    fn unknown_field(field: &str, allowed: &'static [&'static str]) -> FieldError {
        FieldError {
            path: vec![field.to_string()],
            problem: Problem::Unknown {
                allowed: allowed.join(", "),
            },
        }
    }

    fn missing_field(field: &'static str) -> FieldError {
        FieldError {
            path: vec![field.to_string()],
            problem: Problem::Missing,
        }
    }
}

/// One TOML value, handed to serde the way `toml` hands it (a date included).
pub(super) struct ValueDe(pub Value);

impl<'de> de::Deserializer<'de> for ValueDe {
    type Error = FieldError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, FieldError> {
        match self.0 {
            Value::String(s) => visitor.visit_string(s),
            Value::Integer(n) => visitor.visit_i64(n),
            Value::Float(n) => visitor.visit_f64(n),
            Value::Boolean(b) => visitor.visit_bool(b),
            Value::Datetime(d) => visitor.visit_map(toml_datetime::de::DatetimeDeserializer::<
                FieldError,
            >::new(d)),
            Value::Array(items) => visitor.visit_seq(Items(items.into_iter().enumerate())),
            Value::Table(table) => visitor.visit_map(Entries {
                entries: table.into_iter(),
                pending: None,
            }),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, FieldError> {
        // TOML has no null: a key that is there holds a value.
        visitor.visit_some(self)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, FieldError> {
        // Not through `deserialize_any`: a date comes as a map there.
        match self.0 {
            Value::Table(table) => visitor.visit_map(Entries {
                entries: table.into_iter(),
                pending: None,
            }),
            _ => Err(FieldError::invalid(None, &visitor)),
        }
    }

    /// Refuses a key the struct does not have before reading any value, so
    /// that a misspelt key is named rather than a value it happens to hold.
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, FieldError> {
        let Value::Table(table) = self.0 else {
            return Err(FieldError::invalid(None, &"a table"));
        };
        if let Some(key) = table.keys().find(|k| !fields.contains(&k.as_str())) {
            return Err(de::Error::unknown_field(key, fields));
        }
        visitor.visit_map(Entries {
            entries: table.into_iter(),
            pending: None,
        })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple
        tuple_struct enum identifier ignored_any
    }
}

/// An array's items; an error raised by one gets its index, `[i]`, put in
/// front of its path.
struct Items(std::iter::Enumerate<std::vec::IntoIter<Value>>);

impl<'de> SeqAccess<'de> for Items {
    type Error = FieldError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, FieldError> {
        self.0
            .next()
            .map(|(index, item)| {
                let shown = item.clone();
                seed.deserialize(ValueDe(item))
                    .map_err(|err| err.under(&format!("[{index}]"), &shown))
            })
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

/// A table's entries; an error raised by a value gets its key put in front
/// of its path.
struct Entries {
    entries: <toml::Table as IntoIterator>::IntoIter,
    pending: Option<(String, Value)>,
}

impl<'de> MapAccess<'de> for Entries {
    type Error = FieldError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, FieldError> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        let read = seed.deserialize(key.clone().into_deserializer());
        self.pending = Some((key, value));
        read.map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, FieldError> {
        let Some((key, value)) = self.pending.take() else {
            return Err(de::Error::custom("a key before its value"));
        };
        let shown = value.clone();
        seed.deserialize(ValueDe(value))
            .map_err(|err| err.under(&key, &shown))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}
