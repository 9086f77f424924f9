//! The Stop hook of an interactive agent session (Claude Code, Codex), its
//! pure parts: the payload the agent sends, the answer referee gives, the
//! writer's spend and requests in the agent's transcript, and the entry in
//! the agent's settings file. Nothing here touches the file system,
//! processes or the clock (docs/hooks.md).

pub mod answer;
pub mod boundary;
pub mod codex_config;
pub mod json_edit;
pub mod note;
pub mod payload;
pub mod settings;
pub mod transcript;

pub use payload::{Agent, Payload};
