"""A state file (the bot's, a scan's, a cves run's) and the lock beside it: one run at a time,
told at once.

An I/O edge shared by the front-ends that keep state between scheduled runs."""

from __future__ import annotations

import fcntl
import sqlite3
from pathlib import Path
from typing import IO

from backportr.dbfault import explain
from backportr.errors import BackportrError


def exclusive_lock(path: Path, busy: str) -> IO[str]:
    """Hold `<path>.lock` exclusively (closing the returned file releases it); when another
    run holds it, raise `busy` as one line."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = open(path.with_name(path.name + ".lock"), "a+")  # noqa: SIM115
    except OSError as error:
        raise BackportrError(f"cannot use the state {path}: {error.strerror}") from None
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        raise BackportrError(busy) from None
    return lock


def open_state(path: Path, busy: str, schema: str, what: str) -> tuple[IO[str], sqlite3.Connection]:
    """The state database at `path` with its tables (`schema`), under the lock
    `exclusive_lock` takes (`busy` when another run holds it); a file SQLite cannot use is
    one line naming `what` it is, with nothing left open."""
    lock = exclusive_lock(path, busy)
    db = None
    try:
        db = sqlite3.connect(path)
        db.executescript(schema)
    except sqlite3.DatabaseError as error:
        if db is not None:
            db.close()
        lock.close()
        raise BackportrError(explain(error, path, what)) from None
    return lock, db
