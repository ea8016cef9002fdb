"""Repository access: ids, prefixes, refs, upstream detection, bad repositories."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from backportr.errors import (
    AmbiguousCommitError,
    MissingObjectError,
    NotARepositoryError,
    ShallowCloneError,
    UnknownBranchError,
    UnknownCommitError,
)
from backportr.git.builder import RepoBuilder
from backportr.git.log_records import log_record
from backportr.git.repo import Repo
from backportr.model import Oid
from tests.conftest import backportr, git
from tests.scenarios import ambiguous_repo


def test_resolve_forms(tmp_path: Path) -> None:
    b = RepoBuilder(tmp_path / "r")
    first = b.commit("one", {"a": "1"})
    b.tag("v1.0", first)
    second = b.commit("two", {"a": "2"})
    repo = Repo(b.path)
    assert repo.names.resolve_commit(second) == second
    assert repo.names.resolve_commit(second[:12]) == second
    assert repo.names.resolve_commit("v1.0") == first
    assert repo.names.resolve_commit("master") == second
    assert repo.names.resolve_commit("master~1") == first


def test_ambiguous_prefix_lists_candidates(tmp_path: Path) -> None:
    b, prefix = ambiguous_repo(tmp_path / "r")
    with pytest.raises(AmbiguousCommitError) as info:
        Repo(b.path).names.resolve_commit(prefix)
    assert len(info.value.candidates) >= 2
    assert prefix in str(info.value) and "ambiguous" in str(info.value)


def test_a_prefix_other_objects_share_names_its_one_commit(tmp_path: Path) -> None:
    """In a large repository a short id often matches blobs and trees as well: where it
    names one commit, that commit is meant (git's choice for `X^{commit}`)."""
    import pygit2

    b = RepoBuilder(tmp_path / "r")
    b.commit("one", {"a": "1"})
    commit = b.commit("two", {"a": "2"})
    n = 0
    while not str(pygit2.hash(f"filler {n}\n".encode())).startswith(commit[:4]):
        n += 1  # about 65,000 hashes: none written but the one that shares the prefix
    blob = pygit2.Repository(str(b.path)).create_blob(f"filler {n}\n".encode())
    assert str(blob)[:4] == commit[:4] and str(blob) != commit
    repo = Repo(b.path)
    assert repo.names.resolve_commit(commit[:4]) == commit
    with pytest.raises(UnknownCommitError, match="too short: give at least 4 hex digits"):
        repo.names.resolve_commit(commit[:3])


def test_unknown_commit(tmp_path: Path) -> None:
    b = RepoBuilder(tmp_path / "r")
    b.commit("one", {"a": "1"})
    with pytest.raises(UnknownCommitError, match="unknown commit"):
        Repo(b.path).names.resolve_commit("deadbeefdead")


def test_not_a_repository(tmp_path: Path) -> None:
    with pytest.raises(NotARepositoryError, match="not a git repository"):
        Repo(tmp_path)
    with pytest.raises(NotARepositoryError, match="no such directory"):
        Repo(tmp_path / "missing")


def test_shallow_clone_is_refused(tmp_path: Path) -> None:
    b = RepoBuilder(tmp_path / "r")
    for i in range(3):
        b.commit(f"c{i}", {"a": str(i)})
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{b.path}", "shallow")
    with pytest.raises(ShallowCloneError, match="fetch --unshallow"):
        Repo(tmp_path / "shallow")


def test_upstream_and_branches(tmp_path: Path) -> None:
    b = RepoBuilder(tmp_path / "r")
    base = b.commit("one", {"a": "1"})
    b.branch("linux-5.10.y", base)
    b.branch("linux-6.1.y", base)
    b.branch("feature", base)
    git(tmp_path, "clone", "-q", "--bare", str(b.path), "bare.git")
    git(tmp_path / "bare.git", "update-ref", "refs/remotes/origin/master", base)
    git(tmp_path / "bare.git", "update-ref", "refs/remotes/origin/linux-4.19.y", base)
    repo = Repo(tmp_path / "bare.git")
    assert repo.upstream().name == "origin/master"
    assert repo.stable_branches() == ["linux-4.19.y", "linux-5.10.y", "linux-6.1.y"]
    assert repo.branch("linux-4.19.y").refname == "refs/remotes/origin/linux-4.19.y"
    assert repo.branch("origin/linux-4.19.y").refname == "refs/remotes/origin/linux-4.19.y"
    with pytest.raises(UnknownBranchError, match=r"linux-9\.9\.y"):
        repo.branch("linux-9.9.y")
    with pytest.raises(UnknownBranchError, match="upstream"):
        repo.upstream("nosuch")


def test_walk_and_ancestry(tmp_path: Path) -> None:
    b = RepoBuilder(tmp_path / "r")
    a = b.commit("a", {"f": "1"})
    c = b.commit("c", {"f": "2"})
    repo = Repo(b.path)
    assert list(repo.walk(c, [a])) == [c]
    assert repo.is_ancestor(a, c) and not repo.is_ancestor(c, a)
    records = list(repo.streams.log(c))
    assert [r.oid for r in records] == [c, a]
    assert records[0].parents == (a,)


def test_commit_graph_is_seen_in_either_form(tmp_path: Path) -> None:
    """One file or a split chain: `index` hints at writing one on a large repository."""
    b = RepoBuilder(tmp_path / "r")
    b.commit("one", {"a.c": "int a;\n"})
    assert not Repo(b.path).has_commit_graph()
    git(b.path, "commit-graph", "write", "--reachable", "--split")
    assert Repo(b.path).has_commit_graph()
    single = RepoBuilder(tmp_path / "s")
    single.commit("one", {"a.c": "int a;\n"})
    git(single.path, "commit-graph", "write", "--reachable")
    assert Repo(single.path).has_commit_graph()


def test_libgit2_reads_the_sealed_home_not_the_users() -> None:
    """conftest seals HOME before pygit2 is loaded: in-process runs see the test's git
    config, never the developer's ~/.gitconfig."""
    import os

    import pygit2
    from pygit2.enums import ConfigLevel

    assert pygit2.settings.search_path[ConfigLevel.GLOBAL] == os.environ["HOME"]


def test_a_log_read_by_bounded_processes_gives_every_commit_once(tmp_path: Path) -> None:
    """`per_process`: each git process prints at most that many commits, the next starting
    from the walk's frontier; merges of long-lived branches and commit dates that go
    backwards (a skewed clock) included."""
    b = RepoBuilder(tmp_path / "repo")
    base = b.commit("base", {"a.c": "int a;\n"})
    for n in range(4):
        b.branch(f"topic{n}", "master")
        for i in range(5):
            b.commit(f"topic{n} {i}", {f"t{n}.c": f"int t{i};\n"}, branch=f"topic{n}")
            if i == 2:
                b._clock -= 3 * 3600  # dates going backwards
        b.commit(f"main {n}", {"a.c": f"int a{n};\n"})
        b.merge("master", f"topic{n}", f"Merge topic{n}")
    repo = Repo(b.path)
    tip = repo.upstream("master").tip
    whole = [log_record(r).oid for r in repo.streams.log_raw(tip)]
    for per_process in (1, 2, 3, 7, 1000):
        sliced = [log_record(r).oid for r in repo.streams.log_raw(tip, per_process=per_process)]
        assert len(sliced) == len(set(sliced)) == len(whole)
        assert set(sliced) == set(whole)
    above = {log_record(r).oid for r in repo.streams.log_raw(tip, [base], per_process=2)}
    assert above == set(whole) - {base}


def test_patch_ids_by_bounded_pipelines_match_one_pass(tmp_path: Path) -> None:
    b = RepoBuilder(tmp_path / "repo")
    base = b.commit("base", {"a.c": "int a;\n"})
    for i in range(7):
        b.commit(f"change {i}", {"a.c": f"int a{i};\n", f"f{i}.c": "int f;\n"})
    repo = Repo(b.path)
    tip = repo.upstream("master").tip
    whole = dict(repo.streams.patch_ids(tip, [base]))
    assert len(whole) == 7
    assert dict(repo.streams.patch_ids(tip, [base], per_process=3)) == whole
    assert dict(repo.streams.patch_ids(tip, [base], per_process=3, pipelines=2)) == whole


def _with_an_unreadable_commit(path: Path) -> tuple[RepoBuilder, Oid, Oid, list[Oid]]:
    """A branch of seven commits over `base`; the file the fourth adds is lost from the
    object database (a damaged copy), so git cannot diff that commit."""
    b = RepoBuilder(path)
    base = b.commit("base", {"a.c": "int a;\n"})
    b.branch("linux-5.10.y", base)
    made = [
        b.commit(f"change {i}", {"a.c": f"int a{i};\n", f"f{i}.c": f"int f{i};\n"},
                 branch="linux-5.10.y")
        for i in range(7)
    ]  # fmt: skip
    blob = str(b.repo.revparse_single(f"{made[3]}:f3.c").id)
    loose = Path(b.repo.path) / "objects" / blob[:2] / blob[2:]
    assert loose.exists()
    return b, base, made[3], made


def test_patch_ids_leave_out_a_commit_whose_diff_git_cannot_read(tmp_path: Path) -> None:
    b, base, broken, made = _with_an_unreadable_commit(tmp_path / "repo")
    tip = made[-1]
    whole = dict(Repo(b.path).streams.patch_ids(tip, [base]))
    blob = str(b.repo.revparse_single(f"{broken}:f3.c").id)
    (Path(b.repo.path) / "objects" / blob[:2] / blob[2:]).unlink()
    repo = Repo(b.path)
    for per_process, pipelines in ((1, 1), (3, 2), (100, 1)):
        repo.streams.unreadable.clear()
        found = dict(
            repo.streams.patch_ids(tip, [base], per_process=per_process, pipelines=pipelines)
        )
        assert found == {c: v for c, v in whole.items() if c != broken}
        assert repo.streams.unreadable == [broken]
    with pytest.raises(MissingObjectError, match=f"unable to read {blob}"):
        dict(repo.streams.patch_ids_of([broken]))


@pytest.mark.parametrize("pipelines", [1, 2])
def test_patch_ids_filled_by_pipelines_side_by_side_are_one_pipelines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pipelines: int
) -> None:
    """A long list of upstream patch-ids a command waits on is shared among pipelines run
    at once: the same patch-ids cached as one pipeline gives, in any order of the parts, and
    the commit git cannot diff left without one (asked again when the copy is mended)."""
    from backportr.git import streams
    from backportr.index import patchids
    from backportr.index.store import CommitIndex

    b = RepoBuilder(tmp_path / "repo")
    base = b.commit("base", {"a.c": "int a;\n"})
    made = [
        b.commit(f"change {i}", {"a.c": f"int a{i};\n", f"f{i}.c": f"int f{i};\n"})
        for i in range(9)
    ]
    whole = dict(Repo(b.path).streams.patch_ids(made[-1], [base]))
    assert len(set(whole.values())) == 9
    blob = str(b.repo.revparse_single(f"{made[4]}:f4.c").id)
    (Path(b.repo.path) / "objects" / blob[:2] / blob[2:]).unlink()
    monkeypatch.setattr(patchids, "_SIDE_BY_SIDE", 2)
    monkeypatch.setattr(patchids, "PIPELINES", pipelines)
    monkeypatch.setattr(streams, "_PART_FLOOR", 2)  # parts of two or three commits
    parts: list[list[Oid]] = []
    piped = streams.Streams._piped_patch_ids

    def counted(self: streams.Streams, commits: list[Oid]) -> list[tuple[Oid, str]]:
        parts.append(commits)
        return piped(self, commits)

    monkeypatch.setattr(streams.Streams, "_piped_patch_ids", counted)
    repo = Repo(b.path)
    index = CommitIndex(repo, tmp_path / "index.sqlite")
    index.writer.update(repo.upstream("master"))
    index.patch_ids.fill(list(reversed(made)))
    db = sqlite3.connect(index.path)
    cached = dict(db.execute("SELECT oid, patch_id FROM commits"))
    assert {c: cached[c] for c in made if c != made[4]} == {
        c: v for c, v in whole.items() if c != made[4]
    }
    assert cached[made[4]] is None and cached[base] is None
    if pipelines == 2:  # several parts, each commit in one
        assert len(parts) > 2 and sorted(c for part in parts for c in part) == sorted(made)
    else:
        assert parts == []
    index.close()


def test_the_index_is_built_without_the_patch_id_git_cannot_compute(tmp_path: Path) -> None:
    b, _, broken, made = _with_an_unreadable_commit(tmp_path / "repo")
    blob = str(b.repo.revparse_single(f"{broken}:f3.c").id)
    (Path(b.repo.path) / "objects" / blob[:2] / blob[2:]).unlink()
    index = tmp_path / "index.sqlite"
    run = backportr(
        "index", "--repo", str(b.path), "--upstream", "master", "--branch", "linux-5.10.y",
        "--index", str(index),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "1 commit(s) of linux-5.10.y have no patch-id" in run.stderr
    assert broken[:12] in run.stderr
    db = sqlite3.connect(index)
    ids = dict(db.execute("SELECT oid, patch_id FROM commits"))
    assert ids[broken] is None
    assert all(ids[c] for c in made if c != broken)


def test_a_copy_that_lacks_most_blobs_is_an_error_not_minutes_of_halving(tmp_path: Path) -> None:
    b = RepoBuilder(tmp_path / "repo")
    base = b.commit("base", {"a.c": "int a;\n"})
    made = [b.commit(f"change {i}", {f"f{i}.c": f"int f{i};\n"}) for i in range(20)]
    for i, commit in enumerate(made):
        blob = str(b.repo.revparse_single(f"{commit}:f{i}.c").id)
        (Path(b.repo.path) / "objects" / blob[:2] / blob[2:]).unlink()
    repo = Repo(b.path)
    with pytest.raises(MissingObjectError, match="fetch the repository's missing objects"):
        dict(repo.streams.patch_ids(made[-1], [base], per_process=100))


def test_the_tree_a_reply_names(tmp_path: Path) -> None:
    """The remote the upstream ref tracks (its URL), else origin's, else the path."""
    b = RepoBuilder(tmp_path / "repo")
    b.commit("init\n", {"a": "a\n"}, name="init")
    repo = Repo(b.path)
    assert repo.names.tree_name(repo.upstream()) == str(b.path.resolve())
    git(b.path, "remote", "add", "origin", "https://git.example.org/linux.git")
    git(b.path, "remote", "add", "stable", "https://git.example.org/stable.git")
    git(b.path, "update-ref", "refs/remotes/stable/master", "master")
    repo = Repo(b.path)
    assert repo.names.tree_name(repo.upstream()) == "https://git.example.org/linux.git"
    assert (
        repo.names.tree_name(repo.upstream("stable/master")) == "https://git.example.org/stable.git"
    )


def test_changed_paths_are_libgit2s_tree_diff_on_every_kind_of_change(tmp_path: Path) -> None:
    """`changed_paths` walks only the directories that differ; its answer is libgit2's
    tree diff's paths for each kind of change: an edit, an add, a delete, a mode change, a
    symlink, a directory replaced by a file and back, a submodule moved, a rename (no
    rename detection: both paths), and a change deep in one of many directories."""
    path = tmp_path / "r"
    git(tmp_path, "init", "-q", str(path))

    def commit(message: str, *, add: bool = True) -> Oid:
        if add:
            git(path, "add", "-A")
        git(path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", message)
        return Oid(git(path, "rev-parse", "HEAD").strip())

    for d in range(5):
        for f in range(3):
            (path / f"d{d}" / "sub").mkdir(parents=True, exist_ok=True)
            (path / f"d{d}" / "sub" / f"f{f}.c").write_text(f"int x{d}{f};\n")
    (path / "script.sh").write_text("echo\n")
    (path / "gone").mkdir()
    (path / "gone" / "a.txt").write_text("a\n")
    (path / "becomes-dir").write_text("file\n")
    commits = [commit("first")]
    (path / "d3" / "sub" / "f1.c").write_text("int changed;\n")
    (path / "script.sh").chmod(0o755)
    (path / "link").symlink_to("script.sh")
    (path / "new.c").write_text("int n;\n")
    commits.append(commit("edits, a mode, a symlink, an add"))
    for child in (path / "gone").iterdir():
        child.unlink()
    (path / "gone").rmdir()
    (path / "gone").write_text("now a file\n")
    (path / "becomes-dir").unlink()
    (path / "becomes-dir").mkdir()
    (path / "becomes-dir" / "inner.c").write_text("int i;\n")
    commits.append(commit("a directory for a file, a file for a directory"))
    git(path, "mv", "d0/sub/f0.c", "d4/moved.c")
    git(path, "update-index", "--add", "--cacheinfo", f"160000,{commits[-1]},module")
    commits.append(commit("a rename, a submodule", add=False))
    git(path, "update-index", "--cacheinfo", f"160000,{commits[0]},module")
    commits.append(commit("the submodule moved", add=False))

    repo = Repo(path)
    for oid in commits:
        c = repo.commit(oid)
        expected = (
            frozenset(d.new_file.path for d in c.parents[0].tree.diff_to_tree(c.tree).deltas)
            if c.parents
            else frozenset()
        )
        assert repo.changed_paths(oid) == expected, oid
    assert repo.changed_paths(commits[2]) >= {"gone", "gone/a.txt", "becomes-dir/inner.c"}
    assert repo.changed_paths(commits[4]) == {"module"}
