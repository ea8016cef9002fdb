"""When a file's diff is the same under every diff algorithm git has.

A three-way file merge is two diffs (base to ours, base to theirs) merged by one algorithm,
xdiff's `xdl_merge`, in libgit2 as in git. The diffs are where the two differ: libgit2 diffs
with Myers, git's merge-ort with histogram. Where each diff is forced, the merges are the
same, and libgit2's answer is git's without a git process.

A diff of A to B is forced when every line the two files share occurs once in each, in the
same order, and they differ in at most `_EXACT_COST` lines:
- the common lines are then the only longest common subsequence, and Myers, exact at that
  cost (xdiff's cost heuristics start past 256), matches all of them;
- histogram anchors on the rarest lines and recurses on either side of each run it takes:
  every shared line is unique, and in order, so every one is taken;
- both pass the same change groups to the same slide (`xdl_change_compact`).

A line is its bytes up to and with its newline (a last line without one differs from the
same text with one), as xdiff reads it. A file with a NUL in its first 8,000 bytes is
binary to git, whose merge then conflicts: never forced.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass

_EXACT_COST = 200
_BINARY_PROBE = 8000


def records(data: bytes) -> list[bytes]:
    """A file's lines as xdiff reads them: each with its newline, the last as it ends."""
    lines = data.split(b"\n")
    last = lines.pop()
    records = [line + b"\n" for line in lines]
    if last:
        records.append(last)
    return records


def is_binary(data: bytes) -> bool:
    """Does git take the file for binary (a NUL in its first 8,000 bytes)? Its merge of a
    binary file both sides changed conflicts."""
    return b"\0" in data[:_BINARY_PROBE]


@dataclass(frozen=True, slots=True)
class Lines:
    """What `diff_is_forced` reads of a file, made once per blob: its records, the set of
    them, those it repeats, and whether git takes it for binary."""

    records: tuple[bytes, ...]
    present: frozenset[bytes]
    repeated: frozenset[bytes]
    binary: bool

    @classmethod
    def of(cls, data: bytes) -> Lines:
        found = records(data)
        counts = Counter(found)
        return cls(
            tuple(found),
            frozenset(counts),
            frozenset(line for line, n in counts.items() if n > 1),
            is_binary(data),
        )


def diff_is_forced(old: Lines, new: Lines) -> bool:
    """Is the diff of `old` to `new` the same under Myers and histogram (module doc)?"""
    if old.binary or new.binary:
        return False
    if not (old.repeated.isdisjoint(new.present) and new.repeated.isdisjoint(old.present)):
        return False  # a shared line one of them repeats
    shared = old.present & new.present
    if len(old.records) + len(new.records) - 2 * len(shared) > _EXACT_COST:
        return False
    where = {line: at for at, line in enumerate(new.records) if line in shared}
    order = [where[line] for line in old.records if line in shared]
    return all(x < y for x, y in itertools.pairwise(order))
