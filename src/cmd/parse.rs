//! `referee parse`.

use crate::cli::ParseArgs;
use crate::exit::Exit;

pub fn run(_args: ParseArgs) -> anyhow::Result<Exit> {
    Err(super::not_available("parse"))
}
