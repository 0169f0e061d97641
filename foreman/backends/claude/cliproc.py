"""The claude CLI as a process the daemon controls: where it is, its own session, its pid.

The Python SDK spawns the CLI itself and has no spawn hook (no ``start_new_session``), so the
runner hands the SDK a small *session wrapper* as ``cli_path``. The wrapper calls ``setsid()``
(a new session and process group, with the wrapper's pid as their id), asks the kernel to kill
it when the daemon dies (``PR_SET_PDEATHSIG``, Linux), and ``exec``\\ s the real CLI with the same
arguments. ``exec`` keeps the pid, so the pid of the SDK's child is the CLI's pid and the id of
the session holding everything the CLI starts; :func:`foreman.procs.abort` on it ends the
whole tree, orphans included.
"""

from __future__ import annotations

import logging
import os
import shutil
import stat
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
        import claude_agent_sdk  # noqa: F401
    except ImportError as exc:
        raise BackendError(SDK_HINT) from exc


def bundled_cli() -> Path | None:
    """Return the CLI bundled with claude-agent-sdk (``claude_agent_sdk/_bundled/claude``), if any.

    Raises:
        BackendError: claude-agent-sdk is not installed.
    """
    try:
        import claude_agent_sdk
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


def spawned_ref(client: Any) -> ProcRef | None:
    """Return the CLI process of a ``ClaudeSDKClient`` once spawned (None before, or once gone).

    The SDK keeps the child in ``client._transport._process`` (verified for 0.2.189); the same
    pid is in the initialize answer (``get_server_info()["pid"]``), which only exists after the
    handshake.
    """
    transport = getattr(client, "_transport", None)
    process = getattr(transport, "_process", None)
    pid = getattr(process, "pid", None)
    return ProcRef.of(pid) if isinstance(pid, int) else None
