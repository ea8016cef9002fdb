"""What every part of the index (reader, writer, patch-ids, after-fork rows, cached answers,
project facts) shares: the open index file, and through it the connection and the
repository. A part that needs another is handed it when the store (`store.py`) makes it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from backportr.git.repo import Repo
from backportr.index.schema import SCHEMA_VERSION
from backportr.text.relation_forms import Vocabulary


class IndexFile:
    """The index file the store opened: where it is, its connection, its locks, and the fix
    forms its messages are read with."""

    db: sqlite3.Connection  # set by the store as it opens the file

    def __init__(self, repo: Repo, path: Path, vocabulary: Vocabulary) -> None:
        self.repo = repo
        self.path = path
        self.vocabulary = vocabulary
        self.read_only = False  # opened as it is, on a file system that takes no writes
        self.lock_path = path.with_suffix(".lock")  # the writers' queue
        self.open_lock_path = path.with_suffix(".open-lock")  # every opening's, milliseconds

    @property
    def schema_mark(self) -> str:
        """What `meta` records as the index's schema: the tables' version and the fix
        forms' fingerprint (another vocabulary reads every message again)."""
        return f"{SCHEMA_VERSION}:{self.vocabulary.fingerprint}"


class StorePart:
    """One part of an open index. It owns the state of its own questions (what it has read,
    until the next update: `forget`)."""

    def __init__(self, file: IndexFile) -> None:
        self.file = file

    @property
    def db(self) -> sqlite3.Connection:
        return self.file.db

    @property
    def repo(self) -> Repo:
        return self.file.repo

    def forget(self) -> None:
        """Drop what was read of the tables an update writes (`IndexWriter.update`)."""
