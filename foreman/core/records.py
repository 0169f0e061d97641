"""The flow's records: a task's life as typed data beside the wire entities.

The wire entities (:mod:`protocol`) say what clients see; these records say what the flow needs
to carry a task through plan, work, CI, review, merge, hand-off and retirement, and to pick it up
again after a restart. They are never sent to clients. Each kind is a table in the store
(``records``: kind, id, json); the core changes them only through
:class:`~foreman.core.flowrules.RecordRules`, which checks their state changes against the tables
of :mod:`foreman.core.rules`.

| kind | id | what it is |
| --- | --- | --- |
| ``session`` | ``agent:task`` / ``agent:goal`` / ``agent:chat`` | an agent's backend session on one job, and its turn's state |
| ``worktree`` | ``agent-task`` | a task's worktree: folder, branch, base, and whether it is retired |
| ``handoff`` | task id | where a task's next worker starts (the previous worker's branch) |
| ``merge`` | decision id | the exact commit a merge decision shows and merges, and its base |
| ``taskflow`` | task id | per-task counters of the flow (nudged, CI retried, node losses) |
| ``queued`` | ``agent:n`` | a turn waiting for its agent's current one |
| ``process`` | ``turn:pid`` | a process a turn started (pid + creation time), killed after a crash |
| ``marker`` | turn id | the environment marker every process of a turn carries |
| ``ci`` | task id | the task's last CI run: running, passed, failed or timed out |

Homes made before these records kept the same facts in untyped ``meta`` keys;
:func:`from_meta` converts them (the store's schema upgrade 2 -> 3 calls it).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

JobKind = Literal["plan", "work", "review", "followup"]
"""A turn's job: ``plan`` a goal, ``work`` on a task, ``review`` a task, ``followup`` (a message,
a nudge, a CI failure, requested changes)."""
SessionState = Literal["running", "interrupted", "aborted", "done", "failed"]
"""``running``: a turn runs it (or ran it when the daemon died: resumed at start);
``interrupted``: paused, resumed by ``/resume``; ``aborted``: stopped, the task moved on;
``done`` / ``failed``: its last turn ended so."""
WorktreeState = Literal["active", "retiring", "removed", "kept"]
"""``active``: in use (or kept for a retry); ``retiring``: its folder is to be removed in the
background (the branch stays); ``removed``: the folder is gone, the branch stays; ``kept``: left
for the user to inspect (it held something unsafe to remove)."""
CiState = Literal["running", "passed", "failed", "timed_out"]


class Record(BaseModel):
    """A durable flow record: frozen, keyed by :attr:`id` within its :attr:`kind`."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: ClassVar[str] = ""
    id: str


class Session(Record):
    """An agent's session on one job (id ``agent:task``, ``agent:goal`` or ``agent:chat``).

    Attributes:
        session_id: the backend's session to resume (the claude CLI's, a local model's history),
            None before the runner reported one.
        question: the decision id of the question its turn asked last (restated on resume).
    """

    kind: ClassVar[str] = "session"
    agent: str
    job: JobKind
    task: str | None = None
    goal: str | None = None
    state: SessionState = "running"
    session_id: str | None = None
    question: str | None = None


class Worktree(Record):
    """A task's worktree (id ``agent-task``): ``path`` on ``branch``, made from ``base``.

    The record stays after the folder is removed, so ``/diff <worktree>`` shows the kept branch.
    ``retired_at``: when it was retired (Unix seconds; None while ``active``)."""

    kind: ClassVar[str] = "worktree"
    repo: str
    path: str
    branch: str
    agent: str
    task: str
    base: str
    state: WorktreeState = "active"
    retired_at: float | None = None


class HandOff(Record):
    """Where task ``id``'s next worker starts: ``branch``, the work of ``from_agent``.

    ``pending``: the old worker's leftovers are still to be committed on ``branch`` (a crash
    before that finishes it at the next start)."""

    kind: ClassVar[str] = "handoff"
    from_agent: str
    branch: str
    pending: bool = False


class MergeRecord(Record):
    """What merge decision ``id`` shows and merges: exactly ``commit`` of ``branch``, diffed
    against ``base`` (a commit id)."""

    kind: ClassVar[str] = "merge"
    task: str | None = None
    commit: str
    base: str
    branch: str


class TaskFlow(Record):
    """The flow's counters of task ``id``: ``nudged`` (a worker ending without finishing got its
    one nudge), ``ci_retried`` (a CI failure went back to the worker once), ``node_losses``
    (turns lost with their cluster nodes), ``hook_refusals`` (the repository's commit hooks
    refused its work for the merge, in a row), ``merge_reds`` (its approved merge failed its merge
    test, in a row) and ``returned`` (why it went back on the board
    for its worker, told in the worker's next work turn on it; empty once told), ``merge_done``
    (its last merge decision whose approved merge ended: landed, sent back or dropped)."""

    kind: ClassVar[str] = "taskflow"
    nudged: bool = False
    ci_retried: bool = False
    node_losses: int = 0
    hook_refusals: int = 0
    merge_reds: int = 0
    returned: str = ""
    merge_done: str = ""


class QueuedTurn(Record):
    """A turn of ``agent`` waiting for its current one (id ``agent:order``), started in ``order``."""

    kind: ClassVar[str] = "queued"
    agent: str
    order: int
    job: JobKind
    key: str
    prompt: str
    task: str | None = None
    goal: str | None = None
    session_id: str | None = None
    question: str | None = None


class TurnProcess(Record):
    """A process turn ``turn`` of ``agent`` started (id ``turn:pid``); ``create_time`` tells a
    reused pid apart (psutil's creation time, Unix seconds)."""

    kind: ClassVar[str] = "process"
    turn: str
    agent: str
    pid: int
    create_time: float


class TurnMarker(Record):
    """The :data:`foreman.procs.MARKER_ENV` value every process of turn ``id`` of ``agent`` carries
    (finds a detached process re-parented to init after the daemon died)."""

    kind: ClassVar[str] = "marker"
    agent: str
    marker: str


class CiRun(Record):
    """Task ``id``'s last CI run by ``agent``: ``verdict`` says ``passed``, ``timed out after N s``
    or ``FAILED (exit N)``; a run still ``running`` at a start died with the daemon."""

    kind: ClassVar[str] = "ci"
    agent: str
    state: CiState = "running"
    started_at: float
    verdict: str = ""


class MergeQueued(Record):
    """An approved merge (id: its decision) waiting in, or at the head of, the merge queue of
    ``repo``'s ``base`` branch; served in ``order`` (answer order), removed once it landed or
    went back."""

    kind: ClassVar[str] = "mergeq"
    task: str
    repo: str
    base: str
    order: int


RECORD_MODELS: dict[str, type[Record]] = {m.kind: m for m in (
    Session, Worktree, HandOff, MergeRecord, TaskFlow, QueuedTurn, TurnProcess, TurnMarker, CiRun, MergeQueued)}
"""Record kind -> model (the store decodes rows with it)."""

OLD_META_KEYS = ("sessions", "worktrees", "removals", "handoffs", "merge_commits", "nudged", "ci_retried",
                 "node_losses", "queued", "procs", "markers", "turns")
"""The ``meta`` keys of homes made before the records (store schema 2), converted by :func:`from_meta`."""


def from_meta(meta: dict[str, Any]) -> tuple[list[Record], dict[str, int]]:
    """Convert the flow's untyped ``meta`` keys of an older home into records.

    Args:
        meta: the world's meta as an older Foreman stored it (keys of :data:`OLD_META_KEYS`).

    Returns:
        ``(records, turn_counters)``: the records, and each agent's turn counter (meta ``turns``)
        to keep under ``counters`` as ``turn:<agent>``, so turn ids are never reused.

    Raises:
        KeyError, TypeError, ValueError: a value does not have the shape that Foreman wrote.
    """
    out: list[Record] = []
    for key, s in (meta.get("sessions") or {}).items():
        out.append(Session(id=key, agent=s["agent"], job=s["job"], task=s.get("task"), goal=s.get("goal"),
                           state=s.get("state") or "done", session_id=s.get("session"), question=s.get("question")))
    removals = meta.get("removals") or {}
    for wt_id, w in (meta.get("worktrees") or {}).items():
        retired = removals.get(wt_id)
        out.append(Worktree(id=wt_id, repo=w["repo"], path=w["path"], branch=w["branch"], agent=w["agent"],
                            task=w["task"], base=w.get("base") or "main",
                            state="retiring" if retired is not None else "active",
                            retired_at=float(retired) if retired is not None else None))
    for task, h in (meta.get("handoffs") or {}).items():
        out.append(HandOff(id=task, from_agent=h["from"], branch=h["branch"], pending=bool(h.get("pending"))))
    for did, m in (meta.get("merge_commits") or {}).items():
        out.append(MergeRecord(id=did, commit=m["commit"], base=m["base"], branch=m["branch"]))
    flows: dict[str, dict[str, Any]] = {}
    for name in ("nudged", "ci_retried"):
        for task, value in (meta.get(name) or {}).items():
            flows.setdefault(task, {})[name] = bool(value)
    for task, n in (meta.get("node_losses") or {}).items():
        flows.setdefault(task, {})["node_losses"] = int(n)
    out.extend(TaskFlow(id=task, **fields) for task, fields in flows.items())
    for agent, queue in (meta.get("queued") or {}).items():
        for n, (job, key, prompt, task, goal, session, question) in enumerate(queue):
            out.append(QueuedTurn(id=f"{agent}:{n}", agent=agent, order=n, job=job, key=key, prompt=prompt, task=task,
                                  goal=goal, session_id=session, question=question))
    for turn, entries in (meta.get("procs") or {}).items():
        for agent, pid, created in entries:
            out.append(TurnProcess(id=f"{turn}:{pid}", turn=turn, agent=agent, pid=int(pid), create_time=float(created)))
    for turn, (agent, marker) in (meta.get("markers") or {}).items():
        out.append(TurnMarker(id=turn, agent=agent, marker=marker))
    counters = {agent: int(n) for agent, n in (meta.get("turns") or {}).items()}
    return out, counters
