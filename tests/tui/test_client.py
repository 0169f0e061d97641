"""The connection against a real WebSocket server: hello, requests, reconnects, resyncs."""

import asyncio
import json

import pytest

import protocol as p
from foreman.tui.client import Connection, ConnectionLost, RequestError
from foreman.tui.discovery import DaemonNotFound, Locator, default_home, url_for
from foreman.tui.mirror import Mirror, Outcome

pytestmark = pytest.mark.timeout(30)


class Run:
    """A connection running in the background for one test."""

    def __init__(self, locate) -> None:
        self.seen: list[tuple[str, Outcome]] = []
        self.states: list[str] = []
        self.conn = Connection(
            locate, Mirror(), client_name="test/1", listener=lambda m, o: self.seen.append((m.type, o)),
            on_state=self.states.append, reconnect_interval=0.02, max_reconnect_interval=0.1,
        )

    async def __aenter__(self) -> Connection:
        self.task = asyncio.create_task(self.conn.run())
        return self.conn

    async def __aexit__(self, *exc) -> None:
        await self.conn.close()
        await asyncio.wait_for(self.task, 5)


async def test_hello_snapshot_and_updates(daemon):
    run = Run(lambda: daemon.url)
    async with run as conn:
        await conn.wait_ready(5)
        assert conn.mirror.agents["kit"].state == "editing"
        assert daemon.hellos == [p.Hello(protocol=1, client="test/1")]
        ws = next(iter(daemon.clients))
        assert ws.request.headers.get("Origin") is None
        assert ws.request.headers["Host"] == f"127.0.0.1:{daemon.port}"
        kit = conn.mirror.agents["kit"].model_copy(update={"state": "testing"})
        await daemon.push(p.AgentUpsert(seq=0, agent=kit))
        await conn.wait_for(lambda m: m.agents["kit"].state == "testing", 5)
        assert ("agent.upsert", Outcome.APPLIED) in run.seen
        assert "connected" in run.states


async def test_requests_get_their_replies(daemon):
    async with Run(lambda: daemon.url) as conn:
        await conn.wait_ready(5)
        ack = await conn.request(p.GoalSubmit(text="more tags"), 5)
        assert isinstance(ack, p.Ack) and ack.result == "g2"
        await conn.wait_seq(ack.seq, 5)
        assert conn.mirror.goals["g2"].text == "more tags"
        assert daemon.received[-1].id == "tui-1"
        diff = await conn.request(p.DiffRequest(decision="d1"), 5)
        assert isinstance(diff, p.DiffResult) and diff.target == "d1" and diff.diff.files[0].path == "notes.py"
        daemon.refuse["agent.stop"] = ("not_found", "no agent zed")
        with pytest.raises(RequestError) as info:
            await conn.request(p.AgentStop(agent="zed"), 5)
        assert (info.value.code, info.value.message) == ("not_found", "no agent zed")
        # Concurrent requests are matched by id, not by order.
        replies = await asyncio.gather(*(conn.request(p.MemoryRead(note=f"n{i}"), 5) for i in range(5)))
        assert [r.notes[0].note for r in replies] == [f"n{i}" for i in range(5)]


async def test_reconnects_after_a_restart_and_resumes_from_the_last_seq(daemon):
    async with Run(lambda: daemon.url) as conn:
        await conn.wait_ready(5)
        await daemon.feed("before")
        await conn.wait_for(lambda m: m.feed[-1].text == "before", 5)
        seen_seq = conn.mirror.seq
        port = daemon.port
        await daemon.stop()
        await daemon.feed("while down")
        await daemon.start(port)
        await conn.wait_for(lambda m: m.feed[-1].text == "while down", 5)
        assert daemon.hellos[-1].since == seen_seq
        assert conn.connections == 2
        await daemon.feed("after")
        await conn.wait_for(lambda m: m.feed[-1].text == "after", 5)
        assert [i.text for i in conn.mirror.feed][-3:] == ["before", "while down", "after"]


async def test_a_seq_gap_resumes_with_since(daemon):
    run = Run(lambda: daemon.url)
    async with run as conn:
        await conn.wait_ready(5)
        await daemon.push(p.FeedAppend(seq=0, item=p.FeedItem(id=50, text="lost")), skip=True)
        await daemon.feed("next")
        await conn.wait_for(lambda m: m.feed[-1].text == "next", 5)
        assert [i.text for i in conn.mirror.feed][-2:] == ["lost", "next"]
        assert ("feed.append", Outcome.GAP) not in run.seen  # gaps are not passed on as applied
        assert daemon.hellos[-1].since == 0


async def test_a_seq_that_goes_back_reloads_a_full_snapshot(daemon):
    async with Run(lambda: daemon.url) as conn:
        await conn.wait_ready(5)
        await daemon.feed("one")
        await conn.wait_for(lambda m: m.seq == 1, 5)
        await daemon.send_raw(p.FeedAppend(seq=1, item=p.FeedItem(id=99, text="dup")))
        await conn.wait_for(lambda m: conn.connections == 2 and m.synced, 5)
        assert daemon.hellos[-1].since is None
        assert all(i.text != "dup" for i in conn.mirror.feed)


async def test_pending_request_fails_when_the_connection_drops(daemon):
    async with Run(lambda: daemon.url) as conn:
        await conn.wait_ready(5)
        gate = asyncio.Event()
        original = daemon._reply

        async def slow(msg):
            await gate.wait()
            return await original(msg)

        daemon._reply = slow
        pending = asyncio.create_task(conn.request(p.TaskRetry(task="t3"), 5))
        await asyncio.sleep(0.05)
        for ws in list(daemon.clients):
            await ws.close()
        with pytest.raises(ConnectionLost):
            await pending
        gate.set()


async def test_unreachable_daemon_is_retried_and_reported():
    async with Run(lambda: url_for(1)) as conn:
        with pytest.raises(TimeoutError):
            await conn.wait_ready(0.3)
        assert "refused" in conn.last_error


async def test_locator_follows_foreman_json(tmp_path, daemon):
    loc = Locator(tmp_path, "sim")
    with pytest.raises(DaemonNotFound, match="profile 'sim'"):
        loc()
    assert Locator(tmp_path)() == "ws://127.0.0.1:7878"
    assert Locator(tmp_path, port=9)() == "ws://127.0.0.1:9"
    (tmp_path / "sim").mkdir()
    record = tmp_path / "sim" / "foreman.json"
    record.write_text(json.dumps({"pid": 1, "port": daemon.port, "host": "127.0.0.1"}))
    assert loc() == daemon.url
    assert "pid 1" in loc.describe()
    record.write_text(json.dumps({"pid": 1, "port": 5, "host": "10.0.0.1"}))
    assert loc() == "ws://127.0.0.1:5"  # never a non-loopback host
    record.write_text("{broken")
    with pytest.raises(DaemonNotFound):
        loc()
    assert default_home({"AGENTCRAFT_HOME": str(tmp_path)}) == tmp_path
    assert default_home({}).name == ".agentcraft"


async def test_the_client_sends_the_token_from_foreman_json(tmp_path, daemon):
    record = tmp_path / "sim" / "foreman.json"
    record.parent.mkdir()
    record.write_text(json.dumps({"pid": 1, "port": daemon.port, "token": "tok-1"}))
    assert Locator(tmp_path, "sim").token() == "tok-1"
    assert Locator(tmp_path, port=daemon.port).token() == "tok-1"  # --port: the record naming that port
    assert Locator(tmp_path, port=daemon.port + 1).token() is None
    async with Run(Locator(tmp_path, "sim")) as conn:
        await conn.wait_ready(5)
    assert daemon.hellos[-1].token == "tok-1"


async def test_reconnect_finds_a_daemon_that_moved_port(tmp_path, daemon):
    record = tmp_path / "foreman.json"
    record.write_text(json.dumps({"port": daemon.port}))
    async with Run(Locator(tmp_path)) as conn:
        await conn.wait_ready(5)
        await daemon.stop()
        await daemon.start()  # a new port
        record.write_text(json.dumps({"port": daemon.port}))
        await conn.wait_for(lambda m: conn.connections == 2 and conn.ready, 5)
        await daemon.feed("moved")
        await conn.wait_for(lambda m: m.feed[-1].text == "moved", 5)
