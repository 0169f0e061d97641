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
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from foreman import __version__

from . import views
from .client import Connection, Unauthorized
from .discovery import Locator, default_home
from .mirror import Mirror
from .script import DECISION_KINDS, LineRunner, Quit, ScriptFailed, read_script
from .transcript import Transcript

CLIENT_NAME = f"foreman-tui/{__version__}"
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNREACHABLE, EXIT_REFUSED = 0, 1, 2, 3, 4


def build_parser(parser_class: type[argparse.ArgumentParser] = argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Return the ``foreman tui`` argument parser, of ``parser_class`` (the ``foreman`` command
    passes its own, whose errors are one line: the client imports nothing of the daemon's side)."""
    parser = parser_class(
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
    parser.add_argument("--line", action="store_true", help="line mode: read commands from standard input; ends at "
                        "its end, or when the goal is done (the goals sent here, else the latest one not done yet at "
                        "the start): exit 0, or 1 when that goal was cancelled")
    parser.add_argument("--connect-timeout", type=float, default=30.0, metavar="SECONDS",
                        help="line mode: wait up to SECONDS for the Foreman to listen (a client started with its "
                        "daemon), then give up with exit 3 (default 30)")
    return parser


def tui_main(argv: list[str], parser_class: type[argparse.ArgumentParser] = argparse.ArgumentParser) -> int:
    """Run ``foreman tui`` with ``argv`` (the words after ``tui``) and return the exit code;
    ``parser_class`` parses them (:func:`build_parser`)."""
    parser = build_parser(parser_class)
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
            if state.startswith("disconnected") and conn.connections:  # (before the first connection: waiting for
                transcript.write(state)                                  # the daemon to listen, up to --connect-timeout)

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
        elif args.line:  # until the end of the input, or until the goal is done
            await _first_of(_stdin(runner), runner.wait_goal_done(skip=runner.finished_at_connect or ()))
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


async def _first_of(*steps: Coroutine[Any, Any, None]) -> None:
    """Run ``steps`` until the first one ends; cancel the others; raise what the first raised."""
    tasks = [asyncio.ensure_future(step) for step in steps]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    for task in done:
        task.result()


async def _stdin(runner: LineRunner) -> None:
    """Run each line of standard input until its end. It is read when the event loop finds it
    readable, never by a thread blocked on it: the session may end first (``--line`` at goal done),
    and a thread blocked on a terminal would keep the process from exiting."""
    loop = asyncio.get_running_loop()
    chunks: asyncio.Queue[bytes] = asyncio.Queue()
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, ValueError, OSError):  # no standard input (closed, or not a file)
        return

    def readable() -> None:
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            loop.remove_reader(fd)
        chunks.put_nowait(data)

    try:
        loop.add_reader(fd, readable)
    except PermissionError:  # a regular file (`< commands.txt`): reading it never waits
        while data := os.read(fd, 65536):
            chunks.put_nowait(data)
        chunks.put_nowait(b"")
    number, pending = 0, b""
    try:
        while True:
            data = await chunks.get()
            pending += data or b"\n"  # (the end ends the last line too)
            *complete, pending = pending.split(b"\n")
            for raw in complete:
                number += 1
                text = raw.decode("utf-8", "replace").strip()
                if text:
                    await runner.run_lines([(f"stdin:{number}", text)], strict=False)
            if not data:
                return
    finally:
        loop.remove_reader(fd)
