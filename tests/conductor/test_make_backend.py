"""Backends are chosen per role and per agent (mixed teams, issue 9 item 7)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foreman.flow.assemble import make_backend
from foreman.config import resolve
from foreman.errors import ConfigError


def settings_with(tmp_path: Path, flags: dict, agents: dict | None = None):
    home = tmp_path / "home"
    profile = flags.get("backend", "sim")
    (home / profile).mkdir(parents=True)
    if agents is not None:
        (home / profile / "config.json").write_text(json.dumps({"agents": agents}))
    return resolve({"home": str(home), **flags}, env={"ANTHROPIC_API_KEY": "x"})


def test_a_claude_lead_reviews_local_workers(tmp_path: Path) -> None:
    c = make_backend(settings_with(tmp_path, {"backend": "local", "lead_backend": "claude"}))
    assert c.name == "mixed"
    assert c.runners["marlow"].name == "claude" and c.runners["kit"].name == "local"
    assert c.models["marlow"] == "opus"


def test_one_agent_switched_in_config(tmp_path: Path) -> None:
    c = make_backend(settings_with(tmp_path, {"backend": "claude"}, {"kit": {"backend": "local", "model": "qwen"}}))
    assert c.runners["kit"].name == "local" and c.runners["wren"].name == "claude"
    assert c.models["kit"] == "qwen" and c.models["wren"] == "sonnet"


@pytest.mark.parametrize("agents, needle", [
    ({"zed": {"backend": "local"}}, "unknown agent 'zed'"),
    ({"kit": {"backend": "gpt"}}, "kit.backend"),
    ({"kit": {"colour": "red"}}, "only 'backend' and 'model'"),
])
def test_bad_agent_overrides_name_the_key(tmp_path: Path, agents: dict, needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        make_backend(settings_with(tmp_path, {"backend": "claude"}, agents))


@pytest.mark.parametrize("agents", [
    {"zed": {"backend": "local"}},
    {"kit": {"backend": "gpt"}},
    {"kit": {"colour": "red"}},
    {"kit": "local"},
    ["kit"],
])
def test_the_backend_and_the_config_file_check_agents_by_one_rule(tmp_path: Path, agents) -> None:
    """Settings that reach make_backend without the file check (built in code) get the very
    message the config file's check gives: one rule, one wording."""
    from dataclasses import replace

    if isinstance(agents, dict):
        with pytest.raises(ConfigError) as from_file:
            settings_with(tmp_path / "file", {"backend": "claude"}, agents)
        file_says = from_file.value.message.split(": agents", 1)[1]
    else:
        file_says = None  # the file reader refuses a non-object section before the agents check
    settings = replace(settings_with(tmp_path / "code", {"backend": "claude"}), sections={"agents": agents})
    with pytest.raises(ConfigError) as from_backend:
        make_backend(settings)
    backend_says = from_backend.value.message
    assert str(settings.profile_dir / "config.json") in backend_says
    if file_says is not None:
        assert backend_says.split(": agents", 1)[1] == file_says
    else:
        assert "must be" in backend_says and "object" in backend_says
