"""The upstream commits after each branch's fork (`after_fork`): "is this upstream commit in
the branch?" without a git walk. The branches a command works on get theirs as they are
indexed; a branch indexed beside them (a sibling, for its evidence) is marked
(`after_fork_pending`) and gets them when a question first needs them, or when a later
command works on it."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Sequence

from backportr.errors import BackportrError
from backportr.index.part import IndexFile, StorePart
from backportr.index.reader import IndexReader, Tally
from backportr.model import Oid, oids


class AfterFork(StorePart):
    """The questions answered by the after-fork rows, and the rows they need."""

    _unlisted: set[str] | None = None  # branches without their rows, until the next update

    def __init__(self, file: IndexFile, reader: IndexReader) -> None:
        super().__init__(file)
        self.reader = reader
        self._tally = Tally()  # questions about each branch, until an update
        # each branch's own commits and upstream commits after its fork, read whole when
        # the tally says so (a scan asks thousands, a resolve a few)
        self._whole: dict[str, tuple[set[int], set[int]]] = {}

    def forget(self) -> None:
        self._unlisted = None
        self._tally = Tally()
        self._whole = {}

    def in_branch(self, oid: Oid, refname: str) -> bool | None:
        """Is the commit in the branch's history? None when the index cannot tell."""
        row = self.reader.row(oid)
        if row is None:
            return None
        cid, seq = row.id, row.upstream_seq
        whole = self._whole.get(refname)
        if whole is None and self._often(refname):
            whole = self._read_whole(refname)
        if whole is not None:
            if cid in whole[0]:
                return True
        elif self.db.execute(
            "SELECT 1 FROM branch_commits WHERE refname=? AND commit_id=?", (refname, cid)
        ).fetchone():
            return True
        if seq is None:
            return False
        stored = self.reader.stored_ref(refname)
        if stored is None or stored.fork is None:
            return None
        if whole is not None:
            return cid not in whole[1]
        self.complete([refname])
        return (
            self.db.execute(
                "SELECT 1 FROM after_fork WHERE refname=? AND commit_id=?", (refname, cid)
            ).fetchone()
            is None
        )

    def _often(self, refname: str) -> bool:
        return self._tally.due(refname, lambda: self._rows(refname), row_cost=1 / 10)

    def _rows(self, refname: str) -> int:
        """The branch's own commits and the upstream commits after its fork, as stored
        (none of the latter for a branch not yet listed: the guess is low, never wrong)."""
        count = "SELECT COUNT(*) FROM {} WHERE refname=?"
        own = self.db.execute(count.format("branch_commits"), (refname,)).fetchone()[0]
        after = self.db.execute(count.format("after_fork"), (refname,)).fetchone()[0]
        return int(own) + int(after)

    def _read_whole(self, refname: str) -> tuple[set[int], set[int]]:
        """The branch's own commits and the upstream commits after its fork (its rows
        listed first where they are not yet), by row id."""
        stored = self.reader.stored_ref(refname)
        if stored is not None and stored.fork is not None:  # where a question lists them
            self.complete([refname])
        own = self.db.execute("SELECT commit_id FROM branch_commits WHERE refname=?", (refname,))
        after = self.db.execute("SELECT commit_id FROM after_fork WHERE refname=?", (refname,))
        whole = self._whole[refname] = ({r[0] for r in own}, {r[0] for r in after})
        return whole

    def fixes(self, refname: str) -> list[Oid]:
        """Upstream commits after the branch's fork with a resolved `Fixes:`, oldest first."""
        self.complete([refname])
        rows = self.db.execute(
            "SELECT DISTINCT c.oid, c.upstream_seq FROM fixes f JOIN commits c ON c.id=f.commit_id "
            "JOIN after_fork a ON a.commit_id=c.id AND a.refname=? "
            "WHERE f.target IS NOT NULL ORDER BY c.upstream_seq",
            (refname,),
        ).fetchall()
        return [r[0] for r in rows]

    def complete(self, refnames: Sequence[str]) -> None:
        """List and keep the rows of those of `refnames` stored without them. Each is
        listed from the nearest fork whose rows are known (upstream's tip, which has none,
        a branch already listed, or one listed before it here): with D1 the commits of that
        base not in the fork's history and D2 the fork's not in the base's, a branch's rows
        are the base's less D2, plus D1. Two `git rev-list`s of the commits between two
        forks instead of one of everything after the fork: siblings listed together (from
        the newest fork down) walk upstream's history about once in all, where each walked
        it from the tip (FRR's 26: 26 walks of up to 44,000 commits). A fault keeping them
        (the index locked past its wait) is an error: a question answered without them
        would be answered wrong."""
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
        steps = self._listing_steps(todo)
        began = not self.db.in_transaction
        try:
            if began:
                self.db.execute("BEGIN IMMEDIATE")
            for refname, base, d1, d2 in steps:
                if self.db.execute(  # not already listed by another process meanwhile
                    "DELETE FROM after_fork_pending WHERE refname=?", (refname,)
                ).rowcount:
                    self._add_from(refname, base, d1, d2)
            if began:
                self.db.execute("COMMIT")
        except sqlite3.OperationalError as error:
            if began:
                with contextlib.suppress(sqlite3.Error):
                    self.db.execute("ROLLBACK")
            raise BackportrError(
                f"{self.file.path}: cannot keep the upstream commits after the fork of "
                f"{', '.join(todo)}: {error}"
            ) from error
        self._unlisted.difference_update(todo)

    def _listing_steps(self, todo: list[str]) -> list[tuple[str, str | None, list[Oid], list[Oid]]]:
        """(branch, the base branch whose rows it starts from or None, D1, D2) for each of
        `todo`, in the order they are to be stored (a base before the branches listed from
        it)."""
        upstream = self.db.execute("SELECT tip FROM refs WHERE kind='upstream'").fetchone()
        if upstream is None:
            return [(refname, None, [], []) for refname in todo]
        # the known forks: (upstream sequence number, fork, its branch or None for the tip)
        # read here, not through the caches: an update asks while it writes the refs
        known: list[tuple[int, Oid, str | None]] = []
        tip = self.db.execute(
            "SELECT upstream_seq FROM commits WHERE oid=? AND upstream_seq IS NOT NULL",
            (upstream[0],),
        ).fetchone()
        if tip is not None:
            known.append((tip[0], upstream[0], None))
        forks: dict[str, tuple[Oid | None, int | None]] = {}
        pending = {r[0] for r in self.db.execute("SELECT refname FROM after_fork_pending")}
        for refname, fork, seq in self.db.execute(
            "SELECT r.refname, r.fork, c.upstream_seq FROM refs r LEFT JOIN commits c "
            "ON c.oid=r.fork WHERE r.kind='branch'"
        ):
            forks[refname] = (fork, seq)
            if seq is not None and refname not in pending:
                known.append((seq, fork, refname))
        wanted: list[tuple[int, Oid, str]] = []
        steps: list[tuple[str, str | None, list[Oid], list[Oid]]] = []
        for refname in todo:
            fork, seq = forks.get(refname, (None, None))
            if fork is None:
                steps.append((refname, None, [], []))  # no fork: nothing after it
            elif seq is None or not known:  # all from the tip
                listed = oids(self.repo.run_git("rev-list", upstream[0], f"^{fork}"))
                steps.append((refname, None, listed, []))
            else:
                wanted.append((seq, fork, refname))
        for seq, fork, refname in sorted(wanted, reverse=True):  # the newest fork first
            _, base_fork, base = min(known, key=lambda k: abs(k[0] - seq))
            d1 = oids(self.repo.run_git("rev-list", base_fork, f"^{fork}"))
            # the fork is upstream's: nothing of its history is outside the tip's
            d2 = [] if base is None else oids(self.repo.run_git("rev-list", fork, f"^{base_fork}"))
            steps.append((refname, base, d1, d2))
            known.append((seq, fork, refname))
        return steps

    def _add_from(self, refname: str, base: str | None, d1: list[Oid], d2: list[Oid]) -> None:
        """The branch's rows: the base branch's (none for upstream's tip) less D2, plus D1."""
        if base is not None:
            self.db.execute("CREATE TEMP TABLE IF NOT EXISTS listed(oid TEXT NOT NULL)")
            self.db.executemany("INSERT INTO listed VALUES(?)", [(oid,) for oid in d2])
            self.db.execute(
                "INSERT OR IGNORE INTO after_fork SELECT ?, a.commit_id FROM after_fork a "
                "WHERE a.refname=? AND a.commit_id NOT IN "
                "(SELECT c.id FROM listed l CROSS JOIN commits c ON c.oid=l.oid)",
                (refname, base),
            )
            self.db.execute("DELETE FROM listed")
        self.add_listed(refname, d1)

    def add_listed(self, refname: str, oids: list[Oid]) -> None:
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
