"""The index of one repository, the store its parts share: opened, checked, closed
(`backportr.index` re-exports it)."""

from __future__ import annotations

import contextlib
import errno
import logging
import sqlite3
import time
import urllib.parse
from pathlib import Path

from backportr.errors import IndexCorruptError
from backportr.git.repo import Repo
from backportr.index.afterfork import AfterFork
from backportr.index.cache import AnswerCache
from backportr.index.dropping import drop_all
from backportr.index.facts import ProjectFacts
from backportr.index.part import IndexFile
from backportr.index.patchids import PatchIds
from backportr.index.reader import IndexReader
from backportr.index.schema import (
    _COMMIT_INDEXES,
    _SCHEMA,
    BUSY_MS,
)
from backportr.index.transaction import held, writing
from backportr.index.writer import IndexWriter
from backportr.infra.dbfault import explain
from backportr.text.relation_forms import DEFAULT, Vocabulary

_log = logging.getLogger("backportr")


def default_index_path(repo: Repo) -> Path:
    return repo.path / "backportr" / "index.sqlite"


class CommitIndex:
    """The index of one repository. Use as a context manager, or call close().

    It owns the connection and the locks; what is asked of it is asked of its parts, each
    owning the state of its own questions: `reader` (what the tables say; it writes
    nothing), `cache` (answers cached for reuse), `facts` (the project's practice), `patch_ids`
    and `after_fork` (the rows a question computes when it first needs them), `writer`
    (updates)."""

    def __init__(
        self,
        repo: Repo,
        path: Path | None = None,
        *,
        recover: bool = False,
        vocabulary: Vocabulary = DEFAULT,
    ) -> None:
        """With `recover`, an index file that cannot be read is moved aside (saved, renamed
        `*.corrupt-<time>`) and a new one started; without, that is an error. `vocabulary`:
        the fix forms messages are read with (an index read with others is built again)."""
        self.file = IndexFile(repo, path or default_index_path(repo), vocabulary)
        self.reader = IndexReader(self.file)
        self.cache = AnswerCache(self.file)
        self.facts = ProjectFacts(self.file, self.reader, self.cache)
        self.patch_ids = PatchIds(self.file, self.cache)
        self.after_fork = AfterFork(self.file, self.reader)
        self.writer = IndexWriter(
            self.file, self.reader, self.patch_ids, self.after_fork, forget_all=self.forget
        )
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.file.open_lock_path, "a+"):
                pass  # the lock every opening takes: can it be written here?
        except OSError as error:
            if error.errno not in _NO_WRITES or not self.path.is_file():
                raise IndexCorruptError(
                    f"cannot create the index directory {self.path.parent} or its lock: {error}"
                ) from None
            self._open_read_only()
            return
        try:
            # Opening is serialised by a lock of its own, held for milliseconds: three runs
            # creating one index at once would otherwise race to switch it to WAL, and SQLite
            # answers one of them "database is locked" at once, without waiting (its deadlock
            # rule). The writers' lock is not the one: an update holds it for minutes, and
            # readers must not wait for that.
            with held(self.file.open_lock_path):
                if recover and self.path.exists() and not _readable(self.path):
                    _move_aside(self.path)
                self.file.db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
                self.db.execute(f"PRAGMA busy_timeout={BUSY_MS}")
                self.db.execute("PRAGMA journal_mode=WAL")
                self.db.execute("PRAGMA synchronous=NORMAL")
                stale = self._ensure_schema()
            if stale:
                with writing(self.file):
                    if self._stored_schema() != self.file.schema_mark:  # not redone by another
                        drop_all(self.db, self.file.schema_mark)
        except sqlite3.DatabaseError as error:
            if hasattr(self, "db"):
                self.db.close()
            raise IndexCorruptError(explain(error, self.path)) from None
        except OSError as error:
            raise IndexCorruptError(f"cannot lock the index {self.path}: {error}") from None

    def _open_read_only(self) -> None:
        """The index as it is, where nothing can be written (a read-only file system, an
        immutable directory): questions are answered from it when it is up to date
        (`update` says so otherwise), and what would be stored is not."""
        uri = f"file:{urllib.parse.quote(str(self.path.resolve()))}?mode=ro&immutable=1"
        try:
            self.file.db = sqlite3.connect(uri, uri=True, isolation_level=None)
            stored = self._stored_schema()
        except sqlite3.DatabaseError as error:
            raise IndexCorruptError(explain(error, self.path)) from None
        if stored != self.file.schema_mark:
            self.db.close()
            raise IndexCorruptError(
                f"the index {self.path} was made by another version of backportr and cannot "
                "be rebuilt here (read-only); run backportr index where it is writable, or "
                "give --index PATH on a writable file system"
            )
        self.file.read_only = True
        _log.info("the index %s is read-only: answering from it as it is", self.path)

    @property
    def db(self) -> sqlite3.Connection:
        return self.file.db

    @property
    def path(self) -> Path:
        return self.file.path

    @property
    def vocabulary(self) -> Vocabulary:
        return self.file.vocabulary

    def forget(self) -> None:
        """Every part drops what it read of the tables an update writes."""
        for part in (self.reader, self.facts, self.patch_ids, self.after_fork):
            part.forget()

    def __enter__(self) -> CommitIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    def _ensure_schema(self) -> bool:
        """Create what is missing; True when the index was made by another schema version
        (it is then dropped and redone under the writers' lock)."""
        self.db.executescript(_SCHEMA + _COMMIT_INDEXES)
        stored = self._stored_schema()
        if stored is None:
            self.db.execute("INSERT INTO meta VALUES('schema', ?)", (self.file.schema_mark,))
        return stored is not None and stored != self.file.schema_mark

    def _stored_schema(self) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        return None if row is None else str(row[0])


_NO_WRITES = (errno.EROFS, errno.EACCES, errno.EPERM)  # a file system that takes no writes


def _move_aside(path: Path) -> None:
    path.rename(path.with_name(f"{path.name}.corrupt-{int(time.time())}"))
    for suffix in ("-wal", "-shm", "-journal"):  # none may be applied to a new file
        path.with_name(path.name + suffix).unlink(missing_ok=True)


def _readable(path: Path) -> bool:
    """False only for a damaged file (SQLite says it is corrupt or not a database, or its
    check finds faults); a fault of the machine (a full disk, an I/O error, a lock) is raised
    as it is: the healthy index is never moved aside for it."""
    try:
        with contextlib.closing(sqlite3.connect(path)) as db:
            found = db.execute("PRAGMA quick_check").fetchall()
            db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
    except sqlite3.DatabaseError as error:
        name = getattr(error, "sqlite_errorname", "") or ""
        if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or "no such table" in str(error):
            return False
        raise
    return found == [("ok",)]
