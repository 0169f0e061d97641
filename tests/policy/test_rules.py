"""Scoped "always allow" keys: exact matching, never wider; RuleSet is plain data."""

from __future__ import annotations

import json

import pytest

from foreman.policy import RuleSet, classify_command, describe_key, is_valid_key

from .cases import WT, fake_realpath


def _v(cmd: str, granted=(), lead: bool = False):
    return classify_command(cmd, worktree=WT, tmpdir="/tmp", realpath=fake_realpath, granted=granted, lead=lead)


# (granted key, the command it was granted for, a wider command that must still ask)
WIDER = [
    ("Bash:rm -r", "rm -rf build", "rm -rf /home/u/project"),
    ("Bash:rm -r", "rm -rf build", "rm -rf .git"),
    ("Bash:rm -r", "rm -rf build", "rm -rf ."),
    ("Bash:git rebase", "git rebase main", "git rebase -x 'rm -rf /home/u/x' main"),
    ("Bash:git rebase", "git rebase main", "git rebase --update-refs main"),
    ("Bash:git checkout:main", "git checkout main", "git checkout dev"),
    ("Bash:git checkout:main", "git checkout main", "git checkout --ignore-other-worktrees main"),
    ("Bash:outside:/etc:r:", "cat /etc/hosts", "cat /etc/ssl/private/key"),
    ("Bash:outside:/etc:r:", "cat /etc/hosts", "echo x > /etc/hosts"),
    ("Bash:outside:/etc:r:", "cat /etc/hosts", "grep -r x /etc"),
    ("Bash:outside:/etc:r:", "cat /etc/hosts", "/etc/run.sh"),
    ("Bash:outside:/home/u/x:rtree:", "grep -r a /home/u/x", "rm -rf /home/u/x"),
    ("Bash:outside:/home/u/x:rtree:", "grep -r a /home/u/x", "grep -r a /home/u"),
    ("Bash:outside:/home/u/x:wtree:", "rm -rf /home/u/x", "rm -rf /home/u/xy"),
    ("Bash:net:curl:example.com", "curl https://example.com", "curl https://evil.com"),
    ("Bash:net:curl:example.com", "curl https://example.com", "curl https://example.com.evil.com"),
    ("Bash:net:curl:example.com", "curl https://example.com", "wget https://example.com"),
    ("Bash:net:curl:example.com", "curl https://example.com", "curl -o /etc/x https://example.com"),
    ("Bash:net:gh:pr view", "gh pr view 1", "gh pr merge 1"),
    ("Bash:exact:python -c 'print(1)'", "python -c 'print(1)'", "python -c 'print(2)'"),
    ("Bash:exact:python -c 'print(1)'", "python -c 'print(1)'", "python -c 'print(1)'; rm -rf /home/u/x"),
    ("Bash:npm install", "npm install", "npm install -g x"),
    ("Bash:git branch -d", "git branch -d x", "git branch -D x"),
    ("Bash:.git:/home/u/wt/.git", "rm .git", "rm /home/u/other/.git"),
]


@pytest.mark.parametrize(("key", "granted_for", "wider"), WIDER)
def test_stored_key_does_not_match_a_wider_command(key: str, granted_for: str, wider: str) -> None:
    assert key in _v(granted_for).keys
    assert _v(granted_for, [key]).outcome == "allow"
    assert _v(wider, [key]).outcome != "allow"


@pytest.mark.parametrize("cmd", ["git push", "bash -c 'git push'", "git -c alias.p=push p", "env -i ls",
                                 "git commit -S -m x", "unset GIT_ALLOW_PROTOCOL"])
def test_denied_commands_stay_denied_whatever_is_stored(cmd: str) -> None:
    everything = [f"Bash:exact:{cmd}", "Bash:git push", "Bash:net:git push:origin", "Bash:exact:git push"]
    assert _v(cmd, everything).outcome == "deny"


@pytest.mark.parametrize("old", ["Bash:subst", "Bash:find -exec", "Bash:xargs rm", "lead:", "Bash:git fetch",
                                 "Bash:git submodule", "Bash:git lfs", "Bash:git checkout", "Write:.git"])
def test_keys_of_older_versions_match_nothing(old: str) -> None:
    for cmd in ["echo $(cat /etc/x)", "find . -exec rm {} +", "ls | xargs rm", "git fetch", "git checkout main"]:
        assert _v(cmd, [old]).outcome == "ask"


def test_rule_set_is_plain_data_and_round_trips() -> None:
    rules = RuleSet().grant(["Bash:rm -r", "Bash:outside:/etc:r:", "bogus", "Bash:rm -r"])
    assert rules.to_list() == ["Bash:rm -r", "Bash:outside:/etc:r:"]
    restored = RuleSet.from_list(json.loads(json.dumps(rules.to_list())))
    assert restored == rules and restored.covers("Bash:rm -r") and not restored.covers("Bash:rm")
    assert _v("rm -rf build", restored).outcome == "allow"
    assert restored.revoke(["Bash:rm -r"]).to_list() == ["Bash:outside:/etc:r:"]


@pytest.mark.parametrize(("key", "valid"), [
    ("Bash:rm -r", True), ("Bash:outside:/etc:r:", True), ("Bash:outside:/etc:rtree:", True),
    ("Bash:outside:/etc:q:", False), ("Bash:outside:etc:r:", False), ("Bash:outside:/etc:r", False),
    ("Read:/etc/hosts", True), ("WebFetch:example.com", True), ("WebSearch", True), ("lead:x", False),
    ("Bash:", False), ("", False)])
def test_key_grammar(key: str, valid: bool) -> None:
    assert is_valid_key(key) is valid


def test_scope_line_names_what_always_would_cover() -> None:
    v = _v("curl -o /home/u/x https://example.com")
    assert "writing files directly in /home/u" in v.scope and "`curl` to example.com" in v.scope
    assert describe_key("Bash:exact:ls x") == "only the exact command `ls x`"
    assert describe_key("Bash:outside:/d:rtree:") == "a recursive read of /d"
