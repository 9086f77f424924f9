#!/usr/bin/env bash
# Drives the real Claude Code CLI (`claude`) against tests/mock/model_server.py on loopback:
#   1. writer  : claude -p --output-format json --permission-mode acceptEdits ...  (Write + Read + Edit)
#   2. reviewer: claude -p --output-format json --permission-mode plan --json-schema '<inline JSON>'
#   3. fact    : the same schema WITH "$schema": draft 2020-12 is silently dropped by the CLI
# Env: CLAUDE_BIN (default: claude on PATH, else /work/npm-cli/node_modules/.bin/claude),
#      KEEP=1 keeps the work folder (printed at the start).
set -u
. "$(dirname "$0")/lib.sh"

CLAUDE_BIN="${CLAUDE_BIN:-$(command -v claude || echo /work/npm-cli/node_modules/.bin/claude)}"
SCHEMA_FILE="${SCHEMA_FILE:-$MOCK_DIR/../../contracts/findings.schema.json}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/try_claude.XXXXXX")"
REPO="$WORK/repo"
echo "work folder: $WORK"
echo "claude: $CLAUDE_BIN ($("$CLAUDE_BIN" --version))"
trap 'stop_server; [ "${KEEP:-0}" = 1 ] || rm -rf "$WORK"' EXIT
make_repo "$REPO"
mkdir -p "$WORK/home" "$WORK/claude-config"

# The environment that makes claude talk only to the mock, offline, with no login.
run_claude() { # run_claude OUT_PREFIX PROMPT args...
  local out="$1" prompt="$2"; shift 2
  local t0 t1
  t0=$(date +%s.%N)
  printf '%s\n' "$prompt" | (cd "$REPO" && env \
    HOME="$WORK/home" \
    CLAUDE_CONFIG_DIR="$WORK/claude-config" \
    ANTHROPIC_BASE_URL="http://127.0.0.1:$PORT" \
    ANTHROPIC_API_KEY=dummy \
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
    DISABLE_AUTOUPDATER=1 \
    DISABLE_TELEMETRY=1 \
    DISABLE_ERROR_REPORTING=1 \
    CLAUDE_CODE_MAX_RETRIES=0 \
    timeout 120 "$CLAUDE_BIN" "$@") > "$out.json" 2> "$out.stderr"
  echo $? > "$out.rc"
  t1=$(date +%s.%N)
  echo "  [$(basename "$out")] rc=$(cat "$out.rc") in $(python3 -c "print(round($t1-$t0,2))")s: claude $(short_args "$@")"
}

# ------------------------------------------------------------------ 1. writer
cat > "$WORK/writer.script.json" <<EOF
{
  "usage": {"input_tokens": 1000, "output_tokens": 100},
  "anthropic": [
    {"text": "Creating hello.txt.", "tool_use": {"name": "Write", "input": {"file_path": "$REPO/hello.txt", "content": "hello from the mock writer\n"}}},
    {"tool_use": {"name": "Read", "input": {"file_path": "$REPO/README.md"}}},
    {"tool_use": {"name": "Edit", "input": {"file_path": "$REPO/README.md", "old_string": "first line", "new_string": "first line, edited by the mock writer"}}},
    {"text": "Wrote hello.txt and edited README.md."}
  ]
}
EOF
start_server "$WORK/writer.script.json" "$WORK/writer.log.jsonl"
run_claude "$WORK/writer" "Create hello.txt and touch up README.md." \
  -p --output-format json --permission-mode acceptEdits \
  --model claude-sonnet-4-5 --max-turns 10 --max-budget-usd 5 --allowedTools "Read,Write,Edit"
stop_server

check "writer exit code 0" test "$(cat "$WORK/writer.rc")" = 0
check "writer created hello.txt" grep -q "hello from the mock writer" "$REPO/hello.txt"
check "writer edited README.md" grep -q "edited by the mock writer" "$REPO/README.md"
check "writer result JSON: subtype success, result, total_cost_usd, usage, num_turns" py '
import json,sys
r=json.load(open(sys.argv[1]))
assert r["type"]=="result" and r["subtype"]=="success" and r["is_error"] is False, r
assert r["result"]=="Wrote hello.txt and edited README.md.", r["result"]
# 4 requests x (1000 in, 100 out) at claude-sonnet-4-5 prices ($3/$15 per Mtok) = 4 x 0.0045
assert abs(r["total_cost_usd"]-0.018)<1e-9, r["total_cost_usd"]
assert r["usage"]["input_tokens"]==4000 and r["usage"]["output_tokens"]==400, r["usage"]
assert r["modelUsage"]["claude-sonnet-4-5"]["costUSD"]>0
assert r["permission_denials"]==[], r["permission_denials"]
' "$WORK/writer.json"
check "writer requests: model, stdin prompt, tools offered" py '
import json,sys
rs=[json.loads(l) for l in open(sys.argv[1])]
msgs=[r for r in rs if r["path"].startswith("/v1/messages")]
assert len(msgs)==4, len(msgs)
b=msgs[0]["body"]
assert b["model"]=="claude-sonnet-4-5", b["model"]
assert b["stream"] is True
first_user=b["messages"][0]["content"]
assert first_user[-1]["text"]=="Create hello.txt and touch up README.md.\n", first_user[-1]
names=[t["name"] for t in b["tools"]]
assert {"Write","Edit","Read","Bash"} <= set(names), names
assert any("x-anthropic-billing-header" in s["text"] for s in b["system"])
' "$WORK/writer.log.jsonl"

# ------------------------------------------------------------------ 2. reviewer
# claude --json-schema takes INLINE JSON (not a path). A "$schema" of draft 2020-12 makes the
# CLI silently ignore the schema (step 3), so the referee strips "$schema" first.
SCHEMA_INLINE="$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); s.pop("$schema",None); print(json.dumps(s))' "$SCHEMA_FILE")"
cat > "$WORK/reviewer.script.json" <<'EOF'
{
  "usage": {"input_tokens": 2000, "output_tokens": 200},
  "anthropic": [
    {"structured_output": {"findings": [{"id": null, "severity": "should", "title": "hello.txt is not referenced anywhere", "file": "hello.txt", "line": 1, "body": "Mention it in README.md or drop it.", "undoes": null}], "resolved": []}}
  ]
}
EOF
start_server "$WORK/reviewer.script.json" "$WORK/reviewer.log.jsonl"
run_claude "$WORK/reviewer" "Review the uncommitted changes and report findings." \
  -p --output-format json --permission-mode plan --json-schema "$SCHEMA_INLINE" \
  --model claude-sonnet-4-5 --max-turns 10 --max-budget-usd 5
stop_server

check "reviewer exit code 0" test "$(cat "$WORK/reviewer.rc")" = 0
check "reviewer result JSON carries structured_output (and result = the same JSON as text)" py '
import json,sys
r=json.load(open(sys.argv[1]))
so=r["structured_output"]
assert so["findings"][0]["severity"]=="should" and so["resolved"]==[], so
assert json.loads(r["result"])==so, r["result"]
assert abs(r["total_cost_usd"]-0.009)<1e-9, r["total_cost_usd"]
' "$WORK/reviewer.json"
check "reviewer request: schema reached the model as the StructuredOutput tool input_schema; plan mode reminder" py '
import json,sys
rs=[json.loads(l) for l in open(sys.argv[1]) if "/v1/messages" in l]
b=rs[0]["body"]
tool=[t for t in b["tools"] if t["name"]=="StructuredOutput"]
assert tool, [t["name"] for t in b["tools"]]
assert tool[0]["input_schema"]==json.loads(sys.argv[2]), tool[0]["input_schema"]
# --permission-mode plan shows up as a <system-reminder> text block in the first user message
assert any("Plan mode is active." in c.get("text","") for c in b["messages"][0]["content"])
' "$WORK/reviewer.log.jsonl" "$SCHEMA_INLINE"

# ------------------------------------------------------------------ 3. fact: raw 2020-12 schema
start_server "$WORK/reviewer.script.json" "$WORK/rawschema.log.jsonl"
run_claude "$WORK/rawschema" "Review." \
  -p --output-format json --permission-mode plan --json-schema "$(cat "$SCHEMA_FILE")" --max-turns 3
stop_server
check "fact: with \"\$schema\": draft 2020-12 the CLI drops --json-schema silently (no StructuredOutput tool, no structured_output)" py '
import json,sys
rs=[json.loads(l) for l in open(sys.argv[1]) if "/v1/messages" in l]
assert all("StructuredOutput" not in [t["name"] for t in r["body"]["tools"]] for r in rs)
r=json.load(open(sys.argv[2]))
assert "structured_output" not in r and r["subtype"]=="success", r
' "$WORK/rawschema.log.jsonl" "$WORK/rawschema.json"

echo
echo "--- writer result JSON:"; cat "$WORK/writer.json"; echo
echo "--- reviewer result JSON:"; cat "$WORK/reviewer.json"; echo
finish
