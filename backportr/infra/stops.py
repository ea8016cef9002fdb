"""Stops held back: a stretch of work in which a stop signal (SIGTERM, SIGHUP: `signals.py`)
must not raise, because what it makes is not yet known to what would undo it.

Python runs a signal's handler in the main thread between two steps of its work, wherever
that is. Two such places lost what they made: `Popen` between the fork and its result (the
child ran on, unseen: `process.py`) and a scratch directory between its making and its
registration (it stayed: `scratch.py`). Within `stops_held` a handler's stop waits, and
raises as the stretch ends, where its maker knows what to undo.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

_holding = 0  # stretches of the main thread's work under way
_waiting: list[BaseException] = []  # the stop that arrived meanwhile


def raise_stop(stop: BaseException) -> None:
    """What a stop signal's handler calls: `stop` raised now, or as the stretch of
    `stops_held` under way ends."""
    if _holding:
        _waiting[:] = [stop]
        return
    raise stop


@contextlib.contextmanager
def stops_held() -> Iterator[None]:
    """Within, in the main thread, a stop waits; it raises as the block ends (the
    handlers run in the main thread alone: another thread's block holds nothing)."""
    global _holding
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _holding += 1
    try:
        yield
    finally:
        _holding -= 1
        if not _holding and _waiting:
            raise _waiting.pop()
