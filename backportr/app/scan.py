"""The scan workflow: what each branch lacks, written as it is settled or at the end, what
was reported remembered (`--state`), marks and `--new-only` honoured, the exit status
decided."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from backportr.app.console import Console, attention_if
from backportr.app.formats import FORMATS, FormatTable, ScanAnswer
from backportr.errors import ExitCode, UsageError
from backportr.settings import Settings

if TYPE_CHECKING:
    from backportr.scan.findings import BranchScan, Policy, ScanFinding
    from backportr.scan.marks import Marks


@dataclass(frozen=True, kw_only=True)
class ScanOptions:
    settings: Settings
    policy: Policy
    marks: Marks
    since: str | None = None
    range_: str | None = None
    jobs: int = 0
    output_format: str = "text"
    output: Path | None = None
    state: Path | None = None
    new_only: bool = False
    commit_url: str | None = None
    formats: FormatTable = field(default=FORMATS)

    def __post_init__(self) -> None:
        if self.since and self.range_:
            raise UsageError("--since and --range exclude each other")
        if self.new_only and self.state is None:
            raise UsageError("--new-only needs --state FILE")


@dataclass(frozen=True)
class ScanOutcome:
    scans: list[BranchScan]

    @property
    def errors(self) -> list[str]:
        return [e for s in self.scans for e in s.errors]

    @property
    def exit_code(self) -> ExitCode:
        if self.errors:
            return ExitCode.BAD_INPUT
        return attention_if(any(s.findings for s in self.scans))


def scan(options: ScanOptions, console: Console) -> ScanOutcome:
    """Scan the branches of `options.settings`; the findings written to `console` (as they
    are settled, where the format streams) or to `options.output`."""
    from backportr.scan.state import ScanState

    holder = ScanState(options.state) if options.state is not None else None
    try:
        reported = holder.reported() if holder is not None and options.new_only else frozenset()
        scans, delivered = _scan_and_write(options, console, reported)
        if holder is not None and delivered:
            holder.record([f for s in scans for f in s.findings])  # once they are out
    finally:
        console.progress.finish()
        if holder is not None:
            holder.close()
    for error in (outcome := ScanOutcome(scans)).errors:  # errors are said even with -q
        console.warn(f"backportr: scan error: {error}")
    return outcome


def _scan_and_write(
    options: ScanOptions, console: Console, reported: frozenset[str]
) -> tuple[list[BranchScan], bool]:
    from backportr.output.scan import RunInfo, ScanStream
    from backportr.scan.run import run_scan, run_scan_parallel

    def held(f: ScanFinding) -> bool:
        return f.key in reported or options.marks.held(f) is not None

    streaming = (
        options.output is None
        and not console.quiet
        and options.formats.streamed("scan", options.output_format)
    )
    stream = ScanStream(options.output_format, _AboveProgress(console), held)
    started, clock = datetime.now(UTC), time.monotonic()
    on_settled = stream.settled if streaming else None
    if options.jobs != 1:
        scans = run_scan_parallel(
            options.settings, options.policy, options.jobs, since=options.since,
            range_=options.range_, progress=console.progress, on_settled=on_settled,
        )  # fmt: skip
    else:
        scans = run_scan(
            options.settings, options.policy, since=options.since, range_=options.range_,
            progress=console.progress, on_settled=on_settled,
        )  # fmt: skip
    console.progress.finish()
    for s in scans:
        options.marks.apply(s)
        if reported:
            s.findings = [f for f in s.findings if f.key not in reported]
    run = RunInfo(
        repository=str(Path(options.settings.repo).resolve()),
        started=started.isoformat(timespec="seconds"),
        seconds=time.monotonic() - clock,
        range=_range(options),
        commit_url=options.commit_url,
    )
    if streaming:
        stream.finish(scans, run)
        return scans, True
    text = options.formats.writer("scan", options.output_format)(ScanAnswer(scans, run))
    return scans, console.deliver(text, options.output)


def _range(options: ScanOptions) -> str | None:
    if options.since:
        return f"--since {options.since}"
    return f"--range {options.range_}" if options.range_ else None


class _AboveProgress:
    """`out` for streamed findings: the progress line is wiped first, so a finding never
    lands in the middle of it."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def write(self, text: str) -> int:
        self.console.progress.finish()
        return self.console.out.write(text)

    def flush(self) -> None:
        self.console.out.flush()
