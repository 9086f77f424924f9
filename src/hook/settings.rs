//! referee's entry in an agent's hook settings: Claude Code's
//! `.claude/settings.json` and Codex's `.codex/hooks.json` share one shape,
//! `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": …,
//! "timeout": seconds}]}]}}`; Gemini CLI's `.gemini/settings.json` has the
//! same under `AfterAgent`, its entry `name`d and its `timeout` in
//! milliseconds. Adding the entry and taking it out are minimal text edits:
//! every other byte stays. Pure.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::Agent;
use super::json_edit::{self, Edit, JsonEditError, Node};

/// The events referee's entry is found under: Claude Code's and Codex's
/// `Stop`, Gemini CLI's `AfterAgent` (a settings file of one agent has no
/// list of the other's).
const EVENTS: [&str; 2] = ["Stop", "AfterAgent"];

/// The variable Claude Code reads for how many consecutive Stop-hook blocks
/// it honours in one turn (8 when unset; 0 or less: no cap).
pub const CAP_VAR: &str = "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP";

/// The hook entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub agent: Agent,
    pub command: String,
    pub timeout_secs: u64,
}

impl Entry {
    pub fn value(&self) -> Value {
        match self.agent {
            Agent::Gemini => json!({"type": "command", "name": "referee", "command": self.command,
                                    "timeout": self.timeout_secs.saturating_mul(1000)}),
            Agent::Claude | Agent::Codex => {
                json!({"type": "command", "command": self.command, "timeout": self.timeout_secs})
            }
        }
    }

    /// The list the entry goes in.
    pub fn event(&self) -> &'static str {
        match self.agent {
            Agent::Gemini => "AfterAgent",
            Agent::Claude | Agent::Codex => "Stop",
        }
    }

    fn group(&self) -> Value {
        json!({"hooks": [self.value()]})
    }
}

/// Whether a hook command runs `referee hook stop`: its program is named
/// `referee…` and its arguments start with `hook stop`.
pub fn is_ours(command: &str) -> bool {
    let command = command.trim_start();
    let (program, rest) = match command.strip_prefix(['"', '\'']) {
        Some(quoted) => {
            let quote = command.as_bytes()[0] as char;
            match quoted.split_once(quote) {
                Some((p, rest)) => (p, rest),
                None => return false,
            }
        }
        None => command.split_once(' ').unwrap_or((command, "")),
    };
    let name = program.rsplit('/').next().unwrap_or(program);
    name.starts_with("referee") && rest.trim_start().starts_with("hook stop")
}

/// What an install changed besides adding the entry, so that taking the
/// entry out later removes what it added and nothing else.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Made {
    /// The file did not exist.
    pub file: bool,
    /// `hooks`, `hooks.Stop` and `env` were added.
    pub hooks: bool,
    pub stop: bool,
    pub env: bool,
    /// The block cap it set: what it was (`None`: unset) and what it is.
    pub cap: Option<CapChange>,
    /// Objects and lists the guard added (`permissions`, `permissions.deny`,
    /// `sandbox`, ...), by their keys from the root, outermost first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub created: Vec<Vec<String>>,
    /// Strings the guard added to lists (a deny rule, a `denyWrite` path).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub listed: Vec<Listed>,
    /// Values the guard set (`sandbox.enabled`, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub set: Vec<SetValue>,
}

/// One string added to the list at `path`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listed {
    pub path: Vec<String>,
    pub item: String,
}

/// One value set at `path`: what it was (`None`: absent), as JSON text, and
/// what it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetValue {
    pub path: Vec<String>,
    pub before: Option<String>,
    pub after: Value,
}

/// What the guard asks of Claude Code's settings besides the hook: deny
/// rules for its tools, and with `sandbox`, its sandbox for Bash
/// (docs/hooks.md).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Guard {
    /// `permissions.deny` rules.
    pub deny: Vec<String>,
    /// `sandbox.filesystem.denyWrite` paths; with them, the sandbox is
    /// turned on, fails closed and runs nothing outside it.
    pub sandbox: Option<Vec<String>>,
}

/// The sandbox settings that make Claude Code's sandbox a write boundary,
/// each with the value the guard wants.
pub const SANDBOX_SWITCHES: [(&str, bool); 3] = [
    ("enabled", true),
    ("failIfUnavailable", true),
    ("allowUnsandboxedCommands", false),
];

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapChange {
    pub before: Option<String>,
    pub after: String,
}

impl Made {
    /// What two installs in a row made, together.
    pub fn and(self, later: Made) -> Made {
        Made {
            file: self.file || later.file,
            hooks: self.hooks || later.hooks,
            stop: self.stop || later.stop,
            env: self.env || later.env,
            cap: match (self.cap, later.cap) {
                (Some(first), Some(second)) => Some(CapChange {
                    before: first.before,
                    after: second.after,
                }),
                (first, second) => second.or(first),
            },
            created: union(self.created, later.created),
            listed: union(self.listed, later.listed),
            set: {
                let mut set = self.set;
                for value in later.set {
                    match set.iter_mut().find(|s| s.path == value.path) {
                        Some(first) => first.after = value.after,
                        None => set.push(value),
                    }
                }
                set
            },
        }
    }
}

/// `first` and then what `later` adds to it, in order.
fn union<T: PartialEq>(mut first: Vec<T>, later: Vec<T>) -> Vec<T> {
    for item in later {
        if !first.contains(&item) {
            first.push(item);
        }
    }
    first
}

/// The settings after an install, and the edits that made them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    pub text: String,
    /// Empty when the entry was there as it should be.
    pub edits: Vec<Edit>,
    pub made: Made,
}

/// Why the settings cannot take the entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    #[error(transparent)]
    Json(#[from] JsonEditError),
    #[error("`{0}` is not a JSON object")]
    NotObject(&'static str),
    #[error("`hooks.Stop` is not a list")]
    StopNotList,
    #[error("`{0}` is not a list")]
    NotList(String),
    #[error("`{0}` is not a JSON object")]
    NotObjectAt(String),
    #[error("an edit did not apply (this is a bug in referee)")]
    Edit,
}

impl Doc {
    /// The settings `text` to edit (empty when the file does not exist:
    /// then an empty object, and the file counts as made).
    fn open(text: &str) -> Result<(Doc, Made), SettingsError> {
        let mut doc = Doc {
            text: text.to_string(),
            edits: Vec::new(),
        };
        let mut made = Made::default();
        if text.trim().is_empty() {
            made.file = true;
            doc.apply(Edit {
                at: 0,
                removed: text.to_string(),
                inserted: "{}\n".to_string(),
            })?;
        }
        Ok((doc, made))
    }
}

/// Adds `entry` to `text` (the file's content; empty when it does not
/// exist), or updates referee's entry in place; with `cap`, raises Claude
/// Code's block cap to it in `env`.
pub fn install(text: &str, entry: &Entry, cap: Option<u32>) -> Result<Installed, SettingsError> {
    let (mut doc, mut made) = Doc::open(text)?;
    let root = doc.root()?;
    let event = entry.event();
    match root.get("hooks") {
        None => {
            made.hooks = true;
            made.stop = true;
            doc.apply(json_edit::add_member(
                &doc.text,
                &root,
                "hooks",
                &json!({ event: [entry.group()] }),
            ))?;
        }
        Some(hooks) => match hooks.value.get(event) {
            None if matches!(hooks.value, Node::Object { .. }) => {
                made.stop = true;
                doc.apply(json_edit::add_member(
                    &doc.text,
                    &hooks.value,
                    event,
                    &json!([entry.group()]),
                ))?;
            }
            None => return Err(SettingsError::NotObject("hooks")),
            Some(_) => doc.put_entry(entry)?,
        },
    }
    if let Some(cap) = cap {
        made.cap = doc.raise_cap(cap, &mut made.env)?;
    }
    Ok(Installed {
        text: doc.text,
        edits: doc.edits,
        made,
    })
}

/// Adds what `guard` asks for to `text` (settings that already hold the
/// hook, or any): missing deny rules and `denyWrite` paths are appended,
/// sandbox switches set; the person's own entries stay.
pub fn guard(text: &str, guard: &Guard) -> Result<Installed, SettingsError> {
    let (mut doc, mut made) = Doc::open(text)?;
    doc.root()?;
    for rule in &guard.deny {
        doc.add_to_list(&["permissions", "deny"], rule, &mut made)?;
    }
    if let Some(paths) = &guard.sandbox {
        for (key, on) in SANDBOX_SWITCHES {
            doc.set_value(&["sandbox", key], json!(on), &mut made)?;
        }
        for path in paths {
            doc.add_to_list(&["sandbox", "filesystem", "denyWrite"], path, &mut made)?;
        }
    }
    Ok(Installed {
        text: doc.text,
        edits: doc.edits,
        made,
    })
}

/// Takes out what a guard added, as `made` says: the strings it listed,
/// the values it set (when still as it set them), then the objects and
/// lists it made when they are empty. Everything else stays.
pub fn unguard(text: &str, made: &Made) -> Result<String, SettingsError> {
    let mut doc = Doc {
        text: text.to_string(),
        edits: Vec::new(),
    };
    if text.trim().is_empty() {
        return Ok(doc.text);
    }
    for listed in made.listed.iter().rev() {
        let path: Vec<&str> = listed.path.iter().map(String::as_str).collect();
        let Some(Node::Array { items, .. }) = doc.node(&path)? else {
            continue;
        };
        let found = items.iter().position(|i| {
            serde_json::from_str::<Value>(&doc.text[i.start()..i.end()])
                .is_ok_and(|v| v.as_str() == Some(listed.item.as_str()))
        });
        if let (Some(index), Some(list)) = (found, doc.node(&path)?) {
            match json_edit::remove(&doc.text, &list, index) {
                Some(edit) => doc.apply(edit)?,
                None => return Err(SettingsError::Edit),
            }
        }
    }
    for set in made.set.iter().rev() {
        let path: Vec<&str> = set.path.iter().map(String::as_str).collect();
        let Some((parent, key)) = path.split_last().map(|(k, p)| (p, *k)) else {
            continue;
        };
        let Some(node) = doc.node(&path)? else {
            continue;
        };
        let now: Option<Value> = serde_json::from_str(&doc.text[node.start()..node.end()]).ok();
        if now.as_ref() != Some(&set.after) {
            continue;
        }
        match &set.before {
            None => doc.remove_member(parent, key)?,
            Some(before) => {
                let value: Value = serde_json::from_str(before).unwrap_or(json!(before));
                doc.apply(json_edit::replace(&doc.text, &node, &value))?;
            }
        }
    }
    for created in made.created.iter().rev() {
        let path: Vec<&str> = created.iter().map(String::as_str).collect();
        let Some((parent, key)) = path.split_last().map(|(k, p)| (p, *k)) else {
            continue;
        };
        let empty = match doc.node(&path)? {
            Some(Node::Object { members, .. }) => members.is_empty(),
            Some(Node::Array { items, .. }) => items.is_empty(),
            _ => false,
        };
        if empty {
            doc.remove_member(parent, key)?;
        }
    }
    Ok(doc.text)
}

/// The strings of the list at `path` in `text` (none when it is missing or
/// not a list of strings).
pub fn strings_at(text: &str, path: &[&str]) -> Vec<String> {
    let Ok(mut value) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    for key in path {
        value = value.get(key).cloned().unwrap_or(Value::Null);
    }
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Takes referee's entries out of `text`, and what `made` says an install
/// added around them once they are gone; everything else stays.
pub fn uninstall(text: &str, made: &Made) -> Result<String, SettingsError> {
    let mut doc = Doc {
        text: text.to_string(),
        edits: Vec::new(),
    };
    while doc.remove_one_entry()? {}
    let root = doc.root()?;
    if let Some(hooks) = root.get("hooks") {
        for event in EVENTS {
            let root = doc.root()?;
            if made.stop
                && let Some(stop) = root.get("hooks").and_then(|h| h.value.get(event))
                && matches!(&stop.value, Node::Array { items, .. } if items.is_empty())
            {
                doc.remove_member(&["hooks"], event)?;
            }
        }
        let _ = hooks;
        let root = doc.root()?;
        if made.hooks
            && let Some(hooks) = root.get("hooks")
            && matches!(&hooks.value, Node::Object { members, .. } if members.is_empty())
        {
            doc.remove_member(&[], "hooks")?;
        }
    }
    if let Some(change) = &made.cap {
        let root = doc.root()?;
        let current = root
            .get("env")
            .and_then(|env| env.value.get(CAP_VAR))
            .map(|m| doc.text[m.value.start()..m.value.end()].to_string());
        if current.as_deref() == Some(json!(change.after).to_string().as_str()) {
            match &change.before {
                None => doc.remove_member(&["env"], CAP_VAR)?,
                Some(before) => {
                    let root = doc.root()?;
                    if let Some(m) = root.get("env").and_then(|e| e.value.get(CAP_VAR)) {
                        let value: Value = serde_json::from_str(before).unwrap_or(json!(before));
                        doc.apply(json_edit::replace(&doc.text, &m.value, &value))?;
                    }
                }
            }
        }
        let root = doc.root()?;
        if made.env
            && let Some(env) = root.get("env")
            && matches!(&env.value, Node::Object { members, .. } if members.is_empty())
        {
            doc.remove_member(&[], "env")?;
        }
    }
    Ok(doc.text)
}

/// Whether `text` holds referee's entry, and its command.
pub fn installed_command(text: &str) -> Option<String> {
    let root = json_edit::scan(text).ok()?;
    ours(text, &root)
        .first()
        .map(|(_, _, _, command)| command.clone())
}

/// Whether `text` is, as far as an install goes, an empty file: `{}`.
pub fn is_empty_object(text: &str) -> bool {
    matches!(serde_json::from_str::<Value>(text), Ok(Value::Object(m)) if m.is_empty())
}

struct Doc {
    text: String,
    edits: Vec<Edit>,
}

impl Doc {
    fn apply(&mut self, edit: Edit) -> Result<(), SettingsError> {
        self.text = edit.apply(&self.text).ok_or(SettingsError::Edit)?;
        self.edits.push(edit);
        Ok(())
    }

    fn root(&self) -> Result<Node, SettingsError> {
        let root = json_edit::scan(&self.text)?;
        match root {
            Node::Object { .. } => Ok(root),
            _ => Err(SettingsError::NotObject("the file")),
        }
    }

    /// The node at `path` (keys from the root), if there is one.
    fn node(&self, path: &[&str]) -> Result<Option<Node>, SettingsError> {
        let mut node = self.root()?;
        for key in path {
            match node.get(key) {
                Some(m) => node = m.value.clone(),
                None => return Ok(None),
            }
        }
        Ok(Some(node))
    }

    /// Makes the object or list at `path` when missing (and the objects on
    /// the way), noting what it made; refuses one of another kind.
    fn ensure(
        &mut self,
        path: &[&str],
        list: bool,
        made: &mut Made,
    ) -> Result<Node, SettingsError> {
        let mut node = self.root()?;
        for (depth, key) in path.iter().enumerate() {
            let last = depth + 1 == path.len();
            let here = path[..=depth].join(".");
            let next = match node.get(key) {
                Some(m) => m.value.clone(),
                None => {
                    let empty = if last && list { json!([]) } else { json!({}) };
                    self.apply(json_edit::add_member(&self.text, &node, key, &empty))?;
                    made.created
                        .push(path[..=depth].iter().map(|k| k.to_string()).collect());
                    self.node(&path[..=depth])?.ok_or(SettingsError::Edit)?
                }
            };
            match (&next, last && list) {
                (Node::Array { .. }, true) | (Node::Object { .. }, false) => {}
                (_, true) => return Err(SettingsError::NotList(here)),
                (_, false) => return Err(SettingsError::NotObjectAt(here)),
            }
            node = next;
        }
        Ok(node)
    }

    /// Appends `item` to the list at `path` unless it is there.
    fn add_to_list(
        &mut self,
        path: &[&str],
        item: &str,
        made: &mut Made,
    ) -> Result<(), SettingsError> {
        let list = self.ensure(path, true, made)?;
        let Node::Array { items, .. } = &list else {
            return Err(SettingsError::NotList(path.join(".")));
        };
        let present = items.iter().any(|i| {
            serde_json::from_str::<Value>(&self.text[i.start()..i.end()])
                .is_ok_and(|v| v.as_str() == Some(item))
        });
        if !present {
            self.apply(json_edit::add_item(&self.text, &list, &json!(item)))?;
            made.listed.push(Listed {
                path: path.iter().map(|k| k.to_string()).collect(),
                item: item.to_string(),
            });
        }
        Ok(())
    }

    /// Sets the value at `path` to `value` unless it is that already.
    fn set_value(
        &mut self,
        path: &[&str],
        value: Value,
        made: &mut Made,
    ) -> Result<(), SettingsError> {
        let Some((key, parent)) = path.split_last() else {
            return Err(SettingsError::Edit);
        };
        let object = self.ensure(parent, false, made)?;
        let before = match object.get(key) {
            None => {
                self.apply(json_edit::add_member(&self.text, &object, key, &value))?;
                None
            }
            Some(m) => {
                let text = self.text[m.value.start()..m.value.end()].to_string();
                if serde_json::from_str::<Value>(&text).ok().as_ref() == Some(&value) {
                    return Ok(());
                }
                self.apply(json_edit::replace(&self.text, &m.value, &value))?;
                Some(text)
            }
        };
        made.set.push(SetValue {
            path: path.iter().map(|k| k.to_string()).collect(),
            before,
            after: value,
        });
        Ok(())
    }

    /// `hooks.Stop` exists: update referee's entry, or add a group for it.
    fn put_entry(&mut self, entry: &Entry) -> Result<(), SettingsError> {
        let root = self.root()?;
        let found = ours(&self.text, &root);
        match found.first() {
            Some((_, _, node, _)) => {
                let now: Value = serde_json::from_str(&self.text[node.start()..node.end()])
                    .map_err(|_| SettingsError::Edit)?;
                if now != entry.value() {
                    self.apply(json_edit::replace(&self.text, node, &entry.value()))?;
                }
                // A second referee entry would review every round twice.
                while ours(&self.text, &self.root()?).len() > 1 {
                    self.remove_entry_at(1)?;
                }
                Ok(())
            }
            None => {
                let stop = root
                    .get("hooks")
                    .and_then(|h| h.value.get(entry.event()))
                    .map(|m| m.value.clone());
                match stop {
                    Some(stop @ Node::Array { .. }) => {
                        self.apply(json_edit::add_item(&self.text, &stop, &entry.group()))
                    }
                    _ => Err(SettingsError::StopNotList),
                }
            }
        }
    }

    /// Raises the block cap in `env` to `cap` unless it is already that
    /// high (or unlimited); says what changed.
    fn raise_cap(
        &mut self,
        cap: u32,
        made_env: &mut bool,
    ) -> Result<Option<CapChange>, SettingsError> {
        let after = cap.to_string();
        let root = self.root()?;
        let Some(env) = root.get("env") else {
            *made_env = true;
            self.apply(json_edit::add_member(
                &self.text,
                &root,
                "env",
                &json!({ CAP_VAR: after }),
            ))?;
            return Ok(Some(CapChange {
                before: None,
                after,
            }));
        };
        if !matches!(env.value, Node::Object { .. }) {
            return Err(SettingsError::NotObject("env"));
        }
        match env.value.get(CAP_VAR) {
            None => {
                self.apply(json_edit::add_member(
                    &self.text,
                    &env.value,
                    CAP_VAR,
                    &json!(after),
                ))?;
                Ok(Some(CapChange {
                    before: None,
                    after,
                }))
            }
            Some(m) => {
                let before = self.text[m.value.start()..m.value.end()].to_string();
                let now: Option<i64> = match serde_json::from_str::<Value>(&before) {
                    Ok(Value::String(s)) => s.trim().parse().ok(),
                    Ok(Value::Number(n)) => n.as_i64(),
                    _ => None,
                };
                match now {
                    Some(n) if n <= 0 || n >= i64::from(cap) => Ok(None),
                    _ => {
                        self.apply(json_edit::replace(&self.text, &m.value, &json!(after)))?;
                        Ok(Some(CapChange {
                            before: Some(before),
                            after,
                        }))
                    }
                }
            }
        }
    }

    /// Takes out the first of referee's entries; false when there is none.
    fn remove_one_entry(&mut self) -> Result<bool, SettingsError> {
        if ours(&self.text, &self.root()?).is_empty() {
            return Ok(false);
        }
        self.remove_entry_at(0)?;
        Ok(true)
    }

    /// Takes out referee's `n`th entry, and its group when nothing else
    /// is left in it.
    fn remove_entry_at(&mut self, n: usize) -> Result<(), SettingsError> {
        let root = self.root()?;
        let Some((event, group_index, _, _)) = ours(&self.text, &root).get(n).cloned() else {
            return Ok(());
        };
        let Some(stop) = root.get("hooks").and_then(|h| h.value.get(event)) else {
            return Ok(());
        };
        let Node::Array { items: groups, .. } = &stop.value else {
            return Ok(());
        };
        let Some(group) = groups.get(group_index) else {
            return Ok(());
        };
        let Some(list) = group.get("hooks") else {
            return Ok(());
        };
        let Node::Array { items, .. } = &list.value else {
            return Ok(());
        };
        let others = items
            .iter()
            .filter(|i| !is_ours_node(&self.text, i))
            .count();
        let only_hooks = matches!(group, Node::Object { members, .. } if members.len() == 1);
        let edit = if others == 0 && only_hooks {
            json_edit::remove(&self.text, &stop.value, group_index)
        } else {
            let index = items.iter().position(|i| is_ours_node(&self.text, i));
            index.and_then(|i| json_edit::remove(&self.text, &list.value, i))
        };
        match edit {
            Some(edit) => self.apply(edit),
            None => Err(SettingsError::Edit),
        }
    }

    /// Removes member `key` of the object at `path` (keys from the root).
    fn remove_member(&mut self, path: &[&str], key: &str) -> Result<(), SettingsError> {
        let root = self.root()?;
        let mut node = &root;
        for step in path {
            match node.get(step) {
                Some(m) => node = &m.value,
                None => return Ok(()),
            }
        }
        let Node::Object { members, .. } = node else {
            return Ok(());
        };
        let Some(index) = members.iter().position(|m| m.key == key) else {
            return Ok(());
        };
        match json_edit::remove(&self.text, node, index) {
            Some(edit) => self.apply(edit),
            None => Err(SettingsError::Edit),
        }
    }
}

/// referee's entries under `hooks.Stop` (or `hooks.AfterAgent`): the
/// event, group index, the entry's node and its command.
fn ours(text: &str, root: &Node) -> Vec<(&'static str, usize, Node, String)> {
    let mut found = Vec::new();
    for event in EVENTS {
        let Some(stop) = root.get("hooks").and_then(|h| h.value.get(event)) else {
            continue;
        };
        let Node::Array { items: groups, .. } = &stop.value else {
            continue;
        };
        for (g, group) in groups.iter().enumerate() {
            let Some(Node::Array { items, .. }) = group.get("hooks").map(|m| &m.value) else {
                continue;
            };
            for item in items {
                if let Some(command) = command_of(text, item)
                    && is_ours(&command)
                {
                    found.push((event, g, item.clone(), command));
                }
            }
        }
    }
    found
}

fn is_ours_node(text: &str, node: &Node) -> bool {
    command_of(text, node).is_some_and(|c| is_ours(&c))
}

fn command_of(text: &str, node: &Node) -> Option<String> {
    let m = node.get("command")?;
    serde_json::from_str::<Value>(&text[m.value.start()..m.value.end()])
        .ok()?
        .as_str()
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Entry {
        Entry {
            agent: Agent::Claude,
            command: "/usr/local/bin/referee hook stop --agent claude".into(),
            timeout_secs: 1920,
        }
    }

    /// Gemini's entry goes under `AfterAgent`, named, its timeout in
    /// milliseconds; an uninstall takes it out to the byte, beside the
    /// person's own hooks.
    #[test]
    fn gemini_gets_an_after_agent_entry_and_loses_it_again() {
        let gemini = Entry {
            agent: Agent::Gemini,
            command: "referee hook stop --agent gemini".into(),
            timeout_secs: 2100,
        };
        let fresh = install("", &gemini, None).unwrap();
        let doc: Value = serde_json::from_str(&fresh.text).unwrap();
        assert_eq!(
            doc,
            json!({"hooks": {"AfterAgent": [{"hooks": [{"type": "command", "name": "referee",
                "command": "referee hook stop --agent gemini", "timeout": 2_100_000}]}]}})
        );
        assert_eq!(
            installed_command(&fresh.text).as_deref(),
            Some("referee hook stop --agent gemini")
        );
        assert_eq!(uninstall(&fresh.text, &fresh.made).unwrap(), "{}\n");
        let theirs = r#"{"hooks": {"AfterAgent": [{"hooks": [{"type": "command", "command": "notify"}]}], "BeforeTool": []}, "ui": {"theme": "x"}}"#;
        let mine = install(theirs, &gemini, None).unwrap();
        let doc: Value = serde_json::from_str(&mine.text).unwrap();
        assert_eq!(doc["hooks"]["AfterAgent"].as_array().unwrap().len(), 2);
        assert_eq!(uninstall(&mine.text, &mine.made).unwrap(), theirs);
        // Installed again: updated in place, not doubled.
        let again = install(&mine.text, &gemini, None).unwrap();
        assert!(again.edits.is_empty());
    }

    /// Undoing the edits gives back the bytes; taking the entry out by
    /// structure does too, when nothing else changed.
    fn round_trip(original: &str, cap: Option<u32>) -> Installed {
        let installed = install(original, &entry(), cap).unwrap();
        let mut text = installed.text.clone();
        for edit in installed.edits.iter().rev() {
            text = edit.inverse().apply(&text).unwrap();
        }
        assert_eq!(text, original, "undo");
        let removed = uninstall(&installed.text, &installed.made).unwrap();
        if installed.made.file {
            assert!(is_empty_object(&removed), "{removed}");
        } else {
            assert_eq!(removed, original, "uninstall");
        }
        installed
    }

    fn full_guard() -> Guard {
        Guard {
            deny: vec!["Edit(.referee/**)".into(), "Bash(referee waive:*)".into()],
            sandbox: Some(vec!["./.referee".into(), "./.git".into()]),
        }
    }

    #[test]
    fn the_guard_adds_what_is_missing_and_unguard_takes_out_only_that() {
        let original = "{\n  \"permissions\": {\"deny\": [\"Bash(rm:*)\", \"Edit(.referee/**)\"]},\n  \"sandbox\": {\"enabled\": false}\n}\n";
        let g = guard(original, &full_guard()).unwrap();
        let value: Value = serde_json::from_str(&g.text).unwrap();
        assert_eq!(
            value["permissions"]["deny"],
            json!(["Bash(rm:*)", "Edit(.referee/**)", "Bash(referee waive:*)"])
        );
        assert_eq!(
            value["sandbox"],
            json!({"enabled": true, "failIfUnavailable": true, "allowUnsandboxedCommands": false,
                   "filesystem": {"denyWrite": ["./.referee", "./.git"]}})
        );
        // The rule the person had is not the install's to take out.
        assert_eq!(g.made.listed.len(), 3, "{:?}", g.made.listed);
        let mut undone = g.text.clone();
        for edit in g.edits.iter().rev() {
            undone = edit.inverse().apply(&undone).unwrap();
        }
        assert_eq!(undone, original);
        let out = unguard(&g.text, &g.made).unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&out).unwrap(),
            serde_json::from_str::<Value>(original).unwrap()
        );
        // Again: nothing more to add.
        assert!(guard(&g.text, &full_guard()).unwrap().edits.is_empty());
    }

    #[test]
    fn a_guard_into_a_fresh_file_leaves_an_empty_object_when_undone() {
        let hooked = install("", &entry(), None).unwrap();
        let g = guard(&hooked.text, &full_guard()).unwrap();
        let made = hooked.made.clone().and(g.made.clone());
        let out = unguard(&uninstall(&g.text, &made).unwrap(), &made).unwrap();
        assert!(is_empty_object(&out), "{out}");
        assert_eq!(
            guard("{\"permissions\": []}", &full_guard()).unwrap_err(),
            SettingsError::NotObjectAt("permissions".into())
        );
        assert_eq!(
            guard("{\"permissions\": {\"deny\": {}}}", &full_guard()).unwrap_err(),
            SettingsError::NotList("permissions.deny".into())
        );
    }

    #[test]
    fn a_missing_file_gets_the_entry_alone() {
        let i = round_trip("", None);
        assert_eq!(
            i.text,
            "{\n  \"hooks\": {\n    \"Stop\": [\n      {\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"/usr/local/bin/referee hook stop --agent claude\",\n            \"timeout\": 1920\n          }\n        ]\n      }\n    ]\n  }\n}\n"
        );
        assert!(i.made.file && i.made.hooks && i.made.stop);
    }

    #[test]
    fn existing_settings_are_merged_and_kept_byte_for_byte() {
        let original = "{\n    \"permissions\": {\"allow\": [\"Bash(ls:*)\"]},\n    \"hooks\": {\n        \"Stop\": [\n            {\"hooks\": [{\"type\": \"command\", \"command\": \"notify-send done\"}]}\n        ],\n        \"PreToolUse\": []\n    },\n    \"env\": {\"FOO\": \"bar\"}\n}\n";
        let i = round_trip(original, Some(12));
        assert!(!i.made.hooks && !i.made.stop && !i.made.env);
        assert!(
            i.text.starts_with("{\n    \"permissions\": {\"allow\": [\"Bash(ls:*)\"]},\n    \"hooks\": {\n        \"Stop\": [\n            {\"hooks\": [{\"type\": \"command\", \"command\": \"notify-send done\"}]},\n            {\n                \"hooks\": ["),
            "{}",
            i.text
        );
        assert!(
            i.text.ends_with(
                "\"env\": {\"FOO\": \"bar\", \"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP\": \"12\"}\n}\n"
            ),
            "{}",
            i.text
        );
        let value: Value = serde_json::from_str(&i.text).unwrap();
        assert_eq!(value["hooks"]["Stop"].as_array().unwrap().len(), 2);
        assert_eq!(
            value["hooks"]["Stop"][0]["hooks"][0]["command"],
            "notify-send done"
        );
    }

    #[test]
    fn installing_twice_changes_nothing_and_a_new_timeout_updates_in_place() {
        let first = install("{\"model\": \"opus\"}\n", &entry(), None).unwrap();
        let again = install(&first.text, &entry(), None).unwrap();
        assert!(again.edits.is_empty());
        assert_eq!(again.text, first.text);
        let longer = Entry {
            timeout_secs: 4000,
            ..entry()
        };
        let updated = install(&first.text, &longer, None).unwrap();
        assert_eq!(updated.edits.len(), 1);
        assert_eq!(updated.text, first.text.replace("1920", "4000"));
        // Undoing both installs' edits restores the first bytes.
        let mut text = updated.text.clone();
        for edit in first.edits.iter().chain(&updated.edits).rev() {
            text = edit.inverse().apply(&text).unwrap();
        }
        assert_eq!(text, "{\"model\": \"opus\"}\n");
    }

    #[test]
    fn a_higher_or_unlimited_cap_is_left_alone_and_a_lower_one_raised() {
        let high = "{\"env\": {\"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP\": \"50\"}}";
        assert_eq!(install(high, &entry(), Some(12)).unwrap().made.cap, None);
        let off = "{\"env\": {\"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP\": \"0\"}}";
        assert_eq!(install(off, &entry(), Some(12)).unwrap().made.cap, None);
        let low = "{\"env\": {\"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP\": \"4\"}}";
        let i = round_trip(low, Some(12));
        assert_eq!(
            i.made.cap,
            Some(CapChange {
                before: Some("\"4\"".into()),
                after: "12".into()
            })
        );
    }

    #[test]
    fn uninstall_after_other_edits_takes_out_only_referees_entry() {
        let installed = install("{\n  \"model\": \"opus\"\n}\n", &entry(), Some(20)).unwrap();
        // The person adds a hook of their own after referee's, and a setting.
        let edited = installed.text.replace(
            "\"model\": \"opus\"",
            "\"model\": \"sonnet\",\n  \"theme\": \"dark\"",
        );
        let mut doc: Value = serde_json::from_str(&edited).unwrap();
        doc["hooks"]["Stop"]
            .as_array_mut()
            .unwrap()
            .push(json!({"hooks": [{"type": "command", "command": "say done"}]}));
        let edited = serde_json::to_string_pretty(&doc).unwrap();
        let out = uninstall(&edited, &installed.made).unwrap();
        let value: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            value,
            json!({"model": "sonnet", "theme": "dark",
                   "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}})
        );
    }

    #[test]
    fn an_entry_sharing_a_group_leaves_the_group() {
        let text = r#"{"hooks": {"Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "say hi"}, {"type": "command", "command": "referee hook stop"}]}]}}"#;
        assert_eq!(
            installed_command(text).as_deref(),
            Some("referee hook stop")
        );
        let out = uninstall(text, &Made::default()).unwrap();
        assert_eq!(
            out,
            r#"{"hooks": {"Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "say hi"}]}]}}"#
        );
    }

    #[test]
    fn settings_that_are_not_an_object_are_refused() {
        assert_eq!(
            install("[]", &entry(), None).unwrap_err(),
            SettingsError::NotObject("the file")
        );
        assert_eq!(
            install("{\"hooks\": {\"Stop\": {}}}", &entry(), None).unwrap_err(),
            SettingsError::StopNotList
        );
        assert!(install("{\"hooks\": ", &entry(), None).is_err());
    }

    #[test]
    fn referees_commands_are_recognised() {
        for yes in [
            "referee hook stop",
            "/home/me/.cargo/bin/referee hook stop --agent codex --loop x",
            "'/opt/my tools/referee' hook stop",
        ] {
            assert!(is_ours(yes), "{yes}");
        }
        for no in [
            "notify-send done",
            "referee status",
            "my-referee-wrapper.sh",
            "\"referee hook stop",
        ] {
            assert!(!is_ours(no), "{no}");
        }
    }
}
