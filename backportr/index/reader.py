"""Reading the index: the questions presence, the finders and the scan ask (who fixes X,
which branch commit carries upstream U, what posting a commit came from, ...)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

from backportr import __version__
from backportr.dbfault import is_read_only, unless_read_only
from backportr.git.repo import Repo
from backportr.index.schema import (
    SCHEMA_VERSION,
    IndexedRef,
    Relation,
    in_chunks,
    tag_from_json,
)
from backportr.model import CommitInfo, Oid, StableTag
from backportr.text.relation_forms import Vocabulary

FIXES_ONLY_SHARE = 0.8  # takes_fixes_only: the share of fixes among what branches carry
FIXES_ONLY_FLOOR = 20  # and how many carried commits it needs to say so
TAGGING_SHARE = 0.01  # has_stable_tags: the share of upstream fixes tagged for stable
_ROWS_KEPT = 200_000  # commits' rows kept in memory; past it the table starts again


def result_key(*parts: str) -> str:
    """The key of a kept result (`cached_result`, `keep_result`): every input it depends on,
    hashed."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


class _Row(NamedTuple):
    """What the reader keeps of a commit's row."""

    id: int
    subject: str
    author_name: str
    author_email: str
    author_time: int
    commit_time: int
    upstream_seq: int | None
    stable_tags: str | None


class IndexReader:
    """Queries over an open index database."""

    db: sqlite3.Connection
    repo: Repo
    path: Path
    vocabulary: Vocabulary  # the fix forms its messages were read with
    _tagging: bool | None = None  # has_stable_tags, until the next update
    _fixes_only: bool | None = None  # takes_fixes_only, until the next update
    _rows: dict[Oid, _Row | None]  # commits' rows read, until the next update
    _refs: dict[str, IndexedRef | None]  # stored refs read, until the next update

    @property
    def schema_mark(self) -> str:
        """What `meta` records as the index's schema: the tables' version and the fix
        forms' fingerprint (another vocabulary reads every message again)."""
        return f"{SCHEMA_VERSION}:{self.vocabulary.fingerprint}"

    def fix_form_counts(self) -> dict[str, int]:
        """How many indexed commits name a culprit in each form (`text/relation_forms.py`), most
        first: a project that writes its fixes another way shows here."""
        rows = self.db.execute(
            "SELECT form, COUNT(DISTINCT commit_id) AS n FROM fixes GROUP BY form "
            "ORDER BY n DESC, form"
        ).fetchall()
        return {str(form): int(n) for form, n in rows}

    def _forget(self) -> None:
        """Drop what was read of the tables an update writes (`IndexWriter.update`)."""
        self._tagging = None
        self._fixes_only = None
        self._rows = {}
        self._refs = {}

    def refs(self) -> list[IndexedRef]:
        return [IndexedRef(*row) for row in self.db.execute("SELECT * FROM refs ORDER BY name")]

    def _stored_ref(self, refname: str) -> IndexedRef | None:
        if refname not in self._refs:
            row = self.db.execute("SELECT * FROM refs WHERE refname=?", (refname,)).fetchone()
            self._refs[refname] = IndexedRef(*row) if row else None
        return self._refs[refname]

    def _row(self, oid: Oid) -> _Row | None:
        """A commit's row (but its patch-id, which is filled in as asked), read once: a scan
        asks for the same commits' sequence numbers, subjects and tags thousands of times."""
        if oid in self._rows:
            return self._rows[oid]
        if len(self._rows) >= _ROWS_KEPT:
            self._rows.clear()
        row = self.db.execute(
            "SELECT id, subject, author_name, author_email, author_time, commit_time, "
            "upstream_seq, stable_tags FROM commits WHERE oid=?",
            (oid,),
        ).fetchone()
        found = self._rows[oid] = _Row(*row) if row else None
        return found

    def info(self, oid: Oid) -> CommitInfo | None:
        row = self._row(oid)
        if row is None:
            return None
        return CommitInfo(
            oid, row.subject, row.author_name, row.author_email, row.author_time, row.commit_time
        )

    def upstream_seq(self, oid: Oid) -> int | None:
        row = self._row(oid)
        return row.upstream_seq if row else None

    def is_upstream(self, oid: Oid) -> bool:
        return self.upstream_seq(oid) is not None

    def fixes_of(self, oid: Oid) -> list[Relation]:
        """The culprits a commit names in its Fixes: lines (resolved where possible)."""
        return self._relations_of("fixes", oid)

    def reverts_of(self, oid: Oid) -> list[Relation]:
        """What a commit reverts (empty: not a revert)."""
        return self._relations_of("reverts", oid)

    def _relations_of(self, table: str, oid: Oid) -> list[Relation]:
        rows = self.db.execute(
            f"SELECT c.oid, t.target, t.ref, t.subject, t.how FROM {table} t "
            "JOIN commits c ON c.id = t.commit_id WHERE c.oid=?",
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

    def reverted_by(self, oid: Oid, *, upstream_only: bool = False) -> list[Relation]:
        return self._relations_to("reverts", oid, upstream_only)

    def stable_deps_naming(self, oid: Oid) -> list[Relation]:
        """Commits of indexed branches whose Stable-dep-of: names X (X needed them)."""
        return self._relations_to("stable_deps", oid, False, in_branch=True)

    def _relations_to(
        self, table: str, oid: Oid, upstream_only: bool, *, in_branch: bool = False
    ) -> list[Relation]:
        where = " AND c.upstream_seq IS NOT NULL" if upstream_only else ""
        if in_branch:
            where += (
                " AND EXISTS(SELECT 1 FROM refs r CROSS JOIN branch_commits b"
                " ON b.refname=r.refname AND b.commit_id=c.id)"
            )
        rows = self.db.execute(
            f"SELECT c.oid, t.target, t.ref, t.subject, t.how FROM {table} t "
            f"JOIN commits c ON c.id = t.commit_id WHERE t.target=?{where} "
            "ORDER BY c.upstream_seq, c.commit_time",
            (oid,),
        )
        return [Relation(*row) for row in rows]

    def has_stable_tags(self) -> bool:
        """Does the project tag fixes for stable? Upstream commits carrying a stable tag
        number at least `TAGGING_SHARE` of its upstream commits with a `Fixes:` (and at
        least one): a few tags in a long history that never tags (another project's
        messages copied in) are no practice a missing tag could be read against."""
        if self._tagging is None:
            rule = f"has-stable-tags {TAGGING_SHARE}"
            self._tagging = self._project_fact(rule, self._count_tagging)
        return self._tagging

    def _count_tagging(self) -> bool:
        fixes = self.db.execute(
            "SELECT COUNT(DISTINCT f.commit_id) FROM fixes f JOIN commits c "
            "ON c.id=f.commit_id WHERE c.upstream_seq IS NOT NULL"
        ).fetchone()[0]
        needed = max(1, math.ceil(fixes * TAGGING_SHARE))
        tagged = self.db.execute(
            "SELECT COUNT(*) FROM (SELECT 1 FROM commits WHERE stable_tags IS NOT NULL "
            "AND upstream_seq IS NOT NULL LIMIT ?)",
            (needed,),
        ).fetchone()[0]
        return bool(tagged >= needed)

    def takes_fixes_only(self) -> bool:
        """Do the indexed stable branches take fixes only? At least `FIXES_ONLY_SHARE` of the
        upstream commits their backports name are fixes (a `Fixes:`, a stable tag, or a
        revert), out of at least `FIXES_ONLY_FLOOR`; and no backport says `Stable-dep-of:`
        (a project whose branches record that takes prerequisites as a matter of course)."""
        if self._fixes_only is None:
            rule = f"takes-fixes-only {FIXES_ONLY_SHARE} {FIXES_ONLY_FLOOR}"
            self._fixes_only = self._project_fact(rule, self._count_fixes_only)
        return self._fixes_only

    def _count_fixes_only(self) -> bool:
        carried, fixes = self.db.execute(
            "SELECT COUNT(*), COALESCE(SUM(fix), 0) FROM (SELECT DISTINCT u.upstream, "
            "(c.stable_tags IS NOT NULL OR EXISTS(SELECT 1 FROM fixes f WHERE "
            "f.commit_id=c.id) OR EXISTS(SELECT 1 FROM reverts r WHERE r.commit_id=c.id))"
            " AS fix FROM branch_commits b CROSS JOIN upstream_refs u "
            "ON u.commit_id=b.commit_id CROSS JOIN commits c ON c.oid=u.upstream "
            "WHERE c.upstream_seq IS NOT NULL)"
        ).fetchone()
        records_deps = self.db.execute("SELECT 1 FROM stable_deps LIMIT 1").fetchone()
        return bool(
            carried >= FIXES_ONLY_FLOOR
            and fixes >= FIXES_ONLY_SHARE * carried
            and records_deps is None
        )

    def _project_fact(self, rule: str, count: Callable[[], bool]) -> bool:
        """A fact about the whole project (does it tag for stable, do its branches take
        fixes only), counted over every indexed commit (a fifth of a second at kernel
        scale) once per state of the indexed refs: every index update derives from them
        alone, so the next process reads the answer. `rule` names the fact and its
        thresholds: another rule counts anew."""
        if self.db.in_transaction:
            return count()  # an update is writing: the refs are not yet what they will be
        tips = ",".join(f"{r.refname}={r.tip}" for r in self.refs())
        key = result_key("project-fact-v1", __version__, rule, tips)
        kept = self.cached_result(key)
        if kept is not None:
            return kept == "yes"
        fact = count()
        self.keep_result(key, "yes" if fact else "no")
        return fact

    def stable_tags_of(self, oid: Oid) -> list[StableTag]:
        row = self._row(oid)
        if row is None or not row.stable_tags:
            return []
        return [tag_from_json(t) for t in json.loads(row.stable_tags)]

    def carriers(self, upstream: Oid, refname: str) -> list[Oid]:
        """Branch commits that name `upstream` in an upstream-reference line, oldest first."""
        rows = self.db.execute(
            "SELECT c.oid FROM upstream_refs u JOIN commits c ON c.id=u.commit_id "
            "JOIN branch_commits b ON b.commit_id=c.id AND b.refname=? "
            "WHERE u.upstream=? ORDER BY b.seq",
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

    def _write_all(self, statement: str, rows: Sequence[tuple[str, ...]]) -> None:
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

    def keep_adapted_conflicts(self, upstream: Oid, carrier: Oid, conflicts: bool) -> None:
        with unless_read_only():
            self.db.execute(
                "INSERT OR REPLACE INTO adapted_checks VALUES(?, ?, ?)",
                (upstream, carrier, int(conflicts)),
            )

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
        return row[0], [(int(n), str(o)) for n, o in members]

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

    def keep_posting_cover(
        self, stem: str, cover: str | None, posted: int | None, patches: list[tuple[int, str]]
    ) -> None:
        with unless_read_only():  # read-only: just not kept
            self.db.execute(
                "INSERT OR REPLACE INTO posting_covers VALUES(?, ?, ?, ?)",
                (stem, cover, posted, json.dumps(patches)),
            )

    def backports_in(self, refname: str) -> list[tuple[Oid, Oid]]:
        """(carrier, upstream) for the branch's commits naming an upstream commit, in branch
        order, each upstream commit once (its first carrier)."""
        rows = self.db.execute(  # the upstream commit's row joined: `is_upstream` of each
            "SELECT c.oid, u.upstream FROM upstream_refs u JOIN commits c ON c.id=u.commit_id "
            "JOIN branch_commits b ON b.commit_id=c.id AND b.refname=? "
            "JOIN commits up ON up.oid=u.upstream AND up.upstream_seq IS NOT NULL ORDER BY b.seq",
            (refname,),
        ).fetchall()
        seen: set[Oid] = set()
        out = []
        for carrier, upstream in rows:
            if upstream not in seen:
                seen.add(upstream)
                out.append((carrier, upstream))
        return out

    def cached_result(self, key: str) -> str | None:
        """A result computed earlier from exactly the same inputs (the key names them all)."""
        row = self.db.execute("SELECT value FROM results WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def cached_results(self, keys: Sequence[str]) -> dict[str, str]:
        """`cached_result` of many keys at once: those kept."""
        found: dict[str, str] = {}
        for chunk, marks in in_chunks(keys):
            found.update(
                self.db.execute(f"SELECT key, value FROM results WHERE key IN ({marks})", chunk)
            )
        return found

    def keep_result(self, key: str, value: str) -> None:
        self.keep_results([(key, value)])

    def keep_results(self, results: Sequence[tuple[str, str]]) -> None:
        """Keep answers (key, value), together."""
        with unless_read_only():  # read-only: just not kept
            self._write_all("INSERT OR REPLACE INTO results VALUES(?, ?)", results)

    def kept_findings(self, keys: Sequence[str]) -> dict[str, str]:
        """A scan's findings kept for targets (`keep_findings`), by key: those with any."""
        found: dict[str, str] = {}
        for chunk, marks in in_chunks(keys):
            found.update(
                self.db.execute(
                    f"SELECT key, value FROM scan_findings WHERE key IN ({marks})", chunk
                )
            )
        return found

    def keep_findings(self, rows: Sequence[tuple[str, str, str, str]]) -> None:
        """Keep targets' findings, rows of (key, branch, state, findings), together. `state`
        names what moves between nights (the tips, the version): the next scan of the
        branch in another state forgets them (`forget_findings`), as no key of its can name
        them."""
        with unless_read_only():  # read-only: just not kept
            self._write_all("INSERT OR REPLACE INTO scan_findings VALUES(?, ?, ?, ?)", rows)

    def forget_findings(self, branch: str, state: str) -> int:
        """Remove the findings kept for `branch` in states other than `state`: what a
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
        """The hunks kept for the diff of two blobs (`keep_blame_hunks`), None when none are
        or what is kept cannot be read."""
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

    def keep_blame_hunks(self, diffs: Sequence[tuple[str, str, Sequence[tuple[int, ...]]]]) -> None:
        """Keep the hunks of blob pairs' diffs (the in-process blame's, `git.blame`): they
        depend on the two blobs alone, so every scan of every branch can use them."""
        self.keep_results(
            [
                (result_key("blame hunks", old, new), " ".join(str(n) for h in hunks for n in h))
                for old, new, hunks in diffs
            ]
        )

    def count(self) -> int:
        count: int = self.db.execute("SELECT COUNT(*) FROM commits").fetchone()[0]
        return count
