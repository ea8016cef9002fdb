#!/usr/bin/env python3
"""Index build, incremental update and warm queries against plain git, on one repository.

    python benchmarks/generate.py /tmp/big                 # once: 300,000 + 20,000 commits
    python benchmarks/bench_index.py /tmp/big [--branch linux-5.10.y] [--queries 50] [--runs 1]

Reports, side by side on the same repository:
- full index build vs `git log --format=%H%x00%B` over the same commits (`--runs` of each, in
  turn: the fastest of each, and the ratio of the medians);
- an incremental update after 1,000 new upstream commits (in a scratch clone sharing objects);
- "who fixes X" and "is U in B" from the warm index vs `git log --grep` on the same refs.
Prints a table and the ratios; --json FILE keeps the figures.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

from installed import BACKPORTR
from scratchgit import scratch_dir

from backportr.index.presence import PresenceChecker
from backportr.resolve.workspace import open_workspace
from backportr.settings import Settings

HERE = Path(__file__).resolve().parent


def timed(command: list[str], **kw: object) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    start = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, check=True, **kw)  # type: ignore[call-overload]
    return time.perf_counter() - start, proc


def longest_git_process(trace: Path) -> tuple[float, str]:
    """The longest git process in a GIT_TRACE2_EVENT file: (seconds, its command line)."""
    argv: dict[str, str] = {}
    longest = (0.0, "")
    for line in trace.read_text(errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        sid = str(event.get("sid", ""))
        if event.get("event") == "start":
            argv[sid] = " ".join(event.get("argv", []))[:80]
        elif event.get("event") == "exit" and "/" not in sid:  # a top-level process
            longest = max(longest, (float(event.get("t_abs", 0.0)), argv.get(sid, "?")))
    return longest


def main() -> int:
    parser = argparse.ArgumentParser(description="Benchmark the commit index against git.")
    parser.add_argument("repo", type=Path)
    parser.add_argument("--upstream", default="master")
    parser.add_argument("--branch", default="linux-5.10.y")
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--append", type=int, default=1000)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--runs",
        type=int,
        default=3,
        help="full builds and raw logs, in turn; the table takes the fastest of each (1 at "
        "kernel scale: a build there is minutes)",
    )
    args = parser.parse_args()
    repo_path: Path = args.repo
    figures: dict[str, float] = {}
    scratch = scratch_dir("backportr-bench-")
    index_file = scratch / "index.sqlite"
    git = ["git", "--git-dir", str(repo_path)]
    count = int(
        subprocess.run(
            [*git, "rev-list", "--count", args.upstream, args.branch],
            capture_output=True,
            check=True,
        ).stdout
    )
    print(f"repository: {repo_path} ({count} commits on {args.upstream} and {args.branch})")

    # 1. full build vs one git log pass over the same commits, `--runs` times each, in turn
    raw_log = [*git, "log", "--format=%H%x00%B", args.upstream, args.branch]
    cli = [
        *BACKPORTR,
        "index",
        "--repo",
        str(repo_path),
        "--upstream",
        args.upstream,
        "--branch",
        args.branch,
        "--index",
        str(index_file),
    ]
    trace = scratch / "trace2.json"
    logs, builds = [], []
    for run in range(args.runs):
        logs.append(timed(raw_log)[0])
        if run == 0:  # the first build traced: its longest git process
            builds.append(timed(cli, env={**os.environ, "GIT_TRACE2_EVENT": str(trace)})[0])
        else:  # into an index of its own (the first one's serves the questions below)
            builds.append(timed([*cli[:-1], str(scratch / f"build-{run}.sqlite")])[0])
    figures["git_log"], figures["index_build"] = min(logs), min(builds)
    if args.runs > 1:
        print(
            "full builds: "
            + ", ".join(f"{b:.2f} s" for b in builds)
            + "; raw logs: "
            + ", ".join(f"{g:.2f} s" for g in logs)
            + f"; ratio of the medians {statistics.median(builds) / statistics.median(logs):.2f}"
            + " (the table: the fastest of each)"
        )
    figures["longest_git_process"], longest = longest_git_process(trace)
    print(f"longest git process of the build: {figures['longest_git_process']:.1f} s ({longest})")

    # 2. incremental update after N new upstream commits, in a clone sharing the objects: the
    # index is built with upstream N first-parent commits back, then upstream moves to its tip
    clone = scratch / "clone.git"
    subprocess.run(
        ["git", "clone", "-q", "--bare", "--shared", str(repo_path), str(clone)], check=True
    )
    cgit = ["git", "--git-dir", str(clone)]
    tip = subprocess.run(
        [*cgit, "rev-parse", args.upstream], capture_output=True, text=True, check=True
    ).stdout.strip()
    back = subprocess.run(
        [*cgit, "rev-list", "--first-parent", f"--skip={args.append}", "-1", tip],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    subprocess.run([*cgit, "update-ref", f"refs/heads/{args.upstream}", back], check=True)
    incremental_index = scratch / "incremental.sqlite"
    cli_clone = [*cli[: len(BACKPORTR) + 1], "--repo", str(clone)]
    cli_clone += [*cli[len(BACKPORTR) + 3 : -1], str(incremental_index)]
    timed(cli_clone)
    subprocess.run([*cgit, "update-ref", f"refs/heads/{args.upstream}", tip], check=True)
    added = subprocess.run(
        [*cgit, "rev-list", "--count", tip, f"^{back}"], capture_output=True, text=True, check=True
    ).stdout.strip()
    print(f"incremental: {added} upstream commits new since the index was built")
    figures["index_incremental"], _ = timed(cli_clone)
    figures["index_noop"], _ = timed(cli_clone)

    # 3. warm queries: who fixes X, is U in B, on the index as a command opens it (with the
    # fix phrases the build learned: opened with others, it would be built again)
    stack = contextlib.ExitStack()
    settings = Settings(
        repo=repo_path, upstream=args.upstream, branches=(args.branch,), index_path=index_file
    )
    ws = stack.enter_context(open_workspace(settings))
    repo, index = ws.repo, ws.index
    branch = repo.branch(args.branch)
    fixed = [
        r[0]
        for r in index.db.execute(
            "SELECT target FROM fixes WHERE target IS NOT NULL GROUP BY target LIMIT 2000"
        )
    ]
    rng = random.Random(7)
    sample = rng.sample(fixed, min(args.queries, len(fixed)))
    after_fork = [
        r[0]
        for r in index.db.execute(
            "SELECT c.oid FROM after_fork a JOIN commits c ON c.id=a.commit_id WHERE a.refname=? "
            "LIMIT 5000",
            (branch.refname,),
        )
    ]
    upstream_sample = rng.sample(after_fork, min(args.queries, len(after_fork)))

    def per_query(fn, items) -> float:  # type: ignore[no-untyped-def]
        times = []
        for item in items:
            start = time.perf_counter()
            fn(item)
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    figures["who_fixes_index"] = per_query(index.reader.fixed_by, sample)
    figures["who_fixes_git"] = per_query(
        lambda x: subprocess.run(
            [*git, "log", "--format=%H", f"--grep=Fixes: {x[:12]}", args.upstream],
            capture_output=True,
            check=True,
        ),
        sample[: max(3, args.queries // 10)],
    )
    figures["is_in_index"] = per_query(
        lambda u: PresenceChecker(repo, index).check(u, branch), upstream_sample
    )
    figures["is_in_git"] = per_query(
        lambda u: subprocess.run(
            [*git, "log", "--format=%H", f"--grep={u}", args.branch],
            capture_output=True,
            check=True,
        ),
        upstream_sample[: max(3, args.queries // 10)],
    )
    figures["status_cli"], _ = timed(
        [
            *BACKPORTR,
            "status",
            upstream_sample[0],
            "--repo",
            str(repo_path),
            "--upstream",
            args.upstream,
            "-b",
            args.branch,
            "--index",
            str(index_file),
        ]
    )
    stack.close()

    rows = [
        (
            "full index build",
            figures["index_build"],
            "git log --format=%H%x00%B",
            figures["git_log"],
        ),
        (
            f"incremental update (+{args.append} commits)",
            figures["index_incremental"],
            "full index build",
            figures["index_build"],
        ),
        (
            "update with nothing new",
            figures["index_noop"],
            "full index build",
            figures["index_build"],
        ),
        (
            "who fixes X (warm index)",
            figures["who_fixes_index"],
            "git log --grep='Fixes: X'",
            figures["who_fixes_git"],
        ),
        (
            "is U in B (warm index)",
            figures["is_in_index"],
            "git log --grep=U B",
            figures["is_in_git"],
        ),
    ]
    print(f"\n{'measure':<36} {'backportr':>12} {'baseline':<28} {'baseline':>10} {'ratio':>10}")
    for name, ours, base_name, base in rows:
        ratio = ours / base if base else float("nan")
        print(f"{name:<36} {fmt(ours):>12} {base_name:<28} {fmt(base):>10} {ratio:>10.4f}")
    print(
        f"\nbackportr status end to end (process start, index check, answer): "
        f"{fmt(figures['status_cli'])}"
    )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


def fmt(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms" if seconds < 1 else f"{seconds:.2f} s"


if __name__ == "__main__":
    sys.exit(main())
