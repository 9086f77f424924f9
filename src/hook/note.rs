//! What the Stop hook keeps of a session at each round it drives
//! (`hook.json` in the round's evidence): the agent, the session, the
//! writer's tokens counted, and the blocks it gave the session in a row,
//! against the host's cap of them. Pure.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Agent;

/// The evidence file that holds a round's note.
pub const FILE: &str = "hook.json";

/// Claude Code's default cap of consecutive Stop-hook blocks in one turn.
pub const CLAUDE_BLOCK_CAP: u32 = 8;

/// What the hook saw of the session at a round.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct SessionNote {
    pub agent: String,
    pub session_id: Option<String>,
    pub transcript_path: Option<String>,
    /// The writer's tokens this round, from the transcript (`None`: it
    /// reports none the referee can read).
    pub writer_tokens: Option<u64>,
    /// Each session's running token total when its tokens were last
    /// counted, so no token is counted twice.
    pub counted: BTreeMap<String, u64>,
    /// How many stops in a row of this session the hook had blocked before
    /// this one (referee's own count: a loop never leans on the host's).
    #[serde(default)]
    pub blocked_before: u32,
    /// The most blocks in a row the host honours (Claude Code's
    /// `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP`, 8 unless set); `None`: no cap
    /// (Codex, Gemini CLI), the loop's own rules end it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_cap: Option<u32>,
}

impl SessionNote {
    /// Whether the host let this stop through whatever the hook answered:
    /// its cap of blocks in a row was spent.
    pub fn cap_spent(&self) -> bool {
        self.host_cap.is_some_and(|cap| self.blocked_before >= cap)
    }
}

/// The most consecutive Stop-hook blocks `agent` honours in one turn;
/// `var` is Claude Code's `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP` in the hook's
/// environment (0 or less: no cap; unset or unreadable: the default).
pub fn host_cap(agent: Agent, var: Option<&str>) -> Option<u32> {
    match agent {
        Agent::Claude => match var.map(|v| v.trim().parse::<i64>()) {
            Some(Ok(n)) if n <= 0 => None,
            Some(Ok(n)) => Some(u32::try_from(n).unwrap_or(u32::MAX)),
            Some(Err(_)) | None => Some(CLAUDE_BLOCK_CAP),
        },
        Agent::Codex | Agent::Gemini => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_claude_code_has_a_cap_and_its_variable_sets_it() {
        assert_eq!(host_cap(Agent::Claude, None), Some(8));
        assert_eq!(host_cap(Agent::Claude, Some(" 20 ")), Some(20));
        assert_eq!(host_cap(Agent::Claude, Some("0")), None);
        assert_eq!(host_cap(Agent::Claude, Some("-1")), None);
        assert_eq!(host_cap(Agent::Claude, Some("many")), Some(8));
        assert_eq!(host_cap(Agent::Codex, Some("3")), None);
        assert_eq!(host_cap(Agent::Gemini, None), None);
        let spent = |blocked_before, host_cap| {
            SessionNote {
                blocked_before,
                host_cap,
                ..SessionNote::default()
            }
            .cap_spent()
        };
        assert!(!spent(7, Some(8)) && spent(8, Some(8)) && !spent(1000, None));
    }
}
