"""The command line: parse arguments, build Settings, call the core, render, exit.

No logic lives here. `app.py` holds the typer app and what commands share; each command is a
module of its own that imports it (never this package's `__init__`), registered here by
import. One boundary (main) turns BackportrError into its exit code and a one-line message
on stderr, and any other exception into exit 3 with a crash log.
It is the top floor: it may import every package, and none imports it (`tests/test_lint.py`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import sys
import tempfile
import time
import traceback

from backportr import __version__
from backportr.cli import cves, demo, mail, repository, resolve, scan, settings  # commands
from backportr.cli.app import app
from backportr.cli.progress import above_the_bar
from backportr.errors import BackportrError, ExitCode, Terminated
from backportr.git.repo import GitError, git_error_text
from backportr.infra.dbfault import explain
from backportr.infra.signals import signals_raise
from backportr.output.safe import terminal

__all__ = ["app", "main", "run"]
_COMMANDS = (cves, demo, mail, repository, resolve, scan, settings)  # registered on `app` by import


def main(argv: list[str] | None = None) -> int:
    """The one boundary: exceptions become exit codes and one line on stderr."""
    _log_to_stderr()
    try:
        with signals_raise():  # a timeout's SIGTERM, a hang-up: unwound as an interrupt is
            app(args=_verbose_first(sys.argv[1:] if argv is None else argv), prog_name="backportr")
    except SystemExit as done:
        return _exit(done.code if isinstance(done.code, int) else ExitCode.BAD_INPUT)
    except BackportrError as error:
        _say(f"backportr: error: {error}")
        return _exit(int(error.exit_code))
    except KeyboardInterrupt:
        _say("backportr: interrupted")
        return _exit(ExitCode.INTERRUPTED)
    except Terminated as stop:
        with contextlib.suppress(OSError):  # a hung-up terminal takes no more lines
            _say(f"backportr: {stop.said}")
        return _exit(stop.exit_code)
    except BrokenPipeError:
        return _exit(ExitCode.OK)
    except (OSError, sqlite3.DatabaseError, GitError) as error:
        _say(f"backportr: error: {_environment_fault(error)}")  # the machine's, not a bug
        return _exit(ExitCode.BAD_INPUT)
    except Exception as error:
        log = _write_crash_log()
        _say(f"backportr: internal error ({type(error).__name__}: {error}); details in {log}")
        return _exit(ExitCode.INTERNAL)
    return _exit(ExitCode.OK)


class _LevelFormatter(logging.Formatter):
    """`backportr: warning: ...` for warnings, `backportr: ...` for what -v says."""

    def format(self, record: logging.LogRecord) -> str:
        kind = "warning: " if record.levelno >= logging.WARNING else ""
        return terminal(f"backportr: {kind}{record.getMessage()}")  # names from data in it


class _AboveTheBar(logging.StreamHandler):  # type: ignore[type-arg]
    """Each line above the progress bar, never through it (`progress.above_the_bar`)."""

    def emit(self, record: logging.LogRecord) -> None:
        above_the_bar(lambda: super(_AboveTheBar, self).emit(record))


def _verbose_first(args: list[str]) -> list[str]:
    """`-v` is a global option that may also follow the command (`backportr scan -v ...`):
    moved to the front, before the command, where it is read (never after a `--`)."""
    end = args.index("--") if "--" in args else len(args)
    flags = [a for a in args[:end] if a in ("-v", "--verbose")]
    if not flags:
        return args
    return ["-v", *[a for a in args[:end] if a not in ("-v", "--verbose")], *args[end:]]


def _log_to_stderr() -> None:
    """Warnings of the `backportr` logger as one line each on stderr (never on stdout)."""
    logger = logging.getLogger("backportr")
    if not logger.handlers:
        handler = _AboveTheBar(sys.stderr)
        handler.setFormatter(_LevelFormatter())
        said: set[str] = set()

        def once(record: logging.LogRecord) -> bool:
            text = record.getMessage()
            if text in said:
                return False
            said.add(text)
            return True

        handler.addFilter(once)
        logger.addHandler(handler)
        logger.setLevel(logging.WARNING)
        logger.propagate = False


def _environment_fault(error: BaseException) -> str:
    """One line for a fault of the environment: a file, the disk, a database, the repository."""
    if isinstance(error, OSError):
        where = f" ({error.filename})" if error.filename else ""
        reason = error.strerror or str(error) or type(error).__name__
        return f"{reason}{where}"
    if isinstance(error, sqlite3.DatabaseError):
        return explain(error, "file", "backportr's index or state")
    if "not owned by current user" in str(error):  # git's safe.directory check
        return (
            f"the repository belongs to another user ({error}); if you trust it, run "
            "git config --global --add safe.directory <its path>"
        )
    if isinstance(error, GitError):
        return f"the repository cannot be read ({git_error_text(error)})"
    return f"the repository cannot be read ({error})"


def _exit(code: int | None) -> int:
    return int(code or 0)


def run() -> None:
    """The console script: exit with main()'s code."""
    code = main()
    with contextlib.suppress(BrokenPipeError):
        sys.stdout.flush()
    sys.exit(code)


def _say(line: str) -> None:
    """The boundary's one line; what it quotes (a commit name, a path, git's own words) is
    data: control bytes and bidi overrides shown escaped."""
    sys.stderr.write(terminal(line.rstrip("\n")) + "\n")


def _write_crash_log() -> str:
    fd, path = tempfile.mkstemp(prefix=f"backportr-crash-{int(time.time())}-", suffix=".log")
    with os.fdopen(fd, "w") as handle:
        handle.write(f"backportr {__version__}\nargv: {sys.argv!r}\n{_versions()}\n\n")
        handle.write(traceback.format_exc())
    return path


def _versions() -> str:
    """What a bug report needs besides the traceback: Python, pygit2, libgit2 and git."""
    import platform

    from backportr.git.proc import git_version
    from backportr.git.repo import library_versions

    pygit2_version, libgit2_version = library_versions()
    return (
        f"python {platform.python_version()} ({platform.platform()})\n"
        f"pygit2 {pygit2_version}, libgit2 {libgit2_version}\n{git_version()}"
    )


# The commands register themselves on `app` when imported (after everything they share).
