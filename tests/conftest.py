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

Nothing the suite runs may write into the user's home (a shell under tmux wrote its history
there, issue 38). So the run points ``HOME`` at an empty folder of its own before any test module
is collected (its xdist workers inherit it), and fails at the end, naming the files, when anything
appeared there, at the top of the real home or in its ``.agentcraft`` (the Foreman's default
home): :func:`pytest_configure`, :func:`pytest_sessionfinish`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# Property tests judge behaviour, not speed: a loaded 2-core machine (CI, several suites at once)
# must not turn a slow example into a failure (hypothesis' default deadline is 200 ms).
settings.register_profile("foreman", deadline=None)
settings.load_profile("foreman")

_HOME_KEY = pytest.StashKey[tuple[Path, set[str], Path]]()
"""The real home, the names seen in it at the start, and the run's own home."""
_WRITTEN_KEY = pytest.StashKey[list[str]]()


def _names(folder: Path) -> set[str]:
    """The names directly in ``folder`` (an empty set when it is missing or unreadable)."""
    try:
        return {entry.name for entry in os.scandir(folder)}
    except OSError:
        return set()


def _real_home_seen(real: Path) -> set[str]:
    """What the end of the run compares in the real home: its top-level names and those in its
    ``.agentcraft`` (the Foreman's default home). Names, not times: other programs of the user
    may write their own files meanwhile; a new name is what a run of the suite would add."""
    return {*_names(real), *(f".agentcraft/{name}" for name in _names(real / ".agentcraft"))}


def pytest_configure(config: pytest.Config) -> None:
    """Give the run a home of its own: ``HOME`` an empty temporary folder, set before any test
    module is collected (a module may copy ``os.environ``), so every test and every process it
    starts writes there, not into the user's home. An xdist worker inherits its controller's
    (the controller checks it at the end); any other run (``-n 0``, or a pytest a test starts)
    makes its own."""
    if hasattr(config, "workerinput"):
        return
    real = Path(os.path.expanduser("~"))
    fake = Path(tempfile.mkdtemp(prefix="foreman-tests-home-"))
    config.stash[_HOME_KEY] = (real, _real_home_seen(real), fake)
    os.environ["HOME"] = str(fake)


def home_written(real: Path, seen: set[str], fake: Path) -> list[str]:
    """What the run wrote into a home: every path in its own ``fake`` home, and each name new
    in the real one since :func:`pytest_configure` (``seen``)."""
    written = sorted(f"{path} (the suite's HOME)" for path in fake.rglob("*"))
    written += sorted(f"{real / name} (the real HOME)" for name in _real_home_seen(real) - seen)
    return written


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """Fail the run when it wrote into a home (see :func:`home_written`); remove its own home
    when it is empty, else keep it for a look."""
    stash = session.config.stash.get(_HOME_KEY, None)
    if stash is None:
        return
    real, seen, fake = stash
    written = home_written(real, seen, fake)
    session.config.stash[_WRITTEN_KEY] = written
    if written:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if not _names(fake):
        shutil.rmtree(fake, ignore_errors=True)


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
    written = terminalreporter.config.stash.get(_WRITTEN_KEY, [])
    if written:
        terminalreporter.section("the test suite wrote into a home", sep="=", red=True, bold=True)
        terminalreporter.write_line("FAILED: nothing the suite runs may write into the user's home (tests/conftest.py):",
                                    red=True)
        for line in written:
            terminalreporter.write_line(f"  {line}")
