"""The branch's own annotation: patches for DPDK, Xen or a `cherry-pick -x` project carry
the form the branch's backports use, learned with nothing configured; the kernel's stay
kernel-shaped; `--annotation` names any form of the table."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest

from backportr.examples.ima import B836C, ImaFixture
from backportr.git.builder import RepoBuilder
from backportr.model import Oid
from backportr.text.annotations import ANNOTATIONS, FORMS, form_of
from tests.conftest import backportr


def _text(tag: str, count: int = 12) -> str:
    return "".join(f"{tag} {n}\n" for n in range(count))


def _project(
    path: Path, branch: str, form: str | None, backports: int = 4
) -> tuple[RepoBuilder, Oid]:
    """Upstream `main` with fixes, a stable `branch` forked before them whose backports carry
    `form` (written as that project's branch writes it); the last fix is left to resolve."""
    b = RepoBuilder(path)
    b.commit("base", {f"f{n}.c": _text(f"f{n}") for n in range(backports + 1)})
    b.branch(branch, "master")
    fixes = [
        b.commit(f"f{n}: fix", {f"f{n}.c": _text(f"f{n}").replace(f"f{n} 3", f"fixed {n}")})
        for n in range(backports + 1)
    ]
    for fix in fixes[:-1]:
        message = None
        if form is not None:
            subject, _, rest = b.repo[fix].peel(pygit2.Commit).message.partition("\n")
            written = ANNOTATIONS[form].write(rest, fix, "2024-03-12 16:24:37 +0100")
            message = f"{subject}\n\n{written}"
        b.cherry_pick(fix, branch, message=message, annotation=None)
    b.branch("main", "master")
    return b, fixes[-1]


def _first_mail_body(path: Path, target: str, branch: str, *extra: str) -> str:
    proc = backportr(
        "resolve", target, "-b", branch, "--repo", str(path), "--upstream", "main",
        "--branch-pattern", branch, "-f", "mbox", *extra,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    body = proc.stdout.split("\n\n", 1)[1]
    return body.split("\n---\n", 1)[0]


@pytest.mark.parametrize(
    ("form", "branch", "first", "last"),
    [
        ("dpdk", "23.11", "[ upstream commit {id} ]", None),
        ("xen", "stable-4.19", None, "master date: "),
        ("cherry-pick", "release-1.2", None, "(cherry picked from commit {id})"),
        ("sasha", "stable-v50", "[ Upstream commit {id} ]", None),  # rdma-core's: only this
        (None, "linux-5.10.y", "commit {id} upstream.", None),  # none learned: the kernel's
    ],
)
def test_patches_carry_the_branchs_own_annotation(
    tmp_path: Path, form: str | None, branch: str, first: str | None, last: str | None
) -> None:
    b, target = _project(tmp_path / "r", branch, form)
    body = _first_mail_body(b.path, target, branch)
    lines = body.strip("\n").splitlines()
    if first is not None:
        assert lines[0] == first.format(id=target), body
    if last is not None:
        assert lines[-1].startswith(last.format(id=target)), body
        assert form_of(body) is ANNOTATIONS[form or ""]
    if form == "xen":
        assert lines[-2] == f"master commit: {target}"
    config = backportr("config", "--repo", str(b.path), "--upstream", "main",
                       "--branch-pattern", branch)  # fmt: skip
    learned = [line for line in config.stdout.splitlines() if line.startswith("annotation[")]
    assert learned and learned[0].split("\t")[1] == (form or "greg")


def test_annotation_asked_for_wins_and_an_unknown_one_is_a_usage_error(tmp_path: Path) -> None:
    b, target = _project(tmp_path / "r", "23.11", "dpdk")
    body = _first_mail_body(b.path, target, "23.11", "--annotation", "cherry-pick")
    assert body.rstrip("\n").splitlines()[-1] == f"(cherry picked from commit {target})"
    proc = backportr(
        "-c", "user.name=Stable Maintainer", "-c", "user.email=sm@example.org", "resolve",
        target, "-b", "23.11", "--repo", str(b.path), "--upstream", "main", "--branch-pattern",
        "23.11", "-f", "mbox", "--annotation", "xen", "--signoff",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    signed = proc.stdout.split("\n---\n", 1)[0].rstrip("\n").splitlines()
    assert signed[-3].startswith(f"master commit: {target}")  # before the sign-off, as -x -s
    assert signed[-1] == "Signed-off-by: Stable Maintainer <sm@example.org>"
    bad = backportr(
        "resolve", target, "-b", "23.11", "--repo", str(b.path), "--upstream", "main",
        "--branch-pattern", "23.11", "-f", "mbox", "--annotation", "bogus",
    )  # fmt: skip
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and "--annotation is one of greg" in bad.stderr


def test_every_form_is_read_back_as_naming_its_upstream_commit() -> None:
    """What backportr writes in each form, its own reader takes as the backport of that
    commit (the index finds it present on the next run)."""
    from backportr.text.trailers import parse_message

    upstream = "0123456789abcdef0123456789abcdef01234567"
    for form in FORMS:
        message = "net: fix\n\n" + form.write("Body.\n\nSigned-off-by: A <a@b>", upstream, "d")
        assert form_of(message) is form
        refs = parse_message(message).upstream_refs
        assert [r.oid for r in refs] == [upstream], form.name


def test_git_can_commit_what_the_script_writes(tmp_path: Path) -> None:
    """-f script with a learned form: the script's messages carry it (the same `_body`)."""
    b, target = _project(tmp_path / "r", "23.11", "dpdk")
    proc = backportr("resolve", target, "-b", "23.11", "--repo", str(b.path), "--upstream",
                     "main", "--branch-pattern", "23.11", "-f", "script")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert f"[ upstream commit {target} ]" in proc.stdout
    assert subprocess.run(["bash", "-n"], input=proc.stdout, text=True).returncode == 0


def _stable_project(path: Path, names: list[str], form: str) -> tuple[RepoBuilder, Oid]:
    """Upstream `main`, stable branches `names` holding annotated backports, a topic branch
    without any, and a fix of a commit every stable branch carries (a missing fix)."""
    b = RepoBuilder(path)
    b.commit("base", {f"f{n}.c": _text(f"f{n}") for n in range(8)})
    culprit = b.commit("f7: rework", {"f7.c": _text("f7").replace("f7 5", "reworked")})
    for name in names:
        b.branch(name, "master")
    b.branch("topic/wip", "master")
    backports = [
        b.commit(f"f{n}: fix", {f"f{n}.c": _text(f"f{n}").replace(f"f{n} 3", f"fixed {n}")})
        for n in range(6)
    ]
    for name in names:
        for fix in backports:
            subject, _, rest = b.repo[fix].peel(pygit2.Commit).message.partition("\n")
            written = ANNOTATIONS[form].write(rest, fix, "2024-03-12 16:24:37 +0100")
            b.cherry_pick(fix, name, message=f"{subject}\n\n{written}", annotation=None)
    b.commit("topic: start", {"topic.c": "x\n"}, branch="topic/wip")
    missing = b.commit(
        f'f7: fix the rework\n\nFixes: {culprit[:12]} ("f7: rework")\n',
        {"f7.c": _text("f7").replace("f7 5", "reworked right")},
    )
    b.branch("main", "master")
    return b, missing


@pytest.mark.parametrize(
    ("names", "form"), [(["22.11", "23.11"], "dpdk"), (["stable-4.18", "stable-4.19"], "xen")]
)
def test_stable_branches_are_found_by_what_they_hold(
    tmp_path: Path, names: list[str], form: str
) -> None:
    """No branch pattern configured, no -b: scan and resolve consider the branches whose
    commits name upstream commits (not the topic branch), and the patches' subject prefix
    names each as the project does."""
    b, missing = _stable_project(tmp_path / "r", names, form)
    scan = backportr("scan", "--repo", str(b.path), "--upstream", "main", "-f", "json")
    assert scan.returncode == 4, scan.stderr
    import json

    report = json.loads(scan.stdout)
    assert [br["branch"] for br in report["branches"]] == names
    for branch in report["branches"]:
        assert [f["commit"] for f in branch["findings"] if f["kind"] == "missing-fix"] == [missing]
    resolved = backportr("resolve", missing, "--repo", str(b.path), "--upstream", "main",
                         "-f", "json")  # fmt: skip
    assert resolved.returncode == 0, resolved.stderr
    assert [br["branch"] for br in json.loads(resolved.stdout)["branches"]] == names
    mbox = backportr("resolve", missing, "-b", names[-1], "--repo", str(b.path), "--upstream",
                     "main", "-f", "mbox")  # fmt: skip
    assert mbox.returncode == 0, mbox.stderr
    version = names[-1].rsplit("-", 1)[-1]
    assert f"Subject: [PATCH {names[-1] if form == 'dpdk' else version}] f7: fix" in mbox.stdout


def test_a_form_added_to_the_table_is_offered_written_learned_and_read(ima: ImaFixture) -> None:
    """Adding an annotation form is one table entry: `--annotation` accepts it, patches are
    written in it, a branch's backports in it are learned as its form and read as the
    upstream commit they carry."""
    import re as regex

    from backportr.text.annotations import ANNOTATIONS, AnnotationForm
    from backportr.text.relation_forms import Vocabulary
    from backportr.text.trailers import parse_message

    picked = AnnotationForm(
        "picked",
        "Picked-from: <id>",
        regex.compile(r"^Picked-from: ([0-9a-f]{12,40})[ \t]*$", regex.MULTILINE),
        "last",
        ("Picked-from: {id}",),
        words=("picked-from",),
    )
    upstream = "0123456789abcdef0123456789abcdef01234567"
    message = f"net: fix it\n\nBody.\n\nPicked-from: {upstream}\n"
    assert parse_message(message).upstream_refs == ()
    before = Vocabulary().fingerprint
    with ANNOTATIONS.added(picked):
        assert "picked" in ANNOTATIONS.names()
        assert form_of(message) is picked
        assert [r.oid for r in parse_message(message).upstream_refs] == [upstream]
        vocabulary = Vocabulary()
        assert vocabulary.words == (b"picked-from",)  # the index reads such messages
        assert vocabulary.fingerprint != before  # an index re-reads every message
        written = picked.write("Body.", upstream, "2024-03-12 16:24:37 +0100")
        assert written == f"Body.\n\nPicked-from: {upstream}\n"
        target = ima.ids[B836C]
        script = backportr(
            "resolve", target, "--repo", str(ima.path), "-b", "v5.10.194", "-f", "script",
            "--annotation", "picked",
        )  # fmt: skip
        assert script.returncode == 0, script.stderr
        assert f"Picked-from: {target}" in script.stdout
    assert "picked" not in ANNOTATIONS.names()
    assert parse_message(message).upstream_refs == ()
