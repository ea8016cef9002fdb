"""Scratch directories that outlive a killed process no longer than the next run.

A process removes its own scratch directory as it ends, on an error, Ctrl-C, SIGTERM or
SIGHUP. SIGKILL (the out-of-memory killer, `timeout -s KILL`, a CI runner's hard stop)
cannot be caught: the directory stays, and the trial's objects of a DPDK scan are tens of
megabytes, a nightly job's every night. So each directory made here is named for its owner,
`<prefix><pid>-<start>-<boot>-<random>` (the process id, when it started, the boot it ran
in: made in one step by `mkdtemp`, so no directory is ever without its owner), and the next
process that makes one of the same kind removes those whose owner is gone.

A directory is removed only as this module made it: a real directory of this user, its name
read as above, the owner not running (the same process id started at another time is
another process; one ended but not yet reaped is gone), holding nothing but what a loose
object directory holds (two-hex-digit directories of plain files, `pack/` and `info/`, and
the temporary file of an object git or libgit2 was writing when the process was killed).
Anything else found there leaves it as it is: backportr deletes only what it wrote and finds
unchanged. Linux says when a process started (`/proc`); elsewhere an owner is gone when no
process has its id.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path

from backportr.infra.stops import stops_held

_OWNER = re.compile(r"(\d{1,10})-(\d{1,20}|x)-([0-9a-f]{8}|x)-[0-9a-z_]{8}")
_FAN_OUT = re.compile(r"[0-9a-f]{2}")
_OBJECT_PARTS = frozenset({"pack", "info"})
# a loose object is written here first and then moved in place, by git and by libgit2
_GIT_TEMPORARY = ("tmp_obj_", "tmp_object_git2_")
_owned: dict[Path, int] = {}  # this process's directories (a forked child's are its parent's)


def owned_scratch_dir(prefix: str) -> Path:
    """A new private directory in the temporary directory, named for this process and
    removed as it ends (`release`, or `remove_owned` at its exit); the leftovers of killed
    processes of the same `prefix` are removed first."""
    sweep(prefix)
    pid = os.getpid()
    with stops_held():  # a stop between the two left the directory, owned by no one
        path = Path(tempfile.mkdtemp(prefix=f"{prefix}{pid}-{_state(pid)[1]}-{_boot_id()}-"))
        _owned[path] = pid
    return path


def release(path: Path) -> None:
    """Remove a directory `owned_scratch_dir` made, now."""
    shutil.rmtree(path, ignore_errors=True)
    _owned.pop(path, None)


def remove_owned() -> None:
    """Remove every directory this process made and still holds: at its exit (a process
    pool's worker ends by `os._exit`, past Python's exit handlers, and calls this itself:
    `infra/signals.py`), never a parent's, which a forked child holds a copy of the list of."""
    for path, pid in list(_owned.items()):
        if pid == os.getpid():
            release(path)


atexit.register(remove_owned)


def sweep(prefix: str, where: Path | None = None) -> list[Path]:
    """Remove the scratch directories of `prefix` in `where` (the temporary directory)
    whose owner is gone and that hold only what they were made to; return them. A
    directory that cannot be read or removed is left (another run will try again)."""
    base = Path(where or tempfile.gettempdir())
    removed: list[Path] = []
    try:
        entries = list(os.scandir(base))
    except OSError:
        return removed
    for entry in entries:
        owner = _OWNER.fullmatch(entry.name[len(prefix) :])
        if not entry.name.startswith(prefix) or owner is None:
            continue
        path = Path(entry.path)
        with contextlib.suppress(OSError):
            if _abandoned(path, *owner.groups()) and _only_objects(path):
                shutil.rmtree(path)
                removed.append(path)
    return removed


def _abandoned(path: Path, pid: str, started: str, boot: str) -> bool:
    """Is `path` a directory of this user whose owner is not running?"""
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        return False
    return int(pid) != os.getpid() and not _running(int(pid), started, boot)


def _running(pid: int, started: str, boot: str) -> bool:
    """Is the process that made the directory (`pid`, `started`, `boot`) still running?"""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process has the id now: its start time says whose it is
    now_boot = _boot_id()
    if "x" not in (boot, now_boot) and boot != now_boot:
        return False  # made before the machine last started
    now_state, now_started = _state(pid)
    if now_state in ("Z", "X"):
        return False  # ended, not yet reaped (an orphan whose new parent is slow to)
    return "x" in (started, now_started) or started == now_started


def _only_objects(path: Path) -> bool:
    """Does the directory hold only a loose object directory's parts (or nothing)?"""
    for entry in os.scandir(path):
        if entry.name.startswith(_GIT_TEMPORARY) and entry.is_file(follow_symlinks=False):
            continue  # an object a killed process was writing
        if entry.is_symlink() or not entry.is_dir(follow_symlinks=False):
            return False
        if not (_FAN_OUT.fullmatch(entry.name) or entry.name in _OBJECT_PARTS):
            return False
        for inner in os.scandir(entry.path):
            if inner.is_symlink() or not inner.is_file(follow_symlinks=False):
                return False
    return True


def _state(pid: int) -> tuple[str, str]:
    """The process's state letter (`Z`: ended, not reaped) and when it started, in clock
    ticks since boot (`/proc/PID/stat`'s 3rd and 22nd fields); `x` where the system does
    not say."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return "x", "x"
    fields = text[text.rfind(")") + 1 :].split()  # the name in parentheses may hold spaces
    if len(fields) <= 19 or not fields[19].isdigit():
        return "x", "x"
    return fields[0], fields[19]


def _boot_id() -> str:
    """The first eight hex digits of this boot's id, or `x`."""
    try:
        text = Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
    except OSError:
        return "x"
    return text[:8] if re.fullmatch(r"[0-9a-f]{8}-[0-9a-f-]{27}", text) else "x"
