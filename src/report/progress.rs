//! `run`'s live progress: a spinner (or a line per agent call) on stderr,
//! each round and the outcome on stdout, or one JSON event per line. The
//! one renderer that writes: what it shows changes while an agent works.

use std::io::Write;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::json;

use super::handoff::Handoff;
use super::round::RoundView;
use crate::agent::output::Reply;
use crate::agent::preset::Role;
use crate::agent::process::{Call, Finished};
use crate::agent::progress::Progress;
use crate::engine::Recorded;
use crate::exit::Exit;
use crate::money::Usd;
use crate::report::handoff::HandoffFormat;

/// Shows `run`'s progress in one [`Mode`].
pub struct Printer {
    mode: Mode,
    /// The spinner of each agent call under way, by agent: a panel's
    /// reviewers are called at once, each with its own line.
    spinners: Mutex<Vec<(String, indicatif::ProgressBar)>>,
    bars: indicatif::MultiProgress,
}

/// How `run` shows its progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A spinner on a terminal's stderr, the rounds on stdout.
    Live,
    /// A line per call on stderr, the rounds on stdout.
    Plain,
    /// Only the outcome.
    Quiet,
    /// One JSON event per line on stdout.
    Json,
}

impl Printer {
    /// The printer for `--json`, `--quiet`, or else live when stderr is
    /// a terminal that may animate ([`super::style::animate`]).
    pub fn new(json: bool, quiet: bool) -> Printer {
        let mode = if json {
            Mode::Json
        } else if quiet {
            Mode::Quiet
        } else if super::style::animate() {
            Mode::Live
        } else {
            Mode::Plain
        };
        Printer {
            mode,
            spinners: Mutex::new(Vec::new()),
            bars: indicatif::MultiProgress::new(),
        }
    }

    fn json_line(&self, value: serde_json::Value) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{value}");
        let _ = out.flush();
    }

    pub fn leftovers(&self, ended: usize) {
        if ended > 0 && matches!(self.mode, Mode::Plain | Mode::Live) {
            eprintln!(
                "ended {ended} process{} that the agents of a killed `referee run` left running",
                if ended == 1 { "" } else { "es" }
            );
        }
    }

    /// A round recorded.
    pub fn round(&self, view: &RoundView<'_>, exit: Exit) -> std::io::Result<()> {
        match self.mode {
            Mode::Json => {
                let mut value = super::round::json(view, i32::from(exit.code()));
                if let serde_json::Value::Object(map) = &mut value {
                    map.insert("event".into(), json!("round"));
                }
                self.json_line(value);
            }
            Mode::Plain | Mode::Live => out(&super::round::text(view))?,
            Mode::Quiet => {}
        }
        Ok(())
    }

    /// The loop stopped: the outcome, and the hand-off when a person takes
    /// over (`handoff`).
    pub fn end(
        &self,
        name: &str,
        recorded: &Recorded,
        exit: Exit,
        handoff: Option<&Handoff>,
    ) -> std::io::Result<()> {
        match self.mode {
            Mode::Json => self.json_line(json!({
                "event": "end", "loop": name, "round": recorded.row.round,
                "rule": recorded.state.rule, "reason": recorded.state.reason, "exit": exit.code(),
                "already_done": recorded.already == crate::engine::Already::Done,
            })),
            _ => {
                if self.mode == Mode::Quiet {
                    let already = if recorded.already == crate::engine::Already::Done {
                        "already done: "
                    } else {
                        ""
                    };
                    out(&format!(
                        "{already}loop `{}` stopped at round {} on `{}`: {}\n",
                        name,
                        recorded.row.round,
                        recorded
                            .state
                            .rule
                            .as_ref()
                            .map(|r| r.name())
                            .unwrap_or_default(),
                        recorded.state.reason
                    ))?;
                }
                if let Some(handoff) = handoff {
                    let mut text = b"\n".to_vec();
                    text.extend(super::handoff::render(handoff, HandoffFormat::Text));
                    out(&String::from_utf8_lossy(&text))?;
                }
            }
        }
        Ok(())
    }

    pub fn error(&self, err: &anyhow::Error) {
        for (_, bar) in self.spinners().drain(..) {
            bar.finish_and_clear();
        }
        if self.mode == Mode::Json {
            self.json_line(json!({"event": "error", "message": super::error::render(err)}));
        }
    }
}

impl Printer {
    fn spinners(&self) -> std::sync::MutexGuard<'_, Vec<(String, indicatif::ProgressBar)>> {
        // A thread that panicked while it held them left them as they were.
        self.spinners.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Progress for Printer {
    fn call_started(&self, round: u32, role: Role, agent: &str, call: &Call) {
        match self.mode {
            Mode::Json => self.json_line(json!({
                "event": "call", "phase": "start", "round": round, "role": role.as_str(),
                "agent": agent, "argv": call.display(),
            })),
            Mode::Plain => eprintln!("round {round}: {} `{agent}` started", role.as_str()),
            Mode::Live => {
                let bar = self.bars.add(indicatif::ProgressBar::new_spinner());
                bar.enable_steady_tick(Duration::from_millis(100));
                bar.set_message(format!("round {round} · {} · {agent}", role.as_str()));
                self.spinners().push((agent.to_string(), bar));
            }
            Mode::Quiet => {}
        }
    }

    fn tick(&self, round: u32, role: Role, agent: &str, elapsed: Duration, spent: Usd) {
        if let Some((_, bar)) = self.spinners().iter().find(|(a, _)| a == agent) {
            let spent = if !spent.is_zero() {
                format!(" · {spent} spent")
            } else {
                String::new()
            };
            bar.set_message(format!(
                "round {round} · {} · {agent} · {}{spent}",
                role.as_str(),
                clock(elapsed)
            ));
        }
    }

    fn call_failed(&self, agent: &str) {
        let mut spinners = self.spinners();
        if let Some(at) = spinners.iter().position(|(a, _)| a == agent) {
            spinners.remove(at).1.finish_and_clear();
        }
    }

    fn call_finished(
        &self,
        round: u32,
        role: Role,
        agent: &str,
        f: &Finished,
        reply: Option<&Reply>,
    ) {
        self.call_failed(agent);
        let cost = reply.and_then(|r| r.cost_usd);
        let tokens = reply.and_then(|r| r.tokens);
        match self.mode {
            Mode::Json => self.json_line(json!({
                "event": "call", "phase": "end", "round": round, "role": role.as_str(), "agent": agent,
                "exit_status": f.code, "elapsed_ms": f.elapsed.as_millis() as u64,
                "cost_usd": cost, "tokens": tokens,
            })),
            Mode::Plain | Mode::Live => {
                let mut spend = Vec::new();
                if let Some(c) = cost {
                    spend.push(c.to_string());
                }
                if let Some(t) = tokens {
                    spend.push(format!("{t} tokens"));
                }
                let spend = if spend.is_empty() { String::new() } else { format!(", {}", spend.join(", ")) };
                eprintln!(
                    "round {round}: {} `{agent}` finished in {}{spend}",
                    role.as_str(),
                    clock(f.elapsed)
                );
            }
            Mode::Quiet => {}
        }
    }
}

/// `41s`, `3m07s`.
fn clock(d: Duration) -> String {
    crate::text::duration(d.as_secs())
}

/// Text for people on stdout: control characters made visible, colors applied.
fn out(text: &str) -> std::io::Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(super::style::for_people(text).as_bytes())?;
    stdout.flush()
}
