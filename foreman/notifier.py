"""Tell the user they are needed: a console bell, a log line and (optionally) a desktop toast.

A machine without a notification service degrades to the bell and the log line, never an
error.
"""

from __future__ import annotations

import logging
import sys
import threading

logger = logging.getLogger(__name__)


class Notifier:
    """Desktop notifications through plyer, plus a bell on the daemon's terminal.

    Args:
        enabled: send desktop notifications (``--notify``); the bell and log line always happen.
        silent: ask for toasts without sound (``--toast-silent``).
    """

    def __init__(self, *, enabled: bool, silent: bool = False) -> None:
        self.enabled = enabled
        self.silent = silent
        self.sent: list[tuple[str, str]] = []
        """Every notification asked for, as (title, message) (for tests and the log)."""

    def notify(self, title: str, message: str) -> None:
        """Notify the user; never raises."""
        self.sent.append((title, message))
        logger.info("you are needed: %s: %s", title, message)
        if not self.enabled:
            return
        if sys.stderr.isatty():
            sys.stderr.write("\a")
            sys.stderr.flush()
        threading.Thread(target=self._toast, args=(title, message), daemon=True, name="toast").start()

    def _toast(self, title: str, message: str) -> None:
        try:
            from plyer import notification

            notification.notify(title=title, message=message[:250], app_name="Foreman", timeout=10)
        except Exception as exc:  # plyer raises NotImplementedError, dbus errors ... on headless machines
            logger.info("desktop notification unavailable (%s); bell and log only", type(exc).__name__)
