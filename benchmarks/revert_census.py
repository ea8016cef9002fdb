#!/usr/bin/env python3
"""How a project's upstream reverts end: which reverted commits' changes stand at the tip again.

    python benchmarks/revert_census.py /path/to/repo.git --upstream master [--list]

For every commit an upstream commit says it reverts (`This reverts commit X`): is the change
of X standing at the upstream tip (a cherry-pick of X there would change nothing, the test
`deps.fixes.stands_upstream` makes), and is that because the revert was itself reverted, or
because a later commit re-landed it? Also counts the commits with a `Fixes:` that upstream
reverted (the follow-ups the closure leaves out where a branch lacks them): the figures
behind docs/accuracy.md's follow-up rules.
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

from backportr.errors import BackportrError
from backportr.git.repo import Repo
from backportr.git.trial import TreeState, TrialApplier
from backportr.model import Oid
from backportr.text.trailers import parse_message


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--upstream", default="master")
    parser.add_argument("--list", action="store_true", help="name the re-landed commits")
    args = parser.parse_args()
    log = subprocess.run(
        ["git", "--git-dir", str(args.repo), "log", "--format=%H%x00%B%x01", args.upstream],
        capture_output=True,
        text=True,
        errors="replace",
        check=True,
    ).stdout
    repo = Repo(args.repo)
    tip = repo.names.resolve_commit(args.upstream)
    reverted: dict[Oid, list[str]] = {}  # reverted commit -> its reverts
    with_fixes: set[str] = set()
    for record in log.split("\x01"):
        oid, _, message = record.strip().partition("\x00")
        if not oid:
            continue
        parsed = parse_message(message, trailers=False)  # the index's own reading
        if parsed.fixes:
            with_fixes.add(oid)
        for named in parsed.reverts:
            try:
                target = repo.names.resolve_commit(named)
            except BackportrError:  # an id that names nothing here, or several
                continue
            reverted.setdefault(target, []).append(oid)
    applier = TrialApplier(repo)
    standing = [c for c in reverted if applier.pick(c, TreeState(Oid(tip))).result == "empty"]
    relanded = [c for c in standing if not any(r in reverted for r in reverted[c])]
    print(f"{args.repo}: {len(reverted)} commits reverted upstream")
    print(f"  change standing at {args.upstream}'s tip: {len(standing)}")
    print(f"    of which not by a revert of the revert (re-landed): {len(relanded)}")
    print(f"  commits with a Fixes: ({len(with_fixes)}) reverted upstream: "
          f"{len(with_fixes & set(reverted))}")  # fmt: skip
    if args.list:
        for commit in relanded:
            print(f"    {commit[:12]} reverted by {', '.join(r[:12] for r in reverted[commit])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
