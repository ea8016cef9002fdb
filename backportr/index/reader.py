"""Reading the index: the questions presence, the finders and the scan ask (who fixes X,
which branch commit carries upstream U, what posting a commit came from, ...). Nothing here
writes: answers cached for later are `cache.py`'s, the facts about the project `facts.py`'s."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

from backportr.index.part import IndexFile, StorePart
from backportr.index.schema import IndexedRef, Relation, tag_from_json
from backportr.model import CommitInfo, Oid, StableTag

NOT_UPSTREAM = 1 << 40
"""The upstream order of a commit upstream does not hold: after all of them."""


class SubjectSource(Protocol):
    """Where a commit the index does not hold gets its subject (the repository)."""

    def subject(self, oid: Oid) -> str: ...


_ROWS_CACHED = 200_000  # commits' rows cached in memory; past it the table starts again
BULK_AFTER = 256  # single-row questions of a kind before reading its rows whole is weighed
_WEIGHED = 64  # and then how often it is weighed again


class Tally:
    """When a kind of question (who fixes X, which commit of this branch carries U) is
    better answered from its rows read whole, once, than a row at a time: a scan asks
    thousands (a warm DPDK detection, 58,000 queries), a resolve a few. Weighed every
    `_WEIGHED` questions from `BULK_AFTER`: yes once those asked cost what the whole read
    does, on the guess that as many are still to come (a row read whole costs a quarter to
    a third of a question's query on DPDK's index, a tenth for a set of row ids)."""

    def __init__(self) -> None:
        self._asked: dict[str, int] = {}
        self._rows: dict[str, int] = {}

    def due(self, kind: str, rows: Callable[[], int], *, row_cost: float = 1 / 3) -> bool:
        """One more question of `kind`; `rows`: how many rows its whole read returns;
        `row_cost`: what a row of it costs, in questions."""
        asked = self._asked[kind] = self._asked.get(kind, 0) + 1
        if asked < BULK_AFTER or asked % _WEIGHED:
            return False
        if kind not in self._rows:
            self._rows[kind] = rows()
        return asked >= self._rows[kind] * row_cost


class CommitRow(NamedTuple):
    """What the reader keeps of a commit's row."""

    id: int
    subject: str
    author_name: str
    author_email: str
    author_time: int
    commit_time: int
    upstream_seq: int | None
    stable_tags: str | None


class IndexReader(StorePart):
    """Queries over an open index database."""

    def __init__(self, file: IndexFile) -> None:
        super().__init__(file)
        self._rows: dict[Oid, CommitRow | None] = {}  # commits' rows read, until an update
        self._refs: dict[str, IndexedRef | None] = {}  # stored refs read, until an update
        self._tally = Tally()  # single questions of each kind, until an update
        self._whole: dict[str, dict[Any, list[Any]]] = {}  # kinds read whole, by their key

    def fix_form_counts(self) -> dict[str, int]:
        """How many indexed commits name a culprit in each form (`text/relation_forms.py`), most
        first: a project that writes its fixes another way shows here."""
        rows = self.db.execute(
            "SELECT form, COUNT(DISTINCT commit_id) AS n FROM fixes GROUP BY form "
            "ORDER BY n DESC, form"
        ).fetchall()
        return {str(form): int(n) for form, n in rows}

    def forget(self) -> None:
        self._rows = {}
        self._refs = {}
        self._tally = Tally()
        self._whole = {}

    def _read_whole(self, kind: str) -> dict[Any, list[Any]] | None:
        """The answers to every question of `kind`, read whole once `Tally` says so (None
        before: ask the row). `kind` names the queries of `_WHOLE`, with their one
        parameter after a space, if any; the rows are (key, value), each key's values in
        the query's order."""
        if kind in self._whole:
            return self._whole[kind]
        name, _, parameter = kind.partition(" ")
        query, count = _WHOLE[name]
        arguments = (parameter,) if parameter else ()
        if not self._tally.due(kind, lambda: int(self.db.execute(count, arguments).fetchone()[0])):
            return None
        whole: dict[Any, list[Any]] = {}
        for key, *value in self.db.execute(query, arguments):
            whole.setdefault(key, []).append(value)
        self._whole[kind] = whole
        return whole

    def refs(self) -> list[IndexedRef]:
        return [IndexedRef(*row) for row in self.db.execute("SELECT * FROM refs ORDER BY name")]

    def stored_ref(self, refname: str) -> IndexedRef | None:
        if refname not in self._refs:
            row = self.db.execute("SELECT * FROM refs WHERE refname=?", (refname,)).fetchone()
            self._refs[refname] = IndexedRef(*row) if row else None
        return self._refs[refname]

    def row(self, oid: Oid) -> CommitRow | None:
        """A commit's row (but its patch-id, which is filled in as asked), read once: a scan
        asks for the same commits' sequence numbers, subjects and tags thousands of times."""
        if oid in self._rows:
            return self._rows[oid]
        if len(self._rows) >= _ROWS_CACHED:
            self._rows.clear()
        row = self.db.execute(
            "SELECT id, subject, author_name, author_email, author_time, commit_time, "
            "upstream_seq, stable_tags FROM commits WHERE oid=?",
            (oid,),
        ).fetchone()
        found = self._rows[oid] = CommitRow(*row) if row else None
        return found

    def info(self, oid: Oid) -> CommitInfo | None:
        row = self.row(oid)
        if row is None:
            return None
        return CommitInfo(
            oid, row.subject, row.author_name, row.author_email, row.author_time, row.commit_time
        )

    def subject(self, oid: Oid, repo: SubjectSource) -> str:
        """A commit's subject: the index's, else the repository's (a commit it does not hold)."""
        row = self.row(oid)
        return row.subject if row is not None else repo.subject(oid)

    def upstream_order(self, oid: Oid) -> int:
        """Where `oid` sits in upstream's order (oldest first); a commit not upstream after
        every upstream one (a sort key)."""
        value = self.upstream_seq(oid)
        return value if value is not None else NOT_UPSTREAM

    def upstream_seq(self, oid: Oid) -> int | None:
        row = self.row(oid)
        return row.upstream_seq if row else None

    def same_author(self, a: Oid, b: Oid) -> bool:
        """Were two indexed commits written by one author (by email)?"""
        ours, theirs = self.info(a), self.info(b)
        return ours is not None and theirs is not None and ours.author_email == theirs.author_email

    def same_person(self, a: Oid, b: Oid) -> bool:
        """Were two indexed commits written by one person: one email, or one full name
        (first and last: a developer who writes from a company's address and their own,
        fwupd's Mario Limonciello)."""
        ours, theirs = self.info(a), self.info(b)
        if ours is None or theirs is None:
            return False
        name = ours.author_name.strip().casefold()
        return ours.author_email == theirs.author_email or (
            " " in name and name == theirs.author_name.strip().casefold()
        )

    def same_authorship(self, a: Oid, b: Oid) -> bool:
        """One author and one author date: a cherry-pick keeps both."""
        ours, theirs = self.info(a), self.info(b)
        return (
            ours is not None
            and theirs is not None
            and ours.author_email == theirs.author_email
            and ours.author_time == theirs.author_time
        )

    def is_upstream(self, oid: Oid) -> bool:
        return self.upstream_seq(oid) is not None

    def fixes_of(self, oid: Oid) -> list[Relation]:
        """The culprits a commit names in its Fixes: lines (resolved where possible)."""
        return self._relations_of("fixes", oid)

    def reverts_of(self, oid: Oid) -> list[Relation]:
        """What a commit reverts (empty: not a revert)."""
        return self._relations_of("reverts", oid)

    def _relations_of(self, table: str, oid: Oid) -> list[Relation]:
        whole = self._read_whole(f"{table}_of")
        if whole is not None:
            return [Relation(oid, *row) for row in whole.get(oid, ())]
        rows = self.db.execute(
            f"SELECT c.oid, t.target, t.ref, t.subject, t.how{_form(table)} FROM {table} t "
            "JOIN commits c ON c.id = t.commit_id WHERE c.oid=? ORDER BY t.rowid",
            (oid,),
        )
        return [Relation(*row) for row in rows]

    def fixed_by(self, oid: Oid, *, upstream_only: bool = True) -> list[Relation]:
        """Who fixes X: commits whose Fixes: names X, oldest upstream first."""
        return self._relations_to("fixes", oid, upstream_only)

    def copies_upstream(self, oid: Oid) -> list[Oid]:
        """Upstream commits that say they were cherry-picked from `oid` (projects that merge
        a fix's branch and cherry-pick it onto the mainline too), oldest first."""
        rows = self.db.execute(
            "SELECT c.oid FROM upstream_refs u JOIN commits c ON c.id=u.commit_id "
            "WHERE u.upstream=? AND c.upstream_seq IS NOT NULL AND c.oid != ? "
            "ORDER BY c.upstream_seq",
            (oid, oid),
        )
        return [r[0] for r in rows]

    def upstream_copies(self) -> dict[Oid, Oid]:
        """Every upstream commit that says it was cherry-picked from another upstream commit
        (`copies_upstream` the other way): {copy: original}; a copy naming two, the oldest."""
        rows = self.db.execute(
            "SELECT c.oid, o.oid FROM upstream_refs u JOIN commits c ON c.id=u.commit_id "
            "JOIN commits o ON o.oid=u.upstream AND o.upstream_seq IS NOT NULL "
            "WHERE c.upstream_seq IS NOT NULL AND o.id<>c.id ORDER BY o.upstream_seq DESC"
        )
        return {Oid(copy): Oid(original) for copy, original in rows}

    def reverted_by(self, oid: Oid, *, upstream_only: bool = False) -> list[Relation]:
        return self._relations_to("reverts", oid, upstream_only)

    def stable_deps_naming(self, oid: Oid) -> list[Relation]:
        """Commits of indexed branches whose Stable-dep-of: names X (X needed them)."""
        return self._relations_to("stable_deps", oid, False, in_branch=True)

    def _relations_to(
        self, table: str, oid: Oid, upstream_only: bool, *, in_branch: bool = False
    ) -> list[Relation]:
        if not in_branch:
            whole = self._read_whole(f"{table}_to{'_upstream' if upstream_only else ''}")
            if whole is not None:
                return [Relation(*row) for row in whole.get(oid, ())]
        where = " AND c.upstream_seq IS NOT NULL" if upstream_only else ""
        if in_branch:
            where += (
                " AND EXISTS(SELECT 1 FROM refs r CROSS JOIN branch_commits b"
                " ON b.refname=r.refname AND b.commit_id=c.id)"
            )
        rows = self.db.execute(
            f"SELECT c.oid, t.target, t.ref, t.subject, t.how{_form(table)} FROM {table} t "
            f"JOIN commits c ON c.id = t.commit_id WHERE t.target=?{where} "
            "ORDER BY c.upstream_seq, c.commit_time, t.rowid",
            (oid,),
        )
        return [Relation(*row) for row in rows]

    def stable_tags_of(self, oid: Oid) -> list[StableTag]:
        row = self.row(oid)
        if row is None or not row.stable_tags:
            return []
        return [tag_from_json(t) for t in json.loads(row.stable_tags)]

    def carriers(self, upstream: Oid, refname: str) -> list[Oid]:
        """Branch commits that name `upstream` in an upstream-reference line, oldest first."""
        whole = self._read_whole(f"carriers {refname}")
        if whole is not None:
            return [row[0] for row in whole.get(upstream, ())]
        rows = self.db.execute(
            "SELECT c.oid FROM upstream_refs u JOIN commits c ON c.id=u.commit_id "
            "JOIN branch_commits b ON b.commit_id=c.id AND b.refname=? "
            "WHERE u.upstream=? ORDER BY b.seq, u.rowid",
            (refname, upstream),
        )
        return [r[0] for r in rows]

    def carried_upstream(self, oid: Oid) -> Oid | None:
        """The upstream id a (stable) commit names, if any."""
        row = self.db.execute(
            "SELECT u.upstream FROM upstream_refs u JOIN commits c ON c.id=u.commit_id "
            "WHERE c.oid=?",
            (oid,),
        ).fetchone()
        return row[0] if row else None

    def branches_of(self, oid: Oid) -> list[str]:
        """Names of the indexed branches whose own commits include `oid`."""
        rows = self.db.execute(
            "SELECT r.name FROM branch_commits b JOIN commits c ON c.id=b.commit_id "
            "JOIN refs r ON r.refname=b.refname WHERE c.oid=? ORDER BY r.name",
            (oid,),
        )
        return [r[0] for r in rows]

    def branch_commits_with_subject(self, subject: str, refname: str) -> list[Oid]:
        whole = self._read_whole(f"subjects {refname}")
        if whole is not None:
            return [row[0] for row in whole.get(subject, ())]
        rows = self.db.execute(
            "SELECT c.oid FROM commits c CROSS JOIN branch_commits b ON b.commit_id=c.id "
            "AND b.refname=? WHERE c.subject=? ORDER BY b.seq",
            (refname, subject),
        )
        return [r[0] for r in rows]

    def upstream_by_subject(self, subject: str) -> list[Oid]:
        rows = self.db.execute(
            "SELECT oid FROM commits WHERE subject=? AND upstream_seq IS NOT NULL "
            "ORDER BY upstream_seq",
            (subject,),
        )
        return [r[0] for r in rows]

    def posting_of(self, oid: Oid) -> tuple[str, list[tuple[int, Oid]]] | None:
        """The posting an upstream commit came from, by the Message-ID its `Link:` or
        `Message-Id:` names: (stem, [(patch number, upstream commit)] of every patch of it
        that landed upstream, by number). None when it names no known form."""
        row = self.db.execute(
            "SELECT p.stem FROM postings p JOIN commits c ON c.id=p.commit_id WHERE c.oid=?",
            (oid,),
        ).fetchone()
        if row is None:
            return None
        members = self.db.execute(
            "SELECT p.number, c.oid FROM postings p JOIN commits c ON c.id=p.commit_id "
            "WHERE p.stem=? AND c.upstream_seq IS NOT NULL ORDER BY p.number, c.upstream_seq",
            (row[0],),
        ).fetchall()
        return row[0], [(int(n), Oid(str(o))) for n, o in members]

    def backports_in(self, refname: str) -> list[tuple[Oid, Oid]]:
        """(carrier, upstream) for the branch's commits naming an upstream commit, in branch
        order, each upstream commit once (its first carrier)."""
        rows = self.db.execute(  # the upstream commit's row joined: `is_upstream` of each
            "SELECT c.oid, u.upstream FROM upstream_refs u JOIN commits c ON c.id=u.commit_id "
            "JOIN branch_commits b ON b.commit_id=c.id AND b.refname=? "
            "JOIN commits up ON up.oid=u.upstream AND up.upstream_seq IS NOT NULL ORDER BY b.seq",
            (refname,),
        ).fetchall()
        return [(Oid(carrier), Oid(upstream)) for carrier, upstream in _first_of_each(rows)]

    def backport_positions(self, refname: str) -> list[tuple[int, int]]:
        """(branch position, upstream position) of the branch's own commits that are
        backports, in branch order (`seq`; upstream's `upstream_seq`, later is larger), each
        upstream commit once, its first: those that name their upstream commit, and those
        with the subject and author of one upstream commit (a project that cherry-picks
        without `-x`; not "Update German translation", which names dozens)."""
        rows = self.db.execute(
            "SELECT b.seq, up.upstream_seq FROM upstream_refs u "
            "JOIN branch_commits b ON b.commit_id=u.commit_id AND b.refname=? "
            "JOIN commits up ON up.oid=u.upstream AND up.upstream_seq IS NOT NULL "
            "UNION ALL "  # by subject and author only where that names one upstream commit
            "SELECT b.seq, MIN(up.upstream_seq) FROM branch_commits b "
            "JOIN commits c ON c.id=b.commit_id JOIN commits up ON up.subject=c.subject "
            "AND up.author_email=c.author_email AND up.upstream_seq IS NOT NULL AND up.id<>c.id "
            "WHERE b.refname=? GROUP BY b.seq HAVING COUNT(*)=1 ORDER BY 1",
            (refname, refname),
        ).fetchall()
        return [(int(position), int(upstream)) for position, upstream in _first_of_each(rows)]

    def branch_seq(self, oid: Oid, refname: str) -> int | None:
        """Where `oid` sits among the branch's own commits (oldest first); None if not one."""
        row = self.db.execute(
            "SELECT b.seq FROM branch_commits b JOIN commits c ON c.id=b.commit_id "
            "WHERE b.refname=? AND c.oid=?",
            (refname, oid),
        ).fetchone()
        return int(row[0]) if row else None

    def count(self) -> int:
        count: int = self.db.execute("SELECT COUNT(*) FROM commits").fetchone()[0]
        return count


def _first_of_each(rows: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """The rows whose second value no earlier row had: each upstream commit's first."""
    seen: set[Any] = set()
    out = []
    for row in rows:
        if row[1] not in seen:
            seen.add(row[1])
            out.append(row)
    return out


def _form(table: str) -> str:
    """The column a relation's `form` is read from: the `fixes` table's own."""
    return ", t.form" if table == "fixes" else ""


_TABLES = ("fixes", "reverts")  # `stable_deps` is asked in a branch only, a row at a time


def _relations(table: str, *, to: bool, upstream_only: bool = False) -> str:
    """Every row of a relation table as `_relations_of` (key: the commit naming it) or
    `_relations_to` (key: the target) reads one, in their order."""
    if not to:
        return (
            f"SELECT c.oid, t.target, t.ref, t.subject, t.how{_form(table)} FROM {table} t "
            "JOIN commits c ON c.id = t.commit_id ORDER BY t.rowid"
        )
    where = " AND c.upstream_seq IS NOT NULL" if upstream_only else ""
    return (  # `+`: the table read in order, not by its target lookup (a third of the time)
        f"SELECT t.target, c.oid, t.target, t.ref, t.subject, t.how{_form(table)} FROM {table} t "
        f"JOIN commits c ON c.id = t.commit_id WHERE +t.target IS NOT NULL{where} "
        "ORDER BY c.upstream_seq, c.commit_time, t.rowid"
    )


_BRANCH_ROWS = "SELECT COUNT(*) FROM branch_commits WHERE refname=?"
_WHOLE = {
    **{f"{t}_of": (_relations(t, to=False), f"SELECT COUNT(*) FROM {t}") for t in _TABLES},
    **{f"{t}_to": (_relations(t, to=True), f"SELECT COUNT(*) FROM {t}") for t in _TABLES},
    **{
        f"{t}_to_upstream": (
            _relations(t, to=True, upstream_only=True),
            f"SELECT COUNT(*) FROM {t}",
        )
        for t in _TABLES
    },
    "carriers": (  # from the branch's rows: a few thousand, where upstream's are many
        "SELECT u.upstream, c.oid FROM branch_commits b JOIN upstream_refs u "
        "ON u.commit_id=b.commit_id JOIN commits c ON c.id=b.commit_id WHERE b.refname=? "
        "ORDER BY b.seq, u.rowid",
        _BRANCH_ROWS,
    ),
    "subjects": (
        "SELECT c.subject, c.oid FROM branch_commits b JOIN commits c ON c.id=b.commit_id "
        "WHERE b.refname=? ORDER BY b.seq",
        _BRANCH_ROWS,
    ),
}
"""The queries `IndexReader._read_whole` answers a kind from, by its name: its rows read
whole, and how many they are (an upper bound)."""
