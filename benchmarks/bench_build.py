#!/usr/bin/env python3
"""The index build of upstream and one stable branch against the raw log of upstream, on
several repositories, in one run.

    python benchmarks/bench_build.py REPO:UPSTREAM:BRANCH [REPO:UPSTREAM:BRANCH ...] [--runs 5]

For each repository, `--runs` times in turn: `git log --format=%H%x00%B UPSTREAM` (the raw
log: git reading every message once, nothing parsed) and `backportr index --branch BRANCH
--branch-pattern BRANCH` into a fresh index in a scratch directory (a first build: the fix
phrases learned, upstream stored, the branch's patch-ids computed). Prints the medians, the
ratio of the medians and the build's peak resident memory, a row per repository.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from installed import BACKPORTR
from scratchgit import scratch_dir


def timed(argv: list[str]) -> tuple[float, int]:
    """Wall seconds and peak resident KiB of one command (its own and its children's)."""
    begin = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - begin
    if os.waitstatus_to_exitcode(status) != 0:
        stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        raise SystemExit(f"{' '.join(argv[:6])} failed: {stderr[-2000:]}")
    return seconds, usage.ru_maxrss


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="+", help="REPO:UPSTREAM:BRANCH")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    scratch = scratch_dir("backportr-build-")
    print("| repository | branch | raw log | index build | ratio | peak |")
    print("|---|---|---|---|---|---|")
    for number, spec in enumerate(args.repos):
        repo, upstream, branch = spec.rsplit(":", 2)
        raw: list[float] = []
        builds: list[float] = []
        peak = 0
        for run in range(args.runs):
            raw.append(timed(["git", "--git-dir", repo, "log", "--format=%H%x00%B", upstream])[0])
            index = scratch / f"{number}-{run}" / "index.sqlite"
            index.parent.mkdir()
            seconds, resident = timed(
                [*BACKPORTR, "index", "--repo", repo, "--upstream", upstream, "--branch", branch,
                 "--branch-pattern", branch, "--index", str(index), "-q"]
            )  # fmt: skip
            builds.append(seconds)
            peak = max(peak, resident)
        log, build = statistics.median(raw), statistics.median(builds)
        name = Path(repo).parent.name if Path(repo).name in ("repo", ".git") else Path(repo).name
        print(
            f"| {name} | `{branch}` | {log:.2f} s | {build:.2f} s | **{build / log:.1f}** "
            f"| {peak >> 10} MiB |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
