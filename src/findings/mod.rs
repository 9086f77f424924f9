//! Findings: the model, identity and matching (pure), one parser per format.

pub mod severity;

pub use severity::Severity;
