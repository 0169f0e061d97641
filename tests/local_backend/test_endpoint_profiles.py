"""Preflight against real HTTP, profiles from config.json, sessions resumed across turns."""

from __future__ import annotations

import json
import socket
from dataclasses import replace
from pathlib import Path

import pytest

from foreman.backends.local.profiles import _FILE_KEYS, LocalProfile, resolve_profile
from foreman.backends.local.runner import LocalRunner
from foreman.config import resolve
from foreman.errors import BackendError, ConfigError

from .fakeserver import FakeOpenAI, text
from .helpers import FakeTools, git_repo, request, settings_for


async def test_preflight_names_a_model_the_endpoint_does_not_serve(tmp_path: Path) -> None:
    with FakeOpenAI(lambda req: text("x"), models=("qwen-coder",)) as server:
        runner = LocalRunner(settings_for(tmp_path, server.url, model="gpt-9"))
        with pytest.raises(BackendError, match=r"does not serve model 'gpt-9' \(it serves: qwen-coder\)"):
            await runner.preflight()
        await runner.close()
        ok = LocalRunner(settings_for(tmp_path, server.url))
        await ok.preflight()
        assert ok.default_model == "qwen-coder" and "qwen-coder" in ok.status()[1]
        await ok.close()


async def test_preflight_unreachable_endpoint(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    runner = LocalRunner(settings_for(tmp_path, f"http://127.0.0.1:{port}/v1"))
    with pytest.raises(BackendError, match=f"cannot reach the endpoint http://127.0.0.1:{port}/v1 \\(Connection refused\\)"):
        await runner.preflight()
    await runner.close()


def test_profiles_from_config(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "local").mkdir(parents=True)
    (home / "local" / "config.json").write_text(json.dumps({"local": {"profile": "small", "profiles": {
        "small": {"url": "http://127.0.0.1:9/v1", "model": "smol", "contextWindow": 4096, "maxTokens": 128,
                  "temperature": 0, "protocol": "native", "maxTurns": 6}}}}))
    settings = resolve({"home": str(home), "backend": "local"}, env={})
    p = resolve_profile(settings)
    assert p == LocalProfile(name="small", url="http://127.0.0.1:9/v1", model="smol", context_window=4096,
                             max_tokens=128, temperature=0.0, protocol="native", max_turns=6)
    flagged = resolve({"home": str(home), "backend": "local", "url": "http://h:1/v1", "model": "m2"}, env={})
    assert (resolve_profile(flagged).url, resolve_profile(flagged).model) == ("http://h:1/v1", "m2")
    env = resolve({"home": str(home), "backend": "local"}, env={"FOREMAN_URL": "http://e:2/v1"})
    assert resolve_profile(env).url == "http://e:2/v1"
    with pytest.raises(ConfigError, match="no local profile named 'big'"):
        resolve_profile(settings, "big")


@pytest.mark.parametrize("bad, match", [
    ({"profiles": {"a": {"protocl": "text"}}}, "unknown key 'protocl'"),
    ({"profiles": {"a": {"protocol": "xml"}}}, "expected one of text, native"),
    ({"profiles": {"a": {"maxTurns": 0}}}, "must be at least 1"),
    ({"profile": "b", "profiles": {"a": {}}}, "does not define"),
    ({"profiles": {"a": {"seed": -1}}}, r"local.profiles.a.seed: expected a whole number of at least 0, got -1"),
    ({"profiles": {"a": {"seed": "7"}}}, r"a.seed: expected a whole number"),
    ({"profiles": {"a": {"seed": True}}}, r"a.seed: expected a whole number"),
    ({"profiles": {"a": {"seed": 1.5}}}, r"a.seed: expected a whole number"),
    ({"profiles": {"a": {"testOrder": "before"}}}, r"a.testOrder: expected one of first, after, got 'before'"),
])
def test_bad_profiles_name_the_key(tmp_path: Path, bad: dict, match: str) -> None:
    home = tmp_path / "home"
    (home / "local").mkdir(parents=True)
    (home / "local" / "config.json").write_text(json.dumps({"local": bad}))
    with pytest.raises(ConfigError, match=match):
        resolve_profile(resolve({"home": str(home), "backend": "local"}, env={}))


@pytest.mark.parametrize("key", sorted(k for k in _FILE_KEYS if "_" not in k and k != "ablate"))
def test_a_bad_value_names_the_key_as_the_file_wrote_it(tmp_path: Path, key: str) -> None:
    """Every key of a profile, given a value of no use (a list), is named in the error as written
    (``maxTurns``, not the field's ``max_turns``: a user searching the file for it finds it)."""
    home = tmp_path / "home"
    (home / "local").mkdir(parents=True)
    (home / "local" / "config.json").write_text(json.dumps({"local": {"profiles": {"a": {key: [[1]]}}}}))
    with pytest.raises(ConfigError) as raised:
        resolve_profile(resolve({"home": str(home), "backend": "local"}, env={}))
    assert f"local.profiles.a.{key}: " in str(raised.value), str(raised.value)


async def test_a_profile_seed_goes_with_every_request_and_no_seed_sends_none(tmp_path: Path) -> None:
    """The seed makes a run repeatable: every chat request of a turn carries it (OpenAI's
    ``seed`` field, which llama.cpp's server honours); a profile without one sends no seed."""
    repo = git_repo(tmp_path / "wt", {"a.txt": "alpha\n"})
    for seed in (0, 41, None):
        replies = [text("READ a.txt"), text("FINAL a.txt holds alpha")]
        with FakeOpenAI(lambda req: replies.pop(0)) as server:
            runner = LocalRunner(settings_for(tmp_path / str(seed), server.url))
            runner.profile = replace(runner.profile, seed=seed)
            result = await runner.run_turn(request(repo, job="followup", task=None), FakeTools(repo))
            await runner.close()
        chats = [r for r in server.requests if "messages" in r]
        assert result.ok and len(chats) == 2
        assert [r.get("seed", "absent") for r in chats] == [seed if seed is not None else "absent"] * 2
    home = tmp_path / "home"
    (home / "local").mkdir(parents=True)
    (home / "local" / "config.json").write_text(json.dumps({"local": {"profiles": {"a": {"seed": 3}}}}))
    assert resolve_profile(resolve({"home": str(home), "backend": "local"}, env={}), "a").seed == 3


async def test_session_resumes_the_conversation(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "wt", {"a.txt": "alpha\n"})
    replies = [text("READ a.txt"), text("FINAL a.txt holds alpha"), text("FINAL still alpha")]
    with FakeOpenAI(lambda req: replies.pop(0)) as server:
        runner = LocalRunner(settings_for(tmp_path, server.url))
        tools = FakeTools(repo)
        first = await runner.run_turn(request(repo, job="followup", task=None), tools)
        assert first.ok and first.session_id and tools.sessions == [first.session_id]
        second = await runner.run_turn(request(repo, "Any news?", job="followup", task=None,
                                               session_id=first.session_id), FakeTools(repo))
        await runner.close()
    assert second.ok and second.session_id == first.session_id
    resumed = server.requests[-1]["messages"]
    assert [m["role"] for m in resumed] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert resumed[-1]["content"] == "Any news?" and "alpha" in resumed[3]["content"]
    assert (runner.traces_dir / f"{first.session_id}.jsonl").exists()


async def test_mixed_team_preflight_checks_only_the_local_roles(tmp_path: Path) -> None:
    with FakeOpenAI(lambda req: text("x"), models=("fake-coder",)) as server:
        mixed = settings_for(tmp_path, server.url, lead_backend="claude", worker_backend="local",
                             lead_model="opus", worker_model="fake-coder")
        runner = LocalRunner(mixed)
        assert runner._wanted_models() == ["fake-coder"]
        await runner.preflight()  # "opus" belongs to the claude lead: not asked of this endpoint
        await runner.close()
        all_local = settings_for(tmp_path, server.url, lead_model="opus")
        with pytest.raises(BackendError, match="does not serve model 'opus'"):
            await LocalRunner(all_local).preflight()


def test_make_backend_gives_every_agent_the_local_runner(tmp_path: Path) -> None:
    from foreman.flow.assemble import make_backend

    conductor = make_backend(settings_for(tmp_path, "http://127.0.0.1:9/v1"))
    runners = set(map(id, conductor.runners.values()))
    assert len(runners) == 1 and isinstance(next(iter(conductor.runners.values())), LocalRunner)
    assert conductor.name == "local"
