"""The repository's commit hooks, run on a commit the Foreman makes for an agent.

``git commit`` runs ``pre-commit`` (no arguments; the index about to be committed is
``$GIT_INDEX_FILE``; it may stage more) and then ``commit-msg`` (one argument: a file holding
the message, which it may edit); a non-zero exit of either refuses the commit (githooks(5)). The
Foreman's own commits of an agent's leftovers are written with ``git commit-tree``, which runs
no hook, so :func:`run_commit_hooks` runs the two the way ``git commit`` would, through
``git hook run`` (git-hook(1), git 2.36+: the hooks folder of ``core.hooksPath`` or
``$GIT_DIR/hooks``, an executable file only):

* in the worktree, with the agent's environment and in the OS sandbox, as the agent's own
  ``git commit`` would run them: a hook is the repository's code, and with ``core.hooksPath``
  inside the worktree the agent can edit it, so it never runs with the daemon's rights (the
  hooks' own folder is kept visible there, read-only, when the sandbox would hide it: a shared
  ``~/.githooks``); a tool a hook calls from a hidden folder (the home folder, ``/tmp``) is
  missing there, and the refusal says so;
* on a temporary index holding exactly the tree to commit, kept in the worktree's own git dir
  (the sandbox lets git write there; its private ``/tmp`` would hide a file from the hook);
* each under a time limit (:data:`COMMIT_HOOK_TIMEOUT`): a hook that hangs is a refusal
  ("timed out after N s"), so a commit never waits for ever.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from foreman.errors import RepoError

from . import ci
from ._git import git, hook_paths

COMMIT_HOOKS = ("pre-commit", "commit-msg")
"""The hooks ``git commit`` runs that can refuse it, in the order it runs them."""

COMMIT_HOOK_TIMEOUT = 300.0
"""Seconds one commit hook may run before it is stopped and counted as a refusal."""

_INDEX = "agentcraft-hooks.index"
_MESSAGE = "AGENTCRAFT_COMMIT_MSG"


@dataclass(frozen=True)
class CommitHooks:
    """How to run the repository's commit hooks for one agent's commit.

    Attributes:
        env: the full environment of the agent's processes
            (:func:`~foreman.repos.gitsafety.safety_env` of its worktree).
        sandbox: the :class:`foreman.sandbox.Sandbox` the agent's commands run in (None: none).
        timeout: seconds each hook may run (:data:`COMMIT_HOOK_TIMEOUT`).
    """

    env: Mapping[str, str]
    sandbox: Any = None
    timeout: float = COMMIT_HOOK_TIMEOUT


@dataclass(frozen=True)
class HooksPassed:
    """What the hooks left to commit.

    Attributes:
        tree: the tree to commit (the given one, or what ``pre-commit`` staged on top of it).
        message: the commit message (as ``commit-msg`` left it).
        ran: the hooks that ran and passed, in order (empty: the repository has none).
    """

    tree: str
    message: str
    ran: tuple[str, ...]


class HookRefused(RepoError):
    """A commit hook of the repository refused the commit (non-zero exit, or its time limit).

    Attributes:
        hook: the hook's name (``pre-commit``).
        output: its output (stdout and stderr), at most :func:`~foreman.repos.ci.run_ci`'s cap.
        timed_out: it was stopped by its time limit.
    """

    def __init__(self, hook: str, output: str, *, why: str, timed_out: bool = False) -> None:
        super().__init__(f"the repository's {hook} hook refused the commit ({why})")
        self.hook = hook
        self.output = output
        self.timed_out = timed_out


async def run_commit_hooks(hooks: CommitHooks, wt: Path, admin: Path, tree: str, message: str) -> HooksPassed:
    """Run ``pre-commit`` then ``commit-msg`` of the repository on a commit of ``tree``.

    Args:
        hooks: the agent's environment, sandbox and the time limit.
        wt: the worktree (resolved); the hooks run there, as ``git commit`` runs them at the top
            of the working tree.
        admin: the worktree's git dir (``<common>/worktrees/<name>``), already link-checked.
        tree: the tree id about to be committed.
        message: the commit message.

    Returns:
        :class:`HooksPassed`: the tree and message to commit and the hooks that ran.

    Raises:
        HookRefused: a hook exited non-zero or ran out of time; nothing is to be committed.
        RepoError: git failed while preparing the hooks' index.
    """
    paths = [Path(p) for p in await hook_paths(wt, COMMIT_HOOKS)]
    present = [p.name for p in paths]
    if not present:
        return HooksPassed(tree, message, ())
    hooks = visible(hooks, paths)
    index, msg_file = admin / _INDEX, admin / _MESSAGE
    pinned = {"GIT_DIR": str(admin), "GIT_WORK_TREE": str(wt), "GIT_INDEX_FILE": str(index)}
    try:
        await git("read-tree", tree, cwd=wt, env=pinned)
        env = {**hooks.env, "GIT_INDEX_FILE": str(index)}
        if "pre-commit" in present:
            await _run(hooks, wt, env, "pre-commit")
            tree = (await git("write-tree", cwd=wt, env=pinned)).text
        if "commit-msg" in present:
            msg_file.write_text(message, encoding="utf-8")
            await _run(hooks, wt, env, "commit-msg", str(msg_file))
            message = msg_file.read_text(encoding="utf-8", errors="replace")
            if not message.strip():
                raise HookRefused("commit-msg", "", why="it left the message empty")
    finally:
        for leftover in (index, msg_file):
            try:
                os.unlink(leftover)
            except FileNotFoundError:
                pass
    return HooksPassed(tree, message, tuple(present))


def visible(hooks: CommitHooks, paths: list[Path]) -> CommitHooks:
    """``hooks`` with the hooks' folders (and the folders their symlinks lead to) kept visible,
    read-only, in its sandbox: a ``core.hooksPath`` under the home folder or ``/tmp``, which the
    sandbox hides, would otherwise be missing there and refuse every commit ("cannot find a hook")
    however the hook would answer."""
    if hooks.sandbox is None:
        return hooks
    folders = {p.parent for p in paths} | {p.resolve().parent for p in paths}
    return replace(hooks, sandbox=replace(hooks.sandbox, read_only=(*hooks.sandbox.read_only, *sorted(folders))))


async def _run(hooks: CommitHooks, wt: Path, env: Mapping[str, str], name: str, *args: str) -> None:
    res = await ci.run_ci(["git", "hook", "run", name, "--", *args], cwd=wt, env=env, timeout=hooks.timeout,
                          sandbox=hooks.sandbox)
    if res.timed_out:
        raise HookRefused(name, res.output, why=f"timed out after {hooks.timeout:g} s", timed_out=True)
    if not res.ok:
        raise HookRefused(name, res.output, why=f"exit {res.exit_code}")


__all__ = ["COMMIT_HOOKS", "COMMIT_HOOK_TIMEOUT", "CommitHooks", "HookRefused", "HooksPassed", "run_commit_hooks"]
