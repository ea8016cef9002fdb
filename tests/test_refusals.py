"""What backportr refuses, with one line and exit 1, and touches nothing: a directory that is
not its own (`demo --keep`), a target that is no change to backport, a disk that fills up
under an index rebuild."""

from __future__ import annotations

import contextlib
import json
import resource
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from backportr.examples.ima import ImaFixture
from tests.conftest import backportr, git
from tests.resolve_scenarios import BRANCH, Kernel


def test_demo_keep_never_touches_an_existing_repository(tmp_path: Path) -> None:
    """`demo --keep DIR` on a repository with uncommitted work, its own branches and tags
    overwrote the work tree and replaced the refs, and exited 0. Now: exit 1, one line,
    nothing touched; an empty or absent directory is built as before."""
    mine = tmp_path / "mine"
    mine.mkdir()
    git(mine, "init", "-q", "-b", "master")
    (mine / "work.c").write_text("committed\n")
    git(mine, "add", "work.c")
    git(mine, "commit", "-qm", "my work")
    git(mine, "tag", "v5.10.194")
    git(mine, "branch", "linux-5.10.y")
    (mine / "work.c").write_text("uncommitted\n")
    refs = git(mine, "show-ref")
    proc = backportr("demo", "--keep", str(mine))
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "not empty (nothing was touched)" in proc.stderr
    assert (mine / "work.c").read_text() == "uncommitted\n"
    assert git(mine, "show-ref") == refs
    (tmp_path / "file").write_text("x")
    assert backportr("demo", "--keep", str(tmp_path / "file")).returncode == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    assert backportr("demo", "--keep", str(empty)).returncode == 0
    assert git(empty, "status", "--porcelain") == ""


def test_a_target_that_is_no_change_is_refused(tmp_path: Path) -> None:
    """A merge commit was answered `ready` and the script that followed failed; a root
    commit, a tag of a tree or of a blob are no change to backport either."""
    k = Kernel(tmp_path / "r")
    k.edit_fn("side", "drv_fn1", "y += 100;", branch=BRANCH)
    k.edit_fn("main", "drv_fn2", "y += 200;")
    merge = k.b.merge("master", BRANCH, "Merge branch 'x'")
    repo = k.b.path
    git(repo, "tag", "a-tree", "master^{tree}")
    blob = git(repo, "rev-parse", "master:drivers/drv.c").strip()
    git(repo, "tag", "a-blob", blob)
    root = git(repo, "rev-list", "--max-parents=0", "master").strip()
    cases = {
        merge: "is a merge commit (2 parents)",
        root: "is a root commit (no parent)",
        "a-tree": "names a tree, not a commit",
        "a-blob": "names a blob, not a commit",
    }
    for target, said in cases.items():
        proc = backportr("resolve", target, "--repo", str(repo), "-b", BRANCH)
        assert proc.returncode == 1, (target, proc.stdout, proc.stderr)
        assert said in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr


def _rows(index: Path) -> list[tuple[object, ...]]:
    with contextlib.closing(sqlite3.connect(index)) as db:
        return sorted(db.execute("SELECT * FROM commits").fetchall(), key=repr)


def _file_size_limit(limit: int) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past it fails, as on a full disk
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


@pytest.mark.parametrize("limit", range(4096, 200_000, 16384))
def test_index_rebuild_on_a_full_disk_keeps_the_index(ima: ImaFixture, limit: int) -> None:
    """`index --rebuild` when writes fail part way (no room): the healthy index was moved
    aside as `.corrupt`, a zero-byte one left, and the run said nothing was changed. Now the
    index is what it was, nothing is moved aside, one line says so; a rerun with room gives
    the index a clean rebuild gives."""
    index = ima.path / ".git" / "backportr" / "index.sqlite"
    before = _rows(index)
    args = [sys.executable, "-m", "backportr", "index", "--rebuild", "--repo", str(ima.path)]
    args += ["-b", "linux-5.10.y", "-b", "v5.10.194"]
    full = subprocess.run(
        args,
        capture_output=True,
        text=True,
        preexec_fn=lambda: _file_size_limit(limit),
        timeout=300,
    )
    assert full.returncode in (0, 1), full.stderr  # unchanged, or complete
    if full.returncode == 1:
        assert "is the disk full? nothing was changed" in full.stderr
        assert full.stderr.count("\n") == 1 and "Traceback" not in full.stderr
    assert not list(index.parent.glob("*.corrupt*"))
    assert _rows(index) == before
    again = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert _rows(index) == before


def test_a_script_shows_nothing_raw_and_means_the_real_names(tmp_path: Path) -> None:
    """A branch named with a bidi override and a subject with CR and ESC: the `-f script`
    output holds no such character raw (comments escaped, names as printf octal escapes),
    and run by sh it starts from that very branch and commits the message as it was."""
    from backportr.output.safe import terminal

    k = Kernel(tmp_path / "r")
    subject = "drv: evil\x1b[2Jcleared \u202eevil\rmore"
    k.edit_fn("t", "drv_fn1", "y += 100;", subject=subject)
    branch = "linux-\u202e5.10.y"
    k.b.branch(branch, BRANCH)
    repo = k.b.path
    proc = backportr("resolve", k.b.ids["t"], "--repo", str(repo), "-b", branch, "-f", "script")
    assert proc.returncode == 0, proc.stderr
    assert terminal(proc.stdout) == proc.stdout  # nothing that acts on a terminal
    script = tmp_path / "series.sh"
    script.write_text(proc.stdout)
    ran = subprocess.run(["sh", str(script)], cwd=repo, capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    worktree = next(tmp_path.glob("backport-*"))
    message = git(worktree, "log", "-1", "--format=%B")
    assert message.startswith("drv: evil\x1b[2Jcleared \u202eevil"), message  # ESC, bidi kept
    assert git(worktree, "rev-parse", "HEAD~1").strip() == git(repo, "rev-parse", branch).strip()


def test_contradictory_records_of_one_cve_are_said(tmp_path: Path, ima: ImaFixture) -> None:
    """Two record files with one CVE id that name different fixes: a warning naming the id
    (the same record twice is classified once, silently)."""
    from tests.cve_records import write_record

    fix = "b" * 40
    write_record(tmp_path / "a", "CVE-2024-0001", "one", [("a" * 40, fix)], fix)
    write_record(tmp_path / "a", "CVE-2024-0002", "two", [("a" * 40, fix)], fix)
    other = write_record(tmp_path / "b", "CVE-2024-0001", "one", [("c" * 40, "d" * 40)], None)
    copy = tmp_path / "a" / "cve" / "published" / "2024" / "more" / "CVE-2024-0001.json"
    copy.parent.mkdir()
    copy.write_text(other.read_text())
    same = tmp_path / "a" / "cve" / "published" / "2024" / "more" / "CVE-2024-0002.json"
    same.write_text((tmp_path / "a/cve/published/2024/CVE-2024-0002.json").read_text())
    args = ("cves", "--records", str(tmp_path / "a"), "--repo", str(ima.path))
    proc = backportr(*args, "-b", "v5.10.194", "-f", "json")
    assert "CVE-2024-0001: two record files say different things" in proc.stderr
    assert "CVE-2024-0002" not in proc.stderr


def test_csv_cells_from_data_never_start_a_formula() -> None:
    from backportr.output.cves import _cell

    for text in ("=cmd|' /C calc'!A0", "+1", "-1", "@SUM(1)", "\tx", "\rx"):
        assert _cell(text).startswith("'"), text
    assert _cell("plain title") == "plain title"


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("backportr.commitUrl", "javascript:alert(1)//{commit}", "not an http(s) URL"),
        ("backportr.commitUrl", "data:text/html,x{commit}", "not an http(s) URL"),
        ("user.name", "Evil\nSigned-off-by: Someone Else", "holds a line break"),
    ],
)
def test_settings_that_would_inject_are_refused(
    tmp_path: Path, key: str, value: str, said: str
) -> None:
    k = Kernel(tmp_path / "r")
    k.edit_fn("t", "drv_fn1", "y += 100;")
    repo = k.b.path
    subprocess.run(["git", "-C", str(repo), "config", key, value], check=True)
    subprocess.run(["git", "-C", str(repo), "config", "user.email", "me@example.org"], check=True)
    if key == "user.name":
        args = ["resolve", k.b.ids["t"], "-b", BRANCH, "-f", "mbox", "--signoff"]
    else:
        args = ["scan", "-b", BRANCH, "-f", "html"]
    proc = backportr(*args, "--repo", str(repo))
    assert proc.returncode == 1, proc.stderr
    assert said in proc.stderr and proc.stderr.count("\n") == 1
    assert "javascript:" not in proc.stdout and "Someone Else" not in proc.stdout


def test_a_nul_in_stdin_targets_is_one_line(tmp_path: Path) -> None:
    k = Kernel(tmp_path / "r")
    k.edit_fn("t", "drv_fn1", "y += 100;")
    proc = backportr(
        "resolve", "--stdin", "--repo", str(k.b.path), "-b", BRANCH,
        input=f"{k.b.ids['t']}\x00\n",
    )  # fmt: skip
    assert proc.returncode == 2 and "stdin line 1: a NUL" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_huge_subject_makes_header_lines_within_998_octets(tmp_path: Path) -> None:
    k = Kernel(tmp_path / "r")
    k.edit_fn("t", "drv_fn1", "y += 100;", subject="drv: " + "x" * 300_000)
    proc = backportr("resolve", k.b.ids["t"], "--repo", str(k.b.path), "-b", BRANCH, "-f", "mbox")
    assert proc.returncode == 0, proc.stderr
    header = proc.stdout.split("\n\n", 1)[0]
    assert max(len(line.encode()) for line in header.split("\n")) <= 998


def test_no_program_the_repository_config_names_is_run(tmp_path: Path) -> None:
    """backportr is a read-only analysis: the `core.fsmonitor` hook, `diff.*.textconv`,
    `diff.*.command`, merge drivers and smudge/clean filters a repository's configuration
    names are never run by its git calls, and a merge driver cannot change an answer: the
    trial is git's built-in merge, as a fresh clone's would be."""
    k = Kernel(tmp_path / "r")
    k.b.commit(
        "attributes",
        {".gitattributes": "* diff=evil merge=evil filter=evil\n"},
        branch="master",
    )
    k.b.commit(
        "attributes",
        {".gitattributes": "* diff=evil merge=evil filter=evil\n"},
        branch=BRANCH,
    )
    k.edit_fn("before", "drv_fn2", "y += 5;", branch=BRANCH)
    text = k.b.files("master")["drivers/drv.c"]
    changed = text.replace("int drv_fn1(int x)\n{", "int drv_fn1(int x)\n{\n\tx++;", 1)
    assert changed != text
    k.b.commit(  # a file merge, and a file in a new directory: git's merge answers it
        "drv: target\n\nSigned-off-by: Dev <dev@example.org>\n",
        {"drivers/drv.c": changed, "drivers/new/x.c": "int x;\n"},
        branch="master",
        name="target",
    )
    k.b.check_out()
    repo = k.b.path
    marker = tmp_path / "ran"
    run = f"sh -c 'echo $0 >> {marker}'"
    settings = {
        "core.fsmonitor": f"{run} fsmonitor",
        "diff.evil.textconv": f"{run} textconv",
        "diff.evil.command": f"{run} diff-command",
        "diff.external": f"{run} diff-external",
        "merge.evil.driver": f"{run} merge-driver; exit 1",
        "filter.evil.smudge": f"{run} smudge",
        "filter.evil.clean": f"{run} clean",
        "filter.evil.process": f"{run} process",
    }
    for key, value in settings.items():
        git(repo, "config", key, value)
    (repo / ".git" / "info").mkdir(exist_ok=True)  # the repository's own attributes too
    (repo / ".git" / "info" / "attributes").write_text("* diff=evil merge=evil filter=evil\n")
    target = k.b.ids["target"]
    asks = [
        ("resolve", target, "-b", BRANCH, "-f", "json"),
        ("resolve", target, "-b", BRANCH, "-f", "mbox"),
        ("status", target, "-b", BRANCH),
        ("scan", "-b", BRANCH, "-f", "json"),
    ]
    answers = []
    for ask in asks:
        proc = backportr(*ask, cwd=repo)  # in the work tree, as a maintainer runs it
        assert proc.returncode == 0, proc.stderr
        answers.append(proc)
    assert not marker.exists(), marker.read_text()
    assert json.loads(answers[0].stdout)["branches"][0]["status"] == "ready"


def test_a_state_file_of_another_kind_is_refused(ima: ImaFixture, tmp_path: Path) -> None:
    """`scan --state` given the bot's state database (or the index) wrote its table into
    it; each state file names its owner, and another's is refused untouched."""
    from backportr.mail.bot import BotState

    bot = tmp_path / "bot.sqlite"
    BotState(bot).close()
    index = ima.path / ".git" / "backportr" / "index.sqlite"
    for other in (bot, index):
        before = other.read_bytes()
        proc = backportr(
            "scan", "--repo", str(ima.path), "-b", "linux-5.10.y", "--state", str(other)
        )
        assert proc.returncode == 1, proc.stderr
        assert "is not the scan state" in proc.stderr and proc.stderr.count("\n") == 1
        assert other.read_bytes() == before
    mine = tmp_path / "scan.sqlite"
    for _ in range(2):
        proc = backportr(
            "scan", "--repo", str(ima.path), "-b", "linux-5.10.y", "--state", str(mine)
        )
        assert proc.returncode == 4, proc.stderr


def test_replace_refs_and_grafts_are_said(tmp_path: Path) -> None:
    """A replace ref or a graft file changes the history git shows: one warning line each
    on stderr; replaced objects are read as they are by every part (git's processes too)."""
    k = Kernel(tmp_path / "r")
    k.edit_fn("other", "drv_fn3", "y += 3;")
    k.edit_fn("target", "drv_fn1", "y += 100;")
    repo = k.b.path
    git(repo, "replace", "--graft", "master", "master~2")
    proc = backportr("status", k.b.ids["target"], "--repo", str(repo), "-b", BRANCH)
    assert "has 1 replace refs: backportr reads the objects as they are" in proc.stderr
    git(repo, "replace", "-d", git(repo, "rev-parse", "master").strip())
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "grafts").write_text(k.b.ids["target"] + "\n")
    proc = backportr("status", k.b.ids["target"], "--repo", str(repo), "-b", BRANCH)
    assert "has a graft file (info/grafts): answers follow the grafted history" in proc.stderr
