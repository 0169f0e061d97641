"""Non-shell tools (Read, Write, Edit, Glob, Grep, WebFetch, ...) through the same path rules."""

from __future__ import annotations

import os
import posixpath
from typing import Callable, Iterable
from urllib.parse import urlsplit

from .api import classify_command, finish
from .context import Ctx, default_tmpdir
from .secrets import key_material
from .verdict import Verdict
from .winpaths import unresolvable, windows_key_material, windows_reading
from .words import split_glob

_READ_TOOLS = {"Read": "file_path", "NotebookRead": "notebook_path", "LS": "path"}
_WRITE_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
_ALWAYS = frozenset({"TodoWrite", "TodoRead", "BashOutput", "KillShell", "KillBash", "ExitPlanMode", "ListMcpResourcesTool"})
_SUBAGENTS = frozenset({"Task", "Agent"})


def classify_tool(tool: str, args: dict, *, worktree: str, lead: bool = False, granted: Iterable[str] = (),
                  tmpdir: str | None = None, realpath: Callable[[str], str] = os.path.realpath,
                  protected_refs: Iterable[str] = ()) -> Verdict:
    """Classify one tool call a backend wants to make.

    Args:
        tool: the tool name (``Read``, ``Write``, ``Edit``, ``MultiEdit``, ``NotebookEdit``,
            ``Glob``, ``Grep``, ``LS``, ``WebFetch``, ``WebSearch``, ``Bash``, ``Task``, ``mcp__...``).
        args: the tool's input (``file_path``, ``path``, ``pattern``, ``url``, ``command``...).
        worktree: the agent's worktree.
        lead: the caller is the lead (never edits files).
        granted: rule keys stored for this agent.
        tmpdir: the scratch directory (default ``/tmp``).
        realpath: resolves symbolic links.
        protected_refs: the base branches (see :func:`classify_command`).

    Returns:
        The :class:`Verdict`. Paths are confined to the worktree (links that lead out are
        outside; ``<wt>-evil/x`` is outside); outside paths ask with ``Read:``, ``Write:``,
        ``Grep:tree:`` or ``Glob:tree:`` keys; edits of the worktree's ``.git`` link ask
        ``Write:.git:``; the lead's edits and subagents are refused.
    """
    if tool == "Bash":
        cmd = args.get("command")
        if not isinstance(cmd, str):
            return Verdict("deny", (), "Refused: the Bash call has no command.", "")
        return classify_command(cmd, worktree=worktree, lead=lead, granted=granted, tmpdir=tmpdir, realpath=realpath,
                                protected_refs=protected_refs)
    wt = realpath(posixpath.abspath(worktree))
    ctx = Ctx(f"{tool} {args!r}", wt, realpath(tmpdir or default_tmpdir()), lead, realpath)
    if tool in _ALWAYS or tool.startswith("mcp__agentcraft__"):
        return finish(ctx, granted)
    if tool in _SUBAGENTS:
        return Verdict("deny", (), "Refused: agents may not start subagents.", "")
    if tool in _WRITE_TOOLS:
        if lead:
            return Verdict("deny", (), "Refused: the lead works in your checkout and never edits files.", "")
        path = _path_arg(args, _WRITE_TOOLS[tool])
        if path is None:
            return Verdict("deny", (), f"Refused: the {tool} call has no file path.", "")
        real = _resolve(ctx, path)
        secret = _secret(ctx, path, real)
        if secret:
            return Verdict("deny", (), f"Refused: {tool} writes key material: {secret}.", "")
        entry = ctx.git_entry(real) if ctx.inside(real) else None
        if entry == ctx.gitlink:
            ctx.ask(f"Write:.git:{real}", "it edits the worktree's .git link to the repository")
        elif entry is not None:
            ctx.ask(f"Write:.git:{real}", f"it edits {real}, below a .git in the worktree (a nested repository's "
                    "hooks and config run programs, a .git file points git elsewhere)")
        elif not ctx.inside(real) and not ctx.in_tmp(real):
            ctx.ask(f"Write:{real}", f"it edits {real}, outside the worktree")
        return finish(ctx, granted)
    if tool in _READ_TOOLS:
        path = _path_arg(args, _READ_TOOLS[tool]) or (wt if tool == "LS" else None)
        if path is None:
            return Verdict("deny", (), f"Refused: the {tool} call has no path.", "")
        real = _resolve(ctx, path)
        secret = _secret(ctx, path, real) if tool != "LS" else None
        if secret:  # wherever it lies outside the worktree, the scratch directory included
            return Verdict("deny", (), f"Refused: {tool} reads key material: {secret}.", "")
        if not ctx.inside(real) and not ctx.in_tmp(real):
            ctx.ask(f"Read:{real}", f"it reads {real}, outside the worktree")
        return finish(ctx, granted)
    if tool in ("Grep", "Glob"):
        base = _path_arg(args, "path") or wt
        pattern = args.get("pattern") if tool == "Glob" else args.get("glob")
        target = _resolve(ctx, base)
        # Windows-shaped parts as Windows reads them (``C:\\Users``, ``..\\..\\*``): one this
        # machine cannot resolve is outside, whatever the pattern.
        base = windows_reading(base) or base
        if isinstance(pattern, str) and windows_reading(pattern) is not None:
            pattern = windows_reading(pattern)
        if unresolvable(base) or isinstance(pattern, str) and unresolvable(pattern):
            pattern = None
            target = base if unresolvable(base) else str(windows_reading(args.get("pattern") or "") or base)
        if tool == "Glob" and isinstance(pattern, str) and pattern:
            joined = pattern if pattern.startswith("/") else posixpath.join(base if base.startswith("/") else posixpath.join(wt, base), pattern)
            split = split_glob(joined)
            if split is None:
                ctx.ask(f"Glob:tree:{target}", "the pattern climbs with .. after a wildcard")
                return finish(ctx, granted)
            target = realpath(split[0])
        secret = _secret(ctx, _path_arg(args, "path") or wt, target) if tool == "Grep" else None
        if secret:
            return Verdict("deny", (), f"Refused: Grep reads key material: {secret}.", "")
        if not ctx.inside(target) and not ctx.in_tmp(target):
            ctx.ask(f"{tool}:tree:{target}", f"it searches {target}, outside the worktree")
        return finish(ctx, granted)
    if tool == "WebFetch":
        url = args.get("url")
        host = None
        if isinstance(url, str):
            try:
                host = urlsplit(url).hostname
            except ValueError:
                host = None
        if not host:
            return Verdict("deny", (), "Refused: WebFetch needs a URL with a host.", "")
        ctx.ask(f"WebFetch:{host}", f"it fetches a page from {host}")
        return finish(ctx, granted)
    if tool == "WebSearch":
        ctx.ask("WebSearch", "it searches the web")
        return finish(ctx, granted)
    ctx.ask(f"Tool:{tool}", f"{tool} is a tool the policy does not know")
    return finish(ctx, granted)


def _path_arg(args: dict, name: str) -> str | None:
    value = args.get(name)
    return value if isinstance(value, str) and value else None


def _resolve(ctx: Ctx, path: str) -> str:
    """The resolved path a tool's path argument names; a Windows-shaped one as Windows reads it
    (:mod:`.winpaths`): one this machine cannot resolve (``C:\\x``, ``%APPDATA%\\x``) stays as
    that reading, so it is never inside the worktree."""
    win = windows_reading(path)
    if win is not None:
        path = win
        if unresolvable(win):
            return win
    if path.startswith("~"):
        return path  # a home path: never inside the worktree
    joined = path if path.startswith("/") else posixpath.join(ctx.worktree, path)
    return ctx.realpath(joined)


def _secret(ctx: Ctx, path: str, real: str) -> str | None:
    """What a tool's path is when it is key material outside the worktree (Windows-shaped paths
    also as Windows reads them, without case), else None."""
    if ctx.inside(real):
        return None
    found = key_material(real)
    if found is None and windows_reading(path) is not None:
        found = windows_key_material(real) if unresolvable(real) else key_material(real.lower())
    return found
