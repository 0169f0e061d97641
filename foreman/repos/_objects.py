"""Answers of git reads that depend on immutable objects alone, kept for the next ask.

A commit id names its whole history and a tree id its whole content (git's objects are
content-addressed), so ``git merge-base <commit> <commit>`` and ``git ls-tree -r <commit>`` answer
the same every time they are asked with the same full ids in the same repository. The flow asks
them several times per task: the work check, the review and the merge decision each diff the
worktree against its merge base with the base branch's tip; the review and the merge decision
each scan the same tip's files for the risk report. :func:`pure_git` answers a repeated ask from
a small cache (per process, least recently used first out) instead of another git process.

Not kept: a call whose ids are not all full object ids (a ref or an abbreviated id can move), a
failed call, an answer larger than :data:`MAX_ANSWER_BYTES`. What git reads for an id changes only
with a graft, a ``refs/replace/`` ref or a deepened shallow clone; an answer kept from before such
a change is then the old one (a diff's merge base, a file size for the risk scan).
"""

from __future__ import annotations

import os
import re
from collections import OrderedDict

from ._git import Arg, GitResult, git

MAX_ENTRIES = 256
"""Answers kept at most."""
MAX_ANSWER_BYTES = 1024 * 1024
"""An answer (standard output) larger than this is not kept."""
MAX_TOTAL_BYTES = 16 * 1024 * 1024
"""Bytes of answers kept at most (the oldest go first)."""

_FULL_ID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
"""A full SHA-1 (40 hex digits) or SHA-256 (64) object id."""


class _Answers:
    """The kept answers: ``(cwd, args) -> GitResult``, oldest first, bounded in count and bytes."""

    def __init__(self) -> None:
        self.kept: OrderedDict[tuple[str, tuple[str, ...]], GitResult] = OrderedDict()
        self.size = 0

    def get(self, key: tuple[str, tuple[str, ...]]) -> GitResult | None:
        res = self.kept.get(key)
        if res is not None:
            self.kept.move_to_end(key)
        return res

    def put(self, key: tuple[str, tuple[str, ...]], res: GitResult) -> None:
        if len(res.stdout) > MAX_ANSWER_BYTES or key in self.kept:
            return
        self.kept[key] = res
        self.size += len(res.stdout)
        while len(self.kept) > MAX_ENTRIES or self.size > MAX_TOTAL_BYTES:
            _, old = self.kept.popitem(last=False)
            self.size -= len(old.stdout)


_answers = _Answers()


async def pure_git(*args: str, ids: tuple[str, ...], cwd: Arg) -> GitResult:
    """Run ``git <args>`` in ``cwd`` (:func:`~._git.git`, ``check=False``), or return the answer
    the same call gave before (see the module doc).

    Args:
        *args: the git arguments; their answer must depend on the objects ``ids`` name alone.
        ids: the object ids among ``args``; unless each is a full id (40 or 64 lowercase hex
            digits), git runs and nothing is kept.
        cwd: the repository.

    Returns:
        The :class:`~._git.GitResult` (a failed one is never kept).

    Raises:
        GitFailed: git could not be started.
    """
    pure = bool(ids) and all(_FULL_ID.fullmatch(i) for i in ids)
    key = (os.fsdecode(cwd), args)
    if pure and (kept := _answers.get(key)) is not None:
        return kept
    res = await git(*args, cwd=cwd, check=False)
    if pure and res.ok:
        _answers.put(key, res)
    return res


__all__ = ["MAX_ANSWER_BYTES", "MAX_ENTRIES", "MAX_TOTAL_BYTES", "pure_git"]
