"""A queue directory is the user's: runs at once, a full disk, a record or `series` that is
not what backportr wrote, and a user's edits never lose or destroy anything."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from backportr.errors import BackportrError
from backportr.infra import files
from backportr.model import Oid
from backportr.output.queue import LIMIT, RECORD, QueuedFile, QueueDirectory
from tests.conftest import backportr
from tests.resolve_scenarios import BRANCH, Kernel

_WRITE_ALL = files.write_all  # the real one, whatever a test has put in its place


def _patch(name: str, upstream: str, body: str = "") -> QueuedFile:
    text = f"From: a@example.org\nSubject: {name}\n\ncommit {upstream} upstream.\n\n{body}\n"
    return QueuedFile(f"{name}.patch", text, Oid(upstream) if upstream else None)


def _snapshot(directory: Path) -> dict[str, bytes]:
    """Every file of the directory but its lock, by name."""
    return {
        p.name: p.read_bytes()
        for p in sorted(directory.iterdir())
        if p.name != ".backportr-series.lock"
    }


def _eight_fixes(path: Path) -> Kernel:
    k = Kernel(path, functions=8)
    for number in range(8):
        k.edit_fn(f"fix{number}", f"drv_fn{number}", f"y += {100 + number};")
    return k


def test_eight_resolves_into_one_queue_at_once_lose_nothing(tmp_path: Path) -> None:
    """Eight `resolve -o QUEUE` runs at once (a script with `xargs -P 8`): each waits for
    the directory's lock, and every run's line and file is there afterwards."""
    k = _eight_fixes(tmp_path / "r")
    queue = tmp_path / "queue"
    common = ["--repo", str(k.b.path), "-b", BRANCH, "-f", "mbox", "-o", str(queue)]
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "backportr", "resolve", k.b.ids[f"fix{n}"], *common],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(8)
    ]
    for run in runs:
        _, err = run.communicate(timeout=300)
        assert run.returncode == 0, err
    series = (queue / "series").read_text().splitlines()
    assert len(series) == 8 and len(set(series)) == 8
    assert all((queue / name).is_file() for name in series)
    assert series == sorted(series)  # numbered in series order: a glob lists them so
    assert [name[:5] for name in series] == [f"{n:04d}-" for n in range(1, 9)]
    named = {name[5:].removeprefix("drv-").removesuffix(".patch") for name in series}
    assert named == {f"fix{n}" for n in range(8)}
    record = json.loads((queue / RECORD).read_text())
    assert len(record["runs"]) == 8


def test_the_lock_makes_runs_in_threads_wait_their_turn(tmp_path: Path) -> None:
    """The same in one process: threads adding at once each add their own line."""
    queue = tmp_path / "queue"
    queue.mkdir()
    errors: list[BaseException] = []

    def add(number: int) -> None:
        try:
            QueueDirectory(queue).add(f"{number:040x}", [_patch(f"p{number}", f"{number:040x}")])
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=add, args=(n,)) for n in range(1, 9)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    series = (queue / "series").read_text().split()
    assert [name[:5] for name in series] == [f"{n:04d}-" for n in range(1, 9)]
    assert sorted(name[5:] for name in series) == sorted(f"p{n}.patch" for n in range(1, 9))


class _FullDisk:
    """`files.write_all` failing with ENOSPC at its `fail_at`-th call (1-based)."""

    def __init__(self, fail_at: int) -> None:
        self.fail_at = fail_at
        self.calls = 0

    def __call__(self, fd: int, data: bytes) -> None:
        self.calls += 1
        if self.calls == self.fail_at:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        _WRITE_ALL(fd, data)


def _second_run(queue: Path) -> None:
    """A run over a queue that already has the maintainer's own patch and an earlier run:
    it replaces that run's files, keeps the user's line, adds two files."""
    QueueDirectory(queue).add(
        "b" * 40, [_patch("second-a", "2" * 40, "new"), _patch("second-b", "3" * 40)]
    )


def _prepared(queue: Path) -> None:
    queue.mkdir()
    (queue / "mine.patch").write_text("the maintainer's own patch\n")
    (queue / "series").write_text("mine.patch\n")
    QueueDirectory(queue).add("b" * 40, [_patch("second-a", "2" * 40, "old")])


def test_a_full_disk_at_each_write_leaves_the_queue_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ENOSPC at each write call in turn: after each, the directory is byte for byte what
    it was (no orphan, no temporary), and a rerun gives the bytes of a run never failed."""
    clean = tmp_path / "clean"
    _prepared(clean)
    counter = _FullDisk(0)
    monkeypatch.setattr(files, "write_all", counter)
    _second_run(clean)
    writes = counter.calls
    assert writes >= 4  # two patches, series, record, journal
    expected = _snapshot(clean)
    for fail_at in range(1, writes + 1):
        queue = tmp_path / f"q{fail_at}"
        monkeypatch.setattr(files, "write_all", _WRITE_ALL)
        _prepared(queue)
        before = _snapshot(queue)
        monkeypatch.setattr(files, "write_all", _FullDisk(fail_at))
        with pytest.raises(BackportrError, match="no space left"):
            _second_run(queue)
        assert _snapshot(queue) == before, fail_at
        monkeypatch.setattr(files, "write_all", _FullDisk(0))
        _second_run(queue)
        assert _snapshot(queue) == expected, fail_at


def test_a_run_killed_during_its_renames_is_completed_by_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run stopped after its journal was written (between two renames): `series` names
    only files that exist meanwhile, and the next run completes it before its own work;
    the same names, no `-2`."""
    clean = tmp_path / "clean"
    _prepared(clean)
    _second_run(clean)
    queue = tmp_path / "queue"
    _prepared(queue)
    real_replace = os.replace
    calls = 0

    def killed(source: object, target: object) -> None:
        nonlocal calls
        calls += 1
        if calls == 3:  # the journal, then the first patch: stopped there
            raise KeyboardInterrupt
        real_replace(source, target)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        _second_run(queue)
    monkeypatch.setattr(os, "replace", real_replace)
    for line in (queue / "series").read_text().split():
        assert (queue / line).is_file()
    _second_run(queue)
    assert _snapshot(queue) == _snapshot(clean)
    assert not list(queue.glob("*-2.patch"))


def test_a_large_series_is_kept_whole(tmp_path: Path) -> None:
    """A `series` past the old 4 MiB read cap: every line is kept; past the documented
    limit it is refused and nothing is rewritten."""
    queue = tmp_path / "queue"
    queue.mkdir()
    lines = [f"old-{n:07d}.patch" for n in range(300_000)]  # about 5 MiB
    (queue / "series").write_text("".join(f"{line}\n" for line in lines))
    QueueDirectory(queue).add("a" * 40, [_patch("new", "1" * 40)])
    assert (queue / "series").read_text().splitlines() == [*lines, "300001-new.patch"]
    huge = tmp_path / "huge"
    huge.mkdir()
    with open(huge / "series", "wb") as handle:
        handle.truncate(LIMIT + 1)
    with pytest.raises(BackportrError, match="larger than backportr reads"):
        QueueDirectory(huge).add("a" * 40, [_patch("new", "1" * 40)])
    assert (huge / "series").stat().st_size == LIMIT + 1
    assert not (huge / "new.patch").exists()


@pytest.mark.parametrize(
    "record",
    [
        '{"version": 2, "runs": {"x": {"files": "abc", "lines": []}}}',
        '{"version": 3, "runs": {"x": {"files": [{"name": "a", "size": "1", "sha256": "z"}],'
        ' "lines": []}}}',
        '{"version": 2, "runs": {"x": {"files": ["a"], "lines": "a"}}}',
        '{"version": 2, "runs": ["x"]}',
        '{"runs": ' * 100_000 + "1" + "}" * 100_000,
        "[" * 100_000 + "]" * 100_000,
    ],
    ids=["files-a-string", "size-a-string", "lines-a-string", "runs-a-list", "deep", "deep-list"],
)
def test_a_record_of_the_wrong_shape_is_refused_and_deletes_nothing(
    tmp_path: Path, record: str
) -> None:
    """A record whose list of names is a string was iterated letter by letter and the
    one-letter files of the queue deleted; a deeply nested one ended in RecursionError
    (exit 3). Both are refused with one line, nothing touched."""
    queue = tmp_path / "queue"
    queue.mkdir()
    for name in ("a", "b", "c"):
        (queue / name).write_text(f"the user's {name}\n")
    (queue / RECORD).write_text(record)
    before = _snapshot(queue)
    with pytest.raises(BackportrError, match="not a list backportr wrote"):
        QueueDirectory(queue).add("a" * 40, [_patch("new", "1" * 40)])
    assert _snapshot(queue) == before


@pytest.mark.parametrize("name", ["series", RECORD])
def test_a_fifo_in_place_of_a_list_file_is_refused_at_once(tmp_path: Path, name: str) -> None:
    """A FIFO named `series` or `.backportr-series` hung the run forever: it is refused
    without being opened for a blocking read."""
    k = _eight_fixes(tmp_path / "r")
    queue = tmp_path / "queue"
    queue.mkdir()
    os.mkfifo(queue / name)
    proc = backportr(
        "resolve", k.b.ids["fix0"], "--repo", str(k.b.path), "-b", BRANCH, "-f", "mbox",
        "-o", str(queue), timeout=60, process=True,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert "not a regular file (a FIFO)" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not list(queue.glob("*.patch"))


def test_a_series_line_that_is_not_utf8_is_kept_byte_for_byte(tmp_path: Path) -> None:
    queue = tmp_path / "queue"
    queue.mkdir()
    latin = b"caf\xe9-fix.patch\n# comment \xff\xfe\n"
    (queue / "series").write_bytes(latin)
    QueueDirectory(queue).add("a" * 40, [_patch("new", "1" * 40)])
    assert (queue / "series").read_bytes() == latin + b"0002-new.patch\n"


def test_a_file_the_user_changed_is_kept_and_named(tmp_path: Path) -> None:
    """The record claims a file an earlier run wrote; the user has since edited it. The
    next run of the same owner leaves it (and its `series` line) where it is, says so,
    and writes nothing over it; an unchanged one is replaced as before."""
    k = Kernel(tmp_path / "r")
    k.edit_fn("first", "drv_fn1", "y += 100;")
    k.edit_fn("second", "drv_fn2", "y += 200;")
    queue = tmp_path / "queue"
    base = ("--repo", str(k.b.path), "-b", BRANCH, "-f", "mbox", "-o", str(queue))
    ids = (k.b.ids["first"], k.b.ids["second"])
    assert backportr("resolve", *ids, *base).returncode == 0
    edited = queue / "0001-drv-first.patch"
    edited.write_text(edited.read_text() + "\n(edited by the maintainer)\n")
    again = backportr("resolve", *ids, *base)
    assert again.returncode == 0, again.stderr
    assert "0001-drv-first.patch was changed since backportr wrote it" in again.stderr
    assert edited.read_text().endswith("(edited by the maintainer)\n")
    assert (queue / "series").read_text().split() == [
        "0001-drv-first.patch",
        "0002-drv-second.patch",
    ]
    assert not list(queue.glob("*-2.patch"))


def test_numbered_as_git_format_patch_n(tmp_path: Path) -> None:
    """`--numbered` (`-n`) as git's: `[PATCH n/m]` even for a single patch; without it a
    single patch has no `1/1`, and several are numbered either way."""
    k = Kernel(tmp_path / "r")
    k.edit_fn("first", "drv_fn1", "y += 100;")
    k.edit_fn("second", "drv_fn2", "y += 200;")
    base = ("--repo", str(k.b.path), "-b", BRANCH, "-f", "mbox")

    def subjects(*args: str) -> list[str]:
        proc = backportr("resolve", *args, *base)
        assert proc.returncode == 0, proc.stderr
        return [line for line in proc.stdout.splitlines() if line.startswith("Subject: [")]

    plain, numbered = subjects(k.b.ids["first"]), subjects(k.b.ids["first"], "-n")
    assert len(plain) == len(numbered) == 1
    assert " 1/1] " not in plain[0] and plain[0].endswith("] drv: first")
    assert numbered[0].endswith(" 1/1] drv: first"), numbered
    both = subjects(k.b.ids["first"], k.b.ids["second"])
    assert [s.split("] ")[0][-3:] for s in both] == ["1/2", "2/2"]
