//! The one renderer of an error for a person: the cause chain, then one
//! `hint:` line for each hint an error of the chain carries. Pure.

use crate::exit::Hinted;

/// `err` and its causes (`{err:#}`), then its hints: those of every error
/// in the chain, outermost first, each once.
pub fn render(err: &anyhow::Error) -> String {
    with_hints(&format!("{err:#}"), &hints(err))
}

/// The hints of every error in `err`'s chain, outermost first, each once.
/// A [`Hinted`] given as the outermost `.context(…)` counts too (anyhow
/// hides a context's type from the chain, so deeper contexts do not).
pub fn hints(err: &anyhow::Error) -> Vec<String> {
    let mut hints: Vec<String> = match err.downcast_ref::<Hinted>() {
        Some(hinted) => hinted.hints.clone(),
        None => Vec::new(),
    };
    for cause in err.chain() {
        for hint in hints_of(cause) {
            if !hints.contains(&hint) {
                hints.push(hint);
            }
        }
    }
    hints
}

/// `message`, then a `hint:` line per hint: the one place that writes one.
pub fn with_hints(message: &str, hints: &[impl AsRef<str>]) -> String {
    let mut text = message.to_string();
    for hint in hints {
        text.push_str("\nhint: ");
        text.push_str(hint.as_ref());
    }
    text
}

/// The hints one error carries: a [`Hinted`] (also inside an `io::Error`)
/// or a typed error of an area. The typed errors live on floors above
/// `exit`, so they are named here, where all of them can be.
fn hints_of(cause: &(dyn std::error::Error + 'static)) -> Vec<String> {
    use crate::{anchor, checkout, findings, git, ledger, snapshot, statefs};
    if let Some(err) = cause.downcast_ref::<Hinted>() {
        return err.hints.clone();
    }
    if let Some(err) = cause.downcast_ref::<std::io::Error>() {
        return match err
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<Hinted>())
        {
            Some(hinted) => hinted.hints.clone(),
            None => Vec::new(),
        };
    }
    let hint = if let Some(err) = cause.downcast_ref::<git::GitError>() {
        err.hint()
    } else if let Some(err) = cause.downcast_ref::<statefs::FsError>() {
        err.hint()
    } else if let Some(err) = cause.downcast_ref::<findings::FindingsError>() {
        err.hint()
    } else if let Some(err) = cause.downcast_ref::<anchor::AnchorError>() {
        err.hint()
    } else if let Some(err) = cause.downcast_ref::<ledger::chain::ChainError>() {
        err.hint()
    } else if let Some(err) = cause.downcast_ref::<ledger::store::StoreError>() {
        err.hint()
    } else if let Some(err) = cause.downcast_ref::<snapshot::SnapshotError>() {
        err.hint()
    } else if let Some(err) = cause.downcast_ref::<checkout::CheckoutError>() {
        err.hint()
    } else {
        None
    };
    hint.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::hinted;

    #[test]
    fn hints_of_an_inner_and_an_outer_error_follow_the_chain_once_each() {
        let fs = crate::statefs::FsError::NotFolder {
            path: "state/ledgers".into(),
        };
        let inner = anyhow::Error::new(crate::ledger::store::StoreError::Fs(fs)).context("round 2");
        let err = inner.context(Hinted::new("loop `main`", "run the command again"));
        assert_eq!(
            render(&err),
            "loop `main`: round 2: `state/ledgers` is not a folder: referee keeps its state in folders it made\n\
             hint: run the command again\n\
             hint: remove it"
        );
        let err = hinted("`a.json` is empty", "write the review first")
            .context(Hinted::new("loop `main`", "write the review first"));
        assert_eq!(
            render(&err),
            "loop `main`: `a.json` is empty\nhint: write the review first"
        );
    }

    #[test]
    fn io_errors_give_their_hints_too() {
        let io = std::io::Error::other(Hinted::new("disk full", "free some space"));
        assert_eq!(render(&io.into()), "disk full\nhint: free some space");
        assert_eq!(render(&anyhow::anyhow!("no hint")), "no hint");
    }
}
