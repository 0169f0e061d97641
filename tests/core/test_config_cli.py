"""Settings precedence and errors; the ``foreman`` command's help, config and doctor output."""

from __future__ import annotations

import json
import socket
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


def test_the_retired_sim_flow_setting_still_loads_warns_and_does_nothing(tmp_path: Path,
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    """--no-sim-flow chose the sim's older scripted scenario, since removed: a config file (or a
    command line) holding it still loads, and the log says it has no effect."""
    from foreman.flow.assemble import make_backend

    _file(tmp_path, {"simFlow": False})
    with caplog.at_level("WARNING", logger="foreman.config"):
        s = resolve({"home": str(tmp_path)}, {})
    assert s.sources["sim_flow"] == "file"
    (line,) = [r.getMessage() for r in caplog.records if "deprecated" in r.getMessage()]
    assert "--sim-flow (simFlow, from file) is deprecated" in line and "no effect" in line
    assert type(make_backend(s)).__name__ == "SimTeam"  # the team on the flow all the same
    caplog.clear()
    resolve({"home": str(tmp_path / "other")}, {})
    assert not [r for r in caplog.records if "deprecated" in r.getMessage()]  # unset: nothing to say


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


@pytest.mark.parametrize("file,suggested", [
    ({"user_name": "ada"}, "'userName'"),  # found by a newcomer: `foreman config --json` prints snake_case
    ({"username": "ada"}, "'userName'"),
    ({"max_concurrent": 2}, "'maxConcurrent'"),
    ({"sim": {"turn_timeout": 5}}, "'turnTimeout'"),
    ({"prot": 2}, "'port'"),  # found by a newcomer: too short a key for the old cutoff, so no guess
    ({"workrs": 3}, "'workers'"),
    ({"agents": {"kit": {"modle": "m"}}}, "'model'"),
])
def test_an_unknown_key_near_a_known_one_gets_the_known_one_suggested(tmp_path: Path, file: dict,
                                                                         suggested: str) -> None:
    _file(tmp_path, file)
    with pytest.raises(ConfigError) as info:
        resolve({"home": str(tmp_path)}, {})
    assert f"Did you mean {suggested}?" in info.value.message, info.value.message


def test_the_camel_case_hint_is_given_only_for_a_key_in_another_case(tmp_path: Path) -> None:
    for key, hinted in (("prot", False), ("user_name", True), ("MAXCONCURRENT", True)):
        _file(tmp_path, {key: 1})
        with pytest.raises(ConfigError) as info:
            resolve({"home": str(tmp_path)}, {})
        assert ("camelCase" in info.value.message) is hinted, info.value.message


def test_an_unknown_key_of_a_local_profile_gets_the_known_one_suggested(tmp_path: Path) -> None:
    from foreman.backends.local.profiles import resolve_profile

    _file(tmp_path, {"local": {"profile": "small", "profiles": {"small": {"modl": "m"}}}}, profile="local")
    with pytest.raises(ConfigError) as info:
        resolve_profile(resolve({"home": str(tmp_path), "backend": "local"}, {}))
    assert "Did you mean 'model'?" in info.value.message, info.value.message


def test_an_unknown_key_far_from_every_known_one_gets_no_guess(tmp_path: Path) -> None:
    _file(tmp_path, {"zzzqqq": 1})
    with pytest.raises(ConfigError) as info:
        resolve({"home": str(tmp_path)}, {})
    assert "Did you mean" not in info.value.message and "'zzzqqq'" in info.value.message


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
    out = _foreman("config", "--json", "--profile", "sim", "--backend", "claude",
                   env={"AGENTCRAFT_HOME": str(tmp_path), "AGENTCRAFT_SEED": "11"})
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["backend"] == {"value": "claude", "source": "flag"}
    assert data["seed"] == {"value": 11, "source": "env"}
    assert data["maxConcurrent"] == {"value": 2, "source": "file"}
    assert data["port"] == {"value": 7878, "source": "default"}
    assert data["home"] == {"value": str(tmp_path), "source": "env"}


def test_config_text_shows_lists_as_the_flags_take_them(tmp_path: Path) -> None:
    """`foreman config` showed the default team as ['3'] and unset values as None."""
    out = _foreman("config", env={"AGENTCRAFT_HOME": str(tmp_path), "AGENTCRAFT_REPO": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    lines = {line.split()[0]: line for line in out.stdout.splitlines()}
    assert lines["workers"].split()[1] == "3" and lines["workers"].endswith("(default)")
    assert lines["workerNames"].split()[1].startswith("ash,bryn,cedar,")
    assert lines["repo"].split()[1] == str(tmp_path)
    assert "None" not in out.stdout and "['" not in out.stdout


def test_config_json_prints_the_keys_a_config_file_takes(tmp_path: Path) -> None:
    """Found by a newcomer: ``foreman config --json`` printed ``user_name`` while the file takes
    ``userName``. Every key printed is one the file takes, and the printed settings written back
    as a config file resolve to the same values."""
    _file(tmp_path, {"userName": "ada", "maxConcurrent": 2, "local": {"profile": "small", "profiles": {"small": {"model": "m"}}}})
    out = _foreman("config", "--json", env={"AGENTCRAFT_HOME": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["userName"] == {"value": "ada", "source": "file"}
    assert data["maxConcurrent"] == {"value": 2, "source": "file"}
    assert data["local"]["value"] == {"profile": "small", "profiles": {"small": {"model": "m"}}}
    assert [key for key in data if "_" in key] == []
    back = {key: item["value"] for key, item in data.items() if key not in ("home", "profile")}
    _file(tmp_path / "again", back)
    again = resolve({"home": str(tmp_path / "again")}, {})
    assert {o.file_key: again.values[o.key] for o in OPTIONS} == {o.file_key: back[o.file_key] for o in OPTIONS}
    assert {again.sources[o.key] for o in OPTIONS if back[o.file_key] is not None} == {"file"}  # (null: not set)


def test_config_error_exits_2_naming_the_key(tmp_path: Path) -> None:
    _file(tmp_path, {"colour": "blue"})
    out = _foreman("config", "--json", env={"AGENTCRAFT_HOME": str(tmp_path)})
    assert out.returncode == 2 and "'colour'" in out.stderr


def _bin_with_git(folder: Path, bwrap: str | None = None) -> str:
    """A PATH of one folder holding git and, given its script, a ``bwrap``: the doctor then sees
    the same machine whether or not bubblewrap is installed on the one running the tests."""
    import shutil

    folder.mkdir()
    git = shutil.which("git")
    assert git is not None
    (folder / "git").symlink_to(git)
    if bwrap is not None:
        (folder / "bwrap").write_text(bwrap)
        (folder / "bwrap").chmod(0o755)
    return str(folder)


# A bubblewrap that answers the doctor's probe (``bwrap --version``, then the namespaces around
# ``true``) as a working one does; the real one is the thing under test in tests/sandbox.
_WORKING_BWRAP = '#!/bin/sh\n[ "$1" = --version ] && { echo bubblewrap 0.8.0; exit 0; }\nexit 0\n'


@pytest.mark.parametrize("bwrap", [None, _WORKING_BWRAP], ids=["without-bwrap", "with-bwrap"])
def test_doctor_checks_git_home_and_port(tmp_path: Path, bwrap: str | None) -> None:
    """All good with an OS sandbox; without bubblewrap (a stock machine) it works, with exactly the
    sandbox's warning (found by a newcomer: this test said "all good" only where bwrap was installed)."""
    env = {"PATH": _bin_with_git(tmp_path / "bin", bwrap)}
    out = _foreman("doctor", "--home", str(tmp_path / "home"), "--port", "0", env=env)
    assert out.returncode == 0, out.stdout
    assert "[ok] git version" in out.stdout and ">= 2.38" in out.stdout
    assert "is writable" in out.stdout and "port 0 is free" in out.stdout
    if bwrap is not None:
        assert "[ok] OS sandbox on (bubblewrap 0.8.0)" in out.stdout and "[warn]" not in out.stdout
        assert out.stdout.rstrip().splitlines()[-1] == "all good"
    else:
        warned = [line for line in out.stdout.splitlines() if line.startswith("[warn]")]
        assert warned == ["[warn] OS sandbox unavailable, agents' commands run unsandboxed: bwrap is not installed "
                          "(Debian/Ubuntu: apt-get install bubblewrap)"], out.stdout
        assert "fix: install bubblewrap (apt-get install bubblewrap)" in out.stdout
        assert out.stdout.rstrip().splitlines()[-1] == "works, with 1 warning(s) above"
    assert "[FAIL]" not in out.stdout
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    bad = _foreman("doctor", "--home", str(blocked / "home"), "--port", "0", env=env)
    assert bad.returncode == 1 and "[FAIL]" in bad.stdout and "fix:" in bad.stdout


# ---------------------------------------------------------------- backend sections and the home file
def test_backend_section_applies_only_to_the_started_backend(tmp_path: Path) -> None:
    _file(tmp_path, {"backend": "claude", "maxConcurrent": 2, "claude": {"workers": ["kit", "wren"], "maxConcurrent": 4},
                     "local": {"workers": ["rowan"]}}, profile="claude")
    s = resolve({"home": str(tmp_path), "profile": "claude"}, {})
    assert s.profile == "claude" and s.backend == "claude"
    assert (s.workers, s.sources["workers"]) == (["kit", "wren"], "file:claude")
    assert (s.max_concurrent, s.sources["max_concurrent"]) == (4, "file:claude")  # the section outranks the top level
    s = resolve({"home": str(tmp_path), "backend": "local", "profile": "claude"}, {})
    assert (s.workers, s.sources["workers"]) == (["rowan"], "file:local")
    assert (s.max_concurrent, s.sources["max_concurrent"]) == (2, "file")
    s = resolve({"home": str(tmp_path), "backend": "sim", "profile": "claude"}, {})
    assert (s.workers, s.sources["workers"]) == (["3"], "default")
    s = resolve({"home": str(tmp_path), "profile": "claude", "workers": "tove"}, {})
    assert (s.workers, s.sources["workers"]) == (["tove"], "flag")


@pytest.mark.parametrize("section,fragment", [
    ({"claude": {"wrokers": ["kit"]}}, "unknown key 'wrokers' in the 'claude' section"),
    ({"claude": {"speed": 0}}, "claude.speed: must be greater than 0"),
    ({"claude": {"workers": ["marlow"]}}, "claude.workers: worker 'marlow' is the lead's name"),
    ({"claude": {"backend": "local"}}, "claude.backend: a backend section cannot choose the backend"),
    ({"claude": ["kit"]}, "claude must be a JSON object"),
    ({"profiles": {}}, "unknown key 'profiles'"),
])
def test_backend_section_errors_name_the_key(tmp_path: Path, section: dict, fragment: str) -> None:
    _file(tmp_path, section, profile="claude")
    with pytest.raises(ConfigError) as info:
        resolve({"home": str(tmp_path), "backend": "claude"}, {})
    assert fragment in info.value.message and "config.json" in info.value.message


_UNUSED = {"claude": {"workers": ["zz!"], "modle": "x"}, "local": {"url": "ftp://x", "profile": "nope"},
           "sim": {"speed": 0}}
"""A section of each backend, each wrong: an unknown key, bad values, a profile not defined."""


@pytest.mark.parametrize("backend,wrong", [("sim", "sim.speed"), ("claude", "'modle'"), ("local", "local.url")])
def test_only_the_sections_of_the_backends_the_team_uses_are_checked(tmp_path: Path, backend: str, wrong: str,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """Found by a newcomer: a `claude` section kept for later stopped `foreman start --backend sim`."""
    from foreman.cli import main

    _file(tmp_path, {k: v for k, v in _UNUSED.items() if k != backend}, profile=backend)
    assert main(["config", "--home", str(tmp_path), "--backend", backend]) == 0, capsys.readouterr().err
    capsys.readouterr()
    _file(tmp_path, _UNUSED, profile=backend)
    assert main(["config", "--home", str(tmp_path), "--backend", backend]) == 2
    assert wrong in capsys.readouterr().err


def test_a_mixed_team_checks_the_sections_of_both_its_backends(tmp_path: Path) -> None:
    _file(tmp_path, {"local": {"maxTurns": 0}}, profile="claude")
    resolve({"home": str(tmp_path), "backend": "claude"}, {})  # the local section is not used
    with pytest.raises(ConfigError) as info:
        resolve({"home": str(tmp_path), "backend": "claude", "worker_backend": "local"}, {})
    assert "local.maxTurns: must be greater than 0" in info.value.message
    _file(tmp_path, {"local": {"maxTurns": 0}, "agents": {"kit": {"backend": "local"}}}, profile="claude")
    with pytest.raises(ConfigError):
        resolve({"home": str(tmp_path), "backend": "claude"}, {})


def test_local_section_keeps_its_endpoint_profiles_beside_settings(tmp_path: Path) -> None:
    from foreman.backends.local.profiles import resolve_profile

    _file(tmp_path, {"local": {"maxTurnsWorker": 9, "profile": "small",
                               "profiles": {"small": {"url": "http://127.0.0.1:9/v1", "model": "m"}}}}, profile="local")
    s = resolve({"home": str(tmp_path), "backend": "local"}, {})
    assert (s.max_turns_worker, s.sources["max_turns_worker"]) == (9, "file:local")
    assert set(s.sections["local"]) == {"profile", "profiles"}
    assert resolve_profile(s).url == "http://127.0.0.1:9/v1"


def test_home_file_is_shared_by_profiles_below_the_profile_file(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"port": 5151, "seed": 3, "claude": {"workers": ["juniper"]},
                                                      "agents": {"kit": {"model": "home-model"}}}))
    _file(tmp_path, {"seed": 4})
    s = resolve({"home": str(tmp_path)}, {})
    assert (s.port, s.sources["port"]) == (5151, "home-file")
    assert (s.seed, s.sources["seed"]) == (4, "file")
    assert (s.workers, s.sources["workers"]) == (["3"], "default")  # sim started: the claude section waits
    assert s.sections["agents"] == {"kit": {"model": "home-model"}}
    s = resolve({"home": str(tmp_path), "profile": "other", "backend": "claude"}, {"AGENTCRAFT_SEED": "5"})
    assert (s.port, s.sources["port"]) == (5151, "home-file")
    assert (s.workers, s.sources["workers"]) == (["juniper"], "home-file:claude")
    assert (s.seed, s.sources["seed"]) == (5, "env")
    (tmp_path / "config.json").write_text(json.dumps({"backend": "local"}))
    s = resolve({"home": str(tmp_path)}, {})
    assert (s.backend, s.sources["backend"], s.profile) == ("local", "home-file", "local")
    (tmp_path / "config.json").write_text(json.dumps({"prot": 1}))
    with pytest.raises(ConfigError, match="unknown key 'prot'"):
        resolve({"home": str(tmp_path)}, {})


def test_config_json_shows_home_file_and_section_sources(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"maxConcurrent": 2, "sim": {"speed": 3}}))
    out = _foreman("config", "--json", env={"AGENTCRAFT_HOME": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["maxConcurrent"] == {"value": 2, "source": "home-file"}
    assert data["speed"] == {"value": 3.0, "source": "home-file:sim"}


# ---------------------------------------------------------------- paths git cannot fence in
def test_start_refuses_a_home_with_a_colon(tmp_path: Path) -> None:
    home = tmp_path / "a:b"
    out = _foreman("start", "--home", str(home), "--port", "0", "--no-autostart")
    assert out.returncode == 2
    assert "contains ':'" in out.stderr and "GIT_CEILING_DIRECTORIES" in out.stderr
    assert not home.exists()
    doctor = _foreman("doctor", "--home", str(home), "--port", "0")
    assert doctor.returncode == 1 and "[FAIL] the profile folder" in doctor.stdout


# ---------------------------------------------------------------- git identity
def _no_identity(tmp_path: Path) -> dict:
    empty_home = tmp_path / "emptyhome"
    empty_home.mkdir(exist_ok=True)
    (tmp_path / "empty.gitconfig").write_text("")
    return {"HOME": str(empty_home), "GIT_CONFIG_GLOBAL": str(tmp_path / "empty.gitconfig"), "GIT_CONFIG_NOSYSTEM": "1"}


def _foreman_without(keys: tuple[str, ...], *args: str, env: dict) -> subprocess.CompletedProcess[str]:
    import os

    full = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTCRAFT_", *keys))}
    full.update(env, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "foreman", *args], capture_output=True, text=True, env=full,
                          cwd=ROOT, timeout=60)


_IDENTITY_VARS = ("EMAIL", "GIT_AUTHOR_", "GIT_COMMITTER_", "ANTHROPIC_")


def test_start_with_a_real_backend_warns_once_without_identity_and_a_failed_start_leaves_no_state(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]  # nothing listens there once closed
    home = tmp_path / "home"
    out = _foreman_without(_IDENTITY_VARS, "start", "--home", str(home), "--backend", "local", "--port", "0",
                           "--url", f"http://127.0.0.1:{dead}/v1", env=_no_identity(tmp_path))
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("git does not know who you are") == 1 and "user.email" in out.stderr
    assert "cannot reach the endpoint" in out.stderr
    leftovers = sorted(p.name for p in (home / "local").iterdir()) if (home / "local").exists() else []
    assert leftovers in ([], ["foreman.log"])
    sim = _foreman_without(_IDENTITY_VARS, "config", "--home", str(home), env=_no_identity(tmp_path))
    assert "git does not know" not in sim.stderr


def test_a_taken_port_leaves_no_new_profile_state(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        out = _foreman("start", "--home", str(home), "--port", str(port), "--no-autostart")
    assert out.returncode == 2 and f"port {port} is already in use" in out.stderr
    assert not (home / "sim" / "state.db").exists()
    assert sorted(p.name for p in (home / "sim").iterdir()) in ([], ["foreman.log"])


def test_missing_login_registers_no_repository_in_an_existing_profile(tmp_path: Path) -> None:
    from foreman.store import Store

    home, repo = tmp_path / "home", tmp_path / "repo"
    store = Store(home / "claude")
    store.open()
    store.close()
    repo.mkdir()
    for cmd in (["git", "init", "-q", "-b", "main"], ["git", "commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(cmd, cwd=repo, check=True, capture_output=True)
    out = _foreman_without(("ANTHROPIC_", "CLAUDE_CODE_"), "start", "--home", str(home), "--backend", "claude", "--port", "0",
                           "--repo", str(repo), env={})
    assert out.returncode == 2, out.stderr
    store = Store(home / "claude")
    world, _ = store.open()
    store.close()
    assert dict(world.repos) == {}


def test_tui_line_mode_gives_up_without_a_daemon(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    import time

    began = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "foreman", "tui", "--line", "--home", str(tmp_path), "--port", str(port),
                          "--connect-timeout", "1.5"], input="/agents\n", capture_output=True, text=True, timeout=60,
                         cwd=ROOT, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 3
    assert "cannot reach the Foreman" in out.stderr and "foreman start" in out.stderr
    assert time.monotonic() - began < 20


@pytest.mark.parametrize(("data", "fragments"), [
    ({"budgetGoal": -5}, ["budgetGoal", "greater than 0 (USD), got -5", "leave it unset"]),
    ({"budgetTask": 0}, ["budgetTask", "must be greater than 0"]),
    ({"budgetDay": "-1.5"}, ["budgetDay", "must be greater than 0"]),
    ({"maxBudget": -0.01}, ["maxBudget", "must be greater than 0"]),
    ({"sim": {"budgetGoal": -1}}, ["sim.budgetGoal", "must be greater than 0"]),
    ({"agents": {"kit": {"modle": "q"}}}, ["agents.kit", "'modle'", "'backend' and 'model'"]),
    ({"agents": {"kit": {"backend": "nope"}}}, ["agents.kit.backend", "'nope'", "'claude' or 'local'"]),
    ({"agents": {"kit": "local"}}, ["agents.kit", "must be an object"]),
    ({"agents": {"bob": {"model": "m"}}}, ["agents", "unknown agent 'bob'", "kit"]),
])
def test_bad_budgets_and_agent_sections_are_errors_naming_file_key_and_fix(
        tmp_path: Path, data: dict, fragments: list[str]) -> None:
    # the sim backend ignores budgets and per-agent overrides: they must still be checked when read
    _file(tmp_path, data)
    with pytest.raises(ConfigError) as info:
        resolve({"home": str(tmp_path)}, {})
    message = info.value.message
    assert str(tmp_path / "sim" / "config.json") in message
    for fragment in fragments:
        assert fragment in message, message


def test_good_budgets_and_agent_sections_are_kept(tmp_path: Path) -> None:
    _file(tmp_path, {"budgetGoal": 2.5, "budgetDay": "10", "agents": {"kit": {"backend": "local", "model": "m"}}})
    s = resolve({"home": str(tmp_path)}, {})
    assert (s.budget_goal, s.budget_day, s.budget_task) == (2.5, 10.0, None)
    assert s.sections["agents"] == {"kit": {"backend": "local", "model": "m"}}


@pytest.mark.parametrize("flags,env,file,where", [
    ({"auto_answer": "bogus"}, {}, {}, "--auto-answer"),
    ({}, {"AGENTCRAFT_AUTO_ANSWER": "merge,bogus"}, {}, "AGENTCRAFT_AUTO_ANSWER"),
    ({}, {}, {"autoAnswer": "merge,everything"}, "config.json: autoAnswer"),
    ({}, {}, {"autoAnswer": ["permission", "nope"]}, "config.json: autoAnswer"),
])
def test_unknown_auto_answer_kind_names_the_key_and_the_allowed_kinds(
        tmp_path: Path, flags: dict, env: dict, file: dict, where: str) -> None:
    _file(tmp_path, file)
    with pytest.raises(ConfigError) as info:
        resolve({"home": str(tmp_path), **flags}, env)
    assert where in info.value.message
    for kind in ("merge", "permission", "question"):
        assert kind in info.value.message.split("allowed:")[1]


def test_auto_answer_accepts_the_decision_kinds(tmp_path: Path) -> None:
    s = resolve({"home": str(tmp_path), "auto_answer": "Merge, question"}, {})
    assert s.auto_answer == ["merge", "question"]
    _file(tmp_path, {"autoAnswer": ["permission"]})
    assert resolve({"home": str(tmp_path)}, {}).auto_answer == ["permission"]


@pytest.mark.parametrize("flags,env,file,where", [
    ({}, {}, {"seed": 1.5}, "config.json: seed"),
    ({}, {}, {"seed": True}, "config.json: seed"),
    ({"seed": "1.5"}, {}, {}, "--seed"),
    ({}, {"AGENTCRAFT_MAX_CONCURRENT": "2.5"}, {}, "AGENTCRAFT_MAX_CONCURRENT"),
    ({}, {}, {"port": 80.5}, "config.json: port"),
])
def test_whole_number_settings_refuse_fractions(tmp_path: Path, flags: dict, env: dict, file: dict, where: str) -> None:
    _file(tmp_path, file)
    with pytest.raises(ConfigError) as info:
        resolve({"home": str(tmp_path), **flags}, env)
    assert where in info.value.message and "must be a whole number" in info.value.message


def test_whole_number_settings_accept_integers(tmp_path: Path) -> None:
    _file(tmp_path, {"seed": 3.0, "maxConcurrent": 2})
    s = resolve({"home": str(tmp_path)}, {"AGENTCRAFT_PORT": " 9001 "})
    assert (s.seed, s.max_concurrent, s.port) == (3, 2, 9001)
    assert isinstance(s.seed, int)


@pytest.mark.parametrize("name", ["../escape", "a/b", "..", ".", "/abs", "a b", "x\\y"])
def test_profile_must_be_a_plain_name(tmp_path: Path, name: str) -> None:
    home = tmp_path / "home"
    with pytest.raises(ConfigError) as info:
        resolve({"home": str(home), "profile": name}, {})
    assert "--profile" in info.value.message and "plain name" in info.value.message
    with pytest.raises(ConfigError) as info:
        resolve({"home": str(home)}, {"AGENTCRAFT_PROFILE": name})
    assert "AGENTCRAFT_PROFILE" in info.value.message


def test_plain_profile_names_are_accepted(tmp_path: Path) -> None:
    for name in ("work", "team-2", "my_profile", "v1.2", "..x"):
        assert resolve({"home": str(tmp_path), "profile": name}, {}).profile_dir == tmp_path / name


def test_start_with_an_escaping_profile_creates_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    for name in ("../escape", "a/b"):
        out = _foreman("start", "--home", str(home), "--profile", name, "--port", "0", env={"HOME": str(tmp_path / "h")})
        assert out.returncode != 0
        assert "--profile" in out.stderr and "plain name" in out.stderr, out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home"]
    assert list(home.iterdir()) == []


@pytest.mark.parametrize("flags,env,file,fragment", [
    ({"port": "abc"}, {}, {}, "--port: must be a whole number, not 'abc'"),
    ({}, {}, {"port": "abc"}, "config.json: port: must be a whole number, not 'abc'"),
    ({}, {}, {"budgetDay": "ten"}, "config.json: budgetDay: must be a number of dollars, not 'ten'"),
    ({}, {"AGENTCRAFT_CI_TIMEOUT": "soon"}, {}, "AGENTCRAFT_CI_TIMEOUT: must be a number, not 'soon'"),
    ({}, {}, {"speed": True}, "config.json: speed: must be a number, not True"),
    ({}, {}, {"showcase": "quiet"}, "expected one of '' (empty), busy, late, got 'quiet'"),
])
def test_bad_value_errors_say_what_is_wanted_not_pythons_message(
        tmp_path: Path, flags: dict, env: dict, file: dict, fragment: str) -> None:
    _file(tmp_path, file)
    with pytest.raises(ConfigError) as info:
        resolve({"home": str(tmp_path), **flags}, env)
    message = info.value.message
    assert fragment in message, message
    assert "invalid literal" not in message and "could not convert" not in message and "one of ," not in message


@pytest.mark.parametrize("file,args,named", [
    ({"local": {"profiles": {"small": {"mode": "guidedd"}}}}, [], "local.profiles.small.mode"),
    ({"local": {"profiles": {"small": {"mode": "guided"}}}}, ["--local-profile", "nosuch"], "no local profile named 'nosuch'"),
])
@pytest.mark.parametrize("command", ["config", "doctor"])
def test_config_and_doctor_check_the_local_profiles_as_start_does(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                  file: dict, args: list[str], named: str,
                                                                  command: str) -> None:
    """Found by a newcomer: a bad local profile passed `foreman config` and `doctor` and failed
    only at `foreman start`."""
    from foreman.cli import main

    _file(tmp_path, file)
    code = main([command, "--home", str(tmp_path), "--profile", "sim", "--backend", "local", *args])
    err = capsys.readouterr().err
    assert code == 2 and named in err, err


def test_a_misspelt_environment_variable_is_named_with_the_one_meant(tmp_path: Path, caplog) -> None:
    """`AGENTCRAFT_WROKERS=12` was silently ignored (the team stayed at 3)."""
    env = {"AGENTCRAFT_HOME": str(tmp_path), "AGENTCRAFT_WROKERS": "12", "AGENTCRAFT_TURN": "t1",
           "AGENTCRAFT_ZZZ": "1", "AGENTCRAFT_PORT": "0"}
    with caplog.at_level("WARNING", logger="foreman.config"):
        resolve({}, env=env)
    lines = [r.getMessage() for r in caplog.records if r.name == "foreman.config"]
    assert lines == ["AGENTCRAFT_WROKERS is not a Foreman setting and is ignored. Did you mean AGENTCRAFT_WORKERS?",
                     "AGENTCRAFT_ZZZ is not a Foreman setting and is ignored. `foreman start --help` names every "
                     "variable."]
