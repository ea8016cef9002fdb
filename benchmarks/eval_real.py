#!/usr/bin/env python3
"""Score backportr resolve on real backport cases (../shared/data/real-cases/).

    python benchmarks/eval_real.py rdma=/path/to/rdma-core.git ovn=/path/to/ovn.git \\
        nm=/path/to/NetworkManager.git [--limit N] [--kinds single,prereq] [--json out.json]

For each case: point the case's branch, in a scratch clone that shares the objects of the
given repository, at `before` (the stable commit just before the maintainers applied it),
resolve the target, and score the answer against what the maintainers applied:

- exact: the series equals the maintainers' series (order included);
- precision and recall of the set of commits (micro-averaged per kind);
- `adjusted` cases (the maintainers edited the patch by hand): was a conflict reported?
- `single` cases: anything beyond the target is a false positive.

Cases of one branch run in branch order so the index is updated incrementally. Prints a
markdown table per project and kind, and the misses; --json keeps every case's answer.
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from backportr.config import Settings
from backportr.errors import BackportrError
from backportr.resolve import Resolver
from backportr.workspace import open_workspace

CASES = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "real-cases"
PROJECTS = {
    "rdma": ("rdma.jsonl.gz", "master"),
    "ovn": ("ovn.jsonl.gz", "main"),
    "nm": ("nm.jsonl.gz", "main"),
}
COLUMNS = (
    "kind",
    "cases",
    "exact",
    "precision",
    "recall",
    "conflict reported",
    "extra on single",
    "mean s",
)
SCORED = ("single", "prereq", "followup", "fixes_chain", "adjusted")


@dataclass
class Tally:
    cases: int = 0
    exact: int = 0
    true_positive: int = 0
    predicted: int = 0
    expected: int = 0
    conflicts: int = 0
    extra_on_single: int = 0
    errors: int = 0
    seconds: float = 0.0
    misses: list[dict[str, object]] = field(default_factory=list)

    def add(
        self,
        case: dict[str, object],
        predicted: list[str],
        status: str,
        seconds: float,
        error: str | None = None,
        reasons: list[list[str]] | None = None,
        later: list[str] | None = None,
    ) -> dict[str, object]:
        self.cases += 1
        self.seconds += seconds
        expected = list(case["series"])  # type: ignore[arg-type]
        hit = len(set(predicted) & set(expected))
        row = {
            "branch": case["branch"],
            "target": case["target"],
            "kind": case["kind"],
            "expected": expected,
            "predicted": predicted,
            "status": status,
            "seconds": round(seconds, 3),
            "reasons": reasons or [],
            "extra_backported_later": later or [],
        }
        if error:
            self.errors += 1
            row["error"] = error
        if case["kind"] == "adjusted":
            self.conflicts += status == "conflict"
            if status != "conflict":
                self.misses.append(row)
            return row
        self.true_positive += hit
        self.predicted += len(predicted)
        self.expected += len(expected)
        if predicted == expected:
            self.exact += 1
        else:
            self.misses.append(row)
        if case["kind"] == "single" and len(predicted) > 1:
            self.extra_on_single += 1
        return row


def load_cases(path: Path) -> list[dict[str, object]]:
    with gzip.open(path, "rt") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def branch_order(repo: Path, cases: list[dict[str, object]]) -> list[dict[str, object]]:
    """Cases grouped by branch, each branch in history order of `before`."""
    befores = sorted({str(c["before"]) for c in cases})
    out = subprocess.run(
        ["git", "--git-dir", str(repo), "show", "-s", "--format=%H %ct", *befores],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    when = dict(line.split() for line in out.splitlines())
    return sorted(cases, key=lambda c: (c["branch"], int(when.get(str(c["before"]), 0))))


def backported_later(mirror: Path, branch: str, commit: str) -> bool:
    """Did the maintainers take `commit` into the real branch at some later point?"""
    out = subprocess.run(
        [
            "git",
            "--git-dir",
            str(mirror),
            "log",
            "--format=%H",
            "-F",
            f"--grep={commit}",
            f"refs/heads/{branch}",
        ],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    if out.strip():
        return True
    merged = subprocess.run(
        [
            "git",
            "--git-dir",
            str(mirror),
            "merge-base",
            "--is-ancestor",
            commit,
            f"refs/heads/{branch}",
        ],
        check=False,
    )
    return merged.returncode == 0


def evaluate(name: str, mirror: Path, args: argparse.Namespace) -> tuple[dict, list[dict]]:
    cases_file, upstream = PROJECTS[name]
    cases = [c for c in load_cases(CASES / cases_file) if c["kind"] in args.kinds]
    if args.limit:
        per_kind: dict[str, int] = defaultdict(int)
        kept = []
        for case in cases:
            if per_kind[str(case["kind"])] < args.limit:
                per_kind[str(case["kind"])] += 1
                kept.append(case)
        cases = kept
    scratch = Path(tempfile.mkdtemp(prefix=f"backportr-eval-{name}-")) / "repo.git"
    subprocess.run(
        ["git", "clone", "-q", "--bare", "--shared", str(mirror), str(scratch)], check=True
    )
    tallies: dict[str, Tally] = defaultdict(Tally)
    rows = []
    cases = branch_order(scratch, cases)
    started = time.monotonic()
    for number, case in enumerate(cases, 1):
        branch = str(case["branch"])
        subprocess.run(
            [
                "git",
                "--git-dir",
                str(scratch),
                "update-ref",
                f"refs/heads/{branch}",
                str(case["before"]),
            ],
            check=True,
        )
        settings = Settings(
            repo=scratch,
            upstream=upstream,
            branches=(branch,),
            branch_pattern="no-other-branches",
            max_commits=args.max_commits,
        )
        begin = time.monotonic()
        predicted: list[str] = []
        reasons: list[list[str]] = []
        status = "error"
        error = None
        try:
            with open_workspace(settings, all_stable=False) as ws:
                report = Resolver(
                    ws,
                    max_commits=args.max_commits,
                    symbols=args.symbols,
                    conflict_depth=args.conflict_depth,
                ).resolve(str(case["target"]), ws.branches)
            branch_report = report.branches[0]
            status = branch_report.status
            if status in ("ready", "conflict"):
                predicted = [m.commit for m in branch_report.series]
                reasons = [
                    [m.reasons[0].kind, m.reasons[0].related or ""] for m in branch_report.series
                ]
        except BackportrError as failure:
            error = str(failure)
        extra = [c for c in predicted if c not in case["series"]]  # type: ignore[operator]
        later = [c for c in extra if backported_later(mirror, branch, c)]
        rows.append(
            tallies[str(case["kind"])].add(
                case, predicted, status, time.monotonic() - begin, error, reasons, later
            )
        )
        if number % 25 == 0:
            print(
                f"  {name}: {number}/{len(cases)} cases, {time.monotonic() - started:.0f}s",
                file=sys.stderr,
            )
    return {kind: tallies[kind] for kind in SCORED if kind in tallies}, rows


def render(name: str, tallies: dict[str, Tally]) -> list[str]:
    lines = [
        f"### {name}",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for kind, t in tallies.items():
        precision = t.true_positive / t.predicted if t.predicted else float("nan")
        recall = t.true_positive / t.expected if t.expected else float("nan")
        conflict = f"{t.conflicts}/{t.cases}" if kind == "adjusted" else ""
        exact = "" if kind == "adjusted" else f"{t.exact}/{t.cases}"
        extra = f"{t.extra_on_single}" if kind == "single" else ""
        p = "" if kind == "adjusted" else f"{precision:.3f}"
        r = "" if kind == "adjusted" else f"{recall:.3f}"
        lines.append(
            f"| {kind} | {t.cases} | {exact} | {p} | {r} | {conflict} | {extra} | "
            f"{t.seconds / max(1, t.cases):.2f} |"
        )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description="Score resolve on real backport cases.")
    parser.add_argument("projects", nargs="+", help="name=path, name in rdma, ovn, nm")
    parser.add_argument("--limit", type=int, default=0, help="at most N cases per kind")
    parser.add_argument("--kinds", default=",".join(SCORED))
    parser.add_argument("--max-commits", type=int, default=50)
    parser.add_argument("--conflict-depth", type=int, default=1)
    parser.add_argument("--no-symbols", dest="symbols", action="store_false")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    args.kinds = args.kinds.split(",")
    report: dict[str, object] = {}
    for spec in args.projects:
        name, _, path = spec.partition("=")
        tallies, rows = evaluate(name, Path(path), args)
        print("\n".join(render(name, tallies)) + "\n")
        for kind, t in tallies.items():
            for miss in t.misses[:5]:
                print(f"  miss {kind}: {json.dumps(miss)[:400]}")
        report[name] = {"rows": rows}
        if args.json:  # after every project, so a long run keeps what it has
            args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
