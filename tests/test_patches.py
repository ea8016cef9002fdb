"""--format mbox: git am of the output reproduces the trial; trailers in the documented format."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from backportr.apply import TreeState, TrialApplier
from backportr.examples.ima import A1175, B836C, DB1D1, F8A92, ImaFixture
from backportr.patches import branch_prefix
from backportr.repo import Repo
from tests.conftest import backportr, git


def _resolve(ima: ImaFixture, *args: str) -> subprocess.CompletedProcess[str]:
    """resolve the IMA target as mbox."""
    return backportr("resolve", ima.ids[B836C], "--repo", str(ima.path), "--format", "mbox", *args)


def test_git_am_reproduces_the_trial(ima: ImaFixture, tmp_path: Path) -> None:
    out = tmp_path / "patches"
    proc = _resolve(ima, "-b", "v5.10.194", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    series = (out / "series").read_text().split()
    assert len(series) == 4
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(ima.path), "clone")
    git(clone, "checkout", "-q", "--detach", "v5.10.194")
    git(clone, "am", *[str(out / name) for name in series])
    repo = Repo(ima.path)
    applier = TrialApplier(repo)
    _, state = applier.pick_series(ima.expected_ready, TreeState(repo.resolve_commit("v5.10.194")))
    assert git(clone, "rev-parse", "HEAD^{tree}").strip() == applier.write_tree(state)
    log = git(clone, "log", "--format=%an|%s", "-4", "--reverse").splitlines()
    assert log[0] == "Jeff Layton|vfs: plumb i_version handling into struct kstat"


def test_mail_format(ima: ImaFixture) -> None:
    proc = _resolve(ima, "-b", "v5.10.194")
    assert proc.returncode == 0, proc.stderr
    mails = proc.stdout.split("\nFrom ")
    assert len(mails) == 4
    subjects = re.findall(r"^Subject: (.*)$", proc.stdout, re.MULTILINE)
    assert subjects == [
        "[PATCH 5.10.y 1/4] vfs: plumb i_version handling into struct kstat",
        "[PATCH 5.10.y 2/4] IMA: use vfs_getattr_nosec to get the i_version",
        "[PATCH 5.10.y 3/4] ima: detect changes to the backing overlay file",
        "[PATCH 5.10.y 4/4] fs: Pass AT_GETATTR_NOSEC flag to getattr interface function",
    ]
    first_lines = re.findall(
        r"^Content-Transfer-Encoding: 8bit\n\n(.*)$", proc.stdout, re.MULTILINE
    )
    assert first_lines == [f"commit {ima.ids[n]} upstream." for n in (A1175, DB1D1, B836C, F8A92)]
    db1d1_mail = mails[1]
    # exactly the documented trailer, before the final sign-off
    tail = db1d1_mail.split("\n---\n")[0].splitlines()[-2:]
    assert tail == [
        f'Stable-dep-of: {ima.ids[B836C][:12]} ("ima: detect changes to the backing overlay file")',
        "Signed-off-by: Mimi Zohar <zohar@linux.ibm.com>",
    ]
    a1175_mail = mails[0]
    # a1175d6b1bda is needed first by db1d1e8b9867, which uses STATX_CHANGE_COOKIE
    assert (
        f'Stable-dep-of: {ima.ids[DB1D1][:12]} ("IMA: use vfs_getattr_nosec to get the i_version")'
    ) in a1175_mail
    assert "Stable-dep-of" not in mails[2] and "Stable-dep-of" not in mails[3]
    assert "From: Jeff Layton <jlayton@kernel.org>" in a1175_mail


def test_sasha_annotation(ima: ImaFixture) -> None:
    proc = _resolve(ima, "-b", "v5.10.194", "--annotation", "sasha")
    assert f"[ Upstream commit {ima.ids[A1175]} ]" in proc.stdout


def test_branch_prefix() -> None:
    assert branch_prefix("linux-5.10.y") == "5.10.y"
    assert branch_prefix("v5.10.194") == "5.10.y"
    assert branch_prefix("stable") == "stable"
