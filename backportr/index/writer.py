"""Writing the index: the bulk reader of `git log` and the incremental update (only what is
new since the stored tips; a rewritten branch re-read from its fork), in one transaction under
a file lock."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path

from backportr.errors import IndexCorruptError
from backportr.git.log_records import LogRecord
from backportr.git.names import Ref
from backportr.git.walk import Walk
from backportr.index.afterfork import AfterFork
from backportr.index.dropping import (
    drop_all,
    drop_deleted_branches,
    execute_script,
    replaced_upstream,
)
from backportr.index.parsing import BatchRows, CommitRows, commit_rows, finish_batch
from backportr.index.part import IndexFile, StorePart
from backportr.index.patchids import PatchIds
from backportr.index.plan import BranchPlan, PatchIdPass, branch_plans, replanned
from backportr.index.preparing import BATCH, batches, prepare_batch
from backportr.index.reader import IndexReader
from backportr.index.schema import (
    _COMMIT_INDEXES,
    UpdateStats,
    in_chunks,
)
from backportr.index.transaction import writing
from backportr.index.worker import BulkWorker
from backportr.index.written import resolve_pending
from backportr.model import Oid, ProgressCallback, no_progress, oids, short
from backportr.text.relation_forms import Vocabulary

_log = logging.getLogger("backportr")

_LOG_SLICE = 50_000  # commits per git process of the bulk read (git waits on the parser)
_BULK_CACHE_KIB = 256 * 1024  # the page cache of a bulk load (memory, not disk)


class IndexWriter(StorePart):
    """Updates (the store, CommitIndex, opens the database)."""

    worker_after = 10_000
    """A full read longer than this many commits goes on in a worker process."""
    _worked_on_refs: set[str] | None = None
    _named_patch_ids = False
    _bulk = False  # filling an empty index: nothing stored is looked up

    def __init__(
        self,
        file: IndexFile,
        reader: IndexReader,
        patch_ids: PatchIds,
        after_fork: AfterFork,
        forget_all: Callable[[], None],
    ) -> None:
        """`forget_all`: every part drops what it read (the store's `forget`), before and
        after an update writes."""
        super().__init__(file)
        self.reader = reader
        self.patch_ids = patch_ids
        self.after_fork = after_fork
        self._forget_all = forget_all

    def update(
        self,
        upstream: Ref,
        branches: Sequence[Ref] = (),
        *,
        progress: ProgressCallback = no_progress,
        rebuild: bool = False,
        worked_on: Collection[str] | None = None,
        named_patch_ids: bool = False,
    ) -> UpdateStats:
        """Bring the index up to date with the upstream ref and the given branches; with
        `rebuild`, drop everything first, in the same transaction (readers see the old index
        or the new one, never an empty one). The branches named in `worked_on` (refnames;
        every branch when None) are stored whole: their patch-ids computed beside the
        upstream read, the upstream commits after their forks listed. The others (siblings,
        for evidence) get these as questions need them (`PatchIds`,
        `AfterFork.complete`): a command on one branch asks few of its siblings' patch-ids
        (a backport that names nothing) and rarely whether an upstream commit is in one, and
        on a repository of many branches the two were most of a first run.

        Of a branch worked on, the commits that name their upstream commit get their
        patch-ids now only with `named_patch_ids` (a scan compares each backport with its
        upstream commit); otherwise a question by patch-id computes those that could share
        its commit's (`PatchIds`), and the branch stays in `patch_ids_pending`."""
        if self.file.read_only:
            return self._as_it_is(upstream, branches, rebuild)
        self._forget_all()
        self._worked_on_refs = None if worked_on is None else set(worked_on)
        self._named_patch_ids = named_patch_ids
        try:
            return self._update(upstream, branches, progress, rebuild)
        finally:
            self._forget_all()  # what was read while writing is not what now stands

    def _as_it_is(self, upstream: Ref, branches: Sequence[Ref], rebuild: bool) -> UpdateStats:
        """A read-only index is used only when it is up to date with every ref asked about
        (an answer from a stale one would be a guess)."""
        stored = {r.refname: r.tip for r in self.reader.refs()}
        behind = [r.name for r in (upstream, *branches) if stored.get(r.refname) != r.tip]
        if rebuild or behind:
            why = f"is behind {', '.join(behind)} and cannot be updated"
            why = "cannot be rebuilt" if rebuild else why
            raise IndexCorruptError(
                f"the index {self.file.path} {why} here (a read-only file system): run backportr "
                "index where it is writable, or give --index PATH on a writable one"
            )
        return UpdateStats(new_commits={r.name: 0 for r in (upstream, *branches)}, rewritten=())

    def _worked_on(self, refname: str) -> bool:
        return self._worked_on_refs is None or refname in self._worked_on_refs

    def _update(
        self,
        upstream: Ref,
        branches: Sequence[Ref],
        progress: ProgressCallback,
        rebuild: bool,
    ) -> UpdateStats:
        new: dict[str, int] = {}
        rewritten: list[str] = []
        with writing(self.file, first_fill=not rebuild):
            if rebuild:
                drop_all(self.db, self.file.schema_mark)
            replaced = replaced_upstream(self.db, self.repo, upstream)
            if replaced is not None:
                drop_all(self.db, self.file.schema_mark)
                self._forget_all()
            dropped = drop_deleted_branches(self.db, self.repo)
            stored_upstream = self.reader.stored_ref(upstream.refname)
            upstream_moved = stored_upstream is None or stored_upstream.tip != upstream.tip
            forward = (
                upstream_moved
                and stored_upstream is not None
                and self.repo.is_ancestor(stored_upstream.tip, upstream.tip)
            )
            # Plans first: their patch-id passes (git processes) then run on the other core
            # while this one reads the upstream history.
            stored = [self.reader.stored_ref(b.refname) for b in branches]
            first = [b.refname for b in branches if self._worked_on(b.refname)]
            plans = branch_plans(
                self.repo,
                upstream,
                branches,
                stored,
                upstream_moved,
                first,
                self._upstream_among,
                forward,
            )
            self._start_patch_ids(plans, upstream)
            new_ids = self._update_upstream(upstream, progress)
            new[upstream.name] = len(new_ids)
            for plan in plans:
                if plan.unless_taken and self._upstream_took_own(plan.branch.refname):
                    plan = replanned(self.repo, plan, upstream)
                new[plan.branch.name] = self._update_branch(plan, upstream, new_ids, progress)
                if plan.mode == "full" and plan.stored is not None:
                    rewritten.append(plan.branch.name)
                refname = plan.branch.refname
                if not self._worked_on(refname):
                    if new[plan.branch.name]:  # its new commits have none yet
                        self.patch_ids.mark_pending(refname)
                else:
                    if plan.pass_ is not None and plan.pass_.left_out():  # those naming upstream
                        self.patch_ids.mark_pending(refname)
                    # what an earlier update left without them: completed now
                    self.patch_ids.complete([refname], named=self._named_patch_ids)
            self.after_fork.complete(
                [p.branch.refname for p in plans if self._worked_on(p.branch.refname)]
            )
            resolve_pending(self.db, progress)
        return UpdateStats(
            new_commits=new, rewritten=tuple(rewritten), replaced_upstream=replaced, dropped=dropped
        )

    def _start_patch_ids(self, plans: list[BranchPlan], upstream: Ref) -> None:
        """One pass for every branch read whole (they share history: each commit once, and
        two processes instead of two per branch); its own for each branch read from where
        it was. A pass of branches read whole lists their commits down to their merge bases
        with upstream, once their probes know them, rather than walking upstream's history
        down to the forks: the commits are the same (an upstream commit a branch reaches is
        an ancestor of one of its merge bases), the walk a fifth of a second shorter on a
        45,000-commit history without a commit-graph."""
        plans = [p for p in plans if self._worked_on(p.branch.refname)]
        full = [p for p in plans if p.mode == "full"]
        if full:

            def excluded() -> list[Oid]:
                return sorted({oid for p in full for oid in p.own_commits_exclude()})

            named = self._named_patch_ids
            shared = PatchIdPass(self.repo, [p.branch.tip for p in full], excluded, named=named)
            for plan in full:
                plan.pass_ = shared
        for plan in plans:
            if plan.mode == "incremental":
                plan.pass_ = PatchIdPass(
                    self.repo, [plan.branch.tip], plan.exclude, named=self._named_patch_ids
                )

    def _update_upstream(self, upstream: Ref, progress: ProgressCallback) -> list[int]:
        stored = self.reader.stored_ref(upstream.refname)
        if stored is not None and stored.tip == upstream.tip:
            return []
        if stored is not None and self.repo.is_ancestor(upstream.tip, stored.tip):
            self._rewind_upstream(stored.tip, upstream.tip)
            ids = []
        elif stored is not None and self.repo.is_ancestor(stored.tip, upstream.tip):
            records = list(self.repo.streams.log(upstream.tip, [stored.tip]))
            top = self.db.execute("SELECT MAX(upstream_seq) FROM commits").fetchone()[0] or 0
            seqs = [top + len(records) - i for i in range(len(records))]
            ids = self._store(records, progress, "upstream", upstream_seqs=seqs)
        else:  # a first read (a replaced upstream was dropped with everything else)
            ids = self._store_stream(upstream.tip, progress)
        self.db.execute(
            "INSERT OR REPLACE INTO refs VALUES(?, ?, 'upstream', ?, NULL)",
            (upstream.refname, upstream.name, upstream.tip),
        )
        return ids

    def _rewind_upstream(self, old_tip: Oid, new_tip: Oid) -> None:
        """Upstream moved back to an ancestor: the commits past it stop being upstream (they
        stay stored, so moving forward again re-reads nothing). O(commits removed)."""
        removed = self._ids_of(oids(self.repo.run_git("rev-list", old_tip, f"^{new_tip}")))
        for chunk, marks in in_chunks(removed):
            self.db.execute(f"UPDATE commits SET upstream_seq=NULL WHERE id IN ({marks})", chunk)
            self.db.execute(f"DELETE FROM after_fork WHERE commit_id IN ({marks})", chunk)

    def _store_stream(self, tip: Oid, progress: ProgressCallback) -> list[int]:
        """A full upstream pass, newest first: sequence numbers count down from 0.

        Into an empty table the indexes are dropped first and rebuilt at the end."""
        bulk = self.db.execute("SELECT 1 FROM commits LIMIT 1").fetchone() is None
        if bulk:
            for name in ("commits_oid", "commits_subject", "commits_patch_id"):
                self.db.execute(f"DROP INDEX IF EXISTS {name}")
            self._bulk = True
            # A bulk load writes every page once: a large page cache keeps the growing
            # tables' pages from being spilled and re-read, and the index sorts stay in memory.
            self.db.execute(f"PRAGMA cache_size=-{_BULK_CACHE_KIB}")
            # not where this connection's temporary store is in use (a rebuild after an
            # update that listed a branch's rows through a scratch table): a speed, not a need
            with contextlib.suppress(sqlite3.OperationalError):
                self.db.execute("PRAGMA temp_store=MEMORY")
        try:
            return self._store_all(tip, progress)
        finally:
            if bulk:
                self._bulk = False
                progress("building the index's lookup tables", 0, None)
                execute_script(self.db, _COMMIT_INDEXES)
                self.db.execute("PRAGMA cache_size=-2000")  # SQLite's default again
                with contextlib.suppress(sqlite3.OperationalError):
                    self.db.execute("PRAGMA temp_store=DEFAULT")

    def _store_all(self, tip: Oid, progress: ProgressCallback) -> list[int]:
        """The history of `tip`, newest first, parsed and inserted in batches: its first
        slice here, the rest (a long history) prepared by a worker process (`worker.py`)
        while this one parses what names relations and inserts. The worker is started when
        a fifth of the first slice is in (it imports while the rest is read), and handed the
        rest of the walk once the slice is read, before it is parsed here: its git process
        and this process's parse run side by side. The rows are the same either way (a test
        compares)."""
        walk = Walk([tip])
        ids: list[int] = []
        worker: BulkWorker | None = None
        first = max(1, self.worker_after // 5)  # read before the worker is started
        try:
            read: list[bytes] = []
            for raw in self.repo.streams.walk_step(walk, self.worker_after):
                read.append(raw)
                if worker is None and len(read) == first:
                    worker = _start_worker(self.repo.path, self.file.vocabulary)
            if worker is not None and not walk.done:
                worker.walk_on(walk)  # it is told what this process read (`walk.seen`)
            for batch in batches(read, first):
                ids += self._insert_bulk(self._parse(batch), -len(ids))
                progress("indexing upstream", len(ids), None)
            del read
            if walk.done:
                return ids
            rest: Iterator[BatchRows]
            if worker is not None:
                vocabulary = self.file.vocabulary
                rest = (finish_batch(prepared, vocabulary) for prepared in worker.batches())
            else:
                records = self.repo.streams.walk_all(walk, _LOG_SLICE)
                rest = (self._parse(batch) for batch in batches(records, BATCH))
            for rows in rest:
                ids += self._insert_bulk(rows, -len(ids))
                progress("indexing upstream", len(ids), None)
            return ids
        finally:
            if worker is not None:
                worker.close()

    def _parse(self, batch: list[bytes]) -> BatchRows:
        vocabulary = self.file.vocabulary
        prepared = prepare_batch(
            batch, every=vocabulary.reads_every_message, words=vocabulary.words
        )
        return finish_batch(prepared, vocabulary)

    def _insert_bulk(self, rows: BatchRows, top_seq: int) -> list[int]:
        """Insert new upstream commits, the first with sequence number `top_seq` and each
        next one less, and their relations; return their row ids. The commits' values go in
        as the parser made them (no row built per commit): SQLite gives the rows the ids one
        past the largest, consecutively, and one statement sets their sequence numbers."""
        first = (self.db.execute("SELECT MAX(id) FROM commits").fetchone()[0] or 0) + 1
        self.db.executemany(
            "INSERT INTO commits(oid, subject, author_name, author_email, author_time, "
            "commit_time, parents, stable_tags) VALUES(?,?,?,?,?,?,?,?)",
            rows.commits,
        )
        last = first + len(rows.commits) - 1
        if rows.commits and self.db.execute("SELECT MAX(id) FROM commits").fetchone()[0] != last:
            raise IndexCorruptError(
                f"{self.file.path}: commit ids not consecutive; rebuild the index"
            )
        self.db.execute(
            "UPDATE commits SET upstream_seq=? - id WHERE id BETWEEN ? AND ?",
            (top_seq + first, first, last),
        )
        self._insert_relations([(first + i, r) for i, r in rows.related])
        return list(range(first, last + 1))

    def _update_branch(
        self,
        plan: BranchPlan,
        upstream: Ref,
        new_upstream_ids: list[int],
        progress: ProgressCallback,
    ) -> int:
        """Apply a branch's plan; returns how many of its commits were read."""
        branch = plan.branch
        if plan.mode == "noop":
            return 0
        if plan.mode == "rewind":  # moved back to an ancestor: O(commits removed)
            assert plan.stored is not None
            self._add_after_fork(branch.refname, new_upstream_ids)
            removed = self._ids_of(
                oids(self.repo.run_git("rev-list", plan.stored.tip, f"^{branch.tip}"))
            )
            self.db.executemany(
                "DELETE FROM branch_commits WHERE refname=? AND commit_id=?",
                [(branch.refname, cid) for cid in removed],
            )
            self._set_ref(branch, plan.fork)
            return 0
        if plan.mode in ("upstream-only", "incremental"):
            self._add_after_fork(branch.refname, new_upstream_ids)
            if plan.mode == "upstream-only":
                return 0
            top = (
                self.db.execute(
                    "SELECT MAX(seq) FROM branch_commits WHERE refname=?", (branch.refname,)
                ).fetchone()[0]
                or 0
            )
        else:
            top = 0
            self.db.execute("DELETE FROM branch_commits WHERE refname=?", (branch.refname,))
            self.db.execute("DELETE FROM after_fork WHERE refname=?", (branch.refname,))
            self.db.execute("DELETE FROM after_fork_pending WHERE refname=?", (branch.refname,))
            fork = plan.fork
            after = plan.after_fork() if fork is not None else None
            if after is not None:  # listed by its probe, beside the upstream read
                self.after_fork.add_listed(branch.refname, after)
            elif fork is not None:  # listed from a near fork at the update's end (a branch
                # worked on: `AfterFork.complete`), or when a question needs them
                self.db.execute("INSERT INTO after_fork_pending VALUES(?)", (branch.refname,))
        records = list(self.repo.streams.log(branch.tip, plan.own_commits_exclude()))
        self._store_branch(branch, records, top, progress, plan.patch_ids())
        unreadable = set(self.repo.streams.unreadable)
        if lost := [r.oid for r in records if r.oid in unreadable]:
            _log.warning(
                "%d commit(s) of %s have no patch-id: git cannot read an object their diff "
                "needs (%s first); they are found by their upstream reference or subject only",
                len(lost),
                branch.name,
                short(lost[-1]),
            )
        self._set_ref(branch, plan.fork)
        return len(records)

    def _store_branch(
        self,
        branch: Ref,
        records: list[LogRecord],
        top: int,
        progress: ProgressCallback,
        patch_ids: list[tuple[Oid, str]],
    ) -> None:
        ids = self._store(records, progress, f"indexing {branch.name}")
        n = len(ids)
        self.db.executemany(
            "INSERT OR IGNORE INTO branch_commits VALUES(?, ?, ?)",
            [(branch.refname, cid, top + n - i) for i, cid in enumerate(ids)],
        )
        by_oid = {r.oid: cid for r, cid in zip(records, ids, strict=True)}
        self.db.executemany(
            "UPDATE commits SET patch_id=? WHERE id=?",
            [(value, by_oid[oid]) for oid, value in patch_ids if oid in by_oid],
        )

    def _set_ref(self, branch: Ref, fork: Oid | None) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO refs VALUES(?, ?, 'branch', ?, ?)",
            (branch.refname, branch.name, branch.tip, fork),
        )

    def _add_after_fork(self, refname: str, ids: list[int]) -> None:
        if ids:
            self.db.executemany(
                "INSERT OR IGNORE INTO after_fork VALUES(?, ?)", [(refname, i) for i in ids]
            )

    def _upstream_took_own(self, refname: str) -> bool:
        """Is one of the branch's own commits (stored: none was upstream's) now upstream's?"""
        row = self.db.execute(
            "SELECT 1 FROM branch_commits b JOIN commits c ON c.id=b.commit_id "
            "WHERE b.refname=? AND c.upstream_seq IS NOT NULL LIMIT 1",
            (refname,),
        ).fetchone()
        return row is not None

    def _upstream_among(self, oids: list[Oid]) -> set[Oid]:
        """Which of these commits are upstream's (read once the upstream pass is done)."""
        found: set[Oid] = set()
        for chunk, marks in in_chunks(oids):
            found.update(
                r[0]
                for r in self.db.execute(
                    f"SELECT oid FROM commits WHERE upstream_seq IS NOT NULL AND oid IN ({marks})",
                    chunk,
                )
            )
        return found

    def _ids_of(self, oids: list[Oid]) -> list[int]:
        out: list[int] = []
        for chunk, marks in in_chunks(oids):
            out += [
                r[0]
                for r in self.db.execute(f"SELECT id FROM commits WHERE oid IN ({marks})", chunk)
            ]
        return out

    def _store(
        self,
        records: list[LogRecord],
        progress: ProgressCallback,
        stage: str,
        *,
        upstream_seqs: list[int] | None = None,
    ) -> list[int]:
        """Insert commits (deduplicated by id) and their relations; return their row ids."""
        existing = {} if self._bulk else dict(self._existing([r.oid for r in records]))
        next_id = (self.db.execute("SELECT MAX(id) FROM commits").fetchone()[0] or 0) + 1
        new: list[tuple[int, int | None, CommitRows]] = []
        ids: list[int] = []
        for i, record in enumerate(records):
            seq = upstream_seqs[i] if upstream_seqs is not None else None
            if record.oid in existing:
                cid = existing[record.oid]
                ids.append(cid)
                if seq is not None:
                    self.db.execute("UPDATE commits SET upstream_seq=? WHERE id=?", (seq, cid))
                continue
            ids.append(next_id)
            new.append((next_id, seq, commit_rows(record, self.file.vocabulary)))
            next_id += 1
            if i % 1000 == 999:
                progress(stage, i + 1, len(records))
        self._insert(new)
        return ids

    def _insert(self, new: Sequence[tuple[int, int | None, CommitRows]]) -> None:
        """Insert new commits (row id, upstream sequence, rows) and their relations."""
        rows = [
            (
                cid, r.oid, r.subject, r.author_name, r.author_email, r.author_time,
                r.commit_time, r.parents, seq, None, r.stable_tags,
            )
            for cid, seq, r in new
        ]  # fmt: skip
        self.db.executemany("INSERT INTO commits VALUES(?,?,?,?,?,?,?,?,?,?,?)", rows)
        self._insert_relations([(cid, r) for cid, _, r in new])

    def _insert_relations(self, new: Sequence[tuple[int, CommitRows]]) -> None:
        """The relation rows of new commits (row id, rows)."""
        fixes_rows = [(cid, *fix) for cid, r in new for fix in r.fixes]
        revert_rows = [(cid, ref, subject) for cid, r in new for ref, subject in r.reverts]
        ref_rows = [(cid, oid, form) for cid, r in new for oid, form in r.upstream_refs]
        dep_rows = [(cid, ref, subject) for cid, r in new for ref, subject in r.stable_deps]
        posting_rows = [(cid, stem, n) for cid, r in new for stem, n in r.postings]
        self.db.executemany(
            "INSERT INTO fixes(commit_id, ref, subject, form) VALUES(?,?,?,?)", fixes_rows
        )
        self.db.executemany(
            "INSERT INTO reverts(commit_id, ref, subject) VALUES(?,?,?)", revert_rows
        )
        self.db.executemany("INSERT INTO upstream_refs VALUES(?,?,?)", ref_rows)
        self.db.executemany(
            "INSERT INTO stable_deps(commit_id, ref, subject) VALUES(?,?,?)", dep_rows
        )
        self.db.executemany("INSERT OR IGNORE INTO postings VALUES(?,?,?)", posting_rows)

    def _existing(self, oids: list[Oid]) -> Iterator[tuple[Oid, int]]:
        for chunk, marks in in_chunks(oids):
            yield from self.db.execute(f"SELECT oid, id FROM commits WHERE oid IN ({marks})", chunk)


def _start_worker(git_dir: Path, vocabulary: Vocabulary) -> BulkWorker | None:
    """The worker, or None where no second process can be started (the rest is read here)."""
    try:
        return BulkWorker(
            git_dir, _LOG_SLICE, every=vocabulary.reads_every_message, words=vocabulary.words
        )
    except OSError:
        return None
