"""Dependency manifests read from their content (pure): install hooks and dependencies of the
old and new version of a file, compared, so a minified one-line ``package.json`` is read as
well as a multi-line one.

Sources: npm's ``package.json`` fields (``scripts``, ``dependencies``, ``devDependencies``,
``optionalDependencies``, ``peerDependencies``; docs.npmjs.com "package.json") and lifecycle
scripts run by ``npm install``; Composer's ``require``/``require-dev``; PEP 621's
``[project] dependencies`` / ``optional-dependencies``, PEP 735's ``[dependency-groups]`` and
Poetry's ``[tool.poetry.*dependencies]``; Cargo's ``[dependencies]``, ``[dev-dependencies]``,
``[build-dependencies]`` and ``[target.*.…]`` tables; pip's requirements file format (one
requirement a line, ``-r``/``-e``/``--opt`` lines are options, ``#`` starts a comment).
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field

from .rules import REQUIREMENTS, basename

NPM_INSTALL_SCRIPTS = ("preinstall", "install", "postinstall", "prepare", "prepublish", "preprepare", "postprepare")
"""``package.json`` scripts npm runs on ``npm install`` (docs.npmjs.com, "scripts")."""

_PEP508_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._\-]*)")
_NPM_DEP_FIELDS = ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies")
_CARGO_DEP_TABLES = ("dependencies", "dev-dependencies", "build-dependencies")


@dataclass
class Manifest:
    """What a manifest declares: install hooks (name -> command) and dependencies (name -> spec)."""

    hooks: dict[str, str] = field(default_factory=dict)
    deps: dict[str, str] = field(default_factory=dict)


def _spec(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def _add_table(out: dict[str, str], table: object, prefix: str = "") -> None:
    if isinstance(table, dict):
        for name, spec in table.items():
            if isinstance(name, str) and name != "python":
                out[prefix + name] = _spec(spec)


def _add_pep508(out: dict[str, str], items: object) -> None:
    if isinstance(items, list):
        for item in items:
            if isinstance(item, str) and (m := _PEP508_NAME.match(item)):
                out[m[1]] = item.strip()


def _json_manifest(data: object, name: str) -> Manifest:
    man = Manifest()
    if not isinstance(data, dict):
        return man
    if name == "package.json":
        scripts = data.get("scripts")
        if isinstance(scripts, dict):
            man.hooks = {k: _spec(v) for k, v in scripts.items() if k in NPM_INSTALL_SCRIPTS}
        for key in _NPM_DEP_FIELDS:
            _add_table(man.deps, data.get(key))
    else:  # composer.json
        for key in ("require", "require-dev"):
            _add_table(man.deps, data.get(key))
    return man


def _pyproject(data: dict) -> Manifest:
    man = Manifest()
    project = data.get("project")
    if isinstance(project, dict):
        _add_pep508(man.deps, project.get("dependencies"))
        extras = project.get("optional-dependencies")
        if isinstance(extras, dict):
            for items in extras.values():
                _add_pep508(man.deps, items)
    groups = data.get("dependency-groups")
    if isinstance(groups, dict):
        for items in groups.values():
            _add_pep508(man.deps, items)
    poetry = data.get("tool", {}).get("poetry") if isinstance(data.get("tool"), dict) else None
    if isinstance(poetry, dict):
        _add_table(man.deps, poetry.get("dependencies"))
        _add_table(man.deps, poetry.get("dev-dependencies"))
        for group in (poetry.get("group") or {}).values() if isinstance(poetry.get("group"), dict) else ():
            if isinstance(group, dict):
                _add_table(man.deps, group.get("dependencies"))
    return man


def _cargo(data: dict) -> Manifest:
    man = Manifest()
    for key in _CARGO_DEP_TABLES:
        _add_table(man.deps, data.get(key))
    targets = data.get("target")
    if isinstance(targets, dict):
        for table in targets.values():
            if isinstance(table, dict):
                for key in _CARGO_DEP_TABLES:
                    _add_table(man.deps, table.get(key))
    return man


def _requirements(text: str) -> Manifest:
    man = Manifest()
    for line in text.splitlines():
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "-")):
            continue
        if m := _PEP508_NAME.match(line):
            man.deps[m[1]] = line
    return man


def parse(path: str, text: str) -> Manifest | None:
    """The hooks and dependencies a manifest's content declares.

    Args:
        path: the repository-relative path (its file name picks the format).
        text: the whole file.

    Returns:
        The :class:`Manifest`; None when the format is not read here or the text does not
        parse (a fragment, a file mid-edit): the caller then reads it line by line.
    """
    name = basename(path)
    try:
        if name in ("package.json", "composer.json"):
            return _json_manifest(json.loads(text), name)
        if name == "pyproject.toml":
            return _pyproject(tomllib.loads(text))
        if name == "Cargo.toml":
            return _cargo(tomllib.loads(text))
    except (ValueError, RecursionError):  # json.JSONDecodeError and tomllib.TOMLDecodeError are ValueErrors
        return None
    if REQUIREMENTS.search(path):
        return _requirements(text)
    return None


def changes(path: str, old: str | None, new: str) -> tuple[dict[str, str], list[str]] | None:
    """Install hooks and dependencies the new version adds or changes against the old one.

    Args:
        path: the manifest's path.
        old: the old version's content (None: the file is new; an old version that does not
            parse counts as empty).
        new: the new version's content.

    Returns:
        (hooks added or changed: name -> command, dependency names added or changed in the
        order they appear); None when the new version cannot be read (see :func:`parse`).
    """
    after = parse(path, new)
    if after is None:
        return None
    before = (parse(path, old) if old is not None else None) or Manifest()
    hooks = {k: v for k, v in after.hooks.items() if before.hooks.get(k) != v}
    deps = [k for k, v in after.deps.items() if before.deps.get(k) != v]
    return hooks, deps


def line_of(word: str, lines: list[tuple[int, str]]) -> int | None:
    """The number of the first of ``lines`` (number, text) naming ``word`` (after a quote or at
    the line's start, as a JSON key, requirement or TOML key), else the first line's number,
    else None."""
    pattern = re.compile(rf"(?:^\s*|[\"'])({re.escape(word)})(?![\w.\-])")
    for number, text in lines:
        if pattern.search(text):
            return number
    return lines[0][0] if lines else None
