//! The `codex-review` preset: codex's own review (`codex exec review`) of
//! the uncommitted change or of the change since the loop's base, as a
//! reviewer only; its text goes to the findings parser as it is, and a review
//! with no comment is a clean one. Pure.

use std::path::Path;

use super::{Context, Invocation, Role, Unit, os};
use crate::agent::output::{Produced, Reply};
use crate::contract::Agent;
use crate::findings::{self, FindingsError, Format, Parsed};

pub struct CodexReview;

impl Unit for CodexReview {
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

    fn findings(&self, review: &[u8], format: Format, root: &str) -> Result<Parsed, FindingsError> {
        match findings::parse(review, format, root) {
            // `codex exec review` prints only its explanation when it has no
            // comment; its exit status 0 (checked before reading) is the proof.
            Err(FindingsError::NotProven { .. })
                if !String::from_utf8_lossy(review).trim().is_empty() =>
            {
                Ok(Parsed {
                    source_format: format,
                    findings: Vec::new(),
                    resolved: Vec::new(),
                })
            }
            parsed => parsed,
        }
    }
}
