//! Prompts: the built-in writer and reviewer templates (`prompts/*.md`), or
//! the contract's, filled in one pass. Pure. The text goes to the agent on
//! stdin or as one argv element — never through a shell.

use crate::findings::Finding;

/// The built-in writer template.
pub const WRITER: &str = include_str!("../../prompts/writer.md");
/// The built-in reviewer template.
pub const REVIEWER: &str = include_str!("../../prompts/reviewer.md");
/// The findings schema handed to `--json-schema` / `--output-schema`.
pub const SCHEMA: &str = include_str!("../../contracts/findings.schema.json");

/// The schema as the agent CLIs take it: compact, without `$schema` and
/// `$id` (Claude Code silently drops a `--json-schema` that declares draft
/// 2020-12; tests/mock/FACTS.md).
pub fn schema_for_agents() -> String {
    match serde_json::from_str::<serde_json::Value>(SCHEMA) {
        Ok(serde_json::Value::Object(mut map)) => {
            map.remove("$schema");
            map.remove("$id");
            serde_json::Value::Object(map).to_string()
        }
        _ => SCHEMA.to_string(),
    }
}

/// Longest patch put in a reviewer prompt; the whole patch is always in
/// `REFEREE_PATCH_FILE`.
pub const MAX_PATCH_IN_PROMPT: usize = 200 * 1024;

/// Fills `{{name}}` placeholders from `vars` in one pass: text that a value
/// brings in is never expanded again. Unknown placeholders stay as written.
pub fn render(template: &str, vars: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find("}}") {
            Some(end) => {
                let name = after[..end].trim();
                match vars.iter().find(|(k, _)| *k == name) {
                    Some((_, value)) => out.push_str(value),
                    None => out.push_str(&rest[start..start + 2 + end + 2]),
                }
                rest = &after[end + 2..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Findings as a prompt list: `- F1 [bug] src/a.rs:42: title` and the
/// reviewer's words, or `(none)`; a panel's finding says who reported it.
pub fn findings_list(findings: &[&Finding]) -> String {
    if findings.is_empty() {
        return "(none)".to_string();
    }
    let mut out = String::new();
    for f in findings {
        let place = match (&f.file, f.line) {
            (Some(file), Some(line)) => format!(" {file}:{line}"),
            (Some(file), None) => format!(" {file}"),
            _ => String::new(),
        };
        let by = match f.reported_by.as_slice() {
            [] => String::new(),
            names => format!(" (reported by {})", names.join(", ")),
        };
        out.push_str(&format!(
            "- {} [{}]{place}: {}{by}\n",
            f.id, f.severity, f.title
        ));
        if let Some(body) = f.body.as_deref().filter(|b| !b.trim().is_empty()) {
            for line in body.trim().lines().take(20) {
                out.push_str(&format!("  {line}\n"));
            }
        }
    }
    out
}

/// The patch for a prompt, cut at [`MAX_PATCH_IN_PROMPT`] on a line break.
pub fn patch_excerpt(patch: &[u8]) -> String {
    let text = String::from_utf8_lossy(patch);
    if text.len() <= MAX_PATCH_IN_PROMPT {
        return if text.trim().is_empty() {
            "(no change since the last round)".to_string()
        } else {
            text.into_owned()
        };
    }
    let mut cut = MAX_PATCH_IN_PROMPT;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let cut = text[..cut].rfind('\n').unwrap_or(cut);
    format!(
        "{}\n… (patch cut at {} KiB; the whole patch is in the file named by REFEREE_PATCH_FILE)",
        &text[..cut],
        MAX_PATCH_IN_PROMPT / 1024
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_pass_fill_never_expands_values() {
        let out = render(
            "task: {{task}} / {{ round }} / {{unknown}} / {{open",
            &[("task", "print {{round}}"), ("round", "2")],
        );
        assert_eq!(out, "task: print {{round}} / 2 / {{unknown}} / {{open");
    }

    #[test]
    fn templates_use_only_known_placeholders() {
        let known = [
            "loop",
            "round",
            "max_rounds",
            "task",
            "scope",
            "floor",
            "findings",
            "open_findings",
            "patch",
            "schema",
        ];
        for template in [WRITER, REVIEWER] {
            let vars: Vec<(&str, &str)> = known.iter().map(|k| (*k, "")).collect();
            assert!(!render(template, &vars).contains("{{"), "{template}");
        }
    }

    #[test]
    fn the_agents_schema_declares_no_draft() {
        let schema: serde_json::Value = serde_json::from_str(&schema_for_agents()).unwrap();
        assert!(schema.get("$schema").is_none());
        assert_eq!(
            schema["required"],
            serde_json::json!(["findings", "resolved"])
        );
    }

    #[test]
    fn long_patches_are_cut_on_a_line() {
        let patch = "+line\n".repeat(MAX_PATCH_IN_PROMPT / 3);
        let out = patch_excerpt(patch.as_bytes());
        assert!(out.len() < MAX_PATCH_IN_PROMPT + 200);
        assert!(out.ends_with("REFEREE_PATCH_FILE)"));
        assert_eq!(patch_excerpt(b""), "(no change since the last round)");
    }
}
