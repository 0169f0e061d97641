"""The OpenAI-compatible endpoint: model discovery, the preflight and streamed replies.

This is the only module that talks HTTP (through the ``openai`` client, imported lazily so
the rest of the backend loads without it). Library exceptions stop here: a service failure
becomes :class:`~foreman.errors.BackendError`, and a server that refused the model's own
output (llama.cpp's HTTP 500 "peg-native" message, see ``repairs.classify_server_error``)
becomes :class:`BadTurnError`, which the agent loop treats as a bad model turn.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...errors import BackendError
from .repairs import classify_server_error

logger = logging.getLogger(__name__)


class BadTurnError(BackendError):
    """The server refused the model's own output (unparseable tool call): a bad model turn."""


@dataclass
class Reply:
    """One streamed reply, as received.

    Attributes:
        content: the text content, byte for byte as streamed.
        finish_reason: the endpoint's finish_reason (None if the stream ended without one).
        chunks: how many SSE chunks carried something.
        prompt_tokens / completion_tokens: from the usage chunk (0 when not reported).
        usage_reported: the stream carried a usage chunk (``stream_options.include_usage``).
        model: the model id the server says answered (the chunks' ``model``), if it said.
        first_token_s: seconds from the request to the first content or tool-call piece.
        duration_s: seconds from the request to the end of the stream.
    """

    content: str = ""
    finish_reason: str | None = None
    chunks: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    usage_reported: bool = False
    model: str | None = None
    first_token_s: float | None = None
    duration_s: float = 0.0
    pieces: list[str] = field(default_factory=list, repr=False)


def _error_message(obj: Any) -> str:
    """The server's message in an error object carried by an HTTP 200 body, or ""."""
    extra = getattr(obj, "model_extra", None) or (obj if isinstance(obj, dict) else {})
    error = extra.get("error") if isinstance(extra, dict) else None
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error) if error else ""


def _rejects_stream_options(exc: Any) -> bool:
    status, body = _status_body(exc)
    return status in (400, 422) and "stream_options" in f"{getattr(exc, 'message', '')} {body}"


def _status_body(exc: Any) -> tuple[int, Any]:
    response = getattr(exc, "response", None)
    status = int(getattr(exc, "status_code", 0) or getattr(response, "status_code", 0) or 0)
    body = getattr(exc, "body", None)
    if body is None and response is not None:
        try:
            body = response.text
        except Exception:  # noqa: BLE001 - the body is only for the message
            body = None
    return status, body


def _connection_reason(exc: BaseException) -> str:
    """Why a connection failed, from the innermost OS error of ``exc``'s chain (``Connection
    refused``: the HTTP stack's own words, ``All connection attempts failed``, hide it), else
    the text of its cause."""
    reason, seen = "", set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        if isinstance(link, OSError) and link.errno:
            reason = os.strerror(link.errno)
        link = link.__cause__ or link.__context__
    return reason or str(exc.__cause__ or exc)


def _reasoning(delta: Any) -> str:
    """``reasoning_content`` (or ``reasoning``) of a streamed delta, as servers of reasoning models send it."""
    if delta is None:
        return ""
    extra = getattr(delta, "model_extra", None) or {}
    value = getattr(delta, "reasoning_content", None) or extra.get("reasoning_content") or extra.get("reasoning")
    return value if isinstance(value, str) else ""


class Endpoint:
    """An OpenAI-compatible chat endpoint.

    Args:
        url: the base URL (``http://127.0.0.1:8790/v1``).
        api_key: the bearer token (local servers ignore it; the client requires one).
        request_timeout: seconds per HTTP request.
        client: an ``AsyncOpenAI``-like client to use instead of building one (tests).

    Raises:
        BackendError: the ``openai`` package is not installed.
    """

    def __init__(self, url: str, *, api_key: str = "local", request_timeout: float = 300.0,
                 client: Any = None) -> None:
        self.url = url
        if client is None:
            try:
                from openai import AsyncOpenAI  # (the local extra: an ImportError says which to install)
            except ImportError as exc:
                raise BackendError(f"the local backend needs the openai package: pip install '.[local]' in the Foreman checkout ({exc})") from None
            client = AsyncOpenAI(base_url=url, api_key=api_key or "local", max_retries=0, timeout=request_timeout)
        self.client = client
        self.no_stream_options = False
        """The server rejected ``stream_options`` once: streams go without it (no usage figures)."""
        self.no_prefill = False
        """The server did not continue a final assistant message once (it answered anew, or refused
        the request): guided mode asks for the rest of a cut answer in a user message instead."""

    async def close(self) -> None:
        """Close the HTTP client."""
        close = getattr(self.client, "close", None)
        if close is not None:
            await close()

    def _translate(self, exc: BaseException, model: str | None) -> BackendError:
        import openai  # (the local extra: this module imports without it)

        what = f"model {model!r} at {self.url}" if model else self.url
        if isinstance(exc, openai.APIStatusError):
            status, body = _status_body(exc)
            bad = classify_server_error(status, body)
            if bad is not None:
                return BadTurnError(f"the server could not parse the reply of {what}: {bad.detail}")
            return BackendError(f"{what} answered HTTP {status}: {getattr(exc, 'message', exc)}")
        if isinstance(exc, openai.APITimeoutError):
            return BackendError(f"{what} did not answer in time")
        if isinstance(exc, openai.APIConnectionError):
            return BackendError(f"cannot reach the endpoint {self.url} ({_connection_reason(exc)}); "
                                "is the model server running? Set --url or FOREMAN_URL")
        return BackendError(f"{what} failed: {exc}")

    async def models(self) -> list[str]:
        """Return the model ids the endpoint serves (``GET /models``).

        Raises:
            BackendError: the endpoint cannot be reached or refused.
        """
        import openai  # (the local extra: this module imports without it)

        try:
            page = await self.client.models.list()
        except openai.OpenAIError as exc:
            raise self._translate(exc, None) from None
        return [m.id for m in getattr(page, "data", page)]

    async def preflight(self, wanted: list[str | None]) -> str:
        """Check the endpoint before any agent starts; return the default model id.

        Asks what the endpoint serves, checks that every wanted model is among them, and
        makes a minimal completion with each, so a wrong or inactive model fails here.

        Args:
            wanted: model ids to check; None entries mean "whatever the endpoint serves".

        Raises:
            BackendError: unreachable endpoint, no model served, a wanted model not served,
                or a completion that fails (the message names the model and the URL).
        """
        import openai  # (the local extra: this module imports without it)

        served = await self.models()
        if not served:
            raise BackendError(f"the endpoint {self.url} serves no model")
        default = served[0]
        for model in dict.fromkeys(m or default for m in wanted or [None]):
            if model not in served:
                raise BackendError(f"the endpoint {self.url} does not serve model {model!r} "
                                   f"(it serves: {', '.join(served)}); set --model or the profile's model")
            try:
                resp = await self.client.chat.completions.create(
                    model=model, messages=[{"role": "user", "content": "Say OK."}], max_tokens=1, temperature=0)
            except openai.OpenAIError as exc:
                raise BackendError(f"model {model!r} at {self.url} failed a minimal completion: "
                                   f"{self._translate(exc, model).message}") from None
            if not getattr(resp, "choices", None):  # HTTP 200 whose body is an error object (proxies)
                raise BackendError(f"model {model!r} at {self.url} failed a minimal completion: "
                                   f"{_error_message(resp) or 'the answer held no choices'}")
        return default

    async def supports_json_schema(self, model: str) -> bool:
        """Whether the endpoint enforces a ``response_format`` of type ``json_schema``: a tiny
        completion must come back as JSON of the asked shape. Any refusal (HTTP 4xx/5xx, an
        error body) or a free-text answer means no; never raises.
        """
        import openai  # (the local extra: this module imports without it)

        schema = {"type": "json_schema", "json_schema": {"name": "probe", "strict": True, "schema": {
            "type": "object", "additionalProperties": False, "required": ["ok"],
            "properties": {"ok": {"type": "boolean"}}}}}
        try:
            resp = await self.client.chat.completions.create(
                model=model, max_tokens=16, temperature=0,
                messages=[{"role": "user", "content": 'Answer {"ok": true}'}], extra_body={"response_format": schema})
            content = (resp.choices[0].message.content or "") if getattr(resp, "choices", None) else ""
            data = json.loads(content)
        except (openai.OpenAIError, ValueError, TypeError, AttributeError, IndexError) as exc:
            logger.info("json_schema probe of %s: not supported (%s)", self.url, str(exc)[:200])
            return False
        return isinstance(data, dict) and isinstance(data.get("ok"), bool)

    async def stream(self, *, model: str, messages: list[dict[str, Any]], max_tokens: int, temperature: float,
                     tools: list[dict[str, Any]] | None = None, tool_choice: str = "auto",
                     on_content: Callable[[str], None] | None = None,
                     on_tool_delta: Callable[[Any], None] | None = None,
                     extra_body: dict[str, Any] | None = None, seed: int | None = None,
                     clock: Callable[[], float] = time.monotonic) -> Reply:
        """Stream one chat completion, calling back for each content piece and tool-call delta.

        ``extra_body`` is merged into the request's JSON (e.g. a ``response_format``); ``seed``
        (None: not sent) is the chat-completions ``seed`` (the same prompt and seed sample alike).

        Returns:
            The :class:`Reply` (content exactly as streamed, finish_reason, usage).

        Raises:
            BadTurnError: the server refused the model's output (a bad model turn).
            BackendError: any other failure of the endpoint.
        """
        import openai  # (the local extra: this module imports without it)

        started = clock()
        reply = Reply()
        kwargs: dict[str, Any] = dict(model=model, messages=messages, max_tokens=max_tokens,
                                      temperature=temperature, stream=True)
        if seed is not None:
            kwargs["seed"] = seed
        if not self.no_stream_options:
            kwargs["stream_options"] = {"include_usage": True}
        if tools:
            kwargs.update(tools=tools, tool_choice=tool_choice)
        if extra_body:
            kwargs.update(extra_body=extra_body)
        thinking = False
        try:
            try:
                stream = await self.client.chat.completions.create(**kwargs)
            except openai.BadRequestError as exc:  # 400/422 naming stream_options: retry once without it
                if "stream_options" not in kwargs or not _rejects_stream_options(exc):
                    raise
                logger.info("%s rejects stream_options; streaming without usage figures", self.url)
                self.no_stream_options = True
                kwargs.pop("stream_options")
                stream = await self.client.chat.completions.create(**kwargs)
            async for chunk in stream:
                if not getattr(chunk, "choices", None) and _error_message(chunk):
                    raise BackendError(f"model {model!r} at {self.url} sent an error: {_error_message(chunk)}")
                if reply.model is None and isinstance(getattr(chunk, "model", None), str) and chunk.model:
                    reply.model = chunk.model
                usage = getattr(chunk, "usage", None)
                if usage is not None:
                    reply.usage_reported = True
                    reply.prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
                    reply.completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
                for choice in getattr(chunk, "choices", None) or []:
                    delta = getattr(choice, "delta", None)
                    text = getattr(delta, "content", None) if delta is not None else None
                    reasoning = _reasoning(delta)
                    if reasoning and not text:  # reasoning models: shown to the decoder as a <think> block
                        text, thinking = ("" if thinking else "<think>") + reasoning, True
                    elif text and thinking:
                        text, thinking = "</think>" + text, False
                    calls = (getattr(delta, "tool_calls", None) or []) if delta is not None else []
                    if text or calls:
                        reply.chunks += 1
                        if reply.first_token_s is None:
                            reply.first_token_s = clock() - started
                    if text:
                        reply.pieces.append(text)
                        if on_content is not None:
                            on_content(text)
                    for call in calls:
                        if on_tool_delta is not None:
                            on_tool_delta(call)
                    if getattr(choice, "finish_reason", None):
                        reply.finish_reason = choice.finish_reason
        except openai.OpenAIError as exc:
            raise self._translate(exc, model) from None
        if thinking:
            reply.pieces.append("</think>")
            if on_content is not None:
                on_content("</think>")
        reply.content = "".join(reply.pieces)
        reply.duration_s = clock() - started
        return reply

