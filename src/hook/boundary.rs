//! What `hook install` asks the host to enforce around the writer: the
//! rules it writes into Claude Code's `permissions.deny` and the paths of
//! its sandbox's `denyWrite`, from the places they protect. Only rules the
//! real CLIs were seen to enforce: `Edit(...)` (which covers the Write tool
//! too), never `Write(...)` (ignored) nor `Edit(.claude/**)` (breaks every
//! sandboxed command on Claude Code 2.1.197). Pure.

use std::path::Path;

/// The places the writer must not write, and how it would start referee.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Places {
    /// The state folder (`.referee`), repo-relative; `None` when it lies
    /// outside the work tree (then `state_abs` names it).
    pub state_rel: Option<String>,
    pub state_abs: String,
    /// The per-user state folder (the anchors), as a rule path.
    pub anchor: String,
    /// How the writer could run referee: `referee`, and the hook's program
    /// when it is another path.
    pub programs: Vec<String>,
}

/// The settings files Claude Code reloads mid-session: an agent that writes
/// one can take the hook out or set `disableAllHooks`.
pub const CLAUDE_SETTINGS: [&str; 3] = [
    ".claude/settings.json",
    ".claude/settings.local.json",
    "~/.claude/settings.json",
];

/// `path` as Claude Code's permission rules name it: `~/…` below `home`,
/// else `//…` (an absolute path).
pub fn rule_path(path: &Path, home: Option<&Path>) -> String {
    if let Some(home) = home
        && let Ok(rest) = path.strip_prefix(home)
        && !home.as_os_str().is_empty()
    {
        return format!("~/{}", rest.display());
    }
    format!("/{}", path.display())
}

/// The state folder as rules name it: relative, else absolute.
fn state_rule(places: &Places) -> String {
    match &places.state_rel {
        Some(rel) => rel.clone(),
        None => format!("/{}", places.state_abs),
    }
}

/// Claude Code `permissions.deny` rules: no `Edit`/`Write` tool call on the
/// state folder, `.git/`, the settings files or the anchors, and no Bash
/// command that starts with one of the `persons` commands (`waive`,
/// `record`, ...) of referee.
pub fn claude_deny(places: &Places, persons: &[&str]) -> Vec<String> {
    let mut rules = vec![
        format!("Edit({}/**)", state_rule(places)),
        "Edit(.git/**)".to_string(),
    ];
    rules.extend(CLAUDE_SETTINGS.iter().map(|f| format!("Edit({f})")));
    rules.push(format!("Edit({}/**)", places.anchor));
    for program in &places.programs {
        for command in persons {
            rules.push(format!("Bash({program} {command}:*)"));
        }
    }
    rules
}

/// Claude Code `sandbox.filesystem.denyWrite` paths.
pub fn claude_deny_write(places: &Places) -> Vec<String> {
    let state = match &places.state_rel {
        Some(rel) => format!("./{rel}"),
        None => places.state_abs.clone(),
    };
    vec![state, "./.git".to_string()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places() -> Places {
        Places {
            state_rel: Some(".referee".into()),
            state_abs: "/work/r/.referee".into(),
            anchor: "~/.local/state/referee".into(),
            programs: vec!["referee".into()],
        }
    }

    #[test]
    fn the_rules_name_each_place_and_each_persons_command() {
        let rules = claude_deny(&places(), &["waive", "contract amend"]);
        assert_eq!(
            rules,
            [
                "Edit(.referee/**)",
                "Edit(.git/**)",
                "Edit(.claude/settings.json)",
                "Edit(.claude/settings.local.json)",
                "Edit(~/.claude/settings.json)",
                "Edit(~/.local/state/referee/**)",
                "Bash(referee waive:*)",
                "Bash(referee contract amend:*)",
            ]
        );
        assert!(!rules.iter().any(|r| r.starts_with("Write(")));
        assert!(!rules.contains(&"Edit(.claude/**)".to_string()));
        assert_eq!(claude_deny_write(&places()), ["./.referee", "./.git"]);
    }

    #[test]
    fn paths_below_home_take_the_tilde_and_others_are_absolute() {
        let home = Path::new("/home/me");
        assert_eq!(
            rule_path(Path::new("/home/me/.local/state/referee"), Some(home)),
            "~/.local/state/referee"
        );
        assert_eq!(
            rule_path(Path::new("/var/cache/referee"), Some(home)),
            "//var/cache/referee"
        );
        assert_eq!(rule_path(Path::new("/x"), None), "//x");
        let outside = Places {
            state_rel: None,
            ..places()
        };
        assert_eq!(claude_deny(&outside, &[])[0], "Edit(//work/r/.referee/**)");
    }
}
