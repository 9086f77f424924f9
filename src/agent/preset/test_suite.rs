//! The `tests` preset: the contract's test command, as a reviewer only; its
//! findings are the failures in the JUnit report it writes, whatever its
//! exit status. Pure.

use std::path::Path;

use super::command::rest_of_command;
use super::{Context, Invocation, Role, Unit};
use crate::agent::output::{Produced, Reply};
use crate::contract::Agent;

pub struct Tests;

impl Unit for Tests {
    fn invocation(&self, agent: &Agent, _ctx: &Context<'_>, _cwd: &Path) -> Invocation {
        // A test command takes no prompt.
        Invocation {
            args: rest_of_command(agent),
            last: Vec::new(),
            stdin: None,
        }
    }

    // Failing tests exit non-zero: that is findings, not a failed call.
    fn exit_fails(&self) -> bool {
        false
    }

    fn read(&self, _role: Role, out: &Produced<'_>) -> Result<Reply, String> {
        let Some(report) = out.junit else {
            // Why the command wrote no report is in what it printed last.
            let said = last_lines(&out.finished.stderr.bytes, 5)
                .or_else(|| last_lines(out.stdout, 5))
                .map(|l| format!("; it printed last:\n{l}"))
                .unwrap_or_default();
            return Err(format!(
                "wrote no JUnit report ({}); a clean round must be proven{said}",
                match out.finished.code {
                    Some(code) => format!("the test command exited with status {code}"),
                    None => "the test command was killed by a signal".into(),
                }
            ));
        };
        Ok(Reply {
            review: Some(report.to_vec()),
            ..Reply::default()
        })
    }
}

/// The last `n` non-empty lines of `bytes`, indented, or `None`.
fn last_lines(bytes: &[u8], n: usize) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .collect();
    if lines.is_empty() {
        return None;
    }
    let start = lines.len().saturating_sub(n);
    Some(
        lines[start..]
            .iter()
            .map(|l| format!("  {l}"))
            .collect::<Vec<_>>()
            .join("\n"),
    )
}
