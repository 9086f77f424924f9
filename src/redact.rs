//! Secret redaction for stored evidence: API keys of the well-known shapes,
//! bearer tokens, and `NAME=value` / `"name": "value"` pairs whose name says
//! secret. Pure; works on bytes so invalid UTF-8 survives untouched.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::bytes::{Captures, Regex};

/// What a redacted value becomes.
pub const MASK: &str = "[REDACTED]";

/// Keys with a recognisable shape, redacted wherever they appear.
static KEYS: LazyLock<Regex> = LazyLock::new(|| {
    let shapes = [
        r"sk-ant-[A-Za-z0-9_-]{16,}",
        r"sk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,}",
        r"gh[pousr]_[A-Za-z0-9]{30,}",
        r"github_pat_[A-Za-z0-9_]{20,}",
        r"glpat-[A-Za-z0-9_-]{20,}",
        r"AKIA[0-9A-Z]{16}",
        r"xox[abprs]-[A-Za-z0-9-]{10,}",
        r"AIza[0-9A-Za-z_-]{35}",
    ];
    let pem = r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----";
    Regex::new(&format!(r"\b(?:{})|{pem}", shapes.join("|"))).unwrap_or_else(|_| never())
});

/// `Bearer <token>` and `Basic <credentials>` in headers and logs.
static BEARER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{12,}").unwrap_or_else(|_| never())
});

/// `NAME=value`, `NAME: value`, `"name": "value"` where the name says secret.
static PAIRS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        // The match starts at the secret word itself (a name's prefix such as
        // `OPENAI_` stays outside it and is kept as is): a literal start lets
        // the search skip ahead instead of trying every position.
        r#"(?i)((?:api[_-]?key|secret|token|passw(?:or)?d|credential|private[_-]?key|access[_-]?key)[a-z0-9_.-]*)(["']?[ \t]*(?:=|:[ \t]|:["'])[ \t]*["']?)([^\s"',;&}{\]\[]{4,})"#,
    )
    .unwrap_or_else(|_| never())
});

/// The patterns above are constants tested below; a failure to compile one
/// is a programming error caught by every test run, never input-dependent.
fn never() -> Regex {
    unreachable!("a redaction pattern failed to compile")
}

/// Whether `bytes` may hold a secret at all: one cheap pass that spares
/// most short text (titles, notes) the regular expressions. Every pattern
/// needs a `=`, `:`, `-` or `_`, or starts with `AKIA`, `AIza`, `bearer` or
/// `basic`.
fn may_hold_secret(bytes: &[u8]) -> bool {
    bytes.iter().enumerate().any(|(i, &b)| match b {
        b'=' | b':' | b'-' | b'_' => true,
        b'A' | b'a' | b'B' | b'b' => {
            let rest = &bytes[i..];
            [&b"akia"[..], b"aiza", b"bearer", b"basic"]
                .iter()
                .any(|n| rest.len() >= n.len() && rest[..n.len()].eq_ignore_ascii_case(n))
        }
        _ => false,
    })
}

/// `bytes` with every secret replaced by [`MASK`].
pub fn redact(bytes: &[u8]) -> Cow<'_, [u8]> {
    // Short text (titles, notes) is checked cheaply first; long text goes
    // straight to the expressions, which skip ahead on their own literals.
    if bytes.len() < 4096 && !may_hold_secret(bytes) {
        return Cow::Borrowed(bytes);
    }
    let mut out = Cow::Borrowed(bytes);
    if let Cow::Owned(v) = KEYS.replace_all(&out, MASK.as_bytes()) {
        out = Cow::Owned(v);
    }
    if let Cow::Owned(v) = BEARER.replace_all(&out, |c: &Captures<'_>| {
        let mut v = c[1].to_vec();
        v.extend_from_slice(&c[2]);
        v.extend_from_slice(MASK.as_bytes());
        v
    }) {
        out = Cow::Owned(v);
    }
    if let Cow::Owned(v) = PAIRS.replace_all(&out, |c: &Captures<'_>| {
        let value = &c[3];
        // Counts (`max_tokens: 4096`), flags and the mask itself are not secrets.
        let harmless = value.iter().all(u8::is_ascii_digit)
            || [
                &b"true"[..],
                b"false",
                b"null",
                b"none",
                b"bearer",
                b"basic",
                MASK.as_bytes(),
            ]
            .iter()
            .any(|w| value.eq_ignore_ascii_case(w));
        let mut v = c[1].to_vec();
        v.extend_from_slice(&c[2]);
        v.extend_from_slice(if harmless { value } else { MASK.as_bytes() });
        v
    }) {
        out = Cow::Owned(v);
    }
    out
}

/// [`redact`] on text.
pub fn redact_str(text: &str) -> String {
    String::from_utf8_lossy(&redact(text.as_bytes())).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(text: &str) -> String {
        redact_str(text)
    }

    #[test]
    fn known_key_shapes_are_masked() {
        for key in [
            "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345",
            "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX",
            "ghp_0123456789abcdefghijklmnopqrstuvwxyz",
            "github_pat_11ABCDEFG0123456789_abcdefghij",
            "AKIAIOSFODNN7EXAMPLE",
            "xoxb-123456789012-abcdef",
            "AIzaSyA-0123456789abcdefghijklmnopqrstu",
        ] {
            let out = r(&format!("using {key} now"));
            assert_eq!(out, format!("using {MASK} now"), "{key}");
        }
    }

    #[test]
    fn bearer_tokens_keep_their_scheme() {
        assert_eq!(
            r("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc.def"),
            format!("Authorization: Bearer {MASK}")
        );
    }

    #[test]
    fn secret_named_pairs_are_masked_in_env_yaml_and_json() {
        assert_eq!(
            r("OPENAI_API_KEY=abc123xyz"),
            format!("OPENAI_API_KEY={MASK}")
        );
        assert_eq!(r("db_password: hunter22"), format!("db_password: {MASK}"));
        assert_eq!(
            r(r#"{"client_secret": "s3cr3t-value", "x": 1}"#),
            format!(r#"{{"client_secret": "{MASK}", "x": 1}}"#)
        );
        assert_eq!(
            r("GITHUB_TOKEN='abcd1234'"),
            format!("GITHUB_TOKEN='{MASK}'")
        );
    }

    #[test]
    fn counts_and_plain_text_are_left_alone() {
        for text in [
            r#"{"input_tokens": 1200, "output_tokens": 37}"#,
            "max_tokens: 4096",
            "the token expiry check is off by one",
            "auth_enabled = true",
            "fn check(token: &str)",
            "auth:expiry_boundary and token:refresh_test",
        ] {
            assert_eq!(r(text), text);
        }
    }

    #[test]
    fn invalid_utf8_survives() {
        let bytes = b"\xff\xfe API_KEY=abcdefgh \xff";
        let out = redact(bytes);
        assert_eq!(&out[..], &b"\xff\xfe API_KEY=[REDACTED] \xff"[..]);
    }

    #[test]
    fn private_keys_are_masked_whole() {
        let pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY-----";
        assert_eq!(r(pem), MASK);
    }
}
