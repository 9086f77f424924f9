//! referee's permission profile in Codex's `config.toml`: a profile
//! `referee` that extends `:workspace` with the state folder read-only, made
//! the default (`default_permissions`). Codex's sandbox then keeps the agent
//! from writing `.referee/`, as it already keeps `.git/` and `.codex/`
//! (docs/hooks.md). Minimal text edits, as for the JSON settings. Pure.

use super::json_edit::Edit;

/// The profile's name.
pub const PROFILE: &str = "referee";

/// What adding the profile came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Profile {
    /// The file with the profile, and the edits that made it.
    Added { text: String, edits: Vec<Edit> },
    /// The profile is there and the default already.
    Present,
    /// Another profile is the default: referee leaves the person's choice.
    Other(String),
}

/// Why the file cannot take the profile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("not TOML: {0}")]
    Syntax(String),
    #[error("`permissions.referee` is there but is not the default: referee will not guess")]
    Half,
}

/// The lines that go first (a top-level key must come before every table).
fn head() -> String {
    format!(
        "# `referee hook install`: the agent reads the state folder, never writes it\ndefault_permissions = \"{PROFILE}\"\n\n"
    )
}

/// The tables that go last.
fn tail(state_rel: &str) -> String {
    format!(
        "[permissions.{PROFILE}]\nextends = \":workspace\"\n\n[permissions.{PROFILE}.filesystem.\":workspace_roots\"]\n{} = \"read\"\n",
        toml_key(state_rel)
    )
}

/// `key` as a quoted TOML key.
fn toml_key(key: &str) -> String {
    toml::Value::String(key.to_string()).to_string()
}

/// Adds the profile to `text` (empty when the file does not exist), with
/// `state_rel` (the state folder, repo-relative) read-only.
pub fn add(text: &str, state_rel: &str) -> Result<Profile, ConfigError> {
    let doc: toml::Table = toml::from_str(text).map_err(|e| ConfigError::Syntax(one_line(&e)))?;
    let default = doc.get("default_permissions").and_then(|v| v.as_str());
    let ours = doc
        .get("permissions")
        .and_then(|p| p.get(PROFILE))
        .is_some();
    match (default, ours) {
        (Some(PROFILE), true) => return Ok(Profile::Present),
        (Some(other), _) => return Ok(Profile::Other(other.to_string())),
        (None, true) => return Err(ConfigError::Half),
        (None, false) => {}
    }
    let mut edits = vec![Edit {
        at: 0,
        removed: String::new(),
        inserted: head(),
    }];
    let mut out = format!("{}{text}", head());
    let sep = if out.ends_with("\n\n") {
        ""
    } else if out.ends_with('\n') {
        "\n"
    } else {
        "\n\n"
    };
    let tail = format!("{sep}{}", tail(state_rel));
    edits.push(Edit {
        at: out.len(),
        removed: String::new(),
        inserted: tail.clone(),
    });
    out.push_str(&tail);
    Ok(Profile::Added { text: out, edits })
}

/// Takes out what `edits` added: undone exactly when they still apply, else
/// each block taken out where it is found once. The second value: whether
/// every block came out.
pub fn remove(text: &str, edits: &[Edit]) -> (String, bool) {
    let exact = edits
        .iter()
        .rev()
        .try_fold(text.to_string(), |t, e| e.inverse().apply(&t));
    if let Some(undone) = exact {
        return (undone, true);
    }
    let mut out = text.to_string();
    let mut all = true;
    for edit in edits.iter().rev() {
        match (
            out.matches(edit.inserted.as_str()).count(),
            out.find(&edit.inserted),
        ) {
            (1, Some(at)) => out.replace_range(at..at + edit.inserted.len(), ""),
            _ => all = false,
        }
    }
    (out, all)
}

/// Whether `text` makes the referee profile the default with `state_rel`
/// read-only.
pub fn in_force(text: &str, state_rel: &str) -> bool {
    let Ok(doc) = toml::from_str::<toml::Table>(text) else {
        return false;
    };
    let default = doc.get("default_permissions").and_then(|v| v.as_str());
    let read = doc
        .get("permissions")
        .and_then(|p| p.get(PROFILE))
        .and_then(|p| p.get("filesystem"))
        .and_then(|f| f.get(":workspace_roots"))
        .and_then(|r| r.get(state_rel))
        .and_then(|v| v.as_str());
    default == Some(PROFILE) && read == Some("read")
}

fn one_line(e: &toml::de::Error) -> String {
    e.message().lines().next().unwrap_or("").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profile_goes_around_the_persons_config_and_comes_out_again() {
        let original = "model = \"gpt-5.5\"\n\n[features]\nhooks = true\n";
        let Profile::Added { text, edits } = add(original, ".referee").unwrap() else {
            panic!("not added");
        };
        assert!(text.starts_with("# `referee hook install`"), "{text}");
        assert!(text.contains("\nmodel = \"gpt-5.5\"\n"), "{text}");
        assert!(in_force(&text, ".referee"), "{text}");
        let parsed: toml::Table = toml::from_str(&text).unwrap();
        assert_eq!(parsed["features"]["hooks"].as_bool(), Some(true));
        assert_eq!(
            parsed["permissions"]["referee"]["extends"].as_str(),
            Some(":workspace")
        );
        assert_eq!(add(&text, ".referee").unwrap(), Profile::Present);
        assert_eq!(remove(&text, &edits), (original.to_string(), true));
        // The person added a line in between: each block still comes out.
        let edited = text.replace("model = ", "approval_policy = \"never\"\nmodel = ");
        let (out, all) = remove(&edited, &edits);
        assert!(all);
        assert_eq!(
            out,
            original.replace("model = ", "approval_policy = \"never\"\nmodel = ")
        );
    }

    #[test]
    fn another_default_is_the_persons_and_bad_toml_is_named() {
        assert_eq!(
            add("default_permissions = \"mine\"\n", ".referee").unwrap(),
            Profile::Other("mine".into())
        );
        assert!(matches!(
            add("x = ", ".referee"),
            Err(ConfigError::Syntax(_))
        ));
        assert!(!in_force("", ".referee"));
        let Profile::Added { text, .. } = add("", ".referee").unwrap() else {
            panic!("not added");
        };
        assert!(in_force(&text, ".referee"));
        assert!(!in_force(&text, "state"));
    }
}
