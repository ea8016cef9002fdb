"""Progress on a terminal for the front-ends: one rewritten stderr line, silent when piped."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class TerminalProgress:
    """A ProgressCallback that draws on stderr only when stderr is a terminal."""

    def __init__(self, stream: TextIO | None = None, *, enabled: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self._last = 0.0
        self._shown = False

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
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
        self.stream.write(text[:120].ljust(60))
        self.stream.flush()
        self._shown = True

    def finish(self) -> None:
        if self._shown:
            self.stream.write("\r" + " " * 70 + "\r")
            self.stream.flush()
            self._shown = False
