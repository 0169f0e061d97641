"""The node side of a remote executor: one :class:`NodeWorker` per remote agent.

It keeps a bare repository and the agent's task worktrees in its node's temporary folder,
brings them to the daemon's state from the bundles it receives (:mod:`.bundles`), runs the
turn with the same runner code and the same git safety environment the daemon would use, and
streams everything back as plain dicts (events). Foreman tool calls, permission requests and
unread messages go to the daemon through :class:`RemoteTools`: the node asks, the daemon
decides, the node waits for the answer (:meth:`NodeWorker.answer`).

Nothing here imports Ray: :mod:`.ray` wraps the class as an actor; a Kubernetes or SSH
executor could host the same class behind another transport.

Events (``kind`` and fields):

* ``hello`` - ``node`` (:func:`node_info`), at the start of every turn and CI run;
* ``log`` / ``activity`` / ``session`` - what :class:`~foreman.backends.turns.AgentTools` says;
* ``ask`` - ``id``, ``what`` (``call`` or ``permit``) and its arguments; answered through
  :meth:`NodeWorker.answer`;
* ``tick`` - the heartbeat (at least every ``heartbeat`` seconds);
* ``unread`` - ``read``: the ids of the delivered messages the runner just took (the daemon marks
  only those read); the daemon delivers the next ones (:meth:`NodeWorker.deliver`);
* ``commit`` - a :class:`~.bundles.Shipment` (as a dict) after the branch moved;
* ``full`` - ``why``: this node lacks the history the bundle builds on; the daemon sends the
  whole history and starts the turn again (the stream ends here);
* ``result`` - the :class:`~foreman.backends.turns.TurnResult` fields, the final shipment and
  the delivered messages the runner never read (``unread``); or ``error`` (the node is fine,
  the Foreman's own steps failed there).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import itertools
import logging
import os
import shutil
import socket
import tempfile
from pathlib import Path
from typing import Any, AsyncIterator

from .. import errors
from ..backends.prompts import unread_block
from ..backends.turns import TurnRequest, TurnResult
from ..repos import GitFailed, ci, git, rev_parse
from ..repos.gitsafety import safety_env
from . import bundles

logger = logging.getLogger(__name__)


def node_info() -> dict[str, str]:
    """Who this node is: ``{"node_id", "ip", "host", "pid"}`` (``node_id`` from Ray when it runs in Ray)."""
    node_id = ""
    try:
        import ray  # (the ray extra: this module runs without Ray too)

        node_id = ray.get_runtime_context().get_node_id() or ""
    except Exception:  # noqa: BLE001 - outside Ray there is no node id
        pass
    try:
        ip = socket.gethostbyname(socket.gethostname())
    except OSError:
        ip = "?"
    return {"node_id": node_id, "ip": ip, "host": socket.gethostname(), "pid": str(os.getpid())}


class RemoteTools:
    """:class:`~foreman.backends.turns.AgentTools` on a node: every call becomes an event to the
    daemon; ``call`` and ``permit`` wait for the daemon's answer. Paths in arguments are the
    node's; the daemon maps them to its worktree."""

    def __init__(self, agent: str, turn_id: str, emit: Any, ask: Any) -> None:
        self.agent = agent
        self.turn_id = turn_id
        self._emit = emit
        self._ask = ask
        self.inbox: list[tuple[int, str]] = []

    async def call(self, name: str, args: dict[str, Any], *, unread: bool = True) -> str:
        """Run a Foreman tool in the daemon. Raises the daemon's ForemanError subclass with its message.

        The daemon leaves the agent's unread messages out of the result: the ones delivered here
        are added (``unread``) and confirmed read with the next event, so a message is never
        marked read in the daemon before this node handed it to the runner."""
        ok, value = await self._ask("call", name=name, args=args)
        if not ok:
            kind = getattr(errors, str(value.get("type")), None)
            cls = kind if isinstance(kind, type) and issubclass(kind, errors.ForemanError) else errors.ForemanError
            raise cls(str(value.get("message")))
        return str(value) + (unread_block(self.unread()) if unread else "")

    async def permit(self, tool: str, args: dict[str, Any]) -> tuple[bool, str]:
        """Ask the daemon's policy (and the user) whether a built-in tool call may run."""
        ok, value = await self._ask("permit", tool=tool, args=args)
        return bool(value[0]), str(value[1])

    def activity(self, state: str, activity: str, *, station: str | None = None) -> None:
        """Show what the agent does (sent to the daemon)."""
        self._emit({"kind": "activity", "state": state, "activity": activity, "station": station})

    def log(self, text: str, *, kind: str = "text") -> None:
        """Append a line to the agent's log (sent to the daemon)."""
        self._emit({"kind": "log", "text": text, "log_kind": kind})

    def unread(self) -> list[str]:
        """Return and clear the messages the daemon delivered since the last call, and ask the
        daemon for the ones that arrived since (they are here by the runner's next call)."""
        out, self.inbox = self.inbox, []
        self._emit({"kind": "unread", "read": [i for i, _ in out]})
        return [line for _, line in out]

    def session_started(self, session_id: str) -> None:
        """Tell the daemon the backend session id."""
        self._emit({"kind": "session", "session": session_id})

    def track_process(self, pid: int) -> None:
        """Processes on a node are the node's: the runner kills them when the turn ends."""
        logger.debug("turn %s started process %d on this node", self.turn_id, pid)


def portable(runner: Any) -> Any:
    """What to send a node so it runs ``runner``'s code: a recipe that builds a fresh runner
    there (the local backend's runner holds HTTP clients that cannot travel; it is rebuilt from
    its settings and profile), else the runner itself (pickled by Ray)."""
    if runner is not None and getattr(runner, "name", None) == "local" and hasattr(runner, "settings"):
        return functools.partial(_local_runner, runner.settings, _defined_profile(runner))
    return runner


def _defined_profile(runner: Any) -> str | None:
    """The name of the runner's local profile when the settings define it (``local.profiles`` in
    config.json), else None: the node then resolves the same built-in defaults with the same
    ``--url``/``--model`` (the built-in profile's name, ``default``, names no defined profile)."""
    from ..backends.local.profiles import profiles_from  # (the local backend loads only when its runner travels)

    name = getattr(getattr(runner, "profile", None), "name", None)
    defined, _ = profiles_from(getattr(runner.settings, "sections", {}).get("local"))
    return name if name in defined else None


def _local_runner(settings: Any, profile: str | None) -> Any:
    from ..backends.local.runner import LocalRunner  # (the local backend loads only when its runner travels)

    return LocalRunner(settings, profile=profile)


class NeedFull(Exception):
    """This node cannot take the shipment: its repository lacks the history the bundle builds on
    (its temporary folder was cleaned, its repository damaged). It asks the daemon for the whole
    history (a ``full`` event); its own set of known commits is cleared."""


class NodeWorker:
    """One remote agent's worker on a node.

    Args:
        agent: the agent's name.
        runner: the agent's :class:`~foreman.backends.turns.TurnRunner` (pickled to the node,
            or rebuilt there by a callable returning one).
        heartbeat: seconds between heartbeats (``tick`` events).
        root: where the bare repository and the worktrees go (default: a new folder in the
            node's temporary folder).
    """

    def __init__(self, agent: str, runner: Any, heartbeat: float = 5.0, root: str | None = None) -> None:
        self.agent = agent
        self.runner = runner() if callable(runner) and not hasattr(runner, "run_turn") else runner
        self.heartbeat = heartbeat
        self.root = Path(root or tempfile.mkdtemp(prefix=f"foreman-{agent}-"))
        self.repo = self.root / "repo.git"
        self.have: set[str] = set()
        self.turns: dict[str, asyncio.Task[Any]] = {}
        self.tools: dict[str, RemoteTools] = {}
        self.waiting: dict[int, asyncio.Future[Any]] = {}
        self._ids = itertools.count(1)
        self._preflighted = False

    async def where(self) -> dict[str, str]:
        """:func:`node_info` of this node, and this worker's folder."""
        return {**node_info(), "root": str(self.root)}

    async def answer(self, ask_id: int, ok: bool, value: Any) -> None:
        """The daemon's answer to an ``ask`` event (ignored when nobody waits for it any more)."""
        fut = self.waiting.pop(ask_id, None)
        if fut is not None and not fut.done():
            fut.set_result((ok, value))

    async def deliver(self, turn_id: str, messages: list[tuple[int, str]]) -> None:
        """Unread messages ``(id, line)`` for the agent's running turn (its runner picks them up with
        ``unread()``, which confirms their ids to the daemon)."""
        if (t := self.tools.get(turn_id)) is not None:
            t.inbox.extend((int(i), str(line)) for i, line in messages)

    async def abort(self, turn_id: str) -> None:
        """Abort a running turn and wait until its runner stopped (it kills what it started)."""
        if (t := self.turns.get(turn_id)) is not None:
            t.cancel()
            await asyncio.gather(t, return_exceptions=True)

    async def snapshot(self, task: str, branch: str) -> dict[str, Any]:
        """The task's state on this node (new commits and uncommitted work), e.g. after an abort."""
        return await self._shipment(self.root / "wt" / task, branch, wip=True)

    # ------------------------------------------------------------------ state
    async def _broken(self, wt: Path) -> str | None:
        """Why the existing worktree ``wt`` cannot be used (None: it can): its ``.git`` link is
        gone, or git fails there (a corrupt index: ``git status`` reads it, git-status(1))."""
        if not (wt / ".git").is_file():
            return "its .git link is missing"
        try:
            top = (await git("rev-parse", "--show-toplevel", cwd=wt)).text
            await git("status", "--porcelain", "-uno", cwd=wt)
        except GitFailed as exc:
            return f"git fails there ({(str(exc).strip().splitlines() or ['?'])[-1][:200]})"
        if Path(top).resolve() != wt.resolve():
            return f"git sees {top} there instead"
        return None

    async def _sync(self, task: str, branch: str, ship: dict[str, Any]) -> tuple[Path, str | None]:
        """Bring the task's worktree on this node to the daemon's state; return its path and, when
        it was found broken and rebuilt from the bundles this node has, a line saying so."""
        if not self.repo.exists():
            self.root.mkdir(parents=True, exist_ok=True)
            await git("init", "-q", "--bare", self.repo, cwd=self.root)
        try:
            if ship.get("bundle"):
                await bundles.unbundle(self.repo, ship["bundle"])
            missing = [x for x in (ship["tip"], ship.get("base")) if x and not await rev_parse(self.repo, f"{x}^{{commit}}")]
        except GitFailed as exc:
            missing = [(str(exc).strip().splitlines() or ["?"])[-1][:200]]
        if missing:  # start over from the whole history (other tasks' worktrees are rebuilt when found broken)
            self.have.clear()
            shutil.rmtree(self.repo, ignore_errors=True)
            raise NeedFull(f"its repository lacks {', '.join(missing)}")
        self.have.update(x for x in (ship["tip"], ship.get("base")) if x)
        wt = self.root / "wt" / task
        note = None
        if wt.exists() and (why := await self._broken(wt)) is not None:
            shutil.rmtree(wt, ignore_errors=True)
            await git("worktree", "prune", cwd=self.repo)  # (forget its registration, so add can check the branch out again)
            note = f"the worktree of {task} on this node was broken ({why}); rebuilt from the bundles it has"
            logger.warning("%s", note)
        if not (wt / ".git").exists():
            wt.parent.mkdir(parents=True, exist_ok=True)
            await git("worktree", "add", "-q", "-f", "-B", branch, wt, ship["tip"], cwd=self.repo)
        await bundles.settle(wt, ship["tip"], ship.get("wip") or b"")
        return wt, note

    async def _shipment(self, wt: Path, branch: str, *, wip: bool) -> dict[str, Any]:
        tip = await bundles.head(wt)
        data, refs = await bundles.make_bundle(self.repo, [f"refs/heads/{branch}"], self.have)
        self.have.add(tip)
        return dataclasses.asdict(bundles.Shipment(tip=tip, bundle=data, wip=await bundles.wip_patch(wt) if wip else b"",
                                                   refs=refs))

    def _env(self, agent: str, wt: Path, extra: dict[str, str]) -> dict[str, str]:
        return {**safety_env(os.environ, agent=agent, worktree=wt), **extra}

    # ------------------------------------------------------------------ turns
    async def run_turn(self, spec: dict[str, Any], ship: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """Run one turn; yield its events (module docstring), the last one ``result``, or ``error``
        (``error``: the reason) when the Foreman's own steps failed here (git ...): errors travel
        as text, since the Foreman's exception classes are not all picklable."""
        try:
            async for ev in self._turn(spec, ship):
                yield ev
        except Exception as exc:  # noqa: BLE001 - reported to the daemon, which fails the turn
            logger.exception("turn %s failed on this node", spec.get("turn_id"))
            yield {"kind": "error", "error": f"{type(exc).__name__}: {getattr(exc, 'message', None) or exc}"}

    async def _turn(self, spec: dict[str, Any], ship: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        yield {"kind": "hello", "node": await self.where()}
        try:
            wt, note = await self._sync(spec["task"], spec["branch"], ship)
        except NeedFull as exc:
            yield {"kind": "full", "why": str(exc)}
            return
        if note:
            yield {"kind": "log", "text": note, "log_kind": "info"}
        if not self._preflighted:  # the model service as this node sees it
            try:
                await self.runner.preflight()
            except errors.ForemanError as exc:
                yield {"kind": "result", "result": dataclasses.asdict(TurnResult(ok=False, error=exc.message)),
                       "ship": await self._shipment(wt, spec["branch"], wip=True)}
                return
            self._preflighted = True
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

        async def ask(what: str, **fields: Any) -> Any:
            ask_id = next(self._ids)
            fut = asyncio.get_running_loop().create_future()
            self.waiting[ask_id] = fut
            queue.put_nowait({"kind": "ask", "id": ask_id, "what": what, **fields})
            return await fut

        turn_id = spec["turn_id"]
        tools = self.tools[turn_id] = RemoteTools(self.agent, turn_id, queue.put_nowait, ask)
        req = TurnRequest(turn_id=turn_id, agent=spec["agent"], lead=False, job=spec["job"], prompt=spec["prompt"],
                          system=spec["system"], cwd=wt, session_id=spec.get("session_id"), task=spec["task"],
                          goal=spec.get("goal"), model=spec.get("model"), max_turns=spec["max_turns"],
                          env=self._env(spec["agent"], wt, spec.get("env") or {}))
        runner = self.turns[turn_id] = asyncio.ensure_future(self.runner.run_turn(req, tools))
        tip = ship["tip"]
        tick = min(1.0, self.heartbeat)
        try:
            while True:
                getter = asyncio.ensure_future(queue.get())
                await asyncio.wait({getter, runner}, timeout=tick, return_when=asyncio.FIRST_COMPLETED)
                if getter.done():
                    yield getter.result()
                    continue
                getter.cancel()
                if (now := await bundles.head(wt)) != tip:  # a commit: the daemon gets it at once
                    tip = now
                    yield {"kind": "commit", "ship": await self._shipment(wt, spec["branch"], wip=False)}
                if runner.done() and queue.empty():
                    break
                yield {"kind": "tick"}
            try:
                res = runner.result()
            except asyncio.CancelledError:
                res = TurnResult(ok=False, error="aborted", aborted=True)
            except Exception as exc:  # noqa: BLE001 - the daemon reports it like a local runner bug
                logger.exception("turn %s failed on this node", turn_id)
                res = TurnResult(ok=False, error=f"internal error on the node: {type(exc).__name__}: {exc}")
            yield {"kind": "result", "result": dataclasses.asdict(res), "unread": [line for _, line in tools.inbox],
                   "ship": await self._shipment(wt, spec["branch"], wip=True)}
        finally:
            if not runner.done():
                runner.cancel()
                await asyncio.gather(runner, return_exceptions=True)
            self.turns.pop(turn_id, None)
            self.tools.pop(turn_id, None)

    async def run_ci(self, spec: dict[str, Any], ship: dict[str, Any]) -> dict[str, Any]:
        """Run the task's test command in its worktree here; return ``{"node", "result"}`` (CIResult
        fields), or ``{"node", "error"}`` when the Foreman's own steps failed here."""
        try:
            wt, _ = await self._sync(spec["task"], spec["branch"], ship)  # (a rebuild is in the node's log)
            res = await ci.run_ci(spec["command"], cwd=wt, env=self._env(spec["agent"], wt, spec.get("env") or {}),
                                  timeout=spec["timeout"], sandbox=spec.get("sandbox"))
        except NeedFull as exc:
            return {"node": await self.where(), "full": str(exc)}
        except Exception as exc:  # noqa: BLE001 - as text (see run_turn)
            logger.exception("CI of %s failed to run on this node", spec.get("task"))
            return {"node": await self.where(), "error": f"{type(exc).__name__}: {getattr(exc, 'message', None) or exc}"}
        return {"node": await self.where(), "result": dataclasses.asdict(res)}
