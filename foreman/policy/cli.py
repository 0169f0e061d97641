"""``foreman policy``: show what the policy would answer for a command."""

from __future__ import annotations

import argparse
import json
import os
import sys

from ..argparsing import Parser
from ..sandbox import policy_note
from .api import classify_command

#: Exit status of ``foreman policy`` per outcome (2 is a usage error, as argparse gives).
EXIT_CODES = {"allow": 0, "deny": 1, "ask": 3}


def policy_main(argv: list[str]) -> int:
    """Run ``foreman policy [--worktree DIR] [--lead] [--json] [--grant KEY]... [--base BRANCH]... -- '<cmd>'``.

    Prints the outcome, the rule keys an ask would need and the reason (with ``--json``, one
    object ``{"outcome": ..., "keys": [...], "reason": ..., "network": ...}``), and whether the
    command would run in the OS sandbox, with or without the network. The daemon uses the same
    :func:`classify_command`.

    Args:
        argv: the arguments after ``policy``.

    Returns:
        The exit status, so scripts can branch on it: 0 for ``allow``, 1 for ``deny``, 3 for
        ``ask`` (:data:`EXIT_CODES`); 2 for a usage error.
    """
    parser = Parser(prog="foreman policy", description="Classify a shell command as allow, ask or deny.",
                                     epilog="Exit status: 0 allow, 1 deny, 3 ask, 2 usage error.")
    parser.add_argument("--worktree", default=os.getcwd(), help="the agent's worktree (default: current directory)")
    parser.add_argument("--lead", action="store_true", help="classify as the lead (read-only in your checkout)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--grant", action="append", default=[], metavar="KEY", help="a stored rule key (repeatable)")
    parser.add_argument("--base", action="append", default=[], metavar="BRANCH",
                        help="a base branch no stored ref key may move (repeatable; the daemon passes its repos')")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = parser.parse_args(argv)
    words = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not words or not " ".join(words).strip():
        print("foreman policy: error: give a command after --, e.g. foreman policy -- git status; "
              "see `foreman policy --help`", file=sys.stderr)
        return 2
    if not os.path.isdir(args.worktree):  # (the policy reads no file: a worktree to be is fine, but say so)
        print(f"foreman policy: note: --worktree {args.worktree} is not a folder here; paths are judged as if "
              "it were the agent's worktree", file=sys.stderr)
    command = " ".join(words)
    verdict = classify_command(command, worktree=args.worktree, lead=args.lead, granted=args.grant,
                               protected_refs=args.base)
    code = EXIT_CODES[verdict.outcome]
    if args.json:
        print(json.dumps({"outcome": verdict.outcome, "keys": list(verdict.keys), "reason": verdict.reason,
                          "network": verdict.network}))
        return code
    print(verdict.outcome)
    for key in verdict.keys:
        print(f"  key: {key}")
    print(f"  reason: {verdict.reason}")
    if verdict.scope:
        print(f"  {verdict.scope}")
    if verdict.outcome != "deny":  # would it run in the OS sandbox (local RUN, claude Bash, CI)?
        on, line = policy_note(network=verdict.network)
        print(f"  sandbox: {line}")
    return code
