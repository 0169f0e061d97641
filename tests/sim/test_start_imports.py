"""What the default sim daemon loads before it accepts connections (its cold start): the flow and
the sim's scripts, not the command policy (loaded at an agent's first tool call)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import sys
from foreman.config import resolve
from foreman.daemon import Daemon
from foreman.flow.assemble import make_backend
backend = make_backend(resolve({"home": sys.argv[1], "backend": "sim"}, {}))
print(type(backend).__name__)
print(" ".join(sorted(m for m in sys.modules if m.startswith("foreman."))))
"""


def test_the_sim_on_the_flow_starts_without_the_policy(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.split("\n")
    loaded = set(out[1].split())
    assert out[0] == "SimTeam"
    assert "foreman.flow.conductor" in loaded  # (the flow itself is there)
    assert not {m for m in loaded if m == "foreman.policy" or m.startswith("foreman.policy.")}

