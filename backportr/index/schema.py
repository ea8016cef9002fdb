"""The index's schema and the values it hands out (relations, refs, update statistics)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

from backportr.model import Oid, StableTag

T = TypeVar("T")

SCHEMA_VERSION = "15"
BUSY_MS = 60_000  # how long a connection waits for another's lock
_IN_MOST = 900  # values bound in one `IN (...)` (SQLite's limit is 999 in older builds)

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
    commit_id INTEGER NOT NULL, ref TEXT NOT NULL, subject TEXT, target TEXT, how TEXT,
    form TEXT NOT NULL DEFAULT 'Fixes:');
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
CREATE TABLE IF NOT EXISTS scan_findings(
    key TEXT PRIMARY KEY, branch TEXT NOT NULL, state TEXT NOT NULL, value TEXT NOT NULL
    ) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS postings(
    commit_id INTEGER NOT NULL, stem TEXT NOT NULL, number INTEGER NOT NULL,
    PRIMARY KEY(commit_id, stem)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS postings_stem ON postings(stem);
CREATE TABLE IF NOT EXISTS posting_covers(
    stem TEXT PRIMARY KEY, cover TEXT, posted INTEGER, patches TEXT) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS after_fork(
    refname TEXT NOT NULL, commit_id INTEGER NOT NULL,
    PRIMARY KEY(refname, commit_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS patch_ids_pending(refname TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS after_fork_pending(refname TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS commit_paths(commit_id INTEGER PRIMARY KEY, paths TEXT NOT NULL);
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
    form: str | None = None
    """How a `fixes` row's commit named its culprit (`Fixes:`, `Follow-up for`, ...:
    `text/relation_forms.py`); None in the other tables."""


@dataclass(frozen=True, slots=True)
class IndexedRef:
    refname: str
    name: str
    kind: str
    tip: Oid
    fork: Oid | None


@dataclass(frozen=True, slots=True)
class UpdateStats:
    """What an update read: new commits per ref, branches re-read after a rewrite, the
    upstream whose replacement (another ref, or its history rewritten) rebuilt the index,
    and the branches dropped because the repository no longer has them."""

    new_commits: dict[str, int]
    rewritten: tuple[str, ...]
    replaced_upstream: str | None = None
    dropped: tuple[str, ...] = ()


def in_chunks(values: Sequence[T]) -> Iterator[tuple[Sequence[T], str]]:
    """`values` in chunks small enough to bind in one `IN (...)`, each with its `?` marks."""
    for start in range(0, len(values), _IN_MOST):
        chunk = values[start : start + _IN_MOST]
        yield chunk, ",".join("?" * len(chunk))


def same_subject(a: str, b: str) -> bool:
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


_PLAIN_TAG = StableTag()
_PLAIN_TAG_JSON = json.dumps([[False, None, None, None, None, None]])


def tags_json(tags: tuple[StableTag, ...]) -> str | None:
    if not tags:
        return None
    if len(tags) == 1 and tags[0] == _PLAIN_TAG:  # a bare `Cc: stable@...`: most of them
        return _PLAIN_TAG_JSON
    return json.dumps(
        [
            [t.noautosel, t.since, t.until, t.prerequisite, t.prerequisite_subject, t.comment]
            for t in tags
        ]
    )


def tag_from_json(raw: list[object]) -> StableTag:
    noautosel, since, until, prereq, prereq_subject, comment = raw
    return StableTag(
        noautosel=bool(noautosel),
        since=tuple(since) if since else None,  # type: ignore[arg-type]
        until=tuple(until) if until else None,  # type: ignore[arg-type]
        prerequisite=prereq,  # type: ignore[arg-type]
        prerequisite_subject=prereq_subject,  # type: ignore[arg-type]
        comment=comment,  # type: ignore[arg-type]
    )
