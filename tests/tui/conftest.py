"""Fixtures shared by the terminal client's tests."""

import pytest

from tests.tui.fake_daemon import FakeDaemon


@pytest.fixture
async def daemon():
    """A started :class:`FakeDaemon` (a real WebSocket server on an ephemeral port, hand-made state)."""
    d = FakeDaemon()
    await d.start()
    yield d
    await d.stop()
