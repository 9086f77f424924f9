#!/usr/bin/env bash
# Whole-process benchmarks of the release binary, as ratios to a reference
# tool on the same input (docs/performance.md records the figures):
#   1. `record`: 100 findings, a 1,000-line patch, a repository of 20,000
#      files, next to `git status --porcelain` in the same repository;
#   2. a 50,000-result SARIF (~30 MB): `referee parse`, and a `record` that
#      matches it against 50,000 known findings, next to `jq length`;
#   3. a 100,000-row ledger: `ledger verify` next to `openssl dgst -sha256`,
#      `ledger show --format json` next to `ledger verify`;
#   4. `referee --version` start-up;
#   5. `referee hook stop` with no loop, next to `git rev-parse --show-toplevel`;
#   6. `referee status` of a loop with 100 rounds and 1,000 findings.
# Each ratio is printed with the target issue 17 set for it (and parse's
# peak memory against 2.5x its input).
# Each figure is the median of RUNS runs (default 7), with peak memory; the
# two commands of each ratio are timed in turn, one run of each at a time.
#   scripts/bench.sh [WORK_DIR]     REFEREE=target/release/referee RUNS=7
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
REFEREE="${REFEREE:-$here/target/release/referee}"
RUNS="${RUNS:-7}"
work="${1:-$(mktemp -d)}"
mkdir -p "$work"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null NO_COLOR=1
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
[ -x "$REFEREE" ] || { echo "build first: cargo build --release" >&2; exit 2; }
echo "referee: $REFEREE ($("$REFEREE" --version)); work: $work; runs: $RUNS"
python3 "$here/scripts/bench.py" "$REFEREE" "$work" "$RUNS"
