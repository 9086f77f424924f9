#!/usr/bin/env bash
# Makes the sample ledgers in ledgers/: one real `referee run` loop per rule
# outcome, with scripted agents (tests/fixtures/agents/fake-agent.sh), fixed
# dates and a fixed clock, so the output is the same byte for byte on every
# machine. tests/it/samples.rs regenerates them and compares.
#
#   scripts/sample-ledgers.sh [OUT_DIR]      (default: ledgers/)
#   REFEREE=path/to/referee                  (default: referee on PATH)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$here/ledgers}"
REFEREE="${REFEREE:-referee}"
agent="$here/tests/fixtures/agents/fake-agent.sh"
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME="Sample Author" GIT_AUTHOR_EMAIL=author@example.com
export GIT_COMMITTER_NAME="Sample Author" GIT_COMMITTER_EMAIL=author@example.com
export GIT_AUTHOR_DATE=2026-01-01T00:00:00Z GIT_COMMITTER_DATE=2026-01-01T00:00:00Z
export REFEREE_NOW=2026-01-02T03:04:05Z NO_COLOR=1
unset REFEREE_DIR

bug() { printf '{"findings":[{"id":"%s","severity":"bug","title":"%s","file":"src/auth.rs","line":1,"body":"%s"}]}\n' "$1" "$2" "$3"; }
clean='{"findings":[]}'

# sample NAME CONTRACT_EXTRA: a repo with src/auth.rs and a loop driven by the
# fake agent from .fake/ (ignored by git, so never part of a snapshot). The
# reviewer runs in a private checkout of the snapshot, where `.fake/` is not:
# it finds the agent through `FAKE_DIR`, an absolute path `finish` exports.
sample() {
  local name="$1" extra="$2"
  repo="$work/$name"
  mkdir -p "$repo/src" "$repo/.fake"
  git -C "$repo" init -q -b main
  printf 'fn valid(now: u64, exp: u64) -> bool { now > exp }\n' > "$repo/src/auth.rs"
  git -C "$repo" add -A && git -C "$repo" commit -q -m start
  printf '.fake/\n' >> "$repo/.git/info/exclude"
  cp "$agent" "$repo/.fake/agent.sh"
  cat > "$repo/.fake/contract.toml" <<TOML
loop = "$name"
$extra
[writer]
preset = "command"
command = ["sh", ".fake/agent.sh"]
env = { FAKE_DIR = ".fake" }
[reviewer]
preset = "command"
command = ["sh", "-c", "exec sh \"\$FAKE_DIR/agent.sh\""]
TOML
  (cd "$repo" && "$REFEREE" init --from .fake/contract.toml >/dev/null)
}
step() { printf '%s' "$2" > "$repo/.fake/$1"; }   # step FILE CONTENT
edit() { printf 'printf "%%s\\n" "%s" > src/auth.rs\n' "$1"; }
finish() {
  local name="$1"
  (cd "$repo" && FAKE_DIR="$repo/.fake" "$REFEREE" run --task "fix the expiry check" --quiet > /dev/null) || true
  cp "$repo/.referee/ledgers/$name.csv" "$out/$name.csv"
  rm -rf "$out/$name"
  mkdir -p "$out/$name"
  for round in "$repo/.referee/ledgers/$name"/round-*; do
    cp -r "$round" "$out/$name/"
  done
  (cd "$repo" && "$REFEREE" ledger show --format markdown) > "$out/$name.md"
  (cd "$repo" && "$REFEREE" escalate --format markdown) >> "$out/$name.md"
}

sample clean "max_rounds = 3"
step writer-1.sh "$(edit 'fn valid(now: u64, exp: u64) -> bool { now < exp }')"
step reviewer-1.print "$(bug F1 'expired tokens pass at the boundary' 'use now >= exp')"
step writer-2.sh "$(edit 'fn valid(now: u64, exp: u64) -> bool { now <= exp }')"
step writer-2.out '{"responses":[{"id":"F1","status":"fixed","note":"inclusive now"}]}'
step reviewer-2.print "$clean"
finish clean

sample reopened "max_rounds = 5"
step writer-1.sh "$(edit 'a')"; step reviewer-1.print "$(bug F1 'expired tokens pass' 'use >=')"
step writer-2.sh "$(edit 'b')"; step reviewer-2.print "$(bug F2 'refresh keeps the old token' 'mint a new one')"
step writer-3.sh "$(edit 'c')"; step reviewer-3.print "$(bug F1 'expired tokens pass' 'it is back')"
finish reopened

sample flip-flop "max_rounds = 5"
step writer-1.sh "$(edit 'let limit = 1;')"; step reviewer-1.print "$(bug F1 'limit is too low' 'raise it')"
step writer-2.sh "$(edit 'let limit = 2;')"; step reviewer-2.print "$(bug F2 'burst traffic overflows' 'lower it')"
step writer-3.sh "$(edit 'let limit = 1;')"; step reviewer-3.print "$(bug F3 'quota math drifts' 'recount')"
finish flip-flop

sample diff-growth "max_rounds = 6"
step writer-1.sh 'echo one >> src/auth.rs'
step reviewer-1.print '{"findings":[{"id":"F1","severity":"bug","title":"first gap"},{"id":"F2","severity":"bug","title":"second gap"}]}'
step writer-2.sh 'printf "two\ntwo\n" >> src/auth.rs'
step reviewer-2.print '{"findings":[{"id":"F1","severity":"bug","title":"first gap"}]}'
step writer-3.sh 'printf "three\nthree\nthree\n" >> src/auth.rs'
step reviewer-3.print '{"findings":[{"id":"F1","severity":"bug","title":"first gap"},{"id":"F3","severity":"bug","title":"third gap"}]}'
finish diff-growth

sample round-cap "max_rounds = 2"
step writer-1.sh "$(edit 'a')"; step reviewer-1.print "$(bug F1 'expired tokens pass' 'use >=')"
step writer-2.sh "$(edit 'b')"
step writer-2.out '{"responses":[{"id":"F1","status":"disputed","note":"the spec reads exp as inclusive"}]}'
step reviewer-2.print "$(bug F1 'expired tokens pass' 'still exploitable')"
finish round-cap

sample nit-round $'max_rounds = 4\nclosure = "explicit"'
step writer-1.sh "$(edit 'a')"; step reviewer-1.print "$(bug F1 'expired tokens pass' 'use >=')"
step writer-2.sh "$(edit 'b')"
step reviewer-2.print '{"findings":[{"id":"N1","severity":"nit","title":"name the rule"}]}'
finish nit-round

sample scope $'scope = ["src/**"]'
step writer-1.sh 'echo "edited by the writer" > README.md'
finish scope

sample budget $'max_rounds = 5\n[budget]\nusd = 1.0'
step writer-1.sh "$(edit 'a')"; step writer-1.out '{"usage":{"cost_usd":0.6,"tokens":6000}}'
step reviewer-1.print "$(bug F1 'expired tokens pass' 'use >=')"
step writer-2.sh "$(edit 'b')"; step writer-2.out '{"usage":{"cost_usd":0.5,"tokens":5000}}'
finish budget

sample stalled "max_rounds = 5"
step writer-1.sh "$(edit 'a')"; step reviewer-1.print "$(bug F1 'expired tokens pass' 'use >=')"
# Round 2: the writer changes nothing and disputes nothing; no review is spent.
step writer-2.out '{"responses":[{"id":"F1","status":"wontfix","note":"out of time"}]}'
finish stalled

sample disputed "max_rounds = 5"
step writer-1.sh "$(edit 'a')"; step reviewer-1.print "$(bug F1 'expired tokens pass' 'use >=')"
step writer-2.sh "$(edit 'b')"
step writer-2.out '{"responses":[{"id":"F1","status":"disputed","note":"the spec reads exp as inclusive"}]}'
step reviewer-2.print "$(bug F1 'expired tokens pass' 'still exploitable: a token is valid one second too long')"
finish disputed

sample judge $'max_rounds = 5\nseverity_floor = "should"\n[judge]\nengine = "replay"\nreplay = ".fake/judge.json"\nwhat = "the patch"'
step judge.json '{"1":{"model":"small-judge-1","answers":{"holds":{"probability":0.2},"worth_doing":{"probability":0.9},"worth_another_round":{"probability":0.8},"stop_reason":{"choice":"continue","confidence":0.7,"probabilities":{"holds":0.1,"over_polishing":0.1,"not_converging":0.1,"continue":0.7}}}},"2":{"model":"small-judge-1","answers":{"holds":{"probability":0.7},"worth_doing":{"probability":0.3},"worth_another_round":{"probability":0.2},"stop_reason":{"choice":"over_polishing","confidence":0.8,"probabilities":{"holds":0.1,"over_polishing":0.7,"not_converging":0.1,"continue":0.1}}}}}'
step writer-1.sh "$(edit 'a')"
step reviewer-1.print '{"findings":[{"id":"S1","severity":"should","title":"name the boundary rule"}]}'
step writer-2.sh "$(edit 'b')"
step reviewer-2.print '{"findings":[{"id":"S2","severity":"should","title":"shorter names"}]}'
finish judge

echo "wrote $(ls "$out"/*.csv | wc -l) sample ledgers to $out"
