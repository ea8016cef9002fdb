"""`backportr scan`: what each stable branch lacks, for cron and CI (state, policy, formats)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import typer

from backportr.app.console import Console
from backportr.cli.app import (  # the app and what every command shares
    BranchOption,
    IndexOption,
    PatternOption,
    RepoOption,
    UpstreamOption,
    app,
    default_branches,
    format_option,
    git_config,
    make_settings,
)
from backportr.cli.progress import TerminalProgress
from backportr.errors import UsageError
from backportr.settings import SCAN_CONFLICT_DEPTH


@app.command("scan")
def scan_command(
    branch: BranchOption = None,
    repo: RepoOption = Path("."),
    upstream: UpstreamOption = None,
    branch_pattern: PatternOption = None,
    index: IndexOption = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            help="Only upstream commits after REV, or committed after DATE.",
            metavar="REV|DATE",
        ),
    ] = None,
    range_: Annotated[
        str | None, typer.Option("--range", help="Only upstream commits in A..B.", metavar="A..B")
    ] = None,
    output_format: Annotated[str, format_option("scan")] = "text",
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write to this file (atomically).", metavar="FILE"),
    ] = None,
    state: Annotated[
        Path | None,
        typer.Option("--state", help="Remember what was reported (SQLite).", metavar="FILE"),
    ] = None,
    new_only: Annotated[
        bool, typer.Option("--new-only", help="Only findings not reported by earlier runs.")
    ] = False,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs",
            "-j",
            min=0,
            help="Spread the targets over N processes (0: one per core, at most 4, where a "
            "branch has 32 targets or more that no earlier run answered).",
            metavar="N",
        ),
    ] = 0,
    ignore: Annotated[
        Path | None,
        typer.Option("--ignore", help="File of path globs to leave out.", metavar="FILE"),
    ] = None,
    dropped: Annotated[
        Path | None,
        typer.Option(
            "--dropped", help="The stable queue's dropped list ('<X.Y> <40 hex>').", metavar="FILE"
        ),
    ] = None,
    untagged: Annotated[
        str,
        typer.Option(
            "--untagged",
            help="Missing fixes without Cc: stable: include (by priority), separate (after "
            "every tagged one) or skip.",
            metavar="MODE",
        ),
    ] = "include",
    marks: Annotated[
        Path | None,
        typer.Option(
            "--marks",
            help="Your marks on findings ('adapted-on-purpose' or 'not-for-branch', one a "
            "line; default: backportr.marks): counted, not listed, until they change.",
            metavar="FILE",
        ),
    ] = None,
    conflict_depth: Annotated[
        int,
        typer.Option(
            "--conflict-depth",
            help="How deep the commits that resolve a missing fix's conflicts are looked for "
            "(as resolve's --conflict-depth; default 1; 0: never, the finding says it "
            "conflicts).",
            min=0,
            metavar="N",
        ),
    ] = SCAN_CONFLICT_DEPTH,
    detect: Annotated[
        bool,
        typer.Option(
            "--detect",
            help="Detection only: each finding and its evidence from the index, no series "
            "resolved and no trial (status 'detected'; `resolve` gives the series).",
        ),
    ] = False,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet",
            "-q",
            help="Print nothing (-o still writes the report); the exit code "
            "answers: 0 no findings, 4 findings, 1 errors.",
        ),
    ] = False,
) -> None:
    """Which fixes each branch lacks, and which of its backports are incomplete.

    Exit 0: no findings; 4: findings; 1: errors."""
    from backportr.app.scan import ScanOptions, scan
    from backportr.scan.findings import Policy
    from backportr.scan.marks import Marks

    if untagged not in ("include", "separate", "skip"):
        raise UsageError(f"--untagged is include, separate or skip, not {untagged!r}")
    config = git_config(repo)
    options = ScanOptions(
        settings=make_settings(
            repo, upstream, branch or default_branches(repo, branch_pattern), branch_pattern, index
        ),
        policy=dataclasses.replace(
            Policy.load(ignore, dropped, untagged),  # type: ignore[arg-type]
            conflict_depth=conflict_depth,
            detect=detect,
        ),
        marks=Marks.load(marks or _configured(config.value("backportr.marks"))),
        since=since,
        range_=range_,
        jobs=jobs,
        output_format=output_format,
        output=output,
        state=state,
        new_only=new_only,
        commit_url=config.commit_url(),
    )
    progress = TerminalProgress(enabled=False if quiet else None, heartbeat=60.0)
    outcome = scan(options, Console(progress=progress, quiet=quiet))
    raise typer.Exit(int(outcome.exit_code))


def _configured(value: str | None) -> Path | None:
    return Path(value).expanduser() if value else None
