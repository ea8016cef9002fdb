"""The persistent commit index (SQLite under the repository's git directory).

For the upstream ref and each indexed stable branch it keeps every commit's id, subject,
author and dates, its parsed relations (Fixes:, reverts, upstream references,
Stable-dep-of:, Cc: stable tags), patch-ids of branch commits, and the reverse maps "who fixes
X", "who reverts X", "which branch commit carries upstream X". Updates are incremental (only
commits new since the stored tips are read) and a rewritten branch is re-read from its fork
point. Writers hold a file lock; readers see a consistent database thanks to WAL.

It does not decide presence or dependencies: presence.py and deps/ ask it questions.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from backportr.dbfault import explain
from backportr.errors import IndexCorruptError
from backportr.model import (
    CommitInfo,
    Oid,
    ParsedMessage,
    ProgressCallback,
    StableTag,
    no_progress,
)
from backportr.postings import mentions_message_id, posting_keys
from backportr.repo import LogRecord, Ref, Repo
from backportr.trailers import mentions_relations, parse_message

SCHEMA_VERSION = "9"
_BATCH = 5000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS commits(
    id INTEGER PRIMARY KEY,
    oid TEXT NOT NULL,
    subject TEXT NOT NULL,
    author_name TEXT NOT NULL,
    author_email TEXT NOT NULL,
    author_time INTEGER NOT NULL,
    commit_time INTEGER NOT NULL,
    parents INTEGER NOT NULL,
    upstream_seq INTEGER,
    patch_id TEXT,
    stable_tags TEXT
);
CREATE TABLE IF NOT EXISTS fixes(
    commit_id INTEGER NOT NULL, ref TEXT NOT NULL, subject TEXT, target TEXT, how TEXT);
CREATE INDEX IF NOT EXISTS fixes_target ON fixes(target);
CREATE INDEX IF NOT EXISTS fixes_commit ON fixes(commit_id);
CREATE TABLE IF NOT EXISTS reverts(
    commit_id INTEGER NOT NULL, ref TEXT, subject TEXT, target TEXT, how TEXT);
CREATE INDEX IF NOT EXISTS reverts_target ON reverts(target);
CREATE INDEX IF NOT EXISTS reverts_commit ON reverts(commit_id);
CREATE TABLE IF NOT EXISTS upstream_refs(commit_id INTEGER NOT NULL, upstream TEXT NOT NULL,
    form TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS upstream_refs_upstream ON upstream_refs(upstream);
CREATE INDEX IF NOT EXISTS upstream_refs_commit ON upstream_refs(commit_id);
CREATE TABLE IF NOT EXISTS stable_deps(
    commit_id INTEGER NOT NULL, ref TEXT NOT NULL, subject TEXT, target TEXT, how TEXT);
CREATE INDEX IF NOT EXISTS stable_deps_target ON stable_deps(target);
CREATE TABLE IF NOT EXISTS refs(
    refname TEXT PRIMARY KEY, name TEXT NOT NULL, kind TEXT NOT NULL,
    tip TEXT NOT NULL, fork TEXT);
CREATE TABLE IF NOT EXISTS branch_commits(
    refname TEXT NOT NULL, commit_id INTEGER NOT NULL, seq INTEGER NOT NULL,
    PRIMARY KEY(refname, commit_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS adapted_checks(
    upstream TEXT NOT NULL, carrier TEXT NOT NULL, conflicts INTEGER NOT NULL,
    PRIMARY KEY(upstream, carrier)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS results(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS postings(
    commit_id INTEGER NOT NULL, stem TEXT NOT NULL, number INTEGER NOT NULL,
    PRIMARY KEY(commit_id, stem)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS postings_stem ON postings(stem);
CREATE TABLE IF NOT EXISTS posting_covers(
    stem TEXT PRIMARY KEY, cover TEXT, posted INTEGER) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS after_fork(
    refname TEXT NOT NULL, commit_id INTEGER NOT NULL,
    PRIMARY KEY(refname, commit_id)) WITHOUT ROWID;
"""

# Indexes on the commits table: dropped for a bulk load into an empty table, then rebuilt
# (sorting once is much faster than a million random B-tree inserts).
_COMMIT_INDEXES = """
CREATE UNIQUE INDEX IF NOT EXISTS commits_oid ON commits(oid);
CREATE INDEX IF NOT EXISTS commits_subject ON commits(subject);
CREATE INDEX IF NOT EXISTS commits_patch_id ON commits(patch_id) WHERE patch_id IS NOT NULL;
"""


@dataclass(frozen=True, slots=True)
class Relation:
    """An edge the index knows: `commit` fixes/reverts/depends on `target`."""

    commit: Oid
    target: Oid | None
    ref: str | None
    subject: str | None
    how: str | None


@dataclass(frozen=True, slots=True)
class IndexedRef:
    refname: str
    name: str
    kind: str
    tip: Oid
    fork: Oid | None


@dataclass(frozen=True, slots=True)
class UpdateStats:
    """What an update read: new commits per ref, and refs re-read after a rewrite."""

    new_commits: dict[str, int]
    rewritten: tuple[str, ...]


class _PatchIdPass:
    """One `git log -p | git patch-id` pass in the background (git does the work on the other
    core while this one reads the upstream history)."""

    def __init__(self, repo: Repo, tips: list[Oid], exclude: list[Oid]) -> None:
        self._patch_ids: list[tuple[Oid, str]] = []
        self._error: BaseException | None = None

        def run() -> None:
            try:
                self._patch_ids = list(repo.patch_ids(tips, exclude))
            except BaseException as error:
                self._error = error

        self._thread = threading.Thread(target=run, name="patch-ids", daemon=True)
        self._thread.start()

    def result(self) -> list[tuple[Oid, str]]:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._patch_ids


class _BranchPlan:
    """What an update does to one branch, decided before the upstream pass starts."""

    def __init__(
        self,
        branch: Ref,
        stored: IndexedRef | None,
        fork: Oid | None,
        mode: str,
        exclude: list[Oid],
    ) -> None:
        self.branch = branch
        self.stored = stored
        self.fork = fork
        self.mode = mode  # noop | upstream-only | incremental | rewind | full
        self.exclude = exclude
        self.pass_: _PatchIdPass | None = None  # may be shared with other branches

    def patch_ids(self) -> list[tuple[Oid, str]]:
        """The patch-ids of (at least) this branch's new commits."""
        return self.pass_.result() if self.pass_ is not None else []


def default_index_path(repo: Repo) -> Path:
    return repo.path / "backportr" / "index.sqlite"


class CommitIndex:
    """The index of one repository. Use as a context manager, or call close()."""

    def __init__(self, repo: Repo, path: Path | None = None, *, recover: bool = False) -> None:
        """With `recover`, an index file that cannot be read is moved aside (kept, renamed
        `*.corrupt-<time>`) and a new one started; without, that is an error."""
        self.repo = repo
        self._bulk = False
        self.path = path or default_index_path(repo)
        if recover and self.path.exists() and not _readable(self.path):
            aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}")
            self.path.rename(aside)
            for suffix in ("-wal", "-shm"):
                self.path.with_name(self.path.name + suffix).unlink(missing_ok=True)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise IndexCorruptError(
                f"cannot create the index directory {self.path.parent}: {error}"
            ) from None
        self._lock_path = self.path.with_suffix(".lock")
        try:
            self.db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA busy_timeout=60000")
            self._ensure_schema()
        except sqlite3.DatabaseError as error:
            if hasattr(self, "db"):
                self.db.close()
            raise IndexCorruptError(explain(error, self.path)) from None

    def __enter__(self) -> CommitIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    def _ensure_schema(self) -> None:
        self.db.executescript(_SCHEMA + _COMMIT_INDEXES)
        row = self.db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        if row is None:
            self.db.execute("INSERT INTO meta VALUES('schema', ?)", (SCHEMA_VERSION,))
        elif row[0] != SCHEMA_VERSION:
            self._drop_all()

    def _drop_all(self) -> None:
        for table in (
            "commits",
            "fixes",
            "reverts",
            "upstream_refs",
            "stable_deps",
            "refs",
            "branch_commits",
            "after_fork",
            "postings",
            "posting_covers",
            "adapted_checks",
            "results",
            "meta",
        ):
            self.db.execute(f"DROP TABLE IF EXISTS {table}")
        for statement in (_SCHEMA + _COMMIT_INDEXES).split(";"):
            if statement.strip():
                self.db.execute(statement)  # executescript would COMMIT a transaction
        self.db.execute("INSERT INTO meta VALUES('schema', ?)", (SCHEMA_VERSION,))

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """An exclusive file lock plus one transaction: concurrent runs queue, never corrupt."""
        with open(self._lock_path, "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                self.db.execute("BEGIN IMMEDIATE")
                try:
                    yield
                except BaseException as error:
                    # SQLite may already have rolled back (a full disk does that): the
                    # original error is the one to report, never "cannot rollback".
                    with contextlib.suppress(sqlite3.Error):
                        self.db.execute("ROLLBACK")
                    if isinstance(error, sqlite3.DatabaseError):
                        raise IndexCorruptError(explain(error, self.path)) from None
                    raise
                self.db.execute("COMMIT")
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    # -- updating --------------------------------------------------------------------------

    def update(
        self,
        upstream: Ref,
        branches: Sequence[Ref] = (),
        *,
        progress: ProgressCallback = no_progress,
        rebuild: bool = False,
    ) -> UpdateStats:
        """Bring the index up to date with the upstream ref and the given branches; with
        `rebuild`, drop everything first, in the same transaction (readers see the old index
        or the new one, never an empty one)."""
        new: dict[str, int] = {}
        rewritten: list[str] = []
        with self._writing():
            if rebuild:
                self._drop_all()
            stored_upstream = self._stored_ref(upstream.refname)
            if stored_upstream is None or stored_upstream.kind != "upstream":
                old = self.db.execute("SELECT refname FROM refs WHERE kind='upstream'").fetchone()
                if old is not None:
                    rewritten.append(old[0])
                    self._reset_upstream()
                    stored_upstream = None
            upstream_moved = stored_upstream is None or stored_upstream.tip != upstream.tip
            # Plans first: their patch-id passes (git processes) then run on the other core
            # while this one reads the upstream history.
            plans = [self._plan(branch, upstream, upstream_moved) for branch in branches]
            self._start_patch_ids(plans, upstream)
            new_ids = self._update_upstream(upstream, progress)
            new[upstream.name] = len(new_ids)
            for plan in plans:
                new[plan.branch.name] = self._update_branch(plan, upstream, new_ids, progress)
                if plan.mode == "full" and plan.stored is not None:
                    rewritten.append(plan.branch.name)
            self._resolve_pending(progress)
        return UpdateStats(new_commits=new, rewritten=tuple(rewritten))

    def _start_patch_ids(self, plans: list[_BranchPlan], upstream: Ref) -> None:
        """One pass for every branch read whole (they share history: each commit once, and
        two processes instead of two per branch); its own for each branch read from where
        it was."""
        full = [p for p in plans if p.mode == "full"]
        if full:
            shared = _PatchIdPass(self.repo, [p.branch.tip for p in full], [upstream.tip])
            for plan in full:
                plan.pass_ = shared
        for plan in plans:
            if plan.mode == "incremental":
                plan.pass_ = _PatchIdPass(self.repo, [plan.branch.tip], plan.exclude)

    def _plan(self, branch: Ref, upstream: Ref, upstream_moved: bool) -> _BranchPlan:
        stored = self._stored_ref(branch.refname)
        if (
            stored is not None
            and stored.kind == "branch"
            and stored.tip == branch.tip
            and not upstream_moved
        ):
            return _BranchPlan(branch, stored, stored.fork, "noop", [])
        fork = self.repo.merge_base(branch.tip, upstream.tip)
        if stored is not None and stored.kind == "branch" and stored.fork == fork:
            if stored.tip == branch.tip:
                return _BranchPlan(branch, stored, fork, "upstream-only", [])
            if self.repo.is_ancestor(branch.tip, stored.tip):
                return _BranchPlan(branch, stored, fork, "rewind", [branch.tip])
            if self.repo.is_ancestor(stored.tip, branch.tip):
                return _BranchPlan(branch, stored, fork, "incremental", [stored.tip, upstream.tip])
        return _BranchPlan(branch, stored, fork, "full", [upstream.tip])

    def _reset_upstream(self) -> None:
        self.db.execute("UPDATE commits SET upstream_seq=NULL WHERE upstream_seq IS NOT NULL")
        self.db.execute("DELETE FROM refs")
        self.db.execute("DELETE FROM after_fork")
        self.db.execute("DELETE FROM branch_commits")

    def _update_upstream(self, upstream: Ref, progress: ProgressCallback) -> list[int]:
        stored = self._stored_ref(upstream.refname)
        if stored is not None and stored.tip == upstream.tip:
            return []
        if stored is not None and self.repo.is_ancestor(upstream.tip, stored.tip):
            self._rewind_upstream(stored.tip, upstream.tip)
            ids = []
        elif stored is not None and self.repo.is_ancestor(stored.tip, upstream.tip):
            records = list(self.repo.log(upstream.tip, [stored.tip]))
            top = self.db.execute("SELECT MAX(upstream_seq) FROM commits").fetchone()[0] or 0
            seqs = [top + len(records) - i for i in range(len(records))]
            ids = self._store(records, progress, "upstream", upstream_seqs=seqs)
        else:
            if stored is not None:
                self._reset_upstream()
            ids = self._store_stream(self.repo.log(upstream.tip), progress)
        self.db.execute(
            "INSERT OR REPLACE INTO refs VALUES(?, ?, 'upstream', ?, NULL)",
            (upstream.refname, upstream.name, upstream.tip),
        )
        return ids

    def _rewind_upstream(self, old_tip: Oid, new_tip: Oid) -> None:
        """Upstream moved back to an ancestor: the commits past it stop being upstream (they
        stay stored, so moving forward again re-reads nothing). O(commits removed)."""
        removed = self._ids_of(self.repo.run_git("rev-list", old_tip, f"^{new_tip}").split())
        for start in range(0, len(removed), 900):
            chunk = removed[start : start + 900]
            marks = ",".join("?" * len(chunk))
            self.db.execute(f"UPDATE commits SET upstream_seq=NULL WHERE id IN ({marks})", chunk)
            self.db.execute(f"DELETE FROM after_fork WHERE commit_id IN ({marks})", chunk)

    def _store_stream(self, records: Iterable[LogRecord], progress: ProgressCallback) -> list[int]:
        """A full upstream pass, newest first: sequence numbers count down from 0.

        Into an empty table the indexes are dropped first and rebuilt at the end."""
        bulk = self.db.execute("SELECT 1 FROM commits LIMIT 1").fetchone() is None
        if bulk:
            for name in ("commits_oid", "commits_subject", "commits_patch_id"):
                self.db.execute(f"DROP INDEX IF EXISTS {name}")
            self._bulk = True
        try:
            return self._store_all(records, progress)
        finally:
            if bulk:
                self._bulk = False
                progress("building the index's lookup tables", 0, None)
                for statement in _COMMIT_INDEXES.strip().split(";"):
                    if statement.strip():
                        self.db.execute(statement)  # executescript would COMMIT

    def _store_all(self, records: Iterable[LogRecord], progress: ProgressCallback) -> list[int]:
        ids: list[int] = []
        batch: list[LogRecord] = []
        position = 0
        for record in records:
            batch.append(record)
            if len(batch) >= _BATCH:
                seqs = list(range(-position, -position - len(batch), -1))
                ids += self._store(batch, no_progress, "upstream", upstream_seqs=seqs)
                position += len(batch)
                batch = []
                progress("indexing upstream", position, None)
        if batch:
            seqs = list(range(-position, -position - len(batch), -1))
            ids += self._store(batch, no_progress, "upstream", upstream_seqs=seqs)
            position += len(batch)
            progress("indexing upstream", position, None)
        return ids

    def _update_branch(
        self,
        plan: _BranchPlan,
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
                self.repo.run_git("rev-list", plan.stored.tip, f"^{branch.tip}").split()
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
            if plan.fork is not None:
                after = self.repo.run_git("rev-list", upstream.tip, f"^{plan.fork}").split()
                self._add_after_fork(branch.refname, self._ids_of(after))
        records = list(self.repo.log(branch.tip, plan.exclude))
        self._store_branch(branch, records, top, progress, plan.patch_ids())
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

    def _ids_of(self, oids: list[Oid]) -> list[int]:
        out: list[int] = []
        for start in range(0, len(oids), 900):
            chunk = oids[start : start + 900]
            marks = ",".join("?" * len(chunk))
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
        commit_rows = []
        fixes_rows = []
        revert_rows: list[tuple[int, str | None, str | None]] = []
        ref_rows = []
        dep_rows = []
        posting_rows: list[tuple[int, str, int]] = []
        ids: list[int] = []
        for i, record in enumerate(records):
            seq = upstream_seqs[i] if upstream_seqs is not None else None
            if record.oid in existing:
                cid = existing[record.oid]
                ids.append(cid)
                if seq is not None:
                    self.db.execute("UPDATE commits SET upstream_seq=? WHERE id=?", (seq, cid))
                continue
            cid = next_id
            next_id += 1
            ids.append(cid)
            if mentions_relations(record.raw_message):
                parsed = parse_message(record.message)
            else:
                parsed = ParsedMessage(subject=record.subject)
            commit_rows.append(
                (
                    cid,
                    record.oid,
                    parsed.subject,
                    record.author_name,
                    record.author_email,
                    record.author_time,
                    record.commit_time,
                    len(record.parents),
                    seq,
                    None,
                    _tags_json(parsed.stable_tags),
                )
            )
            fixes_rows += [(cid, f.ref, f.subject) for f in parsed.fixes]
            revert_rows += [(cid, r, parsed.reverted_subject) for r in parsed.reverts]
            if parsed.reverted_subject and not parsed.reverts:
                revert_rows.append((cid, None, parsed.reverted_subject))
            ref_rows += [(cid, r.oid, r.form) for r in parsed.upstream_refs]
            dep_rows += [(cid, d.ref, d.subject) for d in parsed.stable_deps]
            if mentions_message_id(record.raw_message):
                posting_rows += [(cid, k.stem, k.number) for k in posting_keys(record.message)]
            if i % 1000 == 999:
                progress(stage, i + 1, len(records))
        self.db.executemany("INSERT INTO commits VALUES(?,?,?,?,?,?,?,?,?,?,?)", commit_rows)
        self.db.executemany("INSERT INTO fixes(commit_id, ref, subject) VALUES(?,?,?)", fixes_rows)
        self.db.executemany(
            "INSERT INTO reverts(commit_id, ref, subject) VALUES(?,?,?)", revert_rows
        )
        self.db.executemany("INSERT INTO upstream_refs VALUES(?,?,?)", ref_rows)
        self.db.executemany(
            "INSERT INTO stable_deps(commit_id, ref, subject) VALUES(?,?,?)", dep_rows
        )
        self.db.executemany("INSERT OR IGNORE INTO postings VALUES(?,?,?)", posting_rows)
        return ids

    def _existing(self, oids: list[Oid]) -> Iterator[tuple[Oid, int]]:
        for start in range(0, len(oids), 900):
            chunk = oids[start : start + 900]
            marks = ",".join("?" * len(chunk))
            yield from self.db.execute(f"SELECT oid, id FROM commits WHERE oid IN ({marks})", chunk)

    # -- resolving ids written in messages -------------------------------------------------

    def _resolve_pending(self, progress: ProgressCallback) -> None:
        """Resolve the ids written in new Fixes:, revert and Stable-dep-of: lines.

        One range-join query finds the commits every written prefix names; only the rows
        whose id is wrong or ambiguous fall back to a query by subject."""
        for table in ("fixes", "reverts", "stable_deps"):
            candidates: dict[int, list[tuple[Oid, str, int | None, int]]] = {}
            pending: dict[int, tuple[int, str | None, str | None]] = {}
            rows = self.db.execute(
                f"SELECT t.rowid, t.commit_id, t.ref, t.subject, c.oid, c.subject, "
                f"c.upstream_seq, c.id FROM {table} t LEFT JOIN commits c "
                f"ON c.oid >= t.ref AND c.oid < t.ref || 'g' WHERE t.how IS NULL"
            )
            for rowid, writer, ref, subject, oid, found_subject, seq, cid in rows:
                pending[rowid] = (writer, ref, subject)
                if oid is not None:
                    candidates.setdefault(rowid, []).append((oid, found_subject, seq, cid))
            updates = []
            for done, (rowid, (writer, ref, subject)) in enumerate(pending.items(), 1):
                target, how = self._resolve_written(
                    ref, subject, writer, candidates.get(rowid, []), to_upstream=table != "reverts"
                )
                updates.append((target, how, rowid))
                if done % 5000 == 0:
                    progress(f"resolving {table}", done, len(pending))
            self.db.executemany(f"UPDATE {table} SET target=?, how=? WHERE rowid=?", updates)

    def _resolve_written(
        self,
        ref: str | None,
        subject: str | None,
        writer: int,
        matches: list[tuple[Oid, str, int | None, int]],
        *,
        to_upstream: bool,
    ) -> tuple[Oid | None, str]:
        """An id as written plus its quoted subject -> (target id, how it was matched).

        By id when it names exactly one commit whose subject agrees; else by exact subject;
        with to_upstream, an id of a stable backport is mapped to the upstream commit it
        carries (a Fixes: naming the backport means the upstream original).
        """
        by_id: Oid | None = None
        if ref and len(matches) == 1:
            oid, found_subject, seq, cid = matches[0]
            how = "id"
            if seq is None and to_upstream:
                carried = self.db.execute(
                    "SELECT upstream FROM upstream_refs WHERE commit_id=?", (cid,)
                ).fetchone()
                if carried is not None:
                    oid, how = carried[0], "stable-id"
            by_id = oid
            if subject is None or _same_subject(subject, found_subject):
                return oid, how
        if subject:
            row = self.db.execute(
                "SELECT oid FROM commits WHERE subject = ? AND upstream_seq IS NOT NULL "
                "AND id != ? ORDER BY upstream_seq DESC LIMIT 1",
                (subject.strip(), writer),
            ).fetchone()
            if row is not None:
                return row[0], "subject"
        if by_id is not None:
            return by_id, "id"
        return None, "unresolved"

    # -- queries ---------------------------------------------------------------------------

    def refs(self) -> list[IndexedRef]:
        return [IndexedRef(*row) for row in self.db.execute("SELECT * FROM refs ORDER BY name")]

    def _stored_ref(self, refname: str) -> IndexedRef | None:
        row = self.db.execute("SELECT * FROM refs WHERE refname=?", (refname,)).fetchone()
        return IndexedRef(*row) if row else None

    def info(self, oid: Oid) -> CommitInfo | None:
        row = self.db.execute(
            "SELECT oid, subject, author_name, author_email, author_time, commit_time "
            "FROM commits WHERE oid=?",
            (oid,),
        ).fetchone()
        return CommitInfo(*row) if row else None

    def upstream_seq(self, oid: Oid) -> int | None:
        row = self.db.execute("SELECT upstream_seq FROM commits WHERE oid=?", (oid,)).fetchone()
        return row[0] if row else None

    def is_upstream(self, oid: Oid) -> bool:
        return self.upstream_seq(oid) is not None

    def fixes_of(self, oid: Oid) -> list[Relation]:
        """The culprits a commit names in its Fixes: lines (resolved where possible)."""
        return self._relations_of("fixes", oid)

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
            where += " AND EXISTS(SELECT 1 FROM branch_commits b WHERE b.commit_id = c.id)"
        rows = self.db.execute(
            f"SELECT c.oid, t.target, t.ref, t.subject, t.how FROM {table} t "
            f"JOIN commits c ON c.id = t.commit_id WHERE t.target=?{where} "
            "ORDER BY c.upstream_seq, c.commit_time",
            (oid,),
        )
        return [Relation(*row) for row in rows]

    def stable_tags_of(self, oid: Oid) -> list[StableTag]:
        row = self.db.execute("SELECT stable_tags FROM commits WHERE oid=?", (oid,)).fetchone()
        if not row or not row[0]:
            return []
        return [_tag_from_json(t) for t in json.loads(row[0])]

    def carriers(self, upstream: Oid, refname: str) -> list[Oid]:
        """Branch commits that name `upstream` in an upstream-reference line, oldest first."""
        rows = self.db.execute(
            "SELECT c.oid FROM upstream_refs u JOIN commits c ON c.id=u.commit_id "
            "JOIN branch_commits b ON b.commit_id=c.id AND b.refname=? "
            "WHERE u.upstream=? ORDER BY b.seq",
            (refname, upstream),
        )
        return [r[0] for r in rows]

    def backports_elsewhere(self, upstream: Oid, refname: str) -> list[tuple[str, Oid]]:
        """(branch name, commit) of indexed branches other than `refname` whose commits carry
        `upstream` by an upstream-reference line or by the same patch-id, oldest first."""
        rows = self.db.execute(
            "SELECT r.name, c.oid FROM upstream_refs u JOIN commits c ON c.id=u.commit_id "
            "JOIN branch_commits b ON b.commit_id=c.id JOIN refs r ON r.refname=b.refname "
            "WHERE u.upstream=? AND b.refname != ? ORDER BY r.name, b.seq",
            (upstream, refname),
        ).fetchall()
        if rows:
            return [(name, oid) for name, oid in rows]
        patch_id = self.patch_id(upstream)
        if not patch_id:
            return []
        rows = self.db.execute(
            "SELECT r.name, c.oid FROM commits c JOIN branch_commits b ON b.commit_id=c.id "
            "JOIN refs r ON r.refname=b.refname WHERE c.patch_id=? AND b.refname != ? "
            "AND c.oid != ? ORDER BY r.name, b.seq",
            (patch_id, refname, upstream),
        ).fetchall()
        return [(name, oid) for name, oid in rows]

    def carried_upstream(self, oid: Oid) -> Oid | None:
        """The upstream id a (stable) commit names, if any."""
        row = self.db.execute(
            "SELECT u.upstream FROM upstream_refs u JOIN commits c ON c.id=u.commit_id "
            "WHERE c.oid=?",
            (oid,),
        ).fetchone()
        return row[0] if row else None

    def in_branch(self, oid: Oid, refname: str) -> bool | None:
        """Is the commit in the branch's history? None when the index cannot tell."""
        row = self.db.execute("SELECT id, upstream_seq FROM commits WHERE oid=?", (oid,)).fetchone()
        if row is None:
            return None
        cid, seq = row
        if self.db.execute(
            "SELECT 1 FROM branch_commits WHERE refname=? AND commit_id=?", (refname, cid)
        ).fetchone():
            return True
        if seq is None:
            return False
        stored = self._stored_ref(refname)
        if stored is None or stored.fork is None:
            return None
        return (
            self.db.execute(
                "SELECT 1 FROM after_fork WHERE refname=? AND commit_id=?", (refname, cid)
            ).fetchone()
            is None
        )

    def branches_of(self, oid: Oid) -> list[str]:
        """Names of the indexed branches whose own commits include `oid`."""
        rows = self.db.execute(
            "SELECT r.name FROM branch_commits b JOIN commits c ON c.id=b.commit_id "
            "JOIN refs r ON r.refname=b.refname WHERE c.oid=? ORDER BY r.name",
            (oid,),
        )
        return [r[0] for r in rows]

    def branch_commits_with_patch_id(self, patch_id: str, refname: str) -> list[Oid]:
        rows = self.db.execute(
            "SELECT c.oid FROM commits c JOIN branch_commits b ON b.commit_id=c.id "
            "AND b.refname=? WHERE c.patch_id=? ORDER BY b.seq",
            (refname, patch_id),
        )
        return [r[0] for r in rows]

    def branch_commits_with_subject(self, subject: str, refname: str) -> list[Oid]:
        rows = self.db.execute(
            "SELECT c.oid FROM commits c JOIN branch_commits b ON b.commit_id=c.id "
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

    def patch_id(self, oid: Oid) -> str | None:
        """The commit's patch-id, computed once and kept (upstream commits on demand)."""
        row = self.db.execute("SELECT id, patch_id FROM commits WHERE oid=?", (oid,)).fetchone()
        if row is not None and row[1] is not None:
            return row[1] or None
        value = self.repo.patch_id(oid)
        if row is not None:
            with contextlib.suppress(sqlite3.OperationalError):
                self.db.execute("UPDATE commits SET patch_id=? WHERE id=?", (value or "", row[0]))
        return value

    def fill_patch_ids(self, oids: list[Oid]) -> None:
        """Compute the missing patch-ids of these commits in one git pipeline and keep them
        (a scan asks for thousands of upstream patch-ids; one diff each would be minutes)."""
        missing = [
            oid for oid in oids if (row := self._patch_id_row(oid)) is not None and row[1] is None
        ]
        if not missing:
            return
        computed = dict(self.repo.patch_ids_of(missing))
        with contextlib.suppress(sqlite3.OperationalError):  # a read-only index: not cached
            self.db.executemany(
                "UPDATE commits SET patch_id=? WHERE oid=?",
                [(computed.get(oid, ""), oid) for oid in missing],
            )

    def _patch_id_row(self, oid: Oid) -> tuple[int, str | None] | None:
        row: tuple[int, str | None] | None = self.db.execute(
            "SELECT id, patch_id FROM commits WHERE oid=?", (oid,)
        ).fetchone()
        return row

    def adapted_conflicts(self, upstream: Oid, carrier: Oid) -> bool | None:
        """Cached: does `upstream` conflict at the parent of its backport `carrier`?"""
        row = self.db.execute(
            "SELECT conflicts FROM adapted_checks WHERE upstream=? AND carrier=?",
            (upstream, carrier),
        ).fetchone()
        return None if row is None else bool(row[0])

    def keep_adapted_conflicts(self, upstream: Oid, carrier: Oid, conflicts: bool) -> None:
        with contextlib.suppress(sqlite3.OperationalError):
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

    def posting_cover(self, stem: str) -> tuple[str | None, int | None] | None:
        """What lore said of a posting (its cover letter's subject, how many patches were
        posted), when it was asked before."""
        row = self.db.execute(
            "SELECT cover, posted FROM posting_covers WHERE stem=?", (stem,)
        ).fetchone()
        return (row[0], row[1]) if row else None

    def keep_posting_cover(self, stem: str, cover: str | None, posted: int | None) -> None:
        with contextlib.suppress(sqlite3.OperationalError):  # read-only: just not kept
            self.db.execute(
                "INSERT OR REPLACE INTO posting_covers VALUES(?, ?, ?)", (stem, cover, posted)
            )

    def fixes_after_fork(self, refname: str) -> list[Oid]:
        """Upstream commits after the branch's fork with a resolved `Fixes:`, oldest first."""
        rows = self.db.execute(
            "SELECT DISTINCT c.oid, c.upstream_seq FROM fixes f JOIN commits c ON c.id=f.commit_id "
            "JOIN after_fork a ON a.commit_id=c.id AND a.refname=? "
            "WHERE f.target IS NOT NULL ORDER BY c.upstream_seq",
            (refname,),
        ).fetchall()
        return [r[0] for r in rows]

    def backports_in(self, refname: str) -> list[tuple[Oid, Oid]]:
        """(carrier, upstream) for the branch's commits naming an upstream commit, in branch
        order, each upstream commit once (its first carrier)."""
        rows = self.db.execute(
            "SELECT c.oid, u.upstream FROM upstream_refs u JOIN commits c ON c.id=u.commit_id "
            "JOIN branch_commits b ON b.commit_id=c.id AND b.refname=? ORDER BY b.seq",
            (refname,),
        ).fetchall()
        seen: set[Oid] = set()
        out = []
        for carrier, upstream in rows:
            if upstream not in seen and self.is_upstream(upstream):
                seen.add(upstream)
                out.append((carrier, upstream))
        return out

    def cached_result(self, key: str) -> str | None:
        """A result computed earlier from exactly the same inputs (the key names them all)."""
        row = self.db.execute("SELECT value FROM results WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def keep_result(self, key: str, value: str) -> None:
        with contextlib.suppress(sqlite3.OperationalError):  # read-only: just not kept
            self.db.execute("INSERT OR REPLACE INTO results VALUES(?, ?)", (key, value))

    def count(self) -> int:
        count: int = self.db.execute("SELECT COUNT(*) FROM commits").fetchone()[0]
        return count


def _readable(path: Path) -> bool:
    try:
        with contextlib.closing(sqlite3.connect(path)) as db:
            db.execute("PRAGMA quick_check").fetchall()
            db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        return True
    except sqlite3.DatabaseError:
        return False


def _same_subject(a: str, b: str) -> bool:
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


def _tags_json(tags: tuple[StableTag, ...]) -> str | None:
    if not tags:
        return None
    return json.dumps(
        [
            [t.noautosel, t.since, t.until, t.prerequisite, t.prerequisite_subject, t.comment]
            for t in tags
        ]
    )


def _tag_from_json(raw: list[object]) -> StableTag:
    noautosel, since, until, prereq, prereq_subject, comment = raw
    return StableTag(
        noautosel=bool(noautosel),
        since=tuple(since) if since else None,  # type: ignore[arg-type]
        until=tuple(until) if until else None,  # type: ignore[arg-type]
        prerequisite=prereq,  # type: ignore[arg-type]
        prerequisite_subject=prereq_subject,  # type: ignore[arg-type]
        comment=comment,  # type: ignore[arg-type]
    )
