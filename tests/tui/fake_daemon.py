"""A small protocol-v1 WebSocket server for the client's tests (a real socket, hand-made state).

It keeps a history of state messages with seqs, answers ``hello`` with a snapshot (or, with
``since``, the missed messages), acks intents, opens/answers decisions, serves diffs and memory.
"""

from __future__ import annotations

import contextlib
import time

import websockets
from websockets.asyncio.server import ServerConnection, serve

import protocol as p
from foreman.tui.mirror import Mirror

STATUS = p.Status(backend="sim", version="9.9", user_name="ada")


def diff_of(target: str) -> p.Diff:
    """A one-line change of notes.py; for a target holding ``long``, 300 added lines more."""
    line = p.DiffLine(op="+", text="print('tags')", new=3)
    more = [p.DiffLine(op="+", text=f"print({n})", new=4 + n) for n in range(300 if "long" in target else 0)]
    hunk = p.DiffHunk(old_start=1, old_lines=2, new_start=1, new_lines=3 + len(more), header="def main():", lines=[
        p.DiffLine(op=" ", text="def main():", old=1, new=1), p.DiffLine(op="-", text="    pass", old=2), line, *more])
    f = p.DiffFile(path="notes.py", status="modified", additions=1 + len(more), deletions=1, hunks=[hunk])
    return p.Diff(repo="pocket", base="a" * 40, head="b" * 40, files=[f], additions=1 + len(more), deletions=1,
                  files_changed=1)


def world() -> p.Snapshot:
    """The hand-made world every test starts from."""
    now = time.time()
    return p.Snapshot(
        seq=0,
        status=STATUS,
        agents=[
            p.Agent(name="marlow", role="lead", title="Marlow", state="thinking", station="meeting"),
            p.Agent(name="kit", title="Kit", state="editing", station="desk", task="t2", worktree="kit-t2", activity="editing notes.py"),
            p.Agent(name="wren", title="Wren", state="idle", station="lounge"),
        ],
        goals=[p.Goal(id="g1", text="add tags", status="active", progress=50, created_at=now)],
        tasks=[
            p.Task(id="t1", title="parse tags", status="done", assignee="kit", goal="g1"),
            p.Task(id="t2", title="show tags", status="doing", assignee="kit", deps=["t1"], goal="g1"),
            p.Task(id="t3", title="docs", status="todo", deps=["t2"], goal="g1"),
        ],
        decisions=[
            p.Decision(id="d1", kind="merge", prompt="Merge kit-t1?", options=["Merge", "Request changes", "Reject"],
                       asked_by="marlow", task="t1", worktree="kit-t1", created_at=now),
        ],
        repos=[p.Repo(id="pocket", path="/tmp/pocket", head="c" * 40)],
        feed=[p.FeedItem(id=1, at=now, kind="goal", text="goal g1 submitted")],
        messages=[p.Message(id=1, sender="kit", to="wren", text="hi", at=now)],
    )


class FakeDaemon:
    """Serve the protocol on 127.0.0.1 at an OS-chosen (or given) port.

    Attributes:
        received: every intent received, decoded.
        hellos: every hello received.
        refuse: intent types answered with an ``error`` (type -> (code, message)).
    """

    def __init__(self) -> None:
        self.mirror = Mirror()
        self.mirror.apply(world())
        self.history: list[p.ServerMessage] = []
        self.received: list[p.Intent] = []
        self.hellos: list[p.Hello] = []
        self.refuse: dict[str, tuple[str, str]] = {}
        self.clients: set[ServerConnection] = set()
        self.port = 0
        self._server = None
        self.next_feed = 2

    @property
    def seq(self) -> int:
        return self.mirror.seq or 0

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    async def start(self, port: int = 0) -> None:
        self._server = await serve(self._handle, "127.0.0.1", port, compression=None, max_size=None)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        self.clients.clear()

    def snapshot(self) -> p.Snapshot:
        m = self.mirror
        return p.Snapshot(
            seq=self.seq, status=m.status, agents=list(m.agents.values()), goals=list(m.goals.values()),
            tasks=list(m.tasks.values()), decisions=list(m.decisions.values()), repos=list(m.repos.values()),
            messages=list(m.messages), feed=list(m.feed), logs={k: list(v) for k, v in m.logs.items()},
        )

    async def push(self, msg: p.ServerMessage, *, skip: bool = False) -> p.ServerMessage:
        """Give ``msg`` the next seq, keep it, apply it and send it to every client.

        With ``skip``, the seq advances but the message is not sent (a lost message).
        """
        msg = msg.model_copy(update={"seq": self.seq + 1})
        assert self.mirror.apply(msg).value == "applied"
        self.history.append(msg)
        if not skip:
            for ws in list(self.clients):
                with contextlib.suppress(Exception):
                    await ws.send(p.encode(msg))
        return msg

    async def feed(self, text: str, **kw) -> None:
        await self.push(p.FeedAppend(seq=0, item=p.FeedItem(id=self.next_feed, at=time.time(), text=text, **kw)))
        self.next_feed += 1

    async def open_decision(self, decision: p.Decision) -> None:
        await self.push(p.DecisionUpsert(seq=0, decision=decision))

    async def _handle(self, ws: ServerConnection) -> None:
        try:
            async for frame in ws:
                msg = p.decode_client(frame)
                if isinstance(msg, p.Hello):
                    self.hellos.append(msg)
                    await self._hello(ws, msg)
                    continue
                self.received.append(msg)
                await ws.send(p.encode(await self._reply(msg)))
        except websockets.ConnectionClosed:
            pass
        finally:
            self.clients.discard(ws)

    async def _hello(self, ws: ServerConnection, hello: p.Hello) -> None:
        if hello.since is not None and 0 <= hello.since <= self.seq:
            for msg in self.history:
                if msg.seq > hello.since:
                    await ws.send(p.encode(msg))
        else:
            await ws.send(p.encode(self.snapshot()))
        self.clients.add(ws)

    async def _reply(self, msg: p.Intent):
        if msg.type in self.refuse:
            code, text = self.refuse[msg.type]
            return p.Error(id=msg.id, code=code, message=text)
        result = None
        match msg:
            case p.DiffRequest():
                return p.DiffResult(id=msg.id, target=msg.decision or msg.worktree, diff=diff_of(msg.decision or msg.worktree))
            case p.MemoryRead(note=None):
                return p.MemoryResult(id=msg.id, notes=[p.MemoryNote(note="shared/plan")])
            case p.MemoryRead(note=note):
                return p.MemoryResult(id=msg.id, notes=[p.MemoryNote(note=note, text="# Plan\n1. tags")])
            case p.DecisionAnswerIntent():
                d = self.mirror.decisions.get(msg.decision)
                if d is None or d.status != "open":
                    return p.Error(id=msg.id, code="not_found" if d is None else "conflict", message=f"no open decision {msg.decision}")
                answer = p.DecisionAnswer(option=msg.option, label=d.options[msg.option], text=msg.text)
                await self.push(p.DecisionUpsert(seq=0, decision=d.model_copy(update={"status": "answered", "answer": answer})))
            case p.GoalSubmit():
                gid = f"g{len(self.mirror.goals) + 1}"
                await self.push(p.GoalUpsert(seq=0, goal=p.Goal(id=gid, text=msg.text, created_at=time.time())))
                result = gid
            case p.MessageSend():  # (the daemon acks with the new message's id)
                result = str(len(self.mirror.messages) + 1)
            case p.AgentPause():
                a = self.mirror.agents[msg.agent]
                await self.push(p.AgentUpsert(seq=0, agent=a.model_copy(update={"paused": True})))
        return p.Ack(id=msg.id, seq=self.seq, result=result)


    async def send_raw(self, msg: p.ServerMessage) -> None:
        """Send ``msg`` as is to every client (no seq, no history): to test a broken daemon."""
        for ws in list(self.clients):
            await ws.send(p.encode(msg))
