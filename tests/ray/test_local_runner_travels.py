"""The local backend's runner travels to a node as a recipe (:func:`foreman.executors.node.portable`)
that rebuilds it there with the daemon's profile: a profile given by ``--url``/``--model`` alone
(no ``local.profiles`` in config.json, as the README's "More than one machine" starts it) and a
profile defined in config.json alike. The recipe goes through pickle as Ray sends it."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from foreman.backends.local.runner import LocalRunner
from foreman.config import resolve
from foreman.executors.node import portable


def rebuilt_on_a_node(runner: LocalRunner) -> LocalRunner:
    recipe = pickle.loads(pickle.dumps(portable(runner)))
    built = recipe()
    assert isinstance(built, LocalRunner)
    return built


def test_a_profile_from_url_and_model_flags_alone_is_rebuilt_on_the_node(tmp_path: Path) -> None:
    settings = resolve({"home": str(tmp_path / "home"), "backend": "local", "url": "http://127.0.0.1:8790/v1",
                        "model": "qwen-coder"}, env={})
    here = LocalRunner(settings)
    there = rebuilt_on_a_node(here)
    assert (there.profile.url, there.profile.model) == ("http://127.0.0.1:8790/v1", "qwen-coder")
    assert there.profile == here.profile


@pytest.mark.parametrize("chosen", [None, "small"])
def test_a_profile_defined_in_config_json_is_rebuilt_on_the_node(tmp_path: Path, chosen: str | None) -> None:
    home = tmp_path / "home"
    (home / "local").mkdir(parents=True)
    (home / "local" / "config.json").write_text(json.dumps({"local": {"profile": "big", "profiles": {
        "big": {"url": "http://10.0.0.5:8000/v1", "model": "big-coder", "protocol": "native"},
        "small": {"url": "http://10.0.0.5:8001/v1", "model": "small-coder", "mode": "guided"}}}}))
    settings = resolve({"home": str(home), "backend": "local"}, env={})
    here = LocalRunner(settings, profile=chosen)
    there = rebuilt_on_a_node(here)
    assert there.profile == here.profile and there.profile.name == (chosen or "big")
