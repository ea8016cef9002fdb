"""What the index stores of one commit, read from its log record (pure: nothing here touches
git or the database; the writer assigns row ids and inserts). A batch of the bulk read is
prepared first (`preparing.py`, in the reader process) and finished here."""

from __future__ import annotations

from typing import NamedTuple

from backportr.git.log_records import LogRecord, log_record
from backportr.index.preparing import PreparedBatch, prepare_batch
from backportr.index.schema import tags_json
from backportr.model import ParsedMessage
from backportr.text.postings import posting_keys_of_raw
from backportr.text.relation_forms import DEFAULT, Vocabulary
from backportr.text.trailers import parse_message

COMMIT_COLUMNS = 8


class CommitRows(NamedTuple):
    """One commit's values for the commits table (its first `COMMIT_COLUMNS`, in the
    table's order) and its relation tables (no row ids)."""

    oid: str
    subject: str
    author_name: str
    author_email: str
    author_time: int
    commit_time: int
    parents: int
    stable_tags: str | None
    fixes: tuple[tuple[str, str | None, str], ...]  # ref, subject, form
    reverts: tuple[tuple[str | None, str | None], ...]
    upstream_refs: tuple[tuple[str, str], ...]
    stable_deps: tuple[tuple[str, str | None], ...]
    postings: tuple[tuple[str, int], ...]


def commit_rows(record: LogRecord, vocabulary: Vocabulary = DEFAULT) -> CommitRows:
    """The rows of one commit. Most commits name no relation: a keyword test on the message,
    lowercased once, lets them skip the trailer parse (unless the project's own fix
    patterns have no keyword to test)."""
    low = record.raw_message.lower()
    postings = tuple((k.stem, k.number) for k in posting_keys_of_raw(record.raw_message, low))
    if vocabulary.may_relate(low):
        return _related_rows(record, postings, vocabulary)
    return CommitRows(
        record.oid,
        record.subject,
        record.author_name,
        record.author_email,
        record.author_time,
        record.commit_time,
        len(record.parents),
        None,
        (),
        (),
        (),
        (),
        postings,
    )


def _related_rows(
    record: LogRecord, postings: tuple[tuple[str, int], ...], vocabulary: Vocabulary
) -> CommitRows:
    """The rows of a commit whose message may name relations: the full trailer parse."""
    parsed: ParsedMessage = parse_message(record.message, trailers=False, vocabulary=vocabulary)
    reverts: list[tuple[str | None, str | None]] = [
        (r, parsed.reverted_subject) for r in parsed.reverts
    ]
    if parsed.reverted_subject and not parsed.reverts:
        reverts.append((None, parsed.reverted_subject))
    return CommitRows(
        record.oid,
        parsed.subject,
        record.author_name,
        record.author_email,
        record.author_time,
        record.commit_time,
        len(record.parents),
        tags_json(parsed.stable_tags),
        tuple((f.ref, f.subject, f.form) for f in parsed.fixes),
        tuple(reverts),
        tuple((r.oid, r.form) for r in parsed.upstream_refs),
        tuple((d.ref, d.subject) for d in parsed.stable_deps),
        postings,
    )


class BatchRows(NamedTuple):
    """A batch's rows as the writer inserts them: every commit's values for the commits
    table, in order, and the full rows of those with relation rows (position, rows)."""

    commits: list[tuple[str, str, str, str, int, int, int, str | None]]
    related: list[tuple[int, CommitRows]]


def parse_batch(raws: list[bytes], vocabulary: Vocabulary = DEFAULT) -> list[CommitRows]:
    """`commit_rows` of each of a batch of raw `git log -z` records (a property test holds
    them equal), by the steps the writer takes (`prepare_batch`, `finish_batch`)."""
    prepared = prepare_batch(raws, every=vocabulary.reads_every_message, words=vocabulary.words)
    rows = finish_batch(prepared, vocabulary)
    related = dict(rows.related)
    return [
        related.get(i) or CommitRows(*values, (), (), (), (), ())
        for i, values in enumerate(rows.commits)
    ]


def finish_batch(batch: PreparedBatch, vocabulary: Vocabulary = DEFAULT) -> BatchRows:
    """The rows of a prepared batch: the trailer parse of the records that may name
    relations. A commit that names none keeps the values the preparation made (no row
    object per commit)."""
    postings = batch.postings
    commits: list[tuple[str, str, str, str, int, int, int, str | None]] = []
    related: list[tuple[int, CommitRows]] = []
    for i, item in enumerate(batch.items):
        if isinstance(item, bytes):
            rows = _related_rows(log_record(item), postings.get(i, ()), vocabulary)
            commits.append(rows[:COMMIT_COLUMNS])  # type: ignore[arg-type]
            if _relates(rows):
                related.append((i, rows))
        else:
            commits.append(item)
            if i in postings:
                related.append((i, CommitRows(*item, (), (), (), (), postings[i])))
    return BatchRows(commits, related)


def _relates(rows: CommitRows) -> bool:
    """Does the commit have rows in a relation table?"""
    return bool(
        rows.postings or rows.fixes or rows.reverts or rows.upstream_refs or rows.stable_deps
    )
