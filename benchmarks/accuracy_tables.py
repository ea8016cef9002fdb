#!/usr/bin/env python3
"""Markdown tables for docs/accuracy.md from eval_real.py runs: backportr, backportr with this
turn's rules off, and the one-level `Fixes:` grep, side by side per project and kind.

    python benchmarks/accuracy_tables.py rules-on.json rules-off.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

KINDS = ("single", "prereq", "followup", "fixes_chain", "adjusted")


def score(
    rows: list[dict[str, Any]], kind: str, key: str = "predicted"
) -> tuple[int, int, float, float]:
    cases = [r for r in rows if r["kind"] == kind and "skipped" not in r]
    if kind == "adjusted":
        hit = sum(r["status"] == "conflict" for r in cases) if key == "predicted" else 0
        return len(cases), hit, float("nan"), float("nan")
    exact = sum(r[key] == r["expected"] for r in cases)
    tp = sum(len(set(r[key]) & set(r["expected"])) for r in cases)
    predicted = sum(len(r[key]) for r in cases)
    expected = sum(len(r["expected"]) for r in cases)
    return (
        len(cases),
        exact,
        tp / predicted if predicted else float("nan"),
        tp / expected if expected else float("nan"),
    )


def main() -> int:
    on, off = (json.loads(Path(p).read_text()) for p in sys.argv[1:3])
    for project in on:
        rows, old = on[project]["rows"], off.get(project, {}).get("rows", [])
        print(f"### {project}\n")
        print(
            "| kind | cases | backportr exact | precision | recall | rules off exact | "
            "grep exact | grep precision | grep recall |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        for kind in KINDS:
            n, exact, p, r = score(rows, kind)
            if not n:
                continue
            _, old_exact, _, _ = score(old, kind) if old else (0, 0, 0.0, 0.0)
            _, g_exact, gp, gr = score(rows, kind, "baseline")
            if kind == "adjusted":
                print(
                    f"| adjusted (conflict reported) | {n} | {exact}/{n} | | | "
                    f"{old_exact}/{n} | 0/{n} | | |"
                )
                applies = sum(
                    bool(r.get("git_applies") or r.get("moved_only")) and r["status"] == "ready"
                    for r in rows
                    if r["kind"] == "adjusted" and "skipped" not in r
                )
                if applies:
                    print(
                        f"| adjusted by git's measure (`ready` where `git cherry-pick` applies "
                        f"the target alone, or upstream's lines at moved paths) | {n} | "
                        f"{exact + applies}/{n} | | | | | | |"
                    )
            else:
                print(
                    f"| {kind} | {n} | {exact}/{n} | {p:.3f} | {r:.3f} | {old_exact}/{n} | "
                    f"{g_exact}/{n} | {gp:.3f} | {gr:.3f} |"
                )
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
