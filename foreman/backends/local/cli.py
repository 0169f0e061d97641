"""``foreman decode`` and ``foreman replay``: look at the decoder without any model.

The lead wires :func:`decode_main` and :func:`replay_main` into the ``foreman`` command; each
takes the arguments after its subcommand and returns the exit code.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from ...argparsing import Parser
from .result import REASONS, DecodeResult
from .textcodec import decode, render_action
from .trace import read_traces, replay


def _parse(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace | int:
    try:
        return parser.parse_args(list(argv))
    except SystemExit as stop:  # argparse prints its own message
        return int(stop.code or 0)


def _decode_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="foreman decode",
        description="Decode one raw model reply with the local backend's text decoder.",
    )
    parser.add_argument("file", help="the raw reply ('-' reads standard input)")
    parser.add_argument("--finish-reason", choices=("stop", "length"), default="stop",
                        help="how the reply ended (length: cut off by max tokens)")
    parser.add_argument("--role", choices=("lead", "worker"), help="drop tools this role may not use")
    parser.add_argument("--json", action="store_true",
                        help='print one object {"actions": [...], "repairs": [...], "dropped": [...], "reason": ...}')
    return parser


def _counts(items: Sequence[str]) -> str:
    counts = Counter(items)
    return ", ".join(name if count == 1 else f"{name} x{count}" for name, count in sorted(counts.items()))


def _print_result(result: DecodeResult) -> None:
    if result.actions:
        print(f"{len(result.actions)} action{'s' * (len(result.actions) != 1)}")
        for action in result.actions:
            print("  " + render_action(action).replace("\n", "\n  "))
    else:
        print(f"no action: {result.reason} ({REASONS.get(result.reason or '', '')})")
    print(f"repairs: {_counts(result.repairs) or 'none'}")
    if result.dropped:
        print(f"dropped: {_counts(result.dropped)}")


def decode_main(argv: Sequence[str]) -> int:
    """Run ``foreman decode <file> [--finish-reason stop|length] [--role R] [--json]``.

    Prints the decoded actions (canonical spelling) or the no-action reason, with the repairs
    applied. Returns 0 when the reply was decoded (actions or not), 1 when the file cannot be
    read, 2 on a usage error.
    """
    args = _parse(_decode_parser(), argv)
    if isinstance(args, int):
        return args
    try:
        raw = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
    except OSError as error:
        print(f"foreman decode: cannot read {args.file}: {error.strerror or error}", file=sys.stderr)
        return 1
    result = decode(raw.decode("utf-8", errors="replace"), args.finish_reason, role=args.role)
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False))
    else:
        _print_result(result)
    return 0


def _replay_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="foreman replay",
        description="Re-decode recorded model replies with the current decoder; contacts no model.",
    )
    parser.add_argument("dir", nargs="?", help="traces directory (default: the profile's traces/)")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    return parser


def _table(title: str, counts: Counter[str], width: int) -> list[str]:
    if not counts:
        return []
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [title, *(f"  {name.ljust(width)}{count:>4}" for name, count in rows)]


def replay_main(argv: Sequence[str], *, default_dir: Path | str | None = None) -> int:
    """Run ``foreman replay [dir] [--json]``.

    Prints how many recorded replies became usable actions, which repairs were applied, the
    no-action reasons, and how many replies now decode differently from when they were
    recorded. Returns 0 on success, 1 when the directory is missing or not given, 2 on a
    usage error.

    Args:
        argv: the arguments after ``replay``.
        default_dir: the directory used when none is given (the profile's ``traces/``).
    """
    args = _parse(_replay_parser(), argv)
    if isinstance(args, int):
        return args
    directory = args.dir or default_dir
    if directory is None:
        print("foreman replay: give a traces directory", file=sys.stderr)
        return 1
    try:
        scan = read_traces(directory)
    except FileNotFoundError as error:
        print(f"foreman replay: {error}", file=sys.stderr)
        return 1
    report = replay(scan.records)
    if args.json:
        print(json.dumps({**report.to_dict(), "files": scan.files, "bad_lines": scan.bad_lines}))
        return 0
    width = 2 + max((len(name) for name in [*report.repairs, *report.reasons, *report.dropped,
                                            *report.guided_reasons]), default=0)
    lines = [
        f"{report.converted} of {report.total} replies converted ({report.rate:.2f}%), {report.repaired} repaired",
        *_table("repairs applied", report.repairs, width),
        *_table("no action", report.reasons, width),
        *_table("dropped", report.dropped, width),
        f"changed since recording: {report.changed}",
    ]
    if report.guided_total:
        lines += [f"guided: {report.guided_converted} of {report.guided_total} replies held code to place "
                  f"({report.guided_rate:.2f}%)",
                  *_table("", report.guided_reasons, width)[1:]]
    if scan.bad_lines:
        lines.append(f"unreadable lines skipped: {scan.bad_lines}")
    print("\n".join(lines))
    return 0
