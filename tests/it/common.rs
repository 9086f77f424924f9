//! Shared set-up: a temporary git repository with a fixed author, fixed dates
//! and no user or system git config, and a `referee` command pointed at it.
//!
//! The record-and-assert scaffolding most files share:
//!
//! ```ignore
//! let repo = Repo::with_loop("l", &["--max-rounds", "5"]);
//! repo.append("src/a.rs", "fn a() {}");
//! let out = repo.record(&native(&[("F1", "bug")])).args(&["--json"]).run();
//! out.assert(10, "");
//! let rows = repo.ledger_json();
//! ```

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;
use serde_json::Value;

/// Environment that isolates git from the machine's config and fixes dates.
pub const GIT_ENV: &[(&str, &str)] = &[
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_AUTHOR_NAME", "Test Author"),
    ("GIT_AUTHOR_EMAIL", "author@example.com"),
    ("GIT_COMMITTER_NAME", "Test Author"),
    ("GIT_COMMITTER_EMAIL", "author@example.com"),
    ("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z"),
    ("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z"),
];

/// The clock referee reads in tests (see docs/ledger.md).
pub const NOW: &str = "2026-01-02T03:04:05Z";

/// A temporary git repository, removed on drop.
pub struct Repo {
    dir: tempfile::TempDir,
    /// The per-user state folder (`REFEREE_STATE_DIR`) of this repository's
    /// referee calls: the anchor, outside the work tree (SPEC §8.2).
    state: tempfile::TempDir,
}

/// A per-user state folder for a test's referee calls: outside `/tmp`, as a
/// person's `~/.local/state` is, so that an agent sandbox that lets its
/// commands write `/tmp` (Codex's `workspace-write`) does not reach it —
/// under `~/.cache/referee-tests`, or the build's own scratch folder when
/// there is no home outside `/tmp`.
fn state_dir() -> tempfile::TempDir {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute() && !h.starts_with("/tmp"));
    let parent = match home {
        Some(home) => home.join(".cache/referee-tests"),
        None => PathBuf::from(env!("CARGO_TARGET_TMPDIR")),
    };
    std::fs::create_dir_all(&parent).expect("state parent");
    tempfile::tempdir_in(parent).expect("tempdir")
}

impl Repo {
    /// An empty repository (no commits).
    pub fn empty() -> Repo {
        Repo::empty_with(&[])
    }

    /// An empty repository made by `git init` with `flags` too.
    pub fn empty_with(flags: &[&str]) -> Repo {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = Repo {
            dir,
            state: state_dir(),
        };
        let mut args = vec!["init", "-q", "-b", "main"];
        args.extend_from_slice(flags);
        repo.git(&args);
        repo
    }

    /// A repository with one commit holding `README.md`.
    pub fn new() -> Repo {
        let repo = Repo::empty();
        repo.write("README.md", "hello\n");
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "-m", "initial"]);
        repo
    }

    /// A linked worktree of this repository (`git worktree add`, on a new
    /// branch `branch`), in a temporary folder of its own.
    pub fn worktree(&self, branch: &str) -> Repo {
        let dir = tempfile::Builder::new()
            .prefix("wt")
            .tempdir()
            .expect("tempdir");
        let at = dir.path().to_string_lossy().into_owned();
        self.git(&["worktree", "add", "-q", "-b", branch, &at]);
        Repo {
            dir,
            state: state_dir(),
        }
    }

    /// `Repo::new` with a loop `lp` made by `referee init --loop LP FLAGS`.
    pub fn with_loop(lp: &str, flags: &[&str]) -> Repo {
        let repo = Repo::new();
        repo.init_loop(lp, flags);
        repo
    }

    /// `referee init --loop LP FLAGS` in this repository; it must succeed.
    pub fn init_loop(&self, lp: &str, flags: &[&str]) {
        self.referee()
            .args(["init", "--loop", lp])
            .args(flags)
            .assert()
            .success();
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The per-user state folder referee keeps this repository's anchors in.
    pub fn state_dir(&self) -> &Path {
        self.state.path()
    }

    /// The anchor folder of loop `lp` (`states/<name>-<id>/loops/<lp>`),
    /// whether or not it exists yet.
    pub fn anchor(&self, lp: &str) -> PathBuf {
        let states = self.state.path().join("states");
        let found = std::fs::read_dir(&states).ok().and_then(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path().join("loops").join(lp))
                .find(|p| p.exists())
        });
        found.unwrap_or_else(|| states.join("?").join("loops").join(lp))
    }

    /// Keeps the repository on disk after the test, for a person to inspect.
    pub fn keep(self) -> PathBuf {
        self.dir.keep()
    }

    pub fn join(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn write(&self, rel: &str, text: &str) {
        let path = self.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(path, text).expect("write");
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.join(rel)).expect("read")
    }

    /// Appends `line` and a newline to `rel` (made if missing): a writer's edit.
    pub fn append(&self, rel: &str, line: &str) {
        let mut body = std::fs::read_to_string(self.join(rel)).unwrap_or_default();
        body.push_str(line);
        body.push('\n');
        self.write(rel, &body);
    }

    /// Runs git in the repository and returns its stdout; panics on failure.
    pub fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(self.path())
            .envs(GIT_ENV.iter().copied())
            .output()
            .expect("run git");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8")
    }

    /// `referee` with its working folder in the repository and a fixed clock.
    pub fn referee(&self) -> assert_cmd::Command {
        assert_cmd::Command::from_std(self.referee_std())
    }

    /// The same as `referee`, as a std Command (for spawning many at once).
    pub fn referee_std(&self) -> Command {
        let mut cmd = Command::cargo_bin("referee").expect("binary");
        cmd.current_dir(self.path())
            .envs(GIT_ENV.iter().copied())
            .env("REFEREE_NOW", NOW)
            .env("REFEREE_STATE_DIR", self.state.path())
            .env_remove("REFEREE_DIR")
            .env("NO_COLOR", "1");
        cmd
    }

    /// `referee ARGS`, run at once.
    pub fn run(&self, args: &[&str]) -> Out {
        self.call(args).run()
    }

    /// `referee ARGS`, to add arguments or stdin to before `run`.
    pub fn call(&self, args: &[&str]) -> Call<'_> {
        Call {
            repo: self,
            args: args.iter().map(|a| (*a).to_string()).collect(),
            stdin: None,
        }
    }

    /// `referee record --findings -` with `findings` on stdin; more arguments
    /// with `.args`, then `.run()`.
    pub fn record(&self, findings: &str) -> Call<'_> {
        self.call(&["record", "--findings", "-"]).stdin(findings)
    }

    /// `referee ledger show --json`, parsed; panics if it fails.
    pub fn ledger_json(&self) -> Vec<Value> {
        let out = self.run(&["ledger", "show", "--json"]);
        assert_eq!(out.code, 0, "ledger show: {}", out.stderr);
        ledger_rows(out.stdout.as_bytes())
    }
}

/// The rows of what `referee ledger show --json` printed: an object with
/// the loop's name and its rows. Panics on anything else.
pub fn ledger_rows(stdout: &[u8]) -> Vec<Value> {
    let doc: Value = serde_json::from_slice(stdout).expect("ledger show --json");
    assert!(doc["loop"].is_string(), "no loop in {doc}");
    match doc.get("rows") {
        Some(Value::Array(rows)) => rows.clone(),
        _ => panic!("no rows in {doc}"),
    }
}

/// A `referee` call being put together: `Repo::call` or `Repo::record`.
pub struct Call<'r> {
    repo: &'r Repo,
    args: Vec<String>,
    stdin: Option<String>,
}

impl Call<'_> {
    /// More arguments, after those already given.
    pub fn args(mut self, args: &[&str]) -> Self {
        self.args.extend(args.iter().map(|a| (*a).to_string()));
        self
    }

    /// Text for the call's stdin (without it, stdin is closed at once).
    pub fn stdin(mut self, stdin: &str) -> Self {
        self.stdin = Some(stdin.to_string());
        self
    }

    pub fn run(self) -> Out {
        let mut cmd = self.repo.referee();
        cmd.args(&self.args);
        if let Some(stdin) = self.stdin {
            cmd.write_stdin(stdin);
        }
        Out::of(&cmd.output().expect("run referee"))
    }
}

/// What a `referee` call printed, and how it exited (-1: killed by a signal).
#[derive(Debug)]
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Out {
    pub fn of(out: &std::process::Output) -> Out {
        Out {
            code: out.status.code().unwrap_or(-1),
            stdout: text(&out.stdout),
            stderr: text(&out.stderr),
        }
    }

    /// Asserts the exit code and, unless `rule` is empty, a `stop: RULE`
    /// line; a failure shows both streams.
    pub fn assert(&self, code: i32, rule: &str) -> &Out {
        assert_eq!(
            self.code, code,
            "stdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        if !rule.is_empty() {
            assert!(
                self.stdout.contains(&format!("stop: {rule}")),
                "{}",
                self.stdout
            );
        }
        self
    }
}

/// Native JSON findings from (id, severity) pairs, all at `src/a.rs:1`, each
/// with a title of its own (see `title`) and a body naming its id.
pub fn native(list: &[(&str, &str)]) -> String {
    let items: Vec<String> = list
        .iter()
        .map(|(id, sev)| {
            let title = title(id);
            format!(r#"{{"id":"{id}","severity":"{sev}","title":"{title}","file":"src/a.rs","line":1,"body":"reviewer on {id}"}}"#)
        })
        .collect();
    format!(r#"{{"findings":[{}]}}"#, items.join(","))
}

/// A title per id (`F3`, `N1`), sharing no word with another, so that the
/// similarity fallback never joins two of them.
pub fn title(id: &str) -> String {
    const A: [&str; 18] = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
        "juliet", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo",
    ];
    const B: [&str; 18] = [
        "apple", "banana", "cherry", "damson", "elder", "fig", "grape", "hazel", "ivy", "jujube",
        "kiwi", "lemon", "mango", "nectar", "olive", "peach", "quince", "raisin",
    ];
    let k: usize = id[1..].parse().unwrap_or(0);
    let k = if id.starts_with('N') { 17 - k } else { k };
    format!("{} {}", A[k], B[k])
}

/// Output as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The fake agent script (tests/fixtures/agents/fake-agent.sh): per call it
/// runs `writer-N.sh` or prints `reviewer-N.print` from `FAKE_DIR`.
pub fn fake_agent() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agents/fake-agent.sh")
        .display()
        .to_string()
}

/// A repository whose loop `l` (4 rounds) is driven by the fake agent as
/// writer and reviewer, and the folder of its scripts.
pub struct Driven {
    pub repo: Repo,
    pub script: tempfile::TempDir,
}

impl Driven {
    pub fn new() -> Driven {
        let repo = Repo::new();
        repo.write("src/a.rs", "fn a() {}\n");
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "-m", "a"]);
        let script = tempfile::tempdir().unwrap();
        let dir = script.path().display().to_string();
        let agent = fake_agent();
        let section = |role: &str| {
            format!(
                "[{role}]\npreset = \"command\"\ncommand = [\"{agent}\"]\nenv = {{ FAKE_DIR = \"{dir}\" }}\n"
            )
        };
        let contract = format!(
            "loop = \"l\"\nmax_rounds = 4\n{}{}",
            section("writer"),
            section("reviewer")
        );
        let path = script.path().join("contract.toml");
        std::fs::write(&path, contract).unwrap();
        repo.run(&["init", "--from", path.to_str().unwrap()])
            .assert(0, "");
        Driven { repo, script }
    }

    /// Writes one of the fake agent's scripts.
    pub fn file(&self, name: &str, body: impl AsRef<[u8]>) -> &Driven {
        std::fs::write(self.script.path().join(name), body).unwrap();
        self
    }

    /// How many rows the loop's ledger holds.
    pub fn rows(&self) -> usize {
        self.repo.ledger_json().len()
    }
}

/// Starts `cmd` with `input` on its stdin (then closed) and stdout and
/// stderr piped, for a test that waits on it later or watches it run.
pub fn spawn_fed(cmd: &mut Command, input: &[u8]) -> std::process::Child {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("write stdin");
    child
}

/// Says that `what` (a tool a test needs) is missing: under
/// `REFEREE_REQUIRE_TOOLS=1` (CI) the test fails; elsewhere it says SKIPPED
/// and passes without running (`tools.rs` lists what is missing).
pub fn missing(what: &str, install: &str) {
    let required = std::env::var("REFEREE_REQUIRE_TOOLS").is_ok_and(|v| v == "1");
    assert!(
        !required,
        "{what} is not installed ({install}), and REFEREE_REQUIRE_TOOLS=1"
    );
    eprintln!("SKIPPED: {what} is not installed ({install})");
}

/// Whether the program `name` is on `PATH`; when it is not, [`missing`].
pub fn needs(name: &str, install: &str) -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(name).is_file()));
    if !found {
        missing(&format!("`{name}`"), install);
    }
    found
}

/// `referee ARGS` in `dir` on a pseudo-terminal (`script`), as a person's
/// shell runs it: its exit code and the screen. `None` (skipped, loudly)
/// where `script` is missing.
pub fn on_a_terminal(dir: &Path, args: &str) -> Option<(Option<i32>, String)> {
    if !needs("script", "apt-get install util-linux") {
        return None;
    }
    let bin = assert_cmd::cargo::cargo_bin("referee");
    let out = Command::new("script")
        .args(["-qec", &format!("{} {args}", bin.display()), "/dev/null"])
        .current_dir(dir)
        .envs(GIT_ENV.iter().copied())
        .env("REFEREE_NOW", NOW)
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    Some((out.status.code(), text(&out.stdout)))
}
