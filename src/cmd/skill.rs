//! `referee skill install`: puts the agent skill where the agents find it —
//! the Claude Code skill under `.claude/skills/loop-referee/`, the Codex
//! section in `AGENTS.md` between markers. Running it again changes nothing
//! unless the shipped text changed.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;

use crate::exit::Exit;

#[derive(Debug, Args)]
pub struct SkillInstallArgs {
    /// Only the Claude Code skill.
    #[arg(long)]
    pub claude: bool,
    /// Only the Codex `AGENTS.md` section.
    #[arg(long)]
    pub codex: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// The Claude Code skill, as shipped.
pub const CLAUDE_SKILL: &str = include_str!("../../skills/loop-referee/SKILL.md");
/// The Codex `AGENTS.md` section, as shipped.
pub const CODEX_SECTION: &str = include_str!("../../skills/codex/AGENTS.md");

const START: &str = "<!-- referee:loop-referee:start (managed by `referee skill install`) -->";
const END: &str = "<!-- referee:loop-referee:end -->";

pub fn install(dir: Option<&Path>, args: SkillInstallArgs) -> anyhow::Result<Exit> {
    let root = match dir {
        Some(dir) => dir.to_path_buf(),
        None => crate::state::State::locate(None)?.repo,
    };
    if !root.is_dir() {
        anyhow::bail!("`{}` is not a folder", root.display());
    }
    let both = !args.claude && !args.codex;
    let mut done: Vec<(String, &'static str)> = Vec::new();
    if args.claude || both {
        let path = root.join(".claude/skills/loop-referee/SKILL.md");
        let what = write_if_changed(&root, &path, CLAUDE_SKILL)?;
        done.push((path.display().to_string(), what));
    }
    if args.codex || both {
        let path = root.join("AGENTS.md");
        // A link (`AGENTS.md` pointing out of the repository) is refused.
        let old = super::read_repo_text(&root, &path)?;
        let new = with_section(old.as_deref().unwrap_or_default());
        let what = if old.as_deref() == Some(new.as_str()) {
            "unchanged"
        } else {
            std::fs::write(&path, &new)
                .with_context(|| format!("cannot write `{}`", path.display()))?;
            if old.is_some() { "updated" } else { "created" }
        };
        done.push((path.display().to_string(), what));
    }
    // The skill's files are referee's, not the writer's: loops take them
    // from their base, so they are in no round's patch (and trip no scope).
    remember(dir, &root, &done)?;
    if args.json {
        let value: Vec<_> = done
            .iter()
            .map(|(path, what)| serde_json::json!({"path": path, "result": what}))
            .collect();
        super::emit_json(&value)?;
    } else {
        let mut out = String::new();
        for (path, what) in &done {
            out.push_str(&format!("{what}: {}\n", super::shown(&PathBuf::from(path))));
        }
        super::emit(&out)?;
    }
    Ok(Exit::Success)
}

/// The name `skill install` keeps its freeze list under in the pins.
const FROZEN_BY: &str = "skill install";

/// Notes the files `skill install` wrote in the pins of the state folder
/// (per-user, outside the work tree: `anchor::pins`), so loops take them
/// from their base.
fn remember(
    dir: Option<&Path>,
    root: &Path,
    done: &[(String, &'static str)],
) -> anyhow::Result<()> {
    let Ok(state) = crate::state::State::locate(dir) else {
        return Ok(());
    };
    state.create()?;
    let pins = crate::anchor::pins::Pins::of(&state.repo, &state.root)?;
    let mut files = pins.frozen_by(FROZEN_BY)?;
    for (path, _) in done {
        if let Ok(rel) = Path::new(path).strip_prefix(root) {
            files.push(rel.to_string_lossy().into_owned());
        }
    }
    pins.set_frozen(FROZEN_BY, &files)?;
    Ok(())
}

fn write_if_changed(root: &Path, path: &Path, text: &str) -> anyhow::Result<&'static str> {
    let old = super::read_repo_text(root, path)?;
    if old.as_deref() == Some(text) {
        return Ok("unchanged");
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create `{}`", dir.display()))?;
    }
    std::fs::write(path, text).with_context(|| format!("cannot write `{}`", path.display()))?;
    Ok(if old.is_some() { "updated" } else { "created" })
}

/// `agents_md` with the managed section added, or replaced where the markers
/// already are; everything else is kept byte for byte.
pub fn with_section(agents_md: &str) -> String {
    let block = format!("{START}\n{}{END}\n", CODEX_SECTION);
    if let (Some(start), Some(end)) = (agents_md.find(START), agents_md.find(END))
        && start < end
    {
        let after = end + END.len();
        let after = agents_md[after..]
            .strip_prefix('\n')
            .map_or(after, |_| after + 1);
        return format!("{}{block}{}", &agents_md[..start], &agents_md[after..]);
    }
    if agents_md.is_empty() {
        return block;
    }
    let sep = if agents_md.ends_with("\n\n") {
        ""
    } else if agents_md.ends_with('\n') {
        "\n"
    } else {
        "\n\n"
    };
    format!("{agents_md}{sep}{block}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_is_added_once_and_replaced_in_place() {
        let once = with_section("# Project\n\nBuild with make.\n");
        assert!(
            once.starts_with("# Project\n\nBuild with make.\n\n<!-- referee:loop-referee:start")
        );
        assert_eq!(with_section(&once), once);
        let edited = once.replace("let `referee` decide", "let referee decide (old text)");
        assert_eq!(with_section(&edited), once);
        let later = format!("{once}\n## More\n");
        assert_eq!(with_section(&later), later);
    }

    #[test]
    fn the_skill_has_its_frontmatter() {
        let head = CLAUDE_SKILL.split("---").nth(1).unwrap();
        assert!(head.contains("\nname: loop-referee\n"));
        assert!(head.contains("\ndescription: "));
    }
}
