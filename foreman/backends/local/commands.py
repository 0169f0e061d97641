"""RUN: a shell command in the worktree, in its own process group, bounded and killable.

The command runs with ``/bin/sh -c`` in the worktree with the turn's environment (the git
safety environment), in a new session, through the CI runner (:func:`foreman.repos.ci.run_ci`). Its output
(stdout and stderr merged) keeps its head and tail when it is longer than the bound. A timeout
or a cancelled turn kills the whole process tree (:func:`foreman.procs.abort`); processes the
command leaves behind after it exits are killed too.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...repos import ci

logger = logging.getLogger(__name__)

_TEST_RE = re.compile(
    r"(^|[\s/;&|(])(pytest|py\.test|unittest|tox|nox|jest|vitest|mocha|rspec|ctest|phpunit)\b"
    r"|\b(npm|pnpm|yarn|bun)\s+(run\s+)?test\b|\b(cargo|go|mix|dotnet|swift)\s+test\b|\bmake\s+(test|check)\b"
)


def is_test_command(command: str) -> bool:
    """True when ``command`` looks like it runs a test suite (pytest, npm test, go test ...)."""
    return bool(_TEST_RE.search(command))


@dataclass(frozen=True)
class RunOutcome:
    """What a command did.

    Attributes:
        exit_code: its exit status (negative: killed by that signal; None: never started).
        output: merged output, head and tail kept within the bound.
        timed_out: the timeout fired and the tree was killed.
        duration: seconds.
    """

    exit_code: int | None
    output: str
    timed_out: bool
    duration: float


async def run_command(command: str, *, cwd: Path, env: Mapping[str, str] | None, timeout: float,
                      max_output: int = 6000, on_start: Callable[[int], None] | None = None,
                      kill_grace: float = 2.0, sandbox: Any = None, extra_env: Mapping[str, str] | None = None
                      ) -> RunOutcome:
    """Run ``command`` with ``/bin/sh -c`` in ``cwd``.

    Args:
        command: the command line.
        cwd: the worktree.
        env: the full environment (None: inherit).
        timeout: seconds before the tree is killed.
        max_output: bytes of output kept (head and tail halves).
        on_start: called with the pid right after the start (to register it for crash clean-up).
        kill_grace: seconds between SIGTERM and SIGKILL.
        sandbox: the OS sandbox to run in (:class:`foreman.sandbox.Sandbox`; None: unsandboxed).
        extra_env: variables set on top of ``env`` (or of the inherited environment).

    Raises:
        asyncio.CancelledError: the turn was cancelled; the process tree is gone when it
            propagates.
    """
    full = {**(os.environ if env is None else env), **(extra_env or {})}
    res = await ci.run_ci(command, cwd=cwd, env=full, timeout=timeout,
                          max_output_bytes=max_output, kill_grace=kill_grace, on_start=on_start, sandbox=sandbox)
    logger.debug("run %r exited %s after %.2fs", command, res.exit_code, res.duration)
    return RunOutcome(res.exit_code, res.output, res.timed_out, res.duration)
