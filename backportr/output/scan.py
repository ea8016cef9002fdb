"""Render scan results: text, JSON (schema 1, docs/scan.md), markdown for mail or a wiki, and
a self-contained HTML page (the run's metadata, a summary per kind and status, a chart, and a
table per branch that a few lines of inline script sort and filter; no framework)."""

from __future__ import annotations

import json
import re
import shlex
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from backportr import __version__
from backportr.model import short
from backportr.output.html import sort_and_filter_script
from backportr.output.jsontext import dumps_indented
from backportr.output.report import member_dict
from backportr.output.safe import directory_name, markdown, terminal
from backportr.output.safe import xml as escape
from backportr.scan.findings import KINDS, BranchScan, ScanFinding
from backportr.scan.marks import mark_line

SCAN_SCHEMA = 1


def duration(seconds: float) -> str:
    """A measured duration as a reader takes it in: `0.043 s` (never `0.0 s`), `12.4 s`,
    `9 min 41 s`."""
    if seconds < 1:
        return f"{seconds:.3f} s"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s"


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
                "findings": [finding_dict(f) for f in s.findings],
                "adapted": [finding_dict(f) for f in s.adapted],
                "marked": list(s.marked),
                "practice": s.practice,
                "untried": s.untried,
                "errors": list(s.errors),
                "scanned": s.scanned,
                "resolved": s.resolved,
                "reused": s.reused,
                "kept": s.cached,
            }
            for s in scans
        ],
    }


def finding_dict(f: ScanFinding) -> dict[str, object]:
    """One finding as JSON (docs/scan.md): the same object in `json` and `jsonl`."""
    return {
        "kind": f.kind,
        "branch": f.branch,
        "commit": f.commit,
        "subject": f.subject,
        "series": [member_dict(m) for m in f.series],
        "status": f.status,
        "why": f.why,
        "evidence": list(f.evidence),
        "witnesses": list(f.witnesses),
        "confidence": f.confidence,
        "adapted": list(f.adapted),
        "tagged": f.tagged,
        "run": run_line(f),
    }


def run_line(f: ScanFinding) -> str:
    """What to run for a finding: the series, as patches for the branch's queue."""
    commit = short(f.commit)
    if f.kind == "reverted-upstream":  # the revert is what to take
        found = re.search(r"reverted upstream by ([0-9a-f]{7,40})", " ".join(f.evidence))
        commit = found.group(1) if found else commit
    # names are data, quoted; the queue one directory (`stable/10.2` -> `queue-stable-10.2`)
    branch, queue = shlex.quote(f.branch), shlex.quote(f"queue-{directory_name(f.branch)}")
    return f"backportr resolve {commit} -b {branch} -f mbox -o {queue}"


def render_finding_line(f: ScanFinding) -> str:
    """A finding as the text output shows it, as soon as it is settled (`--format text`
    streams these lines): kind, commit, subject and status; one line of why; what the
    siblings did; what to run. Each line within 100 columns, but the command to run and
    the line that marks it, which are copied as they are: whole, however long."""
    subject = f.subject if len(f.subject) <= 50 else f.subject[:47] + "..."
    rank = "" if f.confidence == "normal" else f" ({f.confidence})"
    out = [f"  {f.kind:<19} {short(f.commit)} {subject}  [{f.status}]{rank}", f"      why: {f.why}"]
    out += [f"      seen: {_fit_witness(w, 88)}" for w in f.witnesses[:3]]
    if f.series:
        shown = ", ".join(short(m.commit) for m in f.series[:5])
        more = f" and {len(f.series) - 5} more" if len(f.series) > 5 else ""
        out.append(f"      series: {shown}{more}")
    out.append(f"      run: {run_line(f)}")
    out.append(f"      mark: {mark_line(f)}")
    return terminal("\n".join(out))


class Writable(Protocol):
    def write(self, text: str, /) -> int: ...
    def flush(self) -> None: ...


class ScanStream:
    """Findings written as they are settled (`jsonl`: one object a line; `text`: a block a
    finding), the rest once the scan ends: those the branch's practice settled last, the
    adapted backports apart, and one summary object per branch. `hold` says which findings
    are not to be shown (a mark holds them, or `--new-only` reported them before)."""

    def __init__(
        self, output_format: str, stream: Writable, hold: Callable[[ScanFinding], bool]
    ) -> None:
        self.format = output_format
        self.stream = stream
        self.hold = hold
        self.shown: set[str] = set()

    def settled(self, finding: ScanFinding) -> None:
        if finding.key in self.shown or self.hold(finding):
            return
        if self.format != "jsonl" and finding.confidence == "low":
            return  # text shows them apart, after the others (`finish`)
        self.shown.add(finding.key)
        if self.format == "jsonl":
            self.stream.write(json.dumps(finding_dict(finding), sort_keys=True) + "\n")
        else:
            self.stream.write(render_finding_line(finding) + "\n")
        self.stream.flush()

    def finish(self, scans: Sequence[BranchScan], run: RunInfo | None = None) -> None:
        for scan in scans:
            for finding in scan.findings:
                self.settled(finding)
            if self.format != "jsonl":
                apart = [f for f in scan.findings if f.confidence == "low" and not self.hold(f)]
                self.stream.write("".join(line + "\n" for line in _apart_lines(scan, apart)))
        if self.format == "jsonl":
            for scan in scans:
                for finding in scan.adapted:
                    self.stream.write(json.dumps(finding_dict(finding), sort_keys=True) + "\n")
                summary = {
                    "kind": "summary",
                    "branch": scan.branch,
                    "findings": len(scan.findings),
                    "adapted": len(scan.adapted),
                    "marked": len(scan.marked),
                    "practice": scan.practice,
                    "untried": scan.untried,
                    "errors": list(scan.errors),
                    "scanned": scan.scanned,
                    **({"seconds": round(run.seconds, 3)} if run is not None else {}),
                }
                self.stream.write(json.dumps(summary, sort_keys=True) + "\n")
        else:
            self.stream.write(render_scan_text(scans, findings=False))
        self.stream.flush()


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _fit_witness(line: str, width: int) -> str:
    """A witness line within `width`: where it names many branches ("21.11, 22.11, 24.11
    carry X without it"), the first of them and how many more, so that what they did stays
    on the line (JSON lists them all)."""
    if len(line) <= width:
        return line
    names, verb, rest = line.partition(" carry ")
    listed = names.split(", ")
    if not verb or len(listed) < 2:
        return _cut(line, width)
    for shown in range(len(listed) - 1, 0, -1):
        head = f"{', '.join(listed[:shown])} and {len(listed) - shown} more"
        if len(head) + len(verb) + len(rest) <= width:
            return f"{head}{verb}{rest}"
    return _cut(f"{listed[0]} and {len(listed) - 1} more{verb}{rest}", width)


def render_scan_json(scans: Sequence[BranchScan], run: RunInfo | None = None) -> str:
    return dumps_indented(scan_to_dict(scans, run)) + "\n"


def _apart_lines(scan: BranchScan, low: Sequence[ScanFinding]) -> list[str]:
    """The branch's `low` findings, after the others under a line of their own: what every
    sibling went without for months, or the branch itself passed over (docs/scan.md)."""
    if not low:
        return []
    head = f"  {scan.branch}: low confidence, apart ({len(low)}): the stable branches went without"
    return [terminal(head), *(render_finding_line(f) for f in low)]


def render_scan_text(scans: Sequence[BranchScan], *, findings: bool = True) -> str:
    """Each branch: a summary line, its findings (unless streamed already: `findings`),
    those marked, then its adapted backports apart, and its errors."""
    out = []
    for s in scans:
        out.append(
            f"{s.branch}: {len(s.findings)} finding(s), {len(s.adapted)} adapted backport(s) "
            f"apart, {len(s.marked)} marked; {s.scanned} commits looked at, {s.resolved} "
            f"resolved anew, {s.reused} earlier answers still good, {s.cached} as an earlier "
            "scan found"
        )
        if findings:
            out += [render_finding_line(f) for f in s.findings if f.confidence != "low"]
            out += _apart_lines(s, [f for f in s.findings if f.confidence == "low"])
        if s.marked:
            out.append(f"  marked ({len(s.marked)}, not listed until they change)")
        if s.adapted:
            judged = all(f.status != "detected" for f in s.adapted)  # not by a detection
            heading = "adapted, probably on purpose" if judged else "adapted"
            out.append(f"  {heading} ({len(s.adapted)}): {s.practice}")
            for f in s.adapted:
                subject = f.subject if len(f.subject) <= 50 else f.subject[:47] + "..."
                went = ", ".join(short(m.commit) for m in f.series[:3])
                more = f" and {len(f.series) - 3} more" if len(f.series) > 3 else ""
                what = f"went without {went}{more}" if went else "not resolved"
                out.append(f"    {short(f.commit)} {subject}: {what}")
        elif s.untried:
            out.append(f"  {s.practice}")
        out += [f"  error: {e}" for e in s.errors]
    return terminal("\n".join(out) + "\n")


def render_scan_markdown(scans: Sequence[BranchScan]) -> str:
    out = ["# backportr scan", ""]
    for s in scans:
        out += [f"## {s.branch}", ""]
        if not s.findings:
            out += ["No findings.", ""]
            continue
        out += [
            "| kind | commit | subject | status | why | siblings | confidence | series |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for f in (*s.findings, *s.adapted):
            series = " ".join(f"`{short(m.commit)}`" for m in f.series) or "-"
            seen = "<br>".join(markdown(w) for w in f.witnesses) or "-"
            out.append(
                f"| {f.kind} | `{short(f.commit)}` | {markdown(f.subject)} | {f.status} | "
                f"{markdown(' '.join(f.evidence))} | {seen} | {f.confidence} | {series} |"
            )
        out.append("")
        if s.marked:
            out += [f"{len(s.marked)} marked finding(s), not listed until they change.", ""]
        out += [f"- error: {markdown(e)}" for e in s.errors]
    return "\n".join(out).rstrip() + "\n"


_COLOURS = {
    "missing-fix": "#e57373",
    "incomplete-backport": "#ffb74d",
    "reverted-upstream": "#9575cd",
    "dropped": "#90a4ae",
    "adapted-backport": "#cfd8dc",
}


_SCRIPT = sort_and_filter_script("table.findings", "tr.finding")


def _commit_link(commit: str, run: RunInfo | None) -> str:
    code = f"<code>{short(commit)}</code>"
    if run is None or not run.commit_url:
        return code
    return f'<a href="{escape(run.commit_url.replace("{commit}", commit))}">{code}</a>'


def render_scan_html(scans: Sequence[BranchScan], run: RunInfo | None = None) -> str:
    """One self-contained page: the run's metadata, a summary per kind and status, a chart,
    and a table per branch (click a header to sort, type to filter; conflicts highlighted)."""
    counts = Counter(f.kind for s in scans for f in (*s.findings, *s.adapted))
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
            f"<tr><th>took</th><td>{duration(run.seconds)}</td></tr></table>"
        )
    statuses = sorted({f.status for s in scans for f in s.findings})
    parts.append('<h2>Summary</h2><table class="summary"><tr><th>branch</th><th>kind</th>')
    parts += [f"<th>{escape(st)}</th>" for st in statuses]
    parts.append("<th>total</th></tr>")
    for s in scans:
        for kind in KINDS:
            found = [f for f in (*s.findings, *s.adapted) if f.kind == kind]
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
            "<th>status</th><th>evidence</th><th>siblings</th><th>confidence</th>"
            "<th>series</th></tr>"
        )
        for f in (*s.findings, *s.adapted):
            series = " ".join(_commit_link(m.commit, run) for m in f.series)
            css = "finding conflict" if f.status == "conflict" else "finding"
            parts.append(
                f'<tr class="{css}"><td>{f.kind}</td><td>{_commit_link(f.commit, run)}</td>'
                f'<td>{escape(f.subject)}</td><td class="status">{escape(f.status)}</td>'
                f"<td>{'<br>'.join(escape(e) for e in f.evidence)}</td>"
                f"<td>{'<br>'.join(escape(w) for w in f.witnesses)}</td>"
                f"<td>{f.confidence}</td><td>{series}</td></tr>"
            )
        parts.append("</table>")
        parts += [f"<p>error: {escape(e)}</p>" for e in s.errors]
    parts.append(f"<p>backportr {__version__}</p><script>{_SCRIPT}</script></body></html>")
    return "\n".join(parts) + "\n"
