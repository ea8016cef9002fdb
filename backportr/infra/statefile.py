"""A state file (the bot's, a scan's, a cves run's) and the lock beside it: one run at a time,
told at once.

An I/O edge shared by the front-ends that keep state between scheduled runs."""

from __future__ import annotations

import fcntl
import re
import sqlite3
from pathlib import Path
from typing import IO

from backportr.errors import BackportrError
from backportr.infra.dbfault import explain


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
    one line naming `what` it is, with nothing left open. Each state file names its owner
    (`what`): another's (the bot's given to `scan --state`, the index) is refused, never
    written into."""
    lock = exclusive_lock(path, busy)
    db = None
    try:
        db = sqlite3.connect(path)
        _claim(db, path, what, schema)
        db.executescript(schema)
    except sqlite3.DatabaseError as error:
        if db is not None:
            db.close()
        lock.close()
        raise BackportrError(explain(error, path, what)) from None
    except BackportrError:
        if db is not None:
            db.close()
        lock.close()
        raise
    return lock, db


_TABLE = re.compile(r"CREATE TABLE IF NOT EXISTS (\w+)")


def _claim(db: sqlite3.Connection, path: Path, what: str, schema: str) -> None:
    """The file is `what`'s: its owner row says so, or (a file of an older backportr, with
    no owner row) every table it holds is one of `what`'s; then the owner row is written."""
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    owner = None
    if "backportr_owner" in tables:
        row = db.execute("SELECT owner FROM backportr_owner").fetchone()
        owner = None if row is None else str(row[0])
    mine = set(_TABLE.findall(schema))
    if (owner is not None and owner != what) or (
        owner is None and not (tables - {"backportr_owner"}) <= mine
    ):
        said = f"it is {owner}" if owner else "it holds tables of another kind of file"
        raise BackportrError(f"{path} is not {what} ({said}); give {what}'s own file")
    if owner is None:
        with db:
            db.execute("CREATE TABLE IF NOT EXISTS backportr_owner(owner TEXT NOT NULL)")
            db.execute("INSERT INTO backportr_owner VALUES(?)", (what,))
