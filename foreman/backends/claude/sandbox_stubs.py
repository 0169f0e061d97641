"""Keep git away from the stubs the claude CLI's own sandbox mounts in the working directory.

With its sandbox on (Linux, bubblewrap), Claude Code protects a fixed set of paths in the
working directory from writes. Where such a path does not exist, it bind-mounts ``/dev/null``
over it, so every sandboxed Bash command sees character devices named ``.bashrc``,
``.gitconfig``, ``.vscode``, ``.claude/hooks`` ... (2.1.332; the list is built into the CLI, no
setting removes it). git lists them as untracked files, and ``git add -A`` / ``git add .``
fails on them ("can only add regular files, symbolic links or git-directories") and stages
nothing: a worker's commit fails. Upstream: anthropics/claude-code#78419 and
anthropic-experimental/sandbox-runtime#139.

The Foreman gives git in the CLI's commands an excludes file (``core.excludesFile`` through
``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n``, see git-config(1)) that
ignores those paths at the top of the worktree and keeps the user's own global excludes.
Ignoring only affects untracked paths: a tracked ``.vscode/`` stays tracked.
"""

from __future__ import annotations

import functools
import os
import subprocess
import uuid
from collections.abc import Mapping
from pathlib import Path

SANDBOX_STUBS = (".bash_profile", ".bashrc", ".gitconfig", ".gitmodules", ".idea", ".mcp.json", ".profile",
                 ".ripgreprc", ".vscode", ".zprofile", ".zshrc", ".claude/")
"""The top-level paths Claude Code 2.1.332's sandbox stubs in the working directory (seen with
``ls -la`` inside it); ``.claude/`` holds more stubs (``hooks``, ``skills``, ``settings.json``
...) and the CLI's own ``.cc-writes``, and the sandbox refuses writes there anyway. A newer CLI
that stubs more names makes ``tests/claude_cli/test_team_real_cli.py``'s commits fail."""

EXCLUDES_NAME = "git-excludes"


@functools.lru_cache(maxsize=8)
def _global_excludes(home: str, xdg: str) -> str:
    """The text of the user's global excludes file (``core.excludesFile``, else
    ``$XDG_CONFIG_HOME/git/ignore``), or ``""``."""
    try:
        found = subprocess.run(["git", "config", "--global", "--get", "core.excludesFile"], capture_output=True,
                               text=True, timeout=10, env={**os.environ, "HOME": home}).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        found = ""
    if found:
        path = Path(home + found[1:] if found.startswith("~/") else found)
    else:
        path = Path(xdg or Path(home) / ".config") / "git" / "ignore"
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def excludes_file(directory: Path, env: Mapping[str, str]) -> Path:
    """Write the excludes file into ``directory`` (the runner's scratch folder, readable inside the
    sandbox) and return its path: the sandbox's stubs, anchored at the worktree's top, after the
    global excludes of the user whose ``HOME`` / ``XDG_CONFIG_HOME`` ``env`` names."""
    home = env.get("HOME") or os.path.expanduser("~")
    text = _global_excludes(home, env.get("XDG_CONFIG_HOME", ""))
    stubs = "\n".join(f"/{name}" for name in SANDBOX_STUBS)
    path = directory / EXCLUDES_NAME
    content = f"{text.rstrip()}\n# the claude CLI sandbox's stubs (foreman)\n{stubs}\n".lstrip()
    if not path.exists() or path.read_text(encoding="utf-8") != content:
        tmp = directory / f"{EXCLUDES_NAME}.{uuid.uuid4().hex}.tmp"  # turns of one runner start at once
        tmp.write_text(content, encoding="utf-8")
        tmp.replace(path)
    return path


def git_env(env: Mapping[str, str], excludes: Path) -> dict[str, str]:
    """The ``GIT_CONFIG_*`` variables that add ``core.excludesFile=excludes`` after the ones in ``env``
    (the Foreman's safety settings keep their numbers)."""
    count = int(env.get("GIT_CONFIG_COUNT") or 0)
    return {f"GIT_CONFIG_KEY_{count}": "core.excludesFile", f"GIT_CONFIG_VALUE_{count}": str(excludes),
            "GIT_CONFIG_COUNT": str(count + 1)}
