//! Reads contract files and shipped templates. Does I/O.

use std::path::{Path, PathBuf};

use anyhow::Context;

use super::Contract;
use crate::digest::sha256_hex;
use crate::exit::hinted;
use crate::statefs::{self, FsError};

/// The templates shipped in `contracts/`, built into the binary so that
/// `--from NAME` works outside a checkout of referee.
pub const TEMPLATES: &[(&str, &str)] = &[
    (
        "cross-review",
        include_str!("../../contracts/cross-review.toml"),
    ),
    (
        "cross-review-reverse",
        include_str!("../../contracts/cross-review-reverse.toml"),
    ),
    (
        "cross-review-panel",
        include_str!("../../contracts/cross-review-panel.toml"),
    ),
    (
        "ci-test-fix",
        include_str!("../../contracts/ci-test-fix.toml"),
    ),
    (
        "doc-review",
        include_str!("../../contracts/doc-review.toml"),
    ),
];

/// A contract as read from its file.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub contract: Contract,
    pub path: PathBuf,
    /// sha256 of the file's bytes: what round 1 pins.
    pub sha256: String,
}

/// Reads and validates the contract at `path`.
pub fn load(path: &Path) -> anyhow::Result<Loaded> {
    let bytes = read(path)?;
    let sha256 = sha256_hex(&bytes);
    let text = String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "contract `{}`: not UTF-8 (byte {})",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })?;
    let contract = Contract::from_toml(&text, "HEAD")
        .map_err(|e| anyhow::anyhow!("contract `{}`: {e}", path.display()))?;
    Ok(Loaded {
        contract,
        path: path.to_path_buf(),
        sha256,
    })
}

/// The bytes of the contract file at `path`, refusing a link: the file lies
/// under the state folder, which the writer agent can write.
pub fn read(path: &Path) -> anyhow::Result<Vec<u8>> {
    match statefs::read_file(path) {
        Ok(bytes) => Ok(bytes),
        Err(FsError::Io { cause, .. }) => {
            Err(anyhow::Error::new(cause)
                .context(format!("cannot read contract `{}`", path.display())))
        }
        Err(err) => Err(err.into()),
    }
}

/// A template's text and where it came from: a file, or a shipped name.
pub fn template(from: &str) -> anyhow::Result<(String, String)> {
    let path = Path::new(from);
    if path.is_file() {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read template `{}`", path.display()))?;
        return Ok((text, path.display().to_string()));
    }
    let name = from.strip_prefix("contracts/").unwrap_or(from);
    let name = name.strip_suffix(".toml").unwrap_or(name);
    match TEMPLATES.iter().find(|(n, _)| *n == name) {
        Some((n, text)) => Ok(((*text).to_string(), format!("shipped template `{n}`"))),
        None => {
            let names: Vec<_> = TEMPLATES.iter().map(|(n, _)| format!("`{n}`")).collect();
            Err(hinted(
                format!("no template `{from}`: not a file, nor a shipped template"),
                format!("shipped templates: {}", names.join(", ")),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_templates_validate() {
        for (name, text) in TEMPLATES {
            let contract = Contract::from_toml(text, "HEAD");
            assert!(contract.is_ok(), "{name}: {contract:?}");
        }
    }
}
