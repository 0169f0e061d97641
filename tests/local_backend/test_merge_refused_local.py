"""Issue 12 item 20, local part: through the real daemon and protocol with the local backend (the
model behind the scripted HTTP server), a Merge refused because the user's checkout of the base
branch has uncommitted changes re-opens its decision, changes nothing on main, and a later Merge
(once the checkout is clean) brings the worker's commit into main."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from foreman.tui.discovery import Locator
from tests.rig import Client, wait_for

from .fakeserver import FakeOpenAI
from .helpers import demo_daemon
from .test_flow_local import make_responder

pytestmark = pytest.mark.timeout(120)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


async def test_a_refused_merge_reopens_and_a_later_merge_succeeds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    with FakeOpenAI(make_responder("text", {})) as server:
        async with demo_daemon(tmp_path, server.url) as (daemon, repo):
            settings = daemon.settings
            client = await Client.connect(daemon.port, Locator(settings.home, settings.profile).token())
            world = daemon.core.world
            dec = (await wait_for(lambda: client.open_decisions("merge", task="t1"), 60, "the merge decision"))[0]
            main_before = git(repo, "rev-parse", "main").strip()
            untouched = next(p for p in git(repo, "ls-files").split()
                             if p not in ("pocket_notes/formatting.py", "tests/test_word_count.py"))
            original = (repo / untouched).read_text()
            (repo / untouched).write_text(original + "# the user's edit, not committed\n")

            await client.answer(dec, 0)  # Merge: refused, the base checkout is dirty
            await wait_for(lambda: world.decisions[dec["id"]].status == "open"
                           and "refused" in (world.decisions[dec["id"]].detail or ""), 60, "the decision re-opened")
            assert untouched in world.decisions[dec["id"]].detail
            assert world.tasks["t1"].status == "review"
            assert git(repo, "rev-parse", "main").strip() == main_before  # nothing merged
            assert (repo / untouched).read_text().endswith("# the user's edit, not committed\n")  # nothing lost
            await wait_for(lambda: client.open_decisions("merge", task="t1"), 15, "the re-opened decision on the wire")

            git(repo, "checkout", "--", untouched)
            await client.answer(dec, 0)  # a later Merge, on a clean checkout
            await wait_for(lambda: world.tasks["t1"].status == "done", 60, "merged at the second Merge")
            await client.close()
    assert "def word_count(text: str) -> int:" in git(repo, "show", "main:pocket_notes/formatting.py")
    assert git(repo, "merge-base", "--is-ancestor", main_before, "main") == ""
    assert "def word_count" in (repo / "pocket_notes" / "formatting.py").read_text()  # the checkout fast-forwarded
