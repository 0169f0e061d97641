"""A new user's first five minutes, as the README writes them (issue 38): on a stock machine the
README's test command passes and writes nothing into the user's home.

A stock machine of this kind has no bubblewrap, no tmux, no global git identity, an empty home,
and may have the Foreman's well-known port (7878) held by another program. The test builds that
machine's view for one run: a fresh clone of the committed repository, a new empty ``HOME``, a
``PATH`` on which neither ``bwrap`` nor ``tmux`` can be found, no ``AGENTCRAFT_*``/``GIT_*``/
``PYTEST_*`` variables, ``GIT_CONFIG_GLOBAL`` an empty file, and port 7878 held. Then it runs the
README's test command, read from the README itself, exactly as written there.

Slow (``-m slow``): it installs the project into a new venv and runs the whole default suite
(which leaves this test out: the README's command runs ``-m 'not slow'``, from pyproject's
addopts, so it does not recurse).
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import socket
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

ABSENT_TOOLS = ("bwrap", "tmux")
"""Optional tools a stock machine of this kind does not have (the tests say so when they skip)."""

WELL_KNOWN_PORT = 7878
"""The Foreman's default port; a stock machine may have another program on it."""

PIP_OWN = (".cache", ".cache/pip")
"""What may be in the new home afterwards: pip's own cache (``~/.cache/pip``: downloaded and built
wheels), written by the README's ``pip install`` as by any pip install a user runs. The suite
itself writes nothing there (its ``tests/conftest.py`` fails the run when it does)."""


def readme_test_command(readme: Path = ROOT / "README.md") -> str:
    """The README's test command: the line under ``# install and pass the tests`` in its first
    ``sh`` block (a command that makes a venv, installs the test extra and runs pytest)."""
    block = re.search(r"```sh\n(.*?)```", readme.read_text(encoding="utf-8"), re.S)
    assert block is not None, "README.md has no sh block"
    lines = block.group(1).splitlines()
    for comment, command in zip(lines, lines[1:]):
        if comment.strip() == "# install and pass the tests":
            assert "pytest" in command and "pip install" in command, command
            return command.strip()
    raise AssertionError(f"no '# install and pass the tests' line in README.md's first sh block:\n{block.group(1)}")


def path_without(tools: tuple[str, ...], folder: Path, path: str | None = None) -> str:
    """``path`` (default: this process's ``PATH``) on which none of ``tools`` is found.

    A folder holding one of them is replaced by a folder of links to everything else in it (the
    tools sit in ``/usr/bin`` beside git and Python, so leaving the folder out is not an option).
    """
    out = []
    for n, entry in enumerate((path if path is not None else os.environ.get("PATH", "")).split(os.pathsep)):
        where = Path(entry)
        if not entry or not any((where / tool).exists() for tool in tools):
            out.append(entry)
            continue
        shadow = folder / f"{n}-{where.name or 'root'}"
        shadow.mkdir(parents=True)
        for item in os.scandir(where):
            if item.name not in tools:
                (shadow / item.name).symlink_to(where / item.name)
        out.append(str(shadow))
    return os.pathsep.join(out)


def stock_env(base: Path, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a new user on a stock machine of this kind, under ``base``: ``HOME`` a
    new empty folder, no global git identity, neither bubblewrap nor tmux on ``PATH``; without
    the variables of this run and of the machine's own user (``AGENTCRAFT_*``, ``GIT_*``,
    ``PYTEST_*``, a venv's, ``XDG_*`` folders in the old home, a tmux session's)."""
    dropped = ("AGENTCRAFT_", "GIT_", "PYTEST_", "XDG_", "TMUX", "VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME",
               "COLUMNS", "LINES")
    env = {k: v for k, v in (environ if environ is not None else os.environ).items() if not k.startswith(dropped)}
    home = base / "home"
    home.mkdir(parents=True)
    (base / "empty.gitconfig").write_text("")
    env.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(base / "empty.gitconfig"),
               PATH=path_without(ABSENT_TOOLS, base / "bin", env.get("PATH", "")))
    # The machine's own rust tool chain stays where it is: pip runs ``rustc --version`` for its
    # user agent, and a rustup proxy whose home lacks ``.rustup`` writes its settings there (a user
    # with rustup has that folder already, so nothing new appears in their home).
    real_home = Path(pwd.getpwuid(os.getuid()).pw_dir)  # the suite's own HOME is a temporary one
    for variable, folder in (("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo")):
        if variable not in env and (real_home / folder).is_dir():
            env[variable] = str(real_home / folder)
    return env


@pytest.fixture
def well_known_port_held() -> Iterator[None]:
    """Another program on port 7878 for the whole run (when one is there already, it stays)."""
    with socket.socket() as holder:
        try:
            holder.bind(("127.0.0.1", WELL_KNOWN_PORT))
            holder.listen()
        except OSError:
            pass  # held already: the same machine
        yield


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_the_readme_test_command_passes_in_a_fresh_clone_on_a_stock_machine(tmp_path: Path,
                                                                            well_known_port_held: None) -> None:
    """Clone the committed repository, then run the README's test command as a new user would on a
    stock machine (no bwrap, no tmux, no git identity, an empty home, port 7878 held): it exits 0,
    its suite skips the bwrap and tmux tests saying why, and the home holds nothing but pip's cache."""
    command = readme_test_command()
    env = stock_env(tmp_path)
    for tool in (*ABSENT_TOOLS,):
        assert shutil.which(tool, path=env["PATH"]) is None, tool
    assert shutil.which("git", path=env["PATH"]) and shutil.which("python3", path=env["PATH"])
    clone = tmp_path / "foreman"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, env=env, timeout=300,
                   capture_output=True)
    assert subprocess.run(["git", "-C", str(clone), "config", "user.email"], env=env, capture_output=True).returncode == 1
    out = subprocess.run(["bash", "-c", command], cwd=clone, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                         text=True, timeout=3300)
    (tmp_path / "suite.txt").write_text(out.stdout + "\n--- stderr ---\n" + out.stderr)  # the whole output, failures included
    failures = out.stdout.find("= FAILURES =")
    tail = (out.stdout[failures:failures + 8000] if failures >= 0 else "") + out.stdout[-3000:] + "\n" + out.stderr[-3000:]
    tail += f"\n(the whole output: {tmp_path / 'suite.txt'})"
    assert out.returncode == 0, tail
    closing = out.stdout.rstrip().splitlines()[-1]
    assert re.search(r"\d+ passed", closing) and "failed" not in closing and "error" not in closing, tail
    assert "tmux is not installed" in out.stdout and "bwrap is not installed" in out.stdout, tail  # they were absent
    assert "the test suite wrote into a home" not in out.stdout, tail
    home = Path(env["HOME"])
    left = [name for name in _files(home) if not (name in PIP_OWN or name.startswith(".cache/pip/"))]
    assert left == [], left


# ---------------------------------------------------------------- the stock machine's view (default suite)
def test_the_readme_test_command_is_the_one_ci_runs() -> None:
    """The slow test above runs the README's command; ``.ci/run`` runs it too, word for word."""
    command = readme_test_command()
    assert command.startswith("python3 -m venv .venv && ") and command.endswith(" -m pytest")
    assert command in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()


def test_the_stock_machine_has_no_bwrap_tmux_identity_or_home_of_this_run(tmp_path: Path) -> None:
    fake = tmp_path / "tools"
    fake.mkdir()
    for tool in ("bwrap", "tmux", "other"):
        (fake / tool).write_text("#!/bin/sh\n")
        (fake / tool).chmod(0o755)
    base = tmp_path / "stock"
    env = stock_env(base, {"PATH": f"{fake}{os.pathsep}{os.environ['PATH']}", "HOME": "/home/someone",
                           "AGENTCRAFT_PORT": "1", "GIT_AUTHOR_NAME": "x", "GIT_CONFIG_GLOBAL": "/x",
                           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "VIRTUAL_ENV": "/v", "XDG_CACHE_HOME": "/home/someone/.c",
                           "PIP_FIND_LINKS": "/w", "LANG": "C.UTF-8"})
    assert {k for k in env if k.startswith(("AGENTCRAFT_", "GIT_", "PYTEST_", "VIRTUAL_ENV", "XDG_"))} == {"GIT_CONFIG_GLOBAL"}
    assert env["PIP_FIND_LINKS"] == "/w" and env["LANG"] == "C.UTF-8"  # the machine's own settings stay
    assert Path(env["HOME"]).is_dir() and not list(Path(env["HOME"]).iterdir())
    assert Path(env["GIT_CONFIG_GLOBAL"]).read_text() == ""
    rustup = Path(pwd.getpwuid(os.getuid()).pw_dir) / ".rustup"
    assert env.get("RUSTUP_HOME") == (str(rustup) if rustup.is_dir() else None)  # pip's `rustc --version` writes nothing
    for tool in ABSENT_TOOLS:
        assert shutil.which(tool, path=env["PATH"]) is None
    assert shutil.which("other", path=env["PATH"]) == str(base / "bin" / f"0-{fake.name}" / "other")  # the rest stays
    assert shutil.which("git", path=env["PATH"]) and shutil.which("python3", path=env["PATH"])
    who = subprocess.run(["git", "config", "user.email"], env=env, capture_output=True, text=True)
    assert who.returncode == 1 and who.stdout == ""  # no identity
