"""The repository's commands: index (build or update the commit index) and status (is a commit
in a branch, and as which)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from backportr.app.console import Console
from backportr.cli.app import (  # the app and what every command shares
    BranchOption,
    IndexOption,
    PatternOption,
    QuietOption,
    RepoOption,
    UpstreamOption,
    app,
    complete_refs,
    default_branches,
    format_option,
    make_settings,
)
from backportr.cli.progress import TerminalProgress


@app.command("index")
def index_command(
    repo: RepoOption = Path("."),
    upstream: UpstreamOption = None,
    branch: BranchOption = None,
    branch_pattern: PatternOption = None,
    index: IndexOption = None,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Start the index afresh.")] = False,
    quiet: QuietOption = False,
) -> None:
    """Build or update the commit index (incremental; progress on a terminal)."""
    from backportr.app.repository import index as index_workflow

    settings = make_settings(repo, upstream, branch, branch_pattern, index)
    index_workflow(settings, _console(quiet), rebuild=rebuild)


def _console(quiet: bool) -> Console:
    return Console(progress=TerminalProgress(enabled=False if quiet else None), quiet=quiet)


@app.command("status")
def status_command(
    commits: Annotated[
        list[str],
        typer.Argument(
            help="Upstream commits (ids, prefixes, refs).",
            metavar="COMMIT...",
            autocompletion=complete_refs,
        ),
    ],
    branch: BranchOption = None,
    repo: RepoOption = Path("."),
    upstream: UpstreamOption = None,
    branch_pattern: PatternOption = None,
    index: IndexOption = None,
    output_format: Annotated[str, format_option("status")] = "text",
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet",
            "-q",
            help="Print nothing; exit 0 when every commit is in every branch, 4 otherwise.",
        ),
    ] = False,
) -> None:
    """Is each upstream commit in each branch, and as which commit?"""
    from backportr.app.repository import status

    branch = branch or default_branches(repo, branch_pattern)
    settings = make_settings(repo, upstream, branch, branch_pattern, index)
    outcome = status(settings, commits, _console(quiet), output_format=output_format)
    raise typer.Exit(int(outcome.exit_code))
