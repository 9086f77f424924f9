//! Text for people at a terminal: control characters made visible in caret
//! notation, as git and `cat -v` show them, so that a finding's title, body
//! or path cannot clear the screen, move the cursor, retitle the window or
//! hide text. Pure.

use std::borrow::Cow;

/// `text` with every control character but `\n` and `\t` written visibly:
/// C0 controls as `^@`…`^_` (ESC is `^[`, BEL `^G`, CR `^M`), DEL as `^?`,
/// and the C1 controls U+0080–U+009F as `M-^@`…`M-^_` (CSI, U+009B, is
/// `M-^[`).
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if !is_control(c) {
            out.push(c);
            continue;
        }
        let code = u32::from(c);
        let caret = |out: &mut String, low: u32| {
            out.push('^');
            out.push(char::from_u32(low ^ 0x40).unwrap_or('?'));
        };
        match code {
            0x7f => out.push_str("^?"),
            0x80..=0x9f => {
                out.push_str("M-");
                caret(&mut out, code - 0x80);
            }
            _ => caret(&mut out, code),
        }
    }
    Cow::Owned(out)
}

fn is_control(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_become_caret_notation() {
        let table = [
            ("\u{1b}[2J\u{1b}]0;pwned\u{7}", "^[[2J^[]0;pwned^G"),
            ("a\rb", "a^Mb"),
            ("nul\u{0}", "nul^@"),
            ("del\u{7f}", "del^?"),
            ("csi\u{9b}31m", "csiM-^[31m"),
            ("nel\u{85}", "nelM-^E"),
            ("us\u{1f}", "us^_"),
        ];
        for (raw, shown) in table {
            assert_eq!(escape(raw), shown, "{raw:?}");
        }
    }

    #[test]
    fn text_newlines_and_tabs_pass_untouched() {
        for text in ["plain", "two\nlines\tand a tab", "é ü 日本 · ✓", ""] {
            assert!(matches!(escape(text), Cow::Borrowed(_)), "{text:?}");
        }
        // U+00A0 and later are printable, not C1.
        assert_eq!(escape("\u{a0}x"), "\u{a0}x");
    }
}
