"""Progress for the front-ends: one rewritten stderr line on a terminal; elsewhere (cron, CI
logs) silent, or, with a `heartbeat`, a plain line at most that often once the work has run
that long (a short run stays quiet, a long one shows it is alive)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

_DRAWN: list[TerminalProgress] = []  # the bar on the terminal now, if any


def above_the_bar(write: Callable[[], None]) -> None:
    """Write a line (a warning, what -v says) above the progress bar: the bar is cleared,
    the line written, the bar drawn again below it."""
    bar = _DRAWN[-1] if _DRAWN else None
    if bar is None:
        write()
        return
    bar.clear()
    write()
    bar.redraw()


class TerminalProgress:
    """A ProgressCallback that draws on stderr when stderr is a terminal; with `heartbeat`
    (seconds), one plain line that often when it is not."""

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        enabled: bool | None = None,
        heartbeat: float | None = None,
    ) -> None:
        self.stream = stream or sys.stderr
        terminal = self.stream.isatty()
        self.enabled = terminal if enabled is None else enabled
        self.heartbeat = heartbeat if (enabled is None and not terminal) else None
        self._last = 0.0
        self._began = time.monotonic()
        self._beat = self._began
        self._shown = False
        self._text = ""  # the bar as last drawn

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        now = time.monotonic()
        if self.heartbeat is not None:
            if now - self._beat >= self.heartbeat:
                self._beat = now
                count = f"{done}/{total}" if total else f"{done}"
                self.stream.write(f"backportr: {stage}: {count} ({now - self._began:.0f} s)\n")
                self.stream.flush()
            return
        if not self.enabled:
            return
        if now - self._last < 0.1 and (total is None or done < total):
            return
        self._last = now
        if total:
            width = 30
            filled = int(width * min(done, total) / total)
            bar = "#" * filled + "-" * (width - filled)
            text = f"\r{stage}: [{bar}] {done}/{total}"
        else:
            text = f"\r{stage}: {done} commits"
        self._text = text[:120].ljust(60)
        self.stream.write(self._text)
        self.stream.flush()
        self._shown = True
        if self not in _DRAWN:
            _DRAWN.append(self)

    def clear(self) -> None:
        """Wipe the bar from its line (drawn again by `redraw` or the next call)."""
        if self._shown:
            self.stream.write("\r" + " " * 70 + "\r")
            self.stream.flush()

    def redraw(self) -> None:
        if self._shown:
            self.stream.write(self._text)
            self.stream.flush()

    def finish(self) -> None:
        if self._shown:
            self.clear()
            self._shown = False
        if self in _DRAWN:
            _DRAWN.remove(self)
