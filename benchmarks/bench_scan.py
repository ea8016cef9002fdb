#!/usr/bin/env python3
"""Scan stable branches with backportr and, in the same run, with the plainest tools that
answer the same question.

    python benchmarks/generate.py /tmp/scanbig --upstream 60000 --stable 5000 --branches 2
    python benchmarks/bench_scan.py /tmp/scanbig [--sample 40]
    python benchmarks/bench_scan.py /path/to/ovn.git --upstream main --branch branch-24.03 \\
        --pattern 'branch-*'

backportr: `backportr scan -b B ... --format json` with a fresh index (cold: index build
included), then again (warm). Baselines: benchmarks/naive_scan.py (one `git log` over
upstream, every `Fixes:` id resolved, the fixes whose culprit is in the branch and which no
backport names) for every branch, in-process and, with `--shell-loop`, as a shell loop asks
it (a git process per `Fixes:` id and per culprit); and `git log --grep` per fix (is each
culprit in the branch, is the fix), measured on a sample and scaled to all of them. Prints
the times, the ratios and how far the missing-fix lists agree. `--jobs` is passed to every
scan (0: the scan's default, a process per core).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from installed import BACKPORTR
from scratchgit import scratch_dir

BRANCHES = ("linux-5.10.y", "linux-5.15.y")


def git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "--git-dir", str(repo), *args], capture_output=True, text=True, check=False
    )


def command(
    name: str, repo: Path, index: Path, upstream: str, branches: list[str], pattern: str
) -> list[str]:
    """`backportr NAME` on the repository, index, upstream, pattern and branches."""
    where = ["--repo", str(repo), "--upstream", upstream, "--index", str(index)]
    return [
        *BACKPORTR,
        name,
        *where,
        "--branch-pattern",
        pattern,
        *[a for b in branches for a in ("-b", b)],
    ]


def backportr(
    repo: Path, index: Path, upstream: str, branches: list[str], pattern: str, *extra: str
) -> tuple[float, dict[str, Any]]:
    begin = time.perf_counter()
    proc = subprocess.run(
        [*command("scan", repo, index, upstream, branches, pattern), "--format", "json", *extra],
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - begin
    if proc.returncode not in (0, 4):
        raise SystemExit(f"backportr scan failed: {proc.stderr}")
    return seconds, json.loads(proc.stdout)


def floor(
    repo: Path, upstream: str, branches: list[str], pattern: str
) -> tuple[float, float, float, float]:
    """What every cold scan pays before it resolves anything: the interpreter with
    backportr's imports (`backportr --version`), and the index build alone on a fresh
    index directory (`backportr index`, the same branches and pattern); then detection
    alone (`scan --detect`) on that index, twice: the first computes and caches what its
    presence checks ask, the second finds the index as a nightly detection does."""
    begin = time.perf_counter()
    subprocess.run([*BACKPORTR, "--version"], capture_output=True, check=True)
    startup = time.perf_counter() - begin
    index = scratch_dir("backportr-floor-") / "index.sqlite"
    begin = time.perf_counter()
    subprocess.run(
        [*command("index", repo, index, upstream, branches, pattern), "--quiet"],
        capture_output=True,
        check=True,
    )
    built = time.perf_counter() - begin
    detections = [backportr(repo, index, upstream, branches, pattern, "--detect")[0] for _ in "12"]
    return startup, built, detections[0], detections[1]


def baseline_fix(repo: Path, branch: str, fix: str, culprits: list[str]) -> None:
    for culprit in culprits:
        if git(repo, "merge-base", "--is-ancestor", culprit, branch).returncode != 0:
            git(repo, "log", "--format=%H", f"--grep={culprit}", branch)
    git(repo, "log", "--format=%H", f"--grep={fix}", branch)


def nightly(
    repo: Path, upstream: str, branches: list[str], args: argparse.Namespace
) -> tuple[float, dict[str, Any], float, float]:
    """A scratch clone (sharing objects) with upstream `--day` first-parent commits back and
    every branch `--release` commits back: scan it (the night before), move the refs to their
    tips, scan again (the nightly increment). Returns the increment's time and report, the
    naive scan's time on the moved clone, and the time of the scan before."""
    sys.path.insert(0, str(Path(__file__).parent))
    from naive_scan import missing_fixes

    scratch = scratch_dir("backportr-nightly-")
    clone = scratch / "repo.git"
    subprocess.run(["git", "clone", "-q", "--bare", "--shared", str(repo), str(clone)], check=True)
    tips = {ref: git(clone, "rev-parse", ref).stdout.strip() for ref in [upstream, *branches]}
    updates = []
    for ref, tip in tips.items():
        back = args.day if ref == upstream else args.release
        old = git(clone, "rev-list", "--first-parent", f"--skip={back}", "-1", tip).stdout.strip()
        updates.append(f"update refs/heads/{ref} {old}")
    subprocess.run(
        ["git", "--git-dir", str(clone), "update-ref", "--stdin"],
        input="\n".join(updates) + "\n",
        text=True,
        check=True,
    )
    index = scratch / "index.sqlite"
    jobs = ("--jobs", str(args.jobs))
    before, _ = backportr(clone, index, upstream, branches, args.pattern, *jobs)
    subprocess.run(
        ["git", "--git-dir", str(clone), "update-ref", "--stdin"],
        input="".join(f"update refs/heads/{ref} {tip}\n" for ref, tip in tips.items()),
        text=True,
        check=True,
    )
    day, report = backportr(clone, index, upstream, branches, args.pattern, *jobs)
    begin = time.perf_counter()
    for branch in branches:
        missing_fixes(clone, upstream, branch)
    return day, report, time.perf_counter() - begin, before


def main() -> int:
    parser = argparse.ArgumentParser(description="Benchmark backportr scan against git.")
    parser.add_argument("repo", type=Path)
    parser.add_argument("--upstream", default="master")
    parser.add_argument("--branch", action="append", dest="branches")
    parser.add_argument("--pattern", default="linux-*.y", help="the index's branch pattern")
    parser.add_argument("--sample", type=int, default=40)
    parser.add_argument(
        "--day",
        type=int,
        default=30,
        help="the nightly increment: upstream this many first-parent commits back, and each "
        "branch one release (--release commits) back, then both moved to their tips",
    )
    parser.add_argument("--release", type=int, default=10)
    parser.add_argument("--no-nightly", dest="nightly", action="store_false")
    parser.add_argument(
        "--shell-loop",
        action="store_true",
        help="also time the naive scan as a shell loop (a git process per id and culprit: "
        "an hour and more at kernel scale, where every ancestry test walks 1.3M commits)",
    )
    parser.add_argument(
        "--jobs", type=int, default=0, help="backportr scan --jobs (0: its default, per core)"
    )
    args = parser.parse_args()
    repo: Path = args.repo
    branches: list[str] = args.branches or list(BRANCHES)
    upstream: str = args.upstream
    index = scratch_dir("backportr-bench-") / "index.sqlite"
    count = int(git(repo, "rev-list", "--count", upstream).stdout)
    print(f"repository: {repo}; {count} upstream commits; branches {', '.join(branches)}")

    sys.path.insert(0, str(Path(__file__).parent))
    from naive_scan import missing_fixes, missing_fixes_per_id

    begin = time.perf_counter()
    naive = {b: missing_fixes(repo, upstream, b) for b in branches}
    naive_seconds = time.perf_counter() - begin
    per_id: dict[str, list[str]] = {}
    per_id_seconds = 0.0
    if args.shell_loop:
        begin = time.perf_counter()
        per_id = {b: missing_fixes_per_id(repo, upstream, b) for b in branches}
        per_id_seconds = time.perf_counter() - begin
    jobs = ("--jobs", str(args.jobs))
    startup, index_alone, detect, detect_again = floor(repo, upstream, branches, args.pattern)
    cold, report = backportr(repo, index, upstream, branches, args.pattern, *jobs)
    warm, _ = backportr(repo, index, upstream, branches, args.pattern, *jobs)
    ours = {
        b["branch"]: [f["commit"] for f in b["findings"] if f["kind"] == "missing-fix"]
        for b in report["branches"]
    }
    kinds: dict[str, int] = {}
    for b in report["branches"]:
        for f in b["findings"]:
            kinds[f["kind"]] = kinds.get(f["kind"], 0) + 1

    fixes: list[tuple[str, str, list[str]]] = []
    for branch in branches:
        fork = git(repo, "merge-base", upstream, branch).stdout.strip()
        log = git(repo, "log", "--format=%x00%H%n%B", "-i", "--grep=Fixes:", f"{fork}..{upstream}")
        for record in log.stdout.split("\0")[1:]:
            head, _, body = record.partition("\n")
            ids = re.findall(r"^Fixes: ([0-9a-f]{7,40})", body, re.MULTILINE | re.IGNORECASE)
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
    grep_all = per_fix * len(fixes)

    print(f"fixes after the forks: {len(fixes)}; backportr findings: {kinds}")
    for branch in branches:
        both = len(set(naive[branch]) & set(ours.get(branch, [])))
        print(
            f"{branch}: missing fixes: naive {len(naive[branch])}"
            + (f" (a git process per id: {len(per_id[branch])})" if args.shell_loop else "")
            + f", backportr {len(ours.get(branch, []))}, both {both}"
        )
    if args.nightly:
        day, day_report, day_naive, before = nightly(repo, upstream, branches, args)
        print(
            f"nightly increment ({args.day} upstream commits, {args.release} per branch): "
            f"{day:.1f} s, resolved {sum(b['resolved'] for b in day_report['branches'])} anew "
            f"(the scan before it: {before:.1f} s); naive scan of the moved repository "
            f"{day_naive:.2f} s"
        )
    print(f"naive scan (git log + prefix resolution, all branches): {naive_seconds:.2f} s")
    if args.shell_loop:
        print(
            f"naive scan as a shell loop (a git process per id and per culprit): "
            f"{per_id_seconds:.2f} s"
        )
    print(f"backportr scan, cold (index build included): {cold:.1f} s")
    findings = sum(kinds.values())
    print(
        f"  of which paid before any finding: the interpreter and imports {startup:.2f} s "
        f"({startup / naive_seconds:.1f}x naive), the index alone {index_alone:.1f} s "
        f"({index_alone / naive_seconds:.1f}x naive); the {findings} findings resolved in "
        f"full the rest"
    )
    print(
        f"backportr scan --detect after the index build: {detect:.2f} s "
        f"({detect / naive_seconds:.1f}x naive), again {detect_again:.2f} s "
        f"({detect_again / naive_seconds:.1f}x naive)"
    )
    print(f"backportr scan, warm index: {warm:.1f} s")
    print(f"git log --grep per fix: {per_fix * 1000:.0f} ms, {grep_all:.0f} s for all")
    print(
        f"ratios: cold / naive {cold / naive_seconds:.1f}"
        + (f" (/ the shell loop {cold / per_id_seconds:.1f})" if args.shell_loop else "")
        + f"; warm / naive {warm / naive_seconds:.1f}; warm / git-log-grep {warm / grep_all:.4f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
