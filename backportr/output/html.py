"""Render a Report as one self-contained HTML page: the series table, the graph (inline SVG
when Graphviz is installed) and the evidence of each edge. No scripts, no external files:
it reads the same from a mail attachment, a CI artifact or a local file."""

from __future__ import annotations

from collections.abc import Callable

from backportr import __version__
from backportr.model import BranchReport, Report, short
from backportr.output.report import VERDICTS
from backportr.output.safe import xml as escape

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 80em; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; width: 100%; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; } code { font-size: 0.95em; }
.status { display: inline-block; padding: 0.1em 0.6em; border-radius: 0.8em; font-weight: bold; }
.ready, .already-present { background: #c8e6c9; } .conflict { background: #ffcdd2; }
.incomplete { background: #ffe0b2; } .not-needed, .reverted-upstream { background: #e0e0e0; }
.graph { overflow-x: auto; border: 1px solid #ddd; padding: 0.5em; }
.warning { color: #8a4b00; } .muted { color: #777; }
"""


def render_html(report: Report, svg: str | None, commit_url: str | None = None) -> str:
    """The page; with `commit_url` (backportr.commitUrl, `{commit}` the full id), each
    commit id links there."""
    link = _linker(commit_url)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>backportr: {escape(short(report.target))} {escape(report.subject)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>Backport of <code>{escape(short(report.target))}</code> "
        f"(&ldquo;{escape(report.subject)}&rdquo;)</h1>",
        '<table id="matrix"><tr><th>branch</th><th>status</th><th>series</th>'
        "<th>conflicts</th></tr>",
    ]
    for b in report.branches:
        conflicts = sum(1 for m in b.series if m.apply == "conflict")
        parts.append(
            f'<tr><td>{escape(b.branch)}</td><td><span class="status {b.status}">'
            f"{b.status}</span></td><td>{len(b.series)}</td><td>{conflicts}</td></tr>"
        )
    parts.append("</table>")
    for b in report.branches:
        parts += _branch(b, link)
    parts.append('<h2>Graph</h2><div class="graph" id="graph">')
    if svg:
        parts.append(svg[svg.find("<svg") :] if "<svg" in svg else svg)
    else:
        parts.append(
            '<p class="muted">Graphviz (dot) is not installed here, so the graph is '
            "not drawn; the evidence above lists every edge.</p>"
        )
    parts.append(f'</div><p class="muted">backportr {__version__}</p></body></html>')
    return "\n".join(parts) + "\n"


def _linker(commit_url: str | None) -> Callable[[str], str]:
    """`<code>` of a commit's short id, linked through the template when there is one."""

    def link(commit: str) -> str:
        code = f"<code>{escape(short(commit))}</code>"
        if not commit_url:
            return code
        return f'<a href="{escape(commit_url.replace("{commit}", commit))}">{code}</a>'

    return link


def _branch(b: BranchReport, link: Callable[[str], str]) -> list[str]:
    out = [
        f'<h2>{escape(b.branch)} <span class="status {b.status}">{b.status}</span></h2>',
        f"<p>{escape(VERDICTS[b.status])}</p>",
    ]
    if b.series:
        out.append(
            '<table class="series"><tr><th>#</th><th>commit</th><th>subject</th>'
            "<th>role</th><th>apply</th><th>evidence</th></tr>"
        )
        for n, m in enumerate(b.series, 1):
            why = "<br>".join(f"<b>{escape(r.kind)}</b>: {escape(r.detail)}" for r in m.reasons)
            apply = escape(
                m.apply + (f" ({', '.join(m.conflict_files)})" if m.conflict_files else "")
            )
            out.append(
                f"<tr><td>{n}</td><td>{link(m.commit)}</td>"
                f"<td>{escape(m.subject)}</td><td>{m.role}</td><td>{apply}</td>"
                f"<td>{why}</td></tr>"
            )
        out.append("</table>")
    if b.present:
        out.append("<p>Already in the branch:</p><ul>")
        for p in b.present:
            as_ = f" as {link(p.as_commit)}" if p.as_commit and p.as_commit != p.commit else ""
            out.append(
                f"<li>{link(p.commit)} {escape(p.subject)}{as_} ({escape(p.how or '')})</li>"
            )
        out.append("</ul>")
    for s in b.suggestions:
        out.append(
            f"<p>Suggested (judge it): {link(s.commit)} {escape(s.subject)}: "
            f"{escape(s.reason.detail)}</p>"
        )
    if b.alternative:
        out.append(f"<p>Alternative: {escape(b.alternative)}</p>")
    out += [f'<p class="warning">warning: {escape(w)}</p>' for w in b.warnings]
    return out


def sort_and_filter_script(tables: str, rows: str) -> str:
    """The script of a report page: click a header of a `tables` table to sort its `rows`
    by that column (again to reverse), type in `#filter` to show only the rows holding it."""
    return f"""
// Sort by a column (click its header, again to reverse) and filter rows by text.
document.querySelectorAll("{tables}").forEach(function (table) {{
  table.querySelectorAll("th").forEach(function (th, col) {{
    th.addEventListener("click", function () {{
      var rows = Array.from(table.querySelectorAll("{rows}"));
      var dir = th.dataset.dir === "asc" ? -1 : 1;
      th.dataset.dir = dir === 1 ? "asc" : "desc";
      rows.sort(function (a, b) {{
        return dir * a.cells[col].textContent.localeCompare(b.cells[col].textContent);
      }});
      rows.forEach(function (row) {{ table.appendChild(row); }});
    }});
  }});
}});
document.getElementById("filter").addEventListener("input", function (event) {{
  var needle = event.target.value.toLowerCase();
  document.querySelectorAll("{rows}").forEach(function (row) {{
    row.hidden = needle !== "" && row.textContent.toLowerCase().indexOf(needle) < 0;
  }});
}});
"""
