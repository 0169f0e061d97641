"""Run ``foreman`` in this process; with ``--unsafe`` first, acknowledge before writing.

The crash test's negative control: ``--unsafe`` patches :meth:`foreman.store.Store.commit` so
the write happens 0.2 s after the daemon has already broadcast and acknowledged the changes.
A SIGKILL in that window loses acknowledged intents, which the crash test must detect.

Usage: ``python tests/core/crash_runner.py [--unsafe] start --backend sim ...``
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from foreman import cli, store

UNSAFE_DELAY = 0.2
"""Seconds between the acknowledgement and the write under ``--unsafe``."""


def _ack_before_write() -> None:
    real = store.Store.commit

    def late(self: store.Store, changes: Any, seq: int) -> None:
        batch = list(changes)
        asyncio.get_running_loop().call_later(UNSAFE_DELAY, real, self, batch, seq)

    store.Store.commit = late  # type: ignore[method-assign]


if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0] == "--unsafe":
        args = args[1:]
        _ack_before_write()
    sys.exit(cli.main(args))
