#!/usr/bin/env python3
"""libgit2's three-way file merge beside git's, on random files of repeated lines.

    python benchmarks/merge_fuzz.py [--seed S] [--count N] [--distinct]

The trial merges a file with libgit2's `merge_file` (Myers diff) and, where that conflicts,
asks git (`git.merge.merge_file`: merge-ort, histogram diff), whose answer is the one. This
measures how often the two disagree, each way, on files built from a dozen common lines
(braces, blank lines, `return 0;`, test macros): the repetition that makes the two diffs
align an edit differently. Each case is a base of 20-120 such lines and two sides with one to
four random insertions, deletions or replacements. Prints the counts: libgit2 conflicts and
git merges, libgit2 merges and git conflicts, both merge to different files; and how often
the trial's merge (`TrialApplier._merge_file`: git's where libgit2 conflicts or the two
sides' changes lie within `_CLOSE_LINES`, unless both diffs are forced: `git.forced`) differs
from git's, and how many of the merges the trial asked git for. With `--distinct`, no line
repeats within a file (as in the generated kernel-scale repository), where every diff of a
few changes is forced.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from typing import Any

import pygit2

from backportr.git.merge import merge_file
from backportr.git.repo import Repo
from backportr.git.trial import TrialApplier

LINES = (
    "{", "}", "", "int x;", "return 0;", "foo();", "bar();", "if (a)", "else",
    "AT_CHECK([ovn-nbctl])", "])", "OVS_WAIT_UNTIL([test 1])",
)  # fmt: skip


def mutate(rng: random.Random, lines: list[str], line: Callable[[], str]) -> list[str]:
    out = list(lines)
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(out) + 1)
        roll = rng.random()
        if roll < 0.4:
            out[at:at] = [line() for _ in range(rng.randint(1, 4))]
        elif roll < 0.7 and out:
            del out[at : at + rng.randint(1, 3)]
        elif out:
            out[at : at + 1] = [f"{line()} /*{rng.randint(0, 9)}*/"]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=4000)
    parser.add_argument("--distinct", action="store_true", help="no line repeats in a file")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    seen: Counter[str] = Counter()
    made = iter(range(sys.maxsize))

    def line() -> str:
        if args.distinct:
            return f"int v{next(made)} = {rng.randint(0, 9)};"
        return rng.choice(LINES)

    with tempfile.TemporaryDirectory(prefix="merge-fuzz-") as scratch:
        repo = pygit2.init_repository(scratch, bare=True)
        trial = TrialApplier(Repo(scratch))
        asked = trial.repo.merge_file

        def ask(*given: Any) -> pygit2.Oid | None:
            seen["the trial asked git"] += 1
            return asked(*given)

        trial.repo.merge_file = ask  # type: ignore[method-assign,assignment]
        for _ in range(args.count):
            base = [line() for _ in range(rng.randint(20, 120))]
            sides = (base, mutate(rng, base, line), mutate(rng, base, line))
            blobs = [repo.create_blob("".join(f"{x}\n" for x in side).encode()) for side in sides]
            one, two, three = (
                pygit2.IndexEntry("f.c", b, pygit2.enums.FileMode.BLOB) for b in blobs
            )
            ours = repo.merge_file_from_index(one, two, three)
            git = merge_file(repo, "f.c", (
                (blobs[0], 0o100644), (blobs[1], 0o100644), (blobs[2], 0o100644)), {})  # fmt: skip
            mode = 0o100644
            answer = trial._merge_file("f.c", (blobs[0], mode), (blobs[1], mode), (blobs[2], mode))
            seen["the trial differs from git"] += answer != git
            if not ours.automergeable:
                seen["libgit2 conflicts"] += 1
                seen["libgit2 conflicts, git merges"] += git is not None
                continue
            seen["libgit2 merges"] += 1
            if git is None:
                seen["libgit2 merges, git conflicts"] += 1
            elif repo.create_blob(ours.contents.encode()) != git:
                seen["both merge, different files"] += 1
    print(f"{args.count} merges (seed {args.seed})")
    for what in (
        "libgit2 conflicts",
        "libgit2 conflicts, git merges",
        "libgit2 merges",
        "libgit2 merges, git conflicts",
        "both merge, different files",
        "the trial differs from git",
        "the trial asked git",
    ):
        print(f"  {what}: {seen[what]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
