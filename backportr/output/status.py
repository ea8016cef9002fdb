"""Render `backportr status` results as text or JSON (schema 1, docs/json.md)."""

from __future__ import annotations

from collections.abc import Sequence

from backportr.model import Presence, StatusResult, short
from backportr.output.jsontext import dumps_indented
from backportr.output.safe import terminal

STATUS_SCHEMA = 1


def status_to_dict(results: Sequence[StatusResult]) -> dict[str, object]:
    return {
        "schema": STATUS_SCHEMA,
        "results": [
            {
                "commit": r.commit,
                "subject": r.subject,
                "branches": [_presence_dict(p) for p in r.branches],
            }
            for r in results
        ],
    }


def _presence_dict(p: Presence) -> dict[str, object]:
    return {
        "branch": p.branch,
        "present": p.present,
        "as": p.as_commit,
        "how": p.how,
        "reverted_in_branch": p.reverted_in_branch,
    }


def render_status_json(results: Sequence[StatusResult]) -> str:
    return dumps_indented(status_to_dict(results)) + "\n"


def render_status_text(results: Sequence[StatusResult]) -> str:
    lines: list[str] = []
    for r in results:
        lines.append(f"{short(r.commit)} {r.subject}")
        width = max((len(p.branch) for p in r.branches), default=0)
        for p in r.branches:
            lines.append(f"  {p.branch:<{width}}  {_describe(p)}")
    return terminal("\n".join(lines) + "\n")


def _describe(p: Presence) -> str:
    if p.reverted_in_branch:
        by = f" by {short(p.reverted_by)}" if p.reverted_by else ""
        return f"absent: reverted-in-branch (was {short(p.as_commit) if p.as_commit else '?'}{by})"
    if not p.present:
        return "absent"
    if p.how == "ancestor":
        return "present (in history)"
    return f"present as {short(p.as_commit) if p.as_commit else '?'} ({p.how})"
