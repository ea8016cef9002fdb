"""`backportr scan`: what each stable branch lacks, for cron and CI (state, policy, formats)."""

from __future__ import annotations

import dataclasses
import sys
import time
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from backportr.cli.app import (  # the app and what every command shares
    BranchOption,
    IndexOption,
    PatternOption,
    RepoOption,
    UpstreamOption,
    app,
    default_branches,
    git_config,
    make_settings,
)
from backportr.cli.progress import TerminalProgress
from backportr.errors import ExitCode, UsageError
from backportr.output import write_atomically
from backportr.settings import SCAN_CONFLICT_DEPTH

if TYPE_CHECKING:
    from backportr.output.scan import RunInfo
    from backportr.scan.findings import BranchScan


class ScanFormat(StrEnum):
    text = "text"
    jsonl = "jsonl"
    json = "json"
    markdown = "markdown"
    html = "html"


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
    output_format: Annotated[
        ScanFormat, typer.Option("--format", "-f", help="Output format.")
    ] = ScanFormat.text,
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
    from backportr.output.scan import RunInfo, ScanStream
    from backportr.scan.findings import Policy
    from backportr.scan.marks import Marks
    from backportr.scan.run import run_scan, run_scan_parallel
    from backportr.scan.state import ScanState

    branch = branch or default_branches(repo, branch_pattern)
    if since and range_:
        raise UsageError("--since and --range exclude each other")
    if new_only and state is None:
        raise UsageError("--new-only needs --state FILE")
    if untagged not in ("include", "separate", "skip"):
        raise UsageError(f"--untagged is include, separate or skip, not {untagged!r}")
    policy = Policy.load(ignore, dropped, untagged)  # type: ignore[arg-type]
    policy = dataclasses.replace(policy, conflict_depth=conflict_depth)
    config = git_config(repo)
    marked = Marks.load(marks or _configured(config.value("backportr.marks")))
    progress = TerminalProgress(enabled=False if quiet else None, heartbeat=60.0)
    settings = make_settings(repo, upstream, branch, branch_pattern, index)
    holder = ScanState(state) if state is not None else None
    reported = holder.reported() if holder is not None and new_only else frozenset()
    streaming = output is None and not quiet and output_format in _STREAMED
    stream = ScanStream(
        output_format.value,
        _ProgressAware(progress),
        lambda f: f.key in reported or marked.held(f) is not None,
    )
    started, clock = datetime.now(UTC), time.monotonic()
    try:
        on_settled = stream.settled if streaming else None
        if jobs != 1:
            scans = run_scan_parallel(
                settings, policy, jobs, since=since, range_=range_, progress=progress,
                on_settled=on_settled,
            )  # fmt: skip
        else:
            scans = run_scan(
                settings, policy, since=since, range_=range_, progress=progress,
                on_settled=on_settled,
            )  # fmt: skip
        progress.finish()
        for s in scans:
            marked.apply(s)
            if reported:
                s.findings = [f for f in s.findings if f.key not in reported]
        run = RunInfo(
            repository=str(Path(repo).resolve()),
            started=started.isoformat(timespec="seconds"),
            seconds=time.monotonic() - clock,
            range=f"--since {since}" if since else f"--range {range_}" if range_ else None,
            commit_url=config.commit_url(),
        )
        if streaming:
            stream.finish(scans, run)
        else:
            _write_report(scans, run, output_format, output, quiet)
        if holder is not None and (output is not None or not quiet):
            holder.record([f for s in scans for f in s.findings])  # once they are out
    finally:
        progress.finish()
        if holder is not None:
            holder.close()
    _exit_for(scans)


_STREAMED = (ScanFormat.text, ScanFormat.jsonl)  # written as the findings are settled


def _configured(value: str | None) -> Path | None:
    return Path(value).expanduser() if value else None


class _ProgressAware:
    """stdout for streamed findings: the progress line on stderr is cleared first, so a
    finding never lands in the middle of it."""

    def __init__(self, progress: TerminalProgress) -> None:
        self.progress = progress

    def write(self, text: str) -> int:
        self.progress.finish()
        return sys.stdout.write(text)

    def flush(self) -> None:
        sys.stdout.flush()


def _write_report(
    scans: list[BranchScan],
    run: RunInfo,
    output_format: ScanFormat,
    output: Path | None,
    quiet: bool,
) -> None:
    """The whole report at once: a file (-o, atomically) or stdout."""
    import io

    from backportr.output.scan import (
        ScanStream,
        render_scan_html,
        render_scan_json,
        render_scan_markdown,
        render_scan_text,
    )

    if output_format is ScanFormat.json:
        text = render_scan_json(scans, run)
    elif output_format is ScanFormat.html:
        text = render_scan_html(scans, run)
    elif output_format is ScanFormat.markdown:
        text = render_scan_markdown(scans)
    elif output_format is ScanFormat.jsonl:
        buffer = io.StringIO()
        ScanStream("jsonl", buffer, lambda f: False).finish(scans, run)
        text = buffer.getvalue()
    else:
        text = render_scan_text(scans)
    if output is not None:
        write_atomically(output, text)
    elif not quiet:
        sys.stdout.write(text)
        sys.stdout.flush()  # a full device fails here, before the state says "reported"


def _exit_for(scans: list[BranchScan]) -> None:
    errors = [e for s in scans for e in s.errors]
    for error in errors:  # errors are said even with -q
        typer.echo(f"backportr: scan error: {error}", err=True)
    if errors:
        raise typer.Exit(int(ExitCode.BAD_INPUT))
    if any(s.findings for s in scans):
        raise typer.Exit(int(ExitCode.ATTENTION))
