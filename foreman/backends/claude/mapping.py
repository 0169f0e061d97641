"""World mapping: what a Claude tool call looks like in the world (pure, no I/O).

Each tool the model calls becomes an agent state (which also picks the station, see
:data:`foreman.core.rules.DEFAULT_STATIONS`) and a one-line activity:

=========================================  ==============  ============
tool                                       state           station
=========================================  ==============  ============
Read, Grep, Glob, LS, NotebookRead         ``reading``     library
Edit, Write, MultiEdit, NotebookEdit       ``editing``     desk
Bash running a test command                ``testing``     testbench
any other Bash                             ``running``     terminal
``mcp__agentcraft__ask_user``              ``waiting_user``  user
=========================================  ==============  ============

Other tools (the Foreman's own, web tools, todo lists) leave the state as it is.

The functions here are pure; :class:`Transcript` applies them to a turn's message stream: it
keeps what the stream said and passes texts, activities and tool calls to the agent's tools.
"""

from __future__ import annotations

import os
import shlex
from typing import Any

SERVER_NAME = "agentcraft"
"""The name of the in-process MCP server holding the Foreman's tools (``mcp__agentcraft__<tool>``)."""

OWN_PREFIX = f"mcp__{SERVER_NAME}__"

READ_TOOLS = frozenset({"Read", "Grep", "Glob", "LS", "NotebookRead"})
EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
SUBAGENT_TOOLS = frozenset({"Task", "Agent"})

_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "|&", ";;", "(", ")", "\n"})
# programs that run their arguments as another command (skipped to find the real program)
_WRAPPERS = frozenset({"time", "env", "nice", "nohup", "timeout", "xvfb-run", "stdbuf", "command", "exec",
                       "sudo", "doas"})
# package runners: ``<runner> run X`` / ``<runner> exec X`` / ``<runner> X``
_RUNNERS = frozenset({"uv", "poetry", "pipenv", "pdm", "hatch", "rye", "npx", "pnpx", "bunx", "bundle"})
_TEST_PROGRAMS = frozenset({"pytest", "py.test", "tox", "nox", "jest", "vitest", "mocha", "ava", "karma",
                            "rspec", "phpunit", "ctest", "trial", "nosetests", "ward", "prove", "bats"})
_TEST_SUBCOMMANDS = {
    # program -> sub-commands that run the tests
    "npm": frozenset({"test", "t", "tst", "run-script:test"}),
    "yarn": frozenset({"test"}),
    "pnpm": frozenset({"test", "t"}),
    "bun": frozenset({"test"}),
    "deno": frozenset({"test"}),
    "cargo": frozenset({"test", "nextest"}),
    "go": frozenset({"test"}),
    "make": frozenset({"test", "tests", "check"}),
    "gmake": frozenset({"test", "tests", "check"}),
    "just": frozenset({"test", "tests", "check"}),
    "mvn": frozenset({"test", "verify"}),
    "gradle": frozenset({"test", "check"}),
    "./gradlew": frozenset({"test", "check"}),
    "dotnet": frozenset({"test"}),
    "mix": frozenset({"test"}),
    "swift": frozenset({"test"}),
    "zig": frozenset({"test"}),
    "rake": frozenset({"test", "spec"}),
    "hatch": frozenset({"test"}),
}
_PYTHON_TEST_MODULES = frozenset({"pytest", "unittest", "tox", "nox", "nose2", "doctest"})


def _split_commands(command: str) -> list[list[str]]:
    """Split shell text into simple commands (word lists); quotes are honoured, nothing runs."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    commands: list[list[str]] = [[]]
    try:
        for token in lexer:
            if token in _SEPARATORS or set(token) <= set("&|;()<>"):
                commands.append([])
            else:
                commands[-1].append(token)
    except ValueError:  # unbalanced quotes: fall back to plain words
        commands = [command.split()]
    return [c for c in commands if c]


def _program(words: list[str]) -> list[str]:
    """Drop leading ``VAR=value`` assignments and wrapper programs (with their options)."""
    i = 0
    while i < len(words):
        word = words[i]
        if "=" in word and not word.startswith("-") and word.split("=", 1)[0].isidentifier():
            i += 1
        elif os.path.basename(word) in _WRAPPERS:
            i += 1
            while i < len(words) and (words[i].startswith("-") or words[i][:1].isdigit() or
                                      ("=" in words[i] and words[i].split("=", 1)[0].isidentifier())):
                i += 1
        else:
            break
    return words[i:]


def _drop_options(words: list[str]) -> list[str]:
    """Drop leading options (``--with x`` keeps ``x``: good enough for a display mapping)."""
    i = 0
    while i < len(words) and words[i].startswith("-"):
        i += 1
    return words[i:]


def _is_test_words(words: list[str], depth: int = 0) -> bool:
    words = _program(words)
    if not words or depth > 3:
        return False
    prog = os.path.basename(words[0]) if not words[0].startswith("./") else words[0]
    rest = words[1:]
    if prog in _TEST_PROGRAMS:
        return True
    if prog.startswith("python") or prog in {"py", "pypy", "pypy3"}:
        if "-m" in rest:
            idx = rest.index("-m")
            return idx + 1 < len(rest) and rest[idx + 1].split(".")[0] in _PYTHON_TEST_MODULES
        return any(os.path.basename(w).startswith("test") and w.endswith(".py") for w in rest[:1])
    if prog in _RUNNERS:
        args = _drop_options(rest)
        if args and args[0] in {"run", "exec", "x"}:
            args = _drop_options(args[1:])
        if prog == "hatch" and args and args[0] == "test":
            return True
        return bool(args) and _is_test_words(args, depth + 1)
    subs = _TEST_SUBCOMMANDS.get(prog)
    if subs is not None:
        args = [w for w in rest if not w.startswith("-")]
        if prog in {"npm", "yarn", "pnpm", "bun"} and args and args[0] in {"run", "run-script"}:
            args = args[1:]
            return bool(args) and (args[0] == "test" or args[0].startswith("test:"))
        return bool(args) and args[0] in subs
    return False


def is_test_command(command: str) -> bool:
    """True when shell text runs a test suite (``pytest``, ``python -m unittest``, ``npm test``,
    ``cargo test``, ``go test ./...``, ``make test``, ``uv run pytest`` ...), anywhere in a list
    or pipeline (``cd pkg && pytest -q``)."""
    return any(_is_test_words(words) for words in _split_commands(command))


def _short(text: Any, limit: int = 120) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def describe_call(tool: str, args: dict[str, Any]) -> str:
    """One line saying what a tool call does (``Read src/app.py``, ``Bash: pytest -q``)."""
    if tool.startswith(OWN_PREFIX):
        name = tool[len(OWN_PREFIX):]
        detail = args.get("question") or args.get("text") or args.get("title") or args.get("task") or ""
        return f"{name}: {_short(detail)}" if detail else name
    if tool == "Bash":
        return f"Bash: {_short(args.get('command', ''))}"
    target = (args.get("file_path") or args.get("notebook_path") or args.get("path") or args.get("pattern")
              or args.get("url") or args.get("query") or "")
    return f"{tool} {_short(target)}".rstrip()


def activity_for(tool: str, args: dict[str, Any]) -> tuple[str, str] | None:
    """Return ``(state, activity)`` for a tool call, or None when it does not change the state.

    Args:
        tool: the tool name as the model called it (``Read``, ``Bash``, ``mcp__agentcraft__ask_user``).
        args: the tool's input.
    """
    if tool in READ_TOOLS:
        return "reading", describe_call(tool, args)
    if tool in EDIT_TOOLS:
        return "editing", describe_call(tool, args)
    if tool == "Bash":
        command = str(args.get("command", ""))
        state = "testing" if is_test_command(command) else "running"
        return state, _short(command) or "a command"
    if tool == f"{OWN_PREFIX}ask_user":
        return "waiting_user", f"asking: {_short(args.get('question', ''))}"
    return None


class Transcript:
    """What the message stream of one claude turn said, mapped onto the world as it arrives.

    Attributes:
        session_id: the turn's session: the one it resumed, then the CLI's own (``init``, result).
        texts: the assistant's non-blank texts in order (subagents' excluded).
        api_error: the last assistant message's ``error`` field (``rate_limit`` ...) or None.
        result: the turn's ``ResultMessage`` once it came, else None.
        streamed: the API usage of each model response so far (message id -> the assistant
            message's ``usage``), for a turn cut off before its result (:meth:`count`).
    """

    def __init__(self, session_id: str | None) -> None:
        self.session_id = session_id
        self.texts: list[str] = []
        self.api_error: str | None = None
        self.result: Any = None
        self.streamed: dict[str, dict[str, Any]] = {}

    def count(self, sdk: Any, message: Any) -> None:
        """Keep the API usage an assistant message carries (subagents' too: they are paid for).
        The CLI sends one assistant message per content block of a model response, all with
        that response's id; the last usage seen for an id is kept."""
        if isinstance(message, sdk.AssistantMessage) and isinstance(message.usage, dict):
            self.streamed[message.message_id or f"#{len(self.streamed)}"] = message.usage

    def take(self, sdk: Any, message: Any, tools: Any) -> None:
        """Record one SDK message and show it in the world through ``tools`` (:class:`AgentTools`).

        ``init`` announces the session (``tools.session_started``, optional: the session is
        durable from then on); assistant texts become log lines; a tool call becomes an activity
        (:func:`activity_for`) and a ``tool`` log line (:func:`describe_call`). Messages inside a
        subagent are never mapped.

        Raises:
            ForemanError: the world refused a log line or an activity.
        """
        if isinstance(message, sdk.SystemMessage):
            if message.subtype == "init" and isinstance(message.data.get("session_id"), str):
                self.session_id = message.data["session_id"]
                started = getattr(tools, "session_started", None)  # optional AgentTools hook
                if started is not None:
                    started(self.session_id)  # durable now: a turn killed midway resumes this session
        elif isinstance(message, sdk.AssistantMessage):
            if message.error:
                self.api_error = message.error
            if message.parent_tool_use_id:
                return  # inside a subagent (refused, but never map one)
            for block in message.content:
                if isinstance(block, sdk.TextBlock) and block.text.strip():
                    self.texts.append(block.text)
                    tools.log(block.text)
                elif isinstance(block, sdk.ToolUseBlock):
                    args = block.input if isinstance(block.input, dict) else {}
                    mapped = activity_for(block.name, args)
                    if mapped is not None:
                        tools.activity(*mapped)
                    tools.log(describe_call(block.name, args), kind="tool")
        elif isinstance(message, sdk.ResultMessage):
            self.result = message
            if message.session_id:
                self.session_id = message.session_id
