"""Fixtures: a fake claude CLI per test; every process it (or what it started) left is killed.

The ``fake`` fixture is the one of the runner tests (tests/claude/conftest.py).
"""

from __future__ import annotations

import claude_agent_sdk  # noqa: F401 - the first import takes ~1 s; keep it out of the timed tests

from ..claude.conftest import fake  # noqa: F401 - re-exported fixture
