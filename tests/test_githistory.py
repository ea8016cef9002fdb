"""A range's history read once (`git.range_history`): blame and path-limited logs answered from it
give what git gives walking the whole range, file by file and commit by commit."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pygit2

from backportr.git.builder import RepoBuilder
from backportr.git.range_history import parse_changes
from backportr.git.repo import Repo
from backportr.model import Oid
from tests.conftest import git


def _lines(tag: str, count: int = 12) -> list[str]:
    return [f"{tag} line {n}" for n in range(count)]


def _text(lines: list[str]) -> str:
    return "".join(f"{line}\n" for line in lines)


def _history(path: Path, seed: int) -> tuple[RepoBuilder, Oid]:
    """Upstream after a fork: topic branches (some from before the fork) merged back, one
    merged straight into the fork (a merge whose first parent is the range's bottom, bringing
    a change the fork has already), files
    edited, deleted, re-added and renamed, a shared file edited by everyone in its own
    region, and a clock that goes backwards on one topic."""
    rnd = random.Random(seed)
    b = RepoBuilder(path)
    shared = _lines("shared", 60)
    files = {f"main{n}.c": _lines(f"main{n}") for n in range(3)}
    b.commit("base", {**{p: _text(t) for p, t in files.items()}, "shared.c": _text(shared)})
    b.commit("old work", {"main0.c": _text(["old", *files["main0.c"][1:]])})
    files["main0.c"][0] = "old"
    early = b.tip("master")
    b.commit("before the fork", {"main1.c": _text([*files["main1.c"][:-1], "late"])})
    files["main1.c"][-1] = "late"
    fork = b.tip("master")
    b.branch("stable", "master")

    b.branch("window", early)
    b.commit("merged into the fork", {"window.c": _text(_lines("window"))}, branch="window")
    b.commit("the fork's change again", {"main1.c": _text(files["main1.c"])}, branch="window")
    b.commit("more of it", {"shared.c": _text(["window", *shared[1:]])}, branch="window")
    shared[0] = "window"
    b.merge("master", "window", "Merge the window into the fork")

    for topic in range(4):
        name = f"topic{topic}"
        b.branch(name, "master" if topic % 2 else early)
        own = {f"t{topic}.c": _lines(f"t{topic}")}
        b.commit(f"{name}: add", {f"t{topic}.c": _text(own[f"t{topic}.c"])}, branch=name)
        for step in range(4):
            lines = own[f"t{topic}.c"]
            lines[rnd.randrange(len(lines))] = f"{name} step {step}"
            if rnd.random() < 0.3:
                del lines[rnd.randrange(len(lines))]
            b.commit(f"{name}: step {step}", {f"t{topic}.c": _text(lines)}, branch=name)
            if topic == 2 and step == 1:
                b._clock -= 3 * 3600  # dates going backwards
        if topic == 3:
            b.commit(
                f"{name}: rename",
                {"t3.c": None, "t3-renamed.c": _text(own["t3.c"])},
                branch=name,
            )
        region = 12 * (topic + 1)
        edit = _text([*shared[:region], f"{name} shared", *shared[region + 1 :]])
        b.commit(f"{name}: shared", {"shared.c": edit}, branch=name)
        for step in range(2):
            path_ = f"main{rnd.randrange(3)}.c"
            lines = files[path_]
            lines[rnd.randrange(len(lines))] = f"master {topic}.{step}"
            b.commit(f"master {topic}.{step}", {path_: _text(lines)})
        b.merge("master", name, f"Merge {name}")
        shared[region] = f"{name} shared"
    b.commit("gone", {"main2.c": None})
    b.commit("back again", {"main2.c": _text(_lines("again"))})
    b.commit("after", {"main2.c": _text(["after", *_lines("again")[1:]])})
    return b, fork


def test_blame_file_history_and_pickaxe_from_the_range_equal_gits(tmp_path: Path) -> None:
    for seed in (1, 2):
        b, fork = _history(tmp_path / f"r{seed}", seed)
        plain = Repo(b.path)
        tip = plain.upstream("master").tip
        read = Repo(b.path)
        read.search.remember_history(tip)
        commits = list(plain.walk(tip, [fork]))
        history = read.search.range_history(fork, tip)
        assert history is not None and len(history) == len(commits)
        paths = sorted({p for c in commits for p in b.files(c)})
        rnd = random.Random(seed)
        pairs = [(rnd.choice(commits), rnd.choice(paths)) for _ in range(120)]
        differences: list[tuple[str, str, str, object]] = []
        found = 0
        for commit, path in pairs:
            for ranges in ([(1, 4), (8, 12)], [(1, 60)]):
                if plain.search.blame(path, commit, ranges, fork) != read.search.blame(
                    path, commit, ranges, fork
                ):
                    differences.append(("blame", commit, path, ranges))
            for limit in (2, 50):
                other = rnd.choice(paths)
                if plain.search.file_history(
                    [path, other], commit, fork, limit
                ) != read.search.file_history([path, other], commit, fork, limit):
                    differences.append(("log", commit, path, limit))
            for text in ("shared", "step 1", "line 3", "window", "again", "master 1", "old"):
                other = rnd.choice(paths)
                if plain.search.pickaxe(text, commit, fork, [path, other]) != (
                    read.search.pickaxe(text, commit, fork, [path, other])
                ):
                    differences.append(("pickaxe", commit, path, text))
                found += plain.search.pickaxe(text, commit, fork, [path, other]) is not None
        assert differences == []
        assert found > 100  # the texts come and go: most questions have an answer
        assert any(plain.search.blame("shared.c", tip, [(1, 60)], fork).values())


def test_only_a_question_inside_the_remembered_range_is_answered_from_it(
    tmp_path: Path,
) -> None:
    b, fork = _history(tmp_path / "r", 3)
    repo = Repo(b.path)
    assert repo.search.range_history(fork, repo.upstream("master").tip) is None  # not asked for
    repo.search.remember_history(repo.upstream("master").tip)
    assert repo.search.range_history(None, fork) is None
    assert repo.search.range_history(fork, repo.branch("stable").tip) is None  # below the range


def test_a_changes_record_with_quoted_paths() -> None:
    raw = (
        b"\n" + b"a" * 40 + b"\x1f" + b"b" * 40 + b"\x1f1700000000\n\n"
        b'M\tplain.c\nA\t"with \\"quote\\" and \\303\\251.c"\nD\tgone.c\n'
    )
    record = parse_changes(raw)
    assert record is not None
    oid, parents, date, changes = record
    assert (oid, parents, date) == ("a" * 40, ("b" * 40,), 1700000000)
    assert changes == {"plain.c": "M", 'with "quote" and \u00e9.c': "A", "gone.c": "D"}
    assert parse_changes(b"") is None


def test_a_raw_changes_record_keeps_the_new_side() -> None:
    """`--raw --no-abbrev`: each change keeps its status, then the mode and blob it leaves
    (a zero mode and id for a deletion)."""
    old, new, zero = "1" * 40, "2" * 40, "0" * 40
    raw = (
        b"\n"
        + b"a" * 40
        + b"\x1f"
        + b"b" * 40
        + b"\x1f1700000000\n\n"
        + f":100644 100755 {old} {new} M\tplain.c\n".encode()
        + f":000000 120000 {zero} {new} A\tlink\n".encode()
        + f":100644 000000 {old} {zero} D\tgone.c\n".encode()
    )
    record = parse_changes(raw)
    assert record is not None
    changes = record[3]
    assert changes == {
        "plain.c": f"M100755{new}",
        "link": f"A120000{new}",
        "gone.c": f"D000000{zero}",
    }


def test_a_range_git_cannot_read_is_walked_per_question_as_before(tmp_path: Path) -> None:
    """A tree of the range missing: the one-pass read fails, the repository forgets the range
    and blame asks git over the range as it did without it (the same answer: blame of
    another file never reads that tree)."""
    b = RepoBuilder(tmp_path / "r")
    fork = b.commit("base", {"a.c": _text(_lines("a")), "sub/b.c": _text(_lines("b"))})
    b.commit("one", {"a.c": _text(["one", *_lines("a")[1:]])})
    lost = b.commit("two", {"sub/b.c": _text(["two", *_lines("b")[1:]])})
    tip = b.commit("three", {"a.c": _text(["one", "three", *_lines("a")[2:]])})
    plain = Repo(b.path)
    expected = plain.search.blame("a.c", tip, [(1, 4)], fork)
    subtree = str(b.repo[lost].peel(pygit2.Commit).tree["sub"].id)
    (b.path / ".git" / "objects" / subtree[:2] / subtree[2:]).unlink()
    read = Repo(b.path)
    read.search.remember_history(tip)
    assert len(expected) == 2 and read.search.blame("a.c", tip, [(1, 4)], fork) == expected
    assert Repo(b.path).search.blame("a.c", tip, [(1, 4)], fork) == expected
    assert read.search.range_history(fork, tip) is None  # forgotten, not retried per question


def _odd_files(b: RepoBuilder) -> None:
    """Commits a tree diff reports in its own ways: a mode change, a binary file, a symlink,
    a submodule, a file turned into a symlink."""
    work = b.path.parent / f"{b.path.name}-work"
    git(b.path.parent, "clone", "-q", str(b.path), str(work))
    git(work, "config", "user.name", "T")
    git(work, "config", "user.email", "t@example.org")

    def commit(message: str, *args: str) -> None:
        git(work, *args)
        git(work, "commit", "-q", "-m", message)

    (work / "run.sh").write_text("#!/bin/sh\necho hi\n")
    commit("script", "add", "run.sh")
    commit("executable", "update-index", "--chmod=+x", "run.sh")
    (work / "blob.bin").write_bytes(bytes(range(256)) * 4)
    commit("binary", "add", "blob.bin")
    (work / "blob.bin").write_bytes(bytes(range(255, -1, -1)) * 4 + b"\0tail")
    commit("binary changed", "add", "blob.bin")
    (work / "link").symlink_to("run.sh")
    commit("symlink", "add", "link")
    commit("submodule", "update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},sub")
    (work / "run.sh").unlink()
    (work / "run.sh").symlink_to("link")
    commit("file to symlink", "add", "run.sh")
    git(b.path, "fetch", "-q", str(work), "HEAD")
    git(b.path, "update-ref", "refs/heads/master", git(work, "rev-parse", "HEAD").strip())


def test_a_commits_changes_from_the_range_equal_the_tree_diffs(tmp_path: Path) -> None:
    """For a commit of a remembered range the diff model and the trial's file changes are
    read from the changed paths' entries instead of a tree diff: the same answers, in the
    same order; renames, submodules and the like are left to the tree diff."""
    from backportr.git.trial import TrialApplier

    for seed in (1, 2):
        b, fork = _history(tmp_path / f"r{seed}", seed)
        _odd_files(b)
        plain = Repo(b.path)
        tip = plain.upstream("master").tip
        read = Repo(b.path)
        read.search.remember_history(tip)
        assert read.search.range_history(fork, tip) is not None
        commits = list(plain.walk(tip, [fork]))
        fast = [c for c in commits if read.diffs.file_changes(c) is not None]
        assert len(fast) > len(commits) // 2
        history = read.search.range_history(fork, tip)
        assert history is not None
        listed = [c for c in commits if history.entries(c) is not None]  # no tree read
        assert len(listed) > len(commits) // 2
        for commit in commits:
            assert read.diffs.diff(commit) == plain.diffs.diff(commit), commit
            assert TrialApplier(read).changes(commit) == TrialApplier(plain).changes(commit)


def test_listed_paths_equal_the_tree_diffs(tmp_path: Path) -> None:
    """Commits outside any remembered range (a branch's backports, culprits before the
    fork) have their paths listed by one git process: files touched, diff model and file
    changes as the tree diff gives them; merges by their first parent; a root commit, a
    rename, a submodule are left to the tree diff."""
    from backportr.git.diff_model import paths_of
    from backportr.git.trial import TrialApplier

    b, _ = _history(tmp_path / "r", 3)
    _odd_files(b)
    plain = Repo(b.path)
    commits = list(plain.walk(plain.upstream("master").tip, []))
    listed = Repo(b.path)
    listed.diffs.learn_paths(commits)
    assert len(listed.diffs._listed) == len(commits) - 1  # all but the root
    assert any(len(plain.parents(c)) > 1 for c in listed.diffs._listed)
    for commit in commits:
        assert listed.diffs.files_touched(commit) == paths_of(plain.diffs.diff(commit)), commit
        assert listed.diffs.diff(commit) == plain.diffs.diff(commit), commit
        assert TrialApplier(listed).changes(commit) == TrialApplier(plain).changes(commit)
    unreadable = Repo(b.path)
    unreadable.diffs.learn_paths([Oid("0" * 40)])  # git cannot list it: nothing learned, no error
    assert unreadable.diffs._listed == {}


def test_a_trial_of_the_last_commit_picks_the_earlier_ones_on_its_paths_only(
    tmp_path: Path,
) -> None:
    """The fewest-prerequisites search asks "does M apply after C" many times: C is picked
    only on the paths M reads (its other files cannot change M's outcome), with the same
    answers as picking all of C."""
    from backportr.git.trial import TreeState, TrialApplier

    b = RepoBuilder(tmp_path / "r")
    big = _lines("big", 400)
    b.commit("base", {"m.c": _text(_lines("m")), "big.c": _text(big), "x.c": "x\n"})
    b.branch("stable", "master")
    b.commit("stable: its own big.c", {"big.c": _text(["stable", *big[1:]])}, branch="stable")
    helper = b.commit(
        "helper", {"m.c": _text(["helper", *_lines("m")[1:]]), "big.c": _text(["up", *big[1:]])}
    )
    needs = b.commit("needs the helper", {"m.c": _text(["helper", "needs", *_lines("m")[2:]])})
    unrelated = b.commit("unrelated", {"x.c": "y\n"})
    repo = Repo(b.path)
    tip = TreeState(repo.branch("stable").tip)
    for commits in ([helper, needs], [needs], [unrelated, needs], [helper, unrelated]):
        full = TrialApplier(repo)
        whole = full.pick_series(commits, tip)[0][-1].result != "conflict"
        restricted = TrialApplier(repo)
        merged: list[str] = []
        real = restricted._merge_file
        restricted._merge_file = (  # type: ignore[method-assign]
            lambda path, *a, seen=merged, merge=real: seen.append(path) or merge(path, *a)
        )
        assert restricted.applies(commits, tip, last_only=True) == whole, commits
        assert "big.c" not in merged  # helper's conflicting big.c is never merged for m.c
    assert TrialApplier(repo).applies([helper, needs], tip, last_only=True)
    assert not TrialApplier(repo).applies([needs], tip, last_only=True)


def test_a_trial_of_the_last_commit_file_by_file_answers_as_its_whole_pick(
    tmp_path: Path,
) -> None:
    """`applies(..., last_only=True, first=...)` tries the last commit file by file (the
    files in `first` first) and stops at the first conflict: on random histories of
    commits touching several files, adding, deleting and renaming them, every answer is
    the whole pick's (the earlier commits picked whole where the last one's paths may have
    moved); and a candidate that leaves the conflict where it was is answered
    without merging the member's other, clean files."""
    from backportr.git.trial import TreeState, TrialApplier

    rnd = random.Random(11)
    b = RepoBuilder(tmp_path / "r")
    files = {f"f{n}.c": _lines(f"f{n}", 30) for n in range(4)}
    b.commit("base", {p: _text(t) for p, t in files.items()})
    b.branch("stable", "master")
    stable = {p: list(t) for p, t in files.items()}
    for n in range(6):  # the branch diverges: its own edits of some lines
        path = rnd.choice(sorted(stable))
        stable[path][rnd.randrange(30)] = f"stable {n}"
        b.commit(f"stable {n}", {path: _text(stable[path])}, branch="stable")
    upstream = {p: list(t) for p, t in files.items()}
    commits = []
    for n in range(14):
        change: dict[str, str | None] = {}
        for path in rnd.sample(sorted(upstream), rnd.randint(1, 3)):
            lines = upstream[path]
            lines[rnd.randrange(len(lines))] = f"upstream {n} {path}"
            if rnd.random() < 0.3:
                lines.insert(rnd.randrange(len(lines)), f"added {n}")
            change[path] = _text(lines)
        if n == 6:  # a rename
            moved = rnd.choice(sorted(upstream))
            upstream[f"moved{n}.c"] = upstream.pop(moved)
            change = {moved: None, f"moved{n}.c": _text(upstream[f"moved{n}.c"])}
        if n == 9:  # an addition
            upstream["new.c"] = _lines("new", 5)
            change["new.c"] = _text(upstream["new.c"])
        commits.append(b.commit(f"upstream {n}", change))
    repo = Repo(b.path)
    tip = TreeState(repo.branch("stable").tip)

    def reference(series: list[Oid]) -> bool:
        applier = TrialApplier(repo)
        state = tip
        # On the last commit's paths; or whole, where they may have moved (a rename
        # before it): git's merge then looks for its files anywhere on the state.
        moved = applier.landing_paths(series[-1], tip) is not None
        only = None if moved else applier.paths(series[-1])
        for commit in series[:-1]:
            state = applier.pick(commit, state, only).state
        return applier.pick(series[-1], state).result != "conflict"

    answers = set()
    for _ in range(150):
        series = rnd.sample(commits, rnd.randint(1, 4))
        paths = sorted(TrialApplier(repo).paths(series[-1]))
        first = tuple(rnd.sample(paths, rnd.randint(0, len(paths))))
        expected = reference(series)
        answers.add(expected)
        assert TrialApplier(repo).applies(series, tip, last_only=True, first=first) == expected
    assert answers == {True, False}

    # The member conflicts in m.c and merges cleanly in big.c; a candidate that does not
    # touch m.c's conflicting line is answered from m.c alone.
    c = RepoBuilder(tmp_path / "c")
    big = _lines("big", 400)
    c.commit("base", {"m.c": _text(_lines("m")), "big.c": _text(big)})
    c.branch("stable", "master")
    c.commit("stable: big.c", {"big.c": _text(["stable", *big[1:]])}, branch="stable")
    unhelpful = c.commit("unhelpful", {"m.c": _text([*_lines("m")[:-1], "other"])})
    helper = c.commit("helper", {"m.c": _text(["helper", *_lines("m")[1:-1], "other"])})
    member = c.commit(
        "member",
        {
            "m.c": _text(["helper", "member", *_lines("m")[2:-1], "other"]),
            "big.c": _text([*big[:-1], "member"]),
        },
    )
    crepo = Repo(c.path)
    ctip = TreeState(crepo.branch("stable").tip)
    applier = TrialApplier(crepo)
    merged: list[str] = []
    real = applier._merge_file
    applier._merge_file = (  # type: ignore[method-assign]
        lambda path, *a, seen=merged, merge=real: seen.append(path) or merge(path, *a)
    )
    assert not applier.applies([unhelpful, member], ctip, last_only=True, first=("m.c",))
    assert "big.c" not in merged
    assert applier.applies([helper, member], ctip, last_only=True, first=("m.c",))
    assert "big.c" in merged


def test_a_conflict_in_a_file_at_its_own_path_answers_before_git_merges_the_moved_ones(
    tmp_path: Path,
) -> None:
    """A member that also changes a file the branch moved is picked by git's merge of the
    whole tree (it finds the file anywhere). Where the member conflicts in a file at its
    own path that a candidate leaves as it was, that conflict answers: no whole-tree
    merge; where the candidate resolves it, git's merge answers, as the whole pick's."""
    from backportr.git.trial import TreeState, TrialApplier

    b = RepoBuilder(tmp_path / "r")
    big = _lines("big", 40)
    b.commit("base", {"m.c": _text(_lines("m")), "big.c": _text(big)})
    b.branch("stable", "master")
    b.commit("stable: move big.c", {"big.c": None, "lib/big.c": _text(big)}, branch="stable")
    unhelpful = b.commit("unhelpful", {"x.c": "x\n"})
    helper = b.commit("helper", {"m.c": _text(["helper", *_lines("m")[1:]])})
    member = b.commit(
        "member",
        {
            "m.c": _text(["helper", "member", *_lines("m")[2:]]),
            "big.c": _text([*big[:-1], "member"]),
        },
    )
    repo = Repo(b.path)
    tip = TreeState(repo.branch("stable").tip)
    for candidates, expected in (([unhelpful], False), ([helper], True), ([], False)):
        applier = TrialApplier(repo)
        by_git: list[Oid] = []
        real = applier._pick_by_git

        def counted(
            commit: Oid, state: TreeState, pick: Any = real, seen: list[Oid] = by_git
        ) -> Any:
            seen.append(commit)
            return pick(commit, state)

        applier._pick_by_git = counted  # type: ignore[method-assign]
        answer = applier.applies([*candidates, member], tip, last_only=True, first=("m.c",))
        whole = TrialApplier(repo).pick_series([*candidates, member], tip)[0][-1]
        assert answer == expected == (whole.result != "conflict")
        assert (member in by_git) == expected  # git's whole merge only where m.c applies


def test_no_candidate_touching_a_file_the_member_conflicts_in_can_resolve_it(
    tmp_path: Path,
) -> None:
    """The fewest-prerequisites search asks no trial where a file the member conflicts in,
    changed in place at a path the branch has, is touched by no candidate: no pick of them
    changes that file. Where one touches it, the trials answer (here: it resolves it)."""
    from backportr.git.trial import TreeState, TrialApplier

    b = RepoBuilder(tmp_path / "r")
    b.commit("base", {"m.c": _text(_lines("m")), "other.c": "x\n"})
    b.branch("stable", "master")
    elsewhere = b.commit("elsewhere", {"other.c": "y\n"})
    helper = b.commit("helper", {"m.c": _text(["helper", *_lines("m")[1:]])})
    member = b.commit("member", {"m.c": _text(["helper", "member", *_lines("m")[2:]])})
    repo = Repo(b.path)
    tip = TreeState(repo.branch("stable").tip)
    applier = TrialApplier(repo)
    assert applier.pick(member, tip).result == "conflict"
    assert not applier.may_resolve([elsewhere], member, tip, ["m.c"])
    assert not applier.applies([elsewhere, member], tip, last_only=True, first=("m.c",))
    assert applier.may_resolve([elsewhere, helper], member, tip, ["m.c"])
    assert applier.applies([helper, member], tip, last_only=True, first=("m.c",))
