"""A scripted Anthropic Messages API on 127.0.0.1 for running the real claude CLI offline.

The real CLI (``claude_agent_sdk/_bundled/claude``) pointed at this server with
``ANTHROPIC_BASE_URL`` sends ``POST /v1/messages?beta=true``; the server answers from a script
and records every request. Wire format as the API documents it
(https://docs.anthropic.com/en/api/messages-streaming): with ``"stream": true`` a
``text/event-stream`` body, chunked, of ``message_start`` (with ``usage``), then per content block
``content_block_start`` / ``content_block_delta`` (``text_delta`` or ``input_json_delta``) /
``content_block_stop``, then ``message_delta`` (``stop_reason``, output ``usage``) and
``message_stop``; without it one JSON message. ``POST /v1/messages/count_tokens`` answers
``{"input_tokens": N}``. Errors are the API's error JSON (``{"type": "error", "error": {"type":
"overloaded_error", ...}}``) with the HTTP status (429, 500, 529 ...).

Scripts are keyed by agent and turn: :meth:`ScriptedAPI.script` gives an agent a list of turns,
each a list of replies, one reply per model request of that turn. A request belongs to an agent
when its system prompt names the agent (``You are Kit,`` - the Foreman's system prompts, see
:mod:`foreman.backends.prompts`); a request whose last message is a user prompt (not tool
results or system reminders) and is not a retry of the previous request starts the agent's next
turn. Requests
that name no agent (the CLI's own side requests) get a short text reply and are recorded too.

The server runs in a thread (``http.server``), so it answers while the test's event loop is busy.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import re
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .wire import (  # noqa: F401 - the tests' vocabulary, re-exported
    DEFAULT_USAGE,
    Recorded,
    Reply,
    ReplyLike,
    is_prompt,
    describe,
    error,
    foreman,
    result_text,
    text,
    tool,
)

# ---------------------------------------------------------------------- the server
def title_matcher(names: list[str]) -> Callable[[Recorded], str | None]:
    """Attribute a request to the agent whose title starts the system prompt's ``You are <Title>,``."""
    patterns = {name: re.compile(rf"\bYou are {re.escape(name.title())}\b") for name in names}

    def agent_of(request: Recorded) -> str | None:
        system = request.system_text
        for name, pattern in patterns.items():
            if pattern.search(system):
                return name
        return None

    return agent_of


class ScriptedAPI:
    """The scripted API server; see the module docstring.

    Args:
        agent_of: attributes a request to an agent (default: the Foreman's system prompts of the
            agents scripted so far, by title).
        side_reply: the reply to requests no agent is attributed to.
    """

    def __init__(self, *, agent_of: Callable[[Recorded], str | None] | None = None,
                 side_reply: ReplyLike | None = None) -> None:
        self._agent_of = agent_of
        self.side_reply = side_reply or text("ok")
        self.scripts: dict[str, list[list[ReplyLike]]] = {}
        self.requests: list[Recorded] = []
        self.unscripted: list[Recorded] = []
        self.problems: list[str] = []
        self._cursor: dict[str, tuple[int, int]] = {}
        self._last_fingerprint: dict[str, str] = {}
        self._lock = threading.RLock()
        self._server: http.server.ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.changed = threading.Condition(self._lock)

    # -------------------------------------------------------------- scripting
    def script(self, agent: str, *turns: list[ReplyLike]) -> None:
        """Give ``agent`` its turns (appended to what it has); each turn is one reply per request."""
        with self._lock:
            self.scripts.setdefault(agent, []).extend(list(t) for t in turns)

    def agent_of(self, request: Recorded) -> str | None:
        """The agent a request belongs to (None: a side request)."""
        if self._agent_of is not None:
            return self._agent_of(request)
        return title_matcher(list(self.scripts))(request)

    # -------------------------------------------------------------- queries
    def of(self, agent: str, turn: int | None = None) -> list[Recorded]:
        """The model requests attributed to ``agent`` (in ``turn`` if given), in arrival order."""
        with self._lock:
            return [r for r in self.requests if r.is_messages and r.agent == agent and (turn is None or r.turn == turn)]

    def turns_done(self, agent: str) -> int:
        """How many of ``agent``'s turns have started."""
        with self._lock:
            return self._cursor.get(agent, (-1, 0))[0] + 1

    def wait(self, pred: Callable[[], Any], timeout: float = 30.0, what: str = "condition") -> Any:
        """Block (a thread; use ``asyncio.to_thread``) until ``pred()`` is truthy; raise AssertionError on timeout."""
        end = time.monotonic() + timeout
        with self.changed:
            while True:
                value = pred()
                if value:
                    return value
                left = end - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{what} not reached in {timeout} s")
                self.changed.wait(min(left, 0.2))

    # -------------------------------------------------------------- lifecycle
    @property
    def url(self) -> str:
        """The base URL for ``ANTHROPIC_BASE_URL``."""
        assert self._server is not None, "not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> ScriptedAPI:
        """Listen on an ephemeral port of 127.0.0.1 and answer in a background thread."""
        api = self

        class Handler(_Handler):
            server_api = api

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="scripted-api", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening (open streams end with their thread)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    # -------------------------------------------------------------- answering
    def _next_reply(self, request: Recorded) -> ReplyLike:
        agent = self.agent_of(request)
        request.agent = agent
        if agent is None:
            return self.side_reply
        messages = request.messages
        fingerprint = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()
        retry = self._last_fingerprint.get(agent) == fingerprint
        self._last_fingerprint[agent] = fingerprint
        last = next((m for m in reversed(messages) if m.get("role") in ("user", "assistant")), {})
        turn, step = self._cursor.get(agent, (-1, 0))
        if is_prompt(last) and not retry:
            turn, step = turn + 1, 0
        self._cursor[agent] = (turn, step + 1)
        request.turn, request.step = turn, step
        turns = self.scripts.get(agent, [])
        if turn < 0 or turn >= len(turns) or step >= len(turns[turn]):
            self.unscripted.append(request)
            self.problems.append(f"{agent}: no reply scripted for turn {turn} step {step}")
            return text(f"(no reply scripted for {agent} turn {turn} step {step})")
        return turns[turn][step]

    def answer(self, request: Recorded) -> Reply:
        """Record ``request`` and pick its reply (thread-safe)."""
        with self.changed:
            request.t = time.time()
            self.requests.append(request)
            reply = self._next_reply(request)
            self.changed.notify_all()
        if callable(reply):
            reply = reply(request)
        request.reply = describe(reply)
        return reply


def _estimate_tokens(body: bytes) -> int:
    return max(1, len(body) // 4)


class _Handler(http.server.BaseHTTPRequestHandler):
    """HTTP/1.1 with keep-alive, as the CLI's fetch expects."""

    protocol_version = "HTTP/1.1"
    server_api: ScriptedAPI

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        pass

    def _read_body(self) -> bytes:
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def _json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", f"req_scripted_{uuid.uuid4().hex[:12]}")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        self._record(b"")
        self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})

    def do_HEAD(self) -> None:  # noqa: N802
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def _record(self, raw: bytes) -> Recorded:
        parts = urlsplit(self.path)
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        return Recorded(self.command, parts.path, parse_qs(parts.query),
                        {k.lower(): v for k, v in self.headers.items()}, body if isinstance(body, dict) else {})

    def do_POST(self) -> None:  # noqa: N802
        raw = self._read_body()
        request = self._record(raw)
        api = self.server_api
        if request.path == "/v1/messages/count_tokens":
            with api.changed:
                request.t = time.time()
                api.requests.append(request)
                api.changed.notify_all()
            self._json(200, {"input_tokens": _estimate_tokens(raw)})
            return
        if request.path != "/v1/messages":
            with api.changed:
                api.requests.append(request)
            self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": request.path}})
            return
        reply = api.answer(request)
        model = str(request.body.get("model") or "claude-sonnet-4-5")
        input_tokens = reply.input_tokens if reply.input_tokens is not None else _estimate_tokens(raw)
        output_tokens = reply.output_tokens if reply.output_tokens is not None else max(
            1, len(json.dumps(reply.content)) // 4)
        if reply.status != 200:
            message = reply.content[0]["text"] if reply.content else reply.error_type
            self._json(reply.status, {"type": "error", "error": {"type": reply.error_type, "message": message}},
                       reply.headers)
            return
        blocks = [dict(b) for b in reply.content]
        stop = reply.stop_reason or ("tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn")
        usage = {**DEFAULT_USAGE, "input_tokens": input_tokens, "cache_read_input_tokens": reply.cache_read,
                 "cache_creation_input_tokens": reply.cache_write}
        message = {"id": f"msg_scripted_{uuid.uuid4().hex[:16]}", "type": "message", "role": "assistant",
                   "model": model, "content": blocks, "stop_reason": stop, "stop_sequence": None,
                   "usage": {**usage, "output_tokens": output_tokens}}
        if not request.body.get("stream"):
            self._json(200, message, reply.headers)
            return
        try:
            self._stream(message, reply, usage, output_tokens)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the CLI went away mid-stream (an abort)

    def _stream(self, message: dict[str, Any], reply: Reply, usage: dict[str, Any], output_tokens: int) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", f"req_scripted_{uuid.uuid4().hex[:12]}")
        for key, value in reply.headers.items():
            self.send_header(key, value)
        self.end_headers()

        def event(kind: str, data: dict[str, Any]) -> None:
            chunk = f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()
            self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self.wfile.flush()
            if reply.delay:
                time.sleep(reply.delay)

        start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
        event("message_start", {"type": "message_start", "message": start})
        if reply.hold:
            time.sleep(reply.hold)
        if reply.mid_stream_error:
            event("error", {"type": "error", "error": {"type": reply.mid_stream_error, "message": "Overloaded"}})
        else:
            event("ping", {"type": "ping"})
            for index, block in enumerate(message["content"]):
                if block["type"] == "text":
                    event("content_block_start", {"type": "content_block_start", "index": index,
                                                  "content_block": {"type": "text", "text": ""}})
                    words = block["text"]
                    size = max(40, len(words) // 64)  # many small deltas; a few large ones for a huge text
                    for piece in [words[i:i + size] for i in range(0, len(words), size)] or [""]:
                        event("content_block_delta", {"type": "content_block_delta", "index": index,
                                                      "delta": {"type": "text_delta", "text": piece}})
                else:
                    event("content_block_start", {"type": "content_block_start", "index": index,
                                                  "content_block": {"type": "tool_use", "id": block["id"],
                                                                    "name": block["name"], "input": {}}})
                    encoded = json.dumps(block["input"])
                    for piece in [encoded[i:i + 64] for i in range(0, len(encoded), 64)]:
                        event("content_block_delta", {"type": "content_block_delta", "index": index,
                                                      "delta": {"type": "input_json_delta", "partial_json": piece}})
                event("content_block_stop", {"type": "content_block_stop", "index": index})
            event("message_delta", {"type": "message_delta",
                                    "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                                    "usage": {"output_tokens": output_tokens}})
            event("message_stop", {"type": "message_stop"})
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
