"""Build the corpus' task files (``dev.json``, ``holdout.json``) from the sources in ``tasks/``.

Each source module (one per repository shape) sets ``SHAPE``, ``REPO`` (the repo script, next to
the task files) and ``TASKS``: dicts with ``id``, ``split``, ``kind``, ``goal`` (what the agent
sees), ``setup`` (optional: code the check starts with, shared by a module's checks), ``solution`` (the reference edits, for the validator only) and either ``check`` (Python run
in the finished repository, exit 0 = done) or ``mutants`` (for a task that asks for a test: the
check is then generated, see :data:`MUTATION_CHECK`). Optional ``alternatives`` (other correct
solutions: the check must pass on each) and ``wrong`` (plausible wrong ones: it must fail on each)
are ``{"why", "edits"}`` dicts; a module may add them from its own ``VARIANTS`` (id -> keys).

    python bench/corpus/build.py            # write dev.json and holdout.json
    python bench/corpus/build.py --check    # exit 1 when they differ from the sources
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
SPLITS = ("dev", "holdout")
KINDS = ("add-function", "fix-bug", "add-parameter", "raise-error", "refactor", "add-test")

MUTATION_CHECK = '''
import json, os, shutil, subprocess, sys, tempfile
MUTANTS = json.loads(%r)
def suite(folder):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(PYTHONDONTWRITEBYTECODE="1", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"], cwd=folder,
                         capture_output=True, text=True, env=env, timeout=300)
    return run.returncode, run.stdout[-1500:]
code, out = suite(".")
assert code == 0, "the tests do not pass on the code as it is:\\n" + out
survived = []
for m in MUTANTS:
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "repo")
        shutil.copytree(".", copy, ignore=shutil.ignore_patterns(".git", "__pycache__", "*.pyc", ".pytest_cache"))
        path = os.path.join(copy, m["path"])
        with open(path, encoding="utf-8") as f:
            source = f.read()
        assert source.count(m["old"]) == 1, m["path"] + " no longer has the code this check breaks on purpose"
        with open(path, "w", encoding="utf-8") as f:
            f.write(source.replace(m["old"], m["new"]))
        if suite(copy)[0] == 0:
            survived.append(m["why"])
for why in survived:
    print("survived: " + why, file=sys.stderr)
assert not survived, "no test fails when the behaviour is broken"
'''
"""The hidden check of an add-a-test task: the tests pass on the code as it is, and each mutant
(the behaviour broken on purpose, in a copy) makes at least one test fail. The tests run without
the environment's pytest plugins (the repositories use none; loading them took 1 s a run) and
without bytecode files (a mutant the size of the original, written in the same second, could run
the original's stale bytecode)."""


def load_sources(folder: Path = HERE / "tasks") -> list[dict]:
    """Every task of the source modules in ``folder``, in file then source order, as written to JSON."""
    tasks = []
    for path in sorted(folder.glob("[!_]*.py")):
        spec = importlib.util.spec_from_file_location(f"corpus_tasks_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.path.insert(0, str(folder))  # for the sources' `from _spec import ...`, while they load
        try:
            spec.loader.exec_module(module)
        finally:
            sys.path.remove(str(folder))
        variants = getattr(module, "VARIANTS", {})
        unknown = set(variants) - {task["id"] for task in module.TASKS}
        if unknown:
            raise ValueError(f"{path.name}: VARIANTS of no task: {sorted(unknown)}")
        tasks += [_entry({**task, **variants.get(task["id"], {})}, module.SHAPE, module.REPO) for task in module.TASKS]
    return tasks


def _entry(task: dict, shape: str, repo: str) -> dict:
    if task["split"] not in SPLITS or task["kind"] not in KINDS:
        raise ValueError(f"{task['id']}: split {task['split']!r} or kind {task['kind']!r} unknown")
    mutants = task.get("mutants", [])
    if mutants:
        check = MUTATION_CHECK % json.dumps(mutants)
    else:
        check = textwrap.dedent(task.get("setup", "")) + textwrap.dedent(task["check"])
    entry = {"id": task["id"], "split": task["split"], "goal": textwrap.dedent(task["goal"]).strip(), "check": textwrap.dedent(check).strip() + "\n",
             "repo": repo, "shape": shape, "kind": task["kind"], "solution": task["solution"]}
    if mutants:
        entry["mutants"] = mutants
    for key in ("alternatives", "wrong"):
        if task.get(key):
            entry[key] = task[key]
    return entry


def rendered(tasks: list[dict]) -> dict[str, str]:
    """The text of each split's file: ``{"dev.json": ..., "holdout.json": ...}``."""
    if len({t["id"] for t in tasks}) != len(tasks):
        raise ValueError("two tasks share an id")
    out = {}
    for split in SPLITS:
        chosen = [t for t in tasks if t["split"] == split]
        out[f"{split}.json"] = json.dumps(chosen, indent=1, ensure_ascii=False) + "\n"
    return out


def main() -> int:
    """Write the task files, or with ``--check`` say whether they are up to date."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a task file differs from the sources")
    args = parser.parse_args()
    tasks = load_sources()
    stale = []
    for name, text in rendered(tasks).items():
        path = HERE / name
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            path.write_text(text, encoding="utf-8")
    if stale:
        print(f"stale: {', '.join(stale)} (run python bench/corpus/build.py)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
