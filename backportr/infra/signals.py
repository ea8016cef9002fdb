"""SIGTERM and SIGHUP as an exception, so that a stopped command lets go of what it holds as
an interrupted one does.

A cron or CI timeout, `systemctl stop` or `kill` ends a command with SIGTERM, and a closed
terminal or a dropped ssh session with SIGHUP; by default either ends the process where it
stands: a scan's scratch object directories (tens of megabytes each) stayed in the temporary
directory, and its worker processes went on scanning for minutes with no one to read their
answers. Here the first such signal raises `Terminated` where the main thread is (later ones
are ignored, so the unwinding is not cut short): context managers close what they opened, an
index transaction rolls back, an output not yet written is not written, and
`children_stopped` sends SIGTERM to the worker processes, which unwind their own work alike
and end (`worker_signals`). A stop that arrives while a child process is being started
raises once it is started, and stops it too (`infra/stops.py`); one that arrives while a
finalizer runs (Python swallows what a `__del__` raises) comes again a moment later. A SIGHUP
that `nohup` (or anything else) set to be ignored stays ignored.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.util
import os
import signal
import tempfile
import threading
from collections.abc import Iterator
from types import FrameType

from backportr.errors import Terminated
from backportr.infra.scratch import remove_owned
from backportr.infra.stops import raise_stop

_STOP_GRACE = 10.0  # seconds a stopped child is given to let go of what it holds
_ending = False  # a worker or manager stopping: a later SIGTERM or SIGHUP changes nothing


def _stopping() -> list[signal.Signals]:
    """The signals that stop a command here: SIGTERM, and SIGHUP unless it is ignored.

    The temporary directory is found first: Python's first `gettempdir` tries it by making
    a file of a random name there and removing it, and a signal raised between the two
    left that file behind (seen after SIGTERM in a scan's `--jobs` worker). The two signals
    are held back meanwhile: one that arrives then, before any handler here (the scan's
    read-ahead process, stopped as it starts), ends the process once the file is gone."""
    held = {signal.SIGTERM, signal.SIGHUP}
    before = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        tempfile.gettempdir()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
    stopping = [signal.SIGTERM]
    if signal.getsignal(signal.SIGHUP) is not signal.SIG_IGN:
        stopping.append(signal.SIGHUP)
    return stopping


@contextlib.contextmanager
def signals_raise() -> Iterator[None]:
    """Within: the first SIGTERM or SIGHUP raises `Terminated` in the main thread; the
    handlers that were there before are back on exit. Outside the main thread (where no
    handler can be set), nothing changes."""
    raised = False

    def terminated(signum: int, frame: FrameType | None) -> None:
        nonlocal raised
        if raised or _postponed(signum, frame):
            return
        raised = True
        raise_stop(Terminated(signum))

    previous: dict[signal.Signals, signal._HANDLER] = {}
    try:
        for number in _stopping():
            previous[number] = signal.signal(number, terminated)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        for number, handler in previous.items():
            if handler is not None:  # None: set outside Python, nothing to put back
                signal.signal(number, handler)


@contextlib.contextmanager
def worker_signals() -> Iterator[None]:
    """A pool worker's piece of work: within, SIGTERM and SIGHUP raise `Terminated`
    (`signals_raise`); once what the work held is let go (the context managers inside this
    one), the process ends as the signal would have ended it, rather than wait for more work
    that will not come (its parent, stopping, waits for it: `children_stopped`)."""
    try:
        with signals_raise():
            yield
    except Terminated as stop:
        global _ending
        _ending = True  # the parent's own SIGTERM, after a group's SIGHUP, stops nothing now
        remove_owned()  # no exit handler runs past `os._exit`
        os._exit(stop.exit_code)


def signals_exit() -> None:
    """SIGTERM and SIGHUP end this process by `SystemExit`, its exit handlers run: for a
    pool's worker between two pieces of work (which hold nothing; the work itself raises,
    `worker_signals`) and a multiprocessing manager (whose handlers remove the directory of
    its socket, which the signal's default left behind)."""

    def exits(signum: int, frame: FrameType | None) -> None:
        global _ending
        if _ending or _postponed(signum, frame):  # a second must not cut the exit short
            return
        _ending = True
        raise_stop(SystemExit(Terminated(signum).exit_code))

    # A pool's worker ends by `os._exit` after multiprocessing's own finalizers, never
    # Python's exit handlers: its scratch directories go with the former.
    multiprocessing.util.Finalize(None, remove_owned, exitpriority=0)
    for number in _stopping():
        signal.signal(number, exits)


_AGAIN_SECONDS = 0.01  # a stop that came during a finalizer: sent again this much later


def _postponed(signum: int, frame: FrameType | None) -> bool:
    """Is the main thread running a finalizer (`__del__`, as pygit2 frees an object)?
    Python swallows what one raises (it prints a traceback and goes on): the signal is
    then sent again in a moment, from a timer's thread (where the handler cannot run), and
    comes back once the finalizer is done."""
    while frame is not None and frame.f_code.co_name != "__del__":
        frame = frame.f_back
    if frame is None:
        return False
    timer = threading.Timer(_AGAIN_SECONDS, os.kill, (os.getpid(), signum))
    timer.daemon = True
    timer.start()
    return True


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
