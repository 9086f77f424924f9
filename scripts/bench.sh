#!/usr/bin/env bash
# Whole-process benchmarks of the release binary on workloads a loop really
# makes, each as a ratio to a reference tool on the same input or as a
# figure against its target (docs/performance.md records them):
#   1. `record` in a repository of 20,000 files (100 findings, a 1,000-line
#      patch), round 1 and round 2, next to `git status --porcelain` (<= 2x)
#      and the floor `git add -A && git write-tree` into a temporary index
#      (<= 1.5x);
#   2. `parse` of a 50 MB SARIF next to `jq length` (<= 0.5x; peak memory
#      <= 2.5x the file), and a `record` that matches it against as many
#      known findings;
#   3. `ledger verify`, `status`, `ledger show --format json` of a 100-round
#      loop with 1,000 findings (<= 50 ms each);
#   4. `referee --version` start-up;
#   5. `referee hook stop` with no loop, next to `git rev-parse
#      --show-toplevel` (<= 2x);
#   6. `record` through a 100-round loop whose every fix round rewrites
#      500 lines: the last ten rounds against rounds 2-11 (<= 1.3x).
#   7. `parse --format junit` of generated reports of 100,000 cases in
#      1,000 suites and 300,000 in 3,000, next to Python's
#      `xml.etree.ElementTree.parse` of the same file (<= 1.0x).
# Each figure is the median of RUNS runs (default 7), with peak memory; the
# commands of each ratio are timed in turn, one run of each at a time.
#   scripts/bench.sh [WORK_DIR]     REFEREE=target/release/referee RUNS=7 ONLY="1 3"
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
