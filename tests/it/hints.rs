//! Hints are data: product code writes no `hint:` into a message; it gives
//! the hint to an error (or to `report::error::with_hints`), and
//! `report::error` alone prints the `hint:` lines. Read from the source.

use std::path::Path;

use crate::layers::{sources, without_tests};

/// The contents of the string literals of `code` (plain, byte and raw),
/// escapes left as written; comments are no code.
fn string_literals(code: &str) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    let mut literals = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '/' if chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if chars.get(i + 1) == Some(&'*') => {
                i += 2;
                while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                    i += 1;
                }
                i += 2;
            }
            // A char literal: `'"'` opens no string.
            '\'' if chars.get(i + 2) == Some(&'\'') => i += 3,
            '\'' if chars.get(i + 1) == Some(&'\\') && chars.get(i + 3) == Some(&'\'') => i += 4,
            'r' if matches!(chars.get(i + 1), Some('"' | '#'))
                && (i == 0 || !chars[i - 1].is_alphanumeric() && chars[i - 1] != '_') =>
            {
                let hashes = chars[i + 1..].iter().take_while(|c| **c == '#').count();
                let open = i + 1 + hashes;
                if chars.get(open) != Some(&'"') {
                    i += 1;
                    continue;
                }
                let close: String = std::iter::once('"')
                    .chain("#".repeat(hashes).chars())
                    .collect();
                let rest: String = chars[open + 1..].iter().collect();
                let end = rest.find(&close).unwrap_or(rest.len());
                literals.push(rest[..end].to_string());
                i = open + 1 + rest[..end].chars().count() + close.chars().count();
            }
            '"' => {
                let mut literal = String::new();
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' {
                        literal.push(chars[i]);
                        i += 1;
                    }
                    if let Some(c) = chars.get(i) {
                        literal.push(*c);
                    }
                    i += 1;
                }
                literals.push(literal);
                i += 1;
            }
            _ => i += 1,
        }
    }
    literals
}

#[test]
fn only_the_renderer_writes_a_hint_line() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let renderer = src.join("report/error.rs");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut glued = Vec::new();
    for path in files.iter().filter(|p| **p != renderer) {
        if path.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let code = without_tests(&std::fs::read_to_string(path).unwrap());
        for literal in string_literals(&code) {
            if literal.contains("hint:") {
                let rel = path.strip_prefix(&src).unwrap();
                glued.push(format!("{}: \"{literal}\"", rel.display()));
            }
        }
    }
    assert!(
        glued.is_empty(),
        "a hint glued into text; give it to the error (`exit::hinted`) or to `report::error::with_hints`:\n{}",
        glued.join("\n")
    );
}

#[test]
fn the_literal_reader_sees_what_the_check_needs() {
    let code = "let a = '\"'; f(\"one hint: x\", r#\"raw \"hint:\" y\"#, b\"z\"); // \"hint: c\"";
    assert_eq!(
        string_literals(code),
        ["one hint: x", "raw \"hint:\" y", "z"].map(String::from)
    );
    // The check itself fails on a glued hint.
    let glued = without_tests("fn f() { anyhow::bail!(\"no loop\\nhint: start one\") }\n");
    assert!(string_literals(&glued).iter().any(|l| l.contains("hint:")));
    // Test modules are not product code.
    let tests = without_tests("#[cfg(test)]\nmod tests {\n    const T: &str = \"hint: x\";\n}\n");
    assert!(string_literals(&tests).is_empty());
}

/// The types that carry a hint as a method `hint(&self)`, named by the
/// `impl` block the method sits in.
fn types_with_a_hint(code: &str) -> Vec<String> {
    let mut types = Vec::new();
    let mut inside: Option<String> = None;
    for line in code.lines() {
        if let Some(rest) = line.strip_prefix("impl ") {
            // `impl Name {`, not a trait impl (`impl Display for Name`).
            let name = rest.trim_end_matches('{').trim();
            inside = (!name.contains(' ')).then(|| name.to_string());
        }
        if line.trim_start().starts_with("pub fn hint(&self)")
            && let Some(name) = &inside
        {
            types.push(name.clone());
        }
    }
    types
}

/// A typed error's hint reaches the person only if the renderer asks that
/// type for it: a new error type with a `hint()` the renderer does not list
/// would lose its hint without a word.
#[test]
fn the_renderer_asks_every_error_type_that_has_a_hint() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let renderer = std::fs::read_to_string(src.join("report/error.rs")).unwrap();
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut found = Vec::new();
    let mut unasked = Vec::new();
    for path in &files {
        let code = without_tests(&std::fs::read_to_string(path).unwrap());
        for name in types_with_a_hint(&code) {
            let asked = renderer
                .lines()
                .any(|l| l.contains("downcast_ref::<") && l.contains(&format!("::{name}>()")));
            if !asked {
                let rel = path.strip_prefix(&src).unwrap();
                unasked.push(format!("{}: {name}", rel.display()));
            }
            found.push(name);
        }
    }
    assert!(
        found.len() >= 8,
        "the reader found too few error types with a hint: {found:?}"
    );
    assert!(
        unasked.is_empty(),
        "report::error::hints_of does not ask these for their hint():\n{}",
        unasked.join("\n")
    );
}
