//! `referee docs [TOPIC]`: the user guides built into the binary, so that a
//! hint or a contract comment can point at something an installed referee
//! has (`cargo install` brings no `docs/` folder).

use std::io::Write;

use clap::Args;

use crate::exit::{Exit, UsageError};

/// `referee docs`.
#[derive(Debug, Args)]
pub struct DocsArgs {
    /// The guide to print (Markdown); none: the list of guides.
    #[arg(value_name = "TOPIC")]
    pub topic: Option<String>,
}

/// Every guide: its topic name and its text.
pub const TOPICS: &[(&str, &str)] = &[
    ("guide", include_str!("../../docs/guide.md")),
    ("contract", include_str!("../../docs/contract.md")),
    ("rules", include_str!("../../docs/rules.md")),
    ("findings", include_str!("../../docs/findings.md")),
    ("ledger", include_str!("../../docs/ledger.md")),
    ("presets", include_str!("../../docs/presets.md")),
    ("judge", include_str!("../../docs/judge.md")),
    ("hooks", include_str!("../../docs/hooks.md")),
    ("skill-mode", include_str!("../../docs/skill-mode.md")),
    ("ci", include_str!("../../docs/ci.md")),
    ("approval", include_str!("../../docs/approval.md")),
    ("snapshots", include_str!("../../docs/snapshots.md")),
    ("secrets", include_str!("../../docs/secrets.md")),
];

/// The guide's title: its first `# ` heading.
fn title(text: &str) -> &str {
    text.lines()
        .find_map(|l| l.strip_prefix("# "))
        .unwrap_or_default()
}

pub fn run(args: DocsArgs) -> anyhow::Result<Exit> {
    let Some(topic) = args.topic else {
        let mut out = String::from("guides (`referee docs TOPIC` prints one):\n");
        for (name, text) in TOPICS {
            out.push_str(&format!("  {name:<11} {}\n", title(text)));
        }
        std::io::stdout().lock().write_all(out.as_bytes())?;
        return Ok(Exit::Success);
    };
    match TOPICS.iter().find(|(name, _)| *name == topic) {
        Some((_, text)) => {
            // A pager or `head` may close the pipe early: an error, which
            // `cmd` answers quietly, not a panic.
            std::io::stdout().lock().write_all(text.as_bytes())?;
            Ok(Exit::Success)
        }
        None => {
            let names: Vec<&str> = TOPICS.iter().map(|(n, _)| *n).collect();
            Err(UsageError(format!(
                "no guide `{topic}`; the guides: {}",
                names.join(", ")
            ))
            .into())
        }
    }
}

/// `referee schema`: the findings schema the presets hand the agent CLIs
/// (compact, without `$schema` and `$id`), so that a skill or script calls
/// a reviewer the way the presets do, with no file of the repository's.
pub fn schema() -> anyhow::Result<Exit> {
    let mut text = crate::agent::prompt::schema_for_agents();
    text.push('\n');
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(Exit::Success)
}
