"""The cves workflow: which published CVEs each branch lacks, classified, written, what was
reported remembered (`--state`), the exit status decided (4: a CVE is missing)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from backportr.app.console import Console, attention_if
from backportr.app.formats import FORMATS, CvesAnswer, FormatTable
from backportr.errors import BackportrError, ExitCode, UsageError
from backportr.resolve.workspace import open_workspace
from backportr.settings import Settings

if TYPE_CHECKING:
    from backportr.cves.classify import CveOutcome
    from backportr.cves.state import CveState


@dataclass(frozen=True, kw_only=True)
class CvesOptions:
    settings: Settings
    records: Path
    records_ref: str | None = None
    cves: frozenset[str] = frozenset()  # only these (upper case); empty: every one
    since: str | None = None
    jobs: int = 1
    output_format: str = "text"
    output: Path | None = None
    state: Path | None = None
    new_only: bool = False
    unknown: bool = False  # text, markdown: list the unknown outcomes too
    formats: FormatTable = field(default=FORMATS)

    def __post_init__(self) -> None:
        if not self.records.exists():
            raise UsageError(f"--records {self.records}: no such file or directory")
        if self.new_only and self.state is None:
            raise UsageError("--new-only needs --state FILE")


@dataclass(frozen=True)
class CvesOutcome:
    outcomes: list[CveOutcome]  # those reported (the new ones with --new-only)
    bad: list[tuple[str, str]]  # records skipped, and why

    @property
    def exit_code(self) -> ExitCode:
        return attention_if(any(o.outcome == "missing" for o in self.outcomes))


def cves(options: CvesOptions, console: Console) -> CvesOutcome:
    from backportr.cves.state import CveState

    holder = CveState(options.state) if options.state is not None else None
    try:
        every, bad = _classify(options, console, holder)
        console.progress.finish()
        outcomes = holder.new(every) if holder is not None and options.new_only else every
        answer = CvesAnswer(outcomes, bad, unknown=options.unknown)
        delivered = console.deliver(
            options.formats.writer("cves", options.output_format)(answer), options.output
        )
        if holder is not None and delivered:
            holder.record(every)  # only once the report describing them is safely out
    finally:
        console.progress.finish()
        if holder is not None:
            holder.close()
    for name, error in bad:
        console.say(f"backportr: skipped the record {name}: {error}")
    return CvesOutcome(list(outcomes), list(bad))


def _classify(
    options: CvesOptions, console: Console, holder: CveState | None
) -> tuple[list[CveOutcome], list[tuple[str, str]]]:
    from backportr.cves.records import changed_since, read_records
    from backportr.cves.run import check_records

    with open_workspace(options.settings, progress=console.progress) as ws:
        files = list(read_records(options.records, options.records_ref))
        if not files:
            raise BackportrError(
                f"--records {options.records}: no CVE record (CVE-*.json) in it; give the "
                "kernel's vulns repository or its cve/published directory"
            )
        if options.since is not None:
            recent = changed_since(options.records, options.records_ref, options.since)
            files = [f for f in files if f.name in recent]
        outcomes, bad = check_records(
            ws,
            files,
            set(options.cves),
            console.progress,
            holder,
            jobs=options.jobs,
            settings=options.settings,
        )
    return list(outcomes), list(bad)
