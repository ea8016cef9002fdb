#!/usr/bin/env python3
"""Every conflict a scan reports, checked by `git cherry-pick`.

    python benchmarks/scan_vs_git.py REPO SCAN.json [--branch B] [--paths PREFIX]

SCAN.json is `backportr scan --format json`'s output. For each finding whose series has a
member marked `conflict`, the series up to and including that member is cherry-picked in
order (`git cherry-pick --no-commit`, each pick committed before the next; an earlier one
that conflicts is taken as its own side, as the trial takes it) in a detached worktree at
the branch tip, made in a temporary directory and removed at the end. The member is
confirmed when git conflicts on it; where git applies it, the scan reported a conflict that
git does not. Prints the counts and every unconfirmed conflict.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from scratchgit import git


def git_conflicts(worktree: Path, tip: str, series: list[str]) -> bool:
    """Does git's cherry-pick of the last commit of `series` conflict, the earlier ones
    picked before it, each conflicting one taken as its own side (as the trial takes it)?"""
    git(worktree, "reset", "-q", "--hard", tip)
    git(worktree, "clean", "-qfdx")
    for commit in series:
        if git(worktree, "cherry-pick", "--no-commit", commit, check=False).returncode != 0:
            if commit == series[-1]:
                return True
            unmerged = git(worktree, "diff", "--name-only", "--diff-filter=U").stdout.split()
            for path in unmerged:
                if git(worktree, "checkout", "--theirs", "--", path, check=False).returncode:
                    git(worktree, "rm", "-q", "--", path, check=False)
            git(worktree, "add", "-A")
        git(worktree, "commit", "-q", "--allow-empty", "-m", commit, check=False)
    return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("scan", type=Path)
    parser.add_argument("--branch", help="only this branch of the report")
    parser.add_argument("--paths", default="", help="only conflicts in files under this prefix")
    args = parser.parse_args()
    report = json.loads(args.scan.read_text())
    tips = {b["name"]: b["tip"] for b in report["run"]["branches"]}
    checked = confirmed = 0
    unconfirmed = []
    for branch in report["branches"]:
        name = branch["branch"]
        if args.branch and name != args.branch:
            continue
        with tempfile.TemporaryDirectory(prefix="scan-vs-git-") as scratch:
            worktree = Path(scratch) / "wt"
            git(args.repo, "worktree", "add", "-q", "--detach", str(worktree), tips[name])
            try:
                for finding in branch["findings"]:
                    series = [m["commit"] for m in finding["series"]]
                    for k, member in enumerate(finding["series"]):
                        if member["apply"] != "conflict":
                            continue
                        files = member["conflict_files"]
                        if args.paths and not any(f.startswith(args.paths) for f in files):
                            continue
                        checked += 1
                        if git_conflicts(worktree, tips[name], series[: k + 1]):
                            confirmed += 1
                        else:
                            unconfirmed.append((name, finding["commit"], member["commit"]))
            finally:
                git(args.repo, "worktree", "remove", "--force", str(worktree), check=False)
    print(f"conflicts reported: {checked}, confirmed by git cherry-pick: {confirmed}")
    for name, finding, member in unconfirmed:
        print(f"  not confirmed: {name} {finding[:12]} member {member[:12]}: git applies it")
    return 0 if not unconfirmed else 4


if __name__ == "__main__":
    sys.exit(main())
