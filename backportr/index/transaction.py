"""The index's locks and transactions: a file lock queues the writers, one SQLite
transaction holds each update, and a first fill goes without the write-ahead log. The
store (`store.py`) sets the lock paths; the writer and the store's schema check write
under `writing`."""

from __future__ import annotations

import contextlib
import fcntl
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from backportr.errors import IndexCorruptError
from backportr.index.part import IndexFile
from backportr.index.schema import BUSY_MS
from backportr.infra.dbfault import explain


@contextlib.contextmanager
def held(lock_path: Path) -> Iterator[None]:
    """An exclusive `flock` on `lock_path` for the block: other runs queue behind it."""
    with open(lock_path, "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@contextlib.contextmanager
def writing(index: IndexFile, *, first_fill: bool = False) -> Iterator[None]:
    """An exclusive file lock plus one transaction: concurrent runs queue, never corrupt.
    With `first_fill`, an index still empty is filled with a rollback journal (below)."""
    with held(index.lock_path), contextlib.ExitStack() as opening:
        if first_fill:  # no other run opens the index while it may leave WAL
            opening.enter_context(held(index.open_lock_path))
        journaled = first_fill and _leave_wal_while_empty(index.db)
        if first_fill and not journaled:
            opening.close()
        try:
            index.db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException as error:
                # SQLite may already have rolled back (a full disk does that): the
                # original error is the one to report, never "cannot rollback".
                with contextlib.suppress(sqlite3.Error):
                    index.db.execute("ROLLBACK")
                if isinstance(error, sqlite3.DatabaseError):
                    raise IndexCorruptError(explain(error, index.path)) from None
                raise
            index.db.execute("COMMIT")
        finally:
            if journaled:
                _back_to_wal(index.db)


def _leave_wal_while_empty(db: sqlite3.Connection) -> bool:
    """Fill an empty index with a rollback journal rather than the write-ahead log: WAL
    writes a transaction twice (the log, then the checkpoint into the file), and a first
    build is one large transaction (NetworkManager's 0.17 s commit becomes 0.07 s). Only
    when no other connection has the index open (tried without waiting); the opening
    lock, held meanwhile, keeps new ones out until WAL is back (they would fail on the
    rollback journal's locks), and readers of an empty index lose nothing. True when
    switched."""
    if db.execute("SELECT 1 FROM commits LIMIT 1").fetchone() is not None:
        return False
    db.execute("PRAGMA busy_timeout=0")
    try:
        mode = db.execute("PRAGMA journal_mode=DELETE").fetchone()[0]
    except sqlite3.OperationalError:  # another connection holds it: stay in WAL
        return False
    finally:
        db.execute(f"PRAGMA busy_timeout={BUSY_MS}")
    if str(mode).lower() != "delete":
        return False
    db.execute("PRAGMA synchronous=FULL")  # the journal's rule for no corruption
    return True


def _back_to_wal(db: sqlite3.Connection) -> None:
    """The write-ahead log again after a first fill (readers then never wait for a
    writer); where another connection stops that now, the next opening does it."""
    with contextlib.suppress(sqlite3.Error):
        mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() == "wal":  # NORMAL is safe with WAL only
            db.execute("PRAGMA synchronous=NORMAL")
