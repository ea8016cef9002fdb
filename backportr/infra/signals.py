"""SIGTERM as an exception, so that a stopped command lets go of what it holds as an
interrupted one does.

A cron or CI timeout, `systemctl stop` or `kill` ends a command with SIGTERM, which by
default ends the process where it stands: a scan's scratch object directories (tens of
megabytes each) stayed in the temporary directory, and its worker processes went on
scanning for minutes with no one to read their answers. Here the first SIGTERM raises
`Terminated` where the main thread is (later ones are ignored, so the unwinding is not cut
short): context managers close what they opened, an index transaction rolls back, an output
not yet written is not written, and `children_stopped` sends the same signal to the worker
processes, which unwind their own work alike and end (`worker_sigterm`).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
from collections.abc import Iterator

from backportr.errors import ExitCode, Terminated

_STOP_GRACE = 10.0  # seconds a stopped child is given to let go of what it holds


@contextlib.contextmanager
def sigterm_raises() -> Iterator[None]:
    """Within: the first SIGTERM raises `Terminated` in the main thread; the handler that was
    there before is back on exit. Outside the main thread (where no handler can be set),
    nothing changes."""
    raised = False

    def terminated(signum: int, frame: object) -> None:
        nonlocal raised
        if not raised:
            raised = True
            raise Terminated

    try:
        previous = signal.signal(signal.SIGTERM, terminated)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def worker_sigterm() -> Iterator[None]:
    """A pool worker's piece of work: within, SIGTERM raises `Terminated` (`sigterm_raises`);
    once what the work held is let go (the context managers inside this one), the process
    ends as SIGTERM would have ended it, rather than wait for more work that will not come
    (its parent, stopping, waits for it: `children_stopped`)."""
    try:
        with sigterm_raises():
            yield
    except Terminated:
        os._exit(ExitCode.TERMINATED)


def sigterm_exits() -> None:
    """SIGTERM ends this process by `SystemExit`, its exit handlers run: for a pool's worker
    between two pieces of work (which hold nothing; the work itself raises,
    `worker_sigterm`) and a multiprocessing manager (whose handlers remove the directory of
    its socket, which SIGTERM's default left behind)."""

    def exits(signum: int, frame: object) -> None:
        raise SystemExit(ExitCode.TERMINATED)

    signal.signal(signal.SIGTERM, exits)


@contextlib.contextmanager
def children_stopped() -> Iterator[None]:
    """Where the work within is interrupted or terminated, the multiprocessing children of
    this process (a pool's workers, its manager) are sent SIGTERM and waited for (killed
    past `_STOP_GRACE`) before the exception goes on: each unwinds its own work, and none is
    left running with no one to read its answers."""
    try:
        yield
    except (KeyboardInterrupt, Terminated):
        children = multiprocessing.active_children()
        for child in children:
            child.terminate()
        for child in children:
            child.join(_STOP_GRACE)
            if child.is_alive():
                child.kill()
                child.join()
        raise
