"""``foreman doctor`` for ``--executor ray``: the cluster's address and what each node has.

Each check is ``(ok, what, fix)``, printed by :func:`foreman.cli._doctor`. A node is checked
by a zero-CPU Ray task pinned to it (``NodeAffinitySchedulingStrategy``): git and its version,
Python, and whether this Foreman package imports there (the actors run its code).
"""

from __future__ import annotations

import importlib.util
import platform
import subprocess
from typing import Any

from . import RAY_TOKEN_HINT, SIM_IGNORES_EXECUTOR, ray_head_unreachable

Check = tuple[Any, ...]  # (ok, what, fix) or (ok, what, fix, warning): a failed warning is not a problem

NODE_TIMEOUT = 60.0
"""Seconds to wait for one node's answer."""


def probe() -> dict[str, Any]:
    """What this machine has for a remote worker: git's version, Python's, the Foreman's import."""
    try:
        git = subprocess.run(["git", "--version"], capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        git = ""
    return {"git": git, "python": platform.python_version(),
            "foreman": importlib.util.find_spec("foreman.executors.node") is not None}


def ray_checks(settings: Any) -> list[Check]:
    """The checks of ``--executor ray`` (joins the cluster for the time of the checks).

    With the sim backend a warning says the executor is not used (its scripted team runs in the
    daemon); the cluster named by ``--ray-address`` is still checked. A head that does not
    answer a TCP connection in a few seconds is a FAIL at once (``ray.init`` would retry for
    minutes). Each check is ``(ok, what, fix)`` or ``(ok, what, fix, warning)``.
    """
    out: list[Check] = []
    if settings.backend == "sim":  # (warn, and still check the cluster the user named)
        out.append((False, SIM_IGNORES_EXECUTOR, "use --backend claude or local to run workers on the cluster", True))
    return out + _cluster_checks(settings)


def _cluster_checks(settings: Any) -> list[Check]:
    address = settings.ray_address
    unreachable = ray_head_unreachable(address) if address else None  # (ray.init would retry for minutes)
    if importlib.util.find_spec("ray") is None:
        missing = (False, "ray installed (--executor ray)", "install the ray extra: pip install '.[ray]' in the Foreman checkout")
        return [missing, (False, *unreachable)] if unreachable else [missing]
    import ray  # (the ray extra: checked for above)

    if not address:
        return [(True, "no --ray-address: the Foreman starts a Ray cluster on this machine", "")]
    if unreachable:
        return [(False, *unreachable)]
    out: list[Check] = []
    joined = not ray.is_initialized()
    try:
        if joined:
            ray.init(address=address, log_to_driver=False, logging_level="ERROR")
    except Exception as exc:  # noqa: BLE001 - ConnectionError, RuntimeError ...
        return [(False, f"Ray cluster at {address} reachable ({type(exc).__name__}: {str(exc)[:200]})",
                 f"a head answers at {address} (a TCP check passed): {RAY_TOKEN_HINT}; else check --ray-address")]
    try:
        out.append((True, f"Ray cluster at {address} reachable", ""))
        out.extend(_node_checks(ray, dict(settings.ray_resources or {})))
    finally:
        if joined:
            ray.shutdown()
    return out


def _node_checks(ray: Any, needed: dict[str, float]) -> list[Check]:
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy  # (the ray extra)

    out: list[Check] = []
    hosts = 0
    want = ", ".join(f"{k}={v:g}" for k, v in needed.items()) or "nothing"
    remote_probe = ray.remote(num_cpus=0)(probe)
    for node in ray.nodes():
        if not node.get("Alive"):
            continue
        node_id = node["NodeID"]
        name = f"node {node_id[:8]} ({node.get('NodeManagerAddress', '?')})"
        res = node.get("Resources", {})
        fits = all(res.get(k, 0) >= v for k, v in needed.items())
        hosts += fits
        try:
            ref = remote_probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False)).remote()
            got = ray.get(ref, timeout=NODE_TIMEOUT)
        except Exception as exc:  # noqa: BLE001 - the node did not answer
            out.append((False, f"{name} answers ({type(exc).__name__})", "check the node's raylet (ray status)"))
            continue
        role = "can host workers" if fits else f"hosts no workers (lacks {want})"
        out.append((bool(got["git"]), f"{name}: {got['git'] or 'no git'}, Python {got['python']}; {role}",
                    "install git >= 2.38 on that node"))
        if not got["foreman"]:
            out.append((False, f"{name} can import the Foreman", "pip install -e '.[ray]' of this checkout on that node"))
    out.append((hosts > 0, f"{hosts} node(s) with {want} for the remote workers",
                "join a node with those resources: ray start --address HEAD:PORT --resources '{...}'"))
    return out
