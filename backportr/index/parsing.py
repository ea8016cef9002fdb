"""What the index stores of one commit, read from its log record (pure: nothing here touches
git or the database; the writer assigns row ids and inserts)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from backportr.gitlog import LogRecord, log_record
from backportr.index.schema import tags_json
from backportr.model import ParsedMessage
from backportr.postings import posting_keys_of_raw
from backportr.trailers import lowered_mentions_relations, parse_message


@dataclass(frozen=True, slots=True)
class CommitRows:
    """One commit's values for the commits table and its relation tables (no row ids)."""

    oid: str
    parents: int
    author_name: str
    author_email: str
    author_time: int
    commit_time: int
    subject: str
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
    if lowered_mentions_relations(low):
        parsed = parse_message(record.message, trailers=False)
    else:
        parsed = ParsedMessage(subject=record.subject)
    reverts: list[tuple[str | None, str | None]] = [
        (r, parsed.reverted_subject) for r in parsed.reverts
    ]
    if parsed.reverted_subject and not parsed.reverts:
        reverts.append((None, parsed.reverted_subject))
    return CommitRows(
        oid=record.oid,
        parents=len(record.parents),
        author_name=record.author_name,
        author_email=record.author_email,
        author_time=record.author_time,
        commit_time=record.commit_time,
        subject=parsed.subject,
        stable_tags=tags_json(parsed.stable_tags),
        fixes=tuple((f.ref, f.subject) for f in parsed.fixes),
        reverts=tuple(reverts),
        upstream_refs=tuple((r.oid, r.form) for r in parsed.upstream_refs),
        stable_deps=tuple((d.ref, d.subject) for d in parsed.stable_deps),
        postings=tuple((k.stem, k.number) for k in posting_keys_of_raw(record.raw_message, low)),
    )


def parse_batch(raws: list[bytes]) -> list[CommitRows]:
    """The rows of a batch of raw `git log -z` records (a worker process's unit of work)."""
    return [commit_rows(log_record(raw)) for raw in raws]


def batches(records: Iterable[bytes], size: int) -> Iterator[list[bytes]]:
    batch: list[bytes] = []
    for record in records:
        batch.append(record)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
