#!/usr/bin/env python3
"""Every member of every finding a scan reports, picked by `git cherry-pick`.

    python benchmarks/scan_vs_git.py REPO SCAN.json [--branch B] [--paths PREFIX]

SCAN.json is `backportr scan --format json`'s output. Each finding's series is
cherry-picked in order (`git cherry-pick --no-commit`, each pick committed before the next;
one that conflicts is taken as its own side, as the trial takes it) in a detached worktree
at the branch tip, made in a temporary directory and removed at the end. Each member's
`apply` is held to git's outcome: `conflict` where git conflicts, `clean` where it applies
a change, `empty` where it applies none. With `--paths`, only the members that conflict in
files under the prefix are held to it. Prints the counts and every member git answers
otherwise; exits 4 when there is one.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from scratchgit import git


def git_outcomes(worktree: Path, tip: str, series: list[str]) -> list[str]:
    """git's outcome of each commit of `series` picked in order onto `tip`, a conflicting
    one taken as its own side (as the trial takes it): conflict, clean or empty."""
    git(worktree, "reset", "-q", "--hard", tip)
    git(worktree, "clean", "-qfdx")
    outcomes = []
    for commit in series:
        if git(worktree, "cherry-pick", "--no-commit", commit, check=False).returncode != 0:
            outcomes.append("conflict")
            unmerged = git(worktree, "diff", "--name-only", "--diff-filter=U").stdout.split()
            for path in unmerged:
                if git(worktree, "checkout", "--theirs", "--", path, check=False).returncode:
                    git(worktree, "rm", "-q", "--", path, check=False)
            git(worktree, "add", "-A")
        else:
            changed = git(worktree, "diff", "--cached", "--quiet", check=False).returncode
            outcomes.append("clean" if changed else "empty")
        git(worktree, "commit", "-q", "--allow-empty", "-m", commit, check=False)
    return outcomes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("scan", type=Path)
    parser.add_argument("--branch", help="only this branch of the report")
    parser.add_argument("--paths", default="", help="only conflicts in files under this prefix")
    args = parser.parse_args()
    report = json.loads(args.scan.read_text())
    tips = {b["name"]: b["tip"] for b in report["run"]["branches"]}
    checked: dict[str, int] = {}
    agreed: dict[str, int] = {}
    differ = []
    for branch in report["branches"]:
        name = branch["branch"]
        if args.branch and name != args.branch:
            continue
        with tempfile.TemporaryDirectory(prefix="scan-vs-git-") as scratch:
            worktree = Path(scratch) / "wt"
            git(args.repo, "worktree", "add", "-q", "--detach", str(worktree), tips[name])
            try:
                for finding in branch["findings"]:
                    members = finding["series"]
                    outcomes = git_outcomes(worktree, tips[name], [m["commit"] for m in members])
                    for member, theirs in zip(members, outcomes, strict=True):
                        ours = member["apply"]
                        files = member["conflict_files"]
                        if args.paths and not (
                            ours == "conflict" and any(f.startswith(args.paths) for f in files)
                        ):
                            continue
                        checked[ours] = checked.get(ours, 0) + 1
                        if ours == theirs:
                            agreed[ours] = agreed.get(ours, 0) + 1
                        else:
                            differ.append((name, finding["commit"], member["commit"], ours, theirs))
            finally:
                git(args.repo, "worktree", "remove", "--force", str(worktree), check=False)
    for kind in sorted(checked):
        print(f"{kind} members reported: {checked[kind]}, as git: {agreed.get(kind, 0)}")
    for name, finding, member, ours, theirs in differ:
        print(f"  {name} {finding[:12]} member {member[:12]}: reported {ours}, git {theirs}")
    return 0 if not differ else 4


if __name__ == "__main__":
    sys.exit(main())
