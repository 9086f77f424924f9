#!/usr/bin/env bash
# A CI test-fix loop with referee, for any CI system: an agent fixes the
# failing tests, the test suite reviews (each failing test is a finding), and
# referee decides when to stop. It leaves, next to the state folder:
#   referee-summary.md   the ledger as Markdown (also appended to $GITHUB_STEP_SUMMARY)
#   referee.sarif        every finding as SARIF 2.1.0, for code scanning
#   referee-report.txt   the hand-off when the loop escalated
# and exits 0 when the loop ended done, 20 when it escalated, 1 on an error,
# 130 or 143 when it was cancelled (SIGINT, SIGTERM).
#
# Environment:
#   REFEREE        the referee binary                 (default: referee)
#   CONTRACT       template or contract file           (default: ci-test-fix, shipped)
#   LOOP           loop name                           (default: the template's)
#   TASK           what the writer is asked to do      (default: make the test suite pass)
#   OUT            folder for the files above          (default: .)
set -uo pipefail

REFEREE="${REFEREE:-referee}"
CONTRACT="${CONTRACT:-ci-test-fix}"
TASK="${TASK:-Make the failing tests pass without weakening them.}"
OUT="${OUT:-.}"
loop=()
[ -n "${LOOP:-}" ] && loop=(--loop "$LOOP")
mkdir -p "$OUT"

"$REFEREE" run "${loop[@]}" --from "$CONTRACT" --task "$TASK"
code=$?

# The receipts, whatever happened: none of these may hide the loop's outcome.
"$REFEREE" ledger show "${loop[@]}" --format markdown > "$OUT/referee-summary.md" || true
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  cat "$OUT/referee-summary.md" >> "$GITHUB_STEP_SUMMARY"
fi
"$REFEREE" findings "${loop[@]}" --format sarif > "$OUT/referee.sarif" || true
if [ "$code" -eq 20 ]; then
  "$REFEREE" escalate "${loop[@]}" --format markdown > "$OUT/referee-report.txt" || true
fi

case "$code" in
  0)  echo "referee: the loop ended done" ;;
  20) echo "referee: the loop escalated; see referee-report.txt" >&2 ;;
  130|143) echo "referee: cancelled (exit $code); nothing was recorded for the round under way" >&2 ;;
  *)  echo "referee: error (exit $code); nothing was recorded for the failed round" >&2 ;;
esac
exit "$code"
