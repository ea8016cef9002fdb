"""The output formats: one table, name -> what it is (extension, media type) and, for each
command that offers it, the function that writes that command's answer in it.

A command's `--format` choices are the names this table offers it; a workflow asks the table
for the writer. Adding a format is one entry (`FORMATS.add`) and its functions."""

from __future__ import annotations

import io
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from backportr.cves.classify import CveOutcome
    from backportr.mail.check import MailCheck
    from backportr.model import Report, StatusResult
    from backportr.output.patches import Step
    from backportr.output.scan import RunInfo
    from backportr.scan.findings import BranchScan

Writer = Callable[[Any], str]
"""Writes one command's answer (its `...Answer` below) as text."""

PATCHES = "patches"
"""The writer mark of a format written as patch files, not as one text (resolve's mbox)."""


@dataclass(frozen=True)
class OutputFormat:
    name: str
    extension: str
    mime: str
    writers: Mapping[str, Writer | str] = field(default_factory=dict)
    """command -> its writer (or `PATCHES`); the commands that offer this format."""
    streamed: frozenset[str] = frozenset()
    """The commands that write it as the answers are settled (`scan -f jsonl`)."""


class FormatTable:
    """The formats by name, in the order they were added (a command's default first)."""

    def __init__(self, formats: Sequence[OutputFormat] = ()) -> None:
        self._by_name: dict[str, OutputFormat] = {}
        for f in formats:
            self.add(f)

    def add(self, output_format: OutputFormat) -> None:
        if output_format.name in self._by_name:
            raise ValueError(f"the format {output_format.name!r} is in the table already")
        self._by_name[output_format.name] = output_format

    def remove(self, name: str) -> None:
        del self._by_name[name]

    @contextmanager
    def added(self, output_format: OutputFormat) -> Iterator[None]:
        """The table with one more format for a while (a plug-in's, a test's)."""
        self.add(output_format)
        try:
            yield
        finally:
            self.remove(output_format.name)

    def offered(self, command: str) -> list[str]:
        return [name for name, f in self._by_name.items() if command in f.writers]

    def __getitem__(self, name: str) -> OutputFormat:
        return self._by_name[name]

    def writer(self, command: str, name: str) -> Writer:
        written = self._by_name[name].writers[command]
        if isinstance(written, str):
            raise ValueError(f"{command} -f {name} is written as {written}, not as one text")
        return written

    def writes_patches(self, command: str, name: str) -> bool:
        return self._by_name[name].writers.get(command) == PATCHES

    def streamed(self, command: str, name: str) -> bool:
        return command in self._by_name[name].streamed


# The answers the writers take, one type a command.


@dataclass(frozen=True)
class ResolveAnswer:
    report: Report
    steps: dict[str, list[Step]] | None = None  # the script's, per branch
    refs: dict[str, str] | None = None  # each branch's full ref name
    commit_url: str | None = None  # a link template with {commit}


@dataclass(frozen=True)
class ScanAnswer:
    scans: Sequence[BranchScan]
    run: RunInfo


@dataclass(frozen=True)
class CvesAnswer:
    outcomes: Sequence[CveOutcome]
    bad: Sequence[tuple[str, str]]  # (record, why it was skipped)
    unknown: bool = False  # list the outcomes nobody could decide


@dataclass(frozen=True)
class CheckAnswer:
    check: MailCheck
    reply: str | None = None  # the reply mail, composed, when one is written


# resolve


def _resolve_text(a: ResolveAnswer) -> str:
    from backportr.output.report import render_text

    return render_text(a.report)


def _resolve_json(a: ResolveAnswer) -> str:
    from backportr.output.report import render_json

    return render_json(a.report)


def _resolve_script(a: ResolveAnswer) -> str:
    from backportr.output.report import render_script

    return render_script(a.report, a.steps, a.refs)


def _resolve_dot(a: ResolveAnswer) -> str:
    from backportr.output.graph import render_dot

    return render_dot(a.report)


def _resolve_svg(a: ResolveAnswer) -> str:
    from backportr.output.graph import render_svg

    return render_svg(a.report)


def _resolve_html(a: ResolveAnswer) -> str:
    from backportr.output.graph import render_svg
    from backportr.output.html import render_html

    svg = render_svg(a.report) if shutil.which("dot") else None
    return render_html(a.report, svg, a.commit_url)


# status


def _status_text(results: Sequence[StatusResult]) -> str:
    from backportr.output.status import render_status_text

    return render_status_text(results)


def _status_json(results: Sequence[StatusResult]) -> str:
    from backportr.output.status import render_status_json

    return render_status_json(results)


# scan


def _scan_text(a: ScanAnswer) -> str:
    from backportr.output.scan import render_scan_text

    return render_scan_text(a.scans)


def _scan_json(a: ScanAnswer) -> str:
    from backportr.output.scan import render_scan_json

    return render_scan_json(a.scans, a.run)


def _scan_jsonl(a: ScanAnswer) -> str:
    from backportr.output.scan import ScanStream

    buffer = io.StringIO()
    ScanStream("jsonl", buffer, lambda f: False).finish(a.scans, a.run)
    return buffer.getvalue()


def _scan_markdown(a: ScanAnswer) -> str:
    from backportr.output.scan import render_scan_markdown

    return render_scan_markdown(a.scans)


def _scan_html(a: ScanAnswer) -> str:
    from backportr.output.scan import render_scan_html

    return render_scan_html(a.scans, a.run)


# cves


def _cves_text(a: CvesAnswer) -> str:
    from backportr.output.cves import render_cves_text

    return render_cves_text(a.outcomes, a.bad, unknown=a.unknown)


def _cves_json(a: CvesAnswer) -> str:
    from backportr.output.cves import render_cves_json

    return render_cves_json(a.outcomes, a.bad)


def _cves_csv(a: CvesAnswer) -> str:
    from backportr.output.cves import render_cves_csv

    return render_cves_csv(a.outcomes, a.bad)


def _cves_markdown(a: CvesAnswer) -> str:
    from backportr.output.cves import render_cves_markdown

    return render_cves_markdown(a.outcomes, a.bad, unknown=a.unknown)


def _cves_html(a: CvesAnswer) -> str:
    from backportr.output.cves import render_cves_html

    return render_cves_html(a.outcomes, a.bad)


# mail check


def _check_text(a: CheckAnswer) -> str:
    from backportr.mail.reply import render_check_text

    return render_check_text(a.check)


def _check_json(a: CheckAnswer) -> str:
    from backportr.mail.reply import render_check_json

    return render_check_json(a.check)


def _check_reply(a: CheckAnswer) -> str:
    return a.reply or ""


FORMATS = FormatTable(
    [
        OutputFormat(
            "text",
            ".txt",
            "text/plain",
            {
                "status": _status_text,
                "resolve": _resolve_text,
                "scan": _scan_text,
                "cves": _cves_text,
                "mail check": _check_text,
            },
            streamed=frozenset({"scan"}),
        ),
        OutputFormat(
            "jsonl", ".jsonl", "application/jsonl", {"scan": _scan_jsonl}, frozenset({"scan"})
        ),
        OutputFormat(
            "json",
            ".json",
            "application/json",
            {
                "status": _status_json,
                "resolve": _resolve_json,
                "scan": _scan_json,
                "cves": _cves_json,
                "mail check": _check_json,
            },
        ),
        OutputFormat("csv", ".csv", "text/csv", {"cves": _cves_csv}),
        OutputFormat("script", ".sh", "text/x-shellscript", {"resolve": _resolve_script}),
        OutputFormat("mbox", ".mbox", "application/mbox", {"resolve": PATCHES}),
        OutputFormat("reply", ".eml", "message/rfc822", {"mail check": _check_reply}),
        OutputFormat(
            "markdown",
            ".md",
            "text/markdown",
            {"scan": _scan_markdown, "cves": _cves_markdown},
        ),
        OutputFormat("dot", ".dot", "text/vnd.graphviz", {"resolve": _resolve_dot}),
        OutputFormat("svg", ".svg", "image/svg+xml", {"resolve": _resolve_svg}),
        OutputFormat(
            "html",
            ".html",
            "text/html",
            {"resolve": _resolve_html, "scan": _scan_html, "cves": _cves_html},
        ),
    ]
)
