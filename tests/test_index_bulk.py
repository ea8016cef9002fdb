"""The bulk read of the index: the batch parser gives what the one-record parser gives, the
per-line trailer search what a search of the whole body gives, and a long history read by
the worker process the same index as one read in process."""

from __future__ import annotations

import json
import re
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import backportr.index.writer as writer_module
from backportr.errors import BackportrError
from backportr.git.builder import RepoBuilder
from backportr.git.log_records import log_record
from backportr.git.repo import Repo
from backportr.git.walk import Walk
from backportr.index import CommitIndex
from backportr.index.parsing import commit_rows, parse_batch
from backportr.index.schema import tag_from_json, tags_json
from backportr.index.worker import BulkWorker
from backportr.infra import process as childproc
from backportr.model import StableTag, oids
from backportr.text.relation_forms import LearnedPhrase, Vocabulary
from backportr.text.trailers import (
    _CC_LINE,
    _FIXES,
    _MASTER_COMMIT,
    _UPSTREAM_LINE,
    _lines_matching,
)

_LINES = [
    'Fixes: 0123456789ab ("subsystem: a fix")',
    'fixes : abcdef1 ("lower case")',
    "Cc: stable@vger.kernel.org # 5.10.x",
    "Cc: <stable@dpdk.org>",
    "cc: someone <cc@example.org>",
    "commit 0123456789abcdef0123456789abcdef01234567 upstream.",
    "[ Upstream commit 0123456789abcdef0123456789abcdef01234567 ]",
    "(cherry picked from commit 0123456789abcdef0123456789abcdef01234567)",
    "master commit: 0123456789abcdef0123456789abcdef01234567",
    "This reverts commit 0123456789abcdef0123456789abcdef01234567.",
    "Link: https://lore.kernel.org/r/20230124193025.185781-4-jlayton@kernel.org",
    "Link: https://patch.msgid.link/20240131-topic-name-v2-3-1a2b3c4d5e6f@kernel.org",
    "Message-Id: <20230124193025.185781-2-jlayton@kernel.org>",
    "Link: https://lore.kernel.org/r/20230124193025.185781-5-jlayton@kernel.org/",
    "Link: https://lore.kernel.org/r/20230124193025.185781-6-jlayton%40kernel.org",
    "Link: https://lore.kernel.org/r/<20230124193025.185781-7-jlayton@kernel.org>",
    "Link: https://lore.kernel.org/r/no-at-sign-here",
    "Link: https://lore.kernel.org/r/20230124193025.185781-8-link@kernel.org",
    "Link: https://lore.kernel.org/r/20230124193025.185781-9-jlayton@kernel.org trailing",
    "Link: https://patch.msgid.link/20230124193025.185781-3-jlayton@kernel.org\r",
    "Link: https://lore.kernel.org/r/20230124193025.185781-4-jlayton@kernel.org?x#y",
    "  link:https://lore.kernel.org/netdev/20230124193025.185781-1-a@b.c/",
    "Signed-off-by: Jörg Rödel <joro@8bytes.org>",
    "upstream is where this came from",
    "a mainline inclusion",
    "İstanbul fıxes ſtable",  # noqa: RUF001 (letters whose case folding is not ASCII's)
    'Stable-dep-of: 0123456789ab ("a later fix")',
    "",
]
_SUBJECTS = ["net: fix a leak", 'Revert "net: fix a leak"', "revert: something", "Ünïcode"]

messages = st.builds(
    lambda subject, lines: "\n\n".join([subject, "\n".join(lines)]),
    st.sampled_from(_SUBJECTS),
    st.lists(st.one_of(st.sampled_from(_LINES), st.text(max_size=30)), max_size=12),
)


def _record(n: int, message: str, parents: str = "", name: str = "Ada Lövelace") -> bytes:
    """A record as `git.walk.LOG_FORMAT` makes one."""
    oid = f"{n:040x}"
    head = "\x1f".join([oid, parents, "1700000000", "1700000100", name])
    return f"{head}\nada@example.org\n{message}".encode("utf-8", "surrogatepass")


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(messages, min_size=1, max_size=8))
def test_a_batch_parses_as_each_record_alone(batch: list[str]) -> None:
    raws = [_record(n, m, parents=f"{n + 1:040x}") for n, m in enumerate(batch)]
    raws[0] = b"\n" + raws[0]  # `git log -z` puts a newline before a record after the first
    assert parse_batch(raws) == [commit_rows(log_record(r)) for r in raws]


def test_an_author_name_holding_the_field_separator_is_read_whole() -> None:
    """An author name may hold 0x1f (anyone can push such a commit upstream): it is read as
    written, and the times after it stay numbers (it crashed the index, exit 3)."""
    raw = _record(1, "subject\n\nbody\x1fwith a separator too", name="Ev\x1fil\x1f1")
    record = log_record(raw)
    assert (record.author_name, record.author_email) == ("Ev\x1fil\x1f1", "ada@example.org")
    assert (record.author_time, record.commit_time) == (1700000000, 1700000100)
    assert record.raw_message.endswith(b"\x1fwith a separator too")
    assert parse_batch([raw]) == [commit_rows(record)]


@settings(max_examples=200)
@given(st.lists(st.one_of(st.sampled_from(_LINES), st.text(max_size=30)), max_size=15))
def test_searching_only_the_lines_with_the_word_finds_what_the_whole_search_finds(
    lines: list[str],
) -> None:
    body = "\n".join(lines)
    low = body.lower()
    for pattern, word in (
        (_FIXES, "fixes"),
        (_CC_LINE, "cc"),
        (_MASTER_COMMIT, "commit"),
        (_UPSTREAM_LINE, "upstream"),
    ):
        whole = list(pattern.finditer(body)) if word in low else []
        found = _lines_matching(pattern, body, low, word)
        assert [m.span() for m in found] == [m.span() for m in whole], pattern.pattern


def _history(path: Path) -> RepoBuilder:
    """Topic branches merged, a clock going backwards, and messages naming relations."""
    b = RepoBuilder(path)
    first = b.commit("base", {"a.c": "int a;\n"})
    for n in range(3):
        b.branch(f"topic{n}", "master")
        for i in range(6):
            body = f"topic{n} step {i}\n\nLink: https://lore.kernel.org/r/20230124193025.18{n}-{i}-x@y.z"
            if i == 3:
                body += f'\nFixes: {first[:12]} ("base")\nCc: stable@vger.kernel.org'
                b._clock -= 3 * 3600  # dates going backwards
            b.commit(body, {f"t{n}.c": f"int t{i};\n"}, branch=f"topic{n}")
        b.commit(f"main {n}", {"a.c": f"int a{n};\n"})
        b.merge("master", f"topic{n}", f"Merge topic{n}")
    b.commit(f'Revert "main 2"\n\nThis reverts commit {first}.', {"a.c": "int a;\n"})
    return b


def _dump(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every table, rows named by commit ids instead of row ids, in a stable order."""
    db = sqlite3.connect(path)
    queries = {
        "commits": "SELECT oid, subject, author_name, author_email, author_time, commit_time,"
        " parents, upstream_seq IS NOT NULL, patch_id, stable_tags FROM commits",
        "fixes": "SELECT c.oid, ref, f.subject, target, how FROM fixes f JOIN commits c"
        " ON c.id = f.commit_id",
        "reverts": "SELECT c.oid, ref, r.subject, target, how FROM reverts r JOIN commits c"
        " ON c.id = r.commit_id",
        "postings": "SELECT c.oid, stem, number FROM postings p JOIN commits c"
        " ON c.id = p.commit_id",
        "after_fork": "SELECT refname, c.oid FROM after_fork a JOIN commits c"
        " ON c.id = a.commit_id",
    }
    dumped = {name: sorted(db.execute(q).fetchall(), key=repr) for name, q in queries.items()}
    db.close()
    return dumped


@pytest.mark.parametrize("per_process", [3, 50_000])
def test_a_long_history_read_by_the_worker_gives_the_same_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, per_process: int
) -> None:
    b = _history(tmp_path / "repo")
    b.branch("linux-5.10.y", "master~3")
    repo = Repo(b.path)
    whole = CommitIndex(repo, tmp_path / "whole.sqlite")
    whole.writer.update(repo.upstream("master"), [repo.branch("linux-5.10.y")])
    monkeypatch.setattr(writer_module, "_LOG_SLICE", per_process)
    split = CommitIndex(repo, tmp_path / "split.sqlite")
    split.writer.worker_after = 4  # the first 4 commits here, the rest by the worker
    split.writer.update(repo.upstream("master"), [repo.branch("linux-5.10.y")])
    expected = _dump(whole.path)
    assert len(expected["commits"]) > 20 and expected["fixes"] and expected["postings"]
    assert _dump(split.path) == expected
    base = repo.names.resolve_commit("master~0")
    first = oids(repo.run_git("rev-list", "--max-parents=0", base))[0]
    assert split.reader.fixed_by(first) == whole.reader.fixed_by(first) != []


def test_the_worker_parses_with_the_projects_own_vocabulary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A project's own fix pattern and its learned phrases reach the worker, which reads
    the lines only they name, as the indexing process does."""
    b = _history(tmp_path / "repo")
    first = oids(Repo(b.path).run_git("rev-list", "--max-parents=0", "master"))[0]
    for i in range(6):
        b.commit(f"amend {i}\n\nAmends: {first[:12]}", {"a.c": f"int amended{i};\n"})
        b.commit(f"oversight {i}\n\nOverlooked by commit {first[:12]}.", {"a.c": f"int r{i};\n"})
    repo = Repo(b.path)
    vocabulary = Vocabulary(
        [r"^Amends: ([0-9a-f]{7,40})"],
        [LearnedPhrase("overlooked by", "Overlooked by", "Overlooked by commit 0123456789ab.")],
    )
    whole = CommitIndex(repo, tmp_path / "whole.sqlite", vocabulary=vocabulary)
    whole.writer.update(repo.upstream("master"))
    monkeypatch.setattr(writer_module, "_LOG_SLICE", 3)
    split = CommitIndex(repo, tmp_path / "split.sqlite", vocabulary=vocabulary)
    split.writer.worker_after = 4  # the newest 4 commits here, the rest by the worker
    split.writer.update(repo.upstream("master"))
    expected = _dump(whole.path)
    forms = {row[-1] for row in sqlite3.connect(whole.path).execute("SELECT form FROM fixes")}
    assert {"fixesPattern 1", "Overlooked by"} <= forms
    assert _dump(split.path) == expected


def test_a_worker_that_cannot_read_the_history_is_a_one_line_error(tmp_path: Path) -> None:
    worker = BulkWorker(tmp_path / "not-a-repository", 10)
    try:
        with pytest.raises(BackportrError) as info:
            list(worker.batches(Walk(["0" * 40])))
    finally:
        worker.close()
    message = str(info.value)
    assert "\n" not in message and "Traceback" not in message
    assert re.match(
        r"the index's reader process failed: git log failed in .*not-a-repository", message
    )


def test_a_worker_left_early_is_stopped(tmp_path: Path) -> None:
    b = _history(tmp_path / "repo")
    repo = Repo(b.path)
    worker = BulkWorker(repo.path, 2)
    batches = worker.batches(Walk([repo.upstream("master").tip]))
    assert next(batches)  # one batch read, then the consumer goes away
    worker.close()
    assert worker._proc.returncode is not None


def test_a_worker_stopped_mid_walk_removes_what_it_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped (the build failed, or was stopped itself), the worker is sent SIGTERM and
    ends as by an interrupt: what it made in the temporary directory (the empty work tree
    its git processes see) goes with it. It was killed outright, and that stayed."""
    git_dir = tmp_path / "long.git"
    subprocess.run(["git", "init", "-q", "--bare", str(git_dir)], check=True)
    stream = "".join(
        f"commit refs/heads/master\ncommitter A <a@b.c> {1_600_000_000 + n} +0000\n"
        f"data {len(f'step {n}')}\nstep {n}\n\n"
        for n in range(500)
    )
    subprocess.run(["git", "-C", str(git_dir), "fast-import", "--quiet"],
                   input=stream.encode(), check=True)  # fmt: skip
    tip = subprocess.run(["git", "-C", str(git_dir), "rev-parse", "master"],
                         capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))  # the worker's, not this process's
    worker = BulkWorker(git_dir, 1)  # a git process a commit: a walk of seconds
    worker.walk_on(Walk([tip]))
    deadline = time.monotonic() + 60
    while not list(tmp.glob("backportr-no-worktree-*")) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert worker._proc.poll() is None  # mid-walk, its scratch made
    worker.close()
    assert worker._proc.returncode == 128 + signal.SIGTERM
    assert list(tmp.iterdir()) == []


def test_a_bug_in_the_worker_is_a_bug_here(tmp_path: Path) -> None:
    """A worker that meets a bug exits 3 with its traceback; the indexing process raises it
    as a bug (the command's exit 3), not as a fault of the environment."""
    b = _history(tmp_path / "repo")
    repo = Repo(b.path)
    worker = BulkWorker(repo.path, "not a number")  # type: ignore[arg-type]
    try:
        with pytest.raises(RuntimeError) as info:
            list(worker.batches(Walk([repo.upstream("master").tip])))
    finally:
        worker.close()
    assert "ValueError" in str(info.value) and not isinstance(info.value, BackportrError)


def test_where_no_worker_can_start_the_rest_is_read_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    b = _history(tmp_path / "repo")
    repo = Repo(b.path)
    whole = CommitIndex(repo, tmp_path / "whole.sqlite")
    whole.writer.update(repo.upstream("master"))

    def no_process(*args: object, **kwargs: object) -> None:
        raise OSError("no interpreter to start")

    monkeypatch.setattr(writer_module, "BulkWorker", no_process)
    monkeypatch.setattr(writer_module, "_LOG_SLICE", 3)
    alone = CommitIndex(repo, tmp_path / "alone.sqlite")
    alone.writer.worker_after = 4
    alone.writer.update(repo.upstream("master"))
    assert _dump(alone.path) == _dump(whole.path)


@given(
    st.lists(
        st.builds(
            StableTag,
            noautosel=st.booleans(),
            since=st.none() | st.tuples(st.integers(0, 9), st.integers(0, 99)),
            until=st.none() | st.tuples(st.integers(0, 9), st.integers(0, 99)),
            prerequisite=st.none() | st.just("a1175d6b1bda"),
            comment=st.none() | st.text(max_size=8),
        ),
        max_size=3,
    )
)
def test_stored_stable_tags_read_back_as_written(tags: list[StableTag]) -> None:
    """The bare tag's stored form is a constant; every form reads back as the tags."""
    stored = tags_json(tuple(tags))
    if not tags:
        assert stored is None
        return
    assert stored is not None
    assert stored == json.dumps(
        [[t.noautosel, t.since, t.until, t.prerequisite, None, t.comment] for t in tags]
    )
    assert [tag_from_json(raw) for raw in json.loads(stored)] == tags


def test_what_the_worker_prints_cannot_corrupt_its_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A site hook or a library that prints on the worker's standard output (at start, or
    while it works) changes nothing: the batches come on a pipe of their own."""
    b = _history(tmp_path / "repo")
    repo = Repo(b.path)
    whole = CommitIndex(repo, tmp_path / "whole.sqlite")
    whole.writer.update(repo.upstream("master"))
    hooks = (
        "print('a site hook says hello'); import backportr.index.worker as w; "
        "p = w.prepare_batch; "
        "w.prepare_batch = lambda b, **k: (print('a library says hi'), p(b, **k))[1]; "
    )
    before, after = childproc._ENTRY.split("from {module} import main")
    monkeypatch.setattr(childproc, "_ENTRY", f"{before}{hooks}from {{module}} import main{after}")
    monkeypatch.setattr(writer_module, "_LOG_SLICE", 3)
    split = CommitIndex(repo, tmp_path / "split.sqlite")
    split.writer.worker_after = 4
    split.writer.update(repo.upstream("master"))
    assert _dump(split.path) == _dump(whole.path)


def test_a_batch_that_cannot_be_read_is_a_one_line_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A frame of the right length that does not unpickle into a batch (a worker of another
    version, a corrupted pipe) is a fault of the environment, said in one line."""
    garbage = (
        "import os, sys; out = os.fdopen(int(sys.argv[3]), 'wb'); "
        "out.write((5).to_bytes(8, 'big') + b'xxxxx'); out.flush(); sys.stdin.read()"
    )
    monkeypatch.setattr(childproc, "_ENTRY", garbage)  # no braces: as the template formats
    worker = BulkWorker(tmp_path, 10)
    try:
        with pytest.raises(BackportrError) as info:
            list(worker.batches(Walk(["0" * 40])))
    finally:
        worker.close()
    assert str(info.value) == (
        "the index's reader process failed: it sent a batch that cannot be read"
    )
