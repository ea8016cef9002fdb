"""`backportr cves`: which published CVEs each branch still lacks, and the series for each."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from backportr.cli.app import (
    BranchOption,
    IndexOption,
    PatternOption,
    RepoOption,
    UpstreamOption,
    app,
    default_branches,
    make_settings,
)
from backportr.errors import ExitCode, UsageError
from backportr.output import write_atomically
from backportr.progress import TerminalProgress
from backportr.workspace import open_workspace


class CvesFormat(StrEnum):
    text = "text"
    json = "json"
    csv = "csv"
    markdown = "markdown"


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
    branch: BranchOption = None,
    repo: RepoOption = Path("."),
    upstream: UpstreamOption = None,
    branch_pattern: PatternOption = None,
    index: IndexOption = None,
    output_format: Annotated[
        CvesFormat, typer.Option("--format", "-f", help="Output format.")
    ] = CvesFormat.text,
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
) -> None:
    """Which published CVEs each branch still lacks: not-affected, fixed (as which commit),
    missing (with the complete series), or unknown."""
    from backportr.cves.records import read_records
    from backportr.cves.run import check_records
    from backportr.output import cves as render

    if not records.exists():
        raise UsageError(f"--records {records}: no such file or directory")
    wanted = {c.upper() for c in cve or ()}
    branch = branch or default_branches(repo, branch_pattern)
    progress = TerminalProgress(enabled=False if quiet else None)
    settings = make_settings(repo, upstream, branch, branch_pattern, index)
    try:
        with open_workspace(settings, progress=progress) as ws:
            outcomes, bad = check_records(ws, read_records(records, records_ref), wanted, progress)
    finally:
        progress.finish()
    renderer = {
        CvesFormat.text: render.render_cves_text,
        CvesFormat.json: render.render_cves_json,
        CvesFormat.csv: render.render_cves_csv,
        CvesFormat.markdown: render.render_cves_markdown,
    }[output_format]
    text = renderer(outcomes, bad)
    if output is not None:
        write_atomically(output, text)
    elif not quiet:
        sys.stdout.write(text)
    if not quiet:
        for name, error in bad:
            typer.echo(f"backportr: skipped the record {name}: {error}", err=True)
    if any(o.outcome == "missing" for o in outcomes):
        raise typer.Exit(int(ExitCode.ATTENTION))
