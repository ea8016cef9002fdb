"""Patch-ids in the index: upstream commits' computed on demand and cached, branches' computed
when the branch is indexed or, for a branch indexed beside the ones a command works on
(`IndexWriter.update`'s `worked_on`), only those a question needs."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Collection, Sequence

from backportr.errors import BackportrError
from backportr.git.streams import PIPELINES
from backportr.index.cache import AnswerCache
from backportr.index.part import IndexFile, StorePart
from backportr.index.schema import in_chunks
from backportr.infra.dbfault import unless_read_only
from backportr.model import Oid
from backportr.text.patch_id import paths_key

_PATCH_ID_SLICE = 5_000  # commits per `git log -p | git patch-id` pipeline
_SIDE_BY_SIDE = 200  # commits from which a slice is shared among pipelines run at once


class PatchIds(StorePart):
    """The questions answered by patch-id, and the patch-ids they need."""

    _pending: set[str] | None = None  # branches without (all) their patch-ids
    _unpatched: dict[str, dict[str, list[Oid]]] | None = None  # their commits without one,
    # by branch and the digest of their paths

    def __init__(self, file: IndexFile, cache: AnswerCache) -> None:
        super().__init__(file)
        self.cache = cache
        self._digests: dict[Oid, str] = {}  # read or computed by `digests`

    def forget(self) -> None:
        self._pending = None
        self._unpatched = None

    def complete(self, refnames: Sequence[str] | None = None, *, named: bool = True) -> None:
        """Compute the patch-ids a branch was indexed without (every such branch, or those
        of `refnames`), and keep them; without `named`, only those of its commits that name
        no upstream commit, and never those of heavy commits (`Streams.heavy`): the branch
        stays pending, and a question computes those that could share its commit's
        (`fill_like`). A fault keeping them (the index locked past its wait) is an error: a
        question answered without them would be answered wrong."""
        pending = sorted(r for r in self._pending_refs() if refnames is None or r in refnames)
        for refname in pending:
            unpatched = self._unpatched_of(refname, named=named)
            heavy = self.repo.streams.heavy(unpatched) if unpatched else set()
            light = [c for c in unpatched if c not in heavy]
            if light:
                self._store_patch_ids(self._computed_patch_ids(light), refname)
            self._unpatched = None
            if heavy or (not named and self._unpatched_of(refname)):
                continue
            with unless_read_only():  # done again next time
                self.db.execute("DELETE FROM patch_ids_pending WHERE refname=?", (refname,))
            self._pending_refs().discard(refname)

    def _patch_ids_like(self, commit: Oid, refnames: Collection[str] | None = None) -> None:
        """The commits of branches indexed without (all) their patch-ids (every such
        branch, or those of `refnames`) that could share `commit`'s (those that change the
        same paths: `paths_key`) get theirs, and keep them. A branch's paths are listed
        once, by one git process, and cached (`commit_paths`: the next command reads them):
        a branch of thousands of backports costs a listing and a few patch-ids rather than
        a `git log -p` of all."""
        self.fill_like([commit], refnames)

    def fill_like(self, commits: Sequence[Oid], refnames: Collection[str] | None = None) -> None:
        """`_patch_ids_like` of many commits, in one git question."""
        refs = sorted(r for r in self._pending_refs() if refnames is None or r in refnames)
        if not refs or not commits:
            return
        if self._unpatched is None:
            self._unpatched = {}
        unlisted = [r for r in refs if r not in self._unpatched]
        if unlisted:
            self._list_unpatched(unlisted)
        keys = set(self.digests(commits).values())
        candidates = dict.fromkeys(
            o for key in sorted(keys) for r in refs for o in self._unpatched[r].pop(key, [])
        )
        if candidates:
            self._store_patch_ids(self._computed_patch_ids(list(candidates)), "a branch")

    def _list_unpatched(self, refnames: list[str]) -> None:
        """`_unpatched` of these branches: their commits without a patch-id by the digest of
        their paths, as cached, or listed by git now (and cached, where the index can be
        written)."""
        assert self._unpatched is not None
        rows = {
            refname: self.db.execute(
                "SELECT c.oid, p.paths FROM branch_commits b CROSS JOIN commits c "
                "ON c.id=b.commit_id LEFT JOIN commit_paths p ON p.commit_id=c.id "
                "WHERE b.refname=? AND c.patch_id IS NULL AND c.parents < 2",
                (refname,),
            ).fetchall()
            for refname in refnames
        }
        unknown = [oid for listed in rows.values() for oid, paths in listed if not paths]
        found = self.digests(unknown)  # listed by git now, and cached
        for refname, listed in rows.items():
            by_paths = self._unpatched[refname] = {}
            for oid, paths in listed:
                by_paths.setdefault(paths or found[oid], []).append(oid)

    def digests(self, oids: Sequence[Oid]) -> dict[Oid, str]:
        """The digest of the paths each commit changes (`_digest`; two commits whose
        digests differ cannot share a patch-id): from the index (`commit_paths`), else
        listed by one git process (`learn_paths`) and cached there, so that a nightly scan
        lists no commit's paths twice."""
        out = {o: d for o in oids if (d := self._digests.get(o)) is not None}
        wanted = [o for o in dict.fromkeys(oids) if o not in out]
        ids: dict[Oid, int] = {}
        for chunk, marks in in_chunks(wanted):
            for oid, cid, paths in self.db.execute(
                "SELECT c.oid, c.id, p.paths FROM commits c LEFT JOIN commit_paths p "
                f"ON p.commit_id=c.id WHERE c.oid IN ({marks})",
                chunk,
            ):
                if paths:
                    out[oid] = paths
                else:
                    ids[oid] = cid
        unknown = [o for o in wanted if o not in out]
        self.repo.diffs.learn_paths(unknown)
        fresh: list[tuple[int, str]] = []
        for oid in unknown:
            digest = out[oid] = _digest(paths_key(self.repo.diffs.files_touched(oid)))
            if oid in ids:
                fresh.append((ids[oid], digest))
        with unless_read_only():  # a read-only index: listed again next time
            self.cache.write_all("INSERT OR REPLACE INTO commit_paths VALUES(?, ?)", fresh)
        self._digests.update(out)
        return out

    def mark_pending(self, refname: str) -> None:
        """The branch has commits without a patch-id (inside an update's transaction)."""
        self.db.execute("INSERT OR IGNORE INTO patch_ids_pending VALUES(?)", (refname,))
        self._pending_refs().add(refname)

    def _pending_refs(self) -> set[str]:
        """The branches indexed without (all) their patch-ids."""
        if self._pending is None:
            self._pending = {r[0] for r in self.db.execute("SELECT refname FROM patch_ids_pending")}
        return self._pending

    def _unpatched_of(self, refname: str, *, named: bool = True) -> list[Oid]:
        """The branch's own commits, merges aside (they have none), whose patch-id is not
        computed yet; without `named`, only those that name no upstream commit."""
        only_unnamed = (
            ""
            if named
            else " AND NOT EXISTS (SELECT 1 FROM upstream_refs u WHERE u.commit_id=c.id)"
        )
        rows = self.db.execute(
            "SELECT c.oid FROM branch_commits b CROSS JOIN commits c ON c.id=b.commit_id "
            f"WHERE b.refname=? AND c.patch_id IS NULL AND c.parents < 2{only_unnamed}",
            (refname,),
        )
        return [row[0] for row in rows]

    def _store_patch_ids(self, rows: list[tuple[str, Oid]], whose: str) -> None:
        try:
            self.cache.write_all("UPDATE commits SET patch_id=? WHERE oid=?", rows)
        except sqlite3.OperationalError as error:
            raise BackportrError(
                f"{self.file.path}: cannot keep the patch-ids of {whose}: {error}"
            ) from error

    def backports_elsewhere(self, upstream: Oid, refname: str) -> list[tuple[str, Oid]]:
        """(branch name, commit) of indexed branches other than `refname` whose commits carry
        `upstream` by an upstream-reference line or by the same patch-id, oldest first."""
        rows = self.db.execute(
            "SELECT r.name, c.oid FROM upstream_refs u CROSS JOIN commits c ON c.id=u.commit_id "
            "CROSS JOIN refs r CROSS JOIN branch_commits b "
            "ON b.refname=r.refname AND b.commit_id=c.id "
            "WHERE u.upstream=? AND r.refname != ? ORDER BY r.name, b.seq",
            (upstream, refname),
        ).fetchall()
        if rows:
            return [(name, oid) for name, oid in rows]
        patch_id = self.patch_id(upstream)
        if not patch_id:
            return []
        self._patch_ids_like(upstream, [r for r in self._pending_refs() if r != refname])
        rows = self.db.execute(
            "SELECT r.name, c.oid FROM commits c CROSS JOIN refs r CROSS JOIN branch_commits b "
            "ON b.refname=r.refname AND b.commit_id=c.id WHERE c.patch_id=? AND r.refname != ? "
            "AND c.oid != ? ORDER BY r.name, b.seq",
            (patch_id, refname, upstream),
        ).fetchall()
        return [(name, oid) for name, oid in rows]

    def branch_commits_with_patch_id(self, commit: Oid, patch_id: str, refname: str) -> list[Oid]:
        """The branch's own commits whose patch-id is `patch_id`, `commit`'s."""
        self._patch_ids_like(commit, [refname])
        rows = self.db.execute(
            "SELECT c.oid FROM commits c CROSS JOIN branch_commits b ON b.commit_id=c.id "
            "AND b.refname=? WHERE c.patch_id=? ORDER BY b.seq",
            (refname, patch_id),
        )
        return [r[0] for r in rows]

    def branch_commits_patched(self, refname: str) -> list[Oid]:
        """The branch's own commits that have (or may have) a patch-id."""
        rows = self.db.execute(
            "SELECT c.oid FROM branch_commits b CROSS JOIN commits c ON c.id=b.commit_id "
            "WHERE b.refname=? AND (c.patch_id IS NULL OR c.patch_id != '')",
            (refname,),
        )
        return [r[0] for r in rows]

    def patch_id(self, oid: Oid) -> str | None:
        """The commit's patch-id, computed once and cached (upstream commits on demand)."""
        row = self.db.execute("SELECT id, patch_id FROM commits WHERE oid=?", (oid,)).fetchone()
        if row is not None and row[1] is not None:
            return row[1] or None
        value = self.repo.patch_id(oid)
        if row is not None:
            with unless_read_only():
                self.db.execute("UPDATE commits SET patch_id=? WHERE id=?", (value or "", row[0]))
        return value

    def looked_up(self, oid: Oid, refname: str) -> bool:
        """Is a search of the branch by the commit's patch-id a lookup only: its patch-id
        cached (or known to be none), and every commit of the branch's?"""
        return refname not in self._pending_refs() and self.known(oid)

    def known(self, oid: Oid) -> bool:
        """Is the commit's patch-id computed and cached (or known to be none)?"""
        row = self._patch_id_row(oid)
        return row is not None and row[1] is not None

    def fill(self, oids: list[Oid]) -> None:
        """Compute the missing patch-ids of these commits in one git pipeline and keep them
        (a scan asks for thousands of upstream patch-ids; one diff each would be minutes)."""
        missing = [
            oid for oid in oids if (row := self._patch_id_row(oid)) is not None and row[1] is None
        ]
        rows = self._computed_patch_ids(missing)
        with unless_read_only():  # a read-only index: not cached
            self.cache.write_all("UPDATE commits SET patch_id=? WHERE oid=?", rows)

    def _computed_patch_ids(self, oids: list[Oid]) -> list[tuple[str, Oid]]:
        """(patch-id, commit) of these commits, '' for one that has none; a commit git
        cannot read is left out (not cached: the copy may be mended). A long list's diffs
        are git's work on every core (pipelines side by side: a command waits on them, on
        DPDK's first scan 2.3 s of 3,300 commits in one pipeline at a time)."""
        rows: list[tuple[str, Oid]] = []
        streams = self.repo.streams
        for start in range(0, len(oids), _PATCH_ID_SLICE):  # no pipeline runs for minutes
            part = oids[start : start + _PATCH_ID_SLICE]
            try:
                if PIPELINES > 1 and len(part) >= _SIDE_BY_SIDE:
                    computed = dict(streams.patch_ids_in_parts(part, _PATCH_ID_SLICE, PIPELINES))
                else:
                    computed = dict(streams.readable_patch_ids(part))
            except BackportrError:
                continue  # left to the commit-by-commit path: one target's error, not the scan's
            unreadable = set(streams.unreadable)
            rows += [(computed.get(oid, ""), oid) for oid in part if oid not in unreadable]
        return rows

    def _patch_id_row(self, oid: Oid) -> tuple[int, str | None] | None:
        row: tuple[int, str | None] | None = self.db.execute(
            "SELECT id, patch_id FROM commits WHERE oid=?", (oid,)
        ).fetchone()
        return row


def _digest(key: tuple[str, ...]) -> str:
    """What `commit_paths` keeps of a commit's `paths_key`: two commits whose digests differ
    cannot share a patch-id (a digest two keys share would only add a candidate)."""
    return hashlib.sha1("\0".join(key).encode("utf-8", "surrogateescape")).hexdigest()
