use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = referee::cmd::cli::Cli::parse();
    referee::cmd::main(cli).into()
}
