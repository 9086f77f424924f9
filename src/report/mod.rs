//! Renderers: data in, bytes out; no writing, no clock.

pub mod findings;
pub mod handoff;
pub mod ledger;
pub mod progress;
pub mod round;
pub mod style;
pub mod summary;
pub mod terminal;

/// `word` as one shell word a person can paste into a command: as it is
/// when it is plain, in single quotes otherwise, and as `$'…'` with escapes
/// when it holds a control character (a newline, an escape). Paths and
/// finding ids in suggested commands come from the writer's tree and the
/// reviewer's output: quoted, a name like `$(…)` or `a; b` stays a name.
pub fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+%".contains(c));
    if plain {
        return word.to_string();
    }
    if !word.chars().any(char::is_control) {
        return format!("'{}'", word.replace('\'', r"'\''"));
    }
    let mut out = String::from("$'");
    for c in word.chars() {
        match c {
            '\n' => out.push_str(r"\n"),
            '\t' => out.push_str(r"\t"),
            '\r' => out.push_str(r"\r"),
            '\\' => out.push_str(r"\\"),
            '\'' => out.push_str(r"\'"),
            c if c.is_control() => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!(r"\x{b:02x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// A span of time as people read it: `41s`, `3m07s`, `2h05m`.
pub fn duration(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m{:02}s", secs / 60, secs % 60),
        _ => format!("{}h{:02}m", secs / 3600, secs % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::shell_word;

    /// Each word, pasted into bash as printed, is one argument with the
    /// same bytes and runs nothing.
    #[test]
    fn shell_words_survive_bash_as_one_argument() {
        let words = [
            "src/a.rs",
            "",
            "two words.txt",
            "it's",
            "$(touch pwned)",
            "a; b",
            "back`tick`",
            "new\nline",
            "tab\there",
            "esc\x1b[31mred",
            "quote's\nand\\slash",
            "-starts-with-dash",
            "ünïcode file.md",
        ];
        let dir = tempfile::tempdir().expect("tempdir");
        for word in words {
            let script = format!("printf %s {}", shell_word(word));
            let out = std::process::Command::new("bash")
                .args(["-c", &script])
                .current_dir(dir.path())
                .output()
                .expect("bash");
            assert_eq!(String::from_utf8_lossy(&out.stdout), word, "{script}");
        }
        assert!(!dir.path().join("pwned").exists());
        assert_eq!(shell_word("src/a.rs"), "src/a.rs");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("a\nb"), r"$'a\nb'");
    }
}
