"""``python -m tests.steering.chaos_child HOME REPO``: a daemon with the conductor and the chaos
puppet, serving until SIGTERM (or killed)."""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from pathlib import Path

from foreman.flow.conductor import ALL_WORKERS, LEAD, Conductor
from foreman.config import resolve
from foreman.daemon import Daemon

from . import chaos_scripts
from .harness import Puppet


def chaos_flags(home: Path, repo: Path) -> dict[str, object]:
    """The settings of the chaos daemon (child and in-process phases alike)."""
    return {"home": str(home), "port": 0, "backend": "sim", "workers": ["3"], "repo_poll_ms": 600_000,
            "lead_review": False, "repo": [str(repo)], "log_level": "WARNING"}


async def serve(home: Path, repo: Path) -> None:
    settings = resolve(chaos_flags(home, repo), env={})
    puppet = Puppet()
    chaos_scripts.install(puppet)
    daemon = Daemon(settings, backend=Conductor(settings, {n: puppet for n in (LEAD, *ALL_WORKERS)},
                                                backend_name="puppet"))
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, daemon.stopping.set)
    await daemon.run()


def main() -> int:
    """Entry point (the CLI function of the child process)."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    asyncio.run(serve(Path(sys.argv[1]), Path(sys.argv[2])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
