"""The executor seam without Ray: settings, the local executor's place, a clear error without the extra."""

from __future__ import annotations

from pathlib import Path

import pytest

from foreman.config import resolve
from foreman.errors import ConfigError
from foreman.executors import LocalExecutor, from_settings


def test_executor_settings_come_through_the_config_path(tmp_path: Path) -> None:
    s = resolve({"executor": "ray", "ray_address": "10.0.0.1:6379", "ray_resources": "gpu_box=1,CPU=0.5"},
                env={"AGENTCRAFT_HOME": str(tmp_path)})
    assert (s.executor, s.ray_address, s.ray_resources) == ("ray", "10.0.0.1:6379", {"gpu_box": 1.0, "CPU": 0.5})
    s = resolve({}, env={"AGENTCRAFT_HOME": str(tmp_path), "AGENTCRAFT_EXECUTOR": "ray",
                         "AGENTCRAFT_RAY_HEARTBEAT": "2"})
    assert (s.executor, s.sources["executor"], s.ray_heartbeat) == ("ray", "env", 2.0)
    assert resolve({}, env={"AGENTCRAFT_HOME": str(tmp_path)}).executor == "local"


@pytest.mark.parametrize("bad", ["gpu_box=lots", "=1", "gpu_box=-1"])
def test_bad_resources_get_a_clear_error(tmp_path: Path, bad: str) -> None:
    with pytest.raises(ConfigError, match="ray_resources|resource"):
        resolve({"ray_resources": bad}, env={"AGENTCRAFT_HOME": str(tmp_path)})


def test_local_is_the_default_executor(tmp_path: Path) -> None:
    assert isinstance(from_settings(resolve({}, env={"AGENTCRAFT_HOME": str(tmp_path)})), LocalExecutor)


def test_ray_without_its_extra_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # as if the extra were not installed
    monkeypatch.delitem(sys.modules, "foreman.executors.ray", raising=False)
    with pytest.raises(ConfigError, match=r"pip install '\.\[ray\]'"):
        from_settings(resolve({"executor": "ray"}, env={"AGENTCRAFT_HOME": str(tmp_path)}))
