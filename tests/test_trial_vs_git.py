"""The trial against `git cherry-pick`, the reference, on the shapes real history has: files
and directories moved upstream after the fork (DPDK's `drivers/net/intel/`, the kernel's
`fs/cifs` -> `fs/smb/client`), moved on the branch, a file added into a moved directory,
deleted after a move, and plain edits. Each pick is made by both, and the answers (clean,
conflict, empty) and the clean trees must be equal."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import cast

import pygit2
import pytest

import backportr.git.merge as gitmerge
from backportr.git.builder import RepoBuilder
from backportr.git.merge import merge_tree_version
from backportr.git.repo import Repo
from backportr.git.trial import TreeState, TrialApplier
from backportr.model import Oid

pytestmark = pytest.mark.skipif(
    merge_tree_version() is None, reason="git merge-tree --write-tree needs git 2.38"
)


def _lines(tag: str, count: int = 40) -> list[str]:
    return [f"{tag} line {n}" for n in range(count)]


def _text(lines: list[str]) -> str:
    return "".join(f"{line}\n" for line in lines)


def _edit(lines: list[str], at: int, new: str) -> str:
    return _text([*lines[:at], new, *lines[at + 1 :]])


CONNECT, MISC, INODE = _lines("connect"), _lines("misc"), _lines("inode")
_MAKEFILE = "# fs\nobj-y += {}\n# 1\n# 2\n# 3\n# 4\n"


def _moved_upstream(path: Path) -> RepoBuilder:
    """fs/cifs/ at the fork; the branch edits connect.c line 30; upstream then moves the
    directory to fs/smb/client/ and writes fixes there."""
    b = RepoBuilder(path)
    b.commit(
        "base",
        {
            "fs/cifs/connect.c": _text(CONNECT),
            "fs/cifs/misc.c": _text(MISC),
            "fs/cifs/inode.c": _text(INODE),
            "Makefile": _MAKEFILE.format("fs/cifs/"),
        },
        name="fork",
    )
    b.branch("stable", "master")
    b.commit("stable: connect 30", {"fs/cifs/connect.c": _edit(CONNECT, 30, "stable 30")},
             branch="stable")  # fmt: skip
    b.commit(
        "smb: move client to fs/smb/client",
        {
            **{f"fs/cifs/{n}": None for n in ("connect.c", "misc.c", "inode.c")},
            "fs/smb/client/connect.c": _text(CONNECT),
            "fs/smb/client/misc.c": _text(MISC),
            "fs/smb/client/inode.c": _text(INODE),
            "Makefile": _MAKEFILE.format("fs/smb/client/"),
        },
        name="move",
    )
    b.commit("fix connect 5", {"fs/smb/client/connect.c": _edit(CONNECT, 5, "fixed 5")},
             name="clean")  # fmt: skip
    b.commit("fix connect 30", {"fs/smb/client/connect.c": _edit(CONNECT, 30, "up 30")},
             name="conflicting", parents=["move"], branch="side")  # fmt: skip
    b.commit("add a file", {"fs/smb/client/new.c": "new\n"}, name="added",
             parents=["move"], branch="side2")  # fmt: skip
    b.commit("remove misc", {"fs/smb/client/misc.c": None}, name="deleted",
             parents=["move"], branch="side3")  # fmt: skip
    b.commit("misc and inode", {"fs/smb/client/misc.c": _edit(MISC, 3, "m3"),
                                "fs/smb/client/inode.c": _edit(INODE, 9, "i9")},
             name="two", parents=["move"], branch="side4")  # fmt: skip
    b.commit("makefile", {"Makefile": _MAKEFILE.format("fs/smb/client/") + "# x\n"}, name="plain",
             parents=["move"], branch="side5")  # fmt: skip
    return b


def _moved_on_branch(path: Path) -> RepoBuilder:
    """The branch renamed a file (its own layout); upstream edits it at the old path."""
    b = RepoBuilder(path)
    b.commit("base", {"drivers/igc/txrx.c": _text(CONNECT)}, name="fork")
    b.branch("stable", "master")
    b.commit("stable: rename", {"drivers/igc/txrx.c": None, "drivers/e1000/igc_txrx.c":
                                _text(CONNECT)}, branch="stable")  # fmt: skip
    b.commit("fix txrx", {"drivers/igc/txrx.c": _edit(CONNECT, 12, "fix 12")}, name="clean")
    b.commit("fix again", {"drivers/igc/txrx.c": _edit(CONNECT, 12, "fix 12 again")},
             name="again")  # fmt: skip
    b.commit("new upstream file", {"drivers/other/x.c": "x\n"}, name="newdir")
    return b


def _git_pick(repo: Path, tip: str, commit: str, scratch: Path) -> tuple[str, str | None]:
    """`git cherry-pick --no-commit` in a scratch worktree: the answer and the tree."""

    def git(
        *args: str, check: bool = True, cwd: Path = scratch
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=check)

    if not scratch.exists():
        git("worktree", "add", "-q", "--detach", str(scratch), tip, cwd=repo)
    git("reset", "-q", "--hard", tip)
    git("clean", "-qfdx")
    if git("cherry-pick", "--no-commit", commit, check=False).returncode != 0:
        return "conflict", None
    tree = git("write-tree").stdout.strip()
    same = tree == git("rev-parse", f"{tip}^{{tree}}").stdout.strip()
    return ("empty" if same else "clean"), tree


@pytest.mark.parametrize(
    ("build", "expected"),
    [
        (
            _moved_upstream,
            {"clean": "clean", "conflicting": "conflict", "added": "conflict",
             "deleted": "conflict", "two": "clean", "plain": "clean", "move": "clean"},
        ),
        (_moved_on_branch, {"clean": "clean", "again": "conflict", "newdir": "clean"}),
    ],
)  # fmt: skip
def test_the_trial_answers_as_git_cherry_pick(
    tmp_path: Path, build: object, expected: dict[str, str]
) -> None:
    b = build(tmp_path / "r")  # type: ignore[operator]
    repo = Repo(b.path)
    applier = TrialApplier(repo)
    tip = b.tip("stable")
    for name, answer in expected.items():
        ours = applier.pick(b.ids[name], TreeState(tip))
        theirs, tree = _git_pick(b.path, tip, b.ids[name], tmp_path / "wt")
        assert (name, ours.result) == (name, theirs) == (name, answer)
        if theirs == "clean":
            assert applier.write_tree(ours.state) == tree, name


def test_a_pick_lands_at_the_branch_path_and_its_conflict_names_both(tmp_path: Path) -> None:
    b = _moved_upstream(tmp_path / "r")
    applier = TrialApplier(Repo(b.path))
    tip = TreeState(b.tip("stable"))
    clean = applier.pick(b.ids["clean"], tip)
    assert set(clean.state.overlay) == {"fs/cifs/connect.c"}  # the branch's layout
    assert "fixed 5" in (applier.file_text(clean.state, "fs/cifs/connect.c") or "")
    conflict = applier.pick(b.ids["conflicting"], tip)
    assert conflict.conflict_files == ("fs/cifs/connect.c",)  # where git leaves markers
    assert conflict.conflict_sources == ("fs/smb/client/connect.c",)  # where its hunks are
    assert "up 30" in (applier.file_text(conflict.state, "fs/cifs/connect.c") or "")
    added = applier.pick(b.ids["added"], tip)  # git: a file location conflict
    assert added.conflict_files == ("fs/cifs/new.c",)
    assert added.conflict_sources == ("fs/smb/client/new.c",)


def test_a_series_follows_the_move_pick_after_pick(tmp_path: Path) -> None:
    b = _moved_on_branch(tmp_path / "r")
    applier = TrialApplier(Repo(b.path))
    results, state = applier.pick_series(
        [b.ids["clean"], b.ids["again"]], TreeState(b.tip("stable"))
    )
    assert [r.result for r in results] == ["clean", "clean"]
    assert "fix 12 again" in (applier.file_text(state, "drivers/e1000/igc_txrx.c") or "")
    assert applier.lookup(state, "drivers/igc/txrx.c") is None


def _counting_git_picks(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> tuple[TrialApplier, list[Oid]]:
    """A trial applier on `repo`, and the commits it asks git's merge to pick, in order."""
    calls: list[Oid] = []
    real = repo.cherry_pick_tree

    def counted(commit: Oid, onto: Oid) -> object:
        calls.append(commit)
        return real(commit, onto)

    monkeypatch.setattr(repo, "cherry_pick_tree", counted)
    return TrialApplier(repo), calls


def test_a_file_git_found_moved_is_merged_there_without_git_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once git's merge found fs/smb/client/connect.c at fs/cifs/connect.c on the branch,
    the next change of that file is the same three-way merge at that path, file by file:
    no git process, and still git's answer (clean, or a conflict named at both paths)."""
    b = _moved_upstream(tmp_path / "r")
    applier, calls = _counting_git_picks(Repo(b.path), monkeypatch)
    tip = TreeState(b.tip("stable"))
    assert applier.pick(b.ids["clean"], tip).result == "clean" and len(calls) == 1
    conflict = applier.pick(b.ids["conflicting"], tip)
    assert len(calls) == 1  # placed, not asked of git
    assert conflict.result == "conflict"
    assert (conflict.conflict_files, conflict.conflict_sources) == (
        ("fs/cifs/connect.c",),
        ("fs/smb/client/connect.c",),
    )
    theirs, _ = _git_pick(b.path, b.tip("stable"), b.ids["conflicting"], tmp_path / "wt")
    assert theirs == "conflict"


def test_the_tree_picked_onto_is_dated_as_the_pick_so_git_finds_the_base_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git merge-tree finds the merge base of the commit made for the state and the picked
    one by a walk newest first: made with the date 0 it was reached after the whole history
    (0.3 s a pick on DPDK's, the merge itself 0.02 s). It is dated as the picked commit and
    its parent is the picked commit's, so the base is found at once, and is that parent."""
    b = _moved_upstream(tmp_path / "r")
    repo = Repo(b.path)
    seen: list[pygit2.Oid] = []
    real = gitmerge._merge_tree

    def merge_tree(git, ours, theirs, env, what):  # type: ignore[no-untyped-def]
        seen.append(ours)
        return real(git, ours, theirs, env, what)

    monkeypatch.setattr(gitmerge, "_merge_tree", merge_tree)
    assert TrialApplier(repo).pick(b.ids["clean"], TreeState(b.tip("stable"))).result == "clean"
    picked = repo.commit(b.ids["clean"])
    onto = repo.commit(Oid(str(seen[0])))
    assert onto.parent_ids == [picked.parent_ids[0]]
    assert onto.commit_time >= picked.commit_time > 0


def test_another_version_of_a_moved_file_is_asked_of_git_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git found fs/smb/client/connect.c at fs/cifs/connect.c for one pick; upstream then
    rewrote the file, and rename detection compares the version a commit changes: the
    rewritten one is like no file of the branch, and git's cherry-pick of a fix to it is a
    modify/delete conflict at the commit's path. The trial asks git again for that version
    (the moved path learned from the other version would place the change at
    fs/cifs/connect.c) and answers as git does."""
    b = _moved_upstream(tmp_path / "r")
    rewritten = [f"rewritten {i}" for i in range(len(CONNECT))]
    b.commit("smb: rewrite connect", {"fs/smb/client/connect.c": _text(rewritten)}, name="rw")
    b.commit("fix the rewrite", {"fs/smb/client/connect.c": _edit(rewritten, 7, "fixed 7")},
             name="late")  # fmt: skip
    applier, calls = _counting_git_picks(Repo(b.path), monkeypatch)
    tip = TreeState(b.tip("stable"))
    assert applier.pick(b.ids["clean"], tip).result == "clean"
    late = applier.pick(b.ids["late"], tip)
    assert calls == [b.ids["clean"], b.ids["late"]]
    assert (late.result, late.conflict_files) == ("conflict", ("fs/smb/client/connect.c",))
    theirs, _ = _git_pick(b.path, b.tip("stable"), b.ids["late"], tmp_path / "wt")
    unmerged = subprocess.run(
        ["git", "diff", "--name-only", "--diff-filter=U"],
        cwd=tmp_path / "wt", capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert (theirs, unmerged) == ("conflict", ["fs/smb/client/connect.c"])


def _three_sides(
    tmp_path: Path, base: list[str], ours: list[str], theirs: list[str]
) -> tuple[RepoBuilder, Repo, Oid, bool]:
    """A file at the fork, the branch's change of it (ours) and an upstream commit's
    (theirs): the repository, the commit, and whether libgit2's file merge alone merges."""
    b = RepoBuilder(tmp_path / "r")
    b.commit("base", {"t.at": _text(base)})
    b.branch("stable", "master")
    b.commit("stable: rework", {"t.at": _text(ours)}, branch="stable")
    picked = b.commit("tests: rework", {"t.at": _text(theirs)})
    repo = Repo(b.path)
    one, two, three = (
        pygit2.IndexEntry("t.at", repo.git.create_blob(_text(x)), pygit2.enums.FileMode.BLOB)
        for x in (base, ours, theirs)
    )
    return b, repo, picked, repo.git.merge_file_from_index(one, two, three).automergeable


def test_where_libgit2s_file_merge_conflicts_and_gits_merges_the_trial_says_gits(
    tmp_path: Path,
) -> None:
    """libgit2's `merge_file` diffs with Myers, git's merge-ort with histogram: on repeated
    lines they align an edit differently, and libgit2 conflicts where git merges (OVN's
    `tests/ovn.at` of `b87e76a5e5db`, one pair in 300). The trial asks git then, and
    answers as `git cherry-pick` does, tree and all."""
    check, call, other = "AT_CHECK([ovn-nbctl])", "bar();", "AT_CHECK([ovn-nbctl]) /*2*/"
    base = [call, call, check, call, check, check, check, "int x;"]
    ours = [call, call, check, call, "", "{", "}", check, check, check, "int x;"]
    theirs = [call, call, "if (a)", check, "return 0;", "", check, call, check, other, check,
              "int x;"]  # fmt: skip
    b, repo, picked, libgit2_merges = _three_sides(tmp_path, base, ours, theirs)
    assert not libgit2_merges
    tip = b.tip("stable")
    ours_pick = TrialApplier(repo).pick(picked, TreeState(tip))
    answer, tree = _git_pick(b.path, tip, picked, tmp_path / "wt")
    assert (ours_pick.result, answer) == ("clean", "clean")
    assert TrialApplier(repo).write_tree(ours_pick.state) == tree


def test_where_libgit2_merges_close_changes_that_git_conflicts_on_the_trial_says_gits(
    tmp_path: Path,
) -> None:
    """The other way round: among repeated lines libgit2 (Myers) merges two nearby edits
    that git (histogram) aligns onto the same lines and conflicts on. Where the branch's and
    the commit's changes to a file lie close, the trial asks git, and conflicts as `git
    cherry-pick` does (benchmarks/merge_fuzz.py: 10 of 2290 such merges of random
    repeated lines, none left)."""
    end, ret, cond = "])", "return 0;", "if (a)"
    wait, tail = "OVS_WAIT_UNTIL([test 1])", ["else", "int x;", "}", cond, "", "int x;"]
    base = [cond, end, wait, "", end, ret, "bar();", "bar();", end, ret, end, *tail]
    ours = [cond, end, wait, "", end, ret, "bar();", "bar();", end, *tail]
    theirs = [end, wait, "", end, ret, ret, "bar();", "bar();", end, *tail]
    b, repo, picked, libgit2_merges = _three_sides(tmp_path, base, ours, theirs)
    assert libgit2_merges
    tip = b.tip("stable")
    answer, _ = _git_pick(b.path, tip, picked, tmp_path / "wt")
    assert (TrialApplier(repo).pick(picked, TreeState(tip)).result, answer) == (
        "conflict",
        "conflict",
    )


def _libgit2_and_git_differ() -> dict[str, tuple[list[str], list[str], list[str]]]:
    """Base, ours and theirs of two merges where libgit2's file merge and git's differ:
    `merges` (libgit2 conflicts, git merges) and `conflicts` (the other way round)."""
    check, call, other = "AT_CHECK([ovn-nbctl])", "bar();", "AT_CHECK([ovn-nbctl]) /*2*/"
    end, ret, cond = "])", "return 0;", "if (a)"
    wait, tail = "OVS_WAIT_UNTIL([test 1])", ["else", "int x;", "}", cond, "", "int x;"]
    return {
        "merges": (
            [call, call, check, call, check, check, check, "int x;"],
            [call, call, check, call, "", "{", "}", check, check, check, "int x;"],
            [call, call, "if (a)", check, "return 0;", "", check, call, check, other, check,
             "int x;"],
        ),
        "conflicts": (
            [cond, end, wait, "", end, ret, "bar();", "bar();", end, ret, end, *tail],
            [cond, end, wait, "", end, ret, "bar();", "bar();", end, *tail],
            [end, wait, "", end, ret, ret, "bar();", "bar();", end, *tail],
        ),
    }  # fmt: skip


@pytest.mark.parametrize(
    "kinds", [("merges", "merges", "merges"), ("merges", "conflicts", "merges")]
)
def test_the_file_merges_git_answers_for_one_pick_are_one_git_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kinds: tuple[str, ...]
) -> None:
    """A commit whose files all need git's file merge (libgit2's may differ on each) asks
    one `git merge-tree` for all of them, and answers as `git cherry-pick` does: the
    result, each conflicting file, the tree of a clean pick."""
    paths = ["a/t.at", "b/t.at", "t2.at"]
    sides = [  # a line of its own at each file's end: three merges, not one asked thrice
        tuple([*lines, f"/* {path} */"] for lines in _libgit2_and_git_differ()[kind])
        for path, kind in zip(paths, kinds, strict=True)
    ]
    b = RepoBuilder(tmp_path / "r")
    b.commit("base", {p: _text(x[0]) for p, x in zip(paths, sides, strict=True)})
    b.branch("stable", "master")
    b.commit("stable: rework", {p: _text(x[1]) for p, x in zip(paths, sides, strict=True)},
             branch="stable")  # fmt: skip
    picked = b.commit("tests: rework", {p: _text(x[2]) for p, x in zip(paths, sides, strict=True)})
    repo = Repo(b.path)
    asked: list[list[str]] = []
    together, alone = repo.merge_files, repo.merge_file

    def merge_files(files: list[tuple[str, object]]) -> object:
        asked.append([path for path, _ in files])
        return together(files)  # type: ignore[arg-type]

    def merge_file(path: str, sides: object) -> object:
        asked.append([path])
        return alone(path, sides)  # type: ignore[arg-type]

    monkeypatch.setattr(repo, "merge_files", merge_files)
    monkeypatch.setattr(repo, "merge_file", merge_file)
    tip = b.tip("stable")
    ours = TrialApplier(repo).pick(picked, TreeState(tip))
    answer, tree = _git_pick(b.path, tip, picked, tmp_path / "wt")
    unmerged = subprocess.run(
        ["git", "diff", "--name-only", "--diff-filter=U"],
        cwd=tmp_path / "wt", capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert [sorted(files) for files in asked] == [paths]
    assert (ours.result, list(ours.conflict_files)) == (answer, unmerged)
    if answer == "clean":
        assert TrialApplier(repo).write_tree(ours.state) == tree
    else:
        assert unmerged == ["b/t.at"]


def _two_edits(
    tmp_path: Path, path: str, lines: list[str], ours: tuple[int, str], theirs: tuple[int, str]
) -> tuple[RepoBuilder, Oid, Oid]:
    """`path` at the fork, the branch's edit of one line and an upstream commit's of one:
    the repository, the branch's tip and the commit."""
    b = RepoBuilder(tmp_path / "r")
    b.commit("base", {path: _text(lines)})
    b.branch("stable", "master")
    b.commit("stable: edit", {path: _edit(lines, *ours)}, branch="stable")
    return b, b.tip("stable"), b.commit("fix", {path: _edit(lines, *theirs)})


def test_a_conflict_on_a_line_both_sides_change_needs_no_git_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the commit removes a line that occurs once in the base and in neither side,
    every diff removes it on both sides: git conflicts as libgit2 did, and the trial does not
    ask (a scan meets thousands of such conflicts). The answer is still git's."""
    lines = [f"int line_{n};" for n in range(30)]
    b, tip, picked = _two_edits(
        tmp_path, "f.c", lines, (12, "int line_12 = 1;"), (12, "int line_12 = 2;")
    )
    repo = Repo(b.path)
    asked: list[str] = []
    real = repo.merge_file

    def merge_file(path: str, sides: object) -> object:
        asked.append(path)
        return real(path, sides)  # type: ignore[arg-type]

    monkeypatch.setattr(repo, "merge_file", merge_file)
    ours = TrialApplier(repo).pick(picked, TreeState(tip))
    answer, _ = _git_pick(b.path, tip, picked, tmp_path / "wt")
    assert (ours.result, answer, asked) == ("conflict", "conflict", [])


@pytest.mark.parametrize(
    ("theirs_at", "expected"), [(14, "clean"), (11, "conflict")], ids=["close", "adjacent"]
)
def test_changes_among_lines_no_file_repeats_need_no_git_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, theirs_at: int, expected: str
) -> None:
    """Where no file repeats a line the two share, every diff algorithm aligns the same
    lines (`git.forced`), and libgit2's merge is git's even for close or adjacent changes:
    the trial asks no git process (the generated kernel-scale repository asked 34,164) and
    still answers as `git cherry-pick`, tree and all."""
    lines = [f"int file_v{n} = {n * 7};" for n in range(40)]
    b, tip, picked = _two_edits(
        tmp_path,
        "f.c",
        lines,
        (10, "int file_v10 = 1;"),
        (theirs_at, f"int file_v{theirs_at} = 2;"),
    )
    repo = Repo(b.path)
    asked: list[str] = []
    monkeypatch.setattr(repo, "merge_file", lambda path, sides: asked.append(path))
    ours = TrialApplier(repo).pick(picked, TreeState(tip))
    answer, tree = _git_pick(b.path, tip, picked, tmp_path / "wt")
    assert (ours.result, answer, asked) == (expected, expected, [])
    if expected == "clean":
        assert TrialApplier(repo).write_tree(ours.state) == tree


def _commit_of(
    repo: pygit2.Repository, parent: str | None, entries: dict[str, tuple[pygit2.Oid, int]]
) -> Oid:
    """A commit of exactly these tree entries (path: object id and mode), built by hand for
    what `RepoBuilder` does not write: submodule pointers, bytes that are not UTF-8."""
    index = pygit2.Index()
    for path, (oid, mode) in entries.items():
        index.add(pygit2.IndexEntry(path, oid, cast(pygit2.enums.FileMode, mode)))
    who = pygit2.Signature("Dev", "dev@example.org", 1_700_000_000, 0)
    parents = [pygit2.Oid(hex=parent)] if parent else []
    return Oid(str(repo.create_commit(None, who, who, "edit\n", index.write_tree(repo), parents)))


def _pointer_commit(repo: pygit2.Repository, parent: str | None, ovs: str, text: str) -> Oid:
    """`f.c` and the submodule pointer `ovs` (OVN's own `ovs` submodule), a commit of
    another repository this one lacks."""
    return _commit_of(
        repo,
        parent,
        {"f.c": (repo.create_blob(text), 0o100644), "ovs": (pygit2.Oid(hex=ovs), 0o160000)},
    )


@pytest.mark.parametrize(("branch_moves", "expected"), [(True, "conflict"), (False, "clean")])
def test_a_submodule_pointer_is_merged_as_git_merges_it(
    tmp_path: Path, branch_moves: bool, expected: str
) -> None:
    """A commit that bumps a submodule (OVN's `ovs: Bump ...` commits) is merged as git
    merges the pointer: taken where the branch kept the old one, a conflict where the
    branch moved it too (git cannot merge commits of a repository it has not checked out).
    Never read as a file: the pointer names a commit this repository lacks."""
    b = RepoBuilder(tmp_path / "r")
    repo = b.repo
    old, branch_sub, upstream_sub = ("1" * 40, "2" * 40, "3" * 40)
    lines = [f"int v{n};" for n in range(30)]
    base = _pointer_commit(repo, None, old, _text(lines))
    tip = _pointer_commit(repo, base, branch_sub if branch_moves else old, _edit(lines, 3, "x;"))
    bump = _pointer_commit(repo, base, upstream_sub, _edit(lines, 25, "y;"))
    ours = TrialApplier(Repo(b.path)).pick(bump, TreeState(tip))
    answer, tree = _git_pick(b.path, tip, bump, tmp_path / "wt")
    assert (ours.result, answer) == (expected, expected)
    assert TrialApplier(Repo(b.path)).file_text(TreeState(tip), "ovs") is None
    if expected == "clean":
        assert TrialApplier(Repo(b.path)).write_tree(ours.state) == tree


def test_a_binary_file_both_sides_changed_conflicts_as_in_git(tmp_path: Path) -> None:
    """A binary file (a NUL in its first 8,000 bytes: firmware, a capture file of a test)
    that the branch and the commit both changed, far apart: git merges no binary content
    and conflicts; libgit2 leaves the merge without content, which pygit2 raised on (a
    RuntimeError, exit 3). The trial conflicts as git does."""
    lines = [f"record {n}\0" for n in range(100)]
    b, tip, picked = _two_edits(tmp_path, "t.pcap", lines, (5, "RECORD 5\0"), (90, "RECORD 90\0"))
    ours = TrialApplier(Repo(b.path)).pick(picked, TreeState(tip))
    answer, _ = _git_pick(b.path, tip, picked, tmp_path / "wt")
    assert (ours.result, answer) == ("conflict", "conflict")


def test_text_that_is_not_utf8_is_merged_by_git(tmp_path: Path) -> None:
    """pygit2 hands back libgit2's merge only as UTF-8 text: on a Latin-1 file it raises,
    and that is no conflict to reason from. The branch and the commit remove the same line
    (identical changes merge), each with an edit of its own elsewhere: git merges, and so
    does the trial (it had answered `conflict` from the shared removal)."""
    lines = [f"caf\xe9 {n};".encode("latin-1") for n in range(30)]

    def text(edited: list[bytes]) -> bytes:
        return b"".join(line + b"\n" for line in edited)

    b = RepoBuilder(tmp_path / "r")
    repo = b.repo
    ours_lines = [lines[0], lines[1], b"ours;", *lines[3:10], *lines[11:]]
    theirs_lines = [*lines[:10], *lines[11:25], b"theirs;", *lines[26:]]
    base = _commit_of(repo, None, {"f.c": (repo.create_blob(text(lines)), 0o100644)})
    tip = _commit_of(repo, base, {"f.c": (repo.create_blob(text(ours_lines)), 0o100644)})
    picked = _commit_of(repo, base, {"f.c": (repo.create_blob(text(theirs_lines)), 0o100644)})
    ours = TrialApplier(Repo(b.path)).pick(picked, TreeState(tip))
    answer, tree = _git_pick(b.path, tip, picked, tmp_path / "wt")
    assert (ours.result, answer) == ("clean", "clean")
    assert TrialApplier(Repo(b.path)).write_tree(ours.state) == tree


def test_a_file_git_found_nowhere_is_a_conflict_without_git_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fix of a file the branch deleted (DPDK's fixes of drivers a stable line never had):
    once git's merge found no moved copy of it (a modify/delete), the pick of that fix onto
    another state of the same branch is the same conflict without a git process; onto a
    state that adds a file (a copy git might match), git is asked again. Both answers are
    git's."""
    b = RepoBuilder(tmp_path / "r")
    b.commit("base", {"drivers/old.c": _text(CONNECT), "lib/misc.c": _text(MISC)})
    b.branch("stable", "master")
    b.commit("stable: drop the old driver", {"drivers/old.c": None}, branch="stable")
    helper = b.commit("lib: tidy", {"lib/misc.c": _edit(MISC, 3, "tidied")})
    added = b.commit("lib: new helper", {"lib/helper.c": _text(INODE)})
    fix = b.commit("old: fix", {"drivers/old.c": _edit(CONNECT, 5, "fixed 5")})
    applier, calls = _counting_git_picks(Repo(b.path), monkeypatch)
    tip = TreeState(b.tip("stable"))
    first = applier.pick(fix, tip)
    assert first.result == "conflict" and calls == [fix]
    tidied = applier.pick(helper, tip).state
    again = applier.pick(fix, tidied)
    assert again.result == "conflict" and calls == [fix]  # answered without git
    assert again.conflict_files == first.conflict_files == ("drivers/old.c",)
    applier.pick(fix, applier.pick(added, tip).state)
    assert calls == [fix, fix]  # a state with a new file: git's rename detection decides
    assert _git_pick(b.path, b.tip("stable"), fix, tmp_path / "wt")[0] == "conflict"
