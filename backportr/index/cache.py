"""Answers cached in the index for later (the cache): results computed from inputs their key
names, a scan's findings, whether an adapted backport conflicts, what lore said of a posting,
the hunks of blob diffs. Each is cached where the index can be written; read-only, it is just
not cached (`dbfault.unless_read_only`), and every other fault is the error it is."""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
from collections.abc import Sequence

from backportr.index.part import StorePart
from backportr.index.schema import in_chunks
from backportr.infra.dbfault import is_read_only, unless_read_only
from backportr.model import Oid


def result_key(*parts: str) -> str:
    """The key of a cached result (`cached_result`, `cache_result`): every input it depends on,
    hashed."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


class AnswerCache(StorePart):
    """The index's cached answers: reading them, writing them."""

    def write_all(self, statement: str, rows: Sequence[tuple[object, ...]]) -> None:
        """`executemany` in one transaction (unless one is open): without it each row is a
        transaction of its own, a commit each (half of what filling a conflict search's
        few patch-ids cost)."""
        if len(rows) < 2 or self.db.in_transaction:
            self.db.executemany(statement, rows)
            return
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.executemany(statement, rows)
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def adapted_conflicts(self, upstream: Oid, carrier: Oid) -> bool | None:
        """Cached: does `upstream` conflict at the parent of its backport `carrier`?"""
        row = self.db.execute(
            "SELECT conflicts FROM adapted_checks WHERE upstream=? AND carrier=?",
            (upstream, carrier),
        ).fetchone()
        return None if row is None else bool(row[0])

    def cache_adapted_conflicts(self, upstream: Oid, carrier: Oid, conflicts: bool) -> None:
        with unless_read_only():
            self.db.execute(
                "INSERT OR REPLACE INTO adapted_checks VALUES(?, ?, ?)",
                (upstream, carrier, int(conflicts)),
            )

    def posting_cover(
        self, stem: str
    ) -> tuple[str | None, int | None, list[tuple[int, str]]] | None:
        """What lore said of a posting (its cover letter's subject, how many patches were
        posted, each patch's number and subject), when it was asked before."""
        row = self.db.execute(
            "SELECT cover, posted, patches FROM posting_covers WHERE stem=?", (stem,)
        ).fetchone()
        if row is None:
            return None
        patches = [(int(k), str(subject)) for k, subject in json.loads(row[2] or "[]")]
        return row[0], row[1], patches

    def cache_posting_cover(
        self, stem: str, cover: str | None, posted: int | None, patches: list[tuple[int, str]]
    ) -> None:
        with unless_read_only():  # read-only: just not cached
            self.db.execute(
                "INSERT OR REPLACE INTO posting_covers VALUES(?, ?, ?, ?)",
                (stem, cover, posted, json.dumps(patches)),
            )

    def cached_result(self, key: str) -> str | None:
        """A result computed earlier from exactly the same inputs (the key names them all)."""
        row = self.db.execute("SELECT value FROM results WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def cached_results(self, keys: Sequence[str]) -> dict[str, str]:
        """`cached_result` of many keys at once: those cached."""
        found: dict[str, str] = {}
        for chunk, marks in in_chunks(keys):
            found.update(
                self.db.execute(f"SELECT key, value FROM results WHERE key IN ({marks})", chunk)
            )
        return found

    def cache_result(self, key: str, value: str) -> None:
        self.cache_results([(key, value)])

    def cache_results(self, results: Sequence[tuple[str, str]]) -> None:
        """Keep answers (key, value), together."""
        with unless_read_only():  # read-only: just not cached
            self.write_all("INSERT OR REPLACE INTO results VALUES(?, ?)", results)

    def cached_findings(self, keys: Sequence[str]) -> dict[str, str]:
        """A scan's findings cached for targets (`cache_findings`), by key: those with any."""
        found: dict[str, str] = {}
        for chunk, marks in in_chunks(keys):
            found.update(
                self.db.execute(
                    f"SELECT key, value FROM scan_findings WHERE key IN ({marks})", chunk
                )
            )
        return found

    def cache_findings(self, rows: Sequence[tuple[str, str, str, str]]) -> None:
        """Cache targets' findings, rows of (key, branch, state, findings), together. `state`
        names what moves between nights (the tips, the version): the next scan of the
        branch in another state forgets them (`forget_findings`), as no key of its can name
        them."""
        with unless_read_only():  # read-only: just not cached
            self.write_all("INSERT OR REPLACE INTO scan_findings VALUES(?, ?, ?, ?)", rows)

    def forget_findings(self, branch: str, state: str) -> int:
        """Remove the findings cached for `branch` in states other than `state`: what a
        nightly scan of a moving branch would otherwise leave behind, one row per target
        each night. The number removed. No index on the branch: this reads the table once
        a scan (30,000 rows in 0.1 s), where an index would cost every row written."""
        try:
            cursor = self.db.execute(
                "DELETE FROM scan_findings WHERE branch=? AND state<>?", (branch, state)
            )
        except sqlite3.OperationalError as error:
            if is_read_only(error):
                return 0  # nothing is removed
            raise
        return cursor.rowcount

    def blame_hunks(self, old: str, new: str) -> tuple[tuple[int, int, int, int], ...] | None:
        """The hunks cached for the diff of two blobs (`cache_blame_hunks`), None when none are
        or what is cached cannot be read."""
        value = self.cached_result(result_key("blame hunks", old, new))
        if value is None:
            return None
        try:
            numbers = [int(n) for n in value.split()]
        except ValueError:
            return None
        if len(numbers) % 4:
            return None
        return tuple(zip(*[iter(numbers)] * 4, strict=True))

    def cache_blame_hunks(
        self, diffs: Sequence[tuple[str, str, Sequence[tuple[int, ...]]]]
    ) -> None:
        """Cache the hunks of blob pairs' diffs (the in-process blame's, `git.blame`): they
        depend on the two blobs alone, so every scan of every branch can use them."""
        self.cache_results(
            [
                (result_key("blame hunks", old, new), " ".join(str(n) for h in hunks for n in h))
                for old, new, hunks in diffs
            ]
        )
