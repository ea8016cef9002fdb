"""Where a workflow's words go: its answer to `out`, lines for a person to `err`, progress
to a callback; and how its outcome ends (an exit status).

The command line gives a workflow its streams (stdout, stderr, a progress bar); a test or
another program gives its own."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TextIO

from backportr.errors import ExitCode
from backportr.output import write_atomically
from backportr.output.safe import terminal


class Progress(Protocol):
    """A progress callback that can also be wiped off the terminal (`finish`)."""

    def __call__(self, stage: str, done: int, total: int | None) -> None: ...

    def finish(self) -> None: ...


class Silent:
    """Progress nobody sees."""

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        return None

    def finish(self) -> None:
        return None


@dataclass
class Console:
    """A workflow's streams. `quiet`: nothing is said or written to `out` (errors still are)."""

    out: TextIO = field(default_factory=lambda: sys.stdout)
    err: TextIO = field(default_factory=lambda: sys.stderr)
    progress: Progress = field(default_factory=Silent)
    quiet: bool = False

    def write(self, text: str) -> None:
        """The answer, on `out` unless quiet; flushed, so a full device fails here."""
        if not self.quiet:
            self.out.write(text)
            self.out.flush()

    def say(self, line: str) -> None:
        """A line for a person (names from data in it shown escaped), unless quiet."""
        if not self.quiet:
            self.warn(line)

    def warn(self, line: str) -> None:
        """A line said even when quiet: an error, a warning."""
        self.progress.finish()
        self.err.write(terminal(line) + "\n")
        self.err.flush()

    def deliver(self, text: str, output: Path | None) -> bool:
        """The answer to a file (`-o`, atomically) or to `out`; whether it went somewhere
        (what a state records as reported only once it has)."""
        if output is not None:
            write_atomically(output, text)
            return True
        self.write(text)
        return not self.quiet


def attention_if(needs_a_person: bool) -> ExitCode:
    """0, or 4 when something needs a person (a finding, a conflict, a missing fix)."""
    return ExitCode.ATTENTION if needs_a_person else ExitCode.OK
