"""Render `backportr cves`: text (a line per CVE and branch, the series of what is missing),
JSON (schema 1, docs/cves.md), CSV for spreadsheets and Markdown for a wiki or a mail."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from backportr import __version__
from backportr.cves.classify import OUTCOMES, CveOutcome
from backportr.model import short
from backportr.output.html import sort_and_filter_script
from backportr.output.jsontext import dumps_indented
from backportr.output.report import member_dict
from backportr.output.safe import markdown, terminal
from backportr.output.safe import xml as escape

CVES_SCHEMA = 1


def _branches(outcomes: Sequence[CveOutcome]) -> dict[str, list[CveOutcome]]:
    out: dict[str, list[CveOutcome]] = {}
    for one in outcomes:
        out.setdefault(one.branch, []).append(one)
    return out


def _order(found: list[CveOutcome]) -> list[CveOutcome]:
    """Missing first (what to do), then unknown, fixed, not affected; by CVE id within."""
    return sorted(found, key=lambda o: (OUTCOMES.index(o.outcome), o.cve))


def cves_to_dict(
    outcomes: Sequence[CveOutcome], bad: Sequence[tuple[str, str]]
) -> dict[str, object]:
    return {
        "schema": CVES_SCHEMA,
        "unreadable": [{"record": name, "error": error} for name, error in bad],
        "branches": [
            {
                "branch": branch,
                "counts": {k: sum(1 for o in found if o.outcome == k) for k in OUTCOMES},
                "cves": [_outcome(o) for o in _order(found)],
            }
            for branch, found in _branches(outcomes).items()
        ],
    }


def _outcome(o: CveOutcome) -> dict[str, object]:
    return {
        "cve": o.cve,
        "title": o.title,
        "outcome": o.outcome,
        "how": o.how,
        "fix": o.fix,
        "as": o.as_commit,
        "status": o.report.status if o.report else None,
        "series": [member_dict(m) for m in o.report.series] if o.report else [],
    }


def render_cves_json(outcomes: Sequence[CveOutcome], bad: Sequence[tuple[str, str]]) -> str:
    return dumps_indented(cves_to_dict(outcomes, bad)) + "\n"


def _listed(found: list[CveOutcome], unknown: bool) -> list[CveOutcome]:
    """What a report lists: every outcome but `unknown` (counted only) unless asked for."""
    return [o for o in _order(found) if unknown or o.outcome != "unknown"]


def _hidden(found: list[CveOutcome], unknown: bool) -> str:
    count = 0 if unknown else sum(1 for o in found if o.outcome == "unknown")
    return f" ({count} unknown not listed: --unknown lists them)" if count else ""


def render_cves_text(
    outcomes: Sequence[CveOutcome], bad: Sequence[tuple[str, str]], *, unknown: bool = False
) -> str:
    out: list[str] = []
    for branch, found in _branches(outcomes).items():
        counts = ", ".join(f"{sum(1 for o in found if o.outcome == k)} {k}" for k in OUTCOMES)
        out.append(f"{branch}: {counts}{_hidden(found, unknown)}")
        for o in _listed(found, unknown):
            status = f" [{o.report.status}]" if o.report else ""
            out.append(f"  {o.outcome:<13} {o.cve:<16} {o.title}{status}")
            out.append(f"      {o.how}")
            if o.report and o.report.series:
                out.append("      series: " + ", ".join(short(m.commit) for m in o.report.series))
        out.append("")
    out += [f"unreadable record {name}: {error}" for name, error in bad]
    return terminal("\n".join(out).rstrip("\n") + "\n")


def render_cves_csv(outcomes: Sequence[CveOutcome], bad: Sequence[tuple[str, str]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["branch", "cve", "outcome", "status", "fix", "as", "series", "title", "how"])
    for o in outcomes:
        series = " ".join(m.commit for m in o.report.series) if o.report else ""
        status = o.report.status if o.report else ""
        row = [o.branch, o.cve, o.outcome, status, o.fix or "", o.as_commit or "", series]
        writer.writerow([_cell(cell) for cell in (*row, o.title, o.how)])
    return buffer.getvalue()


def _cell(text: str) -> str:
    """A spreadsheet never takes a cell from data as a formula: one that begins with `=`,
    `+`, `-`, `@`, a tab or a carriage return (OWASP's list) gets a leading `'`."""
    first = text[:1]
    text = terminal(text.replace("\n", " "))
    return f"'{text}" if first in ("=", "+", "-", "@", "\t", "\r") else text


def render_cves_markdown(
    outcomes: Sequence[CveOutcome], bad: Sequence[tuple[str, str]], *, unknown: bool = False
) -> str:
    out = ["# backportr cves", ""]
    for branch, found in _branches(outcomes).items():
        out += [f"## {markdown(branch)}", ""]
        if hidden := _hidden(found, unknown):
            out += [hidden.strip(" ()") + ".", ""]
        out += ["| CVE | outcome | status | title | series |", "|---|---|---|---|---|"]
        for o in _listed(found, unknown):
            series = " ".join(f"`{short(m.commit)}`" for m in o.report.series) if o.report else "-"
            status = o.report.status if o.report else "-"
            out.append(f"| {o.cve} | {o.outcome} | {status} | {markdown(o.title)} | {series} |")
        out.append("")
    if bad:
        out += ["## Unreadable records", ""]
        out += [f"- {markdown(name)}: {markdown(error)}" for name, error in bad]
    return "\n".join(out).rstrip("\n") + "\n"


_SCRIPT = sort_and_filter_script("table.cves", "tr.cve")


def render_cves_html(outcomes: Sequence[CveOutcome], bad: Sequence[tuple[str, str]]) -> str:
    """One self-contained page: counts per branch and outcome, then one row per CVE and
    branch (click a header to sort, type to filter), the series behind a click."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>backportr cves</title><style>',
        "body{font-family:system-ui,sans-serif;margin:2em;max-width:90em;color:#222}",
        "table{border-collapse:collapse;margin:.5em 0 1.5em}",
        "th,td{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}",
        "th{background:#f4f4f4} table.cves th{cursor:pointer} tr.missing td{background:#fdecea}",
        "</style></head><body><h1>backportr cves</h1>",
        '<table class="summary"><tr><th>branch</th>',
        *(f"<th>{k}</th>" for k in OUTCOMES),
        "</tr>",
    ]
    for branch, found in _branches(outcomes).items():
        cells = "".join(f"<td>{sum(1 for o in found if o.outcome == k)}</td>" for k in OUTCOMES)
        parts.append(f"<tr><td>{escape(branch)}</td>{cells}</tr>")
    parts.append('</table><p><label>Filter: <input id="filter" type="search"></label></p>')
    parts.append(
        '<table class="cves"><tr><th>CVE</th><th>branch</th><th>outcome</th><th>status</th>'
        "<th>title</th><th>how</th><th>series</th></tr>"
    )
    for o in sorted(outcomes, key=lambda o: (OUTCOMES.index(o.outcome), o.cve, o.branch)):
        series = ""
        if o.report and o.report.series:
            items = "".join(
                f"<li><code>{short(m.commit)}</code> {escape(m.subject)} ({m.role}, {m.apply})</li>"
                for m in o.report.series
            )
            series = f"<details><summary>{len(o.report.series)}</summary><ol>{items}</ol></details>"
        status = escape(o.report.status) if o.report else ""
        parts.append(
            f'<tr class="cve {o.outcome}"><td>{escape(o.cve)}</td><td>{escape(o.branch)}</td>'
            f"<td>{o.outcome}</td><td>{status}</td><td>{escape(o.title)}</td>"
            f"<td>{escape(o.how)}</td><td>{series}</td></tr>"
        )
    parts.append("</table>")
    parts += [f"<p>unreadable record {escape(n)}: {escape(e)}</p>" for n, e in bad]
    parts.append(f"<p>backportr {__version__}</p><script>{_SCRIPT}</script></body></html>")
    return "\n".join(parts) + "\n"
