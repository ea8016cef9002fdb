"""The workflows called as a bot, a test or another program calls them: typed options in, a
typed outcome out, no command line in between. And the format table: a format added to it is
offered by the commands it names and used, with nothing else changed."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from backportr.app.console import Console
from backportr.app.formats import FORMATS, OutputFormat, ScanAnswer
from backportr.app.repository import status
from backportr.app.resolve import ResolveOptions, ResolveRequest, resolve
from backportr.app.scan import ScanOptions, scan
from backportr.errors import ExitCode, UsageError
from backportr.examples.ima import A1175, B836C, DB1D1, ImaFixture
from backportr.scan.findings import Policy
from backportr.scan.marks import Marks
from backportr.settings import Settings
from tests.conftest import backportr


def _console(quiet: bool = False) -> tuple[Console, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return Console(out=out, err=err, quiet=quiet), out, err


def _scan_options(ima: ImaFixture, **more: object) -> ScanOptions:
    return ScanOptions(
        settings=Settings(repo=ima.path, branches=("linux-5.10.y",)),
        policy=Policy.load(None, None),
        marks=Marks(),
        jobs=1,
        **more,  # type: ignore[arg-type]
    )


def test_scan_workflow_without_the_command_line(ima: ImaFixture, tmp_path: Path) -> None:
    console, out, _ = _console()
    state = tmp_path / "state.sqlite"
    outcome = scan(_scan_options(ima, output_format="json", state=state), console)
    assert outcome.exit_code is ExitCode.ATTENTION
    ((finding,),) = [s.findings for s in outcome.scans]
    assert (finding.kind, finding.commit) == ("incomplete-backport", ima.ids[B836C])
    written = json.loads(out.getvalue())
    assert [f["commit"] for f in written["branches"][0]["findings"]] == [ima.ids[B836C]]

    again, out, _ = _console()  # --new-only: reported once, so nothing new
    outcome = scan(_scan_options(ima, output_format="json", state=state, new_only=True), again)
    assert outcome.exit_code is ExitCode.OK
    assert json.loads(out.getvalue())["branches"][0]["findings"] == []


def test_scan_options_refuse_what_does_not_fit(ima: ImaFixture) -> None:
    with pytest.raises(UsageError, match="exclude each other"):
        _scan_options(ima, since="v5.10", range_="a..b")
    with pytest.raises(UsageError, match="--new-only needs --state"):
        _scan_options(ima, new_only=True)


def test_resolve_workflow_without_the_command_line(ima: ImaFixture, tmp_path: Path) -> None:
    console, out, _ = _console(quiet=True)
    request = ResolveRequest(
        settings=Settings(repo=ima.path, branches=("v5.10.194",)),
        targets=[ima.ids[B836C]],
        search=ResolveOptions(),
        output_format="json",
        output=tmp_path / "answer.json",
    )
    outcome = resolve(request, console)
    assert out.getvalue() == ""  # quiet; the file is written all the same
    (branch,) = outcome.report.branches
    members = [m.commit for m in branch.series]
    assert members[:2] == [ima.ids[A1175], ima.ids[DB1D1]]
    assert ima.ids[B836C] in members
    written = json.loads((tmp_path / "answer.json").read_text())
    assert [m["commit"] for m in written["branches"][0]["series"]] == members
    assert outcome.exit_code is (ExitCode.ATTENTION if branch.status == "conflict" else ExitCode.OK)


def test_status_workflow_answers_with_the_exit_status_when_quiet(ima: ImaFixture) -> None:
    settings = Settings(repo=ima.path, branches=("v5.10.194",))
    console, out, _ = _console(quiet=True)
    outcome = status(settings, [ima.ids[DB1D1]], console)
    assert out.getvalue() == ""
    (result,) = outcome.results
    assert not result.branches[0].present  # 5.10.194 lacks db1d1e8b9867
    assert outcome.exit_code is ExitCode.ATTENTION
    console, out, _ = _console()
    assert status(settings, [ima.ids[DB1D1]], console).exit_code is ExitCode.OK  # answered
    assert out.getvalue().splitlines()[1].split() == ["v5.10.194", "absent"]


def _count(answer: ScanAnswer) -> str:
    return "".join(f"{s.branch}\t{len(s.findings)}\n" for s in answer.scans)


def test_a_format_added_to_the_table_is_offered_and_used(ima: ImaFixture) -> None:
    counts = OutputFormat("counts", ".tsv", "text/tab-separated-values", {"scan": _count})
    assert "counts" not in FORMATS.offered("scan")
    with FORMATS.added(counts):
        assert FORMATS.offered("scan")[-1] == "counts"
        assert "counts" not in FORMATS.offered("resolve")  # only where it was named
        console, out, _ = _console()
        scan(_scan_options(ima, output_format="counts"), console)
        assert out.getvalue() == "linux-5.10.y\t1\n"
        proc = backportr("scan", "--repo", str(ima.path), "-b", "linux-5.10.y", "-f", "counts")
        assert (proc.returncode, proc.stdout) == (4, "linux-5.10.y\t1\n"), proc.stderr
        refused = backportr("resolve", ima.ids[B836C], "--repo", str(ima.path), "-f", "counts")
        assert refused.returncode == 2 and "counts" in refused.stderr
    assert "counts" not in FORMATS.offered("scan")
    gone = backportr("scan", "--repo", str(ima.path), "-b", "linux-5.10.y", "-f", "counts")
    assert gone.returncode == 2
