#!/usr/bin/env bash
# Drives the real Codex CLI (`codex`) against tests/mock/model_server.py on loopback:
#   1. writer   : codex exec --json --sandbox workspace-write -m gpt-5.5 -C REPO -o LAST -   (apply_patch + exec_command)
#   2. writer   : same with codex's default model, whose tools come as code-mode `exec` (JavaScript)
#   3. reviewer : codex exec --json --sandbox read-only --output-schema SCHEMA -C REPO -o LAST -
#   4. review   : codex exec review --uncommitted            (rendered text on stdout)
#   5. review   : codex exec review --uncommitted --json     (JSONL; usage comes back as zeros)
# Env: CODEX_BIN (default: codex on PATH, else /work/npm-cli/node_modules/.bin/codex),
#      KEEP=1 keeps the work folder (printed at the start).
set -u
. "$(dirname "$0")/lib.sh"

CODEX_BIN="${CODEX_BIN:-$(command -v codex || echo /work/npm-cli/node_modules/.bin/codex)}"
SCHEMA_FILE="${SCHEMA_FILE:-$(cd "$MOCK_DIR/../.." && pwd)/contracts/findings.schema.json}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/try_codex.XXXXXX")"
REPO="$WORK/repo"
echo "work folder: $WORK"
echo "codex: $CODEX_BIN ($("$CODEX_BIN" --version 2>/dev/null))"
trap 'stop_server; [ "${KEEP:-0}" = 1 ] || rm -rf "$WORK"' EXIT
make_repo "$REPO"
mkdir -p "$WORK/home" "$WORK/codex-home"

# CODEX_HOME/config.toml: a custom model provider pointing at the mock (rewritten per server).
write_config() {
  cat > "$WORK/codex-home/config.toml" <<EOF
model_provider = "mock"
check_for_update_on_startup = false

[analytics]
enabled = false

[feedback]
enabled = false

[model_providers.mock]
name = "mock"
base_url = "http://127.0.0.1:$PORT/v1"
wire_api = "responses"
env_key = "MOCK_API_KEY"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 60000
EOF
}

run_codex() { # run_codex OUT_PREFIX STDIN_TEXT args...   (STDIN_TEXT "" = </dev/null)
  local out="$1" prompt="$2"; shift 2
  local t0 t1
  t0=$(date +%s.%N)
  if [ -n "$prompt" ]; then
    printf '%s\n' "$prompt" | (cd "$REPO" && env HOME="$WORK/home" CODEX_HOME="$WORK/codex-home" \
      MOCK_API_KEY=dummy timeout 120 "$CODEX_BIN" "$@") > "$out.stdout" 2> "$out.stderr"
  else
    (cd "$REPO" && env HOME="$WORK/home" CODEX_HOME="$WORK/codex-home" \
      MOCK_API_KEY=dummy timeout 120 "$CODEX_BIN" "$@") < /dev/null > "$out.stdout" 2> "$out.stderr"
  fi
  echo $? > "$out.rc"
  t1=$(date +%s.%N)
  echo "  [$(basename "$out")] rc=$(cat "$out.rc") in $(python3 -c "print(round($t1-$t0,2))")s: codex $(short_args "$@")"
}

USAGE='{"input_tokens": 1000, "output_tokens": 100, "cached_input_tokens": 400, "reasoning_output_tokens": 30}'

# ------------------------------------------------------------------ 1. writer, -m gpt-5.5
python3 - "$WORK/writer.script.json" "$USAGE" <<'EOF'
import json, sys
json.dump({"usage": json.loads(sys.argv[2]), "openai": [
    {"text": "Adding hello.txt and editing README.md.",
     "apply_patch": "*** Begin Patch\n*** Add File: hello.txt\n+hello from the mock writer\n"
                    "*** Update File: README.md\n@@\n-first line\n+first line, edited by the mock writer\n"
                    "*** End Patch\n"},
    {"shell": "echo shell-was-here >> hello.txt && git status --short"},
    {"text": "Wrote hello.txt and edited README.md."},
]}, open(sys.argv[1], "w"), indent=1)
EOF
start_server "$WORK/writer.script.json" "$WORK/writer.log.jsonl"; write_config
run_codex "$WORK/writer" "Create hello.txt and touch up README.md." \
  exec --json --sandbox workspace-write -m gpt-5.5 -C "$REPO" -o "$WORK/writer.last.txt" -
stop_server

check "writer exit code 0" test "$(cat "$WORK/writer.rc")" = 0
check "writer created hello.txt (apply_patch) and appended to it (exec_command)" \
  py 'import sys; t=open(sys.argv[1]).read(); assert t=="hello from the mock writer\nshell-was-here\n", t' "$REPO/hello.txt"
check "writer edited README.md" grep -q "edited by the mock writer" "$REPO/README.md"
check "writer -o file holds the last agent message" \
  py 'import sys; t=open(sys.argv[1]).read(); assert t.strip()=="Wrote hello.txt and edited README.md.", repr(t)' "$WORK/writer.last.txt"
check "writer JSONL: thread.started, file_change, command_execution, agent_message, turn.completed.usage (summed)" py '
import json,sys
ev=[json.loads(l) for l in open(sys.argv[1]) if l.strip()]
types=[e["type"] for e in ev]
assert types[0]=="thread.started" and types[-1]=="turn.completed", types
items=[e["item"] for e in ev if e["type"]=="item.completed"]
kinds=[i["type"] for i in items]
assert "file_change" in kinds and "command_execution" in kinds, kinds
assert items[-1]=={"id":items[-1]["id"],"type":"agent_message","text":"Wrote hello.txt and edited README.md."}, items[-1]
u=ev[-1]["usage"]
# 3 requests x usage; codex copies the Responses usage fields and sums them over the turn
assert u=={"input_tokens":3000,"cached_input_tokens":1200,"cache_write_input_tokens":0,"output_tokens":300,"reasoning_output_tokens":90}, u
' "$WORK/writer.stdout"
check "writer requests: model, tools offered, stdin prompt, sandbox in turn metadata" py '
import json,sys
rs=[json.loads(l) for l in open(sys.argv[1]) if "/v1/responses" in l]
assert len(rs)==3, len(rs)
b=rs[0]["body"]
assert b["model"]=="gpt-5.5" and b["stream"] is True, b["model"]
names=[t.get("name") for t in b["tools"]]
assert "apply_patch" in names and "exec_command" in names, names
last=b["input"][-1]
assert last["role"]=="user" and last["content"][0]["text"]=="Create hello.txt and touch up README.md.\n", last
meta=json.loads(rs[0]["headers"]["x-codex-turn-metadata"])
assert meta["sandbox_mode"]=="workspace-write" and meta["model"]=="gpt-5.5", meta
assert rs[1]["body"]["input"][-1]["type"]=="custom_tool_call_output", rs[1]["body"]["input"][-1]
' "$WORK/writer.log.jsonl"

# ------------------------------------------------------------------ 2. writer, default model (code mode)
git -C "$REPO" stash -u -q
python3 - "$WORK/writer2.script.json" <<'EOF'
import json, sys
patch = "*** Begin Patch\n*** Add File: hello2.txt\n+hello from code mode\n*** End Patch\n"
js = ("const r = await tools.apply_patch(%s);\ntext(r);\n"
      "const s = await tools.exec_command({cmd: 'echo shell-line >> hello2.txt'});\ntext(s.output);\n") % json.dumps(patch)
json.dump({"openai": [{"exec_js": js}, {"text": "Created hello2.txt."}]}, open(sys.argv[1], "w"), indent=1)
EOF
start_server "$WORK/writer2.script.json" "$WORK/writer2.log.jsonl"; write_config
run_codex "$WORK/writer2" "Create hello2.txt." \
  exec --json --sandbox workspace-write -C "$REPO" -o "$WORK/writer2.last.txt" -
stop_server
check "default-model writer exit code 0" test "$(cat "$WORK/writer2.rc")" = 0
check "default-model writer made hello2.txt through the code-mode exec tool" \
  py 'import sys; t=open(sys.argv[1]).read(); assert t=="hello from code mode\nshell-line\n", t' "$REPO/hello2.txt"
check "default model's tools come as an additional_tools input item (custom tool exec)" py '
import json,sys
b=[json.loads(l) for l in open(sys.argv[1]) if "/v1/responses" in l][0]["body"]
print("    default model:", b["model"])
assert "tools" not in b
at=[i for i in b["input"] if i.get("type")=="additional_tools"][0]
fn=[t for t in at["tools"] if t["name"]=="functions"][0]
assert any(t["name"]=="exec" and t["type"]=="custom" for t in fn["tools"])
' "$WORK/writer2.log.jsonl"
rm -f "$REPO/hello2.txt"; git -C "$REPO" stash pop -q

# ------------------------------------------------------------------ 3. reviewer, --output-schema
python3 - "$WORK/reviewer.script.json" <<'EOF'
import json, sys
final = {"findings": [{"id": None, "severity": "should", "title": "hello.txt is not referenced anywhere",
                       "file": "hello.txt", "line": 1, "body": "Mention it in README.md or drop it.",
                       "undoes": None}], "resolved": []}
json.dump({"usage": {"input_tokens": 2000, "output_tokens": 200},
           "openai": [{"text": json.dumps(final)}]}, open(sys.argv[1], "w"), indent=1)
EOF
start_server "$WORK/reviewer.script.json" "$WORK/reviewer.log.jsonl"; write_config
run_codex "$WORK/reviewer" "Review the uncommitted changes and report findings." \
  exec --json --sandbox read-only -m gpt-5.5 --output-schema "$SCHEMA_FILE" -C "$REPO" -o "$WORK/reviewer.last.txt" -
stop_server
check "reviewer exit code 0" test "$(cat "$WORK/reviewer.rc")" = 0
check "reviewer -o file is the findings JSON" py '
import json,sys
r=json.load(open(sys.argv[1]))
assert r["findings"][0]["severity"]=="should" and r["resolved"]==[], r
' "$WORK/reviewer.last.txt"
check "reviewer JSONL: last agent_message is the JSON text, turn.completed.usage" py '
import json,sys
ev=[json.loads(l) for l in open(sys.argv[1]) if l.strip()]
msgs=[e["item"]["text"] for e in ev if e["type"]=="item.completed" and e["item"]["type"]=="agent_message"]
assert json.loads(msgs[-1])["resolved"]==[], msgs
assert ev[-1]["type"]=="turn.completed" and ev[-1]["usage"]["input_tokens"]==2000 and ev[-1]["usage"]["output_tokens"]==200, ev[-1]
' "$WORK/reviewer.stdout"
check "reviewer request: schema sent verbatim as text.format json_schema (strict, name codex_output_schema)" py '
import json,sys
b=[json.loads(l) for l in open(sys.argv[1]) if "/v1/responses" in l][0]["body"]
f=b["text"]["format"]
assert f["type"]=="json_schema" and f["strict"] is True and f["name"]=="codex_output_schema", f
assert f["schema"]==json.load(open(sys.argv[2]))
meta=json.loads([json.loads(l) for l in open(sys.argv[1]) if "/v1/responses" in l][0]["headers"]["x-codex-turn-metadata"])
assert meta["sandbox_mode"]=="read-only", meta
' "$WORK/reviewer.log.jsonl" "$SCHEMA_FILE"

# ------------------------------------------------------------------ 4./5. codex exec review --uncommitted
python3 - "$WORK/review.script.json" "$REPO" <<'EOF'
import json, sys
rev = {"findings": [{"title": "[P2] Drop the stray shell line",
                     "body": "`hello.txt` line 2 was appended by a shell command and is unrelated to the task.",
                     "confidence_score": 0.8, "priority": 2,
                     "code_location": {"absolute_file_path": sys.argv[2] + "/hello.txt",
                                       "line_range": {"start": 2, "end": 2}}}],
       "overall_correctness": "patch is incorrect",
       "overall_explanation": "The new file carries an unrelated line.",
       "overall_confidence_score": 0.7}
json.dump({"usage": {"input_tokens": 3000, "output_tokens": 300},
           "openai": [{"text": json.dumps(rev), "repeat": True}]}, open(sys.argv[1], "w"), indent=1)
EOF
start_server "$WORK/review.script.json" "$WORK/review.log.jsonl"; write_config
run_codex "$WORK/review" "" exec review --uncommitted -m gpt-5.5 -o "$WORK/review.last.txt"
run_codex "$WORK/review-json" "" exec review --uncommitted -m gpt-5.5 --json
stop_server
check "review exit code 0 (both)" test "$(cat "$WORK/review.rc")$(cat "$WORK/review-json.rc")" = 00
check "review stdout is rendered text (overall_explanation + 'Review comment:' list), same in -o file" py '
import sys
out=open(sys.argv[1]).read(); last=open(sys.argv[2]).read()
assert out.startswith("The new file carries an unrelated line.\n\nReview comment:\n\n- [P2] Drop the stray shell line"), out
assert ("/hello.txt:2-2") in out
assert last.strip()==out.strip(), (last, out)
' "$WORK/review.stdout" "$WORK/review.last.txt"
check "review --json: agent_message = rendered text; turn.completed.usage is all zeros" py '
import json,sys
ev=[json.loads(l) for l in open(sys.argv[1]) if l.strip()]
msg=[e["item"]["text"] for e in ev if e["type"]=="item.completed" and e["item"]["type"]=="agent_message"][-1]
assert msg.startswith("The new file carries an unrelated line.\n\nReview comment:"), msg
u=ev[-1]["usage"]; assert ev[-1]["type"]=="turn.completed" and set(u.values())=={0}, ev[-1]
' "$WORK/review-json.stdout"
check "review request: review guidelines as developer message, fixed user prompt" py '
import json,sys
b=[json.loads(l) for l in open(sys.argv[1]) if "/v1/responses" in l][0]["body"]
dev=b["input"][0]; assert dev["role"]=="developer" and dev["content"][0]["text"].startswith("# Review guidelines:"), dev
assert "overall_correctness" in dev["content"][0]["text"]
u=b["input"][-1]["content"][0]["text"]
assert u=="Review the current code changes (staged, unstaged, and untracked files) and provide prioritized findings.", u
assert "format" not in b.get("text",{})
' "$WORK/review.log.jsonl"

echo
echo "--- writer JSONL:"; cat "$WORK/writer.stdout"
echo "--- reviewer JSONL:"; cat "$WORK/reviewer.stdout"
echo "--- review stdout:"; cat "$WORK/review.stdout"
echo "--- review stderr:"; cat "$WORK/review.stderr"
finish
