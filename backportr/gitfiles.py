"""Files of a git tree read as data (the CVE records of a bare records repository).

Part of the git layer: the only pygit2 code the records reader needs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pygit2

from backportr.errors import BackportrError


def tree_files(
    path: Path, ref: str, wanted: Callable[[str], bool], cap: int
) -> Iterator[tuple[str, str]]:
    """(path in the tree, text) of every blob of `ref`'s tree whose path is `wanted`, in
    path order; a blob is read to `cap` bytes at most (+1, so a larger one shows as such)."""
    try:
        repo = pygit2.Repository(str(path))
        tree = repo.revparse_single(ref).peel(pygit2.Tree)
    except (KeyError, ValueError, pygit2.GitError) as error:
        raise BackportrError(f"{path}: no tree at {ref!r} ({error})") from None
    blobs: dict[str, pygit2.Oid] = {}
    stack: list[tuple[str, pygit2.Tree]] = [("", tree)]
    while stack:
        prefix, current = stack.pop()
        for entry in current:
            name = f"{prefix}{entry.name}"
            if entry.type_str == "tree":
                stack.append((f"{name}/", repo[entry.id].peel(pygit2.Tree)))
            elif entry.type_str == "blob" and wanted(name):
                blobs[name] = entry.id
    for name in sorted(blobs):
        blob = repo[blobs[name]]
        data = bytes(blob.data[: cap + 1]) if isinstance(blob, pygit2.Blob) else b""
        yield name, data.decode("utf-8", errors="replace")
