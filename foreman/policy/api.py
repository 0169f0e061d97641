"""The policy's entry point for shell commands: :func:`classify_command`."""

from __future__ import annotations

import logging
import os
import posixpath
from typing import Callable, Iterable

from . import (  # noqa: F401
    gitcmd,
    launchers,
    progs_cd,
    progs_dev,
    progs_files,
    progs_net,
    progs_pkg,
    progs_shell,
    progs_text,
    progs_writes,
    wrappers,
)
from .context import Budget, Ctx, default_tmpdir
from .verdict import Verdict, describe_scope, exact_key
from .walker import fallback_scan, parse, run_block

logger = logging.getLogger(__name__)

#: Commands longer than this (characters) are not analysed: they ask (a visible push still denies).
MAX_CHARS = 8_000
#: Syntax trees with more nodes than this are not analysed either.
MAX_NODES = 6_000

_LEAD_REASON = "the lead works in your checkout and may only run read-only commands without asking"


def classify_command(command: str, *, worktree: str, lead: bool = False, granted: Iterable[str] = (),
                     tmpdir: str | None = None, realpath: Callable[[str], str] = os.path.realpath,
                     protected_refs: Iterable[str] = ()) -> Verdict:
    """Classify one shell command an agent wants to run.

    Args:
        command: the command line as the agent gave it (bash syntax).
        worktree: the agent's worktree (for the lead: the user's checkout).
        lead: the caller is the lead: only read-only commands are allowed without asking.
        granted: rule keys stored for this agent ("always allow"); matched exactly.
        tmpdir: the scratch directory whose files may be used freely (default ``/tmp``).
        realpath: resolves symbolic links; the only filesystem access the policy makes.
        protected_refs: branches only an approved merge may move (the base branches): a
            command that moves, deletes or creates one asks for the exact command, so no stored
            key for a ref command (``update-ref``, ``branch -f/-d``...) ever covers it.

    Returns:
        The :class:`Verdict`. ``deny`` wins over everything; an ``ask`` lists the keys not yet
        granted. Anything that cannot be parsed or verified asks; ``git push`` is always denied.
    """
    wt = realpath(posixpath.abspath(worktree))
    tmp = realpath(tmpdir or default_tmpdir())
    ctx = Ctx(command, wt, tmp, lead, realpath)
    ctx.protected = frozenset(protected_refs)
    if command.strip():
        _analyse(ctx, command)
    return finish(ctx, granted)


def _analyse(ctx: Ctx, command: str) -> None:
    if len(command) > MAX_CHARS:
        ctx.exact(f"the command is longer than {MAX_CHARS} characters, too long to analyse")
        fallback_scan(ctx, parse(command).root_node)
        return
    tree = parse(command)
    root = tree.root_node
    if root.descendant_count > MAX_NODES:
        ctx.exact("the command is too large to analyse")
        fallback_scan(ctx, root)
        return
    if root.has_error:
        ctx.exact("the command cannot be parsed")
        fallback_scan(ctx, root)
    try:
        run_block(ctx, root, (ctx.worktree,), None)
    except (Budget, RecursionError) as exc:
        logger.debug("policy analysis stopped: %s", exc)
        ctx.exact("the command is too complex to analyse")
        fallback_scan(ctx, root)


def finish(ctx: Ctx, granted: Iterable[str]) -> Verdict:
    """Turn what a classification found into a Verdict, taking stored keys into account."""
    if ctx.denies:
        return Verdict("deny", (), _sentence("Refused: " + ctx.denies[0]), "")
    if ctx.lead and ctx.writes:
        ctx.ask(exact_key(ctx.command), _LEAD_REASON)
    granted_set = set(granted)
    missing = {k: r for k, r in ctx.asks.items() if k not in granted_set}
    network = bool(ctx.network)
    if not missing:
        if ctx.asks:
            return Verdict("allow", (), _sentence("Allowed by rules stored for this agent"), "", network)
        where = "the worktree and the scratch directory" if ctx.scratch else "the worktree"
        return Verdict("allow", (), f"Allowed: it stays inside {where} and runs nothing the policy asks about.", "")
    reasons = list(dict.fromkeys(missing.values()))
    reason = "Needs permission: " + "; ".join(reasons[:3]) + ("; ..." if len(reasons) > 3 else "")
    keys = tuple(missing)
    return Verdict("ask", keys, _sentence(reason), "\"Always allow for this agent\" covers: " + describe_scope(keys),
                   network)


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith(".") else text + "."
