"""Renderers of results: text for people, JSON for machines (schemas in docs/), and the one
way outputs reach files: written atomically (a temporary file renamed into place).

It renders what the floors below it answer (the resolver's reports, the scan's findings, the
CVE view's outcomes) and never imports mail, the workflows or the command line
(`tests/test_lint.py`); `safe` is the one text-safety layer everything printed passes."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from backportr.errors import BackportrError
from backportr.infra.files import write_error


def write_atomically(path: Path, text: str) -> None:
    """Write `text` to `path` so a reader sees the old file or the whole new one, never half.

    Only a regular file (or a new one) is replaced: a FIFO, a character device
    (`/dev/stdout`, `/dev/full`) or `-` is written in place, and a directory is an error."""
    path = Path(path)
    if str(path) == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    if path.is_dir():
        raise BackportrError(f"{path} is a directory; give a file name")
    if path.exists() and (not path.is_file() or _is_a_stream(path)):
        # a FIFO, a device, /dev/stdout when it is a redirect to a file: never replace it
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        return
    if path.is_symlink():
        path = path.resolve()  # the file a link names is replaced; the link stays
    directory = path.parent if str(path.parent) else Path(".")
    make_directory(directory)
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as error:  # named as asked, not as the temporary file beside it
        raise write_error(path, error) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # mkstemp's 0600 is not what a report file wants
        os.replace(temporary, path)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        raise write_error(path, error) from None
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def make_directory(directory: Path) -> None:
    """Create the output directory, one level: a mistyped `-o /nonexistent/dir/x` is an
    error, not a tree of directories made without a word."""
    if directory.is_dir():
        return
    parent = directory.parent
    if not parent.is_dir():
        raise BackportrError(f"{parent}: no such directory (give an existing one for -o)")
    try:
        directory.mkdir(exist_ok=True)
    except OSError as error:
        raise BackportrError(f"cannot create {directory}: {error.strerror}") from None


def inside(directory: Path, name: str) -> Path:
    """`directory / name` for a name taken from data (a list file's line, a patch's file
    name): the one rule for paths from data. The name must be a plain file name, and the
    path, links followed, must lie in the directory: anything else (`../x`, `/abs`, a link
    out of it) is refused with one line, before anything is written or removed."""
    if (
        not name
        or name in (".", "..")
        or "/" in name
        or "\\" in name
        or any(ord(c) < 32 or ord(c) == 127 for c in name)
    ):
        raise BackportrError(
            f"{directory}: refusing {name!r}: not a plain file name in the output directory"
        )
    path = directory / name
    try:
        link = path.is_symlink()
    except OSError as error:  # a name too long for the file system
        raise BackportrError(f"{directory}: refusing {name[:40]!r}...: {error.strerror}") from None
    if link and path.resolve().parent != directory.resolve():
        raise BackportrError(
            f"{path} is a link out of the output directory (to {path.resolve()}); "
            "remove it or choose another -o directory"
        )
    return path


def _is_a_stream(path: Path) -> bool:
    """/dev/stdout and its kin name a process's open file (/proc/self/fd/N): a redirect
    `> report.json` makes them regular files, which must be written through, not replaced."""
    return any(str(p).startswith(("/dev/", "/proc/")) for p in (path.absolute(), path.resolve()))
