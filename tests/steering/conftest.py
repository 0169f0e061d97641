"""The steering suites' fixture: a :class:`~tests.steering.harness.Rig` stopped after the test."""

from __future__ import annotations

from pathlib import Path

import pytest

from .harness import Rig


@pytest.fixture
async def rig(tmp_path: Path):
    """A puppet rig (not started: the test starts it after queueing scripts)."""
    rig = Rig(tmp_path)
    yield rig
    await rig.stop()
