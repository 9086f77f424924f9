//! The `codex-review` preset: codex's own review (`codex exec review`) of
//! the uncommitted change or of the change since the loop's base, as a
//! reviewer only; its text goes to the findings parser as it is. Pure.

use std::path::Path;

use super::{Context, Invocation, Role, Unit, os};
use crate::agent::output::{Produced, Reply};
use crate::contract::Agent;

pub struct CodexReview;

impl Unit for CodexReview {
    fn tool(&self) -> Option<&'static str> {
        Some("codex")
    }

    fn install(&self) -> Option<&'static str> {
        Some("npm install -g @openai/codex")
    }

    fn roles(&self) -> &'static [Role] {
        &[Role::Reviewer]
    }

    fn options(&self) -> &'static [&'static str] {
        &["model", "bin"]
    }

    fn invocation(&self, agent: &Agent, ctx: &Context<'_>, cwd: &Path) -> Invocation {
        // `-C` belongs to `exec`, before the `review` subcommand.
        let mut args = os(&["exec", "-C"]);
        args.push(cwd.as_os_str().to_owned());
        args.push("review".into());
        match ctx.review_base {
            Some(base) => args.extend(os(&["--base", base])),
            None => args.push("--uncommitted".into()),
        }
        if let Some(model) = &agent.model {
            args.extend(os(&["-m", model]));
        }
        // The review takes no prompt.
        Invocation {
            args,
            last: Vec::new(),
            stdin: None,
        }
    }

    fn read(&self, _role: Role, out: &Produced<'_>) -> Result<Reply, String> {
        Ok(Reply {
            review: Some(out.stdout.to_vec()),
            ..Reply::default()
        })
    }
}
