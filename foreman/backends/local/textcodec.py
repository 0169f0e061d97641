"""The text protocol: an incremental decoder and the canonical renderer.

Spelling (taught by :func:`.registry.render_instructions`):

- an action word at the start of a line: ``READ path[:start-end]``, ``LIST [dir]``,
  ``GLOB pattern``, ``GREP regex``, ``SEARCH text``, ``RUN command``, ``DELETE path``,
  ``MKDIR path``, ``MOVE a -> b``, ``COPY a -> b``, ``RENAME a -> b``; the newline ends it;
- an edit: the file's path alone on a line, then ``<<<<<<< SEARCH`` / ``=======`` /
  ``>>>>>>> REPLACE`` (fenced or not); the REPLACE marker ends it. An empty SEARCH part
  creates the file (a ``create`` action);
- any tool, Foreman tools included: ``TOOL name {json}`` on a line (the JSON may run over
  several lines; its closing brace ends it), or ``TOOL name`` alone for a tool without
  arguments;
- ``FINAL summary``: everything after FINAL to the end of the reply is the summary; only the
  end of a reply that was not cut off (finish_reason "stop") ends it.

Tolerated (and counted, see :data:`.result.REPAIRS`): ``<think>`` blocks, ``<tool_call>``
blocks (JSON or ``<function=...>`` form), bare JSON tool calls and the router form when the
reply has no protocol action (the last complete one wins), odd markers, CRLF, bullets,
decorated paths, chatter. Repetition loops and echoed prompt lines stop or are skipped.

Nothing is emitted before its terminator has arrived, and a reply cut by finish_reason
"length" never yields its unfinished last line: half an action is never an action.

This module is the state machine over lines; what one line is comes from :mod:`.textlines`,
edit blocks from :mod:`.textblocks`, tool-call bodies and the JSON fallback from
:mod:`.textcalls`, the actions/repairs/drops bookkeeping from :mod:`.textreply`, rendering
from :mod:`.textrender`.
"""

from __future__ import annotations

import re

from . import textlines as tl
from .registry import ActionBase
from .repairs import is_degenerate_line, loads_lenient, object_end
from .result import DecodeResult
from .textblocks import EditBlock, block_call, block_path, split_replace_tail
from .textcalls import JsonArguments, json_fallback, parse_tool_call
from .textrender import render_action, render_reply
from .textreply import ReplyLog

_OUTSIDE, _SEARCH, _REPLACE, _JSON, _TOOL_CALL, _FUNCTION, _FINAL, _THINK = range(8)


class TextDecoder:
    """Decode one streamed reply in the text protocol.

    Feed chunks with :meth:`feed` as they arrive; each call returns the actions completed by
    that chunk. Call :meth:`finish` once at the end for the full :class:`DecodeResult`, whose
    actions start with everything :meth:`feed` returned, in order.

    Args:
        role: "lead" or "worker" to drop tools the role may not use; None allows all.
        prompt_text: extra prompt text whose echoed lines count as a leak (the rendered
            instructions are always known).
    """

    def __init__(self, *, role: str | None = None, prompt_text: str | None = None) -> None:
        self._leak_lines = set(tl.default_fingerprints())
        if prompt_text:
            self._leak_lines |= tl.fingerprints(prompt_text)
        self._buffer = ""
        self._state = _OUTSIDE
        self._out = ReplyLog(role)
        self._pending: list[str] = []
        self._in_fence = False
        self._fence_info = ""
        self._path: tuple[str, list[str]] | None = None
        self._last_edit_path: str | None = None
        self._prose_path: str | None = None
        self._block: EditBlock | None = None
        self._json: JsonArguments | None = None
        self._crlf = False
        self._finished: DecodeResult | None = None

    # -- public -------------------------------------------------------------------------
    def feed(self, chunk: str) -> list[ActionBase]:
        """Add a chunk of the reply; return the actions it completed (maybe none).

        Raises:
            RuntimeError: the decoder was already finished.
        """
        if self._finished is not None:
            raise RuntimeError("feed() after finish()")
        before = len(self._out.actions)
        if "\n" not in chunk:
            self._buffer += chunk
            return []
        lines = (self._buffer + chunk).split("\n")
        self._buffer = lines.pop()
        for line in lines:
            self._line(self._chomp(line))
        return self._out.actions[before:]

    def finish(self, finish_reason: str | None = "stop") -> DecodeResult:
        """End the reply and return the result (idempotent).

        Args:
            finish_reason: the endpoint's finish_reason; "length" means the reply was cut
                off, so an unterminated last line or block is dropped, never decoded.
        """
        if self._finished is not None:
            return self._finished
        cut = finish_reason == "length"
        tail = self._chomp(self._buffer)
        self._buffer = ""
        if cut:
            self._cut_tail(tail)
        elif tail:
            self._line(tail)
        self._close_open_state(cut)
        if not self._out.actions and not self._out.looping:
            self._json_fallback()
        self._finished = self._out.result(cut)
        return self._finished

    def _cut_tail(self, tail: str) -> None:
        """Look at the unterminated last line of a cut reply without decoding it."""
        text = tail.strip()
        if self._out.looping or self._state != _OUTSIDE or not text:
            return
        self._out.saw_text = True
        complete_json = text.startswith("{") and object_end(text, 0) == len(text)
        if tl.starts_action(text) and not complete_json:
            self._out.drop("truncated_action")
        elif is_degenerate_line(text):
            self._out.start_loop()
        else:
            self._out.chatter.append(tail)

    # -- bookkeeping --------------------------------------------------------------------
    def _chomp(self, line: str) -> str:
        if line.endswith("\r"):
            if not self._crlf:
                self._crlf = True
                self._out.repairs.append("crlf")
            return line[:-1]
        return line

    # -- lines --------------------------------------------------------------------------
    def _line(self, line: str) -> None:
        if self._out.looping:
            return
        handler = {
            _OUTSIDE: self._outside, _SEARCH: self._in_search, _REPLACE: self._in_replace,
            _JSON: self._in_json, _TOOL_CALL: self._in_tool_call, _FUNCTION: self._in_function,
            _FINAL: self._pending.append, _THINK: self._in_think,
        }[self._state]
        handler(line)

    def _outside(self, line: str) -> None:
        text = line.strip()
        if not text:
            self._out.chatter.append(line)
            return
        if "<think>" in text or "</think>" in text or "<tool_call>" in text:
            self._split_tags(line)
            return
        self._out.saw_text = True
        if tl.normalise(text) in self._leak_lines:
            self._out.leaks += 1
            self._out.repairs.append("leaked_prompt")
            return
        if self._out.loop.push(text):
            self._out.start_loop()
            return
        self._classify(line, text)

    def _split_tags(self, line: str) -> None:
        match = re.search(r"</?think>|<tool_call>", line)
        assert match is not None
        before, tag, after = line[:match.start()], match.group(0), line[match.end():]
        if before.strip():
            self._line(before)
        if tag == "</think>":
            self._out.repairs.append("stray_think_close")
            self._line(after)
            return
        if tag == "<think>":
            self._out.saw_think = True
            self._state = _THINK
            self._out.repairs.append("think_block")
        else:
            self._out.saw_text = True
            self._state = _TOOL_CALL
            self._pending = []
        self._line(after)

    def _classify(self, line: str, text: str) -> None:
        fence = tl.FENCE_RE.match(text)
        if fence:
            self._in_fence = not self._in_fence
            self._fence_info = fence["info"] if self._in_fence else ""
            self._out.chatter.append(line)
            return
        found = tl.marker(line)
        if found is not None:
            if found.kind == "search":
                self._open_block(list(found.repairs), indent=found.indent)
            else:
                self._out.repairs.append("stray_marker")
            return
        self._path = None
        self._prose_path = None
        if text.startswith("<function="):
            self._state, self._pending = _FUNCTION, []
            self._in_function(line)
            return
        final = tl.FINAL_RE.match(line.lstrip())
        if final:
            self._state, self._pending = _FINAL, [final["rest"]]
            return
        tool = tl.TOOL_RE.match(text)
        if tool:
            self._tool_line(tool["name"], tool["rest"])
            return
        word = tl.word_line(text)
        if word is not None:
            self._out.call(word.name, word.args, word.repairs)
            return
        if is_degenerate_line(text):
            self._out.start_loop()
            return
        self._out.chatter.append(line)
        self._path = tl.clean_path(text)
        self._prose_path = tl.prose_path(text) if self._path is None else None

    def _tool_line(self, name: str, rest: str) -> None:
        if rest.startswith("{"):
            self._state, self._json = _JSON, JsonArguments(name)
            self._in_json(rest)
        else:
            self._out.call(name, rest, [])

    def _in_json(self, line: str) -> None:
        assert self._json is not None
        body = self._json.feed(line)
        if body is None:
            return
        self._state = _OUTSIDE
        try:
            args, repairs = loads_lenient(body)
        except ValueError:
            self._out.drop("invalid_json")
            return
        self._out.call(self._json.name, args, repairs)

    def _in_think(self, line: str) -> None:
        if "</think>" in line:
            self._state = _OUTSIDE
            self._line(line.split("</think>", 1)[1])

    def _in_tool_call(self, line: str) -> None:
        if "</tool_call>" not in line:
            self._pending.append(line)
            return
        body, after = line.split("</tool_call>", 1)
        self._pending.append(body)
        self._state = _OUTSIDE
        self._tool_call("\n".join(self._pending), ["tool_call_xml"])
        if after.strip():
            self._line(after)

    def _in_function(self, line: str) -> None:
        if "</function>" not in line:
            self._pending.append(line)
            return
        body, after = line.split("</function>", 1)
        self._pending.append(body + "</function>")
        self._state = _OUTSIDE
        self._tool_call("\n".join(self._pending), [])
        if after.strip():
            self._line(after)

    def _tool_call(self, body: str, repairs: list[str]) -> None:
        parsed = parse_tool_call(body)
        if parsed is None:
            self._out.drop("invalid_json")
            return
        name, args, more = parsed
        self._out.call(name, args, repairs + more)

    # -- edit blocks --------------------------------------------------------------------
    def _open_block(self, repairs: list[str], indent: str = "") -> None:
        path, path_repairs = block_path(self._path, fence_info=self._fence_info if self._in_fence else None,
                                        last_edit_path=self._last_edit_path, prose_path=self._prose_path)
        self._path = None
        self._prose_path = None
        self._block = EditBlock(path=path, repairs=repairs + path_repairs, indent=indent)
        self._state = _SEARCH

    def _in_search(self, line: str) -> None:
        assert self._block is not None
        found = tl.marker(line)
        if found is None or (found.kind == "search" and self._block.search):
            self._block.search.append(line)
        elif found.kind == "divider":
            self._block.repairs += found.repairs
            self._state = _REPLACE
        elif found.kind == "replace":
            self._state = _OUTSIDE
            self._out.drop("missing_divider")

    def _in_replace(self, line: str) -> None:
        assert self._block is not None
        found = tl.marker(line)
        if found is None or found.kind == "divider":
            self._block.replace.append(line)
        elif found.kind == "replace":
            self._block.repairs += found.repairs
            self._state = _OUTSIDE
            self._close_block()
        else:
            path, path_lines = split_replace_tail(self._block) or (self._block.path, [])
            self._block.repairs.append("missing_replace_marker")
            self._close_block()
            self._path = (path, path_lines) if path is not None else None
            self._open_block(list(found.repairs))

    def _close_block(self) -> None:
        block, self._block = self._block, None
        assert block is not None
        if block.path is None:
            self._out.drop("edit_without_path")
            return
        self._last_edit_path = block.path
        self._out.call(*block_call(block))

    # -- end of reply -------------------------------------------------------------------
    def _close_open_state(self, cut: bool) -> None:
        state, self._state = self._state, _OUTSIDE
        if state in (_OUTSIDE, _THINK):
            return
        if cut:
            self._out.drop("truncated_action")
        elif state in (_SEARCH, _REPLACE):
            self._out.drop("unterminated_edit")
        elif state == _JSON:
            self._out.drop("invalid_json")
        elif state in (_TOOL_CALL, _FUNCTION):
            self._tool_call("\n".join(self._pending), ["tool_call_xml"] * (state == _TOOL_CALL)
                            + ["unclosed_tool_call"])
        elif state == _FINAL:
            self._out.call("final", {"summary": "\n".join(self._pending).strip()}, [])

    def _json_fallback(self) -> None:
        found = json_fallback("\n".join(self._out.chatter), role=self._out.role)
        if found.action is None:
            for drop in found.drops:
                self._out.drop(drop)
            return
        self._out.repairs += found.repairs
        self._out.actions.append(found.action)



def decode(text: str, finish_reason: str | None = "stop", *, role: str | None = None,
           prompt_text: str | None = None) -> DecodeResult:
    """Decode a whole reply at once (same result as feeding it in any chunks).

    Args:
        text: the raw reply.
        finish_reason: "stop", "length", ... (see :meth:`TextDecoder.finish`).
        role: drop tools this role may not use; None allows all.
        prompt_text: extra prompt text for leak detection.
    """
    decoder = TextDecoder(role=role, prompt_text=prompt_text)
    decoder.feed(text)
    return decoder.finish(finish_reason)


__all__ = ["TextDecoder", "decode", "render_action", "render_reply"]
