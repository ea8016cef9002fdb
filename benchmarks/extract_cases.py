#!/usr/bin/env python3
"""Extract real backport cases from a repository's stable branches, in the format of
../shared/data/real-cases/ (see its README), so that `eval_real.py --cases` can score a
project beyond the three shared ones.

    python benchmarks/extract_cases.py REPO --upstream main --branch 21.11 --branch 22.11 \\
        --per-kind 30 --out cases.jsonl.gz

Each stable commit that names its upstream commit (`[ upstream commit X ]`, `commit X
upstream.`, `(cherry picked from commit X)`, ...) is one case (with `--by-subject`, also one
that names none and has the subject and author of exactly one upstream commit since the
fork), classified from the branch's own history, first rule that holds:

- `fixes_chain`: a culprit the target names in `Fixes:` was neither in the fork nor
  backported before the target, and was backported earlier on the same branch: `before` is
  the stable commit before the culprit's backport; the series is the culprit, the target;
- `followup`: later backports on the branch name the target in `Fixes:`: the series is the
  target, then those follow-ups in the branch's order;
- `adjusted`: the backport's changed lines (`+`/`-`, context and line numbers aside)
  differ from the upstream commit's: the maintainers edited it;
- `prereq`: the upstream commit does not merge cleanly (an in-memory three-way merge, as a
  cherry-pick does) onto the stable commit three or fewer backports before it, and does onto
  the one just before it: the series is the backports in between that touch the target's
  files, then the target; `before` is the stable commit before the first of them;
- `single`: the rest (clean at `before`, every culprit present).

Cases run oldest first per branch; `--per-kind` keeps a seeded random sample of each kind.
"""

from __future__ import annotations

import argparse
import bisect
import gzip
import json
import random
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pygit2

from backportr.text.trailers import parse_message

UPSTREAM_REF = re.compile(
    rb"^\s*(?:\[\s*upstream commit ([0-9a-f]{12,40})\s*\]"
    rb"|commit ([0-9a-f]{12,40}) upstream\.?"
    rb"|\(cherry picked from commit ([0-9a-f]{12,40})\)"
    rb"|master commit:? ([0-9a-f]{12,40}))\s*$",
    re.IGNORECASE | re.MULTILINE,
)
FIXES = re.compile(rb"^Fixes:\s*([0-9a-f]{8,40})\b", re.IGNORECASE | re.MULTILINE)
PREREQ_DEPTH = 3


class Upstream:
    """The upstream history's ids, for prefix lookups and ancestry by position."""

    def __init__(self, repo: pygit2.Repository, tip: pygit2.Oid) -> None:
        walker = repo.walk(tip, pygit2.enums.SortMode.TOPOLOGICAL)
        self.ids = sorted(str(c.id) for c in walker)
        self.members = set(self.ids)

    def resolve(self, prefix: str) -> str | None:
        at = bisect.bisect_left(self.ids, prefix)
        hits = [i for i in self.ids[at : at + 2] if i.startswith(prefix)]
        return hits[0] if len(hits) == 1 else None


def changed_lines(repo: pygit2.Repository, commit: pygit2.Commit) -> list[tuple[str, str]]:
    """The commit's `+`/`-` lines per file, in order: what the patch changes, whatever its
    context and position."""
    if not commit.parents:
        return []
    diff = repo.diff(commit.parents[0], commit, context_lines=0)
    diff.find_similar()
    out = []
    for patch in diff:
        if patch is None:
            continue
        path = patch.delta.new_file.path
        for hunk in patch.hunks:
            for line in hunk.lines:
                if line.origin in "+-":
                    out.append((path, line.origin + line.content.strip()))
    return out


def files_of(repo: pygit2.Repository, commit: pygit2.Commit) -> set[str]:
    if not commit.parents:
        return set()
    diff = repo.diff(commit.parents[0], commit)
    return {d.new_file.path for d in diff.deltas} | {d.old_file.path for d in diff.deltas}


def merges_cleanly(repo: pygit2.Repository, commit: pygit2.Commit, onto: pygit2.Commit) -> bool:
    if not commit.parents:
        return False
    index = repo.merge_trees(commit.parents[0].tree, onto.tree, commit.tree)
    return not index.conflicts


def by_subject(
    repo: pygit2.Repository, up_tip: pygit2.Oid, fork: pygit2.Oid
) -> dict[tuple[str, str], list[str]]:
    """Upstream's commits since the fork by (subject, author email): the original of a
    backport cherry-picked without `-x` (Open vSwitch's branches name none)."""
    walker = repo.walk(up_tip, pygit2.enums.SortMode.TOPOLOGICAL)
    walker.hide(fork)
    found: dict[tuple[str, str], list[str]] = {}
    for c in walker:
        if len(c.parents) == 1:
            subject = c.message.split("\n", 1)[0].strip()
            found.setdefault((subject, c.author.email.lower()), []).append(str(c.id))
    return found


def extract(
    repo: pygit2.Repository,
    upstream_ref: str,
    branch: str,
    every_form: bool = False,
    subjects: bool = False,
) -> list[dict[str, object]]:
    up_tip = repo.revparse_single(upstream_ref).peel(pygit2.Commit)
    br_tip = repo.revparse_single(branch).peel(pygit2.Commit)
    upstream = Upstream(repo, up_tip.id)
    fork = repo.merge_base(up_tip.id, br_tip.id)
    # Every commit of the branch, those merged in too (a branch whose backports arrive as
    # pull requests); the state a backport met is its first parent's.
    walker = repo.walk(br_tip.id, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    walker.hide(fork)
    stable = [c for c in walker if len(c.parents) == 1]
    originals = by_subject(repo, up_tip.id, fork) if subjects else {}
    origin: list[str | None] = []
    for c in stable:
        match = UPSTREAM_REF.search(c.raw_message)
        named = next((g for g in match.groups() if g), None) if match else None
        if named is None and subjects:  # no reference line: the one upstream commit alike
            key = (c.message.split("\n", 1)[0].strip(), c.author.email.lower())
            alike = originals.get(key, [])
            origin.append(alike[0] if len(alike) == 1 else None)
            continue
        origin.append(upstream.resolve(named.decode()) if named else None)
    position = {u: i for i, u in enumerate(origin) if u is not None}

    def reaches(state: pygit2.Oid, j: int) -> bool:
        """Is stable[j] in the branch at `state`?"""
        return state == stable[j].id or repo.descendant_of(state, stable[j].id)

    def present(culprit: str, state: pygit2.Oid) -> bool:
        """In the branch at `state`: in the fork, or backported before it."""
        if culprit in position and reaches(state, position[culprit]):
            return True
        return repo.descendant_of(fork, culprit) or str(fork) == culprit

    def culprits(commit: pygit2.Commit) -> list[str]:
        found = []
        if every_form:  # every form of backportr's vocabulary (text/relation_forms.py)
            named = [f.ref for f in parse_message(commit.message).fixes]
        else:
            named = [prefix.decode().lower() for prefix in FIXES.findall(commit.raw_message)]
        for prefix in named:
            full = upstream.resolve(prefix)
            if full is not None:
                found.append(full)
        return found

    fixers: dict[str, list[int]] = {}
    for i, u in enumerate(origin):
        if u is not None:
            for culprit in culprits(repo[u].peel(pygit2.Commit)):
                fixers.setdefault(culprit, []).append(i)

    def case(
        i: int, kind: str, before: pygit2.Oid, series: list[str], ups: list[int]
    ) -> dict[str, object]:
        target = origin[i]
        assert target is not None
        commit = repo[target].peel(pygit2.Commit)
        return {
            "branch": branch,
            "target": target,
            "target_subject": commit.message.splitlines()[0] if commit.message else "",
            "target_backport": str(stable[i].id),
            "kind": kind,
            "before": str(before),
            "series": series,
            "stable_commits": [str(stable[j].id) for j in ups],
            "files": sorted(files_of(repo, commit)),
            "fixes": [
                {"id": c, "status": "in_base" if present(c, before) else "absent"}
                for c in culprits(commit)
            ],
            "repo": str(Path(repo.path).resolve()),
        }

    cases = []
    for i, target in enumerate(origin):
        if target is None:
            continue
        commit = repo[target].peel(pygit2.Commit)
        before = stable[i].parents[0].id
        absent = [c for c in culprits(commit) if not present(c, before)]
        chain = [
            c
            for c in culprits(commit)
            if c in position and reaches(before, position[c]) and not repo.descendant_of(fork, c)
        ]
        if chain and not absent:
            k = position[chain[0]]
            cases.append(
                case(i, "fixes_chain", stable[k].parents[0].id, [chain[0], target], [k, i])
            )
            continue
        if absent:
            continue  # the maintainers took it without its culprit: no ground truth
        later = sorted(j for j in fixers.get(target, []) if j > i)
        if later:
            series = [target] + [origin[j] for j in later]
            cases.append(case(i, "followup", before, known(series), [i, *later]))
            continue
        try:
            if changed_lines(repo, stable[i]) != changed_lines(repo, commit):
                cases.append(case(i, "adjusted", before, [target], [i]))
                continue
            if not merges_cleanly(repo, commit, repo[before].peel(pygit2.Commit)):
                continue  # applied as is onto a state it does not merge with: unclear
            prereq = _prereq(repo, commit, stable, origin, i, reaches)
        except (KeyError, pygit2.GitError):
            continue  # an object the copy lacks (a snapshot without its largest blobs)
        if prereq is not None:
            first, members = prereq
            series = [origin[j] for j in members] + [target]
            first_state = stable[first].parents[0].id
            cases.append(case(i, "prereq", first_state, known(series), [*members, i]))
            continue
        cases.append(case(i, "single", before, [target], [i]))
    return cases


def known(series: list[str | None]) -> list[str]:
    """The series of a case whose members all name their upstream commit."""
    assert all(series), series
    return [c for c in series if c]


def _prereq(
    repo: pygit2.Repository,
    commit: pygit2.Commit,
    stable: list[pygit2.Commit],
    origin: list[str | None],
    i: int,
    reaches: Callable[[pygit2.Oid, int], bool],
) -> tuple[int, list[int]] | None:
    """(first position, the backports between that touch the target's files) when the target
    merges onto the state it met but not onto the state a few backports earlier (the
    backports in the branch at that state, merged ones too)."""
    files = files_of(repo, commit)
    before = stable[i].parents[0].id
    # the last PREREQ_DEPTH backports in the branch at `before`, newest first
    earlier: list[int] = []
    for j in range(i - 1, -1, -1):
        if len(earlier) == PREREQ_DEPTH:
            break
        if reaches(before, j):
            earlier.append(j)
    for first in earlier:
        state = stable[first].parents[0]
        if not merges_cleanly(repo, commit, state):
            members = [
                j
                for j in sorted(earlier)
                if j >= first and origin[j] is not None and files_of(repo, stable[j]) & files
            ]
            return (first, members) if members and members[0] == first else None
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--branch", action="append", required=True)
    parser.add_argument("--per-kind", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--every-form",
        action="store_true",
        help="a culprit is named by any form of backportr's vocabulary (Follow-up for, ...), "
        "not by Fixes: alone (a project whose fix lines are not Fixes:)",
    )
    parser.add_argument(
        "--by-subject",
        action="store_true",
        help="a backport without a reference line is of the one upstream commit since the fork "
        "with its subject and author (a project that cherry-picks without -x)",
    )
    args = parser.parse_args()
    repo = pygit2.Repository(str(args.repo))
    found: dict[str, list[dict[str, object]]] = {}
    for branch in args.branch:
        for c in extract(repo, args.upstream, branch, args.every_form, args.by_subject):
            found.setdefault(str(c["kind"]), []).append(c)
    rng = random.Random(args.seed)
    kept = []
    for kind, cases in sorted(found.items()):
        sample = cases if len(cases) <= args.per_kind else rng.sample(cases, args.per_kind)
        print(f"{kind}: {len(cases)} found, {len(sample)} kept", file=sys.stderr)
        kept += sample
    with gzip.open(args.out, "wt") as out:
        for c in kept:
            out.write(json.dumps(c) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
