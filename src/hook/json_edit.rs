//! Minimal edits to a JSON document as text: insert a member or an item,
//! replace or remove one, and leave every other byte where it was. A
//! settings file a person formats by hand keeps its formatting. Pure.

use serde_json::Value;

/// A value's place in the text: `start..end` byte offsets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    Object {
        start: usize,
        end: usize,
        members: Vec<Member>,
    },
    Array {
        start: usize,
        end: usize,
        items: Vec<Node>,
    },
    Scalar {
        start: usize,
        end: usize,
    },
}

/// One `"key": value` of an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub key: String,
    /// Where the key's opening quote is.
    pub key_start: usize,
    pub value: Node,
}

impl Node {
    pub fn start(&self) -> usize {
        match self {
            Node::Object { start, .. } | Node::Array { start, .. } | Node::Scalar { start, .. } => {
                *start
            }
        }
    }

    pub fn end(&self) -> usize {
        match self {
            Node::Object { end, .. } | Node::Array { end, .. } | Node::Scalar { end, .. } => *end,
        }
    }

    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Member> {
        match self {
            Node::Object { members, .. } => members.iter().find(|m| m.key == key),
            _ => None,
        }
    }
}

/// One change to the text: at byte `at`, `removed` was taken out and
/// `inserted` put in. Applied in order; undone in reverse.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Edit {
    pub at: usize,
    pub removed: String,
    pub inserted: String,
}

impl Edit {
    /// Applies the edit to `text`; `None` when `text` does not hold
    /// `removed` at `at`.
    pub fn apply(&self, text: &str) -> Option<String> {
        let end = self.at.checked_add(self.removed.len())?;
        if text.get(self.at..end)? != self.removed {
            return None;
        }
        Some(format!(
            "{}{}{}",
            &text[..self.at],
            self.inserted,
            &text[end..]
        ))
    }

    /// The edit that takes it back.
    pub fn inverse(&self) -> Edit {
        Edit {
            at: self.at,
            removed: self.inserted.clone(),
            inserted: self.removed.clone(),
        }
    }
}

/// Why a document cannot be edited.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonEditError {
    #[error("not JSON: line {line} column {column}: {message}")]
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
}

/// Reads `text` (valid JSON, checked first) into nodes with their places.
pub fn scan(text: &str) -> Result<Node, JsonEditError> {
    serde_json::from_str::<Value>(text).map_err(|e| JsonEditError::Syntax {
        line: e.line(),
        column: e.column(),
        message: {
            let full = e.to_string();
            let suffix = format!(" at line {} column {}", e.line(), e.column());
            full.strip_suffix(&suffix).unwrap_or(&full).to_string()
        },
    })?;
    let mut s = Scanner {
        bytes: text.as_bytes(),
        pos: 0,
    };
    s.skip_ws();
    // serde_json accepted it, so the scanner cannot fail on it; an answer
    // that still does not read is reported rather than trusted.
    s.value().ok_or_else(|| JsonEditError::Syntax {
        line: 1,
        column: s.pos + 1,
        message: "unreadable value".into(),
    })
}

struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Scanner<'_> {
    fn skip_ws(&mut self) {
        while self
            .bytes
            .get(self.pos)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.pos += 1;
        }
    }

    fn value(&mut self) -> Option<Node> {
        let start = self.pos;
        match self.bytes.get(self.pos)? {
            b'{' => {
                self.pos += 1;
                let mut members = Vec::new();
                loop {
                    self.skip_ws();
                    match self.bytes.get(self.pos)? {
                        b'}' => {
                            self.pos += 1;
                            return Some(Node::Object {
                                start,
                                end: self.pos,
                                members,
                            });
                        }
                        b',' => self.pos += 1,
                        b'"' => {
                            let key_start = self.pos;
                            let key_end = self.string_end()?;
                            let key: String =
                                serde_json::from_slice(&self.bytes[key_start..key_end]).ok()?;
                            self.pos = key_end;
                            self.skip_ws();
                            if self.bytes.get(self.pos) != Some(&b':') {
                                return None;
                            }
                            self.pos += 1;
                            self.skip_ws();
                            let value = self.value()?;
                            members.push(Member {
                                key,
                                key_start,
                                value,
                            });
                        }
                        _ => return None,
                    }
                }
            }
            b'[' => {
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    self.skip_ws();
                    match self.bytes.get(self.pos)? {
                        b']' => {
                            self.pos += 1;
                            return Some(Node::Array {
                                start,
                                end: self.pos,
                                items,
                            });
                        }
                        b',' => self.pos += 1,
                        _ => items.push(self.value()?),
                    }
                }
            }
            b'"' => {
                self.pos = self.string_end()?;
                Some(Node::Scalar {
                    start,
                    end: self.pos,
                })
            }
            _ => {
                while self.bytes.get(self.pos).is_some_and(|b| {
                    !matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                }) {
                    self.pos += 1;
                }
                (self.pos > start).then_some(Node::Scalar {
                    start,
                    end: self.pos,
                })
            }
        }
    }

    /// The offset just past the string that starts at `self.pos`.
    fn string_end(&self) -> Option<usize> {
        let mut i = self.pos + 1;
        loop {
            match self.bytes.get(i)? {
                b'\\' => i += 2,
                b'"' => return Some(i + 1),
                _ => i += 1,
            }
        }
    }
}

/// How the document is laid out: the line break and one level of indent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Style {
    /// `None`: the document is on one line; edits keep it there.
    pub newline: Option<&'static str>,
    pub indent: String,
}

impl Style {
    /// The style of `text`: CRLF or LF, and the indent of its first indented
    /// line (two spaces when it has none).
    pub fn of(text: &str) -> Style {
        let newline = if text.contains("\r\n") {
            Some("\r\n")
        } else if text.trim_end().contains('\n') {
            Some("\n")
        } else if text.chars().filter(|c| !c.is_whitespace()).count() <= 2 {
            // An empty document or `{}`: laid out as agents write theirs.
            Some("\n")
        } else {
            None
        };
        let indent = text
            .lines()
            .map(|l| {
                let rest = l.trim_start_matches([' ', '\t']);
                &l[..l.len() - rest.len()]
            })
            .find(|ws| !ws.is_empty())
            .map(|ws| {
                if ws.starts_with('\t') {
                    "\t".to_string()
                } else {
                    ws.to_string()
                }
            })
            .unwrap_or_else(|| "  ".to_string());
        Style { newline, indent }
    }

    /// `value` rendered for a place whose line starts with `outer`.
    pub fn render(&self, value: &Value, outer: &str) -> String {
        match self.newline {
            None => compact(value),
            Some(nl) => {
                let mut out = Vec::new();
                let formatter =
                    serde_json::ser::PrettyFormatter::with_indent(self.indent.as_bytes());
                let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
                if serde::Serialize::serialize(value, &mut ser).is_err() {
                    return compact(value);
                }
                let text = String::from_utf8_lossy(&out).into_owned();
                text.split('\n')
                    .collect::<Vec<_>>()
                    .join(&format!("{nl}{outer}"))
            }
        }
    }
}

/// `{"a": 1, "b": [2]}`: one line, a space after each colon and comma.
fn compact(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let inner: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), compact(v)))
                .collect();
            format!("{{{}}}", inner.join(", "))
        }
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(compact).collect();
            format!("[{}]", inner.join(", "))
        }
        other => other.to_string(),
    }
}

/// The whitespace that starts the line holding byte `at`.
fn line_indent(text: &str, at: usize) -> &str {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let rest = &text[line_start..];
    let body = rest.trim_start_matches([' ', '\t']);
    &rest[..rest.len() - body.len()]
}

/// The edit that adds a member (`key` given) or an item at the end of
/// `container`, laid out like its siblings.
fn append(text: &str, container: &Node, key: Option<&str>, value: &Value) -> Edit {
    let style = Style::of(text);
    let key = key.map_or(String::new(), |k| {
        format!("{}: ", Value::String(k.to_string()))
    });
    let (start, end, last) = match container {
        Node::Object {
            start,
            end,
            members,
        } => (
            *start,
            *end,
            members.last().map(|m| (m.key_start, m.value.end())),
        ),
        Node::Array { start, end, items } => {
            (*start, *end, items.last().map(|i| (i.start(), i.end())))
        }
        Node::Scalar { start, end } => (*start, *end, None),
    };
    match (last, style.newline) {
        (Some((child_start, child_end)), Some(nl)) if text[start..child_start].contains('\n') => {
            let indent = line_indent(text, child_start);
            Edit {
                at: child_end,
                removed: String::new(),
                inserted: format!(",{nl}{indent}{key}{}", style.render(value, indent)),
            }
        }
        (Some((_, child_end)), _) => Edit {
            at: child_end,
            removed: String::new(),
            inserted: format!(", {key}{}", compact(value)),
        },
        // Whatever whitespace sat between the brackets goes; the inverse
        // edit puts it back.
        (None, Some(nl)) => {
            let outer = line_indent(text, start);
            let inner = format!("{outer}{}", style.indent);
            Edit {
                at: start + 1,
                removed: text[start + 1..end - 1].to_string(),
                inserted: format!("{nl}{inner}{key}{}{nl}{outer}", style.render(value, &inner)),
            }
        }
        (None, None) => Edit {
            at: start + 1,
            removed: text[start + 1..end - 1].to_string(),
            inserted: format!("{key}{}", compact(value)),
        },
    }
}

/// The edit that adds `"key": value` at the end of the object `object`.
pub fn add_member(text: &str, object: &Node, key: &str, value: &Value) -> Edit {
    append(text, object, Some(key), value)
}

/// The edit that adds `value` at the end of the array `array`.
pub fn add_item(text: &str, array: &Node, value: &Value) -> Edit {
    append(text, array, None, value)
}

/// The edit that puts `value` where `node` is.
pub fn replace(text: &str, node: &Node, value: &Value) -> Edit {
    let style = Style::of(text);
    let outer = line_indent(text, node.start());
    Edit {
        at: node.start(),
        removed: text[node.start()..node.end()].to_string(),
        inserted: style.render(value, outer),
    }
}

/// The edit that takes child `index` (a member or an item) out of
/// `container`, with its comma and the whitespace that led to it.
pub fn remove(text: &str, container: &Node, index: usize) -> Option<Edit> {
    let spans: Vec<(usize, usize)> = match container {
        Node::Object { members, .. } => members
            .iter()
            .map(|m| (m.key_start, m.value.end()))
            .collect(),
        Node::Array { items, .. } => items.iter().map(|i| (i.start(), i.end())).collect(),
        Node::Scalar { .. } => return None,
    };
    let (child_start, child_end) = *spans.get(index)?;
    let (from, to) = if spans.len() == 1 {
        (container.start() + 1, container.end() - 1)
    } else if index + 1 == spans.len() {
        (spans[index - 1].1, child_end)
    } else {
        (child_start, spans[index + 1].0)
    };
    Some(Edit {
        at: from,
        removed: text[from..to].to_string(),
        inserted: String::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn apply(text: &str, edit: &Edit) -> String {
        let out = edit.apply(text).unwrap();
        assert_eq!(edit.inverse().apply(&out).as_deref(), Some(text), "inverse");
        serde_json::from_str::<Value>(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        out
    }

    #[test]
    fn a_member_goes_after_the_last_one_in_the_documents_style() {
        let text = "{\n    \"model\": \"opus\",\n    \"x\": [1, 2]\n}\n";
        let node = scan(text).unwrap();
        let out = apply(
            text,
            &add_member(text, &node, "hooks", &json!({"Stop": []})),
        );
        assert_eq!(
            out,
            "{\n    \"model\": \"opus\",\n    \"x\": [1, 2],\n    \"hooks\": {\n        \"Stop\": []\n    }\n}\n"
        );
    }

    #[test]
    fn one_line_documents_stay_on_one_line() {
        let text = r#"{"a": 1}"#;
        let node = scan(text).unwrap();
        let out = apply(text, &add_member(text, &node, "b", &json!({"c": [1]})));
        assert_eq!(out, r#"{"a": 1, "b": {"c": [1]}}"#);
    }

    #[test]
    fn empty_containers_open_up_and_close_back_exactly() {
        for text in ["{}", "{ }", "{\n}\n", "{\n  \"k\": []\n}"] {
            let node = scan(text).unwrap();
            let target = match node.get("k") {
                Some(m) => add_item(text, &m.value, &json!({"a": 1})),
                None => add_member(text, &node, "k", &json!(1)),
            };
            apply(text, &target);
        }
        let text = "{\n  \"k\": []\n}";
        let node = scan(text).unwrap();
        let edit = add_item(text, &node.get("k").unwrap().value, &json!({"a": 1}));
        assert_eq!(
            edit.apply(text).unwrap(),
            "{\n  \"k\": [\n    {\n      \"a\": 1\n    }\n  ]\n}"
        );
    }

    #[test]
    fn removing_a_child_keeps_its_neighbours_bytes() {
        let text = "[\n  1,\n  {\"x\": \"]\\\"\"},\n  3\n]";
        let node = scan(text).unwrap();
        let middle = remove(text, &node, 1).unwrap().apply(text).unwrap();
        assert_eq!(middle, "[\n  1,\n  3\n]");
        let last = remove(text, &node, 2).unwrap().apply(text).unwrap();
        assert_eq!(last, "[\n  1,\n  {\"x\": \"]\\\"\"}\n]");
        let only = "{\"a\": {\"b\": 1}}";
        let node = scan(only).unwrap();
        assert_eq!(remove(only, &node, 0).unwrap().apply(only).unwrap(), "{}");
    }

    #[test]
    fn a_replaced_value_keeps_its_place() {
        let text = "{\"env\": {\"CAP\": \"3\", \"B\": 1}}";
        let node = scan(text).unwrap();
        let cap = &node.get("env").unwrap().value;
        let edit = replace(text, &cap.get("CAP").unwrap().value, &json!("12"));
        assert_eq!(apply(text, &edit), "{\"env\": {\"CAP\": \"12\", \"B\": 1}}");
    }

    #[test]
    fn tabs_and_crlf_are_kept() {
        let text = "{\r\n\t\"a\": 1\r\n}\r\n";
        let node = scan(text).unwrap();
        let out = apply(text, &add_member(text, &node, "b", &json!([1])));
        assert_eq!(
            out,
            "{\r\n\t\"a\": 1,\r\n\t\"b\": [\r\n\t\t1\r\n\t]\r\n}\r\n"
        );
    }

    #[test]
    fn invalid_json_is_refused_with_its_place() {
        let err = scan("{\"a\": }").unwrap_err().to_string();
        assert!(err.starts_with("not JSON: line 1 column 7"), "{err}");
    }
}
