"""The real daemon process over real sockets: fan-out order, guards, bad frames, reconnects."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus

from .live import Conn, LiveDaemon, state_view

STEERING = [
    {"type": "message.send", "to": "kit", "text": "please look at t1"},
    {"type": "message.send", "to": "all", "text": "stand-up in five"},
    {"type": "agent.pause", "agent": "wren"},
    {"type": "agent.resume", "agent": "wren"},
    {"type": "agent.stop", "agent": "tove"},
    {"type": "agent.spawn", "agent": "tove"},
    {"type": "message.send", "to": "user", "text": "note to self"},
]


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory):
    d = LiveDaemon(tmp_path_factory.mktemp("live"))
    d.start()
    yield d
    code = d.stop()
    assert code == 0, d.stderr()


async def test_two_clients_see_the_same_upserts_in_the_same_seq_order(daemon: LiveDaemon) -> None:
    a, b = await Conn.open(daemon.port, token=daemon.token), await Conn.open(daemon.port, token=daemon.token)
    try:
        snap_a, snap_b = (await a.hello())[0], (await b.hello())[0]
        assert snap_a["type"] == snap_b["type"] == "snapshot"
        assert snap_a["seq"] == snap_b["seq"]
        a.states.clear(), b.states.clear()
        acks = []
        for intent in STEERING:
            reply, _ = await a.request(intent)
            assert reply["type"] == "ack", reply
            acks.append(reply["seq"])
        assert acks == sorted(acks) and acks[0] > snap_a["seq"]
        while not b.states or b.states[-1]["seq"] < acks[-1]:
            await b.recv()
        assert a.states == b.states
        seqs = [f["seq"] for f in a.states]
        assert seqs == list(range(snap_a["seq"] + 1, acks[-1] + 1))
        kinds = {f["type"] for f in a.states}
        assert {"message.append", "agent.upsert", "feed.append"} <= kinds
        assert [m["message"]["text"] for m in a.states
                if m["type"] == "message.append" and m["message"]["from"] == "user"] == [
            i["text"] for i in STEERING if i["type"] == "message.send"]
    finally:
        await a.close(), await b.close()


def _raw_handshake(port: int, host: str, origin: str | None = None) -> str:
    headers = [f"GET / HTTP/1.1", f"Host: {host}", "Upgrade: websocket", "Connection: Upgrade",
               "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13"]
    if origin:
        headers.append(f"Origin: {origin}")
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(("\r\n".join(headers) + "\r\n\r\n").encode())
        return s.recv(4096).decode(errors="replace").split("\r\n")[0]


@pytest.mark.parametrize("host,origin,status", [
    ("127.0.0.1:{port}", None, "101"),
    ("localhost:{port}", None, "101"),
    ("[::1]:{port}", None, "101"),
    ("127.0.0.1:{port}", "http://127.0.0.1:{port}", "401"),
    ("localhost:{port}", "https://evil.example", "401"),
    ("evil.example:{port}", None, "401"),
    ("127.0.0.1.nip.io:{port}", None, "401"),
])
def test_origin_and_foreign_host_are_refused_with_401(daemon: LiveDaemon, host: str, origin: str | None, status: str) -> None:
    line = _raw_handshake(daemon.port, host.format(port=daemon.port), origin and origin.format(port=daemon.port))
    assert line.split()[1] == status, line


async def test_origin_refused_through_a_websocket_client(daemon: LiveDaemon) -> None:
    with pytest.raises(InvalidStatus) as info:
        await Conn.open(daemon.port, token=daemon.token, origin="http://localhost:8080")
    assert info.value.response.status_code == 401


BAD_FRAMES = [
    ("not json at all", "bad_json", None),
    (b"\xff\xfe binary garbage", "bad_json", None),
    ("[1, 2, 3]", "bad_request", None),
    ('{"no": "type"}', "bad_request", None),
    ('{"type": 5, "id": "x1"}', "bad_request", "x1"),
    ('{"type": "task.explode", "id": 9}', "unknown_type", 9),
    ('{"type": "message.send", "id": "m1", "to": "kit"}', "bad_request", "m1"),
    ('{"type": "decision.answer", "id": "m2", "decision": "d1", "option": "first"}', "bad_request", "m2"),
    ('{"type": "diff.request", "id": "m3"}', "bad_request", "m3"),
    ('{"type": "agent.pause", "id": "m4", "agent": "nobody"}', "not_found", "m4"),
    ('{"type": "task.cancel", "id": "m5", "task": "t999"}', "not_found", "m5"),
    ('{"type": "agent.resume", "id": "m6", "agent": "kit"}', "conflict", "m6"),
    ('{"type": "hello", "id": "m7", "protocol": 2, "client": "future"}', "protocol", "m7"),
    ('{"type": "message.send", "id": "big", "to": "kit", "text": "' + "x" * 300_000 + '"}', "too_large", None),
    # a title with a bidi override or a NUL (issue 37 item 9: docs/protocol.md, "Display-safe text")
    ('{"type": "goal.submit", "id": "rlo", "text": "Add \\u202etags"}', "bad_text", "rlo"),
    ('{"type": "goal.submit", "id": 9, "text": "Add\\u0000 tags"}', "bad_text", 9),
]


async def test_malformed_frames_get_errors_and_the_connection_lives(daemon: LiveDaemon) -> None:
    c = await Conn.open(daemon.port, token=daemon.token)
    try:
        before = (await c.hello())[0]
        for frame, code, rid in BAD_FRAMES:
            await c.ws.send(frame)
            reply = await c.recv()
            assert reply["type"] == "error" and reply["code"] == code, (frame[:60], reply)
            assert reply["id"] == rid and reply["message"]
        reply, _ = await c.request({"type": "memory.read"})
        assert reply["type"] == "memory"
        other = await Conn.open(daemon.port, token=daemon.token)
        after = (await other.hello())[0]
        await other.close()
        assert state_view(after) == state_view(before)
    finally:
        await c.close()


BINARY_FRAMES = [b"\xff\xfe binary garbage", b"\x00\x01\x02\x03", "{\"type\": ".encode("utf-16-le"),
                 b"not json", b"\xfe\xff\x00{"]


async def test_binary_frames_are_told_the_protocol_is_utf8_json_text_and_the_connection_lives(daemon: LiveDaemon) -> None:
    c = await Conn.open(daemon.port, token=daemon.token)
    try:
        await c.hello()
        for frame in BINARY_FRAMES:
            await c.ws.send(frame)  # bytes: a binary WebSocket frame
            reply = await c.recv()
            assert reply["type"] == "error" and reply["code"] == "bad_json", (frame, reply)
            assert "UTF-8 JSON in text frames" in reply["message"], reply
            assert "utf-16" not in reply["message"].lower() and "utf-32" not in reply["message"].lower(), reply
        reply, _ = await c.request({"type": "memory.read"})
        assert reply["type"] == "memory"
    finally:
        await c.close()


async def test_intent_before_hello_is_refused(daemon: LiveDaemon) -> None:
    c = await Conn.open(daemon.port, additional_headers={"Authorization": f"Bearer {daemon.token}"})
    try:
        reply, _ = await c.request({"type": "message.send", "to": "kit", "text": "hi"})
        assert reply["type"] == "error" and reply["code"] == "hello_first"
    finally:
        await c.close()


async def test_reconnect_with_since_gets_exactly_the_missed_frames(daemon: LiveDaemon) -> None:
    a = await Conn.open(daemon.port, token=daemon.token)
    seen = (await a.hello())[0]["seq"]
    await a.close()
    b = await Conn.open(daemon.port, token=daemon.token)
    try:
        await b.hello()
        b.states.clear()
        last = seen
        for text in ("one", "two", "three"):
            reply, _ = await b.request({"type": "message.send", "to": "juniper", "text": text})
            last = reply["seq"]
        while not b.states or b.states[-1]["seq"] < last:
            await b.recv()
        a = await Conn.open(daemon.port, token=daemon.token)
        missed = await a.hello(since=seen)
        assert missed == b.states
        assert [f["seq"] for f in missed] == list(range(seen + 1, last + 1))
        await a.close()
        a = await Conn.open(daemon.port, token=daemon.token)
        assert await a.hello(since=last) == []  # nothing missed, nothing sent
        await a.close()
        a = await Conn.open(daemon.port, token=daemon.token)
        future = await a.hello(since=last + 1000)  # a seq this daemon never handed out: a snapshot
        assert [f["type"] for f in future] == ["snapshot"] and future[0]["seq"] == last
        await a.close()
    finally:
        await b.close()


async def test_since_after_a_restart_gets_a_snapshot(tmp_path: Path) -> None:
    d = LiveDaemon(tmp_path)
    d.start()
    try:
        c = await Conn.open(d.port, token=d.token)
        await c.hello()
        reply, _ = await c.request({"type": "message.send", "to": "kit", "text": "before the restart"})
        seen = reply["seq"] - 1
        await c.close()
        assert d.stop() == 0
        d.start()
        c = await Conn.open(d.port, token=d.token)
        frames = await c.hello(since=seen)
        assert [f["type"] for f in frames] == ["snapshot"]  # the ring is empty after a restart
        assert frames[0]["seq"] >= seen + 1
        assert "before the restart" in [m["text"] for m in frames[0]["messages"]]
        await c.close()
    finally:
        d.stop()


def test_run_files_written_and_removed_and_second_daemon_refused(tmp_path: Path) -> None:
    d = LiveDaemon(tmp_path)
    d.start()
    try:
        info = json.loads(d.run_file.read_text())
        assert {"pid", "port", "host", "backend", "profile", "version", "startedAt"} <= set(info)
        assert info["pid"] == d.proc.pid and info["host"] == "127.0.0.1" and info["profile"] == "sim"
        assert json.loads((tmp_path / "foreman.json").read_text())["pid"] == d.proc.pid
        second = LiveDaemon(tmp_path)
        with pytest.raises(RuntimeError) as info_err:
            second.start(timeout=30)
        assert second.proc.returncode == 2
        assert f"pid {d.proc.pid}" in str(info_err.value)
        assert json.loads(d.run_file.read_text())["pid"] == d.proc.pid  # the first one's record survives
    finally:
        assert d.stop() == 0
    assert not d.run_file.exists()
    assert not (tmp_path / "foreman.json").exists()


def test_taken_port_says_what_to_do(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        cmd = LiveDaemon(tmp_path).cmd
        cmd[cmd.index("--port") + 1] = str(port)
        d = LiveDaemon(tmp_path, cmd=cmd)
        with pytest.raises(RuntimeError) as info:
            d.start(timeout=30)
    assert d.proc.returncode == 2
    message = str(info.value)
    assert f"port {port} is already in use" in message and "--port" in message
    assert not d.run_file.exists()


async def test_slow_reader_does_not_delay_others(daemon: LiveDaemon) -> None:
    """A client that never reads keeps its own bounded queue; the others get their frames."""
    lazy = await Conn.open(daemon.port, token=daemon.token, max_queue=1)
    fast = await Conn.open(daemon.port, token=daemon.token)
    try:
        await lazy.ws.send(json.dumps({"type": "hello", "protocol": 1, "client": "lazy", "token": daemon.token}))
        await fast.hello()
        loop = asyncio.get_running_loop()
        start = loop.time()
        for i in range(200):
            reply, _ = await fast.request({"type": "message.send", "to": "rowan", "text": f"burst {i}"})
            assert reply["type"] == "ack"
        assert loop.time() - start < 20
    finally:
        # A client that never reads cannot finish a close handshake (the server's close frame
        # waits behind the frames it did not read; ws.close() would wait out close_timeout,
        # 10 s): it drops its socket instead, as such a client would.
        lazy.ws.transport.abort()
        await lazy.ws.wait_closed()
        await fast.close()


async def _flood(conn: Conn, count: int, text: str = "flood", to: str = "user") -> int:
    """Pipeline ``count`` message.send intents on ``conn``; return the seq of the last ack."""
    ids = [f"flood-{i}-{id(conn)}" for i in range(count)]

    async def send_all() -> None:
        for rid in ids:
            await conn.ws.send(json.dumps({"type": "message.send", "id": rid, "to": to, "text": text}))

    sender = asyncio.create_task(send_all())
    pending, last = set(ids), 0
    try:
        while pending:
            data = await conn.recv(30)
            if data.get("id") in pending:
                assert data["type"] == "ack", data
                pending.discard(data["id"])
                last = max(last, data["seq"])
    finally:
        await sender
    return last


async def test_reconnect_5000_frames_behind_gets_what_it_missed_then_live_frames(tmp_path: Path) -> None:
    """Issue 12 item 18: a client far behind is never frozen (it used to get nothing, ever).

    5,000 frames are within the ring, so the client gets exactly those (more than the old
    per-client queue held), then live frames, and replies to its own intents.
    """
    d = LiveDaemon(tmp_path)
    d.start()
    try:
        writer = await Conn.open(d.port, token=d.token)
        seen = (await writer.hello())[0]["seq"]
        last = await _flood(writer, 5_000)
        assert last - seen >= 5_000
        late = await Conn.open(d.port, token=d.token)
        try:
            catch_up = await late.hello(since=seen, timeout=20)
            assert [f["seq"] for f in catch_up] == list(range(seen + 1, last + 1))
            reply, _ = await writer.request({"type": "message.send", "to": "kit", "text": "after the gap"})
            frames = []
            while not frames or frames[-1]["seq"] < reply["seq"]:
                frames.append(await late.recv())
            assert [f["seq"] for f in frames] == list(range(last + 1, reply["seq"] + 1))
            assert frames[-1]["message"]["text"] == "after the gap"
            own, _ = await late.request({"type": "message.send", "to": "kit", "text": "from the late client"})
            assert own["type"] == "ack" and own["seq"] == reply["seq"] + 1
        finally:
            await late.close(), await writer.close()
    finally:
        assert d.stop() == 0, d.stderr()


async def test_a_client_that_stops_reading_is_resnapshotted_not_frozen(tmp_path: Path) -> None:
    """A live client whose backlog overflows gets a fresh snapshot once it reads again, then live frames."""
    d = LiveDaemon(tmp_path)
    d.start()
    try:
        writer = await Conn.open(d.port, token=d.token)
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)  # no multi-MB kernel autotuning
        sock.connect(("127.0.0.1", d.port))
        lazy = await Conn.open(d.port, token=d.token, max_queue=1, sock=sock, ping_interval=None)  # stops reading its socket after one frame
        try:
            await writer.hello()
            start = (await lazy.hello())[0]["seq"]
            big = "x" * 9_000
            last = await _flood(writer, 1_500, text=big)  # ~14 MB: past the socket buffers and the backlog limit
            reply, _ = await writer.request({"type": "message.send", "to": "kit", "text": "after the flood"})
            frames: list = []
            while not frames or frames[-1].get("seq", 0) < reply["seq"]:
                frames.append(await lazy.recv(20))
            types = [f["type"] for f in frames]
            assert "snapshot" in types, "a lagging client must get a fresh snapshot"
            snap_at = len(types) - 1 - types[::-1].index("snapshot")
            snap = frames[snap_at]
            assert snap["seq"] >= last
            before, after = frames[:snap_at], frames[snap_at + 1:]
            assert [f["seq"] for f in before] == list(range(start + 1, start + 1 + len(before)))
            assert len(before) < last - start  # frames were dropped, not all queued
            assert [f["seq"] for f in after] == list(range(snap["seq"] + 1, reply["seq"] + 1))
            own, _ = await lazy.request({"type": "message.send", "to": "kit", "text": "lazy speaks"})
            assert own["type"] == "ack"
        finally:
            await lazy.close(), await writer.close()
    finally:
        assert d.stop() == 0, d.stderr()


async def test_a_lagging_client_that_only_sends_is_dropped_cleanly(tmp_path: Path) -> None:
    """Its replies cannot be held forever: past the bound it is closed (1013); the others carry on."""
    d = LiveDaemon(tmp_path)
    d.start()
    try:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
        sock.connect(("127.0.0.1", d.port))
        rude = await Conn.open(d.port, token=d.token, max_queue=1, sock=sock, ping_interval=None)
        await rude.hello()
        big = "x" * 9_000
        with pytest.raises(ConnectionClosed):
            for i in range(4_000):  # never reads: its own frames pile up, then its held replies
                await rude.ws.send(json.dumps({"type": "message.send", "id": f"r{i}", "to": "user", "text": big}))
            while True:
                await rude.recv(30)
        assert d.stderr().count("dropped: too many replies held") == 1
        other = await Conn.open(d.port, token=d.token)
        await other.hello()
        reply, _ = await other.request({"type": "message.send", "to": "kit", "text": "still served"})
        assert reply["type"] == "ack"
        await other.close()
    finally:
        assert d.stop() == 0, d.stderr()


# ---------------------------------------------------------------------- authentication (issue 14 item 12)

def test_run_files_carry_the_token_readable_by_the_owner_only(daemon: LiveDaemon) -> None:
    for path in (daemon.run_file, daemon.home / "foreman.json"):
        assert path.stat().st_mode & 0o777 == 0o600, path
        token = json.loads(path.read_text())["token"]
        assert isinstance(token, str) and len(token) >= 32
    assert daemon.token and daemon.token not in daemon.stderr()


@pytest.mark.parametrize("token", [None, "", "not-the-token"])
async def test_without_the_token_hello_errors_and_an_intent_changes_nothing(daemon: LiveDaemon, token: str | None) -> None:
    good = await Conn.open(daemon.port, token=daemon.token)
    bad = await Conn.open(daemon.port, token=token)
    try:
        before = (await good.hello())[0]
        frames = await bad.hello()  # the memory.read probe after hello is refused too
        assert frames[0]["type"] == "error" and frames[0]["code"] == "unauthorized" and "foreman.json" in frames[0]["message"]
        assert [f["type"] for f in frames] == ["error"]  # no snapshot, no state
        open_decision = next((d for d in before["decisions"] if d["status"] == "open"), None)
        for intent in [*STEERING, {"type": "goal.submit", "text": "an agent's own goal"},
                       {"type": "decision.answer", "decision": open_decision["id"] if open_decision else "d1", "option": 0},
                       {"type": "diff.request", "worktree": "kit-t1"}]:
            reply, states = await bad.request(intent)
            assert reply["type"] == "error" and reply["code"] == "unauthorized", (intent, reply)
            assert states == []
        assert await good.drain(0.3) == []  # nothing changed, nothing was broadcast
        third = await Conn.open(daemon.port, token=daemon.token)
        try:
            after = (await third.hello())[0]
        finally:
            # closed here: a connection left open outlives this test's event loop, and the
            # module's daemon then waits out its close timeout (10 s) for it at SIGTERM
            await third.close()
        assert after["seq"] == before["seq"] and state_view(after) == state_view(before)
        # the same connection may then say hello with the token and work normally
        bad.token = daemon.token
        assert [f["type"] for f in await bad.hello()] == ["snapshot"]
        reply, _ = await bad.request({"type": "message.send", "to": "kit", "text": "now with the token"})
        assert reply["type"] == "ack"
    finally:
        await good.close(), await bad.close()


async def test_bearer_header_authenticates_and_a_wrong_one_is_refused_at_the_upgrade(daemon: LiveDaemon) -> None:
    c = await Conn.open(daemon.port, additional_headers={"Authorization": f"Bearer {daemon.token}"})
    try:
        assert [f["type"] for f in await c.hello()] == ["snapshot"]
        reply, _ = await c.request({"type": "message.send", "to": "kit", "text": "bearer"})
        assert reply["type"] == "ack"
    finally:
        await c.close()
    with pytest.raises(InvalidStatus) as info:
        await Conn.open(daemon.port, additional_headers={"Authorization": "Bearer wrong"})
    assert info.value.response.status_code == 401


async def test_no_auth_accepts_tokenless_clients_and_warns(tmp_path: Path) -> None:
    from .live import daemon_cmd

    d = LiveDaemon(tmp_path, cmd=daemon_cmd(tmp_path, "--no-auth"))
    d.start()
    try:
        assert "token" not in json.loads(d.run_file.read_text())
        assert "--no-auth" in d.stderr()
        c = await Conn.open(d.port)
        reply, _ = await c.request({"type": "message.send", "to": "kit", "text": "too early"})
        assert reply["type"] == "error" and reply["code"] == "hello_first"  # no auth: the rule is hello first
        assert [f["type"] for f in await c.hello()] == ["snapshot"]
        reply, _ = await c.request({"type": "message.send", "to": "kit", "text": "no token needed"})
        assert reply["type"] == "ack"
        await c.close()
    finally:
        assert d.stop() == 0, d.stderr()


async def test_batch_capability_carries_a_transactions_frames_in_one(daemon: LiveDaemon) -> None:
    """Issue 16 item 4: ``hello.capabilities: ["batch"]`` gets one frame per transaction; others are unchanged."""
    plain = await Conn.open(daemon.port, token=daemon.token)
    batched = await Conn.open(daemon.port, token=daemon.token)
    try:
        await plain.hello()
        await batched.ws.send(json.dumps({"type": "hello", "protocol": 1, "client": "batcher", "token": daemon.token,
                                          "capabilities": ["batch", "some-future-thing"]}))
        assert (await batched.recv())["type"] == "snapshot"
        plain.states.clear()
        raw: list[dict] = []
        reply, _ = await plain.request({"type": "goal.submit", "text": "a goal that makes several frames"})
        assert reply["type"] == "ack"
        while not plain.states or plain.states[-1]["seq"] < reply["seq"]:
            await plain.recv()
        assert len(plain.states) > 1  # one transaction, several state messages
        assert all(f["type"] != "batch" for f in plain.states)
        while sum(len(f.get("messages", [f])) for f in raw) < len(plain.states):
            raw.append(json.loads(await asyncio.wait_for(batched.ws.recv(), 5)))
        assert [f["type"] for f in raw] == ["batch"]
        assert raw[0]["messages"] == plain.states
        import protocol

        decoded = protocol.decode_server(json.dumps(raw[0]))
        assert decoded.type == "batch" and [m.seq for m in decoded.messages] == [f["seq"] for f in plain.states]
    finally:
        await plain.close(), await batched.close()


async def test_an_unauthenticated_connection_gets_unauthorized_for_anything_but_a_valid_hello(daemon: LiveDaemon) -> None:
    """Before a valid hello, nothing is parsed in detail: malformed frames, intents and bad hellos all get ``unauthorized``."""
    c = await Conn.open(daemon.port)  # no token, no bearer header
    try:
        frames = [frame for frame, _, _ in BAD_FRAMES]
        frames += ['{"type": "message.send", "id": "ok1", "to": "kit", "text": "hi"}',
                   '{"type": "hello", "id": "h1", "protocol": 1, "client": "x"}',
                   '{"type": "hello", "id": "h2", "protocol": 1, "client": "x", "token": "wrong"}']
        codes, messages = [], set()
        for frame in frames:
            await c.ws.send(frame)
            reply = await c.recv()
            assert reply["type"] == "error", (frame[:60], reply)
            codes.append(reply["code"])
            messages.add(reply["message"])
        assert codes == ["unauthorized"] * len(frames), list(zip((f[:40] for f in frames), codes))
        assert len(messages) == 1 and "token" in messages.pop()  # one message: no detail of the frame leaks
        c.token = daemon.token  # the same connection may still authenticate
        assert [f["type"] for f in await c.hello()] == ["snapshot"]
        reply, _ = await c.request({"type": "agent.pause", "agent": "nobody"})
        assert reply["code"] == "not_found"  # authenticated: details again
    finally:
        await c.close()
