"""A scan's processes where the environment is against them: SIGTERM (a cron or CI timeout, a
service stop) and SIGHUP (a closed terminal) end a scan as an interrupt does (one line, exit
143 or 129, every scratch object directory removed, no worker process left running, the index
as usable as before), and a temporary directory too deep for a socket path leaves `--jobs`
working."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.resolve_scenarios import BRANCH, Kernel

_FIXES = 120  # missing fixes: far more work than the first streamed finding needs


@pytest.fixture(scope="module")
def busy(tmp_path_factory: pytest.TempPathFactory) -> Kernel:
    """A branch that lacks many fixes of a culprit it carries: a scan settles them chunk
    by chunk, streaming each as it is settled."""
    k = Kernel(tmp_path_factory.mktemp("busy") / "repo", functions=_FIXES + 1)
    k.edit_fn("culprit", "drv_fn0", "y += 100;")
    k.b.cherry_pick("culprit", BRANCH, name="culprit-bp")
    for n in range(1, _FIXES + 1):
        k.edit_fn(f"fix{n}", f"drv_fn{n}", f"y += {n};", trailers=k.fixes("culprit"))
    return k


def _scan(k: Kernel, tmp: Path, index: Path, jobs: str, **popen: Any) -> subprocess.Popen[bytes]:
    """The scan, its output unbuffered here: `readline` then reads one line, no more (a
    buffered reader takes what the pipe holds, and `communicate`, which reads the pipe
    itself, never sees the lines it took past the first)."""
    return subprocess.Popen(
        [sys.executable, "-m", "backportr", "scan", "--repo", str(k.b.path), "-b", BRANCH,
         "--index", str(index), "--format", "jsonl", "--jobs", jobs],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0,
        env={**os.environ, "TMPDIR": str(tmp), **popen.pop("env", {})}, start_new_session=True,
        **popen,
    )  # fmt: skip


def _rest(proc: subprocess.Popen[bytes], timeout: float) -> tuple[str, str]:
    out, err = proc.communicate(timeout=timeout)
    return out.decode(), err.decode()


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize(
    ("jobs", "stop", "said"),
    [("1", "TERM", "terminated"), ("2", "TERM", "terminated"), ("2", "HUP", "hung up")],
)
def test_a_stop_signal_mid_scan_removes_the_scratch_and_stops_the_workers(
    busy: Kernel, tmp_path: Path, jobs: str, stop: str, said: str
) -> None:
    """SIGTERM as `timeout` sends it (to the command alone); SIGHUP as a closed terminal
    sends it (to the whole process group)."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    index = tmp_path / "index.sqlite"
    proc = _scan(busy, tmp, index, jobs)
    assert proc.stdout is not None and proc.stderr is not None
    line = proc.stdout.readline()  # the scan is under way: one finding settled
    assert line, (proc.wait(), proc.stderr.read().decode())
    first = json.loads(line)
    assert first["kind"] == "missing-fix"
    assert list(tmp.glob("backportr-objects-*"))  # the trial's scratch objects, in use
    number = signal.Signals[f"SIG{stop}"]
    if number == signal.SIGHUP:
        os.killpg(proc.pid, number)
    else:
        os.kill(proc.pid, number)
    rest, err = _rest(proc, 60)
    assert proc.returncode == 128 + number
    assert err.splitlines()[-1] == f"backportr: {said}"
    assert "Traceback" not in err
    assert len(rest.splitlines()) < _FIXES - 1  # it stopped, not finished
    deadline = time.monotonic() + 20
    while _group_alive(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _group_alive(proc.pid)  # no worker or git process left running
    assert sorted(p.name for p in tmp.iterdir()) == []  # every scratch directory removed

    # the index is whole: the next scan answers every fix
    again = subprocess.run(
        [sys.executable, "-m", "backportr", "scan", "--repo", str(busy.b.path), "-b", BRANCH,
         "--index", str(index), "--format", "jsonl", "--jobs", jobs],
        capture_output=True, text=True, timeout=300, env={**os.environ, "TMPDIR": str(tmp)},
    )  # fmt: skip
    assert again.returncode == 4, again.stderr
    assert len(again.stdout.splitlines()) == _FIXES


def test_a_temporary_directory_too_deep_for_a_socket_path_leaves_jobs_working(
    busy: Kernel, tmp_path: Path
) -> None:
    """The processes of `--jobs` share their queues through a manager listening on a
    socket; under a `TMPDIR` deeper than a socket path may be (108 bytes) its process died
    with a traceback and the scan printed `Aborted!`."""
    deep = tmp_path / ("d" * 100) / ("e" * 100)
    deep.mkdir(parents=True)
    proc = subprocess.run(
        [sys.executable, "-m", "backportr", "scan", "--repo", str(busy.b.path), "-b", BRANCH,
         "--index", str(tmp_path / "index.sqlite"), "--format", "jsonl", "--jobs", "2"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "TMPDIR": str(deep)},
    )  # fmt: skip
    assert (proc.returncode, proc.stderr) == (4, "")
    assert len(proc.stdout.splitlines()) == _FIXES
    assert list(deep.iterdir()) == []


def test_a_hang_up_nohup_ignores_stays_ignored(busy: Kernel, tmp_path: Path) -> None:
    """`nohup backportr scan ...` sets SIGHUP to be ignored: a closed terminal then stops
    nothing, and the scan answers every fix."""
    proc = _scan(
        busy, tmp_path, tmp_path / "index.sqlite", "2",
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN),  # as nohup does
    )  # fmt: skip
    assert proc.stdout is not None
    assert proc.stdout.readline()  # under way
    os.killpg(proc.pid, signal.SIGHUP)
    rest, err = _rest(proc, 300)
    assert (proc.returncode, err) == (4, "")
    assert len(rest.splitlines()) == _FIXES - 1, rest.splitlines()[-1]  # the summary says why


def test_what_a_killed_scan_left_the_next_scan_removes(busy: Kernel, tmp_path: Path) -> None:
    """SIGKILL (the out-of-memory killer, `timeout -s KILL`) cannot be caught: the scan's
    scratch objects stay, and the next scan, once its owner is gone, removes them."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    index = tmp_path / "index.sqlite"
    proc = _scan(busy, tmp, index, "2")
    assert proc.stdout is not None
    assert proc.stdout.readline()  # under way, its workers' scratch in use
    os.killpg(proc.pid, signal.SIGKILL)  # the whole group, as a hard stop of the job
    _rest(proc, 60)
    deadline = time.monotonic() + 20
    while _group_alive(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)  # the workers die too (the next night's scan finds them gone)
    left = sorted(tmp.glob("backportr-objects-*"))
    assert left  # nothing removed
    again = subprocess.run(
        [sys.executable, "-m", "backportr", "scan", "--repo", str(busy.b.path), "-b", BRANCH,
         "--index", str(index), "--format", "jsonl", "--jobs", "1"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "TMPDIR": str(tmp)},
    )  # fmt: skip
    assert (again.returncode, again.stderr) == (4, "")
    assert len(again.stdout.splitlines()) == _FIXES
    assert sorted(p.name for p in tmp.iterdir()) == []
