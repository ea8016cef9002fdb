"""The exception tree and exit codes shared by every front-end.

Core code raises these; only the front-ends (CLI, bot, scan) turn them into exit codes and
one-line messages. Nothing here prints or exits.
"""

from __future__ import annotations

import signal
from enum import IntEnum


class ExitCode(IntEnum):
    """Exit codes, the same for every command (documented in docs/cli.md)."""

    OK = 0
    BAD_INPUT = 1
    USAGE = 2
    INTERNAL = 3
    ATTENTION = 4
    HUNG_UP = 129  # SIGHUP (a closed terminal, a dropped ssh session), as a shell reports it
    INTERRUPTED = 130  # Ctrl-C (SIGINT)
    TERMINATED = 143  # SIGTERM (a timeout, a service stop)


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived (`infra.signals`): raised where the process stood, unwound
    as an interrupt is (not an `Exception`: no handler of faults takes it for one)."""

    def __init__(self, signum: int = signal.SIGTERM) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> ExitCode:
        """The code a shell reports for a process the signal ended."""
        return ExitCode.HUNG_UP if self.signum == signal.SIGHUP else ExitCode.TERMINATED

    @property
    def said(self) -> str:
        return "hung up" if self.signum == signal.SIGHUP else "terminated"


class BackportrError(Exception):
    """A failure the user can act on: the message says what failed and what to do."""

    exit_code: ExitCode = ExitCode.BAD_INPUT


class NotARepositoryError(BackportrError):
    """The path is not a git repository."""


class ShallowCloneError(BackportrError):
    """History is cut off, so ancestry and blame would lie."""


class UnknownCommitError(BackportrError):
    """A commit id, prefix or revision that names nothing."""


class AmbiguousCommitError(UnknownCommitError):
    """An abbreviated id that matches several commits."""

    def __init__(self, prefix: str, candidates: list[str]) -> None:
        shown = ", ".join(candidates[:10])
        more = f" and {len(candidates) - 10} more" if len(candidates) > 10 else ""
        could = f": {shown}{more}" if candidates else ""
        super().__init__(f"commit prefix '{prefix}' is ambiguous{could}; give more hex digits")
        self.prefix = prefix
        self.candidates = candidates


class MissingObjectError(BackportrError):
    """git could not read an object the repository should hold (a blob absent from a
    damaged or partial copy): `oid`, which `needed_by` needs, when known."""

    def __init__(self, message: str, oid: str = "", needed_by: str = "") -> None:
        super().__init__(message)
        self.oid = oid
        self.needed_by = needed_by

    @classmethod
    def lacking(cls, oid: str, needed_by: str) -> MissingObjectError:
        return cls(
            f"the repository lacks the object {oid} ({needed_by}); run git fsck, or fetch "
            "the repository's missing objects (a damaged or partial copy)",
            oid,
            needed_by,
        )


class UnknownBranchError(BackportrError):
    """A branch or upstream ref that does not exist."""


class IndexCorruptError(BackportrError):
    """The on-disk commit index cannot be read."""


class UsageError(BackportrError):
    """Arguments that do not fit together."""

    exit_code = ExitCode.USAGE
