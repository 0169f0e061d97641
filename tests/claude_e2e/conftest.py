"""Fixtures: a fake claude CLI per test; every process it (or what it started) left is killed."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

import claude_agent_sdk  # noqa: F401 - the first import takes ~1 s; keep it out of the timed tests
import psutil
import pytest

from ..claude.conftest import fake_processes
from ..claude.fake_claude import FakeClaude


@pytest.fixture
def fake(tmp_path: Path):
    """A fresh fake CLI in its own scratch directory."""
    fake = FakeClaude(tmp_path / "fake")
    started = time.time()
    yield fake
    for pid in {*fake.pids(), *fake_processes(fake)}:
        with contextlib.suppress(psutil.Error):
            proc = psutil.Process(pid)
            if pid != os.getpid() and proc.create_time() >= started - 1:
                proc.kill()
