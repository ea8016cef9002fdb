"""`backportr cves` at scale: records in the kernel CVE team's format for the `Fixes:` pairs
of a generated repository (benchmarks/generate.py), then `cves` timed beside `scan` on the
same branch, and an increment of new records with `--state` (docs/cves.md).

    python benchmarks/cve_scale.py /tmp/big --records 5000 --increment 50
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from scratchgit import scratch_dir

from tests.cve_records import write_record


def fixes_pairs(repo: Path) -> list[tuple[str, str, str]]:
    """(culprit, fix, subject) of every upstream commit whose Fixes: names one it has."""
    out = subprocess.run(
        ["git", "-C", str(repo), "log", "--format=%H%x00%s%x00%b%x01", "master"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    short: list[tuple[str, str, str]] = []
    for record in out.split("\x01"):
        if "\x00" not in record:
            continue
        oid, subject, body = record.strip("\n").split("\x00", 2)
        for line in body.splitlines():
            if line.startswith("Fixes: "):
                short.append((line.split()[1], oid, subject))
                break
    names = "".join(f"{s}\n" for s, _, _ in short)
    found = subprocess.run(
        ["git", "-C", str(repo), "cat-file", "--batch-check=%(objectname) %(objecttype)"],
        input=names, capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    return [
        (line.split()[0], fix, subject)
        for line, (_, fix, subject) in zip(found, short, strict=True)
        if line.endswith(" commit")
    ]


def timed(argv: list[str]) -> float:
    began = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode not in (0, 4):
        raise SystemExit(f"{argv[:4]}: exit {proc.returncode}: {proc.stderr[-500:]}")
    return time.monotonic() - began


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("repo", type=Path)
    parser.add_argument("--records", type=int, default=5000)
    parser.add_argument("--increment", type=int, default=50)
    parser.add_argument("--branch", default="linux-5.10.y")
    args = parser.parse_args()
    pairs = fixes_pairs(args.repo)
    random.Random(1).shuffle(pairs)
    chosen = pairs[: args.records + args.increment]
    print(f"{len(pairs)} Fixes: pairs; {len(chosen)} records", flush=True)
    work = scratch_dir("cves-")
    records, state = work / "vulns", work / "state.sqlite"
    for n, (culprit, fix, subject) in enumerate(chosen[: args.records]):
        write_record(records, f"CVE-2025-{n + 10000}", subject, [(culprit, fix)], fix)
    cli = [sys.executable, "-m", "backportr"]
    common = ["--repo", str(args.repo), "-b", args.branch, "-q"]
    timed([*cli, "index", "--repo", str(args.repo), "-b", args.branch, "-q"])
    scan = timed([*cli, "scan", *common])
    cves = timed([*cli, "cves", "--records", str(records), "--state", str(state), *common])
    for n, (culprit, fix, subject) in enumerate(chosen[args.records :]):
        write_record(records, f"CVE-2026-{n + 10000}", subject, [(culprit, fix)], fix)
    increment = timed([*cli, "cves", "--records", str(records), "--state", str(state), *common])
    ratio = cves / scan
    print(f"scan {scan:.1f} s; cves over {args.records} records {cves:.1f} s ({ratio:.2f}x scan)")
    print(f"+{args.increment} records with --state: {increment:.1f} s")


if __name__ == "__main__":
    main()
