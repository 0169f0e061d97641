"""Structured diffs of a worktree or of two commits, as protocol data.

Both functions diff *tree against tree* (never the work tree or an index directly), so the
result does not depend on stat data and nothing in the worktree is written:

* :func:`diff_worktree`: the worktree's whole state (committed, staged, unstaged, untracked;
  ignored files excluded), captured as a tree through a temporary index, against the merge
  base of its HEAD and the base branch;
* :func:`diff_commits`: ``base...head`` - what merging ``head`` into ``base`` would bring;
* :func:`diff_range`: exactly ``old..new`` between two fixed commits, no merge base computed -
  what a decision showed (its ``Diff.base`` and ``Diff.head``), still viewable after the merge.

git is run twice with the same options (``--raw --numstat -z`` and ``-p``), see
:mod:`foreman.repos._diffparse`. The patch is streamed and parsed on a worker thread: a file whose patch passes
``max_file_bytes`` (or any file after ``max_total_bytes``) is summarised with
``truncated=True`` and stats only, so a file of many megabytes costs no memory.
"""

from __future__ import annotations

import logging
import subprocess
import tempfile
from pathlib import Path

from foreman.errors import RepoError
from protocol.diff import Diff

from ._diffparse import PatchParser, build_diff, parse_raw_numstat
from ._git import GitFailed, GitProcess, StrPath, git, rev_parse, rev_parse_all
from ._objects import pure_git
from ._snapshot import snapshot

logger = logging.getLogger(__name__)

MAX_FILE_PATCH_BYTES = 256 * 1024
"""Patch bytes inlined per file; larger files are summarised (stats only)."""
MAX_TOTAL_PATCH_BYTES = 4 * 1024 * 1024
"""Patch bytes inlined per diff; files after that are summarised."""

_CONFIG = (
    "-c", "core.quotePath=off", "-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false",
    "-c", "diff.suppressBlankEmpty=false", "-c", "diff.external=",
)
_OPTIONS = ("--no-color", "--no-ext-diff", "--no-textconv", "--no-relative", "-M", "--ignore-submodules=none")


async def diff_worktree(
    repo_root: StrPath,
    wt_path: StrPath,
    base: str,
    *,
    repo_id: str | None = None,
    max_file_bytes: int = MAX_FILE_PATCH_BYTES,
    max_total_bytes: int = MAX_TOTAL_PATCH_BYTES,
) -> Diff:
    """Diff everything in a worktree against the merge base of its HEAD and ``base``.

    Args:
        repo_root: the registered repository.
        wt_path: the agent's worktree.
        base: the base branch (or commit).
        repo_id: ``Diff.repo`` (default: the repository folder's name).
        max_file_bytes: see :data:`MAX_FILE_PATCH_BYTES`.
        max_total_bytes: see :data:`MAX_TOTAL_PATCH_BYTES`.

    Returns:
        The :class:`~protocol.diff.Diff`; ``base`` is the merge-base commit, ``head`` the
        worktree's HEAD commit when nothing is uncommitted, else the id of the tree that holds
        the uncommitted state.

    Raises:
        WorktreeUnsafe: the worktree's ``.git`` link check failed (no diff is shown).
        RepoError: ``base`` names no commit, or git failed.
    """
    snap = await snapshot(repo_root, wt_path)
    # the base's commit and HEAD's tree in one rev-parse (each alone when that fails: the error names which)
    both = await rev_parse_all(repo_root, f"{base}^{{commit}}", f"{snap.head}^{{tree}}") if snap.head else None
    base_commit = both[0] if both else await _commit(repo_root, base)
    start = base_commit
    if snap.head is not None:
        start = await _merge_base(repo_root, base_commit, snap.head)
    head = snap.tree
    if snap.head is not None and (both[1] if both else (await git("rev-parse", f"{snap.head}^{{tree}}",
                                                                   cwd=repo_root)).text) == snap.tree:
        head = snap.head
    d = await _diff(repo_root, start, snap.tree, repo=repo_id or Path(repo_root).resolve().name, head_label=head,
                    max_file_bytes=max_file_bytes, max_total_bytes=max_total_bytes)
    return d if head == snap.head else d.model_copy(update={"head_kind": "tree"})


async def diff_commits(
    repo_root: StrPath,
    base: str,
    head: str,
    *,
    repo_id: str | None = None,
    max_file_bytes: int = MAX_FILE_PATCH_BYTES,
    max_total_bytes: int = MAX_TOTAL_PATCH_BYTES,
) -> Diff:
    """Diff ``head`` against its merge base with ``base`` (git's ``base...head``).

    Returns:
        The :class:`~protocol.diff.Diff`; ``base`` is the merge-base commit, ``head`` the
        commit ``head`` names.

    Raises:
        RepoError: a revision names no commit, or git failed.
    """
    both = await rev_parse_all(repo_root, f"{base}^{{commit}}", f"{head}^{{commit}}")  # (one call; alone on failure)
    base_commit, head_commit = both or (await _commit(repo_root, base), await _commit(repo_root, head))
    start = await _merge_base(repo_root, base_commit, head_commit)
    return await _diff(repo_root, start, head_commit, repo=repo_id or Path(repo_root).resolve().name,
                       head_label=head_commit, max_file_bytes=max_file_bytes, max_total_bytes=max_total_bytes)


async def diff_range(
    repo_root: StrPath,
    old: str,
    new: str,
    *,
    repo_id: str | None = None,
    max_file_bytes: int = MAX_FILE_PATCH_BYTES,
    max_total_bytes: int = MAX_TOTAL_PATCH_BYTES,
) -> Diff:
    """Diff the fixed commit ``new`` against the fixed commit ``old`` (tree against tree).

    Unlike :func:`diff_commits`, no merge base is computed and no branch is read, so the result
    never changes once both commits exist: give it the ``base`` and ``head`` a merge decision
    recorded and it shows what was merged, before and after the merge.

    Args:
        repo_root: the registered repository.
        old: the base commit (e.g. the decision's ``Diff.base``, a merge-base commit).
        new: the head commit (e.g. the decision's ``Diff.head``). A tree id (a decision of
            ``head_kind="tree"``) is accepted too.

    Returns:
        The :class:`~protocol.diff.Diff` with ``base=old`` and ``head=new`` (full ids).

    Raises:
        RepoError: a revision names no commit (or tree), or git failed.
    """
    old_id = await _commit(repo_root, old)
    new_id = await rev_parse(repo_root, new)
    kind = "commit"
    if new_id is None:
        res = await git("rev-parse", "--verify", "-q", "--end-of-options", f"{new}^{{tree}}", cwd=repo_root, check=False)
        if not res.ok:
            raise RepoError(f"{new!r} names no commit in {repo_root}")
        new_id, kind = res.text, "tree"
    d = await _diff(repo_root, old_id, new_id, repo=repo_id or Path(repo_root).resolve().name, head_label=new_id,
                    max_file_bytes=max_file_bytes, max_total_bytes=max_total_bytes)
    return d if kind == "commit" else d.model_copy(update={"head_kind": "tree"})


async def _commit(repo_root: StrPath, rev: str) -> str:
    commit = await rev_parse(repo_root, rev)
    if commit is None:
        raise RepoError(f"{rev!r} names no commit in {repo_root}")
    return commit


async def _merge_base(repo_root: StrPath, a: str, b: str) -> str:
    # (two commit ids: the answer is theirs alone; the work check, the review and the merge decision ask it in turn)
    res = await pure_git("merge-base", a, b, ids=(a, b), cwd=repo_root)
    return res.text if res.ok and res.text else a  # unrelated histories: diff against the base itself


async def _diff(
    repo_root: StrPath, old: str, new: str, *, repo: str, head_label: str,
    max_file_bytes: int, max_total_bytes: int,
) -> Diff:
    meta = await git(*_CONFIG, "diff", *_OPTIONS, "--raw", "--numstat", "-z", old, new, "--", cwd=repo_root)
    try:
        entries = parse_raw_numstat(meta.stdout)
    except (ValueError, IndexError) as exc:
        raise RepoError(f"could not read git's diff of {old[:12]}..{new[:12]}: {exc}") from exc
    parser = PatchParser(max_file_bytes=max_file_bytes, max_total_bytes=max_total_bytes)
    if entries:
        await _stream_patch(repo_root, ("diff", *_OPTIONS, "-p", "--src-prefix=a/", "--dst-prefix=b/", old, new, "--"),
                            parser, max_line=max_file_bytes)
    return build_diff(repo=repo, base=old, head=head_label, entries=entries, sections=parser.sections)


async def _stream_patch(repo_root: StrPath, args: tuple[str, ...], parser: PatchParser, *, max_line: int) -> None:
    """Run git and feed its output to ``parser`` line by line (in a worker thread), never holding
    a line over ``max_line`` bytes."""

    def feed(proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        pending = b""
        overflow = False
        while chunk := proc.stdout.read(256 * 1024):
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()
            for line in lines:
                parser.feed(line, overflow=overflow)
                overflow = False
            if len(pending) > max_line:
                pending, overflow = b"", True
        if pending:
            parser.feed(pending, overflow=overflow)

    argv = [*_CONFIG, *args]
    with tempfile.TemporaryFile() as err:
        run = GitProcess(argv, repo_root)
        await run.call(feed, stderr=err)
        if run.returncode != 0:
            err.seek(0)
            raise GitFailed(argv, run.returncode, err.read(64 * 1024).decode("utf-8", "replace"))
