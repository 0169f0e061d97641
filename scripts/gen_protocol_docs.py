#!/usr/bin/env python3
"""Regenerate docs/protocol.md and docs/protocol.schema.json (same as ``foreman docs``).

Usage: ``python scripts/gen_protocol_docs.py [--check] [--out DIR]``; ``--check`` exits 1 when a
generated file is stale.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from foreman.protodoc import docs_main  # noqa: E402


def main() -> int:
    """Parse the arguments and run :func:`foreman.protodoc.docs_main`."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail when the generated files are stale")
    parser.add_argument("--out", default=None, help="docs folder (default: the repository's docs/)")
    args = parser.parse_args()
    return docs_main(check=args.check, out=Path(args.out) if args.out else None)


if __name__ == "__main__":
    sys.exit(main())
