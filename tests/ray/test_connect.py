"""Joining a Ray head that is not there fails fast: ``foreman doctor`` and the executor's connect
check ``--ray-address`` with one TCP connection (a few seconds) before ``ray.init``, which would
retry for minutes."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from foreman.errors import BackendError
from foreman.executors import ray_head_unreachable

ROOT = Path(__file__).resolve().parents[2]


def _closed_port() -> int:
    """A port on 127.0.0.1 nobody listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_check_tells_an_answering_head_from_a_closed_port() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        assert ray_head_unreachable(f"127.0.0.1:{port}") is None
        assert ray_head_unreachable(f"ray://127.0.0.1:{port}") is None
    closed = _closed_port()
    problem, fix = ray_head_unreachable(f"127.0.0.1:{closed}")
    assert problem.startswith(f"no Ray head answers at 127.0.0.1:{closed}")
    assert f"ray start --head --port {closed}" in fix and "--ray-address" in fix
    assert ray_head_unreachable(None) is None and ray_head_unreachable("auto") is None
    problem, _ = ray_head_unreachable("127.0.0.1:port")
    assert "not host:port" in problem


def test_doctor_against_a_closed_port_fails_fast(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    closed = _closed_port()
    home = tmp_path / "emptyhome"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(ROOT)}
    began = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "foreman", "doctor", "--home", str(tmp_path / "h"),
                          "--sandbox", str(tmp_path / "sandbox"), "--port", "0", "--executor", "ray",
                          "--ray-address", f"127.0.0.1:{closed}"],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    took = time.monotonic() - began
    assert out.returncode == 1, out.stdout + out.stderr
    assert f"[FAIL] no Ray head answers at 127.0.0.1:{closed}" in out.stdout, out.stdout
    assert f"ray start --head --port {closed}" in out.stdout
    assert took < 30, f"doctor took {took:.1f}s"  # (ray.init's retries take minutes)


async def test_the_executor_connect_raises_a_clear_error_without_calling_ray_init(monkeypatch: pytest.MonkeyPatch) -> None:
    ray = pytest.importorskip("ray")
    from foreman.executors.ray import RayExecutor

    def no_init(*a: object, **kw: object) -> None:
        raise AssertionError("ray.init called for a head that does not answer")

    monkeypatch.setattr(ray, "init", no_init)
    closed = _closed_port()
    ex = RayExecutor(SimpleNamespace(ray_address=f"127.0.0.1:{closed}", ray_resources={}, ray_heartbeat=5.0))
    began = time.monotonic()
    with pytest.raises(BackendError, match=f"--ray-address 127.0.0.1:{closed}: no Ray head answers"):
        await ex._connect()
    assert time.monotonic() - began < 10
    assert not ray.is_initialized()


def _start(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    home = tmp_path / "h"
    (tmp_path / "emptyhome").mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(tmp_path / "emptyhome"), "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "foreman", "start", "--no-autostart", "--no-ambient",
                             "--home", str(home), "--port", "0", "--sandbox", str(tmp_path / "sandbox"),
                             "--log-level", "INFO", *args],
                            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def test_start_with_a_closed_ray_address_stops_at_once_naming_it(tmp_path: Path) -> None:
    closed = _closed_port()
    proc = _start(tmp_path, "--backend", "local", "--executor", "ray", "--ray-address", f"127.0.0.1:{closed}")
    try:
        out, _ = proc.communicate(timeout=60)  # (ray.init's retries take minutes)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode != 0, out
    assert f"--ray-address 127.0.0.1:{closed}: no Ray head answers at 127.0.0.1:{closed}" in out, out
    assert f"ray start --head --port {closed}" in out
    assert not list((tmp_path / "h").rglob("state.db"))  # (checked before any state is written)


def test_start_of_the_sim_with_executor_ray_says_the_executor_is_not_used(tmp_path: Path) -> None:
    from foreman.executors import SIM_IGNORES_EXECUTOR

    proc = _start(tmp_path, "--backend", "sim", "--executor", "ray")
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # until the start banner: the daemon is up
            lines.append(line)
            if "listening on ws://" in line:
                break
    finally:
        proc.terminate()
        proc.wait(20)
    out = "".join(lines)
    assert "listening on ws://" in out, out
    assert SIM_IGNORES_EXECUTOR in out
    assert out.index(SIM_IGNORES_EXECUTOR) < out.index("listening on ws://")


def test_doctor_of_the_sim_with_executor_ray_says_the_executor_is_not_used(tmp_path: Path) -> None:
    from foreman.executors import SIM_IGNORES_EXECUTOR

    home = tmp_path / "emptyhome"
    home.mkdir()
    out = subprocess.run([sys.executable, "-m", "foreman", "doctor", "--home", str(tmp_path / "h"),
                          "--sandbox", str(tmp_path / "sandbox"), "--port", "0", "--executor", "ray",
                          "--backend", "sim", "--ray-address", f"127.0.0.1:{_closed_port()}"],
                         capture_output=True, text=True, env={**os.environ, "HOME": str(home), "PYTHONPATH": str(ROOT)},
                         cwd=ROOT, timeout=60)
    assert f"[warn] {SIM_IGNORES_EXECUTOR}" in out.stdout, out.stdout
    assert "[FAIL] no Ray head answers" in out.stdout  # (the cluster named is still checked)
