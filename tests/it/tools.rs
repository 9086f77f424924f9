//! The tools some tests need (the real agent CLIs, pytest, zsh and fish for
//! the completion scripts, prlimit to bound memory): a test run says
//! which are missing, so a skipped test is never mistaken for a passing one.

use std::io::Write;
use std::process::{Command, Stdio};

fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(name).is_file()))
}

fn pytest() -> bool {
    Command::new("python3")
        .args(["-m", "pytest", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Fails under `REFEREE_REQUIRE_TOOLS=1` (CI) when a tool is missing;
/// otherwise prints the missing ones straight to the terminal (libtest
/// captures `eprintln!` of passing tests, not writes to stderr itself).
#[test]
fn tools_for_the_real_agent_and_ci_tests() {
    let mut missing = Vec::new();
    for (name, install) in [
        ("claude", "npm i -g @anthropic-ai/claude-code@2.1.197"),
        ("codex", "npm i -g @openai/codex@0.171.0"),
        ("gemini", "npm i -g @google/gemini-cli@0.61.0"),
        ("zsh", "apt-get install zsh"),
        ("fish", "apt-get install fish"),
        ("prlimit", "apt-get install util-linux"),
        ("socat", "apt-get install socat"),
        ("setsid", "apt-get install util-linux"),
        ("script", "apt-get install util-linux"),
        ("bash", "apt-get install bash"),
    ] {
        if !on_path(name) {
            missing.push(format!("`{name}` ({install})"));
        }
    }
    // bubblewrap is kept off PATH (`.ci/run` says why) and named by
    // REFEREE_TEST_BWRAP.
    let bwrap =
        std::env::var_os("REFEREE_TEST_BWRAP").is_some_and(|p| std::path::Path::new(&p).is_file());
    if !bwrap && !on_path("bwrap") {
        missing.push("`bwrap` (apt-get download bubblewrap; REFEREE_TEST_BWRAP)".to_string());
    }
    if !pytest() {
        missing.push("pytest (pip install pytest)".to_string());
    }
    // The latest Claude Code, beside the pinned one on PATH.
    let latest = std::env::var_os("REFEREE_TEST_CLAUDE_LATEST")
        .is_some_and(|p| std::path::Path::new(&p).is_file());
    if !latest {
        missing.push(
            "the latest `claude` (npm install --prefix DIR @anthropic-ai/claude-code@2.1.332; REFEREE_TEST_CLAUDE_LATEST=DIR/node_modules/.bin/claude)"
                .to_string(),
        );
    }
    if missing.is_empty() {
        return;
    }
    let required = std::env::var("REFEREE_REQUIRE_TOOLS").is_ok_and(|v| v == "1");
    assert!(
        !required,
        "REFEREE_REQUIRE_TOOLS=1 and these are missing: {}",
        missing.join(", ")
    );
    let _ = writeln!(
        std::io::stderr(),
        "\nnote: tests that need these tools were SKIPPED (they pass without running): {}\n      \
         .ci/run installs them; REFEREE_REQUIRE_TOOLS=1 makes a missing tool fail the run",
        missing.join(", ")
    );
}
