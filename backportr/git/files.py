"""Files of a git tree read as data (the CVE records of a bare records repository).

Part of the git layer: the only pygit2 code the records reader needs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import pygit2

from backportr.errors import BackportrError
from backportr.git.proc import git_env, read_object
from backportr.infra import process
from backportr.model import short


def tree_blobs(path: Path, ref: str, wanted: Callable[[str], bool]) -> dict[str, str]:
    """(path in the tree -> blob id) of every blob of `ref`'s tree whose path is `wanted`:
    what a reader keys its cache with, nothing read yet."""
    repo, tree = _tree(path, ref)
    return {name: str(oid) for name, oid in _walk(repo, tree, wanted).items()}


def blob_text(path: Path, blob: str, cap: int) -> str:
    """A blob's text, `cap` bytes at most (+1, so a larger one shows as such)."""
    repo = _repository(str(path))
    try:
        found = repo[blob]
    except (KeyError, ValueError) as error:
        raise BackportrError(f"{path}: cannot read the blob {short(blob)} ({error})") from None
    data = bytes(found.data[: cap + 1]) if isinstance(found, pygit2.Blob) else b""
    return data.decode("utf-8", errors="replace")


@functools.lru_cache(maxsize=4)
def _repository(path: str) -> pygit2.Repository:
    """The records repository, opened once for all its blobs."""
    return pygit2.Repository(path)


def _tree(path: Path, ref: str) -> tuple[pygit2.Repository, pygit2.Tree]:
    try:
        repo = pygit2.Repository(str(path))
        return repo, repo.revparse_single(ref).peel(pygit2.Tree)
    except (KeyError, ValueError, pygit2.GitError) as error:
        raise BackportrError(f"{path}: no tree at {ref!r} ({error})") from None


def _walk(
    repo: pygit2.Repository, tree: pygit2.Tree, wanted: Callable[[str], bool]
) -> dict[str, pygit2.Oid]:
    blobs: dict[str, pygit2.Oid] = {}
    stack: list[tuple[str, pygit2.Tree]] = [("", tree)]
    while stack:
        prefix, current = stack.pop()
        for entry in current:
            name = f"{prefix}{entry.name}"
            if entry.type_str == "tree":
                subtree = read_object(repo, entry.id, f"the directory {name}")
                stack.append((f"{name}/", subtree.peel(pygit2.Tree)))
            elif entry.type_str == "blob" and wanted(name):
                blobs[name] = entry.id
    return blobs


def files_changed_since(path: Path, ref: str, since: str, under: str = "") -> set[str]:
    """The paths (relative to `path`) that commits of `ref` made after `since` (a date as
    git reads it) added or changed, under `under`."""
    argv = ["git", "-C", str(path), "log", f"--since={since}", "--diff-filter=AM", "--format="]
    argv += ["--name-only", "--relative", "--no-renames", "--end-of-options", ref, "--"]
    argv += [under] if under else []
    proc = process.run(argv, capture_output=True, env=git_env(), timeout=600)
    if proc.returncode != 0:
        said = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise BackportrError(f"{path}: cannot list the records changed since {since}: "
                             f"{said[-1] if said else 'git log failed'}")  # fmt: skip
    return {line for line in proc.stdout.decode("utf-8", "replace").splitlines() if line}
