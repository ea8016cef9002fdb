"""Blame inside one remembered range, in-process: git blame's answer without a git process.

A scan blames thousands of files at the parents of the commits it checks; each `git blame`
of a kernel-scale repository costs about 10 ms of process start and pack reading even when
the file's history in the range is a handful of commits (`git.range_history` already gives git that
history as grafts). Here the same walk runs on the same grafts with libgit2's diff of the
two blobs of each step (git's xdiff with its indent heuristic, no context), cached by blob pair:
the next question about the same file diffs only the versions it has not seen. Where a
scan gives it somewhere to keep them (the index: `DiffCache`), the pairs it diffed are cached
there too, for a scan's other processes, a sibling branch's scan and the next night's.

The walk is git blame's (`blame.c`, no `-M`/`-C`): a commit's lines go whole to the first
parent holding the same blob; otherwise the lines a parent's diff leaves unchanged go to that
parent, parent by parent in order, and what no parent takes is the commit's own. Lines that
reach a commit outside the range, or a root (git's boundaries), are left out, as the git
path leaves them. A test compares both on histories with merges, repeated lines, blank-line
runs, carriage returns and files without a final newline.
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
from collections.abc import Callable

import pygit2

from backportr.git.proc import read_object
from backportr.model import Oid, oids

Ranges = tuple[int, int, int, int]
"""The line ranges of a diff hunk, as blame keeps them compactly: old start, old lines, new
start, new lines (1-based; `DiffHunk` is the hunk itself)."""

Lines = list[tuple[int, int]]
"""Line ranges of one version of a file (1-based, inclusive). Two lines of the file at the
top can reach the same line of an older version by two ways through a merge: each counts,
as in git, so ranges may overlap."""

DiffCache = tuple[
    Callable[[str, str], tuple[Ranges, ...] | None],
    Callable[[list[tuple[str, str, tuple[Ranges, ...]]]], None],
]
"""Where blob pairs' hunks are cached between processes and runs: a lookup of one pair (None:
not cached) and a writer of those diffed since."""

_DIFF_FLAGS = pygit2.enums.DiffOption.INDENT_HEURISTIC | pygit2.enums.DiffOption.FORCE_TEXT
_CACHED_DIFFS = 100_000


class LineBlame:
    """git blame over graft lines (`RangeHistory.blame_grafts`), with the diffs it made cached
    (at most `_CACHED_DIFFS` blob pairs, the oldest forgotten first)."""

    def __init__(self, git: pygit2.Repository, cache: DiffCache | None = None) -> None:
        self._git = git
        self._diffs: OrderedDict[tuple[str, str], tuple[Ranges, ...]] = OrderedDict()
        self._cache = cache
        self._uncached: list[tuple[str, str, tuple[Ranges, ...]]] = []  # diffed, not yet cached

    def blame(
        self,
        top: Oid,
        grafts: list[str],
        blob_of: Callable[[Oid], str | None],
        ranges: list[tuple[int, int]],
    ) -> dict[Oid, int] | None:
        """Commit -> how many of the `ranges` lines of the file at `top` it last changed,
        walking the graft lines (`commit parent...`); `blob_of` gives the file's blob at a
        commit named there (None: absent), asked only of the commits lines reach. None when
        a blob cannot be read: git must answer."""
        parents: dict[Oid, list[Oid]] = {}
        for line in grafts:
            commit, *rest = oids(line)
            parents[commit] = rest
        children: dict[Oid, int] = dict.fromkeys(parents, 0)
        for rest in parents.values():
            for parent in rest:
                if parent in children:
                    children[parent] += 1
        pending: dict[Oid, Lines] = {top: _union(ranges)}
        ready = [top] if top in parents and children.get(top, 0) == 0 else []
        counts: dict[Oid, int] = {}
        while ready:
            commit = ready.pop()
            lines = pending.pop(commit, [])
            for parent in parents[commit]:
                if parent in children:
                    children[parent] -= 1
            own = self._pass(commit, parents[commit], lines, blob_of, pending)
            if own is None:
                return None
            if own and parents[commit]:  # a root's lines are a boundary's: left out
                counts[commit] = counts.get(commit, 0) + own
            ready += [p for p in dict.fromkeys(parents[commit]) if children.get(p) == 0]
        return counts

    def cache_diffs(self) -> None:
        """Cache where it was given (`DiffCache`) the diffs made since the last call."""
        if self._uncached and self._cache is not None:
            self._cache[1](self._uncached)
        self._uncached = []

    def _pass(
        self,
        commit: Oid,
        parents: list[Oid],
        lines: Lines,
        blob_of: Callable[[Oid], str | None],
        pending: dict[Oid, Lines],
    ) -> int | None:
        """Pass `commit`'s lines to its parents (into `pending`); how many stay its own."""
        if not lines or not parents:
            return _count(lines)
        blob = blob_of(commit)
        if blob is None:
            return None
        parent_blobs = [blob_of(parent) for parent in parents]
        for parent, parent_blob in zip(parents, parent_blobs, strict=True):
            if parent_blob == blob:
                pending.setdefault(parent, []).extend(lines)
                return 0
        for parent, parent_blob in zip(parents, parent_blobs, strict=True):
            if parent_blob is None:
                continue  # git's blame finds no origin there
            hunks = self._hunks(parent_blob, blob)
            if hunks is None:
                return None
            passed, lines = _split(lines, hunks)
            if passed:
                pending.setdefault(parent, []).extend(passed)
            if not lines:
                return 0
        return _count(lines)

    def _hunks(self, old: str, new: str) -> tuple[Ranges, ...] | None:
        key = (old, new)
        hunks = self._diffs.get(key)
        if hunks is None and self._cache is not None:
            hunks = self._cache[0](old, new)
        if hunks is None:
            need = "a blame of the conflicting lines"
            try:
                old_blob = read_object(self._git, old, need).peel(pygit2.Blob)
                new_blob = read_object(self._git, new, need).peel(pygit2.Blob)
            except ValueError:  # not a file (a submodule): no lines
                return None
            hunks = _diff(old_blob, new_blob)
            self._uncached.append((old, new, hunks))
        if key not in self._diffs:
            if len(self._diffs) >= _CACHED_DIFFS:
                self._diffs.popitem(last=False)
            self._diffs[key] = hunks
        return hunks


def _diff(old: pygit2.Blob, new: pygit2.Blob) -> tuple[Ranges, ...]:
    """The hunks of git's diff of two blobs, without context."""
    patch = pygit2.Patch.create_from(old, new, flag=_DIFF_FLAGS, context_lines=0, interhunk_lines=0)
    return tuple((h.old_start, h.old_lines, h.new_start, h.new_lines) for h in patch.hunks)


def _split(lines: Lines, hunks: tuple[Ranges, ...]) -> tuple[Lines, Lines]:
    """The new side's `lines` cut by a diff: those outside every hunk, renumbered as the old
    side's lines (what the parent had), and those the diff changed (still to be blamed)."""
    passed: Lines = []
    changed: Lines = []
    shift = 0  # old line = new line + shift, in the unchanged run being read
    start = 1  # the first new line of that run
    regions: list[tuple[int, int, int]] = []  # unchanged new-side runs: first, last, shift
    for old_start, old_lines, new_start, new_lines in hunks:
        first_new = new_start if new_lines else new_start + 1
        first_old = old_start if old_lines else old_start + 1
        regions.append((start, first_new - 1, shift))
        start = first_new + new_lines
        shift = first_old + old_lines - start
    regions.append((start, 1 << 62, shift))
    ends = [run_last for _, run_last, _ in regions]
    for first, last in lines:
        at = first
        for index in range(bisect.bisect_left(ends, at), len(regions)):
            run_first, run_last, run_shift = regions[index]
            if run_first > last:
                break
            if run_first > at:
                changed.append((at, run_first - 1))
                at = run_first
            end = min(last, run_last)
            if at <= end:
                passed.append((at + run_shift, end + run_shift))
                at = end + 1
            if at > last:
                break
        if at <= last:
            changed.append((at, last))
    return passed, changed


def _union(ranges: list[tuple[int, int]]) -> Lines:
    """The asked ranges with overlaps joined (git joins overlapping `-L` ranges)."""
    out: Lines = []
    for first, last in sorted(ranges):
        if out and first <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], last))
        else:
            out.append((first, last))
    return out


def _count(lines: Lines) -> int:
    return sum(last - first + 1 for first, last in lines)
