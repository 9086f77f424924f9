//! Runs one agent call: the only place that spawns agent processes. The call
//! gets its own process group, and the marker `REFEREE_CALL` in its
//! environment; at its end (a timeout, a Ctrl-C, or its exit) every process
//! of the call is ended, including those that left the group or the session
//! (see [`tree`](super::tree)): with [`supervise`], the referee is the child
//! subreaper, so orphans come back to it instead of to init. The agent dies
//! with its referee (`PR_SET_PDEATHSIG`), and what it started is recorded
//! for the next `run` to end (see [`leftovers`](super::leftovers)).
//! Stdout and stderr are drained by threads into capped buffers, so an agent
//! printing gigabytes costs bounded memory, and no pipe is waited on without
//! a deadline. Arguments and stdin are passed as bytes: nothing goes through
//! a shell.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill, killpg};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;

use super::leftovers::{self, Record};
use super::tree::{self, Family, Proc};

/// Most bytes kept of one stream; the rest is drained and counted.
pub const OUTPUT_CAP: usize = 32 * 1024 * 1024;
/// The environment variable that marks every process of one call.
pub const MARKER: &str = "REFEREE_CALL";
/// After SIGTERM, how long the call's processes have to exit.
const TERM_GRACE: Duration = Duration::from_secs(1);
/// After that, how long SIGKILL is repeated on what is left (new children).
const KILL_GRACE: Duration = Duration::from_millis(500);
/// How long the output of a timed-out or interrupted call is read after its
/// processes were ended: the output is evidence only.
const READ_GRACE_FAILED: Duration = Duration::from_millis(300);
/// How long the output of a call that exited is read after its processes
/// were ended: its stdout is the result, so it must be whole.
const READ_GRACE_DONE: Duration = Duration::from_secs(5);

static SUPERVISING: AtomicBool = AtomicBool::new(false);
static CALLS: AtomicU64 = AtomicU64::new(0);

/// One process to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub program: String,
    pub args: Vec<OsString>,
    /// Added to the inherited environment.
    pub env: Vec<(String, String)>,
    pub stdin: Option<Vec<u8>>,
    pub cwd: PathBuf,
    pub timeout: Duration,
    /// Where the call's processes are recorded while it runs (the round's
    /// scratch folder), so the next `run` can end them if this referee is
    /// killed.
    pub record: Option<PathBuf>,
}

impl Call {
    /// The command line as a person would read it (for messages and
    /// evidence only; it is never run through a shell).
    pub fn display(&self) -> String {
        let mut words = vec![crate::text::shell_word(&self.program)];
        for arg in &self.args {
            let arg = arg.to_string_lossy();
            words.push(if arg.len() > 80 {
                format!(
                    "{}…",
                    crate::text::shell_word(&arg.chars().take(60).collect::<String>())
                )
            } else {
                crate::text::shell_word(&arg)
            });
        }
        words.join(" ")
    }
}

/// A stream as captured.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    pub bytes: Vec<u8>,
    /// Bytes the agent printed beyond [`OUTPUT_CAP`].
    pub dropped: u64,
}

/// A call that ran to its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    /// The exit code; `None` when a signal ended it.
    pub code: Option<i32>,
    pub stdout: Captured,
    pub stderr: Captured,
    pub elapsed: Duration,
}

/// Why a call did not run to its end.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("cannot start `{program}`: {cause}")]
    Spawn {
        program: String,
        cause: std::io::Error,
    },
    #[error("timed out after {}; it and every process it started were killed", crate::text::timeout(*.after))]
    TimedOut {
        after: Duration,
        stdout: Captured,
        stderr: Captured,
    },
    #[error("interrupted; it and every process it started were killed")]
    Interrupted { stdout: Captured, stderr: Captured },
    #[error(
        "exited, but its output was still held open {} later by a process the referee could not end",
        crate::text::timeout(READ_GRACE_DONE)
    )]
    OutputHeld,
    #[error("waiting for it failed: {0}")]
    Wait(std::io::Error),
}

/// Makes this process the child subreaper (Linux), so that what an agent
/// orphans comes back to it and is ended with the call. For `main`: a
/// process that runs one call at a time, from its main thread. Says whether
/// it took effect.
pub fn supervise() -> bool {
    #[cfg(target_os = "linux")]
    if nix::sys::prctl::set_child_subreaper(true).is_ok() {
        SUPERVISING.store(true, Ordering::SeqCst);
    }
    SUPERVISING.load(Ordering::SeqCst)
}

/// Runs `call` to its end, its timeout, or `interrupt`. `tick` is called
/// about ten times a second with the time elapsed (for a spinner).
pub fn run(
    call: &Call,
    interrupt: &AtomicBool,
    tick: &mut dyn FnMut(Duration),
) -> Result<Finished, ProcessError> {
    let me = std::process::id() as i32;
    let my_start = tree::get(me).map_or(0, |p| p.start);
    let marker_value = format!("{me}.{my_start}.{}", CALLS.fetch_add(1, Ordering::SeqCst));
    let reaper = SUPERVISING.load(Ordering::SeqCst).then_some(me);
    let before: HashSet<i32> = match (reaper, tree::scan()) {
        (Some(me), Some(table)) => table
            .iter()
            .filter(|p| p.ppid == me)
            .map(|p| p.pid)
            .collect(),
        _ => HashSet::new(),
    };
    let mut command = Command::new(&call.program);
    command
        .args(&call.args)
        .current_dir(&call.cwd)
        .envs(call.env.iter().map(|(k, v)| (k, v)))
        .env(MARKER, &marker_value)
        .stdin(if call.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group: the terminal's Ctrl-C reaches the referee,
        // which then ends the whole call; a timeout does the same.
        .process_group(0);
    die_with_referee(&mut command);
    // Listed as it is spawned, its marker before: a call ending meanwhile
    // (a panel's other reviewer) never takes this one for its orphan.
    let marker = format!("{MARKER}={marker_value}");
    let _live = Live::add(&marker);
    let mut child = crate::children::spawn(&mut command).map_err(|cause| ProcessError::Spawn {
        program: call.program.clone(),
        cause,
    })?;
    let start = Instant::now();
    let pid = child.id() as i32;
    let family = Family {
        agent: (pid, tree::get(pid).map_or(0, |p| p.start)),
        reaper,
        before,
        spared: HashSet::from([me]),
    };
    if let (Some(path), Some(boot), true) = (&call.record, tree::boot_id(), my_start > 0) {
        // Best effort: the record only matters if this referee is killed.
        let _ = leftovers::write(
            path,
            &Record {
                boot,
                referee: (me, my_start),
                agent: family.agent,
                marker: marker.clone(),
            },
        );
    }
    if let (Some(bytes), Some(mut stdin)) = (call.stdin.clone(), child.stdin.take()) {
        // Never joined: an agent that does not read its stdin must not hold
        // the referee. Once the call's processes are ended, the write fails.
        std::thread::spawn(move || {
            let _ = stdin.write_all(&bytes);
        });
    }
    let out = Reader::start(child.stdout.take());
    let err = Reader::start(child.stderr.take());

    let outcome = wait(pid, start, call.timeout, interrupt, tick);
    // Whatever happened, nothing the agent started may outlive the call or
    // hold its pipes open.
    end(&mut child, &family, &marker, outcome.is_err());
    if let Some(path) = &call.record {
        // The record names a running call only: a stale one could name a
        // process group whose id was reused since.
        let _ = std::fs::remove_file(path);
    }
    let grace = if outcome.is_ok() {
        READ_GRACE_DONE
    } else {
        READ_GRACE_FAILED
    };
    let deadline = Instant::now() + grace;
    let (stdout, out_whole) = out.finish(deadline);
    let (stderr, err_whole) = err.finish(deadline);
    let elapsed = start.elapsed();
    match outcome {
        Ok(_) if !(out_whole && err_whole) => Err(ProcessError::OutputHeld),
        Ok(code) => Ok(Finished {
            code,
            stdout,
            stderr,
            elapsed,
        }),
        Err(ProcessError::TimedOut { after, .. }) => Err(ProcessError::TimedOut {
            after,
            stdout,
            stderr,
        }),
        Err(ProcessError::Interrupted { .. }) => Err(ProcessError::Interrupted { stdout, stderr }),
        Err(other) => Err(other),
    }
}

/// How often a waiting call looks at the interrupt flag and feeds `tick`.
const TICK: Duration = Duration::from_millis(100);

/// Waits for the agent `pid` to exit, until `timeout` after `start` or
/// `interrupt`: its exit code (`None` for a signal), or why it did not
/// exit. A thread blocks on the exit, so the call returns the moment the
/// agent exits; this one wakes every [`TICK`] only for the flag and `tick`.
fn wait(
    pid: i32,
    start: Instant,
    timeout: Duration,
    interrupt: &AtomicBool,
    tick: &mut dyn FnMut(Duration),
) -> Result<Option<i32>, ProcessError> {
    let (sender, exited) = mpsc::channel();
    std::thread::Builder::new()
        .name("agent-wait".into())
        .spawn(move || {
            let _ = sender.send(wait_exit(Pid::from_raw(pid)));
        })
        .map_err(ProcessError::Wait)?;
    loop {
        let left = timeout.saturating_sub(start.elapsed());
        match exited.recv_timeout(left.min(TICK)) {
            Ok(Ok(WaitStatus::Exited(_, code))) => return Ok(Some(code)),
            Ok(Ok(_)) => return Ok(None),
            Ok(Err(errno)) => return Err(ProcessError::Wait(errno.into())),
            Err(RecvTimeoutError::Disconnected) => {
                return Err(ProcessError::Wait(std::io::Error::other(
                    "the thread waiting on it ended",
                )));
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
        let elapsed = start.elapsed();
        if elapsed >= timeout {
            return Err(ProcessError::TimedOut {
                after: timeout,
                stdout: Captured::default(),
                stderr: Captured::default(),
            });
        }
        if interrupt.load(Ordering::SeqCst) {
            return Err(ProcessError::Interrupted {
                stdout: Captured::default(),
                stderr: Captured::default(),
            });
        }
        tick(elapsed);
    }
}

/// Blocks until `pid` exits. On Linux it is left a zombie (`WNOWAIT`):
/// until [`end`] reaps it, its pid, and so the id of its process group that
/// `end` signals, cannot name another process. Elsewhere (no `waitid`) it
/// is reaped here, and the group's id stays the call's only while one of
/// its processes lives.
fn wait_exit(pid: Pid) -> nix::Result<WaitStatus> {
    loop {
        #[cfg(target_os = "linux")]
        let waited = nix::sys::wait::waitid(
            nix::sys::wait::Id::Pid(pid),
            WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT,
        );
        #[cfg(not(target_os = "linux"))]
        let waited = waitpid(pid, None);
        if waited != Err(nix::errno::Errno::EINTR) {
            return waited;
        }
    }
}

/// The kernel sends the agent SIGKILL when the referee dies, even by
/// SIGKILL (Linux). It is the forking thread's death that counts: calls are
/// made from a thread that outlives them.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn die_with_referee(command: &mut Command) {
    let parent = nix::unistd::getpid();
    // SAFETY: the closure runs in the child between fork and exec, where
    // only async-signal-safe work is allowed: it makes two system calls
    // (prctl, getppid), allocates nothing and takes no lock.
    unsafe {
        command.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)
                .map_err(|e| std::io::Error::from_raw_os_error(e as i32))?;
            // The referee died before the prctl: no signal will come.
            if nix::unistd::getppid() != parent {
                return Err(std::io::Error::from_raw_os_error(nix::libc::ESRCH));
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_referee(_: &mut Command) {}

/// Ends every process of the call: SIGTERM first when `gently` (a timeout or
/// an interrupt), with [`TERM_GRACE`] to exit, then SIGKILL, repeated for
/// [`KILL_GRACE`] on whatever is left or new. Reaps the agent and the
/// orphans that came back to the referee. Without `/proc` (not Linux), the
/// process group is all it can see.
fn end(child: &mut Child, family: &Family, marker: &str, gently: bool) {
    let group = Pid::from_raw(family.agent.0);
    // What the referee started for other calls under way is theirs (an
    // agent that exited is a zombie, whose marker cannot be read, until its
    // call reaps it; a git process has none). Held while the table is read
    // and signalled, so that nothing is started meanwhile.
    let members = || -> (Option<Vec<Proc>>, std::sync::MutexGuard<'static, crate::children::Started>) {
        let started = crate::children::held();
        let found = tree::scan().map(|table| {
            let others = Live::others(marker);
            let start: HashMap<i32, u64> = table.iter().map(|p| (p.pid, p.start)).collect();
            family.members(&table, &mut |pid| {
                if start.get(&pid).is_some_and(|s| started.contains(pid, *s)) {
                    tree::Mark::Another
                } else {
                    tree::mark(pid, marker, &others)
                }
            })
        });
        (found, started)
    };
    let signal = |sig: Signal, members: &Option<Vec<Proc>>| {
        let _ = killpg(group, sig);
        for p in members.iter().flatten().filter(|p| !p.zombie) {
            // The same process as scanned, not a new one with its pid.
            if tree::get(p.pid).is_some_and(|now| now.start == p.start) {
                let _ = kill(Pid::from_raw(p.pid), sig);
            }
        }
    };
    // Reaps, then says whether anything of the call still runs.
    let settle = |child: &mut Child, members: &Option<Vec<Proc>>| -> bool {
        let agent_done = !matches!(child.try_wait(), Ok(None));
        match members {
            Some(members) => {
                for p in members {
                    if p.zombie && Some(p.ppid) == family.reaper && p.pid != family.agent.0 {
                        let _ = waitpid(Pid::from_raw(p.pid), Some(WaitPidFlag::WNOHANG));
                    }
                }
                !agent_done || members.iter().any(|p| !p.zombie)
            }
            None => !agent_done || killpg(group, None).is_ok(),
        }
    };
    if gently {
        signal(Signal::SIGTERM, &members().0);
        let until = Instant::now() + TERM_GRACE;
        while settle(child, &members().0) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let until = Instant::now() + KILL_GRACE;
    loop {
        let (now, _held) = members();
        if !settle(child, &now) || Instant::now() >= until {
            break;
        }
        signal(Signal::SIGKILL, &now);
        drop(_held);
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The markers of this process's calls under way, each listed while its
/// call runs (a panel's reviewers run at once): a process that carries one
/// belongs to that call, and only to it.
struct Live(String);

static LIVE: Mutex<Vec<String>> = Mutex::new(Vec::new());

impl Live {
    fn add(marker: &str) -> Live {
        LIVE.lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(marker.to_string());
        Live(marker.to_string())
    }

    /// The markers of the calls under way but `marker`'s.
    fn others(marker: &str) -> Vec<String> {
        let live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
        live.iter().filter(|m| *m != marker).cloned().collect()
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(at) = live.iter().position(|m| *m == self.0) {
            live.remove(at);
        }
    }
}

/// A stream drained on its own thread into a capped buffer, which the caller
/// takes by a deadline (the thread may still be blocked on a pipe some
/// unkillable process holds: it is left behind, not waited on).
struct Reader {
    captured: Arc<Mutex<Captured>>,
    /// Disconnected when the thread is done: its sender is dropped with it.
    done: Option<mpsc::Receiver<()>>,
}

impl Reader {
    fn start(stream: Option<impl Read + Send + 'static>) -> Reader {
        let captured = Arc::new(Mutex::new(Captured::default()));
        let done = stream.map(|mut stream| {
            let captured = Arc::clone(&captured);
            let (done, finished) = mpsc::channel::<()>();
            std::thread::spawn(move || {
                // Dropped as the thread ends, which `finish` waits for.
                let _done = done;
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    match stream.read(&mut buf) {
                        Ok(0) => break,
                        Ok(n) => {
                            let mut c = captured.lock().unwrap_or_else(|e| e.into_inner());
                            let room = OUTPUT_CAP.saturating_sub(c.bytes.len());
                            let keep = n.min(room);
                            c.bytes.extend_from_slice(&buf[..keep]);
                            c.dropped += (n - keep) as u64;
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(_) => break,
                    }
                }
            });
            finished
        });
        Reader { captured, done }
    }

    /// What was read by `deadline`, and whether the stream reached its end.
    fn finish(self, deadline: Instant) -> (Captured, bool) {
        let whole = self.done.is_none_or(|done| {
            let left = deadline.saturating_duration_since(Instant::now());
            done.recv_timeout(left) == Err(RecvTimeoutError::Disconnected)
        });
        let mut captured = self.captured.lock().unwrap_or_else(|e| e.into_inner());
        (std::mem::take(&mut *captured), whole)
    }
}

/// The number of the last SIGINT or SIGTERM an [`interrupt_flag`] caught
/// (0: none): signals reach the whole process, so this is the process's.
static SIGNALLED: AtomicUsize = AtomicUsize::new(0);

/// A flag set by SIGINT and SIGTERM, for [`run`]'s `interrupt`; the
/// signal's number is kept for [`signalled`].
pub fn interrupt_flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let _ = signal_hook::flag::register(signal, Arc::clone(&flag));
        let _ = signal_hook::flag::register_usize(signal, &SIGNALLED, signal as usize);
    }
    flag
}

/// The number of the SIGINT or SIGTERM an [`interrupt_flag`] caught last.
pub fn signalled() -> Option<i32> {
    match SIGNALLED.load(Ordering::SeqCst) {
        0 => None,
        n => i32::try_from(n).ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, timeout: Duration) -> Call {
        Call {
            program: "sh".into(),
            args: vec!["-c".into(), script.into()],
            env: vec![("GREETING".into(), "hi".into())],
            stdin: Some(b"from stdin".to_vec()),
            cwd: std::env::temp_dir(),
            timeout,
            record: None,
        }
    }

    #[test]
    fn captures_stdout_stderr_exit_code_env_and_stdin() {
        let flag = AtomicBool::new(false);
        let done = run(
            &sh(
                "cat; echo \" $GREETING\"; echo oops >&2; exit 3",
                Duration::from_secs(10),
            ),
            &flag,
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(done.code, Some(3));
        assert_eq!(done.stdout.bytes, b"from stdin hi\n");
        assert_eq!(done.stderr.bytes, b"oops\n");
    }

    #[test]
    fn a_timeout_kills_the_whole_group_including_children() {
        let flag = AtomicBool::new(false);
        let marker = std::env::temp_dir().join(format!("referee-orphan-{}", std::process::id()));
        let _ = std::fs::remove_file(&marker);
        let script = format!("(sleep 3; touch {}) & sleep 30", marker.display());
        let start = Instant::now();
        let err = run(&sh(&script, Duration::from_millis(300)), &flag, &mut |_| {}).unwrap_err();
        assert!(matches!(err, ProcessError::TimedOut { .. }), "{err}");
        // A hang guard: the agent's own `sleep 30` would take longer.
        assert!(start.elapsed() < Duration::from_secs(20));
        std::thread::sleep(Duration::from_secs(4));
        assert!(
            !marker.exists(),
            "the background child outlived the timeout"
        );
    }

    /// Running, or stopped: anything but gone or a zombie.
    fn alive(pid: i32) -> bool {
        tree::get(pid).is_some_and(|p| !p.zombie)
    }

    #[test]
    fn a_timeout_ends_a_child_that_left_for_a_session_of_its_own() {
        // No subreaper here (the test harness runs calls in parallel): the
        // escaped child is found by the marker in its environment.
        if tree::scan().is_none() {
            return;
        }
        let flag = AtomicBool::new(false);
        let start = Instant::now();
        let err = run(
            &sh(
                "setsid sleep 30 & echo $!; sleep 30",
                Duration::from_millis(300),
            ),
            &flag,
            &mut |_| {},
        )
        .unwrap_err();
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{:?}",
            start.elapsed()
        );
        let ProcessError::TimedOut { stdout, .. } = err else {
            panic!("{err}");
        };
        let pid: i32 = String::from_utf8_lossy(&stdout.bytes)
            .trim()
            .parse()
            .unwrap();
        let gone = Instant::now();
        while alive(pid) && gone.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(
            !alive(pid),
            "the setsid child (pid {pid}) outlived the call"
        );
    }

    #[test]
    fn an_interrupt_stops_the_call() {
        let flag = AtomicBool::new(true);
        let err = run(&sh("sleep 30", Duration::from_secs(60)), &flag, &mut |_| {}).unwrap_err();
        assert!(matches!(err, ProcessError::Interrupted { .. }));
    }

    #[test]
    fn a_child_holding_stdout_open_does_not_hang_the_call() {
        let flag = AtomicBool::new(false);
        let start = Instant::now();
        let done = run(
            &sh("sleep 30 & echo done", Duration::from_secs(60)),
            &flag,
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(done.stdout.bytes, b"done\n");
        // A hang guard: the `sleep 30` holding stdout would take longer.
        assert!(start.elapsed() < Duration::from_secs(25));
    }

    #[test]
    fn the_progress_callback_is_fed_while_the_agent_runs() {
        let flag = AtomicBool::new(false);
        let mut ticks = Vec::new();
        let done = run(&sh("sleep 1", Duration::from_secs(60)), &flag, &mut |t| {
            ticks.push(t)
        })
        .unwrap();
        assert_eq!(done.code, Some(0));
        assert!(!ticks.is_empty(), "no tick in a call of a second");
        assert!(ticks.windows(2).all(|w| w[0] <= w[1]), "{ticks:?}");
    }

    #[test]
    fn an_agent_ended_by_a_signal_has_no_exit_code() {
        let flag = AtomicBool::new(false);
        let done = run(
            &sh("kill -9 $$", Duration::from_secs(60)),
            &flag,
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(done.code, None);
    }

    #[test]
    fn output_beyond_the_cap_is_counted_not_kept() {
        let flag = AtomicBool::new(false);
        let script = format!("head -c {} /dev/zero", OUTPUT_CAP + 1000);
        let done = run(&sh(&script, Duration::from_secs(60)), &flag, &mut |_| {}).unwrap();
        assert_eq!(done.stdout.bytes.len(), OUTPUT_CAP);
        assert_eq!(done.stdout.dropped, 1000);
    }

    #[test]
    fn a_missing_program_is_named() {
        let flag = AtomicBool::new(false);
        let mut call = sh("true", Duration::from_secs(5));
        call.program = "no-such-agent-xyz".into();
        let err = run(&call, &flag, &mut |_| {}).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("cannot start `no-such-agent-xyz`"),
            "{err}"
        );
    }

    #[test]
    fn display_quotes_for_reading() {
        let call = Call {
            program: "claude".into(),
            args: vec!["-p".into(), "a b".into(), "it's".into()],
            env: vec![],
            stdin: None,
            cwd: PathBuf::from("/"),
            timeout: Duration::from_secs(1),
            record: None,
        };
        assert_eq!(call.display(), r"claude -p 'a b' 'it'\''s'");
    }
}
