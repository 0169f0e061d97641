"""Fixtures of the sim scenario tests: one full run with every decision answered with option 0."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from ._sim import SimClient, SimDaemon, run_to_end, tree_hash

T = TypeVar("T")
SEED = "11"
"""The seed every default-answers run uses (the determinism test repeats it)."""


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion on its own loop in a worker thread (for sync fixtures)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


@dataclass
class Run:
    """A finished scenario run: its daemon (stopped), client and final tree of main."""

    daemon: SimDaemon
    client: SimClient
    tree: str

    @property
    def repo(self) -> Path:
        return self.daemon.repo


@pytest.fixture(scope="session")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The whole scenario, a protocol client answering every decision with option 0."""
    daemon, client = run_async(run_to_end(tmp_path_factory.mktemp("first"), "--seed", SEED))
    return Run(daemon, client, tree_hash(daemon.repo))


def contrary(decision: dict[str, Any], client: SimClient) -> int:
    """Deny the permission, Request changes on t4's first review, Reject t6, option 2 on both questions."""
    kind, task = decision["kind"], decision.get("task")
    if kind == "permission":
        return 1  # Deny
    if kind == "question":
        return 1  # t2: alphabetical; final: keep t7 open
    if kind == "merge" and task == "t4":
        first = client.decisions_of("merge", "t4")[0]
        return 1 if decision["id"] == first["id"] else 0  # Request changes, then Merge the revision
    if kind == "merge" and task == "t6":
        return 2  # Reject
    return 0


@pytest.fixture(scope="session")
def contrary_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The whole scenario answered with :func:`contrary`."""
    daemon, client = run_async(run_to_end(tmp_path_factory.mktemp("contrary"), "--seed", SEED, answer=contrary))
    return Run(daemon, client, tree_hash(daemon.repo))
