//! Every `referee` command line shown in the docs, the README and the skills
//! parses with this build's command line: a renamed flag or subcommand breaks
//! this test, not a reader's copy-paste. (The outputs shown are real runs;
//! the scenarios behind them are mirrored by the other tests.)

use std::path::{Path, PathBuf};

use clap::{CommandFactory, Parser};
use referee::cmd::cli::Cli;

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            markdown_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

/// Splits a shell line into words: quotes group, and the command ends at the
/// first operator (`|`, `;`, `&&`, `>`, `<`) or comment.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => {
                            if let Some(n) = chars.next() {
                                word.push(n);
                            }
                        }
                        _ => word.push(q),
                    }
                }
            }
            ' ' | '\t' => {
                if in_word {
                    out.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            // `<name>` is a placeholder, not a redirection.
            '<' if {
                let rest: String = chars.clone().take_while(|&c| c != '>').collect();
                !rest.is_empty()
                    && rest
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_-".contains(c))
                    && chars.clone().nth(rest.len()) == Some('>')
            } =>
            {
                in_word = true;
                word.push('<');
                for q in chars.by_ref() {
                    word.push(q);
                    if q == '>' {
                        break;
                    }
                }
            }
            '>' | '<' => {
                // `2>&1`: the digits named a file descriptor.
                if in_word && word.chars().all(|c| c.is_ascii_digit()) {
                    word.clear();
                    in_word = false;
                }
                break;
            }
            '|' | ';' | '&' => break,
            '#' if !in_word => break,
            _ => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        out.push(word);
    }
    out
}

/// The `referee …` command lines of a Markdown file's code blocks.
fn commands(text: &str) -> Vec<(usize, Vec<String>, bool)> {
    let subcommands: Vec<String> = Cli::command()
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    let mut out = Vec::new();
    let mut in_code = false;
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if !in_code {
            continue;
        }
        // Synopses with optional parts and placeholders for alternatives are
        // not commands.
        if line.contains('[') || line.contains('…') || line.contains("...") || line.contains("$(")
        {
            continue;
        }
        let Some(at) = line.find("referee ") else {
            continue;
        };
        let before = line[..at].trim();
        let starts_command = before.is_empty()
            || before == "$"
            || before.ends_with('|')
            || before.ends_with("&&")
            || before.ends_with(';')
            || before.ends_with("run:")
            || before.ends_with('-');
        if !starts_command {
            continue;
        }
        let mut argv = words(&line[at..]);
        let Some(first) = argv.get(1) else {
            continue;
        };
        if !(first.starts_with('-') || subcommands.contains(first)) {
            continue;
        }
        for w in argv.iter_mut() {
            match w.as_str() {
                "N" => *w = "5".into(),
                "X" => *w = "1.5".into(),
                _ => {}
            }
        }
        // A command shown failing on purpose is followed by its error.
        let fails = text
            .lines()
            .nth(n + 1)
            .is_some_and(|next| next.starts_with("error:"));
        out.push((n + 1, argv, fails));
    }
    out
}

#[test]
fn every_documented_command_line_parses() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    markdown_files(&root.join("docs"), &mut files);
    markdown_files(&root.join("skills"), &mut files);
    files.sort();
    let mut checked = 0;
    let mut broken = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (line, argv, shown_failing) in commands(&text) {
            checked += 1;
            if let Err(e) = Cli::try_parse_from(&argv) {
                if shown_failing {
                    continue;
                }
                use clap::error::ErrorKind::{DisplayHelp, DisplayVersion};
                if !matches!(e.kind(), DisplayHelp | DisplayVersion) {
                    broken.push(format!(
                        "{}:{line}: `{}`: {}",
                        file.strip_prefix(&root).unwrap_or(file).display(),
                        argv.join(" "),
                        e.to_string().lines().next().unwrap_or_default()
                    ));
                }
            }
        }
    }
    assert!(
        checked > 150,
        "only {checked} command lines found: is the extraction broken?"
    );
    assert!(
        broken.is_empty(),
        "{} of {checked} documented commands do not parse:\n{}",
        broken.len(),
        broken.join("\n")
    );
}

#[test]
fn the_word_splitter_keeps_quotes_and_stops_at_operators() {
    assert_eq!(
        words(r#"referee waive F1 --by ann --reason "accepted risk" | tee x # note"#),
        [
            "referee",
            "waive",
            "F1",
            "--by",
            "ann",
            "--reason",
            "accepted risk"
        ]
    );
    assert_eq!(
        words("referee init --scope 'src/**'"),
        ["referee", "init", "--scope", "src/**"]
    );
}

/// What a person installing referee reads first agrees with Cargo.toml: the
/// README installs from the `repository` URL (or names none while there is
/// none), the license files are there,
/// and the Rust the README asks for is the `rust-version`.
#[test]
fn the_package_metadata_agrees_with_the_readme() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let manifest: toml::Table =
        toml::from_str(&std::fs::read_to_string(root.join("Cargo.toml")).unwrap()).unwrap();
    let package = manifest["package"].as_table().unwrap();
    let field = |name: &str| {
        package
            .get(name)
            .and_then(|v| v.as_str())
            .unwrap_or_else(|| panic!("Cargo.toml has no `package.{name}`"))
            .to_string()
    };
    assert!(!field("description").is_empty());
    assert_eq!(field("license"), "MIT OR Apache-2.0");
    for file in ["LICENSE-MIT", "LICENSE-APACHE"] {
        assert!(root.join(file).is_file(), "{file}");
    }
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    // No placeholder URL: a `repository` is a real URL the README installs
    // from, and until there is one the README names none.
    match package.get("repository").and_then(|v| v.as_str()) {
        Some(repository) => {
            assert!(repository.starts_with("https://"), "{repository}");
            assert!(
                readme.contains(&format!(
                    "cargo install --locked --git {repository} referee"
                )),
                "the README installs from another URL than `repository` ({repository})"
            );
        }
        None => assert!(
            readme.contains("cargo install --locked --git \"$URL\" referee"),
            "the README's install from git"
        ),
    }
    assert!(
        !readme.contains("git URL>"),
        "a placeholder URL in the README"
    );
    let rust = field("rust-version");
    assert!(
        readme.contains(&format!("It needs Rust {rust} or later")),
        "the README asks for another Rust than `rust-version` ({rust})"
    );
    // Edition 2024 needs 1.85 at least.
    let minor: u32 = rust
        .strip_prefix("1.")
        .and_then(|m| m.split('.').next())
        .and_then(|m| m.parse().ok())
        .unwrap_or_else(|| panic!("rust-version `{rust}`"));
    assert!(minor >= 85, "{rust}");
}
