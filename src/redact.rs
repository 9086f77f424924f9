//! Secret redaction for stored evidence: tokens of the well-known shapes,
//! credentials in URLs, headers and command lines, and `NAME=value` /
//! `"name": "value"` pairs whose name says secret. docs/secrets.md lists
//! every rule and what it masks; gitleaks' default rules are the reference.
//! Pure; works on bytes so invalid UTF-8 survives untouched.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::bytes::{Captures, Regex};

/// What a redacted value becomes.
pub const MASK: &str = "[REDACTED]";

/// Tokens with a recognisable shape, masked whole wherever they appear:
/// `(rule id, pattern)`. Each starts with a literal of three bytes or more,
/// so one search skips ahead on all of them at once.
const SHAPES: &[(&str, &str)] = &[
    ("anthropic", r"sk-ant-[A-Za-z0-9_-]{16,}"),
    ("openai", r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    ("github", r"gh[pousr]_[A-Za-z0-9]{30,}"),
    ("github-fine-grained", r"github_pat_[A-Za-z0-9_]{20,}"),
    (
        "gitlab",
        r"gl(?:pat|dt|rt|ptt|cbt|oas|soat|ft|imt|agent|ffct)-[A-Za-z0-9_-]{20,}",
    ),
    ("gitlab-runner", r"GR1348941[A-Za-z0-9_-]{20,}"),
    (
        "aws-access-key-id",
        r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}",
    ),
    ("gcp-api-key", r"AIza[0-9A-Za-z_-]{35}"),
    ("google-oauth-secret", r"GOCSPX-[A-Za-z0-9_-]{24,}"),
    ("google-oauth-token", r"ya29\.[0-9A-Za-z_-]{20,}"),
    ("slack-token", r"xox[abeoprs]-[A-Za-z0-9-]{10,}"),
    ("slack-app-token", r"xapp-[0-9]-[A-Za-z0-9-]{10,}"),
    ("stripe", r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{10,}"),
    ("stripe-webhook", r"whsec_[A-Za-z0-9]{24,}"),
    ("npm", r"npm_[A-Za-z0-9]{36}"),
    ("pypi", r"pypi-AgE[A-Za-z0-9_-]{50,}"),
    ("sendgrid", r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
    ("heroku", r"HRKU-[A-Za-z0-9_-]{40,}"),
    ("digitalocean", r"do[opr]_v1_[a-f0-9]{64}"),
    ("shopify", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    (
        "square",
        r"(?:EAAA[A-Za-z0-9_-]{60}|sq0(?:atp|csp)-[A-Za-z0-9_-]{22,})",
    ),
    ("age", r"AGE-SECRET-KEY-1[0-9A-Z]{58}"),
    ("docker-hub", r"dckr_pat_[A-Za-z0-9_-]{20,}"),
    ("vault", r"hv[sb]\.[A-Za-z0-9_-]{24,}"),
    ("grafana", r"(?:glsa|glc)_[A-Za-z0-9_=+/-]{32,}"),
    ("linear", r"lin_api_[A-Za-z0-9]{40}"),
    ("postman", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}"),
    ("sentry", r"sntry[su]_[A-Za-z0-9_=+/]{40,}"),
    ("new-relic", r"NRAK-[A-Z0-9]{27}"),
    ("atlassian", r"ATATT3[A-Za-z0-9_=-]{100,}"),
];

/// Shapes whose literal start is short or runs into hex: searched on their
/// own, because among the others they make the literal search try far more
/// places (docs/performance.md).
const SHORT_SHAPES: &[(&str, &str)] = &[
    ("twilio", r"SK[0-9a-fA-F]{32}\b"),
    ("mailgun", r"key-[0-9a-f]{32}\b"),
    (
        "jwt",
        r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
    ),
    ("huggingface", r"(?:hf_|api_org_)[A-Za-z0-9]{34,}"),
    ("databricks", r"dapi[a-f0-9]{32}"),
];

/// The shapes as one search: a token starts a word (ASCII word boundaries:
/// the Unicode ones make the fast engines give up on any non-ASCII byte).
fn shapes(table: &[(&str, &str)]) -> String {
    let shapes: Vec<&str> = table.iter().map(|(_, p)| *p).collect();
    format!(r"(?-u:\b)(?:{})", shapes.join("|"))
}

/// Every shape right after a JSON escape (`\nsk_live_…` in a JSON string):
/// there the token follows a letter, so `\b` does not see it start a word.
/// Group 1 is the escape, kept.
fn escaped_shapes() -> String {
    let shapes: Vec<&str> = SHAPES.iter().chain(SHORT_SHAPES).map(|(_, p)| *p).collect();
    format!(r"(?-u)(\\[ntr])(?:{})", shapes.join("|"))
}

/// An Azure AD client secret: no literal prefix, so it has a pass of its own
/// (the search skips ahead on its inner `Q~`).
const AZURE: &str = r"[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}";

/// The password of `scheme://user:password@host` (databases, brokers, HTTP).
const URL_PASSWORD: &str =
    r#"(?-u)\b([A-Za-z][A-Za-z0-9+.-]{1,30}://[^\s:/@'"<>\\]*:)([^\s/@'"<>\\]+)@"#;

/// A PEM private key block, `-----BEGIN … PRIVATE KEY-----` to its end.
const PEM_BEGIN: &str = r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----";
static PEM_END: LazyLock<Regex> =
    LazyLock::new(|| compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"));

/// How far past its header a PEM block's end is looked for.
const PEM_WINDOW: usize = 64 * 1024;

/// When a kept-prefix rule's value is left alone.
#[derive(Clone, Copy)]
enum Check {
    /// Always masked.
    Always,
    /// Masked when it looks like a credential, not a word (`basic
    /// implementation`).
    Random,
    /// A command-line flag: not when its name says it holds no secret
    /// (`--token-file`), nor a variable or the next flag.
    Flag,
}

/// Rules that keep a prefix and mask what follows it:
/// `(rule id, pattern with groups p_<id> and s_<id>, check)`. Words are
/// spelled out in the cases people write them (`authorization`,
/// `Authorization`, `AUTHORIZATION`) rather than matched in any case: a
/// case-insensitive word is hundreds of literals, too many to skip ahead on.
const KEPT: &[(&str, &str, Check)] = &[
    (
        "authorization-header",
        r#"(?P<p_authorization_header>(?:proxy-|Proxy-|PROXY-)?(?:authorization|Authorization|AUTHORIZATION)\\*["']?[ \t]*[:=][ \t]*\\*["']?(?:(?i:bearer|basic|token|digest|negotiate|ntlm|apikey|key)[ \t]+)?)(?P<s_authorization_header>[^\s"'\\,;]{8,})"#,
        Check::Random,
    ),
    (
        "bearer",
        r"(?P<p_bearer>(?:bearer|Bearer|BEARER|basic|Basic|BASIC)\s+)(?P<s_bearer>[A-Za-z0-9._~+/=-]{12,})",
        Check::Random,
    ),
    (
        "netrc",
        r"(?P<p_netrc>login[ \t]+[^\s]+[ \t]+password[ \t]+)(?P<s_netrc>[^\s]+)",
        Check::Always,
    ),
    (
        "slack-webhook",
        r"(?P<p_slack_webhook>hooks\.slack\.com/(?:services|workflows|triggers)/)(?P<s_slack_webhook>[A-Za-z0-9_/+-]{16,})",
        Check::Always,
    ),
    (
        "discord-webhook",
        r"(?P<p_discord_webhook>discord(?:app)?\.com/api/webhooks/[0-9]+/)(?P<s_discord_webhook>[A-Za-z0-9_-]{20,})",
        Check::Always,
    ),
    (
        "azure-sas",
        r"(?P<p_azure_sas>[?&]sig=)(?P<s_azure_sas>[A-Za-z0-9%/+=]{16,})",
        Check::Always,
    ),
    (
        "docker-auth",
        r#"\b(?P<p_docker_auth>auth\\*"[ \t]*:[ \t]*\\*")(?P<s_docker_auth>[A-Za-z0-9+/=]{8,})"#,
        Check::Always,
    ),
];

/// Long command-line flags whose name says secret, apart from [`KEPT`]:
/// their `--` start is too short a literal to search for among the others.
const FLAGS: &[(&str, &str, Check)] = &[(
    "secret-flag",
    r#"(?P<p_secret_flag>--[a-z0-9-]*?(?:password|passwd|passphrase|secret|token|api-?key|access-key|private-key|credentials?)(?P<t_secret_flag>[a-z0-9-]*)(?:=|[ \t]+))(?P<s_secret_flag>"[^"\r\n]*|'[^'\r\n]*|[^\s"']+)"#,
    Check::Flag,
)];

fn alternatives(table: &[(&str, &str, Check)]) -> String {
    let alternatives: Vec<&str> = table.iter().map(|(_, p, _)| *p).collect();
    format!("(?-u){}", alternatives.join("|"))
}

/// Each kept-prefix rule's group numbers in the one search of its table.
struct Kept {
    /// `(prefix group, secret group, flag-tail group, check)` per rule.
    groups: Vec<(usize, usize, Option<usize>, Check)>,
}

impl Kept {
    fn new(re: &Regex, table: &[(&str, &str, Check)]) -> Kept {
        let index = |name: String| re.capture_names().position(|n| n == Some(name.as_str()));
        let groups = table
            .iter()
            .filter_map(|(id, _, check)| {
                let id = id.replace('-', "_");
                Some((
                    index(format!("p_{id}"))?,
                    index(format!("s_{id}"))?,
                    index(format!("t_{id}")),
                    *check,
                ))
            })
            .collect();
        Kept { groups }
    }
}

/// The words that make a name secret, in parts: `api`, `key` is `api_key`,
/// `api-key`, `apikey`, `apiKey`, `ApiKey`, `API_KEY`, `API-Key`.
const SECRET_WORDS: &[&[&str]] = &[
    &["api", "key"],
    &["secret"],
    &["token"],
    &["password"],
    &["passwd"],
    &["passphrase"],
    &["credential"],
    &["private", "key"],
    &["access", "key"],
    &["account", "key"],
    &["shared", "access", "key"],
    &["signing", "key"],
    &["encryption", "key"],
    &["master", "key"],
];

/// A word's spellings: lower, UPPER, Capitalized, camelCase, PascalCase,
/// Capital-first and UPPER-first (`API-Key`), joined by an optional `_`/`-`.
fn spellings(parts: &[&str]) -> Vec<String> {
    #[derive(Clone, Copy)]
    enum Case {
        Lower,
        Upper,
        Capital,
    }
    let spell = |case: Case, p: &str| match case {
        Case::Lower => p.to_string(),
        Case::Upper => p.to_ascii_uppercase(),
        Case::Capital => p
            .get(..1)
            .map(|f| f.to_ascii_uppercase() + p.get(1..).unwrap_or_default())
            .unwrap_or_default(),
    };
    use Case::{Capital, Lower, Upper};
    // (the first part's case, the other parts' case)
    let forms = [
        (Lower, Lower),
        (Upper, Upper),
        (Capital, Capital),
        (Lower, Capital),
        (Capital, Lower),
        (Upper, Capital),
        (Capital, Upper),
    ];
    let mut out: Vec<String> = Vec::new();
    for (first, rest) in forms {
        let spelled: Vec<String> = parts
            .iter()
            .enumerate()
            .map(|(i, p)| spell(if i == 0 { first } else { rest }, p))
            .collect();
        let joined = spelled.join("[_-]?");
        if !out.contains(&joined) {
            out.push(joined);
        }
    }
    out
}

/// `NAME=value`, `NAME: value`, `"name": "value"` (also JSON-escaped inside
/// a JSON string) where the name says secret. Groups: 1 the name, 2 its tail
/// after the secret word, 3 the separator, then the value: 4–5 double-quoted
/// (opening quote, text), 6–7 single-quoted, 8 bare.
fn pairs() -> String {
    let words: Vec<String> = SECRET_WORDS.iter().flat_map(|w| spellings(w)).collect();
    format!(
        // The match starts at the secret word itself (a name's prefix such as
        // `OPENAI_` stays outside it and is kept as is): a literal start lets
        // the search skip ahead instead of trying every position.
        r#"(?-u)((?:{})([A-Za-z0-9_.-]*))(\\*["']?[ \t]*(?::=|=>|=|:)[ \t]*)(?:(\\*")([^"\\\r\n]*)|(\\*')([^'\\\r\n]*)|([^\s"'\\,;&{{}}\[\]=][^\s"'\\,;&{{}}\[\]]*))"#,
        words.join("|")
    )
}

/// The passes, in the order they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pass {
    Keys,
    ShortKeys,
    EscapedKeys,
    Azure,
    Pem,
    Pairs,
    UrlPassword,
    Kept,
    Flags,
}

const PASSES: [Pass; 9] = [
    Pass::Keys,
    Pass::ShortKeys,
    Pass::EscapedKeys,
    Pass::Azure,
    Pass::Pem,
    Pass::Pairs,
    Pass::UrlPassword,
    Pass::Kept,
    Pass::Flags,
];

impl Pass {
    fn pattern(self) -> String {
        match self {
            Pass::Keys => shapes(SHAPES),
            Pass::ShortKeys => shapes(SHORT_SHAPES),
            Pass::EscapedKeys => escaped_shapes(),
            Pass::Azure => AZURE.to_string(),
            Pass::Pem => PEM_BEGIN.to_string(),
            Pass::Pairs => pairs(),
            Pass::UrlPassword => URL_PASSWORD.to_string(),
            Pass::Kept => alternatives(KEPT),
            Pass::Flags => alternatives(FLAGS),
        }
    }
}

/// Every pass compiled, in [`PASSES`] order, with the group numbers of the
/// two kept-prefix passes.
struct Rules {
    passes: [Regex; 9],
    kept: Kept,
    flags: Kept,
}

static RULES: LazyLock<Rules> = LazyLock::new(|| {
    let passes = PASSES.map(|pass| compile(&pass.pattern()));
    let kept = Kept::new(&passes[Pass::Kept as usize], KEPT);
    let flags = Kept::new(&passes[Pass::Flags as usize], FLAGS);
    Rules {
        passes,
        kept,
        flags,
    }
});

/// The patterns above are constants tested below; a failure to compile one
/// is a programming error caught by every test run, never input-dependent.
fn compile(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| unreachable!("a redaction pattern: {e}"))
}

/// `bytes` with every secret replaced by [`MASK`]. Whole tokens first: a
/// pair or header whose value is one is then left with the mask, which no
/// later rule touches.
pub fn redact(bytes: &[u8]) -> Cow<'_, [u8]> {
    let rules = &*RULES;
    let mut out = Cow::Borrowed(bytes);
    for pass in PASSES {
        if let Some(v) = run(rules, pass, &out) {
            out = Cow::Owned(v);
        }
    }
    out
}

/// One pass over `b`: the text with what it matched masked, or `None` when
/// it matched nothing.
fn run(rules: &Rules, pass: Pass, b: &[u8]) -> Option<Vec<u8>> {
    let re = &rules.passes[pass as usize];
    match pass {
        Pass::Keys | Pass::ShortKeys | Pass::Azure => owned(re.replace_all(b, MASK.as_bytes())),
        Pass::EscapedKeys => owned(re.replace_all(b, |c: &Captures<'_>| {
            let mut v = c[1].to_vec();
            v.extend_from_slice(MASK.as_bytes());
            v
        })),
        Pass::Pem => mask_pem(re, b),
        Pass::Pairs => owned(re.replace_all(b, mask_pair)),
        Pass::UrlPassword => owned(re.replace_all(b, |c: &Captures<'_>| {
            let mut v = c[1].to_vec();
            v.extend_from_slice(MASK.as_bytes());
            v.push(b'@');
            v
        })),
        Pass::Kept => owned(re.replace_all(b, |c: &Captures<'_>| mask_kept(&rules.kept, c))),
        Pass::Flags => owned(re.replace_all(b, |c: &Captures<'_>| mask_kept(&rules.flags, c))),
    }
}

fn owned(c: Cow<'_, [u8]>) -> Option<Vec<u8>> {
    match c {
        Cow::Borrowed(_) => None,
        Cow::Owned(v) => Some(v),
    }
}

/// Every PEM private key block masked whole. A block whose end is missing
/// (cut output) loses what follows its header as far as it looks like the
/// key's body.
fn mask_pem(begin: &Regex, bytes: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut last = 0;
    let mut found = false;
    // The next end line, searched for once and kept until a block passes
    // it, so that headers without ends cost one search, not one each.
    let mut next_end: Option<(usize, usize)> = None;
    let mut ends_left = true;
    while let Some(m) = begin.find_at(bytes, last) {
        found = true;
        if ends_left && next_end.is_none_or(|(start, _)| start < m.end()) {
            next_end = PEM_END
                .find_at(bytes, m.end())
                .map(|e| (e.start(), e.end()));
            ends_left = next_end.is_some();
        }
        let end = match next_end.filter(|&(start, _)| start.saturating_sub(m.end()) <= PEM_WINDOW) {
            Some((_, end)) => end,
            None => {
                m.end()
                    + bytes[m.end()..]
                        .iter()
                        .take(PEM_WINDOW)
                        .take_while(|&&b| {
                            b.is_ascii_alphanumeric() || b"+/=\\:,- \t\r\n".contains(&b)
                        })
                        .count()
            }
        };
        out.extend_from_slice(&bytes[last..m.start()]);
        out.extend_from_slice(MASK.as_bytes());
        last = end;
    }
    if !found {
        return None;
    }
    out.extend_from_slice(&bytes[last..]);
    Some(out)
}

fn mask_kept(kept: &Kept, c: &Captures<'_>) -> Vec<u8> {
    let whole = c.get(0).map_or(&b""[..], |m| m.as_bytes());
    let Some((prefix, secret, tail, check)) = kept.groups.iter().find_map(|&(p, s, t, check)| {
        Some((c.get(p)?, c.get(s)?, t.and_then(|t| c.get(t)), check))
    }) else {
        return whole.to_vec();
    };
    let value = secret.as_bytes();
    let keep = match check {
        Check::Always => false,
        Check::Random => !looks_random(value),
        Check::Flag => {
            tail.is_some_and(|t| names_no_secret(t.as_bytes()))
                || value.first().is_some_and(|b| matches!(b, b'-' | b'$'))
        }
    };
    if keep {
        return whole.to_vec();
    }
    let mut v = prefix.as_bytes().to_vec();
    // A quoted flag value keeps its opening quote.
    if let Some(&q) = value.first().filter(|q| matches!(q, b'"' | b'\'')) {
        v.push(q);
    }
    v.extend_from_slice(MASK.as_bytes());
    v
}

fn mask_pair(c: &Captures<'_>) -> Vec<u8> {
    let whole = c.get(0).map_or(&b""[..], |m| m.as_bytes());
    let name = c.get(1).map_or(&b""[..], |m| m.as_bytes());
    let tail = c.get(2).map_or(&b""[..], |m| m.as_bytes());
    let sep = c.get(3).map_or(&b""[..], |m| m.as_bytes());
    let (open, value, bare) = if let Some(v) = c.get(5) {
        (c.get(4), v.as_bytes(), false)
    } else if let Some(v) = c.get(7) {
        (c.get(6), v.as_bytes(), false)
    } else {
        (None, c.get(8).map_or(&b""[..], |m| m.as_bytes()), true)
    };
    let password = name.len() >= 4 && name[..4].eq_ignore_ascii_case(b"pass");
    let colon = sep.contains(&b':') && !sep.contains(&b'=');
    let keep = value.is_empty()
        || names_no_secret(tail)
        || harmless(value, bare)
        // `token:refresh_test` is a finding id, `password.rs:42:` a place;
        // `password:x` is a password.
        || (bare && sep == b":" && (!password || tail.contains(&b'.')))
        || (bare && !password && value.len() < 4)
        // `token: unchecked expiry` is a title; `API_KEY=word` is a setting.
        || (bare && !password && colon && !looks_random(value));
    if keep {
        return whole.to_vec();
    }
    let mut v = name.to_vec();
    v.extend_from_slice(sep);
    if let Some(open) = open {
        v.extend_from_slice(open.as_bytes());
    }
    v.extend_from_slice(MASK.as_bytes());
    v
}

/// What follows a secret word in a name that says the value is no secret:
/// `password_hash`, `token_url`, `secretName`, `tokenizer`, `secretary`.
fn names_no_secret(tail: &[u8]) -> bool {
    const ENGLISH: [&[u8]; 6] = [b"iz", b"is", b"ary", b"ari", b"ive", b"less"];
    const NOT_SECRET: [&str; 58] = [
        "hash",
        "hashed",
        "hashes",
        "digest",
        "id",
        "ids",
        "name",
        "names",
        "file",
        "files",
        "path",
        "paths",
        "dir",
        "url",
        "uri",
        "urls",
        "endpoint",
        "type",
        "types",
        "kind",
        "count",
        "counts",
        "len",
        "length",
        "size",
        "min",
        "max",
        "limit",
        "limits",
        "ttl",
        "expiry",
        "expires",
        "expiresat",
        "expiresin",
        "expiration",
        "timeout",
        "field",
        "fields",
        "label",
        "prompt",
        "hint",
        "policy",
        "pattern",
        "regex",
        "format",
        "header",
        "env",
        "var",
        "required",
        "enabled",
        "usage",
        "used",
        "total",
        "budget",
        "stdin",
        "helper",
        "reset",
        "strength",
    ];
    let lower: Vec<u8> = tail
        .iter()
        .filter(|b| !matches!(b, b'_' | b'-' | b'.'))
        .map(u8::to_ascii_lowercase)
        .collect();
    !lower.is_empty()
        && (ENGLISH
            .iter()
            .any(|e| tail.to_ascii_lowercase().starts_with(e))
            || NOT_SECRET.iter().any(|n| lower == n.as_bytes()))
}

/// Values that are no secret: counts, flags, type names, variables, calls.
fn harmless(value: &[u8], bare: bool) -> bool {
    const WORDS: [&str; 43] = [
        "true",
        "false",
        "null",
        "none",
        "nil",
        "undefined",
        "yes",
        "no",
        "on",
        "off",
        "required",
        "optional",
        "string",
        "str",
        "bool",
        "boolean",
        "number",
        "int",
        "integer",
        "float",
        "char",
        "bytes",
        "u8",
        "u16",
        "u32",
        "u64",
        "u128",
        "usize",
        "i8",
        "i16",
        "i32",
        "i64",
        "i128",
        "isize",
        "f32",
        "f64",
        "any",
        "object",
        "impl",
        "dyn",
        "mut",
        "bearer",
        "basic",
    ];
    const RECEIVERS: [&str; 12] = [
        "self.",
        "this.",
        "process.env",
        "os.environ",
        "os.getenv",
        "env::",
        "std::env",
        "env.",
        "secrets.",
        "vars.",
        "config.",
        "settings.",
    ];
    let lower = value.to_ascii_lowercase();
    value.iter().all(u8::is_ascii_digit)
        || value == MASK.as_bytes()
        || value.first().is_some_and(|b| matches!(b, b'$' | b'%'))
        || value.starts_with(b"{{")
        || WORDS.iter().any(|w| lower == w.as_bytes())
        || RECEIVERS.iter().any(|r| lower.starts_with(r.as_bytes()))
        || (bare && is_code(value))
}

/// `hash(pw)`, `Option<String>`: an identifier path opening a call or a
/// generic type.
fn is_code(value: &[u8]) -> bool {
    let Some(open) = value.iter().position(|b| matches!(b, b'(' | b'<')) else {
        return false;
    };
    let ident = &value[..open];
    ident
        .first()
        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        && ident
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':'))
}

/// A credential, not a word: anything but one lowercase (or capitalised)
/// word of English length with a vowel in it.
fn looks_random(value: &[u8]) -> bool {
    let word = value.len() <= 24
        && value.iter().all(u8::is_ascii_alphabetic)
        && !value.iter().skip(1).any(u8::is_ascii_uppercase)
        && value.iter().any(|b| {
            matches!(
                b.to_ascii_lowercase(),
                b'a' | b'e' | b'i' | b'o' | b'u' | b'y'
            )
        });
    !word
}

/// [`redact`] on text.
pub fn redact_str(text: &str) -> String {
    match redact(text.as_bytes()) {
        Cow::Borrowed(_) => text.to_string(),
        Cow::Owned(v) => String::from_utf8(v)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
    }
}

/// [`redact`] in place: no allocation when there is nothing to mask.
pub fn redact_string(text: &mut String) {
    if let Cow::Owned(v) = redact(text.as_bytes()) {
        *text = String::from_utf8(v)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    }
}

#[cfg(test)]
mod tests;
