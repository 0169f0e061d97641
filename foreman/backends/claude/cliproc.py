"""The claude CLI as a process the daemon controls: where it is, its own session, its pid.

The Python SDK spawns the CLI itself and has no spawn hook (no ``start_new_session``), so the
runner hands the SDK a small *session wrapper* as ``cli_path``. The wrapper calls ``setsid()``
(a new session and process group, with the wrapper's pid as their id), asks the kernel to kill
it when the daemon dies (``PR_SET_PDEATHSIG``, Linux), and ``exec``\\ s the real CLI with the same
arguments. ``exec`` keeps the pid, so the pid of the SDK's child is the CLI's pid and the id of
the session holding everything the CLI starts; :func:`foreman.procs.abort` on it ends the
whole tree, orphans included.

The wrapper also tells the runner that pid, publicly: before ``exec`` it writes it to the file
named by ``FOREMAN_CLI_PIDFILE`` (set per turn in the CLI's environment, removed before the CLI
starts). The runner reads it while the SDK is still connecting, so an abort at any moment finds
the process; the SDK's own public copy (``get_server_info()["pid"]``, from the initialize answer)
exists only after the handshake. Nothing here reads the SDK's private transport.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

from ...errors import BackendError
from ...procs import ProcRef

logger = logging.getLogger(__name__)

SDK_HINT = "the claude backend needs claude-agent-sdk: pip install '.[claude]' in the Foreman checkout"

_WRAPPER = '''#!{python} -I
"""Run the claude CLI in a session of its own; written by the Foreman (foreman.backends.claude)."""
import os
import sys

REAL = {real!r}
parent = os.getppid()
pidfile = os.environ.pop("FOREMAN_CLI_PIDFILE", "")
if pidfile:
    with open(pidfile + ".tmp", "w") as fh:
        fh.write(str(os.getpid()))
    os.replace(pidfile + ".tmp", pidfile)
try:
    os.setsid()
except OSError:
    pass  # already a process group leader: the pid still names the group
try:
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
except Exception:
    pass
if os.getppid() != parent:
    sys.exit("the Foreman daemon is gone")
os.execv(REAL, [REAL] + sys.argv[1:])
'''


def require_sdk() -> None:
    """Import claude-agent-sdk (the first import takes about a second).

    Raises:
        BackendError: it is not installed; the message names the extra to install.
    """
    try:
        import claude_agent_sdk  # noqa: F401  (the claude extra: an ImportError says which to install)
    except ImportError as exc:
        raise BackendError(SDK_HINT) from exc


def bundled_cli() -> Path | None:
    """Return the CLI bundled with claude-agent-sdk (``claude_agent_sdk/_bundled/claude``), if any.

    Raises:
        BackendError: claude-agent-sdk is not installed.
    """
    try:
        import claude_agent_sdk  # (the claude extra: an ImportError says which to install)
    except ImportError as exc:
        raise BackendError(SDK_HINT) from exc
    path = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    return path if path.is_file() else None


def find_cli(cli_path: str | None) -> str:
    """Return the real CLI to run: ``cli_path`` if given, else the bundled one, else ``claude`` on PATH.

    The order after ``cli_path`` is the SDK's own (``SubprocessCLITransport._find_cli``).

    Raises:
        BackendError: the CLI is missing or not executable; the message names the fix.
    """
    if cli_path:
        path = Path(cli_path).expanduser()
        if not path.is_file():
            raise BackendError(f"--claude-cli {cli_path}: no such file; point it at the claude executable")
        if not os.access(path, os.X_OK):
            raise BackendError(f"--claude-cli {cli_path} is not executable (chmod +x it)")
        return str(path.resolve())
    bundled = bundled_cli()
    if bundled is not None:
        return str(bundled)
    found = shutil.which("claude")
    if found:
        return found
    raise BackendError("no claude CLI found: reinstall claude-agent-sdk (it bundles one), "
                       "install Claude Code, or pass --claude-cli <path>")


def write_wrapper(real_cli: str, directory: Path) -> Path:
    """Write the session wrapper for ``real_cli`` into ``directory`` and return its path.

    Args:
        real_cli: absolute path of the CLI to exec.
        directory: an existing private directory (the runner's scratch directory).
    """
    path = directory / "claude-session"
    path.write_text(_WRAPPER.format(python=sys.executable, real=real_cli), encoding="utf-8")
    path.chmod(stat.S_IRWXU)
    return path


PIDFILE_ENV = "FOREMAN_CLI_PIDFILE"
"""The environment variable naming the file the wrapper writes the CLI's pid to."""


def spawned_ref(pidfile: Path) -> ProcRef | None:
    """Return the CLI process the wrapper reported in ``pidfile`` (None before it exists, or once gone).

    Args:
        pidfile: the file named in the turn's ``FOREMAN_CLI_PIDFILE``.
    """
    try:
        pid = int(pidfile.read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return None
    return ProcRef.of(pid)


def server_info_pid(info: Any) -> int | None:
    """The CLI's pid from the SDK's public ``ClaudeSDKClient.get_server_info()`` (the initialize
    answer's ``pid``, written by the CLI as ``process.pid``); None when absent."""
    pid = info.get("pid") if isinstance(info, dict) else None
    return pid if isinstance(pid, int) else None


_VERSION = re.compile(r"\d+\.\d+\.\d+")


def cli_version(cli: str | None) -> str | None:
    """Return the claude CLI's version (``2.1.332``), or None when it cannot be told.

    The bundled CLI has it in ``claude.version`` beside the binary (claude-agent-sdk's wheel);
    any other CLI is asked with ``claude --version`` (up to 30 s: a cold start of the native
    binary takes seconds on a busy machine).

    Args:
        cli: the CLI path (``--claude-cli``); None: the one :func:`find_cli` picks.
    """
    try:
        path = Path(find_cli(cli))
    except BackendError:
        return None
    stamp = path.parent / "claude.version"
    text = ""
    if stamp.is_file():
        text = stamp.read_text(encoding="utf-8", errors="replace")
    else:
        try:
            text = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=30,
                                  stdin=subprocess.DEVNULL).stdout
        except (OSError, subprocess.SubprocessError):
            return None
    found = _VERSION.search(text)
    return found.group(0) if found else None
