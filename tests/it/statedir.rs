//! The state folder as hostile input: the writer agent can write anywhere in
//! the work tree, `.referee/` included. Links planted there must never send
//! a write (or a read) outside the repository; what killed calls leave
//! behind goes on the next start; a failed append leaves no torn tail; a
//! ledger converted to CRLF says so. docs/reliability.md, section 7, says
//! what each test proves.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::symlink;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

use crate::common::{Driven, Out, Repo, text};

const BUG: &str = r#"{"findings":[{"id":"F1","severity":"bug","title":"off by one","file":"src/a.rs","line":1}]}"#;

/// The link refusal, as every case must print it (after the path).
const LINK: &str = "` is a symlink: referee never follows links under its state folder\n\
                    hint: remove it; to keep state elsewhere use `--dir` or `REFEREE_DIR`";

/// A bound on anything that could hang: reaching it is a failure.
const HANG_GUARD: Duration = Duration::from_secs(60);

fn referee(repo: &Repo, args: &[&str]) -> Out {
    repo.run(args)
}

/// `record --loop LOOP --findings -` with `findings` on stdin.
fn record(repo: &Repo, lp: &str, findings: &str) -> Out {
    record_with(repo.referee_std(), lp, findings)
}

fn record_with(mut cmd: Command, lp: &str, findings: &str) -> Out {
    cmd.args(["record", "--loop", lp, "--findings", "-"]);
    let child = crate::common::spawn_fed(&mut cmd, findings.as_bytes());
    Out::of(&child.wait_with_output().unwrap())
}

/// A finding of its own per call, so every `record` appends a row.
fn finding(n: usize) -> String {
    format!(
        r#"{{"findings":[{{"id":"F{n}","severity":"bug","title":"finding number {n}","file":"src/f{n}.rs","line":{n}}}]}}"#
    )
}

/// A repository with loop `lp`, recorded by hand (no agents, no guards).
fn manual(lp: &str) -> Repo {
    Repo::with_loop(lp, &["--max-rounds", "100", "--guards", "none"])
}

/// A folder outside the repository, with a file whose bytes must survive.
struct Outside {
    dir: tempfile::TempDir,
}

impl Outside {
    fn new() -> Outside {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("target.txt"), "someone else's file\n").unwrap();
        Outside { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn file(&self) -> PathBuf {
        self.dir.path().join("target.txt")
    }

    /// Every entry below the folder, links not followed, with its bytes.
    fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut out = BTreeMap::new();
        let mut stack = vec![self.dir.path().to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let meta = std::fs::symlink_metadata(&path).unwrap();
                if meta.is_dir() {
                    out.insert(path.clone(), b"<dir>".to_vec());
                    stack.push(path);
                } else {
                    out.insert(path.clone(), std::fs::read(&path).unwrap_or_default());
                }
            }
        }
        out
    }
}

/// Asserts that `out` is the link refusal naming `rel` (relative to the repository).
fn refused(out: &Out, rel: &str) {
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains(&format!("`{rel}{LINK}")),
        "expected the refusal of `{rel}`, got:\n{}",
        out.stderr
    );
}

// ---------------------------------------------------------------------------
// Links under the state folder.

#[test]
fn a_symlinked_task_file_is_refused_and_its_target_kept() {
    let f = Driven::new();
    f.file("writer-1.sh", "echo 'fn a() { 1 }' > src/a.rs\n")
        .file("reviewer-1.print", r#"{"findings":[]}"#);
    let outside = Outside::new();
    let before = outside.snapshot();
    std::fs::create_dir_all(f.repo.join(".referee/ledgers/l")).unwrap();
    symlink(outside.file(), f.repo.join(".referee/ledgers/l/task.md")).unwrap();

    let out = referee(&f.repo, &["run", "--task", "overwrite the target"]);
    refused(&out, ".referee/ledgers/l/task.md");
    assert_eq!(outside.snapshot(), before);

    // A resumed run (no --task) reads no task through the link either.
    let out = referee(&f.repo, &["run"]);
    refused(&out, ".referee/ledgers/l/task.md");
}

#[test]
fn a_symlinked_ledger_is_refused_by_writers_and_readers() {
    let repo = manual("l");
    // An empty file: what the ledger would have appended its header and row to.
    let outside = Outside::new();
    std::fs::write(outside.path().join("empty.log"), "").unwrap();
    let before = outside.snapshot();
    std::fs::create_dir_all(repo.join(".referee/ledgers")).unwrap();
    symlink(
        outside.path().join("empty.log"),
        repo.join(".referee/ledgers/l.csv"),
    )
    .unwrap();

    refused(&record(&repo, "l", BUG), ".referee/ledgers/l.csv");
    for args in [
        &["ledger", "verify", "--loop", "l"][..],
        &["ledger", "show", "--loop", "l"],
        &["ledger", "repair", "--loop", "l"],
        &["status", "--loop", "l"],
    ] {
        refused(&referee(&repo, args), ".referee/ledgers/l.csv");
    }
    assert_eq!(outside.snapshot(), before);
}

#[test]
fn a_symlinked_evidence_folder_is_refused() {
    let repo = manual("l");
    let outside = Outside::new();
    let before = outside.snapshot();
    std::fs::create_dir_all(repo.join(".referee/ledgers")).unwrap();
    symlink(outside.path(), repo.join(".referee/ledgers/l")).unwrap();

    refused(&record(&repo, "l", BUG), ".referee/ledgers/l");
    assert_eq!(outside.snapshot(), before);
    let ledger = std::fs::read(repo.join(".referee/ledgers/l.csv")).unwrap_or_default();
    assert!(ledger.is_empty(), "{}", text(&ledger));
}

/// A round's evidence folder (or one file of it) swapped for a link to a
/// copy outside: the digests still match, so only the refusal to follow
/// links keeps `verify` from reading outside the repository.
#[test]
fn verify_reads_no_evidence_through_a_link() {
    let repo = manual("l");
    assert_eq!(record(&repo, "l", &finding(1)).code, 10);
    let round = repo.join(".referee/ledgers/l/round-1");
    let outside = Outside::new();
    let copy = outside.path().join("round-1");
    std::fs::create_dir(&copy).unwrap();
    for entry in std::fs::read_dir(&round).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), copy.join(entry.file_name())).unwrap();
    }
    assert_eq!(referee(&repo, &["ledger", "verify", "--loop", "l"]).code, 0);

    // One file: `state.json` a link to its copy.
    std::fs::remove_file(round.join("state.json")).unwrap();
    symlink(copy.join("state.json"), round.join("state.json")).unwrap();
    refused(
        &referee(&repo, &["ledger", "verify", "--loop", "l"]),
        ".referee/ledgers/l/round-1/state.json",
    );
    refused(
        &referee(&repo, &["status", "--loop", "l"]),
        ".referee/ledgers/l/round-1/state.json",
    );

    // The whole folder a link to the copy.
    let aside = repo.join(".referee/ledgers/l/kept-round-1");
    std::fs::rename(&round, &aside).unwrap();
    symlink(&copy, &round).unwrap();
    refused(
        &referee(&repo, &["ledger", "verify", "--loop", "l"]),
        ".referee/ledgers/l/round-1",
    );
    refused(
        &referee(&repo, &["status", "--loop", "l"]),
        ".referee/ledgers/l/round-1",
    );
}

#[test]
fn a_symlinked_failed_folder_is_refused() {
    let f = Driven::new();
    f.file("writer-1.sh", "echo 'fn a() { 1 }' > src/a.rs\n")
        .file("reviewer-1.print", "LGTM, ship it\n");
    let outside = Outside::new();
    let before = outside.snapshot();
    std::fs::create_dir_all(f.repo.join(".referee/ledgers/l")).unwrap();
    symlink(outside.path(), f.repo.join(".referee/ledgers/l/failed")).unwrap();

    let out = referee(&f.repo, &["run", "--task", "fix it"]);
    refused(&out, ".referee/ledgers/l/failed");
    assert_eq!(outside.snapshot(), before);
}

#[test]
fn a_symlinked_orphans_folder_is_refused() {
    let repo = manual("l");
    // An orphan: what a crash between the evidence rename and the row leaves.
    let orphan = repo.join(".referee/ledgers/l/round-1");
    std::fs::create_dir_all(&orphan).unwrap();
    std::fs::write(orphan.join("orphan.txt"), "left by a crash").unwrap();
    let outside = Outside::new();
    let before = outside.snapshot();
    symlink(outside.path(), repo.join(".referee/ledgers/l/.orphans")).unwrap();

    refused(&record(&repo, "l", BUG), ".referee/ledgers/l/.orphans");
    assert_eq!(outside.snapshot(), before);
    assert!(orphan.join("orphan.txt").exists(), "the orphan was moved");
}

#[test]
fn a_symlinked_contract_or_ledgers_folder_is_refused() {
    let repo = manual("l");
    let outside = Outside::new();
    let contract = repo.join(".referee/contracts/l.toml");
    std::fs::rename(&contract, outside.path().join("l.toml")).unwrap();
    symlink(outside.path().join("l.toml"), &contract).unwrap();
    refused(&record(&repo, "l", BUG), ".referee/contracts/l.toml");
    std::fs::remove_file(&contract).unwrap();
    std::fs::rename(outside.path().join("l.toml"), &contract).unwrap();

    let before = outside.snapshot();
    symlink(outside.path(), repo.join(".referee/ledgers")).unwrap();
    refused(&record(&repo, "l", BUG), ".referee/ledgers");
    refused(&referee(&repo, &["status"]), ".referee/ledgers");
    assert_eq!(outside.snapshot(), before);
}

/// `referee ARGS` (stdin `input`), ended by its pid and failed if it is
/// still running after [`HANG_GUARD`]: a planted fifo must be refused, not
/// waited on.
fn bounded(repo: &Repo, args: &[&str], input: &str) -> Out {
    let mut cmd = repo.referee_std();
    cmd.args(args);
    let mut child = crate::common::spawn_fed(&mut cmd, input.as_bytes());
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > HANG_GUARD {
            let _ = child.kill();
            panic!("`referee {}` hung on a fifo", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Out::of(&child.wait_with_output().unwrap())
}

fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

/// Asserts that `out` refuses the fifo at `rel` (relative to the repository).
fn refused_fifo(out: &Out, rel: &str) {
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let want = format!(
        "`{rel}` is a fifo, not a regular file: referee reads only files it wrote under its state folder\nhint: remove it"
    );
    assert!(
        out.stderr.contains(&want),
        "expected `{want}`, got:\n{}",
        out.stderr
    );
}

/// `record` of a new finding, bounded as [`bounded`] is.
fn record_bounded(repo: &Repo) -> Out {
    bounded(
        repo,
        &["record", "--loop", "l", "--findings", "-"],
        &finding(2),
    )
}

/// A fifo where referee reads its own files (an evidence file, the ledger,
/// the contract): opening or reading one would wait for ever for a writer
/// that never comes. Each is refused by name, at once.
#[test]
fn a_planted_fifo_is_refused_not_waited_on() {
    let repo = manual("l");
    assert_eq!(record(&repo, "l", &finding(1)).code, 10);
    let extra = ".referee/ledgers/l/round-1/extra";
    mkfifo(&repo.join(extra));
    for args in [
        &["ledger", "verify", "--loop", "l"][..],
        &["status", "--loop", "l"],
    ] {
        refused_fifo(&bounded(&repo, args, ""), extra);
    }
    refused_fifo(&record_bounded(&repo), extra);
    std::fs::remove_file(repo.join(extra)).unwrap();

    // The previous round's state, read by every command that reads the loop.
    let state = ".referee/ledgers/l/round-1/state.json";
    let kept = std::fs::read(repo.join(state)).unwrap();
    mkfifo(&repo.join(state));
    refused_fifo(&bounded(&repo, &["status", "--loop", "l"], ""), state);
    refused_fifo(&record_bounded(&repo), state);
    std::fs::remove_file(repo.join(state)).unwrap();
    std::fs::write(repo.join(state), kept).unwrap();
    assert_eq!(
        bounded(&repo, &["ledger", "verify", "--loop", "l"], "").code,
        0
    );

    // The ledger itself, for readers and for the append.
    let ledger = ".referee/ledgers/l.csv";
    let kept = std::fs::read(repo.join(ledger)).unwrap();
    mkfifo(&repo.join(ledger));
    for args in [
        &["ledger", "verify", "--loop", "l"][..],
        &["ledger", "show", "--loop", "l", "--json"],
        &["status", "--loop", "l"],
    ] {
        refused_fifo(&bounded(&repo, args, ""), ledger);
    }
    refused_fifo(&record_bounded(&repo), ledger);
    std::fs::remove_file(repo.join(ledger)).unwrap();
    std::fs::write(repo.join(ledger), kept).unwrap();

    // The contract.
    let contract = ".referee/contracts/l.toml";
    mkfifo(&repo.join(contract));
    let out = bounded(&repo, &["status", "--loop", "l"], "");
    refused_fifo(&out, contract);
}

/// A huge file planted as the previous round's `state.json` (sparse: 512 MiB
/// that take no disk) is refused by the evidence check before it is read:
/// under a 300 MB address-space limit `status` and `record` still answer
/// with the digest mismatch (reading the file first aborts on the failed
/// allocation). The limit is about three times what a debug `record` maps
/// (when it ran threads under mimalloc, at 150 MB a loaded machine
/// sometimes aborted it with no file read at all). Needs `prlimit`
/// (tools.rs says when it is missing).
#[test]
fn a_huge_planted_state_file_is_refused_before_it_is_read() {
    if !crate::common::needs("prlimit", "apt-get install util-linux") {
        return;
    }
    let repo = manual("l");
    assert_eq!(record(&repo, "l", &finding(1)).code, 10);
    let state = repo.join(".referee/ledgers/l/round-1/state.json");
    std::fs::remove_file(&state).unwrap();
    std::fs::File::create(&state)
        .unwrap()
        .set_len(512 << 20)
        .unwrap();
    let bounded = |args: &[&str], input: &str| {
        let mut cmd = Command::new("prlimit");
        cmd.arg("--as=300000000")
            .arg(assert_cmd::cargo::cargo_bin("referee"))
            .args(args)
            .current_dir(repo.path())
            .envs(
                repo.referee_std()
                    .get_envs()
                    .filter_map(|(k, v)| Some((k, v?))),
            );
        let child = crate::common::spawn_fed(&mut cmd, input.as_bytes());
        Out::of(&child.wait_with_output().unwrap())
    };
    for out in [
        bounded(&["status", "--loop", "l"], ""),
        bounded(&["record", "--loop", "l", "--findings", "-"], &finding(2)),
    ] {
        assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
        assert!(
            out.stderr
                .contains("of round 1 does not match its ledger row"),
            "{}",
            out.stderr
        );
    }
}

#[test]
fn a_symlinked_state_folder_is_refused_unless_named_with_dir() {
    let repo = manual("l");
    let outside = Outside::new();
    let moved = outside.path().join("state");
    std::fs::rename(repo.join(".referee"), &moved).unwrap();
    symlink(&moved, repo.join(".referee")).unwrap();
    let before = outside.snapshot();

    refused(&record(&repo, "l", BUG), ".referee");
    refused(&referee(&repo, &["status"]), ".referee");
    refused(&referee(&repo, &["init", "--loop", "m"]), ".referee");
    assert_eq!(outside.snapshot(), before);

    // Named by the user, the link is where they keep their state.
    let mut cmd = repo.referee_std();
    cmd.args(["--dir", ".referee"]);
    let out = record_with(cmd, "l", BUG);
    assert_eq!(out.code, 10, "{}", out.stderr);
    let mut cmd = repo.referee_std();
    cmd.env("REFEREE_DIR", &moved);
    let out = record_with(cmd, "l", &finding(2));
    assert_eq!(out.code, 10, "{}", out.stderr);
    let ledger = std::fs::read_to_string(moved.join("ledgers/l.csv")).unwrap();
    assert_eq!(ledger.lines().count(), 3, "{ledger}");
}

#[test]
fn a_planted_link_in_the_scratch_folder_is_not_followed() {
    let f = Driven::new();
    let outside = Outside::new();
    let before = outside.snapshot();
    // The writer replaces the scratch prompt with a link: the reviewer's
    // prompt must not be written through it.
    let target = outside.file().display().to_string();
    f.file(
        "writer-1.sh",
        format!(
            "echo 'fn a() {{ 1 }}' > src/a.rs\nrm -f \"$REFEREE_PROMPT_FILE\"\nln -s '{target}' \"$REFEREE_PROMPT_FILE\"\n"
        ),
    )
    .file("reviewer-1.print", r#"{"findings":[]}"#);
    let out = referee(&f.repo, &["run", "--task", "fix it"]);
    assert_eq!(outside.snapshot(), before, "{}", out.stderr);
    // The link is replaced, never written through: the round goes on.
    assert_eq!(out.code, 0, "{}", out.stderr);
}

// ---------------------------------------------------------------------------
// Leftovers of killed calls.

/// A pid that no process has: a child that has ended and been reaped.
fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// The folder loop `l`'s snapshots keep their indexes in: `snapshot/` in
/// its anchor, outside the work tree.
fn snapshot_folder(repo: &Repo) -> std::path::PathBuf {
    let states = repo.state_dir().join("states");
    let state = std::fs::read_dir(&states)
        .unwrap()
        .filter_map(Result::ok)
        .next()
        .expect("a state folder");
    state.path().join("loops/l/snapshot")
}

/// The temporary indexes referee left: in the git folder and in every
/// loop's snapshot folder.
fn referee_indexes(repo: &Repo) -> Vec<String> {
    let mut folders = vec![repo.join(".git")];
    if let Ok(states) = std::fs::read_dir(repo.state_dir().join("states")) {
        for state in states.filter_map(Result::ok) {
            if let Ok(loops) = std::fs::read_dir(state.path().join("loops")) {
                folders.extend(
                    loops
                        .filter_map(Result::ok)
                        .map(|l| l.path().join("snapshot")),
                );
            }
        }
    }
    let mut names: Vec<String> = folders
        .iter()
        .filter_map(|folder| std::fs::read_dir(folder).ok())
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("referee-index-"))
        .collect();
    names.sort();
    names
}

#[test]
fn temporary_indexes_of_dead_calls_are_removed_by_the_next_snapshot() {
    let repo = manual("l");
    let dead = dead_pid();
    let live = std::process::id();
    for name in [
        format!("referee-index-{dead}-0-123"),
        format!("referee-index-{dead}-0-123.lock"),
        format!("referee-index-{dead}-7-456.lock"),
        format!("referee-index-{live}-0-789"),
    ] {
        std::fs::write(snapshot_folder(&repo).join(&name), "index").unwrap();
    }
    // Not referee's: never touched.
    std::fs::write(snapshot_folder(&repo).join("referee-index-notapid"), "x").unwrap();
    assert_eq!(record(&repo, "l", BUG).code, 10);
    assert_eq!(
        referee_indexes(&repo),
        vec![
            format!("referee-index-{live}-0-789"),
            "referee-index-notapid".to_string()
        ]
    );
}

/// The work tree is added to a temporary index while the review is still
/// being read; a review that fails to parse records nothing, and leaves no
/// temporary index, no snapshot ref and the user's index as it was.
#[test]
fn a_bad_review_leaves_no_temporary_index_and_no_ref() {
    let repo = manual("l");
    repo.write("src/a.rs", "fn a() { 2 }\n");
    let index = std::fs::read(repo.join(".git/index")).unwrap();
    let out = record(&repo, "l", r#"{"findings":[{"id":"F1"}"#);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("nothing was recorded"),
        "{}",
        out.stderr
    );
    assert_eq!(referee_indexes(&repo), Vec::<String>::new());
    assert_eq!(repo.git(&["for-each-ref", "refs/referee/"]), "");
    assert_eq!(std::fs::read(repo.join(".git/index")).unwrap(), index);
    // The next, good review records round 1 with the file as it is.
    assert_eq!(record(&repo, "l", BUG).code, 10);
    let shown = repo.git(&["show", "refs/referee/l/round-1:src/a.rs"]);
    assert_eq!(shown, "fn a() { 2 }\n");
}

/// `record` killed with its git commands at random moments: the next
/// `record` leaves no temporary index or index lock of theirs in `.git`.
#[test]
fn killed_records_leave_no_temporary_index_behind() {
    let kills: u64 = std::env::var("REFEREE_LEFTOVER_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let repo = Repo::new();
    // Files the killed calls left (each named after its pid), and the most
    // present at one time (the next record removes those of dead pids).
    let mut left_by_kills = 0;
    let mut most_at_once = 0;
    let mut seed: u64 = 7;
    for trial in 0..kills {
        // A new loop every 90 trials keeps each under its round cap.
        let lp = format!("k{}", trial / 90);
        if trial % 90 == 0 {
            repo.init_loop(&lp, &["--max-rounds", "100", "--guards", "none"]);
        }
        let mut cmd = repo.referee_std();
        cmd.args(["record", "--loop", &lp, "--findings", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        let mut child = cmd.spawn().unwrap();
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(finding(trial as usize).as_bytes());
        }
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        std::thread::sleep(Duration::from_millis(5 + (seed >> 33) % 60));
        let pgid = Pid::from_raw(child.id() as i32);
        let _ = killpg(pgid, Signal::SIGKILL);
        let start = Instant::now();
        while child.try_wait().unwrap().is_none() {
            assert!(start.elapsed() < HANG_GUARD, "hang guard");
            std::thread::sleep(Duration::from_millis(2));
        }
        // Its git commands die with it; wait until none is left.
        while kill(pgid, None).is_ok() {
            assert!(start.elapsed() < HANG_GUARD, "hang guard");
            std::thread::sleep(Duration::from_millis(2));
        }
        let present = referee_indexes(&repo);
        let own = format!("referee-index-{}-", child.id());
        left_by_kills += present.iter().filter(|n| n.starts_with(&own)).count();
        most_at_once = most_at_once.max(present.len());
    }
    // Each loop keeps its temporary indexes in its own anchor folder: the
    // next record of each loop clears what its killed ones left.
    for n in 0..kills.div_ceil(90) {
        let out = record(&repo, &format!("k{n}"), &finding(1_000_000));
        assert!(
            out.code == 10 || out.code == 0,
            "{}\n{}",
            out.stdout,
            out.stderr
        );
    }
    assert_eq!(referee_indexes(&repo), Vec::<String>::new());
    println!(
        "leftovers: {kills} killed records left {left_by_kills} temporary index files, \
         at most {most_at_once} at once; none after the next record"
    );
}

/// The writer's pid, once the fake agent wrote it.
fn wait_for_pid(file: &Path) -> i32 {
    let start = Instant::now();
    loop {
        if let Some(pid) = std::fs::read_to_string(file)
            .ok()
            .and_then(|t| t.trim().parse::<i32>().ok())
        {
            return pid;
        }
        assert!(
            start.elapsed() < HANG_GUARD,
            "hang guard: the writer never started"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn scratch_folders(repo: &Repo) -> Vec<PathBuf> {
    std::fs::read_dir(repo.join(".referee/ledgers/l"))
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with(".work-"))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

const SECRET: &str = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789";

#[test]
fn a_killed_run_leaves_its_scratch_folder_redacted_and_only_until_the_next_command() {
    let f = Driven::new();
    f.file(
        "writer-1.sh",
        "echo $$ > \"$FAKE_DIR/agent.pid\"\nsleep 60\n",
    );
    let mut child = f
        .repo
        .referee_std()
        .args(["run", "--task", &format!("deploy with key {SECRET}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let agent = wait_for_pid(&f.script.path().join("agent.pid"));
    let scratch = scratch_folders(&f.repo);
    assert_eq!(scratch.len(), 1, "{scratch:?}");
    let prompt = std::fs::read_to_string(scratch[0].join("prompt.md")).unwrap();
    assert!(prompt.contains("deploy with key"), "{prompt}");
    assert!(!prompt.contains(SECRET), "the scratch prompt holds the key");
    // The agent got the exact task on stdin.
    let calls = std::fs::read_to_string(f.script.path().join("calls.log")).unwrap();
    assert!(calls.contains(SECRET));

    // While the run lives, other commands leave its scratch folder alone.
    assert_eq!(referee(&f.repo, &["status"]).code, 0);
    assert_eq!(scratch_folders(&f.repo).len(), 1);

    let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL);
    child.wait().unwrap();
    let _ = killpg(Pid::from_raw(agent), Signal::SIGKILL);
    assert_eq!(scratch_folders(&f.repo).len(), 1);

    // The next command that opens the loop, whatever it is, removes it.
    let out = referee(&f.repo, &["status"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(scratch_folders(&f.repo), Vec::<PathBuf>::new());
}

// ---------------------------------------------------------------------------
// A failed append.

/// The unit of `ulimit -f` in this `sh` (512 bytes in POSIX mode).
fn ulimit_unit() -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new("sh")
        .args([
            "-c",
            "trap '' XFSZ; ulimit -f 1; head -c 4096 /dev/zero > \"$0\"; wc -c < \"$0\"",
        ])
        .arg(dir.path().join("probe"))
        .output()
        .unwrap();
    text(&out.stdout).trim().parse().unwrap()
}

/// A write cut short by the file-size limit (`EFBIG`, as `ENOSPC` would cut
/// it) leaves the ledger as it was: the next `record` appends normally.
#[test]
fn a_failed_append_leaves_no_torn_tail() {
    let unit = ulimit_unit();
    let repo = manual("l");
    let csv = repo.join(".referee/ledgers/l.csv");
    // Rounds until the limit falls inside the next row: the ledger ends at
    // least 1 byte before a multiple of the unit, and the row is longer than
    // that gap (evidence files stay far below the limit).
    let mut n = 0;
    let limit_blocks = loop {
        n += 1;
        assert_eq!(record(&repo, "l", &finding(n)).code, 10);
        let len = std::fs::metadata(&csv).unwrap().len();
        let blocks = len.div_ceil(unit);
        let gap = blocks * unit - len;
        if n >= 4 && (40..=300).contains(&gap) {
            break blocks;
        }
        assert!(n < 60, "no round put the limit inside a row");
    };
    let before = std::fs::read(&csv).unwrap();

    let mut cmd = Command::new("sh");
    cmd.args([
        "-c",
        "trap '' XFSZ; ulimit -f \"$1\"; shift; exec \"$@\"",
        "sh",
        &limit_blocks.to_string(),
    ]);
    let env = repo.referee_std();
    cmd.arg(env.get_program());
    cmd.current_dir(repo.path())
        .envs(env.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))))
        .env_remove("REFEREE_DIR");
    let out = record_with(cmd, "l", &finding(1000));
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    // The ledger's write failed, not an evidence file's.
    assert!(
        out.stderr.contains("l.csv`: File too large"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read(&csv).unwrap(),
        before,
        "the failed append left bytes behind"
    );

    let out = referee(&repo, &["ledger", "verify", "--loop", "l"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = record(&repo, "l", &finding(1001));
    assert_eq!(out.code, 10, "{}", out.stderr);
    let out = referee(&repo, &["ledger", "verify", "--loop", "l"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains(&format!("{0} rows ({0} rounds) verified", n + 1)),
        "{}",
        out.stdout
    );
}

// ---------------------------------------------------------------------------
// Line endings.

fn to_crlf(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for &b in bytes {
        if b == b'\n' {
            out.push(b'\r');
        }
        out.push(b);
    }
    out
}

#[test]
fn a_ledger_converted_to_crlf_says_so() {
    let repo = manual("l");
    for n in 1..=3 {
        assert_eq!(record(&repo, "l", &finding(n)).code, 10);
    }
    let csv = repo.join(".referee/ledgers/l.csv");
    let lf = std::fs::read(&csv).unwrap();

    std::fs::write(&csv, to_crlf(&lf)).unwrap();
    let want = "header ends with `\\r\\n`: the ledger was converted to CRLF line endings, probably by git's autocrlf\nhint: ";
    for out in [
        referee(&repo, &["ledger", "verify", "--loop", "l"]),
        referee(&repo, &["status", "--loop", "l"]),
        record(&repo, "l", &finding(9)),
    ] {
        assert_eq!(out.code, 1, "{}", out.stderr);
        assert!(out.stderr.contains(want), "{}", out.stderr);
    }

    // One row converted (an editor that saved one line so).
    let text = String::from_utf8(lf.clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mixed = format!("{}\n{}\n{}\n{}\r\n", lines[0], lines[1], lines[2], lines[3]);
    std::fs::write(&csv, mixed).unwrap();
    for out in [
        referee(&repo, &["ledger", "verify", "--loop", "l"]),
        record(&repo, "l", &finding(9)),
    ] {
        assert_eq!(out.code, 1, "{}", out.stderr);
        assert!(
            out.stderr.contains(
                "row 3 ends with `\\r\\n`: the ledger was converted to CRLF line endings"
            ),
            "{}",
            out.stderr
        );
    }
    std::fs::write(&csv, &lf).unwrap();
    assert_eq!(referee(&repo, &["ledger", "verify", "--loop", "l"]).code, 0);
}

/// `init` writes `.referee/.gitattributes`: committed state checked out by
/// a git with `core.autocrlf=true` keeps its LF ledger. Without the file,
/// the same checkout converts it, and the ledger says so.
#[test]
fn committed_state_survives_autocrlf() {
    let repo = manual("l");
    let attributes = repo.read(".referee/.gitattributes");
    assert!(
        attributes.lines().any(|l| l.trim() == "* -text"),
        "{attributes}"
    );
    for n in 1..=2 {
        assert_eq!(record(&repo, "l", &finding(n)).code, 10);
    }
    let checkout = |repo: &Repo| {
        repo.git(&["add", "-A", ".referee"]);
        repo.git(&["commit", "-q", "-m", "state"]);
        std::fs::remove_file(repo.join(".referee/ledgers/l.csv")).unwrap();
        repo.git(&[
            "-c",
            "core.autocrlf=true",
            "checkout",
            "--",
            ".referee/ledgers/l.csv",
        ]);
    };
    checkout(&repo);
    let out = referee(&repo, &["ledger", "verify", "--loop", "l"]);
    assert_eq!(out.code, 0, "{}", out.stderr);

    // The control: the same checkout without the attributes converts it.
    std::fs::remove_file(repo.join(".referee/.gitattributes")).unwrap();
    checkout(&repo);
    assert!(
        std::fs::read(repo.join(".referee/ledgers/l.csv"))
            .unwrap()
            .ends_with(b"\r\n")
    );
    let out = referee(&repo, &["ledger", "verify", "--loop", "l"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("header ends with `\\r\\n`: the ledger was converted to CRLF"),
        "{}",
        out.stderr
    );
}
