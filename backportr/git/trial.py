"""Trial cherry-picks in memory, and where they conflict.

A cherry-pick is a 3-way merge whose ancestor is the picked commit's parent. Where every path
the commit reads is on the state, only those files can change, so the merge is done file by
file on exactly those paths (libgit2's merge_file): fast on a kernel-sized tree, and git's
answer (merge-ort finds no rename of a path that is still there). Where a path the commit
changes is absent from the state, or it adds a file to a directory the state lacks, the
file may have moved since the fork (DPDK's `drivers/net/intel/`, the kernel's `fs/cifs` ->
`fs/smb/client`): then git's own merge answers (`git.merge`, merge-ort with rename and
directory-rename detection), and the change lands at the branch's path, as `git
cherry-pick` puts it. A state is the branch tip plus an overlay of changed paths; nothing
touches refs, HEAD, the index or the work tree. Objects written to the object database are
fine.

Callers get per commit `clean`, `conflict` (with files and conflicting hunks) or `empty`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import cast

import pygit2
from pygit2.enums import DeltaStatus, FileMode

from backportr.git.diff_model import DiffHunk, Entry, FileChange, changed_lines
from backportr.git.forced import Lines, diff_is_forced, is_binary
from backportr.git.merge import Sides, TreeMerge, merge_tree_version
from backportr.git.proc import read_object
from backportr.git.repo import Repo
from backportr.git.treestate import (
    HeldBlobs,
    PickResult,
    RecentTexts,
    Text,
    TreeState,
    whole_lines,
)
from backportr.model import Oid, short

__all__ = ["FileChange", "PickResult", "TreeState", "TrialApplier"]

# result, changes, conflicting files (the branch's paths), the same as the commit names them
_PickOutcome = tuple[str, dict[str, "Entry | None"], tuple[str, ...], tuple[str, ...]]
_DELETED: None = None


class _GitMerges:
    """What `_merge_file` answers where git's file merge must answer."""


_GIT_MERGES = _GitMerges()
# Changes to one file this close (lines of the base apart) are merged by git as well as by
# libgit2. Farther apart the two merges agree but on files of nothing but a dozen repeated
# lines (one merge in 6,000 of benchmarks/merge_fuzz.py; none in real samples).
_CLOSE_LINES = 20


class TrialApplier:
    """Applies commits to in-memory states of one repository."""

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self.git = repo.git
        self._changes: dict[Oid, list[FileChange]] = {}
        self._trees: dict[Oid, pygit2.Tree] = {}
        # Trials repeat: the fewest-prerequisites search re-applies prefixes, and every round
        # of the closure re-tries the series. A pick depends only on the contents of the paths
        # the commit touches, and a merge only on its three blobs: both are cached on that.
        self._picks: dict[tuple[object, ...], _PickOutcome] = {}
        self._merges: dict[tuple[object, ...], pygit2.Oid | None] = {}
        self._asking: dict[tuple[object, ...], tuple[str, Sides]] | None = None  # `_merge_together`
        self._spans: dict[
            tuple[pygit2.Oid, pygit2.Oid], tuple[list[tuple[int, int]], list[bytes]]
        ] = {}
        self._forced_pairs: dict[tuple[pygit2.Oid, pygit2.Oid], bool] = {}
        # Where git's merge found a file a commit names, on a base it had moved away from:
        # by the base, the path and the file's blob before the commit (rename detection
        # compares that blob: another version of the file may be found nowhere).
        self._found_at: dict[tuple[Oid, str, pygit2.Oid], str] = {}
        # Where it found such a file nowhere (a modify/delete conflict): the base, the path
        # and the file's blob before the commit, as rename detection compares that blob.
        self._nowhere: set[tuple[Oid, str, pygit2.Oid]] = set()
        self._changed: dict[Oid, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        self._held = HeldBlobs(self.git)
        self._recent = RecentTexts()

    # -- states ----------------------------------------------------------------------------

    def lookup(self, state: TreeState, path: str) -> Entry | None:
        if path in state.overlay:
            return state.overlay[path]
        return self._tree_entry(state.base, path)

    def _tree(self, commit: Oid) -> pygit2.Tree:
        if commit not in self._trees:
            self._trees[commit] = self.repo.commit(commit).tree
        return self._trees[commit]

    def _tree_entry(self, commit: Oid, path: str) -> Entry | None:
        try:
            entry = self._tree(commit)[path]
        except KeyError:
            return None
        if entry.filemode == FileMode.TREE:
            return None
        return entry.id, int(entry.filemode)

    def write_tree(self, state: TreeState) -> Oid:
        """Materialize a state as a tree object (for comparisons and for `git am` checks)."""
        if not state.overlay:
            return Oid(str(self._tree(state.base).id))
        index = pygit2.Index()
        index.read_tree(self._tree(state.base))
        for path, entry in state.overlay.items():
            if entry is None:
                if path in index:
                    index.remove(path)
            else:
                self._held.store(entry[0])
                index.add(pygit2.IndexEntry(path, entry[0], _mode(entry[1])))
        return Oid(str(index.write_tree(self.git)))

    def file_text(self, state: TreeState, path: str) -> str | None:
        """The text at `path` on the state; None where there is no file (absent, or a
        submodule pointer: a commit of another repository)."""
        entry = self.lookup(state, path)
        if entry is None or entry[1] == FileMode.COMMIT:
            return None
        return self._data(entry, f"the file {path} of a trial").decode("utf-8", "surrogateescape")

    # -- commits ---------------------------------------------------------------------------

    def changes(self, commit: Oid) -> list[FileChange]:
        """The commit's file changes against its first parent (renames detected)."""
        if commit not in self._changes:
            known = self.repo.diffs.file_changes(commit)
            if known is not None:  # no tree diff needed
                self._changes[commit] = known
                return self._changes[commit]
            diff = self.repo.diffs.diff_with_renames(commit)
            out = []
            for delta in diff.deltas:
                old = (
                    None
                    if delta.status == DeltaStatus.ADDED
                    else (delta.old_file.id, int(delta.old_file.mode))
                )
                new = (
                    None
                    if delta.status == DeltaStatus.DELETED
                    else (delta.new_file.id, int(delta.new_file.mode))
                )
                out.append(FileChange(delta.old_file.path, delta.new_file.path, old, new))
            self._changes[commit] = out
        return self._changes[commit]

    def changed_lines(self, commit: Oid) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The lines a commit removes and adds (whitespace folded, in order), without context."""
        if commit not in self._changed:
            self._changed[commit] = changed_lines(self.repo.diffs.diff(commit))
        return self._changed[commit]

    def hunks(self, commit: Oid, path: str | None = None) -> list[tuple[str, DiffHunk]]:
        """The commit's hunks against its first parent, each with the old path it changes."""
        return [
            (file.old_path, hunk)
            for file in self.repo.diffs.diff(commit)
            if path is None or file.touches_path(path)
            for hunk in file.hunks
        ]

    def paths(self, commit: Oid) -> frozenset[str]:
        """The paths a pick of `commit` reads and may change (both sides of a rename)."""
        return frozenset(p for c in self.changes(commit) for p in (c.old_path, c.new_path))

    def pick(self, commit: Oid, state: TreeState, only: frozenset[str] | None = None) -> PickResult:
        """Cherry-pick `commit` onto `state`; on conflict the state takes the commit's side.
        With `only`, just the commit's changes that touch those paths (a pick is path by
        path, so on them the outcome is the whole pick's)."""
        key: tuple[object, ...]
        placed = self._placed(commit, state, only)
        if placed is None:
            # git's merge reads the whole state: the key is the whole state (`only` would
            # not change the outcome on those paths, so the whole pick is done).
            key = (commit, state.base, frozenset(state.overlay.items()))
            if key not in self._picks:
                self._picks[key] = self._pick_by_git(commit, state)
        else:
            touched = [c for c in placed if only is None or c.touches(only)]
            paths = sorted({p for c in touched for p in (c.old_path, c.new_path)})
            key = (commit, only is not None, *paths, *(self.lookup(state, p) for p in paths))
            if key not in self._picks:
                outcome = self._pick(touched, state)
                if outcome[0] == "empty" and not self._already_there(touched, state):
                    # Empty only by a three-way merge (its change is there, adapted): libgit2's
                    # file merge and git's differ on such overlaps; git's answer is the one.
                    outcome = self._confirmed_empty(commit, state)
                self._picks[key] = outcome
        result, changes, conflicts, sources = self._picks[key]
        if result == "empty":
            return PickResult("empty", state)
        return PickResult(
            result,  # type: ignore[arg-type]
            state.with_changes(changes),
            conflicts,
            sources,
        )

    def landing_paths(self, commit: Oid, state: TreeState) -> tuple[str, ...] | None:
        """Where a pick of `commit` onto `state` writes, at the state's paths, when its paths
        may have moved there (`_moved`); None when they are the commit's own."""
        placed = self._placed(commit, state, None)
        if placed is not None and not any(c.named for c in placed):
            return None
        before = state.overlay
        after = self.pick(commit, state).state.overlay
        return tuple(sorted(p for p, e in after.items() if p not in before or before[p] != e))

    def _already_there(self, changes: list[FileChange], state: TreeState) -> bool:
        """Is each of these file changes there as it is (the same blob, or absent where it
        deletes)?"""
        return all(
            (self.lookup(state, c.new_path) or (None,))[0] == (c.new[0] if c.new else None)
            for c in changes
        )

    def _confirmed_empty(self, commit: Oid, state: TreeState) -> _PickOutcome:
        """An empty pick git agrees is empty; else git's answer (a conflict)."""
        if merge_tree_version() is None:
            return "empty", {}, (), ()
        outcome = self._pick_by_git(commit, state)
        return ("empty", {}, (), ()) if outcome[0] != "conflict" else outcome

    def _moved(self, commit: Oid, state: TreeState, only: frozenset[str] | None) -> bool:
        """Must git's merge answer this pick (`_placed`)?"""
        return self._placed(commit, state, only) is None

    def _placed(
        self, commit: Oid, state: TreeState, only: frozenset[str] | None
    ) -> list[FileChange] | None:
        """The commit's file changes as the file-by-file merge makes them on the state; None
        where git's merge must answer: a path the commit changes or deletes is absent there,
        or it adds a file to a directory the state lacks (git's directory-rename detection
        looks for it elsewhere). A change of a file's content whose path git's merge found
        moved on the same base before, from the same blob (`_found_at`), is placed at the
        branch's path instead: the same three-way merge of the same three blobs, without a
        git process (a scan asks for thousands of such picks; the fewest-prerequisites
        search picks a commit onto many states of one base). Another version of the file
        asks git again: rename detection compares that version, and may find it nowhere.
        Never None where the installed git cannot merge in memory: then every pick is file
        by file at the paths the commit names."""
        out: list[FileChange] = []
        for change in self.changes(commit):
            if only is not None and not change.touches(only):
                out.append(change)
                continue
            if change.old is not None and self.lookup(state, change.old_path) is None:
                found = self._found_at.get((state.base, change.old_path, change.old[0]))
                if (
                    found is not None
                    and change.new is not None
                    and change.old_path == change.new_path
                    and self.lookup(state, found) is not None
                ):
                    out.append(FileChange(found, found, change.old, change.new, change.old_path))
                    continue
                if (state.base, change.old_path, change.old[0]) in self._nowhere and not (
                    self._adds_files(state)
                ):
                    out.append(change)  # git found it nowhere: modify/delete, as before
                    continue
                if merge_tree_version() is not None:
                    return None
            elif (
                change.old is None
                and change.new is not None
                and not self._has_directory(state, change.new_path.rpartition("/")[0])
                and merge_tree_version() is not None
            ):
                return None
            out.append(change)
        return out

    def _adds_files(self, state: TreeState) -> bool:
        """Does the state hold a file its base lacks (one git's rename detection could
        match a moved file to)?"""
        return any(e is not None and self._tree_entry(state.base, p) is None
                   for p, e in state.overlay.items())  # fmt: skip

    def _has_directory(self, state: TreeState, directory: str) -> bool:
        if not directory:
            return True
        prefix = directory + "/"
        if any(p.startswith(prefix) and e is not None for p, e in state.overlay.items()):
            return True
        try:
            entry = self._tree(state.base)[directory]
        except KeyError:
            return False
        return entry.filemode == FileMode.TREE

    def _pick_by_git(self, commit: Oid, state: TreeState) -> _PickOutcome:
        """The pick as `git cherry-pick` does it (`git.merge`), as overlay changes; on conflict
        each conflicted path takes the commit's side (stage 3; none: the commit deleted it)."""
        onto = self.write_tree(state)
        merge = self.repo.cherry_pick_tree(commit, onto)
        before = read_object(self.git, onto, f"the tree {short(commit)} is picked onto")
        after = read_object(self.git, merge.tree, f"the tree of the pick of {short(commit)}")
        assert isinstance(before, pygit2.Tree) and isinstance(after, pygit2.Tree)
        changes: dict[str, Entry | None] = {}
        for delta in before.diff_to_tree(after).deltas:
            if delta.status == DeltaStatus.DELETED:
                changes[delta.old_file.path] = _DELETED
            else:
                changes[delta.new_file.path] = (delta.new_file.id, int(delta.new_file.mode))
        self._learn_where(commit, state, merge, changes)
        if merge.clean:
            return ("clean" if changes else "empty"), changes, (), ()
        conflicts = sorted({s.path for s in merge.staged})
        for path in conflicts:
            changes[path] = next(
                ((s.blob, s.mode) for s in merge.staged if s.path == path and s.stage == 3),
                _DELETED,
            )
        return "conflict", changes, tuple(conflicts), self._sources(commit, merge, conflicts)

    def _learn_where(
        self, commit: Oid, state: TreeState, merge: TreeMerge, written: dict[str, Entry | None]
    ) -> None:
        """Where git's merge put the commit's changes to files absent from the state: a
        conflicted path whose base (stage 1) is a change's old blob is that change's file;
        in a clean merge, the one path written that the commit does not name is the one
        moved file it changes. Cached for `_placed`."""
        moved = [
            c
            for c in self.changes(commit)
            if c.old is not None
            and c.new is not None
            and c.old_path == c.new_path
            and self.lookup(state, c.old_path) is None
        ]
        if not moved:
            return
        by_old = {c.old[0]: c.old_path for c in moved if c.old is not None}
        for staged in merge.staged:
            if staged.stage == 1 and staged.blob in by_old:
                self._found_at[(state.base, by_old[staged.blob], staged.blob)] = staged.path
        if not self._adds_files(state):
            ours = {s.path for s in merge.staged if s.stage == 2}
            for change in moved:
                assert change.old is not None
                stages = {s.stage for s in merge.staged if s.path == change.old_path}
                if stages and 2 not in stages and change.old_path not in ours:
                    # a modify/delete at the commit's own path: git found no moved copy
                    self._nowhere.add((state.base, change.old_path, change.old[0]))
        named = self.paths(commit)
        elsewhere = [p for p, e in written.items() if e is not None and p not in named]
        if merge.clean and len(moved) == 1 and len(elsewhere) == 1:
            assert moved[0].old is not None
            self._found_at[(state.base, moved[0].old_path, moved[0].old[0])] = elsewhere[0]

    def _sources(self, commit: Oid, merge: TreeMerge, conflicts: list[str]) -> tuple[str, ...]:
        """Each conflicted path as the commit names it: the change whose old blob is the
        path's base (stage 1) or whose new blob is its stage 3."""
        by_blob: dict[pygit2.Oid, str] = {}
        for change in self.changes(commit):
            if change.new is not None:
                by_blob.setdefault(change.new[0], change.new_path)
            if change.old is not None:
                by_blob[change.old[0]] = change.new_path if change.new else change.old_path
        sources = []
        for path in conflicts:
            stages = sorted((s for s in merge.staged if s.path == path), key=lambda s: s.stage)
            sources.append(next((by_blob[s.blob] for s in stages if s.blob in by_blob), path))
        return tuple(sources)

    def _pick(self, placed: list[FileChange], state: TreeState) -> _PickOutcome:
        """The file-by-file pick of these changes (`_placed`) onto the state. The file merges
        git must answer are asked of one git process first (`_merge_together`)."""
        self._merge_together(placed, state)
        changes: dict[str, Entry | None] = {}
        conflicts: list[tuple[str, str]] = []  # the branch's path, the commit's
        applied_anything = False
        for change in placed:
            outcome = self._merge_change(change, state)
            if outcome is None:
                path = change.new_path if change.new is not None else change.old_path
                conflicts.append((path, change.named or path))
                if change.old_path != change.new_path:
                    changes[change.old_path] = _DELETED
                changes[change.new_path] = change.new
                continue
            path_changes, changed = outcome
            applied_anything = applied_anything or changed
            changes.update(path_changes)
        if conflicts:
            ordered = sorted(set(conflicts))
            return "conflict", changes, tuple(p for p, _ in ordered), tuple(n for _, n in ordered)
        if not applied_anything:
            return "empty", {}, (), ()
        return "clean", changes, (), ()

    def _merge_together(self, placed: list[FileChange], state: TreeState) -> None:
        """The file merges of these changes that git must answer (`_merge_file`), asked of
        one `git merge-tree` together and remembered: a file merge each cost a git process
        (DPDK's scan makes thousands). A pass over the changes finds them; the merges
        libgit2 answers are remembered by it as the pick would remember them."""
        if len(placed) < 2 or merge_tree_version() is None:
            return
        self._asking = {}
        try:
            for change in placed:
                self._merge_change(change, state)
            asked = self._asking
        finally:
            self._asking = None
        by_path: dict[str, tuple[tuple[object, ...], Sides]] = {}
        for key, (path, sides) in asked.items():
            by_path.setdefault(path, (key, sides))  # one merge per path: the rest alone
        if not by_path:
            return
        keys = [key for key, _ in by_path.values()]
        merged = self.repo.merge_files([(path, sides) for path, (_, sides) in by_path.items()])
        self._merges.update(zip(keys, merged, strict=True))

    def pick_series(
        self, commits: list[Oid], state: TreeState
    ) -> tuple[list[PickResult], TreeState]:
        results = []
        for commit in commits:
            result = self.pick(commit, state)
            results.append(result)
            state = result.state
        return results, state

    def applies(
        self,
        commits: list[Oid],
        state: TreeState,
        *,
        last_only: bool = False,
        first: Sequence[str] = (),
    ) -> bool:
        """Do the commits apply in order? With last_only, earlier conflicts take their side,
        and the last commit is tried file by file (its changes to the paths in `first`
        first), the earlier ones picked only on that file's paths: the rest cannot change
        its outcome there, and the first file that conflicts answers. The
        fewest-prerequisites search asks this many times, mostly of candidates that leave
        the member's conflict where it was, beside large files that merge cleanly. Where the
        last commit's paths may have moved (`_moved`), on the state or after an earlier
        commit, it is picked whole (git's merge finds its files anywhere), after the earlier
        ones picked whole where its paths moved on the state, on its paths otherwise."""
        if not last_only:
            results, _ = self.pick_series(commits, state)
            return all(r.result != "conflict" for r in results)
        last = commits[-1]
        placed = self._placed(last, state, None)
        if placed is None and first and self._conflicts_first(commits, state, frozenset(first)):
            return False
        groups = None if placed is None else _path_groups(placed, first)
        for only in groups or ():
            tried = state
            for commit in commits[:-1]:
                tried = self.pick(commit, tried, only).state
            if self._moved(last, tried, only):
                break  # an earlier commit moved its files: git's merge reads them all
            if self.pick(last, tried, only).result == "conflict":
                return False
        else:
            if groups is not None:  # every file of it answered on its own paths
                return True
        paths = None if groups is None else frozenset().union(*groups)
        tried = state
        for commit in commits[:-1]:
            tried = self.pick(commit, tried, paths).state
        return self.pick(last, tried).result != "conflict"

    def may_resolve(
        self, candidates: Sequence[Oid], member: Oid, state: TreeState, files: Sequence[str]
    ) -> bool:
        """Could picking some of the candidates first make `member` apply onto `state`,
        where it conflicts in `files`? Not where it changes one of those files in place, at
        a path the state has, and no candidate touches that path: the file is then the
        state's after any of them, and a pick is path by path (no rename pairs a path all
        three sides hold), so the member conflicts there still. A search for the
        prerequisites of DPDK's 400-file "build: mark exported symbols", conflicting in 90
        files, among 8 candidates, is answered without a trial."""
        touched = frozenset().union(*(self.paths(c) for c in candidates))
        return all(c.old_path in touched for c in self._in_place(member, state, files))

    def _in_place(self, commit: Oid, state: TreeState, files: Iterable[str]) -> list[FileChange]:
        """The commit's changes of these files' content at their own paths, where the state
        has them there."""
        wanted = frozenset(files)
        return [
            c
            for c in self.changes(commit)
            if c.old_path in wanted
            and c.old_path == c.new_path
            and c.old is not None
            and c.new is not None
            and self.lookup(state, c.old_path) is not None
        ]

    def _conflicts_first(self, commits: list[Oid], state: TreeState, first: frozenset[str]) -> bool:
        """Where git's merge must answer the last commit's pick (a path of it moved on the
        state), does it conflict already in a file of `first` it changes in place, at a
        path the state has? The earlier commits picked on those paths only (the files still
        there after them), then the last: a pick is path by path, and no rename pairs a path
        all three sides hold, so a conflict there is one of the whole pick, found without
        git's merge of the whole tree. No conflict there answers nothing: the whole pick is
        then git's."""
        last = commits[-1]
        in_place = self._in_place(last, state, first)
        if not in_place:
            return False
        only = frozenset(c.old_path for c in in_place)
        tried = state
        for commit in commits[:-1]:
            tried = self.pick(commit, tried, only).state
        if any(self.lookup(tried, path) is None for path in only):
            return False
        return self.pick(last, tried, only).result == "conflict"

    def _merge_change(
        self, change: FileChange, state: TreeState
    ) -> tuple[dict[str, Entry | None], bool] | None:
        """Merge one file change: None on conflict, else (paths to set, changed?)."""
        ours = self.lookup(state, change.old_path)
        base, theirs = change.old, change.new
        renamed = change.old_path != change.new_path
        if theirs is None:  # deletion
            if ours is None:
                return {}, False
            if base is not None and ours[0] == base[0]:
                return {change.old_path: _DELETED}, True
            return None
        if base is None:  # addition
            existing = self.lookup(state, change.new_path)
            if existing is None:
                return {change.new_path: theirs}, True
            if existing[0] == theirs[0]:
                return {}, False
            return self._merge_blobs(change.new_path, None, existing, theirs)
        if ours is None:
            if renamed:
                target = self.lookup(state, change.new_path)
                if target is not None and target[0] == theirs[0]:
                    return {}, False
            return None  # modified upstream, absent here: modify/delete
        merged = self._merge_blobs(change.new_path, base, ours, theirs)
        if merged is None:
            return None
        paths, changed = merged
        if renamed:
            paths[change.old_path] = _DELETED
            changed = True
        return paths, changed

    def _merge_blobs(
        self, path: str, base: Entry | None, ours: Entry, theirs: Entry
    ) -> tuple[dict[str, Entry | None], bool] | None:
        mode = theirs[1] if base is None or ours[1] == base[1] else ours[1]
        if base is not None and ours[0] == base[0]:
            return {path: (theirs[0], mode)}, theirs[0] != ours[0] or mode != ours[1]
        if ours[0] == theirs[0] or (base is not None and base[0] == theirs[0]):
            return ({path: (ours[0], mode)}, mode != ours[1])
        if any(
            side[1] in (FileMode.COMMIT, FileMode.LINK) for side in (base, ours, theirs) if side
        ):
            # git merges no content of a submodule pointer (its commits are another
            # repository's) or a symlink that both sides changed: merge-ort conflicts
            return None
        key = (base[0] if base else None, ours[0], theirs[0])
        if key not in self._merges:
            merged = self._merge_file(path, base, ours, theirs)
            if isinstance(merged, _GitMerges):
                if self._asking is not None:  # a pick's first pass: asked of git together
                    self._asking[key] = (path, (base, ours, theirs))
                    return None
                merged = self.repo.merge_file(path, (base, ours, theirs))
            self._merges[key] = merged
        blob = self._merges[key]
        if blob is None:
            return None
        return {path: (blob, mode)}, blob != ours[0] or mode != ours[1]

    def _merge_file(
        self, path: str, base: Entry | None, ours: Entry, theirs: Entry
    ) -> pygit2.Oid | _GitMerges | None:
        """The 3-way file merge (the merged blob, or None on conflict): libgit2's where it
        merges changes that lie apart, conflicts on a line both sides surely remove, or
        where both diffs are forced; `_GIT_MERGES` elsewhere, where libgit2 conflicts or the
        changes are close: git's merge answers."""

        def entry(oid_mode: Entry) -> pygit2.IndexEntry:
            self._held.store(oid_mode[0])  # libgit2 reads it from the object database
            return pygit2.IndexEntry(path, oid_mode[0], _mode(oid_mode[1]))

        if any(is_binary(self._data(side)) for side in (base, ours, theirs) if side):
            return None  # git merges no binary file both sides changed (nor does libgit2)
        try:
            result = self.git.merge_file_from_index(
                entry(base) if base else None, entry(ours), entry(theirs)
            )
        except (UnicodeDecodeError, pygit2.GitError, RuntimeError):
            # no answer from libgit2 (text that is not UTF-8, which pygit2 cannot hand
            # back; a merge left without content): no conflict to reason from, git answers
            return None if merge_tree_version() is None else _GIT_MERGES
        merged = result.automergeable
        if not merged and self._both_remove(base, ours, theirs):
            return None
        if (
            merge_tree_version() is None
            or (merged and not self._close(base, ours, theirs))
            or self._forced(base, ours, theirs)
        ):
            if not merged:
                return None
            return self._held.hold(result.contents.encode("utf-8", "surrogateescape"))
        # libgit2's file merge diffs with Myers, git's with histogram: where libgit2
        # conflicts (but on a line both sides surely remove), or merges changes that lie
        # close together, the two may differ unless both diffs are forced, and git's
        # answer is the one (measured: benchmarks/merge_fuzz.py, docs/trial.md).
        return _GIT_MERGES

    def _forced(self, base: Entry | None, ours: Entry, theirs: Entry) -> bool:
        """Are both of the merge's diffs (base to either side) the same under libgit2's
        Myers and git's histogram (`git.forced`)? Then so is the merge. Cached per pair."""
        if base is None:
            return False
        for side in (ours, theirs):
            key = (base[0], side[0])
            if key not in self._forced_pairs:
                self._forced_pairs[key] = diff_is_forced(self._summary(base), self._summary(side))
            if not self._forced_pairs[key]:
                return False
        return True

    def _both_remove(self, base: Entry | None, ours: Entry, theirs: Entry) -> bool:
        """Is there a line the commit removes that occurs once in the base and in neither
        side? Every diff of the base to either side removes it, so the two changes overlap
        under any alignment and git's merge conflicts where libgit2's did: no need to ask."""
        if base is None:
            return False
        removed = [line[:-1] for line in self._hunks_of(base, theirs)[1] if line.endswith(b"\n")]
        if not removed:
            return False
        # sets of each side's lines, one pass each (made per merge, not cached: a trial merges
        # thousands of files), where a search of the whole file per removed line was quadratic
        mine, new = whole_lines(self._data(ours)), whole_lines(self._data(theirs))
        old: bytes | None = None
        for line in removed:
            if line in mine or line in new:
                continue
            if old is None:
                old = b"\n" + self._data(base)
            if old.count(b"\n" + line + b"\n") == 1:  # a second like it right after: once too
                return True
        return False

    def _hunks_of(self, base: Entry, theirs: Entry) -> tuple[list[tuple[int, int]], list[bytes]]:
        """The commit's change to a file: its hunks' spans in the base, and the lines it
        removes (cached per pair of blobs)."""
        key = (base[0], theirs[0])
        known = self._spans.get(key)
        if known is None:
            # the patch reads its lines from these buffers: they must outlive it
            old, new = self._data(base), self._data(theirs)
            patch = pygit2.Patch.create_from(old, new, context_lines=0)
            known = self._spans[key] = (
                [(h.old_start, h.old_lines) for h in patch.hunks],
                [ln.raw_content for h in patch.hunks for ln in h.lines if ln.origin == "-"],
            )
        return known

    def _close(self, base: Entry | None, ours: Entry, theirs: Entry) -> bool:
        """Does the branch change a file within `_CLOSE_LINES` of where the commit changes it
        (or is there no base)? Close, the diff algorithm decides where an edit among
        repeated lines sits, and with it whether the two changes overlap. The commit's
        changes are its diff's hunks (cached per pair of blobs); the branch left the lines
        around one alone when they stand in its file as they stand in the base."""
        if base is None:
            return True
        spans = self._hunks_of(base, theirs)[0]
        lines = self._text(base).split_lines()
        mine = self._data(ours)
        for start, count in spans:
            first = max(0, start - 1 - _CLOSE_LINES)
            around = b"\n".join(lines[first : start - 1 + count + _CLOSE_LINES])
            if around not in mine:
                return True
        return False

    def _data(self, entry: Entry, needed_by: str = "a file of a trial merge") -> bytes:
        """A blob's bytes: held in memory (`HeldBlobs`) or read from the object database."""
        return self._text(entry, needed_by).data

    def _text(self, entry: Entry, needed_by: str = "a file of a trial merge") -> Text:
        """A blob's bytes and what was made of them, cached while recent (`RecentTexts`)."""

        def read() -> bytes:
            data = self._held.get(entry[0])
            if data is None:
                blob = read_object(self.git, entry[0], needed_by)
                assert isinstance(blob, pygit2.Blob)
                data = blob.data
            return data

        return self._recent.get(entry[0], read)

    def _summary(self, entry: Entry) -> Lines:
        text = self._text(entry)
        if text.summary is None:
            text.summary = Lines.of(text.data)
        return text.summary


def _path_groups(placed: list[FileChange], first: Sequence[str]) -> list[frozenset[str]]:
    """The paths of each of a commit's file changes as placed on a state (`_placed`: both
    sides of a rename, and the path the commit names where it is placed at the branch's),
    those touching `first` before the others."""
    groups = [
        frozenset(p for p in (c.old_path, c.new_path, c.named) if p is not None) for c in placed
    ]
    return sorted(groups, key=lambda group: group.isdisjoint(first))


def _mode(value: int) -> pygit2.enums.FileMode:
    """A tree entry's mode as pygit2's type says it (the int as git stored it, unchanged)."""
    return cast(pygit2.enums.FileMode, value)
