"""Scoped "always allow" keys: exact matching, never wider; RuleSet is plain data."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

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
    ("Bash:git branch -d:x", "git branch -d x", "git branch -D x"),
    ("Bash:git branch -d:x", "git branch -d x", "git branch -d y"),
    ("Bash:git branch -d:x", "git branch -d x", "git branch -d x y"),
    ("Bash:git branch -f:x", "git branch -f x HEAD", "git branch -f y HEAD"),
    # git plumbing: a key names one action on one ref (issue 12, "Grants that never widen")
    ("Bash:git update-ref:refs/heads/kit-t2", "git update-ref refs/heads/kit-t2 HEAD",
     "git update-ref refs/heads/other HEAD"),
    ("Bash:git update-ref:refs/heads/kit-t2", "git update-ref refs/heads/kit-t2 HEAD",
     "git update-ref -d refs/heads/kit-t2"),
    ("Bash:git update-ref:refs/heads/kit-t2", "git update-ref refs/heads/kit-t2 HEAD",
     "git update-ref --stdin < refs.txt"),
    ("Bash:git symbolic-ref:HEAD refs/heads/x", "git symbolic-ref HEAD refs/heads/x",
     "git symbolic-ref HEAD refs/heads/y"),
    ("Bash:git checkout:main", "git checkout main", "git checkout -B main HEAD~3"),
    ("Bash:git checkout:x", "git checkout x", "git switch -C x origin/x"),
    ("Bash:net:git fetch:origin", "git fetch origin", "git fetch origin main:main"),
    ("Bash:net:git fetch:origin", "git fetch origin", "git fetch origin +refs/heads/*:refs/heads/*"),
    # package commands: same registry, same sources, same directory, same options
    ("Bash:npm install", "npm install", "npm install --registry=https://evil.example lodash"),
    ("Bash:npm install", "npm install", "npm --registry https://evil.example install"),
    ("Bash:npm install", "npm install lodash", "npm install https://evil.example/x.tgz"),
    ("Bash:npm install", "npm install lodash", "npm install git+ssh://git@github.com/u/r.git"),
    ("Bash:npm install", "npm install lodash", "npm install u/r"),
    ("Bash:npm install", "npm install lodash", "npm install ../x"),
    ("Bash:npm install", "npm install lodash", "npm install --prefix /home/u/other"),
    ("Bash:npm install", "npm install lodash", "npm install lodash --userconfig /tmp/rc"),
    ("Bash:npm install", "npm install", "cd web && npm install"),
    ("Bash:npm install", "npm install", "cd /home/u/other && npm install"),
    ("Bash:npm install in web", "cd web && npm install", "cd api && npm install"),
    ("Bash:yarn install", "yarn add react", "yarn add github:u/r"),
    ("Bash:pnpm install", "pnpm add react", "pnpm add react --registry https://evil.example"),
    ("Bash:pip install", "pip install requests", "pip install -i https://evil.example/simple requests"),
    ("Bash:pip install", "pip install requests", "pip install --extra-index-url https://evil.example requests"),
    ("Bash:pip install", "pip install requests", "pip install git+https://github.com/u/r"),
    ("Bash:pip install", "pip install requests", "pip install ./pkg"),
    ("Bash:pip install", "pip install requests", "pip install -e ../other"),
    ("Bash:pip install", "pip install requests", "pip install -r requirements.txt"),
    ("Bash:pip install", "pip install requests", "pip install --user requests"),
    ("Bash:pip install source -r requirements.txt", "pip install -r requirements.txt",
     "pip install -r requirements-dev.txt"),
    ("Bash:uv add", "uv add requests", "uv add --index https://evil.example requests"),
    ("Bash:uv add", "uv add requests", "uv add git+https://github.com/u/r"),
    ("Bash:cargo add", "cargo add serde", "cargo add --git https://github.com/u/r serde"),
    ("Bash:cargo install", "cargo install ripgrep", "cargo install --registry evil ripgrep"),
    ("Bash:cargo install", "cargo install ripgrep", "cargo install --path ../x"),
    ("Bash:go get source github.com/u/r@v1", "go get github.com/u/r@v1", "go get github.com/evil/r@v1"),
    ("Bash:gem install", "gem install rails", "gem install --source https://evil.example rails"),
    ("Bash:gem install", "gem install rails", "gem install ./x.gem"),
    ("Bash:net:uvx:ruff", "uvx ruff check", "uvx ruff check > /home/u/x"),
    ("Bash:net:uvx:ruff", "uvx ruff check", "uvx --index-url https://evil.example/s ruff check"),
    # a redirection after `cd` writes where the command runs (tree-sitter hangs it on the list)
    ("Bash:outside:/etc:r:", "ls /etc", "cd /etc && echo x > passwd"),
    ("Bash:outside:/etc:r:", "ls /etc", "cd /etc && ls; cat x > hosts"),
    # a dev command asks when it runs outside the worktree, whatever read key is stored
    ("Bash:outside:/home/u/other:r:", "ls /home/u/other", "cd /home/u/other && npm test"),
    ("Bash:outside:/home/u/other:r:", "ls /home/u/other", "cd /home/u/other && pytest"),
    ("Bash:outside:/home/u/other:r:", "ls /home/u/other", "cd /home/u/other && make"),
    ("Bash:outside:/home/u/other:r:", "ls /home/u/other", "cd /home/u/other && cargo test"),
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


@pytest.mark.parametrize("cmd", ["git update-ref refs/heads/main HEAD", "git update-ref -d refs/heads/main",
                                 "git branch -f main HEAD", "git branch -D main", "git branch -m main old",
                                 "git branch -d x main", "git symbolic-ref refs/heads/main refs/heads/x",
                                 "git update-ref heads/main HEAD~1", "git branch main", "git checkout -B main",
                                 "git switch -C main HEAD~1", "git switch --force-create main"])
def test_a_ref_key_never_covers_the_base_branch(cmd: str) -> None:
    v = classify_command(cmd, worktree=WT, tmpdir="/tmp", realpath=fake_realpath, protected_refs=["main"])
    assert v.outcome == "ask" and f"Bash:exact:{cmd}" in v.keys, v
    every_ref_key = [k for k in _v(cmd).keys if k.startswith("Bash:git ")]
    again = classify_command(cmd, worktree=WT, tmpdir="/tmp", realpath=fake_realpath, protected_refs=["main"],
                             granted=every_ref_key + ["Bash:git update-ref", "Bash:git branch -f", "Bash:git branch"])
    assert again.outcome == "ask", again


_PKG_BASES = ["npm install lodash", "yarn add react", "pnpm add react", "pip install requests", "uv add requests",
              "cargo add serde", "gem install rails", "npm ci", "pip install -U requests"]
_WIDENINGS = [" --registry=https://evil.example", " --registry https://evil.example", " -i https://evil.example/s",
              " --index-url https://evil.example/s", " --extra-index-url https://evil.example/s",
              " --index https://evil.example", " --source https://evil.example", " https://evil.example/x.tgz",
              " git+https://github.com/u/r", " github:u/r", " ./vendor/pkg", " ../other", " /tmp/x.whl",
              " --git https://github.com/u/r", " --path ../x", " -e ../x", " -r ../reqs.txt", " --prefix /home/u/o",
              " --target /home/u/o", " --some-new-flag", " -g", " --user", " --config x=y"]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_PKG_BASES), st.sampled_from(_WIDENINGS),
       st.sampled_from(["", "cd web && ", "cd /home/u/other && ", "cd /tmp && "]))
def test_a_package_key_never_covers_another_registry_source_option_or_directory(base: str, extra: str,
                                                                                where: str) -> None:
    granted = _v(base).keys
    assert _v(base, granted).outcome == "allow"
    assert _v(where + base + extra, granted).outcome != "allow", (base, extra, where)
    if where:
        assert _v(where + base, granted).outcome != "allow", (base, where)
