"""What every part of the index (reader, writer, patch-ids, after-fork rows, kept answers,
project facts) shares: the store that owns it, and through it the connection and the
repository."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from backportr.git.repo import Repo

if TYPE_CHECKING:
    from backportr.index.store import CommitIndex


class StorePart:
    """One part of an open index. It owns the state of its own questions (what it has read,
    until the next update: `forget`) and reaches the others through `store`."""

    def __init__(self, store: CommitIndex) -> None:
        self.store = store

    @property
    def db(self) -> sqlite3.Connection:
        return self.store.db

    @property
    def repo(self) -> Repo:
        return self.store.repo

    def forget(self) -> None:
        """Drop what was read of the tables an update writes (`IndexWriter.update`)."""
