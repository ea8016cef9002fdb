"""What backportr refuses, with one line and exit 1, and touches nothing: a directory that is
not its own (`demo --keep`), a target that is no change to backport, a disk that fills up
under an index rebuild."""

from __future__ import annotations

import contextlib
import resource
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from backportr.examples.ima import ImaFixture
from tests.conftest import backportr, git
from tests.resolve_scenarios import BRANCH, Kernel


def test_demo_keep_never_touches_an_existing_repository(tmp_path: Path) -> None:
    """`demo --keep DIR` on a repository with uncommitted work, its own branches and tags
    overwrote the work tree and replaced the refs, and exited 0. Now: exit 1, one line,
    nothing touched; an empty or absent directory is built as before."""
    mine = tmp_path / "mine"
    mine.mkdir()
    git(mine, "init", "-q", "-b", "master")
    (mine / "work.c").write_text("committed\n")
    git(mine, "add", "work.c")
    git(mine, "commit", "-qm", "my work")
    git(mine, "tag", "v5.10.194")
    git(mine, "branch", "linux-5.10.y")
    (mine / "work.c").write_text("uncommitted\n")
    refs = git(mine, "show-ref")
    proc = backportr("demo", "--keep", str(mine))
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "not empty (nothing was touched)" in proc.stderr
    assert (mine / "work.c").read_text() == "uncommitted\n"
    assert git(mine, "show-ref") == refs
    (tmp_path / "file").write_text("x")
    assert backportr("demo", "--keep", str(tmp_path / "file")).returncode == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    assert backportr("demo", "--keep", str(empty)).returncode == 0
    assert git(empty, "status", "--porcelain") == ""


def test_a_target_that_is_no_change_is_refused(tmp_path: Path) -> None:
    """A merge commit was answered `ready` and the script that followed failed; a root
    commit, a tag of a tree or of a blob are no change to backport either."""
    k = Kernel(tmp_path / "r")
    k.edit_fn("side", "drv_fn1", "y += 100;", branch=BRANCH)
    k.edit_fn("main", "drv_fn2", "y += 200;")
    merge = k.b.merge("master", BRANCH, "Merge branch 'x'")
    repo = k.b.path
    git(repo, "tag", "a-tree", "master^{tree}")
    blob = git(repo, "rev-parse", "master:drivers/drv.c").strip()
    git(repo, "tag", "a-blob", blob)
    root = git(repo, "rev-list", "--max-parents=0", "master").strip()
    cases = {
        merge: "is a merge commit (2 parents)",
        root: "is a root commit (no parent)",
        "a-tree": "names a tree, not a commit",
        "a-blob": "names a blob, not a commit",
    }
    for target, said in cases.items():
        proc = backportr("resolve", target, "--repo", str(repo), "-b", BRANCH)
        assert proc.returncode == 1, (target, proc.stdout, proc.stderr)
        assert said in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr


def _rows(index: Path) -> list[tuple[object, ...]]:
    with contextlib.closing(sqlite3.connect(index)) as db:
        return sorted(db.execute("SELECT * FROM commits").fetchall(), key=repr)


def _file_size_limit(limit: int) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past it fails, as on a full disk
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


@pytest.mark.parametrize("limit", [4096, 16384, 65536])
def test_index_rebuild_on_a_full_disk_keeps_the_index(ima: ImaFixture, limit: int) -> None:
    """`index --rebuild` when writes fail part way (no room): the healthy index was moved
    aside as `.corrupt`, a zero-byte one left, and the run said nothing was changed. Now the
    index is what it was, nothing is moved aside, one line says so; a rerun with room gives
    the index a clean rebuild gives."""
    index = ima.path / ".git" / "backportr" / "index.sqlite"
    before = _rows(index)
    args = [sys.executable, "-m", "backportr", "index", "--rebuild", "--repo", str(ima.path)]
    args += ["-b", "linux-5.10.y", "-b", "v5.10.194"]
    full = subprocess.run(
        args,
        capture_output=True,
        text=True,
        preexec_fn=lambda: _file_size_limit(limit),
        timeout=300,
    )
    assert full.returncode == 1, full.stderr
    assert "is the disk full? nothing was changed" in full.stderr
    assert full.stderr.count("\n") == 1 and "Traceback" not in full.stderr
    assert not list(index.parent.glob("*.corrupt*"))
    assert _rows(index) == before
    again = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert _rows(index) == before
