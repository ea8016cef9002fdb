"""Render a Report's dependency graph: Graphviz dot (pure text) and SVG (through `dot`).

Nodes are coloured by role (target, prerequisite, follow-up) and presence (already in the
branch: grey, dashed); edges point from a commit to the commit it depends on and are labelled
with the kind of evidence.
"""

from __future__ import annotations

import shutil
import subprocess

from backportr.errors import BackportrError
from backportr.model import BranchReport, Report

ROLE_COLOURS = {"target": "#f6c85f", "prerequisite": "#9dd9f3", "follow-up": "#a5d6a7"}
PRESENT_COLOUR = "#e0e0e0"


def render_dot(report: Report) -> str:
    lines = [
        "digraph backportr {",
        "  rankdir=LR;",
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    for n, branch in enumerate(report.branches):
        lines += _cluster(n, branch)
    lines.append("}")
    return "\n".join(lines) + "\n"


def _cluster(n: int, branch: BranchReport) -> list[str]:
    def node_id(commit: str) -> str:
        return f'"{n}:{commit[:12]}"'

    out = [f"  subgraph cluster_{n} {{", f'    label="{_esc(branch.branch)}: {branch.status}";']
    known = set()
    postings: dict[str, list[str]] = {}  # a cluster per posting: its members' node lines
    for position, member in enumerate(branch.series, 1):
        colour = ROLE_COLOURS.get(member.role, "#ffffff")
        border = ', color="#c62828", penwidth=2' if member.apply == "conflict" else ""
        label = f"{position}. {member.commit[:12]}\\n{_esc(_short(member.subject))}\\n{member.role}"
        if member.posting is not None:
            label += f"\\n{member.posting.position}/{member.posting.total} of its posting"
        line = f'{node_id(member.commit)} [label="{label}", fillcolor="{colour}"{border}];'
        if member.posting is not None:
            postings.setdefault(member.posting.key, []).append(line)
        else:
            out.append(f"    {line}")
        known.add(member.commit)
    for k, (key, lines) in enumerate(postings.items()):
        cover = next(
            (m.posting.cover for m in branch.series if m.posting and m.posting.key == key), None
        )
        out.append(f"    subgraph cluster_{n}_posting_{k} {{")
        out.append(f'      label="posting: {_esc(_short(cover or key))}"; style=dashed;')
        out += [f"      {line}" for line in lines]
        out.append("    }")
    for present in branch.present:
        how = present.how or "present"
        label = f"{present.commit[:12]}\\n{_esc(_short(present.subject))}\\npresent ({how})"
        out.append(
            f'    {node_id(present.commit)} [label="{label}", fillcolor="{PRESENT_COLOUR}",'
            ' style="rounded,filled,dashed"];'
        )
        known.add(present.commit)
    for member in branch.series:
        for reason in member.reasons:
            if not reason.related or reason.related not in known:
                continue
            if reason.kind in ("follow-up", "revert"):
                source, target = member.commit, reason.related
            else:
                source, target = reason.related, member.commit
            out.append(f'    {node_id(source)} -> {node_id(target)} [label="{reason.kind}"];')
    out.append("  }")
    return out


def render_svg(report: Report) -> str:
    """The graph as SVG; needs Graphviz's `dot` program."""
    program = shutil.which("dot")
    if program is None:
        raise BackportrError(
            "Graphviz's dot program is not installed: install the graphviz package, or use "
            "--format dot and render it elsewhere"
        )
    proc = subprocess.run(
        [program, "-Tsvg"], input=render_dot(report).encode(), capture_output=True, check=False
    )
    if proc.returncode != 0:
        raise BackportrError(f"dot failed: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout.decode()


def _short(text: str, width: int = 48) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _esc(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')
