"""backportr scan on fixture repositories: each finding kind and each policy input, state and
--new-only, the lock, exit codes, and the HTML report in a headless browser."""

from __future__ import annotations

import contextlib
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from backportr.examples.ima import A1175, B836C, ImaFixture
from backportr.model import Oid
from backportr.scan.run import _chunks
from tests.browser import browser, dump_dom, screenshot
from tests.resolve_scenarios import BRANCH, Kernel


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Kernel:
    k = Kernel(tmp_path_factory.mktemp("scan") / "repo", functions=12)
    b = k.b
    k.edit_fn("culprit", "drv_fn1", "y += 100;")
    b.cherry_pick("culprit", BRANCH, name="culprit-bp")  # backported culprit
    k.edit_fn("missing", "drv_fn2", "y += 2;", trailers=k.fixes("culprit"))  # -> missing-fix
    k.edit_fn("never", "drv_fn3", "y += 300;")  # never backported
    k.edit_fn("fix-of-never", "drv_fn4", "y += 4;", trailers=k.fixes("never"))  # not reported
    k.edit_fn("by-patch", "drv_fn5", "y += 5;", trailers=k.fixes("culprit"))
    b.cherry_pick("by-patch", BRANCH, annotation=None, name="by-patch-bp")  # present by patch
    k.edit_fn("dropped", "drv_fn6", "y += 6;", trailers=k.fixes("culprit"))  # in dropped list
    k.edit_fn("ignored", "core_fn1", "y += 7;", path="fs/core.c", trailers=k.fixes("culprit"))
    k.edit_fn(
        "floor",
        "drv_fn7",
        "y += 8;",
        trailers=k.fixes("culprit") + "Cc: <stable@vger.kernel.org> # 6.1+\n",
    )
    k.edit_fn("reverted", "drv_fn8", "y += 9;")
    b.cherry_pick("reverted", BRANCH, name="reverted-bp")
    b.revert("reverted", "master", name="upstream-revert")  # -> reverted-upstream
    k.edit_fn("relanded", "drv_fn9", "y += 10;")
    b.cherry_pick("relanded", BRANCH, name="relanded-bp")
    b.revert("relanded", "master", name="relanded-revert")
    b.cherry_pick("relanded", "master", message="drv: again\n", name="reland")  # not reported
    return k


def scan(k: Kernel, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    dropped = tmp_path / "dropped"
    dropped.write_text(f"# stable-queue dropped list\n5.10 {k.b.ids['dropped']}\n")
    ignore = tmp_path / "ignore"
    ignore.write_text("fs/*\n")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "backportr",
            "scan",
            "--repo",
            str(k.b.path),
            "-b",
            BRANCH,
            "--dropped",
            str(dropped),
            "--ignore",
            str(ignore),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )


def findings(proc: subprocess.CompletedProcess[str]) -> dict[str, str]:
    data = json.loads(proc.stdout)
    assert data["schema"] == 1
    return {f["commit"]: f["kind"] for b in data["branches"] for f in b["findings"]}


def test_findings_and_policy(repo: Kernel, tmp_path: Path) -> None:
    proc = scan(repo, tmp_path, "--format", "json")
    assert proc.returncode == 4, proc.stderr
    ids = repo.b.ids
    assert findings(proc) == {
        ids["missing"]: "missing-fix",
        ids["dropped"]: "dropped",
        ids["reverted"]: "reverted-upstream",
        ids["culprit"]: "incomplete-backport",  # its follow-up `missing` never came along
    }
    data = json.loads(proc.stdout)
    incomplete = next(
        f for f in data["branches"][0]["findings"] if f["kind"] == "incomplete-backport"
    )
    # the policy holds there too: dropped, ignored-path and 6.1+ follow-ups are not listed
    assert [m["commit"] for m in incomplete["series"]] == [ids["missing"]]
    missing = next(f for f in data["branches"][0]["findings"] if f["kind"] == "missing-fix")
    assert set(missing) == {
        *("kind", "branch", "commit", "subject", "series", "status", "why", "evidence"),
        *("witnesses", "confidence", "adapted", "tagged", "run"),
    }
    assert missing["tagged"] is False
    assert [m["commit"] for m in missing["series"]] == [ids["missing"]]
    assert missing["status"] == "ready"
    assert f"as {ids['culprit-bp'][:12]}" in missing["evidence"][0]


def test_new_only_and_state(repo: Kernel, tmp_path: Path) -> None:
    state = tmp_path / "state.sqlite"
    first = scan(repo, tmp_path, "--state", str(state), "--new-only", "--format", "json")
    assert first.returncode == 4 and len(findings(first)) == 4
    second = scan(repo, tmp_path, "--state", str(state), "--new-only", "--format", "json")
    assert second.returncode == 0, second.stderr
    assert findings(second) == {}


def test_lock_keeps_runs_apart(repo: Kernel, tmp_path: Path) -> None:
    import fcntl

    state = tmp_path / "state.sqlite"
    with open(tmp_path / "state.sqlite.lock", "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        proc = scan(repo, tmp_path, "--state", str(state))
    assert proc.returncode == 1 and "another scan is running" in proc.stderr


def test_bad_policy_file(repo: Kernel, tmp_path: Path) -> None:
    bad = tmp_path / "bad-dropped"
    bad.write_text("5.10 not-an-id\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "backportr",
            "scan",
            "--repo",
            str(repo.b.path),
            "-b",
            BRANCH,
            "--dropped",
            str(bad),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and "expected '<X.Y> <40 hex id>'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_markdown_and_output_file(repo: Kernel, tmp_path: Path) -> None:
    out = tmp_path / "report.md"
    proc = scan(repo, tmp_path, "--format", "markdown", "--output", str(out))
    assert proc.returncode == 4 and proc.stdout == ""
    text = out.read_text()
    assert text.startswith("# backportr scan") and "| missing-fix |" in text


def scan_ima(ima: ImaFixture, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "backportr",
            "scan",
            "--repo",
            str(ima.path),
            "--format",
            "json",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_ima_incomplete_backport(ima: ImaFixture) -> None:
    proc = scan_ima(ima, "-b", "linux-5.10.y")
    assert proc.returncode == 4, proc.stderr
    data = json.loads(proc.stdout)
    (finding,) = data["branches"][0]["findings"]
    assert (finding["kind"], finding["commit"]) == ("incomplete-backport", ima.ids[B836C])
    assert [m["commit"] for m in finding["series"]] == ima.expected_incomplete
    assert finding["series"][0]["commit"] == ima.ids[A1175]


def answer(stdout: str) -> dict[str, Any]:
    """What a scan found, without when, how long, and how much it redid."""
    data = json.loads(stdout)
    del data["run"]
    for branch in data["branches"]:
        del branch["resolved"], branch["reused"], branch["kept"]
    return data  # type: ignore[no-any-return]


def test_jobs_gives_the_same_answer(ima: ImaFixture) -> None:
    one = scan_ima(ima, "-b", "linux-5.10.y", "-b", "v5.10.194", "--jobs", "1")
    two = scan_ima(ima, "-b", "linux-5.10.y", "-b", "v5.10.194", "--jobs", "2")
    assert one.returncode == two.returncode == 4, two.stderr

    assert answer(two.stdout) == answer(one.stdout)


def test_jobs_spread_the_targets_of_one_branch(repo: Kernel, tmp_path: Path) -> None:
    one = scan(repo, tmp_path, "--format", "json", "--jobs", "1")
    two = scan(repo, tmp_path, "--format", "json", "--jobs", "2")
    assert two.returncode == one.returncode == 4
    assert answer(two.stdout) == answer(one.stdout)


def test_jobs_take_chunks_of_neighbours_every_target_once() -> None:
    """The shares of `--jobs`: runs of neighbouring targets, each once and in order, a fix
    and a backport never in one chunk, small enough for processes to end together."""
    fixes = [Oid(f"{i:040x}") for i in range(100)]
    backports = [(Oid(f"{i:040x}"), Oid(f"{i + 500:040x}")) for i in range(30)]
    chunks = _chunks((fixes, backports), 2)
    assert [c for f, _ in chunks for c in f] == fixes
    assert [b for _, bs in chunks for b in bs] == backports
    assert all(bool(f) != bool(b) for f, b in chunks)
    assert max(len(f) + len(b) for f, b in chunks) == 3  # 130 targets over 2 x 32 chunks
    assert _chunks(([], []), 2) == []


def test_jobs_by_default_one_per_core_where_a_branch_has_work_for_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`--jobs 0`, the default: one process per core this process may use, at most
    `AUTO_JOBS`, and one alone where a branch has few targets that no earlier run
    answered (a detection: few targets); a number given is kept to the cores and the
    targets."""
    from backportr.scan import run as scan_run

    enough, few = (lambda: scan_run.AUTO_MIN_TARGETS), (lambda: scan_run.AUTO_MIN_TARGETS - 1)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)))
    assert scan_run.processes(0, 5000, enough) == scan_run.AUTO_JOBS
    assert scan_run.processes(0, 5000, few) == 1  # a warm rescan has nothing to answer
    assert scan_run.processes(8, 1000, few) == 8 and scan_run.processes(32, 1000, few) == 16
    assert scan_run.processes(8, 3, enough) == 3 and scan_run.processes(1, 1000, enough) == 1
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert scan_run.processes(0, 5000, enough) == 2
    # a detection: one process but for a branch of many targets, each an index question
    detected = scan_run.AUTO_MIN_DETECTED
    assert scan_run.processes(0, detected - 1, enough, detect=True) == 1
    assert scan_run.processes(0, detected, few, detect=True) == 2
    assert scan_run.processes(2, 5000, few, detect=True) == 2  # a number given is kept


def test_jobs_show_progress_as_the_processes_finish_chunks(repo: Kernel, tmp_path: Path) -> None:
    """With several processes (the default on more than one core) the progress line still
    counts the targets done, chunk by chunk, up to all of them."""
    from backportr.scan.findings import Policy
    from backportr.scan.run import run_scan_parallel
    from backportr.settings import Settings

    told: list[tuple[str, int, int | None]] = []
    settings = Settings(repo=repo.b.path, branches=(BRANCH,), index_path=tmp_path / "ix.sqlite")
    scans = run_scan_parallel(
        settings, Policy(), 2, progress=lambda what, done, total: told.append((what, done, total))
    )
    counts = [done for what, done, _ in told if what == f"scanning {BRANCH}"]
    total = scans[0].scanned
    assert total > 2 and counts[0] == 0 and counts[-1] == total
    assert counts == sorted(counts) and len(set(counts)) > 2  # more than a start and an end


def test_a_warm_rescan_by_default_starts_no_process(
    repo: Kernel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default `--jobs 0` on a rescan whose answers are all kept: nothing to spread,
    so no process is started (it would cost more than the rescan), the same findings."""
    from backportr.scan import run as scan_run
    from backportr.scan.findings import Policy
    from backportr.scan.scanner import Scanner
    from backportr.settings import Settings

    settings = Settings(repo=repo.b.path, branches=(BRANCH,), index_path=tmp_path / "ix.sqlite")
    first = scan_run.run_scan(settings, Policy(), read_ahead=False)
    monkeypatch.setattr(scan_run, "AUTO_MIN_TARGETS", 1)  # this small branch would spread

    def no_pool(*args: object, **kwargs: object) -> None:
        raise AssertionError("a rescan with every answer kept starts no process")

    monkeypatch.setattr(scan_run, "ProcessPoolExecutor", no_pool)
    looked_up: list[str] = []
    target_keys = Scanner._target_keys

    def counted(self, branch, fixes, backports):  # type: ignore[no-untyped-def]
        looked_up.append(branch.name)
        return target_keys(self, branch, fixes, backports)

    monkeypatch.setattr(Scanner, "_target_keys", counted)
    again = scan_run.run_scan_parallel(settings, Policy(), 0)
    assert [f.commit for f in again[0].findings] == [f.commit for f in first[0].findings]
    assert again[0].resolved == 0 and again[0].scanned > 0
    assert looked_up == [BRANCH]  # the keys made to count the work serve the scan too


def test_jobs_where_no_process_can_start_scan_in_one(
    repo: Kernel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A confined machine without the semaphores or sockets a process pool needs: the
    default scan warns and answers from one process, as `--jobs 1` does."""
    from backportr.scan import run as scan_run
    from backportr.scan.findings import Policy
    from backportr.settings import Settings

    def no_pool(*args: object, **kwargs: object) -> None:
        raise OSError(38, "Function not implemented")

    settings = Settings(repo=repo.b.path, branches=(BRANCH,), index_path=tmp_path / "ix.sqlite")
    one = scan_run.run_scan(settings, Policy(), read_ahead=False)
    monkeypatch.setattr(scan_run, "ProcessPoolExecutor", no_pool)
    with caplog.at_level("WARNING", logger="backportr"):
        fallen = scan_run.run_scan_parallel(settings, Policy(), 2)
    assert "scanning in one process: cannot start 2" in caplog.text
    assert [f.commit for f in fallen[0].findings] == [f.commit for f in one[0].findings]
    assert fallen[0].findings and fallen[0].scanned == one[0].scanned


def test_jobs_scan_a_branch_with_nothing_to_look_at(tmp_path: Path) -> None:
    """Under --jobs a branch at upstream's tip (no fix after its fork, no backport) is
    reported with its tip and no finding, beside a branch with findings, as one process
    reports them."""
    k = Kernel(tmp_path / "repo", functions=4)
    k.edit_fn("culprit", "drv_fn1", "y += 100;")
    k.b.cherry_pick("culprit", BRANCH, name="culprit-bp")
    k.edit_fn("missing", "drv_fn2", "y += 2;", trailers=k.fixes("culprit"))
    k.b.branch("linux-6.1.y", "master")
    where = ["scan", "--repo", str(k.b.path), "-b", BRANCH, "-b", "linux-6.1.y", "-f", "json"]
    runs = [
        subprocess.run(
            [sys.executable, "-m", "backportr", *where, *jobs],
            capture_output=True,
            text=True,
            timeout=300,
        )
        for jobs in (["--jobs", "1"], ["--jobs", "2"])
    ]
    assert [r.returncode for r in runs] == [4, 4], runs[1].stderr
    one, two = (answer(r.stdout) for r in runs)
    assert two == one
    empty = next(b for b in two["branches"] if b["branch"] == "linux-6.1.y")
    assert empty["findings"] == []
    tips = {b["name"]: b["tip"] for b in json.loads(runs[1].stdout)["run"]["branches"]}
    assert tips["linux-6.1.y"] == k.b.tip("master")
    full = next(b for b in two["branches"] if b["branch"] == BRANCH)
    missing = [f["commit"] for f in full["findings"] if f["kind"] == "missing-fix"]
    assert missing == [k.b.ids["missing"]]


@pytest.mark.skipif(browser() is None, reason="no headless browser installed")
def test_html_report_renders(repo: Kernel, tmp_path: Path) -> None:
    """The page in headless Chromium: the run's metadata, the summary per kind and status,
    the chart, the findings table with links from the commit URL template; and a
    screenshot."""
    page = tmp_path / "scan.html"
    link = "backportr.commitUrl=https://example.org/c/{commit}"
    where = ["--repo", str(repo.b.path), "-b", BRANCH, "--format", "html", "-o", str(page)]
    proc = subprocess.run(
        [sys.executable, "-m", "backportr", "-c", link, "scan", *where],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 4, proc.stderr
    dom = dump_dom(page, tmp_path / "profile")
    assert dom.returncode == 0
    assert 'id="chart"' in dom.stdout and dom.stdout.count("<rect") == 5
    assert 'class="findings"' in dom.stdout and "missing-fix" in dom.stdout
    assert 'class="summary"' in dom.stdout and 'class="run"' in dom.stdout
    assert f'href="https://example.org/c/{repo.b.ids["missing"]}"' in dom.stdout
    assert 'id="filter"' in dom.stdout
    shot = tmp_path / "scan.png"
    screenshot(page, tmp_path / "profile", shot, "1200,1000")
    assert shot.exists() and shot.stat().st_size > 10_000


def test_json_carries_the_run(repo: Kernel, tmp_path: Path) -> None:
    began = time.monotonic()
    data = json.loads(scan(repo, tmp_path, "--format", "json", "--since", "2001-01-01").stdout)
    took = time.monotonic() - began
    run = data["run"]
    assert run["repository"] == str(repo.b.path.resolve())
    assert run["upstream"] == {
        "name": "master",
        "tip": str(repo.b.repo.revparse_single("master").id),
    }
    assert run["branches"] == [{"name": BRANCH, "tip": str(repo.b.repo.revparse_single(BRANCH).id)}]
    assert run["range"] == "--since 2001-01-01"
    assert 0 < run["seconds"] <= took  # the run's own time, within the call that made it
    assert run["started"].endswith("+00:00")


def _findings(path: Path, branch: str, *, staged: bool) -> list[tuple[str, Oid, str, list[Oid]]]:
    from backportr.resolve.workspace import open_workspace
    from backportr.scan.findings import Policy
    from backportr.scan.scanner import Scanner
    from backportr.settings import Settings

    with open_workspace(Settings(repo=path, branches=(branch,))) as ws:
        scanner = Scanner(ws, Policy(), staged=staged)
        out = []
        for ref in ws.branches:
            result = scanner.scan(ref)
            assert not result.errors
            out += [
                (f.kind, f.commit, f.status, [m.commit for m in f.series]) for f in result.findings
            ]
        return out


def test_staged_scan_finds_what_resolving_everything_finds(
    repo: Kernel, ima: ImaFixture, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The staged scan (stage 1 from the index and cached checks, then the resolver only where
    stage 1 says a finding may exist) gives the findings, in order, of resolving every
    backport in full; on every scenario repository of the suite."""
    from tests.resolve_scenarios import ALL

    root = tmp_path_factory.mktemp("staged")
    cases = [(repo.b.path, BRANCH), (ima.path, "linux-5.10.y"), (ima.path, "v5.10.194")]
    cases += [(make(root / name).path, BRANCH) for name, make in ALL.items()]
    nonempty = 0
    for path, branch in cases:
        staged = _findings(path, branch, staged=True)
        assert staged == _findings(path, branch, staged=False), path
        nonempty += bool(staged)
    assert nonempty >= 5  # the comparison saw real findings, not only empty scans


@pytest.mark.parametrize("held", [1, 256])
def test_a_rescan_with_nothing_new_answers_from_the_index(
    repo: Kernel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, held: int
) -> None:
    """Every target's findings are kept under a key naming all its inputs: the same scan
    again resolves nothing and reports the same findings; whether they are written target
    by target or together (`held`)."""
    from backportr.resolve.resolver import Resolver
    from backportr.resolve.workspace import open_workspace
    from backportr.scan import scanner as scanning
    from backportr.scan.findings import Policy
    from backportr.scan.scanner import Scanner
    from backportr.settings import Settings

    monkeypatch.setattr(scanning, "FINDINGS_HELD", held)
    index = tmp_path / "index.sqlite"

    def scan_once() -> list[tuple[str, str, str]]:
        with open_workspace(Settings(repo=repo.b.path, branches=(BRANCH,), index_path=index)) as ws:
            result = Scanner(ws, Policy()).scan(ws.branches[0])
            return [(f.kind, f.commit, f.status) for f in result.findings]

    first = scan_once()
    assert first

    def no_resolving(*args: object, **kwargs: object) -> None:
        raise AssertionError("a rescan with nothing new must not resolve")

    monkeypatch.setattr(Resolver, "resolve_branch", no_resolving)
    prepared: list[tuple[list[str], list[tuple[str, str]]]] = []
    monkeypatch.setattr(Scanner, "prepare", lambda self, branch, f, b: prepared.append((f, b)))
    assert scan_once() == first
    assert prepared == [([], [])]  # nor does stage 1 read patch-ids for what is answered


def test_untagged_policy_and_priority(tmp_path: Path) -> None:
    """Tagged fixes first, ready before conflict, the oldest culprit first; --untagged
    separate puts untagged missing fixes after every tagged one, skip leaves them out."""
    k = Kernel(tmp_path / "repo", functions=12)
    k.edit_fn("old-culprit", "drv_fn1", "y += 100;")
    k.b.cherry_pick("old-culprit", BRANCH, name="old-bp")
    k.edit_fn("new-culprit", "drv_fn2", "y += 200;")
    k.b.cherry_pick("new-culprit", BRANCH, name="new-bp")
    k.edit_fn("untagged-fix", "drv_fn3", "y += 3;", trailers=k.fixes("old-culprit"))
    k.edit_fn(
        "tagged-new",
        "drv_fn4",
        "y += 4;",
        trailers=k.fixes("new-culprit") + "Cc: stable@vger.kernel.org\n",
    )
    k.edit_fn(
        "tagged-old",
        "drv_fn5",
        "y += 5;",
        trailers=k.fixes("old-culprit") + "Cc: <stable@linux-rdma.org>\n",
    )

    def order(*args: str) -> list[str]:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "backportr",
                "scan",
                "--repo",
                str(k.b.path),
                "-b",
                BRANCH,
                "--format",
                "json",
                *args,
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 4, proc.stderr
        data = json.loads(proc.stdout)
        return [f["commit"] for f in data["branches"][0]["findings"] if f["kind"] == "missing-fix"]

    ids = k.b.ids
    tagged = [ids["tagged-old"], ids["tagged-new"]]  # oldest culprit first
    assert order() == [*tagged, ids["untagged-fix"]]
    assert order("--untagged", "separate") == [*tagged, ids["untagged-fix"]]
    assert order("--untagged", "skip") == tagged


@pytest.mark.parametrize("held", [1, 64])
def test_a_nightly_scan_resolves_only_what_moved(tmp_path: Path, monkeypatch, held: int) -> None:  # type: ignore[no-untyped-def]
    """After a day upstream (a follow-up of one missing fix, unrelated work) and a stable
    release (an unrelated backport in another file), the incremental scan resolves only the
    targets those touch, and reports exactly what a scan with a fresh index reports; whether
    the answers are kept one by one or together at the end (`held`)."""
    from backportr.resolve.workspace import open_workspace
    from backportr.scan import answers as scanning
    from backportr.scan.findings import Policy
    from backportr.scan.scanner import Scanner
    from backportr.settings import Settings

    monkeypatch.setattr(scanning, "RECORDS_HELD", held)
    k = Kernel(tmp_path / "repo", functions=12)
    places = {1: ("drv_fn1", "drivers/drv.c"), 2: ("drv_fn2", "drivers/drv.c")}
    places[3] = ("core_fn3", "fs/core.c")
    for n, (fn, path) in places.items():
        k.edit_fn(f"culprit{n}", fn, f"y += {100 * n};", path=path)
        k.b.cherry_pick(f"culprit{n}", BRANCH, name=f"bp{n}")
    fix_places = {1: ("drv_fn4", "drivers/drv.c"), 2: ("drv_fn5", "drivers/drv.c")}
    fix_places[3] = ("core_fn6", "fs/core.c")
    for n, (fn, path) in fix_places.items():
        k.edit_fn(f"fix{n}", fn, f"y += {n + 10};", path=path, trailers=k.fixes(f"culprit{n}"))

    def scan(index: Path) -> tuple[list[tuple[str, Oid, str, list[Oid]]], int, int]:
        settings = Settings(repo=k.b.path, branches=(BRANCH,), index_path=index)
        with open_workspace(settings) as ws:
            result = Scanner(ws, Policy()).scan(ws.branches[0])
        found = [
            (f.kind, f.commit, f.status, [m.commit for m in f.series]) for f in result.findings
        ]
        return found, result.resolved, result.reused

    nightly = tmp_path / "nightly.sqlite"
    first, resolved, reused = scan(nightly)
    assert len(first) == 6 and (resolved, reused) == (6, 0)  # 3 missing fixes, 3 backports
    k.edit_fn("fix2-follow-up", "drv_fn8", "y += 22;", trailers=k.fixes("fix2"))
    k.edit_fn("unrelated", "core_fn9", "y += 9;", path="fs/core.c")
    k.b.cherry_pick("unrelated", BRANCH, name="unrelated-bp")
    second, resolved, reused = scan(nightly)
    assert second == scan(tmp_path / "fresh.sqlite")[0]
    assert (resolved, reused) == (4, 2)  # pair 2 (the follow-up), pair 3 (its file moved)
    fix2 = next(f for f in second if f[1] == k.b.ids["fix2"])
    assert k.b.ids["fix2-follow-up"] in fix2[3]


def test_a_nightly_scan_forgets_the_findings_kept_in_earlier_states(tmp_path: Path) -> None:
    """Each target's findings are kept under a key naming the tips; once a tip moved no key
    names them, so the next scan of that branch removes them (a nightly scan would
    otherwise leave a row per target behind each night). Another branch's stay, and so does
    what the warm rescan after it answers from."""
    import sqlite3

    from backportr.scan.findings import Policy
    from backportr.scan.run import run_scan
    from backportr.settings import Settings

    k = Kernel(tmp_path / "repo", functions=6)
    k.b.branch("linux-5.15.y", "master")
    for n in (1, 2):
        k.edit_fn(f"culprit{n}", f"drv_fn{n}", f"y += {n};")
        k.b.cherry_pick(f"culprit{n}", BRANCH, name=f"bp{n}")
        k.edit_fn(f"fix{n}", f"drv_fn{n + 2}", f"y += {n + 10};", trailers=k.fixes(f"culprit{n}"))
    index = tmp_path / "index.sqlite"

    def scan(*branches: str) -> dict[str, list[str]]:
        settings = Settings(repo=k.b.path, branches=branches, index_path=index)
        results = run_scan(settings, Policy(), read_ahead=False)
        return {r.branch: sorted(f.commit for f in r.findings) for r in results}

    def kept() -> dict[str, int]:
        """How many states of each branch have kept findings."""
        with sqlite3.connect(index) as db:
            rows = db.execute(
                "SELECT branch, COUNT(DISTINCT state) FROM scan_findings GROUP BY branch"
            )
            return dict(rows.fetchall())

    first = scan(BRANCH)
    assert first[BRANCH]  # the two missing fixes
    scan("linux-5.15.y")
    assert kept() == {BRANCH: 1, "linux-5.15.y": 1}
    k.edit_fn("day", "core_fn1", "y += 7;", path="fs/core.c")  # upstream moved
    assert scan(BRANCH) == first
    assert kept() == {BRANCH: 1, "linux-5.15.y": 1}  # the earlier state's rows are gone
    with sqlite3.connect(index) as db:
        before = db.execute("SELECT COUNT(*) FROM scan_findings").fetchone()[0]
    assert scan(BRANCH) == first  # a warm rescan: its rows stay, and it answers from them
    with sqlite3.connect(index) as db:
        assert db.execute("SELECT COUNT(*) FROM scan_findings").fetchone()[0] == before


def test_a_nightly_scan_sees_a_reverted_fix_landed_again(tmp_path: Path) -> None:
    """A fix reverted upstream is neither a missing fix nor a missing follow-up of its
    culprit's backport (with its revert it is nothing); when upstream commits its change
    again (a new commit, not a revert of the revert), the next nightly scan reports both, as
    a scan with a fresh index does: the kept answers do not outlive the re-landing."""
    from backportr.resolve.workspace import open_workspace
    from backportr.scan.findings import Policy
    from backportr.scan.scanner import Scanner
    from backportr.settings import Settings

    k = Kernel(tmp_path / "repo")
    k.edit_fn("culprit", "drv_fn1", "y += 100;")
    k.b.cherry_pick("culprit", BRANCH, name="culprit-bp")
    k.edit_fn("fix", "drv_fn2", "y += 2;", trailers=k.fixes("culprit"))
    k.b.revert("fix", "master", name="revert")

    def scan(index: Path) -> list[tuple[str, str]]:
        settings = Settings(repo=k.b.path, branches=(BRANCH,), index_path=index)
        with open_workspace(settings) as ws:
            result = Scanner(ws, Policy()).scan(ws.branches[0])
        return [(f.kind, f.commit) for f in result.findings]

    nightly = tmp_path / "nightly.sqlite"
    assert scan(nightly) == []
    k.edit_fn("unrelated", "drv_fn6", "y += 6;")
    k.b.cherry_pick("fix", "master", message="drv: fix, again\n", name="reland")
    ids = k.b.ids
    again = [("missing-fix", ids["fix"]), ("incomplete-backport", ids["culprit"])]
    assert scan(nightly) == scan(tmp_path / "fresh.sqlite") == again


def test_since_takes_a_date_or_a_revision(repo: Kernel, tmp_path: Path) -> None:
    ids = repo.b.ids
    old = scan(repo, tmp_path, "--format", "json", "--since", "2001-01-01")
    assert ids["missing"] in findings(old)
    future = scan(repo, tmp_path, "--format", "json", "--since", "2100-01-01")
    assert "missing-fix" not in findings(future).values()  # no upstream commit after that
    revision = scan(repo, tmp_path, "--format", "json", "--since", ids["missing"])
    assert ids["missing"] not in findings(revision)  # after it, not it
    bad = scan(repo, tmp_path, "--since", "no-such-thing")
    assert bad.returncode == 1 and "neither a revision nor a date" in bad.stderr


def test_the_range_read_has_a_progress_line(ima: ImaFixture, tmp_path: Path) -> None:
    """The conflict search reads the fork's history once per scan (seconds at kernel scale):
    the progress line says so, once, instead of standing still on the first target."""
    from backportr.resolve.workspace import open_workspace
    from backportr.scan.findings import Policy
    from backportr.scan.scanner import Scanner
    from backportr.settings import Settings

    stages: list[str] = []
    settings = Settings(
        repo=ima.path, branches=("linux-5.10.y",), index_path=tmp_path / "index.sqlite"
    )  # an index of its own: nothing answered from an earlier scan's results
    with open_workspace(settings) as ws:
        scanner = Scanner(ws, Policy(), progress=lambda stage, done, total: stages.append(stage))
        result = scanner.scan(ws.branches[0])
    assert [f.commit for f in result.findings] == [ima.ids[B836C]]
    assert stages.count("reading the history since the fork") == 1
    assert stages.index("reading the history since the fork") > stages.index(
        "scanning linux-5.10.y"
    )


def test_a_backported_fix_is_checked_as_a_backport_too(tmp_path: Path) -> None:
    """A fix after the fork is a missing-fix candidate and, once backported, a backport
    whose closure may lack something: both checks run, each once. `fix` (Fixes: a commit of
    the base) is in the branch and its own fix `fix-of-fix` is not: the branch lacks
    `fix-of-fix` (missing-fix) and `fix`'s backport is incomplete. `undone` was backported
    and reverted in the branch: one missing-fix, not two."""
    k = Kernel(tmp_path / "repo")
    k.edit_fn("fix", "drv_fn1", "y += 100;", trailers=k.fixes("v5.10"))
    k.b.cherry_pick("fix", BRANCH, name="fix-bp")
    k.edit_fn("fix-of-fix", "drv_fn2", "y += 2;", trailers=k.fixes("fix"))
    k.edit_fn("undone", "drv_fn3", "y += 3;", trailers=k.fixes("v5.10"))
    k.b.cherry_pick("undone", BRANCH, name="undone-bp")
    k.b.revert("undone-bp", BRANCH, name="undone-revert")
    for held in (0, 1):  # a fresh scan, then one answered from the kept results
        proc = subprocess.run(
            [sys.executable, "-m", "backportr", "scan", "--repo", str(k.b.path), "-b", BRANCH,
             "--format", "json"],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert proc.returncode == 4, proc.stderr
        found = [
            (f["kind"], f["commit"]) for b in json.loads(proc.stdout)["branches"]
            for f in b["findings"]
        ]  # fmt: skip
        ids = k.b.ids
        assert sorted(found) == sorted(
            [
                ("missing-fix", ids["fix-of-fix"]),
                ("missing-fix", ids["undone"]),
                ("incomplete-backport", ids["fix"]),
            ]
        ), (held, found)


def _scan_findings(k: Kernel, index: Path) -> list[tuple[str, str, str, list[str]]]:
    from backportr.resolve.workspace import open_workspace
    from backportr.scan.findings import Policy
    from backportr.scan.scanner import Scanner
    from backportr.settings import Settings

    settings = Settings(repo=k.b.path, branches=(BRANCH,), index_path=index)
    with open_workspace(settings) as ws:
        result = Scanner(ws, Policy()).scan(ws.branches[0])
    return [(f.kind, f.commit, f.status, [m.commit for m in f.series]) for f in result.findings]


def test_a_kept_answer_does_not_outlive_a_pick_of_what_it_left_out(tmp_path: Path) -> None:
    """A missing fix's answer left out its own follow-up, which upstream reverted. When the
    branch then picks that follow-up without naming it (in another file), the next nightly
    scan resolves the fix again and brings the revert, as a scan with a fresh index does:
    what an answer weighed and left out is among what it depends on."""
    k = Kernel(tmp_path / "repo", functions=10)
    k.edit_fn("culprit", "drv_fn4", "y += 2;")
    k.edit_fn("fix", "drv_fn9", "y += 3;", trailers=k.fixes("culprit"))
    k.edit_fn("follow-up", "core_fn4", "y += 4;", path="fs/core.c", trailers=k.fixes("fix"))
    k.b.cherry_pick("culprit", BRANCH)
    nightly = tmp_path / "nightly.sqlite"
    _scan_findings(k, nightly)
    revert = k.b.revert(k.b.ids["follow-up"], "master")
    first = _scan_findings(k, nightly)
    assert first == _scan_findings(k, tmp_path / "fresh1.sqlite")
    assert [f[3] for f in first if f[1] == k.b.ids["fix"]] == [[k.b.ids["fix"]]]
    k.b.cherry_pick("follow-up", BRANCH, annotation=None)  # found by its patch, not a name
    second = _scan_findings(k, nightly)
    assert second == _scan_findings(k, tmp_path / "fresh2.sqlite")
    assert [f[3] for f in second if f[1] == k.b.ids["fix"]] == [[k.b.ids["fix"], revert]]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_nightly_scans_step_by_step_report_what_fresh_scans_do(tmp_path: Path, seed: int) -> None:
    """Random days (upstream fixes of earlier commits, some tagged for stable, reverts;
    backports in every annotation form, stable-only changes, a force-pushed branch), a
    nightly scan after each keeping its answers, compared with a scan on a fresh index (100
    seeds of 12 days were run once). Upstream moving back is left out: a commit it dropped
    stays in a kept index and can still be named by a later `Fixes:`, where a fresh index
    does not know it (docs/scan.md)."""
    rng = random.Random(seed)
    k = Kernel(tmp_path / "repo", functions=10)
    names: list[str] = []
    fns = [(f"drv_fn{i}", "drivers/drv.c") for i in range(10)]
    fns += [(f"core_fn{i}", "fs/core.c") for i in range(10)]

    def upstream() -> None:
        fn, path = rng.choice(fns)
        trailers = k.fixes(rng.choice(names)) if names and rng.random() < 0.5 else ""
        if rng.random() < 0.3:
            trailers += "Cc: stable@vger.kernel.org\n"
        names.append(f"c{len(names)}")
        k.edit_fn(names[-1], fn, f"y += {len(names) + 1};", path=path, trailers=trailers)

    def pick(annotation: str | None = "upstream") -> None:
        with contextlib.suppress(ValueError):  # a pick that conflicts is not made
            k.b.cherry_pick(rng.choice(names), BRANCH, annotation=annotation)

    for _ in range(4):
        upstream()
    pick()
    pick()
    nightly = tmp_path / "nightly.sqlite"
    _scan_findings(k, nightly)
    for day in range(8):
        what = rng.choice(["upstream", "upstream", "pick", "pick", "revert", "stable", "force"])
        if what == "upstream":
            for _ in range(rng.randint(1, 3)):
                upstream()
        elif what == "pick":
            pick(rng.choice(["upstream", "sasha", None]))
        elif what == "revert":
            with contextlib.suppress(ValueError):
                k.b.revert(k.b.ids[rng.choice(names)], "master")
        elif what == "stable":
            fn, path = rng.choice(fns)
            k.edit_fn(f"stable{day}", fn, f"y += {100 + day};", path=path, branch=BRANCH)
        elif k.b.tip(BRANCH) != k.b.ids["v5.10"]:
            k.b.branch(BRANCH, f"{BRANCH}~1")
        kept = _scan_findings(k, nightly)
        assert kept == _scan_findings(k, tmp_path / f"fresh{day}.sqlite"), (day, what)


def test_the_summary_counts_what_an_earlier_scan_kept(ima: ImaFixture) -> None:
    """A rescan with nothing moved answers from the findings the first scan kept, and its
    summary says so (it said "0 resolved anew, 0 answers ... still good" beside them)."""
    first = scan_ima(ima, "-b", "linux-5.10.y", "-f", "json")
    again = scan_ima(ima, "-b", "linux-5.10.y", "-f", "json")
    assert first.returncode == again.returncode == 4, again.stderr
    (one,), (two,) = json.loads(first.stdout)["branches"], json.loads(again.stdout)["branches"]
    assert two["findings"] == one["findings"] and two["resolved"] == two["reused"] == 0
    assert two["kept"] > 0  # (the shared fixture's index may have kept them before)
    text = scan_ima(ima, "-b", "linux-5.10.y", "-f", "text")
    assert f"{two['kept']} as an earlier scan found" in text.stdout


def test_conflict_depth_bounds_the_search_for_a_missing_fixs_prerequisites(
    tmp_path: Path,
) -> None:
    """`scan --conflict-depth 0`: a missing fix that conflicts is reported as conflicting,
    its prerequisites not looked for (resolve finds them); by default the one that makes it
    apply joins its series, as resolve's does."""
    k = Kernel(tmp_path / "r")
    k.edit_in("culprit", "drv_fn4", "\tint y = x;", "\tint y = x + 1;")
    k.b.cherry_pick("culprit", BRANCH, name="culprit-bp")
    k.edit_in("enabler", "drv_fn4", "\ty *= 2;", "\ty *= 4;")
    k.edit_in("fix", "drv_fn4", "\ty -= 3;", "\ty -= 30;", trailers=k.fixes("culprit"))
    base = ["scan", "--repo", str(k.b.path), "-b", BRANCH, "-f", "json", "--jobs", "1"]

    def missing(*extra: str) -> dict[str, Any]:
        proc = subprocess.run(
            [sys.executable, "-m", "backportr", *base, *extra], capture_output=True, text=True
        )
        (found,) = [
            f
            for b in json.loads(proc.stdout)["branches"]
            for f in b["findings"]
            if f["kind"] == "missing-fix"
        ]
        return dict(found)

    full = missing()
    assert [m["commit"] for m in full["series"]] == [k.b.ids["enabler"], k.b.ids["fix"]]
    assert full["status"] == "ready"
    bounded = missing("--conflict-depth", "0")
    assert [m["commit"] for m in bounded["series"]] == [k.b.ids["fix"]]
    assert bounded["status"] == "conflict"
    resolved = subprocess.run(
        [sys.executable, "-m", "backportr", "resolve", k.b.ids["fix"], "--repo", str(k.b.path),
         "-b", BRANCH, "-f", "json", "--conflict-depth", "0"],
        capture_output=True, text=True,
    )  # fmt: skip
    branch = json.loads(resolved.stdout)["branches"][0]
    assert [m["commit"] for m in branch["series"]] == [k.b.ids["fix"]]  # 0: never looked for
    assert k.b.ids["enabler"] in {s["commit"] for s in branch["suggestions"]}
