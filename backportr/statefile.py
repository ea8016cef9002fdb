"""The lock beside a state file (the bot's, a scan's): one run at a time, told at once.

An I/O edge shared by the front-ends that keep state between scheduled runs."""

from __future__ import annotations

import fcntl
from pathlib import Path
from typing import IO

from backportr.errors import BackportrError


def exclusive_lock(path: Path, busy: str) -> IO[str]:
    """Hold `<path>.lock` exclusively (closing the returned file releases it); when another
    run holds it, raise `busy` as one line."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = open(path.with_name(path.name + ".lock"), "a+")  # noqa: SIM115
    except OSError as error:
        raise BackportrError(f"cannot use the state {path}: {error.strerror}") from None
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        raise BackportrError(busy) from None
    return lock
