//! Hostile agents against `referee run`: processes that leave their process
//! group or session, a referee killed with SIGKILL, and files an agent turns
//! into FIFOs, symlinks or hard links. A watchdog bounds every `referee` this
//! file starts, so a hang fails the test instead of wedging the suite, and
//! every process an agent leaves behind is ended by the pid it recorded.
//! docs/reliability.md says what each test proves.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::common::{Repo, text};

/// Reaching it is a failure (a hang), never a measurement.
const WATCHDOG: Duration = Duration::from_secs(20);
/// The agents' timeout in the escape tests.
const TIMEOUT: Duration = Duration::from_secs(2);
/// Timeout + 2 s is the promise; the rest is room for a loaded 2-core machine
/// to start `referee`, snapshot and write its evidence. Today's hangs last
/// 60 s to forever, so the bound still separates the two.
const RETURNS_BY: Duration = Duration::from_secs(8);
const CLEAN: &str = r#"{"findings":[]}"#;
const FIX: &str = "echo 'fn a() { 2 }' > src/a.rs\n";

/// A repository whose loop `l` is driven by the fake agent, a folder of agent
/// scripts, and a folder "outside" that no file under `.referee/` may copy.
struct Hostile {
    repo: Repo,
    script: tempfile::TempDir,
    outside: tempfile::TempDir,
}

impl Hostile {
    fn new(writer: &str) -> Hostile {
        let repo = Repo::new();
        repo.write("src/a.rs", "fn a() { 1 }\n");
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "-m", "a"]);
        let script = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let dir = script.path().display().to_string();
        let agent = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/agents/fake-agent.sh")
            .display()
            .to_string();
        let section = |role: &str, extra: &str| {
            format!(
                "[{role}]\npreset = \"command\"\ncommand = [\"{agent}\"]\nenv = {{ FAKE_DIR = \"{dir}\" }}\n{extra}\n"
            )
        };
        let contract = format!(
            "loop = \"l\"\nmax_rounds = 4\n{}{}",
            section("writer", writer),
            section("reviewer", "")
        );
        let path = script.path().join("contract.toml");
        std::fs::write(&path, contract).unwrap();
        let out = repo
            .referee_std()
            .args(["init", "--from", path.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        std::fs::write(outside.path().join("secret.txt"), SECRET).unwrap();
        Hostile {
            repo,
            script,
            outside,
        }
    }

    fn file(&self, name: &str, body: &str) -> &Hostile {
        std::fs::write(self.script.path().join(name), body).unwrap();
        self
    }

    fn at(&self, name: &str) -> PathBuf {
        self.script.path().join(name)
    }

    fn secret(&self) -> PathBuf {
        self.outside.path().join("secret.txt")
    }

    fn spawn(&self, args: &[&str]) -> Child {
        self.repo
            .referee_std()
            .arg("run")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// `referee run`, ended with SIGKILL (and the test failed) if it outlives
    /// the watchdog.
    fn run(&self, args: &[&str]) -> Ran {
        let start = Instant::now();
        let mut ran = watch(self.spawn(args));
        ran.elapsed = start.elapsed();
        ran
    }

    fn rows(&self) -> usize {
        let out = self
            .repo
            .referee_std()
            .args(["ledger", "show", "--json"])
            .output()
            .unwrap();
        crate::common::ledger_rows(&out.stdout).len()
    }

    /// Stored files under `.referee/` that hold the outside file's bytes.
    fn copies_of_the_secret(&self) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let mut stack = vec![self.repo.join(".referee")];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.filter_map(Result::ok) {
                let kind = entry.file_type().unwrap();
                if kind.is_dir() {
                    stack.push(entry.path());
                } else if kind.is_file()
                    && std::fs::read(entry.path())
                        .unwrap()
                        .windows(SECRET.len())
                        .any(|w| w == SECRET.as_bytes())
                {
                    found.push(entry.path());
                }
            }
        }
        found
    }
}

const SECRET: &str = "outside-bytes-5b1e0c7d";

struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    /// From the call to its end.
    elapsed: Duration,
}

/// Waits for `child` (a `referee`); ends it with SIGKILL and fails the test
/// if it outlives the watchdog. `elapsed` counts from this call.
fn watch(mut child: Child) -> Ran {
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > WATCHDOG {
            // Still unreaped: the pid is this child's, whatever it left.
            let _ = child.kill();
            let _ = child.wait();
            panic!("watchdog: `referee run` still ran after {WATCHDOG:?}: it hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let elapsed = start.elapsed();
    let out = child.wait_with_output().unwrap();
    Ran {
        code: out.status.code(),
        stdout: text(&out.stdout),
        stderr: text(&out.stderr),
        elapsed,
    }
}

/// Processes an agent recorded (`<file>` holds a pid): each one still alive
/// with `comm` as recorded is ended with SIGKILL when the test ends, passed
/// or failed, so a failing test leaves nothing running.
struct Leftovers(Vec<(PathBuf, &'static str)>);

impl Drop for Leftovers {
    fn drop(&mut self) {
        for (file, comm) in &self.0 {
            if let Some(pid) = pid_in(file)
                && alive(pid)
                && std::fs::read_to_string(format!("/proc/{pid}/comm"))
                    .is_ok_and(|c| c.trim() == *comm)
            {
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
        }
    }
}

fn pid_in(file: &Path) -> Option<i32> {
    std::fs::read_to_string(file).ok()?.trim().parse().ok()
}

/// Waits for an agent to write its pid file.
fn wait_pid(file: &Path) -> i32 {
    let start = Instant::now();
    loop {
        if let Some(pid) = pid_in(file) {
            return pid;
        }
        assert!(
            start.elapsed() < WATCHDOG,
            "watchdog: `{}` was never written",
            file.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Field `n` (1-based, as proc(5) counts) of `/proc/<pid>/stat`.
fn stat_field(pid: i32, n: usize) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state …`: comm may hold spaces and parentheses.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(n - 3).map(str::to_string)
}

/// Running, or stopped: anything but gone or a zombie waiting to be reaped.
fn alive(pid: i32) -> bool {
    stat_field(pid, 3).is_some_and(|state| state != "Z")
}

/// True once `pid` is gone, polling up to `within`.
fn dies_within(pid: i32, within: Duration) -> bool {
    let start = Instant::now();
    while alive(pid) {
        if start.elapsed() > within {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// Runs the round whose writer escapes and checks the promise: `run` ends by
/// the timeout (+2 s), names it, records nothing, and the escaped process
/// (whose pid the agent wrote to `escaped.pid`) is gone.
fn assert_escape_is_ended(f: &Hostile) {
    let _left = Leftovers(vec![(f.at("escaped.pid"), "sleep")]);
    let ran = f.run(&["--task", "t"]);
    let escaped = pid_in(&f.at("escaped.pid")).expect("the agent wrote `escaped.pid`");
    // The agent did leave: otherwise this test could not fail.
    let left = std::fs::read_to_string(f.at("escaped.where")).unwrap();
    assert_eq!(
        left.trim(),
        escaped.to_string(),
        "the escaped sleep leads its own group or session"
    );
    assert_eq!(ran.code, Some(1), "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stderr
            .contains("round 1: writer `command` timed out after 2s"),
        "{}",
        ran.stderr
    );
    eprintln!(
        "`run` returned in {:?} with a {TIMEOUT:?} timeout",
        ran.elapsed
    );
    assert!(
        ran.elapsed < RETURNS_BY,
        "`run` took {:?} with a {TIMEOUT:?} timeout",
        ran.elapsed
    );
    assert!(
        dies_within(escaped, Duration::from_secs(20)),
        "the escaped `sleep` (pid {escaped}) outlived `run`"
    );
    assert_eq!(f.rows(), 0);
}

#[test]
fn an_agent_whose_child_leaves_its_process_group_cannot_hang_run() {
    // dash turns job control off without a tty.
    if !crate::common::needs("bash", "apt-get install bash") {
        return;
    }
    let f = Hostile::new(&format!("timeout = \"{}s\"", TIMEOUT.as_secs()));
    // Job control puts the background job in a process group of its own;
    // every process ignores SIGTERM, so only SIGKILL ends them.
    f.file(
        "writer-1.sh",
        r#"trap '' TERM
bash -c 'set -m; sleep 1000 & echo $! > "$FAKE_DIR/escaped.pid"
cut -d" " -f5 /proc/$!/stat > "$FAKE_DIR/escaped.where"; wait'
"#,
    );
    assert_escape_is_ended(&f);
}

#[test]
fn a_setsid_grandchild_holding_stdout_cannot_hang_run() {
    if !crate::common::needs("setsid", "apt-get install util-linux") {
        return;
    }
    let f = Hostile::new(&format!("timeout = \"{}s\"", TIMEOUT.as_secs()));
    // A session of its own, with the agent's stdout; the agent waits on it.
    // Both ignore SIGTERM.
    f.file(
        "writer-1.sh",
        r#"trap '' TERM
setsid sleep 1000 & echo $! > "$FAKE_DIR/escaped.pid"
i=0; while [ "$(cut -d' ' -f6 /proc/$!/stat)" != "$!" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
cut -d' ' -f6 /proc/$!/stat > "$FAKE_DIR/escaped.where"
wait
"#,
    );
    assert_escape_is_ended(&f);
}

#[test]
fn sigterm_ends_run_and_the_child_that_left_its_session_at_once() {
    if !crate::common::needs("setsid", "apt-get install util-linux") {
        return;
    }
    let f = Hostile::new("");
    let _left = Leftovers(vec![(f.at("escaped.pid"), "sleep")]);
    f.file(
        "writer-1.sh",
        "setsid sleep 1000 & echo $! > \"$FAKE_DIR/escaped.pid\"\nwait\n",
    );
    let run = f.spawn(&["--task", "t"]);
    let escaped = wait_pid(&f.at("escaped.pid"));
    // Still unreaped: the pid is referee's.
    kill(Pid::from_raw(run.id() as i32), Signal::SIGTERM).unwrap();
    let ran = watch(run);
    eprintln!("`run` returned {:?} after SIGTERM", ran.elapsed);
    assert_eq!(ran.code, Some(143), "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stderr.contains(
            "round 1: writer `command` interrupted; it and every process it started were killed"
        ),
        "{}",
        ran.stderr
    );
    // A hang guard: the escaped `sleep 1000` is not waited for.
    assert!(ran.elapsed < Duration::from_secs(60), "{:?}", ran.elapsed);
    assert!(
        dies_within(escaped, Duration::from_secs(20)),
        "the escaped `sleep` (pid {escaped}) outlived `run`"
    );
    assert_eq!(f.rows(), 0);
}

#[test]
fn a_grandchild_left_holding_stdout_by_a_finished_agent_cannot_hang_run() {
    if !crate::common::needs("setsid", "apt-get install util-linux") {
        return;
    }
    let f = Hostile::new("");
    let _left = Leftovers(vec![(f.at("escaped.pid"), "sleep")]);
    // The writer does its work and exits 0; its grandchild keeps stdout open
    // in a session of its own, where no timeout applies any more.
    f.file(
        "writer-1.sh",
        &format!("setsid sleep 1000 & echo $! > \"$FAKE_DIR/escaped.pid\"\n{FIX}"),
    )
    .file("reviewer-1.print", CLEAN);
    let ran = f.run(&["--task", "t"]);
    assert_eq!(ran.code, Some(0), "{}{}", ran.stdout, ran.stderr);
    assert!(ran.stdout.contains("stop: clean"), "{}", ran.stdout);
    assert!(ran.elapsed < RETURNS_BY, "`run` took {:?}", ran.elapsed);
    let escaped = pid_in(&f.at("escaped.pid")).unwrap();
    assert!(
        dies_within(escaped, Duration::from_secs(20)),
        "the writer's `sleep` (pid {escaped}) outlived `run`"
    );
}

#[test]
fn an_orphan_with_a_made_up_call_marker_is_still_ended_with_its_call() {
    if !crate::common::needs("setsid", "apt-get install util-linux") {
        return;
    }
    let f = Hostile::new("");
    let _left = Leftovers(vec![(f.at("escaped.pid"), "sleep")]);
    // Orphaned at once (its parent, a subshell, exits), in a session of its
    // own, holding nothing of the agent's, and claiming another call's
    // marker: only the orphan rule of the subreaper can find it.
    f.file(
        "writer-1.sh",
        &format!(
            "( REFEREE_CALL=forged setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > \"$FAKE_DIR/escaped.pid\" )\n{FIX}"
        ),
    )
    .file("reviewer-1.print", CLEAN);
    let ran = f.run(&["--task", "t"]);
    assert_eq!(ran.code, Some(0), "{}{}", ran.stdout, ran.stderr);
    let escaped = pid_in(&f.at("escaped.pid")).unwrap();
    assert!(
        dies_within(escaped, Duration::from_secs(20)),
        "the writer's orphan (pid {escaped}) with a made-up marker outlived its call"
    );
}

#[test]
fn a_sigkilled_run_takes_its_agent_along_and_the_next_run_ends_the_rest() {
    let f = Hostile::new("");
    let _left = Leftovers(vec![
        (f.at("agent.pid"), "fake-agent.sh"),
        (f.at("child.pid"), "sleep"),
    ]);
    f.file(
        "writer-1.sh",
        "echo $$ > \"$FAKE_DIR/agent.pid\"\nsleep 1000 &\necho $! > \"$FAKE_DIR/child.pid\"\nwait\n",
    );
    let mut run = f.spawn(&["--task", "t"]);
    let agent = wait_pid(&f.at("agent.pid"));
    let child = wait_pid(&f.at("child.pid"));
    assert!(alive(agent) && alive(child));
    run.kill().unwrap();
    run.wait().unwrap();
    // PR_SET_PDEATHSIG: the kernel ends the agent with its referee.
    assert!(
        dies_within(agent, Duration::from_secs(20)),
        "the agent (pid {agent}) outlived its SIGKILLed referee"
    );
    // Its background child is no child of referee's: nothing could end it
    // then. The next `run` of the loop ends it before it starts the round.
    f.file("writer-1.sh", FIX).file("reviewer-1.print", CLEAN);
    let ran = f.run(&[]);
    assert_eq!(ran.code, Some(0), "{}{}", ran.stdout, ran.stderr);
    assert!(
        !alive(child),
        "the agent's child (pid {child}) survived the next `run`"
    );
}

/// A reviewer that leaves `what` at its `REFEREE_OUTPUT_FILE` makes `run`
/// fail quickly with `message`, record nothing and copy nothing from outside.
fn assert_output_refused(f: &Hostile, reviewer: &str, message: &str) {
    f.file("writer-1.sh", FIX).file("reviewer-1.sh", reviewer);
    let ran = f.run(&["--task", "t"]);
    assert_eq!(ran.code, Some(1), "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stderr.contains("round 1: reviewer `command`: `")
            && ran.stderr.contains(message)
            && ran.stderr.contains("nothing was recorded"),
        "{}",
        ran.stderr
    );
    assert!(ran.elapsed < RETURNS_BY, "`run` took {:?}", ran.elapsed);
    assert_eq!(f.rows(), 0);
    assert_eq!(f.copies_of_the_secret(), Vec::<PathBuf>::new());
    // The loop is not left locked: the next run drives it.
    f.file("reviewer-1.sh", "").file("reviewer-1.print", CLEAN);
    let ran = f.run(&[]);
    assert_eq!(ran.code, Some(0), "{}{}", ran.stdout, ran.stderr);
}

#[test]
fn a_fifo_as_the_output_file_is_refused_not_waited_on() {
    let f = Hostile::new("");
    assert_output_refused(
        &f,
        "mkfifo \"$REFEREE_OUTPUT_FILE\"\n",
        "/output` is a fifo, not a regular file",
    );
}

#[test]
fn a_symlink_as_the_output_file_is_refused_not_followed() {
    let f = Hostile::new("");
    let reviewer = format!(
        "ln -s '{}' \"$REFEREE_OUTPUT_FILE\"\n",
        f.secret().display()
    );
    assert_output_refused(
        &f,
        &reviewer,
        "/output` is a symbolic link, not a regular file",
    );
}

#[test]
fn a_hard_link_as_the_output_file_is_refused() {
    let f = Hostile::new("");
    let reviewer = format!("ln '{}' \"$REFEREE_OUTPUT_FILE\"\n", f.secret().display());
    assert_output_refused(
        &f,
        &reviewer,
        "/output` has 2 hard links: it may be another file's bytes",
    );
}

#[test]
fn files_for_the_reviewer_are_written_fresh_not_through_what_the_writer_left() {
    let f = Hostile::new("");
    // The writer knows the scratch folder: it plants a symlink to an outside
    // file where the patch goes, and a FIFO where the reviewer's prompt goes.
    let writer = format!(
        "{FIX}d=$(dirname \"$REFEREE_PROMPT_FILE\")\nln -s '{}' \"$d/patch.diff\"\nrm -f \"$d/prompt.md\"\nmkfifo \"$d/prompt.md\"\n",
        f.secret().display()
    );
    f.file("writer-1.sh", &writer)
        .file("reviewer-1.print", CLEAN);
    let ran = f.run(&["--task", "t"]);
    assert_eq!(ran.code, Some(0), "{}{}", ran.stdout, ran.stderr);
    assert_eq!(std::fs::read_to_string(f.secret()).unwrap(), SECRET);
    let calls = std::fs::read_to_string(f.at("calls.log")).unwrap();
    assert!(
        calls.contains("+fn a() { 2 }"),
        "the reviewer got the patch: {calls}"
    );
}
