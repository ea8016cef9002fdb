"""Values cached in files beside the index, read by one process at a time.

A scan's processes (its `--jobs` workers, its read-ahead) ask for the same large values at
once: a branch tip's identifier set, the history since a fork. The first to ask makes the
value and keeps it; one that asks meanwhile waits on a lock beside the file and loads what
was cached. A file is written atomically, and one stopped half-way leaves nothing behind. A
file that cannot be read, written or locked is only a cache: the value is made again.
What no branch asks for any more goes once a scan has updated the index (`prune`), so a
nightly run does not leave a file a night behind it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

STALE_TEMPORARY = 3600.0
"""Seconds after which a temporary file is a writer's that was killed outright (a stopped
writer removes its own): `prune` removes it."""


def read_once(
    path: Path,
    make: Callable[[], T],
    dump: Callable[[T], bytes],
    load: Callable[[bytes], T],
) -> T:
    """The value cached at `path`, else `make()`'s, cached there."""
    found = _read(path, load)
    if found is not None:
        return found
    with contextlib.ExitStack() as making:
        with contextlib.suppress(OSError):  # no lock where none can be made: make it
            path.parent.mkdir(parents=True, exist_ok=True)
            lock = making.enter_context(open(path.with_name(path.name + ".lock"), "a+"))
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            found = _read(path, load)  # cached by the process the lock waited for
        if found is not None:
            return found
        value = make()
        store(path, dump(value))
    return value


def store(path: Path, data: bytes) -> None:
    """Write `data` to `path` atomically; a cache that cannot be written is only a cache."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except OSError:
        Path(temporary).unlink(missing_ok=True)
    except BaseException:  # stopped while writing (a read-ahead at the scan's end)
        Path(temporary).unlink(missing_ok=True)
        raise


def _read(path: Path, load: Callable[[bytes], T]) -> T | None:
    """The cached value, None when there is none or it cannot be read (made again)."""
    try:
        return load(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError, zlib.error):  # zlib's: not a ValueError
        return None


def prune(directory: Path, wanted: Callable[[str], bool]) -> int:
    """Remove the cached files of `directory` whose names `wanted` refuses, their lock files
    where no process holds them, and temporary files older than `STALE_TEMPORARY`. A file
    another process is reading stays readable to it (an unlinked file lives while open); one
    it is making is made again by the next that asks. Returns how many files went."""
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return 0
    removed = 0
    old = time.time() - STALE_TEMPORARY
    for name in names:
        path = directory / name
        if name.startswith("."):
            if name.endswith(".tmp") and _older(path, old) and _unlink(path):
                removed += 1
        elif name.endswith(".lock"):
            if not wanted(name.removesuffix(".lock")) and _unlink_unheld(path):
                removed += 1
        elif not wanted(name) and _unlink(path):
            removed += 1
    return removed


def _older(path: Path, than: float) -> bool:
    try:
        return path.stat().st_mtime < than
    except OSError:
        return False


def _unlink(path: Path) -> bool:
    try:
        path.unlink()
    except OSError:
        return False
    return True


def _unlink_unheld(lock: Path) -> bool:
    """Remove a lock file unless a process holds it (it is making its value now)."""
    try:
        with open(lock, "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            lock.unlink()
    except OSError:  # held (BlockingIOError), or gone already
        return False
    return True
