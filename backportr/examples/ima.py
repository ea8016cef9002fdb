"""The IMA/overlayfs backport of December 2023, rebuilt as a small kernel-shaped repository.

Upstream `b836c4d29f27` ("ima: detect changes to the backing overlay file") reached 5.10.202
as `cd5a262a07a5`, adapted by hand, and fixed nothing there: it needs `db1d1e8b9867` ("IMA:
use vfs_getattr_nosec to get the i_version") and `a1175d6b1bda` ("vfs: plumb i_version
handling into struct kstat"), and `8a924db2d7b5` ("fs: Pass AT_GETATTR_NOSEC flag to getattr
interface function") carries `Fixes: db1d1e8b9867`. The change that started it,
`18b44bc5a672` ("ovl: Always reevaluate the file signature for IMA"), reached 5.10.194 as
`331d85f0bc6e`.

The real ids cannot be reproduced, so commits are named by their real subjects (and their
real short ids as names in `ids`); the C files are small stand-ins written for this fixture.
The build is deterministic: the same ids every time.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from backportr.examples.ima_sources import (
    A1175,
    B836C,
    BP_194,
    BP_202,
    DB1D1,
    F8A92,
    GREG,
    INODE_DECLARATION,
    MIMI,
    OVL18,
    REAL_INODE_DECLARATION,
    SAVE_REAL_INODE,
    SAVE_VERSION,
)
from backportr.examples.ima_upstream import edit, mainline
from backportr.git.builder import RepoBuilder
from backportr.model import Oid

__all__ = [
    "A1175",
    "B836C",
    "BP_194",
    "BP_202",
    "DB1D1",
    "F8A92",
    "OVL18",
    "ImaFixture",
    "build",
]


@dataclass(frozen=True)
class ImaFixture:
    path: Path
    ids: dict[str, Oid]

    @property
    def expected_incomplete(self) -> list[Oid]:
        """At 5.10.202: the missing members of b836c4d29f27, in order."""
        return [self.ids[A1175], self.ids[DB1D1], self.ids[F8A92]]

    @property
    def expected_ready(self) -> list[Oid]:
        """At 5.10.194: the whole series, in order."""
        return [self.ids[A1175], self.ids[DB1D1], self.ids[B836C], self.ids[F8A92]]


def _release(b: RepoBuilder, branch: str, previous: int, sublevel: int) -> None:
    """A stable release commit ("Linux 5.10.194"), tagged when it is a state of the case."""
    name = f"v5.10.{sublevel}"
    b.commit(
        f"Linux 5.10.{sublevel}",
        edit(b, branch, "Makefile", f"SUBLEVEL = {previous}", f"SUBLEVEL = {sublevel}"),
        branch=branch,
        committer=GREG,
        author=GREG,
        name=name,
    )
    if sublevel in (194, 202):
        b.tag(name, branch)


def build(path: str | Path) -> ImaFixture:
    """Build the repository at `path` (which must not exist yet)."""
    b = RepoBuilder(path)
    target_changes = mainline(b)

    # -- linux-5.10.y ----------------------------------------------------------------------
    s = "linux-5.10.y"
    _release(b, s, 0, 193)
    b.cherry_pick(OVL18, s, annotation="sasha", name=BP_194)
    _release(b, s, 193, 194)
    # The hand-adapted backport: without db1d1e8b9867 there is no `struct kstat stat;` line,
    # so the declaration of real_inode goes after `inode` and everything else stays the same.
    adapted = dict(target_changes)
    api = b.files(s)["security/integrity/ima/ima_api.c"]
    adapted["security/integrity/ima/ima_api.c"] = api.replace(
        INODE_DECLARATION, INODE_DECLARATION + REAL_INODE_DECLARATION, 1
    ).replace(SAVE_VERSION, SAVE_VERSION + SAVE_REAL_INODE, 1)
    for path in (
        "security/integrity/ima/ima_main.c",
        "fs/overlayfs/super.c",
        "security/integrity/integrity.h",
    ):
        adapted[path] = b.merge_text(
            b.files(f"{b.ids[B836C]}~1")[path], b.files(s)[path], b.files(b.ids[B836C])[path]
        )
    target = b.ids[B836C]
    b.commit(
        "ima: detect changes to the backing overlay file\n\n"
        f"commit {target} upstream.\n\n"
        f'Commit {"18b44bc5a672"} ("ovl: Always reevaluate the file signature for\n'
        'IMA") forced signature re-evaulation on every file access.\n\n'
        "Instead of always re-evaluating the file's integrity, detect a change\n"
        "to the backing file, by comparing the cached file metadata with the\n"
        "backing file's metadata.\n\n"
        "Cc: stable@vger.kernel.org\n"
        f"Signed-off-by: {MIMI.name} <{MIMI.email}>\n"
        f"Signed-off-by: {GREG.name} <{GREG.email}>\n",
        adapted,
        branch=s,
        author=MIMI,
        committer=GREG,
        name=BP_202,
    )
    _release(b, s, 194, 202)
    b.repo.set_head("refs/heads/master")
    return ImaFixture(b.path, dict(b.ids))
