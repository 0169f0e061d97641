"""Tell the user they are needed: a log line always; with ``--notify`` also a console bell and
a desktop toast (plyer).

A machine without a notification service degrades to the bell and the log line, never an
error.
"""

from __future__ import annotations

import logging
import sys
import threading
from typing import TextIO

logger = logging.getLogger(__name__)

SILENT_HINTS = {"suppress-sound": True}
"""The freedesktop notification hint asking the server for a toast without sound."""


class Notifier:
    """Desktop notifications through plyer, plus a bell on the daemon's terminal.

    Args:
        enabled: ring the bell (when the stream is a terminal) and send desktop notifications
            (``--notify``); the log line always happens.
        silent: ask for toasts without sound (``--toast-silent``; the freedesktop
            ``suppress-sound`` hint, honoured where the notification server supports it).
        stream: where the bell goes (default: the daemon's stderr).
    """

    def __init__(self, *, enabled: bool, silent: bool = False, stream: TextIO | None = None) -> None:
        self.enabled = enabled
        self.silent = silent
        self.stream = stream
        self.sent: list[tuple[str, str]] = []
        """Every notification asked for, as (title, message) (for tests and the log)."""

    def notify(self, title: str, message: str) -> threading.Thread | None:
        """Notify the user; never raises. Returns the thread sending the toast (None when disabled)."""
        self.sent.append((title, message))
        logger.info("you are needed: %s: %s", title, message)
        if not self.enabled:
            return None
        stream = self.stream or sys.stderr
        try:
            if stream.isatty():
                stream.write("\a")
                stream.flush()
        except (OSError, ValueError):  # a closed or broken terminal
            pass
        thread = threading.Thread(target=self._toast, args=(title, message), daemon=True, name="toast")
        thread.start()
        return thread

    def _toast(self, title: str, message: str) -> None:
        try:
            from plyer import notification  # (inside the try: a plyer that cannot load here means a bell)

            notification.notify(title=title, message=message[:250], app_name="Foreman", timeout=10,
                                hints=dict(SILENT_HINTS) if self.silent else {})
        except Exception as exc:  # plyer raises NotImplementedError, dbus errors ... on headless machines
            logger.info("desktop notification unavailable (%s); bell and log only", type(exc).__name__)
