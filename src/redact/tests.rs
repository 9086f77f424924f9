use super::*;

fn r(text: &str) -> String {
    redact_str(text)
}

/// `n` characters drawn in turn from `set`: a token of the right shape,
/// built at run time so that no secret scanner takes this file for a leak.
fn fill(set: &str, n: usize) -> String {
    set.chars().cycle().skip(7).step_by(3).take(n).collect()
}

const ALNUM: &str = "aB3dE5gH7jK9mN1pQ2sT4vW6yZ8cF0";
const HEX: &str = "0123456789abcdef";
const UPPER: &str = "ABCDEFGHJKLMNPQRSTUVWXYZ234567";

/// One sample per shape rule, keyed by the rule's id.
fn samples() -> Vec<(&'static str, String)> {
    vec![
        ("anthropic", format!("sk-ant-api03-{}", fill(ALNUM, 40))),
        ("openai", format!("sk-proj-{}", fill(ALNUM, 40))),
        ("github", format!("ghp_{}", fill(ALNUM, 36))),
        (
            "github-fine-grained",
            format!("github_pat_11{}", fill(ALNUM, 30)),
        ),
        ("gitlab", format!("glpat-{}", fill(ALNUM, 20))),
        ("gitlab-runner", format!("GR1348941{}", fill(ALNUM, 20))),
        ("aws-access-key-id", format!("AKIA{}", fill(UPPER, 16))),
        ("gcp-api-key", format!("AIza{}", fill(ALNUM, 35))),
        ("google-oauth-secret", format!("GOCSPX-{}", fill(ALNUM, 28))),
        ("google-oauth-token", format!("ya29.{}", fill(ALNUM, 60))),
        (
            "slack-token",
            format!("xoxb-1234567890-{}", fill(ALNUM, 24)),
        ),
        ("slack-app-token", format!("xapp-1-A0{}", fill(ALNUM, 30))),
        ("stripe", format!("sk_live_{}", fill(ALNUM, 24))),
        ("stripe-webhook", format!("whsec_{}", fill(ALNUM, 32))),
        (
            "jwt",
            format!(
                "eyJhbGciOiJIUzI1NiJ9.eyJ{}.{}",
                fill(ALNUM, 20),
                fill(ALNUM, 43)
            ),
        ),
        ("npm", format!("npm_{}", fill(ALNUM, 36))),
        ("pypi", format!("pypi-AgEIcHlwaS5vcmc{}", fill(ALNUM, 60))),
        (
            "sendgrid",
            format!("SG.{}.{}", fill(ALNUM, 22), fill(ALNUM, 43)),
        ),
        ("twilio", format!("SK{}", fill(HEX, 32))),
        ("mailgun", format!("key-{}", fill(HEX, 32))),
        ("heroku", format!("HRKU-AA{}", fill(ALNUM, 58))),
        ("digitalocean", format!("dop_v1_{}", fill(HEX, 64))),
        ("huggingface", format!("hf_{}", fill(ALNUM, 34))),
        ("shopify", format!("shpat_{}", fill(HEX, 32))),
        ("square", format!("sq0atp-{}", fill(ALNUM, 22))),
        ("databricks", format!("dapi{}", fill(HEX, 32))),
        ("age", format!("AGE-SECRET-KEY-1{}", fill(UPPER, 58))),
        ("docker-hub", format!("dckr_pat_{}", fill(ALNUM, 27))),
        ("vault", format!("hvs.{}", fill(ALNUM, 90))),
        (
            "grafana",
            format!("glsa_{}_{}", fill(ALNUM, 32), fill(HEX, 8)),
        ),
        ("linear", format!("lin_api_{}", fill(ALNUM, 40))),
        (
            "postman",
            format!("PMAK-{}-{}", fill(HEX, 24), fill(HEX, 34)),
        ),
        ("sentry", format!("sntrys_{}", fill(ALNUM, 60))),
        ("new-relic", format!("NRAK-{}", fill(UPPER, 27))),
        ("atlassian", format!("ATATT3{}", fill(ALNUM, 180))),
    ]
}

#[test]
fn every_shape_rule_has_a_sample_and_masks_it_whole() {
    let samples = samples();
    for (id, _) in SHAPES.iter().chain(SHORT_SHAPES) {
        assert!(samples.iter().any(|(s, _)| s == id), "no sample for `{id}`");
    }
    for (id, key) in samples {
        for text in [
            format!("using {key} now"),
            format!("\"{key}\""),
            format!("KEY={key}\n"),
        ] {
            let out = r(&text);
            assert_eq!(out, text.replace(&key, MASK), "{id}: {text}");
        }
    }
}

#[test]
fn the_docs_list_every_rule() {
    let docs = include_str!("../../docs/secrets.md");
    let ids = SHAPES
        .iter()
        .chain(SHORT_SHAPES)
        .map(|(id, _)| *id)
        .chain(KEPT.iter().chain(FLAGS).map(|(id, _, _)| *id))
        .chain([
            "azure-ad-client-secret",
            "private-key",
            "url-password",
            "secret-pair",
        ]);
    for id in ids {
        assert!(
            docs.contains(&format!("`{id}`")),
            "docs/secrets.md lacks `{id}`"
        );
    }
    assert_eq!(
        RULES.kept.groups.len(),
        KEPT.len(),
        "a kept rule lost its groups"
    );
    assert_eq!(
        RULES.flags.groups.len(),
        FLAGS.len(),
        "a flag rule lost its groups"
    );
}

#[test]
fn every_sample_is_masked_wherever_it_is_written() {
    // The places secrets are written, each of which another rule reads
    // first: the token must not survive whichever rule takes it.
    for (id, key) in samples() {
        for text in [
            key.clone(),
            format!("see {key} here"),
            format!("{{\"msg\": \"line\\n{key}\"}}"),
            format!("export API_KEY={key}"),
            format!("\"client_secret\": \"{key}\""),
            format!("Authorization: Bearer {key}"),
            format!("postgres://admin:{key}@db:5432/app"),
            format!("tool --api-key {key} --verbose"),
            format!("https://hooks.slack.com/services/{key}"),
            format!("-----BEGIN PRIVATE KEY-----\n{key}\n-----END PRIVATE KEY-----"),
        ] {
            let out = r(&text);
            assert!(!out.contains(&key), "`{id}` survived in {text:?}: {out:?}");
            assert!(out.contains(MASK), "{text:?}: {out:?}");
        }
    }
}

#[test]
fn azure_ad_client_secrets_are_masked() {
    let secret = format!("abc8Q~{}", fill(ALNUM, 34));
    assert_eq!(
        r(&format!("secret {secret} here")),
        format!("secret {MASK} here")
    );
}

#[test]
fn bearer_tokens_keep_their_scheme() {
    assert_eq!(
        r("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc.def"),
        format!("Authorization: Bearer {MASK}")
    );
    assert_eq!(
        r("curl -H 'authorization: token 0a1b2c3d4e5f6a7b8c9d'"),
        format!("curl -H 'authorization: token {MASK}'")
    );
    assert_eq!(
        r("Authorization: Basic dXNlcjpwYXNzd29yZA=="),
        format!("Authorization: Basic {MASK}")
    );
    assert_eq!(
        r(r#"{"Proxy-Authorization": "Negotiate YIIGhgYGKwYBBQUC"}"#),
        format!(r#"{{"Proxy-Authorization": "Negotiate {MASK}"}}"#)
    );
    assert_eq!(
        r("sent Bearer AbCdEf0123456789xyz"),
        format!("sent Bearer {MASK}")
    );
}

#[test]
fn passwords_in_urls_are_masked_and_the_rest_kept() {
    for (url, kept) in [
        ("postgres://app:hunter2@db:5432/app", "postgres://app:"),
        ("postgresql://u:p%40ss@h/db", "postgresql://u:"),
        ("mysql://root:s3cret!@127.0.0.1/x", "mysql://root:"),
        (
            "mongodb+srv://admin:Pa55w0rd@cluster0.x.mongodb.net/db",
            "mongodb+srv://admin:",
        ),
        ("redis://:authpass@cache:6379/0", "redis://:"),
        ("amqps://guest:guestpass@rabbit/vhost", "amqps://guest:"),
        ("https://user:tok3n@example.com/repo.git", "https://user:"),
    ] {
        let out = r(&format!("url {url} end"));
        assert!(
            out.starts_with(&format!("url {kept}{MASK}@")),
            "{url}: {out}"
        );
        assert!(!out.contains("hunter2") && !out.contains("Pa55"), "{out}");
    }
}

#[test]
fn secret_named_pairs_are_masked_in_env_yaml_and_json() {
    let table = [
        ("OPENAI_API_KEY=abc123xyz", format!("OPENAI_API_KEY={MASK}")),
        ("db_password: hunter22", format!("db_password: {MASK}")),
        ("password:x", format!("password:{MASK}")),
        ("password:hunter2 next", format!("password:{MASK} next")),
        (
            r#"{"client_secret": "s3cr3t-value", "x": 1}"#,
            format!(r#"{{"client_secret": "{MASK}", "x": 1}}"#),
        ),
        (
            r#"{"token":"abc123def"}"#,
            format!(r#"{{"token":"{MASK}"}}"#),
        ),
        ("GITHUB_TOKEN='abcd1234'", format!("GITHUB_TOKEN='{MASK}'")),
        (
            r#"password = "a long passphrase""#,
            format!(r#"password = "{MASK}""#),
        ),
        (
            "secret: 'with spaces and, commas'",
            format!("secret: '{MASK}'"),
        ),
        (
            r#"'password' => 'rails-pass'"#,
            format!("'password' => '{MASK}'"),
        ),
        (r#"token := "go-token-1""#, format!(r#"token := "{MASK}""#)),
        (
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=bXlrZXk+/==;EndpointSuffix=core",
            format!(
                "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={MASK};EndpointSuffix=core"
            ),
        ),
        (
            "Endpoint=sb://x/;SharedAccessKeyName=root;SharedAccessKey=c2VjcmV0a2V5",
            format!("Endpoint=sb://x/;SharedAccessKeyName=root;SharedAccessKey={MASK}"),
        ),
        ("secretKey: abc123def", format!("secretKey: {MASK}")),
        ("API_KEY=plainword", format!("API_KEY={MASK}")),
        ("password: correcthorse", format!("password: {MASK}")),
        ("passphrase=correct-horse", format!("passphrase={MASK}")),
    ];
    for (text, want) in table {
        assert_eq!(r(text), want, "{text}");
    }
}

#[test]
fn json_escaped_pairs_inside_json_strings_are_masked() {
    let inner = r#"{"api_key": "abc123secret", "password": "p w d"}"#;
    let outer = serde_json::json!({ "body": inner }).to_string();
    assert!(
        outer.contains(r#"\"api_key\": \"abc123secret\""#),
        "{outer}"
    );
    let out = r(&outer);
    assert!(
        !out.contains("abc123secret") && !out.contains("p w d"),
        "{out}"
    );
    // Still JSON, and the inner document still reads.
    let value: serde_json::Value = serde_json::from_str(&out).unwrap();
    let body = value["body"].as_str().unwrap();
    let inner: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(inner["api_key"], MASK);
    // Twice escaped, as a JSON string inside a JSON string inside JSON.
    let twice = serde_json::json!({ "text": outer }).to_string();
    assert!(!r(&twice).contains("abc123secret"));
}

#[test]
fn secret_flags_and_netrc_are_masked() {
    let table = [
        (
            "mysql --password hunter2 db",
            format!("mysql --password {MASK} db"),
        ),
        ("cli --password=hunter2", format!("cli --password={MASK}")),
        (
            "deploy --api-key 'k e y' --x",
            format!("deploy --api-key '{MASK}' --x"),
        ),
        (
            "gh --auth-token=gho_short --v",
            format!("gh --auth-token={MASK} --v"),
        ),
        (
            "machine api.example.com login me password pa55word",
            format!("machine api.example.com login me password {MASK}"),
        ),
    ];
    for (text, want) in table {
        assert_eq!(r(text), want, "{text}");
    }
}

#[test]
fn webhooks_sas_and_docker_auths_are_masked() {
    let hook = format!(
        "https://hooks.slack.com/services/T0ABCDEFG/B0ABCDEFG/{}",
        fill(ALNUM, 24)
    );
    assert_eq!(r(&hook), format!("https://hooks.slack.com/services/{MASK}"));
    let discord = format!(
        "https://discord.com/api/webhooks/123456789012345678/{}",
        fill(ALNUM, 68)
    );
    assert_eq!(
        r(&discord),
        format!("https://discord.com/api/webhooks/123456789012345678/{MASK}")
    );
    assert_eq!(
        r("https://a.blob.core.windows.net/c?sv=2022&sig=AbC%2Fdef0123456789xyz%3D&se=1"),
        format!("https://a.blob.core.windows.net/c?sv=2022&sig={MASK}&se=1")
    );
    assert_eq!(
        r(r#"{"auths": {"ghcr.io": {"auth": "dXNlcjpwYXNzd29yZA=="}}}"#),
        format!(r#"{{"auths": {{"ghcr.io": {{"auth": "{MASK}"}}}}}}"#)
    );
}

#[test]
fn private_keys_are_masked_whole() {
    let pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY-----";
    assert_eq!(r(pem), MASK);
    let pkcs8 = format!(
        "key:\n-----BEGIN PRIVATE KEY-----\nMIIE{}\n-----END PRIVATE KEY-----\nafter",
        fill(ALNUM, 64)
    );
    assert_eq!(r(&pkcs8), format!("key:\n{MASK}\nafter"));
    let escaped = r#"{"k": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE\n-----END OPENSSH PRIVATE KEY-----\n"}"#;
    assert_eq!(r(escaped), format!(r#"{{"k": "{MASK}\n"}}"#));
    let pgp =
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQdGBF\n-----END PGP PRIVATE KEY BLOCK-----";
    assert_eq!(r(pgp), MASK);
    // Cut output: no end line; the body goes with the header.
    let cut = "log: -----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBk+/x=\nMore\" then";
    assert_eq!(r(cut), format!("log: {MASK}\" then"));
}

#[test]
fn secret_names_match_in_the_cases_people_write() {
    for name in [
        "api_key",
        "API_KEY",
        "apiKey",
        "ApiKey",
        "X-API-Key",
        "x-api-key",
        "apikey",
        "APIKEY",
        "Password",
        "PASSWORD",
        "dbPassword",
        "clientSecret",
        "CLIENT_SECRET",
        "accessToken",
        "AccessToken",
        "aws_secret_access_key",
        "AWS_SECRET_ACCESS_KEY",
        "privateKey",
        "PRIVATE_KEY",
        "AccountKey",
        "SharedAccessKey",
        "signingKey",
    ] {
        assert_eq!(
            r(&format!("{name}=value-1234")),
            format!("{name}={MASK}"),
            "{name}"
        );
    }
}

#[test]
fn ordinary_text_is_left_alone() {
    for text in [
        r#"{"input_tokens": 1200, "output_tokens": 37}"#,
        "max_tokens: 4096",
        "the token expiry check is off by one",
        "token: unchecked expiry",
        r#"{"title": "secret: stored in plain text"}"#,
        "auth_enabled = true",
        "fn check(token: &str)",
        "fn login(password: String, token: Option<String>) -> bool",
        "auth:expiry_boundary and token:refresh_test",
        // Hashes, commit ids, UUIDs.
        "commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904",
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "request 123e4567-e89b-12d3-a456-426614174000 failed",
        "fingerprint 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        // Base64 test vectors in code.
        r#"assert_eq!(encode(b"foobar"), "Zm9vYmFy");"#,
        r#"const VECTOR: &str = "SGVsbG8sIFdvcmxkIQ==";"#,
        // Names that hold no secret.
        "let password_hash = argon2::hash(&input, &salt)?;",
        "password_hash: $argon2id$v=19$m=65536",
        "token_url = https://example.com/oauth/token",
        "tokenizer: bert-base-uncased",
        "secretary: Jane",
        "SECRET_NAME=prod-db-credentials",
        "token_type: bearer",
        "--token-file /run/secrets/x",
        "docker login --password-stdin < file",
        "password = os.environ[\"DB_PASSWORD\"]",
        "token = generate_token(rng)",
        "password: ${DB_PASSWORD}",
        "a basic implementation of the bearer authentication scheme",
        // Places, diffs and URLs without credentials.
        "src/password.rs:42:7: warning: unused variable",
        "--- a/src/token.rs\n+++ b/src/token.rs",
        "git@github.com:org/repo.git and ssh://git@host:22/x",
        "https://example.com:8080/path@v2 and http://localhost:3000/",
        "see https://docs.rs/regex/1.0/regex/ for details",
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
fn redact_string_changes_only_what_holds_a_secret() {
    let mut clean = "nothing here".to_string();
    redact_string(&mut clean);
    assert_eq!(clean, "nothing here");
    let mut dirty = "PASSWORD=hunter2 é".to_string();
    redact_string(&mut dirty);
    assert_eq!(dirty, format!("PASSWORD={MASK} é"));
}

#[test]
fn redaction_is_idempotent() {
    let text = format!(
        "KEY={} and postgres://u:p@h/db and Authorization: token abcdefgh123 and password: \"x y\"",
        samples()[0].1
    );
    let once = r(&text);
    assert_eq!(r(&once), once);
}

#[test]
fn tokens_after_a_json_escape_are_masked_but_not_inside_words() {
    let key = samples()[12].1.clone();
    assert!(key.starts_with("sk_live_"), "{key}");
    assert_eq!(
        r(&format!(r#""a\n{key}\tb""#)),
        format!(r#""a\n{MASK}\tb""#)
    );
    // Inside a word it is not a token; a token inside that match still is.
    let word = format!("task-manager-{}", fill(ALNUM, 24));
    assert_eq!(r(&word), word);
    let anthropic = &samples()[0].1;
    assert_eq!(r(&format!("mask-{anthropic}")), format!("mask-{MASK}"));
}

#[test]
fn hostile_input_costs_linear_time() {
    // Each would cost a search per repetition over the rest of the input if
    // a pass restarted its search inside what it had read: minutes, not
    // milliseconds, at this size.
    let n = 1 << 20;
    let headers = "-----BEGIN PRIVATE KEY-----\"".repeat(n / 28);
    let out = r(&headers);
    assert!(out.len() < headers.len(), "headers were not masked");
    let ended = format!("{headers}-----END PRIVATE KEY-----");
    assert!(!r(&ended).contains("BEGIN"));
    for text in [
        "xsk-".repeat(n / 4),
        "\\nsk-".repeat(n / 5),
        "password=".repeat(n / 9),
        "Authorization: ".repeat(n / 15),
        "a://b:".repeat(n / 6),
        format!("password: \"{}", "a".repeat(n)),
    ] {
        let _ = r(&text);
    }
}
