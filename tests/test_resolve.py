"""Resolve on real fixture repositories: every closure rule, the IMA case, and agreement of
the in-memory trial with real `git cherry-pick`."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from backportr.examples.ima import A1175, B836C, BP_202, DB1D1, F8A92, ImaFixture, build
from backportr.git.trial import TreeState, TrialApplier
from backportr.model import BranchReport, Oid, Reason
from backportr.resolve.closure import Closure
from backportr.resolve.finders import Finding
from backportr.resolve.resolver import Resolver
from backportr.resolve.workspace import open_workspace
from backportr.settings import Settings
from backportr.text.relation_forms import FORMS
from tests.conftest import backportr, git
from tests.resolve_scenarios import ALL, BRANCH, Scenario, follow_up_in_form, long_chain


def resolve(path: Path, target: Oid, branch: str = BRANCH, **kw: Any) -> BranchReport:
    with open_workspace(Settings(repo=path, branches=(branch,))) as ws:
        return Resolver(ws, **kw).resolve(target, ws.branches).branches[0]


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Scenario]:
    root = tmp_path_factory.mktemp("resolve")
    return {name: make(root / name) for name, make in ALL.items()}


@pytest.mark.parametrize("name", [n for n in ALL if n != "long_chain"])
def test_scenario(scenarios: dict[str, Scenario], name: str) -> None:
    s = scenarios[name]
    report = resolve(s.path, s.ids[s.target])
    assert report.status == s.status, report
    assert [m.commit for m in report.series] == [s.ids[n] for n in s.expected], report


def test_reasons_carry_evidence(scenarios: dict[str, Scenario]) -> None:
    s = scenarios["follow_up_chain"]
    report = resolve(s.path, s.ids["target"])
    roles = {m.commit: (m.role, m.reasons[0].kind, m.reasons[0].related) for m in report.series}
    assert roles[s.ids["target"]][0] == "target"
    assert roles[s.ids["fix"]] == ("follow-up", "follow-up", s.ids["target"])
    assert roles[s.ids["fix-of-fix"]] == ("follow-up", "follow-up", s.ids["fix"])
    assert all(m.apply == "clean" for m in report.series)


def test_wrong_id_says_matched_by_subject(scenarios: dict[str, Scenario]) -> None:
    s = scenarios["wrong_id_follow_up"]
    fix = resolve(s.path, s.ids["target"]).series[1]
    assert "matched by subject" in fix.reasons[0].detail


def test_stable_dep_of_evidence(scenarios: dict[str, Scenario]) -> None:
    s = scenarios["newer_branch_stable_dep"]
    prep = resolve(s.path, s.ids["target"]).series[0]
    assert prep.reasons[0].kind == "stable-dep-of"
    assert "linux-6.1.y" in prep.reasons[0].detail


def test_declared_prerequisite_respects_versions(scenarios: dict[str, Scenario]) -> None:
    s = scenarios["declared_prerequisite"]
    report = resolve(s.path, s.ids["target"])
    assert report.series[0].reasons[0].kind == "declared"
    assert s.ids["other"] not in {m.commit for m in report.series}  # # 6.6.x does not cover 5.10


def test_conflict_prerequisite_evidence(scenarios: dict[str, Scenario]) -> None:
    s = scenarios["conflict_resolved_by_one"]
    report = resolve(s.path, s.ids["target"])
    enabler = report.series[0]
    assert enabler.reasons[0].kind == "conflict" and "drivers/drv.c" in enabler.reasons[0].detail
    assert s.ids["context"] not in {m.commit for m in report.series}


def test_symbol_evidence(scenarios: dict[str, Scenario]) -> None:
    s = scenarios["symbol_helper"]
    report = resolve(s.path, s.ids["target"])
    helper, _, fix = report.series
    assert helper.reasons[0].kind == "symbol"
    assert helper.reasons[0].detail.startswith(
        f"symbol drv_clamp_value introduced by {s.ids['helper'][:12]} in include/linux/drv_util.h"
    )
    assert (fix.role, fix.reasons[0].kind, fix.reasons[0].related) == (
        "follow-up",
        "follow-up",
        s.ids["helper"],
    )
    conflicting = resolve(
        scenarios["symbol_from_conflicting_commit"].path,
        scenarios["symbol_from_conflicting_commit"].ids["target"],
    )
    macro = conflicting.series[0]
    assert macro.reasons[0].kind == "symbol" and "DRV_FLAG_FAST" in macro.reasons[0].detail
    assert macro.apply == "conflict" and macro.conflict_files == ("drivers/drv.c",)


def test_conflict_depth(scenarios: dict[str, Scenario], monkeypatch: pytest.MonkeyPatch) -> None:
    s = scenarios["conflict_chain"]
    shallow = resolve(s.path, s.ids["target"], conflict_depth=1)
    assert [(m.commit, m.apply) for m in shallow.series] == [(s.ids["target"], "conflict")]
    (enabler,) = [x for x in shallow.suggestions if x.reason.kind == "conflict"]
    assert enabler.commit == s.ids["enabler"] and "does not apply either" in enabler.reason.detail
    deep = resolve(s.path, s.ids["target"])  # two levels, the default
    assert deep.status == "ready"
    assert [m.commit for m in deep.series] == [s.ids[n] for n in ("deeper", "enabler", "target")]
    # Two levels that leave a member conflicting: the answer is one level's. The second
    # level's search stops at the follow-up that conflicts with nothing to make it apply:
    # only one answer is built, the first level's.
    s = scenarios["conflict_chain_behind_a_conflicting_follow_up"]
    answers: list[str] = []
    built = Resolver._report

    def report_built(self: Resolver, closure: Closure) -> BranchReport:
        answers.append(closure.target)
        return built(self, closure)

    monkeypatch.setattr(Resolver, "_report", report_built)
    report = resolve(s.path, s.ids["target"])
    assert [m.commit for m in report.series] == [s.ids["target"], s.ids["follow-up"]]
    assert s.ids["enabler"] in [x.commit for x in report.suggestions]
    assert answers == [s.ids["target"]]


def test_context_suggestions(scenarios: dict[str, Scenario]) -> None:
    s = scenarios["context_suggestion"]
    report = resolve(s.path, s.ids["target"])
    assert report.status == "ready" and [m.commit for m in report.series] == [s.ids["target"]]
    assert [x.commit for x in report.suggestions] == [s.ids["logic"]]
    assert report.suggestions[0].reason.kind == "context"
    assert "drv_fn4" in report.suggestions[0].reason.detail
    assert not resolve(
        scenarios["follow_up_chain"].path, scenarios["follow_up_chain"].ids["target"]
    ).suggestions


def test_a_big_feature_is_suggested_not_pulled(scenarios: dict[str, Scenario]) -> None:
    s = scenarios["symbol_from_big_feature"]
    report = resolve(s.path, s.ids["target"])
    assert report.status == "conflict" and report.series[0].apply == "clean"
    (suggestion,) = [x for x in report.suggestions if x.reason.kind == "symbol"]
    assert suggestion.commit == s.ids["feature"]
    assert "drv_td_lock" in suggestion.reason.detail and "adapt" in suggestion.reason.detail
    assert any("manual backport is needed" in w for w in report.warnings)


def test_branch_only_conflict_names_files(scenarios: dict[str, Scenario]) -> None:
    s = scenarios["branch_only_conflict"]
    report = resolve(s.path, s.ids["target"])
    assert report.series[0].apply == "conflict"
    assert report.series[0].conflict_files == ("drivers/drv.c",)


def test_possible_dependencies_of_a_conflict(scenarios: dict[str, Scenario]) -> None:
    """A member left conflicting with nothing found that makes it apply, and no suggestion
    about it yet: the newest absent commits that last changed the lines it conflicts on are
    named, as a stable FAILED mail's "Possible dependencies"."""
    s = scenarios["helper_that_conflicts_too"]
    report = resolve(s.path, s.ids["target"])
    assert [(x.commit, x.reason.kind, x.reason.related) for x in report.suggestions] == [
        (s.ids[name], "conflict", s.ids["target"]) for name in ("blank", "tail", "helper")
    ]
    assert all("possible dependency" in x.reason.detail for x in report.suggestions)
    # a follow-up that conflicts gets no search, but what it conflicts on is named
    s = scenarios["conflicting_follow_up"]
    report = resolve(s.path, s.ids["target"])
    assert [(x.commit, x.reason.related) for x in report.suggestions] == [
        (s.ids["refactor"], s.ids["fix"])
    ]
    # the lines a branch-only change conflicts with are older than the fork: none to name
    s = scenarios["branch_only_conflict"]
    assert not resolve(s.path, s.ids["target"]).suggestions
    # a member a helper suggestion already speaks of gets no second list
    s = scenarios["conflict_chain"]
    shallow = resolve(s.path, s.ids["target"], conflict_depth=1)
    assert [x.commit for x in shallow.suggestions] == [s.ids["enabler"]]


def test_present_members_are_listed(scenarios: dict[str, Scenario]) -> None:
    s = scenarios["incomplete_follow_up"]
    report = resolve(s.path, s.ids["target"])
    present = {p.commit: (p.as_commit, p.how) for p in report.present}
    assert present[s.ids["target"]] == (s.ids["target-bp"], "annotation")


def test_the_cap(tmp_path: Path) -> None:
    s = long_chain(tmp_path / "chain", length=6)
    report = resolve(s.path, s.ids["c0"], max_commits=3)
    assert len(report.series) == 3
    assert any("--max-commits 3" in w for w in report.warnings)
    full = resolve(s.path, s.ids["c0"])
    assert [m.commit for m in full.series] == [s.ids[n] for n in s.expected]


def test_a_long_chain_costs_one_git_process_a_member_at_most(tmp_path: Path) -> None:
    """A `Fixes:` chain on a linear history: the merge that brought each member is not asked
    of git member by member (no first-parent merge brought anything); what remains is one
    `git blame` a member (its context). Counted from git's own trace of what ran."""
    import os
    import subprocess
    import sys

    s = long_chain(tmp_path / "chain", length=30)
    trace = tmp_path / "trace"
    env = dict(os.environ, GIT_TRACE=str(trace))
    argv = [sys.executable, "-m", "backportr", "resolve", s.ids["c0"], "--repo", str(s.path)]
    warm = subprocess.run([*argv, "-b", BRANCH, "-q"], capture_output=True)  # the index built
    assert warm.returncode == 0, warm.stderr
    proc = subprocess.run([*argv, "-b", BRANCH, "-q"], env=env, capture_output=True)
    assert proc.returncode == 0, proc.stderr
    ran = [line for line in trace.read_text().splitlines() if "trace: built-in: git" in line]
    assert len([line for line in ran if "--ancestry-path" in line]) == 0
    assert len([line for line in ran if " rev-list " in line and "--merges" in line]) == 1
    assert len([line for line in ran if " blame " in line]) <= 30
    assert len(ran) < 30 * 2  # the old code ran two a member: 60 and more


# -- the IMA/overlayfs case ---------------------------------------------------------------


def test_ima_at_5_10_202_is_incomplete(ima: ImaFixture) -> None:
    report = resolve(ima.path, ima.ids[B836C], branch="linux-5.10.y")
    assert report.status == "incomplete"
    assert [m.commit for m in report.series] == ima.expected_incomplete
    assert report.alternative is not None and report.alternative.startswith(
        f"revert {ima.ids[BP_202][:12]} (the adapted backport"
    )
    kinds = {m.commit: m.reasons[0].kind for m in report.series}
    assert kinds == {
        ima.ids[DB1D1]: "adapted",
        ima.ids[F8A92]: "follow-up",
        # STATX_CHANGE_COOKIE and change_cookie, which db1d1e8b9867 uses (the symbol finder
        # runs on a conflicting prerequisite of the target too)
        ima.ids[A1175]: "symbol",
    }


def test_an_adapted_backports_check_is_kept_and_reused(ima: ImaFixture) -> None:
    """Whether an upstream commit conflicts at the parent of its adapted backport is a fact
    of the two commits: kept in the index, a second resolve (a scan's next target) reads it
    instead of merging again, and answers the same."""
    first = resolve(ima.path, ima.ids[B836C], branch="linux-5.10.y")
    with open_workspace(Settings(repo=ima.path, branches=("linux-5.10.y",))) as ws:
        kept = ws.index.cache.adapted_conflicts(ima.ids[B836C], ima.ids[BP_202])
        ws.index.cache.cache_adapted_conflicts(ima.ids[B836C], ima.ids[BP_202], False)
    assert kept is True
    told_clean = resolve(ima.path, ima.ids[B836C], branch="linux-5.10.y")
    assert ima.ids[DB1D1] not in [m.commit for m in told_clean.series]  # the kept answer used
    with open_workspace(Settings(repo=ima.path, branches=("linux-5.10.y",))) as ws:
        ws.index.cache.cache_adapted_conflicts(ima.ids[B836C], ima.ids[BP_202], True)
    again = resolve(ima.path, ima.ids[B836C], branch="linux-5.10.y")
    assert (again.status, again.series) == (first.status, first.series)


def test_ima_at_5_10_194_is_ready(ima: ImaFixture) -> None:
    report = resolve(ima.path, ima.ids[B836C], branch="v5.10.194")
    assert report.status == "ready"
    assert [m.commit for m in report.series] == ima.expected_ready
    assert all(m.apply == "clean" for m in report.series)


def test_ima_at_5_10_194_keeps_four_members_each_with_its_evidence(ima: ImaFixture) -> None:
    """Minimal by proof leaves the IMA series whole: every member has evidence of need, and
    nothing left it as a suggestion."""
    report = resolve(ima.path, ima.ids[B836C], branch="v5.10.194")
    assert len(report.series) == 4
    evidence = {"target", "declared", "stable-dep-of", "follow-up", "culprit", "symbol"}
    evidence |= {"conflict", "posting", "adapted"}
    for member in report.series:
        assert member.reasons and all(r.kind in evidence for r in member.reasons), member
    assert not any("applies without it" in x.reason.detail for x in report.suggestions)
    assert not any(x.reason.detail.endswith("optional") for x in report.suggestions)


def test_ima_fixture_is_deterministic(ima: ImaFixture, tmp_path: Path) -> None:
    assert build(tmp_path / "again").ids == ima.ids


# -- the trial agrees with git cherry-pick -------------------------------------------------


def _git_trial(repo: Path, branch: str, series: list[Oid], work: Path) -> list[tuple[str, str]]:
    """Cherry-pick each commit with real git; conflicts are resolved by taking the commit's
    side (as the in-memory trial does) so the chain goes on. Returns (result, tree) pairs."""
    git(work.parent, "clone", "-q", "--no-checkout", str(repo), work.name)
    git(
        work,
        "checkout",
        "-q",
        "--detach",
        f"origin/{branch}" if branch.startswith("linux") else branch,
    )
    out = []
    for commit in series:
        proc = subprocess.run(
            [
                "git",
                "-C",
                str(work),
                "cherry-pick",
                "--allow-empty",
                "--keep-redundant-commits",
                commit,
            ],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            conflicted = git(work, "diff", "--name-only", "--diff-filter=U").split()
            git(work, "checkout", "--theirs", "--", *conflicted)
            git(work, "add", "-A")
            git(work, "-c", "core.editor=true", "cherry-pick", "--continue")
            result = "conflict"
        else:
            result = "empty" if git(work, "diff", "HEAD~1", "HEAD", "--stat") == "" else "clean"
        out.append((result, git(work, "rev-parse", "HEAD^{tree}").strip()))
    return out


def _in_memory_trial(repo_path: Path, branch: str, series: list[Oid]) -> list[tuple[str, str]]:
    from backportr.git.repo import Repo

    repo = Repo(repo_path)
    applier = TrialApplier(repo)
    state = TreeState(repo.branch(branch).tip)
    out: list[tuple[str, str]] = []
    for commit in series:
        result = applier.pick(commit, state)
        state = result.state
        out.append((result.result, applier.write_tree(state)))
    return out


@pytest.mark.parametrize("name", sorted(ALL))
def test_trial_agrees_with_git_cherry_pick(
    scenarios: dict[str, Scenario], name: str, tmp_path: Path
) -> None:
    s = scenarios[name]
    series = [s.ids[n] for n in s.expected] or [s.ids[s.target]]
    ours = _in_memory_trial(s.path, s.branch, series)
    theirs = _git_trial(s.path, s.branch, series, tmp_path / "clone")
    assert ours == theirs


@pytest.mark.parametrize(
    ("branch", "names"),
    [
        ("v5.10.194", [A1175, DB1D1, B836C, F8A92]),
        ("v5.10.194", [B836C]),
        ("v5.10.194", [F8A92]),
        ("linux-5.10.y", [A1175, DB1D1, F8A92]),
    ],
)
def test_ima_trial_agrees_with_git(
    ima: ImaFixture, tmp_path: Path, branch: str, names: list[str]
) -> None:
    series = [ima.ids[n] for n in names]
    assert _in_memory_trial(ima.path, branch, series) == _git_trial(
        ima.path, branch, series, tmp_path / "clone"
    )


# -- the command line ----------------------------------------------------------------------


_cli = backportr


def test_resolve_json_schema(ima: ImaFixture) -> None:
    proc = _cli(
        "resolve",
        ima.ids[B836C][:12],
        "--branch",
        "linux-5.10.y",
        "--branch",
        "v5.10.194",
        "--repo",
        str(ima.path),
        "--format",
        "json",
    )
    assert proc.returncode == 4, proc.stderr  # 5.10.202: a member conflicts: a human adapts it
    data = json.loads(proc.stdout)
    assert data["schema"] == 1 and data["target"] == ima.ids[B836C]
    first, second = data["branches"]
    assert first["branch"] == "linux-5.10.y" and first["status"] == "incomplete"
    assert [m["commit"] for m in first["series"]] == ima.expected_incomplete
    member = first["series"][0]
    assert set(member) >= {"commit", "subject", "role", "reasons", "apply"}
    assert set(member["reasons"][0]) == {"kind", "detail", "related"}
    assert first["present"][0]["commit"] == ima.ids[B836C]
    assert first["cost"] == {"commits": 3, "files": 7, "conflicts": 1}
    assert second["status"] == "ready"
    assert [m["role"] for m in second["series"]] == [
        "prerequisite",
        "prerequisite",
        "target",
        "follow-up",
    ]


def test_resolve_script_and_text(ima: ImaFixture, tmp_path: Path) -> None:
    out = tmp_path / "series.sh"
    proc = _cli(
        "resolve",
        ima.ids[B836C],
        "-b",
        "v5.10.194",
        "--repo",
        str(ima.path),
        "--format",
        "script",
        "--output",
        str(out),
    )
    assert proc.returncode == 0 and proc.stdout == ""
    script = out.read_text()
    picks = [ln.split()[3] for ln in script.splitlines() if ln.strip().startswith("git cherry")]
    assert picks == ima.expected_ready
    # Run it in a clone: a new worktree on a new branch, stable messages, the user's checkout
    # left alone; the result is the tree the mbox gives through git am.
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ima.path), str(clone)], check=True)
    head = subprocess.run(
        ["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout
    ran = subprocess.run(["sh", str(out)], cwd=clone, capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    worktree = tmp_path / f"backport-{ima.ids[B836C][:12]}-v5.10.194"
    log = subprocess.run(
        ["git", "-C", str(worktree), "log", "--format=%an%x00%B%x01", "-4"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    messages = [m.strip("\n") for m in log.split("\x01") if m.strip()][::-1]
    assert [m.split("\0")[1].split("\n")[2] for m in messages] == [
        f"commit {c} upstream." for c in ima.expected_ready
    ]
    assert "Stable-dep-of: " in messages[0] and messages[0].startswith("Jeff Layton\0")
    assert (
        subprocess.run(
            ["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout
        == head
    )  # the user's checkout did not move
    branch = f"backport/{ima.ids[B836C][:12]}-v5.10.194"
    tree = subprocess.run(
        ["git", "-C", str(clone), "rev-parse", f"{branch}^{{tree}}"], capture_output=True, text=True
    ).stdout.strip()
    assert tree == _in_memory_trial(ima.path, "v5.10.194", ima.expected_ready)[-1][1]
    text = _cli(
        "resolve", ima.ids[B836C], "-b", "v5.10.194", "-b", "linux-5.10.y", "--repo", str(ima.path)
    ).stdout
    assert "ready: the series applies cleanly" in text and "incomplete" in text
    assert text.rstrip().splitlines()[-3].split()[:2] == ["branch", "status"]  # the matrix


def test_resolve_conflict_exits_4(scenarios: dict[str, Scenario]) -> None:
    s = scenarios["branch_only_conflict"]
    proc = _cli("resolve", s.ids["target"], "-b", BRANCH, "--repo", str(s.path))
    assert proc.returncode == 4
    assert "conflict" in proc.stdout


def test_demo() -> None:
    proc = _cli("demo")
    assert proc.returncode == 0, proc.stderr
    assert "incomplete" in proc.stdout and "ready" in proc.stdout
    assert "vfs: plumb i_version handling into struct kstat" in proc.stdout


def test_names_a_member_declares_are_its_own() -> None:
    from backportr.resolve.finders.symbols import declared_names

    assert declared_names("    size_t len = 0, opt_len = 0, data_len = 0;") == {
        "len",
        "opt_len",
        "data_len",
    }
    assert declared_names("\tstruct inode *real_inode = d_real_inode(file_dentry(file));") == {
        "real_inode"
    }
    assert declared_names("static int foo(const char *name, size_t n)") == {"name", "n"}
    assert declared_names("\thns_roce_spin_lock(&qp->sq.hr_lock);") == set()
    assert declared_names("\ty = drv_clamp_value(y, 100);") == set()


def test_culprit_policy_auto_follows_the_projects_tagging(
    scenarios: dict[str, Scenario],
) -> None:
    """`auto` (the default) takes an absent culprit in a project that never tags; `evidence`
    from git config (or --culprits) keeps the answer `not-needed` with the alternative."""
    s = scenarios["culprit_absent_in_a_project_that_never_tags"]
    target = s.ids["target"]
    report = resolve(s.path, target)
    assert "does not tag fixes for stable" in report.series[0].reasons[0].detail
    strict = backportr(
        "-c", "backportr.culprits=evidence", "resolve", target, "--repo", str(s.path),
        "-b", BRANCH, "--format", "json",
    )  # fmt: skip
    assert strict.returncode == 0, strict.stderr
    answer = json.loads(strict.stdout)["branches"][0]
    assert answer["status"] == "not-needed"
    assert s.ids["culprit"][:12] in answer["alternative"]


def test_trials_leave_no_objects_in_the_repository(
    scenarios: dict[str, Scenario], tmp_path: Path
) -> None:
    """Trial merges write blobs and trees; they go to a private object directory removed at
    exit, so a resolve (or a scan of thousands of targets) leaves the repository as it was."""
    s = scenarios["conflict_resolved_by_one"]
    copy = tmp_path / "copy"
    git(tmp_path, "clone", "-q", "--bare", "--no-local", str(s.path), str(copy))
    before = git(copy, "count-objects", "-v")
    for fmt in ("json", "mbox"):
        run = backportr(
            "resolve", s.ids[s.target], "--repo", str(copy), "-b", BRANCH, "--format", fmt,
            env={**os.environ, "TMPDIR": str(tmp_path)},
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip()
    assert git(copy, "count-objects", "-v") == before
    assert not list(tmp_path.glob("backportr-objects-*"))


@pytest.mark.parametrize(
    ("name", "helper", "words"),
    [
        ("refactor_in_a_fixes_only_project", "refactor", ("not a fix", "take fixes")),
        ("helper_beyond_the_targets_files", "enabler", ("fs/core.c", "adapt")),
    ],
)
def test_a_helper_left_out_is_suggested_with_why(
    scenarios: dict[str, Scenario], name: str, helper: str, words: tuple[str, str]
) -> None:
    s = scenarios[name]
    report = resolve(s.path, s.ids["target"])
    (suggestion,) = [x for x in report.suggestions if x.commit == s.ids[helper]]
    assert all(word in suggestion.reason.detail for word in words)
    assert report.series[0].apply == "conflict"


@pytest.mark.parametrize("form", [f.name for f in FORMS])
def test_a_follow_up_in_each_relation_form(form: str, tmp_path: Path) -> None:
    s = follow_up_in_form(form)(tmp_path / "r")
    report = resolve(s.path, s.ids[s.target])
    assert [m.commit for m in report.series] == [s.ids[n] for n in s.expected], report
    assert report.series[1].role == "follow-up"


def test_a_projects_own_fix_pattern(tmp_path: Path) -> None:
    """`backportr.fixesPattern` names a project's own form (`Amends: <id>`): its follow-up
    joins once the pattern is configured, the index reads every message again, `index -v`
    counts the commits of each form, and a pattern without one group is one line, exit 2."""
    from tests.resolve_scenarios import Kernel

    k = Kernel(tmp_path / "r")
    target = k.edit_fn("target", "drv_fn1", "y += 100;")
    fix = k.edit_fn("fix", "drv_fn2", "y += 2;", trailers=f"Amends: {target[:12]}\n")
    repo = str(k.b.path)
    before = _cli("resolve", target, "--repo", repo, "-b", BRANCH, "-f", "json")
    assert [m["commit"] for m in json.loads(before.stdout)["branches"][0]["series"]] == [target]
    git(k.b.path, "config", "backportr.fixesPattern", r"^Amends: ([0-9a-f]{7,40})")
    after = _cli("resolve", target, "--repo", repo, "-b", BRANCH, "-f", "json")
    series = json.loads(after.stdout)["branches"][0]["series"]
    assert [m["commit"] for m in series] == [target, fix], after.stderr
    counted = _cli("-v", "index", "--repo", repo)
    assert "1 commits name a culprit as fixesPattern 1" in counted.stderr
    git(k.b.path, "config", "backportr.fixesPattern", "^Amends: [0-9a-f]+")
    bad = _cli("resolve", target, "--repo", repo, "-b", BRANCH)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    assert "backportr.fixesPattern" in bad.stderr


def test_a_file_the_branch_adapts_by_hand_yields_no_prerequisite(
    scenarios: dict[str, Scenario],
) -> None:
    """`.mailmap`, changed otherwise by each of the branch's backports: the target's conflict
    there pulls in nothing (the alias commit that last changed the lines is no member and
    no suggestion), and a warning names the file to adapt."""
    s = scenarios["mailmap_adapted_by_hand"]
    report = resolve(s.path, s.ids["target"])
    assert [m.commit for m in report.series] == [s.ids["target"]]
    assert report.series[0].conflict_files == (".mailmap",)
    assert s.ids["alias"] not in {x.commit for x in report.suggestions}
    assert any(
        ".mailmap, which this branch's backports adapt by hand" in w for w in report.warnings
    )


def test_a_sibling_branch_that_took_the_target_says_with_what(tmp_path: Path) -> None:
    """Siblings as evidence: linux-5.15.y backported the target with its follow-up `fix`
    and without the later `fix2`; the answer on linux-5.10.y says so (JSON and text), and a
    suggestion 5.15 took ranks before one it did not. A branch that forked after the target
    has it by ancestry: no decision of its maintainers, not listed; nor is one of the same
    fork as 5.10 (the same line at another state)."""
    from dataclasses import replace

    from backportr.model import Reason, Suggestion
    from backportr.resolve.elsewhere import with_elsewhere
    from tests.resolve_scenarios import Kernel

    k = Kernel(tmp_path / "r")
    k.b.branch("linux-5.10.9.y", BRANCH)  # the same fork as 5.10: the same line, not listed
    k.edit_fn("v5.15", "drv_fn6", "y += 6;")  # 5.15 forks later than 5.10: another line
    k.b.branch("linux-5.15.y", "master")
    helper = k.edit_fn("helper", "drv_fn4", "y += 4;")
    other = k.edit_fn("other", "drv_fn5", "y += 5;")
    target = k.edit_fn("target", "drv_fn1", "y += 100;")
    fix = k.edit_fn("fix", "drv_fn2", "y += 2;", trailers=k.fixes("target"))
    fix2 = k.edit_fn("fix2", "drv_fn3", "y += 3;", trailers=k.fixes("target"))
    k.b.branch("linux-6.1.y", "master")  # forked after all of them: ancestry, no decision
    for name in ("helper", "target", "fix"):
        k.b.cherry_pick(name, "linux-5.15.y", name=f"{name}-5.15")
    k.b.cherry_pick("target", "linux-5.10.9.y", name="target-5.10.9")
    repo = str(k.b.path)

    out = backportr("resolve", target, "--repo", repo, "-b", BRANCH, "-f", "json")
    branch = json.loads(out.stdout)["branches"][0]
    assert [m["commit"] for m in branch["series"]] == [target, fix, fix2], out.stderr
    assert branch["elsewhere"] == [
        {"branch": "linux-5.15.y", "as": k.b.ids["target-5.15"], "took": [fix], "without": [fix2]}
    ]
    text = backportr("resolve", target, "--repo", repo, "-b", BRANCH).stdout
    line = f"elsewhere: linux-5.15.y took it as {k.b.ids['target-5.15'][:12]} with {fix[:12]};"
    assert f"{line} without {fix2[:12]}" in text

    with open_workspace(Settings(repo=k.b.path, branches=(BRANCH,))) as ws:
        resolver = Resolver(ws)
        report = resolver.resolve(target, ws.branches).branches[0]
        why = Reason("context", "changed the logic around it", target)
        suggested = (Suggestion(other, "drv: other", why), Suggestion(helper, "drv: helper", why))
        siblings = resolver.other_lines(ws.branches[0])
        assert [r.name for r in siblings] == ["linux-5.15.y", "linux-6.1.y"]
        ranked = with_elsewhere(
            replace(report, suggestions=suggested), target, siblings, ws.presence
        )
    assert [s.commit for s in ranked.suggestions] == [helper, other]
    assert [e.took for e in ranked.elsewhere] == [(fix, helper)]


def test_follow_up_of_a_part_never_had_is_a_suggestion(scenarios: dict[str, Scenario]) -> None:
    s = scenarios["follow_up_of_a_part_never_had"]
    report = resolve(s.path, s.ids["target"])
    optional = [x for x in report.suggestions if x.commit == s.ids["follow-up"]]
    assert len(optional) == 1, report
    assert optional[0].reason.kind == "follow-up"
    assert (
        "drivers/new.c, tests/test-new.c, which the branch does not have"
        in optional[0].reason.detail
    )
    assert optional[0].reason.detail.endswith("optional")


def test_a_helper_the_series_applies_without_leaves(scenarios: dict[str, Scenario]) -> None:
    """Minimal by proof: a commit in a `ready` series only to resolve a conflict, which a
    trial shows the series applies without (here `context`, which touched lines near the
    target's, linked as if a search had found it), becomes a suggestion saying so; the
    helper the target needs stays."""
    s = scenarios["conflict_resolved_beside_anothers_change"]
    target, context = s.ids["target"], s.ids["context"]
    with open_workspace(Settings(repo=s.path, branches=(BRANCH,))) as ws:
        resolver = Resolver(ws)
        found, closure = resolver._attempt(target, ws.branches[0], 1, authors=False)
        assert found is not None and found.status == "ready"
        closure.link(
            Finding(context, "prerequisite", Reason("conflict", "drivers/drv.c", target)), target
        )
        report = resolver._report(closure)
    assert [m.commit for m in report.series] == [s.ids["enabler"], target], report
    (left,) = [x for x in report.suggestions if x.commit == context]
    assert "the series applies without it (a trial)" in left.reason.detail


def test_cosmetic_follow_up_says_the_branchs_practice(scenarios: dict[str, Scenario]) -> None:
    s = scenarios["cosmetic_follow_up_on_a_branch_that_leaves_them"]
    report = resolve(s.path, s.ids["target"])
    (optional,) = [x for x in report.suggestions if x.commit == s.ids["typo"]]
    assert "only comments or documentation" in optional.reason.detail
    assert f"{BRANCH} took 0 of the 6 such follow-ups it met: optional" in optional.reason.detail
