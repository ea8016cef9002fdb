"""git's own cherry-pick, in memory: `git merge-tree --write-tree` (merge-ort, with rename
and directory-rename detection) of a commit onto a tree, with the commit's parent as the
merge base, as `git cherry-pick` merges. Nothing touches refs, HEAD, the index or the work
tree; the merge's blobs and trees, and one commit object that makes the parent the merge
base, go to the object database.

git 2.38 added `--write-tree`; `--merge-base` came in 2.40, so the base is set the way any
2.38+ git honours: the tree to pick onto is written as a commit whose only parent is the
picked commit's parent, and the merge base of that commit and the picked one is that parent.
`merge_files` is the same merge of files' three blobs (git's file merge is merge-ort's,
histogram diff; libgit2's `merge_file` is Myers, and the two differ on some overlaps).

Part of the git layer (with git/repo.py, git/trial.py and the git* modules): nothing else runs git.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import cast

import pygit2

from backportr.errors import BackportrError
from backportr.git.proc import git_env, git_version, read_object
from backportr.infra import process
from backportr.model import short

_FIRST_VERSION = (2, 38)  # `git merge-tree --write-tree`
_SIGNATURE = pygit2.Signature("backportr", "backportr@localhost", 0, 0)
_CONFLICTED = re.compile(rb"^([0-7]{6}) ([0-9a-f]{40,64}) ([123])\t(.*)$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Staged:
    """One side of a conflicted path, as git left it: stage 1 the base (the picked commit's
    parent), 2 the tree picked onto, 3 the picked commit."""

    path: str
    stage: int
    blob: pygit2.Oid
    mode: int


@dataclass(frozen=True, slots=True)
class TreeMerge:
    """The merged tree (conflicted files hold git's markers), whether git merged it cleanly,
    and each conflicted path's stages."""

    tree: pygit2.Oid
    clean: bool
    staged: tuple[Staged, ...]


@functools.cache
def merge_tree_version() -> str | None:
    """The installed git's version when it can merge in memory (2.38 or later), else None."""
    found = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", git_version())
    if found is None:
        return None
    if (int(found.group(1)), int(found.group(2))) < _FIRST_VERSION:
        return None
    return found.group(0)


def trial_engine() -> tuple[str, str, str]:
    """What answers a trial pick here: (engine, what decided it, what it means), for
    `backportr config`."""
    version = merge_tree_version()
    if version is None:
        return (
            "in-memory",
            git_version(),
            "file by file at the paths a commit names; git 2.38 or later would follow "
            "files moved since the fork (git merge-tree)",
        )
    return (
        "in-memory+merge-ort",
        f"git {version}",
        "file by file where every path a commit reads is on the branch (git's file merge "
        "where libgit2's conflicts or the changes lie close, unless every diff algorithm "
        "aligns the file alike); where one moved, git "
        "merge-tree (merge-ort, renames followed), as git cherry-pick",
    )


Sides = tuple[tuple[pygit2.Oid, int] | None, tuple[pygit2.Oid, int], tuple[pygit2.Oid, int]]
"""A file merge's base, ours and theirs: blob and mode (no base for an add/add)."""


def merge_file(
    git: pygit2.Repository, path: str, sides: Sides, env: dict[str, str]
) -> pygit2.Oid | None:
    """git's three-way merge of one file, as merge-ort makes it in a cherry-pick: the
    merged blob, or None on conflict (`merge_files`)."""
    return merge_files(git, [(path, sides)], env)[0]


def merge_files(
    git: pygit2.Repository, files: list[tuple[str, Sides]], env: dict[str, str]
) -> list[pygit2.Oid | None]:
    """git's three-way merges of files at distinct paths, in one `git merge-tree` (the
    caller checks `merge_tree_version` first): each merged blob, or None where that file
    conflicts. The bases, ours and theirs are written as three trees (commits, ours and
    theirs children of the base). Each path is in ours and in theirs, and in the base
    wherever it has one: no side deletes a file, so git's rename detection pairs none, and
    each file merges as it would alone (a cherry-pick merges file by file)."""
    paths = [path for path, _ in files]
    assert len(set(paths)) == len(paths), "one merge per path"

    def tree(side: int) -> pygit2.Oid:
        index = pygit2.Index()
        for path, sides in files:
            entry = sides[side]
            if entry is not None:
                index.add(pygit2.IndexEntry(path, entry[0], cast(pygit2.enums.FileMode, entry[1])))
        return index.write_tree(git)

    def commit(side: int, parents: list[pygit2.Oid]) -> pygit2.Oid:
        return git.create_commit(
            None, _SIGNATURE, _SIGNATURE, "backportr merge\n", tree(side), parents
        )

    root = commit(0, [])
    what = paths[0] if len(paths) == 1 else f"{len(paths)} files"
    merge = _merge_tree(git, commit(1, [root]), commit(2, [root]), env, what)
    conflicted = {s.path for s in merge.staged}
    if not merge.clean and not conflicted:
        return [None] * len(paths)  # unclean with no path to blame: none is taken as merged
    merged = read_object(git, merge.tree, f"git's merge of {what}")
    assert isinstance(merged, pygit2.Tree)
    return [None if path in conflicted else merged[path].id for path in paths]


def cherry_pick_tree(
    git: pygit2.Repository,
    commit: pygit2.Commit,
    onto_tree: pygit2.Oid,
    env: dict[str, str],
) -> TreeMerge:
    """`commit` cherry-picked onto the tree `onto_tree` by git's merge-ort (the caller checks
    `merge_tree_version` first). `env` lets git see the objects the caller wrote (and
    write its own beside them)."""
    base = commit.parents[0]
    # Dated as the picked commit: git merge-tree finds the merge base (the parent) by a walk
    # newest first, and a commit dated 1970 is reached last, after the whole history
    # (0.3 s a pick on DPDK's, against 0.02 s for the merge itself).
    when = pygit2.Signature(
        "backportr", "backportr@localhost", max(commit.commit_time, base.commit_time), 0
    )
    onto = git.create_commit(None, when, when, "backportr trial\n", onto_tree, [base.id])
    return _merge_tree(git, onto, commit.id, env, short(str(commit.id)))


def _merge_tree(
    git: pygit2.Repository, ours: pygit2.Oid, theirs: pygit2.Oid, env: dict[str, str], what: str
) -> TreeMerge:
    """`git merge-tree --write-tree` of two commits, read."""
    proc = process.run(
        [
            "git",
            "--git-dir",
            git.path,
            "merge-tree",
            "--write-tree",
            "--no-messages",
            "-z",
            str(ours),
            str(theirs),
        ],
        capture_output=True,
        env={**git_env(), **env},
    )
    if proc.returncode not in (0, 1):
        detail = proc.stderr.decode(errors="replace").strip().splitlines()
        raise BackportrError(
            f"git merge-tree of {what} failed: "
            f"{detail[-1] if detail else f'exit {proc.returncode}'}"
        )
    fields = proc.stdout.split(b"\0")
    staged = []
    for field in fields[1:]:
        if not field:
            break
        found = _CONFLICTED.match(field)
        if found is None:
            raise BackportrError(f"git merge-tree printed what it never prints: {field[:80]!r}")
        mode, blob, stage, path = found.groups()
        staged.append(
            Staged(
                path.decode("utf-8", "surrogateescape"),
                int(stage),
                pygit2.Oid(hex=blob.decode()),
                int(mode, 8),
            )
        )
    return TreeMerge(pygit2.Oid(hex=fields[0].decode()), proc.returncode == 0, tuple(staged))
