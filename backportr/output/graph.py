"""Render a Report's dependency graph: Graphviz dot (pure text) and SVG (through `dot`).

Nodes are coloured by role (target, prerequisite, follow-up, sibling) and presence (already
in the branch: grey, dashed). The graph reads top to bottom in the order the series is
applied: every arrow goes from a commit to one that comes after it because of it (a
prerequisite to what needs it, a fixed commit to its follow-up) and is labelled with the
evidence (the symbol, the conflicting file, `Fixes:`); a legend says so.
"""

from __future__ import annotations

import re
import shutil

from backportr.errors import BackportrError
from backportr.infra import process
from backportr.model import BranchReport, Report, short
from backportr.output.safe import terminal

ROLE_COLOURS = {
    "target": "#f6c85f",
    "prerequisite": "#9dd9f3",
    "follow-up": "#a5d6a7",
    "sibling": "#d7c4e8",
}
PRESENT_COLOUR = "#e0e0e0"


def render_dot(report: Report) -> str:
    lines = [
        "digraph backportr {",
        '  rankdir=TB; ranksep=0.35; nodesep=0.3; size="8.3,200";',  # at most 800 px wide
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    for n, branch in enumerate(report.branches):
        lines += _cluster(n, branch)
    lines += _legend()
    lines.append("}")
    return "\n".join(lines) + "\n"


def _cluster(n: int, branch: BranchReport) -> list[str]:
    def node_id(commit: str) -> str:
        return f'"{n}:{short(commit)}"'

    out = [f"  subgraph cluster_{n} {{", f'    label="{_esc(branch.branch)}: {branch.status}";']
    known = set()
    postings: dict[str, list[str]] = {}  # a cluster per posting: its members' node lines
    for position, member in enumerate(branch.series, 1):
        colour = ROLE_COLOURS.get(member.role, "#ffffff")
        border = ', color="#c62828", penwidth=2' if member.apply == "conflict" else ""
        label = (
            f"{position}. {short(member.commit)}\\n{_esc(_short(member.subject))}\\n{member.role}"
        )
        if member.posting is not None:
            label += f"\\n{member.posting.position}/{member.posting.total} of its posting"
        line = f'{node_id(member.commit)} [label="{label}", fillcolor="{colour}"{border}];'
        if member.posting is not None:
            postings.setdefault(member.posting.key, []).append(line)
        else:
            out.append(f"    {line}")
        known.add(member.commit)
    for k, (key, lines) in enumerate(postings.items()):
        out.append(f"    subgraph cluster_{n}_posting_{k} {{")
        out.append(f'      label="{_esc(_posting_label(branch, key))}"; style=dashed;')
        out += [f"      {line}" for line in lines]
        out.append("    }")
    for present in branch.present:
        how = present.how or "present"
        label = f"{short(present.commit)}\\n{_esc(_short(present.subject))}\\npresent ({how})"
        out.append(
            f'    {node_id(present.commit)} [label="{label}", fillcolor="{PRESENT_COLOUR}",'
            ' style="rounded,filled,dashed"];'
        )
        known.add(present.commit)
    for earlier, later in zip(branch.series, branch.series[1:], strict=False):
        # one member a rank, in the order of application: the graph grows down, not wide
        out.append(
            f"    {node_id(earlier.commit)} -> {node_id(later.commit)} [style=invis, weight=5];"
        )
    for member in branch.series:
        for reason in member.reasons:
            if not reason.related or reason.related not in known:
                continue
            # One direction throughout, the order of application: a prerequisite before
            # what needs it, a fixed commit before its follow-up.
            label = _esc(_edge_label(reason.kind, reason.detail))
            first, then = (
                (reason.related, member.commit)
                if member.role in ("follow-up", "sibling") or reason.kind in ("follow-up", "revert")
                else (member.commit, reason.related)
            )
            out.append(f'    {node_id(first)} -> {node_id(then)} [label="{label}"];')
    out.append("  }")
    return out


def _posting_label(branch: BranchReport, key: str) -> str:
    """A posting as a reader finds it: its cover letter's subject, else a member's link to
    its mail; never the Message-ID stem it is grouped by (no mail has that id)."""
    postings = [m.posting for m in branch.series if m.posting and m.posting.key == key]
    cover = next((p.cover for p in postings if p.cover), None)
    if cover:
        return f"posting: {_short(cover)}"
    link = next((p.link for p in postings if p.link), None)
    if link:
        return f"posting: {link}"
    total = postings[0].total if postings else 0
    return f"one posting ({total} patches upstream)"


_SYMBOLS = re.compile(r"symbols? ([A-Za-z_][A-Za-z0-9_]*)")
_IN_FILE = re.compile(r"conflicts in (\S+?)[,)]? ")
_LAST_CHANGED = re.compile(r"last changed its lines in ([^,)\s]+)")


def _edge_label(kind: str, detail: str) -> str:
    """The evidence in a few words: the symbol, the conflicting file, the Fixes: line."""
    if kind == "symbol":
        names = re.findall(r"([A-Za-z_]\w*) introduced by", detail) or _SYMBOLS.findall(detail)
        return f"symbol {', '.join(dict.fromkeys(names))}" if names else "symbol"
    if kind in ("conflict", "adapted"):
        found = _IN_FILE.search(detail + " ") or _LAST_CHANGED.search(detail)
        return f"{kind} in {found.group(1)}" if found else kind
    if kind == "follow-up":
        named = " (Fixes:)" if detail.startswith("Fixes:") else ""  # else a project's phrase
        return f"fixed by{named}" + (" by subject" if "matched by subject" in detail else "")
    return kind


def _legend() -> list[str]:
    """Roles, presence and what an arrow means, drawn once beside the branches."""
    rows = "".join(
        f'<tr><td bgcolor="{colour}">  </td><td align="left">{role}</td></tr>'
        for role, colour in (*ROLE_COLOURS.items(), ("already in the branch", PRESENT_COLOUR))
    )
    rows += '<tr><td border="0">A → B</td>'
    rows += '<td align="left">A before B (B needs or fixes A) '
    rows += "(label: the evidence)</td></tr>"
    rows += '<tr><td border="0" bgcolor="#ffffff"><font color="#c62828">▭</font></td>'
    rows += '<td align="left">red border: does not apply cleanly</td></tr>'
    return [
        "  subgraph cluster_legend {",
        '    label="legend"; style=dashed;',
        f'    legend [shape=plaintext, style="", label=<<table border="0" cellborder="1" '
        f'cellspacing="0">{rows}</table>>];',
        "  }",
    ]


def render_svg(report: Report) -> str:
    """The graph as SVG; needs Graphviz's `dot` program."""
    program = shutil.which("dot")
    if program is None:
        raise BackportrError(
            "Graphviz's dot program is not installed: install the graphviz package, or use "
            "--format dot and render it elsewhere"
        )
    proc = process.run([program, "-Tsvg"], input=render_dot(report).encode(), capture_output=True)
    if proc.returncode != 0:
        raise BackportrError(f"dot failed: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout.decode()


def _short(text: str, width: int = 48) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _esc(text: str) -> str:
    """A DOT label from data: control characters shown escaped (`output.safe`), then
    DOT's quoting."""
    return terminal(text).replace("\\", "\\\\").replace('"', '\\"')
