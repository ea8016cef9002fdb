#!/usr/bin/env python3
"""The plainest scan that answers "which fixes does this stable branch lack": the baseline of
benchmarks/bench_scan.py.

    python benchmarks/naive_scan.py REPO UPSTREAM BRANCH

One `git log` over upstream since the branch's fork, one over the branch's own commits; every
`Fixes:` id resolved against the upstream ids by prefix; a fix is missing when one of its
culprits is in the branch (before the fork, or named by a backport's upstream reference) and
the fix itself is not named by any backport. Prints the missing fixes, oldest first.
"""

from __future__ import annotations

import bisect
import re
import subprocess
import sys
from pathlib import Path

_FIXES = re.compile(r"^\s*fixes:\s*([0-9a-f]{6,40})", re.IGNORECASE | re.MULTILINE)
_UPSTREAM = re.compile(
    r"(?:upstream|cherry.picked from|backported from|master commit).*?\b([0-9a-f]{40})\b", re.I
)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(repo), *args],
        capture_output=True,
        text=True,
        check=True,
        errors="replace",
    ).stdout


def log(repo: Path, revisions: list[str]) -> list[tuple[str, str]]:
    out = git(repo, "log", "--format=%x01%H%x00%B", *revisions, "--")
    records = []
    for record in out.split("\x01")[1:]:
        oid, _, body = record.partition("\x00")
        records.append((oid, body))
    return records


def missing_fixes(repo: Path, upstream: str, branch: str) -> list[str]:
    fork = git(repo, "merge-base", upstream, branch).strip()
    after = log(repo, [f"{fork}..{upstream}"])
    after_ids = {oid for oid, _ in after}
    every = sorted(git(repo, "rev-list", upstream).split())
    carried = {
        m.group(1) for _, body in log(repo, [f"{fork}..{branch}"]) for m in _UPSTREAM.finditer(body)
    }

    def resolve(prefix: str) -> str | None:
        i = bisect.bisect_left(every, prefix)
        hits = every[i : i + 2]
        hits = [h for h in hits if h.startswith(prefix)]
        return hits[0] if len(hits) == 1 else None

    missing = []
    for oid, body in reversed(after):
        if oid in carried:
            continue
        for ref in _FIXES.findall(body):
            culprit = resolve(ref.lower())
            if culprit and (culprit not in after_ids or culprit in carried):
                missing.append(oid)
                break
    return missing


def missing_fixes_per_id(repo: Path, upstream: str, branch: str) -> list[str]:
    """The same question asked as a shell loop asks it: the same `git log`s, then a git
    process for every `Fixes:` id (`rev-parse`) and one for every culprit no backport names
    (`merge-base --is-ancestor`, which walks the history each time: most of its cost where
    git keeps no commit-graph). The same answer as `missing_fixes`."""
    fork = git(repo, "merge-base", upstream, branch).strip()
    after = log(repo, [f"{fork}..{upstream}"])
    carried = {
        m.group(1) for _, body in log(repo, [f"{fork}..{branch}"]) for m in _UPSTREAM.finditer(body)
    }
    missing = []
    for oid, body in reversed(after):
        if oid in carried:
            continue
        for ref in _FIXES.findall(body):
            culprit = subprocess.run(
                ["git", "--git-dir", str(repo), "rev-parse", "--verify", "-q", f"{ref}^{{commit}}"],
                capture_output=True,
                text=True,
            ).stdout.strip()
            if culprit and (
                culprit in carried
                or subprocess.run(
                    ["git", "--git-dir", str(repo), "merge-base", "--is-ancestor", culprit, branch],
                    capture_output=True,
                ).returncode
                == 0
            ):
                missing.append(oid)
                break
    return missing


def main() -> int:
    repo, upstream, branch = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    for oid in missing_fixes(repo, upstream, branch):
        print(oid)
    return 0


if __name__ == "__main__":
    sys.exit(main())
