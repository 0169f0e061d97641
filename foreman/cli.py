"""The ``foreman`` command: start, tui, config, doctor, policy, decode, replay, docs, risk, usage.

Only this module (and the CLI entry functions it calls) prints.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import __version__, runtime
from .announce import tui_command
from .argparsing import Parser
from .config import BY_KEY, OPTIONS, Settings, check_paths, resolve
from .errors import ForemanError
from .logs import configure
from .sandbox import describe, from_settings

CONFIG_FLAGS = ("backend", "local_profile")
"""The settings ``foreman config`` takes as flags (besides ``--home`` and ``--profile``): the
backend picks the profile and its config-file section; the local profile is checked as ``start``
checks it. The others come from the environment and the config files it shows."""

DOCTOR_FLAGS = ("backend", "lead_backend", "worker_backend", "workers", "worker_names", "repo", "sandbox", "port",
                "os_sandbox", "claude_cli", "url", "model", "local_profile", "executor", "ray_address", "ray_resources")
"""The settings ``foreman doctor`` checks or needs for a check (foreman/doctor.py): the team's
backends, the repositories whose merge identity counts, the sim's demo folder, the port, the OS
sandbox, the claude CLI, the local endpoint, the Ray cluster."""


def _add_start_options(p: argparse.ArgumentParser, keys: tuple[str, ...] | None = None) -> None:
    """Add ``--home``, ``--profile`` and the flags of the settings ``keys`` (default: every one)."""
    p.add_argument("--home", default=argparse.SUPPRESS, help="state root (default ~/.agentcraft; env AGENTCRAFT_HOME)")
    p.add_argument("--profile", default=argparse.SUPPRESS, help="profile name (default: the backend's name); state lives in <home>/<profile>")
    for opt in OPTIONS:
        if keys is not None and opt.key not in keys:
            continue
        env = f"(env {opt.env})"
        values = "{" + ",".join(opt.choices) + "}" if opt.choices else None  # (argparse's own spelling of choices)
        if opt.kind == "bool":
            p.add_argument(opt.cli, dest=opt.key, action=argparse.BooleanOptionalAction, default=argparse.SUPPRESS,
                           help=f"{opt.help} {env}")
        elif opt.kind == "optional":
            p.add_argument(opt.cli, dest=opt.key, nargs="?", const=opt.const, default=argparse.SUPPRESS,
                           metavar=values, help=f"{opt.help} {env}")
        else:
            shown = "" if opt.default is None or "default" in opt.help else (
                f" (default {','.join(opt.default) if isinstance(opt.default, list) else opt.default})"
                if opt.default not in ([], "") else "")
            p.add_argument(opt.cli, dest=opt.key, default=argparse.SUPPRESS, metavar=values or opt.key.upper(),
                           help=f"{opt.help}{shown} {env}")


def build_parser() -> argparse.ArgumentParser:
    """Return the ``foreman`` argument parser (every subcommand and flag)."""
    parser = Parser(prog="foreman", description="The Foreman: runs a team of coding agents on a real git repository.")
    parser.add_argument("--version", action="version", version=f"foreman {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    start = sub.add_parser("start", help="run the daemon (Ctrl+C or q+Enter stops it)",
                           description="Run the Foreman daemon. Precedence: flag > AGENTCRAFT_* env > <home>/<profile>/config.json > <home>/config.json > default.")
    _add_start_options(start)
    cfg = sub.add_parser("config", help="print the resolved settings and where each came from",
                         description="Print the settings `foreman start` would use and where each came from (flag, "
                         "AGENTCRAFT_* env, the config files, default).")
    _add_start_options(cfg, CONFIG_FLAGS)
    cfg.add_argument("--json", action="store_true", help="print JSON")
    doctor = sub.add_parser("doctor", help="check the environment and say what to fix",
                            description="Check what `foreman start` needs (git, its identity, the OS sandbox, the "
                            "home, the port, the backends' prerequisites) with the settings it would use.")
    _add_start_options(doctor, DOCTOR_FLAGS)
    stop = sub.add_parser("stop", help="stop a running Foreman (as Ctrl+C does: turns end, sessions stay resumable)",
                          description="Stop the Foreman of --profile, or the only one running under the home. Exit "
                          "codes: 0 stopped, 1 none running or still running after --timeout, 2 several run (name one).")
    stop.add_argument("--home", default=argparse.SUPPRESS, help="state root (default: $AGENTCRAFT_HOME or ~/.agentcraft)")
    stop.add_argument("--profile", default=argparse.SUPPRESS, help="the profile whose Foreman to stop")
    stop.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for it to end (default 30)")
    web = sub.add_parser("web", help="print (and open) a one-time login link to the browser view",
                         description="Print a one-time link that logs a browser into the running Foreman's page "
                         "(served on its port), and open it when a desktop is there.")
    web.add_argument("--home", default=argparse.SUPPRESS, help="state root (default: $AGENTCRAFT_HOME or ~/.agentcraft)")
    web.add_argument("--profile", default=argparse.SUPPRESS, help="the profile whose Foreman to open")
    web.add_argument("--no-open", action="store_true", help="print the link only (no browser is started)")
    sub.add_parser("tui", help="the terminal client (see foreman tui --help)", add_help=False)
    sub.add_parser("policy", help="classify a shell command as an agent would be judged (see foreman policy --help)", add_help=False)
    sub.add_parser("decode", help="decode one raw model reply (local backend)", add_help=False)
    sub.add_parser("replay", help="re-decode recorded model replies (local backend)", add_help=False)
    _add_risk_usage_parsers(sub)
    docs = sub.add_parser("docs", help="regenerate docs/protocol.md and docs/protocol.schema.json")
    docs.add_argument("--check", action="store_true", help="fail when the generated files are stale")
    docs.add_argument("--out", default=None, help="docs folder (default: the repository's docs/)")
    return parser


def _passthrough(name: str) -> Callable[[list[str]], int] | None:
    if name == "tui":
        from .tui import tui_main  # (per subcommand: `foreman tui` loads only what it runs)

        return lambda argv: tui_main(argv, parser_class=Parser)
    if name == "policy":
        from .policy import policy_main  # (per subcommand: `foreman policy` loads only what it runs)

        return policy_main
    if name == "decode":
        from .backends.local.cli import decode_main  # (per subcommand: `foreman decode` loads only what it runs)

        return decode_main
    return None


def main(argv: list[str] | None = None) -> int:
    """Run the ``foreman`` command; return the exit code.

    Output piped into a reader that stops early (``foreman risk --json | head``) ends the
    command quietly with 141 (128 + SIGPIPE, as a shell reports it) instead of a traceback; the
    recipe is Python's own (the ``signal`` module's note on SIGPIPE)."""
    try:
        return _main(argv)
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's final flush must not fail again
        return 141


def _main(argv: list[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "replay":
        from .backends.local.cli import replay_main  # (per subcommand: `foreman replay` loads only what it runs)

        try:
            traces = resolve({"backend": "local"}).profile_dir / "traces"
        except ForemanError:
            traces = None
        return replay_main(argv[1:], default_dir=traces)
    if argv and argv[0] in ("tui", "policy", "decode"):
        fn = _passthrough(argv[0])
        assert fn is not None
        return fn(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        if args.command in ("risk", "usage"):
            return _risk_usage_main(args)
        if args.command == "docs":
            from .protodoc import docs_main  # (per subcommand: `foreman docs` loads only what it runs)

            return docs_main(check=args.check, out=Path(args.out) if args.out else None)
        if args.command == "web":
            from .web.command import web_main  # (per subcommand: `foreman web` loads only what it runs)

            return web_main(resolve({k: v for k, v in vars(args).items() if k in ("home", "profile")}),
                            open_browser=not args.no_open)
        if args.command == "stop":
            return _stop(resolve({k: v for k, v in vars(args).items() if k in ("home", "profile")}), args.timeout)
        flags = {k: v for k, v in vars(args).items() if k not in ("command", "json")}
        settings = resolve(flags)
        if args.command in ("config", "doctor"):
            _check_local_profile(settings)
        if args.command == "config":
            return _config(settings, as_json=args.json)
        if args.command == "doctor":
            from .doctor import run_doctor  # (per subcommand: `foreman doctor` loads only what it runs)

            return run_doctor(settings)
        return _start(settings)
    except ForemanError as exc:
        print(f"foreman: {exc.message}", file=sys.stderr)
        return 2


def _add_risk_usage_parsers(sub: Any) -> None:
    risk = sub.add_parser("risk", help="scan what merging a branch or commit would bring (secrets, hooks, CI, dependencies ...)",
                          description="Scan base...REV for merge risks. Exit code 1 when a critical finding is present, 2 on a bad "
                          "revision or when REV is already contained in the base (nothing to scan).")
    risk.add_argument("repo", help="the repository folder")
    risk.add_argument("rev", metavar="BRANCH_OR_COMMIT", help="what would be merged")
    risk.add_argument("--base", default=None, help="the branch merged into (default: the repository's default branch)")
    risk.add_argument("--area", default=None, help="text naming the task's files/folders (files elsewhere are summarised)")
    risk.add_argument("--json", action="store_true", help="print JSON")
    usage = sub.add_parser("usage", help="what the team spent per agent, task and goal (from the store; no daemon needed)")
    usage.add_argument("--home", default=argparse.SUPPRESS, help="state root (default ~/.agentcraft; env AGENTCRAFT_HOME)")
    usage.add_argument("--profile", default=argparse.SUPPRESS,
                       help="profile name (default: the backend's name); its store is read")
    usage.add_argument("--backend", default=argparse.SUPPRESS, metavar="{" + ",".join(BY_KEY["backend"].choices) + "}",
                       help="whose profile to read when --profile is not given (default: the configured backend)")
    usage.add_argument("--json", action="store_true", help="print JSON")


def _risk_usage_main(args: argparse.Namespace) -> int:
    if args.command == "risk":
        return _risk(args)
    from .usage import usage_main  # (per subcommand: `foreman usage` loads only what it runs)

    flags = {k: v for k, v in vars(args).items() if k not in ("command", "json")}
    return usage_main(resolve(flags), as_json=args.json)


def _risk(args: argparse.Namespace) -> int:
    # (per subcommand: `foreman risk` loads only what it runs)
    from .repos import resolve_repo_root
    from .risk import area_from_text, has_critical, summary
    from .risk.report import default_branch, risk_report

    async def run() -> tuple[str, Any, list[Any]]:
        root = await resolve_repo_root(args.repo)
        base = args.base or await default_branch(root)
        return (base, *await risk_report(root, base, args.rev, area=area_from_text(args.area) if args.area else None))

    base, diff, risks = asyncio.run(run())
    if diff.base == diff.head:  # head is base's commit or already in base: an empty diff is no all-clear
        print(f"foreman risk: {args.rev} ({diff.head[:12]}) is already contained in {base}: nothing to scan"
              " (name the branch merged into with --base)", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"base": diff.base, "head": diff.head, "filesChanged": diff.files_changed,
                          "risks": [r.wire() for r in risks]}, indent=2))
    else:
        print(f"{diff.head[:12]} against {diff.base[:12]}: {diff.files_changed} file(s) changed")
        print(summary(risks, limit=200))
    return 1 if has_critical(risks) else 0


def _stop(settings: Settings, timeout: float) -> int:
    """``foreman stop``: SIGTERM the Foreman of the named profile (or the only one running) and
    wait until its profile is free (:mod:`foreman.runtime`); exit 0, 1 or 2 as the help says. A
    Foreman suspended by its terminal (Ctrl+Z) gets SIGCONT after the SIGTERM, so it runs its
    handler and ends as on Ctrl+C (POSIX: a stopped process acts on signals only when continued)."""
    named = settings.sources.get("profile", "default") != "default"
    live = runtime.running(settings.home, settings.profile if named else None)
    where = f"profile {settings.profile!r} in {settings.home}" if named else str(settings.home)
    if not live:
        print(f"foreman stop: no Foreman runs for {where}", file=sys.stderr)
        return 1
    if len(live) > 1:
        names = ", ".join(f"{r.get('profile')} (pid {r['pid']}, port {r.get('port')})" for r in live)
        print(f"foreman stop: several Foremen run in {settings.home}: {names}; name one with --profile", file=sys.stderr)
        return 2
    record = live[0]
    try:
        os.kill(record["pid"], signal.SIGTERM)
        os.kill(record["pid"], signal.SIGCONT)  # one suspended by its terminal (Ctrl+Z) runs on to end
    except ProcessLookupError:
        pass  # it ended meanwhile
    deadline = time.monotonic() + timeout
    while runtime.running(settings.home, record.get("profile")):
        if time.monotonic() > deadline:
            print(f"foreman stop: the Foreman of profile {record.get('profile')!r} (pid {record['pid']}) still runs after "
                  f"{timeout:g} s; its turns may still be ending (kill -9 {record['pid']} forces it)", file=sys.stderr)
            return 1
        time.sleep(0.1)
    print(f"stopped the Foreman of profile {record.get('profile')!r} (pid {record['pid']}, port {record.get('port')})")
    return 0


def _check_local_profile(settings: Settings) -> None:
    """Check the ``local`` section and the chosen local profile as ``start`` would, when the team
    uses the local backend (a section kept for later is not checked).

    Raises:
        ConfigError: names the key and the fix (:func:`foreman.backends.local.profiles.resolve_profile`).
    """
    if "local" in settings.backends_in_use:
        from .backends.local.profiles import resolve_profile  # (a backend loads only when the settings pick it)

        resolve_profile(settings)


def _config(settings: Settings, *, as_json: bool) -> int:
    data = settings.as_json()
    if as_json:
        print(json.dumps(data, indent=2, default=str))
    else:
        for key, item in data.items():
            value = item["value"]  # a list as the flag takes it (--workers 3, --repo a,b), not a Python repr
            shown = ",".join(map(str, value)) if isinstance(value, list) else ("" if value is None else value)
            print(f"{key:24} {shown!s:40} ({item['source']})")
    return 0


def _check_sandbox(settings: Settings) -> None:
    """At start: refuse ``--os-sandbox required`` without a sandbox; say once, as a warning, when
    ``auto`` finds none (one log record: the terminal and foreman.log)."""
    from_settings(settings)  # raises SandboxUnavailable for "required"
    on, line = describe(settings)
    level = logging.WARNING if not on and settings.os_sandbox == "auto" else logging.INFO
    logging.getLogger("foreman.sandbox").log(level, "%s", line)


def _warn_identity(settings: Settings) -> None:
    """Say once, at start, when a real backend's merges would fail for want of an identity."""
    # (per subcommand: `foreman start` loads the doctor's checks only here)
    from .doctor import IDENTITY_FIX, git_identity, identity_places

    if settings.backend == "sim":
        return
    for place in identity_places(settings):
        who, why = git_identity(place)
        if who is None:
            print(f"foreman: warning: git does not know who you are{f' in {place}' if place else ''} ({why}); "
                  f"approved merges will be refused until you set it: {IDENTITY_FIX}", file=sys.stderr)
            return


def _start(settings: Settings) -> int:
    from .daemon import Daemon  # (per subcommand: `foreman start` loads only what it runs)

    check_paths(settings)
    _warn_identity(settings)
    fresh = not settings.profile_dir.exists()
    configure(settings.log_level, settings.profile_dir / "foreman.log")
    try:
        _check_sandbox(settings)
    except ForemanError:
        if fresh:
            _forget_new_profile(settings.profile_dir)
        raise
    daemon = Daemon(settings)
    up: list[bool] = []
    try:
        asyncio.run(_serve(daemon, on_up=lambda: up.append(True)))
    except ForemanError as exc:
        print(f"foreman: {exc.message}", file=sys.stderr)
        if fresh and not up:
            _forget_new_profile(settings.profile_dir)
        return 2
    return 1 if daemon.say.finished == "cancelled" else 0  # (--exit-on-goal-done: a goal was cancelled)


def _forget_new_profile(profile_dir: Path) -> None:
    """After a failed first start, remove what it created in the new profile folder but its log."""
    for child in profile_dir.iterdir() if profile_dir.is_dir() else []:
        if child.name == "foreman.log":
            continue
        if child.is_dir():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)


def connect_hint(settings: Settings, port: int) -> str:
    """The ``foreman tui`` command line that reaches this daemon from another terminal
    (:func:`foreman.announce.tui_command` with ``--port``)."""
    return tui_command(settings, port)


def _in_foreground(fd: int) -> bool:
    """Whether this process is in the foreground process group of the terminal ``fd`` is (a
    background job that reads its terminal is stopped by SIGTTIN: ``foreman start ... &`` froze
    at the first key typed while another command ran, so it never listens there)."""
    try:
        return os.tcgetpgrp(fd) == os.getpgrp()
    except OSError:  # not our controlling terminal
        return False


async def _serve(daemon: Any, on_up: Callable[[], Any] = lambda: None) -> None:
    loop = asyncio.get_running_loop()
    presses = 0

    def say(text: str) -> None:
        try:  # the terminal or a pipe (| tee) may be gone: stopping must not depend on printing
            print(text, file=sys.stderr, flush=True)
        except (OSError, ValueError):
            pass

    def interrupt() -> None:
        nonlocal presses
        presses += 1
        if presses > 1:
            say("\nforced exit")
            os._exit(130)
        say("\nstopping (Ctrl+C again to force)")
        daemon.stopping.set()

    loop.add_signal_handler(signal.SIGINT, interrupt)
    loop.add_signal_handler(signal.SIGTERM, daemon.stopping.set)
    loop.add_signal_handler(signal.SIGHUP, daemon.stopping.set)  # the terminal closed: stop cleanly
    if sys.stdin is not None and sys.stdin.isatty() and _in_foreground(sys.stdin.fileno()):
        fd = sys.stdin.fileno()

        def on_stdin() -> None:
            if not _in_foreground(fd):  # moved to the background (Ctrl+Z, bg): reading would stop us
                loop.remove_reader(fd)
                return
            line = sys.stdin.readline()
            if not line:  # the terminal is gone
                loop.remove_reader(fd)
            elif line.strip().lower() in ("q", "quit"):
                daemon.stopping.set()

        loop.add_reader(fd, on_stdin)
    try:
        await daemon.start()
        on_up()
        say(f"Foreman {daemon.settings.profile} ({daemon.settings.backend}) on ws://127.0.0.1:{daemon.port}  "
            f"- connect with: {connect_hint(daemon.settings, daemon.port)}   (q + Enter or Ctrl+C to stop; a browser: `foreman web`)")
        if daemon.settings.web_lan:
            say(f"warning: --web-lan: listening on every interface (port {daemon.port}); anyone on your network can "
                "reach it; `foreman web` logins are still required, and plain http is not encrypted")
        await daemon.stopping.wait()
    finally:
        await daemon.stop()
