"""Suite-wide fixtures: every test runs with a git configuration of its own.

A newcomer's machine may have no global git identity (``user.name``/``user.email``) and its
``HOME`` may be an empty folder; CI runs that way too (``.ci/run`` sets no identity). So each
test gets ``GIT_CONFIG_GLOBAL`` pointing at a file in a temporary folder of its own, holding a
test identity, and ``GIT_CONFIG_NOSYSTEM=1`` so ``/etc/gitconfig`` cannot change the result.
Both are set in ``os.environ`` (``monkeypatch.setenv``), so every subprocess a test starts
(git, the daemon, the TUI, a fake CLI) inherits them. Folders with their own conftest may
override them (``tests/repos`` sets its own ``HOME`` and identity).

The default run is spread over two pytest-xdist workers (``-n 2 --dist loadfile`` in
``pyproject.toml``): each worker is its own process, and a test file runs whole on one worker,
so a module-scoped fixture (a live daemon) is built once and sees all its module's tests. A
session-scoped fixture (``tests/sim``'s scenarios) is built once per worker that uses it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# Property tests judge behaviour, not speed: a loaded 2-core machine (CI, several suites at once)
# must not turn a slow example into a failure (hypothesis' default deadline is 200 ms).
settings.register_profile("foreman", deadline=None)
settings.load_profile("foreman")

TEST_GIT_NAME = "Foreman Tests"
TEST_GIT_EMAIL = "tests@foreman.invalid"


@pytest.fixture(autouse=True)
def git_config_of_the_test(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point git at a per-test global config with a test identity; return that file's path."""
    path = tmp_path_factory.mktemp("gitconfig") / "gitconfig"
    path.write_text(f"[user]\n\tname = {TEST_GIT_NAME}\n\temail = {TEST_GIT_EMAIL}\n", encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(path))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return path


@pytest.fixture(autouse=True)
def no_plugin_autoload_in_subprocesses(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the plugins installed for this suite (hypothesis, xdist, asyncio, timeout, benchmark)
    out of the pytest runs the tests start in their small repositories (guided mode's checks and
    probes, the conductor's CI): ``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1`` makes pytest load only the
    plugins a command names (pytest docs, "How to install and use plugins"). Those repositories use
    none, and each such run starts in about half the time (0.55 s -> 0.23 s for one test, measured
    2 December 2026). This suite's own process has loaded its plugins by then."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Name the real claude CLI the run used (``tests/claude_cli``'s ``claude_cli_version`` property).

    Read from the test reports, which reach pytest-xdist's controller (a fixture's output is
    captured, and a worker's module state is not the controller's).
    """
    seen: set[str] = set()
    for reports in terminalreporter.stats.values():
        for report in reports:
            seen.update(value for name, value in getattr(report, "user_properties", ()) if name == "claude_cli_version")
    for version in sorted(seen):
        terminalreporter.write_line(f"[tests/claude_cli] real claude CLI {version}")
