"""What a trial pick works on and answers, as values: a tree as a base commit plus changed
paths (`TreeState`), a hunk's range, a pick's outcome, the merged blobs states hold before
they are written (`HeldBlobs`), and the blobs the last file merges read (`RecentTexts`).
Shared by the trial (`git/trial.py`) and the code that reads its answers.

Part of the git layer (blob ids are pygit2's).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

import pygit2

from backportr.git.diff_model import Entry
from backportr.git.forced import Lines
from backportr.model import ApplyResult, Oid


@dataclass(frozen=True, slots=True)
class PickResult:
    """A pick's outcome and the state after it. `conflict_files` are the branch's paths (where
    git's cherry-pick leaves its markers); `conflict_sources` the same files at the paths the
    commit names, where its hunks and upstream history are (they differ after a rename)."""

    result: ApplyResult
    state: TreeState
    conflict_files: tuple[str, ...] = ()
    conflict_sources: tuple[str, ...] = ()


@dataclass(frozen=True)
class TreeState:
    """A tree as the base commit's tree plus changed paths (None: deleted)."""

    base: Oid
    overlay: dict[str, Entry | None] = field(default_factory=dict)

    def with_changes(self, changes: dict[str, Entry | None]) -> TreeState:
        merged = dict(self.overlay)
        merged.update(changes)
        return TreeState(self.base, merged)


_UNWRITTEN_BYTES = 64 << 20
"""Merged blobs held in memory, not yet written to the object database, up to this many bytes
(then all are written): a loose object costs about half a millisecond of file-system calls,
and nearly half of a kernel-scale scan's merged blobs are never read again."""
_RECENT_BYTES = 16 << 20
"""The bytes of recently read blobs cached (`RecentTexts`), the oldest dropped first; the
lines and summaries made of them (`Text`) hold about as much again each. At 32 MiB they were
some 90 MiB of a DPDK scan process's Python objects."""


class HeldBlobs:
    """Merged blobs by id, written to the object database only when something reads them
    from there (a later merge of the same file, a tree written from a state)."""

    def __init__(self, git: pygit2.Repository) -> None:
        self.git = git
        self._unwritten: dict[pygit2.Oid, bytes] = {}
        self._unwritten_bytes = 0

    def get(self, oid: pygit2.Oid) -> bytes | None:
        return self._unwritten.get(oid)

    def hold(self, data: bytes) -> pygit2.Oid:
        """A merged blob's id, the blob held until something reads it from the object
        database (`store`); past `_UNWRITTEN_BYTES` held, every held blob is written."""
        oid = pygit2.hash(data)
        if oid not in self._unwritten:
            self._unwritten[oid] = data
            self._unwritten_bytes += len(data)
            if self._unwritten_bytes > _UNWRITTEN_BYTES:
                for held in list(self._unwritten):
                    self.store(held)
        return oid

    def store(self, oid: pygit2.Oid) -> None:
        """Write a held blob to the object database (nothing for one already there)."""
        data = self._unwritten.pop(oid, None)
        if data is not None:
            self._unwritten_bytes -= len(data)
            self.git.create_blob(data)


@dataclass(slots=True)
class Text:
    """A blob's bytes and what the trial made of them: its lines, its xdiff summary."""

    data: bytes
    lines: list[bytes] | None = None
    summary: Lines | None = None

    def split_lines(self) -> list[bytes]:
        """The bytes split at each newline (the last piece: what follows the last one)."""
        if self.lines is None:
            self.lines = self.data.split(b"\n")
        return self.lines


def whole_lines(data: bytes) -> set[bytes]:
    """The lines of `data` a newline ends, without it: `line in whole_lines(data)` is
    `b"\n" + line + b"\n" in b"\n" + data`, asked of many lines in one pass over the data."""
    return set(data.split(b"\n")[:-1])


class RecentTexts:
    """The blobs the last file merges read, cached up to `_RECENT_BYTES`: a merge's decision
    reads its three blobs several times (the commit's hunks, how close the branch's change
    is, whether the diffs are forced), and a series merges the same file again."""

    def __init__(self, limit: int = _RECENT_BYTES) -> None:
        self._memo: OrderedDict[pygit2.Oid, Text] = OrderedDict()
        self._bytes = 0
        self._limit = limit

    def get(self, oid: pygit2.Oid, read: Callable[[], bytes]) -> Text:
        text = self._memo.get(oid)
        if text is not None:
            self._memo.move_to_end(oid)
            return text
        text = self._memo[oid] = Text(read())
        self._bytes += len(text.data)
        while self._bytes > self._limit and len(self._memo) > 1:
            _, dropped = self._memo.popitem(last=False)
            self._bytes -= len(dropped.data)
        return text
