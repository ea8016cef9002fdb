"""Files backportr reads from a directory it does not own, and changes it makes there.

Everything in such a directory is data: a file is read whole or refused (a regular file only,
opened without blocking so a FIFO never hangs the run; past a generous limit it is refused,
never truncated and rewritten from a part). A change to the directory is one `Transaction`:
under an exclusive lock beside the files (concurrent runs wait their turn), every new file is
written beside the old one first; only when all of them are on disk is a journal of the
renames written, and then the renames are done in order, the last one being the record of
what was written. A run that fails to write (a full disk) leaves the directory as it was; a
run killed after the journal was written is completed by the next run, before it reads
anything. `write_all` is the one call that writes bytes here (tests make it fail in turn).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from backportr.errors import BackportrError

TEMPORARY_PREFIX = ".backportr-new."
JOURNAL = ".backportr-journal"


def read_regular(path: Path, limit: int, *, head: bool = False) -> bytes | None:
    """The bytes of the regular file at `path` (None when there is none). A FIFO, a device or
    a directory is refused with one line, without blocking; a file over `limit` bytes is
    refused (nothing is truncated), unless `head` asks for its first `limit` bytes only."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise BackportrError(f"cannot read {path}: {error.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise BackportrError(
                f"{path} is not a regular file ({_kind(mode)}); backportr reads only regular "
                "files there: move it aside"
            )
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as error:
        raise BackportrError(f"cannot read {path}: {error.strerror}") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        if head:
            return data[:limit]
        raise BackportrError(
            f"{path} is larger than backportr reads ({limit >> 20} MiB); nothing was written"
        )
    return data


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a plain file"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def unchanged(path: Path, size: int, sha256: str) -> bool:
    """Is the file at `path` still the one of that size and hash (what backportr wrote)?"""
    try:
        if not path.is_file() or path.is_symlink() or path.stat().st_size != size:
            return False
        data = read_regular(path, size)
    except (OSError, BackportrError):
        return False
    return data is not None and digest(data) == sha256


def write_all(fd: int, data: bytes) -> None:
    """Every byte of `data` to `fd` (the one write call of this module)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def depth_of_json(text: str) -> int:
    """The deepest nesting of brackets in a JSON text, strings skipped (linear, no parse)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


@contextlib.contextmanager
def locked(directory: Path, name: str) -> Iterator[None]:
    """Hold an exclusive lock on `directory/name` for the block; another run waits."""
    try:
        handle = open(directory / name, "a+")  # noqa: SIM115
    except OSError as error:
        raise BackportrError(f"cannot lock {directory / name}: {error.strerror}") from None
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@dataclass
class Transaction:
    """New files for one directory, written beside the old ones and put in place together.

    `stage` writes a file's new bytes to a temporary file; `remove` names a file to delete
    once everything is in place (only if it still has the given hash); `commit` writes the
    journal, renames in the order staged and removes, then drops the journal. `discard`
    (always called, by `with`) removes the temporaries a failed run leaves."""

    directory: Path
    renames: list[tuple[str, str]] = field(default_factory=list)
    removals: list[tuple[str, int, str]] = field(default_factory=list)
    journaled: bool = False  # the temporaries are the journal's now: never discarded

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()

    def stage(self, name: str, data: bytes) -> None:
        fd, temporary = tempfile.mkstemp(prefix=TEMPORARY_PREFIX, dir=self.directory)
        self.renames.append((Path(temporary).name, name))
        try:
            write_all(fd, data)
            os.fsync(fd)
            umask = os.umask(0)
            os.umask(umask)
            os.fchmod(fd, 0o666 & ~umask)
        except OSError as error:
            raise write_error(self.directory / name, error) from None
        finally:
            os.close(fd)

    def remove(self, name: str, size: int, sha256: str) -> None:
        self.removals.append((name, size, sha256))

    def commit(self) -> None:
        journal = {"renames": self.renames, "removals": self.removals}
        fd, temporary = tempfile.mkstemp(prefix=TEMPORARY_PREFIX, dir=self.directory)
        try:
            write_all(fd, json.dumps(journal).encode())
            os.fsync(fd)
        except OSError as error:
            Path(temporary).unlink(missing_ok=True)
            raise write_error(self.directory / JOURNAL, error) from None
        finally:
            os.close(fd)
        os.replace(temporary, self.directory / JOURNAL)
        self.journaled = True
        _sync_directory(self.directory)
        finish(self.directory)
        self.renames, self.removals = [], []

    def discard(self) -> None:
        if self.journaled:
            return  # a run stopped half-way through its renames: the next one completes it
        for temporary, _ in self.renames:
            (self.directory / temporary).unlink(missing_ok=True)
        self.renames = []


def finish(directory: Path) -> None:
    """Complete the change a journal in `directory` describes (a run killed half-way
    through its renames), then drop the journal; nothing when there is none."""
    data = read_regular(directory / JOURNAL, 64 << 20)
    if data is None:
        return
    try:
        journal = json.loads(data)
        renames = [(str(a), str(b)) for a, b in journal["renames"]]
        removals = [(str(n), int(s), str(h)) for n, s, h in journal["removals"]]
    except (ValueError, KeyError, TypeError, RecursionError):
        raise BackportrError(
            f"{directory / JOURNAL}: not a journal backportr wrote; move it aside"
        ) from None
    for temporary, name in renames:
        if not temporary.startswith(TEMPORARY_PREFIX) or "/" in temporary + name:
            raise BackportrError(f"{directory / JOURNAL}: not a journal backportr wrote")
        if (directory / temporary).is_file():
            os.replace(directory / temporary, directory / name)
    for name, size, sha256 in removals:
        if "/" not in name and unchanged(directory / name, size, sha256):
            (directory / name).unlink()
    _sync_directory(directory)
    (directory / JOURNAL).unlink()


def _sync_directory(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_error(path: Path, error: OSError) -> BackportrError:
    """One line for a write of `path` that failed, nothing of it left behind."""
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return BackportrError(f"no space left to write {path}; nothing was changed")
    return BackportrError(f"cannot write {path}: {error.strerror}; nothing was changed")
