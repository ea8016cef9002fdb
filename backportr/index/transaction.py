"""The index's locks and transactions: a file lock queues the writers, one SQLite
transaction holds each update, and a first fill goes without the write-ahead log."""

from __future__ import annotations

import contextlib
import fcntl
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from backportr.dbfault import explain
from backportr.errors import IndexCorruptError
from backportr.index.schema import BUSY_MS
from backportr.index.written import WrittenIds


@contextlib.contextmanager
def held(lock_path: Path) -> Iterator[None]:
    """An exclusive `flock` on `lock_path` for the block: other runs queue behind it."""
    with open(lock_path, "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


class Transactions(WrittenIds):
    """Writing under the locks (the lifecycle class, CommitIndex, sets their paths)."""

    _lock_path: Path
    _open_lock_path: Path

    @contextlib.contextmanager
    def _writing(self, *, first_fill: bool = False) -> Iterator[None]:
        """An exclusive file lock plus one transaction: concurrent runs queue, never corrupt.
        With `first_fill`, an index still empty is filled with a rollback journal (below)."""
        with held(self._lock_path), contextlib.ExitStack() as opening:
            if first_fill:  # no other run opens the index while it may leave WAL
                opening.enter_context(held(self._open_lock_path))
            journaled = first_fill and self._leave_wal_while_empty()
            if first_fill and not journaled:
                opening.close()
            try:
                self.db.execute("BEGIN IMMEDIATE")
                try:
                    yield
                except BaseException as error:
                    # SQLite may already have rolled back (a full disk does that): the
                    # original error is the one to report, never "cannot rollback".
                    with contextlib.suppress(sqlite3.Error):
                        self.db.execute("ROLLBACK")
                    if isinstance(error, sqlite3.DatabaseError):
                        raise IndexCorruptError(explain(error, self.path)) from None
                    raise
                self.db.execute("COMMIT")
            finally:
                if journaled:
                    self._back_to_wal()

    def _leave_wal_while_empty(self) -> bool:
        """Fill an empty index with a rollback journal rather than the write-ahead log: WAL
        writes a transaction twice (the log, then the checkpoint into the file), and a first
        build is one large transaction (NetworkManager's 0.17 s commit becomes 0.07 s). Only
        when no other connection has the index open (tried without waiting); the opening
        lock, held meanwhile, keeps new ones out until WAL is back (they would fail on the
        rollback journal's locks), and readers of an empty index lose nothing. True when
        switched."""
        if self.db.execute("SELECT 1 FROM commits LIMIT 1").fetchone() is not None:
            return False
        self.db.execute("PRAGMA busy_timeout=0")
        try:
            mode = self.db.execute("PRAGMA journal_mode=DELETE").fetchone()[0]
        except sqlite3.OperationalError:  # another connection holds it: stay in WAL
            return False
        finally:
            self.db.execute(f"PRAGMA busy_timeout={BUSY_MS}")
        if str(mode).lower() != "delete":
            return False
        self.db.execute("PRAGMA synchronous=FULL")  # the journal's rule for no corruption
        return True

    def _back_to_wal(self) -> None:
        """The write-ahead log again after a first fill (readers then never wait for a
        writer); where another connection stops that now, the next opening does it."""
        with contextlib.suppress(sqlite3.Error):
            mode = self.db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() == "wal":  # NORMAL is safe with WAL only
                self.db.execute("PRAGMA synchronous=NORMAL")
