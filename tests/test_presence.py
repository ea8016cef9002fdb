"""Presence detection on real repositories built in-process."""

from __future__ import annotations

from pathlib import Path

import pytest

from backportr.git.builder import RepoBuilder
from backportr.git.repo import Repo
from backportr.index import CommitIndex
from backportr.index.presence import PresenceChecker
from backportr.model import Oid, Presence
from tests.scenarios import presence_repo


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> RepoBuilder:
    return presence_repo(tmp_path_factory.mktemp("presence") / "repo")


@pytest.fixture
def checker(scenario: RepoBuilder, tmp_path: Path) -> PresenceChecker:
    repo = Repo(scenario.path)
    index = CommitIndex(repo, tmp_path / "index.sqlite")
    index.writer.update(repo.upstream(), [repo.branch("linux-5.10.y")])
    return PresenceChecker(repo, index)


def _check(checker: PresenceChecker, b: RepoBuilder, name: str) -> Presence:
    return checker.check(b.ids[name], checker.repo.branch("linux-5.10.y"))


def test_ancestor(checker: PresenceChecker, scenario: RepoBuilder) -> None:
    p = _check(checker, scenario, "culprit")
    assert (p.present, p.how, p.as_commit) == (True, "ancestor", scenario.ids["culprit"])


@pytest.mark.parametrize(
    ("name", "how"),
    [
        ("fix", "annotation"),  # commit X upstream.
        ("sasha", "annotation"),  # [ Upstream commit X ]
        ("cherry", "annotation"),  # (cherry picked from commit X)
        ("nolabel", "patch-id"),  # picked without -x
        ("bysubject", "subject"),  # adapted by hand, same subject and files
    ],
)
def test_backport_forms(
    checker: PresenceChecker, scenario: RepoBuilder, name: str, how: str
) -> None:
    p = _check(checker, scenario, name)
    assert p.present and p.how == how
    assert p.as_commit == scenario.ids[f"{name}-bp"]
    assert not p.reverted_in_branch


def test_reverted_in_branch(checker: PresenceChecker, scenario: RepoBuilder) -> None:
    p = _check(checker, scenario, "reverted")
    assert not p.present
    assert p.reverted_in_branch
    assert p.as_commit == scenario.ids["reverted-bp"]
    assert p.reverted_by == scenario.ids["reverted-revert"]


def test_absent(checker: PresenceChecker, scenario: RepoBuilder) -> None:
    p = _check(checker, scenario, "absent")
    assert (p.present, p.how, p.as_commit) == (False, None, None)


def test_reapplied_after_revert(tmp_path: Path) -> None:
    b = presence_repo(tmp_path / "repo")
    b.revert("reverted-revert", "linux-5.10.y", name="reapply")
    repo = Repo(b.path)
    index = CommitIndex(repo)
    index.writer.update(repo.upstream(), [repo.branch("linux-5.10.y")])
    p = PresenceChecker(repo, index).check(b.ids["reverted"], repo.branch("linux-5.10.y"))
    assert p.present and not p.reverted_in_branch


def test_patch_id_matches_git(scenario: RepoBuilder) -> None:
    import subprocess

    repo = Repo(scenario.path)
    for name in ("fix", "nolabel", "reverted"):
        oid = scenario.ids[name]
        show = subprocess.run(
            ["git", "-C", str(scenario.path), "show", oid], capture_output=True, check=True
        ).stdout
        out = subprocess.run(
            ["git", "-C", str(scenario.path), "patch-id", "--stable"],
            input=show,
            capture_output=True,
            check=True,
        ).stdout.decode()
        assert out.split()[0] == repo.patch_id(oid)


@pytest.mark.parametrize("form", ["backported", "openeuler"])
def test_other_reference_forms(tmp_path: Path, form: str) -> None:
    b = presence_repo(tmp_path / "repo")
    upstream = b.ids["absent"]
    if form == "backported":
        message = (
            f"UBUNTU: SAUCE: foo: never backported\n\n(backported from commit {upstream})\n"
            "[ adjusted context ]\nSigned-off-by: Packager <p@example.org>\n"
        )
    else:
        message = (
            f"foo: never backported\n\nmainline inclusion\nfrom mainline-v6.1-rc1\n"
            f"commit {upstream}\ncategory: bugfix\n"
        )
    text = b.files("linux-5.10.y")["drivers/foo.c"].replace(
        "int foo_d(int x)\n{\n\tint y = x;", "int foo_d(int x)\n{\n\tint y = x + 77;"
    )
    carrier = b.commit(message, {"drivers/foo.c": text}, branch="linux-5.10.y")
    repo = Repo(b.path)
    index = CommitIndex(repo)
    index.writer.update(repo.upstream(), [repo.branch("linux-5.10.y")])
    p = PresenceChecker(repo, index).check(upstream, repo.branch("linux-5.10.y"))
    assert (p.present, p.how, p.as_commit) == (True, "annotation", carrier)


def test_a_change_libgit2_diffs_differently_is_found_by_its_patch_id(tmp_path: Path) -> None:
    """An inserted function between two that start alike: git slides the hunk to where the
    indentation reads best, libgit2 does not; the two diffs' patch-ids differ (seen on 54
    of OVN's 461 branch-24.03 backports). Every patch-id comes from git, so the backport
    picked without `-x` under another subject is still found by its patch-id."""
    before = "int x;\n}\n\nstatic void\nold(void)\n{\n\told_body();\n}\n"
    after = before.replace(
        "static void\nold", "static void\nnew(void)\n{\n\tnew_body();\n}\n\nstatic void\nold"
    )
    b = RepoBuilder(tmp_path / "repo")
    b.commit("base", {"b.c": before, "other.c": "int o;\n"})
    b.branch("linux-5.10.y", "master")
    b.commit("other: unrelated", {"other.c": "int o2;\n"})
    upstream = b.commit("b: add new()", {"b.c": after})
    carrier = b.commit("b: a helper for the stable branch", {"b.c": after}, branch="linux-5.10.y")
    repo = Repo(b.path)
    index = CommitIndex(repo)
    index.writer.update(repo.upstream(), [repo.branch("linux-5.10.y")])
    p = PresenceChecker(repo, index).check(upstream, repo.branch("linux-5.10.y"))
    assert (p.present, p.how, p.as_commit) == (True, "patch-id", carrier)


def test_in_bulk_a_patch_id_is_computed_only_where_the_branch_changes_the_same_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Asked many times (a scan), the checker lists the branch's own commits' paths once;
    then a commit whose paths no branch commit changes gets no patch-id (it could match
    none), and the answers are those of the checker that computes every patch-id."""
    from backportr.index import presence as presence

    b = RepoBuilder(tmp_path / "repo")
    b.commit("base", {"a.c": "int a;\n", "b.c": "int b;\n", "c.c": "int c;\n"})
    b.branch("linux-5.10.y", "master")
    only_a = b.commit("a: change", {"a.c": "int a2;\n"})
    picked = b.commit("b: change", {"b.c": "int b2;\n"})
    both = b.commit("b, c: change", {"b.c": "int b3;\n", "c.c": "int c3;\n"})
    b.commit("b: the same change, picked without -x", {"b.c": "int b2;\n"}, branch="linux-5.10.y")
    b.commit("c: a change of the branch", {"c.c": "int c1;\n"}, branch="linux-5.10.y")
    repo = Repo(b.path)
    index = CommitIndex(repo, tmp_path / "index.sqlite")
    index.writer.update(repo.upstream(), [repo.branch("linux-5.10.y")])
    branch = repo.branch("linux-5.10.y")
    commits = [only_a, picked, both]
    expected = [PresenceChecker(repo, index).check(c, branch) for c in commits]
    assert [(p.present, p.how) for p in expected] == [
        (False, None),
        (True, "patch-id"),
        (False, None),
    ]

    fresh = CommitIndex(repo, tmp_path / "fresh.sqlite")
    fresh.writer.update(repo.upstream(), [repo.branch("linux-5.10.y")])
    monkeypatch.setattr(presence, "_LIST_PATHS_AFTER", 1)
    bulk = PresenceChecker(Repo(b.path), fresh)
    asked: list[str] = []
    real = fresh.patch_ids.patch_id

    def patch_id(oid: Oid) -> str | None:
        asked.append(oid)
        return real(oid)

    monkeypatch.setattr(fresh.patch_ids, "patch_id", patch_id)
    assert [bulk.needs_patch_id(c, branch) for c in commits] == [False, True, False]
    assert [bulk.check(c, branch) for c in commits] == expected
    assert asked == [picked]  # a.c alone, and b.c with c.c: no branch commit changes those
    # computed once, it is looked up (no path asked about) by the next checker
    assert [PresenceChecker(Repo(b.path), fresh).needs_patch_id(c, branch) for c in commits] == [
        False,
        False,
        False,
    ]


def test_a_subject_shared_with_another_upstream_commit_is_no_evidence(tmp_path: Path) -> None:
    """DPDK wrote two "app/bbdev: fix build with optional flag" commits, a day apart, each
    its own change to the same file; 22.11 carried the first (`[ upstream commit X ]`),
    and the second was taken with the fix that needs it. A branch commit that names another
    upstream commit as its original is that commit's backport: a subject they share says
    nothing about the second, which is absent (a hand-adapted carrier naming nothing still
    counts, above)."""
    b = RepoBuilder(tmp_path / "repo")
    b.commit("base", {"perf.c": "int a;\nint b;\nint c;\nint d;\nint e;\n"})
    b.branch("stable", "master")
    first = b.commit(
        "app: fix build with optional flag", {"perf.c": "int a1;\nint b;\nint c;\nint d;\nint e;\n"}
    )
    second = b.commit(
        "app: fix build with optional flag",
        {"perf.c": "int a1;\nint b;\nint c;\nint d;\nint e1;\n"},
    )
    carrier = b.commit(
        f"app: fix build with optional flag\n\n[ upstream commit {first} ]\n",
        {"perf.c": "int a1;\nint b;\nint c;\nint d;\nint e;\n"},
        branch="stable",
    )
    repo = Repo(b.path)
    index = CommitIndex(repo, tmp_path / "index.sqlite")
    index.writer.update(repo.upstream(), [repo.branch("stable")])
    checker = PresenceChecker(repo, index)
    branch = repo.branch("stable")
    assert (checker.check(first, branch).how, checker.check(first, branch).as_commit) == (
        "annotation",
        carrier,
    )
    p = checker.check(second, branch)
    assert (p.present, p.how, p.as_commit) == (False, None, None)


def test_the_authors_own_branch_posting_of_a_change_is_found_by_subject(tmp_path: Path) -> None:
    """OVN's authors post some changes again for each stable branch, adapted: upstream
    `1e4d4409f3` ("controller: Send ARP/ND for stale mac_bindings entries.") reached
    branch-24.03 as `58ce60d2f1`, by the same author, with no reference line, changing 8 of
    its files but two (`controller/pinctrl.[ch]`) and one it does not (a test macro file).
    The same subject and author and some of the same files are evidence; the same subject
    and some of the same files by another author are not."""
    from backportr.git.builder import Person

    other = Person("Other Dev", "other@example.org")
    b = RepoBuilder(tmp_path / "repo")
    b.commit("base", {"a.c": "int a;\n", "b.c": "int b;\n", "t.at": "test\n"})
    b.branch("stable", "master")
    feature = b.commit("controller: send ARP", {"a.c": "int a2;\n", "b.c": "int b2;\n"})
    taken = b.commit("tests: fix a flaky test", {"t.at": "test 2\n"}, author=other)
    b.commit("controller: send ARP", {"a.c": "int a2;\n", "t.at": "test 1\n"}, branch="stable")
    b.commit("tests: fix a flaky test", {"t.at": "test 3\n", "a.c": "int a3;\n"}, branch="stable")
    repo = Repo(b.path)
    index = CommitIndex(repo, tmp_path / "index.sqlite")
    index.writer.update(repo.upstream(), [repo.branch("stable")])
    checker = PresenceChecker(repo, index)
    branch = repo.branch("stable")
    p = checker.check(feature, branch)
    assert (p.present, p.how) == (True, "subject")
    # another author's branch commit of that subject, with other files: no evidence
    assert not checker.check(taken, branch).present


def test_a_subject_several_upstream_commits_share_is_no_evidence(tmp_path: Path) -> None:
    """tcpdump's maintainer writes "CHANGES: Add a change backported to 4.99" again and again
    (32 upstream commits, each a line of the same file), and the 4.99 branch carries its own
    commits of that subject, naming nothing. Upstream `39b50f7667` was answered
    `incomplete`, present by subject as an earlier such branch commit. A subject another
    upstream commit has too names neither, unless the branch commit also has the commit's
    author date, as a cherry-pick does (containerd's "Update continuity", three upstream
    commits, `e31bef15fa` picked adapted onto release/1.7); a subject only one upstream
    commit has still finds its adapted backport."""
    b = RepoBuilder(tmp_path / "repo")
    b.commit("base", {"CHANGES": "4.99.1\n", "a.c": "int a;\n"})
    b.branch("stable", "master")
    subject = "CHANGES: Add a change backported to 4.99"
    first = b.commit(subject, {"CHANGES": "4.99.1\n  fix one\n"})
    second = b.commit(subject, {"CHANGES": "4.99.1\n  fix one\n  fix two\n"})
    single = b.commit("lwres: fix pointer arithmetic", {"a.c": "int a2;\n"})
    b.commit("Update continuity", {"go.mod": "continuity v0.1\n"})
    picked = b.commit("Update continuity", {"go.mod": "continuity v0.2\n", "go.sum": "x\n"})
    b.commit(subject, {"CHANGES": "4.99.1\n  fix one (backported)\n"}, branch="stable")
    b.commit(
        "Update continuity",
        {"go.mod": "continuity v0.2-adapted\n"},
        branch="stable",
        authored=b.repo[picked].author.time,
    )
    b.commit("lwres: fix pointer arithmetic", {"a.c": "int a3;\n"}, branch="stable")
    repo = Repo(b.path)
    index = CommitIndex(repo, tmp_path / "index.sqlite")
    index.writer.update(repo.upstream(), [repo.branch("stable")])
    checker = PresenceChecker(repo, index)
    branch = repo.branch("stable")
    assert not checker.check(first, branch).present
    assert not checker.check(second, branch).present
    p = checker.check(single, branch)
    assert (p.present, p.how) == (True, "subject")
    p = checker.check(picked, branch)
    assert (p.present, p.how) == (True, "subject")


def test_questions_answered_by_lookup_count_toward_listing_the_branchs_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A later run finds the first patch-ids it asks known (lookups): those questions count
    toward listing the branch's paths, so the next commit, whose paths no branch commit
    changes, is not given a patch-id it cannot share (it was, 51 more each DPDK run)."""
    from backportr.index import presence as presence

    b = RepoBuilder(tmp_path / "repo")
    b.commit("base", {"b.c": "int b;\n", "d.c": "int d;\n"})
    b.branch("linux-5.10.y", "master")
    known = [b.commit(f"b: change {n}", {"b.c": f"int b{n};\n"}) for n in range(2)]
    elsewhere = b.commit("d: change", {"d.c": "int d2;\n"})
    b.commit("b: a change of the branch", {"b.c": "int b9;\n"}, branch="linux-5.10.y")
    repo = Repo(b.path)
    index = CommitIndex(repo, tmp_path / "index.sqlite")
    index.writer.update(repo.upstream(), [repo.branch("linux-5.10.y")])
    branch = repo.branch("linux-5.10.y")
    index.patch_ids.fill(known)  # an earlier run's
    assert all(index.patch_ids.looked_up(c, branch.refname) for c in known)
    monkeypatch.setattr(presence, "_LIST_PATHS_AFTER", 2)
    checker = PresenceChecker(repo, index)
    assert [checker.needs_patch_id(c, branch) for c in [*known, elsewhere]] == [False] * 3
    assert not checker.check(elsewhere, branch).present
    assert not index.patch_ids.known(elsewhere)
