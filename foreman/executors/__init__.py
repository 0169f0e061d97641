"""Executors: where a turn or a CI run happens.

The conductor's flow (:mod:`foreman.flow.turnwork` and :mod:`foreman.flow.checks`) never starts a
turn or a test command itself: it asks the conductor's :class:`Executor` to run one for a
(task, agent) in a worktree described by a :class:`Place`. Nothing else in the daemon knows
where a turn runs.

* :class:`LocalExecutor` (``--executor local``, the default) runs them in this process, in the
  daemon's worktree: the behaviour the Foreman always had.
* :class:`~foreman.executors.ray.RayExecutor` (``--executor ray``, the ``ray`` extra) runs a
  worker's task turns and CI on the nodes of a Ray cluster; the repository travels as git
  bundles and the daemon stays the one writer (see ``docs/architecture.md``, "Executors").

The lead's turns and turns without a task worktree (chat follow-ups) have no :class:`Place` and
always run locally: they read the user's checkout, which only the daemon's machine has.
"""

from __future__ import annotations

import logging
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol

from ..backends.turns import AgentTools, TurnRequest, TurnResult
from ..errors import BackendError, ConfigError
from ..repos import ci

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Place:
    """Where a task's work lives in the daemon: the repository and the agent's worktree of it.

    Attributes:
        repo: the user's repository (its checkout root).
        worktree: the agent's worktree of the task (under the profile's ``worktrees/``).
        branch: the branch checked out in that worktree (the agent's branch of the task).
        base: the task's base branch.
        agent: the agent's name.
        task: the task id.
    """

    repo: Path
    worktree: Path
    branch: str
    base: str
    agent: str
    task: str


class NodeLost(BackendError):
    """The machine (or the process on it) that ran a turn or a CI run went away mid-way.

    The work committed before the loss is in the daemon (the last branch bundle it received);
    the flow puts the task back on the board to resume it elsewhere.

    Args:
        node: the lost node, for people (``node 3f2a9c01 (10.0.0.7)``).
        why: what showed the loss (Ray's failure signal, a missed heartbeat).
    """

    def __init__(self, node: str, why: str) -> None:
        super().__init__(f"{node} was lost: {why}")
        self.node = node
        self.why = why


class ExecutorTools(AgentTools, Protocol):
    """The tools the flow hands an executor with a turn (:class:`~foreman.backends.tools.DaemonTools`):
    the runner's :class:`~foreman.backends.turns.AgentTools`, and the agent's messages left unread
    until a remote turn's node confirms its runner took them."""

    def pending(self) -> list[tuple[int, str]]:
        """The agent's unread messages as ``(message id, "from: text")``, left unread."""
        ...

    def mark_read(self, ids: list[int]) -> None:
        """Mark the messages ``ids`` read."""
        ...


class Executor(Protocol):
    """Runs turns and CI runs for the conductor (the seam between the flow and where work happens)."""

    name: str

    async def run_turn(self, runner: Any, request: TurnRequest, tools: ExecutorTools, place: Place | None) -> TurnResult:
        """Run one turn with ``runner`` (the agent's :class:`~foreman.backends.turns.TurnRunner`).

        ``place`` is the task's worktree for a worker's task turn, None otherwise. Same contract
        as ``TurnRunner.run_turn`` (never raises for model failures; cancellation aborts).

        Raises:
            NodeLost: the turn's machine went away (remote executors only).
        """
        ...

    async def run_ci(self, command: list[str] | str, *, place: Place, env: Mapping[str, str], timeout: float,
                     sandbox: Any = None, on_start: Callable[[int], None] | None = None) -> Any:
        """Run the task's test command in its worktree and return a :class:`~foreman.repos.ci.CIResult`.

        ``env`` is the daemon's git safety environment for the worktree; a remote executor
        rebuilds the same on its node (its own paths) and keeps the process marker.

        Raises:
            NodeLost: the run's machine went away (remote executors only).
        """
        ...

    def where(self, agent: str) -> str | None:
        """The node ``agent``'s last remote turn ran on, for people; None when local."""
        ...

    async def close(self) -> None:
        """Release actors, connections and temporary files."""
        ...


class LocalExecutor:
    """Runs everything in this process, in the daemon's worktrees (today's behaviour)."""

    name = "local"

    async def run_turn(self, runner: Any, request: TurnRequest, tools: ExecutorTools, place: Place | None) -> TurnResult:
        """Run the turn with the agent's runner here (``place`` is not needed: ``request.cwd`` is the
        worktree); a task turn says on the agent entity that it runs on the daemon's machine."""
        if place is not None and callable(placed := getattr(tools, "placed", None)):
            placed(None)
        return await runner.run_turn(request, tools)

    async def run_ci(self, command: list[str] | str, *, place: Place, env: Mapping[str, str], timeout: float,
                     sandbox: Any = None, on_start: Callable[[int], None] | None = None) -> Any:
        """Run :func:`foreman.repos.ci.run_ci` in the daemon's worktree of ``place``."""
        return await ci.run_ci(command, cwd=place.worktree, env=env, timeout=timeout, sandbox=sandbox,
                               on_start=on_start)

    def where(self, agent: str) -> str | None:
        """Always None: local turns run on the daemon's machine."""
        return None

    async def close(self) -> None:
        """Nothing to release."""
        return None


def from_settings(settings: Any) -> Executor:
    """The executor ``settings.executor`` names (``local`` when the setting is absent).

    Raises:
        ConfigError: ``ray`` without the ray extra installed, saying what to install.
    """
    kind = getattr(settings, "executor", None) or "local"
    if kind == "local":
        return LocalExecutor()
    if kind == "ray":
        try:
            from .ray import RayExecutor  # (the ray extra: an ImportError says which to install)
        except ImportError as exc:
            raise ConfigError(f"--executor ray needs its extra: pip install '.[ray]' in the Foreman checkout ({exc})") from None
        return RayExecutor(settings)
    raise ConfigError(f"unknown executor {kind!r}; use local or ray")


def of(conductor: Any) -> Executor:
    """The conductor's executor, made from its settings on first use."""
    ex = getattr(conductor, "executor", None)
    if ex is None:
        ex = conductor.executor = from_settings(conductor.settings)
    return ex


RAY_DEFAULT_PORT = 6379
"""The port of a Ray head's GCS when an address names none (Ray's ``ray start --head`` default)."""

HEAD_TIMEOUT = 3.0
"""Seconds a TCP connection to the Ray head may take before we say nobody answers."""

RAY_TOKEN_HINT = ("if the head uses Ray's token authentication (a head started where ~/.ray/auth_token "
                  "exists turns it on), start the Foreman with RAY_AUTH_MODE=token and the cluster's token "
                  "in ~/.ray/auth_token or RAY_AUTH_TOKEN")
"""What to check when a head answers but joining it fails: Ray enables token authentication for a
head started on a machine that has a token (``ray start --head``), and a client that joins an
explicit address sends the token only with ``RAY_AUTH_MODE=token`` (Ray's token-auth docs)."""

SIM_IGNORES_EXECUTOR = ("--executor ray applies to the claude and local backends; "
                        "the sim runs its team in the daemon (the executor is not used)")
"""What ``foreman start`` and ``foreman doctor`` say for ``--backend sim --executor ray``."""


def ray_head_unreachable(address: str | None, timeout: float = HEAD_TIMEOUT) -> tuple[str, str] | None:
    """Check with one plain TCP connection that a Ray head answers at ``address``.

    ``ray.init(address=...)`` against a port nobody listens on retries for minutes (and ignores
    SIGTERM meanwhile); this check fails in ``timeout`` seconds instead.

    Args:
        address: ``host:port`` or ``ray://host:port`` (``--ray-address``); ``None``, ``""`` and
            ``auto`` are not checked (Ray finds or starts the cluster itself). A bare host means
            port 6379 (Ray's default head port).
        timeout: seconds for the connection.

    Returns:
        None when something accepts the connection, else ``(problem, fix)``: what is wrong
        (``no Ray head answers at host:port (...)``) and how to fix it (naming ``--ray-address``).
    """
    if not address or address == "auto":
        return None
    hostport = address.split("://", 1)[-1].rstrip("/")
    host, sep, port_text = hostport.rpartition(":")
    if not sep:
        host, port_text = hostport, str(RAY_DEFAULT_PORT)
    host = host.strip("[]") or "127.0.0.1"
    try:
        port = int(port_text)
    except ValueError:
        return (f"--ray-address {address!r} is not host:port", "pass the head's host:port, e.g. --ray-address 127.0.0.1:6379")
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except OSError as exc:
        return (f"no Ray head answers at {hostport} ({exc.strerror or type(exc).__name__})",
                f"start one with `ray start --head --port {port}`, or drop --ray-address to let the "
                f"Foreman start a one-machine cluster")


def preflight(settings: Any) -> None:
    """What ``foreman start`` checks of ``--executor`` before it writes any state.

    ``--executor ray`` with the sim backend logs one warning (:data:`SIM_IGNORES_EXECUTOR`: the
    sim's scripted team never uses an executor) and the start goes on. With ``--ray-address``,
    a head must answer there (:func:`ray_head_unreachable`, a few seconds), else the start stops.

    Raises:
        BackendError: nobody answers at ``--ray-address``; the message names it and the fix.
    """
    if (getattr(settings, "executor", None) or "local") != "ray":
        return
    if getattr(settings, "backend", None) == "sim":
        logger.warning(SIM_IGNORES_EXECUTOR)
        return
    address = getattr(settings, "ray_address", None)
    unreachable = ray_head_unreachable(address)
    if unreachable:
        problem, fix = unreachable
        raise BackendError(f"--ray-address {address}: {problem}; {fix}")
