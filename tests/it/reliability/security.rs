//! 6. Security: paths that leave the repository, secrets in every input.

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::*;

#[test]
fn finding_paths_outside_the_repository_are_never_opened() {
    let repo = Repo::new();
    assert_eq!(referee(&repo, &["init", "--loop", "l"]).code, 0);
    // A folder beside the repository with a file whose content must never
    // reach the referee's state, and one the repository links to.
    let outside = tempfile::tempdir().unwrap();
    let marker = "OUTSIDE-CONTENT-do-not-read-4f1c";
    std::fs::write(outside.path().join("secret.txt"), marker).unwrap();
    std::os::unix::fs::symlink(outside.path(), repo.join("link")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), repo.join("leak.txt")).unwrap();
    let before = tree(outside.path());
    let sibling = outside
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let abs = outside.path().join("secret.txt").display().to_string();
    let findings = serde_json::json!({"findings": [
        {"id": "E1", "severity": "bug", "title": "dot dot", "file": format!("../{sibling}/secret.txt"), "line": 1},
        {"id": "E2", "severity": "bug", "title": "absolute", "file": abs, "line": 1},
        {"id": "E3", "severity": "bug", "title": "through a link", "file": "link/secret.txt", "line": 1},
        {"id": "E4", "severity": "bug", "title": "a linked file", "file": "leak.txt", "line": 1},
        {"id": "E5", "severity": "bug", "title": "uri", "file": format!("file://{abs}"), "line": 1},
        {"id": "E6", "severity": "bug", "title": "new file", "file": format!("../{sibling}/created.txt"), "line": 1},
        {"id": "E7", "severity": "bug", "title": "one-slash uri", "file": format!("file:{abs}"), "line": 1},
        {"id": "E8", "severity": "bug", "title": "home", "file": "~/.ssh/id_rsa", "line": 1},
    ]});
    let mut cmd = repo.referee_std();
    cmd.args(["record", "--findings", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let mut child = cmd.stderr(Stdio::piped()).spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(findings.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(10), "{}", text(&out.stderr));
    // Every command that shows findings, too.
    for args in [
        &["status"][..],
        &["escalate"],
        &["findings"],
        &["findings", "--format", "sarif"],
        &["report"],
        &["ledger", "verify"],
    ] {
        let out = referee(&repo, args);
        assert!(
            !out.stdout.contains(marker),
            "{args:?} read the outside file"
        );
    }

    assert_eq!(
        tree(outside.path()),
        before,
        "something outside the repository changed"
    );
    assert!(!outside.path().join("created.txt").exists());
    for (path, bytes) in tree(&repo.join(".referee")) {
        assert!(
            !contains(&bytes, marker.as_bytes()),
            "{} holds the outside file",
            path.display()
        );
    }
    // Snapshots store the links as links, never what they point at.
    let listing = repo.git(&["ls-tree", "-r", "refs/referee/l/round-1"]);
    for name in ["link", "leak.txt"] {
        assert!(
            listing
                .lines()
                .any(|l| l.starts_with("120000 ") && l.ends_with(&format!("\t{name}"))),
            "{listing}"
        );
    }
    // The findings are kept as text: escaping paths flagged, the others normalized.
    let stored: Value = serde_json::from_slice(
        &std::fs::read(repo.join(".referee/ledgers/l/round-1/findings.json")).unwrap(),
    )
    .unwrap();
    let by_id: BTreeMap<String, (String, bool)> = stored["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["id"].as_str().unwrap().to_string(),
                (
                    f["file"].as_str().unwrap_or_default().to_string(),
                    f["path_escapes"].as_bool().unwrap_or(false),
                ),
            )
        })
        .collect();
    assert_eq!(by_id["E1"], (format!("../{sibling}/secret.txt"), true));
    assert_eq!(by_id["E2"], (abs.clone(), true));
    assert_eq!(by_id["E3"], ("link/secret.txt".to_string(), false));
    assert_eq!(by_id["E4"], ("leak.txt".to_string(), false));
    assert_eq!(by_id["E5"], (abs.clone(), true));
    assert_eq!(by_id["E6"], (format!("../{sibling}/created.txt"), true));
    assert_eq!(by_id["E7"], (abs, true));
    assert_eq!(by_id["E8"], ("~/.ssh/id_rsa".to_string(), true));
}

/// One secret of each rule in docs/secrets.md that text carries, as it is
/// written and with the part that must never be stored. Built with
/// `concat!` so that no secret scanner takes this file for a leak.
const SECRETS: &[(&str, &str)] = &[
    (
        concat!(
            "sk-ant-api03-",
            "R3liab1l1tyT3stK3yAAAAAAAAAAAAAAAAAAAAAAAA"
        ),
        "R3liab1l1tyT3stK3y",
    ),
    (
        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.cmVsaWFiaWxpdHk.c2lnbmF0dXJl",
        "cmVsaWFiaWxpdHk",
    ),
    ("PASSWORD=hunter2-reliability-42", "hunter2-reliability"),
    ("postgres://app:pgPass-rel1@db.internal/app", "pgPass-rel1"),
    ("mysql://root:myPass-rel2@127.0.0.1:3306/x", "myPass-rel2"),
    (
        "mongodb+srv://admin:mongoPass-rel3@cluster0.example.net/db",
        "mongoPass-rel3",
    ),
    ("redis://:redisPass-rel4@cache:6379/0", "redisPass-rel4"),
    ("amqps://guest:amqpPass-rel5@rabbit/vhost", "amqpPass-rel5"),
    ("password:yamlPass-rel6", "yamlPass-rel6"),
    (
        concat!("sk_", "live_", "R3l1ab1l1tyStr1peK3y0007"),
        "R3l1ab1l1tyStr1peK3y0007",
    ),
    (
        concat!("rk_", "live_", "R3l1ab1l1tyRestr1ct0008"),
        "R3l1ab1l1tyRestr1ct0008",
    ),
    (
        concat!(
            "eyJhbGciOiJIUzI1NiJ9",
            ".",
            "eyJzdWIiOiJyZWxpYWJpbGl0eTkifQ",
            ".",
            "U2lnbmF0dXJlUmVsOQ"
        ),
        "eyJzdWIiOiJyZWxpYWJpbGl0eTkifQ",
    ),
    (
        concat!("npm_", "R3l1ab1l1tyNpmT0k3nAAAAAAAAAAAAAAA10"),
        "R3l1ab1l1tyNpmT0k3n",
    ),
    (
        concat!(
            "https://hooks.slack.com/services/",
            "T0REL1AB1/B0REL1AB1/R3l1ab1l1tySl4ckH00k11"
        ),
        "R3l1ab1l1tySl4ckH00k11",
    ),
    (
        concat!("xoxb-", "123456789012-R3l1ab1l1tySl4ck12"),
        "R3l1ab1l1tySl4ck12",
    ),
    (
        "Authorization: token T0kenRel13abcdef0123",
        "T0kenRel13abcdef0123",
    ),
    (
        "Authorization: Basic dXNlcjpyZWxpYWJpbGl0eTE0",
        "dXNlcjpyZWxpYWJpbGl0eTE0",
    ),
    ("mysql --password cliPass-rel15 db", "cliPass-rel15"),
    ("deploy --api-key=cliKey-rel16", "cliKey-rel16"),
    (
        "DefaultEndpointsProtocol=https;AccountName=rel;AccountKey=QXp1cmVSZWwxNw==;EndpointSuffix=core.windows.net",
        "QXp1cmVSZWwxNw",
    ),
    (
        r#"password = "a long passphrase rel18""#,
        "passphrase rel18",
    ),
    (r#"{"api_key": "jsonKey-rel19"}"#, "jsonKey-rel19"),
    (concat!("AKIA", "RELIAB1L1TY20AWS"), "RELIAB1L1TY20AWS"),
    (
        concat!("AIza", "SyR3l1ab1l1ty21GcpK3yAAAAAAAAAAAAAA"),
        "R3l1ab1l1ty21GcpK3y",
    ),
    (
        concat!("ghp_", "R3l1ab1l1ty22G1tHubT0k3nAAAAAAAAAAA"),
        "R3l1ab1l1ty22G1tHub",
    ),
    (
        concat!("glpat-", "R3l1ab1l1ty23GitLabT0k"),
        "R3l1ab1l1ty23GitLab",
    ),
    (
        concat!("sk-proj-", "R3l1ab1l1ty24OpenAiK3yAAAAAAAA"),
        "R3l1ab1l1ty24OpenAi",
    ),
    (
        concat!("hf_", "R3l1ab1l1ty25HuggingFaceT0k3nAAAAA"),
        "R3l1ab1l1ty25Hugging",
    ),
    (
        concat!(
            "dop_v1_",
            "2626262626262626262626262626262626262626262626262626262626262626"
        ),
        "26262626262626262626",
    ),
    (
        concat!(
            "SG.",
            "R3l1ab1l1ty27SendGr",
            ".",
            "R3l1ab1l1ty27SendGridSecretPartAAAAAAAAAAAAAA"
        ),
        "R3l1ab1l1ty27SendGridSecret",
    ),
    (
        concat!(
            "pypi-",
            "AgEIcHlwaS5vcmc",
            "R3l1ab1l1ty28PyPIUploadT0k3nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
        ),
        "R3l1ab1l1ty28PyPI",
    ),
    (
        concat!(
            "-----BEGIN RSA ",
            "PRIVATE KEY-----\nMIIR3l1ab1l1ty29PemB0dy\n-----END RSA ",
            "PRIVATE KEY-----"
        ),
        "MIIR3l1ab1l1ty29PemB0dy",
    ),
];

fn all_secrets() -> String {
    SECRETS
        .iter()
        .map(|(s, _)| *s)
        .collect::<Vec<_>>()
        .join(" and\n")
}

/// A two-round `run` with the secrets in the task, the writer's output (stdout,
/// stderr, its patch and its responses file) and the reviewer's findings.
fn run_with_secrets() -> Driven {
    let f = Driven::new();
    let s = all_secrets();
    let finding = serde_json::json!({"findings": [{"id": "S1", "severity": "bug",
        "title": format!("leaks {}", SECRETS[0].0), "file": "src/a.rs", "line": 1,
        "body": format!("found {s}")}]});
    let responses = serde_json::json!({"responses": [{"id": "S1", "status": "disputed",
        "note": format!("it is a test key: {s}")}]});
    f.file("secrets.txt", &s)
        .file(
            "writer-1.sh",
            "echo 'fn a() { 4 }' > src/a.rs\ncp \"$FAKE_DIR/secrets.txt\" config.env\n\
             echo \"writer says $(cat \"$FAKE_DIR/secrets.txt\")\"\n\
             echo \"debug $(cat \"$FAKE_DIR/secrets.txt\")\" >&2\n",
        )
        .file("reviewer-1.print", finding.to_string())
        .file("writer-2.sh", "echo 'fn a() { 5 }' > src/a.rs\n")
        .file("writer-2.out", responses.to_string())
        .file("reviewer-2.print", r#"{"findings":[]}"#);
    let task = format!("fix the leak; meanwhile use {s}");
    let out = referee(&f.repo, &["run", "--task", &task]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(f.rows(), 2);
    f
}

/// Stored files of `.referee/` that hold a secret, with the secret.
fn leaks(f: &Driven) -> Vec<(String, &'static str)> {
    let state = f.repo.join(".referee");
    let mut found = Vec::new();
    let files = tree(&state);
    assert!(files.len() >= 10, "only {} stored files", files.len());
    for (path, bytes) in files {
        for (_, needle) in SECRETS.iter().copied() {
            if contains(&bytes, needle.as_bytes()) {
                let rel = path.strip_prefix(&state).unwrap().display().to_string();
                found.push((rel, needle));
            }
        }
    }
    found
}

/// Where `run` keeps the task between runs (see `task` in src/cmd/run.rs).
const SAVED_TASK: &str = "ledgers/l/task.md";

#[test]
fn secrets_in_every_input_are_redacted_in_every_stored_file() {
    let f = run_with_secrets();
    // Each secret did reach the agents and the stored review: the test can fail.
    let calls = std::fs::read_to_string(f.script.path().join("calls.log")).unwrap();
    for (_, part) in SECRETS {
        assert!(calls.contains(part), "`{part}` never reached the writer");
    }
    let leaks: Vec<_> = leaks(&f)
        .into_iter()
        .filter(|(path, _)| path != SAVED_TASK)
        .collect();
    assert!(leaks.is_empty(), "secrets stored in: {leaks:?}");
    // Every kind of stored file had secrets to mask, and masked them.
    let state = f.repo.join(".referee");
    let files = tree(&state);
    let stored = |suffix: &str| -> Vec<String> {
        files
            .iter()
            .filter(|(path, _)| path.to_string_lossy().ends_with(suffix))
            .map(|(_, bytes)| String::from_utf8_lossy(bytes).into_owned())
            .collect()
    };
    for suffix in [
        "round-1/task.md",
        "round-1/findings.raw",
        "round-1/findings.json",
        "round-1/state.json",
        "round-1/patch.diff",
        "round-2/responses.json",
        "round-2/state.json",
        ".stdout",
        ".stderr",
        ".prompt.md",
    ] {
        let texts = stored(suffix);
        assert!(!texts.is_empty(), "no stored `*{suffix}`");
        assert!(
            texts.iter().any(|t| t.contains(referee::redact::MASK)),
            "`*{suffix}` holds no mask"
        );
    }
    // Redaction kept the stored JSON documents readable.
    for suffix in [
        "findings.raw",
        "findings.json",
        "state.json",
        "responses.json",
    ] {
        for text in stored(suffix) {
            serde_json::from_str::<Value>(&text).unwrap_or_else(|e| panic!("{suffix}: {e}"));
        }
    }
}

#[test]

fn the_saved_task_is_redacted_too() {
    let f = run_with_secrets();
    let leaks: Vec<_> = leaks(&f)
        .into_iter()
        .filter(|(path, _)| path == SAVED_TASK)
        .collect();
    assert!(leaks.is_empty(), "secrets stored in: {leaks:?}");
}

#[test]

fn a_killed_run_leaves_no_unredacted_scratch_files() {
    let f = Driven::new();
    // The writer says where it is, then hangs until it is killed.
    f.file(
        "writer-1.sh",
        "echo $$ > \"$FAKE_DIR/agent.pid\"\nsleep 60\n",
    );
    let child = f
        .repo
        .referee_std()
        .args(["run", "--task", &format!("fix it with {}", all_secrets())])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid_file = f.script.path().join("agent.pid");
    let start = Instant::now();
    let agent = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse::<i32>().ok())
        {
            break pid;
        }
        assert!(
            start.elapsed() < HANG_GUARD,
            "hang guard: the writer never started"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL);
    let _ = finish(child, "killed run");
    // The agent has its own process group: end it too.
    let _ = nix::sys::signal::killpg(Pid::from_raw(agent), Signal::SIGKILL);

    // The next run finishes the loop; nothing of the killed one may keep a secret.
    f.file("writer-1.sh", "echo 'fn a() { 6 }' > src/a.rs\n")
        .file("reviewer-1.print", r#"{"findings":[]}"#);
    let out = referee(&f.repo, &["run"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let leaks: Vec<_> = leaks(&f)
        .into_iter()
        .filter(|(path, _)| path != SAVED_TASK)
        .collect();
    assert!(leaks.is_empty(), "secrets stored in: {leaks:?}");
}

/// A title that clears the screen and retitles the window, a body with a C1
/// CSI and DEL, and a path that turns the terminal red.
const HOSTILE_TITLE: &str = "\u{1b}[2J\u{1b}]0;pwned\u{7} title";

/// The control characters in `text` other than `\n` and `\t`, and other than
/// referee's own colors when `colors` is on.
fn raw_controls(text: &str, colors: bool) -> Vec<String> {
    let own = ["\u{1b}[1;31m", "\u{1b}[1;32m", "\u{1b}[1;33m", "\u{1b}[0m"];
    let mut found = Vec::new();
    let mut rest = text;
    while let Some((i, c)) = rest
        .char_indices()
        .find(|&(_, c)| c.is_control() && c != '\n' && c != '\t')
    {
        let tail = &rest[i..];
        match own.iter().find(|o| colors && tail.starts_with(**o)) {
            Some(o) => rest = &tail[o.len()..],
            None => {
                found.push(format!("{:?} at {:?}", c, &tail[..tail.len().min(12)]));
                rest = &tail[c.len_utf8()..];
            }
        }
    }
    found
}

#[test]
fn control_characters_in_findings_never_reach_the_terminal_raw() {
    let repo = Repo::new();
    let out = referee(&repo, &["init", "--loop", "l", "--max-rounds", "1"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    repo.write("src/a.rs", "fn a() {}\n");
    let dir = tempfile::tempdir().unwrap();
    let review = dir.path().join("review.json");
    let doc = serde_json::json!({"findings": [{
        "id": "T1", "severity": "bug", "title": HOSTILE_TITLE,
        "body": "a C1 CSI \u{9b}31m and DEL \u{7f} and CR \r over it",
        "file": "src/\u{1b}[31mred.rs", "line": 1,
    }]});
    std::fs::write(&review, doc.to_string()).unwrap();
    let review = review.to_str().unwrap();

    let record = referee(&repo, &["record", "--findings", review]);
    assert_eq!(record.code, 20, "{}", record.stderr);
    let mut shown = vec![("record", record)];
    for args in [
        &["status"][..],
        &["findings"],
        &["escalate"],
        &["escalate", "--format", "markdown"],
        &["ledger", "show"],
        &["report"],
    ] {
        shown.push((args[0], referee(&repo, args)));
    }
    for colors in ["always", "never"] {
        for cmd in ["status", "escalate", "findings"] {
            shown.push((cmd, referee(&repo, &["--color", colors, cmd])));
        }
    }
    for (cmd, out) in &shown {
        assert!(out.code == 0 || *cmd == "record", "{cmd}: {}", out.stderr);
        for (stream, text) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            let raw = raw_controls(text, true);
            assert!(raw.is_empty(), "{cmd} {stream}: raw {raw:?} in\n{text}");
        }
    }
    // The title was printed, visibly, where people read findings.
    for (cmd, out) in &shown[..4] {
        assert!(
            out.stdout.contains("^[[2J^[]0;pwned^G title"),
            "{cmd}: {}",
            out.stdout
        );
    }
    // Referee's own colors still work.
    let colored = referee(&repo, &["--color", "always", "escalate"]);
    assert!(
        colored.stdout.starts_with("\u{1b}[1;31m"),
        "{}",
        colored.stdout
    );
    assert!(raw_controls(&colored.stdout, false).len() >= 2);

    // JSON is exact: the title comes back as it was stored.
    for args in [
        &["findings", "--json"][..],
        &["escalate", "--json"],
        &["status", "--json"],
    ] {
        let out = referee(&repo, args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        assert!(
            out.stdout.contains(r"\u001b[2J\u001b]0;pwned\u0007 title"),
            "{args:?}: {}",
            out.stdout
        );
        serde_json::from_str::<Value>(&out.stdout).unwrap();
    }
}
