"""``foreman doctor`` as a newcomer meets it: the README quickstart on a machine without a global
git identity (HOME an empty folder), real backends' merge identity, and the port check."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import TEST_GIT_EMAIL, TEST_GIT_NAME
from tests.local_backend.fakeserver import FakeOpenAI, text

from .live import ROOT, LiveDaemon

_IDENTITY_VARS = ("AGENTCRAFT_", "EMAIL", "GIT_AUTHOR_", "GIT_COMMITTER_", "ANTHROPIC_")


def _doctor(tmp_path: Path, *args: str, identity: bool = True) -> subprocess.CompletedProcess[str]:
    """Run ``foreman doctor`` with HOME an empty folder; ``identity=False`` also empties git's
    global config (no user.name/user.email anywhere but a repository's own config)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_IDENTITY_VARS)}
    empty_home = tmp_path / "emptyhome"
    empty_home.mkdir(exist_ok=True)
    env.update(HOME=str(empty_home), PYTHONPATH=str(ROOT), GIT_CONFIG_NOSYSTEM="1")
    if not identity:
        (tmp_path / "empty.gitconfig").write_text("")
        env["GIT_CONFIG_GLOBAL"] = str(tmp_path / "empty.gitconfig")
    return subprocess.run([sys.executable, "-m", "foreman", "doctor", "--home", str(tmp_path / "h"),
                           "--sandbox", str(tmp_path / "sandbox"), *args],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)


def _line(out: str, start: str) -> str:
    return next((line for line in out.splitlines() if line.startswith(start)), "")


def _repo(path: Path, name: str | None = None, email: str | None = None) -> Path:
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    if name and email:
        subprocess.run(["git", "-C", str(path), "config", "user.name", name], check=True)
        subprocess.run(["git", "-C", str(path), "config", "user.email", email], check=True)
    return path


# ---------------------------------------------------------------- git identity
def test_sim_quickstart_without_a_global_identity_is_a_warning_not_a_failure(tmp_path: Path) -> None:
    out = _doctor(tmp_path, "--port", "0", identity=False)
    assert out.returncode == 0, out.stdout
    assert "[FAIL]" not in out.stdout
    line = _line(out.stdout, "[warn] git does not know who you are")
    assert "the sim does not need it" in line and "Sam Rivera <sam@pocket-notes.example>" in line
    assert 'git config --global user.email' in out.stdout.split(line, 1)[1].splitlines()[1]  # the fix follows
    warned = out.stdout.count("[warn]")
    assert out.stdout.rstrip().splitlines()[-1] == f"works, with {warned} warning(s) above"  # not "all good"


def test_the_sims_identity_warning_is_whole_sentences(tmp_path: Path) -> None:
    """Found by a newcomer reading every line of `foreman doctor` in a fresh HOME: the warning
    ended mid-sentence ("... The claude and local backends' approved merges do") and nested git's
    own parentheses in its own."""
    out = _doctor(tmp_path, "--port", "0", identity=False)
    line = _line(out.stdout, "[warn] git does not know who you are")
    assert line.endswith("; the claude and local backends need it: their approved merges would be refused without it"), line
    assert "((" not in line and "))" not in line and "merges do" not in line
    assert "fatal: unable to auto-detect email address" in line  # git's reason, as git says it


def test_sim_names_both_identities_when_git_knows_you(tmp_path: Path) -> None:
    out = _doctor(tmp_path, "--port", "0")
    line = _line(out.stdout, "[ok] git knows who you are")
    assert f"{TEST_GIT_NAME} <{TEST_GIT_EMAIL}>" in line and os.environ["GIT_CONFIG_GLOBAL"] in line
    assert "the sim's merges carry its demo repository's own identity, Sam Rivera" in line


@pytest.mark.parametrize("backend", ["local", "claude"])
def test_real_backend_without_identity_fails_and_says_how_to_set_it(tmp_path: Path, backend: str) -> None:
    repo = _repo(tmp_path / "work")
    out = _doctor(tmp_path, "--port", "0", "--backend", backend, "--repo", str(repo), identity=False)
    assert out.returncode == 1
    line = _line(out.stdout, "[FAIL] git does not know who you are")
    assert f"in {repo}" in line and "approved merges would be refused" in line
    fix = out.stdout.split(line, 1)[1].splitlines()[1]
    assert "git config --global user.email" in fix and f"git -C {repo} config user.email" in fix


def test_real_backend_names_the_identity_merges_use_and_where_it_comes_from(tmp_path: Path) -> None:
    own = _repo(tmp_path / "own", "Repo Owner", "owner@repo.invalid")
    plain = _repo(tmp_path / "plain")
    out = _doctor(tmp_path, "--port", "0", "--backend", "local", "--repo", f"{own},{plain}")
    assert _line(out.stdout, f"[ok] git knows who you are in {own}: approved merges will be committed as "
                             "Repo Owner <owner@repo.invalid> (user.name and user.email from .git/config)")
    line = _line(out.stdout, f"[ok] git knows who you are in {plain}")
    assert f"committed as {TEST_GIT_NAME} <{TEST_GIT_EMAIL}>" in line and os.environ["GIT_CONFIG_GLOBAL"] in line
    # the repository's own config is enough, with no global identity
    alone = _doctor(tmp_path, "--port", "0", "--backend", "local", "--repo", str(own), identity=False)
    assert _line(alone.stdout, f"[ok] git knows who you are in {own}: approved merges will be committed as Repo Owner")
    assert "git does not know" not in alone.stdout
    # no repository named: the global identity, and the repository's own config may override it
    top = _doctor(tmp_path, "--port", "0", "--backend", "local")
    assert "unless a repository's own config says otherwise" in _line(top.stdout, "[ok] git knows who you are:")


# ---------------------------------------------------------------- the port
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_port_held_by_this_profiles_running_foreman_is_named_and_fine(tmp_path: Path) -> None:
    home = tmp_path / "h"
    home.mkdir()
    daemon = LiveDaemon(home)
    port = daemon.start()
    try:
        pid = daemon.proc.pid
        held = _doctor(tmp_path, "--port", str(port))
        line = _line(held.stdout, f"[ok] port {port} is held by this profile's (sim) running Foreman, pid {pid}")
        assert "that is fine" in line, held.stdout
        assert held.returncode == 0, held.stdout
        other = _free_port()
        free = _doctor(tmp_path, "--port", str(other))
        assert _line(free.stdout, f"[ok] port {other} is free; this profile's (sim) running Foreman, pid {pid} "
                                  f"listens on port {port}"), free.stdout
        # another profile asking for that port is told whose it is and what to do
        taken = _doctor(tmp_path, "--port", str(port), "--profile", "other")
        line = _line(taken.stdout, f"[FAIL] port {port} is in use by the Foreman of profile 'sim' (pid {pid})")
        assert line and "--port N" in taken.stdout.split(line, 1)[1].splitlines()[1], taken.stdout
    finally:
        daemon.stop()


def test_port_held_by_another_program_says_to_pick_another_port(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        out = _doctor(tmp_path, "--port", str(port))
    assert out.returncode == 1
    line = _line(out.stdout, f"[FAIL] port {port} is in use by ")
    assert "Foreman" not in line, line
    fix = out.stdout.split(line, 1)[1].splitlines()[1]
    assert "--port N" in fix and "--port 0" in fix


def test_a_port_left_in_time_wait_by_a_stopped_daemon_is_free(tmp_path: Path) -> None:
    """Right after `foreman stop`, the closed connections sit in TIME_WAIT on the port; the server
    binds with SO_REUSEADDR, so `foreman start` works there and the doctor must not say FAIL."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    client = socket.create_connection(("127.0.0.1", port))
    accepted, _ = listener.accept()
    accepted.close()  # the server side closes first: its end of the connection stays in TIME_WAIT
    client.close()
    listener.close()
    ss = shutil.which("ss")  # iproute2: shows the socket states, when the machine has it
    states = subprocess.run([ss, "-tan", f"sport = :{port}"], capture_output=True, text=True).stdout if ss else ""
    out = _doctor(tmp_path, "--port", str(port))
    assert _line(out.stdout, f"[ok] port {port} is free"), out.stdout + states
    if ss and "TIME-WAIT" not in states:
        pytest.fail(f"no TIME_WAIT socket was left on {port}, so this checked nothing:\n{states}")


# ---------------------------------------------------------------- the local backend's endpoint
def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens there once closed


def test_local_endpoint_that_answers_is_ok_with_the_models_it_lists(tmp_path: Path) -> None:
    """Found by a newcomer: ``doctor --backend local`` never asked the endpoint; now it makes one
    ``GET {url}/models`` and names what the endpoint serves."""
    with FakeOpenAI(lambda req: text("OK"), models=("fake-coder", "fake-small")) as server:
        out = _doctor(tmp_path, "--port", "0", "--backend", "local", "--url", server.url)
        asked = list(server.requests)
    assert _line(out.stdout, f"[ok] the endpoint {server.url} answers: it serves fake-coder, fake-small"), out.stdout
    assert asked == []  # a models listing only: no completion is spent


def test_local_endpoint_of_the_chosen_profile_is_the_one_asked(tmp_path: Path) -> None:
    (tmp_path / "h" / "local").mkdir(parents=True)
    with FakeOpenAI(lambda req: text("OK")) as server:
        (tmp_path / "h" / "local" / "config.json").write_text(json.dumps(
            {"local": {"profile": "small", "profiles": {"small": {"url": server.url, "model": "fake-coder"}}}}))
        out = _doctor(tmp_path, "--port", "0", "--backend", "local")
    assert _line(out.stdout, f"[ok] the endpoint {server.url} answers: it serves fake-coder"), out.stdout


def test_local_endpoint_on_a_closed_port_fails_naming_the_url_and_the_fix(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    out = _doctor(tmp_path, "--port", "0", "--backend", "local", "--url", url)
    assert out.returncode == 1, out.stdout
    line = _line(out.stdout, f"[FAIL] the endpoint {url} does not answer GET {url}/models:")
    assert line and "refused" in line.lower(), out.stdout
    fix = out.stdout.split(line, 1)[1].splitlines()[1]
    assert "start the model server" in fix and "--url" in fix and "config.json" in fix, fix


@pytest.mark.parametrize("models,says", [((), "it serves no model"), (("fake-coder",), "HTTP 404")])
def test_local_endpoint_that_answers_wrong_fails_saying_how(tmp_path: Path, models: tuple[str, ...], says: str) -> None:
    with FakeOpenAI(lambda req: text("OK"), models=models) as server:
        url = server.url if not models else server.url.removesuffix("/v1")  # (no /v1: GET /models is a 404)
        out = _doctor(tmp_path, "--port", "0", "--backend", "local", "--url", url)
    assert out.returncode == 1, out.stdout
    line = _line(out.stdout, f"[FAIL] the endpoint {url}")
    assert says in line, out.stdout


def test_local_endpoint_that_never_answers_fails_within_the_timeout(tmp_path: Path) -> None:
    """A server that takes the connection and says nothing: the check gives up after its timeout."""
    from foreman.config import resolve
    from foreman.doctor import doctor_endpoint

    with socket.socket() as mute:
        mute.bind(("127.0.0.1", 0))
        mute.listen()  # the kernel accepts; nobody reads or answers
        url = f"http://127.0.0.1:{mute.getsockname()[1]}/v1"
        seen: list[tuple] = []
        started = time.monotonic()
        doctor_endpoint(resolve({"home": str(tmp_path), "backend": "local", "url": url}, {}),
                        lambda *a, **kw: seen.append((*a, kw)), timeout=0.5)
        took = time.monotonic() - started
    [(ok, what, fix, _)] = seen
    assert not ok and what.startswith(f"the endpoint {url} does not answer GET {url}/models") and "in time" in what
    assert "start the model server" in fix and took < 5


@pytest.mark.parametrize("how", ["worker-backend", "agents-section"])
def test_a_mixed_team_checks_the_local_endpoint_and_the_claude_cli(tmp_path: Path, how: str) -> None:
    """Found reading ``doctor.py``: only ``--backend local`` asked the endpoint, so a claude team
    with local workers (``--worker-backend local``, or one agent set to local in the ``agents``
    section) started against a server that was down without a word from the doctor."""
    with FakeOpenAI(lambda req: text("OK"), models=("fake-coder",)) as server:
        args = ["--port", "0", "--backend", "claude", "--url", server.url]
        if how == "worker-backend":
            args += ["--worker-backend", "local"]
        else:
            (tmp_path / "h" / "claude").mkdir(parents=True)  # (the profile is named after the backend)
            (tmp_path / "h" / "claude" / "config.json").write_text(json.dumps({"agents": {"kit": {"backend": "local"}}}))
        out = _doctor(tmp_path, *args)
    assert _line(out.stdout, f"[ok] the endpoint {server.url} answers: it serves fake-coder"), out.stdout
    assert _line(out.stdout, "[ok] openai installed"), out.stdout
    assert "claude CLI" in out.stdout and "ANTHROPIC_API_KEY" in out.stdout, out.stdout


def test_a_claude_team_does_not_ask_a_local_endpoint(tmp_path: Path) -> None:
    out = _doctor(tmp_path, "--port", "0", "--backend", "claude", "--url", f"http://127.0.0.1:{_closed_port()}/v1")
    assert "the endpoint" not in out.stdout and "openai installed" not in out.stdout, out.stdout
