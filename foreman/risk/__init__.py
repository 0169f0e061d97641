"""The merge-risk scan: what merging a commit would bring that a person should see first (pure).

:func:`scan` reads a structured :class:`~protocol.diff.Diff` (``foreman.repos.diffs``) of the
exact commit a merge would bring against its base and returns :class:`~protocol.risk.Risk`
findings, most severe first: secrets and private keys, install-time hooks, CI and automation,
dependency changes, executable bits and symlinks leaving the repository, large or binary files,
and a summary of the files outside the task's area. Only added lines are read for secrets and
hooks (a removed secret is not a new risk). Rules: :mod:`foreman.risk.rules`; secrets:
:mod:`foreman.risk.secrets` (``detect-secrets``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from protocol.diff import Diff, DiffFile
from protocol.risk import Risk, RiskSeverity

from . import manifests, rules
from .rules import area_from_text
from .secrets import scan_lines

__all__ = ["scan", "has_critical", "summary", "area_from_text", "LARGE_FILE_BYTES", "LARGE_FILE_LINES"]

LARGE_FILE_BYTES = 1024 * 1024
"""A file at least this large (when sizes are known) is reported."""
LARGE_FILE_LINES = 20_000
"""A file that adds at least this many lines is reported (when sizes are not known)."""
MAX_FINDINGS = 200
"""At most this many findings are kept (most severe first); a last one says how many more."""

_ORDER: dict[str, int] = {"critical": 0, "high": 1, "medium": 2, "low": 3}
_SYMLINK = "120000"
_EXEC = "100755"


def _added(f: DiffFile) -> Iterator[tuple[int, str]]:
    for hunk in f.hunks:
        for line in hunk.lines:
            if line.op == "+" and line.new is not None:
                yield line.new, line.text


Contents = Mapping[str, tuple[str | None, str | None]]
"""Old and new content of a file by path (None: no such version), when the caller has them."""


def _contents(f: DiffFile, contents: Contents | None) -> tuple[str | None, str] | None:
    """(old, new) content of a manifest: from ``contents``, else a whole added file's lines."""
    if contents is not None and f.path in contents:
        old, new = contents[f.path]
        return (old, new) if new is not None else None
    if f.status == "added" and not f.truncated and f.hunks and all(ln.op == "+" for h in f.hunks for ln in h.lines):
        return None, "\n".join(ln.text for h in f.hunks for ln in h.lines)
    return None


def _manifest_changes(f: DiffFile, contents: Contents | None) -> tuple[dict[str, str], list[str]] | None:
    texts = _contents(f, contents)
    return manifests.changes(f.path, *texts) if texts is not None else None


def _secret_findings(f: DiffFile) -> Iterator[Risk]:
    path = f.path
    if rules.SECRET_FILE.search(path) and not rules.PUBLIC_KEY.search(path):
        yield Risk(kind="secret", severity="critical", path=path, message="a private key or credentials file is added or changed")
    elif rules.ENV_FILE.search(path) and not rules.ENV_TEMPLATE.search(path):
        yield Risk(kind="secret", severity="high", path=path, message="an environment file (.env) is added or changed")
    for hit in scan_lines(path, _added(f)):
        shown = f" ({hit.prefix}...)" if hit.prefix and hit.kind != "Private Key" else ""
        yield Risk(kind="secret", severity=hit.severity, path=path, line=hit.line, message=f"{hit.kind}{shown}")


def _hook_findings(f: DiffFile, parsed: tuple[dict[str, str], list[str]] | None) -> Iterator[Risk]:
    path, name = f.path, rules.basename(f.path)
    if rules.GIT_HOOK_PATH.search(path):
        yield Risk(kind="install_hook", severity="critical", path=path, message="a git hook is added or changed (it runs on commit or checkout)")
        return
    if rules.HOOK_MANAGER_CONFIG.search(path):
        yield Risk(kind="install_hook", severity="high", path=path, message=f"git hook manager configuration changed ({name})")
        return
    if rules.PACKAGE_CONFIG.search(path):
        hit = next(((n, t) for n, t in _added(f) if rules.PACKAGE_CONFIG_CRITICAL.search(t)), None)
        if hit:
            yield Risk(kind="install_hook", severity="critical", path=path, line=hit[0],
                       message=f"package manager configuration sets credentials, a registry or scripts ({name})")
        else:
            yield Risk(kind="install_hook", severity="high", path=path, message=f"package manager configuration changed ({name})")
        return
    if name == "build.rs":
        yield Risk(kind="install_hook", severity="critical", path=path, message="a Cargo build script runs at build time")
        return
    if name == "package.json" and parsed is not None:
        added = list(_added(f))
        for hook in parsed[0]:
            yield Risk(kind="install_hook", severity="critical", path=path, line=manifests.line_of(hook, added),
                       message=f"npm lifecycle script '{hook}' runs on install")
    elif name == "package.json":
        for number, text in _added(f):
            m = rules.NPM_HOOK.match(text)
            if m:
                yield Risk(kind="install_hook", severity="critical", path=path, line=number,
                           message=f"npm lifecycle script '{m[1]}' runs on install")
    elif name in ("setup.py", "pyproject.toml", "setup.cfg"):
        for number, text in _added(f):
            if rules.PY_BUILD_HOOK.search(text):
                yield Risk(kind="install_hook", severity="critical", path=path, line=number,
                           message="Python build/install hook changed (cmdclass or [build-system])")
    elif name.endswith((".sh", "Makefile", ".mk")):
        for number, text in _added(f):
            if rules.HOOKS_PATH_SETTING.search(text):
                yield Risk(kind="install_hook", severity="critical", path=path, line=number, message="sets git's hooks path")


def _other_findings(f: DiffFile, sizes: Mapping[str, int] | None,
                    parsed: tuple[dict[str, str], list[str]] | None = None) -> Iterator[Risk]:
    path = f.path
    if rules.CI_PATH.search(path):
        yield Risk(kind="ci", severity="high", path=path, message=f"CI or automation file {f.status}")
    if f.status != "deleted":
        if rules.is_lock_file(path):
            yield Risk(kind="dependency", severity="medium", path=path,
                       message=f"lock file changed (+{f.additions} -{f.deletions} lines)")
        elif rules.is_manifest(path):
            names: dict[str, int | None] = {}
            if parsed is not None:
                added = list(_added(f))
                names = {dep: manifests.line_of(dep, added) for dep in parsed[1]}
            else:
                for number, text in _added(f):
                    dep = rules.dependency_name(path, text)
                    if dep and dep not in names:
                        names[dep] = number
            if names:
                listed = ", ".join(list(names)[:12]) + (f" and {len(names) - 12} more" if len(names) > 12 else "")
                yield Risk(kind="dependency", severity="medium", path=path, line=next(iter(names.values())),
                           message=f"dependencies added or changed: {listed}")
    if f.new_mode == _EXEC and f.old_mode != _EXEC:
        yield Risk(kind="executable", severity="medium", path=path,
                   message="new executable file" if f.old_mode is None else "made executable")
    if f.new_mode == _SYMLINK:
        target = next((t for _, t in _added(f)), None)
        if target is not None and rules.symlink_escapes(path, target):
            yield Risk(kind="symlink", severity="high", path=path, message=f"symlink points outside the repository: {target[:200]}")
    size = sizes.get(path) if sizes is not None else None
    if f.status != "deleted" and ((size is not None and size >= LARGE_FILE_BYTES) or f.additions >= LARGE_FILE_LINES):
        shown = f"{size / 1024 / 1024:.1f} MB" if size is not None else f"{f.additions} lines"
        yield Risk(kind="large_file", severity="medium", path=path, message=f"large file ({shown})")
    if f.truncated and not f.binary and f.status != "deleted":
        yield Risk(kind="large_file", severity="medium", path=path, message="too large to scan line by line (not read for secrets)")
    if f.binary and f.status != "deleted":
        exe = rules.BINARY_EXEC.search(path) is not None
        yield Risk(kind="binary", severity="medium" if exe else "low", path=path,
                   message="binary executable or archive" if exe else "binary file")


def scan(diff: Diff, *, area: list[str] | None = None, sizes: Mapping[str, int] | None = None,
         contents: Contents | None = None) -> list[Risk]:
    """Scan a diff for merge risks.

    Args:
        diff: the structured diff of the commit to merge against its merge base.
        area: the files/folders the task is about (see :func:`area_from_text`); files outside
            it (and outside test folders) are summarised in one ``outside_area`` finding.
            None or empty: no such finding.
        sizes: blob sizes in bytes by path, when the caller has them (for ``large_file``).
        contents: old and new content of manifests by path, when the caller has them: install
            hooks and dependencies are then read from the parsed files and compared
            (:mod:`foreman.risk.manifests`); without them a new file's added lines are its
            content, and a file that does not parse is read line by line.

    Returns:
        Findings, most severe first, then by path and line; at most :data:`MAX_FINDINGS`
        (a last ``low`` finding counts the rest).
    """
    found: list[Risk] = []
    outside: list[str] = []
    for f in diff.files:
        if f.status == "deleted":
            found.extend(r for r in _other_findings(f, sizes) if r.kind == "ci")
            continue
        found.extend(_secret_findings(f))
        parsed = _manifest_changes(f, contents) if rules.is_manifest(f.path) else None
        found.extend(_hook_findings(f, parsed))
        found.extend(_other_findings(f, sizes, parsed))
        if area and not rules.in_area(f.path, area) and not _is_test_path(f.path):
            outside.append(f.path)
    if outside:
        shown = ", ".join(outside[:5]) + (f" and {len(outside) - 5} more" if len(outside) > 5 else "")
        found.append(Risk(kind="outside_area", severity="low", message=f"{len(outside)} file(s) outside the task's area: {shown}"))
    found.sort(key=lambda r: (_ORDER[r.severity], r.path or "", r.line or 0))
    if len(found) > MAX_FINDINGS:
        rest = len(found) - MAX_FINDINGS + 1
        found = found[:MAX_FINDINGS - 1] + [Risk(kind="outside_area", severity="low", message=f"{rest} more findings not listed")]
    return found


def _is_test_path(path: str) -> bool:
    parts = path.split("/")
    return any(p in ("test", "tests", "__tests__", "spec") for p in parts[:-1]) or parts[-1].startswith("test_")


def has_critical(risks: list[Risk]) -> bool:
    """True when any finding is ``critical`` (the merge then needs an explicit acknowledgement)."""
    return any(r.severity == "critical" for r in risks)


def summary(risks: list[Risk], *, limit: int = 20) -> str:
    """The findings as lines of text (``CRITICAL secret .env:3 AWS Access Key (AKIA...)``)."""
    if not risks:
        return "no risks found"
    lines = []
    for r in risks[:limit]:
        where = f" {r.path}" + (f":{r.line}" if r.line else "") if r.path else ""
        lines.append(f"{r.severity.upper():8} {r.kind}{where} {r.message}")
    if len(risks) > limit:
        lines.append(f"... and {len(risks) - limit} more")
    return "\n".join(lines)


def count_by_severity(risks: list[Risk]) -> dict[RiskSeverity, int]:
    """How many findings of each severity (only those present)."""
    out: dict[RiskSeverity, int] = {}
    for r in risks:
        out[r.severity] = out.get(r.severity, 0) + 1
    return out
