#!/usr/bin/env python3
"""Gain and loss between two eval_real.py runs on the same cases, per project and kind.

    python benchmarks/compare_eval.py before.json after.json

A case *gains* when it becomes right (exact, or a conflict reported for `adjusted`) and
*loses* when it stops being right. Each changed case is attributed to the evidence of the
members that differ (culprit, conflict, symbol, follow-up, revert, ...), which names the rule
that made the difference; a case right in neither run is not listed.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any


def case_key(row: dict[str, Any]) -> tuple[str, str, str, tuple[str, ...]]:
    """A case: its branch, target and kind, and what it expects (a fix naming two culprits
    is two cases on one branch)."""
    return (row["branch"], row["target"], row["kind"], tuple(row["expected"]))


def right(row: dict[str, Any]) -> bool:
    if row["kind"] == "adjusted":
        return bool(row["status"] == "conflict")
    return bool(row["predicted"] == row["expected"])


def evidence(row: dict[str, Any], other: dict[str, Any]) -> str:
    """The evidence kinds of the members in one answer and not the other (or the status)."""
    theirs = set(other["predicted"])
    kinds = sorted(
        {r[0] for r, c in zip(row["reasons"], row["predicted"], strict=True) if c not in theirs}
    )
    if kinds:
        return "+" + "+".join(kinds)
    mine = set(row["predicted"])
    kinds = sorted(
        {r[0] for r, c in zip(other["reasons"], other["predicted"], strict=True) if c not in mine}
    )
    if kinds:
        return "-" + "-".join(kinds)
    return f"{other['status']}->{row['status']}"


def main() -> int:
    before, after = (json.loads(Path(p).read_text()) for p in sys.argv[1:3])
    for project in after:
        # a case left out (`skipped`: the branch carried its target already) has no answer
        old = {
            case_key(r): r for r in before.get(project, {}).get("rows", []) if "skipped" not in r
        }
        gains: Counter[tuple[str, str]] = Counter()
        losses: Counter[tuple[str, str]] = Counter()
        for row in after[project]["rows"]:
            if "skipped" in row:
                continue
            prior = old.get(case_key(row))
            if prior is None:
                continue
            if right(prior) == right(row):
                continue
            if right(row):
                gains[(row["kind"], evidence(row, prior))] += 1
            else:
                losses[(row["kind"], evidence(row, prior))] += 1
        print(f"### {project}\n")
        print("| kind | change | gained | lost |\n|---|---|---|---|")
        for key in sorted(set(gains) | set(losses)):
            print(f"| {key[0]} | `{key[1]}` | {gains[key]} | {losses[key]} |")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
