"""``foreman tui``: the entry point of the terminal client and of its line mode.

Exit codes: 0 done; 1 a script line failed (wait timed out, refused, mistyped); 2 bad usage;
3 the Foreman could not be reached.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import time
from pathlib import Path

from foreman import __version__

from . import views
from .client import Connection, Unauthorized
from .discovery import Locator, default_home
from .mirror import Mirror
from .script import DECISION_KINDS, LineRunner, Quit, ScriptFailed, read_script
from .transcript import Transcript

CLIENT_NAME = f"foreman-tui/{__version__}"
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNREACHABLE, EXIT_REFUSED = 0, 1, 2, 3, 4


def build_parser() -> argparse.ArgumentParser:
    """Return the ``foreman tui`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="foreman tui",
        description="The Foreman's terminal client. With --script, --commands or --line it runs "
        "without a full-screen terminal (line mode).",
        epilog="Exit codes: 0 done, 1 a script line failed, 2 bad usage, 3 no Foreman answered, "
        "4 the Foreman refused this client's token (pass --home/--profile matching the daemon's).",
    )
    parser.add_argument("--port", type=int, help="the daemon's port (default: from foreman.json, else 7878)")
    parser.add_argument("--home", type=Path, help="state root (default: $AGENTCRAFT_HOME or ~/.agentcraft)")
    parser.add_argument("--profile", help="find the daemon of this profile (<home>/<profile>/foreman.json)")
    parser.add_argument("--script", type=Path, help="replay the commands of FILE (line mode), then exit")
    parser.add_argument("--transcript", type=Path, help="write the line-mode transcript to FILE too")
    parser.add_argument("--commands", type=Path, help="run commands appended to FILE as they come (line mode)")
    parser.add_argument(
        "--auto-answer", default="", metavar="KINDS",
        help="answer decisions of these kinds with their first option: merge,permission,question (full screen "
        "and line mode; a merge with a critical risk finding is left to you)",
    )
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds a /wait or a reply may take (default 120)")
    parser.add_argument("--line", action="store_true", help="line mode: read commands from standard input")
    parser.add_argument("--connect-timeout", type=float, default=30.0, metavar="SECONDS",
                        help="line mode: give up (exit 3) when no Foreman answers within SECONDS (default 30)")
    return parser


def tui_main(argv: list[str]) -> int:
    """Run ``foreman tui`` with ``argv`` (the words after ``tui``) and return the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_USAGE if exc.code else EXIT_OK
    kinds = {k.strip().lower() for k in args.auto_answer.split(",") if k.strip()}
    if kinds - DECISION_KINDS:
        print(f"foreman tui: --auto-answer takes {','.join(sorted(DECISION_KINDS))}, not {','.join(sorted(kinds - DECISION_KINDS))}", file=sys.stderr)
        return EXIT_USAGE
    if args.timeout <= 0 or args.connect_timeout <= 0:
        print("foreman tui: --timeout and --connect-timeout must be positive seconds", file=sys.stderr)
        return EXIT_USAGE
    home = args.home.expanduser() if args.home else default_home(os.environ)
    locator = Locator(home, args.profile, args.port)
    if args.script or args.commands or args.line or args.transcript:
        try:
            return asyncio.run(run_line_mode(args, locator, kinds))
        except KeyboardInterrupt:
            return EXIT_FAILED
    from .app import ForemanApp  # Textual is imported only for the full-screen client

    app = ForemanApp(locator=locator, client_name=CLIENT_NAME, auto_answer=kinds)
    app.run()
    return app.return_code or EXIT_OK


async def run_line_mode(args: argparse.Namespace, locator: Locator, kinds: set[str]) -> int:
    """Run the line mode described by ``args``; return the exit code."""
    lines: list[tuple[str, str]] = []
    if args.script:
        try:
            lines = read_script(args.script)
        except (OSError, ScriptFailed) as exc:
            print(f"foreman tui: {views.safe(str(exc))}", file=sys.stderr)
            return EXIT_FAILED
    with contextlib.ExitStack() as stack:
        outputs = [sys.stdout]
        if args.transcript:
            outputs.append(stack.enter_context(args.transcript.open("w", encoding="utf-8")))
        transcript = Transcript(outputs, time.monotonic)
        mirror = Mirror()
        conn = Connection(locator, mirror, client_name=CLIENT_NAME)
        runner = LineRunner(conn, transcript, auto_answer=kinds, wait_timeout=args.timeout, cwd=os.getcwd())
        conn.listener = runner.on_message

        def on_state(state: str) -> None:
            if state.startswith("disconnected"):
                transcript.write(state)

        conn.on_state = on_state
        loop_task = asyncio.create_task(conn.run())
        try:
            return await _drive(args, conn, runner, transcript, lines)
        finally:
            await conn.close()
            await loop_task


async def _drive(args, conn: Connection, runner: LineRunner, transcript: Transcript, lines) -> int:
    connect_timeout = min(args.timeout, args.connect_timeout)
    try:
        await conn.wait_ready(connect_timeout)
    except Unauthorized as exc:
        transcript.write(f"refused by the Foreman at {conn.url}: {exc}")
        print(f"foreman tui: {views.safe(str(exc))}", file=sys.stderr)
        return EXIT_REFUSED
    except TimeoutError:
        transcript.write(f"cannot reach the Foreman at {conn.url or locator_text(conn)} within {connect_timeout:g} s: {conn.last_error}")
        print(f"foreman tui: cannot reach the Foreman ({conn.last_error}); start it with `foreman start`", file=sys.stderr)
        return EXIT_UNREACHABLE
    try:
        if lines:
            await runner.run_lines(lines)
        if args.commands:
            await runner.tail(args.commands)
        elif args.line:
            await _stdin(runner)
    except ScriptFailed as exc:
        transcript.close(f"FAILED {exc}")
        print(f"foreman tui: {views.safe(str(exc))}", file=sys.stderr)
        return EXIT_FAILED
    except Quit:
        pass
    transcript.close(
        f"end: {runner.sent} intents sent, {transcript.decisions_opened} decisions opened, "
        f"{transcript.decisions_answered} answered"
    )
    return EXIT_OK


def locator_text(conn: Connection) -> str:
    describe = getattr(conn.locate, "describe", None)
    return describe() if describe else "the Foreman"


async def _stdin(runner: LineRunner) -> None:
    loop = asyncio.get_running_loop()
    number = 0
    while True:
        raw = await loop.run_in_executor(None, sys.stdin.readline)
        if not raw:
            return
        number += 1
        if raw.strip():
            await runner.run_lines([(f"stdin:{number}", raw.strip())], strict=False)
