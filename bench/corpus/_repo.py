"""Write one corpus repository: its files and one commit on ``main``.

Git runs with a fixed identity and dates and ignores the user's and the system's git config, so
the start commit is the same on every machine (no global git identity is needed).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

GITIGNORE = "__pycache__/\n*.pyc\n.pytest_cache/\n"


def git_env() -> dict[str, str]:
    """The environment every git call of the corpus runs with."""
    return {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_AUTHOR_NAME": "Corpus", "GIT_AUTHOR_EMAIL": "corpus@example.invalid",
            "GIT_COMMITTER_NAME": "Corpus", "GIT_COMMITTER_EMAIL": "corpus@example.invalid",
            "GIT_AUTHOR_DATE": "2026-01-05T10:00:00Z", "GIT_COMMITTER_DATE": "2026-01-05T10:00:00Z"}


def write_repo(target: str, files: dict[str, str], message: str) -> Path:
    """Write ``files`` (path -> text) under ``target`` and commit them as the first commit of ``main``."""
    root = Path(target)
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in {".gitignore": GITIGNORE, **files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.lstrip("\n"), encoding="utf-8")
    env = git_env()
    for cmd in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", message]):
        subprocess.run(["git", *cmd], cwd=root, env=env, check=True, capture_output=True)
    return root


def main(files: dict[str, str], message: str) -> None:
    """The repo script's entry point: ``python SCRIPT DIR``."""
    if len(sys.argv) != 2:
        raise SystemExit(f"usage: python {sys.argv[0]} DIR")
    write_repo(sys.argv[1], files, message)
