"""`backportr cves`: which published CVEs a branch lacks, on the IMA example with the real
CVE-2023-52779 record's shape (its ids rewritten to the example's), and bad records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backportr.cves.records import BadRecord, parse_record
from backportr.examples.ima import A1175, DB1D1, F8A92, build
from backportr.git.builder import RepoBuilder
from backportr.model import Oid
from tests.browser import browser, dump_dom
from tests.conftest import backportr
from tests.cve_records import write_record

STABLE_FIX = "3fb0fa08641903304b9d81d52a379ff031dc41d4"  # the 6.6.4 backport: not in the example


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Oid], Path]:
    """The IMA example with two more branches from 5.10.194: the prerequisites backported
    (`with-prerequisites`), and the follow-up too (`with-follow-up`); and the records."""
    root = tmp_path_factory.mktemp("cves")
    ima = build(root / "linux")
    b = RepoBuilder.open(ima.path)
    b.branch("with-prerequisites", "v5.10.194")
    for name in (A1175, DB1D1):
        b.cherry_pick(ima.ids[name], "with-prerequisites")
    b.branch("with-follow-up", "with-prerequisites")
    b.cherry_pick(ima.ids[F8A92], "with-follow-up")
    records = root / "vulns"
    pairs = [(ima.ids[DB1D1], STABLE_FIX), (ima.ids[DB1D1], ima.ids[F8A92])]
    files = ["fs/ecryptfs/inode.c", "fs/overlayfs/inode.c", "fs/stat.c"]
    title = "fs: Pass AT_GETATTR_NOSEC flag to getattr interface function"
    write_record(records, "CVE-2023-52779", title, pairs, ima.ids[F8A92], files)
    (records / "cve" / "published" / "2023" / "CVE-2023-99999.json").write_text("{not json")
    return ima.path, dict(ima.ids), records


def test_the_three_states_of_the_ima_case(example: tuple[Path, dict[str, str], Path]) -> None:
    """At 5.10.194 `not-affected` (db1d1e8b9867 absent); with the prerequisites backported
    but not the follow-up, `missing` with the series [8a924db2d7b5]; after it, `fixed`."""
    path, ids, records = example
    branches = ("-b", "v5.10.194", "-b", "with-prerequisites", "-b", "with-follow-up")
    proc = backportr(
        "cves", "--records", str(records), "--repo", str(path), *branches, "-f", "json"
    )
    assert proc.returncode == 4, proc.stderr  # something is missing
    data = json.loads(proc.stdout)
    by_branch = {b["branch"]: b["cves"][0] for b in data["branches"]}
    assert by_branch["v5.10.194"]["outcome"] == "not-affected"
    assert ids[DB1D1][:12] in by_branch["v5.10.194"]["how"]
    missing = by_branch["with-prerequisites"]
    assert missing["outcome"] == "missing" and missing["status"] == "ready"
    assert [m["commit"] for m in missing["series"]] == [ids[F8A92]]
    fixed = by_branch["with-follow-up"]
    assert fixed["outcome"] == "fixed" and fixed["fix"] == ids[F8A92] and fixed["as"]
    assert "by annotation" in fixed["how"]
    assert [u["record"] for u in data["unreadable"]] == ["cve/published/2023/CVE-2023-99999.json"]
    assert "skipped the record cve/published/2023/CVE-2023-99999.json" in proc.stderr
    fine = backportr(
        "cves", "--records", str(records), "--repo", str(path), "-b", "with-follow-up", "-q"
    )
    assert fine.returncode == 0 and fine.stdout == ""


def test_text_csv_and_markdown(example: tuple[Path, dict[str, str], Path]) -> None:
    path, ids, records = example
    args = ("cves", "--records", str(records), "--repo", str(path), "-b", "with-prerequisites")
    text = backportr(*args)
    assert "1 missing" in text.stdout and f"series: {ids[F8A92][:12]}" in text.stdout
    csv = backportr(*args, "-f", "csv").stdout.splitlines()
    assert csv[0].startswith("branch,cve,outcome,status,fix")
    assert csv[1].startswith(f"with-prerequisites,CVE-2023-52779,missing,ready,{ids[F8A92]}")
    md = backportr(*args, "-f", "markdown").stdout
    assert "| CVE-2023-52779 | missing | ready |" in md
    one = backportr(*args, "--cve", "cve-2023-00001", "-f", "json")
    assert one.returncode == 0 and json.loads(one.stdout)["branches"] == []


def test_a_record_naming_commits_the_repository_lacks_is_unknown(
    example: tuple[Path, dict[str, str], Path], tmp_path: Path
) -> None:
    path, _ids, _records = example
    write_record(tmp_path, "CVE-2024-0001", "elsewhere", [("a" * 40, "b" * 40)], "b" * 40)
    args = ("cves", "--records", str(tmp_path), "--repo", str(path), "-b", "v5.10.194")
    proc = backportr(*args)
    assert proc.returncode == 0, proc.stderr
    # counted, not listed, by default (the demo's records gave 58,526 lines of them)
    assert (
        "1 unknown, 0 fixed, 0 not-affected (1 unknown not listed: --unknown lists" in proc.stdout
    )
    assert "CVE-2024-0001" not in proc.stdout
    listed = backportr(*args, "--unknown")
    assert "no fixing commit of the record is upstream" in listed.stdout
    assert (
        "CVE-2024-0001"
        in json.loads(backportr(*args, "-f", "json").stdout)["branches"][0]["cves"][0]["cve"]
    )


def test_only_published_records_are_read(
    example: tuple[Path, dict[str, str], Path], tmp_path: Path
) -> None:
    """The kernel CVE team's repository keeps drafts under `testing/` and reserved ids
    apart: only published records are classified."""
    path, _ids, _records = example
    for where in ("cve/published/2024", "cve/testing/2024", "cve/reserved/2024"):
        (tmp_path / where).mkdir(parents=True)
    write_record(
        tmp_path / "cve/published/2024", "CVE-2024-0001", "a", [("a" * 40, "b" * 40)], "b" * 40
    )
    write_record(
        tmp_path / "cve/testing/2024", "CVE-2024-0002", "b", [("a" * 40, "b" * 40)], "b" * 40
    )
    write_record(
        tmp_path / "cve/reserved/2024", "CVE-2024-0003", "c", [("a" * 40, "b" * 40)], "b" * 40
    )
    proc = backportr("cves", "--records", str(tmp_path), "--repo", str(path), "-b", "v5.10.194",
                     "-f", "json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    found = [c["cve"] for b in json.loads(proc.stdout)["branches"] for c in b["cves"]]
    assert found == ["CVE-2024-0001"]


@pytest.mark.parametrize(
    "text",
    [
        "[" * 5000 + "]" * 5000,  # nested past the bound: refused before json reads it
        '{"cveMetadata": {"cveId": "CVE-2024-1"}, "containers": {"cna": {"affected": 3}}}',
        '{"cveMetadata": {"cveId": "not an id"}, "containers": {"cna": {}}}',
        "x" * (2 * 1024 * 1024),
    ],
)
def test_a_bad_record_is_one_line(text: str) -> None:
    with pytest.raises(BadRecord) as raised:
        parse_record(text, "r.json")
    assert "\n" not in str(raised.value) and str(raised.value).startswith("r.json: ")


def test_a_nightly_run_keeps_its_answers_and_reports_what_is_new(
    example: tuple[Path, dict[str, str], Path], tmp_path: Path
) -> None:
    """--state: a second run answers from what the first kept (nothing moved); --new-only
    reports only outcomes not reported before, and a new record is the one thing said (exit
    4: it is missing)."""
    path, ids, records = example
    mine = tmp_path / "vulns"
    import shutil

    shutil.copytree(records, mine)
    state = tmp_path / "cves.sqlite"
    args: tuple[str, ...] = ("-v", "cves", "--records", str(mine), "--repo", str(path))
    args += ("-b", "with-prerequisites")
    args += ("--state", str(state), "--new-only", "-f", "json")
    first = backportr(*args)
    assert first.returncode == 4, first.stderr
    assert "1 answers anew, 0 cached" in first.stderr
    assert [c["cve"] for c in json.loads(first.stdout)["branches"][0]["cves"]] == ["CVE-2023-52779"]
    second = backportr(*args)
    assert second.returncode == 0, second.stderr  # nothing new, though it is still missing
    assert "0 answers anew, 1 cached" in second.stderr
    assert json.loads(second.stdout)["branches"] == []
    pairs = [(ids[A1175], ids[DB1D1])]  # a made-up CVE: a1175 introduced, db1d1 fixed it
    write_record(mine, "CVE-2024-12345", "made up", pairs, ids[DB1D1])
    third = backportr(*args)
    assert "1 answers anew, 1 cached" in third.stderr
    (only,) = json.loads(third.stdout)["branches"][0]["cves"]
    assert only["cve"] == "CVE-2024-12345" and only["outcome"] == "fixed"
    assert third.returncode == 0  # fixed: nothing new is missing
    page = backportr(*args[:-5], "-f", "html").stdout  # no --state: every outcome
    assert page.startswith("<!DOCTYPE html>") and "CVE-2024-12345" in page
    assert '<tr class="cve missing"><td>CVE-2023-52779</td>' in page and "<details>" in page


def test_since_narrows_to_the_records_a_date_added(
    example: tuple[Path, dict[str, str], Path], tmp_path: Path
) -> None:
    """--since DATE: only records the records repository added or changed after DATE."""
    import os
    import shutil
    import subprocess

    path, ids, records = example
    vulns = tmp_path / "vulns"
    shutil.copytree(records, vulns)
    (vulns / "cve" / "published" / "2023" / "CVE-2023-99999.json").unlink()
    env = dict(
        os.environ, GIT_AUTHOR_DATE="2024-01-01T00:00:00", GIT_COMMITTER_DATE="2024-01-01T00:00:00"
    )
    env.update(GIT_AUTHOR_NAME="c", GIT_AUTHOR_EMAIL="c@example.org")
    env.update(GIT_COMMITTER_NAME="c", GIT_COMMITTER_EMAIL="c@example.org")

    def git(*args: str, when: str) -> None:
        env.update(GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
        subprocess.run(["git", "-C", str(vulns), *args], env=env, check=True, capture_output=True)

    git("init", "-q", when="2024-01-01T00:00:00")
    git("add", "-A", when="2024-01-01T00:00:00")
    git("commit", "-qm", "old records", when="2024-01-01T00:00:00")
    write_record(vulns, "CVE-2025-0001", "new", [(ids[A1175], ids[DB1D1])], ids[DB1D1])
    git("add", "-A", when="2025-06-01T00:00:00")
    git("commit", "-qm", "a new record", when="2025-06-01T00:00:00")
    args = ("cves", "--records", str(vulns), "--repo", str(path), "-b", "v5.10.194", "-f", "json")
    every = json.loads(backportr(*args).stdout)["branches"][0]["cves"]
    recent = json.loads(backportr(*args, "--since", "2025-01-01").stdout)["branches"][0]["cves"]
    assert {c["cve"] for c in every} == {"CVE-2023-52779", "CVE-2025-0001"}
    assert [c["cve"] for c in recent] == ["CVE-2025-0001"]
    plain = tmp_path / "plain"
    shutil.copytree(records, plain)
    refused = backportr(
        "cves", "--records", str(plain), "--repo", str(path), "--since", "2025-01-01"
    )
    assert refused.returncode == 1 and "cannot list the records changed since" in refused.stderr


def test_a_fix_the_branch_has_under_another_shape_is_fixed(tmp_path: Path) -> None:
    """The fix's change reached the branch inside a local commit of another subject and
    patch (no annotation, no patch-id match): the fix applies as empty there, so the CVE is
    `fixed`, not `missing` with nothing to apply."""
    ima = build(tmp_path / "linux")
    b = RepoBuilder.open(ima.path)
    b.branch("local", "v5.10.194")
    for name in (A1175, DB1D1):
        b.cherry_pick(ima.ids[name], "local")
    fix = ima.ids[F8A92]
    changed = {p: t for p, t in b.files(fix).items() if b.files(f"{fix}~1").get(p) != t}
    changed["Documentation/local.txt"] = "a note of our own\n"
    b.commit("local: getattr without security checks\n", changed, branch="local")
    records = tmp_path / "vulns"
    write_record(records, "CVE-2023-52779", "t", [(ima.ids[DB1D1], fix)], fix)
    args = ("cves", "--records", str(records), "--repo", str(ima.path), "-b", "local")
    proc = backportr(*args, "-f", "json")
    assert proc.returncode == 0, proc.stderr
    (only,) = json.loads(proc.stdout)["branches"][0]["cves"]
    assert only["outcome"] == "fixed" and "changes nothing there" in only["how"], only


def test_jobs_give_the_same_answer(
    example: tuple[Path, dict[str, str], Path], tmp_path: Path
) -> None:
    """--jobs 2 spreads the records over two processes and answers as one process does."""
    path, ids, _records = example
    pairs = [(ids[DB1D1], ids[F8A92])]
    for n in range(12):
        write_record(tmp_path, f"CVE-2024-{1000 + n}", f"copy {n}", pairs, ids[F8A92])
    args: tuple[str, ...] = ("cves", "--records", str(tmp_path), "--repo", str(path), "-f", "json")
    args += ("-b", "v5.10.194", "-b", "with-prerequisites", "-b", "with-follow-up")
    one, two = backportr(*args), backportr(*args, "--jobs", "2", "-v")
    assert one.returncode == two.returncode == 4, two.stderr
    assert one.stdout == two.stdout
    assert "36 answers anew" in two.stderr and "36 to classify in 2 processes" in two.stderr


def test_each_record_file_is_read_once_into_the_index(
    example: tuple[Path, dict[str, str], Path], tmp_path: Path
) -> None:
    """A record file is read and parsed once: the index keeps its parse under its content's
    key, so the next run reads only what was added or changed (a bare clone: by blob ids)."""
    import shutil
    import subprocess

    path, ids, records = example
    mine = tmp_path / "vulns"
    shutil.copytree(records, mine, copy_function=shutil.copy)  # new files: new times
    args = ("-v", "cves", "--records", str(mine), "--repo", str(path), "-b", "v5.10.194")
    first, second = backportr(*args), backportr(*args)
    assert "2 record files, 2 read anew" in first.stderr
    assert "2 record files, 0 read anew" in second.stderr and first.stdout == second.stdout
    write_record(mine, "CVE-2024-4242", "one more", [(ids[A1175], ids[DB1D1])], ids[DB1D1])
    assert "3 record files, 1 read anew" in backportr(*args).stderr
    env = {"GIT_AUTHOR_NAME": "c", "GIT_AUTHOR_EMAIL": "c@x", "GIT_COMMITTER_NAME": "c"}
    env |= {"GIT_COMMITTER_EMAIL": "c@x", "PATH": "/usr/bin:/bin"}
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "records"]):
        subprocess.run(["git", "-C", str(mine), *argv], env=env, check=True)
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(mine), str(bare)], check=True)
    from_git = ("-v", "cves", "--records", str(bare), "--repo", str(path), "-b", "v5.10.194")
    once, again = backportr(*from_git), backportr(*from_git)
    assert "3 record files, 3 read anew" in once.stderr  # other keys: blob ids
    assert "3 record files, 0 read anew" in again.stderr
    assert once.stdout == again.stdout and "CVE-2024-4242" in once.stdout


@pytest.mark.skipif(browser() is None, reason="no headless browser installed")
def test_the_html_report_in_a_browser(
    example: tuple[Path, dict[str, str], Path], tmp_path: Path
) -> None:
    """The page in headless Chromium: counts per branch, a row per CVE and branch, the
    missing one's series behind a click, the filter box; the page's script runs clean."""
    path, ids, records = example
    page = tmp_path / "cves.html"
    args = ("cves", "--records", str(records), "--repo", str(path), "-f", "html", "-o", str(page))
    proc = backportr(*args, "-b", "v5.10.194", "-b", "with-prerequisites", "-b", "with-follow-up")
    assert proc.returncode == 4, proc.stderr
    dom = dump_dom(page, tmp_path / "profile")
    assert dom.returncode == 0
    assert dom.stdout.count('<tr class="cve ') == 3 and 'id="filter"' in dom.stdout
    assert "<details><summary>1</summary>" in dom.stdout and ids[F8A92][:12] in dom.stdout
    assert 'class="summary"' in dom.stdout


def test_a_record_file_named_with_control_bytes_is_said_escaped(
    example: tuple[Path, dict[str, str], Path], tmp_path: Path
) -> None:
    """A record's file name is data: said on stderr with its control bytes escaped."""
    path, _ids, _records = example
    folder = tmp_path / "cve" / "published" / "2024"
    folder.mkdir(parents=True)
    (folder / "CVE-2024-\x1b]0;owned\x07.json").write_text("{}")
    proc = backportr("cves", "--records", str(tmp_path), "--repo", str(path), "-b", "v5.10.194")
    assert proc.returncode == 0 and "skipped the record" in proc.stderr
    assert "\x1b" not in proc.stderr and "\x07" not in proc.stderr


def test_a_directory_without_records_is_one_line(
    example: tuple[Path, dict[str, str], Path], tmp_path: Path
) -> None:
    """An empty or unrelated directory as --records exited 0 with nothing said."""
    path, _ids, _records = example
    (tmp_path / "README").write_text("not a vulns repository\n")
    proc = backportr("cves", "--records", str(tmp_path), "--repo", str(path), "-b", "v5.10.194")
    assert proc.returncode == 1 and "no CVE record (CVE-*.json) in it" in proc.stderr
    assert proc.stderr.count("\n") == 1
