#!/usr/bin/env python3
"""Scripted loopback model server for driving the real `claude`, `codex` and `gemini` CLIs in tests.

Stdlib only (http.server, json, threading). Serves:

  * Anthropic Messages API as Claude Code uses it
      POST /v1/messages               (stream true -> SSE, false -> one JSON message)
      POST /v1/messages/count_tokens  -> {"input_tokens": N}
      GET  /v1/models                 -> a one-model list
  * OpenAI Responses API as Codex uses it
      POST /v1/responses              (SSE: response.created ... response.completed)
      GET  /v1/models                 -> OpenAI-style list (with ?client_version: Codex style)
  * Gemini API (generativelanguage v1beta) as the Gemini CLI uses it
      POST /v1beta/models/<model>:streamGenerateContent?alt=sse   (SSE: GenerateContentResponse chunks)
      POST /v1beta/models/<model>:generateContent                 (one GenerateContentResponse)
      POST /v1beta/models/<model>:countTokens                     -> {"totalTokens": N}
      GET  /v1beta/models                                         -> a one-model list
  * HEAD/GET anything else            -> 200 {} (logged), POST anything else -> 404 (logged)

Usage:
  python3 model_server.py --port 0 --script SCRIPT.json --log LOG.jsonl

The first stdout line is `PORT <n>` (flushed). The server runs until SIGTERM/SIGINT.

SCRIPT.json (every key optional):
  {
    "anthropic": [REPLY, ...],     # queue for POST /v1/messages
    "openai":    [REPLY, ...],     # queue for POST /v1/responses
    "gemini":    [REPLY, ...],     # queue for POST /v1beta/models/*:(stream)generateContent
    "default_text": "...",          # final text once a queue is empty (default "OK, done.")
    "usage": {"input_tokens": 100, "output_tokens": 20}   # default usage for every reply
  }

REPLY (a queue item; the first item whose `match` fits the request is used and removed):
  {"text": "final answer"}                                  # plain final text
  {"tool_use": {"name": "Write", "input": {...}}}           # Anthropic: one tool_use block
  {"tool_use": [{...}, {...}]}                              # Anthropic: several tool_use blocks
  {"structured_output": {...}}                              # Anthropic: shorthand for a
                                                            #   StructuredOutput tool_use (--json-schema)
  {"function_call": {"name": "exec_command", "arguments": {...}}}   # OpenAI function_call item
  {"custom_tool_call": {"name": "apply_patch", "input": "*** Begin Patch ..."}}  # OpenAI freeform tool
  {"apply_patch": "*** Begin Patch ..."}                    # OpenAI: shorthand for the above
  {"shell": "echo hi > f.txt"}                              # OpenAI: shorthand for exec_command {"cmd": ...}
  {"exec_js": "await tools.apply_patch(\"...\")"}          # OpenAI: code-mode `exec` custom tool call
                                                            #   (the tool shape codex's default model uses)
  {"function_call": {"name": "write_file", "args": {...}}}  # Gemini: one functionCall part (or a list);
                                                            #   "arguments" is accepted for "args"
  optional on any reply:
    "text" together with a tool call -> text block/message is emitted before the call
    "usage": {"input_tokens": N, "output_tokens": M, "cache_read_input_tokens": K, ...}
    "match": "substring"      only requests whose raw body contains it may take this reply
    "error": {"status": 529, "type": "overloaded_error", "message": "..."}  # answer an HTTP error
    "delay": 1.5              seconds to sleep before answering
    "repeat": true            do not remove the reply from the queue once used

Requests that are not agent turns (Claude Code's side queries that offer no tools, e.g. a
title/topic query; the Gemini CLI's model-routing classifier and other side queries, which offer
no `tools`) never consume the queue unless a reply's `match` asks for them; they get the
default text, or, for a Gemini request that asks for JSON (`responseJsonSchema`), the smallest
object that fits the schema.

LOG.jsonl: one JSON object per request: {"seq", "ts", "method", "path", "headers", "body",
"reply"}. `body` is the parsed JSON request (or {"_raw": text}); `reply` says what was served.
"""

import argparse
import gzip
import json
import os
import sys
import threading
import time
import uuid
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REDACT_HEADERS = {"authorization", "x-api-key", "x-goog-api-key", "cookie"}


class State:
    def __init__(self, script, log_path):
        self.lock = threading.Lock()
        self.script = script
        self.queues = {
            "anthropic": list(script.get("anthropic", [])),
            "openai": list(script.get("openai", [])),
            "gemini": list(script.get("gemini", [])),
        }
        self.default_text = script.get("default_text", "OK, done.")
        self.default_usage = script.get("usage", {})
        self.log_path = log_path
        self.seq = 0
        self.counter = 0

    def next_id(self):
        with self.lock:
            self.counter += 1
            return self.counter

    def take(self, api, raw_body, is_agent_turn):
        """Pick the first reply whose match fits; None when nothing fits."""
        with self.lock:
            q = self.queues[api]
            for i, reply in enumerate(q):
                m = reply.get("match")
                if m is not None:
                    if m not in raw_body:
                        continue
                elif not is_agent_turn:
                    continue
                if not reply.get("repeat"):
                    q.pop(i)
                return reply, i
            return None, None

    def log(self, record):
        with self.lock:
            self.seq += 1
            record = dict(record, seq=self.seq, ts=round(time.time(), 3))
            if self.log_path:
                with open(self.log_path, "a", encoding="utf-8") as f:
                    f.write(json.dumps(record, ensure_ascii=False) + "\n")


STATE = None


def est_tokens(raw):
    return max(1, len(raw) // 4)


def sse(event, data):
    return ("event: %s\ndata: %s\n\n" % (event, json.dumps(data, separators=(",", ":")))).encode()


# ---------------------------------------------------------------- Anthropic


def anthropic_usage(reply, raw_body):
    u = {
        "input_tokens": est_tokens(raw_body),
        "output_tokens": 20,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    u.update(STATE.default_usage)
    u.update(reply.get("usage", {}))
    return u


def anthropic_blocks(reply):
    blocks = []
    if reply.get("text") is not None:
        blocks.append({"type": "text", "text": reply["text"]})
    tus = reply.get("tool_use")
    if tus is not None:
        if isinstance(tus, dict):
            tus = [tus]
        for tu in tus:
            blocks.append({
                "type": "tool_use",
                "id": tu.get("id") or "toolu_mock%04d" % STATE.next_id(),
                "name": tu["name"],
                "input": tu.get("input", {}),
            })
    if "structured_output" in reply:
        blocks.append({
            "type": "tool_use",
            "id": "toolu_mock%04d" % STATE.next_id(),
            "name": reply.get("structured_tool", "StructuredOutput"),
            "input": reply["structured_output"],
        })
    if not blocks:
        blocks.append({"type": "text", "text": STATE.default_text})
    return blocks


def anthropic_message(reply, req, raw_body):
    blocks = anthropic_blocks(reply)
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    return {
        "id": "msg_mock%04d" % STATE.next_id(),
        "type": "message",
        "role": "assistant",
        "model": req.get("model", "mock-model"),
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": anthropic_usage(reply, raw_body),
    }


def anthropic_sse(msg):
    out = []
    start = dict(msg, content=[], stop_reason=None)
    start["usage"] = dict(msg["usage"], output_tokens=1)
    out.append(sse("message_start", {"type": "message_start", "message": start}))
    for i, b in enumerate(msg["content"]):
        if b["type"] == "text":
            out.append(sse("content_block_start", {"type": "content_block_start", "index": i,
                                                   "content_block": {"type": "text", "text": ""}}))
            text = b["text"]
            step = max(1, len(text) // 3 + 1)
            for j in range(0, len(text), step):
                out.append(sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                       "delta": {"type": "text_delta", "text": text[j:j + step]}}))
        else:
            out.append(sse("content_block_start", {"type": "content_block_start", "index": i,
                                                   "content_block": {"type": "tool_use", "id": b["id"],
                                                                     "name": b["name"], "input": {}}}))
            js = json.dumps(b["input"])
            step = max(1, len(js) // 2 + 1)
            for j in range(0, len(js), step):
                out.append(sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                       "delta": {"type": "input_json_delta",
                                                                 "partial_json": js[j:j + step]}}))
        out.append(sse("content_block_stop", {"type": "content_block_stop", "index": i}))
    out.append(sse("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
                                     "usage": msg["usage"]}))
    out.append(sse("message_stop", {"type": "message_stop"}))
    return b"".join(out)


# ---------------------------------------------------------------- OpenAI Responses


def openai_usage(reply, raw_body):
    u = {"input_tokens": est_tokens(raw_body), "output_tokens": 20}
    u.update(STATE.default_usage)
    u.update(reply.get("usage", {}))
    cached = u.pop("cached_input_tokens", u.pop("cache_read_input_tokens", 0))
    reasoning = u.pop("reasoning_output_tokens", 0)
    u.pop("cache_creation_input_tokens", None)
    return {
        "input_tokens": u["input_tokens"],
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": u["output_tokens"],
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": u["input_tokens"] + u["output_tokens"],
    }


def openai_items(reply):
    items = []
    if reply.get("text") is not None:
        items.append({"type": "message", "id": "msg_mock%04d" % STATE.next_id(), "role": "assistant",
                      "status": "completed",
                      "content": [{"type": "output_text", "text": reply["text"], "annotations": []}]})
    calls = []
    fc = reply.get("function_call")
    if fc is not None:
        for c in (fc if isinstance(fc, list) else [fc]):
            args = c.get("arguments", {})
            calls.append({"type": "function_call", "name": c["name"],
                          "arguments": args if isinstance(args, str) else json.dumps(args)})
    if "shell" in reply:
        calls.append({"type": "function_call", "name": "exec_command",
                      "arguments": json.dumps({"cmd": reply["shell"]})})
    ctc = reply.get("custom_tool_call")
    if ctc is not None:
        for c in (ctc if isinstance(ctc, list) else [ctc]):
            calls.append({"type": "custom_tool_call", "name": c["name"], "input": c["input"]})
    if "apply_patch" in reply:
        calls.append({"type": "custom_tool_call", "name": "apply_patch", "input": reply["apply_patch"]})
    if "exec_js" in reply:
        calls.append({"type": "custom_tool_call", "name": "exec", "input": reply["exec_js"]})
    for c in calls:
        n = STATE.next_id()
        c["id"] = ("fc_mock%04d" if c["type"] == "function_call" else "ctc_mock%04d") % n
        c["call_id"] = "call_mock%04d" % n
        c["status"] = "completed"
        items.append(c)
    if not items:
        items.append({"type": "message", "id": "msg_mock%04d" % STATE.next_id(), "role": "assistant",
                      "status": "completed",
                      "content": [{"type": "output_text", "text": STATE.default_text, "annotations": []}]})
    return items


def openai_sse(reply, req, raw_body):
    rid = "resp_mock%04d" % STATE.next_id()
    base = {"id": rid, "object": "response", "created_at": int(time.time()),
            "model": req.get("model", "mock-model")}
    items = openai_items(reply)
    out = [sse("response.created", {"type": "response.created",
                                    "response": dict(base, status="in_progress", output=[])})]
    for idx, item in enumerate(items):
        if item["type"] == "message":
            text = item["content"][0]["text"]
            added = dict(item, status="in_progress", content=[])
            out.append(sse("response.output_item.added", {"type": "response.output_item.added",
                                                          "output_index": idx, "item": added}))
            out.append(sse("response.content_part.added", {"type": "response.content_part.added",
                                                           "item_id": item["id"], "output_index": idx,
                                                           "content_index": 0,
                                                           "part": {"type": "output_text", "text": "",
                                                                    "annotations": []}}))
            step = max(1, len(text) // 3 + 1)
            for j in range(0, len(text), step):
                out.append(sse("response.output_text.delta", {"type": "response.output_text.delta",
                                                              "item_id": item["id"], "output_index": idx,
                                                              "content_index": 0, "delta": text[j:j + step]}))
            out.append(sse("response.output_text.done", {"type": "response.output_text.done",
                                                         "item_id": item["id"], "output_index": idx,
                                                         "content_index": 0, "text": text}))
            out.append(sse("response.content_part.done", {"type": "response.content_part.done",
                                                          "item_id": item["id"], "output_index": idx,
                                                          "content_index": 0, "part": item["content"][0]}))
        else:
            added = dict(item, status="in_progress")
            out.append(sse("response.output_item.added", {"type": "response.output_item.added",
                                                          "output_index": idx, "item": added}))
        out.append(sse("response.output_item.done", {"type": "response.output_item.done",
                                                     "output_index": idx, "item": item}))
    done = dict(base, status="completed", output=items, usage=openai_usage(reply, raw_body))
    out.append(sse("response.completed", {"type": "response.completed", "response": done}))
    return b"".join(out), items


# ---------------------------------------------------------------- Gemini (generativelanguage v1beta)


def gemini_usage(reply, raw_body):
    u = {"input_tokens": est_tokens(raw_body), "output_tokens": 20}
    u.update(STATE.default_usage)
    u.update(reply.get("usage", {}))
    cached = u.get("cached_input_tokens", u.get("cache_read_input_tokens", 0))
    thoughts = u.get("reasoning_output_tokens", 0)
    meta = {
        "promptTokenCount": u["input_tokens"],
        "candidatesTokenCount": u["output_tokens"],
        "totalTokenCount": u["input_tokens"] + u["output_tokens"] + thoughts,
    }
    if cached:
        meta["cachedContentTokenCount"] = cached
    if thoughts:
        meta["thoughtsTokenCount"] = thoughts
    return meta


def schema_example(schema):
    """The smallest value that fits a (Gemini or JSON) schema: for side queries asking for JSON."""
    if not isinstance(schema, dict):
        return None
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    t = str(schema.get("type", "object")).lower()
    if isinstance(schema.get("type"), list):
        t = str(schema["type"][0]).lower()
    if t == "object":
        props = schema.get("properties", {})
        return {k: schema_example(v) for k, v in props.items()}
    if t == "array":
        return []
    if t == "integer":
        return max(1, int(schema.get("minimum", 1)))
    if t == "number":
        return 1
    if t == "boolean":
        return False
    if t == "null":
        return None
    return "mock"


def gemini_parts(reply, req):
    parts = []
    if reply.get("text") is not None:
        parts.append({"text": reply["text"]})
    fcs = reply.get("function_call")
    if fcs is not None:
        for fc in (fcs if isinstance(fcs, list) else [fcs]):
            args = fc.get("args", fc.get("arguments", {}))
            if isinstance(args, str):
                args = json.loads(args)
            call = {"name": fc["name"], "args": args}
            if fc.get("id"):
                call["id"] = fc["id"]
            parts.append({"functionCall": call})
    if not parts:
        gc = req.get("generationConfig") or {}
        schema = gc.get("responseJsonSchema") or gc.get("responseSchema")
        if schema is not None and not req.get("tools"):
            parts.append({"text": json.dumps(schema_example(schema))})
        else:
            parts.append({"text": STATE.default_text})
    return parts


def gemini_response(parts, model, usage, final=True, rid=None):
    cand = {"content": {"role": "model", "parts": parts}, "index": 0}
    if final:
        cand["finishReason"] = "STOP"
    out = {"candidates": [cand], "modelVersion": model,
           "responseId": rid or "mockresp%04d" % STATE.next_id()}
    if usage is not None:
        out["usageMetadata"] = usage
    return out


def gemini_sse(parts, model, usage):
    """Text streamed in a few chunks, function calls whole, finishReason + usage on the last chunk."""
    chunks = []
    for p in parts:
        if "text" in p:
            text = p["text"]
            step = max(1, len(text) // 3 + 1)
            for j in range(0, len(text), step):
                chunks.append([{"text": text[j:j + step]}])
        else:
            chunks.append([p])
    out = []
    rid = "mockresp%04d" % STATE.next_id()
    for i, c in enumerate(chunks):
        last = i == len(chunks) - 1
        body = gemini_response(c, model, usage if last else None, final=last, rid=rid)
        out.append(("data: %s\r\n\r\n" % json.dumps(body, separators=(",", ":"))).encode())
    return b"".join(out)


# ---------------------------------------------------------------- HTTP


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mock-model-server/1"

    def log_message(self, fmt, *args):  # keep stderr quiet
        pass

    def _read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            data = self.rfile.read(n)
        elif (self.headers.get("Transfer-Encoding") or "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    break
                data += self.rfile.read(size)
                self.rfile.readline()
        else:
            data = b""
        enc = (self.headers.get("Content-Encoding") or "").lower()
        try:
            if enc == "gzip":
                data = gzip.decompress(data)
            elif enc == "deflate":
                data = zlib.decompress(data)
        except Exception:
            pass
        return data

    def _send(self, status, body, ctype="application/json", extra=None):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
            self.wfile.flush()

    def _record(self, body, reply):
        headers = {k.lower(): ("<redacted>" if k.lower() in REDACT_HEADERS else v)
                   for k, v in self.headers.items()}
        STATE.log({"method": self.command, "path": self.path, "headers": headers,
                   "body": body, "reply": reply})

    def _parse(self, raw):
        text = raw.decode("utf-8", "replace")
        if not text:
            return text, None
        try:
            return text, json.loads(text)
        except ValueError:
            return text, {"_raw": text[:20000]}

    # ---- verbs

    def do_HEAD(self):
        self._record(None, {"status": 200})
        self._send(200, b"")

    def do_GET(self):
        path = self.path.split("?")[0]
        goog = "x-goog-api-key" in {k.lower() for k in self.headers.keys()}
        if path.startswith("/v1beta/models") or (path.endswith("/models") and goog):
            body = {"models": [{"name": "models/gemini-mock", "displayName": "Mock", "version": "1",
                                "inputTokenLimit": 1048576, "outputTokenLimit": 65536,
                                "supportedGenerationMethods": ["generateContent", "countTokens"]}]}
            self._record(None, {"status": 200, "json": body})
            self._send(200, body)
            return
        if path.endswith("/models"):
            if "anthropic-version" in {k.lower() for k in self.headers.keys()}:
                body = {"data": [{"type": "model", "id": "claude-mock", "display_name": "Mock",
                                  "created_at": "2025-01-01T00:00:00Z"}],
                        "has_more": False, "first_id": "claude-mock", "last_id": "claude-mock"}
            else:
                body = {"object": "list", "data": [{"id": "gpt-mock", "object": "model",
                                                    "created": 0, "owned_by": "mock"}]}
                if "client_version" in self.path:
                    body = {"models": []}
            self._record(None, {"status": 200, "json": body})
            self._send(200, body)
            return
        self._record(None, {"status": 200, "json": {}})
        self._send(200, {})

    def do_POST(self):
        raw = self._read_body()
        text, req = self._parse(raw)
        path = self.path.split("?")[0]
        if path.endswith("/messages/count_tokens"):
            body = {"input_tokens": est_tokens(text)}
            self._record(req, {"status": 200, "json": body})
            self._send(200, body)
        elif path.endswith("/messages"):
            self._anthropic(req or {}, text)
        elif path.endswith("/responses"):
            self._openai(req or {}, text)
        elif "/models/" in path and path.endswith(":countTokens"):
            body = {"totalTokens": est_tokens(text)}
            self._record(req, {"status": 200, "json": body})
            self._send(200, body)
        elif "/models/" in path and (path.endswith(":generateContent")
                                     or path.endswith(":streamGenerateContent")):
            model = path.rsplit("/models/", 1)[1].split(":")[0]
            self._gemini(req or {}, text, model, path.endswith(":streamGenerateContent"))
        else:
            self._record(req, {"status": 404})
            self._send(404, {"error": {"type": "not_found_error", "message": "mock: no route " + path}})

    def _error(self, api, reply):
        err = reply["error"]
        status = int(err.get("status", 500))
        if api == "anthropic":
            body = {"type": "error", "error": {"type": err.get("type", "api_error"),
                                               "message": err.get("message", "mock error")}}
        elif api == "gemini":
            body = {"error": {"code": status, "message": err.get("message", "mock error"),
                              "status": err.get("type", "INTERNAL")}}
        else:
            body = {"error": {"type": err.get("type", "server_error"), "code": err.get("code"),
                              "message": err.get("message", "mock error")}}
        return status, body

    def _anthropic(self, req, raw_text):
        agent_turn = bool(req.get("tools"))
        reply, idx = STATE.take("anthropic", raw_text, agent_turn)
        scripted = reply is not None
        reply = reply or {}
        if reply.get("delay"):
            time.sleep(float(reply["delay"]))
        if "error" in reply:
            status, body = self._error("anthropic", reply)
            self._record(req, {"scripted": scripted, "queue_index": idx, "status": status, "json": body})
            self._send(status, body)
            return
        msg = anthropic_message(reply, req, raw_text)
        self._record(req, {"scripted": scripted, "queue_index": idx, "status": 200,
                           "stream": bool(req.get("stream")), "message": msg})
        if req.get("stream"):
            self._send(200, anthropic_sse(msg), "text/event-stream", {"Cache-Control": "no-cache"})
        else:
            self._send(200, msg)

    def _openai(self, req, raw_text):
        reply, idx = STATE.take("openai", raw_text, True)
        scripted = reply is not None
        reply = reply or {}
        if reply.get("delay"):
            time.sleep(float(reply["delay"]))
        if "error" in reply:
            status, body = self._error("openai", reply)
            self._record(req, {"scripted": scripted, "queue_index": idx, "status": status, "json": body})
            self._send(status, body)
            return
        body, items = openai_sse(reply, req, raw_text)
        self._record(req, {"scripted": scripted, "queue_index": idx, "status": 200, "items": items})
        self._send(200, body, "text/event-stream", {"Cache-Control": "no-cache"})

    def _gemini(self, req, raw_text, model, stream):
        agent_turn = bool(req.get("tools"))
        reply, idx = STATE.take("gemini", raw_text, agent_turn)
        scripted = reply is not None
        reply = reply or {}
        if reply.get("delay"):
            time.sleep(float(reply["delay"]))
        if "error" in reply:
            status, body = self._error("gemini", reply)
            self._record(req, {"scripted": scripted, "queue_index": idx, "status": status, "json": body})
            self._send(status, body)
            return
        parts = gemini_parts(reply, req)
        usage = gemini_usage(reply, raw_text)
        self._record(req, {"scripted": scripted, "queue_index": idx, "status": 200, "stream": stream,
                           "model": model, "parts": parts, "usageMetadata": usage})
        if stream:
            self._send(200, gemini_sse(parts, model, usage), "text/event-stream",
                       {"Cache-Control": "no-cache"})
        else:
            self._send(200, gemini_response(parts, model, usage))


def main():
    global STATE
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--script", help="SCRIPT.json with reply queues")
    ap.add_argument("--log", help="append one JSON line per request here")
    args = ap.parse_args()
    script = {}
    if args.script:
        with open(args.script, encoding="utf-8") as f:
            script = json.load(f)
    STATE = State(script, args.log)
    srv = ThreadingHTTPServer((args.host, args.port), Handler)
    srv.daemon_threads = True
    print("PORT %d" % srv.server_address[1], flush=True)
    try:
        srv.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        srv.server_close()


if __name__ == "__main__":
    import signal
    signal.signal(signal.SIGTERM, lambda *a: (_ for _ in ()).throw(KeyboardInterrupt()))
    main()
