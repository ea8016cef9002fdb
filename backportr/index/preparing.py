"""The first step of the bulk read's parse, in the index's reader process (`worker.py`):
records split into batches, each searched as one buffer for the words that may name
relations and for posting lines; most commits' values for the commits table made here
(pure; it imports little, for the reader process starts while the indexing process reads).
`parsing.finish_batch` does the rest.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple

from backportr.git.log_records import raw_fields
from backportr.text.postings import keys_of_posting_lines, posting_lines, usual_link_keys
from backportr.text.relation_words import RELATION_WORDS

BATCH = 5000  # records a batch

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


def prepare_batch(
    raws: list[bytes], *, every: bool = False, words: tuple[bytes, ...] = ()
) -> PreparedBatch:
    """A batch of raw records searched as one buffer: lowercased once, each keyword found by
    one scan over all of them; most records (no relation) split and decoded, their usual
    `Link:` lines read by `usual_link_keys`, the others by the general line parse. With
    `every` (a project's own fix patterns, which have no keyword), every record is left
    for the full parse; `words`: the words of the phrases learned for the project, beside
    `RELATION_WORDS`."""
    buf, starts = _joined(raws)
    low = buf.lower()
    related = _records_holding(low, starts, RELATION_WORDS + words)
    links = _occurrences(low, starts, b"link")
    named_ids = _records_holding(low, starts, (b"message-id",))
    items: list[Fields | bytes] = []
    postings: dict[int, Postings] = {}
    for i, raw in enumerate(raws):
        oid, parents, atime, ctime, name, email, message = raw_fields(raw)
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
        if every or i in related or message[:6].lower() == b"revert":
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
    any of the words: one scan per word, one lookup per hit. Each word is searched in the
    records no earlier word was found in: where one held many (`fixes`: a third of DPDK's
    commits), those left are joined anew, and the other twenty words scan two thirds of
    the batch."""
    holding: set[int] = set()
    left: Sequence[int] = range(len(starts) - 1)  # the records `low` holds: batch indexes
    for word in words:
        hits: list[int] = []
        at = low.find(word)
        while at != -1:
            i = bisect_right(starts, at) - 1
            hits.append(i)
            at = low.find(word, starts[i + 1])
        if not hits:
            continue
        holding.update(left[i] for i in hits)
        if len(hits) * _SHRINK < len(left):
            continue
        found = set(hits)
        remaining = [i for i in range(len(left)) if i not in found]
        low, starts = _joined([low[starts[i] : starts[i + 1] - 1] for i in remaining])
        left = [left[i] for i in remaining]
    return holding


_SHRINK = 10  # a word found in a tenth of the records left: the others are joined anew


def _joined(records: list[bytes]) -> tuple[bytes, list[int]]:
    """The records joined by NULs, and where each starts (record i is
    `joined[starts[i]:starts[i + 1] - 1]`)."""
    starts = [0] * (len(records) + 1)
    offset = 0
    for i, record in enumerate(records):
        offset += len(record) + 1
        starts[i + 1] = offset
    return b"\0".join(records), starts


def batches(records: Iterable[bytes], size: int) -> Iterator[list[bytes]]:
    batch: list[bytes] = []
    for record in records:
        batch.append(record)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
