"""Settings precedence and errors; the ``foreman`` command's help, config and doctor output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from foreman.config import OPTIONS, resolve
from foreman.errors import ConfigError

from .live import ROOT


def _file(home: Path, data: dict, profile: str = "sim") -> None:
    (home / profile).mkdir(parents=True, exist_ok=True)
    (home / profile / "config.json").write_text(json.dumps(data))


def test_precedence_flag_env_file_default(tmp_path: Path) -> None:
    _file(tmp_path, {"port": 3003, "userName": "file-user", "maxConcurrent": 5})
    env = {"AGENTCRAFT_HOME": str(tmp_path), "AGENTCRAFT_PORT": "2002", "AGENTCRAFT_USER_NAME": "env-user"}
    s = resolve({"port": "1001"}, env)
    assert (s.port, s.sources["port"]) == (1001, "flag")
    assert (s.user_name, s.sources["user_name"]) == ("env-user", "env")
    assert (s.max_concurrent, s.sources["max_concurrent"]) == (5, "file")
    assert (s.ci_timeout, s.sources["ci_timeout"]) == (600.0, "default")
    assert s.home == tmp_path and s.sources["home"] == "env" and s.profile == "sim"
    s = resolve({}, env)
    assert (s.port, s.sources["port"]) == (2002, "env")
    s = resolve({}, {"AGENTCRAFT_HOME": str(tmp_path)})
    assert (s.port, s.sources["port"]) == (3003, "file")
    s = resolve({"home": str(tmp_path / "empty")}, {})
    assert (s.port, s.sources["port"]) == (7878, "default")
    assert s.sources["home"] == "flag"


def test_profile_defaults_to_the_backend_and_reads_its_file(tmp_path: Path) -> None:
    _file(tmp_path, {"port": 4444}, profile="work")
    assert resolve({"home": str(tmp_path), "profile": "work"}, {}).port == 4444
    assert resolve({"home": str(tmp_path)}, {"AGENTCRAFT_PROFILE": "work"}).port == 4444
    assert resolve({"home": str(tmp_path)}, {}).profile == "sim"


def test_unknown_config_key_is_named(tmp_path: Path) -> None:
    _file(tmp_path, {"port": 1, "prot": 2})
    with pytest.raises(ConfigError) as info:
        resolve({"home": str(tmp_path)}, {})
    assert "'prot'" in info.value.message and "port" in info.value.message


@pytest.mark.parametrize("flags,env,file,where", [
    ({"port": "seventy"}, {}, {}, "--port"),
    ({}, {"AGENTCRAFT_PORT": "seventy"}, {}, "AGENTCRAFT_PORT"),
    ({}, {}, {"port": "seventy"}, "config.json: port"),
    ({}, {"AGENTCRAFT_RESET": "maybe"}, {}, "AGENTCRAFT_RESET"),
    ({}, {}, {"backend": "gpt9"}, "config.json: backend"),
    ({}, {}, {"mergeStyle": "rebase"}, "config.json: mergeStyle"),
])
def test_bad_values_name_the_key(tmp_path: Path, flags: dict, env: dict, file: dict, where: str) -> None:
    _file(tmp_path, file)
    with pytest.raises(ConfigError) as info:
        resolve({"home": str(tmp_path), **flags}, env)
    assert where in info.value.message


def test_config_file_must_be_an_object(tmp_path: Path) -> None:
    (tmp_path / "sim").mkdir()
    (tmp_path / "sim" / "config.json").write_text("[1, 2]")
    with pytest.raises(ConfigError, match="JSON object"):
        resolve({"home": str(tmp_path)}, {})


def _foreman(*args: str, env: dict | None = None) -> subprocess.CompletedProcess[str]:
    import os

    full = {k: v for k, v in os.environ.items() if not k.startswith("AGENTCRAFT_")}
    full.update(env or {})
    full["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "foreman", *args], capture_output=True, text=True, env=full,
                          cwd=ROOT, timeout=60)


def test_help_lists_commands_and_every_start_option() -> None:
    top = _foreman("--help")
    assert top.returncode == 0
    for cmd in ("start", "tui", "config", "doctor", "docs"):
        assert cmd in top.stdout
    start = _foreman("start", "--help")
    assert start.returncode == 0
    text = " ".join(start.stdout.split())
    for opt in OPTIONS:
        assert opt.cli in text, opt.cli
        assert opt.env in text.replace("AGENTCRAFT_ ", "AGENTCRAFT_"), opt.env
    assert "--home" in text and "--profile" in text and "--no-autostart" in text


def test_config_json_shows_values_and_sources(tmp_path: Path) -> None:
    _file(tmp_path, {"maxConcurrent": 2})
    out = _foreman("config", "--json", "--port", "9999", env={"AGENTCRAFT_HOME": str(tmp_path), "AGENTCRAFT_SEED": "11"})
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["port"] == {"value": 9999, "source": "flag"}
    assert data["seed"] == {"value": 11, "source": "env"}
    assert data["max_concurrent"] == {"value": 2, "source": "file"}
    assert data["backend"] == {"value": "sim", "source": "default"}
    assert data["home"] == {"value": str(tmp_path), "source": "env"}


def test_config_error_exits_2_naming_the_key(tmp_path: Path) -> None:
    _file(tmp_path, {"colour": "blue"})
    out = _foreman("config", "--json", env={"AGENTCRAFT_HOME": str(tmp_path)})
    assert out.returncode == 2 and "'colour'" in out.stderr


def test_doctor_checks_git_home_and_port(tmp_path: Path) -> None:
    out = _foreman("doctor", "--home", str(tmp_path / "home"), "--port", "0")
    assert out.returncode == 0, out.stdout
    assert "[ok] git version" in out.stdout and ">= 2.38" in out.stdout
    assert "is writable" in out.stdout and "port 0 is free" in out.stdout and "all good" in out.stdout
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    bad = _foreman("doctor", "--home", str(blocked / "home"), "--port", "0")
    assert bad.returncode == 1 and "[FAIL]" in bad.stdout and "fix:" in bad.stdout
