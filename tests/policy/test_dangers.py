"""Property tests for the rules of :mod:`foreman.policy.dangers`, by kind: every spelling of a
recursive delete of the system or a home, of a ``cd`` into a key folder, of inline code naming
key material is refused (with a reason naming what); every publish-named target asks for its
own key; the neighbours of each kind keep their verdict."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given, settings, strategies as st

from foreman.policy import classify_command
from foreman.policy.dangers import code_key_material, publishing_target, wipe_target
from foreman.policy.secrets import SECRET_DIRS

from .cases import WT, fake_realpath


def _classify(cmd: str, granted=()):
    return classify_command(cmd, worktree=WT, tmpdir="/tmp", realpath=fake_realpath, granted=granted)


# ---- recursive deletes of /, a system folder or a home -------------------------------------
_RM = ["rm -rf", "rm -fr", "rm -r", "rm -R", "rm --recursive", "rm -r -f", "rm -rf --", "rm -Rfv",
       "rm --recursive --force", "sudo rm -rf", "env rm -r", "command rm -rf", "timeout 5 rm -rf"]
_SYSTEM = ["/", "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64", "/var", "/home", "/boot", "/opt", "/root",
           "/srv", "/sys", "/proc", "/dev"]
_HOMES = ["~", "$HOME", '"$HOME"', "${HOME}", '"${HOME}"', "/home/u", "/root", "~u"]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_RM), st.sampled_from(_SYSTEM + _HOMES), st.sampled_from(["", "/", "/*", "/.", "//"]),
       st.sampled_from(["", "true && ", "cd src && ", "echo x; "]))
def test_a_recursive_delete_of_the_root_a_system_folder_or_a_home_is_refused(rm, target, tail, before) -> None:
    path = target + tail if target != "/" else "/" + tail.lstrip("/")
    v = _classify(f"{before}{rm} {path}")
    assert v.outcome == "deny", (rm, path, v)
    assert "would delete" in v.reason and ("root" in v.reason or "folder" in v.reason), v.reason


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(_RM), st.sampled_from([d for d in _SYSTEM[1:] if d != "/home"] + ["~", "$HOME", "/home/u"]),
       st.sampled_from(["/build", "/local/x", "/a/b", "/.cache", "/x.txt"]))
def test_a_recursive_delete_below_them_is_never_refused_for_it(rm, target, below) -> None:
    path = target + below
    assert wipe_target(path) is None
    v = _classify(f"{rm} {path}")
    assert v.outcome != "deny" or "would delete" not in v.reason, (path, v)


@given(st.sampled_from(["find", "find -L"]), st.sampled_from(["/", "/usr", "~", "$HOME", "/home/u"]),
       st.sampled_from(["", "-name '*.o' ", "-type f "]))
def test_find_delete_of_the_root_or_a_home_is_refused(find, start, expr) -> None:
    assert _classify(f"{find} {start} {expr}-delete").outcome == "deny"


# ---- cd into a key-material folder -----------------------------------------------------------
_HOME_SPELLINGS = ["~", "$HOME", "${HOME}", "/home/u", "/root"]
_THEN = ["ls", "cat id_rsa", "tar c .", "pwd", "cat config", "grep -r x .", "true"]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["cd", "pushd", "cd -P", "cd --"]), st.sampled_from(_HOME_SPELLINGS),
       st.sampled_from(SECRET_DIRS), st.sampled_from(["", "/"]), st.sampled_from([" && ", "; ", " || "]),
       st.sampled_from(_THEN), st.booleans())
def test_entering_a_key_folder_then_running_anything_is_refused_naming_the_folder(cd, home, folder, slash, sep, then,
                                                                                 quoted) -> None:
    path = f"{home}/{folder}{slash}"
    if quoted and not home.startswith("~"):  # "~/.ssh" is a folder named ~ in the worktree
        path = f'"{path}"'
    v = _classify(f"{cd} {path}{sep}{then}")
    assert v.outcome == "deny", (path, v)
    assert folder in v.reason and "enters" in v.reason, v.reason


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["/home/u/other", "/etc", "/home/u/.config", "/home/u/.cache", "/opt", ".."]),
       st.sampled_from([t for t in _THEN if "id_rsa" not in t]))  # id_rsa outside: a private key (denied)
def test_cd_elsewhere_outside_the_worktree_asks_as_before(target, then) -> None:
    v = _classify(f"cd {target} && {then}")
    assert v.outcome == "ask", (target, v)


# ---- inline code naming key material -------------------------------------------------------
_RUNNERS = ["python3 -c {q}", "python -c {q}", "node -e {q}", "node -p {q}", "perl -e {q}", "ruby -e {q}",
            "bun -e {q}", "deno eval {q}", "python3 - <<< {q}"]
_KEY_PATHS = ["/root/.ssh/id_rsa", "/home/u/.ssh/id_ed25519", "~/.ssh/id_rsa", "~/.aws/credentials", ".aws/credentials",
              ".gnupg/", "~/.netrc", "/etc/shadow", "/home/u/.config/gh/hosts.yml", ".ssh/id_ecdsa"]
_CODE = ["print(open('{p}').read())", "require('fs').readFileSync(\"{p}\")", "open(F, '<', '{p}')",
         "x = HOME + '/{r}'", "File.read(\"#{{ENV['HOME']}}/{r}\")"]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_RUNNERS), st.sampled_from(_KEY_PATHS), st.sampled_from(_CODE))
def test_inline_code_that_names_key_material_is_refused(runner, path, code) -> None:
    rel = path.split("/.", 1)[-1] if "/." in path else path.lstrip("~/")
    rel = rel if rel.startswith(".") else "." + rel
    text = code.format(p=path, r=rel.lstrip("/"))
    if "/etc/shadow" in path and "{r}" in code:
        return  # not below a home
    v = _classify(runner.format(q=shlex.quote(text)))
    assert v.outcome == "deny", (text, v)
    assert "key material" in v.reason


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(_RUNNERS), st.sampled_from(["~/.ssh/known_hosts", "/home/u/.ssh/id_rsa.pub", ".npmrc",
                                                   "tests/fixtures/.ssh/id_rsa", "/home/u/wt/.aws/credentials",
                                                   "os.environ['KEY']", ".docker/config.json", "id_rsa"]))
def test_inline_code_naming_public_project_or_dynamic_paths_still_asks(runner, path) -> None:
    text = f"print(open('{path}').read())"
    assert code_key_material(text, lambda p: p.startswith(WT + "/")) is None
    assert _classify(runner.format(q=shlex.quote(text))).outcome == "ask"


# ---- key material wherever it lies -----------------------------------------------------------
_KEY_TAILS = [".ssh/id_rsa", ".ssh/id_ed25519", ".ssh/deploy_key", ".ssh/", ".ssh", ".aws/credentials",
              ".aws/sso/cache/t.json", ".gnupg/private-keys-v1.d/k.key", ".gnupg", ".agentcraft/foreman.json",
              ".agentcraft/profiles/dev/foreman.json", ".netrc", ".git-credentials", ".config/gh/hosts.yml",
              ".docker/config.json", ".kube/config"]
_PREFIXES = ["/tmp/newhome", "/tmp/x", "/tmp", "/opt/x", "/srv/data/u", "/var/lib/jenkins", "../..", "../../tmp/h",
             "/tmp/a/../h", "/tmp/h/./", "..", "$D", '"$D"', "${D}"]
_READERS = ["cat {}", "head -n 1 {}", "tail {}", "base64 {}", "xxd {}", "less {}", "grep -r k {}", "sort {}",
            "cp -r {} out", "tar czf /tmp/a.tgz {}", "rsync -a {} /tmp/b", "scp -r {} host:", "curl -T {} https://x.example",
            "base64 < {}", "bash -c 'cat {}'", "timeout 5 cat {}"]
_TREE_READERS = ["grep -r k {}", "cp -r {} out", "tar czf /tmp/a.tgz {}", "rsync -a {} /tmp/b", "scp -r {} host:"]
_WRITERS = ["echo k > {}", "echo k >> {}", "cp key {}", "tee {} < key", "mv key {}"]


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(_READERS + _WRITERS), st.sampled_from(_PREFIXES), st.sampled_from(_KEY_TAILS))
def test_key_material_is_refused_wherever_it_lies_outside_the_worktree(program, prefix, tail) -> None:
    if program not in _TREE_READERS and tail.endswith(("/", ".ssh", ".gnupg")):
        tail = tail.rstrip("/") + "/id_rsa"  # cat, a write: a file (a folder is read only by a tree reader)
    path = prefix.rstrip("/") + "/" + tail
    cmd = program.format(path)
    v = _classify(cmd)
    assert v.outcome == "deny", (cmd, v)
    assert "key material" in v.reason, v.reason
    inside = _classify(program.format("tests/fixtures/" + tail))  # the project's own files of that name
    assert inside.outcome != "deny" or "key material" not in inside.reason, (cmd, inside)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["cat {}", "head {}", "grep -r k {}", "cp {} out"]), st.sampled_from(_PREFIXES[:6]),
       st.sampled_from([".ssh/id_rsa.pub", ".ssh/known_hosts", ".ssh/config", ".aws/config", ".agentcraft/state.db",
                        "foreman.json", ".agentcraft.json", "x.ssh/id", "ssh/key.txt", ".awsx/credentials"]))
def test_public_and_lookalike_names_are_not_key_material(program, prefix, tail) -> None:
    v = _classify(program.format(prefix.rstrip("/") + "/" + tail))
    assert "key material" not in v.reason, v


@pytest.mark.parametrize(("cmd", "where"), [
    ("cat src/a.py", "inside the worktree and runs"),
    ("cat /tmp/build/log.txt", "inside the worktree and the scratch directory"),
    ("cat src/a.py > /tmp/x", "inside the worktree and the scratch directory"),
    ("ls /tmp/h/.ssh", "inside the worktree and the scratch directory"),
])
def test_an_allowed_command_says_where_it_stays(cmd, where) -> None:
    v = _classify(cmd)
    assert v.outcome == "allow" and where in v.reason, v


# ---- build targets named like a publish ------------------------------------------------------
_PUBLISH = ["push", "deploy", "release", "publish", "upload", "deploy-prod", "docker-push", "release:patch",
            "publish_docs"]
_RUNNER_KEYS = {"make": "make", "gmake": "gmake", "make -C sub": "make -C sub", "make -j4": "make",
                "npm run": "npm run", "yarn": "yarn", "yarn run": "yarn run", "pnpm run": "pnpm run",
                "bun run": "bun run", "just": "just"}


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(_RUNNER_KEYS)), st.sampled_from(_PUBLISH))
def test_a_publish_named_target_asks_for_its_own_key_and_that_key_allows_it(runner, target) -> None:
    if runner == "yarn" and target == "publish":
        return  # yarn's own publish subcommand: Bash:net:yarn:publish
    cmd = f"{runner} {target}"
    v = _classify(cmd)
    key = f"Bash:publish:{_RUNNER_KEYS[runner]} {target}"
    assert v.outcome == "ask" and v.keys == (key,), (cmd, v)
    assert "publishes or pushes" in v.reason and target in v.reason
    assert _classify(cmd, granted=[key]).outcome == "allow"
    other = "deploy" if target != "deploy" else "release"
    assert _classify(f"{runner} {other}", granted=[key]).outcome == "ask"


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["make", "gmake", "make -C sub", "npm run", "yarn", "pnpm run", "bun run"]),
       st.sampled_from(["test", "build", "all", "lint", "pusher", "prerelease", "check", "install-deps", "docs"]))
def test_ordinary_targets_never_ask_for_a_publish_key(runner, target) -> None:
    assert not publishing_target(target)
    v = _classify(f"{runner} {target}")
    assert not any(k.startswith("Bash:publish:") for k in v.keys), v


# ---- bun test follows npm test --------------------------------------------------------------
@given(st.sampled_from(["test", "run test", "test src/a.test.ts", "--bun test", "run build", "run lint"]))
def test_bun_test_and_run_follow_npm(sub) -> None:
    npm = _classify("npm " + sub.replace("--bun ", "").replace(" src/a.test.ts", ""))
    bun = _classify("bun " + sub)
    assert bun.outcome == npm.outcome == "allow", (sub, bun, npm)
    outside = classify_command("cd /home/u/other && bun " + sub, worktree=WT, tmpdir="/tmp", realpath=fake_realpath)
    assert outside.outcome == "ask" and f"Bash:exact:cd /home/u/other && bun {sub}" in outside.keys
