#!/usr/bin/env python3
"""Scan a large generated repository against two stable branches, and compare with a
baseline that asks git for the same answers.

    python benchmarks/generate.py /tmp/scanbig --upstream 60000 --stable 5000 --branches 2
    python benchmarks/bench_scan.py /tmp/scanbig [--sample 40]

backportr: `backportr scan -b linux-5.10.y -b linux-5.15.y --format json` (cold index, then
warm; and with --jobs 2). Baseline, per upstream fix after a branch's fork (measured on a
sample and scaled to all of them): is each culprit in the branch (`git merge-base
--is-ancestor`, then `git log --grep=<culprit id> <branch>`), and is the fix itself there
(`git log --grep=<fix id> <branch>`): the questions a scan must answer for every fix.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BRANCHES = ("linux-5.10.y", "linux-5.15.y")


def git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "--git-dir", str(repo), *args], capture_output=True, text=True, check=False
    )


def backportr(repo: Path, index: Path, *extra: str) -> tuple[float, dict[str, object]]:
    begin = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "backportr",
            "scan",
            "--repo",
            str(repo),
            "--upstream",
            "master",
            "--index",
            str(index),
            "--format",
            "json",
            *[a for b in BRANCHES for a in ("-b", b)],
            *extra,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - begin
    if proc.returncode not in (0, 4):
        raise SystemExit(f"backportr scan failed: {proc.stderr}")
    return seconds, json.loads(proc.stdout)


def baseline_fix(repo: Path, branch: str, fix: str, culprits: list[str]) -> None:
    for culprit in culprits:
        if git(repo, "merge-base", "--is-ancestor", culprit, branch).returncode != 0:
            git(repo, "log", "--format=%H", f"--grep={culprit}", branch)
    git(repo, "log", "--format=%H", f"--grep={fix}", branch)


def main() -> int:
    parser = argparse.ArgumentParser(description="Benchmark backportr scan against git.")
    parser.add_argument("repo", type=Path)
    parser.add_argument("--sample", type=int, default=40)
    args = parser.parse_args()
    repo: Path = args.repo
    index = Path(tempfile.mkdtemp(prefix="backportr-bench-")) / "index.sqlite"
    upstream = int(git(repo, "rev-list", "--count", "master").stdout)
    print(f"repository: {repo}; {upstream} upstream commits; branches {', '.join(BRANCHES)}")

    cold, report = backportr(repo, index)
    warm, _ = backportr(repo, index)
    parallel, _ = backportr(repo, index, "--jobs", "2")
    counts = {b["branch"]: len(b["findings"]) for b in report["branches"]}  # type: ignore[index]

    # the baseline's work: every fix after each branch's fork, with its culprits
    fixes: list[tuple[str, str, list[str]]] = []
    for branch in BRANCHES:
        fork = git(repo, "merge-base", "master", branch).stdout.strip()
        log = git(repo, "log", "--format=%x00%H%n%B", "--grep=Fixes:", f"{fork}..master").stdout
        for record in log.split("\0")[1:]:
            head, _, body = record.partition("\n")
            ids = re.findall(r"^Fixes: ([0-9a-f]{7,40})", body, re.MULTILINE)
            resolved = [
                git(repo, "rev-parse", "--verify", "-q", f"{i}^{{commit}}").stdout.strip()
                for i in ids
            ]
            fixes.append((branch, head, [r for r in resolved if r]))
    sample = random.Random(5).sample(fixes, min(args.sample, len(fixes)))
    begin = time.perf_counter()
    for branch, fix, culprits in sample:
        baseline_fix(repo, branch, fix, culprits)
    per_fix = (time.perf_counter() - begin) / max(1, len(sample))
    baseline = per_fix * len(fixes)

    print(f"fixes after the forks: {len(fixes)}; findings: {counts}")
    print(f"backportr scan, cold index (index build included): {cold:.1f} s")
    print(f"backportr scan, warm index: {warm:.1f} s")
    print(f"backportr scan, warm, --jobs 2: {parallel:.1f} s")
    print(
        f"baseline (git processes): {per_fix * 1000:.0f} ms per fix, {baseline:.0f} s for all "
        f"{len(fixes)} (measured on {len(sample)})"
    )
    print(f"ratio warm / baseline: {warm / baseline:.4f}; cold / baseline: {cold / baseline:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
