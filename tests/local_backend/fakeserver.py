"""A scripted OpenAI-compatible HTTP server: the test double at the model edge.

Real HTTP on ``127.0.0.1:0`` (``http.server`` in a thread) speaking the wire format the
``openai`` client reads: ``GET /v1/models``, ``POST /v1/chat/completions`` with or without
``stream`` (SSE ``data: {...}`` chunks, tool-call deltas split into name and argument pieces,
a usage chunk, ``data: [DONE]``), and JSON error bodies with a status code.

A *responder* ``(request_json) -> Reply`` decides each reply, so a test can script by agent
and step, or change the world between two replies (the stale-edit test edits a file there).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


@dataclass
class Reply:
    """One scripted reply: text content, tool calls (name, arguments JSON text), or an error."""

    text: str = ""
    tool_calls: list[tuple[str, str]] = field(default_factory=list)
    finish_reason: str | None = None
    status: int = 200
    error: str = ""
    piece: int = 7
    deltas: list[dict[str, Any]] | None = None
    """Quirks: stream these deltas verbatim (instead of ``text``/``tool_calls``)."""
    error_in_body: str = ""
    """Quirks: HTTP 200 whose body (or first stream event) is this error object's message."""


def text(body: str, **kw: Any) -> Reply:
    return Reply(text=body, **kw)


def calls(*pairs: tuple[str, dict[str, Any] | str], **kw: Any) -> Reply:
    return Reply(tool_calls=[(n, a if isinstance(a, str) else json.dumps(a)) for n, a in pairs], **kw)


def error(status: int, message: str) -> Reply:
    return Reply(status=status, error=message)


Responder = Callable[[dict[str, Any]], Reply]


class FakeOpenAI:
    """The server. Use as a context manager; ``url`` is the base URL (ends in /v1).

    Args:
        responder: picks the reply to each chat request.
        models: the ids ``/v1/models`` lists.
    """

    def __init__(self, responder: Responder, models: tuple[str, ...] = ("fake-coder",), *,
                 reject_stream_options: bool = False, preflight: Reply | None = None) -> None:
        self.responder = responder
        self.models = models
        self.reject_stream_options = reject_stream_options
        self.preflight_reply = preflight
        self.requests: list[dict[str, Any]] = []
        self.streamed_chunks = 0
        self.usage_sent: list[tuple[dict[str, Any], dict[str, int]]] = []
        """(request, usage chunk) of every streamed reply that reported usage."""
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                return

            def _json(self, status: int, obj: Any) -> None:
                body = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                if self.path.rstrip("/") == "/v1/models":
                    self._json(200, {"object": "list", "data": [
                        {"id": m, "object": "model", "created": 0, "owned_by": "test"} for m in outer.models]})
                else:
                    self._json(404, {"error": {"message": "not found", "type": "not_found_error"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                req = json.loads(self.rfile.read(length) or b"{}")
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._json(404, {"error": {"message": "not found"}})
                    return
                if req.get("model") not in outer.models:
                    self._json(404, {"error": {"message": f"model {req.get('model')} not found",
                                               "type": "not_found_error"}})
                    return
                if outer.reject_stream_options and "stream_options" in req:
                    self._json(400, {"error": {"code": 400, "type": "invalid_request_error",
                                               "message": "Unrecognized request argument supplied: stream_options"}})
                    return
                if req.get("max_tokens") == 1 and req["messages"][-1].get("content") == "Say OK.":
                    reply = outer.preflight_reply or Reply(text="OK", finish_reason="length")
                else:
                    outer.requests.append(req)
                    reply = outer.responder(req)
                if reply.status != 200:
                    self._json(reply.status, {"error": {"code": reply.status, "message": reply.error,
                                                        "type": "server_error"}})
                    return
                if reply.error_in_body and not req.get("stream"):
                    self._json(200, {"error": {"message": reply.error_in_body, "type": "upstream_error"}})
                    return
                if req.get("stream"):
                    self._stream(req, reply)
                else:
                    self._whole(req, reply)

            def _whole(self, req: dict[str, Any], reply: Reply) -> None:
                message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
                if reply.tool_calls:
                    message["tool_calls"] = [{"id": f"call_{i}", "type": "function",
                                              "function": {"name": n, "arguments": a}}
                                             for i, (n, a) in enumerate(reply.tool_calls)]
                self._json(200, {"id": "chatcmpl-1", "object": "chat.completion", "created": 0,
                                 "model": req["model"], "choices": [{
                                     "index": 0, "message": message,
                                     "finish_reason": reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")}],
                                 "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})

            def _chunk(self, req: dict[str, Any], delta: dict[str, Any], finish: str | None = None,
                       usage: dict[str, int] | None = None) -> None:
                obj: dict[str, Any] = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0,
                                       "model": req["model"],
                                       "choices": [] if usage else [{"index": 0, "delta": delta,
                                                                     "finish_reason": finish}]}
                if usage:
                    obj["usage"] = usage
                data = f"data: {json.dumps(obj)}\n\n".encode()
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()
                outer.streamed_chunks += 1

            def _stream(self, req: dict[str, Any], reply: Reply) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                if reply.error_in_body:
                    data = f"data: {json.dumps({'error': {'message': reply.error_in_body}})}\n\n".encode()
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n0\r\n\r\n")
                    self.wfile.flush()
                    return
                self._chunk(req, {"role": "assistant", "content": ""})
                for delta in reply.deltas or []:
                    self._chunk(req, delta)
                for i in range(0, len(reply.text), reply.piece):
                    self._chunk(req, {"content": reply.text[i:i + reply.piece]})
                for index, (name, args) in enumerate(reply.tool_calls):
                    self._chunk(req, {"tool_calls": [{"index": index, "id": f"call_{index}", "type": "function",
                                                      "function": {"name": name, "arguments": ""}}]})
                    for i in range(0, len(args), reply.piece):
                        self._chunk(req, {"tool_calls": [{"index": index,
                                                          "function": {"arguments": args[i:i + reply.piece]}}]})
                finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
                self._chunk(req, {}, finish)
                if (req.get("stream_options") or {}).get("include_usage"):
                    completion = max(1, (len(reply.text) + sum(len(a) for _, a in reply.tool_calls)) // 4)
                    usage = {"prompt_tokens": 100, "completion_tokens": completion, "total_tokens": 100 + completion}
                    outer.usage_sent.append((req, usage))
                    self._chunk(req, {}, usage=usage)
                data = b"data: [DONE]\n\n"
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n0\r\n\r\n")
                self.wfile.flush()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, name="fake-openai", daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


def last_user(req: dict[str, Any]) -> str:
    """The text of the last user or tool message of a request."""
    for message in reversed(req["messages"]):
        if message["role"] in ("user", "tool"):
            return str(message.get("content") or "")
    return ""


def system_of(req: dict[str, Any]) -> str:
    return str(req["messages"][0].get("content") or "")
