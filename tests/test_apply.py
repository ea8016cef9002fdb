"""Trial picks keep merged blobs in memory until something reads them from the object
database: the answers are those of blobs written at once."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from backportr.git import treestate
from backportr.git.builder import RepoBuilder
from backportr.git.repo import Repo
from backportr.git.trial import TreeState, TrialApplier
from backportr.model import Oid


def _text(lines: list[str]) -> str:
    return "".join(f"{line}\n" for line in lines)


def _diverged(path: Path) -> tuple[Repo, Oid, Oid, list[str]]:
    """Upstream edits lines 2 and 6 of a file in two commits; the branch edited line 40 of
    it: each pick is a real three-way merge, of changes far enough apart that libgit2's
    merge answers (`trial._CLOSE_LINES`). Returns the repository, the two upstream commits
    and the file's lines after both picks."""
    lines = [f"line {n}" for n in range(48)]
    b = RepoBuilder(path)
    b.commit("base", {"f.c": _text(lines)})
    b.branch("stable", "master")
    b.commit(
        "stable edit", {"f.c": _text([*lines[:40], "stable 40", *lines[41:]])}, branch="stable"
    )
    first = b.commit("first", {"f.c": _text([*lines[:2], "first 2", *lines[3:]])})
    both = [*lines[:2], "first 2", *lines[3:6], "second 6", *lines[7:]]
    second = b.commit("second", {"f.c": _text(both)})
    both[40] = "stable 40"
    repo = Repo(b.path)
    repo.serialize_writes()
    return repo, first, second, both


def test_a_merged_blob_is_written_only_when_read_from_the_object_database(
    tmp_path: Path,
) -> None:
    repo, first, second, both = _diverged(tmp_path / "r")
    applier = TrialApplier(repo)
    tip = TreeState(repo.branch("stable").tip)
    picked = applier.pick(first, tip)
    assert picked.result == "clean"
    merged = picked.state.overlay["f.c"]
    assert merged is not None and not repo.git.odb.exists(merged[0])  # held in memory
    assert "first 2" in (applier.file_text(picked.state, "f.c") or "")
    then = applier.pick(second, picked.state)  # merges the held blob: written first
    assert then.result == "clean" and repo.git.odb.exists(merged[0])
    assert applier.file_text(then.state, "f.c") == _text(both)
    tree = applier.write_tree(then.state)  # every blob the tree names is written
    blob = repo.git[tree].peel(pygit2.Tree)["f.c"]
    assert repo.git[blob.id].peel(pygit2.Blob).data == _text(both).encode()
    written = TrialApplier(repo)
    written_tree = written.write_tree(written.pick_series([first, second], tip)[1])
    assert written_tree == tree


def test_held_blobs_past_the_bound_are_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(treestate, "_UNWRITTEN_BYTES", 0)
    repo, first, _, _ = _diverged(tmp_path / "r")
    picked = TrialApplier(repo).pick(first, TreeState(repo.branch("stable").tip))
    merged = picked.state.overlay["f.c"]
    assert merged is not None and repo.git.odb.exists(merged[0])


@given(
    data=st.lists(st.sampled_from([b"a", b"b", b"", b"\n", b"a\n", b"\r\n"]), max_size=12).map(
        b"".join
    ),
    line=st.sampled_from([b"a", b"b", b"", b"a\r", b"ab"]),
)
def test_a_text_holds_a_line_as_the_byte_search_finds_it(data: bytes, line: bytes) -> None:
    """`whole_lines`, asked of every line a commit removes, answers from a set what the
    search of the whole file it replaces answered (a test of a line the merge shortcut asks)."""
    assert (line in treestate.whole_lines(data)) == (b"\n" + line + b"\n" in b"\n" + data)
