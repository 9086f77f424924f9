# Shared helpers for try_claude.sh / try_codex.sh (sourced, not run).
# Needs: bash, python3, git, timeout.

MOCK_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PASS=0
FAIL=0
SERVER_PID=""
PORT=""

ok()   { PASS=$((PASS + 1)); echo "ok - $*"; }
bad()  { FAIL=$((FAIL + 1)); echo "FAIL - $*"; }
check() { # check "description" command...
  local what="$1"; shift
  if "$@"; then ok "$what"; else bad "$what"; fi
}

# make_repo DIR: a git repo with one commit (README.md).
make_repo() {
  mkdir -p "$1"
  git -C "$1" init -q
  git -C "$1" config user.email mock@example.invalid
  git -C "$1" config user.name mock
  printf '# demo\n\nfirst line\n' > "$1/README.md"
  git -C "$1" add README.md
  git -C "$1" commit -qm init
}

# start_server SCRIPT LOG: starts model_server.py, sets SERVER_PID and PORT.
start_server() {
  stop_server
  local out="$2.stdout"
  python3 "$MOCK_DIR/model_server.py" --port 0 --script "$1" --log "$2" > "$out" 2> "$2.stderr" &
  SERVER_PID=$!
  PORT=""
  for _ in $(seq 1 50); do
    PORT="$(awk '/^PORT /{print $2; exit}' "$out" 2>/dev/null)"
    [ -n "$PORT" ] && break
    sleep 0.1
  done
  if [ -z "$PORT" ]; then
    echo "model server did not start"; cat "$2.stderr"; exit 2
  fi
}

stop_server() {
  if [ -n "$SERVER_PID" ]; then
    kill "$SERVER_PID" 2>/dev/null
    wait "$SERVER_PID" 2>/dev/null
    SERVER_PID=""
  fi
}

# py 'python code' args...: run an inline python3 check; exit status is the check.
py() { local code="$1"; shift; python3 -c "$code" "$@"; }

# short_args args...: the argv, shell-quoted, long values cut to 60 chars (for logs).
short_args() {
  python3 -c 'import shlex,sys; print(" ".join(shlex.quote(a if len(a)<=60 else a[:57]+"...") for a in sys.argv[1:]))' "$@"
}

finish() {
  stop_server
  echo
  echo "$PASS passed, $FAIL failed"
  [ "$FAIL" -eq 0 ]
}
