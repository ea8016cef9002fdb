#!/usr/bin/env python3
"""Resolve time on a large generated repository: cold index, warm index, and a baseline
that answers the same questions with git processes (`git log --grep`, `git blame`).

    python benchmarks/generate.py /tmp/big
    python benchmarks/bench_resolve.py /tmp/big [--targets 20]

Targets are upstream commits after the fork, absent from the branch, that have follow-ups.
The baseline, per target: find follow-ups recursively with `git log --grep='Fixes: <id>'`,
check each member's presence with `git log --grep=<id> <branch>`, and blame the lines of each
member's hunks with `git blame -L` (what git-deps-style tools do, one process per question).
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from installed import BACKPORTR
from scratchgit import scratch_dir

from backportr.resolve.resolver import Resolver
from backportr.resolve.workspace import open_workspace
from backportr.settings import Settings

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? ", re.MULTILINE)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(repo), *args], capture_output=True, text=True, check=False
    ).stdout


def baseline(repo: Path, upstream: str, branch: str, target: str) -> int:
    """The same questions asked of git, one process each; returns the closure size."""
    members = [target]
    seen = {target}
    while members:
        commit = members.pop()
        git(repo, "log", "--format=%H", f"--grep={commit}", branch)  # presence
        for fix in git(
            repo, "log", "--format=%H", f"--grep=Fixes: {commit[:12]}", upstream
        ).split():
            if fix not in seen:
                seen.add(fix)
                members.append(fix)
        show = git(repo, "show", "--format=", "--no-renames", commit)
        path = None
        for line in show.splitlines():
            if line.startswith("--- a/"):
                path = line[6:]
            elif (m := _HUNK.match(line)) and path:
                start, count = int(m.group(1)), int(m.group(2) or 1)
                if count:
                    git(
                        repo,
                        "blame",
                        "--porcelain",
                        "-L",
                        f"{start},+{count}",
                        f"{commit}^",
                        "--",
                        path,
                    )
    return len(seen)


def main() -> int:
    parser = argparse.ArgumentParser(description="Benchmark resolve on a large repository.")
    parser.add_argument("repo", type=Path)
    parser.add_argument("--upstream", default="master")
    parser.add_argument("--branch", default="linux-5.10.y")
    parser.add_argument("--targets", type=int, default=20)
    args = parser.parse_args()
    index_file = scratch_dir("backportr-bench-") / "index.sqlite"
    settings = Settings(
        repo=args.repo, upstream=args.upstream, branches=(args.branch,), index_path=index_file
    )

    start = time.perf_counter()
    with open_workspace(settings) as ws:
        cold_index = time.perf_counter() - start
        rows = ws.index.db.execute(
            "SELECT DISTINCT f.target FROM fixes f JOIN commits c ON c.oid = f.target "
            "JOIN after_fork a ON a.commit_id = c.id WHERE f.target IS NOT NULL LIMIT 2000"
        ).fetchall()
        candidates = [r[0] for r in rows if not ws.presence.check(r[0], ws.branches[0]).present]
        targets = random.Random(3).sample(candidates, min(args.targets, len(candidates)))
        first = time.perf_counter()
        Resolver(ws).resolve(targets[0], ws.branches)
        cold_first = time.perf_counter() - first
    warm, sizes, plain = [], [], []
    with open_workspace(settings) as ws:
        for target in targets:
            begin = time.perf_counter()
            report = Resolver(ws).resolve(target, ws.branches)
            warm.append(time.perf_counter() - begin)
            sizes.append(len(report.branches[0].series))
            begin = time.perf_counter()
            Resolver(ws, symbols=False, suggest=False).resolve(target, ws.branches)
            plain.append(time.perf_counter() - begin)
    cli = []
    for target in targets[:5]:
        begin = time.perf_counter()
        subprocess.run(
            [
                *BACKPORTR,
                "resolve",
                target,
                "--repo",
                str(args.repo),
                "--upstream",
                args.upstream,
                "-b",
                args.branch,
                "--index",
                str(index_file),
                "--format",
                "json",
            ],
            capture_output=True,
            check=False,
        )
        cli.append(time.perf_counter() - begin)
    base = []
    for target in targets[:5]:
        begin = time.perf_counter()
        baseline(args.repo, args.upstream, args.branch, target)
        base.append(time.perf_counter() - begin)

    print(
        f"repository: {args.repo}; {len(targets)} targets, series sizes "
        f"{min(sizes)}-{max(sizes)} (median {statistics.median(sizes)})"
    )
    print(f"cold: index build {cold_index:.2f} s, then the first resolve {cold_first:.3f} s")
    print(
        f"warm, in process: median {statistics.median(warm) * 1000:.1f} ms per target "
        f"(max {max(warm) * 1000:.1f} ms)"
    )
    added = (statistics.median(warm) - statistics.median(plain)) * 1000
    print(
        "warm, in process, without the symbol finder and suggestions: median "
        f"{statistics.median(plain) * 1000:.1f} ms; they add {added:.1f} ms per target (median)"
    )
    print(
        f"warm, end to end (backportr resolve process): median "
        f"{statistics.median(cli) * 1000:.0f} ms"
    )
    print(
        f"baseline (git log --grep + git blame processes): median "
        f"{statistics.median(base):.2f} s per target"
    )
    print(
        f"ratio warm in-process / baseline: {statistics.median(warm) / statistics.median(base):.4f}"
    )
    print(f"ratio end-to-end / baseline: {statistics.median(cli) / statistics.median(base):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
