//! Text as people read it, for every floor: shell words, one-line text,
//! plurals and spans of time. Pure; imports nothing of the crate.

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

/// `text` on one line: every control character (a newline, an escape)
/// becomes a space, and the ends are trimmed. What goes into a ledger
/// field, a reason, a one-line summary.
pub fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .trim()
        .to_string()
}

/// `1 round`, `3 rounds`.
pub fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A span of time as people read it: `41s`, `3m07s`, `2h05m`.
pub fn duration(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m{:02}s", secs / 60, secs % 60),
        _ => format!("{}h{:02}m", secs / 3600, secs % 3600 / 60),
    }
}

/// A timeout as a contract spells it: `1.5s` is `1500ms`, `2m`, `30m`, `45s`.
pub fn timeout(d: std::time::Duration) -> String {
    let secs = d.as_secs();
    if secs == 0 {
        format!("{}ms", d.as_millis())
    } else if secs.is_multiple_of(60) {
        format!("{}m", secs / 60)
    } else {
        format!("{secs}s")
    }
}

#[cfg(test)]
mod tests {
    use super::{one_line, shell_word};

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
        assert_eq!(
            shell_word("/opt/my tools/referee"),
            "'/opt/my tools/referee'"
        );
        assert_eq!(shell_word("it's"), r"'it'\''s'");
    }

    #[test]
    fn one_line_removes_breaks() {
        assert_eq!(one_line(" a\nb\r\tc "), "a b  c");
    }
}
