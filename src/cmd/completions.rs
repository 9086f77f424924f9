//! `referee completions SHELL`: writes a completion script to stdout.

use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs};
use crate::exit::Exit;

pub fn run(args: CompletionsArgs) -> anyhow::Result<Exit> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "referee", &mut script);
    super::emit(&script)?;
    Ok(Exit::Success)
}
