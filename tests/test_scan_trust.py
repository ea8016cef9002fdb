"""Scans a maintainer can act on: adapted backports judged by the branch's own history and by
evidence, a commit and its revert cancelling, siblings as witnesses, marks, a bounded range,
findings streamed as they are settled. Each rule on a small repository shaped like its case."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pygit2
from hypothesis import given
from hypothesis import strategies as st

from backportr.examples.ima import B836C, ImaFixture
from backportr.git.builder import RepoBuilder
from backportr.model import Oid
from backportr.scan.witnesses import TakenBackports
from tests.conftest import backportr

BRANCH = "linux-5.10.y"
SIBLING = "linux-6.1.y"
DRIVERS = 12
SIGNED = "Signed-off-by: Dev <dev@example.org>\n"


def _source(n: int, a: int, b: int) -> str:
    return f"int f{n}(int x)\n{{\n\tint a = {a};\n\tint b = {b};\n\treturn a + b + x;\n}}\n"


def two_files_repo(path: Path, *, branch: bool = True) -> RepoBuilder:
    """Upstream's first commit, `a.c` and `b.c`; the branch forked there (with `branch`)."""
    b = RepoBuilder(path)
    b.commit("Linux 5.10", {"a.c": _source(0, 1, 2), "b.c": _source(1, 1, 2)})
    if branch:
        b.branch(BRANCH, "master")
    return b


def adapted_repo(
    path: Path, taken_later: int = 0, sibling_takes: tuple[int, ...] = ()
) -> RepoBuilder:
    """Upstream: per driver N a refactor Y_N (`a = 1` -> `a = 10`) and then a fix T_N of
    the next line, whose context needs Y_N. The branch carries every T_N adapted, without
    Y_N (its original does not apply there without it); `taken_later` of them had Y_N
    backported after. The sibling branch takes T_N with Y_N for `sibling_takes`."""
    b = RepoBuilder(path)
    b.commit("Linux 5.10", {f"drivers/d{n}.c": _source(n, 1, 2) for n in range(DRIVERS)})
    b.tag("v5.10", "master")
    b.branch(BRANCH, "master")
    b.branch(SIBLING, "master")
    _refactors_and_fixes(b)
    _adapted_backports(b, BRANCH, range(DRIVERS))
    for n in range(taken_later):
        b.cherry_pick(b.ids[f"Y{n}"], BRANCH, files={f"drivers/d{n}.c": _source(n, 10, 20)})
    for n in sibling_takes:
        b.cherry_pick(b.ids[f"Y{n}"], SIBLING)
        b.cherry_pick(b.ids[f"T{n}"], SIBLING)
    return b


def scan_json(b: RepoBuilder, *args: str) -> dict[str, object]:
    proc = backportr("scan", "--repo", str(b.path), "-b", BRANCH, "-f", "json", *args)
    branch = json.loads(proc.stdout)["branches"][0]
    assert isinstance(branch, dict)
    assert proc.returncode == (4 if branch["findings"] else 0), proc.stderr
    return branch


def _commits(entries: object) -> set[str]:
    assert isinstance(entries, list)
    return {e["commit"] for e in entries}


def test_adapted_backports_of_a_branch_that_adapts_on_purpose_are_counted_apart(
    tmp_path: Path,
) -> None:
    """Twelve backports adapted around a refactor the branch never took: its history says
    it adapts on purpose, so none is a finding to act on; each is in `adapted` with what it
    went without, and the text says why in one line."""
    b = adapted_repo(tmp_path / "r")
    found = scan_json(b)
    assert found["findings"] == []
    assert _commits(found["adapted"]) == {b.ids[f"T{n}"] for n in range(DRIVERS)}
    first = found["adapted"][0]  # type: ignore[index]
    assert first["kind"] == "adapted-backport"
    assert [m["commit"] for m in first["series"]] == [
        b.ids[f"Y{first['subject'][1:].split(':')[0]}"]
    ]
    assert "of 12 adapted backports, 0 had what they went without" in str(found["practice"])
    text = backportr("scan", "--repo", str(b.path), "-b", BRANCH)
    assert text.returncode == 0, text.stderr  # nothing to act on
    assert "adapted, probably on purpose (12)" in text.stdout


def test_a_practice_git_cannot_read_reports_every_adapted_backport_and_says_why(
    tmp_path: Path,
) -> None:
    """The branch's practice is judged from its adapted backports; where one of their
    searches needs an object the repository lacks (a blame through an earlier version of
    the file), the practice is an error of the scan, as a target's is: the scan's other
    answers are written, each adapted backport stays a finding (nothing is set apart on a
    judgement not made), and it exits 1 (OVN's mirror: the whole scan was lost, 110 s in)."""

    def source(n: int, a: int, b: int, note: str = "end") -> str:
        pad = "".join(f"\tint pad{i} = {i};\n" for i in range(20))
        head = f"int f{n}(int x)\n{{\n\tint a = {a};\n\tint b = {b};\n"
        return f"{head}{pad}\treturn a; /* {note} */\n}}\n"

    b = RepoBuilder(tmp_path / "r")
    b.commit("Linux 5.10", {f"drivers/d{n}.c": source(n, 1, 2) for n in range(DRIVERS)})
    b.branch(BRANCH, "master")
    earlier = b.commit(f"d0: say why\n\n{SIGNED}", {"drivers/d0.c": source(0, 1, 2, "why")})
    for n in range(DRIVERS):
        note = "why" if n == 0 else "end"
        b.commit(f"d{n}: use a wider a\n\n{SIGNED}", {f"drivers/d{n}.c": source(n, 10, 2, note)})
        b.commit(f"d{n}: fix b\n\nCc: stable@vger.kernel.org\n{SIGNED}",
                 {f"drivers/d{n}.c": source(n, 10, 20, note)}, name=f"T{n}")  # fmt: skip
        b.cherry_pick(b.ids[f"T{n}"], BRANCH, files={f"drivers/d{n}.c": source(n, 1, 20)})
    blob = str(b.repo[earlier].peel(pygit2.Commit).tree["drivers/d0.c"].id)
    (Path(b.repo.path) / "objects" / blob[:2] / blob[2:]).unlink()  # only a blame reads it
    proc = backportr("scan", "--repo", str(b.path), "-b", BRANCH, "-f", "json", "--jobs", "1")
    assert proc.returncode == 1, proc.stderr
    found = json.loads(proc.stdout)["branches"][0]
    lacks = f"the repository lacks the object {blob}"
    assert found["errors"] == [
        f"{b.ids['T0'][:12]}: {lacks} (a blame of the conflicting lines); run git fsck, or "
        "fetch the repository's missing objects (a damaged or partial copy)",
        f"the branch's practice: {lacks} (a blame of the conflicting lines); run git fsck, "
        "or fetch the repository's missing objects (a damaged or partial copy)",
    ]
    assert found["adapted"] == [] and "could not be judged" in found["practice"]
    assert _commits(found["findings"]) == {b.ids[f"T{n}"] for n in range(1, DRIVERS)}
    assert "Traceback" not in proc.stderr and f"practice: {lacks}" in proc.stderr


def test_a_follow_up_left_a_finding_is_tried_as_the_finding_lists_it(tmp_path: Path) -> None:
    """An adapted backport's own follow-up stays a finding when what the backport went
    without goes apart; it conflicts after that commit (taken as its side) but applies on
    the branch alone, as the finding lists it: the finding says `clean`, as `git
    cherry-pick` of it does, and the adapted entry's member still conflicts."""
    b = adapted_repo(tmp_path / "r")
    t4 = b.ids["T4"]
    fixed = _source(4, 10, 20).replace("return a + b + x;", "return a + b + 2 * x;")
    follow = b.commit(
        f'd4: fix the return\n\nFixes: {t4[:12]} ("d4: fix b")\n{SIGNED}', {"drivers/d4.c": fixed}
    )
    found = scan_json(b)
    listed, adapted = found["findings"], found["adapted"]
    assert isinstance(listed, list) and isinstance(adapted, list)
    findings = {(f["kind"], f["commit"]): f for f in listed}
    assert set(findings) == {("incomplete-backport", t4), ("missing-fix", follow)}
    for finding in findings.values():
        assert [(m["commit"], m["apply"]) for m in finding["series"]] == [(follow, "clean")]
    apart = next(e for e in adapted if e["commit"] == t4)
    assert [(m["commit"], m["apply"]) for m in apart["series"]] == [(b.ids["Y4"], "conflict")]
    own = findings[("incomplete-backport", t4)]["why"]
    carrier = own.split()[2].rstrip(";")  # each part counts what it lacks
    assert own == f"backported as {carrier}; lacks 1 commit(s): 1 follow-up(s)"
    assert apart["why"] == f"backported as {carrier}; lacks 1 commit(s): 1 it was adapted around"
    work = tmp_path / "wt"
    subprocess.run(
        ["git", "-C", str(b.path), "worktree", "add", "-q", str(work), BRANCH], check=True
    )
    picked = subprocess.run(["git", "-C", str(work), "cherry-pick", "--no-commit", follow])
    assert picked.returncode == 0


def test_each_part_of_a_parted_finding_is_witnessed_by_its_own_commits(tmp_path: Path) -> None:
    """The sibling took the refactor months before the fix (no evidence against the
    branch's practice), so the backport is parted: its own follow-up stays a finding,
    the refactor goes apart. Each part names and ranks by what it lacks: the finding is
    not `high` for the sibling's refactor, which the adapted entry names (DPDK 23.11's
    follow-ups of `4359d9d1f7` were shown with 24.11's take of an adapted-around commit)."""
    b = adapted_repo(tmp_path / "r")
    y4, t4 = b.ids["Y4"], b.ids["T4"]
    took = b.cherry_pick(y4, SIBLING)
    b._clock += 180 * 86400
    b.cherry_pick(t4, SIBLING)
    fixed = _source(4, 10, 20).replace("return a + b + x;", "return a + b + 2 * x;")
    b.commit(f'd4: fix the return\n\nFixes: {t4[:12]} ("d4: fix b")\n{SIGNED}',
             {"drivers/d4.c": fixed})  # fmt: skip
    found = scan_json(b)
    listed, adapted = found["findings"], found["adapted"]
    assert isinstance(listed, list) and isinstance(adapted, list)
    own = next(f for f in listed if f["kind"] == "incomplete-backport")
    apart = next(e for e in adapted if e["commit"] == t4)
    assert own["witnesses"] == [f"{SIBLING} carries {t4[:12]} without it"]
    assert own["confidence"] == "normal"
    assert apart["witnesses"] == [f"{SIBLING} took {y4[:12]} as {took[:12]}"]
    assert apart["confidence"] == "high"


def young_branch_repo(path: Path, sibling_took: int = 0) -> RepoBuilder:
    """`adapted_repo`'s upstream; the sibling carries every T_N adapted without Y_N
    (`sibling_took` of them had Y_N backported after), the young branch, forked later, two
    of its own: too few for a practice of its own."""
    b = RepoBuilder(path)
    b.commit("Linux 5.10", {f"drivers/d{n}.c": _source(n, 1, 2) for n in range(DRIVERS)})
    b.branch(SIBLING, "master")
    _refactors_and_fixes(b)
    _adapted_backports(b, SIBLING, range(DRIVERS))
    for n in range(sibling_took):
        b.cherry_pick(b.ids[f"Y{n}"], SIBLING, files={f"drivers/d{n}.c": _source(n, 10, 20)})
    b.branch(BRANCH, "master~" + str(2 * DRIVERS - 4))  # after Y0, T0, Y1, T1
    b.commit("e: a new driver\n\n" + SIGNED, {"drivers/e.c": _source(99, 1, 2)})
    _adapted_backports(b, BRANCH, (2, 3))
    return b


def _refactors_and_fixes(b: RepoBuilder) -> None:
    """Upstream, per driver N: the refactor Y_N, then the fix T_N whose context needs it."""
    for n in range(DRIVERS):
        b.commit(f"d{n}: use a wider a\n\n{SIGNED}", {f"drivers/d{n}.c": _source(n, 10, 2)},
                 name=f"Y{n}")  # fmt: skip
        b.commit(f"d{n}: fix b\n\nCc: stable@vger.kernel.org\n{SIGNED}",
                 {f"drivers/d{n}.c": _source(n, 10, 20)}, name=f"T{n}")  # fmt: skip


def _adapted_backports(b: RepoBuilder, branch: str, drivers: Iterable[int]) -> None:
    """T_N backported onto `branch` adapted, without Y_N."""
    for n in drivers:
        b.cherry_pick(b.ids[f"T{n}"], branch, files={f"drivers/d{n}.c": _source(n, 1, 20)})


def test_a_young_branch_is_judged_with_its_siblings_history(tmp_path: Path) -> None:
    """Two adapted backports of its own are too few for a practice; its sibling's, none of
    which had what it went without backported later, asked until there are ten, say the
    project's branches adapt on purpose: both are counted apart, and a detection after the
    full scan agrees."""
    b = young_branch_repo(tmp_path / "r")
    before = scan_json(b, "--detect")
    assert before["untried"] == 2
    found = scan_json(b)
    assert found["findings"] == []
    assert _commits(found["adapted"]) == {b.ids["T2"], b.ids["T3"]}
    assert str(found["practice"]) == (  # the sibling's asked until there are ten, no more
        f"of 10 adapted backports (2 of this branch's, the rest of {SIBLING}'s), 0 had what "
        "they went without backported later: the branches adapt on purpose"
    )
    detected = scan_json(b, "--detect")
    assert detected["findings"] == []
    assert _commits(detected["adapted"]) == {b.ids["T2"], b.ids["T3"]}
    assert "the last full scan: of 10 adapted backports" in str(detected["practice"])


def test_a_young_branch_whose_siblings_take_what_they_went_without_keeps_the_findings(
    tmp_path: Path,
) -> None:
    """The same, where the sibling took the refactor later for eight of its twelve: the
    young branch's two adapted backports are findings, in the full scan and in a detection
    after it."""
    b = young_branch_repo(tmp_path / "r", sibling_took=8)
    found = scan_json(b)
    assert _commits(found["findings"]) == {b.ids["T2"], b.ids["T3"]}
    assert found["adapted"] == []
    practice = str(found["practice"])
    assert practice.startswith(
        f"of 10 adapted backports (2 of this branch's, the rest of {SIBLING}"
    )
    assert practice.endswith("backported later: the branches take them later")
    detected = scan_json(b, "--detect")
    assert _commits(detected["findings"]) == {b.ids["T2"], b.ids["T3"]}


def test_a_branch_that_takes_what_it_went_without_keeps_the_findings(tmp_path: Path) -> None:
    """The same branch, where eight of twelve adapted backports had their refactor
    backported later: the four still without it are findings, as in the IMA case."""
    b = adapted_repo(tmp_path / "r", taken_later=8)
    found = scan_json(b)
    assert found["adapted"] == []
    assert _commits(found["findings"]) == {b.ids[f"T{n}"] for n in range(8, DRIVERS)}
    assert "8 had what they went without backported later" in str(found["practice"])


def test_a_sibling_that_took_it_with_the_target_keeps_the_finding(tmp_path: Path) -> None:
    """Evidence holds an adapted backport as a finding: the sibling took the refactor
    together with the fix; the finding says so and ranks first (`high`)."""
    b = adapted_repo(tmp_path / "r", sibling_takes=(3,))
    found = scan_json(b)
    assert _commits(found["findings"]) == {b.ids["T3"]}
    finding = found["findings"][0]  # type: ignore[index]
    assert finding["confidence"] == "high"
    assert finding["witnesses"][0].startswith(f"{SIBLING} took {b.ids['Y3'][:12]} as ")
    assert b.ids["T3"] not in _commits(found["adapted"])


def test_a_sibling_that_took_it_months_before_the_target_is_no_evidence(
    tmp_path: Path,
) -> None:
    """The sibling took the refactor on its own account, half a year before the fix (not
    in one batch with it): the adapted backport is counted apart as the others are."""
    b = adapted_repo(tmp_path / "r")
    b.cherry_pick(b.ids["Y3"], SIBLING)
    b._clock += 180 * 86400
    b.cherry_pick(b.ids["T3"], SIBLING)
    found = scan_json(b)
    assert found["findings"] == []
    assert _commits(found["adapted"]) == {b.ids[f"T{n}"] for n in range(DRIVERS)}


def test_a_recorded_dependency_keeps_the_finding(tmp_path: Path) -> None:
    """A branch that records the refactor as the fix's dependency (`Stable-dep-of:`)."""
    b = adapted_repo(tmp_path / "r")
    y5, t5 = b.ids["Y5"], b.ids["T5"]
    b.cherry_pick(y5, SIBLING, message=f"d5: use a wider a\n\ncommit {y5} upstream.\n\n"
                  f"Stable-dep-of: {t5[:12]} (\"d5: fix b\")\n")  # fmt: skip
    found = scan_json(b)
    assert _commits(found["findings"]) == {t5}


def test_a_commit_and_its_revert_are_not_proposed(tmp_path: Path) -> None:
    """A backported fix's follow-up, and upstream's revert of that follow-up, both absent:
    the pair cancels, nothing is incomplete."""
    b = two_files_repo(tmp_path / "r")
    fix = b.commit("a: fix\n\nCc: stable@vger.kernel.org\n", {"a.c": _source(0, 3, 2)})
    b.cherry_pick(fix, BRANCH)
    follow = b.commit(
        f'a: fix the fix\n\nFixes: {fix[:12]} ("a: fix")\n', {"a.c": _source(0, 3, 4)}
    )
    b.revert(follow, "master")
    found = scan_json(b)
    assert found["findings"] == []


def test_siblings_as_witnesses_and_the_ranking(tmp_path: Path) -> None:
    """A missing fix a sibling took ranks `high` and names the sibling's commit; one whose
    culprit every sibling has carried for months without it ranks `low`, after it."""
    b = two_files_repo(tmp_path / "r")
    b.branch(SIBLING, "master")
    culprit_a = b.commit("a: change", {"a.c": _source(0, 7, 2)})
    culprit_b = b.commit("b: change", {"b.c": _source(1, 7, 2)})
    for culprit in (culprit_a, culprit_b):
        b.cherry_pick(culprit, BRANCH)
        b.cherry_pick(culprit, SIBLING)
    fix_b = b.commit(
        f'b: fix it\n\nFixes: {culprit_b[:12]} ("b: change")\n', {"b.c": _source(1, 8, 2)}
    )
    b._clock += 200 * 24 * 3600  # months pass
    fix_a = b.commit(
        f'a: fix it\n\nFixes: {culprit_a[:12]} ("a: change")\n', {"a.c": _source(0, 8, 2)}
    )
    taken = b.cherry_pick(fix_a, SIBLING)
    found = scan_json(b)
    listed = found["findings"]
    assert isinstance(listed, list)
    findings = [f for f in listed if f["kind"] == "missing-fix"]
    assert [f["commit"] for f in findings] == [fix_a, fix_b]
    assert findings[0]["confidence"] == "high"
    assert findings[0]["witnesses"] == [f"{SIBLING} took {fix_a[:12]} as {taken[:12]}"]
    assert findings[1]["confidence"] == "low"
    assert findings[1]["witnesses"] == [f"{SIBLING} carries {culprit_b[:12]} without it"]
    # a detection witnesses its findings in bulk, once they are all found: the same lines
    detected = scan_json(b, "--detect")["findings"]
    assert isinstance(detected, list)
    assert [
        (f["commit"], f["confidence"], f["witnesses"])
        for f in detected
        if f["kind"] == "missing-fix"
    ] == [(f["commit"], f["confidence"], f["witnesses"]) for f in findings]


def passed_over_repo(
    path: Path,
    later: int,
    annotation: str | None,
    *,
    culprit_last: bool = False,
    subject: str | None = None,
) -> tuple[RepoBuilder, Oid]:
    """A fix of a culprit the branch has, then `later` upstream fixes of other files, each
    backported (named with `annotation`, or by subject and author alone); the first fix not.
    `culprit_last`: the culprit is backported after the later fixes (the branch met the fix
    only then); `subject`: the later fixes all have it ("Update German translation")."""
    b = RepoBuilder(path)
    b.commit("Linux 5.10", {f"f{n}.c": _source(n, 1, 2) for n in range(12)})
    b.branch(BRANCH, "master")
    b.branch(SIBLING, "master")
    culprit = b.commit("f0: change", {"f0.c": _source(0, 7, 2)})
    if not culprit_last:
        b.cherry_pick(culprit, BRANCH, annotation=annotation)
    fix = b.commit(
        f'f0: fix it\n\nFixes: {culprit[:12]} ("f0: change")\n', {"f0.c": _source(0, 8, 2)}
    )
    for n in range(1, later + 1):
        title = subject or f"f{n}: fix"
        b.cherry_pick(b.commit(title, {f"f{n}.c": _source(n, 5, 2)}), BRANCH, annotation=annotation)
    if culprit_last:
        b.cherry_pick(culprit, BRANCH, annotation=annotation)
    return b, fix


def _missing_fix(b: RepoBuilder, *args: str) -> dict[str, object]:
    listed = scan_json(b, *args)["findings"]
    assert isinstance(listed, list)
    [finding] = [f for f in listed if f["kind"] == "missing-fix"]
    assert isinstance(finding, dict)
    return finding


def test_a_fix_the_branch_passed_over_ranks_low(tmp_path: Path) -> None:
    """A missing fix the branch went without while it took ten backports of later upstream
    commits, its culprit already in, ranks `low` and says so; nine, and it stays `normal`.
    Backports that name nothing count by their subject and author, where those name one
    upstream commit; a detection ranks it alike."""
    for later, annotation, subject, confidence in (
        (9, "upstream", None, "normal"),
        (10, "upstream", None, "low"),
        (10, None, None, "low"),
        (10, None, "po: Update German translation", "normal"),  # each names ten upstream
    ):
        path = tmp_path / f"r{later}{annotation}{subject is None}"
        b, fix = passed_over_repo(path, later, annotation, subject=subject)
        for args in ((), ("--detect",)):
            finding = _missing_fix(b, *args)
            assert (finding["commit"], finding["confidence"]) == (fix, confidence)
            seen = [f"{BRANCH} took {later} later upstream commits without it"]
            assert finding["witnesses"] == (seen if confidence == "low" else [])


def test_low_findings_are_shown_apart_in_text(tmp_path: Path) -> None:
    """Text lists the `low` findings after the others, under a line of their own, whether it
    streams them or writes the report at once; Markdown and HTML name each confidence."""
    b, passed = passed_over_repo(tmp_path / "r", 10, "upstream")
    later = b.commit("f1: more", {"f1.c": _source(1, 5, 3)})
    fresh = b.commit(
        f'f1: fix it\n\nFixes: {later[:12]} ("f1: more")\n', {"f1.c": _source(1, 6, 3)}
    )
    b.cherry_pick(later, BRANCH)
    out = tmp_path / "scan.txt"
    streamed = backportr("scan", "--repo", str(b.path), "-b", BRANCH)
    written = backportr("scan", "--repo", str(b.path), "-b", BRANCH, "-o", str(out))
    for text in (streamed.stdout, out.read_text()):
        head = text.index(f"{BRANCH}: low confidence, apart (2)")  # the fix, its culprit
        assert text.index(fresh[:12]) < head < text.index(passed[:12]), text
    assert streamed.returncode == written.returncode == 4
    for fmt, low in (("markdown", "| low |"), ("html", "<td>low</td>")):
        page = tmp_path / f"scan.{fmt}"
        backportr("scan", "--repo", str(b.path), "-b", BRANCH, "-f", fmt, "-o", str(page))
        assert low in page.read_text(), fmt


def test_a_fix_met_only_with_its_culprit_is_not_passed_over(tmp_path: Path) -> None:
    """The later backports count from the culprit's backport on: backported after them,
    the branch never passed the fix over. A sibling that took the fix, whose culprit it has
    by ancestry (no `high`), is shown and does not outweigh the branch's going without."""
    b, fix = passed_over_repo(tmp_path / "last", 12, "upstream", culprit_last=True)
    finding = _missing_fix(b)
    assert (finding["commit"], finding["confidence"], finding["witnesses"]) == (fix, "normal", [])
    b, fix = passed_over_repo(tmp_path / "sibling", 12, "upstream")
    b.branch(SIBLING, f"{fix}~1")  # forked after the culprit, before the fix
    taken = b.cherry_pick(fix, SIBLING)
    for args in ((), ("--detect",)):
        finding = _missing_fix(b, *args)
        assert finding["confidence"] == "low"
        assert (
            finding["witnesses"]
            == [  # the branch's own history first
                f"{BRANCH} took 12 later upstream commits without it",
                f"{SIBLING} took {fix[:12]} as {taken[:12]}",
            ]
        )


def test_a_sibling_that_has_them_from_its_fork_is_no_witness(tmp_path: Path) -> None:
    """A sibling forked after the fix has it and its culprit by ancestry: it neither took the
    fix nor carries the culprit without it, however long ago it forked (OVS 3.4 and 3.5
    were named as carrying a culprit of 3.3 without a fix they had from their forks)."""
    b = two_files_repo(tmp_path / "r")
    culprit = b.commit("a: change", {"a.c": _source(0, 7, 2)})
    b.cherry_pick(culprit, BRANCH)
    fix = b.commit(f'a: fix it\n\nFixes: {culprit[:12]} ("a: change")\n', {"a.c": _source(0, 8, 2)})
    b.branch(SIBLING, "master")
    b._clock += 200 * 24 * 3600  # months pass
    b.cherry_pick(b.commit("b: later", {"b.c": _source(1, 4, 2)}), SIBLING)  # its tip, later
    for args in ((), ("--detect",)):
        finding = _missing_fix(b, *args)
        assert (finding["commit"], finding["confidence"], finding["witnesses"]) == (
            fix,
            "normal",
            [],
        )


def test_a_sibling_that_took_a_fix_of_what_it_has_from_its_fork_does_not_rank_it_high(
    tmp_path: Path,
) -> None:
    """An adapted backport whose refactor has a fix upstream: a sibling forked after the
    refactor backported the target and that fix (a fix of what it has from its fork, not
    the decision the branch faces: take the refactor). The line says so; the finding ranks
    as without it, not `high` (OVS 3.3's "ofproto-dpif-upcall: Avoid stale ukeys leaks.",
    ranked first for 3.4's fix of a feature 3.4 had from its fork)."""
    b = adapted_repo(tmp_path / "r", taken_later=8)  # the branch takes what it went without
    y9, t9 = b.ids["Y9"], b.ids["T9"]
    fixed = _source(9, 10, 20).replace("int b = 20;", "int b = 20; /* wide */")
    follow = b.commit(f'd9: fix the wider a\n\nFixes: {y9[:12]} ("d9: use a wider a")\n{SIGNED}',
                      {"drivers/d9.c": fixed})  # fmt: skip
    newer = "linux-6.6.y"
    b.branch(newer, y9)
    b.cherry_pick(t9, newer)
    taken = b.cherry_pick(follow, newer)
    found = scan_json(b)
    listed = found["findings"]
    assert isinstance(listed, list)
    finding = next(f for f in listed if f["commit"] == t9)
    assert [m["commit"] for m in finding["series"]] == [y9, follow]
    assert finding["witnesses"] == [
        f"{newer} took {follow[:12]} as {taken[:12]} (it has {y9[:12]} from its fork)"
    ]
    assert finding["confidence"] == "normal"


@given(
    st.lists(st.integers(-50, 50), max_size=40),
    st.integers(-60, 60),
    st.integers(-5, 45),
    st.integers(1, 7),
)
def test_later_backports_are_counted_as_a_walk_counts_them(
    upstream: list[int], newest: int, since: int, block: int
) -> None:
    """The blocked count of later backports after a branch position equals a plain walk."""
    pairs = [(position, u) for position, u in enumerate(upstream)]
    with_blocks = TakenBackports(pairs, block)
    walked = sum(1 for position, u in pairs if position > since and u > newest)
    assert with_blocks.later_than(newest, since) == walked


def test_the_ima_backport_is_never_passed_over(ima: ImaFixture) -> None:
    """The IMA backport's missing commits are its prerequisites and a follow-up of one of
    them: none met on its own (a fix of what the branch has). Twelve later backports after
    it leave it `normal`, in a scan and in a detection."""
    b = RepoBuilder.open(ima.path)
    for n in range(12):
        upstream = b.commit(f"drivers: fix {n}", {f"drivers/later{n}.c": f"int x{n};\n"})
        b.cherry_pick(upstream, "linux-5.10.y")
    for args in ((), ("--detect",)):
        proc = backportr("scan", "--repo", str(b.path), "-b", "linux-5.10.y", "-f", "json", *args)
        assert proc.returncode == 4, proc.stderr
        [finding] = json.loads(proc.stdout)["branches"][0]["findings"]
        assert (finding["kind"], finding["commit"]) == ("incomplete-backport", ima.ids[B836C])
        assert (finding["confidence"], finding["witnesses"]) == ("normal", []), args


def test_a_fix_and_its_upstream_copy_are_one_finding(tmp_path: Path) -> None:
    """A fix merged upstream from its topic branch and also cherry-picked onto the mainline
    (`(cherry picked from commit Y)`): the same change twice upstream, one finding, the
    original's; a detection lists it alike. A copy whose original is not a candidate (the
    branch took the original) is no finding either: it is present by its patch."""
    b = two_files_repo(tmp_path / "r", branch=False)
    culprit = b.commit("a: change", {"a.c": _source(0, 7, 2)})
    b.branch(BRANCH, "master")
    b.branch("topic", "master")
    fix = b.commit(
        f'a: fix it\n\nFixes: {culprit[:12]} ("a: change")\n',
        {"a.c": _source(0, 8, 2)},
        branch="topic",
    )
    copy = b.cherry_pick(fix, "master", annotation="cherry-pick")
    b.commit("b: unrelated", {"b.c": _source(1, 3, 2)})
    b.merge("master", "topic", "Merge branch 'topic'")
    for args in ((), ("--detect",)):
        listed = scan_json(b, *args)["findings"]
        assert isinstance(listed, list)
        assert [f["commit"] for f in listed if f["kind"] == "missing-fix"] == [fix], args
    b.cherry_pick(fix, BRANCH)
    assert scan_json(b)["findings"] == []
    assert copy != fix


def backported_culprit_and_fix(
    path: Path, branch: str, names: str = 'Fixes: {id} ("a: change")'
) -> tuple[RepoBuilder, Oid, Oid]:
    """`branch` forked from master, a culprit backported to it, and the culprit's fix upstream
    that the branch lacks (its message naming the culprit by `names`, `{id}` the culprit's
    first 12 digits): a missing fix, and the backport it leaves incomplete."""
    b = RepoBuilder(path)
    b.commit("Linux 5.10", {"a.c": _source(0, 1, 2)})
    b.branch(branch, "master")
    culprit = b.commit("a: change", {"a.c": _source(0, 7, 2)})
    b.cherry_pick(culprit, branch)
    line = names.replace("{id}", culprit[:12])
    fix = b.commit(f"a: fix it\n\n{line}\n", {"a.c": _source(0, 8, 2)})
    return b, culprit, fix


def test_evidence_names_the_culprit_as_the_fix_did(tmp_path: Path) -> None:
    """A fix that names its culprit `Follow-up for <id>` (systemd's way) is shown so, in the
    missing fix's evidence and in the incomplete backport's series, full scan and detection
    alike; where the branch has the culprit (as its backport) ends the line, the subject
    shortened first when it is too long for it."""
    b, culprit, fix = backported_culprit_and_fix(
        tmp_path / "r", BRANCH, "Follow-up for {id}, which broke the thing in some rare cases."
    )
    backport = b.tip(BRANCH)
    for args in ((), ("--detect",)):
        findings = scan_json(b, *args)["findings"]
        assert isinstance(findings, list)
        found = {f["kind"]: f for f in findings}
        missing, incomplete = found["missing-fix"], found["incomplete-backport"]
        assert missing["evidence"] == [
            f"Follow-up for {culprit[:12]} (a: change), which the branch has as {backport[:12]}"
        ]
        (member,) = incomplete["series"]
        assert member["commit"] == fix
        assert member["reasons"][0]["detail"].startswith(f"Follow-up for {culprit[:12]} (")
    text = backportr("scan", "--repo", str(b.path), "-b", BRANCH, "--detect").stdout
    assert f"why: Follow-up for {culprit[:12]} (a: change), which the branch has as" in text


def test_marks_hold_a_finding_until_it_changes(tmp_path: Path) -> None:
    """A finding marked `not-for-branch` is counted, not listed; once it names another
    commit (a new follow-up upstream) it is listed again, the mark quoted."""
    b, culprit, fix = backported_culprit_and_fix(tmp_path / "r", BRANCH)
    marks = tmp_path / "marks"
    marks.write_text(
        f"# ours\nnot-for-branch {BRANCH} {fix[:12]} - we do not ship a.c\n"
        f"not-for-branch {BRANCH} {culprit[:12]} {fix[:12]} nor this\n"
    )
    held = scan_json(b, "--marks", str(marks))
    assert held["findings"] == []
    assert held["marked"] == [
        f"missing-fix {fix[:12]}: not-for-branch (we do not ship a.c)",
        f"incomplete-backport {culprit[:12]}: not-for-branch (nor this)",
    ]
    quiet = backportr("scan", "--repo", str(b.path), "-b", BRANCH, "--marks", str(marks))
    assert quiet.returncode == 0 and "marked (2, not listed until they change)" in quiet.stdout
    b.commit(f'a: fix the fix\n\nFixes: {fix[:12]} ("a: fix it")\n', {"a.c": _source(0, 9, 2)})
    again = scan_json(b, "--marks", str(marks))
    assert _commits(again["findings"]) == {fix, culprit}
    assert "marked not-for-branch (we do not ship a.c), but it changed" in str(again["findings"])
    marks.write_text("not-for-branch\n")
    bad = backportr("scan", "--repo", str(b.path), "-b", BRANCH, "--marks", str(marks))
    assert bad.returncode == 1 and f"{marks}:1: expected" in bad.stderr


def test_since_bounds_the_backports_looked_at_too(tmp_path: Path) -> None:
    """`--since REV` looks at the fixes after REV and the backports of them only."""
    b = adapted_repo(tmp_path / "r", taken_later=12)
    every = scan_json(b)
    bounded = scan_json(b, "--since", b.ids["T10"])
    assert int(bounded["scanned"]) < int(every["scanned"])  # type: ignore[call-overload]
    assert int(bounded["scanned"]) == 2  # type: ignore[call-overload]  # Y11 and T11


def test_json_lines_are_written_as_findings_settle(tmp_path: Path) -> None:
    """`--format jsonl`: a finding a line, written while the scan runs (the first line is
    read before the process ends: its stdout is a pipe read line by line), then the
    adapted backports and a summary per branch; the same findings as `--format json`."""
    b = adapted_repo(tmp_path / "r", taken_later=8)
    proc = subprocess.Popen(
        [sys.executable, "-m", "backportr", "scan", "--repo", str(b.path), "-b", BRANCH,
         "-f", "jsonl", "--jobs", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    lines = [json.loads(line) for line in proc.stdout]
    assert proc.wait(120) == 4
    summary = lines[-1]
    assert summary["kind"] == "summary" and summary["findings"] == 4
    findings = [line for line in lines if line["kind"] == "incomplete-backport"]
    assert {f["commit"] for f in findings} == _commits(scan_json(b)["findings"])


def test_the_run_line_quotes_a_branch_name_for_the_shell() -> None:
    """A branch name is data: one holding shell syntax is quoted in the `run:` line a
    maintainer copies."""
    from backportr.output.scan import run_line
    from backportr.scan.findings import ScanFinding

    finding = ScanFinding("missing-fix", "23.11;touch$(x)", Oid("a" * 40), "s", "ready")
    assert run_line(finding) == (
        f"backportr resolve {'a' * 12} -b '23.11;touch$(x)' -f mbox -o 'queue-23.11;touch$(x)'"
    )


def test_a_finding_in_text_keeps_what_the_siblings_did_on_its_lines() -> None:
    """Many siblings that went without the commit are shown as the first of them and how
    many more, so that the line still says what they did (it was cut mid-word: "carry
    40f146841364 wi..."); the why line keeps how the branch has the culprit; JSON has both
    whole."""
    from backportr.output.scan import finding_dict, render_finding_line
    from backportr.scan.findings import ScanFinding

    names = ", ".join(f"release-1.{n}" for n in range(6))
    seen = f"{names} carry {'c' * 12} without it"
    why = f"Fixes: {'c' * 12} ({'a long subject ' * 5}), which the branch has as {'b' * 12}"
    finding = ScanFinding(
        "missing-fix", "release-1.3", Oid("a" * 40), "s", "ready", evidence=(why,),
        witnesses=(seen,),
    )  # fmt: skip
    lines = render_finding_line(finding).splitlines()
    assert (
        f"      seen: release-1.0, release-1.1, release-1.2 and 3 more carry {'c' * 12} without it"
        in lines
    )
    assert lines[1].endswith(f"...), which the branch has as {'b' * 12}")
    assert all(len(line) <= 100 for line in lines if "run: " not in line and "mark: " not in line)
    assert finding_dict(finding)["witnesses"] == [seen] and finding_dict(finding)["evidence"] == [
        why
    ]


def test_the_run_and_mark_lines_work_as_printed_for_a_branch_named_with_slashes(
    tmp_path: Path,
) -> None:
    """A branch named `release/2.40/master` (glibc's, FRR's `stable/10.2`): the `run:` line
    writes its queue into one directory, `queue-release-2.40-master` (the queue of a branch
    with slashes was a path whose parents did not exist: the command failed as printed), and
    the `run:` and `mark:` lines are whole in text however long (they were cut at 88
    columns, a command that could not be copied)."""
    branch = "release/2.40/master"
    b, culprit, fix = backported_culprit_and_fix(tmp_path / "r", branch)
    text = backportr("scan", "--repo", str(b.path), "-b", branch, "--branch-pattern", branch)
    assert text.returncode == 4, text.stderr
    runs = [ln.split("run: ", 1)[1] for ln in text.stdout.splitlines() if "run: " in ln]
    marks = [ln.split("mark: ", 1)[1] for ln in text.stdout.splitlines() if "mark: " in ln]
    queue_of = "-f mbox -o queue-release-2.40-master"
    assert (
        runs
        == [  # the missing fix, and the backport it leaves incomplete
            f"backportr resolve {fix[:12]} -b {branch} {queue_of}",
            f"backportr resolve {culprit[:12]} -b {branch} {queue_of}",
        ]
    )
    assert len(runs[0]) > 88 and not runs[0].endswith("...")
    assert marks == [
        f"not-for-branch {branch} {fix[:12]} - REASON",
        f"not-for-branch {branch} {culprit[:12]} {fix[:12]} REASON",
    ]
    argv = shlex.split(runs[0])[1:]
    done = backportr(*argv, "--repo", str(b.path), "--branch-pattern", branch, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    queue = tmp_path / "queue-release-2.40-master"
    assert (queue / "series").read_text().splitlines() == ["0001-a-fix-it.patch"]
    assert (queue / "0001-a-fix-it.patch").is_file()
    marked = tmp_path / "marks"  # the mark lines as printed, a reason given
    marked.write_text("".join(m.replace("REASON", "not ours") + "\n" for m in marks))
    held = backportr("scan", "--repo", str(b.path), "-b", branch, "--branch-pattern", branch,
                     "-f", "json", "--marks", str(marked))  # fmt: skip
    scanned = json.loads(held.stdout)["branches"][0]
    assert held.returncode == 0 and scanned["findings"] == [] and len(scanned["marked"]) == 2


def test_detection_names_the_findings_without_resolving_them(tmp_path: Path) -> None:
    """`--detect`: what the index tells, no series resolved, no trial. A missing fix is
    named with its culprit (status `detected`, no series), but not one upstream reverted; a
    backport's absent follow-up, of it or of a present follow-up, is named as its member,
    but not one upstream reverted. The same findings as the full scan's."""
    b = two_files_repo(tmp_path / "r")
    fix = b.commit("a: fix\n\nCc: stable@vger.kernel.org\n", {"a.c": _source(0, 3, 2)})
    b.cherry_pick(fix, BRANCH)
    first = b.commit(f'a: fix the fix\n\nFixes: {fix[:12]} ("a: fix")\n', {"a.c": _source(0, 3, 4)})
    b.cherry_pick(first, BRANCH)
    second = b.commit(
        f'a: and again\n\nFixes: {first[:12]} ("a: fix the fix")\n', {"a.c": _source(0, 5, 4)}
    )
    dead = b.commit(f'a: a wrong turn\n\nFixes: {fix[:12]} ("a: fix")\n', {"b.c": _source(1, 9, 2)})
    b.revert(dead, "master")
    culprit = b.commit("b: change", {"b.c": _source(1, 7, 2)})
    b.cherry_pick(culprit, BRANCH)
    missing = b.commit(
        f'b: fix it\n\nFixes: {culprit[:12]} ("b: change")\n', {"b.c": _source(1, 8, 2)}
    )
    detected = scan_json(b, "--detect")
    full = scan_json(b)
    found = detected["findings"]
    assert isinstance(found, list)
    assert {f["status"] for f in found} == {"detected"}
    fixes = {f["commit"]: f for f in found if f["kind"] == "missing-fix"}
    assert set(fixes) == {second, missing}  # not `dead`: upstream reverted it
    assert fixes[missing]["series"] == []
    assert f"Fixes: {culprit[:12]}" in fixes[missing]["evidence"][0]
    incomplete = {f["commit"]: f for f in found if f["kind"] == "incomplete-backport"}
    assert set(incomplete) == {fix, first, culprit}  # each backport lacks a follow-up
    assert [m["commit"] for m in incomplete[fix]["series"]] == [second]  # not `dead`
    assert [m["commit"] for m in incomplete[culprit]["series"]] == [missing]
    assert {(f["kind"], f["commit"]) for f in full["findings"]} == {  # type: ignore[attr-defined]
        (f["kind"], f["commit"]) for f in found
    }
    assert detected["untried"] == 0


def test_detection_leaves_adapted_backports_to_a_full_scan(tmp_path: Path) -> None:
    """Whether an adapted backport's original applies at its parent is a trial: detection
    makes none. Before any full scan it counts the backports that differ from upstream as
    `untried`; after one, it lists those found adapted apart (`adapted`, status
    `detected`), and finds none of them a finding."""
    b = adapted_repo(tmp_path / "r")
    cold = scan_json(b, "--detect")
    assert cold["findings"] == [] and cold["adapted"] == []
    assert cold["untried"] == DRIVERS
    assert "not tried" in str(cold["practice"])
    scan_json(b)
    warm = scan_json(b, "--detect")
    assert warm["findings"] == [] and warm["untried"] == 0
    assert _commits(warm["adapted"]) == {b.ids[f"T{n}"] for n in range(DRIVERS)}
    assert {f["status"] for f in warm["adapted"]} == {"detected"}  # type: ignore[attr-defined]
    text = backportr("scan", "--repo", str(b.path), "-b", BRANCH, "--detect").stdout
    assert f"adapted ({DRIVERS}): detection only" in text


def test_a_backport_naming_nothing_is_checked_for_follow_ups(tmp_path: Path) -> None:
    """A fix applied to the stable branch as it went upstream (an embargoed security fix)
    names no upstream commit; found by its patch-id, its follow-up is a missing fix and it
    is an incomplete backport, as an annotated one is, in a scan and in a detection."""
    b = RepoBuilder(tmp_path / "r")
    b.commit("Linux 5.10", {"a.c": _source(0, 1, 2)})
    b.branch(BRANCH, "master")
    fix = b.commit("a: fix the overflow\n\nCVE-2024-0001\n", {"a.c": _source(0, 3, 2)})
    b.cherry_pick(fix, BRANCH, annotation=None)
    follow = b.commit(
        f'a: fix the fix\n\nFixes: {fix[:12]} ("a: fix the overflow")\n', {"a.c": _source(0, 3, 4)}
    )
    for mode in ((), ("--detect",)):
        listed = scan_json(b, *mode)["findings"]
        assert isinstance(listed, list)
        kinds = {(f["kind"], f["commit"]) for f in listed}
        assert kinds == {("missing-fix", follow), ("incomplete-backport", fix)}, mode
        incomplete = next(f for f in listed if f["kind"] == "incomplete-backport")
        assert [m["commit"] for m in incomplete["series"]] == [follow]


def test_detection_reports_an_adapted_backport_where_the_branch_has_no_practice(
    tmp_path: Path,
) -> None:
    """One adapted backport (the IMA case's shape): too few for a practice, so the full
    scan reports it as `incomplete-backport`, and so does a detection once a full scan has
    tried it (before, it is `untried`); the exit code says there is something to act on."""
    b = RepoBuilder(tmp_path / "r")
    b.commit("Linux 5.10", {"drivers/d0.c": _source(0, 1, 2)})
    b.branch(BRANCH, "master")
    b.commit("d0: use a wider a\n\n" + SIGNED, {"drivers/d0.c": _source(0, 10, 2)}, name="Y")
    b.commit(
        f"d0: fix b\n\nCc: stable@vger.kernel.org\n{SIGNED}",
        {"drivers/d0.c": _source(0, 10, 20)},
        name="T",
    )
    b.cherry_pick(b.ids["T"], BRANCH, files={"drivers/d0.c": _source(0, 1, 20)})
    assert scan_json(b, "--detect")["untried"] == 1
    full = scan_json(b)
    assert [(f["kind"], f["commit"]) for f in full["findings"]] == [  # type: ignore[attr-defined]
        ("incomplete-backport", b.ids["T"])
    ]
    detected = scan_json(b, "--detect")
    assert detected["adapted"] == []
    listed = detected["findings"]
    assert isinstance(listed, list)
    assert [(f["kind"], f["commit"], f["status"]) for f in listed] == [
        ("incomplete-backport", b.ids["T"], "detected")
    ]
    assert "adapted" in listed[0]["evidence"][0]
