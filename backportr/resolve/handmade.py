"""Files a branch's maintainers adapt by hand, learned from the branch's own backports.

`.mailmap`, maintainer lists, release notes: each branch has its own version of them, and its
backports change them otherwise than their upstream commit did (other context, other lines,
or not at all). A conflict there is a hunk the maintainer rewrites, never a reason to pull
in the upstream commits that last changed those lines. A file is such a place when, of the
branch's newest `LOOKED_AT` backports whose upstream commit changed it, at least `LEAST`
and at least half changed it otherwise (a file of the same name elsewhere is the same file,
moved on the branch). A driver's or a library's file adapted as often is judged the same
way, file by file; a directory never is (DPDK 23.11: `.mailmap` alone).
"""

from __future__ import annotations

from pathlib import PurePosixPath

from backportr.git.names import Ref
from backportr.git.repo import Repo
from backportr.index import CommitIndex
from backportr.model import Oid

LOOKED_AT = 300  # newest backports of a branch read
LEAST = 5  # backports that changed the file otherwise, at least
SHARE = 0.5  # of those whose upstream commit changed it


class HandAdaptedFiles:
    """Which files each branch adapts by hand, judged path by path when a conflict asks
    (a resolve that meets no conflict reads nothing)."""

    def __init__(self, index: CommitIndex, repo: Repo) -> None:
        self.index = index
        self.repo = repo
        self._touched: dict[Oid, list[tuple[Oid, Oid, frozenset[str]]]] = {}  # by branch tip
        self._judged: dict[tuple[Oid, str], bool] = {}

    def covers(self, branch: Ref, path: str) -> bool:
        """Do the branch's backports adapt this file by hand?"""
        key = (branch.tip, path)
        if key not in self._judged:
            self._judged[key] = self._judge(branch, path)
        return self._judged[key]

    def _judge(self, branch: Ref, path: str) -> bool:
        touched = adapted = 0
        name = PurePosixPath(path).name
        for carrier, upstream, paths in self._backports(branch):
            if path not in paths:
                continue
            ours = self._changes(carrier)
            ours_change = ours.get(path) or next(
                (c for p, c in ours.items() if PurePosixPath(p).name == name), None
            )
            touched += 1
            adapted += ours_change != self._changes(upstream).get(path)
        return adapted >= LEAST and adapted >= SHARE * touched

    def _backports(self, branch: Ref) -> list[tuple[Oid, Oid, frozenset[str]]]:
        """The newest backports, each with the paths its upstream commit changes."""
        if branch.tip not in self._touched:
            pairs = self.index.reader.backports_in(branch.refname)[-LOOKED_AT:]
            self.repo.diffs.learn_paths(u for _, u in pairs)  # one git process for them all
            self._touched[branch.tip] = [(c, u, self.repo.changed_paths(u)) for c, u in pairs]
        return self._touched[branch.tip]

    def _changes(self, commit: Oid) -> dict[str, tuple[tuple[str, str], ...]]:
        """Each file the commit changes: its hunks' lines (context too: where the branch's
        file differs around the change, as a sorted list does, the context differs)."""
        return {
            file.new_path: tuple((ln.origin, ln.content) for h in file.hunks for ln in h.lines)
            for file in self.repo.diffs.diff(commit)
        }
