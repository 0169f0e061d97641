"""A scripted fake ``claude`` CLI for offline tests through the real claude-agent-sdk.

``fake_claude.py`` (standard library only) speaks the CLI side of the SDK's stream-json control
protocol: the ``initialize`` handshake (answering with its ``pid``), user prompts, assistant
text and ``tool_use``, ``PreToolUse`` ``hook_callback``, ``can_use_tool`` (allow, deny, deny with
interrupt), SDK MCP servers over ``mcp_message`` (``initialize``, ``tools/list``, ``tools/call``),
tool results, ``result`` messages with ``session_id`` and a cumulative ``total_cost_usd``,
``interrupt`` (with ``control_cancel_request`` for a pending permission), ``--resume`` of known
sessions (an unknown id fails like the real CLI: an error result, exit 1), ``--max-turns``.

Scenario file (JSON, named by the ``FAKE_CLAUDE_SCENARIO`` environment variable)::

    {
      "log": "/tmp/x/wire.jsonl",     # every frame and event, one JSON object per line:
                                      #   {"t": epoch, "pid": n, "kind": "in"|"out"|"event"|"start", "data": ...}
      "state": "/tmp/x/state.json",   # invocation counter + known sessions (shared by all CLI runs)
      "sessions": ["s-old"],          # sessions known from the start (resumable)
      "repeat_last": false,           # more CLI runs than "runs": reuse the last one
      "runs": [RUN, ...],             # the n-th CLI process started plays runs[n]
      "queues": {"kit": [RUN, ...]},  # per-agent runs instead: a process whose env names that agent
                                      #   plays the next run of its queue (others fall back to "runs")
      "queue_env": "GIT_AUTHOR_EMAIL",# the variable naming the agent (its part before "@")
      "real_tools": false,            # default of the RUN key below
      "prompt_vars": {"task": "Review task (t\\d+)"}
                                      # each prompt sets ${task} (the regex's first group) for the tool
                                      #   inputs of its turn and later ones of the session, also after a
                                      #   --resume (also a RUN key)
    }

RUN (all keys optional)::

    {
      "session_id": "s-1",            # id of a new session (default: a uuid4)
      "expect_resume": "s-0",         # exit 7 unless --resume names this session
      "accept_any_resume": false,     # resume even an unknown id
      "cost": 0.25,                   # added to the cumulative total_cost_usd at each turn
      "hooks": true,                  # false: ignore PreToolUse hooks (only can_use_tool decides)
      "auto_allow_reads": true,       # like the real CLI: Read/Grep/Glob/LS skip can_use_tool
      "ignore_sigterm": false,        # SIG_IGN for SIGTERM
      "ignore_eof": false,            # keep running after stdin closes
      "ignore_interrupt": false,      # acknowledge interrupts but keep going
      "ack_interrupt": true,          # false: never answer an interrupt request
      "pids_file": "/tmp/x/pids",     # append this CLI's pid and every spawned pid (one per line)
      "check_dead": "/tmp/x/pids",    # at start, log {"check_dead": [...], "alive": [...]} for those pids
      "crash_at_start": null,         # exit with this code before the handshake
      "spawn_at_start": [SPAWN, ...], # start processes before the handshake (see the spawn step)
      "hang_at_start": false,         # never answer the handshake
      "real_tools": false,            # allowed Write/Edit/Bash calls really happen, like the real CLI:
                                      #   Write/Edit change the file (relative to the CLI's cwd), Bash runs
                                      #   `bash -c` there (its output and exit code are the tool result)
      "turns": [[STEP, ...], ...]     # the i-th prompt plays turns[i]; then "nothing scripted"
    }

STEP, one of::

    {"text": "..."}                                   assistant text (the last one is the result text)
    {"tool": "Bash", "input": {...}, "output": "..."} tool_use -> hooks / can_use_tool -> tool_result
                                                      (a deny becomes an is_error tool_result; counts
                                                      against --max-turns: error_max_turns result)
    {"mcp": "update_task", "args": {...}}             tool_use of mcp__agentcraft__update_task, then
                                                      tools/call on the SDK server ("server" to change)
    {"sleep": 0.2}                                    wait (an interrupt ends the turn)
    {"hang": true}                                    wait for an interrupt (stdin EOF: exit 0)
    {"spawn": {"ignore_sigterm": true, "orphan": false}}  start `sleep 600` (orphan: its parent exits)
    {"crash": 3}                                      exit with that code at once
    {"garbage": "{not json"}                          write a corrupt stdout line
    {"api_error": {"status": 529, "message": "Overloaded", "exit": null}}
                                                      an API failure: is_error result, terminal_reason api_error
    {"result": {"subtype": "...", "is_error": true, ..., "exit": 1}}   a custom result (then exit)

A turn whose steps end without a result step ends with a ``success`` result. An interrupted turn
ends with ``error_during_execution`` / ``terminal_reason: aborted_streaming``.
"""

from __future__ import annotations

import json
import shlex
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FAKE = Path(__file__).with_name("fake_claude.py")


def install(directory: Path) -> Path:
    """Write ``directory/claude``: a launcher running the fake with this interpreter (fast start-up)."""
    path = directory / "claude"
    path.write_text(f"#!{sys.executable} -I\nimport runpy\nrunpy.run_path({str(FAKE)!r}, run_name='__main__')\n",
                    encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@dataclass
class FakeClaude:
    """One test's fake CLI: its launcher, scenario file and wire log.

    Attributes:
        root: the scratch directory.
        cli: the executable to pass as ``cli_path``.
    """

    root: Path
    cli: Path = field(init=False)
    scenario_path: Path = field(init=False)
    log_path: Path = field(init=False)
    state_path: Path = field(init=False)
    pids_path: Path = field(init=False)

    def __post_init__(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.cli = install(self.root)
        self.scenario_path = self.root / "scenario.json"
        self.log_path = self.root / "wire.jsonl"
        self.state_path = self.root / "state.json"
        self.pids_path = self.root / "pids"

    def script(self, *runs: dict[str, Any], **extra: Any) -> None:
        """Write the scenario: one RUN per CLI process, in start order."""
        scenario = {"log": str(self.log_path), "state": str(self.state_path), "runs": list(runs), **extra}
        self.scenario_path.write_text(json.dumps(scenario), encoding="utf-8")

    @property
    def env(self) -> dict[str, str]:
        """Environment entries that point the fake at this scenario."""
        return {"FAKE_CLAUDE_SCENARIO": str(self.scenario_path)}

    def entries(self, kind: str | None = None) -> list[dict[str, Any]]:
        """Log entries (``in``, ``out``, ``event``, ``start``), oldest first."""
        if not self.log_path.exists():
            return []
        rows = [json.loads(line) for line in self.log_path.read_text(encoding="utf-8").splitlines() if line]
        return [r for r in rows if kind is None or r["kind"] == kind]

    def events(self, key: str) -> list[dict[str, Any]]:
        """Event payloads holding ``key`` (``permission``, ``mcp_result``, ``check_dead`` ...)."""
        return [r["data"] for r in self.entries("event") if key in r["data"]]

    def commands(self) -> list[str]:
        """Each Bash command the fake ran, as the model wrote it: the inner command of one the OS
        sandbox wrapped (``bwrap ... -- bash -c <command>``, :meth:`foreman.sandbox.Sandbox.wrap_shell`)."""
        out = []
        for event in self.events("ran"):
            words = shlex.split(event["ran"]) if event["ran"].startswith("/") and "bwrap" in event["ran"] else []
            wrapped = len(words) > 3 and words[-2] == "-c" and words[-4] == "--"
            out.append(words[-1] if wrapped else event["ran"])
        return out

    def starts(self) -> list[dict[str, Any]]:
        """One entry per CLI process started: argv, pid, sid, pgid, env ..."""
        return [r["data"] | {"t": r["t"]} for r in self.entries("start")]

    def received(self, type_: str, subtype: str | None = None) -> list[dict[str, Any]]:
        """Frames the fake received from the SDK (``control_response``, ``user`` ...)."""
        rows = [r["data"] for r in self.entries("in") if r["data"].get("type") == type_]
        if subtype is not None:
            rows = [r for r in rows if (r.get("request") or r.get("response") or {}).get("subtype") == subtype]
        return rows

    def pids(self) -> list[int]:
        """Every pid the scenario's runs recorded in their ``pids_file``."""
        if not self.pids_path.exists():
            return []
        return [int(p) for p in self.pids_path.read_text(encoding="utf-8").split()]


def opt(argv: list[str], name: str) -> str | bool | None:
    """The value of ``--name`` in a logged argv (``--x=v``, ``--x v`` or a bare flag)."""
    for i, arg in enumerate(argv):
        if arg == name:
            nxt = argv[i + 1] if i + 1 < len(argv) else None
            return nxt if nxt is not None and not nxt.startswith("--") else True
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


__all__ = ["FAKE", "FakeClaude", "install", "opt"]
