"""The command line: parse arguments, build Settings, call the core, render, exit.

No logic lives here. One boundary (main) turns BackportrError into its exit code and a
one-line message on stderr, and any other exception into exit 3 with a crash log.
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
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer

from backportr import __version__
from backportr.config import DEFAULT_MAX_COMMITS, Settings
from backportr.dbfault import explain
from backportr.errors import BackportrError, ExitCode, UsageError
from backportr.gitconfig import GitConfig
from backportr.model import CulpritPolicy
from backportr.repo import DEFAULT_BRANCH_PATTERN, GitError, Repo

if TYPE_CHECKING:
    from backportr.mail.sending import SmtpServer

_PLAIN_HELP = not sys.stdout.isatty()  # boxes and colour for a terminal; plain text for a pipe
app = typer.Typer(
    name="backportr",
    help="Find the complete, ordered series a Linux stable backport needs.",
    add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None if _PLAIN_HELP else "rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)


class StatusFormat(StrEnum):
    text = "text"
    json = "json"


RepoOption = Annotated[
    Path,
    typer.Option(
        "--repo", help="The git repository (work tree or bare).", show_default=".", metavar="PATH"
    ),
]
UpstreamOption = Annotated[
    str | None,
    typer.Option(
        "--upstream",
        help="Upstream ref (default: origin/master, master, origin/main or main).",
        metavar="REF",
    ),
]
BranchOption = Annotated[
    list[str] | None,
    typer.Option(
        "--branch", "-b", help="Stable branch, e.g. linux-5.10.y (repeatable).", metavar="BRANCH"
    ),
]
PatternOption = Annotated[
    str | None,
    typer.Option(
        "--branch-pattern",
        help="Which branches the index covers (default: backportr.branchPattern, else "
        f"{DEFAULT_BRANCH_PATTERN}).",
        metavar="GLOB",
    ),
]
QuietOption = Annotated[
    bool, typer.Option("--quiet", "-q", help="Print nothing on success (errors still).")
]
IndexOption = Annotated[
    Path | None,
    typer.Option(
        "--index", help="Index file (default: <git dir>/backportr/index.sqlite).", metavar="FILE"
    ),
]


_OVERRIDES: list[str] = []  # -c KEY=VALUE, given before the command
_NO_REPLY = "backportr <backportr@localhost>"


def _config(repo: Path) -> GitConfig:
    return GitConfig(repo, _OVERRIDES)


def _smtp_server(repo: Path, server: str) -> SmtpServer:
    """HOST:PORT with the encryption, user and password file of git config."""
    from backportr.mail.sending import SmtpServer

    config = _config(repo)
    return SmtpServer.parse(
        server,
        config.value("backportr.smtpEncryption"),
        config.value("backportr.smtpUser"),
        config.value("backportr.smtpPassFile"),
    )


def _settings(
    repo: Path,
    upstream: str | None,
    branches: list[str] | None,
    pattern: str | None = None,
    index: Path | None = None,
    max_commits: int = DEFAULT_MAX_COMMITS,
    culprits: str | None = None,
) -> Settings:
    """The command line's values, and git config's (backportr.*) where it gave none."""
    config = _config(repo)
    return Settings(
        culprits=culprit_policy(culprits or config.value("backportr.culprits")),
        repo=repo,
        upstream=upstream or config.value("backportr.upstream"),
        branches=tuple(branches or ()),
        branch_pattern=pattern or config.value("backportr.branchpattern") or DEFAULT_BRANCH_PATTERN,
        index_path=index,
        max_commits=max_commits,
        fixes_patterns=config.values("backportr.fixespattern"),
    )


def culprit_policy(value: str | None) -> CulpritPolicy:
    """--culprits or backportr.culprits: auto (the default), evidence or always."""
    if value in (None, "", "auto"):
        return "auto"
    if value in ("evidence", "always"):
        return cast(CulpritPolicy, value)
    raise UsageError(
        f"--culprits (or backportr.culprits) is 'auto', 'evidence' or 'always', not {value!r}"
    )


def _default_branches(repo: Path, pattern: str | None) -> list[str]:
    """status and scan without -b: backportr.branches, else every branch the index covers."""
    config = _config(repo)
    configured = (config.value("backportr.branches") or "").split()
    if configured:
        return configured
    effective = pattern or config.value("backportr.branchpattern") or DEFAULT_BRANCH_PATTERN
    opened = Repo(repo)
    found = []
    for name in opened.stable_branches(effective):
        try:
            opened.branch(name)
        except BackportrError as stray:
            logging.getLogger("backportr").warning("skipped a branch: %s", stray)
            continue
        found.append(name)
    if not found:
        raise UsageError(
            f"no branch matches {effective!r}: give --branch, or set backportr.branches"
        )
    return found


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"backportr {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version_callback, is_eager=True, help="Print the version."
        ),
    ] = False,
    overrides: Annotated[
        list[str] | None,
        typer.Option(
            "-c",
            help="Set a configuration value for this run, as git's -c.",
            metavar="KEY=VALUE",
        ),
    ] = None,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose", "-v", help="Say what is being done (on stderr): index, resolve, scan, bot."
        ),
    ] = False,
) -> None:
    """Find the complete, ordered series a Linux stable backport needs."""
    _OVERRIDES[:] = overrides or []
    if verbose:
        logging.getLogger("backportr").setLevel(logging.INFO)


def main(argv: list[str] | None = None) -> int:
    """The one boundary: exceptions become exit codes and one line on stderr."""
    _log_to_stderr()
    try:
        app(args=_verbose_first(sys.argv[1:] if argv is None else argv), prog_name="backportr")
    except SystemExit as done:
        return _exit(done.code if isinstance(done.code, int) else ExitCode.BAD_INPUT)
    except BackportrError as error:
        _say(f"backportr: error: {error}")
        return _exit(int(error.exit_code))
    except KeyboardInterrupt:
        _say("backportr: interrupted")
        return _exit(130)
    except BrokenPipeError:
        return _exit(ExitCode.OK)
    except (OSError, sqlite3.DatabaseError, GitError) as error:
        _say(f"backportr: error: {_environment_fault(error)}")  # the machine's, not a bug
        return _exit(ExitCode.BAD_INPUT)
    except KeyError as error:
        missing = str(error.args[0]) if error.args else ""
        if len(missing) != 40 or any(c not in "0123456789abcdef" for c in missing):
            log = _write_crash_log()
            _say(f"backportr: internal error (KeyError: {error}); details in {log}")
            return _exit(ExitCode.INTERNAL)
        _say(  # libgit2 could not find an object: a damaged or incomplete repository
            f"backportr: error: the repository lacks an object it refers to ({error}); "
            "run git fsck, or fetch again"
        )
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
        return f"backportr: {kind}{record.getMessage()}"


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
        handler = logging.StreamHandler(sys.stderr)
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
    sys.stderr.write(line.rstrip("\n") + "\n")


def _write_crash_log() -> str:
    fd, path = tempfile.mkstemp(prefix=f"backportr-crash-{int(time.time())}-", suffix=".log")
    with os.fdopen(fd, "w") as handle:
        handle.write(f"backportr {__version__}\nargv: {sys.argv!r}\n{_versions()}\n\n")
        handle.write(traceback.format_exc())
    return path


def _versions() -> str:
    """What a bug report needs besides the traceback: Python, pygit2, libgit2 and git."""
    import platform

    from backportr.gitproc import git_version
    from backportr.repo import library_versions

    pygit2_version, libgit2_version = library_versions()
    return (
        f"python {platform.python_version()} ({platform.platform()})\n"
        f"pygit2 {pygit2_version}, libgit2 {libgit2_version}\n{git_version()}"
    )


# The commands register themselves on `app` when imported (after everything they share).
from backportr.cli import repository, resolve, scan, mail, demo, settings  # noqa: E402, F401, I001
