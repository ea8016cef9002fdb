"""The persistent index: relations, reverse maps, incremental and rewritten updates, locking."""

from __future__ import annotations

import contextlib
import random
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path

import pytest

from backportr.errors import IndexCorruptError
from backportr.git.builder import RepoBuilder
from backportr.git.repo import Repo
from backportr.index import SCHEMA_VERSION, CommitIndex
from backportr.index.plan import ForkProbes
from backportr.index.presence import PresenceChecker
from backportr.model import Oid, oids
from backportr.text.relation_forms import Vocabulary
from tests.conftest import git
from tests.resolve_scenarios import BRANCH, culprit_in_sibling_branch_by_patch_id
from tests.scenarios import presence_repo


@pytest.fixture
def scenario(tmp_path: Path) -> RepoBuilder:
    return presence_repo(tmp_path / "repo")


def _open(b: RepoBuilder) -> tuple[Repo, CommitIndex]:
    repo = Repo(b.path)
    index = CommitIndex(repo)
    index.writer.update(repo.upstream(), [repo.branch("linux-5.10.y")])
    return repo, index


def test_index_lives_under_git_dir(scenario: RepoBuilder) -> None:
    repo, index = _open(scenario)
    assert index.path == repo.path / "backportr" / "index.sqlite"
    assert index.path.exists()


def test_who_fixes(scenario: RepoBuilder) -> None:
    _, index = _open(scenario)
    fixers = {r.commit: r.how for r in index.reader.fixed_by(scenario.ids["culprit"])}
    # by id, and by exact subject where the written id is wrong
    assert fixers == {scenario.ids["fix"]: "id", scenario.ids["wrongid"]: "subject"}
    assert [r.target for r in index.reader.fixes_of(scenario.ids["fix"])] == [
        scenario.ids["culprit"]
    ]


def test_who_reverts_and_carriers(scenario: RepoBuilder) -> None:
    repo, index = _open(scenario)
    assert [r.commit for r in index.reader.reverted_by(scenario.ids["reverted-bp"])] == [
        scenario.ids["reverted-revert"]
    ]
    refname = repo.branch("linux-5.10.y").refname
    assert index.reader.carriers(scenario.ids["fix"], refname) == [scenario.ids["fix-bp"]]
    assert index.reader.carried_upstream(scenario.ids["sasha-bp"]) == scenario.ids["sasha"]


def test_fixes_naming_a_backport_maps_to_upstream(scenario: RepoBuilder) -> None:
    bp = scenario.ids["fix-bp"]
    scenario.commit(
        f'foo: fix the fix\n\nFixes: {bp[:12]} ("foo: fix the helper")\n',
        {"drivers/foo.c": scenario.files("master")["drivers/foo.c"] + "\n"},
        name="fixfix",
    )
    _, index = _open(scenario)
    rel = index.reader.fixes_of(scenario.ids["fixfix"])[0]
    assert rel.target == scenario.ids["fix"]


def test_ancestry_from_index(scenario: RepoBuilder) -> None:
    repo, index = _open(scenario)
    refname = repo.branch("linux-5.10.y").refname
    assert index.after_fork.in_branch(scenario.ids["culprit"], refname) is True
    assert index.after_fork.in_branch(scenario.ids["fix"], refname) is False
    assert index.after_fork.in_branch(scenario.ids["fix-bp"], refname) is True


def test_questions_read_whole_are_answered_as_row_by_row(
    scenario: RepoBuilder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past `BULK_AFTER` questions of a kind (a scan's thousands), the reader and the
    after-fork rows answer from the kind's rows read whole: the same answers, in the same
    order, as a query a question."""
    import backportr.index.reader as reader_module

    repo, index = _open(scenario)
    sibling = repo.branch("linux-5.10.y").refname
    ids = [Oid(oid) for oid in scenario.ids.values()]
    subjects = [index.reader.subject(oid, repo) for oid in ids]

    def answers() -> tuple[list[object], list[object], list[object]]:
        r, a = index.reader, index.after_fork
        return (
            [(r.fixed_by(o), r.fixes_of(o), r.reverted_by(o), r.reverted_by(o, upstream_only=True))
             for o in ids],
            [(r.carriers(o, sibling), a.in_branch(o, sibling)) for o in ids],
            [r.branch_commits_with_subject(s, sibling) for s in subjects],
        )  # fmt: skip

    row_by_row = answers()
    assert any(index.reader.fixed_by(o) for o in ids)  # questions with answers among them
    assert any(index.reader.carriers(o, sibling) for o in ids)
    index.forget()
    monkeypatch.setattr(reader_module, "BULK_AFTER", 1)  # each kind weighed from its first
    monkeypatch.setattr(reader_module, "_WEIGHED", 1)  # and at every question after it
    assert answers() == row_by_row
    assert set(index.reader._whole) >= {"fixes_to_upstream", "fixes_of", f"carriers {sibling}"}
    assert sibling in index.after_fork._whole


def test_incremental_update_reads_only_new_commits(scenario: RepoBuilder) -> None:
    repo, index = _open(scenario)
    before = index.reader.count()
    for i in range(5):
        scenario.commit(f"mm: churn {i}", {f"mm/file{i}.c": f"int v{i};\n"})
    scenario.cherry_pick("absent", "linux-5.10.y", name="absent-bp")
    repo = Repo(scenario.path)
    stats = index.writer.update(repo.upstream(), [repo.branch("linux-5.10.y")])
    assert stats.new_commits == {"master": 5, "linux-5.10.y": 1}
    assert stats.rewritten == ()
    assert index.reader.count() == before + 6
    refname = repo.branch("linux-5.10.y").refname
    # new upstream commits are known to be outside the branch
    assert index.after_fork.in_branch(repo.names.resolve_commit("master"), refname) is False
    again = index.writer.update(repo.upstream(), [repo.branch("linux-5.10.y")])
    assert again.new_commits == {"master": 0, "linux-5.10.y": 0}


def test_force_pushed_branch_is_reindexed(scenario: RepoBuilder) -> None:
    repo, index = _open(scenario)
    refname = repo.branch("linux-5.10.y").refname
    assert index.reader.carriers(scenario.ids["fix"], refname) == [scenario.ids["fix-bp"]]
    # rewrite: the branch drops everything after the first backport
    scenario.branch("linux-5.10.y", "v5.10")
    scenario.cherry_pick("sasha", "linux-5.10.y", annotation="sasha", name="sasha-bp2")
    repo = Repo(scenario.path)
    stats = index.writer.update(repo.upstream(), [repo.branch("linux-5.10.y")])
    assert stats.rewritten == ("linux-5.10.y",)
    assert index.reader.carriers(scenario.ids["fix"], refname) == []
    assert index.reader.carriers(scenario.ids["sasha"], refname) == [scenario.ids["sasha-bp2"]]


def test_unreadable_index_is_reported(scenario: RepoBuilder, tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(IndexCorruptError, match="unreadable"):
        CommitIndex(Repo(scenario.path), bad)


def test_concurrent_updates_do_not_corrupt(scenario: RepoBuilder) -> None:
    for i in range(200):
        scenario.commit(f"net: churn {i}", {f"net/f{i % 7}.c": f"int n{i};\n"})
    cmd = [sys.executable, "-m", "backportr", "index", "--repo", str(scenario.path)]
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(3)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], outs
    repo = Repo(scenario.path)
    index = CommitIndex(repo)
    total = int(git(scenario.path, "rev-list", "--count", "--all").strip())
    assert index.reader.count() == total
    assert index.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


_OPEN_AT_ONCE = """
import sys, time
from pathlib import Path
from backportr.index import SCHEMA_VERSION, CommitIndex
from backportr.git.repo import Repo
start = float(sys.argv[3])
while time.time() < start:
    pass
CommitIndex(Repo(Path(sys.argv[1])), Path(sys.argv[2])).close()
"""


def test_many_runs_creating_one_index_at_once_all_succeed(
    scenario: RepoBuilder, tmp_path: Path
) -> None:
    """The first open switches a new file to WAL: runs doing it together queue for it."""
    for round_ in range(3):
        path = tmp_path / f"fresh-{round_}.sqlite"
        start = f"{time.time() + 1.5:.3f}"  # all spin until the same instant
        argv = [sys.executable, "-c", _OPEN_AT_ONCE, str(scenario.path), str(path), start]
        procs = [
            subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(6)
        ]
        outs = [p.communicate(timeout=60) for p in procs]
        assert [p.returncode for p in procs] == [0] * 6, outs
        with CommitIndex(Repo(scenario.path), path) as index:
            assert index.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_an_index_of_another_schema_version_is_redone(scenario: RepoBuilder) -> None:
    repo, index = _open(scenario)
    assert index.reader.count() > 0
    index.db.execute("UPDATE meta SET value='0' WHERE key='schema'")
    index.close()
    with CommitIndex(repo) as again:
        assert again.reader.count() == 0  # dropped, to be read again
        row = again.db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        assert row[0] == f"{SCHEMA_VERSION}:{Vocabulary().fingerprint}" == again.file.schema_mark
        again.writer.update(repo.upstream(), [repo.branch("linux-5.10.y")])
        assert again.reader.count() > 0
    # Read with other fix forms (backportr.fixesPattern), it is read again, and so back.
    own = Vocabulary([r"^Amends: ([0-9a-f]+)"])
    with CommitIndex(repo, vocabulary=own) as other:
        assert other.reader.count() == 0
        other.writer.update(repo.upstream(), [repo.branch("linux-5.10.y")])
        assert other.reader.count() > 0
    with CommitIndex(repo) as default:
        assert default.reader.count() == 0


def test_the_reader_writes_nothing(scenario: RepoBuilder) -> None:
    """Every question of the index's reader is answered by a connection that may not write
    (`query_only`): what is kept for later is the `kept` part's, and a question that
    computes rows when first asked (patch-ids, after-fork rows) is its part's, not the
    reader's."""
    repo, index = _open(scenario)
    ids = scenario.ids
    refname = repo.branch("linux-5.10.y").refname
    index.db.execute("PRAGMA query_only=1")
    reader = index.reader
    reader.forget()
    assert reader.count() > 0
    assert [r.name for r in reader.refs()] == ["linux-5.10.y", "master"]
    assert reader.stored_ref(refname) is not None
    info, row = reader.info(ids["fix"]), reader.row(ids["fix"])
    assert info is not None and row is not None and info.subject == row.subject
    assert reader.is_upstream(ids["fix"]) and reader.upstream_seq(ids["fix"]) is not None
    assert [r.target for r in reader.fixes_of(ids["fix"])] == [ids["culprit"]]
    assert ids["fix"] in [r.commit for r in reader.fixed_by(ids["culprit"])]
    assert reader.reverts_of(ids["fix"]) == [] and reader.reverted_by(ids["init"]) == []
    assert reader.copies_upstream(ids["fix"]) == [] and reader.stable_deps_naming(ids["fix"]) == []
    assert reader.stable_tags_of(ids["fix"]) == []
    carriers = reader.carriers(ids["fix"], refname)
    assert carriers and reader.carried_upstream(carriers[0]) == ids["fix"]
    assert reader.branches_of(carriers[0]) == ["linux-5.10.y"]
    assert (carriers[0], ids["fix"]) in reader.backports_in(refname)
    assert reader.upstream_by_subject(info.subject) == [ids["fix"]]
    assert reader.branch_commits_with_subject(info.subject, refname)
    assert reader.posting_of(ids["fix"]) is None
    assert sum(reader.fix_form_counts().values()) > 0
    with pytest.raises(sqlite3.OperationalError, match="readonly"):  # the connection is so
        index.db.execute("DELETE FROM results")


def test_a_project_fact_is_counted_once_per_state_of_the_refs(
    scenario: RepoBuilder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether the project tags for stable is counted over the whole index once: another
    process reads the kept answer until a ref moves or the rule's threshold changes, and then
    counts again."""
    repo, index = _open(scenario)
    assert index.facts.has_stable_tags() is False  # its one fix carries no stable tag
    assert index.facts.takes_fixes_only() is False  # too few backports to say

    def not_again() -> bool:
        raise AssertionError("counted again with nothing moved")

    later = CommitIndex(repo)
    monkeypatch.setattr(later.facts, "_count_tagging", not_again)
    monkeypatch.setattr(later.facts, "_count_fixes_only", not_again)
    assert later.facts.has_stable_tags() is False
    assert later.facts.takes_fixes_only() is False
    monkeypatch.undo()

    from backportr.index import facts

    monkeypatch.setattr(facts, "TAGGING_SHARE", 0.5)  # another rule: counted anew
    other_rule = CommitIndex(repo)
    monkeypatch.setattr(other_rule.facts, "_count_tagging", lambda: True)
    assert other_rule.facts.has_stable_tags() is True
    monkeypatch.undo()

    culprit = scenario.ids["culprit"]
    scenario.commit(
        f'foo: fix it again\n\nFixes: {culprit[:12]} ("foo: add helper")\n'
        "Cc: stable@vger.kernel.org\n",
        {"drivers/foo.c": scenario.files("master")["drivers/foo.c"] + "/* again */\n"},
    )
    repo = Repo(scenario.path)
    moved = CommitIndex(repo)
    moved.writer.update(repo.upstream(), [repo.branch("linux-5.10.y")])
    assert moved.facts.has_stable_tags() is True  # one of its two fixes is tagged now
    assert CommitIndex(repo).facts.has_stable_tags() is True  # and kept so


def test_a_branch_with_two_merge_bases_keeps_libgit2s_fork(tmp_path: Path) -> None:
    """Forks are found by git in the background; where git sees several merge bases the
    fork is still libgit2's choice, and the upstream commits after it are git's rev-list."""
    path = tmp_path / "repo"
    git(tmp_path, "init", "-q", "-b", "master", str(path))
    for step, args in [
        ("base", []),
        ("up one", []),
        ("stable", ["checkout", "-q", "-b", "stable", "master~1"]),
        ("merge up", ["merge", "-q", "--no-ff", "-m", "merge up", "master"]),
        ("up two", ["checkout", "-q", "master"]),
        ("merge stable", ["merge", "-q", "--no-ff", "-m", "merge stable", "stable~1"]),
    ]:
        if args:
            git(path, *args)
        if not step.startswith("merge"):
            (path / f"{step.replace(' ', '-')}.txt").write_text(step + "\n")
            git(path, "add", "-A")
            git(path, "commit", "-q", "-m", step)
    git(path, "checkout", "-q", "stable")
    (path / "late.txt").write_text("late\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "stable late")
    assert len(git(path, "merge-base", "--all", "master", "stable").split()) == 2
    repo = Repo(path)
    index = CommitIndex(repo, tmp_path / "index.sqlite")
    upstream, branch = repo.upstream("master"), repo.branch("stable")
    index.writer.update(upstream, [branch])
    fork = repo.merge_base(branch.tip, upstream.tip)
    assert {r.refname: r.fork for r in index.reader.refs()}[branch.refname] == fork
    after = set(git(path, "rev-list", "master", f"^{fork}").split())
    rows = index.db.execute(
        "SELECT c.oid FROM after_fork a JOIN commits c ON c.id=a.commit_id WHERE a.refname=?",
        (branch.refname,),
    )
    assert {r[0] for r in rows} == after != set()


def _journal_mode(path: Path) -> str:
    with contextlib.closing(sqlite3.connect(path)) as db:
        return str(db.execute("PRAGMA journal_mode").fetchone()[0])


def test_a_first_build_is_filled_with_a_rollback_journal_and_left_in_wal(
    scenario: RepoBuilder, tmp_path: Path
) -> None:
    """WAL writes a large transaction twice; an empty index is filled with a rollback
    journal and then goes back to WAL. An update of a filled index stays in WAL."""
    repo = Repo(scenario.path)
    index = CommitIndex(repo, tmp_path / "index.sqlite")
    modes: list[str] = []
    index.db.set_trace_callback(lambda sql: modes.append(sql) if "journal_mode" in sql else None)
    index.writer.update(repo.upstream(), [repo.branch("linux-5.10.y")])
    assert modes == ["PRAGMA journal_mode=DELETE", "PRAGMA journal_mode=WAL"]
    assert _journal_mode(index.path) == "wal"
    assert index.reader.fixed_by(scenario.ids["culprit"])
    modes.clear()
    scenario.commit("foo: later\n", {"late.txt": "late\n"})
    index.writer.update(repo.upstream(), [repo.branch("linux-5.10.y")])
    assert modes == [] and _journal_mode(index.path) == "wal"


def test_a_first_build_beside_an_open_reader_stays_in_wal(
    scenario: RepoBuilder, tmp_path: Path
) -> None:
    """Another connection holding the empty index open keeps it in WAL: the build neither
    waits for it nor fails, and the reader then sees the whole index."""
    repo = Repo(scenario.path)
    reader = CommitIndex(repo, tmp_path / "index.sqlite")
    assert reader.reader.count() == 0
    writer = CommitIndex(repo, tmp_path / "index.sqlite")
    modes: list[str] = []
    writer.db.set_trace_callback(lambda sql: modes.append(sql) if "journal_mode" in sql else None)
    writer.writer.update(repo.upstream(), [repo.branch("linux-5.10.y")])
    assert modes == ["PRAGMA journal_mode=DELETE"]  # tried, refused: the reader holds it
    assert _journal_mode(writer.path) == "wal"
    assert reader.reader.count() == writer.reader.count() > 0
    assert reader.reader.fixed_by(scenario.ids["culprit"]) == writer.reader.fixed_by(
        scenario.ids["culprit"]
    )


def _long_history(path: Path, commits: int) -> None:
    """A linear history of `commits` commits with long messages, by one `git fast-import`."""
    git(path.parent, "init", "-q", "--bare", "-b", "master", str(path))
    body = "word " * 400
    stream = []
    for i in range(commits):
        message = f'change {i}\n\n{body}\nFixes: {"0" * 12} ("nothing")\n'.encode()
        stream.append(
            b"commit refs/heads/master\n"
            + f"committer A U Thor <a@example.org> {1_600_000_000 + i} +0000\n".encode()
            + f"data {len(message)}\n".encode()
            + message
            + f"M 644 inline f{i % 50}.c\ndata 2\n{i % 10}\n\n".encode()
        )
    subprocess.run(
        ["git", "-C", str(path), "fast-import", "--quiet"], input=b"".join(stream), check=True
    )
    git(path, "branch", "linux-5.10.y", f"master~{commits // 2}")


def test_a_first_fill_killed_midway_is_rolled_back_and_done_again(tmp_path: Path) -> None:
    """The first fill writes with a rollback journal: a run killed while it is hot leaves
    the journal, the next run rolls it back (no half-written index) and builds it whole."""
    path = tmp_path / "repo.git"
    _long_history(path, 8_000)
    index = tmp_path / "index.sqlite"
    journal = tmp_path / "index.sqlite-journal"
    cmd = [sys.executable, "-m", "backportr", "index", "--repo", str(path), "--upstream"]
    cmd += ["master", "--branch", "linux-5.10.y", "--index", str(index)]
    for _ in range(5):  # a loaded machine may not look while the fill is hot: try again
        for stale in tmp_path.glob("index.*"):
            stale.unlink()
        run = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while not journal.exists() and run.poll() is None:
            time.sleep(0.001)
        run.kill()
        run.wait()
        if journal.exists():
            break
    assert journal.exists(), "the build ended before its journal was seen, five times"
    again = subprocess.run(cmd, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert not journal.exists()
    assert _journal_mode(index) == "wal"
    with contextlib.closing(sqlite3.connect(index)) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert db.execute("SELECT COUNT(*) FROM commits").fetchone()[0] == 8_000


def _patch_ids(index: CommitIndex, refname: str) -> dict[str, str | None]:
    rows = index.db.execute(
        "SELECT c.oid, c.patch_id FROM branch_commits b JOIN commits c ON c.id=b.commit_id "
        "WHERE b.refname=?",
        (refname,),
    )
    return dict(rows.fetchall())


def test_a_sibling_indexed_beside_gets_its_patch_ids_when_asked(tmp_path: Path) -> None:
    """The branches a command works on get their patch-ids as they are indexed; a sibling
    indexed beside them only those a question needs (a backport that names nothing, found
    by patch-id: the sibling's commits that change the same paths), or all when a later
    update works on it. The answers are the same either way."""
    s = culprit_in_sibling_branch_by_patch_id(tmp_path / "repo")
    elsewhere = s.builder.files("linux-5.15.y")["fs/core.c"].replace("\ty += 1;", "\ty += 9;", 1)
    s.builder.commit("fs: a change of its own", {"fs/core.c": elsewhere}, branch="linux-5.15.y")
    repo = Repo(s.path)
    branches = [repo.branch(BRANCH), repo.branch("linux-5.15.y")]
    worked_on, sibling = (b.refname for b in branches)
    eager = CommitIndex(repo, tmp_path / "eager.sqlite")
    eager.writer.update(repo.upstream(), branches)
    expected = _patch_ids(eager, sibling)
    assert len(expected) == 2 and all(expected.values())

    lazy = CommitIndex(repo, tmp_path / "lazy.sqlite")
    lazy.writer.update(repo.upstream(), branches, worked_on=[worked_on])
    assert set(_patch_ids(lazy, sibling).values()) == {None}
    assert _patch_ids(lazy, worked_on) == _patch_ids(eager, worked_on)
    answer = [("linux-5.15.y", s.ids["culprit-5.15"])]
    assert lazy.patch_ids.backports_elsewhere(s.ids["culprit"], worked_on) == answer
    assert eager.patch_ids.backports_elsewhere(s.ids["culprit"], worked_on) == answer
    after = _patch_ids(lazy, sibling)  # the commit of the same paths got its own, only it
    assert after == {**expected, s.builder.tip("linux-5.15.y"): None}
    pid = expected[s.ids["culprit-5.15"]]
    assert pid is not None
    assert lazy.patch_ids.branch_commits_with_patch_id(s.ids["culprit"], pid, sibling) == [
        s.ids["culprit-5.15"]
    ]
    assert _patch_ids(lazy, sibling) == after  # a question about the sibling itself: the same
    lazy.patch_ids.complete([sibling])
    assert _patch_ids(lazy, sibling) == expected
    assert not lazy.db.execute("SELECT * FROM patch_ids_pending").fetchall()

    later = CommitIndex(repo, tmp_path / "later.sqlite")
    later.writer.update(repo.upstream(), branches, worked_on=[worked_on])
    later.writer.update(repo.upstream(), branches)  # a command working on every branch
    assert _patch_ids(later, sibling) == expected
    assert not later.db.execute("SELECT * FROM patch_ids_pending").fetchall()


def test_backports_naming_upstream_get_their_patch_ids_when_asked(tmp_path: Path) -> None:
    """Of a branch worked on, the commits that name their upstream commit get their
    patch-ids at the update only when asked for (a scan's update); otherwise a question by
    patch-id computes those that change its commit's paths. The same patch reached upstream
    twice, by two merged topic branches: the backport names the first, and the second is
    found in the branch by patch-id alike."""
    b = RepoBuilder(tmp_path / "repo")
    b.commit("init", {"fs/a.c": "int a;\nint x = 1;\n", "fs/b.c": "int b;\n"})
    b.branch("linux-5.10.y", "master")
    for topic, who in (("t1", "first"), ("t2", "second")):
        b.branch(topic, "master")
        b.commit(f"fs: x is two ({who})", {"fs/a.c": "int a;\nint x = 2;\n"}, branch=topic)
        b.ids[topic] = b.tip(topic)
    b.merge("master", "t1", "Merge t1")
    b.merge("master", "t2", "Merge t2")
    b.commit("fs: b is long", {"fs/b.c": "long b;\n"}, name="unnamed")
    b.cherry_pick(b.ids["t1"], "linux-5.10.y", name="named-bp")
    b.cherry_pick(b.ids["unnamed"], "linux-5.10.y", name="unnamed-bp", annotation=None)
    repo = Repo(b.path)
    branch = repo.branch("linux-5.10.y")
    answers = {}
    for named in (False, True):
        index = CommitIndex(repo, tmp_path / f"named-{named}.sqlite")
        index.writer.update(repo.upstream(), [branch], named_patch_ids=named)
        ids = _patch_ids(index, branch.refname)
        assert ids[b.ids["unnamed-bp"]] is not None
        assert (ids[b.ids["named-bp"]] is not None) is named
        pending = index.db.execute("SELECT refname FROM patch_ids_pending").fetchall()
        assert pending == ([] if named else [(branch.refname,)])
        found = PresenceChecker(repo, index).check(b.ids["t2"], branch)
        answers[named] = (found.present, found.as_commit, found.how)
        assert _patch_ids(index, branch.refname)[b.ids["named-bp"]] is not None
    assert answers[False] == answers[True] == (True, b.ids["named-bp"], "patch-id")

    # The pending commits' paths were kept: a later command reads them, git lists none.
    lazy_path = tmp_path / "lazy-again.sqlite"
    index = CommitIndex(repo, lazy_path)
    index.writer.update(repo.upstream(), [branch])
    b.commit("fs: b is short", {"fs/b.c": "short b;\n"}, name="short")
    assert not PresenceChecker(repo, index).check(b.ids["short"], branch).present
    kept = index.db.execute("SELECT COUNT(*) FROM commit_paths").fetchone()[0]
    assert kept == 1  # the named backport, the branch's one commit still without a patch-id
    assert _patch_ids(index, branch.refname)[b.ids["named-bp"]] is None  # other paths
    index.close()
    again = Repo(b.path)
    listed: list[list[str]] = []
    learn = again.diffs.learn_paths

    def learn_paths(oids: Iterable[Oid]) -> None:
        listed.append(list(oids))
        learn(oids)

    again.diffs.learn_paths = learn_paths  # type: ignore[method-assign]
    found = PresenceChecker(again, CommitIndex(again, lazy_path)).check(b.ids["t2"], branch)
    assert (found.present, found.as_commit, found.how) == answers[False]
    assert listed and all(set(oids) <= {b.ids["t2"]} for oids in listed)  # the question's only

    index = CommitIndex(repo, tmp_path / "named-False.sqlite")  # a scan's update completes it
    index.writer.update(repo.upstream(), [branch], named_patch_ids=True)
    assert not index.db.execute("SELECT * FROM patch_ids_pending").fetchall()


def test_heavy_commits_get_their_patch_ids_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A commit whose diff reads more than `HEAVY_BYTES` of blobs (a branch's merged
    translation catalogs) gets no patch-id when its branch is indexed, in the first update
    or a later one, even a scan's (named): the branch stays pending, and a question by
    patch-id computes it where it could share the question's. An unannotated backport of a
    heavy upstream commit is found as before; the light commits have theirs at once."""
    from backportr.git import streams

    monkeypatch.setattr(streams, "HEAVY_BYTES", 4000)
    catalog = "".join(f'msgid "m{n}"\nmsgstr "t{n}"\n' for n in range(200))  # > 4000 bytes
    b = RepoBuilder(tmp_path / "repo")
    b.commit("init", {"po/de.po": catalog, "fs/a.c": "int a;\n"})
    b.branch("linux-5.10.y", "master")
    b.commit("po: merge changes", {"po/de.po": catalog.replace('"t1', '"u1')}, name="po")
    b.commit("fs: a is long", {"fs/a.c": "long a;\n"}, name="fix")
    b.cherry_pick(b.ids["po"], "linux-5.10.y", name="po-bp", annotation=None)
    b.cherry_pick(b.ids["fix"], "linux-5.10.y", name="fix-bp", annotation=None)
    b.commit(
        "po: update de.po", {"po/de.po": catalog.replace('"t2', '"v2')}, branch="linux-5.10.y",
        name="own",
    )  # fmt: skip
    repo = Repo(b.path)
    assert repo.streams.heavy([b.ids["po-bp"], b.ids["fix-bp"], b.ids["own"]]) == {
        b.ids["po-bp"],
        b.ids["own"],
    }
    branch = repo.branch("linux-5.10.y")
    index = CommitIndex(repo, tmp_path / "index.sqlite")
    for named in (False, True):
        index.writer.update(repo.upstream(), [branch], named_patch_ids=named)
        ids = _patch_ids(index, branch.refname)
        assert ids[b.ids["fix-bp"]] is not None
        assert ids[b.ids["po-bp"]] is None and ids[b.ids["own"]] is None
        pending = index.db.execute("SELECT refname FROM patch_ids_pending").fetchall()
        assert pending == [(branch.refname,)]
    found = PresenceChecker(repo, index).check(b.ids["po"], branch)
    assert (found.present, found.as_commit, found.how) == (True, b.ids["po-bp"], "patch-id")
    ids = _patch_ids(index, branch.refname)
    assert ids[b.ids["po-bp"]] is not None  # asked: the commits of the same paths got theirs
    assert ids[b.ids["own"]] is not None
    monkeypatch.setattr(streams, "HEAVY_BYTES", 16 << 20)
    eager = CommitIndex(repo, tmp_path / "eager.sqlite")
    eager.writer.update(repo.upstream(), [branch], named_patch_ids=True)
    assert PresenceChecker(repo, eager).check(b.ids["po"], branch).as_commit == b.ids["po-bp"]
    assert not eager.db.execute("SELECT * FROM patch_ids_pending").fetchall()


def _after_fork(index: CommitIndex, refname: str) -> set[str]:
    rows = index.db.execute(
        "SELECT c.oid FROM after_fork a JOIN commits c ON c.id=a.commit_id WHERE a.refname=?",
        (refname,),
    )
    return {r[0] for r in rows}


def test_a_sibling_indexed_beside_gets_its_upstream_after_fork_when_asked(tmp_path: Path) -> None:
    """The branches a command works on get the upstream commits after their forks listed as
    they are indexed; a sibling indexed beside them when a question needs them (is an
    upstream commit in it?), or when a later update works on it. Upstream moving meanwhile
    changes nothing: the answers are git's, and the rows those of an index that listed
    every branch at once."""
    b = RepoBuilder(tmp_path / "repo")
    b.commit("init", {"a.c": "0\n"})
    for i in range(4):
        b.commit(f"upstream {i}", {"a.c": f"{i + 1}\n"})
        if i in (1, 2):
            name = "stable-old" if i == 1 else "stable-mid"
            b.branch(name, "master")
            b.commit(f"backport {name}", {f"{name}.c": "x\n"}, branch=name)
    b.branch("stable-new", "master")
    b.commit("backport new", {"new.c": "x\n"}, branch="stable-new")
    b.commit("upstream 4", {"a.c": "5\n"})
    repo = Repo(b.path)
    branches = [repo.branch(name) for name in ("stable-new", "stable-old", "stable-mid")]
    worked_on, sibling, other = (x.refname for x in branches)

    lazy = CommitIndex(repo, tmp_path / "lazy.sqlite")
    lazy.writer.update(repo.upstream(), branches, worked_on=[worked_on])
    assert _after_fork(lazy, sibling) == set()
    assert len(_after_fork(lazy, worked_on)) == 1
    b.commit("upstream 5", {"a.c": "6\n"})  # upstream moves before anything is asked
    lazy.writer.update(repo.upstream(), branches, worked_on=[worked_on])
    upstream = oids(repo.run_git("rev-list", "master"))
    for oid in upstream:  # the sibling's rows listed at the first question
        ancestor = subprocess.run(
            ["git", "-C", str(b.path), "merge-base", "--is-ancestor", oid, "stable-old"],
            check=False,
        ).returncode
        assert lazy.after_fork.in_branch(oid, sibling) is (ancestor == 0)
    assert lazy.db.execute("SELECT * FROM after_fork_pending").fetchall() == [(other,)]

    eager = CommitIndex(repo, tmp_path / "eager.sqlite")
    eager.writer.update(repo.upstream(), branches)
    expected = repo.run_git("rev-list", "master", "^stable-old").split()
    assert _after_fork(eager, sibling) == set(expected) == _after_fork(lazy, sibling)
    assert len(expected) == 4

    later = CommitIndex(repo, tmp_path / "later.sqlite")
    later.writer.update(repo.upstream(), branches, worked_on=[worked_on])
    assert later.after_fork.fixes(sibling) == []  # a question of the scan's kind lists them
    assert _after_fork(later, sibling) == set(expected)
    again = CommitIndex(repo, tmp_path / "again.sqlite")
    again.writer.update(repo.upstream(), branches, worked_on=[worked_on])
    b.commit("upstream 6", {"a.c": "7\n"})
    again.writer.update(repo.upstream(), branches)  # a command working on every branch: both listed
    assert not again.db.execute("SELECT * FROM after_fork_pending").fetchall()
    for refname, name in ((sibling, "stable-old"), (other, "stable-mid")):
        assert _after_fork(again, refname) == set(
            repo.run_git("rev-list", "master", f"^{name}").split()
        )


def test_the_forks_of_many_new_branches_are_found_side_by_side(tmp_path: Path) -> None:
    """Branches new to the index have their forks found by git in background threads, a
    few at once, each answer waited for alone: every fork and its upstream commits are what
    git says of that branch, and one git cannot answer for has no fork, the others' unchanged."""
    b = RepoBuilder(tmp_path / "repo")
    b.commit("init", {"a.c": "0\n"})
    tips = []
    for i in range(5):
        b.commit(f"upstream {i}", {"a.c": f"{i + 1}\n"})
        b.branch(f"stable-{i}", "master")
        tips.append(b.commit(f"backport {i}", {f"b{i}.c": "x\n"}, branch=f"stable-{i}"))
    b.commit("upstream 5", {"a.c": "6\n"})
    repo = Repo(b.path)
    upstream = repo.upstream("master").tip
    probes = ForkProbes(repo, upstream, [*tips, Oid("f" * 40)])
    for i, tip in reversed(list(enumerate(tips))):  # asked for in any order
        fork = repo.run_git("merge-base", tip, upstream).strip()
        assert probes.fork(i, tip) == fork
        assert probes.after_fork(i) == repo.run_git("rev-list", upstream, f"^{fork}").split()
    assert probes.fork(len(tips), Oid("f" * 40)) is None  # git knows no such commit: no fork


def test_a_branch_read_whole_holds_what_upstream_does_not(tmp_path: Path) -> None:
    """A branch new to the index is walked from its tip down to its fork (not down through
    upstream's history): its own commits are still exactly those upstream does not have,
    for a branch that merged upstream again after it forked too."""
    b = RepoBuilder(tmp_path / "repo")
    b.commit("init", {"a.c": "0\n", "b.c": "0\n"})
    b.commit("upstream 1", {"a.c": "1\n"})
    b.branch("stable", "master")
    b.commit("backport 1", {"b.c": "1\n"}, branch="stable")
    b.commit("upstream 2", {"a.c": "2\n"})
    b.merge("stable", "master", "merge upstream into stable")
    b.commit("backport 2", {"b.c": "2\n"}, branch="stable")
    b.commit("upstream 3", {"a.c": "3\n"})
    repo = Repo(b.path)
    index = CommitIndex(repo)
    index.writer.update(repo.upstream("master"), [repo.branch("stable")])
    own = index.db.execute(
        "SELECT c.oid FROM branch_commits b JOIN commits c ON c.id=b.commit_id ORDER BY b.seq DESC"
    ).fetchall()
    assert [r[0] for r in own] == repo.run_git("rev-list", "stable", "^master").split()
    assert len(own) == 3  # the two backports and the merge
    # its patch-ids were listed down to its merge bases too: its two backports', no other
    patched = dict(index.db.execute("SELECT oid, patch_id FROM commits WHERE patch_id IS NOT NULL"))
    backports = repo.run_git("rev-list", "--no-merges", "stable", "^master").split()
    assert sorted(patched) == sorted(backports)
    for oid in backports:
        shown = repo.run_git_bytes("show", oid)
        expected = repo.run_git("patch-id", "--stable", input=shown).split()[0]
        assert patched[oid] == expected


def _tables(index: CommitIndex) -> dict[str, list[tuple[object, ...]]]:
    """What an index says, rows named by commit ids (a rebuilt index numbers rows anew)."""
    queries = {
        "commits": "SELECT oid, upstream_seq IS NOT NULL, patch_id FROM commits",
        "refs": "SELECT * FROM refs",
        "fixes": "SELECT c.oid, f.ref, f.target, f.how FROM fixes f JOIN commits c"
        " ON c.id=f.commit_id",
        "branch_commits": "SELECT b.refname, c.oid, b.seq FROM branch_commits b JOIN commits c"
        " ON c.id=b.commit_id",
        "after_fork": "SELECT a.refname, c.oid FROM after_fork a JOIN commits c"
        " ON c.id=a.commit_id",
        "after_fork_pending": "SELECT * FROM after_fork_pending",
    }
    return {name: sorted(index.db.execute(q).fetchall(), key=repr) for name, q in queries.items()}


@pytest.mark.parametrize("how", ["rewritten", "another ref"])
def test_a_replaced_upstream_rebuilds_the_index(tmp_path: Path, how: str) -> None:
    """Upstream rewritten (neither tip an ancestor of the other) or another upstream ref
    that shares its history: the update builds the index afresh, as a new index would be
    (the old history's commits could not be appended again), and says so."""
    b = RepoBuilder(tmp_path / "repo")
    b.commit("init", {"a.c": "0\n"})
    culprit = b.commit("mm: add a bug", {"a.c": "1\n"})
    b.branch("stable", "master")
    b.commit("backport", {"s.c": "x\n"}, branch="stable")
    b.branch("sibling", "master")
    b.commit("backport there", {"t.c": "x\n"}, branch="sibling")
    b.commit(f'mm: fix the bug\n\nFixes: {culprit[:12]} ("mm: add a bug")\n', {"a.c": "2\n"})
    b.commit("mm: more", {"a.c": "3\n"})
    repo = Repo(b.path)
    branches = [repo.branch("stable"), repo.branch("sibling")]
    index = CommitIndex(repo, tmp_path / "index.sqlite")
    index.writer.update(repo.upstream("master"), branches, worked_on=[branches[0].refname])
    if how == "rewritten":
        b.branch("master", "master~1")
        b.commit("mm: other work", {"b.c": "1\n"})
        upstream = "master"
    else:
        b.branch("next", "master")
        b.commit("mm: next work", {"b.c": "1\n"}, branch="next")
        upstream = "next"
    repo = Repo(b.path)
    branches = [repo.branch("stable"), repo.branch("sibling")]
    stats = index.writer.update(repo.upstream(upstream), branches, worked_on=[branches[0].refname])
    assert stats.replaced_upstream == "master"
    fresh = CommitIndex(repo, tmp_path / "fresh.sqlite")
    fresh.writer.update(repo.upstream(upstream), branches, worked_on=[branches[0].refname])
    assert _tables(index) == _tables(fresh)
    assert index.reader.fixed_by(culprit) == fresh.reader.fixed_by(culprit) != []
    again = index.writer.update(repo.upstream(upstream), branches, worked_on=[branches[0].refname])
    assert again.replaced_upstream is None and again.new_commits[upstream] == 0


def test_a_branch_gone_from_the_repository_is_no_evidence(tmp_path: Path) -> None:
    """A sibling deleted from the repository (or renamed) is dropped at the next update:
    its backports no longer answer "did another stable branch take it?". A branch only
    left out of a command stays."""
    s = culprit_in_sibling_branch_by_patch_id(tmp_path / "repo")
    repo = Repo(s.path)
    branches = [repo.branch(BRANCH), repo.branch("linux-5.15.y")]
    worked_on, sibling = (b.refname for b in branches)
    index = CommitIndex(repo, tmp_path / "index.sqlite")
    index.writer.update(repo.upstream(), branches, worked_on=[worked_on])
    answer = [("linux-5.15.y", s.ids["culprit-5.15"])]
    assert index.patch_ids.backports_elsewhere(s.ids["culprit"], worked_on) == answer
    left_out = index.writer.update(repo.upstream(), branches[:1], worked_on=[worked_on])
    assert left_out.dropped == ()
    assert index.patch_ids.backports_elsewhere(s.ids["culprit"], worked_on) == answer
    subprocess.run(["git", "-C", str(s.path), "branch", "-q", "-D", "linux-5.15.y"], check=True)
    repo = Repo(s.path)
    stats = index.writer.update(repo.upstream(), [repo.branch(BRANCH)], worked_on=[worked_on])
    assert stats.dropped == ("linux-5.15.y",)
    assert index.patch_ids.backports_elsewhere(s.ids["culprit"], worked_on) == []
    for table in (
        "refs",
        "branch_commits",
        "after_fork",
        "after_fork_pending",
        "patch_ids_pending",
    ):
        assert not index.db.execute(f"SELECT 1 FROM {table} WHERE refname=?", (sibling,)).fetchone()


def _answers(
    index: CommitIndex, repo: Repo, refnames: list[str], *, fixers_in_order: bool = True
) -> dict[str, object]:
    """What the index answers about every upstream commit and branch: an index kept up to
    date step by step must answer as one built afresh (its tables may keep more commits).
    Without `fixers_in_order`, a commit's fixers as a set: upstream commits are numbered
    as they arrive, so commits an update brings in through a merge, older than upstream's
    earlier tip, come after every earlier one, where a fresh read takes them by date."""
    answers: dict[str, object] = {
        "refs": sorted((r.refname, r.kind, r.tip, r.fork) for r in index.reader.refs()),
    }
    for oid in oids(repo.run_git("rev-list", "master")):
        fixers = [(r.commit, r.target, r.how) for r in index.reader.fixed_by(oid)]
        answers[oid] = (
            fixers if fixers_in_order else sorted(fixers),
            [  # a revert of an upstream or branch commit (one upstream left stays stored)
                (r.commit, r.target)
                for r in index.reader.reverted_by(oid)
                if index.reader.is_upstream(r.commit) or index.reader.branches_of(r.commit)
            ],
            [index.after_fork.in_branch(oid, b) for b in refnames],
            [index.reader.carriers(oid, b) for b in refnames],
            [index.patch_ids.backports_elsewhere(oid, b) for b in refnames],
        )
    return answers


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_an_index_kept_up_to_date_answers_as_one_built_afresh(tmp_path: Path, seed: int) -> None:
    """Random histories, moved step by step as repositories move (upstream grows, reverts,
    goes back, is rewritten, merges a stable branch; branches take backports, merge
    upstream, are force-pushed, go back, are deleted and created), the index updated after
    each step (one branch worked on, the others beside it), compared each time with an
    index built afresh from the same refs."""
    rng = random.Random(seed)
    b = RepoBuilder(tmp_path / "repo")
    count = 0

    def upstream_commit() -> None:
        nonlocal count
        count += 1
        earlier = repo_commits("master")
        body = ""
        if earlier and rng.random() < 0.4:
            culprit = rng.choice(earlier)
            body = f"\n\nFixes: {culprit[:12]}\n"
        b.commit(f"mm: change {count}{body}", {f"f{count}.c": f"{count}\n"})

    def repo_commits(ref: str) -> list[str]:
        if not Repo(b.path).has_ref(f"refs/heads/{ref}"):
            return []
        return Repo(b.path).run_git("rev-list", ref).split()

    for _ in range(6):
        upstream_commit()
    names = ["stable-a", "stable-b", "stable-c"]
    for name in names:
        b.branch(name, f"master~{rng.randint(1, 4)}")
    merged = False  # has upstream merged a branch (see `_answers`)?
    for step in range(10):
        op = rng.choice(
            [
                "grow",
                "grow",
                "back",
                "rewrite",
                "pick",
                "pick",
                "force",
                "delete",
                "revert",
                "merge",
                "take",
            ]
        )
        live = [n for n in names if repo_commits(n)]
        depth = len(repo_commits("master")) - 1  # how far back `master~N` reaches
        if depth < 5 and op in ("back", "rewrite"):
            op = "grow"
        if op == "grow":
            for _ in range(rng.randint(1, 3)):
                upstream_commit()
        elif op == "back":
            b.branch("master", f"master~{rng.randint(1, 2)}")
        elif op == "rewrite":
            b.branch("master", f"master~{rng.randint(1, 2)}")
            upstream_commit()
        elif op == "pick" and live:
            name = rng.choice(live)
            missing = sorted(set(repo_commits("master")) - set(repo_commits(name)))
            if missing:
                how = rng.choice(["upstream", "cherry-pick", "sasha", None])
                b.cherry_pick(rng.choice(missing), name, annotation=how)
        elif op == "force" and live:
            b.branch(rng.choice(live), f"master~{rng.randint(1, min(5, depth))}")
        elif op == "revert":
            b.revert(rng.choice(repo_commits("master")[:3]), "master")
        elif op == "merge" and live:  # a branch that merges upstream again
            b.merge(rng.choice(live), "master", "Merge upstream")
        elif op == "take" and live:  # upstream merges a stable branch
            b.merge("master", rng.choice(live), "Merge the stable fixes")
            merged = True
        elif op == "delete":
            gone = rng.choice(names)
            if repo_commits(gone):
                subprocess.run(["git", "-C", str(b.path), "branch", "-q", "-D", gone], check=True)
            else:
                b.branch(gone, f"master~{rng.randint(1, min(3, depth))}")
        repo = Repo(b.path)
        branches = [repo.branch(n) for n in names if repo.has_ref(f"refs/heads/{n}")]
        # the commands work on one branch, on none of them (a status of the sibling
        # evidence), or on every one; the fresh index works on every one
        worked_on = rng.choice([[x.refname for x in branches[:1]], [], None])
        kept = CommitIndex(repo, tmp_path / "kept.sqlite")
        kept.writer.update(repo.upstream("master"), branches, worked_on=worked_on)
        fresh = CommitIndex(repo, tmp_path / f"fresh-{step}.sqlite")
        fresh.writer.update(repo.upstream("master"), branches)
        refnames = [x.refname for x in branches]
        in_order = not merged
        assert _answers(kept, repo, refnames, fixers_in_order=in_order) == _answers(
            fresh, repo, refnames, fixers_in_order=in_order
        ), (step, op)
        kept.close()
        fresh.close()


def _forks(index: CommitIndex) -> dict[str, str | None]:
    rows = index.db.execute("SELECT refname, fork FROM refs WHERE kind='branch'")
    return dict(rows.fetchall())


def test_a_siblings_fork_found_from_the_upstream_commits_its_own_reach(tmp_path: Path) -> None:
    """A sibling's fork is found once upstream is read, from the first upstream commits its
    own commits reach: the same as git's merge base for a plain fork, a fork at an upstream
    merge, a branch that merged upstream again (two reached: git answers), a branch that is
    upstream's own history, and one that shares none."""
    b = RepoBuilder(tmp_path / "repo")
    b.commit("init", {"a.c": "0\n"})
    b.commit("upstream 1", {"a.c": "1\n"})
    b.branch("topic", "master")
    b.commit("topic work", {"t.c": "t\n"}, branch="topic")
    b.commit("upstream 2", {"a.c": "2\n"})
    b.merge("master", "topic", "Merge topic")
    b.branch("stable-plain", "master~1")
    b.commit("backport plain", {"p.c": "p\n"}, branch="stable-plain")
    b.branch("stable-at-merge", "master")
    b.commit("backport at merge", {"m.c": "m\n"}, branch="stable-at-merge")
    b.commit("backport at merge 2", {"m.c": "n\n"}, branch="stable-at-merge")
    b.commit("upstream 3", {"a.c": "3\n"})
    b.branch("stable-remerged", "master~2")
    b.commit("backport remerged", {"r.c": "r\n"}, branch="stable-remerged")
    b.merge("stable-remerged", "master", "Merge upstream into stable")
    b.commit("backport after merge", {"r.c": "s\n"}, branch="stable-remerged")
    b.branch("stable-behind", "master~1")
    b.commit("upstream 4", {"a.c": "4\n"})
    subprocess.run(
        ["git", "-C", str(b.path), "checkout", "-q", "--orphan", "stable-unrelated"], check=True
    )
    subprocess.run(
        ["git", "-C", str(b.path), "commit", "-q", "--allow-empty", "-m", "nothing shared"],
        check=True,
    )
    repo = Repo(b.path)
    names = ["stable-plain", "stable-at-merge", "stable-remerged", "stable-behind"]
    branches = [repo.branch(n) for n in [*names, "stable-unrelated"]]
    expected: dict[str, str | None] = {}
    for branch in branches:
        bases = repo.run_git("merge-base", "--all", branch.tip, "master", check=False).split()
        expected[branch.refname] = (
            bases[0] if len(bases) == 1 else repo.merge_base(branch.tip, repo.upstream().tip)
        )
    assert expected["refs/heads/stable-unrelated"] is None
    assert expected["refs/heads/stable-behind"] == repo.branch("stable-behind").tip
    assert expected["refs/heads/stable-remerged"] == repo.names.resolve_commit("master~1")

    eager = CommitIndex(repo, tmp_path / "eager.sqlite")  # every branch probed by git
    eager.writer.update(repo.upstream(), branches)
    lazy = CommitIndex(repo, tmp_path / "lazy.sqlite")  # the siblings' found from the index
    lazy.writer.update(repo.upstream(), branches, worked_on=[branches[0].refname])
    assert _forks(eager) == expected == _forks(lazy)
    own = "SELECT c.oid, b.seq FROM branch_commits b JOIN commits c ON c.id=b.commit_id"
    assert sorted(lazy.db.execute(own).fetchall()) == sorted(eager.db.execute(own).fetchall())


def test_the_fork_among_several_merge_bases_is_libgit2s_without_its_walk(
    tmp_path: Path,
) -> None:
    """A branch that merged two independent upstream commits has both as merge bases; the
    fork is libgit2's choice, the newest by commit date, whichever of the two is older and
    whatever their ids; when both have one date, libgit2 is asked."""
    for newer in ("x", "y", "neither"):
        b = RepoBuilder(tmp_path / f"repo-{newer}")
        b.commit("init", {"a.c": "0\n"})
        b.branch("side", "master")
        b.branch("stable", "master")
        for name in ("y", "x") if newer == "x" else ("x", "y"):
            branch = "master" if name == "x" else "side"
            if newer == "neither" and name == "y":
                b._clock -= 60  # the same second as x
            b.commit(f"upstream {name}", {f"{name}.c": f"{name}\n"}, branch=branch)
        b.merge("stable", "master", "Merge x into stable")
        b.merge("stable", "side", "Merge y into stable")
        b.merge("master", "side", "Merge y upstream")
        repo = Repo(b.path)
        tip, upstream = repo.branch("stable").tip, repo.upstream().tip
        bases = oids(repo.run_git("merge-base", "--all", tip, upstream))
        assert len(bases) == 2
        chosen = repo.newest_committed(bases)
        assert chosen == (None if newer == "neither" else repo.merge_base(tip, upstream))
        index = CommitIndex(repo, tmp_path / f"{newer}.sqlite")
        index.writer.update(repo.upstream(), [repo.branch("stable")])
        assert _forks(index) == {"refs/heads/stable": repo.merge_base(tip, upstream)}


def test_a_branch_upstream_took_gets_its_new_fork(tmp_path: Path) -> None:
    """A branch whose tip stays keeps its fork when upstream moves forward, unless
    upstream's new commits took some of its own (here upstream merges the stable branch):
    then its fork, own commits and the upstream commits after the fork are those of an
    index built afresh."""
    b = RepoBuilder(tmp_path / "repo")
    b.commit("init", {"a.c": "0\n"})
    b.commit("upstream 1", {"a.c": "1\n"})
    for name in ("stable-taken", "stable-kept"):
        b.branch(name, "master")
        b.commit(f"fix on {name}", {f"{name}.c": "x\n"}, branch=name)
    b.commit("upstream 2", {"a.c": "2\n"})
    repo = Repo(b.path)
    branches = [repo.branch("stable-taken"), repo.branch("stable-kept")]
    kept = CommitIndex(repo, tmp_path / "kept.sqlite")
    kept.writer.update(repo.upstream(), branches, worked_on=[branches[1].refname])
    b.merge("master", "stable-taken", "Merge the stable fixes")
    b.commit("upstream 3", {"a.c": "3\n"})
    kept.writer.update(repo.upstream(), branches, worked_on=[branches[1].refname])
    fresh = CommitIndex(repo, tmp_path / "fresh.sqlite")
    fresh.writer.update(repo.upstream(), branches, worked_on=[branches[1].refname])
    taken = repo.branch("stable-taken").tip
    assert _forks(kept) == _forks(fresh)
    assert _forks(kept)["refs/heads/stable-taken"] == taken  # all of it upstream's now
    own = "SELECT b.refname, c.oid FROM branch_commits b JOIN commits c ON c.id=b.commit_id"
    assert sorted(kept.db.execute(own).fetchall()) == sorted(fresh.db.execute(own).fetchall())
    for branch in branches:
        assert kept.after_fork.fixes(branch.refname) == fresh.after_fork.fixes(branch.refname)
        assert _after_fork(kept, branch.refname) == _after_fork(fresh, branch.refname)


def test_a_cache_write_is_skipped_only_where_the_index_takes_no_writes(
    scenario: RepoBuilder, tmp_path: Path
) -> None:
    """What a run keeps for the next (results, patch-ids, covers) is skipped on a read-only
    index (`test_a_read_only_index_is_read_as_it_is`); a full disk is the fault it is (it
    was swallowed, against the promise of one line naming it)."""
    _, index = _open(scenario)
    with index:
        pages = index.db.execute("PRAGMA page_count").fetchone()[0]
        index.db.execute(f"PRAGMA max_page_count={pages}")  # no room for one more page
        with pytest.raises(sqlite3.OperationalError) as full:
            index.cache.cache_results([(f"key{n}", "x" * 4000) for n in range(20)])
        assert full.value.sqlite_errorname == "SQLITE_FULL"
        assert index.cache.cached_result("key0") is None
