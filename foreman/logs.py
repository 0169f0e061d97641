"""Logging configuration: done once, at the entry point (``foreman start``)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from .private import private_dir, private_file


def configure(level: str = "INFO", logfile: Path | None = None) -> None:
    """Send the daemon's log records to stderr (and to ``logfile`` when given)."""
    fmt = logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s", "%H:%M:%S")
    root = logging.getLogger()
    root.handlers.clear()
    root.setLevel(level)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(fmt)
    root.addHandler(handler)
    if logfile is not None:
        private_dir(logfile.parent)  # the profile's folder: 0700, its log 0600 (foreman/private.py)
        private_file(logfile)
        fh = logging.FileHandler(logfile, encoding="utf-8")
        fh.setFormatter(fmt)
        root.addHandler(fh)
    for noisy in ("websockets", "asyncio"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
