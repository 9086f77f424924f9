//! SPEC §8.6 and §8.7: locks and retries a hostile writer cannot abuse. A
//! leftover process holding the ledger's `flock` stalls no command (readers
//! go on, appends refuse naming it); a referee's lock is waited for, but
//! only so long; a FIFO or socket planted where referee opens its files is
//! refused at once; an idempotency key answers only the call that used it.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{Driven, Out, Repo, native};

/// Longer than any command may take here: a guard against a hang, never a
/// measure of speed.
const HANG_GUARD: Duration = Duration::from_secs(40);

/// A process holding an `flock` on a file until it is dropped; then it is
/// killed by its pid, whatever the test's outcome.
struct Holder {
    child: Child,
}

impl Holder {
    /// Python holding an exclusive (or shared) `flock` on `path`, started
    /// as `argv0` (a name starting with `referee` makes it pass for one).
    fn start(path: &Path, exclusive: bool, argv0: Option<&Path>, hold_secs: u32) -> Holder {
        let mode = if exclusive { "LOCK_EX" } else { "LOCK_SH" };
        let script = format!(
            "import fcntl, sys, time\n\
             f = open(sys.argv[1], 'a')\n\
             fcntl.flock(f, fcntl.{mode})\n\
             print('locked', flush=True)\n\
             time.sleep({hold_secs})\n"
        );
        let program = argv0.map_or_else(|| PathBuf::from("python3"), Path::to_path_buf);
        let child = Command::new(program)
            .arg("-c")
            .arg(script)
            .arg(path)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3");
        // Killed on drop from here on, even if it never took the lock.
        let mut holder = Holder { child };
        let stdout = holder.child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).expect("read");
        assert_eq!(line, "locked\n", "the holder did not take the lock");
        holder
    }

    /// A holder the referee takes for one of its own: python under a name
    /// starting with `referee` (a link to the real interpreter in `dir`).
    fn named_referee(dir: &Path, path: &Path, hold_secs: u32) -> Holder {
        let out = Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .expect("python3");
        let python = String::from_utf8(out.stdout).unwrap();
        let link = dir.join("referee-holder");
        std::os::unix::fs::symlink(python.trim(), &link).unwrap();
        Holder::start(path, true, Some(&link), hold_secs)
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        // SIGKILL to this child's pid, then reaped: nothing is left behind.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `referee ARGS` in `repo`, ended by its pid and failed if it outlives
/// [`HANG_GUARD`].
fn bounded(repo: &Repo, args: &[&str]) -> Out {
    let mut cmd = repo.referee_std();
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn referee");
    let started = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            return Out::of(&child.wait_with_output().expect("output"));
        }
        if started.elapsed() > HANG_GUARD {
            let _ = child.kill();
            let _ = child.wait();
            panic!("hang guard: `referee {}` still running", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A loop `l` with round 1 recorded (finding `F1` open), the review in
/// `review.json` for calls that take a file.
fn started() -> Repo {
    let repo = Repo::with_loop("l", &[]);
    repo.write("src/a.rs", "fn a() {}\n");
    repo.write("review.json", &native(&[("F1", "bug")]));
    bounded(&repo, &["record", "--findings", "review.json"]).assert(10, "");
    repo
}

const LEDGER: &str = ".referee/ledgers/l.csv";

/// Every command that only reads the loop.
const READERS: &[&[&str]] = &[
    &["status"],
    &["ledger", "show", "--json"],
    &["ledger", "verify"],
    &["escalate"],
    &["findings"],
    &["report"],
];

/// Every command that appends to the ledger (after a change to the tree,
/// for `record`).
const WRITERS: &[&[&str]] = &[
    &["record", "--findings", "review.json"],
    &["waive", "F1", "--by", "ann", "--reason", "accepted"],
    &["approve", "--by", "ann"],
    &[
        "contract",
        "amend",
        "--max-rounds",
        "5",
        "--by",
        "ann",
        "--reason",
        "more",
    ],
];

/// Case 19/20: a leftover process (not a referee) holding the ledger's lock
/// is not honoured. Every reader answers, saying it read without the lock;
/// every append refuses at once, naming the holder by pid, start time and
/// command, with a hint that leaves `kill` to the person; nothing lands.
#[test]
fn a_leftover_process_holding_the_ledger_lock_stalls_no_command() {
    let repo = started();
    repo.append("src/a.rs", "// round 2");
    let before = std::fs::read(repo.join(LEDGER)).unwrap();
    let holder = Holder::start(&repo.join(LEDGER), true, None, 60);
    let pid = holder.pid();
    for args in READERS {
        let out = bounded(&repo, args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        assert!(
            out.stderr.contains(&format!(
                "note: ledger `{LEDGER}` is locked by pid {pid} (`"
            )) && out
                .stderr
                .contains("which is not a live referee: read without its lock"),
            "{args:?}: {}",
            out.stderr
        );
    }
    let rows = crate::common::ledger_rows(
        bounded(&repo, &["ledger", "show", "--json"])
            .stdout
            .as_bytes(),
    );
    assert_eq!(rows.len(), 1);
    for args in WRITERS {
        let out = bounded(&repo, args);
        assert_eq!(out.code, 1, "{args:?}: {}", out.stdout);
        for said in [
            format!("ledger `{LEDGER}` is locked by pid {pid} (`"),
            "python3".to_string(),
            ", started 20".to_string(),
            "which is not a live referee: its lock is not honoured, and nothing was written"
                .to_string(),
            format!(
                "hint: if it is a leftover (of a writer agent, say), ending it is your call: `kill {pid}`; referee never ends it"
            ),
        ] {
            assert!(
                out.stderr.contains(&said),
                "{args:?}: {said}: {}",
                out.stderr
            );
        }
    }
    assert_eq!(std::fs::read(repo.join(LEDGER)).unwrap(), before);
    // Once it is gone the loop goes on.
    drop(holder);
    bounded(&repo, &["record", "--findings", "review.json"]).assert(10, "");
}

/// A shared lock a leftover holds (a reader's) keeps no reader waiting,
/// and refuses an append the same way.
#[test]
fn a_leftover_shared_lock_refuses_appends_and_lets_readers_read() {
    let repo = started();
    repo.append("src/a.rs", "// round 2");
    let holder = Holder::start(&repo.join(LEDGER), false, None, 60);
    let out = bounded(&repo, &["status"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = bounded(&repo, &["record", "--findings", "review.json"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stderr
            .contains(&format!("is locked by pid {} (`", holder.pid())),
        "{}",
        out.stderr
    );
    assert_eq!(repo.ledger_json().len(), 1);
}

/// A referee's lock is honoured, but the wait is bounded: a holder that
/// keeps it past the bound is named and the command gives up, reader or
/// append; a holder that lets go within it is waited for.
#[test]
fn a_referee_holding_the_ledger_lock_is_waited_for_only_so_long() {
    let repo = started();
    repo.append("src/a.rs", "// round 2");
    let links = tempfile::tempdir().unwrap();
    let holder = Holder::named_referee(links.path(), &repo.join(LEDGER), 60);
    let pid = holder.pid();
    for (args, undone) in [
        (&["status"][..], "read"),
        (&["record", "--findings", "review.json"], "written"),
    ] {
        let out = bounded(&repo, args);
        assert_eq!(out.code, 1, "{args:?}: {}", out.stdout);
        let said = format!("ledger `{LEDGER}` is still locked after 5s by pid {pid} (`");
        assert!(out.stderr.contains(&said), "{args:?}: {}", out.stderr);
        assert!(
            out.stderr.contains("referee-holder -c"),
            "{args:?}: {}",
            out.stderr
        );
        assert!(
            out.stderr.contains(&format!(
                "; nothing was {undone}\nhint: wait for it to finish, then run the command again"
            )),
            "{args:?}: {}",
            out.stderr
        );
    }
    drop(holder);
    assert_eq!(repo.ledger_json().len(), 1);

    // One that lets go after a second: the append waits and lands.
    let links = tempfile::tempdir().unwrap();
    let _holder = Holder::named_referee(links.path(), &repo.join(LEDGER), 1);
    bounded(&repo, &["record", "--findings", "review.json"]).assert(10, "");
    assert_eq!(repo.ledger_json().len(), 2);
}

/// Makes a FIFO at `path`.
fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(status.success());
}

/// Makes a Unix socket at `path` (left bound to no one).
fn mksocket(path: &Path) {
    std::os::unix::net::UnixListener::bind(path).expect("bind");
}

/// A FIFO or a socket planted at the ledger is refused at once by every
/// command that reads or appends it, naming it; the ledger put back, the
/// loop goes on.
#[test]
fn a_fifo_or_socket_at_the_ledger_is_refused_by_every_command() {
    let repo = started();
    repo.append("src/a.rs", "// round 2");
    let path = repo.join(LEDGER);
    let kept = std::fs::read(&path).unwrap();
    for (plant, what) in [
        (mkfifo as fn(&Path), "a fifo"),
        (mksocket as fn(&Path), "a socket"),
    ] {
        std::fs::remove_file(&path).unwrap();
        plant(&path);
        for args in READERS.iter().chain(WRITERS) {
            let out = bounded(&repo, args);
            assert_eq!(out.code, 1, "{what}: {args:?}: {}", out.stdout);
            let said = format!("`{LEDGER}` is {what}, not a regular file");
            assert!(
                out.stderr.contains(&said) && out.stderr.contains("hint: remove it"),
                "{what}: {args:?}: {}",
                out.stderr
            );
        }
    }
    std::fs::remove_file(&path).unwrap();
    std::fs::write(&path, kept).unwrap();
    bounded(&repo, &["record", "--findings", "review.json"]).assert(10, "");
}

/// A FIFO or socket at the loop's run lock (in its anchor): `run` refuses
/// at once naming it; `status` and `record`, which only ask who drives the
/// loop, do not wait on it.
#[test]
fn a_fifo_or_socket_at_the_run_lock_is_never_waited_on() {
    let f = Driven::new();
    f.file("writer-1.sh", "echo 'fn a() { 0 }' > src/a.rs\n")
        .file("reviewer-1.print", r#"{"findings":[]}"#);
    let anchor = f.repo.anchor("l");
    std::fs::create_dir_all(&anchor).unwrap();
    let lock = anchor.join("run.lock");
    for (plant, what) in [
        (mkfifo as fn(&Path), "a fifo"),
        (mksocket as fn(&Path), "a socket"),
    ] {
        let _ = std::fs::remove_file(&lock);
        plant(&lock);
        let out = bounded(&f.repo, &["run", "--task", "fix it", "--quiet"]);
        assert_eq!(out.code, 1, "{what}: {}", out.stdout);
        assert!(
            out.stderr
                .contains(&format!("run.lock` is {what}, not a regular file")),
            "{what}: {}",
            out.stderr
        );
        let out = bounded(&f.repo, &["status"]);
        assert_eq!(out.code, 0, "{what}: {}", out.stderr);
    }
    f.repo.write("src/a.rs", "fn a() { 1 }\n");
    f.repo.write("review.json", r#"{"findings":[]}"#);
    bounded(&f.repo, &["record", "--findings", "review.json"]).assert(0, "clean");
}

/// `record --idempotency-key K --json` with `review` on stdin and `more`.
fn keyed(repo: &Repo, key: &str, review: &str, more: &[&str]) -> Out {
    repo.record(review)
        .args(&["--idempotency-key", key, "--json"])
        .args(more)
        .run()
}

/// Case 18: the writer pre-records a clean review under the key CI will
/// use; CI's real review under that key is refused, naming the key, the
/// round and what differs, and records nothing. The same call again is a
/// retry, answered as before.
#[test]
fn a_key_the_writer_used_first_does_not_answer_for_another_review() {
    let repo = Repo::with_loop("l", &[]);
    repo.write("src/a.rs", "fn a() {}\n");
    let clean = r#"{"findings":[]}"#;
    let first = keyed(&repo, "pr-7-round-1", clean, &[]);
    assert_eq!(first.code, 0, "{}", first.stderr);

    let real = native(&[("F1", "bug")]);
    let ci = keyed(&repo, "pr-7-round-1", &real, &[]);
    assert_eq!(ci.code, 1, "{}", ci.stdout);
    assert!(
        ci.stderr.contains(
            "idempotency key `pr-7-round-1` was used by round 1 for another call: the review differs (sha256 `"
        ),
        "{}",
        ci.stderr
    );
    assert!(
        ci.stderr.contains("; nothing was recorded\nhint: a retry sends the same review, responses and spend for the same tree; a new review takes a new key"),
        "{}",
        ci.stderr
    );
    assert_eq!(repo.ledger_json().len(), 1);

    let retry = keyed(&repo, "pr-7-round-1", clean, &[]);
    assert_eq!(retry.code, 0, "{}", retry.stderr);
    let json: Value = serde_json::from_str(&retry.stdout).unwrap();
    assert_eq!(
        (json["already_recorded"].as_bool(), json["round"].as_u64()),
        (Some(true), Some(1))
    );
    assert_eq!(repo.ledger_json().len(), 1);
}

/// What makes a retry the same call: the review's bytes, the tree, the
/// responses and the spend. Each one changed alone is refused, named.
#[test]
fn a_retry_is_the_same_review_tree_responses_and_spend() {
    let repo = Repo::with_loop("l", &[]);
    repo.write("src/a.rs", "fn a() {}\n");
    let review = native(&[("F1", "bug")]);
    repo.write(
        "responses.json",
        r#"{"responses":[{"id":"F1","status":"disputed","note":"by design"}]}"#,
    );
    let call: &[&str] = &[
        "--responses",
        "responses.json",
        "--cost-usd",
        "0.25",
        "--tokens",
        "100",
    ];
    keyed(&repo, "k", &review, call).assert(10, "");
    let again = keyed(&repo, "k", &review, call);
    again.assert(10, "");
    let json: Value = serde_json::from_str(&again.stdout).unwrap();
    assert_eq!(json["already_recorded"], true, "{}", again.stdout);

    let refused = |out: Out, what: &str| {
        assert_eq!(out.code, 1, "{what}: {}", out.stdout);
        let said = format!("idempotency key `k` was used by round 1 for another call: {what}");
        assert!(out.stderr.contains(&said), "{what}: {}", out.stderr);
    };
    let spend: &[&str] = &["--cost-usd", "0.25", "--tokens", "100"];
    refused(
        keyed(&repo, "k", &review, spend),
        "the responses differ (1 then, 0 now)",
    );
    refused(
        keyed(
            &repo,
            "k",
            &review,
            &["--responses", "responses.json", "--tokens", "100"],
        ),
        "the spend differs ($0.25, 100 tokens then, no cost, 100 tokens now)",
    );
    refused(
        keyed(&repo, "k", &native(&[("F2", "bug")]), call),
        "the review differs",
    );
    repo.write("src/a.rs", "fn a() { 1 }\n");
    refused(
        keyed(&repo, "k", &review, call),
        "the work tree differs (tree `",
    );
    assert_eq!(repo.ledger_json().len(), 1);
}
