use clap::Parser;

/// mimalloc instead of glibc's malloc: a large `record` allocates and frees
/// millions of small strings (findings, their fields, JSON), and glibc's
/// free lists (`malloc_consolidate`, `unlink_chunk`) were a quarter of its
/// profile. docs/performance.md has the figures.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let cli = referee::cli::Cli::parse();
    referee::cmd::main(cli).into()
}
