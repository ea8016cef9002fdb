#!/usr/bin/env python3
"""Score backportr resolve on real backport cases (../shared/data/real-cases/), as the
maintainers saw them, beside the one-level `git log --grep "Fixes: <target12>"` baseline.

    python benchmarks/eval_real.py rdma=/path/to/rdma-core.git ovn=/path/to/ovn.git \\
        nm=/path/to/NetworkManager.git [--limit N] [--kinds single,prereq] [--json out.json] \\
        [--without rule1,rule2,rule4]

For each case, in a scratch clone that shares the objects of the given repository:
- the case's branch points at `before` (the stable commit just before the maintainers
  applied it);
- the upstream branch points at its last first-parent commit before the date of the case's
  last stable commit (follow-ups written later are not in the ground truth, so they are not
  visible either), or, when the maintainers' series was not upstream yet then (an embargoed
  security fix released on the stable branches first, a cherry-pick taken from a merge
  request before it landed), at the first first-parent commit that holds the whole series;
- every other stable branch of the project points at its last commit before the date of
  `before` (evidence from sibling branches is real, their future is not; a branch not yet
  created is absent).
Cases run in the order of `before`'s date, so the index moves forward (or back by a little)
incrementally. The answer is scored against what the maintainers applied:

- exact: the series equals the maintainers' series (order included). A commit is the
  maintainers' under another id when one was cherry-picked from the other or both have the
  same patch-id (projects that merge a fix's branch and also cherry-pick it onto the
  mainline); an extra member the maintainers took into the branch separately, by 30 days
  after the case, is not counted against the answer (recorded in `taken_in_window`). Both
  tools are scored the same way;
- precision and recall of the set of commits (micro-averaged per kind);
- `prereq` cases, exact or acceptable: the case files' README accepts "another series that
  applies and contains the needed commits", a `ready` answer holding every commit of the
  maintainers' series that `git cherry-pick` applies in its order (`acceptable`); printed
  apart for the cases where a member was backported before the target existed upstream
  (`taken_before_target`: taken for its own sake, the target then applied as it was);
- `prereq` cases by git's measure: where `git cherry-pick` does not apply the maintainers'
  own series onto the branch at `before` (`theirs_applies` false), they adapted a member,
  and a conflict reported with no member they did not take is right too, as in `adjusted`
  cases; every case is right when exact or acceptable;
- `adjusted` cases (the maintainers edited the patch by hand): was a conflict reported?
- `single` cases: anything beyond the target is a false positive.

The baseline answers [target] plus the upstream commits whose message names the target's
12-digit id after `Fixes: ` (oldest first), as the stable mail bots do; it never reports a
conflict. `--without` turns rules of docs/accuracy.md off (their previous behaviour) to
measure each rule's gain and loss.
"""

from __future__ import annotations

import argparse
import bisect
import fnmatch
import functools
import gzip
import json
import re
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scratchgit import scratch_dir

from backportr.errors import BackportrError
from backportr.model import Oid
from backportr.resolve.finders import Context
from backportr.resolve.resolver import Resolver
from backportr.resolve.workspace import open_workspace
from backportr.settings import DEFAULT_CONFLICT_DEPTH, Settings
from backportr.text.relation_forms import DEFAULT

CASES = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "real-cases"
PROJECTS = {  # cases, upstream branch, the project's stable branches
    "rdma": ("rdma.jsonl.gz", "master", "stable-v*"),
    "ovn": ("ovn.jsonl.gz", "main", "branch-*"),
    "nm": ("nm.jsonl.gz", "main", "nm-1-*"),
}
COLUMNS = (
    "kind",
    "cases",
    "exact",
    "precision",
    "recall",
    "conflict reported",
    "extra on single",
    "mean s",
)
SCORED = ("single", "prereq", "followup", "fixes_chain", "adjusted")


@dataclass
class Tally:
    cases: int = 0
    exact: int = 0
    true_positive: int = 0
    predicted: int = 0
    expected: int = 0
    conflicts: int = 0
    extra_on_single: int = 0
    errors: int = 0
    seconds: float = 0.0
    misses: list[dict[str, object]] = field(default_factory=list)

    def add(
        self,
        case: dict[str, Any],
        predicted: list[str],
        status: str,
        seconds: float,
        error: str | None = None,
        reasons: list[list[str]] | None = None,
        later: list[str] | None = None,
    ) -> dict[str, object]:
        self.cases += 1
        self.seconds += seconds
        expected = [str(c) for c in case["series"]]
        hit = len(set(predicted) & set(expected))
        row = {
            **case_row(case),
            "expected": expected,
            "predicted": predicted,
            "status": status,
            "seconds": round(seconds, 3),
            "reasons": reasons or [],
            "extra_backported_later": later or [],
        }
        if error:
            self.errors += 1
            row["error"] = error
        if case["kind"] == "adjusted":
            self.conflicts += status == "conflict"
            if status != "conflict":
                self.misses.append(row)
            return row
        self.true_positive += hit
        self.predicted += len(predicted)
        self.expected += len(expected)
        if predicted == expected:
            self.exact += 1
        else:
            self.misses.append(row)
        if case["kind"] == "single" and len(predicted) > 1:
            self.extra_on_single += 1
        return row


def load_cases(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def git(repo: Path, *args: str, check: bool = True) -> str:
    """git's output as text; bytes that are not UTF-8 (a Latin-1 source file's diff) kept
    as surrogates, so two outputs compare as their bytes do."""
    return subprocess.run(
        ["git", "--git-dir", str(repo), *args],
        capture_output=True,
        text=True,
        errors="surrogateescape",
        check=check,
    ).stdout


class Clock:
    """Where each branch of the project was at a date: its first-parent history, with the
    commit dates, read once."""

    def __init__(self, repo: Path, refs: list[str]) -> None:
        self.repo = repo
        self.history: dict[str, list[tuple[int, int, str]]] = {}
        self.born: dict[str, int] = {}
        self.chain: list[str] = []  # the upstream branch's first-parent commits, oldest first
        self.position: dict[str, int] = {}
        for ref in refs:
            rows = [
                line.split()
                for line in git(repo, "log", "--first-parent", "--format=%ct %H", ref).splitlines()
            ]
            if not self.chain:
                self.chain = [h for _, h in reversed(rows)]
                self.position = {h: n for n, h in enumerate(self.chain)}
            # Oldest first by commit time, and by history among equal times (commits applied
            # in one second): the newest of them is where the branch was at that second.
            count = len(rows)
            self.history[ref] = sorted((int(t), count - n, h) for n, (t, h) in enumerate(rows))
        self.upstream_ref = refs[0]
        upstream_ids = {h for _, _, h in self.history[self.upstream_ref]}
        for ref in refs[1:]:
            own = [t for t, _, h in self.history[ref] if h not in upstream_ids]
            self.born[ref] = min(own) if own else 1 << 62

    def at(self, ref: str, when: int) -> str | None:
        """The branch's last first-parent commit dated at or before `when`."""
        history = self.history[ref]
        i = bisect.bisect_right(history, (when, 1 << 62, ""))
        return history[i - 1][2] if i else None

    def holding(self, commits: list[str]) -> str | None:
        """The upstream branch's first first-parent commit whose history holds every one of
        `commits` that upstream ever holds (None when it holds none of them)."""
        first = -1
        for commit in commits:
            low, high = 0, len(self.chain)
            while low < high:  # once a first-parent commit holds it, every later one does
                middle = (low + high) // 2
                if _is_ancestor(self.repo, commit, self.chain[middle]):
                    high = middle
                else:
                    low = middle + 1
            if low < len(self.chain):
                first = max(first, low)
        return self.chain[first] if first >= 0 else None

    def upstream_cut(self, when: int, series: list[str]) -> str | None:
        """Where the maintainer saw upstream: its last first-parent commit dated at or
        before `when`, or later, the first that holds the whole series, when the series was
        not upstream yet (an embargoed security fix released on the stable branches before
        upstream; a cherry-pick taken from a merge request before it landed)."""
        cut = self.at(self.upstream_ref, when)
        holding = self.holding(series)
        if holding is not None and (cut is None or self.position[holding] > self.position[cut]):
            return holding
        return cut


def _is_ancestor(repo: Path, commit: str, of: str) -> bool:
    return (
        subprocess.run(
            ["git", "--git-dir", str(repo), "merge-base", "--is-ancestor", commit, of],
            capture_output=True,
            check=False,
        ).returncode
        == 0
    )


BY_SUBJECT = False
"""`--by-subject`: a branch commit with the subject and author of an upstream commit is its
backport too (a project that cherry-picks without `-x`, as Open vSwitch does), wherever a
backport is looked for by the reference line naming its id."""


def alike(repo: Path, commit: str, *revs: str) -> list[tuple[str, int]]:
    """The commits of `revs` other than `commit` with its subject and author email (id,
    commit time), when BY_SUBJECT; none otherwise."""
    if not BY_SUBJECT:
        return []
    subject, email = git(repo, "log", "-1", "--format=%s%x00%ae", commit).strip().split("\0")
    out = git(
        repo, "log", "--format=%H%x00%ct%x00%ae%x00%s", "-F", f"--grep={subject}", *revs,
        check=False,
    )  # fmt: skip
    found = []
    for line in out.splitlines():
        h, t, e, s = line.split("\0", 3)
        if h != commit and s == subject and e.lower() == email.lower():
            found.append((h, int(t)))
    return found


def carried_before(repo: Path, target: str, before: str, upstream: str) -> str | None:
    """A branch commit before the case that names the target as its original: the
    maintainers backported it earlier (adapted), and the case's commit is a second
    backport of it (DPDK 23.11 carries `e0d947a1e6` twice). Such a case asks nothing of
    the series' search; it is left out, and the run says so."""
    found = git(
        repo,
        "log",
        "--format=%H",
        "-F",
        f"--grep={target[:12]}",
        before,
        "--not",
        f"refs/heads/{upstream}",
        check=False,
    ).split()
    found = found or [h for h, _ in alike(repo, target, before, "--not", f"refs/heads/{upstream}")]
    return found[-1] if found else None


def _changes(repo: Path, commit: str) -> tuple[list[str], list[tuple[str, ...]]]:
    """A commit's paths and, per file in order, its removed and added lines."""
    paths: list[str] = []
    lines: list[list[str]] = []
    for line in git(repo, "show", "--format=", "--no-renames", "-U0", commit).splitlines():
        if line.startswith("diff --git "):
            paths.append(line.rsplit(" b/", 1)[-1])
            lines.append([])
        elif lines and line[:1] in "+-" and not line.startswith(("+++ ", "--- ")):
            lines[-1].append(line)
    return paths, [tuple(x) for x in lines]


def moved_only(repo: Path, upstream: str, backport: str) -> bool:
    """The maintainers' backport is upstream's change at other paths: the same lines
    removed and added, file by file, where a file moved since the fork. `git cherry-pick`
    (merge-ort, renames followed) makes those lines where it applies, so a `ready` answer
    there is the maintainers' backport (`adjusted` by git's measure)."""
    up_paths, up_lines = _changes(repo, upstream)
    our_paths, our_lines = _changes(repo, backport)
    return up_lines == our_lines and up_paths != our_paths


def git_applies(repo: Path, commit: str, onto: str) -> bool:
    """Does `git cherry-pick` apply `commit` alone onto `onto`? (`git_applies_series`.)"""
    return git_applies_series(repo, [commit], onto)


def git_applies_series(repo: Path, series: list[str], onto: str) -> bool:
    """Does `git cherry-pick` apply `series`, in order, onto `onto`? git's own merge
    (merge-ort, renames followed) of each commit onto the tree the previous one wrote, with
    the commit's parent as the base, as a cherry-pick merges: git 2.39 has no `merge-tree
    --merge-base`, so that tree is written as a commit whose parent is the commit's parent
    (into the scratch clone)."""
    who = ["-c", "user.name=eval", "-c", "user.email=eval@localhost"]
    tree = git(repo, "rev-parse", f"{onto}^{{tree}}").strip()
    for commit in series:
        parent = git(repo, "rev-parse", f"{commit}^").strip()
        based = git(repo, *who, "commit-tree", tree, "-p", parent, "-m", "eval").strip()
        merge = subprocess.run(
            ["git", "--git-dir", str(repo), "merge-tree", "--write-tree", "--no-messages",
             based, commit],
            capture_output=True,
            text=True,
            errors="surrogateescape",
            check=False,
        )  # fmt: skip
        if merge.returncode == 1:
            return False
        if merge.returncode != 0:
            raise SystemExit(f"git merge-tree of {commit[:12]} failed: {merge.stderr!r}")
        tree = merge.stdout.split()[0]
    return True


def acceptable(
    repo: Path, row: dict[str, Any], mapped: list[str], answer: list[str], before: str
) -> bool:
    """A `prereq` answer the case files' README accepts beside the maintainers' own series:
    "another series that applies and contains the needed commits". A `ready` answer that
    holds every commit of theirs (`mapped`: the answer in their ids) and that `git
    cherry-pick` applies, in its order (`answer`: upstream's ids), onto the branch at
    `before`."""
    return (
        row["status"] == "ready"
        and row["predicted"] != row["expected"]
        and set(row["expected"]) <= set(mapped)
        and git_applies_series(repo, answer, before)
    )


def exact_or_acceptable(row: dict[str, Any]) -> bool:
    return bool(row["predicted"] == row["expected"] or row.get("acceptable"))


def prereq_by_gits_measure(row: dict[str, Any]) -> bool:
    """A `prereq` case scored by what git can apply: right when exact or acceptable, and
    also where `git cherry-pick` does not apply the maintainers' own series onto the branch
    at `before` (`theirs_applies` false) and a conflict is reported with no member they did
    not take. There they adapted a member by hand: the case is an `adjusted` case in all but
    name, and it is scored as those are."""
    adapted = row.get("theirs_applies") is False
    return exact_or_acceptable(row) or bool(
        adapted and row["status"] == "conflict" and set(row["predicted"]) <= set(row["expected"])
    )


def case_row(case: dict[str, Any]) -> dict[str, object]:
    return {"branch": case["branch"], "target": case["target"], "kind": case["kind"]}


def commit_times(repo: Path, ids: set[str]) -> dict[str, int]:
    out = git(repo, "show", "-s", "--format=%H %ct", *sorted(ids))
    return {h: int(t) for h, t in (line.split() for line in out.splitlines() if line.strip())}


def one_level_grep(repo: Path, target: str, upstream: str, every_form: bool = False) -> list[str]:
    """The stable bots' search: the target, then upstream commits naming it in Fixes: (with
    `every_form`, in any form of backportr's vocabulary: `Follow-up for <id>`, ...)."""
    phrases = DEFAULT.search_phrases(target[:12]) if every_form else [f"Fixes: {target[:12]}"]
    greps = [f"--grep={phrase}" for phrase in phrases]
    found = git(repo, "log", "--reverse", "--format=%H", "-F", "-i", *greps, upstream).split()
    return [target, *[c for c in found if c != target]]


def backported_later(mirror: Path, branch: str, commit: str) -> bool:
    """Did the maintainers take `commit` into the real branch at some later point?"""
    if git(
        mirror, "log", "--format=%H", "-F", f"--grep={commit}", f"refs/heads/{branch}", check=False
    ).strip():
        return True
    if alike(mirror, commit, f"refs/heads/{branch}"):
        return True
    merged = subprocess.run(
        [
            "git",
            "--git-dir",
            str(mirror),
            "merge-base",
            "--is-ancestor",
            commit,
            f"refs/heads/{branch}",
        ],
        check=False,
    )
    return merged.returncode == 0


WINDOW = 30 * 86400
"""An extra member the maintainers took into the branch on their own within this long after
the case is theirs too (a prerequisite or follow-up backported separately in the same window),
not a false positive: the issue's "measure as the maintainer saw it"."""


def taken_within(mirror: Path, branch: str, commit: str, since: int) -> bool:
    """Did the maintainers take `commit` into the real branch by `since` + WINDOW?"""
    carriers = git(
        mirror, "log", "--format=%ct", "-F", f"--grep={commit}", f"refs/heads/{branch}",
        check=False,
    ).split()  # fmt: skip
    carriers += [str(t) for _, t in alike(mirror, commit, f"refs/heads/{branch}")]
    if carriers:
        return min(int(t) for t in carriers) <= since + WINDOW
    if backported_later(mirror, branch, commit):  # merged: the commit itself
        return int(git(mirror, "log", "-1", "--format=%ct", commit).strip()) <= since + WINDOW
    return False


def as_taken(
    mirror: Path, case: dict[str, object], answer: list[str], applied: int
) -> tuple[list[str], list[str], list[str]]:
    """The answer in the maintainers' ids, without the extras they took separately within
    WINDOW; the extras they took later at all; those within the window."""
    series = list(case["series"])  # type: ignore[call-overload]
    branch = str(case["branch"])
    answer = same_patch(mirror, answer, series)
    later = [c for c in answer if c not in series and backported_later(mirror, branch, c)]
    taken = [c for c in later if taken_within(mirror, branch, c, applied)]
    return [c for c in answer if c not in taken], later, taken


@functools.cache
def _cherry_source(repo: Path, commit: str) -> frozenset[str]:
    body = git(repo, "log", "-1", "--format=%B", commit, check=False)
    return frozenset(re.findall(r"cherry picked from commit ([0-9a-f]{40})", body))


@functools.cache
def _patch_id(repo: Path, commit: str) -> str:
    diff = git(repo, "show", "--format=", commit, check=False)
    out = subprocess.run(
        ["git", "--git-dir", str(repo), "patch-id", "--stable"],
        input=diff,
        capture_output=True,
        text=True,
        errors="surrogateescape",
        check=False,
    ).stdout.split()
    return out[0] if out else f"none:{commit}"


def same_patch(repo: Path, predicted: list[str], expected: list[str]) -> list[str]:
    """`predicted` with each commit the maintainers took under another id written as that id:
    a commit cherry-picked from it (either way) or one with the same patch-id. Projects that
    merge a fix's branch and cherry-pick it onto the mainline have two upstream ids for one
    patch; the maintainer took one, either applies the same change. Both tools are scored
    this way."""
    unmatched = [e for e in expected if e not in predicted]
    if not unmatched:
        return predicted
    out = []
    for commit in predicted:
        if commit in expected:
            out.append(commit)
            continue
        sources = _cherry_source(repo, commit)
        match = next(
            (
                e for e in unmatched
                if e in sources or commit in _cherry_source(repo, e)
                or _patch_id(repo, e) == _patch_id(repo, commit)
            ),
            None,
        )  # fmt: skip
        if match is not None:
            unmatched.remove(match)
        out.append(match or commit)
    return out


def without(rules: set[str]) -> None:
    """Turn rules off: their behaviour before this turn (for the per-rule gain and loss)."""
    from backportr.resolve import closure as c
    from backportr.resolve import resolver as r
    from backportr.resolve.finders import conflicts

    if "rule1" in rules:  # conflict prerequisites searched for every member, one level
        r.Resolver._conflict_scope = lambda self, closure, commit: (  # type: ignore[method-assign]
            "any" if closure.conflict_depth(commit) < self.conflict_depth else None
        )
    if "larger" in rules:  # a refactor larger than what it helps taken in every project
        from backportr.resolve import rules as prune

        prune.larger_than_helped = lambda closure, helper: None
    if "prune" in rules:  # conflicting conflict prerequisites kept in the series
        r.prune_unhelpful = lambda closure, order, results: []  # type: ignore[attr-defined]
    if "rule2" in rules:  # absent culprits join only when they fix something present or are tagged
        original = r.Resolver._wanted

        def wanted(self: r.Resolver, ctx: Context, commit: Oid) -> str | None:
            answer = original(self, ctx, commit)
            return answer if answer and ("fixes" in answer or "tagged" in answer) else None

        r.Resolver._wanted = wanted  # type: ignore[method-assign]
    if "between" in rules:  # the target's posting not filled in between its members
        r.Resolver._fill_posting = lambda self, closure: False  # type: ignore[method-assign]
    if "author" in rules:  # past the conflict depth, the target's own posting only
        c.Closure.same_author = lambda self, commit: False  # type: ignore[method-assign]
    if "rule3" in rules:  # blame only
        conflicts.history_candidates = lambda *args: {}
    if "rule4" in rules:  # follow-ups of present follow-ups not explored
        original_link = c.Closure.link

        def link(self, finding, about):  # type: ignore[no-untyped-def]
            before = len(self.present_pending)
            original_link(self, finding, about)
            del self.present_pending[before:]

        c.Closure.link = link  # type: ignore[method-assign]


def _selects(spec: str, case: dict[str, Any]) -> bool:
    prefix, _, branch = spec.partition("@")
    return str(case["target"]).startswith(prefix) and branch in ("", case["branch"])


def evaluate(
    name: str, mirror: Path, args: argparse.Namespace
) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    if name in PROJECTS:
        cases_file, upstream, pattern = PROJECTS[name]
        source = CASES / cases_file
    else:  # another project's cases (benchmarks/extract_cases.py)
        if not (args.cases and args.upstream and args.pattern):
            raise SystemExit(f"{name}: not a shared project; give --cases, --upstream, --pattern")
        source, upstream, pattern = args.cases, args.upstream, args.pattern
    cases = [c for c in load_cases(source) if c["kind"] in args.kinds]
    if args.targets:  # only the cases of these targets (id prefixes, optionally @branch)
        cases = [c for c in cases if any(_selects(spec, c) for spec in args.targets)]
    if args.limit or args.skip:  # per kind, in the file's order: [skip, skip + limit)
        per_kind: dict[str, int] = defaultdict(int)
        kept = []
        for case in cases:
            seen = per_kind[str(case["kind"])]
            per_kind[str(case["kind"])] += 1
            if seen >= args.skip and (not args.limit or seen < args.skip + args.limit):
                kept.append(case)
        cases = kept
    scratch = scratch_dir(f"backportr-eval-{name}-") / "repo.git"
    subprocess.run(
        ["git", "clone", "-q", "--bare", "--shared", str(mirror), str(scratch)], check=True
    )
    stable = sorted(
        line
        for line in git(scratch, "for-each-ref", "--format=%(refname)", "refs/heads/").split()
        if fnmatch.fnmatchcase(line[len("refs/heads/") :], pattern)
    )
    clock = Clock(scratch, [f"refs/heads/{upstream}", *stable])
    times = commit_times(
        scratch,
        {str(c["before"]) for c in cases}
        | {str(s) for c in cases for s in c["stable_commits"]}
        | {str(c["target"]) for c in cases},
    )
    cases.sort(key=lambda c: (times[str(c["before"])], c["branch"]))
    tallies: dict[str, Tally] = defaultdict(Tally)
    baseline: dict[str, Tally] = defaultdict(Tally)
    rows = []
    started = time.monotonic()
    for number, case in enumerate(cases, 1):
        branch = str(case["branch"])
        when = times[str(case["before"])]
        cut = clock.upstream_cut(times[str(case["stable_commits"][-1])], list(case["series"]))
        updates = [f"update refs/heads/{upstream} {cut}"]
        for ref in stable:
            at = str(case["before"]) if ref == f"refs/heads/{branch}" else clock.at(ref, when)
            if ref != f"refs/heads/{branch}" and (at is None or when < clock.born[ref]):
                updates.append(f"delete {ref}")
            else:
                updates.append(f"update {ref} {at}")
        subprocess.run(
            ["git", "--git-dir", str(scratch), "update-ref", "--stdin"],
            input="\n".join(updates) + "\n",
            text=True,
            check=True,
        )
        earlier = carried_before(scratch, str(case["target"]), str(case["before"]), upstream)
        if earlier:  # a second backport of the same commit: not a case of finding its series
            rows.append({**case_row(case), "skipped": f"already backported as {earlier[:12]}"})
            continue
        settings = Settings(
            repo=scratch,
            upstream=upstream,
            branches=(branch,),
            branch_pattern=pattern,
            max_commits=args.max_commits,
        )
        begin = time.monotonic()
        predicted: list[str] = []
        reasons: list[list[str]] = []
        suggested: list[list[str]] = []
        status = "error"
        error = None
        try:
            with open_workspace(settings, all_stable=True) as ws:
                report = Resolver(
                    ws,
                    max_commits=args.max_commits,
                    symbols=args.symbols,
                    conflict_depth=args.conflict_depth,
                    suggest=False,
                    siblings=args.with_siblings,
                    postings=False,
                    culprits=args.culprits,
                ).resolve(Oid(str(case["target"])), ws.branches)
            branch_report = report.branches[0]
            status = branch_report.status
            suggested = [
                [x.commit, x.reason.kind, x.reason.related or "", x.reason.detail[:200]]
                for x in branch_report.suggestions
            ]
            if status in ("ready", "conflict"):
                predicted = [m.commit for m in branch_report.series]
                reasons = [
                    [m.reasons[0].kind, m.reasons[0].related or "", m.apply]
                    for m in branch_report.series
                ]
        except BackportrError as failure:
            error = str(failure)
        seconds = time.monotonic() - begin
        applied = times[str(case["stable_commits"][-1])]
        mapped = same_patch(mirror, predicted, [str(c) for c in case["series"]])
        answer = predicted  # upstream's ids, every member, for git to apply
        predicted, later, taken = as_taken(mirror, case, predicted, applied)
        reasons = [r for c, r in zip(mapped, reasons, strict=True) if c not in taken]
        row = tallies[str(case["kind"])].add(
            case, predicted, status, seconds, error, reasons, later
        )
        row["taken_in_window"] = taken
        if case["kind"] == "adjusted" and case.get("target_backport"):
            row["moved_only"] = moved_only(
                mirror, str(case["target"]), str(case["target_backport"])
            )
        if case["kind"] == "adjusted":
            row["git_applies"] = git_applies(scratch, str(case["target"]), str(case["before"]))
        if case["kind"] == "prereq":
            row["acceptable"] = acceptable(scratch, row, mapped, answer, str(case["before"]))
            row["theirs_applies"] = git_applies_series(
                scratch, [str(c) for c in case["series"]], str(case["before"])
            )
            row["taken_before_target"] = any(  # for its own sake: the target did not exist
                times[str(s)] < times[str(case["target"])] for s in case["stable_commits"][:-1]
            )
        row["suggested"] = suggested
        grep = one_level_grep(
            scratch, str(case["target"]), f"refs/heads/{upstream}", args.grep_every_form
        )
        grep, _, _ = as_taken(mirror, case, grep, applied)
        baseline[str(case["kind"])].add(case, grep, "ready", 0.0)
        row["baseline"] = grep
        rows.append(row)
        if number % 25 == 0:
            print(
                f"  {name}: {number}/{len(cases)} cases, {time.monotonic() - started:.0f}s",
                file=sys.stderr,
            )
    ordered = [k for k in SCORED if k in tallies]
    return {k: tallies[k] for k in ordered}, {k: baseline[k] for k in ordered}, rows


def render(name: str, tallies: dict[str, Tally]) -> list[str]:
    lines = [
        f"### {name}",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for kind, t in tallies.items():
        precision = t.true_positive / t.predicted if t.predicted else float("nan")
        recall = t.true_positive / t.expected if t.expected else float("nan")
        conflict = f"{t.conflicts}/{t.cases}" if kind == "adjusted" else ""
        exact = "" if kind == "adjusted" else f"{t.exact}/{t.cases}"
        extra = f"{t.extra_on_single}" if kind == "single" else ""
        p = "" if kind == "adjusted" else f"{precision:.3f}"
        r = "" if kind == "adjusted" else f"{recall:.3f}"
        lines.append(
            f"| {kind} | {t.cases} | {exact} | {p} | {r} | {conflict} | {extra} | "
            f"{t.seconds / max(1, t.cases):.2f} |"
        )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description="Score resolve on real backport cases.")
    parser.add_argument(
        "projects", nargs="+", help="name=path, name in rdma, ovn, nm (or any with --cases)"
    )
    parser.add_argument("--limit", type=int, default=0, help="at most N cases per kind")
    parser.add_argument(
        "--skip", type=int, default=0, help="leave out the first N cases per kind (held apart)"
    )
    parser.add_argument("--kinds", default=",".join(SCORED))
    parser.add_argument("--max-commits", type=int, default=50)
    parser.add_argument("--conflict-depth", type=int, default=DEFAULT_CONFLICT_DEPTH)
    parser.add_argument("--no-symbols", dest="symbols", action="store_false")
    parser.add_argument(
        "--without",
        default="",
        help="rules to turn off: rule1,rule2,rule3,rule4,prune,larger,author,between",
    )
    parser.add_argument(
        "--culprits",
        default="auto",
        choices=("auto", "evidence", "always"),
        help="the repository policy backportr.culprits to score with (default: the tool's)",
    )
    parser.add_argument("--json", type=Path)
    parser.add_argument("--cases", type=Path, help="cases of a project beyond the shared three")
    parser.add_argument("--upstream", help="that project's upstream branch")
    parser.add_argument("--pattern", help="that project's stable branches")
    parser.add_argument("--with-siblings", default="none", choices=("none", "earlier", "all"))
    parser.add_argument(
        "--grep-every-form",
        action="store_true",
        help="the baseline greps every form of the vocabulary, not `Fixes: <id>` alone",
    )
    parser.add_argument(
        "--targets", default="", help="only these cases: id prefixes, each optionally @branch"
    )
    parser.add_argument(
        "--by-subject",
        action="store_true",
        help="a branch commit with an upstream commit's subject and author is its backport "
        "(a project that cherry-picks without -x; extract_cases.py --by-subject)",
    )
    args = parser.parse_args()
    global BY_SUBJECT
    BY_SUBJECT = args.by_subject
    args.kinds = args.kinds.split(",")
    args.targets = [t for t in args.targets.split(",") if t]
    without({r for r in args.without.split(",") if r})
    report: dict[str, object] = {}
    for spec in args.projects:
        name, _, path = spec.partition("=")
        tallies, baseline, rows = evaluate(name, Path(path), args)
        print("\n".join(render(name, tallies)) + "\n")
        print("\n".join(render(f"{name}, one-level Fixes: grep", baseline)) + "\n")
        adjusted = [r for r in rows if r["kind"] == "adjusted" and "skipped" not in r]
        applies = [
            r
            for r in adjusted
            if (r.get("git_applies") or r.get("moved_only")) and r["status"] == "ready"
        ]
        if applies:
            right = sum(r["status"] == "conflict" for r in adjusted) + len(applies)
            print(
                f"  adjusted by git's measure: {right}/{len(adjusted)} ({len(applies)} answered "
                "ready where git cherry-pick applies the target alone, or that are upstream's "
                "lines at moved paths: the backport git cherry-pick makes)\n"
            )
        prereq = [r for r in rows if r["kind"] == "prereq" and "skipped" not in r]
        accepted = [r for r in prereq if r.get("acceptable")]
        if accepted:
            print(
                f"  prereq, exact or acceptable: "
                f"{sum(map(exact_or_acceptable, prereq))}/{len(prereq)} "
                f"({len(accepted)} ready series holding every commit of the maintainers' and "
                "applied in order by git cherry-pick: the case files' \"another series that "
                'applies and contains the needed commits")\n'
            )
        adapted = [r for r in prereq if r.get("theirs_applies") is False]
        if prereq:
            rest = [r for r in prereq if r.get("theirs_applies") is not False]
            print(
                f"  prereq by git's measure: {sum(map(prereq_by_gits_measure, prereq))}"
                f"/{len(prereq)} ({len(adapted)} whose maintainers' series git cherry-pick "
                "does not apply onto the branch at before, adapted by them: right also when a "
                "conflict is reported with no member they did not take, "
                f"{sum(map(prereq_by_gits_measure, adapted))}/{len(adapted)}; the others "
                f"exact or acceptable, {sum(map(exact_or_acceptable, rest))}/{len(rest)})\n"
            )
        for own, where in (
            (False, "every member was backported after the target existed upstream"),
            (True, "a member was backported before the target existed upstream (for itself)"),
        ):
            group = [r for r in prereq if r.get("taken_before_target") is own]
            if group:
                good = sum(map(exact_or_acceptable, group))
                print(f"  prereq, exact or acceptable, where {where}: {good}/{len(group)}")
        print()
        for kind, t in tallies.items():
            for miss in t.misses[:5]:
                print(f"  miss {kind}: {json.dumps(miss)[:400]}")
        for row in rows:
            if "skipped" in row:
                print(
                    f"  left out {row['kind']}: {str(row['target'])[:12]} on {row['branch']}, "
                    f"{row['skipped']}"
                )
        report[name] = {"rows": rows}
        if args.json:  # after every project, so a long run keeps what it has
            args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
