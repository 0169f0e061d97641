"""A local multi-node Ray cluster for the Ray executor's tests.

Each test gets its own cluster on this machine: a head without the worker resource (the daemon
joins it) and two or three nodes with ``foreman_worker: 1`` each, so two remote agents land on
different nodes. Nodes are tiny (one CPU, an 80 MB object store, no dashboard) and each has its
own temporary folder (``TMPDIR``), where its actors keep their repositories and worktrees. The
nodes' workers import this checkout (``PYTHONPATH``), so the suite's scripted runners travel.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

try:
    import ray
    from ray.cluster_utils import Cluster
except ImportError:  # the seam's and the bundles' tests still run
    ray = None

ROOT = Path(__file__).resolve().parents[2]
STORE = 80 * 1024 * 1024
RAY = {"executor": "ray", "ray_resources": "foreman_worker=1", "ray_heartbeat": 1.0}
"""The settings flags that put workers' turns on the test cluster's worker nodes (plus ``ray_address``)."""


class Nodes:
    """The running cluster: ``address`` to join, ``workers`` (node objects with the worker
    resource) and ``tmp`` (node id -> that node's temporary folder)."""

    def __init__(self, cluster: Any, workers: list[Any], tmp: dict[str, Path]) -> None:
        self.cluster = cluster
        self.workers = workers
        self.tmp = tmp
        self.address = cluster.address

    def kill(self, node_id: str) -> None:
        """Remove the worker node with ``node_id`` (its raylet and every process on it die)."""
        node = next(n for n in self.workers if n.node_id == node_id)
        self.cluster.remove_node(node, allow_graceful=False)
        self.workers.remove(node)


def start_cluster(tmp_path: Path, n_workers: int) -> Nodes:
    """Start a head and ``n_workers`` worker nodes, each with its own temporary folder."""
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")  # the nodes' python
    head_tmp = tmp_path / "node-head"
    head_tmp.mkdir()
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "object_store_memory": STORE, "include_dashboard": False, "env_vars": {"TMPDIR": str(head_tmp)}})
    workers, tmp = [], {}
    for i in range(n_workers):
        folder = tmp_path / f"node-{i}"
        folder.mkdir()
        node = cluster.add_node(num_cpus=1, resources={"foreman_worker": 1}, object_store_memory=STORE,
                                env_vars={"TMPDIR": str(folder)})
        workers.append(node)
        tmp[node.node_id] = folder
    cluster.wait_for_nodes()
    return Nodes(cluster, workers, tmp)


@pytest.fixture
def ray_nodes(tmp_path: Path) -> Iterator[Nodes]:
    """A fresh cluster with two worker nodes, shut down after the test."""
    if ray is None:
        pytest.skip("the Ray executor's tests need the ray extra: pip install '.[ray]'")
    nodes = start_cluster(tmp_path, 2)
    try:
        yield nodes
    finally:
        if ray.is_initialized():
            ray.shutdown()
        nodes.cluster.shutdown()
