//! `referee completions SHELL`: writes a completion script to stdout.

use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs};
use crate::exit::Exit;

pub fn run(args: CompletionsArgs) -> anyhow::Result<Exit> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "referee", &mut script);
    super::emit_exact(&script)?;
    Ok(Exit::Success)
}

/// `referee man`: the manual page, generated from the same definitions as
/// `--help`.
pub fn man() -> anyhow::Result<Exit> {
    let mut page = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut page)?;
    super::emit_exact(&page)?;
    Ok(Exit::Success)
}
