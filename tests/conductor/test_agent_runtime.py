"""The agent entity says whether its commands run in the OS sandbox and which CLI version its
backend starts (issue 14 item 10, issue 18 item 5), as a client sees them over the protocol."""

from __future__ import annotations

from pathlib import Path

import pytest

from foreman import sandbox

from ..rig import wait_for
from .scripted import ScriptedRig, commits_then_review


@pytest.mark.parametrize("mode", ["off", "auto"])
async def test_agents_say_whether_their_commands_are_sandboxed(tmp_path: Path, mode: str) -> None:
    rig = ScriptedRig.worker(tmp_path, commits_then_review(), os_sandbox=mode)
    try:
        client = await rig.start()
        expected = mode == "auto" and sandbox.from_settings(rig.settings) is not None
        assert {a["name"]: a["sandboxed"] for a in client.agents.values()} == {n: expected for n in client.agents}
    finally:
        await rig.stop()


async def test_the_cli_version_of_the_runner_is_on_every_agent_it_runs(tmp_path: Path) -> None:
    rig = ScriptedRig.worker(tmp_path, commits_then_review(), os_sandbox="off")
    asked: list[int] = []

    def cli_version() -> str:
        asked.append(1)
        return "9.8.7"

    rig.runner.cli_version = cli_version  # type: ignore[attr-defined]
    try:
        client = await rig.start()  # the team is there at once; the versions follow
        await wait_for(lambda: {a["cliVersion"] for a in client.agents.values()} == {"9.8.7"}, what="the CLI version")
        assert len(asked) == 1, "one runner is asked once, whatever the number of agents it runs"
    finally:
        await rig.stop()
