"""Durable state: SQLite (WAL) for entities, feed, messages and meta; files for agent logs.

Layout under ``<home>/<profile>/``::

    state.db                 SQLite database (WAL); table ``meta`` holds ``schema_version`` and ``seq``,
                             table ``unread`` one row per unread message per agent, table
                             ``records`` the flow's records (:mod:`foreman.core.records`)
    logs/<agent>.jsonl       agent log lines, rotated at 8 MB into <agent>.1.jsonl (one old file)

Every batch of changes is written in one transaction before the daemon acknowledges or
broadcasts it. With ``journal_mode=WAL`` and ``synchronous=NORMAL`` a committed transaction
survives SIGKILL of the process (it may roll back on power loss; see the SQLite docs,
"Write-Ahead Logging" and "PRAGMA synchronous"). Start-up reads the entity tables and only the
ends of the bounded tables and log files, so its time does not grow with history.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
from collections import deque
from pathlib import Path
from typing import Any, Iterable

from pydantic import BaseModel

from protocol import Agent, Decision, FeedItem, Goal, LogLine, Message, Repo, Task

from .core.records import OLD_META_KEYS, RECORD_MODELS, from_meta
from .core.world import RECENT_FEED, RECENT_LOGS, RECENT_MESSAGES, UNREAD_MAX, Change, World
from .errors import ForemanError
from .private import private_dir, private_file

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 3
"""The on-disk format's version; :func:`Store.open` upgrades older databases step by step.

Version 2 keeps unread messages as rows of table ``unread`` (version 1: one ``meta`` value
``unread`` holding every agent's list, rewritten on every message). Version 3 keeps the flow's
records as typed rows of table ``records`` (version 2: untyped ``meta`` values such as
``sessions``, ``worktrees``, ``merge_commits``; :func:`foreman.core.records.from_meta`)."""

LOG_ROTATE_BYTES = 8 * 1024 * 1024
"""An agent log file is rotated when it passes this size (one old file is kept)."""

KEEP_APPENDS = 5_000
"""Feed items and messages kept on disk per kind (older ones are pruned at start-up)."""

ENTITY_MODELS: dict[str, type[BaseModel]] = {"agent": Agent, "goal": Goal, "task": Task, "decision": Decision, "repo": Repo}
APPEND_MODELS: dict[str, type[BaseModel]] = {"feed": FeedItem, "message": Message}

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entities (kind TEXT NOT NULL, id TEXT NOT NULL, json TEXT NOT NULL, PRIMARY KEY (kind, id));
CREATE TABLE IF NOT EXISTS appends (kind TEXT NOT NULL, id INTEGER NOT NULL, json TEXT NOT NULL, PRIMARY KEY (kind, id));
CREATE TABLE IF NOT EXISTS unread (agent TEXT NOT NULL, id INTEGER NOT NULL, json TEXT NOT NULL, PRIMARY KEY (agent, id));
CREATE TABLE IF NOT EXISTS records (kind TEXT NOT NULL, id TEXT NOT NULL, json TEXT NOT NULL, PRIMARY KEY (kind, id));
"""

_PUT_RECORD = ("INSERT INTO records (kind, id, json) VALUES (?, ?, ?) "
               "ON CONFLICT(kind, id) DO UPDATE SET json=excluded.json")

_SET_META = "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value"
"""An upsert that updates the row in place: ``INSERT OR REPLACE`` deletes and re-inserts it, which
also rewrites the key's index entry (about half the cost of a one-entity commit, measured)."""


class StoreError(ForemanError):
    """The state database cannot be opened or is from a newer Foreman."""

    code = "store"


class Store:
    """The durable store of one profile.

    Args:
        profile_dir: ``<home>/<profile>``; created if missing.
    """

    def __init__(self, profile_dir: Path) -> None:
        self.dir = Path(profile_dir)
        private_dir(self.dir)  # folders 0700, files 0600: foreman/private.py
        private_dir(self.dir / "logs")
        self._db: sqlite3.Connection | None = None
        self._ckpt: sqlite3.Connection | None = None
        self._ckpt_lock = threading.Lock()  # checkpoint() runs in a worker thread; close() must not race it
        self._log_fds: dict[str, int] = {}
        self._unread_counts: dict[str, int] = {}
        """Rows in table ``unread`` per agent (kept at most :data:`UNREAD_MAX`, like the world's lists)."""
        self.encoded: dict[tuple[str, str], str] = {}
        """The wire JSON of every entity as loaded, keyed by (kind, id): seeds the snapshot cache."""

    # ------------------------------------------------------------------ open / load
    def open(self) -> tuple[World, int]:
        """Open (creating or upgrading) the database and load the world.

        Returns:
            ``(world, seq)``: the loaded state and the last ``seq`` handed out.

        Raises:
            StoreError: the database is from a newer schema version or cannot be read.
        """
        try:
            # 0600 before SQLite opens it: its -wal and -shm files take the database's own mode
            private_file(self.dir / "state.db")
            db = sqlite3.connect(self.dir / "state.db", isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            # checkpoints run from checkpoint() off the loop, not inside whichever commit fills the WAL
            db.execute("PRAGMA wal_autocheckpoint=0")
            db.executescript(_DDL)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open {self.dir / 'state.db'}: {exc}") from None
        self._db = db
        version = self._get_meta("schema_version")
        if version is None:
            self._set_meta_now("schema_version", SCHEMA_VERSION)
        elif int(version) < SCHEMA_VERSION:
            self._upgrade(int(version))
        elif int(version) > SCHEMA_VERSION:
            raise StoreError(
                f"{self.dir / 'state.db'} has schema version {version}, newer than this Foreman's {SCHEMA_VERSION}: "
                "upgrade the Foreman or start with --reset"
            )
        return self._load()

    def _upgrade(self, version: int) -> None:
        """Upgrade the database from ``version`` to :data:`SCHEMA_VERSION`, in one transaction."""
        db = self._db
        assert db is not None
        try:
            db.execute("BEGIN")
            if version < 2:  # the meta value "unread" ({agent: [message, ...]}) becomes rows
                row = db.execute("SELECT value FROM meta WHERE key='unread'").fetchone()
                for agent, msgs in (json.loads(row[0]) if row else {}).items():
                    db.executemany("INSERT OR REPLACE INTO unread (agent, id, json) VALUES (?, ?, ?)",
                                   [(agent, m["id"], json.dumps(m)) for m in msgs[-UNREAD_MAX:]])
                db.execute("DELETE FROM meta WHERE key='unread'")
            if version < 3:  # the flow's meta values become typed records
                meta = {key: json.loads(value) for key, value in db.execute(
                    f"SELECT key, value FROM meta WHERE key IN ({','.join('?' * len(OLD_META_KEYS))})", OLD_META_KEYS)}
                records, turns = from_meta(meta)
                db.executemany(_PUT_RECORD, [(r.kind, r.id, r.model_dump_json()) for r in records])
                if turns:
                    row = db.execute("SELECT value FROM meta WHERE key='counters'").fetchone()
                    counters = {**(json.loads(row[0]) if row else {}), **{f"turn:{a}": n for a, n in turns.items()}}
                    db.execute(_SET_META, ("counters", json.dumps(counters)))
                db.executemany("DELETE FROM meta WHERE key=?", [(key,) for key in OLD_META_KEYS])
            db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)", (json.dumps(SCHEMA_VERSION),))
            db.execute("COMMIT")
        except (sqlite3.Error, KeyError, TypeError, ValueError) as exc:  # (ValidationError is a ValueError)
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise StoreError(f"cannot upgrade {self.dir / 'state.db'} from schema version {version}: {exc}") from None

    def _load(self) -> tuple[World, int]:
        assert self._db is not None
        world = World()
        for kind, key, text in self._db.execute("SELECT kind, id, json FROM entities ORDER BY rowid"):
            model = ENTITY_MODELS.get(kind)
            if model is None:
                continue
            world.entities(kind)[key] = model.model_validate_json(text)
            self.encoded[(kind, key)] = text
        appends: tuple[tuple[str, int, deque[Any]], ...] = (
            ("feed", RECENT_FEED, world.feed), ("message", RECENT_MESSAGES, world.messages))
        for kind, limit, target in appends:
            rows = self._db.execute(
                "SELECT json FROM appends WHERE kind=? ORDER BY id DESC LIMIT ?", (kind, limit)
            ).fetchall()
            for (text,) in reversed(rows):
                target.append(APPEND_MODELS[kind].model_validate_json(text))
        for key, text in self._db.execute("SELECT key, value FROM meta"):
            if key not in ("schema_version", "seq"):
                world.meta[key] = json.loads(text)
        for kind, key, text in self._db.execute("SELECT kind, id, json FROM records ORDER BY rowid"):
            record_model = RECORD_MODELS.get(kind)
            if record_model is not None:  # (a kind a newer Foreman wrote is not this one's to read)
                world.records.setdefault(kind, {})[key] = record_model.model_validate_json(text)
        unread: dict[str, list[Any]] = {}
        for agent, text in self._db.execute("SELECT agent, json FROM unread ORDER BY id"):
            unread.setdefault(agent, []).append(json.loads(text))
        if unread:
            world.meta["unread"] = unread
        self._unread_counts = {agent: len(msgs) for agent, msgs in unread.items()}
        for name in world.agents:
            world.logs[name] = deque(self.read_log_tail(name, RECENT_LOGS), maxlen=RECENT_LOGS)
        seq = int(self._get_meta("seq") or 0)
        self._prune()
        return world, seq

    def _prune(self) -> None:
        assert self._db is not None
        for kind in APPEND_MODELS:
            self._db.execute(
                "DELETE FROM appends WHERE kind=? AND id <= (SELECT COALESCE(MAX(id), 0) FROM appends WHERE kind=?) - ?",
                (kind, kind, KEEP_APPENDS),
            )

    def _get_meta(self, key: str) -> Any:
        assert self._db is not None
        row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def _set_meta_now(self, key: str, value: Any) -> None:
        assert self._db is not None
        self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, json.dumps(value)))

    # ------------------------------------------------------------------ commit
    def commit(self, changes: Iterable[tuple[Change, str | None]], seq: int) -> None:
        """Write a batch of changes and the new ``seq`` durably, in one transaction.

        Args:
            changes: each change with its encoded entity JSON (None for meta and record changes).
            seq: the last ``seq`` handed out, stored with the batch.

        Raises:
            StoreError: the write failed (disk full, database locked); nothing was written.
        """
        db = self._db
        assert db is not None
        log_lines: list[LogLine] = []
        counts: dict[str, int] = {}
        try:
            db.execute("BEGIN")
            for change, text in changes:
                if change.op == "upsert":
                    ent = change.value
                    key = ent.name if change.kind == "agent" else ent.id
                    text = text or ent.model_dump_json(by_alias=True)
                    db.execute(
                        "INSERT INTO entities (kind, id, json) VALUES (?, ?, ?) "
                        "ON CONFLICT(kind, id) DO UPDATE SET json=excluded.json",  # keeps rowid: creation order
                        (change.kind, key, text))
                    self.encoded[(change.kind, key)] = text
                elif change.op == "append":
                    if change.kind == "log":
                        log_lines.append(change.value)
                    else:
                        text = text or change.value.model_dump_json(by_alias=True)
                        db.execute("INSERT OR REPLACE INTO appends (kind, id, json) VALUES (?, ?, ?)", (change.kind, change.value.id, text))
                elif change.op == "record":
                    if change.value is None:
                        db.execute("DELETE FROM records WHERE kind=? AND id=?", (change.kind, change.key))
                    else:
                        db.execute(_PUT_RECORD, (change.kind, change.key, change.value.model_dump_json()))
                elif change.kind == "unread":
                    self._write_unread(db, change.key, change.value, counts)
                else:
                    db.execute(_SET_META, (change.key, json.dumps(change.value)))
            db.execute(_SET_META, ("seq", json.dumps(seq)))
            for line in log_lines:
                self._append_log(line)
            db.execute("COMMIT")
        except (sqlite3.Error, OSError) as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise StoreError(f"cannot write state: {exc}") from None
        self._unread_counts.update(counts)

    def _write_unread(self, db: sqlite3.Connection, agent: str, msg: dict[str, Any] | None, counts: dict[str, int]) -> None:
        """Add one unread message of ``agent`` (dropping its oldest past :data:`UNREAD_MAX`), or clear them (None).

        ``counts`` holds this transaction's row counts; they replace the store's only once it commits.
        """
        if msg is None:
            db.execute("DELETE FROM unread WHERE agent=?", (agent,))
            counts[agent] = 0
            return
        db.execute("INSERT OR REPLACE INTO unread (agent, id, json) VALUES (?, ?, ?)", (agent, msg["id"], json.dumps(msg)))
        n = counts.get(agent, self._unread_counts.get(agent, 0)) + 1
        if n > UNREAD_MAX:
            db.execute("DELETE FROM unread WHERE agent=? AND id=(SELECT MIN(id) FROM unread WHERE agent=?)", (agent, agent))
            n = UNREAD_MAX
        counts[agent] = n

    # ------------------------------------------------------------------ agent logs
    def _log_path(self, agent: str, old: bool = False) -> Path:
        return self.dir / "logs" / (f"{agent}.1.jsonl" if old else f"{agent}.jsonl")

    def _append_log(self, line: LogLine) -> None:
        path = self._log_path(line.agent)
        fd = self._log_fds.get(line.agent)
        if fd is None:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            self._log_fds[line.agent] = fd
        data = (line.model_dump_json(by_alias=True) + "\n").encode()
        os.write(fd, data)  # unbuffered: survives SIGKILL once written
        if os.fstat(fd).st_size >= LOG_ROTATE_BYTES:
            os.close(fd)
            del self._log_fds[line.agent]
            os.replace(path, self._log_path(line.agent, old=True))

    def read_log_tail(self, agent: str, count: int) -> list[LogLine]:
        """Return the last ``count`` log lines of ``agent``, reading only the ends of its files."""
        lines: list[LogLine] = []
        for path in (self._log_path(agent), self._log_path(agent, old=True)):
            if len(lines) >= count or not path.exists():
                continue
            want = count - len(lines)
            with open(path, "rb") as fh:
                size = fh.seek(0, os.SEEK_END)
                fh.seek(max(0, size - max(65536, want * 1024)))
                raw = fh.read().split(b"\n")
            if size > 65536:
                raw = raw[1:]  # the first piece may be a partial line
            got: list[LogLine] = []
            for chunk in raw:
                if chunk.strip():
                    try:
                        got.append(LogLine.model_validate_json(chunk))
                    except ValueError:
                        continue  # a line torn by a crash
            lines = got[-want:] + lines
        return lines[-count:]

    def checkpoint(self) -> None:
        """Copy the WAL back into the database (``PRAGMA wal_checkpoint(PASSIVE)``).

        Runs on its own connection, so the daemon calls it from a worker thread about once a
        second; commits on the loop never pay for a checkpoint. Durability is unchanged: a
        committed transaction is in the WAL either way.
        """
        with self._ckpt_lock:
            if self._db is None:
                return
            if self._ckpt is None:
                self._ckpt = sqlite3.connect(self.dir / "state.db", isolation_level=None, check_same_thread=False)
            try:
                self._ckpt.execute("PRAGMA wal_checkpoint(PASSIVE)")
            except sqlite3.Error as exc:
                logger.warning("WAL checkpoint failed: %s", exc)

    def close(self) -> None:
        """Close the database and log files (waits for a running checkpoint)."""
        with self._ckpt_lock:
            if self._ckpt is not None:
                self._ckpt.close()
                self._ckpt = None
        for fd in self._log_fds.values():
            os.close(fd)
        self._log_fds.clear()
        with self._ckpt_lock:
            if self._db is not None:
                self._db.close()
                self._db = None
