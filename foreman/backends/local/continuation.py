"""Reply length for guided asks: sized to what the model may send, and continued when cut (pure).

An answer cut at the reply-length limit is lost: its last definition does not parse and nothing of
it can be placed. Two rules stop that:

- *sized*: an ask's limit is at least what rewriting the largest file shown would take (a model
  asked for "the changed functions" often sends the whole file), within the context window;
- *continued* (the ``continue`` check): a cut answer is sent back as the final assistant message,
  which the server continues (a *prefill*, :func:`prefilled`), and the two are joined as they are;
  at most :data:`ROUNDS` times; not an answer that ends in a repetition loop (:func:`looping`), nor
  a test answer that already holds enough complete tests (:func:`enough_tests`).
  Asked instead in a user message to go on, small models most often start the whole answer over
  (and are cut at the same place again). A server that does not continue a final assistant message
  answers it anew (:func:`restarted`: that answer replaces the cut one), or refuses the request;
  the endpoint's later continuations are then asked in a user message (:func:`ask_more`), whose
  pieces are joined with a repeated fence opening or last line dropped (:func:`joined`).

Prefill: llama.cpp's server continues a final assistant message by default (ggml-org/llama.cpp
#13174, and streams the prefill back first without the flag below) and takes vLLM's and
transformers' ``continue_final_message`` flag (#23012), which vLLM needs (with
``add_generation_prompt`` off: its OpenAI-compatible server's extra parameters).
"""

from __future__ import annotations

import re
from typing import Any

from .repairs import LoopDetector

ROUNDS = 2
"""At most this many continuations of one answer."""
CHARS_PER_TOKEN = 3
"""A cautious estimate of characters per token for code (the real tokenizer is the server's)."""
MARGIN = 64
"""Tokens kept free of the context window for the chat template's own tokens."""
CONTINUE_ASK = ("Your answer was cut off at the length limit. Continue it exactly where it stopped: do not repeat "
                "anything already written, do not start over, no explanations.")


def estimate_tokens(text: str) -> int:
    """Tokens ``text`` takes, estimated from its length (:data:`CHARS_PER_TOKEN`)."""
    return len(text) // CHARS_PER_TOKEN + 1


def sized(base: int, shown: list[str]) -> int:
    """The reply limit of a task's asks: ``base`` (the profile's ``max_tokens``), raised to what the
    largest of the ``shown`` files would take written out again, plus a fifth."""
    largest = max((estimate_tokens(text) for text in shown), default=0)
    return max(base, largest * 6 // 5)


def reply_tokens(messages: list[dict[str, Any]], wanted: int, context_window: int, floor: int) -> int:
    """The ``max_tokens`` of the next request: ``wanted``, cut to what the context window leaves
    after the prompt, never below ``floor`` (the profile's own ``max_tokens``)."""
    prompt = sum(estimate_tokens(str(m.get("content") or "")) + 4 for m in messages)
    return max(floor, min(wanted, context_window - prompt - MARGIN))


def ask_more(messages: list[dict[str, Any]], so_far: str) -> list[dict[str, Any]]:
    """The conversation that asks for the rest of a cut answer: the original ask, the answer so far
    as the assistant's turn, and :data:`CONTINUE_ASK` (the caller's list is not changed)."""
    return [*messages, {"role": "assistant", "content": so_far}, {"role": "user", "content": CONTINUE_ASK}]


PREFILL: dict[str, Any] = {"continue_final_message": True, "add_generation_prompt": False}
"""The request's extra body with a prefill: continue the final assistant message, open no new one."""


def prefilled(messages: list[dict[str, Any]], so_far: str) -> list[dict[str, Any]]:
    """The conversation whose final assistant message, the answer so far without its trailing
    whitespace (chat templates that trim a message would drop it; the model writes its own),
    the server continues (the caller's list is not changed)."""
    return [*messages, {"role": "assistant", "content": so_far.rstrip()}]


def unechoed(so_far: str, reply: str) -> str:
    """The continuation in ``reply`` to a :func:`prefilled` ask: without the prefill, which a
    server may stream back before what it adds (llama.cpp does without :data:`PREFILL`'s flag)."""
    head = so_far.rstrip()
    return reply[len(head):] if head and reply.startswith(head) else reply


def looping(text: str) -> bool:
    """Whether ``text`` (a cut answer) ends in a repetition loop (:class:`.repairs.LoopDetector`
    over its complete lines, comment lines aside): the small models' most common cut, one line
    (or a few) repeated until the limit, which a continuation would only extend. Comments do not
    count: a loop of test cases numbers each one in a comment ("# Test case 9: ...") above the same
    two lines, and would never repeat whole. A runaway table counts too: :data:`RUNAWAY` lines in a
    row of one shape, their strings and numbers aside (``assert parse('1,25') == 125``, then
    ``'1,25,50'``, ``'1,25,50,67'``, ... each a little longer, until the limit)."""
    detector, shapes = LoopDetector(), LoopDetector()
    shapes.same_line, shapes.cycles = RUNAWAY, RUNAWAY * 3 // 4
    found = False
    for line in text.split("\n")[:-1]:
        if line.strip() and not line.lstrip().startswith("#"):
            found = detector.push(line) | shapes.push(_shape(line))
    return found


RUNAWAY = 8
"""Lines of one shape in a row (or cycles of a few lines, three quarters as many) that make a cut
answer a runaway table (:func:`looping`)."""
_LITERAL_RE = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|\b\d[\d_.,]*""")


def _shape(line: str) -> str:
    """``line`` with its string and number literals as ``S`` and ``N``."""
    return _LITERAL_RE.sub(lambda m: "N" if m.group(0)[0].isdigit() else "S", line)


UNLOOP: dict[str, Any] = {"dry_multiplier": 0.8, "dry_base": 1.75, "dry_allowed_length": 2, "frequency_penalty": 0.1}
"""The extra body of the asks that follow a reply that ended in a repetition loop (:func:`looping`):
llama.cpp's DRY sampler ("don't repeat yourself": it penalizes a token that would extend a sequence
already seen beyond ``dry_allowed_length`` tokens; llama.cpp's default base and allowed length, and
the multiplier its author proposed, 0.8; the matching restarts at llama.cpp's default sequence
breakers, newline, quote, colon and asterisk, so code's short repeated runs are mostly spared), and
the OpenAI API's own ``frequency_penalty``, kept small (code repeats tokens, indentation first),
for servers without DRY; a server ignores a field it does not know. Asked again alike, even at a
higher temperature, a small model falls into the same loop. (Not tuned: the values are the
sampler's own, and what they cost or gain on the corpus is not measured yet.)"""


ENOUGH_TESTS = 2
"""Complete test functions after which a cut test answer is not continued (:func:`enough_tests`)."""
_TEST_DEF_RE = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+test\w*[ \t]*\(", re.MULTILINE)


def enough_tests(text: str) -> bool:
    """Whether a cut test answer already holds :data:`ENOUGH_TESTS` complete test functions (every
    ``def test...`` but the last, which the cut went through). Such an answer is not continued: its
    complete functions are kept (:func:`.answers.complete_part`), and a small model asked for "two
    or three" tests writes more of the same until the limit, so a continuation costs a whole reply
    for tests the answer does not need."""
    return len(_TEST_DEF_RE.findall(text)) - 1 >= ENOUGH_TESTS


def restarted(head: str, tail: str) -> bool:
    """Whether ``tail``, asked as the continuation of ``head``, starts the answer over instead: its
    first two lines of content (blank lines and fence lines aside) are ``head``'s first two. Joined,
    such a tail would repeat the whole answer; small models often write one."""
    def opening(text: str) -> list[str]:
        return [ln.rstrip() for ln in text.split("\n") if ln.strip() and not ln.strip().startswith("```")][:2]

    first = opening(head)
    return len(first) == 2 and opening(tail) == first


def joined(head: str, tail: str) -> str:
    """``head`` (a cut answer) continued by ``tail``: a fence opening ``tail`` starts while ``head``
    is inside a fence is dropped, and so is a first line of ``tail`` that repeats ``head``'s last
    complete line (indentation and all) or completes its cut last line.

    A bare fence that starts ``tail`` and that nothing in ``tail`` closes is the closing fence of
    ``head``'s block (the code was complete when the limit hit), not a repeated opening: dropping
    it would put what follows (a remark) inside the code."""
    if head.count("```") % 2 == 1:  # head is inside a code block: the tail's own opening is a repeat
        stripped = tail.lstrip()
        fence = stripped.split("\n", 1)[0].strip()
        if stripped.startswith("```") and (fence != "```" or stripped.count("```") % 2 == 0):
            tail = stripped.split("\n", 1)[1] if "\n" in stripped else ""
    lines = head.split("\n")
    partial, complete = lines[-1], lines[:-1]
    first, sep, rest = tail.partition("\n")
    if partial.strip() and first.strip().startswith(partial.strip()):  # the cut line, written whole
        return "\n".join([*complete, first]) + sep + rest
    if not partial.strip() and complete and first.strip() and first.rstrip() == complete[-1].rstrip():
        return head + rest  # the last line repeated (a ")" one level out is new code)
    return head + tail


__all__ = ["CONTINUE_ASK", "ENOUGH_TESTS", "PREFILL", "ROUNDS", "RUNAWAY", "UNLOOP", "ask_more", "enough_tests", "estimate_tokens", "joined",
           "looping", "prefilled", "reply_tokens", "restarted", "sized", "unechoed"]
