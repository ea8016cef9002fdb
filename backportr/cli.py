"""The command line: parse arguments, build Settings, call the core, render, exit.

No logic lives here. One boundary (main) turns BackportrError into its exit code and a
one-line message on stderr, and any other exception into exit 3 with a crash log.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
import traceback
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from backportr import __version__
from backportr.config import Settings
from backportr.errors import BackportrError, ExitCode, UsageError
from backportr.model import StatusResult
from backportr.output.status import render_status_json, render_status_text
from backportr.progress import TerminalProgress
from backportr.repo import DEFAULT_BRANCH_PATTERN
from backportr.workspace import open_workspace

app = typer.Typer(
    name="backportr",
    help="Find the complete, ordered series a Linux stable backport needs.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


class StatusFormat(StrEnum):
    text = "text"
    json = "json"


RepoOption = Annotated[
    Path, typer.Option("--repo", help="The git repository (work tree or bare).", show_default=".")
]
UpstreamOption = Annotated[
    str | None,
    typer.Option(
        "--upstream", help="Upstream ref (default: origin/master, master, origin/main or main)."
    ),
]
BranchOption = Annotated[
    list[str] | None,
    typer.Option("--branch", "-b", help="Stable branch, e.g. linux-5.10.y (repeatable)."),
]
PatternOption = Annotated[
    str,
    typer.Option("--branch-pattern", help="Which branches the index covers by default."),
]
IndexOption = Annotated[
    Path | None,
    typer.Option("--index", help="Index file (default: <git dir>/backportr/index.sqlite)."),
]


def _settings(
    repo: Path,
    upstream: str | None,
    branches: list[str] | None,
    pattern: str = DEFAULT_BRANCH_PATTERN,
    index: Path | None = None,
    **extra: object,
) -> Settings:
    return Settings(
        repo=repo,
        upstream=upstream,
        branches=tuple(branches or ()),
        branch_pattern=pattern,
        index_path=index,
        **extra,  # type: ignore[arg-type]
    )


@app.command("index")
def index_command(
    repo: RepoOption = Path("."),
    upstream: UpstreamOption = None,
    branch: BranchOption = None,
    branch_pattern: PatternOption = DEFAULT_BRANCH_PATTERN,
    index: IndexOption = None,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Start the index afresh.")] = False,
) -> None:
    """Build or update the commit index (incremental; progress on a terminal)."""
    progress = TerminalProgress()
    settings = _settings(repo, upstream, branch, branch_pattern, index)
    try:
        with open_workspace(settings, progress=progress, rebuild=rebuild) as ws:
            progress.finish()
            for name, count in ws.stats.new_commits.items():
                typer.echo(f"{name}: {count} new commits indexed", err=True)
            for name in ws.stats.rewritten:
                typer.echo(
                    f"{name}: rewritten history detected, re-indexed from its fork point", err=True
                )
            typer.echo(f"{ws.index.count()} commits in {ws.index.path}")
    finally:
        progress.finish()


@app.command("status")
def status_command(
    commits: Annotated[list[str], typer.Argument(help="Upstream commits (ids, prefixes, refs).")],
    branch: BranchOption = None,
    repo: RepoOption = Path("."),
    upstream: UpstreamOption = None,
    branch_pattern: PatternOption = DEFAULT_BRANCH_PATTERN,
    index: IndexOption = None,
    output_format: Annotated[
        StatusFormat, typer.Option("--format", "-f", help="Output format.")
    ] = StatusFormat.text,
) -> None:
    """Is each upstream commit in each branch, and as which commit?"""
    if not branch:
        raise UsageError("give at least one --branch")
    progress = TerminalProgress()
    settings = _settings(repo, upstream, branch, branch_pattern, index)
    try:
        with open_workspace(settings, progress=progress) as ws:
            progress.finish()
            results = []
            for spec in commits:
                oid = ws.repo.resolve_commit(spec)
                info = ws.index.info(oid)
                subject = info.subject if info else ws.repo.message(oid).split("\n", 1)[0]
                presences = tuple(ws.presence.check(oid, b) for b in ws.branches)
                results.append(StatusResult(oid, subject, presences))
    finally:
        progress.finish()
    render = render_status_json if output_format is StatusFormat.json else render_status_text
    sys.stdout.write(render(results))


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
) -> None:
    """Find the complete, ordered series a Linux stable backport needs."""


def main(argv: list[str] | None = None) -> int:
    """The one boundary: exceptions become exit codes and one line on stderr."""
    try:
        app(args=argv, prog_name="backportr")
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
    except Exception as error:
        log = _write_crash_log()
        _say(f"backportr: internal error ({type(error).__name__}: {error}); details in {log}")
        return _exit(ExitCode.INTERNAL)
    return _exit(ExitCode.OK)


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
        handle.write(f"backportr {__version__}\nargv: {sys.argv!r}\n\n")
        handle.write(traceback.format_exc())
    return path
