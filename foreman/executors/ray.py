"""The Ray executor: workers' task turns and CI runs on the nodes of a Ray cluster.

Each remote agent is a Ray actor (:class:`~.node.NodeWorker`) placed on a node that has the
resources ``--ray-resources`` asks for (``CPU``, ``memory`` or a custom resource such as
``gpu_box`` declared when the node joined). The daemon stays the one writer: it sends the task's
branch and base as git bundles (:mod:`.bundles`; incremental after the first), answers the
node's Foreman tool calls and permission requests itself (the node waits), and takes every
commit back as a bundle into its own worktree of the task (the agent's branch in the user's
repository). Merges stay in the daemon.

A node lost mid-turn (Ray's actor or node failure, or no heartbeat for three periods) raises
:class:`~foreman.executors.NodeLost`; the flow puts the task back on the board and the next
turn starts on a new actor, from the last commit the daemon received.

Lead turns and turns outside a task worktree run locally (:class:`~foreman.executors.LocalExecutor`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections import deque
from typing import Any, Callable, Mapping

import ray
from ray.exceptions import RayError, RayTaskError

from .. import procs
from ..backends.turns import AgentTools, TurnRequest, TurnResult
from ..errors import BackendError, ForemanError
from ..repos import rev_parse
from ..repos.ci import CIResult
from . import RAY_TOKEN_HINT, ExecutorTools, LocalExecutor, NodeLost, Place, bundles, ray_head_unreachable
from .node import NodeWorker, portable

logger = logging.getLogger(__name__)

FIRST_EVENT_GRACE = 120.0
"""Seconds to wait for a turn's first heartbeat: the node unpacks the bundles first (a large
repository's first bundle takes a while); Ray's failure signals still arrive at once."""

RemoteWorker = ray.remote(NodeWorker)


@dataclasses.dataclass
class _Worker:
    """One agent's actor: its handle, its node (for people) and the commits both sides have."""

    handle: Any
    node: dict[str, str]
    have: set[str] = dataclasses.field(default_factory=set)

    @property
    def label(self) -> str:
        return f"node {self.node.get('node_id', '?')[:8]} ({self.node.get('ip', '?')})"


def _why(exc: BaseException) -> str:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}" + (f": {first[:200]}" if first else "")


def _why_deep(exc: BaseException) -> str:
    """:func:`_why` plus the last line of a remote traceback (the node's own exception, e.g. a
    ``ConfigError`` raised while an actor was built)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    last = lines[-1] if len(lines) > 1 else ""
    return _why(exc) + (f" ... {last[:300]}" if last else "")


async def _wait(ref: Any) -> Any:
    """Await a Ray object ref (a coroutine, for ``asyncio.wait_for`` and tasks)."""
    return await ref


def _map_paths(value: Any, old: str, new: str) -> Any:
    """``value`` with the node's worktree path ``old`` replaced by the daemon's ``new`` in every string."""
    if not old:
        return value
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, dict):
        return {k: _map_paths(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_map_paths(v, old, new) for v in value]
    return value


class RayExecutor:
    """Runs workers' task turns and CI on Ray actors (see the module docstring).

    Args:
        settings: ``ray_address`` (None: start a cluster on this machine), ``ray_resources``
            (``{"gpu_box": 1, "CPU": 1, "memory": 2e9}``), ``ray_heartbeat`` (seconds).

    Attributes:
        placements: the last 1,000 remote turns and CI runs: ``{"what", "agent", "task", "node_id", "bytes_out", "bytes_in"}``.
    """

    name = "ray"

    def __init__(self, settings: Any) -> None:
        self.address = getattr(settings, "ray_address", None)
        self.resources = dict(getattr(settings, "ray_resources", None) or {})
        self.heartbeat = float(getattr(settings, "ray_heartbeat", 5.0))
        self.local = LocalExecutor()
        self.workers: dict[str, _Worker] = {}
        self.runners: dict[str, Any] = {}
        self.placements: deque[dict[str, Any]] = deque(maxlen=1000)
        self._locks: dict[str, asyncio.Lock] = {}
        self._started_ray = False
        self._connecting = asyncio.Lock()

    # ------------------------------------------------------------------ actors
    async def _connect(self) -> None:
        async with self._connecting:  # (two agents' first turns start together: one ray.init)
            if not ray.is_initialized():
                await self._init()

    async def _init(self) -> None:
        """Join (``--ray-address``) or start the Ray cluster.

        Raises:
            BackendError: nobody answers at ``--ray-address`` (a TCP check of a few seconds first:
                ``ray.init`` would retry for minutes), or ``ray.init`` failed.
        """
        unreachable = await asyncio.to_thread(ray_head_unreachable, self.address)
        if unreachable:
            problem, fix = unreachable
            raise BackendError(f"cannot join the Ray cluster of --ray-address {self.address}: {problem}; {fix}")
        kw: dict[str, Any] = {"address": self.address, "log_to_driver": False, "logging_level": logging.WARNING}
        if not self.address:
            kw["include_dashboard"] = False
        try:
            await asyncio.to_thread(ray.init, **kw)
        except Exception as exc:  # noqa: BLE001 - ray raises ConnectionError, RuntimeError ...
            hint = f"; {RAY_TOKEN_HINT}" if self.address else ""
            raise BackendError(f"cannot join the Ray cluster at {self.address or 'this machine'}: {_why(exc)}{hint}") from exc
        self._started_ray = True

    def _options(self) -> dict[str, Any]:
        res = dict(self.resources)
        opts: dict[str, Any] = {"num_cpus": res.pop("CPU", 0), "max_restarts": 0, "max_concurrency": 64}
        if "memory" in res:
            opts["memory"] = res.pop("memory")
        if res:
            opts["resources"] = res
        return opts

    async def _worker(self, agent: str) -> _Worker:
        """The agent's actor, placed on first use (after a loss: a new one, on a node with the resources)."""
        await self._connect()
        async with self._locks.setdefault(agent, asyncio.Lock()):
            w = self.workers.get(agent)
            if w is not None:
                return w
            try:
                handle = RemoteWorker.options(**self._options()).remote(agent, portable(self.runners.get(agent)),
                                                                        self.heartbeat)
                node = await handle.where.remote()
            except RayError as exc:  # (its constructor failed, or no node could take it)
                raise BackendError(f"{agent}'s worker actor did not start on the Ray cluster: {_why_deep(exc)}") from exc
            except Exception as exc:  # noqa: BLE001 - a runner that cannot travel (not picklable ...)
                raise BackendError(f"cannot start {agent}'s worker on the Ray cluster: {_why(exc)}") from exc
            w = self.workers[agent] = _Worker(handle, node)
            logger.info("%s's worker runs on %s", agent, w.label)
            return w

    def _drop(self, agent: str, w: _Worker) -> None:
        if self.workers.get(agent) is w:
            del self.workers[agent]
        try:
            ray.kill(w.handle, no_restart=True)
        except Exception:  # noqa: BLE001 - it is gone already
            pass

    def where(self, agent: str) -> str | None:
        """The node of ``agent``'s actor, for people (None before its first remote turn)."""
        w = self.workers.get(agent)
        return w.label if w else None

    # ------------------------------------------------------------------ transfers
    async def _outgoing(self, w: _Worker, place: Place) -> dict[str, Any]:
        tip = await bundles.head(place.worktree)
        base = await rev_parse(place.repo, f"refs/heads/{place.base}")
        data, refs = await bundles.make_bundle(place.repo, [f"refs/heads/{place.branch}", f"refs/heads/{place.base}"],
                                               w.have)
        wip = await bundles.wip_patch(place.worktree)
        w.have.update(x for x in (tip, base) if x)
        return dataclasses.asdict(bundles.Shipment(tip=tip, bundle=data, wip=wip, base=base, refs=refs))

    async def _incoming(self, w: _Worker, place: Place, ship: Mapping[str, Any]) -> None:
        """Take a node's shipment into the daemon's worktree of the task (the agent's branch)."""
        if place.worktree.resolve() == place.repo.resolve():
            raise BackendError("refusing to update the user's checkout from a node")  # (never a task worktree)
        if ship.get("bundle"):
            await bundles.unbundle(place.repo, ship["bundle"])
        await bundles.settle(place.worktree, ship["tip"], ship.get("wip") or b"")
        w.have.add(ship["tip"])

    async def _next(self, agent: str, w: _Worker, stream: Any, timeout: float) -> dict[str, Any]:
        """The stream's next event; NodeLost when Ray says the actor or node died or no event came in time."""
        try:
            ref = await asyncio.wait_for(stream.__anext__(), timeout=timeout)
            return await ref
        except StopAsyncIteration:
            self._drop(agent, w)
            raise NodeLost(w.label, "its turn ended without a result") from None
        except asyncio.TimeoutError:
            self._drop(agent, w)
            raise NodeLost(w.label, f"no heartbeat for {timeout:.0f} s") from None
        except RayTaskError as exc:  # the node is alive; the Foreman's code failed there (git ...)
            raise BackendError(f"the turn failed on {w.label}: {_why(getattr(exc, 'cause', None) or exc)}") from exc
        except RayError as exc:
            self._drop(agent, w)
            raise NodeLost(w.label, _why(exc)) from exc

    # ------------------------------------------------------------------ the Executor contract
    async def run_turn(self, runner: Any, request: TurnRequest, tools: ExecutorTools, place: Place | None) -> TurnResult:
        """Run a worker's task turn on its actor (any other turn locally). Raises NodeLost."""
        if place is None:
            return await self.local.run_turn(runner, request, tools, place)
        agent = place.agent
        self.runners.setdefault(agent, runner)
        w = await self._worker(agent)
        ship = await self._outgoing(w, place)
        spec = {"turn_id": request.turn_id, "agent": agent, "job": request.job, "prompt": request.prompt,
                "system": request.system, "session_id": request.session_id, "task": place.task, "goal": request.goal,
                "model": request.model, "max_turns": request.max_turns, "branch": place.branch,
                "env": {k: v for k, v in request.env.items() if k == procs.MARKER_ENV}}
        record: dict[str, Any] = {"what": "turn", "agent": agent, "task": place.task, "turn": request.turn_id,
                  "node_id": w.node.get("node_id"), "bytes_out": len(ship["bundle"] or b"") + len(ship["wip"]),
                  "bytes_in": 0, "started": time.monotonic()}
        self.placements.append(record)
        tools.log(f"this turn runs on {w.label}", kind="info")
        if callable(placed := getattr(tools, "placed", None)):
            placed(w.label)
        stream = w.handle.run_turn.remote(spec, ship)
        asks: set[asyncio.Task[Any]] = set()
        resent = False
        sent: set[int] = set()  # messages delivered to the node, not yet confirmed read (they stay unread)
        node_wt, here = "", str(place.worktree)
        timeout = max(3 * self.heartbeat, FIRST_EVENT_GRACE)
        try:
            while True:
                ev = await self._next(agent, w, stream, timeout)
                kind = ev["kind"]
                if kind == "hello":
                    node_wt = str(ev["node"]["root"]) + f"/wt/{place.task}"
                elif kind == "tick":
                    timeout = 3 * self.heartbeat
                elif kind == "unread":  # only what the node confirms is marked read (never lost with it)
                    read = [int(i) for i in ev.get("read") or []]
                    tools.mark_read(read)
                    sent.difference_update(read)
                    if new := [(i, line) for i, line in tools.pending() if i not in sent]:
                        sent.update(i for i, _ in new)
                        w.handle.deliver.remote(request.turn_id, new)
                elif kind == "log":
                    tools.log(_map_paths(ev["text"], node_wt, here), kind=ev["log_kind"])
                elif kind == "activity":
                    tools.activity(ev["state"], _map_paths(ev["activity"], node_wt, here), station=ev["station"])
                elif kind == "session":
                    tools.session_started(ev["session"])
                elif kind == "ask":
                    t = asyncio.ensure_future(self._answer(w, tools, ev, node_wt, here))
                    asks.add(t)
                    t.add_done_callback(asks.discard)
                elif kind == "commit":
                    await self._incoming(w, place, ev["ship"])
                    record["bytes_in"] += len(ev["ship"]["bundle"] or b"")
                elif kind == "full":  # the node lost the history the bundle builds on: send it whole, once
                    if resent:
                        raise BackendError(f"the turn failed on {w.label}: it cannot take the task's history ({ev['why']})")
                    resent = True
                    tools.log(f"{w.label} {ev['why']}; sending it the task's whole history", kind="info")
                    w.have.clear()
                    ship = await self._outgoing(w, place)
                    record["bytes_out"] += len(ship["bundle"] or b"") + len(ship["wip"])
                    stream = w.handle.run_turn.remote(spec, ship)
                    timeout = max(3 * self.heartbeat, FIRST_EVENT_GRACE)
                elif kind == "error":
                    raise BackendError(f"the turn failed on {w.label}: {ev['error']}")
                elif kind == "result":
                    await self._incoming(w, place, ev["ship"])
                    record["bytes_in"] += len(ev["ship"]["bundle"] or b"") + len(ev["ship"]["wip"])
                    record["seconds"] = time.monotonic() - record["started"]
                    if left := ev.get("unread") or []:  # delivered, never read: unread for the next turn
                        tools.log(f"{len(left)} message(s) reached the node after the turn's last read; "
                                  "they stay unread for the agent's next turn", kind="info")
                    return TurnResult(**ev["result"])
        except asyncio.CancelledError:
            await self._recall(w, place, request.turn_id)
            raise
        finally:
            for t in asks:
                t.cancel()

    async def _recall(self, w: _Worker, place: Place, turn_id: str) -> None:
        """An aborted turn (pause, stop, reassign, timeout, shutdown): stop it on its node and take
        back its state, uncommitted work included, so the hand-off commits it as after a local turn.
        A node that does not answer in time keeps only what it sent before (said in the log)."""
        try:
            await asyncio.wait_for(_wait(w.handle.abort.remote(turn_id)), timeout=3 * self.heartbeat + 10)
            ship = await asyncio.wait_for(_wait(w.handle.snapshot.remote(place.task, place.branch)),
                                          timeout=FIRST_EVENT_GRACE)
            await self._incoming(w, place, ship)
        except (asyncio.TimeoutError, RayError, ForemanError) as exc:
            logger.warning("aborted turn %s: its work on %s since its last commit was not recovered (%s)",
                           turn_id, w.label, _why(exc))

    async def _answer(self, w: _Worker, tools: AgentTools, ev: dict[str, Any], node_wt: str, here: str) -> None:
        """Decide an ``ask`` in the daemon (policy, user, core) and send the answer to the waiting node."""
        ok = True
        value: Any = None
        try:
            if ev["what"] == "call":
                # (the node adds the messages it holds and confirms them: none taken here)
                value = await tools.call(ev["name"], _map_paths(ev["args"], node_wt, here), unread=False)
            else:
                value = list(await tools.permit(ev["tool"], _map_paths(ev["args"], node_wt, here)))
        except ForemanError as exc:
            ok, value = False, {"type": type(exc).__name__, "message": exc.message}
        except Exception as exc:  # noqa: BLE001 - a bug must not leave the node waiting for ever
            logger.exception("answering %s for a remote turn failed", ev["what"])
            ok, value = False, {"type": "ForemanError", "message": f"internal error: {type(exc).__name__}: {exc}"}
        try:
            await w.handle.answer.remote(ev["id"], ok, value)
        except RayError as exc:
            logger.warning("could not answer the node (%s); its turn will be reported lost", _why(exc))

    async def run_ci(self, command: list[str] | str, *, place: Place, env: Mapping[str, str], timeout: float,
                     sandbox: Any = None, on_start: Callable[[int], None] | None = None, whole: bool = False) -> Any:
        """Run the task's CI on the agent's actor. ``on_start`` is not called: the process is the
        node's, never one the daemon could find after a restart. ``whole``: this is the second try
        after the node asked for the whole history. Raises NodeLost."""
        agent = place.agent
        w = await self._worker(agent)
        ship = await self._outgoing(w, place)
        spec = {"task": place.task, "agent": agent, "branch": place.branch, "command": command, "timeout": timeout,
                "sandbox": sandbox, "env": {k: v for k, v in env.items() if k == procs.MARKER_ENV}}
        record: dict[str, Any] = {"what": "ci", "agent": agent, "task": place.task, "node_id": w.node.get("node_id"),
                  "bytes_out": len(ship["bundle"] or b"") + len(ship["wip"]), "bytes_in": 0, "started": time.monotonic()}
        self.placements.append(record)
        run = asyncio.ensure_future(_wait(w.handle.run_ci.remote(spec, ship)))
        try:
            while not run.done():  # a CI run streams nothing: its node is pinged every heartbeat
                await asyncio.wait({run}, timeout=self.heartbeat)
                if not run.done():
                    await asyncio.wait_for(_wait(w.handle.where.remote()), timeout=3 * self.heartbeat)
            out = run.result()
        except asyncio.TimeoutError:
            self._drop(agent, w)
            raise NodeLost(w.label, f"no answer to a heartbeat for {3 * self.heartbeat:.0f} s") from None
        except RayTaskError as exc:
            raise BackendError(f"CI failed to run on {w.label}: {_why(getattr(exc, 'cause', None) or exc)}") from exc
        except RayError as exc:
            self._drop(agent, w)
            raise NodeLost(w.label, _why(exc)) from exc
        finally:
            run.cancel()
        if "full" in out:  # its history was gone: once more with all of it (a second time is an error)
            if whole:
                raise BackendError(f"CI failed to run on {w.label}: it cannot take the task's history ({out['full']})")
            logger.info("%s %s; sending it the task's whole history", w.label, out["full"])
            w.have.clear()
            return await self.run_ci(command, place=place, env=env, timeout=timeout, sandbox=sandbox, whole=True)
        record["seconds"] = time.monotonic() - record["started"]
        if "error" in out:
            raise BackendError(f"CI failed to run on {w.label}: {out['error']}")
        return CIResult(**out["result"])

    async def close(self) -> None:
        """Kill this daemon's actors (their folders stay in their nodes' temporary folders); leave a
        cluster this daemon joined, stop one it started."""
        for agent, w in list(self.workers.items()):
            self._drop(agent, w)
        if self._started_ray and ray.is_initialized():
            await asyncio.to_thread(ray.shutdown)
