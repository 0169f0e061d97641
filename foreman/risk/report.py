"""The risk report of a commit in a repository: git edge around the pure :func:`foreman.risk.scan`.

Reads the diff of ``base...head`` (:func:`foreman.repos.diffs.diff_commits`, with limits large
enough that every added line of an ordinary change is read), the blob sizes of the changed
files (``git ls-tree -r -l``) and the old and new content of changed dependency manifests
(``git cat-file blob``), then scans.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from foreman.errors import ForemanError
from foreman.repos import GitFailed, StrPath, default_base_branch, git, pure_git, rev_parse
from foreman.repos.diffs import diff_commits
from protocol.diff import Diff
from protocol.risk import Risk

from . import rules, scan
from .rules import area_from_text

SCAN_FILE_BYTES = 1024 * 1024
"""Patch bytes read per file for the scan (larger files get a ``large_file`` finding)."""
SCAN_TOTAL_BYTES = 64 * 1024 * 1024
"""Patch bytes read per scan."""
MANIFEST_BYTES = 1024 * 1024
"""A manifest version larger than this is not read whole (it is then read line by line)."""
MAX_MANIFESTS = 200
"""At most this many changed manifests are read whole per scan."""


async def blob_sizes(repo_root: StrPath, commit: str, paths: list[str]) -> dict[str, int]:
    """Sizes in bytes of ``paths`` at ``commit`` (paths that are not blobs there are left out).

    Raises:
        RepoError: git failed.
    """
    if not paths:
        return {}
    # (the review and the merge decision each scan the same tip: one listing of that commit serves both)
    res = await pure_git("ls-tree", "-r", "-l", "-z", "--full-tree", commit, ids=(commit,), cwd=repo_root)
    if not res.ok:
        raise GitFailed(["ls-tree", "-r", "-l", "-z", "--full-tree", commit], res.rc,
                        res.stderr.decode("utf-8", "replace"))
    wanted = set(paths)
    sizes: dict[str, int] = {}
    for record in res.stdout.split(b"\0"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        fields = meta.split()
        path = name.decode("utf-8", "replace")
        if path in wanted and len(fields) == 4 and fields[1] == b"blob" and fields[3].isdigit():
            sizes[path] = int(fields[3])
    return sizes


async def _blob(repo_root: StrPath, commit: str, path: str, size: int | None) -> str | None:
    if size is not None and size > MANIFEST_BYTES:
        return None
    res = await pure_git("cat-file", "blob", f"{commit}:{path}", ids=(commit,), cwd=repo_root)
    if not res.ok or len(res.stdout) > MANIFEST_BYTES:
        return None
    return res.stdout.decode("utf-8", "replace")


async def manifest_contents(repo_root: StrPath, diff: Diff, sizes: dict[str, int]) -> dict[str, tuple[str | None, str | None]]:
    """Old (at the merge base) and new (at head) content of the dependency manifests ``diff``
    changes, by path (None: no such version, or too large); at most :data:`MAX_MANIFESTS`.

    Raises:
        RepoError: git could not run.
    """
    out: dict[str, tuple[str | None, str | None]] = {}
    for f in diff.files:
        if len(out) >= MAX_MANIFESTS:
            break
        if f.status == "deleted" or f.binary or not rules.is_manifest(f.path):
            continue
        old_path = f.old_path or f.path
        old = None if f.status == "added" else await _blob(repo_root, diff.base, old_path, None)
        out[f.path] = (old, await _blob(repo_root, diff.head, f.path, sizes.get(f.path)))
    return out


async def default_branch(repo_root: StrPath) -> str:
    """The repository's default branch, whatever is checked out: the branch ``origin/HEAD``
    names (git clone's record of the remote's default) when it exists locally, else ``main``,
    else ``master``, else the branch checked out (:func:`foreman.repos.default_base_branch`).

    Raises:
        RepoError: no such branch and HEAD is detached.
    """
    res = await git("symbolic-ref", "--quiet", "refs/remotes/origin/HEAD", cwd=repo_root, check=False)
    if res.ok and res.text.startswith("refs/remotes/origin/"):
        name = res.text.removeprefix("refs/remotes/origin/")
        if await rev_parse(repo_root, f"refs/heads/{name}"):
            return name
    for name in ("main", "master"):
        if await rev_parse(repo_root, f"refs/heads/{name}"):
            return name
    return await default_base_branch(repo_root)


async def risk_report(repo_root: StrPath, base: str, head: str, *, area: list[str] | None = None,
                      diff: Diff | None = None) -> tuple[Diff, list[Risk]]:
    """Scan what merging ``head`` into ``base`` would bring.

    Args:
        repo_root: the repository.
        base: the branch (or commit) merged into.
        head: the branch or commit to be merged (resolved once: the report is of that commit).
        area: the task's files and folders (see :func:`foreman.risk.area_from_text`).
        diff: the diff of ``base...head`` when the caller just read it, with the scan's limits
            (:data:`SCAN_FILE_BYTES`, :data:`SCAN_TOTAL_BYTES`; the caller's promise: a
            :class:`~protocol.diff.Diff` does not record them): it is scanned as it is, not read
            again. A diff of another commit than the one ``head`` names, or of a worktree's
            tree, is ignored (read again).

    Returns:
        The diff scanned (its ``head`` is the exact commit) and the findings.

    Raises:
        RepoError: a revision names no commit, or git failed.
    """
    if not await _reusable(repo_root, diff, head):
        diff = await diff_commits(repo_root, base, head, repo_id=Path(repo_root).resolve().name,
                                  max_file_bytes=SCAN_FILE_BYTES, max_total_bytes=SCAN_TOTAL_BYTES)
    assert diff is not None
    sizes = await blob_sizes(repo_root, diff.head, [f.path for f in diff.files if f.status != "deleted"])
    contents = await manifest_contents(repo_root, diff, sizes)
    return diff, await asyncio.to_thread(scan, diff, area=area, sizes=sizes, contents=contents)


async def _reusable(repo_root: StrPath, diff: Diff | None, head: str) -> bool:
    """True when ``diff`` is a diff of exactly the commit ``head`` names (not of a worktree's tree)."""
    if diff is None or diff.head_kind != "commit":
        return False
    return diff.head == head or diff.head == await rev_parse(repo_root, head)


async def merge_scan(repo_root: StrPath, base: str, branch: str, *, task_text: str = "",
                     commit: str | None = None, diff: Diff | None = None) -> tuple[str | None, list[Risk]]:
    """Scan merging ``branch`` (or exactly ``commit``, the merge decision's recorded commit) into
    ``base``: the commit scanned (the exact commit to merge, None when the scan failed) and the
    findings; ``task_text`` (the task's title and description) gives the task's area.

    Never raises: a scan that fails (git error) gives one ``low`` finding saying so, so a merge
    decision still opens. ``diff``: see :func:`risk_report`.
    """
    try:
        diff, risks = await risk_report(repo_root, base, commit or f"refs/heads/{branch}",
                                        area=area_from_text(task_text) or None, diff=diff)
    except ForemanError as exc:
        return None, [Risk(kind="outside_area", severity="low", message=f"the risk scan could not run: {exc.message}"[:300])]
    return diff.head, risks


async def merge_risks(repo_root: StrPath, base: str, branch: str, *, task_text: str = "",
                      diff: Diff | None = None) -> list[Risk]:
    """The findings of :func:`merge_scan` (for the lead's review prompt; ``diff``: see :func:`risk_report`)."""
    return (await merge_scan(repo_root, base, branch, task_text=task_text, diff=diff))[1]
