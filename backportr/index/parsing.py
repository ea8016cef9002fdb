"""What the index stores of one commit, read from its log record (pure: nothing here touches
git or the database; the writer assigns row ids and inserts)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from backportr.gitlog import LogRecord, log_record
from backportr.index.schema import tags_json
from backportr.model import ParsedMessage
from backportr.postings import (
    keys_of_posting_lines,
    posting_keys_of_raw,
    posting_lines,
    usual_link_keys,
)
from backportr.trailers import RELATION_WORDS, lowered_mentions_relations, parse_message

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
    fixes: tuple[tuple[str, str | None], ...]
    reverts: tuple[tuple[str | None, str | None], ...]
    upstream_refs: tuple[tuple[str, str], ...]
    stable_deps: tuple[tuple[str, str | None], ...]
    postings: tuple[tuple[str, int], ...]


def commit_rows(record: LogRecord) -> CommitRows:
    """The rows of one commit. Most commits name no relation: a keyword test on the message,
    lowercased once, lets them skip the trailer parse."""
    low = record.raw_message.lower()
    postings = tuple((k.stem, k.number) for k in posting_keys_of_raw(record.raw_message, low))
    if lowered_mentions_relations(low):
        return _related_rows(record, postings)
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


def _related_rows(record: LogRecord, postings: tuple[tuple[str, int], ...]) -> CommitRows:
    """The rows of a commit whose message may name relations: the full trailer parse."""
    parsed: ParsedMessage = parse_message(record.message, trailers=False)
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
        tuple((f.ref, f.subject) for f in parsed.fixes),
        tuple(reverts),
        tuple((r.oid, r.form) for r in parsed.upstream_refs),
        tuple((d.ref, d.subject) for d in parsed.stable_deps),
        postings,
    )


Fields = tuple[str, str, str, str, int, int, int, None]
"""A commit's values for the commits table (`CommitRows`' first `COMMIT_COLUMNS`) where it
names no relation (no stable tags)."""


Postings = tuple[tuple[str, int], ...]


class PreparedBatch(NamedTuple):
    """A batch as `prepare_batch` leaves it, in plain values (it crosses a pipe): per
    record its values for the commits table, or its raw record when its message may name
    relations (parsed in full by `finish_batch`); and the posting keys of the records that
    have some."""

    items: list[Fields | bytes]
    postings: dict[int, Postings]


class BatchRows(NamedTuple):
    """A batch's rows as the writer inserts them: every commit's values for the commits
    table, in order, and the full rows of those with relation rows (position, rows)."""

    commits: list[tuple[str, str, str, str, int, int, int, str | None]]
    related: list[tuple[int, CommitRows]]


def parse_batch(raws: list[bytes]) -> list[CommitRows]:
    """`commit_rows` of each of a batch of raw `git log -z` records (a property test holds
    them equal), by the steps the writer takes (`prepare_batch`, `finish_batch`)."""
    rows = finish_batch(prepare_batch(raws))
    related = dict(rows.related)
    return [
        related.get(i) or CommitRows(*values, (), (), (), (), ())
        for i, values in enumerate(rows.commits)
    ]


def finish_batch(batch: PreparedBatch) -> BatchRows:
    """The rows of a prepared batch: the trailer parse of the records that may name
    relations. A commit that names none keeps the values the preparation made (no row
    object per commit)."""
    postings = batch.postings
    commits: list[tuple[str, str, str, str, int, int, int, str | None]] = []
    related: list[tuple[int, CommitRows]] = []
    for i, item in enumerate(batch.items):
        if isinstance(item, bytes):
            rows = _related_rows(log_record(item), postings.get(i, ()))
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


def prepare_batch(raws: list[bytes]) -> PreparedBatch:
    """A batch of raw records searched as one buffer: lowercased once, each keyword found by
    one scan over all of them; most records (no relation) split and decoded, their usual
    `Link:` lines read by `usual_link_keys`, the others by the general line parse."""
    buf = b"\0".join(raws)
    low = buf.lower()
    starts = [0] * (len(raws) + 1)
    offset = 0
    for i, raw in enumerate(raws):
        offset += len(raw) + 1
        starts[i + 1] = offset
    related = _records_holding(low, starts, RELATION_WORDS)
    links = _occurrences(low, starts, b"link")
    named_ids = _records_holding(low, starts, (b"message-id",))
    items: list[Fields | bytes] = []
    postings: dict[int, Postings] = {}
    for i, raw in enumerate(raws):
        oid, parents, name, email, atime, ctime, message = raw.lstrip(b"\n").split(b"\x1f", 6)
        if i in links or i in named_ids:
            end = starts[i + 1] - 1
            begin = end - len(message)
            hits = links.get(i, [])
            usual = None
            if i not in named_ids and hits[0] > begin:
                usual = usual_link_keys(buf, hits, end)
            if usual is None:
                usual = keys_of_posting_lines(posting_lines(buf, low, begin, end))
            if usual:
                postings[i] = tuple((k.stem, k.number) for k in usual)
        if i in related or message[:6].lower() == b"revert":
            items.append(raw)
            continue
        newline = message.find(b"\n")
        subject = message if newline == -1 else message[:newline]
        items.append(
            (
                oid.decode("ascii"),
                subject.decode("utf-8", "replace").strip(),
                name.decode("utf-8", "replace"),
                email.decode("utf-8", "replace"),
                int(atime or 0),
                int(ctime or 0),
                len(parents.split()),
                None,
            )
        )
    return PreparedBatch(items, postings)


def _occurrences(low: bytes, starts: list[int], word: bytes) -> dict[int, list[int]]:
    """Where each record holding the word holds it."""
    found: dict[int, list[int]] = {}
    at = low.find(word)
    while at != -1:
        found.setdefault(bisect_right(starts, at) - 1, []).append(at)
        at = low.find(word, at + len(word))
    return found


def _records_holding(low: bytes, starts: list[int], words: tuple[bytes, ...]) -> set[int]:
    """The indexes of the records (record i is `low[starts[i]:starts[i + 1] - 1]`) holding
    any of the words: one scan per word over the whole batch, one lookup per hit."""
    holding: set[int] = set()
    for word in words:
        at = low.find(word)
        while at != -1:
            i = bisect_right(starts, at) - 1
            holding.add(i)
            at = low.find(word, starts[i + 1])
    return holding


def batches(records: Iterable[bytes], size: int) -> Iterator[list[bytes]]:
    batch: list[bytes] = []
    for record in records:
        batch.append(record)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
