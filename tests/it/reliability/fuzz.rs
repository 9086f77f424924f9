//! 4. Fuzz: no parser panics or hangs, whatever the bytes.
//!
//! Every findings format (the ones `--format` takes) reads random bytes,
//! markdown-shaped lines, mutated fixtures and structured documents (JSON
//! shaped like the fixtures, JUnit-like XML, tagged and Codex lines); the
//! other parsers get arbitrary bytes, mutated samples and generated input.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use clap::ValueEnum;
use proptest::prelude::*;
use referee::findings::{self, FindingsError, Format};
use referee::ledger::chain;

use super::*;

fn config() -> ProptestConfig {
    // Reads `PROPTEST_*` from the environment.
    let defaults = ProptestConfig::default();
    ProptestConfig {
        cases: env_u64("PROPTEST_CASES", 2000) as u32,
        // A fixed seed keeps CI repeatable; scripts/torture.sh picks a new
        // one per run through `PROPTEST_RNG_SEED`.
        rng_seed: match std::env::var_os("PROPTEST_RNG_SEED") {
            Some(_) => defaults.rng_seed,
            None => proptest::test_runner::RngSeed::Fixed(0x5eed),
        },
        failure_persistence: None,
        ..defaults
    }
}

/// Runs `f` on another thread: a panic or a hang is a failure that names
/// `what`. The hang guard is generous: a parser that reaches it loops.
fn bounded<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(10)) {
        Ok(value) => value,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("hang guard: {what} ran for more than 10 s")
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => panic!("{what} panicked"),
    }
}

/// Every file below `rel` (relative to the crate) whose name passes `keep`.
fn files_under(rel: &str, keep: impl Fn(&Path) -> bool) -> Vec<Vec<u8>> {
    tree(&root().join(rel))
        .into_iter()
        .filter(|(path, _)| keep(path))
        .map(|(_, bytes)| bytes)
        .collect()
}

fn named(name: &'static str) -> impl Fn(&Path) -> bool {
    move |p: &Path| p.file_name().is_some_and(|n| n == name)
}

fn ext(ext: &'static str) -> impl Fn(&Path) -> bool {
    move |p: &Path| p.extension().is_some_and(|e| e == ext)
}

/// The real samples each parser is fuzzed from, and the words the
/// structured generators use, taken from them.
struct Samples {
    /// Every findings fixture, as bytes.
    findings: Vec<Vec<u8>>,
    findings_json: Vec<Vec<Value>>,
    junit: Vec<Vec<u8>>,
    responses: Vec<Vec<u8>>,
    contracts: Vec<Vec<u8>>,
    ledgers: Vec<Vec<u8>>,
    patches: Vec<Vec<u8>>,
    keys: Vec<String>,
    strings: Vec<String>,
    xml_names: Vec<String>,
}

/// Collects the object keys and the short strings of a sample document.
fn walk(v: &Value, keys: &mut BTreeSet<String>, strings: &mut BTreeSet<String>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                keys.insert(k.clone());
                walk(v, keys, strings);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| walk(v, keys, strings)),
        Value::String(s) if s.chars().count() <= 40 => {
            strings.insert(s.clone());
        }
        _ => {}
    }
}

static SAMPLES: LazyLock<Samples> = LazyLock::new(|| {
    // The large GitHub captures (up to 764 KB) are read whole by
    // tests/it/parse.rs; a fuzz case reads its sample with every format.
    let findings = files_under("tests/fixtures/findings", |p| {
        !ext("md")(p) && std::fs::metadata(p).is_ok_and(|m| m.len() <= 128 * 1024)
    });
    let mut findings_json = Vec::new();
    for bytes in &findings {
        let text = String::from_utf8_lossy(bytes);
        if let Ok(doc) = serde_json::from_str::<Value>(&text) {
            findings_json.push(vec![doc]);
        } else {
            let lines: Vec<Value> = text
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect();
            if !lines.is_empty() {
                findings_json.push(lines);
            }
        }
    }
    let mut keys = BTreeSet::new();
    let mut strings = BTreeSet::new();
    findings_json
        .iter()
        .flatten()
        .for_each(|v| walk(v, &mut keys, &mut strings));
    for word in [
        "responses",
        "status",
        "note",
        "fixed",
        "disputed",
        "wontfix",
    ] {
        keys.insert(word.into());
        strings.insert(word.into());
    }
    let junit = files_under("tests/fixtures/findings/junit", |_| true);
    let names = regex::Regex::new(r"</?([A-Za-z_][A-Za-z0-9_.:-]*)|\s([A-Za-z_][A-Za-z0-9_.:-]*)=")
        .expect("regex");
    let xml_names: BTreeSet<String> = junit
        .iter()
        .flat_map(|b| {
            names
                .captures_iter(&String::from_utf8_lossy(b))
                .filter_map(|c| {
                    c.get(1)
                        .or_else(|| c.get(2))
                        .map(|m| m.as_str().to_string())
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let mut responses = files_under("ledgers", |p| {
        named("responses.json")(p) || named("writer.output")(p)
    });
    responses.push(
        br#"{"responses":[{"id":"F1","status":"fixed","note":"n"},{"id":2,"status":"wontfix"}]}"#
            .to_vec(),
    );
    let mut contracts = files_under("contracts", ext("toml"));
    contracts.extend(files_under("tests/fixtures/ledger", ext("toml")));
    let mut ledgers = files_under("ledgers", ext("csv"));
    ledgers.extend(files_under("tests/fixtures/ledger", ext("csv")));
    let mut patches = files_under("ledgers", named("patch.diff"));
    patches.extend(files_under("tests/fixtures/ledger", named("patch.diff")));
    patches.retain(|p| !p.is_empty());
    Samples {
        findings,
        findings_json,
        junit,
        responses,
        contracts,
        ledgers,
        patches,
        keys: keys.into_iter().collect(),
        strings: strings.into_iter().collect(),
        xml_names: xml_names.into_iter().collect(),
    }
});

#[test]
fn the_fuzz_samples_are_there() {
    let s = &*SAMPLES;
    // Every format has real samples to be fuzzed from, in the folder named
    // after it.
    for format in Format::value_variants()
        .iter()
        .filter(|f| **f != Format::Auto)
    {
        let name = format.to_possible_value().expect("a named format");
        let rel = format!("tests/fixtures/findings/{}", name.get_name());
        assert!(
            !files_under(&rel, |_| true).is_empty(),
            "no samples of {format} in {rel}"
        );
    }
    let counts = [
        ("findings", s.findings.len(), 15),
        ("findings json", s.findings_json.len(), 8),
        ("junit", s.junit.len(), 4),
        ("responses", s.responses.len(), 3),
        ("contracts", s.contracts.len(), 4),
        ("ledgers", s.ledgers.len(), 8),
        ("patches", s.patches.len(), 8),
        ("json keys", s.keys.len(), 30),
        ("xml names", s.xml_names.len(), 8),
    ];
    for (what, have, least) in counts {
        assert!(have >= least, "{what}: {have} samples, expected {least}+");
    }
}

/// Bytes a mutation inserts: the syntax each format cares about, and the
/// edge cases it might mishandle.
#[rustfmt::skip]
const TOKENS: &[&str] = &[
    "{", "}", "[", "]", "\"", ",", ":", "\\", "\\u0000", "\\ud800", "1e999", "-1",
    "18446744073709551616", "null", "true", "\n", "\r\n", "\r", "\t", "<", ">", "&#0;",
    "&#xD800;", "&amp;", "]]>", "<![CDATA[", "<!DOCTYPE x [<!ENTITY a \"b\">]>", "\u{feff}",
    "\u{2028}", "\u{0}", "\u{ff}", "@@ -1,4294967295 +0,0 @@", "@@ -0 +0 @@", "\n+", "\n-",
    "\n ", "\ndiff --git a/x b/x\n", "\\ No newline at end of file\n", "\"a\\377\\t\"",
    "../", "/", "%00", "round", "continue", "stop", "[bug]", "[P0]", "= ", "[[x]]", "'''",
];

#[derive(Debug, Clone)]
enum Edit {
    Flip(usize, u8),
    Insert(usize, usize),
    InsertBytes(usize, Vec<u8>),
    Delete(usize, usize),
    Truncate(usize),
    Duplicate(usize, usize),
    Splice(usize, usize, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    let pos = any::<usize>();
    prop_oneof![
        (pos, any::<u8>()).prop_map(|(p, b)| Edit::Flip(p, b)),
        (pos, 0..TOKENS.len()).prop_map(|(p, t)| Edit::Insert(p, t)),
        (pos, prop::collection::vec(any::<u8>(), 1..16)).prop_map(|(p, b)| Edit::InsertBytes(p, b)),
        (pos, 1..64usize).prop_map(|(p, n)| Edit::Delete(p, n)),
        pos.prop_map(Edit::Truncate),
        (pos, 1..128usize).prop_map(|(p, n)| Edit::Duplicate(p, n)),
        (pos, any::<usize>(), any::<usize>()).prop_map(|(p, s, o)| Edit::Splice(p, s, o)),
    ]
}

/// Applies `edits` to a copy of `input`; `pool` lends bytes to splices.
fn mutate(input: &[u8], edits: &[Edit], pool: &[Vec<u8>]) -> Vec<u8> {
    let mut out = input.to_vec();
    for e in edits {
        let at = |p: usize, len: usize| if len == 0 { 0 } else { p % (len + 1) };
        match e {
            Edit::Flip(p, b) => {
                if !out.is_empty() {
                    let i = p % out.len();
                    out[i] = *b;
                }
            }
            Edit::Insert(p, t) => {
                let i = at(*p, out.len());
                out.splice(i..i, TOKENS[*t].bytes());
            }
            Edit::InsertBytes(p, bytes) => {
                let i = at(*p, out.len());
                out.splice(i..i, bytes.iter().copied());
            }
            Edit::Delete(p, n) => {
                let i = at(*p, out.len());
                let end = (i + n).min(out.len());
                out.drain(i..end);
            }
            Edit::Truncate(p) => {
                let i = at(*p, out.len());
                out.truncate(i);
            }
            Edit::Duplicate(p, n) => {
                let i = at(*p, out.len());
                let end = (i + n).min(out.len());
                let copy = out[i..end].to_vec();
                out.splice(end..end, copy);
            }
            Edit::Splice(p, s, o) => {
                if let Some(other) = pool.get(s % pool.len().max(1))
                    && !other.is_empty()
                {
                    let from = o % other.len();
                    let i = at(*p, out.len());
                    out.splice(i..i, other[from..].iter().copied().take(96));
                }
            }
        }
    }
    out
}

/// Inputs for a parser: arbitrary bytes, or a sample mutated.
fn bytes_or_mutated(pool: &'static [Vec<u8>]) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        1 => prop::collection::vec(any::<u8>(), 0..512),
        3 => (0..pool.len(), prop::collection::vec(edit(), 1..8))
            .prop_map(move |(i, edits)| mutate(&pool[i], &edits, pool)),
    ]
}

fn word(words: &'static [String]) -> impl Strategy<Value = String> {
    prop::sample::select(words)
}

/// A short string: a word from the samples, an edge case, or anything.
fn json_string() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => word(&SAMPLES.strings),
        1 => prop::sample::select(vec![
            String::new(), " ".into(), "\u{0}".into(), "../../etc/passwd".into(), "/abs/x.rs".into(),
            "file:///C:/x%zz".into(), "C:\\w\\x.rs".into(), "x".repeat(400), "é🦀\u{202e}".into(),
        ]),
        2 => any::<String>(),
    ]
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        prop::sample::select(vec![0i64, 1, -1, 2, 3, i64::from(u32::MAX) + 1])
            .prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        json_string().prop_map(Value::String),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((word(&SAMPLES.keys), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Where in a sample document a structural edit lands, and what it does.
#[derive(Debug, Clone)]
enum JsonEdit {
    Replace(usize, Value),
    Remove(usize),
    DuplicateIn(usize),
    Wrap(usize),
}

fn json_edit() -> impl Strategy<Value = JsonEdit> {
    prop_oneof![
        3 => (any::<usize>(), json_value()).prop_map(|(n, v)| JsonEdit::Replace(n, v)),
        1 => any::<usize>().prop_map(JsonEdit::Remove),
        1 => any::<usize>().prop_map(JsonEdit::DuplicateIn),
        1 => any::<usize>().prop_map(JsonEdit::Wrap),
    ]
}

fn count_nodes(v: &Value) -> usize {
    1 + match v {
        Value::Array(items) => items.iter().map(count_nodes).sum(),
        Value::Object(map) => map.values().map(count_nodes).sum(),
        _ => 0,
    }
}

/// Applies `edit` at node number `*n` (pre-order); returns whether it did.
fn apply_json(v: &mut Value, n: &mut usize, edit: &JsonEdit) -> bool {
    if *n == 0 {
        match edit {
            JsonEdit::Replace(_, new) => *v = new.clone(),
            JsonEdit::Wrap(_) => *v = Value::Array(vec![v.take()]),
            JsonEdit::DuplicateIn(_) => match v {
                Value::Array(items) if !items.is_empty() => items.push(items[0].clone()),
                Value::Object(map) => {
                    map.insert("duplicate".into(), Value::Object(map.clone()));
                }
                _ => {}
            },
            JsonEdit::Remove(_) => *v = Value::Null,
        }
        return true;
    }
    *n -= 1;
    match v {
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                if *n == 0 && matches!(edit, JsonEdit::Remove(_)) {
                    items.remove(i);
                    return true;
                }
                if apply_json(item, n, edit) {
                    return true;
                }
            }
            false
        }
        Value::Object(map) => {
            let keys: Vec<String> = map.keys().cloned().collect();
            for key in keys {
                if *n == 0 && matches!(edit, JsonEdit::Remove(_)) {
                    map.remove(&key);
                    return true;
                }
                if let Some(item) = map.get_mut(&key)
                    && apply_json(item, n, edit)
                {
                    return true;
                }
            }
            false
        }
        _ => false,
    }
}

/// A findings sample (a document, or JSON lines) with structural edits.
fn edited_json_sample() -> impl Strategy<Value = Vec<u8>> {
    (
        0..SAMPLES.findings_json.len(),
        prop::collection::vec(json_edit(), 1..5),
        any::<bool>(),
    )
        .prop_map(|(i, edits, pretty)| {
            let mut docs = SAMPLES.findings_json[i].clone();
            for e in &edits {
                let n = match e {
                    JsonEdit::Replace(n, _)
                    | JsonEdit::Remove(n)
                    | JsonEdit::DuplicateIn(n)
                    | JsonEdit::Wrap(n) => *n,
                };
                let total: usize = docs.iter().map(count_nodes).sum();
                let mut at = n % total.max(1);
                for doc in docs.iter_mut() {
                    if apply_json(doc, &mut at, e) {
                        break;
                    }
                }
            }
            let texts: Vec<String> = docs
                .iter()
                .map(|d| {
                    if pretty && docs.len() == 1 {
                        serde_json::to_string_pretty(d).unwrap_or_default()
                    } else {
                        d.to_string()
                    }
                })
                .collect();
            texts.join("\n").into_bytes()
        })
}

fn xml_text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-zA-Z0-9 :/._()=-]{0,30}",
        1 => prop::sample::select(vec![
            "&amp;".to_string(), "&lt;".into(), "&#10;".into(), "&#0;".into(), "&#xD800;".into(),
            "&#x110000;".into(), "&bogus;".into(), "&".into(), "<![CDATA[ a ]]>".into(),
            "src/a.rs:12: in test".into(), "/abs/path.py:3".into(),
        ]),
        1 => any::<String>().prop_map(|s| s.replace(['<', '&'], "")),
    ]
}

#[derive(Debug, Clone)]
struct Element {
    name: String,
    attrs: Vec<(String, String)>,
    children: Vec<Element>,
    text: String,
}

fn element() -> impl Strategy<Value = Element> {
    let name = || word(&SAMPLES.xml_names);
    let leaf = (
        name(),
        prop::collection::vec((name(), xml_text()), 0..5),
        xml_text(),
    )
        .prop_map(|(name, attrs, text)| Element {
            name,
            attrs,
            children: Vec::new(),
            text,
        });
    leaf.prop_recursive(4, 32, 5, move |inner| {
        (
            name(),
            prop::collection::vec((name(), xml_text()), 0..5),
            prop::collection::vec(inner, 0..5),
            xml_text(),
        )
            .prop_map(|(name, attrs, children, text)| Element {
                name,
                attrs,
                children,
                text,
            })
    })
}

fn render_xml(e: &Element, out: &mut String) {
    out.push('<');
    out.push_str(&e.name);
    for (k, v) in &e.attrs {
        out.push_str(&format!(" {k}=\"{}\"", v.replace('"', "&quot;")));
    }
    out.push('>');
    out.push_str(&e.text);
    for c in &e.children {
        render_xml(c, out);
    }
    out.push_str(&format!("</{}>", e.name));
}

fn junit_doc() -> impl Strategy<Value = Vec<u8>> {
    (element(), any::<bool>()).prop_map(|(e, decl)| {
        let mut out = String::new();
        if decl {
            out.push_str("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n");
        }
        render_xml(&e, &mut out);
        out.into_bytes()
    })
}

/// Lines shaped like tagged text and Codex review text.
fn text_review() -> impl Strategy<Value = Vec<u8>> {
    let tag = prop::sample::select(vec![
        "[block]",
        "[bug]",
        "[should]",
        "[nit]",
        "[P0]",
        "[P1]",
        "[P3]",
        "[Minor]",
        "[resolved]",
        "[clean]",
        "[x]",
        "[",
        "- [P2]",
        "* [bug]",
        "",
    ]);
    let number = prop::sample::select(vec![
        "0",
        "1",
        "12",
        "4294967296",
        "18446744073709551616",
        "-1",
        "1-3",
        "3-1",
        "1:5",
        "",
    ]);
    let path = prop_oneof![
        3 => "[a-z/._]{1,20}",
        1 => prop::sample::select(vec!["../x.rs", "/abs/x.rs", "C:\\x.rs", "file:///x%20y.rs", " "])
            .prop_map(String::from),
    ];
    let line = (tag, path, number, any::<bool>(), json_string()).prop_map(
        |(tag, path, n, dash, title)| {
            if dash {
                format!("{tag} {title} — {path}:{n}")
            } else {
                format!("{tag} {path}:{n}: {title}")
            }
        },
    );
    prop::collection::vec(prop_oneof![4 => line, 1 => json_string()], 0..12)
        .prop_map(|lines| lines.join("\n").into_bytes())
}

/// The findings property, for every format `--format` takes: whatever the
/// bytes, each reads them as findings or refuses them with an error that
/// says where (`input …` about the bytes themselves, `<format>: …` from the
/// format that read them), never panics nor hangs; and `auto` reads them
/// exactly as the format it detected does.
fn check_findings(input: Vec<u8>) {
    bounded("findings::parse", move || {
        let labels: Vec<&str> = Format::value_variants()
            .iter()
            .filter(|f| **f != Format::Auto)
            .map(|f| f.label())
            .collect();
        let mut about_the_input = None;
        for &format in Format::value_variants() {
            let read = findings::parse(&input, format, "/work/repo");
            let by = match &read {
                Ok(parsed) => {
                    check_parsed(parsed);
                    Some(parsed.source_format)
                }
                Err(err) => {
                    let message = err.to_string();
                    let by = match err {
                        FindingsError::Syntax { format, .. }
                        | FindingsError::Invalid { format, .. }
                        | FindingsError::NotProven { format, .. } => Some(*format),
                        FindingsError::NoTestCase => Some(Format::Junit),
                        FindingsError::Empty
                        | FindingsError::NotUtf8 { .. }
                        | FindingsError::NotUtf16 { .. } => None,
                    };
                    match by {
                        Some(by) => assert!(
                            message.starts_with(&format!("{}: ", by.label())),
                            "{format:?}: {message}"
                        ),
                        None => {
                            assert!(message.starts_with("input "), "{format:?}: {message}");
                            // The bytes are what is wrong, whichever format reads them.
                            let first = about_the_input.get_or_insert_with(|| err.clone());
                            assert_eq!(first, err, "{format:?}");
                        }
                    }
                    assert!(
                        by.is_none_or(|by| labels.contains(&by.label())),
                        "{format:?}: {message}"
                    );
                    by
                }
            };
            match (format, by) {
                (Format::Auto, Some(detected)) => assert_eq!(
                    findings::parse(&input, detected, "/work/repo"),
                    read,
                    "auto read it unlike {detected:?}"
                ),
                (Format::Auto, None) => {}
                (asked, by) => assert_eq!(
                    by.unwrap_or(asked),
                    asked,
                    "{message:?}",
                    message = read.as_ref().err()
                ),
            }
        }
    });
}

/// What every parsed review holds: findings with an id (unique), a trimmed
/// title, a fingerprint and no line 0, in a document that serializes.
fn check_parsed(parsed: &findings::Parsed) {
    assert_ne!(parsed.source_format, Format::Auto);
    let mut ids = BTreeSet::new();
    for f in &parsed.findings {
        assert!(!f.id.is_empty() && !f.fingerprint.is_empty(), "{f:?}");
        assert!(ids.insert(f.id.as_str()), "id `{}` twice", f.id);
        assert!(!f.title.is_empty() && f.title.trim() == f.title, "{f:?}");
        assert!(f.line != Some(0) && f.end_line != Some(0), "{f:?}");
    }
    // What the engine stores as evidence must serialize.
    serde_json::to_vec(parsed).expect("findings serialize");
}

/// Bytes skewed towards the characters the formats care about.
const ALPHABET: &[u8] = b"{}[]<>\"':,/\\- \n\t0123456789abcdefPnulltrue&;#x!?\xe2\x80\x94";

/// The pieces the tagged and Codex text readers cut on: list markers,
/// emphasis, brackets, places, dashes and multi-byte spaces, so that every
/// slicing path meets odd neighbours.
#[rustfmt::skip]
const PIECES: &[&str] = &[
    "- ", "* ", "+ ", "• ", "1. ", "12) ", "(3) ", "### ", "> ", "[ ] ", "[x] ", "**", "*", "_",
    "`", "[bug]", "[P1]", "[bgu]", "[clean]", "[resolved]", "[severity: high]", "[", "]", "(",
    ")", "src/a.rs", "/abs/b.rs", "e.g.", ":", "3", "42-45", "#L", "L7", "-", " — ", " – ",
    " - ", "—", " ", "\t", "F1 ", "F-1a2b ", "title", "🔴", "\u{a0}", "\u{3000}", "é", "\n",
    "\n  ", "\n\n", "http://x.y/z", "a[high]", "[high](x)",
];

/// Unstructured input: bytes (skewed or any), lines of [`PIECES`], and the
/// real samples of every format mutated.
fn findings_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        1 => prop::collection::vec(prop::sample::select(ALPHABET), 0..200),
        1 => prop::collection::vec(any::<u8>(), 0..200),
        2 => prop::collection::vec(prop::sample::select(PIECES), 0..24)
            .prop_map(|pieces| pieces.concat().into_bytes()),
        2 => bytes_or_mutated(&SAMPLES.findings),
    ]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn findings_parsers_survive_structured_documents(
        input in prop_oneof![3 => edited_json_sample(), 2 => junit_doc(), 2 => text_review(),
                             1 => json_value().prop_map(|v| v.to_string().into_bytes())]
    ) {
        check_findings(input);
    }

    #[test]
    fn findings_parsers_survive_bytes_lines_and_mutated_samples(input in findings_bytes()) {
        check_findings(input);
    }

    #[test]
    fn the_responses_parser_survives_anything(
        input in prop_oneof![
            2 => bytes_or_mutated(&SAMPLES.responses),
            1 => json_value().prop_map(|v| serde_json::json!({"responses": v}).to_string().into_bytes()),
            1 => prop::collection::vec(json_value(), 0..4)
                .prop_map(|v| serde_json::json!({"responses": v}).to_string().into_bytes()),
        ]
    ) {
        bounded("responses::parse", move || {
            match referee::findings::responses::parse(&input) {
                Ok(list) => list.iter().for_each(|r| assert!(!r.id.trim().is_empty(), "{r:?}")),
                Err(err) => assert!(!err.to_string().is_empty()),
            }
        });
    }

    #[test]
    fn the_contract_loader_survives_anything_and_round_trips(
        input in prop_oneof![2 => bytes_or_mutated(&SAMPLES.contracts), 2 => contract_toml()]
    ) {
        bounded("Contract::from_toml", move || {
            let text = String::from_utf8_lossy(&input);
            match referee::contract::Contract::from_toml(&text, "HEAD") {
                Ok(contract) => {
                    // What `init` and `amend` write must read back the same.
                    let again = referee::contract::render::to_toml(&contract);
                    let back = referee::contract::Contract::from_toml(&again, "HEAD");
                    assert_eq!(back.as_ref().ok(), Some(&contract), "{again}\n{back:?}");
                }
                Err(err) => assert!(!err.to_string().is_empty()),
            }
        });
    }

    #[test]
    fn the_ledger_chain_parser_survives_anything(
        input in prop_oneof![
            1 => prop::sample::select(SAMPLES.ledgers.clone()),
            2 => bytes_or_mutated(&SAMPLES.ledgers),
            2 => csv_ledger(),
        ]
    ) {
        bounded("chain::parse", move || check_chain(&input));
    }

    #[test]
    fn the_patch_parser_survives_anything(
        a in prop_oneof![2 => bytes_or_mutated(&SAMPLES.patches), 2 => diff_text()],
        b in prop_oneof![bytes_or_mutated(&SAMPLES.patches), diff_text()],
        line in any::<u32>(),
    ) {
        bounded("patch::parse", move || {
            let (pa, pb) = (referee::patch::parse(&a), referee::patch::parse(&b));
            for p in [&pa, &pb] {
                let changed = referee::patch::changed_lines(p);
                for f in &p.files {
                    let _ = f.path();
                    for h in &f.hunks {
                        let _ = h.header();
                    }
                    if let Some(path) = f.path() {
                        let _ = referee::patch::touches(&changed, path, line);
                    }
                }
            }
            for (x, y) in [(&pa, &pb), (&pb, &pa), (&pa, &pa)] {
                let mut fixes = referee::patch::fix_lines::FixLines::default();
                fixes.record(2, y);
                if let Some(r) = fixes.reversal(x) {
                    // A reversal names round 2 and a file of the later patch.
                    assert_eq!(r.round, 2);
                    assert!(x.files.iter().any(|f| f.path() == Some(r.file.as_str())), "{r:?}");
                    assert!(!r.to_string().is_empty());
                }
                let touched = referee::patch::touched(y);
                for f in &x.files {
                    if let Some(path) = f.path() {
                        let _ = touched.near(path, u64::from(line), u64::from(line));
                        let _ = referee::patch::carry(y, path, u64::from(line));
                    }
                }
            }
        });
    }
}

fn check_chain(input: &[u8]) {
    let Ok(parsed) = chain::parse(input) else {
        return;
    };
    // Verify's answer is the ledger's truth, worked out here the plain way:
    // every committed line reads back as the bytes referee writes, links to
    // the row before (row 1 to the contract), and its fields hash to its
    // row_sha256; and the evidence on disk is what each row records. Row 1
    // is taken to link to the contract, so that sound ledgers (the samples)
    // reach the rest of the checks.
    let genesis = parsed
        .rows
        .first()
        .map_or_else(|| "0".repeat(64), |r| r.prev_sha256.clone());
    let committed = input.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let lines: Vec<&[u8]> = input[..committed]
        .split_inclusive(|&b| b == b'\n')
        .map(|l| &l[..l.len() - 1])
        .skip(1)
        .collect();
    let mut chained = parsed.torn.is_none() && lines.len() == parsed.rows.len();
    let mut prev = genesis.clone();
    for (line, row) in lines.iter().zip(&parsed.rows) {
        let fields = chain::read_record(line).unwrap_or_default();
        let canonical = chain::write_record(&fields);
        chained &= canonical[..canonical.len() - 1] == **line
            && row.prev_sha256 == prev
            && referee::ledger::row::hash_fields(&fields) == row.row_sha256;
        prev.clone_from(&row.row_sha256);
    }
    let no_evidence = parsed.rows.iter().all(|r| r.evidence_sha256.is_empty());
    let none_on_disk = chain::verify(input, &genesis, |_| Ok(None), |_, _| {});
    let as_recorded = chain::verify(
        input,
        &genesis,
        |r| Ok((!r.evidence_sha256.is_empty()).then(|| r.evidence_sha256.clone())),
        |_, _| {},
    );
    for (got, truth) in [
        (&none_on_disk, chained && no_evidence),
        (&as_recorded, chained),
    ] {
        match got {
            Ok(summary) => {
                assert!(
                    truth,
                    "verify passed a broken ledger: {}",
                    String::from_utf8_lossy(input)
                );
                assert_eq!(summary.rows, parsed.rows.len());
                assert_eq!(
                    summary.head,
                    parsed.rows.last().map(|r| r.row_sha256.clone())
                );
            }
            Err(err) => {
                assert!(!truth, "verify refused a sound ledger: {err}");
                assert!(!err.to_string().is_empty());
            }
        }
    }
    for format in [
        referee::report::ledger::LedgerFormat::Table,
        referee::report::ledger::LedgerFormat::Csv,
        referee::report::ledger::LedgerFormat::Json,
        referee::report::ledger::LedgerFormat::Markdown,
    ] {
        let _ = referee::report::ledger::render("fuzz", &parsed.rows, format);
    }
    for row in &parsed.rows {
        let _ = row.to_json();
        // A row written back reads as the same fields.
        let fields = row.fields();
        let line = chain::write_record(&fields);
        let again = chain::read_record(&line[..line.len() - 1]);
        assert_eq!(again, Ok(fields), "{}", String::from_utf8_lossy(&line));
    }
}

/// A ledger: the real header, then rows of 23 fields of plausible and edge values.
fn csv_ledger() -> impl Strategy<Value = Vec<u8>> {
    let field = prop_oneof![
        2 => Just(String::new()),
        2 => prop::sample::select(vec![
            "0", "1", "3", "4294967296", "-1", "+1", "01", "1e3", "NaN", "inf", "-0", "0.25",
            "1e309", "continue", "stop", "round", "amend", "waive", "approve", "reject",
            "round-cap", "2026-01-02T03:04:05Z", "max_rounds=5", "a,b", "\"q\"", "x\ny", "\r",
        ])
        .prop_map(String::from),
        2 => "[0-9a-f]{64}",
        1 => any::<String>(),
    ];
    let row = prop::collection::vec(field, 20..26).prop_map(|f| chain::write_record(&f));
    (prop::collection::vec(row, 0..5), any::<bool>(), 0..40usize).prop_map(|(rows, torn, cut)| {
        let mut out = referee::ledger::row::header().into_bytes();
        out.push(b'\n');
        rows.iter().for_each(|r| out.extend_from_slice(r));
        if torn && let Some(last) = rows.last() {
            out.extend_from_slice(&last[..cut.min(last.len())]);
        }
        out
    })
}

/// Lines of a unified diff, with the header and hunk edge cases.
fn diff_text() -> impl Strategy<Value = Vec<u8>> {
    let num = prop::sample::select(vec![
        "0",
        "1",
        "2",
        "3",
        "4294967295",
        "4294967296",
        "-1",
        "",
    ]);
    let name = prop_oneof![
        3 => "[a-z/ ._]{1,16}",
        1 => Just("\"a/\\303\\251\\t\\777\\\"x\"".to_string()),
        1 => Just("/dev/null".to_string()),
    ];
    let line = prop_oneof![
        2 => (name.clone(), name.clone()).prop_map(|(a, b)| format!("diff --git a/{a} b/{b}")),
        1 => name.clone().prop_map(|a| format!("--- a/{a}")),
        1 => name.clone().prop_map(|b| format!("+++ b/{b}")),
        3 => (num.clone(), num.clone(), num.clone(), num, ".{0,8}")
            .prop_map(|(a, b, c, d, s)| format!("@@ -{a},{b} +{c},{d} @@ {s}")),
        4 => ("[-+ ]", ".{0,20}").prop_map(|(m, t)| format!("{m}{t}")),
        1 => prop::sample::select(vec![
            "\\ No newline at end of file", "new file mode 100644", "deleted file mode 100644",
            "GIT binary patch", "Binary files a/x and b/x differ", "rename from a b", "rename to c",
            "copy from \"q\\", "", "\r", "@@ -1 +1 @@",
        ])
        .prop_map(String::from),
    ];
    prop::collection::vec(line, 0..30).prop_map(|l| l.join("\n").into_bytes())
}

/// A contract: known sections and fields with values of every TOML type.
fn contract_toml() -> impl Strategy<Value = Vec<u8>> {
    use toml::Value as T;
    let value = prop_oneof![
        3 => prop::sample::select(vec![
            "l", "claude", "codex", "gemini", "command", "tests", "bug", "nit", "block",
            "explicit", "absent", "30m", "1s", "0s", "10h", "**", "src/**", "[", "HEAD", "",
            "replay", "read-only", "Loop", "a b",
        ])
        .prop_map(|s| T::String(s.to_string())),
        1 => any::<String>().prop_map(T::String),
        2 => prop::sample::select(vec![0i64, 1, 3, 100, 101, -1, i64::MAX, i64::MIN]).prop_map(T::Integer),
        1 => any::<f64>().prop_map(T::Float),
        1 => any::<bool>().prop_map(T::Boolean),
        1 => prop::collection::vec(
            prop_oneof![Just(T::String("**".into())), any::<String>().prop_map(T::String),
                        any::<i64>().prop_map(T::Integer)],
            0..4,
        )
        .prop_map(T::Array),
    ];
    let key = prop::sample::select(vec![
        "loop",
        "max_rounds",
        "severity_floor",
        "scope",
        "closure",
        "base",
        "preset",
        "model",
        "bin",
        "args",
        "env",
        "timeout",
        "command",
        "junit",
        "cwd",
        "allowed_tools",
        "max_turns",
        "sandbox",
        "engine",
        "replay",
        "use_case",
        "what",
        "questions",
        "max_state_bytes",
        "usd",
        "tokens",
        "writer",
        "reviewer",
        "writer_file",
        "reviewer_file",
        "bogus",
    ]);
    let table = prop::collection::vec((key.clone(), value.clone()), 0..6)
        .prop_map(|kv| T::Table(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect()));
    let section = prop::sample::select(vec![
        "budget", "writer", "reviewer", "judge", "prompt", "env", "bogus",
    ]);
    (
        prop::collection::vec((key, value), 0..8),
        prop::collection::vec((section, table), 0..4),
        any::<bool>(),
    )
        .prop_map(|(top, sections, with_loop)| {
            let mut root = toml::Table::new();
            if with_loop {
                root.insert("loop".into(), T::String("l".into()));
            }
            for (k, v) in top {
                root.insert(k.to_string(), v);
            }
            for (k, v) in sections {
                root.insert(k.to_string(), v);
            }
            toml::to_string(&root).unwrap_or_default().into_bytes()
        })
}
