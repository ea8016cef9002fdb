"""`backportr cves`: which published CVEs each branch still lacks, and the series for each."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from backportr.app.console import Console
from backportr.cli.app import (
    BranchOption,
    IndexOption,
    PatternOption,
    RepoOption,
    UpstreamOption,
    app,
    default_branches,
    format_option,
    make_settings,
)
from backportr.cli.progress import TerminalProgress


@app.command("cves")
def cves_command(
    records: Annotated[
        Path,
        typer.Option(
            "--records",
            help="The CVE records: a checkout of the kernel CVE team's vulns repository (or "
            "any directory of CVE-*.json), or a bare clone of it (--records-ref).",
            metavar="PATH",
        ),
    ],
    records_ref: Annotated[
        str | None,
        typer.Option(
            "--records-ref", help="Read the records at this ref of a git repository.", metavar="REF"
        ),
    ] = None,
    cve: Annotated[
        list[str] | None,
        typer.Option("--cve", help="Only this CVE (repeatable).", metavar="CVE-YYYY-N"),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            help="Only records the records repository added or changed after DATE (as git "
            "reads a date: 2025-01-01, '2 weeks ago').",
            metavar="DATE",
        ),
    ] = None,
    branch: BranchOption = None,
    repo: RepoOption = Path("."),
    upstream: UpstreamOption = None,
    branch_pattern: PatternOption = None,
    index: IndexOption = None,
    output_format: Annotated[str, format_option("cves")] = "text",
    state: Annotated[
        Path | None,
        typer.Option(
            "--state",
            help="Keep answers and what was reported (SQLite): a nightly run classifies only "
            "new or changed records and branches that moved.",
            metavar="FILE",
        ),
    ] = None,
    new_only: Annotated[
        bool,
        typer.Option("--new-only", help="Only outcomes not reported by earlier runs (--state)."),
    ] = False,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs",
            "-j",
            min=1,
            help="Classify in this many processes (the missing CVEs' resolves spread over them).",
            metavar="N",
        ),
    ] = 1,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write to this file (atomically).", metavar="FILE"),
    ] = None,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet", "-q", help="Print nothing; exit 0 when no CVE is missing, 4 otherwise."
        ),
    ] = False,
    unknown: Annotated[
        bool,
        typer.Option(
            "--unknown",
            help="text, markdown: list the CVEs whose outcome is unknown too (by default "
            "counted only; JSON, CSV and HTML list every outcome).",
        ),
    ] = False,
) -> None:
    """Which published CVEs each branch still lacks: not-affected, fixed (as which commit),
    missing (with the complete series), or unknown."""
    from backportr.app.cves import CvesOptions, cves

    branch = branch or default_branches(repo, branch_pattern)
    options = CvesOptions(
        settings=make_settings(repo, upstream, branch, branch_pattern, index),
        records=records,
        records_ref=records_ref,
        cves=frozenset(c.upper() for c in cve or ()),
        since=since,
        jobs=jobs,
        output_format=output_format,
        output=output,
        state=state,
        new_only=new_only,
        unknown=unknown,
    )
    progress = TerminalProgress(enabled=False if quiet else None)
    outcome = cves(options, Console(progress=progress, quiet=quiet))
    raise typer.Exit(int(outcome.exit_code))
