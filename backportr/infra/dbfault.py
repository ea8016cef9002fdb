"""One line for an SQLite failure on one of backportr's files (the index, a state file),
saying what the user can do about it: a full disk is not a damaged file."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def is_read_only(error: sqlite3.Error) -> bool:
    """The file takes no writes (a read-only index, a read-only file system)."""
    return (getattr(error, "sqlite_errorname", "") or "").startswith("SQLITE_READONLY")


@contextmanager
def unless_read_only() -> Iterator[None]:
    """A cache write: where the file takes no writes it is skipped (the answer is computed
    again next time); any other failure (a full disk, an I/O error) is the fault it is."""
    try:
        yield
    except sqlite3.OperationalError as error:
        if not is_read_only(error):
            raise


def explain(error: sqlite3.Error, path: Path | str, what: str = "the index") -> str:
    name = getattr(error, "sqlite_errorname", "") or ""
    where = f"{what} {path}"
    if name.startswith("SQLITE_READONLY"):
        return f"{where} cannot be written ({error}); give a writable path"
    if name == "SQLITE_FULL" or name.startswith("SQLITE_IOERR"):
        return (
            f"cannot write {where} ({error}): is the disk full? nothing was changed; "
            "run again when there is room"
        )
    if name in ("SQLITE_BUSY", "SQLITE_LOCKED") or name.startswith("SQLITE_BUSY"):
        return f"{where} is busy ({error}): another backportr holds it; try again later"
    if name.startswith("SQLITE_CANTOPEN"):
        return f"{where} cannot be opened ({error}); check the path and its directory"
    if what == "the index":
        return (
            f"{where} is unreadable ({error}); run backportr index --rebuild "
            "(it moves the damaged file aside)"
        )
    return f"{where} is unreadable ({error}); move it aside to start afresh"
