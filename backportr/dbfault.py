"""One line for an SQLite failure on one of backportr's files (the index, a state file),
saying what the user can do about it: a full disk is not a damaged file."""

from __future__ import annotations

import sqlite3
from pathlib import Path


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
