"""The diff model: a commit's change against its first parent, file by file and hunk by hunk,
as plain values (blob ids are pygit2's).

The git layer (`repo.diffs.diff`) builds it once per commit (three lines of context, as `git diff`;
no rename detection, so a renamed file's hunks name both paths) and keeps the most recent
ones; the trial applier, the conflict, symbol and context finders and the patch writer all
read this one model instead of walking libgit2's objects each in its own way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pygit2

Origin = Literal[" ", "-", "+"]


@dataclass(frozen=True, slots=True)
class DiffLine:
    """One line of a hunk: context (" "), removed ("-") or added ("+"); `content` keeps its
    line end, as git prints it."""

    origin: Origin
    content: str


@dataclass(frozen=True, slots=True)
class DiffHunk:
    """A hunk: its old-side and new-side ranges (1-based starts, line counts with context),
    git's function header (the text after the second `@@`), and its lines."""

    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    header: str
    lines: tuple[DiffLine, ...]

    def removed(self) -> list[str]:
        return [line.content for line in self.lines if line.origin == "-"]

    def added(self) -> list[str]:
        return [line.content for line in self.lines if line.origin == "+"]


Entry = tuple[pygit2.Oid, int]  # a file's blob and mode


@dataclass(frozen=True, slots=True)
class FileChange:
    """What a commit does to one file: its paths before and after, its (blob, mode) before
    and after (None: absent), and, where its text was diffed (`Diffs.diff`), its hunks (a
    binary file has none). `named`: the path the commit names, where the change is placed
    at another one (the branch's path of a file moved since the fork, `TrialApplier._placed`)."""

    old_path: str
    new_path: str
    old: Entry | None
    new: Entry | None
    named: str | None = None
    hunks: tuple[DiffHunk, ...] = ()

    def touches(self, paths: frozenset[str]) -> bool:
        return self.old_path in paths or self.new_path in paths or self.named in paths

    def touches_path(self, path: str) -> bool:
        return path in (self.old_path, self.new_path)


CommitDiff = tuple[FileChange, ...]


def paths_of(diff: CommitDiff) -> tuple[str, ...]:
    """Every path the change reads or writes, sorted."""
    return tuple(sorted({p for f in diff for p in (f.old_path, f.new_path)}))


def changed_lines(diff: CommitDiff) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The lines the change removes and adds (whitespace folded, in order), no context."""
    removed: list[str] = []
    added: list[str] = []
    for file in diff:
        for hunk in file.hunks:
            for line in hunk.lines:
                if line.origin == "-":
                    removed.append(" ".join(line.content.split()))
                elif line.origin == "+":
                    added.append(" ".join(line.content.split()))
    return tuple(removed), tuple(added)
