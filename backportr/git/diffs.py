"""Diffs of commits: libgit2's diff against the first parent (cached for the last few
commits, shared by everything that reads it), the diff model built from it and the files a
commit touches.

Part of the git layer: `Repo.diffs`, a collaborator of `Repo`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from typing import TYPE_CHECKING

import pygit2
from pygit2.enums import DeltaStatus

from backportr.errors import BackportrError
from backportr.git.diff_model import CommitDiff, DiffHunk, DiffLine, Entry, FileChange, paths_of
from backportr.git.proc import GitAccess, GitHandle, read_object
from backportr.git.range_history import parse_changes
from backportr.model import Oid

if TYPE_CHECKING:
    from backportr.git.range_history import RangeHistory
    from backportr.git.search import Searches

FileEntries = tuple[str, Entry | None, Entry | None]
_TYPE_BITS = 0o170000  # of a mode: regular file, symlink
_REGULAR, _SYMLINK = 0o100000, 0o120000

_DIFF_CACHE = 256  # commits whose diffs are cached (Diffs.diff)
_LISTED_PER_PROCESS = 5_000  # commits whose paths one `git log --no-walk` lists (learn_paths)
_RAW_DIFFS = 64  # libgit2 diffs cached (Diffs.diff_to_parent)


class Diffs(GitAccess):
    """A commit's change (`repo.diffs`): the libgit2 diffs, the diff model and the paths
    a commit touches, cached for the commits asked about."""

    def __init__(self, repo: GitHandle, search: Searches) -> None:
        """`search`: the repository's (whose remembered ranges hold commits' paths)."""
        super().__init__(repo)
        self.search = search
        self._diff_cache: OrderedDict[Oid, CommitDiff] = OrderedDict()
        self._raw_diffs: OrderedDict[Oid, pygit2.Diff] = OrderedDict()
        self._files: dict[Oid, tuple[str, ...]] = {}
        self._listed: dict[Oid, tuple[str, ...]] = {}

    def diff_to_parent(self, oid: Oid) -> pygit2.Diff:
        """The commit's change against its first parent (the empty tree for a root). Shared
        by the diff model, the patch-id and the trial's file changes, so never changed in
        place (rename detection works on a diff of its own: `diff_with_renames`)."""
        cached = self._raw_diffs.get(oid)
        if cached is not None:
            self._raw_diffs.move_to_end(oid)
            return cached
        diff = self._new_diff(oid)
        self._raw_diffs[oid] = diff
        if len(self._raw_diffs) > _RAW_DIFFS:
            self._raw_diffs.popitem(last=False)
        return diff

    def diff_with_renames(self, oid: Oid) -> pygit2.Diff:
        """The commit's change with renames found (only a change that both adds and deletes
        files can hold one, and only then is the diff computed again)."""
        diff = self.diff_to_parent(oid)
        kinds = {delta.status for delta in diff.deltas}
        if DeltaStatus.ADDED in kinds and DeltaStatus.DELETED in kinds:
            diff = self._new_diff(oid)
            diff.find_similar()
        return diff

    def _new_diff(self, oid: Oid) -> pygit2.Diff:
        commit = self.repo.commit(oid)
        if commit.parents:
            return commit.parents[0].tree.diff_to_tree(commit.tree, context_lines=3)
        return commit.tree.diff_to_tree(swap=True, context_lines=3)

    def tree_diff_text(self, old: Oid, new: Oid, width: int = 72) -> tuple[str, str]:
        """The change from one tree to another as `git format-patch` prints it: the diffstat
        (with the summary of created and deleted files) and the diff, three lines of context."""
        before = read_object(self.git, old, "a patch's old tree").peel(pygit2.Tree)
        after = read_object(self.git, new, "a patch's new tree").peel(pygit2.Tree)
        diff = before.diff_to_tree(after, context_lines=3)
        stat = diff.stats.format(
            pygit2.enums.DiffStatsFormat.FULL | pygit2.enums.DiffStatsFormat.INCLUDE_SUMMARY,
            width,
        )
        return stat, diff.patch or ""

    def file_changes(self, oid: Oid) -> list[FileChange] | None:
        """What the commit does to each path it changes (old and new (blob, mode), None for
        absent), in path order, without a tree diff: for a commit of a
        remembered range, the entries its pass listed (no object read at all); for one whose
        paths were listed, only those entries looked up in its trees (a tree diff walks every
        entry of each directory a change touches: 3 ms a commit where directories hold
        hundreds of files, this a tenth of it). None when the paths are not known, or when
        the change could hold a rename or touches a non-file entry."""
        history = self._range_of(oid)
        listed = history.entries(oid) if history is not None else None
        if listed is not None:
            return _file_changes(
                (path, _listed_entry(old), _listed_entry(new)) for path, old, new in listed
            )
        paths = self.known_paths(oid)
        if not paths:
            return None
        commit = self.repo.commit(oid)
        before = commit.parents[0].tree if commit.parents else None
        return _file_changes(
            (path, _blob_entry(before, path), _blob_entry(commit.tree, path)) for path in paths
        )

    def diff(self, oid: Oid) -> CommitDiff:
        """The commit's change against its first parent as the diff model (the most recent
        `_DIFF_CACHE` commits' cached: trial, blame, symbol and context finders ask for the same
        ones, and a diff of a 20,000-line file costs tens of milliseconds)."""
        cached = self._diff_cache.get(oid)
        if cached is not None:
            self._diff_cache.move_to_end(oid)
            return cached
        changes = self.file_changes(oid)
        if changes is not None:
            diff = tuple(self._file_diff_of(c.new_path, c.old, c.new) for c in changes)
        else:
            patches = self.diff_to_parent(oid)
            diff = tuple(_file_diff(patch) for patch in patches if patch is not None)
        self._diff_cache[oid] = diff
        if len(self._diff_cache) > _DIFF_CACHE:
            self._diff_cache.popitem(last=False)
        return diff

    def files_touched(self, oid: Oid) -> tuple[str, ...]:
        """Every path the commit reads or writes against its first parent, sorted (from a
        remembered range's history when it holds the commit, or as `learn_paths` listed
        them: no diff)."""
        if oid not in self._files:
            known = self.known_paths(oid)
            self._files[oid] = known if known is not None else paths_of(self.diff(oid))
        return self._files[oid]

    def learn_paths(self, oids: Iterable[Oid]) -> None:
        """List the paths these commits change with one git process (`git log --no-walk
        --name-status --no-renames`, as a remembered range lists them): `files_touched` and
        `file_changes` then need no tree diff for them. At kernel scale libgit2's tree diff
        takes about 3 ms a commit, git's listing 0.3 ms. A commit git cannot list, or a root
        commit, is left to the tree diff."""
        wanted = [
            oid
            for oid in dict.fromkeys(oids)
            if oid not in self._files and self.known_paths(oid) is None
        ]
        for start in range(0, len(wanted), _LISTED_PER_PROCESS):
            part = wanted[start : start + _LISTED_PER_PROCESS]
            try:
                out = self.repo.run_git_bytes(
                    "log",
                    "--no-walk=unsorted",
                    "--stdin",
                    "--format=%x00%H%x1f%P%x1f%ct",
                    "--name-status",
                    "--no-renames",
                    "--diff-merges=first-parent",
                    input="".join(f"{oid}\n" for oid in part).encode("ascii"),
                )
            except BackportrError:
                return
            for raw in out.split(b"\0"):
                record = parse_changes(raw)
                if record is not None and record[1]:
                    self._listed[record[0]] = tuple(sorted(record[3]))

    def known_paths(self, oid: Oid) -> tuple[str, ...] | None:
        """The paths the commit changed, when a remembered range holds it or they were
        listed (`learn_paths`): no diff."""
        listed = self._listed.get(oid)
        if listed is not None:
            return listed
        history = self._range_of(oid)
        return history.paths(oid) if history is not None else None

    def _range_of(self, oid: Oid) -> RangeHistory | None:
        """The remembered range that holds the commit, if any."""
        return self.search.range_holding(oid)

    def _file_diff_of(self, path: str, old: Entry | None, new: Entry | None) -> FileChange:
        """One file's change as the tree diff gives it (three lines of context). The blobs
        stay referenced until the patch is read: a patch points into their data."""
        need = f"the diff of {path}"
        old_blob = read_object(self.git, old[0], need).peel(pygit2.Blob) if old else None
        new_blob = read_object(self.git, new[0], need).peel(pygit2.Blob) if new else None
        patch = pygit2.Patch.create_from(
            old_blob, new_blob, old_as_path=path, new_as_path=path, context_lines=3
        )
        return _file_diff(patch, old, new)


class _NotAFile(Exception):
    """A path names a submodule or a directory."""


def _blob_entry(tree: pygit2.Tree | None, path: str) -> Entry | None:
    """The file at `path` (its blob and mode), None when there is none."""
    if tree is None:
        return None
    try:
        entry = tree[path]
    except KeyError:
        return None
    if entry.type_str != "blob":
        raise _NotAFile(path)
    return (entry.id, int(entry.filemode))


def _listed_entry(entry: str | None) -> Entry | None:
    """A remembered range's `mode blob` as a tree entry gives it; a submodule or a directory
    raises `_NotAFile`."""
    if entry is None:
        return None
    mode, _, blob = entry.partition(" ")
    value = int(mode, 8)
    if value & _TYPE_BITS not in (_REGULAR, _SYMLINK):
        raise _NotAFile(blob)
    return (pygit2.Oid(hex=blob), value)


def _file_changes(entries: Iterable[FileEntries]) -> list[FileChange] | None:
    """The file changes of a commit from its paths' entries before and after, or None where
    a tree diff must say what changed: a path not changed as a file (the same entry, a
    submodule, a directory, a file turned symlink), or an add beside a delete (a rename)."""
    out: list[FileEntries] = []
    try:
        for path, old, new in entries:
            if old == new:
                return None  # no change to the file itself
            if old is not None and new is not None and (old[1] ^ new[1]) & _TYPE_BITS:
                return None  # a file turned symlink: a delete and an add to a tree diff
            out.append((path, old, new))
    except _NotAFile:
        return None  # a submodule or a directory: the tree diff says what changed
    if any(old is None for _, old, _ in out) and any(new is None for _, _, new in out):
        return None  # an add and a delete: a rename to be found on the tree diff
    return [FileChange(path, path, old, new) for path, old, new in out]


def _file_diff(
    patch: pygit2.Patch, old: Entry | None = None, new: Entry | None = None
) -> FileChange:
    """A file's change with its hunks; its blobs those given, else the patch's (None where
    the file is absent on that side)."""
    delta = patch.delta
    return FileChange(
        delta.old_file.path,
        delta.new_file.path,
        old or _side(delta.old_file, delta.status is DeltaStatus.ADDED),
        new or _side(delta.new_file, delta.status is DeltaStatus.DELETED),
        None,
        tuple(
            DiffHunk(
                hunk.old_start,
                hunk.old_lines,
                hunk.new_start,
                hunk.new_lines,
                hunk.header,
                tuple(
                    DiffLine(line.origin, line.content)  # type: ignore[arg-type]
                    for line in hunk.lines
                    if line.origin in _ORIGINS
                ),
            )
            for hunk in patch.hunks
        ),
    )


def _side(file: pygit2.DiffFile, absent: bool) -> Entry | None:
    return None if absent else (file.id, int(file.mode))


_ORIGINS = frozenset(" -+")  # not git's "no newline at end of file" markers
