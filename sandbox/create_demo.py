#!/usr/bin/env python3
"""Create (or with --force recreate) the pocket-notes demo repository for the sim backend.

    python sandbox/create_demo.py                  # sandbox/sim-demo
    python sandbox/create_demo.py PATH --force     # remove PATH first if it is a demo repo

A thin command line over foreman.backends.sim.demo_repo.create_demo_repo.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

try:
    from foreman.backends.sim.demo_repo import create_demo_repo
    from foreman.errors import ForemanError
except ModuleNotFoundError:  # run from a checkout without the package installed
    sys.path.insert(0, str(HERE.parent))
    from foreman.backends.sim.demo_repo import create_demo_repo
    from foreman.errors import ForemanError


def main(argv: list[str] | None = None) -> int:
    """Creates the demo repository; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=HERE / "sim-demo",
                        help="where to create it (default: sim-demo next to this script)")
    parser.add_argument("--force", action="store_true",
                        help="remove an existing demo repository at PATH first")
    args = parser.parse_args(argv)
    try:
        head = create_demo_repo(args.path, force=args.force)
    except (FileExistsError, ForemanError) as exc:
        print(f"create_demo: {exc}", file=sys.stderr)
        return 1
    print(f"created the pocket-notes demo repository at {args.path.absolute()} (main at {head[:12]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
