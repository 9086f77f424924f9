//! `referee parse`: reads one reviewer output (file or stdin, bounded) and
//! prints its findings as native JSON. The only I/O of this command.

use std::io::{Read, Write};

use anyhow::Context;

use crate::cli::ParseArgs;
use crate::exit::Exit;
use crate::findings;
use crate::state::State;

/// Largest reviewer output read; beyond it the input is refused, not cut.
const MAX_INPUT: u64 = 256 * 1024 * 1024;

pub fn run(args: ParseArgs) -> anyhow::Result<Exit> {
    let name = if args.input == "-" {
        "stdin".to_string()
    } else {
        args.input.clone()
    };
    let bytes = read_bounded(&args.input).with_context(|| format!("findings `{name}`"))?;
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

pub(super) fn read_bounded(input: &str) -> anyhow::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    if input == "-" {
        std::io::stdin()
            .lock()
            .take(MAX_INPUT + 1)
            .read_to_end(&mut bytes)
            .context("cannot read stdin")?;
    } else {
        let file = std::fs::File::open(input).context("cannot open the file")?;
        // Sized from the file, so a large review is not copied as it grows.
        let len = file.metadata().map_or(0, |m| m.len());
        bytes.reserve_exact(crate::statefs::capacity_for(len.min(MAX_INPUT)));
        file.take(MAX_INPUT + 1)
            .read_to_end(&mut bytes)
            .context("cannot read the file")?;
    }
    if bytes.len() as u64 > MAX_INPUT {
        anyhow::bail!(
            "input is larger than {} MiB\nhint: a reviewer output this large is not a review; check the command",
            MAX_INPUT / 1024 / 1024
        );
    }
    Ok(bytes)
}
