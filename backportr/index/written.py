"""Resolving the commit ids written in messages (`Fixes:`, reverts, `Stable-dep-of:`) to the
commits they name, after an update stored new ones: by id when it names one commit whose
subject agrees, else by subject; a backport's id means the upstream commit it carries."""

from __future__ import annotations

import sqlite3

from backportr.index.schema import same_subject
from backportr.model import Oid, ProgressCallback

_MANY_TARGETS = 10_000  # resolved ids written with the target lookup rebuilt after


def resolve_pending(db: sqlite3.Connection, progress: ProgressCallback) -> None:
    """Resolve the ids written in new Fixes:, revert and Stable-dep-of: lines.

    One range-join query finds the commits every written prefix names; only the rows
    whose id is wrong or ambiguous fall back to a query by subject."""
    for table in ("fixes", "reverts", "stable_deps"):
        candidates: dict[int, list[tuple[Oid, str, int | None, int]]] = {}
        pending: dict[int, tuple[int, str | None, str | None]] = {}
        rows = db.execute(
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
            target, how = _resolve_written(
                db, ref, subject, writer, candidates.get(rowid, []), to_upstream=table != "reverts"
            )
            updates.append((target, how, rowid))
            if done % 5000 == 0:
                progress(f"resolving {table}", done, len(pending))
        _update_targets(db, table, updates)


def _update_targets(
    db: sqlite3.Connection, table: str, updates: list[tuple[Oid | None, str, int]]
) -> None:
    """Set the resolved targets. Many at once (a new index) go in with the table's
    target lookup dropped and sorted again after: four times faster than keeping it."""
    many = len(updates) > _MANY_TARGETS
    if many:
        db.execute(f"DROP INDEX IF EXISTS {table}_target")
    db.executemany(f"UPDATE {table} SET target=?, how=? WHERE rowid=?", updates)
    if many:
        db.execute(f"CREATE INDEX IF NOT EXISTS {table}_target ON {table}(target)")


def _resolve_written(
    db: sqlite3.Connection,
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
            carried = db.execute(
                "SELECT upstream FROM upstream_refs WHERE commit_id=?", (cid,)
            ).fetchone()
            if carried is not None:
                oid, how = carried[0], "stable-id"
        by_id = oid
        if subject is None or same_subject(subject, found_subject):
            return oid, how
    if subject:
        row = db.execute(
            "SELECT oid FROM commits WHERE subject = ? AND upstream_seq IS NOT NULL "
            "AND id != ? ORDER BY upstream_seq DESC LIMIT 1",
            (subject.strip(), writer),
        ).fetchone()
        if row is not None:
            return row[0], "subject"
    if by_id is not None:
        return by_id, "id"
    return None, "unresolved"
