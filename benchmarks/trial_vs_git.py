#!/usr/bin/env python3
"""backportr's trial of one commit beside `git cherry-pick` in a scratch worktree.

    python benchmarks/trial_vs_git.py REPO --branch B [--branch B2 ...] [--upstream U]
        [--sample N] [--paths GLOB] [--seed S] [--json out.json]

For N upstream commits (no merges) that are not in the branch, drawn at random (`--seed`)
from `git rev-list U ^B [-- GLOB]` (with several branches, N split evenly among them: N
(commit, branch) pairs), each is picked onto the branch tip twice:
- by backportr's trial (`TrialApplier.pick`), which answers clean, conflict or empty and,
  when clean, a tree;
- by `git cherry-pick --no-commit` in a detached worktree at the branch tip (made in a
  temporary directory, removed at the end; the repository's refs, HEAD, index and work
  tree are never touched): clean when it exits 0 and the result differs from the tip,
  empty when it exits 0 and the tree is the tip's, conflict when it leaves unmerged paths.

It prints the agreement, the confusion matrix (backportr's answer by git's), how many
clean trees are equal, and every pair that disagrees. git is the reference: where the two
disagree, backportr is wrong until shown otherwise.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from scratchgit import git

from backportr.git import trial as apply
from backportr.git.merge import merge_tree_version
from backportr.git.repo import Repo
from backportr.git.trial import TreeState, TrialApplier
from backportr.model import Oid

KINDS = ("clean", "conflict", "empty")


def sample(
    repo: Path, upstream: str, branch: str, paths: str | None, n: int, seed: int
) -> list[Oid]:
    command = ["rev-list", "--no-merges", upstream, f"^{branch}"]
    if paths:
        command += ["--", paths]
    commits = git(repo, *command).stdout.split()
    random.Random(seed).shuffle(commits)
    return [Oid(c) for c in commits[:n]]


def git_pick(worktree: Path, tip: str, commit: str) -> tuple[str, str | None]:
    """git's answer in the scratch worktree, and its tree when it applied."""
    git(worktree, "reset", "-q", "--hard", tip)
    git(worktree, "clean", "-q", "-fdx")
    picked = git(worktree, "cherry-pick", "--no-commit", commit, check=False)
    if picked.returncode != 0:  # unmerged paths, or refused (a file in the way)
        return "conflict", None
    tree = git(worktree, "write-tree").stdout.strip()
    tip_tree = git(worktree, "rev-parse", f"{tip}^{{tree}}").stdout.strip()
    return ("empty" if tree == tip_tree else "clean"), tree


def compare(
    applier: TrialApplier, worktree: Path, branch: str, tip: Oid, commit: Oid
) -> dict[str, object]:
    ours = applier.pick(commit, TreeState(tip))
    our_tree = applier.write_tree(ours.state) if ours.result == "clean" else None
    theirs, their_tree = git_pick(worktree, tip, commit)
    return {
        "commit": commit,
        "branch": branch,
        "backportr": ours.result,
        "git": theirs,
        "same_tree": None if our_tree is None else our_tree == their_tree,
        "conflict_files": list(ours.conflict_files),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--branch", required=True, action="append")
    parser.add_argument("--upstream", default="origin/main")
    parser.add_argument("--sample", type=int, default=30)
    parser.add_argument("--paths", help="only commits touching this pathspec (a glob)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="write every pair's answers here")
    parser.add_argument(
        "--in-memory-only",
        action="store_true",
        help="the file-by-file engine alone, as with a git older than 2.38 (no renames)",
    )
    args = parser.parse_args()
    if args.in_memory_only:
        apply.merge_tree_version = lambda: None  # type: ignore[attr-defined, assignment]

    repo = Repo(args.repo)
    applier = TrialApplier(repo)
    rows: list[dict[str, object]] = []
    started = time.monotonic()
    for branch in args.branch:
        tip = repo.branch(branch).tip
        count = args.sample // len(args.branch)
        commits = sample(args.repo, args.upstream, branch, args.paths, count, args.seed)
        with tempfile.TemporaryDirectory(prefix="trial-vs-git-") as scratch:
            worktree = Path(scratch) / "wt"
            git(args.repo, "worktree", "add", "-q", "--detach", str(worktree), tip)
            try:
                rows += [compare(applier, worktree, branch, tip, c) for c in commits]
            finally:
                git(args.repo, "worktree", "remove", "--force", str(worktree), check=False)
    report(args, rows, time.monotonic() - started)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


def report(args: argparse.Namespace, rows: list[dict[str, object]], seconds: float) -> None:
    agree = sum(r["backportr"] == r["git"] for r in rows)
    matrix = Counter((r["backportr"], r["git"]) for r in rows)
    both_clean = [r for r in rows if r["same_tree"] is not None and r["git"] == "clean"]
    engine = None if args.in_memory_only else merge_tree_version()
    print(
        f"{args.repo} {' '.join(args.branch)} ({args.paths or 'any path'}), {len(rows)} pairs, "
        f"engine: {'git merge-tree ' + engine + ' for moved paths' if engine else 'in-memory only'}"
    )
    print(f"agreement: {agree}/{len(rows)}  ({seconds:.0f} s)")
    print("backportr \\ git  " + "".join(f"{k:>10}" for k in KINDS))
    for ours in KINDS:
        print(f"{ours:<17}" + "".join(f"{matrix[(ours, theirs)]:>10}" for theirs in KINDS))
    same = sum(bool(r["same_tree"]) for r in both_clean)
    print(f"both clean, same tree: {same}/{len(both_clean)}")
    for r in rows:
        if r["backportr"] != r["git"] or r["same_tree"] is False:
            print(
                f"  differs: {str(r['commit'])[:12]} backportr {r['backportr']}, git {r['git']}"
                + ("" if r["same_tree"] is not False else ", trees differ")
            )


if __name__ == "__main__":
    sys.exit(main())
