//! `referee parse`: reads one reviewer output (file or stdin, bounded) and
//! prints its findings as native JSON. The only I/O of this command.

use std::io::Write;

use anyhow::Context;
use clap::Args;

use crate::exit::Exit;
use crate::findings;
use crate::findings::Format;
use crate::state::State;

#[derive(Debug, Args)]
pub struct ParseArgs {
    /// Input format.
    #[arg(long, value_enum, default_value_t = Format::Auto)]
    pub format: Format,
    /// The reviewer's output (`-` for stdin).
    #[arg(value_name = "F")]
    pub input: String,
}

pub fn run(args: ParseArgs) -> anyhow::Result<Exit> {
    let name = if args.input == "-" {
        "stdin".to_string()
    } else {
        args.input.clone()
    };
    let bytes = super::read_bounded(&args.input).with_context(|| format!("findings `{name}`"))?;
    let root = State::locate(None)?.repo;
    let root = root.to_string_lossy();
    let parsed = findings::parse(&bytes, args.format, &root)
        .with_context(|| format!("findings `{name}`"))?;
    drop(bytes);
    // Streamed: a 50,000-finding document is not held twice.
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    serde_json::to_writer_pretty(&mut out, &parsed).map_err(std::io::Error::from)?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(Exit::Success)
}
