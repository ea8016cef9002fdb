"""The upstream commits after each branch's fork (`after_fork`): "is this upstream commit in
the branch?" without a git walk. The branches a command works on get theirs as they are
indexed; a branch indexed beside them (a sibling, for its evidence) is marked
(`after_fork_pending`) and gets them when a question first needs them, or when a later
command works on it."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from backportr.errors import BackportrError
from backportr.index.reader import IndexReader
from backportr.model import Oid

_LISTINGS = 2  # `git rev-list`s at once when several branches are completed together


class AfterForkReader(IndexReader):
    """The questions answered by the after-fork rows, and the rows they need."""

    _unlisted: set[str] | None = None  # branches without their rows, until the next update

    def _forget(self) -> None:
        super()._forget()
        self._unlisted = None

    def in_branch(self, oid: Oid, refname: str) -> bool | None:
        """Is the commit in the branch's history? None when the index cannot tell."""
        row = self._row(oid)
        if row is None:
            return None
        cid, seq = row.id, row.upstream_seq
        if self.db.execute(
            "SELECT 1 FROM branch_commits WHERE refname=? AND commit_id=?", (refname, cid)
        ).fetchone():
            return True
        if seq is None:
            return False
        stored = self._stored_ref(refname)
        if stored is None or stored.fork is None:
            return None
        self.complete_after_fork([refname])
        return (
            self.db.execute(
                "SELECT 1 FROM after_fork WHERE refname=? AND commit_id=?", (refname, cid)
            ).fetchone()
            is None
        )

    def fixes_after_fork(self, refname: str) -> list[Oid]:
        """Upstream commits after the branch's fork with a resolved `Fixes:`, oldest first."""
        self.complete_after_fork([refname])
        rows = self.db.execute(
            "SELECT DISTINCT c.oid, c.upstream_seq FROM fixes f JOIN commits c ON c.id=f.commit_id "
            "JOIN after_fork a ON a.commit_id=c.id AND a.refname=? "
            "WHERE f.target IS NOT NULL ORDER BY c.upstream_seq",
            (refname,),
        ).fetchall()
        return [r[0] for r in rows]

    def complete_after_fork(self, refnames: Sequence[str]) -> None:
        """List and keep the rows of those of `refnames` stored without them: a `git
        rev-list` of upstream down to each fork (two at a time when several are asked
        together, as the index's fork probes run), and tens of thousands of rows each. A
        fault keeping them (the index locked past its wait) is an error: a question
        answered without them would be answered wrong."""
        if self._unlisted is None:
            rows = self.db.execute("SELECT refname FROM after_fork_pending")
            self._unlisted = {r[0] for r in rows}
        todo = [r for r in dict.fromkeys(refnames) if r in self._unlisted]
        for refname in list(todo):
            if not self.db.execute(  # listed by another process since
                "SELECT 1 FROM after_fork_pending WHERE refname=?", (refname,)
            ).fetchone():
                self._unlisted.discard(refname)
                todo.remove(refname)
        if not todo:
            return
        upstream = self.db.execute("SELECT tip FROM refs WHERE kind='upstream'").fetchone()
        forks = [(ref.fork if ref else None) for ref in map(self._stored_ref, todo)]

        def listing(fork: Oid | None) -> list[Oid]:
            if upstream is None or fork is None:
                return []
            return self.repo.run_git("rev-list", upstream[0], f"^{fork}").split()

        if len(forks) == 1:
            listings = [listing(forks[0])]
        else:
            with ThreadPoolExecutor(_LISTINGS) as pool:
                listings = list(pool.map(listing, forks))
        self._keep_after_fork(todo, listings)

    def _keep_after_fork(self, refnames: list[str], listings: list[list[Oid]]) -> None:
        began = not self.db.in_transaction
        try:
            if began:
                self.db.execute("BEGIN IMMEDIATE")
            for refname, listed in zip(refnames, listings, strict=True):
                if self.db.execute(  # not already listed by another process meanwhile
                    "DELETE FROM after_fork_pending WHERE refname=?", (refname,)
                ).rowcount:
                    self._add_after_fork_of(refname, listed)
            if began:
                self.db.execute("COMMIT")
        except sqlite3.OperationalError as error:
            if began:
                with contextlib.suppress(sqlite3.Error):
                    self.db.execute("ROLLBACK")
            raise BackportrError(
                f"{self.path}: cannot keep the upstream commits after the fork of "
                f"{', '.join(refnames)}: {error}"
            ) from error
        assert self._unlisted is not None
        self._unlisted.difference_update(refnames)

    def _add_after_fork_of(self, refname: str, oids: list[Oid]) -> None:
        """The branch's rows of upstream commits after its fork, given by id: a branch
        read whole lists every upstream commit after its fork (tens of thousands), joined
        with the commits table by SQLite from a scratch table rather than looked up and
        inserted row by row from here (FRR's 27 branches: 507,657 rows)."""
        self.db.execute("CREATE TEMP TABLE IF NOT EXISTS listed(oid TEXT NOT NULL)")
        self.db.executemany("INSERT INTO listed VALUES(?)", [(oid,) for oid in oids])
        self.db.execute(
            "INSERT OR IGNORE INTO after_fork SELECT ?, c.id FROM listed l "
            "CROSS JOIN commits c ON c.oid=l.oid",
            (refname,),
        )
        self.db.execute("DELETE FROM listed")  # emptied in the same transaction as it is filled
