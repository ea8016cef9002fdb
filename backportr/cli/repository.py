"""The repository's commands: index (build or update the commit index) and status (is a commit
in a branch, and as which)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Annotated

import typer

from backportr.cli.app import (  # the app and what every command shares
    BranchOption,
    IndexOption,
    PatternOption,
    QuietOption,
    RepoOption,
    StatusFormat,
    UpstreamOption,
    app,
    complete_refs,
    default_branches,
    make_settings,
)
from backportr.cli.progress import TerminalProgress
from backportr.errors import ExitCode
from backportr.model import StatusResult
from backportr.output.status import render_status_json, render_status_text
from backportr.resolve.workspace import open_workspace

_GRAPH_HINT = 200_000  # commits: below this, path-limited walks are fast without a graph


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
    progress = TerminalProgress(enabled=False if quiet else None)
    settings = make_settings(repo, upstream, branch, branch_pattern, index)
    try:
        with open_workspace(settings, progress=progress, rebuild=rebuild) as ws:
            progress.finish()
            if quiet:
                return
            if (old := ws.stats.replaced_upstream) is not None:
                typer.echo(
                    f"{old}: upstream replaced (another ref, or its history rewritten), "
                    "the index built afresh",
                    err=True,
                )
            for name in ws.stats.dropped:
                typer.echo(f"{name}: no longer in the repository, dropped from the index", err=True)
            for name, count in ws.stats.new_commits.items():
                typer.echo(f"{name}: {count} new commits indexed", err=True)
            for name in ws.stats.rewritten:
                typer.echo(
                    f"{name}: rewritten history detected, re-indexed from its fork point", err=True
                )
            commits = ws.index.reader.count()
            typer.echo(f"{commits} commits in {ws.index.path}")
            log = logging.getLogger("backportr")
            for form, count in ws.index.reader.fix_form_counts().items():
                log.info("%d commits name a culprit as %s", count, form)
            if commits >= _GRAPH_HINT and not ws.repo.has_commit_graph():
                typer.echo(
                    "hint: the repository has no commit-graph; `git commit-graph write "
                    "--reachable --changed-paths` (or `git maintenance start`) makes the "
                    "conflict search of resolve and scan about twice as fast at this size",
                    err=True,
                )
    finally:
        progress.finish()


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
    output_format: Annotated[
        StatusFormat, typer.Option("--format", "-f", help="Output format.")
    ] = StatusFormat.text,
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
    branch = branch or default_branches(repo, branch_pattern)
    progress = TerminalProgress(enabled=False if quiet else None)
    settings = make_settings(repo, upstream, branch, branch_pattern, index)
    try:
        with open_workspace(settings, progress=progress) as ws:
            progress.finish()
            results = []
            for spec in commits:
                oid = ws.repo.names.resolve_commit(spec)
                info = ws.index.reader.info(oid)
                subject = info.subject if info else ws.repo.message(oid).split("\n", 1)[0]
                presences = tuple(ws.presence.check(oid, b) for b in ws.branches)
                results.append(StatusResult(oid, subject, presences))
    finally:
        progress.finish()
    if quiet:
        everywhere = all(p.present for r in results for p in r.branches)
        raise typer.Exit(int(ExitCode.OK if everywhere else ExitCode.ATTENTION))
    render = render_status_json if output_format is StatusFormat.json else render_status_text
    sys.stdout.write(render(results))
