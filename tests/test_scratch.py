"""Scratch directories of killed processes (`infra/scratch.py`): the next run removes those
whose owner is gone and that hold only what was written there, and nothing else."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from backportr.infra import scratch

_PREFIX = "backportr-test-scratch-"
_CHILD = (
    "import sys, time; from pathlib import Path; "
    "from backportr.infra.scratch import owned_scratch_dir; "
    f"d = owned_scratch_dir({_PREFIX!r}); (d / 'ab').mkdir(); "
    "(d / 'ab' / ('c' * 38)).write_bytes(b'x'); (d / 'pack').mkdir(); "
    "(d / 'tmp_obj_Ab3xYz').write_bytes(b'half an object'); "
    "(d / 'tmp_object_git2_a9a241cf03f1bd39').write_bytes(b'half another'); "
    "print(d, flush=True); time.sleep(120)"
)


@pytest.fixture
def tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "tmp"
    where.mkdir()
    monkeypatch.setenv("TMPDIR", str(where))
    monkeypatch.setattr("tempfile.tempdir", None)  # read TMPDIR again
    return where


def _owner(tmp: Path) -> tuple[subprocess.Popen[str], Path]:
    """A process that made its scratch directory, wrote objects there and works on."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD], stdout=subprocess.PIPE, text=True,
        env={**os.environ, "TMPDIR": str(tmp)},
    )  # fmt: skip
    assert proc.stdout is not None
    made = Path(proc.stdout.readline().strip())
    assert made.parent == tmp and made.name.startswith(f"{_PREFIX}{proc.pid}-")
    return proc, made


def _killed(tmp: Path) -> Path:
    proc, left = _owner(tmp)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert (left / "ab" / ("c" * 38)).is_file()  # SIGKILL: nothing could remove it
    return left


def test_a_killed_processs_directory_goes_with_the_next_one_made(tmp: Path) -> None:
    left = _killed(tmp)
    made = scratch.owned_scratch_dir(_PREFIX)
    assert not left.exists()
    assert sorted(tmp.iterdir()) == [made]
    pid, started, boot, _ = made.name.removeprefix(_PREFIX).split("-")
    assert int(pid) == os.getpid() and started.isdigit() and len(boot) == 8


def test_a_running_owners_directory_stays(tmp: Path) -> None:
    proc, theirs = _owner(tmp)
    try:
        mine = scratch.owned_scratch_dir(_PREFIX)
        assert sorted(tmp.iterdir()) == sorted([theirs, mine])
        assert (theirs / "ab" / ("c" * 38)).read_bytes() == b"x"
    finally:
        proc.kill()
        proc.wait()


def test_a_process_id_used_again_is_not_the_owner(tmp: Path) -> None:
    """The owner's id is now another process's (started at another time): the directory is
    abandoned."""
    proc, theirs = _owner(tmp)
    try:
        pid, _, boot, rest = theirs.name.removeprefix(_PREFIX).split("-")
        earlier = theirs.rename(tmp / f"{_PREFIX}{pid}-1-{boot}-{rest}")
        assert scratch.sweep(_PREFIX) == [earlier]
        assert not earlier.exists()
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("change", ["a file of its own", "a symlink", "another name"])
def test_what_it_did_not_write_keeps_a_directory(tmp: Path, change: str) -> None:
    left = _killed(tmp)
    outside = tmp.parent / "elsewhere"
    outside.mkdir()
    (outside / "precious").write_text("keep me")
    if change == "a file of its own":
        (left / "notes.txt").write_text("someone's")
    elif change == "a symlink":
        (left / "ab" / "link").symlink_to(outside)
    else:
        left = left.rename(tmp / f"{_PREFIX}mine")
    assert scratch.sweep(_PREFIX) == []
    assert left.is_dir() and (outside / "precious").read_text() == "keep me"


_PROBED = (
    "import os, signal, tempfile, sys; from pathlib import Path; "
    "from backportr.infra import signals; "
    "real = tempfile._get_default_tempdir\n"
    "def probe():\n"
    "    marker = Path(os.environ['TMPDIR']) / 'probe1x2'; marker.write_bytes(b'x')\n"
    "    os.kill(os.getpid(), signal.SIGTERM)  # as a stop arrives mid-probe\n"
    "    marker.unlink(); return real()\n"
    "tempfile._get_default_tempdir = probe\n"
    "signals._stopping(); print('not stopped', flush=True)"
)


def test_a_stop_during_the_temporary_directory_probe_leaves_no_file(tmp: Path) -> None:
    """Python finds the temporary directory by making a file of a random name there and
    removing it; a process stopped between the two (the scan's read-ahead, stopped as it
    starts, before its handlers are there) left that file. The stop is held back until the
    probe is done: the process still ends by it, and leaves nothing."""
    proc = subprocess.run(
        [sys.executable, "-c", _PROBED], capture_output=True, text=True,
        env={**os.environ, "TMPDIR": str(tmp)}, timeout=60,
    )  # fmt: skip
    assert proc.returncode == -signal.SIGTERM, proc.stderr
    assert "not stopped" not in proc.stdout
    assert list(tmp.iterdir()) == []


_STARTING = (
    "import os, signal, sys, threading, time; from pathlib import Path\n"
    "from backportr.errors import Terminated; from backportr.infra.signals import signals_raise\n"
    "from backportr.infra.process import started\n"
    "mark = Path(sys.argv[1])\n"
    "with signals_raise():\n"
    "    threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGTERM)).start()\n"
    "    try:  # the child execs a second after the fork: Popen waits on it meanwhile\n"
    "        started(['sh', '-c', f'sleep 1; touch {mark}'], preexec_fn=lambda: time.sleep(1))\n"
    "    except Terminated:\n"
    "        print('stopped', flush=True)\n"
    "time.sleep(2); print('marked' if mark.exists() else 'unmarked')"
)


def test_a_stop_while_a_child_starts_stops_the_child_too(tmp_path: Path) -> None:
    """Python's Popen forks, then waits for the child's exec; a stop signal raised there
    left Popen without a result and the child running unseen (a stopped scan's `git
    merge-tree` wrote into the scratch directory its worker had removed). The stop now
    raises once the child is started, and the child is killed with it."""
    mark = tmp_path / "written-after-the-stop"
    proc = subprocess.run(
        [sys.executable, "-c", _STARTING, str(mark)], capture_output=True, text=True, timeout=60
    )
    assert proc.stdout.split() == ["stopped", "unmarked"], proc.stderr
    assert not mark.exists()


_FINALIZED = (
    "import os, signal, time; from backportr.errors import Terminated\n"
    "from backportr.infra.signals import signals_raise\n"
    "class Freed:  # as a pygit2 object is freed\n"
    "    def __del__(self):\n"
    "        os.kill(os.getpid(), signal.SIGTERM)\n"
    "        sum(range(100_000))  # the handler runs here, in the finalizer\n"
    "with signals_raise():\n"
    "    try:\n"
    "        Freed()\n"
    "        began = time.monotonic()\n"
    "        while time.monotonic() - began < 5:  # the stop arrives meanwhile\n"
    "            sum(range(1000))\n"
    "        print('not stopped')\n"
    "    except Terminated:\n"
    "        print('stopped')\n"
)


def test_a_stop_raised_inside_a_finalizer_is_not_lost() -> None:
    """Python swallows what a `__del__` raises, printing it: a stop whose handler ran as
    pygit2 freed an object was lost (a traceback on stderr, and the process worked on until
    its parent killed it). The signal comes again a moment later, outside the finalizer."""
    proc = subprocess.run(
        [sys.executable, "-c", _FINALIZED], capture_output=True, text=True, timeout=60
    )
    assert (proc.stdout, proc.stderr) == ("stopped\n", "")
