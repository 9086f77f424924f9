//! Runs one agent call: the only place that spawns agent processes. The call
//! gets its own process group, so a timeout or a Ctrl-C kills the agent and
//! every child it started; stdout and stderr are drained by threads into
//! capped buffers, so an agent printing gigabytes costs bounded memory.
//! Arguments and stdin are passed as bytes: nothing goes through a shell.

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// Most bytes kept of one stream; the rest is drained and counted.
pub const OUTPUT_CAP: usize = 32 * 1024 * 1024;

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
}

impl Call {
    /// The command line as a person would read it (for messages and
    /// evidence only; it is never run through a shell).
    pub fn display(&self) -> String {
        let mut words = vec![quote(&self.program)];
        for arg in &self.args {
            let arg = arg.to_string_lossy();
            words.push(if arg.len() > 80 {
                format!("{}…", quote(&arg.chars().take(60).collect::<String>()))
            } else {
                quote(&arg)
            });
        }
        words.join(" ")
    }
}

fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
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
    #[error("timed out after {}; its process group was killed", human(*.after))]
    TimedOut {
        after: Duration,
        stdout: Captured,
        stderr: Captured,
    },
    #[error("interrupted; its process group was killed")]
    Interrupted { stdout: Captured, stderr: Captured },
    #[error("waiting for it failed: {0}")]
    Wait(std::io::Error),
}

/// Runs `call` to its end, its timeout, or `interrupt`. `tick` is called
/// about ten times a second with the time elapsed (for a spinner).
pub fn run(
    call: &Call,
    interrupt: &AtomicBool,
    tick: &mut dyn FnMut(Duration),
) -> Result<Finished, ProcessError> {
    let (out_reader, out_writer) = os_pipe::pipe().map_err(|cause| spawn_error(call, cause))?;
    let (err_reader, err_writer) = os_pipe::pipe().map_err(|cause| spawn_error(call, cause))?;
    let mut expr = duct::cmd(&call.program, &call.args)
        .dir(&call.cwd)
        .stdout_file(out_writer)
        .stderr_file(err_writer)
        .unchecked()
        // Its own process group: the terminal's Ctrl-C reaches the referee,
        // which then ends the whole group; a timeout does the same.
        .before_spawn(|cmd| {
            cmd.process_group(0);
            Ok(())
        });
    for (key, value) in &call.env {
        expr = expr.env(key, value);
    }
    expr = match &call.stdin {
        Some(bytes) => expr.stdin_bytes(bytes.clone()),
        None => expr.stdin_null(),
    };
    let handle = expr.start().map_err(|cause| spawn_error(call, cause))?;
    // The expression kept its own copies of the pipe writers until spawn;
    // dropping it closes them so the readers see end of file.
    drop(expr);
    let out = drain(out_reader);
    let err = drain(err_reader);
    let group = handle.pids().first().map(|&pid| pid as i32);

    let start = Instant::now();
    let outcome = loop {
        match handle.try_wait() {
            Ok(Some(output)) => break Ok(output.status.code()),
            Ok(None) => {}
            Err(e) => break Err(ProcessError::Wait(e)),
        }
        let elapsed = start.elapsed();
        if elapsed >= call.timeout {
            break Err(ProcessError::TimedOut {
                after: call.timeout,
                stdout: Captured::default(),
                stderr: Captured::default(),
            });
        }
        if interrupt.load(Ordering::SeqCst) {
            break Err(ProcessError::Interrupted {
                stdout: Captured::default(),
                stderr: Captured::default(),
            });
        }
        tick(elapsed);
        std::thread::sleep(Duration::from_millis(50));
    };
    // Whatever happened, nothing the agent started may outlive the call or
    // hold its pipes open: end the group (TERM, then KILL).
    if let Some(pgid) = group {
        end_group(pgid, outcome.is_err(), &mut || {
            let _ = handle.try_wait();
        });
    }
    let _ = handle.kill();
    let _ = handle.wait();
    drop(handle);
    let stdout = join(out);
    let stderr = join(err);
    let elapsed = start.elapsed();
    match outcome {
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

/// `1.5s`, `2m`, `30m`.
fn human(d: Duration) -> String {
    let secs = d.as_secs();
    if secs == 0 {
        format!("{}ms", d.as_millis())
    } else if secs.is_multiple_of(60) {
        format!("{}m", secs / 60)
    } else {
        format!("{secs}s")
    }
}

fn spawn_error(call: &Call, cause: std::io::Error) -> ProcessError {
    ProcessError::Spawn {
        program: call.program.clone(),
        cause,
    }
}

/// Ends the group: TERM, a moment to clean up, then KILL. `reap` collects
/// the leader once it exits, so a zombie leader does not keep the group
/// looking alive for the whole grace period.
fn end_group(pgid: i32, gently_first: bool, reap: &mut dyn FnMut()) {
    let pgid = Pid::from_raw(pgid);
    if gently_first && killpg(pgid, Signal::SIGTERM).is_ok() {
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            reap();
            if killpg(pgid, None).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let _ = killpg(pgid, Signal::SIGKILL);
}

fn drain(mut reader: os_pipe::PipeReader) -> JoinHandle<Captured> {
    std::thread::spawn(move || {
        let mut captured = Captured::default();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    let room = OUTPUT_CAP.saturating_sub(captured.bytes.len());
                    let keep = n.min(room);
                    captured.bytes.extend_from_slice(&buf[..keep]);
                    captured.dropped += (n - keep) as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        captured
    })
}

fn join(handle: JoinHandle<Captured>) -> Captured {
    handle.join().unwrap_or_default()
}

/// A flag set by SIGINT and SIGTERM, for [`run`]'s `interrupt`.
pub fn interrupt_flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let _ = signal_hook::flag::register(signal, Arc::clone(&flag));
    }
    flag
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
        assert!(start.elapsed() < Duration::from_secs(5));
        std::thread::sleep(Duration::from_secs(4));
        assert!(
            !marker.exists(),
            "the background child outlived the timeout"
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
            &sh("sleep 30 & echo done", Duration::from_secs(20)),
            &flag,
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(done.stdout.bytes, b"done\n");
        assert!(start.elapsed() < Duration::from_secs(10));
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
        };
        assert_eq!(call.display(), r"claude -p 'a b' 'it'\''s'");
    }
}
