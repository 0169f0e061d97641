"""The CI runner: find a repository's test command and run it in a worktree, bounded.

Detection looks at the files a project keeps at its root, most specific first:

=================================  ==========================================================
``package.json`` with a real       ``<pm> test`` - pnpm / yarn / bun from ``packageManager``
``scripts.test``                   or the lock file, else npm (``bun run test``: ``bun test``
                                   would run bun's own runner, not the script)
``Cargo.toml``                     ``cargo test``
``go.mod``                         ``go test ./...``
pytest config or use               ``python -m pytest`` (``pytest.ini``, ``[tool.pytest...]`` in
                                   ``pyproject.toml``, ``[tool:pytest]`` in ``setup.cfg``,
                                   ``[pytest]`` in ``tox.ini``, ``conftest.py``, or a test file
                                   importing pytest)
``tests/`` with unittest files     ``python -m unittest discover``
``Makefile`` with a ``test:``      ``make test``
=================================  ==========================================================

The run happens in its own process group with the environment the caller passes (the git
safety environment), output merged and bounded (head and tail kept), and a timeout that kills
the whole process tree (:func:`foreman.procs.abort`). Processes the command leaves behind
after it exits are killed too.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from foreman import procs

from ..sandbox import RULE_PREFIX
from ._git import StrPath

logger = logging.getLogger(__name__)

_NPM_PLACEHOLDER = "no test specified"
_LOCKS = (("bun.lockb", "bun"), ("bun.lock", "bun"), ("pnpm-lock.yaml", "pnpm"), ("yarn.lock", "yarn"))
_PYTEST_SECTIONS = (("pyproject.toml", "[tool.pytest"), ("setup.cfg", "[tool:pytest]"), ("tox.ini", "[pytest]"))


@dataclass(frozen=True)
class CIResult:
    """The outcome of a CI run.

    Attributes:
        ok: exit code 0 and no timeout.
        exit_code: the command's exit code (negative: killed by that signal; None if it never
            started).
        output: stdout and stderr merged, at most ``max_output_bytes`` (head and tail kept, a
            marker says how much was cut); decoded as UTF-8 with bad bytes replaced.
        duration: seconds from start to exit.
        timed_out: the timeout fired and the tree was killed.
        sandbox_rule: for a failed sandboxed run, the OS sandbox rule its output points at
            (``"read-only file system: outside the worktree (...)"``), else None.
    """

    ok: bool
    exit_code: int | None
    output: str
    duration: float
    timed_out: bool
    sandbox_rule: str | None = None


def _python() -> str:
    return "python" if shutil.which("python") else "python3" if shutil.which("python3") else sys.executable


def _node_command(root: Path) -> list[str] | None:
    try:
        manifest = json.loads((root / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    scripts = manifest.get("scripts") if isinstance(manifest, dict) else None
    test = scripts.get("test") if isinstance(scripts, dict) else None
    if not isinstance(test, str) or not test.strip() or _NPM_PLACEHOLDER in test:
        return None
    manager = str(manifest.get("packageManager", "")).split("@", 1)[0]
    if manager not in ("npm", "pnpm", "yarn", "bun"):
        manager = next((pm for lock, pm in _LOCKS if (root / lock).exists()), "npm")
    return ["bun", "run", "test"] if manager == "bun" else [manager, "test"]


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _imports(path: Path, module: str) -> bool:
    pattern = rf"^\s*(import\s[^#\n]*\b{module}\b|from\s+{module}\b)"
    return re.search(pattern, _read(path), re.MULTILINE) is not None


def _uses_pytest(root: Path) -> bool:
    if (root / "pytest.ini").is_file() or (root / "conftest.py").is_file():
        return True
    if any(marker in _read(root / name) for name, marker in _PYTEST_SECTIONS):
        return True
    tests = root / "tests"
    files = sorted(tests.rglob("test*.py"))[:50] if tests.is_dir() else sorted(root.glob("test_*.py"))[:50]
    return any(_imports(f, "pytest") for f in files)


def _unittest_command(root: Path) -> list[str] | None:
    tests = root / "tests"
    if not tests.is_dir():
        return None
    if not any(_imports(f, "unittest") for f in sorted(tests.rglob("test*.py"))[:50]):
        return None
    cmd = [_python(), "-m", "unittest", "discover"]
    # (no __init__.py: tests/ itself is the top folder; "-t ." would ask unittest to import it as a
    # package, which Python 3.11+ refuses: "Start directory is not importable")
    return cmd if (tests / "__init__.py").is_file() else cmd + ["-s", "tests"]


def _has_make_test(root: Path) -> bool:
    for name in ("GNUmakefile", "makefile", "Makefile"):
        if re.search(r"^test\s*:", _read(root / name), re.MULTILINE):
            return True
    return False


def detect_ci_command(path: StrPath) -> list[str] | str | None:
    """Return the test command for the project at ``path``, or None when none is recognised.

    Args:
        path: the project root (a worktree).

    Returns:
        An argument list (see the module table). A ``str`` is never returned by detection; the
        type allows a user's ``--ci "<cmd>"`` string to flow through the same setting.
    """
    root = Path(path)
    node = _node_command(root)
    if node:
        return node
    if (root / "Cargo.toml").is_file():
        return ["cargo", "test"]
    if (root / "go.mod").is_file():
        return ["go", "test", "./..."]
    if _uses_pytest(root):
        return [_python(), "-m", "pytest"]
    unittest = _unittest_command(root)
    if unittest:
        return unittest
    if _has_make_test(root):
        return ["make", "test"]
    return None


class _HeadTail:
    """Keeps the first and last ``limit // 2`` bytes of a stream and counts the rest (thread-safe)."""

    def __init__(self, limit: int) -> None:
        self.head = bytearray()
        self.tail = bytearray()
        self.cut = 0
        self._half = max(limit // 2, 1)
        self._lock = threading.Lock()

    def add(self, data: bytes) -> None:
        with self._lock:
            room = self._half - len(self.head)
            if room > 0:
                self.head += data[:room]
                data = data[room:]
            self.tail += data
            if len(self.tail) > self._half:
                drop = len(self.tail) - self._half
                self.cut += drop
                del self.tail[:drop]

    def text(self) -> str:
        with self._lock:
            middle = f"\n[... {self.cut} bytes of output cut ...]\n".encode() if self.cut else b""
            return bytes(self.head + middle + self.tail).decode("utf-8", "replace")


def _pump(stream: io.BufferedIOBase, sink: _HeadTail, done: Callable[[], None]) -> None:
    """Copy ``stream`` into ``sink`` until EOF (runs on its own thread), then call ``done``."""
    try:
        while chunk := stream.read1(65536):
            sink.add(chunk)
    except (OSError, ValueError):
        pass
    finally:
        done()


async def run_ci(
    command: list[str] | str,
    *,
    cwd: StrPath,
    env: Mapping[str, str],
    timeout: float,
    max_output_bytes: int = 64_000,
    kill_grace: float = 2.0,
    on_start: Callable[[int], None] | None = None,
    sandbox: Any = None,
) -> CIResult:
    """Run a test command in a worktree and report its result.

    Args:
        command: an argument list, or a user's command line (run with ``/bin/sh -c``).
        cwd: the worktree.
        env: the full environment - pass :func:`~foreman.repos.gitsafety.safety_env`.
        timeout: seconds before the whole process tree is killed.
        max_output_bytes: output kept (head and tail halves).
        kill_grace: seconds between SIGTERM and SIGKILL when killing.
        on_start: called with the leader's pid right after the start (to record it for crash
            clean-up).
        sandbox: a :class:`foreman.sandbox.Sandbox` to run the command in (None: unsandboxed);
            a failure it caused gets a hint line naming the rule (:func:`foreman.sandbox.explain`).

    Returns:
        The :class:`CIResult`. A command that cannot start gives ``ok=False``,
        ``exit_code=None`` and the reason as output. If the calling task is cancelled, the
        tree is killed before the cancellation propagates.
    """
    argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
    shown = command if isinstance(command, str) else shlex.join(argv)  # the log names the command, not the sandbox's
    if sandbox is not None:
        argv = sandbox.wrap(argv, worktree=cwd, env=env)
        logger.debug("ci %s runs as %s", shown, argv)
    sink = _HeadTail(max_output_bytes)
    started = time.monotonic()
    try:
        popen = procs.spawn(*argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except OSError as exc:
        return CIResult(False, None, f"cannot start {argv[0]}: {exc}", 0.0, False)
    leader = procs.ProcRef.of(popen.pid) or procs.ProcRef(popen.pid, 0.0)
    if on_start is not None:
        on_start(popen.pid)
    loop = asyncio.get_running_loop()
    drained = asyncio.Event()
    assert popen.stdout is not None
    def drained_soon() -> None:
        try:
            loop.call_soon_threadsafe(drained.set)
        except RuntimeError:  # the loop closed first (the run was cancelled): nobody waits any more
            pass

    pump = threading.Thread(target=_pump, args=(cast(io.BufferedIOBase, popen.stdout), sink, drained_soon),
                            name=f"ci-output-{popen.pid}", daemon=True)
    pump.start()
    timed_out = False
    try:
        await asyncio.wait_for(procs.wait_exit(popen), timeout)
    except TimeoutError:
        timed_out = True
        await procs.abort(popen, grace=kill_grace)
    except BaseException:
        await asyncio.shield(procs.abort(popen, grace=kill_grace))
        raise
    duration = time.monotonic() - started
    await procs.abort(leader, grace=0.0)  # what it left behind in its session
    try:
        await asyncio.wait_for(drained.wait(), 2.0)
    except TimeoutError:
        logger.warning("output of %s still open after the run (a process left its session)", argv[0])
    else:
        popen.stdout.close()
    code = await procs.wait_exit(popen)
    logger.info("ci %r exited %s after %.1fs%s%s", shown, code, duration, " (timeout)" if timed_out else "",
                " in the OS sandbox" if sandbox is not None else "")
    output = sink.text()
    hint = None
    if sandbox is not None and code != 0 and not timed_out:
        hint = sandbox.explain(output, home=env.get("HOME"))
        output += f"\n{RULE_PREFIX}{hint}\n" if hint else ""
    return CIResult(code == 0 and not timed_out, code, output, duration, timed_out, hint)
