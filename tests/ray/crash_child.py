"""``python -m tests.ray.crash_child HOME REPO ADDRESS``: a daemon with the conductor and the Ray
executor joined to the cluster at ``ADDRESS``; Kit's task turn runs on a node, commits part 1
(the file holds the pid of the node's actor process) and hangs there until the test SIGKILLs
this daemon. The restarted daemon (in the test) runs the same script: part 1 is there, so it
commits part 2 and moves the task to review."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from pathlib import Path
from typing import Any

from foreman.backends.turns import TurnRequest

from ..conductor.scripted import done, serve_until_killed, write_and_commit


def crash_flags(home: Path, repo: Path, address: str) -> dict[str, Any]:
    """The settings of the child and of the restarted in-process daemon alike."""
    return {"home": str(home), "port": 0, "backend": "sim", "workers": ["3"], "repo_poll_ms": 600_000,
            "lead_review": False, "repo": [str(repo)], "ci": "true", "log_level": "WARNING", "os_sandbox": "off",
            "executor": "ray", "ray_address": address, "ray_resources": "foreman_worker=1", "ray_heartbeat": 1.0}


async def part_one_then_hang(req: TurnRequest, tools: Any):
    """Commit part 1 (naming this actor's pid) and hang; once part 1 is there, commit part 2."""
    if not (req.cwd / "part1.py").exists():
        await write_and_commit(req, "part1.py", f"ACTOR_PID = {os.getpid()}\n", "part 1")
        await asyncio.sleep(600)
    await write_and_commit(req, "part2.py", "PART = 2\n", "part 2")
    await tools.call("update_task", {"status": "review"})
    return done("resumed")


def main() -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    home, repo, address = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    asyncio.run(serve_until_killed(crash_flags(home, repo, address), part_one_then_hang, "Two parts"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
