"""RUN: a shell command in the worktree, in its own process group, bounded and killable.

The command runs with ``/bin/sh -c`` in the worktree with the turn's environment (the git
safety environment), in a new session (:func:`foreman.procs.start_process`). Its output
(stdout and stderr merged) keeps its head and tail when it is longer than the bound. A timeout
or a cancelled turn kills the whole process tree (:func:`foreman.procs.abort`); processes the
command leaves behind after it exits are killed too.
"""

from __future__ import annotations

import asyncio
import logging
import re
import subprocess
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ... import procs

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


class _HeadTail:
    def __init__(self, limit: int) -> None:
        self.limit = max(200, limit)
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, data: bytes) -> None:
        room = self.limit // 2 - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        self.tail += data
        extra = len(self.tail) - self.limit // 2
        if extra > 0:
            self.dropped += extra
            del self.tail[:extra]

    def text(self) -> str:
        cut = f"\n[... {self.dropped} bytes cut ...]\n" if self.dropped else ""
        return (bytes(self.head).decode("utf-8", "replace") + cut + bytes(self.tail).decode("utf-8", "replace"))


async def run_command(command: str, *, cwd: Path, env: Mapping[str, str] | None, timeout: float,
                      max_output: int = 6000, on_start: Callable[[int], None] | None = None,
                      kill_grace: float = 2.0) -> RunOutcome:
    """Run ``command`` with ``/bin/sh -c`` in ``cwd``.

    Args:
        command: the command line.
        cwd: the worktree.
        env: the full environment (None: inherit).
        timeout: seconds before the tree is killed.
        max_output: bytes of output kept (head and tail halves).
        on_start: called with the pid right after the start (to register it for crash clean-up).
        kill_grace: seconds between SIGTERM and SIGKILL.

    Raises:
        asyncio.CancelledError: the turn was cancelled; the process tree is gone when it
            propagates.
    """
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        # plain Popen + a pidfd wait, not asyncio's subprocess transports, which can hang on
        # CPython 3.11 when cancelled while connecting pipes (python/cpython#125502)
        proc = procs.spawn("/bin/sh", "-c", command, cwd=cwd, env=env, stderr=subprocess.STDOUT)
    except OSError as exc:
        return RunOutcome(None, f"cannot start the command: {exc}", False, 0.0)
    leader = procs.ProcRef.of(proc.pid) or procs.ProcRef(proc.pid, 0.0)
    if on_start is not None:
        on_start(proc.pid)
    sink = _HeadTail(max_output)

    def pump() -> None:
        assert proc.stdout is not None
        while chunk := proc.stdout.read1(65536):
            sink.add(chunk)

    reader = threading.Thread(target=pump, name=f"run-output {proc.pid}", daemon=True)
    reader.start()
    timed_out = False
    try:
        await asyncio.wait_for(procs.wait_exit(proc), timeout)
    except asyncio.TimeoutError:
        timed_out = True
        await procs.abort(leader, grace=kill_grace)
    except BaseException:
        await asyncio.shield(procs.abort(leader, grace=kill_grace))
        raise
    duration = loop.time() - started
    await procs.abort(leader, grace=0.0)  # whatever it left behind in its session
    await asyncio.to_thread(reader.join, 2.0)
    code = await procs.wait_exit(proc)
    if proc.stdout is not None and not reader.is_alive():
        proc.stdout.close()
    logger.debug("run %r exited %s after %.2fs", command, code, duration)
    return RunOutcome(code, sink.text(), timed_out, duration)
