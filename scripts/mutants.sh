#!/usr/bin/env bash
# Mutation testing of the pure core with cargo-mutants: each mutant is a
# small change to the code (a condition inverted, a clause dropped, a
# return value replaced) that some test should catch. docs/testing.md keeps
# the figures. Not in .ci/run: the whole core takes hours on two cores.
#   scripts/mutants.sh [FILE...]     default: the core files below
#   TESTS=all scripts/mutants.sh     run the whole suite per mutant, not --lib
#   RE='place_pass|jaccard' scripts/mutants.sh src/findings/identity.rs
#                                    only the mutants in functions matching RE
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
command -v cargo-mutants >/dev/null || cargo install cargo-mutants --locked
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  files=(src/rules/mod.rs src/engine/decide.rs src/engine/accounting.rs
         src/findings/identity.rs src/ledger/chain.rs src/patch.rs
         src/contract/mod.rs src/contract/value.rs src/contract/agent.rs)
fi
args=()
for f in "${files[@]}"; do args+=(--file "$f"); done
[ -n "${RE:-}" ] && args+=(--re "$RE")
if [ "${TESTS:-lib}" = lib ]; then
  # The unit tests, without the two slow ones no core file reaches
  # (process timeouts, a timing bound): a mutant then costs a rebuild of the
  # unit-test binary and a few seconds.
  cargo mutants "${args[@]}" -j "${JOBS:-2}" --output "${OUT:-target/mutants}" \
    -- --lib -- --skip agent::process --skip redact::tests::hostile_input
else
  cargo mutants "${args[@]}" -j "${JOBS:-2}" --output "${OUT:-target/mutants}"
fi
