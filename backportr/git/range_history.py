"""One range of history (a branch's fork .. the upstream tip) read once, so that blame and
path-limited logs inside it need not walk it again.

On a kernel-scale repository without a commit-graph, `git blame <fork>..<parent> -- file`
spends about a second walking the tens of thousands of commits since the fork, diffing trees
to learn which of them changed the file; a scan asks that thousands of times. One
`git log --name-status` pass over the range answers it for every file at once:

- blame is given the file's own history as grafts (`git blame -S`: each commit that changed
  the file, its parents replaced by the nearest commits that changed it too) and walks only
  those commits;
- a path-limited log (`git log --no-merges -n N <fork>..<commit> -- paths`) is answered from
  memory with git's own walk: commit-date order, and a merge followed only into the first
  parent where the paths are the same;
- a file's blob at a commit of the range is the blob the pass listed for the newest change
  to it along first parents (`--raw`): no lookup in the commit's tree, which at kernel scale
  reads a root and a directory of hundreds of entries per question, different at every
  commit (a fifth of a kernel-scale scan went to such lookups).

Both give what git gives over the whole range (a test compares every file at every commit of
a history with merges, renames, deletions and skewed dates). Where blame would look for a
file's origin under another name (the file added or re-added within the range, or absent
from a merge's parent) the question is left to git.
"""

from __future__ import annotations

import bisect
import heapq
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

from backportr.git.proc import read_object
from backportr.model import Oid

if TYPE_CHECKING:  # the parsing of a pass (`parse_changes`) runs where pygit2 is not loaded
    import pygit2

Changes = dict[str, str]
"""The paths a commit changed against its first parent -> what it did to each (`Change`)."""

Change = str
"""What a commit did to a path: git's status letter (A, D, M, T), then, where the pass listed
them (`--raw`), the path's mode and blob after the commit, as git prints them:
`M100644<40 hex>` (mode `000000` and a zero id where the commit deleted it)."""

_NO_MODE = "000000"
_GITLINK = "160000"


class RangeHistory:
    """The commits of `oldest..tip`: parents, commit dates and the paths each changed against
    its first parent.

    The range is cut into first-parent chains (each commit in one chain, at one position), and
    each path remembers the positions of the commits that changed it in each chain: the newest
    change at or before a commit along first parents is a binary search per chain crossed."""

    def __init__(
        self,
        git: pygit2.Repository,
        oldest: Oid,
        records: Iterable[tuple[Oid, tuple[Oid, ...], int, Changes]],
    ) -> None:
        self.oldest = oldest
        self._git = git
        self._parents: dict[Oid, tuple[Oid, ...]] = {}
        self._dates: dict[Oid, int] = {}
        self._changes: dict[Oid, Changes] = {}
        order: list[Oid] = []
        for oid, parents, date, changes in records:
            self._parents[oid] = parents
            self._dates[oid] = date
            order.append(oid)
            if changes:
                self._changes[oid] = changes
        self._chains: list[list[Oid]] = []
        self._where: dict[Oid, tuple[int, int]] = {}
        for head in order:
            if head in self._where:
                continue
            chain: list[Oid] = []
            commit: Oid | None = head
            while commit is not None and commit in self._parents and commit not in self._where:
                self._where[commit] = (len(self._chains), len(chain))
                chain.append(commit)
                parents = self._parents[commit]
                commit = parents[0] if parents else None
            self._chains.append(chain)
        self._changed_at: dict[str, dict[int, list[int]]] = {}
        for oid, changes in self._changes.items():
            chain_no, position = self._where[oid]
            for path in changes:
                self._changed_at.setdefault(path, {}).setdefault(chain_no, []).append(position)
        for chains in self._changed_at.values():
            for positions in chains.values():
                positions.sort()
        self._blobs: dict[tuple[Oid, str], str | None] = {}

    def __contains__(self, oid: object) -> bool:
        return oid in self._parents

    def __len__(self) -> int:
        return len(self._parents)

    def paths(self, oid: Oid) -> tuple[str, ...]:
        """The paths the commit changed against its first parent, sorted."""
        return tuple(sorted(self._changes.get(oid, {})))

    # -- blame ---------------------------------------------------------------------------------

    def blame_grafts(self, path: str, newest: Oid) -> tuple[Oid, list[str]] | None:
        """Where to start blaming `path` (the newest commit at or before `newest` that changed
        it, or the range's boundary when none did) and the graft lines of the file's history
        below it; None when git must walk the real history itself."""
        top = self._next_change((path,), newest)
        lines: list[str] = []
        seen = {top}
        stack = [top] if top in self._parents else []
        while stack:
            commit = stack.pop()
            parents = self._parents[commit]
            if self._changes.get(commit, {}).get(path, " ")[0] == "A" or (
                len(parents) > 1 and any(self._blob(p, path) is None for p in parents)
            ):
                return None  # blame would look for the file's origin under another name
            grafted = list(dict.fromkeys(self._next_change((path,), p) for p in parents))
            lines.append(" ".join([commit, *grafted]))
            for parent in grafted:
                if parent in self._parents and parent not in seen:
                    seen.add(parent)
                    stack.append(parent)
        return top, lines

    def _next_change(self, paths: tuple[str, ...], start: Oid, *, chain_end: bool = False) -> Oid:
        """Following first parents from `start` (the paths are the same all along that way):
        the first commit that changed one of `paths` against its first parent, the first commit
        outside the range, or a root. With `chain_end`, stop at the end of `start`'s chain."""
        commit = start
        while True:
            where = self._where.get(commit)
            if where is None:
                return commit
            chain_no, position = where
            found: int | None = None
            for path in paths:
                positions = self._changed_at.get(path, {}).get(chain_no)
                if positions:
                    at = bisect.bisect_left(positions, position)
                    if at < len(positions) and (found is None or positions[at] < found):
                        found = positions[at]
            chain = self._chains[chain_no]
            if found is not None:
                return chain[found]
            last = chain[-1]
            parents = self._parents[last]
            if chain_end or not parents:
                return last
            commit = parents[0]

    # -- path-limited log ----------------------------------------------------------------------

    def log(self, paths: list[str], newest: Oid, limit: int) -> list[Oid]:
        """`git log --format=%H --no-merges -n<limit> <oldest>..<newest> -- <paths>`: git's
        walk in commit-date order, skipping along first-parent chains where nothing changed
        (the same commits in the same order where commit dates do not go backwards)."""
        wanted = tuple(paths)
        found: list[Oid] = []
        queue: list[tuple[int, int, Oid]] = []
        seen: set[Oid] = set()

        def push(commit: Oid) -> None:
            if commit in self._parents and commit not in seen:
                seen.add(commit)
                heapq.heappush(queue, (-self._dates[commit], len(seen), commit))

        push(self._next_change(wanted, newest, chain_end=True))
        while queue and len(found) < limit:
            _, _, commit = heapq.heappop(queue)
            parents = self._parents[commit]
            changes = self._changes.get(commit, {})
            changed = any(p in changes for p in wanted)
            if len(parents) <= 1:
                if changed:
                    found.append(commit)
                follow = list(parents)
            else:
                follow = self._followed(commit, wanted, changed)
            for parent in follow:
                if parent in self._parents:
                    push(self._next_change(wanted, parent, chain_end=True))
        return found

    def pickaxe(self, text: bytes, paths: list[str], newest: Oid) -> tuple[Oid, str] | None:
        """`git log -S<text> --reverse --no-renames --no-textconv <oldest>..<newest> --
        <paths>`'s first commit and the first of its files (in path order) where the number
        of `text`'s non-overlapping occurrences changed: the oldest commit of the paths' log
        (`log`) with such a file, merges aside (git shows no diff of a merge without `-m`).
        The blobs are read in-process, each counted once: a scan asks hundreds of these, and
        a `git log -S` each cost DPDK's 50 ms."""
        wanted = set(paths)
        counts: dict[str, int] = {}

        def count(entry: str | None) -> int:
            if entry is None:
                return 0
            if entry not in counts:
                mode, _, oid = entry.partition(" ")
                data = (
                    f"Subproject commit {oid}\n".encode("ascii")  # git's text of a gitlink
                    if mode == _GITLINK
                    else read_object(self._git, oid, "a file's history").read_raw()
                )
                counts[entry] = data.count(text)
            return counts[entry]

        for commit in reversed(self.log(paths, newest, sys.maxsize)):
            parents = self._parents[commit]
            for path in sorted(p for p in self._changes.get(commit, {}) if p in wanted):
                before = self._blob(parents[0], path) if parents else None
                if count(before) != count(self._blob(commit, path)):
                    return commit, path
        return None

    def _followed(self, merge: Oid, paths: tuple[str, ...], changed: bool) -> list[Oid]:
        """git's history simplification at a merge: into the first relevant parent where the
        paths are the same, else into every parent. A parent outside the range is relevant
        only when it is the range's bottom itself (git's `relevant_commit`)."""
        for number, parent in enumerate(self._parents[merge]):
            if parent not in self._parents and parent != self.oldest:
                continue
            same = not changed if number == 0 else self._same(merge, parent, paths)
            if same:
                return [parent]
        return list(self._parents[merge])

    def _same(self, one: Oid, other: Oid, paths: tuple[str, ...]) -> bool:
        return all(self._blob(one, p) == self._blob(other, p) for p in paths)

    def blob_id(self, commit: Oid, path: str) -> str | None:
        """The id of the file's blob at the commit (None: absent)."""
        blob = self._blob(commit, path)
        return None if blob is None else blob.partition(" ")[2]

    def entries(self, oid: Oid) -> list[tuple[str, str | None, str | None]] | None:
        """What the commit did to each path it changed against its first parent: (path,
        `mode blob` before, after; None where absent), in path order, from the pass's
        listing; None when the pass listed no blobs, or for a root commit."""
        changes = self._changes.get(oid)
        parents = self._parents.get(oid)
        if not changes or not parents:
            return None
        if any(not _listed(change) for change in changes.values()):
            return None
        return [
            (path, self._blob(parents[0], path), _entry(changes[path])) for path in sorted(changes)
        ]

    def _blob(self, commit: Oid, path: str) -> str | None:
        """`mode blob` of the file at the commit, None where it has none. Inside the range the
        newest change to the path along first parents says it (the file is the same at every
        commit in between); the tree is read only at the range's bottom, where a listing
        left the blob out, or at a root."""
        if commit in self._parents:
            at = self._next_change((path,), commit)
            change = self._changes.get(at, {}).get(path)
            if change is not None and _listed(change):
                return _entry(change)
            commit = at  # the same file as at `commit`: no change between them
        key = (commit, path)
        if key not in self._blobs:
            if len(self._blobs) > 100_000:
                self._blobs.clear()
            tree = (
                read_object(self._git, commit, f"the history of {path}").peel(_commit_type()).tree
            )
            try:
                entry = tree[path]
                self._blobs[key] = f"{entry.filemode:o} {entry.id}"
            except KeyError:  # no such file there
                self._blobs[key] = None
        return self._blobs[key]


def _listed(change: Change) -> bool:
    """Did the pass list the blob the change left (`--raw`), or only its status letter?"""
    return len(change) > 1


def _entry(change: Change) -> str | None:
    """The `mode blob` a listed change leaves (None: it deleted the file), as `_blob` gives
    a tree's entry."""
    mode = change[1:7]
    return None if mode == _NO_MODE else f"{mode.lstrip('0')} {change[7:]}"


def parse_changes(raw: bytes) -> tuple[Oid, tuple[Oid, ...], int, Changes] | None:
    """One record of `git log --format=%x00%H%x1f%P%x1f%ct --no-renames` with `--raw
    --no-abbrev` (each change with its modes and blobs) or `--name-status`."""
    head, _, body = raw.lstrip(b"\n").partition(b"\n")
    fields = head.split(b"\x1f")
    if len(fields) != 3 or len(fields[0]) != 40:
        return None
    changes: Changes = {}
    for line in body.decode("utf-8", "surrogateescape").splitlines():
        status, tab, path = line.partition("\t")
        if not tab:
            continue
        if status.startswith(":"):  # `:<mode> <mode> <blob> <blob> <status>`: keep the new side
            _, new_mode, _, new_blob, letter = status[1:].split(" ")
            change = f"{letter[:1]}{new_mode}{new_blob}"
        else:
            change = status[:1]
        changes[sys.intern(_unquote(path))] = change  # a path is stored once
    parents = tuple(Oid(p) for p in fields[1].decode("ascii").split())
    return Oid(fields[0].decode("ascii")), parents, int(fields[2] or 0), changes


def _unquote(path: str) -> str:
    """git quotes a path holding a quote, a backslash or a control character C-style."""
    if not (path.startswith('"') and path.endswith('"') and len(path) >= 2):
        return path
    raw = path[1:-1].encode("utf-8", "surrogateescape")
    out = bytearray()
    escapes = {b"n": b"\n", b"t": b"\t", b'"': b'"', b"\\": b"\\", b"a": b"\a", b"b": b"\b"}
    escapes |= {b"f": b"\f", b"r": b"\r", b"v": b"\v"}
    i = 0
    while i < len(raw):
        byte = raw[i : i + 1]
        if byte == b"\\" and i + 1 < len(raw):
            nxt = raw[i + 1 : i + 2]
            if nxt in escapes:
                out += escapes[nxt]
                i += 2
                continue
            if raw[i + 1 : i + 4].isdigit():
                out.append(int(raw[i + 1 : i + 4], 8))
                i += 4
                continue
        out += byte
        i += 1
    return out.decode("utf-8", "surrogateescape")


def _commit_type() -> type[pygit2.Commit]:
    import pygit2  # already loaded: the repository read here is a pygit2 one

    return pygit2.Commit
