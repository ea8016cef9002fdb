#!/usr/bin/env python3
"""Where a candidate helper rule would fire, in the answers of an eval_real.py run.

    python benchmarks/helper_census.py RUN.json name=REPO[:CASES.jsonl.gz] ...

Issue 40 names three rules that would turn a helper (a member found by conflict or symbol
search) into a suggestion: a build-flag change (it changes build files only and adds a
`-W` option), a test-only patch whose own fix is absent (the same author's non-test commits
of the 12 hours before it are neither in the branch at the case nor in the series), and a
helper found for a member that is a mechanical rename (`closure.is_rename`); and, beyond the
issue's three, the larger-refactor rule of projects whose branches take fixes
(`rules.larger_than_helped`) made general: a helper that is no fix (no fix line in any form,
no stable tag, no revert) and changes `LARGER` times the lines of what it helps, in any
project; a helper whose files are all CI configuration (`CI`); a helper that only adds
lines and is no fix (a new job, test or function the target edits). Such a rule
changes only the answers that hold such a helper, so the census is the rule's whole effect
on the run: a case right now is lost (the helper leaves a series the maintainers took with
it), a case wrong now is gained only when that helper is what made it wrong (it is not in
the maintainers' series); an `adjusted` case answered `ready` is gained (the helper made the
target apply; without it the target conflicts), one answered `conflict` stays right. And one
rule the other way (`suggestion_taken`): a conflicting helper that is suggested taken as a
`conflict` member, gained where the answer then holds the maintainers' series, lost where a
right answer gains a member they did not take; and its narrowing to CI files
(`ci_suggestion_taken`), which also counts the `adjusted` answers that would gain a member
the maintainers did not take (they adapted the target); and a helper suggested because it
reaches beyond the files of what it helps, taken when that member's message names its id
(`named suggestion taken`). Prints each firing case and the gain and loss per rule and
project.

CASES defaults to the shared case file of the name (rdma, nm, ovn).
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from compare_eval import right

from backportr.git.repo import Repo
from backportr.git.trial import TrialApplier
from backportr.model import Oid
from backportr.resolve.closure import is_rename
from backportr.text.trailers import parse_message

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "real-cases"
BUILD = re.compile(
    r"(^|/)(meson\.build|meson_options\.txt|Makefile[^/]*|[^/]*\.mk|CMakeLists\.txt|"
    r"configure\.ac|[^/]*\.am|Kconfig[^/]*)$"
)
TEST = re.compile(
    r"(^|/)(tests?|testsuite|selftests|unittests?)(/|$)|(^|/)test[-_][^/]*$|_test\.[a-z]+$|\.at$"
)
POSTING_SECONDS = 12 * 3600
LARGER = 5


class Project:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.applier = TrialApplier(Repo(path))
        self._files: dict[str, list[str]] = {}

    def git(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", "-C", str(self.path), *args],
            capture_output=True,
            text=True,
            errors="surrogateescape",
            check=False,
        )

    def files(self, commit: str) -> list[str]:
        if commit not in self._files:
            self._files[commit] = self.git(
                "show", "--format=", "--name-only", commit
            ).stdout.split()
        return self._files[commit]

    def build_flag(self, commit: str) -> bool:
        files = self.files(commit)
        if not files or not all(BUILD.search(f) for f in files):
            return False
        diff = self.git("show", "--format=", commit).stdout.splitlines()
        return any(line.startswith("+") and "-W" in line for line in diff)

    def test_only(self, commit: str) -> bool:
        files = self.files(commit)
        return bool(files) and all(TEST.search(f) for f in files)

    def fix_absent(self, commit: str, before: str, series: list[str]) -> bool:
        """A test-only commit whose fix (the same author's non-test commits of the 12 hours
        before it) the branch lacks at the case and the series does not bring."""
        if not self.test_only(commit):
            return False
        email, when = self.git("log", "-1", "--format=%ae %ct", commit).stdout.split()
        earlier = self.git("log", "--format=%H %ae %ct", "-30", f"{commit}~1").stdout.splitlines()
        for line in earlier:
            oid, author, time = line.split()
            if author != email or int(when) - int(time) > POSTING_SECONDS:
                continue
            if self.test_only(oid) or oid in series:
                continue
            if self.git("merge-base", "--is-ancestor", oid, before).returncode == 0:
                continue
            if self.git("log", "-1", "--format=%h", "-F", f"--grep={oid[:12]}", before).stdout:
                continue
            return True
        return False

    def rename(self, commit: Oid) -> bool:
        return is_rename(*self.applier.changed_lines(commit))

    def size(self, commit: Oid) -> int:
        return sum(map(len, self.applier.changed_lines(commit)))

    def a_fix(self, commit: str) -> bool:
        parsed = parse_message(self.git("log", "-1", "--format=%B", commit).stdout)
        return bool(parsed.fixes or parsed.stable_tags or parsed.reverts)


CI = re.compile(
    r"^(\.github/|\.gitlab-ci|\.gitlab/|\.ci/|\.cirrus|\.travis|ci/|\.circleci/|"
    r"automation/gitlab-ci/|azure-pipelines|\.semaphore/|\.packit)"
)


def firing(project: Project, row: dict[str, Any], case: dict[str, Any]) -> dict[str, list[str]]:
    """Rule -> the helpers of this answer it would turn into suggestions."""
    fired: dict[str, list[str]] = {"build-flag": [], "test-only, fix absent": [],
                                   "helper of a rename": [], "larger, any project": [],
                                   "CI-only helper": [], "pure addition": []}  # fmt: skip
    helpers = {
        c: reason for c, reason in zip(row["predicted"], row["reasons"], strict=True)
        if reason[0] in ("conflict", "symbol")
    }  # fmt: skip
    for commit, reason in helpers.items():
        if project.build_flag(commit):
            fired["build-flag"].append(commit)
        if project.fix_absent(commit, str(case["before"]), row["predicted"]):
            fired["test-only, fix absent"].append(commit)
        helped = reason[1]
        if helped in helpers and helped != commit and project.rename(helped):
            fired["helper of a rename"].append(commit)
        user = helped if helped in row["predicted"] and helped != commit else row["target"]
        if (
            reason[0] == "conflict"
            and not project.a_fix(commit)
            and project.size(commit) > LARGER * max(1, project.size(user))
        ):
            fired["larger, any project"].append(commit)
        files = project.files(commit)
        if files and all(CI.search(f) for f in files):
            fired["CI-only helper"].append(commit)
        if reason[0] == "conflict" and not project.a_fix(commit):
            removed, added = project.applier.changed_lines(commit)
            if added and not removed:
                fired["pure addition"].append(commit)
    return {rule: commits for rule, commits in fired.items() if commits}


def suggestion_taken(row: dict[str, Any]) -> str | None:
    """The other direction, for the OVN `prereq` misses: where the answer is `conflict` and
    its first suggestion is a helper that conflicts itself (found by blame of the target's
    conflicting lines, suggested because "the series needs a human anyway"), that helper,
    which the rule would take as a `conflict` member."""
    suggested = row.get("suggested") or []
    if row["status"] != "conflict" or not suggested:
        return None
    commit, _, _, why = suggested[0]
    return str(commit) if "conflicts in" in why and "needs a human anyway" in why else None


def ci_suggestion_taken(row: dict[str, Any]) -> str | None:
    """`suggestion_taken` narrowed to CI configuration (the containerd `prereq` misses:
    version bumps stacked in one workflow file): the first suggestion, a conflicting
    helper the series needs a human for anyway, whose conflicts with the target lie in CI
    files only. It fires only where the target touches CI files, so a run of those cases
    alone (`eval_real.py --targets`) is its whole effect."""
    commit = suggestion_taken(row)
    if commit is None:
        return None
    where = re.search(r"conflicts in (.*?) without it", row["suggested"][0][3])
    if where is None:
        return None
    return commit if all(CI.search(f) for f in where.group(1).split(", ")) else None


def named_suggestion_taken(project: Project, row: dict[str, Any]) -> list[str]:
    """The other direction again: a helper left as a suggestion because it reaches beyond
    the files of what it helps, whose id the message of the member it helps names (Open
    vSwitch's `91ee067396`: "added by commit 60917c822de6"), which the rule would take."""
    named = []
    for commit, kind, related, why in row.get("suggested") or []:
        if kind != "conflict" or not related or "does not touch" not in why:
            continue
        message = project.git("log", "-1", "--format=%B", related).stdout.lower()
        if re.search(rf"\b{commit[:7]}[0-9a-f]{{0,33}}\b", message):
            named.append(commit)
    return named


def taken_effect(row: dict[str, Any], commit: str) -> str:
    """Taking `commit` into a right or wrong answer: gained where the answer then holds
    the maintainers' series, lost where a right answer gains a member they did not take."""
    exact = sorted([commit, *row["predicted"]]) == sorted(row["expected"])
    return {(False, True): "gain", (True, False): "loss"}.get((right(row), exact), "none")


def main() -> int:
    run = json.loads(Path(sys.argv[1]).read_text())
    tally: Counter[tuple[str, str, str]] = Counter()
    unaligned = 0
    for spec in sys.argv[2:]:
        name, _, where = spec.partition("=")
        repo, _, cases_file = where.partition(":")
        source = Path(cases_file) if cases_file else SHARED / f"{name}.jsonl.gz"
        with gzip.open(source, "rt") as lines:
            cases = {}
            for line in lines:
                case = json.loads(line)
                cases[(case["branch"], case["target"], case["kind"])] = case
        project = Project(Path(repo))
        for row in run.get(name, {}).get("rows", []):
            if "skipped" in row:
                continue
            case = cases[(row["branch"], row["target"], row["kind"])]
            if len(row["reasons"]) != len(row["predicted"]):  # a run before reasons were
                unaligned += 1  # kept beside the members the maintainers took anyway
                continue
            taken = suggestion_taken(row) if row["kind"] != "adjusted" else None
            if taken is not None:
                tally[(name, "conflicting suggestion taken", taken_effect(row, taken))] += 1
            for named in named_suggestion_taken(project, row):
                effect = (
                    ("none" if named in row["expected"] else "member not taken")
                    if row["kind"] == "adjusted"
                    else taken_effect(row, named)
                )
                tally[(name, "named suggestion taken", effect)] += 1
                print(f"{name} named suggestion taken: {row['kind']} {row['target'][:10]} on "
                      f"{row['branch']} with {named[:10]} ({effect})")  # fmt: skip
            if (ci := ci_suggestion_taken(row)) is not None:
                if row["kind"] == "adjusted":  # still a conflict: right either way, but
                    effect = "none" if ci in row["expected"] else "member not taken"
                else:
                    effect = taken_effect(row, ci)
                tally[(name, "CI suggestion taken", effect)] += 1
                print(f"{name} CI suggestion taken: {row['kind']} {row['target'][:10]} on "
                      f"{row['branch']} with {ci[:10]} ({effect})")  # fmt: skip
            for rule, commits in firing(project, row, case).items():
                now = right(row)
                if row["kind"] == "adjusted":  # a conflict stays one; `ready` turns `conflict`
                    effect = "none" if now else "gain"
                elif now:
                    effect = "loss"
                else:
                    effect = "gain" if any(c not in row["expected"] for c in commits) else "none"
                tally[(name, rule, effect)] += 1
                print(
                    f"{name} {rule}: {row['kind']} {row['target'][:10]} on {row['branch']}, "
                    f"{'right' if now else 'wrong'} now ({effect}); helpers "
                    + " ".join(c[:10] for c in commits)
                )
    if unaligned:
        print(f"{unaligned} answers not examined (their reasons do not align with the members)")
    print("\n| project | rule | gain | loss | adjusted: a member not taken |")
    print("|---|---|---|---|---|")
    for name, rule in sorted({(n, r) for n, r, _ in tally}):
        gain, loss = tally[(name, rule, "gain")], tally[(name, rule, "loss")]
        print(f"| {name} | {rule} | {gain} | {loss} | {tally[(name, rule, 'member not taken')]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
