#!/usr/bin/env bash
# Drives the real Gemini CLI (`gemini`) against tests/mock/model_server.py on loopback:
#   1. writer  : gemini -p TEXT --output-format json --skip-trust --approval-mode auto_edit -m gemini-2.5-pro
#                (write_file + replace), prompt on stdin
#   2. reviewer: gemini -p TEXT --output-format json --skip-trust -m gemini-2.5-flash
#                (findings in a ```json fence in `response`; a write_file attempt is refused)
#   3. fact    : without --skip-trust a headless run in an untrusted folder exits 55
#   4. fact    : GOOGLE_GEMINI_BASE_URL without settings' auth type exits 41 "Invalid auth method selected."
#   5. fact    : without -m a routing classifier query (generateContent, JSON schema) picks the model
#   6. fact    : an API error exits with the HTTP status % 256; the JSON error is on stderr, stdout is empty
#   7. fact    : (with strace) the CLI connects to nothing but the mock
# Env: GEMINI_BIN (default: gemini on PATH, else /work/npm-cli/node_modules/.bin/gemini),
#      KEEP=1 keeps the work folder (printed at the start).
set -u
. "$(dirname "$0")/lib.sh"

GEMINI_BIN="${GEMINI_BIN:-$(command -v gemini || echo /work/npm-cli/node_modules/.bin/gemini)}"
P_TEXT="Follow the instructions given on standard input."
WORK="$(mktemp -d "${TMPDIR:-/tmp}/try_gemini.XXXXXX")"
REPO="$WORK/repo"
echo "work folder: $WORK"
echo "gemini: $GEMINI_BIN ($(HOME="$WORK/home" "$GEMINI_BIN" --version 2>/dev/null))"
trap 'stop_server; [ "${KEEP:-0}" = 1 ] || rm -rf "$WORK"' EXIT
make_repo "$REPO"

# $HOME/.gemini/settings.json: what makes gemini talk only to the mock, offline, with no login.
write_settings() { # write_settings HOME [auth type, "" for none]
  mkdir -p "$1/.gemini" "$1/tmp"
  python3 - "$1/.gemini/settings.json" "${2-gemini-api-key}" <<'EOF'
import json, sys
s = {"general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False, "maxAttempts": 1},
     "privacy": {"usageStatisticsEnabled": False},
     "telemetry": {"enabled": False},
     "ide": {"enabled": False}}
if sys.argv[2]:
    s["security"] = {"auth": {"selectedType": sys.argv[2]}}
json.dump(s, open(sys.argv[1], "w"), indent=2)
EOF
}
write_settings "$WORK/home"

run_gemini() { # run_gemini OUT_PREFIX PROMPT args...   (GHOME, WRAP optional)
  local out="$1" prompt="$2"; shift 2
  local home="${GHOME:-$WORK/home}" t0 t1
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  printf '%s\n' "$prompt" | (cd "$REPO" && env \
    HOME="$home" \
    TMPDIR="$home/tmp" \
    GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$PORT" \
    GEMINI_API_KEY=dummy \
    timeout 120 ${WRAP:-} "$GEMINI_BIN" "$@") > "$out.json" 2> "$out.stderr"
  echo $? > "$out.rc"
  t1=$(date +%s.%N)
  echo "  [$(basename "$out")] rc=$(cat "$out.rc") in $(python3 -c "print(round($t1-$t0,2))")s: gemini $(short_args "$@")"
}

# ------------------------------------------------------------------ 1. writer
cat > "$WORK/writer.script.json" <<EOF
{
  "usage": {"input_tokens": 1000, "output_tokens": 100},
  "gemini": [
    {"text": "Creating hello.txt.", "function_call": {"name": "write_file", "args": {"file_path": "$REPO/hello.txt", "content": "hello from the mock writer\n"}}},
    {"function_call": {"name": "replace", "args": {"file_path": "$REPO/README.md", "old_string": "first line", "new_string": "first line, edited by the mock writer", "instruction": "touch up"}}},
    {"text": "Wrote hello.txt and edited README.md.", "usage": {"input_tokens": 1000, "output_tokens": 100, "cached_input_tokens": 400, "reasoning_output_tokens": 30}}
  ]
}
EOF
start_server "$WORK/writer.script.json" "$WORK/writer.log.jsonl"
run_gemini "$WORK/writer" "Create hello.txt and touch up README.md." \
  -p "$P_TEXT" --output-format json --skip-trust --approval-mode auto_edit -m gemini-2.5-pro
stop_server

check "writer exit code 0" test "$(cat "$WORK/writer.rc")" = 0
check "writer created hello.txt" grep -q "hello from the mock writer" "$REPO/hello.txt"
check "writer edited README.md" grep -q "edited by the mock writer" "$REPO/README.md"
check "writer JSON: response = the last turn's text; stats.models.<model>.tokens; tool stats" py '
import json,sys
r=json.load(open(sys.argv[1]))
assert r["response"]=="Wrote hello.txt and edited README.md.", r["response"]
assert "error" not in r, r
t=r["stats"]["models"]["gemini-2.5-pro"]["tokens"]
# 3 requests x (1000 in, 100 out), the last one also 400 cached and 30 thoughts
assert t["prompt"]==3000 and t["candidates"]==300 and t["cached"]==400 and t["thoughts"]==30, t
assert t["total"]==3330 and t["input"]==2600, t
assert r["stats"]["tools"]["byName"]["write_file"]["success"]==1
assert r["stats"]["tools"]["byName"]["replace"]["success"]==1
assert r["stats"]["files"]=={"totalLinesAdded": 2, "totalLinesRemoved": 1}, r["stats"]["files"]
' "$WORK/writer.json"
check "writer requests: model in the URL, stdin prompt then the -p text, edit tools offered, api key header" py '
import json,sys
rs=[json.loads(l) for l in open(sys.argv[1])]
assert [r["path"] for r in rs]==["/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"]*3, [r["path"] for r in rs]
b=rs[0]["body"]
user=b["contents"][0]["parts"]
assert user[0]["text"].startswith("<session_context>"), user[0]
assert user[-1]["text"]=="Create hello.txt and touch up README.md.\n\n\n"+sys.argv[2], user[-1]
names={f["name"] for t in b["tools"] for f in t["functionDeclarations"]}
assert {"write_file","replace","read_file"} <= names and "run_shell_command" not in names, names
assert b["systemInstruction"]["parts"][0]["text"].startswith("You are a non-interactive CLI agent")
h=rs[0]["headers"]
assert h["x-goog-api-key"]=="<redacted>" and h["user-agent"].startswith("GeminiCLI"), h
# the tool result comes back as a functionResponse
last=rs[1]["body"]["contents"][-1]["parts"][0]["functionResponse"]
assert last["name"]=="write_file" and "Successfully" in json.dumps(last["response"]), last
' "$WORK/writer.log.jsonl" "$P_TEXT"

# ------------------------------------------------------------------ 2. reviewer
git -C "$REPO" add -A
cat > "$WORK/reviewer.script.json" <<EOF
{
  "usage": {"input_tokens": 2000, "output_tokens": 200},
  "gemini": [
    {"function_call": {"name": "write_file", "args": {"file_path": "$REPO/evil.txt", "content": "x\n"}}},
    {"text": "\`\`\`json\n{\"findings\": [{\"id\": null, \"severity\": \"should\", \"title\": \"hello.txt is not referenced anywhere\", \"file\": \"hello.txt\", \"line\": 1, \"body\": \"Mention it in README.md or drop it.\", \"undoes\": null}], \"resolved\": []}\n\`\`\`"}
  ]
}
EOF
start_server "$WORK/reviewer.script.json" "$WORK/reviewer.log.jsonl"
run_gemini "$WORK/reviewer" "Review the staged changes and answer with findings JSON." \
  -p "$P_TEXT" --output-format json --skip-trust -m gemini-2.5-flash
stop_server

check "reviewer exit code 0" test "$(cat "$WORK/reviewer.rc")" = 0
check "reviewer wrote nothing (write_file is not offered without --approval-mode)" test ! -e "$REPO/evil.txt"
check "reviewer JSON: response holds the fenced findings; tokens summed over its 2 requests" py '
import json,sys
r=json.load(open(sys.argv[1]))
text=r["response"]
assert text.startswith("```json\n") and text.endswith("\n```"), text
f=json.loads(text[len("```json\n"):-len("\n```")])
assert f["findings"][0]["severity"]=="should" and f["resolved"]==[], f
assert r["stats"]["models"]["gemini-2.5-flash"]["tokens"]["total"]==4400, r["stats"]
assert r["stats"]["tools"]["byName"]["write_file"]["fail"]==1
' "$WORK/reviewer.json"
check "reviewer requests: no edit tools; the refused call came back as a functionResponse error" py '
import json,sys
rs=[json.loads(l) for l in open(sys.argv[1])]
names={f["name"] for t in rs[0]["body"]["tools"] for f in t["functionDeclarations"]}
assert not names & {"write_file","replace","run_shell_command"}, names
resp=rs[1]["body"]["contents"][-1]["parts"][0]["functionResponse"]["response"]
assert "Tool \"write_file\" not found" in resp["error"], resp
' "$WORK/reviewer.log.jsonl"

# ------------------------------------------------------------------ 3. fact: folder trust
start_server "$WORK/reviewer.script.json" "$WORK/trust.log.jsonl"
run_gemini "$WORK/trust" "Review." -p "$P_TEXT" --output-format json -m gemini-2.5-flash
stop_server
check "fact: without --skip-trust, exit 55, a plain-text message on stderr, nothing on stdout, no request" py '
import sys,os
assert open(sys.argv[1]).read().strip()=="55"
err=open(sys.argv[2]).read()
assert "Gemini CLI is not running in a trusted directory" in err and "--skip-trust" in err, err
assert os.path.getsize(sys.argv[3])==0
assert not os.path.exists(sys.argv[4]) or os.path.getsize(sys.argv[4])==0
' "$WORK/trust.rc" "$WORK/trust.stderr" "$WORK/trust.json" "$WORK/trust.log.jsonl"

# ------------------------------------------------------------------ 4. fact: auth type
write_settings "$WORK/home-noauth" ""
start_server "$WORK/reviewer.script.json" "$WORK/noauth.log.jsonl"
GHOME="$WORK/home-noauth" run_gemini "$WORK/noauth" "Review." -p "$P_TEXT" --output-format json --skip-trust -m gemini-2.5-flash
stop_server
check "fact: GOOGLE_GEMINI_BASE_URL without security.auth.selectedType: exit 41, \"Invalid auth method selected.\" as JSON on stderr" py '
import json,sys,os
assert open(sys.argv[1]).read().strip()=="41"
err=open(sys.argv[2]).read()
doc=json.loads(err[err.rindex("\n{")+1:] if "\n{" in err else err)
assert doc["error"]=={"type":"Error","message":"Invalid auth method selected.","code":41}, doc
assert os.path.getsize(sys.argv[3])==0
' "$WORK/noauth.rc" "$WORK/noauth.stderr" "$WORK/noauth.json"

# ------------------------------------------------------------------ 5. fact: no -m
cat > "$WORK/auto.script.json" <<'EOF'
{"usage": {"input_tokens": 1000, "output_tokens": 100}, "gemini": [{"text": "Hello."}]}
EOF
start_server "$WORK/auto.script.json" "$WORK/auto.log.jsonl"
run_gemini "$WORK/auto" "Say hello." -p "$P_TEXT" --output-format json --skip-trust
stop_server
check "fact: without -m, a classifier query (no tools, responseJsonSchema) on a flash-lite model routes the turn; stats lists both models" py '
import json,sys
rs=[json.loads(l) for l in open(sys.argv[1])]
paths=[r["path"] for r in rs]
assert len(paths)==2 and paths[0].endswith(":generateContent") and "flash-lite" in paths[0], paths
assert paths[1].endswith(":streamGenerateContent?alt=sse"), paths
gc=rs[0]["body"]["generationConfig"]
assert "complexity_score" in gc["responseJsonSchema"]["properties"] and "tools" not in rs[0]["body"]
assert rs[0]["reply"]["scripted"] is False
r=json.load(open(sys.argv[2]))
assert r["response"]=="Hello." and len(r["stats"]["models"])==2, r["stats"]["models"].keys()
print("    routed:", paths[0].split("/")[-1], "->", paths[1].split("/")[-1])
' "$WORK/auto.log.jsonl" "$WORK/auto.json"

# ------------------------------------------------------------------ 6. fact: API error
cat > "$WORK/error.script.json" <<'EOF'
{"gemini": [{"error": {"status": 400, "type": "INVALID_ARGUMENT", "message": "mock says no"}}]}
EOF
start_server "$WORK/error.script.json" "$WORK/error.log.jsonl"
run_gemini "$WORK/error" "Say hello." -p "$P_TEXT" --output-format json --skip-trust -m gemini-2.5-pro
stop_server
check "fact: a 400 exits 144 (400 % 256), stdout empty, the JSON error document ends stderr" py '
import json,sys,os
assert open(sys.argv[1]).read().strip()=="144"
assert os.path.getsize(sys.argv[3])==0
err=open(sys.argv[2]).read()
doc=json.loads(err[err.rindex("\n{")+1:])
assert doc["error"]["code"]==400 and json.loads(doc["error"]["message"])["error"]["message"]=="mock says no", doc
' "$WORK/error.rc" "$WORK/error.stderr" "$WORK/error.json"

# ------------------------------------------------------------------ 7. fact: only the mock
if command -v strace >/dev/null; then
  start_server "$WORK/auto.script.json" "$WORK/strace.log.jsonl"
  WRAP="strace -f -qq -e trace=connect -o $WORK/strace.txt" run_gemini "$WORK/strace" "Say hello." \
    -p "$P_TEXT" --output-format json --skip-trust -m gemini-2.5-pro
  stop_server
  check "fact: every inet connect() goes to the mock's port (no DNS, no telemetry)" py '
import re,sys
conns=re.findall(r"sin6?_port=htons\((\d+)\)", open(sys.argv[1]).read())
assert conns and set(conns)=={sys.argv[2]}, conns
' "$WORK/strace.txt" "$PORT"
else
  echo "  (strace not installed: step 7 skipped)"
fi

echo
echo "--- writer JSON:"; cat "$WORK/writer.json"; echo
echo "--- reviewer stderr:"; cat "$WORK/reviewer.stderr"
finish
