"""Render scan results: text, JSON (schema 1, docs/scan.md), markdown for mail or a wiki, and
a self-contained HTML page (the run's metadata, a summary per kind and status, a chart, and a
table per branch that a few lines of inline script sort and filter; no framework)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from backportr import __version__
from backportr.output.html import sort_and_filter_script
from backportr.output.jsontext import dumps_indented
from backportr.output.report import member_dict
from backportr.output.safe import markdown, terminal
from backportr.output.safe import xml as escape
from backportr.scan.findings import KINDS, BranchScan, ScanFinding

SCAN_SCHEMA = 1


@dataclass(frozen=True, slots=True)
class RunInfo:
    """What a report was computed from: for the reader months later, and for a CI log."""

    repository: str
    started: str  # ISO 8601, UTC
    seconds: float
    range: str | None = None  # --since / --range as given
    commit_url: str | None = None  # a link template with {commit}, from settings

    def to_dict(self, scans: Sequence[BranchScan]) -> dict[str, object]:
        first = scans[0] if scans else None
        return {
            "repository": self.repository,
            "upstream": {
                "name": first.upstream if first else None,
                "tip": first.upstream_tip if first else None,
            },
            "branches": [{"name": s.branch, "tip": s.tip} for s in scans],
            "range": self.range,
            "started": self.started,
            "seconds": round(self.seconds, 3),
            "backportr": __version__,
        }


def scan_to_dict(scans: Sequence[BranchScan], run: RunInfo | None = None) -> dict[str, object]:
    return {
        "schema": SCAN_SCHEMA,
        **({"run": run.to_dict(scans)} if run is not None else {}),
        "branches": [
            {
                "branch": s.branch,
                "findings": [_finding(f) for f in s.findings],
                "errors": list(s.errors),
                "scanned": s.scanned,
                "resolved": s.resolved,
                "reused": s.reused,
                "kept": s.kept,
            }
            for s in scans
        ],
    }


def _finding(f: ScanFinding) -> dict[str, object]:
    return {
        "kind": f.kind,
        "commit": f.commit,
        "subject": f.subject,
        "series": [member_dict(m) for m in f.series],
        "status": f.status,
        "evidence": list(f.evidence),
        "tagged": f.tagged,
    }


def render_scan_json(scans: Sequence[BranchScan], run: RunInfo | None = None) -> str:
    return dumps_indented(scan_to_dict(scans, run)) + "\n"


def render_scan_text(scans: Sequence[BranchScan]) -> str:
    out = []
    for s in scans:
        out.append(
            f"{s.branch}: {len(s.findings)} finding(s), {s.scanned} commits looked at, "
            f"{s.resolved} resolved anew, {s.reused} answers of an earlier run still good, "
            f"{s.kept} answered as an earlier scan found (nothing moved)"
        )
        for f in s.findings:
            out.append(f"  {f.kind:<20} {f.commit[:12]} {f.subject}  [{f.status}]")
            out += [f"      {e}" for e in f.evidence]
            if f.series:
                out.append("      series: " + ", ".join(m.commit[:12] for m in f.series))
        out += [f"  error: {e}" for e in s.errors]
    return terminal("\n".join(out) + "\n")


def render_scan_markdown(scans: Sequence[BranchScan]) -> str:
    out = ["# backportr scan", ""]
    for s in scans:
        out += [f"## {s.branch}", ""]
        if not s.findings:
            out += ["No findings.", ""]
            continue
        out += ["| kind | commit | subject | status | series |", "|---|---|---|---|---|"]
        for f in s.findings:
            series = " ".join(f"`{m.commit[:12]}`" for m in f.series) or "-"
            out.append(
                f"| {f.kind} | `{f.commit[:12]}` | {markdown(f.subject)} | {f.status} | {series} |"
            )
        out.append("")
        out += [f"- error: {markdown(e)}" for e in s.errors]
    return "\n".join(out).rstrip() + "\n"


_COLOURS = {
    "missing-fix": "#e57373",
    "incomplete-backport": "#ffb74d",
    "reverted-upstream": "#9575cd",
    "dropped": "#90a4ae",
}


_SCRIPT = sort_and_filter_script("table.findings", "tr.finding")


def _commit_link(commit: str, run: RunInfo | None) -> str:
    code = f"<code>{commit[:12]}</code>"
    if run is None or not run.commit_url:
        return code
    return f'<a href="{escape(run.commit_url.replace("{commit}", commit))}">{code}</a>'


def render_scan_html(scans: Sequence[BranchScan], run: RunInfo | None = None) -> str:
    """One self-contained page: the run's metadata, a summary per kind and status, a chart,
    and a table per branch (click a header to sort, type to filter; conflicts highlighted)."""
    counts = Counter(f.kind for s in scans for f in s.findings)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>backportr scan</title><style>",
        "body{font-family:system-ui,sans-serif;margin:2em;max-width:80em;color:#222}",
        "table{border-collapse:collapse;width:100%;margin:.5em 0 1.5em}",
        "th,td{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}",
        "th{background:#f4f4f4} table.findings th{cursor:pointer} code{font-size:.95em}",
        "tr.conflict td{background:#fdecea} tr.conflict td.status{color:#b71c1c;font-weight:600}",
        "table.summary,table.run{width:auto}",
        "</style></head><body><h1>backportr scan</h1>",
    ]
    if run is not None:
        info = run.to_dict(scans)
        upstream = info["upstream"]
        assert isinstance(upstream, dict)
        tips = "".join(
            f"<tr><th>{escape(s.branch)}</th><td>{_commit_link(s.tip, run)}</td></tr>"
            for s in scans
        )
        parts.append(
            '<table class="run">'
            f"<tr><th>repository</th><td>{escape(run.repository)}</td></tr>"
            f"<tr><th>upstream {escape(str(upstream['name']))}</th>"
            f"<td>{_commit_link(str(upstream['tip'] or ''), run)}</td></tr>{tips}"
            f"<tr><th>range</th><td>{escape(run.range or 'every commit after the fork')}</td></tr>"
            f"<tr><th>started</th><td>{escape(run.started)}</td></tr>"
            f"<tr><th>took</th><td>{run.seconds:.1f} s</td></tr></table>"
        )
    statuses = sorted({f.status for s in scans for f in s.findings})
    parts.append('<h2>Summary</h2><table class="summary"><tr><th>branch</th><th>kind</th>')
    parts += [f"<th>{escape(st)}</th>" for st in statuses]
    parts.append("<th>total</th></tr>")
    for s in scans:
        for kind in KINDS:
            found = [f for f in s.findings if f.kind == kind]
            if not found:
                continue
            by_status = Counter(f.status for f in found)
            cells = "".join(f"<td>{by_status.get(st, 0)}</td>" for st in statuses)
            parts.append(
                f"<tr><td>{escape(s.branch)}</td><td>{kind}</td>{cells}<td>{len(found)}</td></tr>"
            )
    parts.append("</table>")
    parts.append(
        '<h2>Findings by kind</h2><svg id="chart" width="520" height="'
        f'{30 * len(KINDS) + 10}" role="img" aria-label="findings by kind">'
    )
    top = max(counts.values(), default=1) or 1
    for row, kind in enumerate(KINDS):
        width = int(300 * counts.get(kind, 0) / top)
        y = 10 + 30 * row
        parts.append(
            f'<text x="0" y="{y + 15}" font-size="13">{kind}</text>'
            f'<rect x="160" y="{y}" width="{width}" height="20" '
            f'fill="{_COLOURS[kind]}"></rect>'
            f'<text x="{165 + width}" y="{y + 15}" font-size="13">'
            f"{counts.get(kind, 0)}</text>"
        )
    parts.append("</svg>")
    parts.append('<p><label>Filter: <input id="filter" type="search"></label></p>')
    for s in scans:
        parts.append(f"<h2>{escape(s.branch)}</h2>")
        parts.append(
            '<table class="findings"><tr><th>kind</th><th>commit</th><th>subject</th>'
            "<th>status</th><th>evidence</th><th>series</th></tr>"
        )
        for f in s.findings:
            series = " ".join(_commit_link(m.commit, run) for m in f.series)
            css = "finding conflict" if f.status == "conflict" else "finding"
            parts.append(
                f'<tr class="{css}"><td>{f.kind}</td><td>{_commit_link(f.commit, run)}</td>'
                f'<td>{escape(f.subject)}</td><td class="status">{escape(f.status)}</td>'
                f"<td>{'<br>'.join(escape(e) for e in f.evidence)}</td>"
                f"<td>{series}</td></tr>"
            )
        parts.append("</table>")
        parts += [f"<p>error: {escape(e)}</p>" for e in s.errors]
    parts.append(f"<p>backportr {__version__}</p><script>{_SCRIPT}</script></body></html>")
    return "\n".join(parts) + "\n"
