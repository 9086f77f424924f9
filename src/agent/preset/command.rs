//! The `command` preset: the contract's own argv, the prompt on stdin, as
//! writer or reviewer; it answers on stdout or in its output file, with an
//! optional `usage` object for its spend. Pure.

use std::ffi::OsString;
use std::path::Path;

use serde_json::Value;

use super::{Context, Invocation, Role, Unit};
use crate::agent::output::{Produced, Reply, json_of, responses_in};
use crate::contract::Agent;
use crate::money::Usd;

pub struct Command;

impl Unit for Command {
    fn invocation(&self, agent: &Agent, ctx: &Context<'_>, _cwd: &Path) -> Invocation {
        Invocation {
            args: rest_of_command(agent),
            last: Vec::new(),
            stdin: Some(ctx.prompt.as_bytes().to_vec()),
        }
    }

    fn read(&self, role: Role, out: &Produced<'_>) -> Result<Reply, String> {
        let printed = out.output_file.unwrap_or(out.stdout);
        let mut reply = Reply::default();
        if let Some(json) = json_of(printed) {
            reply.cost_usd = json.pointer("/usage/cost_usd").and_then(Usd::from_json);
            reply.tokens = json.pointer("/usage/tokens").and_then(Value::as_u64);
        }
        match role {
            Role::Reviewer => reply.review = Some(printed.to_vec()),
            Role::Writer => reply.responses = responses_in(&String::from_utf8_lossy(printed)),
        }
        Ok(reply)
    }
}

/// The contract's argv after its program (which [`super::program_of`] names).
pub(super) fn rest_of_command(agent: &Agent) -> Vec<OsString> {
    agent
        .command
        .iter()
        .flat_map(|argv| argv.iter().skip(1))
        .map(OsString::from)
        .collect()
}
