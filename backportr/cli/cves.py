"""`backportr cves`: which published CVEs each branch still lacks, and the series for each."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

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
from backportr.cli.progress import TerminalProgress
from backportr.errors import BackportrError, ExitCode, UsageError
from backportr.output import write_atomically
from backportr.output.safe import terminal
from backportr.resolve.workspace import open_workspace

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from backportr.cves.classify import CveOutcome


class CvesFormat(StrEnum):
    text = "text"
    json = "json"
    csv = "csv"
    markdown = "markdown"
    html = "html"


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
    output_format: Annotated[
        CvesFormat, typer.Option("--format", "-f", help="Output format.")
    ] = CvesFormat.text,
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
    from backportr.cves.records import changed_since, read_records
    from backportr.cves.run import check_records
    from backportr.cves.state import CveState

    if not records.exists():
        raise UsageError(f"--records {records}: no such file or directory")
    if new_only and state is None:
        raise UsageError("--new-only needs --state FILE")
    wanted = {c.upper() for c in cve or ()}
    branch = branch or default_branches(repo, branch_pattern)
    progress = TerminalProgress(enabled=False if quiet else None)
    settings = make_settings(repo, upstream, branch, branch_pattern, index)
    holder = CveState(state) if state is not None else None
    try:
        with open_workspace(settings, progress=progress) as ws:
            files = list(read_records(records, records_ref))
            if not files:
                raise BackportrError(
                    f"--records {records}: no CVE record (CVE-*.json) in it; give the kernel's "
                    "vulns repository or its cve/published directory"
                )
            if since is not None:
                recent = changed_since(records, records_ref, since)
                files = [f for f in files if f.name in recent]
            outcomes, bad = check_records(
                ws, files, wanted, progress, holder, jobs=jobs, settings=settings
            )
        progress.finish()
        every = outcomes
        if holder is not None and new_only:
            outcomes = holder.new(outcomes)
        _write(outcomes, bad, output_format, output, quiet, unknown)
        if holder is not None and (output is not None or not quiet):
            holder.record(every)  # only once the report describing them is safely out
    finally:
        progress.finish()
        if holder is not None:
            holder.close()
    if not quiet:
        for name, error in bad:
            typer.echo(terminal(f"backportr: skipped the record {name}: {error}"), err=True)
    if any(o.outcome == "missing" for o in outcomes):
        raise typer.Exit(int(ExitCode.ATTENTION))


def _write(
    outcomes: Sequence[CveOutcome],
    bad: Sequence[tuple[str, str]],
    output_format: CvesFormat,
    output: Path | None,
    quiet: bool,
    unknown: bool = False,
) -> None:
    import functools

    from backportr.output import cves as render

    renderers: dict[CvesFormat, Callable[[Sequence[CveOutcome], Sequence[tuple[str, str]]], str]]
    renderers = {
        CvesFormat.text: functools.partial(render.render_cves_text, unknown=unknown),
        CvesFormat.json: render.render_cves_json,
        CvesFormat.csv: render.render_cves_csv,
        CvesFormat.markdown: functools.partial(render.render_cves_markdown, unknown=unknown),
        CvesFormat.html: render.render_cves_html,
    }
    text = renderers[output_format](outcomes, bad)
    if output is not None:
        write_atomically(output, text)
    elif not quiet:
        sys.stdout.write(text)
        sys.stdout.flush()  # a full device fails here, before the state says "reported"
