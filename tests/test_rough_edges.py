"""The rough edges a new user hit (issue 64), each as it was met: on the kept demo."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import backportr

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "ima"
    proc = backportr("demo", "--keep", str(path))
    assert proc.returncode == 0, proc.stderr
    return path


def test_the_readmes_real_ids_run_in_the_demo_as_written(demo: Path) -> None:
    """The README's Commands name the real upstream ids (b836c4d29f27...): the kept demo
    answers to them (tags of those names), as `git show` does."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    first = re.search(r"^backportr resolve (\w+) .*?--branch (\S+)", text, re.M)
    assert first is not None and first.group(1) == "b836c4d29f27"
    proc = backportr("resolve", first.group(1), "--branch", first.group(2), "--repo", str(demo),
                     "-f", "json")  # fmt: skip
    assert proc.returncode == 4, proc.stderr  # incomplete at 5.10.202, as the README says
    (branch,) = json.loads(proc.stdout)["branches"]
    assert branch["status"] == "incomplete" and len(branch["series"]) == 3
    shown = subprocess.run(["git", "-C", str(demo), "show", "-s", "--format=%s", "b836c4d29f27"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    assert shown.stdout.strip() == "ima: detect changes to the backing overlay file"
    status = backportr("status", "b836c4d29f27", "--branch", "linux-5.10.y", "--repo", str(demo))
    assert status.returncode == 0 and "present as" in status.stdout


def test_why_lines_stay_within_100_columns_and_the_json_keeps_them_whole(demo: Path) -> None:
    text = backportr("resolve", "b836c4d29f27", "-b", "linux-5.10.y", "--repo", str(demo))
    whys = [line for line in text.stdout.splitlines() if line.lstrip().startswith("why:")]
    assert whys and all(len(line) <= 100 for line in whys), whys
    assert any(line.endswith("...") for line in whys)  # the symbol reason is longer
    data = backportr("resolve", "b836c4d29f27", "-b", "linux-5.10.y", "--repo", str(demo),
                     "-f", "json")  # fmt: skip
    details = [r["detail"] for m in json.loads(data.stdout)["branches"][0]["series"]
               for r in m["reasons"]]  # fmt: skip
    assert max(len(d) for d in details) > 100  # whole there


def test_dash_c_runs_as_if_started_in_that_directory(demo: Path, tmp_path: Path) -> None:
    """`backportr -C DIR` as `git -C DIR`: the repository found from there, relative paths
    (-o) written there; a directory that is not there is exit 2 in one line."""
    proc = backportr("-C", str(demo.parent), "-C", demo.name, "resolve", "b836c4d29f27", "-b",
                     "v5.10.194", "-f", "mbox", "-o", "queue", cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (demo / "queue" / "series").read_text().count("\n") == 4
    assert not (tmp_path / "queue").exists()
    missing = backportr("-C", str(tmp_path / "nowhere"), "config", cwd=tmp_path)
    assert missing.returncode == 2
    assert missing.stderr.count("\n") == 1 and "cannot change to" in missing.stderr


def test_verbose_lines_are_printed_above_the_progress_bar() -> None:
    """A -v line (or a warning) while the bar is drawn: the bar is wiped, the line written
    whole on its own line, the bar drawn again below it; never a line run into the bar."""
    import io
    import logging

    from backportr.cli import _AboveTheBar, _LevelFormatter
    from backportr.cli.progress import TerminalProgress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    bar = TerminalProgress(screen)
    handler = _AboveTheBar(screen)
    handler.setFormatter(_LevelFormatter())
    bar("scanning 23.11", 5, 10)
    drawn = screen.getvalue()
    handler.emit(logging.LogRecord("backportr", logging.INFO, "", 0, "resolved it", None, None))
    after = screen.getvalue()[len(drawn) :]
    wipe = "\r" + " " * 70 + "\r"
    assert after == wipe + "backportr: resolved it\n" + drawn.rstrip("\n")
    bar.finish()
    handler.emit(logging.LogRecord("backportr", logging.INFO, "", 0, "done", None, None))
    assert screen.getvalue().endswith(wipe + "backportr: done\n")  # no bar drawn again


def test_durations_are_shown_as_measured() -> None:
    """The scan HTML said "took 0.0 s" for a warm run of 40 ms: a duration keeps its
    measured digits, and a long one reads in minutes."""
    from backportr.output.scan import duration

    assert duration(0.043) == "0.043 s"
    assert duration(12.44) == "12.4 s"
    assert duration(581.2) == "9 min 41 s"


def test_the_scan_html_says_how_long_it_took(demo: Path) -> None:
    proc = backportr("scan", "-b", "linux-5.10.y", "--repo", str(demo), "-f", "html")
    assert proc.returncode == 4, proc.stderr
    took = re.search(r"<th>took</th><td>([^<]*)</td>", proc.stdout)
    assert took is not None and re.fullmatch(r"\d+\.\d{1,3} s|\d+ min \d+ s", took.group(1))
    assert took.group(1) not in ("0.0 s", "0.000 s")


def test_each_targets_status_is_the_same_alone_or_in_a_batch(demo: Path) -> None:
    """Asked together, b836c4d29f27 (incomplete alone) and db1d1e8b9867 (conflict alone)
    share one series whose word is the batch's; each target's own word is said beside it,
    and it is the word a resolve of it alone gives."""
    targets = ["b836c4d29f27", "db1d1e8b9867", "a1175d6b1bda"]
    alone = {}
    for target in targets:
        proc = backportr("resolve", target, "-b", "linux-5.10.y", "--repo", str(demo), "-f", "json")
        alone[json.loads(proc.stdout)["target"]] = json.loads(proc.stdout)["branches"][0]["status"]
    batch = backportr("resolve", *targets, "-b", "linux-5.10.y", "--repo", str(demo), "-f", "json")
    (branch,) = json.loads(batch.stdout)["branches"]
    assert {e["target"]: e["status"] for e in branch["each"]} == alone
    assert sorted(alone.values()) == ["conflict", "incomplete", "ready"]
    text = backportr("resolve", *targets, "-b", "linux-5.10.y", "--repo", str(demo)).stdout
    assert "  each target: " in text and " incomplete, " in text


def test_the_graph_names_a_posting_as_a_reader_finds_it_never_by_a_made_up_id() -> None:
    """A posting is grouped by its Message-ID stem (`20230124193025.185781-`), which no mail
    has: the graph names it by its cover letter, else a member's link, else says what it is."""
    from backportr.model import BranchReport, Member, Oid, PostingInfo, Reason
    from backportr.output.graph import render_dot

    def report(cover: str | None, link: str | None) -> str:
        posting = PostingInfo("20230124193025.185781-", 3, 8, cover, (), link=link)
        member = Member(Oid("a" * 40), "vfs: plumb", "target", (Reason("target", "", None),),
                        "clean", posting=posting)  # fmt: skip
        from backportr.model import Report

        return render_dot(Report(Oid("a" * 40), "s", (BranchReport("b", "ready", (member,)),)))

    bare = report(None, None)
    assert (
        "20230124193025.185781" not in bare and 'label="one posting (8 patches upstream)"' in bare
    )
    linked = report(None, "https://lore.kernel.org/r/20230124193025.185781-4-jlayton@kernel.org")
    assert 'label="posting: https://lore.kernel.org/r/20230124193025.185781-4-jlayton' in linked
    assert 'label="posting: vfs: add' in report("vfs: add the i_version counter", None)


def test_shell_completion_completes_branches_and_refs(demo: Path, tmp_path: Path) -> None:
    """bash completion (`--install-completion`'s protocol): `--branch linux` completes the
    branch, a target completes refs (the demo's tags of the real ids), `--repo` is honoured,
    and outside a repository it offers nothing, quietly."""

    def complete(words: str, cwd: Path) -> list[str]:
        proc = backportr(
            cwd=cwd,
            env={**__import__("os").environ, "_BACKPORTR_COMPLETE": "complete_bash",
                 "COMP_WORDS": words, "COMP_CWORD": str(len(words.split()) - 1)},
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.split()

    assert complete("backportr resolve b836 --branch linux", demo) == ["linux-5.10.y"]
    assert complete("backportr resolve b8", demo) == ["b836c4d29f27"]
    assert complete("backportr status 8a9", demo) == ["8a924db2d7b5"]
    assert complete(f"backportr scan --repo {demo} -b v5.10.1", tmp_path) == ["v5.10.194"]
    assert complete("backportr resolve b8", tmp_path) == []


def test_the_resolve_html_links_commits_through_commit_url(demo: Path) -> None:
    base = ("resolve", "b836c4d29f27", "-b", "linux-5.10.y", "--repo", str(demo), "-f", "html")
    plain = backportr(*base).stdout
    assert "<a href=" not in plain
    url = "https://git.kernel.org/linus/{commit}"
    linked = backportr("-c", f"backportr.commitUrl={url}", *base).stdout
    ids = re.findall(r'<a href="https://git\.kernel\.org/linus/([0-9a-f]{40})"><code>', linked)
    series = json.loads(backportr(*base[:-1], "json").stdout)["branches"][0]["series"]
    assert set(ids) >= {m["commit"] for m in series}  # every member, and what is present
    bad = backportr("-c", "backportr.commitUrl=javascript:alert(1)", *base)
    assert bad.returncode == 1 and "<a href" not in bad.stdout


@pytest.mark.skipif(__import__("shutil").which("dot") is None, reason="needs Graphviz's dot")
def test_a_graph_of_twenty_members_is_drawn_down_within_800_px() -> None:
    """Twenty follow-ups of one target drew side by side, 1,434 pt wide: the members now
    go one a rank, in the order they apply, and the page is at most 800 px (600 pt) wide."""
    from backportr.model import BranchReport, Member, Oid, Reason, Report
    from backportr.output.graph import render_svg

    target = Oid("f" * 40)
    members = [Member(target, "drv: the target", "target", (Reason("target", "", None),), "clean")]
    for n in range(19):
        members.append(
            Member(Oid(f"{n:02d}" + "a" * 38), f"drv: follow-up number {n} of the target",
                   "follow-up",
                   (Reason("follow-up", f"Fixes: {target[:12]}", target),), "clean")
        )  # fmt: skip
    svg = render_svg(Report(target, "s", (BranchReport("linux-5.10.y", "ready", tuple(members)),)))
    found = re.search(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"', svg)
    assert found is not None
    width, height = float(found.group(1)), float(found.group(2))
    assert width * 96 / 72 <= 800 and height > width  # top to bottom
