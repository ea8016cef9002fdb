"""git's own cherry-pick, in memory: `git merge-tree --write-tree` (merge-ort, with rename
and directory-rename detection) of a commit onto a tree, with the commit's parent as the
merge base, as `git cherry-pick` merges. Nothing touches refs, HEAD, the index or the work
tree; the merge's blobs and trees, and one commit object that makes the parent the merge
base, go to the object database.

git 2.38 added `--write-tree`; `--merge-base` came in 2.40, so the base is set the way any
2.38+ git honours: the tree to pick onto is written as a commit whose only parent is the
picked commit's parent, and the merge base of that commit and the picked one is that parent.

Part of the git layer (with git/repo.py, git/trial.py and the git* modules): nothing else runs git.
"""

from __future__ import annotations

import functools
import re
import subprocess
from dataclasses import dataclass

import pygit2

from backportr.errors import BackportrError
from backportr.git.proc import git_env, git_version

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
        "file by file where every path a commit reads is on the branch; where one moved, "
        "git merge-tree (merge-ort, renames followed), as git cherry-pick",
    )


def cherry_pick_tree(
    git: pygit2.Repository,
    commit: pygit2.Commit,
    onto_tree: pygit2.Oid,
    env: dict[str, str],
) -> TreeMerge:
    """`commit` cherry-picked onto the tree `onto_tree` by git's merge-ort (the caller checks
    `merge_tree_version` first). `env` lets git see the objects the caller wrote (and
    write its own beside them)."""
    base = commit.parents[0].id
    onto = git.create_commit(None, _SIGNATURE, _SIGNATURE, "backportr trial\n", onto_tree, [base])
    proc = subprocess.run(
        [
            "git",
            "--git-dir",
            git.path,
            "merge-tree",
            "--write-tree",
            "--no-messages",
            "-z",
            str(onto),
            str(commit.id),
        ],
        capture_output=True,
        env={**git_env(), **env},
        check=False,
    )
    if proc.returncode not in (0, 1):
        detail = proc.stderr.decode(errors="replace").strip().splitlines()
        raise BackportrError(
            f"git merge-tree of {str(commit.id)[:12]} failed: "
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
