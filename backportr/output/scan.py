"""Render scan results: text, JSON (schema 1, docs/scan.md), markdown for mail or a wiki, and
a self-contained HTML page (a table per branch and a chart of findings by kind, no scripts)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from html import escape

from backportr import __version__
from backportr.scan import KINDS, BranchScan, Finding

SCAN_SCHEMA = 1


def scan_to_dict(scans: Sequence[BranchScan]) -> dict[str, object]:
    return {
        "schema": SCAN_SCHEMA,
        "branches": [
            {
                "branch": s.branch,
                "findings": [_finding(f) for f in s.findings],
                "errors": list(s.errors),
                "scanned": s.scanned,
                "resolved": s.resolved,
                "reused": s.reused,
            }
            for s in scans
        ],
    }


def _finding(f: Finding) -> dict[str, object]:
    return {
        "kind": f.kind,
        "commit": f.commit,
        "subject": f.subject,
        "series": [
            {
                "commit": m.commit,
                "subject": m.subject,
                "role": m.role,
                "apply": m.apply,
                "reasons": [
                    {"kind": r.kind, "detail": r.detail, "related": r.related} for r in m.reasons
                ],
            }
            for m in f.series
        ],
        "status": f.status,
        "evidence": list(f.evidence),
        "tagged": f.tagged,
    }


def render_scan_json(scans: Sequence[BranchScan]) -> str:
    return json.dumps(scan_to_dict(scans), indent=2) + "\n"


def render_scan_text(scans: Sequence[BranchScan]) -> str:
    out = []
    for s in scans:
        out.append(
            f"{s.branch}: {len(s.findings)} finding(s), {s.scanned} commits looked at, "
            f"{s.resolved} resolved anew, {s.reused} answers of an earlier run still good"
        )
        for f in s.findings:
            out.append(f"  {f.kind:<20} {f.commit[:12]} {f.subject}  [{f.status}]")
            out += [f"      {e}" for e in f.evidence]
            if f.series:
                out.append("      series: " + ", ".join(m.commit[:12] for m in f.series))
        out += [f"  error: {e}" for e in s.errors]
    return "\n".join(out) + "\n"


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
                f"| {f.kind} | `{f.commit[:12]}` | {f.subject.replace('|', '/')} | "
                f"{f.status} | {series} |"
            )
        out.append("")
        out += [f"- error: {e}" for e in s.errors]
    return "\n".join(out).rstrip() + "\n"


_COLOURS = {
    "missing-fix": "#e57373",
    "incomplete-backport": "#ffb74d",
    "reverted-upstream": "#9575cd",
    "dropped": "#90a4ae",
}


def render_scan_html(scans: Sequence[BranchScan]) -> str:
    counts = Counter(f.kind for s in scans for f in s.findings)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>backportr scan</title><style>",
        "body{font-family:system-ui,sans-serif;margin:2em;max-width:80em;color:#222}",
        "table{border-collapse:collapse;width:100%;margin:.5em 0 1.5em}",
        "th,td{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}",
        "th{background:#f4f4f4} code{font-size:.95em}",
        "</style></head><body><h1>backportr scan</h1>",
        '<h2>Findings by kind</h2><svg id="chart" width="520" height="'
        f'{30 * len(KINDS) + 10}" role="img" aria-label="findings by kind">',
    ]
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
    for s in scans:
        parts.append(f"<h2>{escape(s.branch)}</h2>")
        parts.append(
            '<table class="findings"><tr><th>kind</th><th>commit</th><th>subject</th>'
            "<th>status</th><th>evidence</th><th>series</th></tr>"
        )
        for f in s.findings:
            series = " ".join(f"<code>{m.commit[:12]}</code>" for m in f.series)
            parts.append(
                f"<tr><td>{f.kind}</td><td><code>{f.commit[:12]}</code></td>"
                f"<td>{escape(f.subject)}</td><td>{escape(f.status)}</td>"
                f"<td>{'<br>'.join(escape(e) for e in f.evidence)}</td>"
                f"<td>{series}</td></tr>"
            )
        parts.append("</table>")
        parts += [f"<p>error: {escape(e)}</p>" for e in s.errors]
    parts.append(f"<p>backportr {__version__}</p></body></html>")
    return "\n".join(parts) + "\n"
