"""--format mbox: git am of the output reproduces the trial; trailers in the documented format."""

from __future__ import annotations

import email
import email.message
import email.policy
import json
import mailbox
import re
import subprocess
from pathlib import Path

import pytest

from backportr.examples.ima import A1175, B836C, DB1D1, F8A92, ImaFixture
from backportr.git.builder import Person
from backportr.git.repo import Repo
from backportr.git.trial import TreeState, TrialApplier
from backportr.output.patches import branch_prefix
from tests.conftest import backportr, git
from tests.resolve_scenarios import BRANCH, OTHER, Kernel, smb_client_moved_after_the_fork


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
    _, state = applier.pick_series(
        ima.expected_ready, TreeState(repo.names.resolve_commit("v5.10.194"))
    )
    assert git(clone, "rev-parse", "HEAD^{tree}").strip() == applier.write_tree(state)
    log = git(clone, "log", "--format=%an|%s", "-4", "--reverse").splitlines()
    assert log[0] == "Jeff Layton|vfs: plumb i_version handling into struct kstat"


def _messages(mbox_text: str, tmp_path: Path) -> list[email.message.EmailMessage]:
    """Read an mbox as a mail reader does (Python's mailbox splits on every `From ` line)."""
    path = tmp_path / "out.mbox"
    path.write_text(mbox_text, encoding="utf-8")
    box = mailbox.mbox(
        path,
        factory=lambda f: email.message_from_binary_file(f, policy=email.policy.default),  # type: ignore[call-overload]
        create=False,
    )
    return list(box)  # type: ignore[arg-type]


def test_mail_format(ima: ImaFixture, tmp_path: Path) -> None:
    proc = _resolve(ima, "-b", "v5.10.194")
    assert proc.returncode == 0, proc.stderr
    mails = _messages(proc.stdout, tmp_path)
    assert len(mails) == 4
    assert [str(m["Subject"]) for m in mails] == [
        "[PATCH 5.10.y 1/4] vfs: plumb i_version handling into struct kstat",
        "[PATCH 5.10.y 2/4] IMA: use vfs_getattr_nosec to get the i_version",
        "[PATCH 5.10.y 3/4] ima: detect changes to the backing overlay file",
        "[PATCH 5.10.y 4/4] fs: Pass AT_GETATTR_NOSEC flag to getattr interface function",
    ]
    bodies = [m.get_content().split("\n---\n")[0].splitlines() for m in mails]
    assert [b[0] for b in bodies] == [
        f"commit {ima.ids[n]} upstream." for n in (A1175, DB1D1, B836C, F8A92)
    ]
    # Stable-dep-of: after every upstream trailer (the stable team's place for it)
    assert bodies[1][-2:] == [
        "Signed-off-by: Mimi Zohar <zohar@linux.ibm.com>",
        f'Stable-dep-of: {ima.ids[B836C][:12]} ("ima: detect changes to the backing overlay file")',
    ]
    # a1175d6b1bda is needed first by db1d1e8b9867, which uses STATX_CHANGE_COOKIE
    assert bodies[0][-1] == (
        f'Stable-dep-of: {ima.ids[DB1D1][:12]} ("IMA: use vfs_getattr_nosec to get the i_version")'
    )
    assert not any("Stable-dep-of" in line for b in bodies[2:] for line in b)
    assert str(mails[0]["From"]) == "Jeff Layton <jlayton@kernel.org>"


def test_non_ascii_author_from_lines_and_signoff(tmp_path: Path) -> None:
    """RFC 2047 headers, a long subject folded, a body line starting `From ` as git
    format-patch writes it (plain `git am` keeps it), escaped with --mboxrd (taken back by
    `git am --patch-format=mboxrd`), --signoff last."""
    k = Kernel(tmp_path / "repo")
    k.edit_in("enabler", "drv_fn4", "\ty *= 2;", "\ty *= 4;", author=OTHER)
    uwe = Person("Uwe Kleine-König", "u.kleine-koenig@pengutronix.de")
    subject = "drv: a rather long subject that git folds " + "word " * 12
    k.b.commit(
        f"{subject.strip()}\n\nFrom the start this was wrong.\n\n"
        "Signed-off-by: Uwe Kleine-König <u.kleine-koenig@pengutronix.de>\n"
        "Link: https://lore.kernel.org/r/20231120-x@pengutronix.de\n",
        {"drivers/drv.c": _in_function(k.b.files("master")["drivers/drv.c"], "drv_fn4")},
        name="target",
        author=uwe,
    )
    git(k.b.path, "config", "user.name", "Stäble Backporter")
    git(k.b.path, "config", "user.email", "backporter@example.org")
    proc = backportr(
        "resolve",
        k.b.ids["target"],
        "--repo",
        str(k.b.path),
        "-b",
        BRANCH,
        "--format",
        "mbox",
        "--signoff",
    )
    assert proc.returncode == 0, proc.stderr
    assert "=?utf-8?" in proc.stdout and "König" not in proc.stdout.split("\n\n", 1)[0]
    assert "\nFrom the start" in proc.stdout and ">From" not in proc.stdout
    (tmp_path / "all.mbox").write_text(proc.stdout, encoding="utf-8")
    (tmp_path / "split").mkdir()
    split = git(tmp_path, "mailsplit", "-o" + str(tmp_path / "split"), str(tmp_path / "all.mbox"))
    assert split.strip() == "2"  # as git reads it: the `From ` body line did not split it
    rd = backportr(*proc.args[3:], "--mboxrd")  # the same command, escaped for mail readers
    assert rd.returncode == 0 and "\n>From the start" in rd.stdout
    mails = _messages(rd.stdout, tmp_path)
    assert len(mails) == 2  # one message per patch for a mail reader too
    assert str(mails[1]["From"]) == "Uwe Kleine-König <u.kleine-koenig@pengutronix.de>"
    assert str(mails[1]["Subject"]) == f"[PATCH 5.10.y 2/2] {subject.strip()}"
    enabler = mails[0].get_content().split("\n---\n")[0].splitlines()
    assert enabler[-2].startswith("Stable-dep-of: ") and enabler[-1] == (
        "Signed-off-by: Stäble Backporter <backporter@example.org>"
    )
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(k.b.path), "clone")
    git(clone, "checkout", "-q", "--detach", f"origin/{BRANCH}")
    (tmp_path / "rd.mbox").write_text(rd.stdout, encoding="utf-8")
    for box, how in (("all.mbox", ()), ("rd.mbox", ("--patch-format=mboxrd",))):
        git(clone, "checkout", "-q", "--detach", f"origin/{BRANCH}")
        git(clone, "am", *how, str(tmp_path / box))  # plain git am takes the default form
        log = git(clone, "log", "-1", "--format=%an%n%B")
        assert log.startswith("Uwe Kleine-König\n") and "\nFrom the start this was wrong." in log
        assert log.rstrip().endswith("Signed-off-by: Stäble Backporter <backporter@example.org>")


def _in_function(text: str, fn: str) -> str:
    start = text.index(f"int {fn}(int x)")
    end = text.index("}\n", start)
    return text[:start] + text[start:end].replace("\ty -= 3;", "\ty -= 30;") + text[end:]


def test_queue_directory_keeps_foreign_series_lines(ima: ImaFixture, tmp_path: Path) -> None:
    """A queue directory as a stable queue keeps it: patches named by their place in
    `series` and their subject, lines of `series` that backportr did not write kept, a
    second run of the same target replacing its own lines in place, a file of the same name
    never overwritten."""
    out = tmp_path / "queue"
    out.mkdir()
    (out / "series").write_text("already-queued.patch\n# a comment\n")
    for _ in range(2):  # twice into one queue directory
        proc = _resolve(ima, "-b", "v5.10.194", "--output", str(out))
        assert proc.returncode == 0, proc.stderr
    lines = (out / "series").read_text().splitlines()
    assert lines[:2] == ["already-queued.patch", "# a comment"] and len(lines) == 6
    assert lines[4] == "0004-ima-detect-changes-to-the-backing-overlay-file.patch"
    assert sorted(p.name for p in out.glob("*.patch")) == sorted(lines[2:])
    mine = out / lines[4]
    ours = mine.read_text()
    mine.unlink()
    mine.write_text("someone else's patch\n")  # as if another tool wrote that name
    (out / ".backportr-series").write_text("")
    (out / "series").write_text("already-queued.patch\n")
    proc = _resolve(ima, "-b", "v5.10.194", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    assert mine.read_text() == "someone else's patch\n"
    lines = (out / "series").read_text().splitlines()
    assert lines[3] == "0004-ima-detect-changes-to-the-backing-overlay-file-2.patch"
    assert (out / lines[3]).read_text() == ours


def test_a_queue_built_in_two_runs(ima: ImaFixture, tmp_path: Path) -> None:
    """Two targets queued in two runs: the second keeps what the first queued (by upstream
    id, said on stderr) and adds only what it lacks; nothing is duplicated or removed, and
    `git quiltimport` applies the queue on the branch."""
    out = tmp_path / "queue-5.10"
    first = _resolve_one(ima, DB1D1, "-b", "v5.10.194", "--output", str(out))
    assert first.returncode == 0, first.stderr
    before = (out / "series").read_text().splitlines()
    assert [line[:5] for line in before] == [f"{n:04d}-" for n in range(1, len(before) + 1)]
    second = _resolve(ima, "-b", "v5.10.194", "--output", str(out))
    assert second.returncode == 0, second.stderr
    assert "already queued as" in second.stderr
    after = (out / "series").read_text().splitlines()
    assert after[: len(before)] == before  # the first run's lines stay where they were
    added = f"{len(before) + 1:04d}-ima-detect-changes-to-the-backing-overlay-file.patch"
    assert after[len(before) :] == [added]
    assert sorted(p.name for p in out.glob("*.patch")) == after  # a glob is series order
    again = _resolve_one(ima, DB1D1, "-b", "v5.10.194", "--output", str(out))
    assert again.returncode == 0, again.stderr
    assert (out / "series").read_text().splitlines() == after  # replaced in place
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(ima.path), "clone")
    git(clone, "checkout", "-q", "-b", "q", "v5.10.194")
    git(clone, "config", "user.name", "T"), git(clone, "config", "user.email", "t@example.org")
    git(clone, "quiltimport", "--patches", str(out))
    subjects = git(clone, "log", "--format=%s", "v5.10.194..").splitlines()
    assert len(subjects) == len(after) == len(set(subjects))


def _resolve_one(ima: ImaFixture, name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return backportr("resolve", ima.ids[name], "--repo", str(ima.path), "-f", "mbox", *args)


def test_file_names_as_git_format_patch_makes_them(ima: ImaFixture, tmp_path: Path) -> None:
    """A new directory's patches have the names `git format-patch` gives them."""
    out = tmp_path / "patches"
    assert _resolve(ima, "-b", "v5.10.194", "--output", str(out)).returncode == 0
    ours = (out / "series").read_text().split()
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(ima.path), "clone")
    git(clone, "checkout", "-q", "--detach", "v5.10.194")
    git(clone, "am", *[str(out / name) for name in ours])
    theirs = git(clone, "format-patch", "-4", "-o", str(tmp_path / "fp")).split()
    assert ours == [Path(name).name for name in theirs]


def test_sasha_annotation(ima: ImaFixture) -> None:
    proc = _resolve(ima, "-b", "v5.10.194", "--annotation", "sasha")
    assert f"[ Upstream commit {ima.ids[A1175]} ]" in proc.stdout


def test_branch_prefix() -> None:
    assert branch_prefix("linux-5.10.y") == "5.10.y"
    assert branch_prefix("v5.10.194") == "5.10.y"
    assert branch_prefix("stable") == "stable"
    assert branch_prefix("origin/stable-4.19", "stable-{v}") == "4.19"  # Xen
    assert (
        branch_prefix("23.11", "{v}") == "23.11" and branch_prefix("origin/23.11", "{v}") == "23.11"
    )
    assert branch_prefix("linux-5.10.y", "linux-{v}.y") == "5.10.y"


def test_the_subject_prefix(ima: ImaFixture) -> None:
    """--subject-prefix as git format-patch's, before the branch."""
    proc = _resolve(ima, "-b", "v5.10.194", "--subject-prefix", "PATCH v2")
    assert proc.returncode == 0, proc.stderr
    subjects = [line for line in proc.stdout.splitlines() if line.startswith("Subject: ")]
    assert len(subjects) == 4 and all(s.startswith("Subject: [PATCH v2 5.10.y ") for s in subjects)


def test_cover_letter_recipients_and_threading(ima: ImaFixture, tmp_path: Path) -> None:
    """--cover-letter, --to, --cc: a 0/N mail saying what the series is, every patch replying
    to it (shallow threading, as git format-patch --thread); the patches still go through
    git am; the quilt series lists the patches, not the cover letter."""
    import mailbox

    args: tuple[str, ...] = ("-b", "v5.10.194", "--cover-letter", "--to", "stable@vger.kernel.org")
    args += ("--cc", "Jeff Layton <jlayton@kernel.org>", "--cc", "Uwe Kleine-König <u@example.org>")
    here = tmp_path / "here"
    here.mkdir()
    argv = ("resolve", ima.ids[B836C], "--repo", str(ima.path), "--format", "mbox", *args)
    proc = backportr(*argv, cwd=here)
    assert proc.returncode == 0, proc.stderr
    box = tmp_path / "all.mbox"
    box.write_text(proc.stdout, encoding="utf-8")
    patches = list(mailbox.mbox(str(box)))
    assert len(patches) == 4  # the mbox is what git am takes: no cover letter in it
    assert "cover letter in 0000-cover-letter.patch" in proc.stderr
    (cover,) = list(mailbox.mbox(str(here / "0000-cover-letter.patch")))
    mails = [cover, *patches]
    assert cover["Subject"] == "[PATCH 5.10.y 0/4] ima: detect changes to the backing overlay file"
    payload = cover.get_payload(decode=True)
    assert isinstance(payload, bytes)
    body = payload.decode()
    assert "Backport of " in body and "1/4" in body and "prerequisite:" in body
    assert "posting: 3/8 of posting" in body  # and its link to the archive, never broken:
    assert "\n        https://lore.kernel.org/r/20230124193025.185781-4-jlayton@kernel.org" in body
    root = cover["Message-ID"]
    assert root and root.startswith("<backportr-")
    assert re.search(r" [+-]\d{4}$", cover["Date"]) and not cover["Date"].endswith("-0000")
    for number, mail in enumerate(patches, 1):
        assert mail["Subject"].startswith(f"[PATCH 5.10.y {number}/4] ")
        assert mail["In-Reply-To"] == root and mail["References"] == root
        assert mail["To"] == "stable@vger.kernel.org"
        assert "jlayton@kernel.org" in mail["Cc"] and "=?utf-8?" in mail["Cc"]  # RFC 2047
    assert len({m["Message-ID"] for m in mails}) == 5
    out = tmp_path / "queue"
    written = _resolve(ima, *args, "--output", str(out))
    assert written.returncode == 0, written.stderr
    assert (out / "0000-cover-letter.patch").exists()
    series = (out / "series").read_text().split()
    assert len(series) == 4 and "0000-cover-letter.patch" not in series
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(ima.path), "clone")
    git(clone, "checkout", "-q", "--detach", "v5.10.194")
    git(clone, "am", *[str(out / name) for name in series])
    git(clone, "checkout", "-q", "--detach", "v5.10.194")
    git(clone, "am", str(box))  # the mbox on stdout, plain git am


def test_a_series_across_a_directory_move_is_mailed_in_the_branchs_layout(
    tmp_path: Path,
) -> None:
    """The kernel's fs/cifs -> fs/smb/client shape: upstream moved the directory after the
    fork, the fix and its follow-up are at the new path; the patches carry the branch's
    path, as `git cherry-pick` then `git format-patch` would, and plain `git am` applies
    them on the branch, to the trial's tree."""
    s = smb_client_moved_after_the_fork(tmp_path / "r")
    out = tmp_path / "patches"
    proc = backportr(
        "resolve", s.ids["fix"], "--repo", str(s.path), "-b", BRANCH, "-f", "mbox", "-o", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    series = (out / "series").read_text().split()
    assert len(series) == 3
    text = "".join((out / name).read_text() for name in series)
    assert "fs/smb/client" not in text.split("\n---\n", 1)[1]  # no diff names the new path
    assert text.count("diff --git a/fs/cifs/connect.c b/fs/cifs/connect.c") == 3
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(s.path), "clone")
    git(clone, "checkout", "-q", "--detach", f"origin/{BRANCH}")
    git(clone, "am", *[str(out / name) for name in series])
    repo = Repo(s.path)
    applier = TrialApplier(repo)
    series_ids = [s.ids[n] for n in ("prerequisite", "fix", "follow-up")]
    _, state = applier.pick_series(series_ids, TreeState(repo.branch(BRANCH).tip))
    assert git(clone, "rev-parse", "HEAD^{tree}").strip() == applier.write_tree(state)


@pytest.mark.parametrize(
    "listed",
    [
        "../victim.txt",
        "{outside}/victim.txt",
        "sub/../../victim.txt",
        '{{"version": 2, "runs": {{"x": {{"files": ["../victim.txt"], "lines": []}}}}}}',
    ],
)
def test_a_list_file_cannot_remove_files_outside_the_directory(
    ima: ImaFixture, tmp_path: Path, listed: str
) -> None:
    """The list of what an earlier run wrote (`.backportr-series`) is data anyone could
    have written: a name that leaves the directory is refused, one line, exit 1, and
    nothing is removed or written."""
    out = tmp_path / "queue"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's file\n")
    (out / ".backportr-series").write_text(listed.format(outside=tmp_path) + "\n")
    proc = _resolve(ima, "-b", "v5.10.194", "--output", str(out))
    assert proc.returncode == 1, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "refusing" in proc.stderr
    assert victim.read_text() == "the user's file\n"
    written = sorted(p.name for p in out.iterdir() if p.name != ".backportr-series.lock")
    assert written == [".backportr-series"]  # nothing written (the lock is the directory's)


@pytest.mark.parametrize("name", ["series", ".backportr-series"])
def test_a_link_out_of_the_directory_is_not_written_through(
    ima: ImaFixture, tmp_path: Path, name: str
) -> None:
    out = tmp_path / "queue"
    out.mkdir()
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("not yours\n")
    (out / name).symlink_to(outside)
    proc = _resolve(ima, "-b", "v5.10.194", "--output", str(out))
    assert proc.returncode == 1 and "link out of the output directory" in proc.stderr
    assert outside.read_text() == "not yours\n"
    assert not list(out.glob("*.patch"))


@pytest.mark.parametrize(
    "subject", ["drv: cr\rinjected", "drv: a\rX-Injected: yes", "\x1b]0;t\x07b"]
)
def test_a_subject_with_control_bytes_makes_a_whole_mail(tmp_path: Path, subject: str) -> None:
    """A commit subject is data anyone upstream wrote: a CR in it used to crash the mbox
    writer (HeaderParseError, exit 3) or cut the Subject: header. It is folded to a space,
    the mail parses, and it has no header the subject smuggled in."""
    k = Kernel(tmp_path / "r")
    k.edit_fn("target", "drv_fn1", "y += 100;", subject=subject)
    proc = backportr(
        "resolve", k.b.ids["target"], "--repo", str(k.b.path), "-b", BRANCH, "-f", "mbox"
    )
    assert proc.returncode == 0, proc.stderr
    header = proc.stdout.split("\n\n", 1)[0]
    assert "\r" not in header and "\x1b" not in header
    message = email.message_from_string(proc.stdout.split("\n", 1)[1], policy=email.policy.default)
    assert message["X-Injected"] is None
    folded = "".join(" " if ord(c) < 32 else c for c in subject)
    assert str(message["Subject"]) == f"[PATCH 5.10.y] {folded}"


def test_the_script_starts_from_the_ref_it_resolved(tmp_path: Path) -> None:
    """In a clone that has the branch only as `origin/linux-5.10.y`, `-b linux-5.10.y` is
    resolved to that ref: the script's `git worktree add` names it in full (the short name
    is no ref of the clone), and the script runs to its end."""
    k = Kernel(tmp_path / "r")
    k.edit_fn("target", "drv_fn1", "y += 100;")
    git(tmp_path, "clone", "-q", str(k.b.path), "clone")
    clone = tmp_path / "clone"
    proc = backportr(
        "resolve", k.b.ids["target"], "--repo", str(clone), "-b", BRANCH, "-f", "script"
    )
    assert proc.returncode == 0, proc.stderr
    assert f"refs/remotes/origin/{BRANCH}" in proc.stdout
    script = tmp_path / "series.sh"
    script.write_text(proc.stdout)
    ran = subprocess.run(["sh", str(script)], cwd=clone, capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    worktree = tmp_path / f"backport-{k.b.ids['target'][:12]}-{BRANCH}"
    assert "y += 100;" in (worktree / "drivers/drv.c").read_text()


def test_several_branches_named_with_slashes_get_a_directory_each(tmp_path: Path) -> None:
    """`-o DIR` for two branches named as glibc's (`release/2.40/master`): a subdirectory
    each, `release-2.40-master` (a branch's name as a path: its parents were missing, and
    the command failed before writing anything)."""
    from backportr.git.builder import RepoBuilder

    b = RepoBuilder(tmp_path / "r")
    b.commit("base", {"a.c": "int a;\n"})
    for branch in ("release/2.40/master", "release/2.41/master"):
        b.branch(branch, "master")
    fix = b.commit("a: fix", {"a.c": "long a;\n"})
    out = tmp_path / "out"
    proc = backportr("resolve", fix, "--repo", str(b.path), "-b", "release/2.40/master",
                     "-b", "release/2.41/master", "-f", "mbox", "-o", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["release-2.40-master", "release-2.41-master"]
    for made in out.iterdir():
        assert (made / "series").read_text() == "0001-a-fix.patch\n"


def test_the_cover_letter_wraps_at_spaces_only() -> None:
    """A reason wrapped for the cover letter keeps `Stable-dep-of:` whole (it was split as
    `Stable-` / `dep-of:`), and a long id is never cut."""
    from backportr.output.mbox import wrapped

    text = (
        "recorded: " + "x" * 50 + ' Stable-dep-of: 8a924db2d7b5 ("fs: Pass AT_GETATTR_NOSEC flag")'
    )
    lines = wrapped(text)
    assert all(len(line) <= 66 or " " not in line for line in lines)
    assert any(line.startswith("Stable-dep-of:") for line in lines), lines
    assert not any(line.endswith("Stable-") for line in lines)


def test_a_series_that_is_not_whole_is_written_whole_or_not_at_all(tmp_path: Path) -> None:
    """A member that conflicts leaves the series incomplete: by default nothing is written
    (exit 4, a line per member left out); --partial writes the part that applies, whose
    `Stable-dep-of:` lines name only members inside it, and lists the rest in `series` and
    in the cover letter."""
    from tests.resolve_scenarios import posting_step_that_needs_a_human

    scenario = posting_step_that_needs_a_human(tmp_path / "repo")
    ids = scenario.ids
    base = ("resolve", ids["target"], "--repo", str(scenario.path), "-b", BRANCH, "-f", "mbox")
    out = tmp_path / "queue"
    whole = backportr(*base, "-o", str(out))
    assert whole.returncode == 4, whole.stderr
    assert f"left out {ids['step'][:12]}" in whole.stderr and "nothing written" in whole.stderr
    assert not out.exists() or not any(out.iterdir())
    stdout = backportr(*base)
    assert stdout.returncode == 4 and stdout.stdout == ""
    partial = backportr(*base, "-o", str(out), "--partial", "--cover-letter")
    assert partial.returncode == 4, partial.stderr
    series = (out / "series").read_text().splitlines()
    assert series[0].endswith(".patch")
    assert series[1].startswith(f"# left out: {ids['step'][:12]}")
    assert any(line.startswith(f"# left out: {ids['target'][:12]}") for line in series)
    first = (out / series[0]).read_text()
    assert ids["first"] in first and "Stable-dep-of" not in first  # naming one left out
    cover = (out / "0000-cover-letter.patch").read_text()
    assert "Left out" in cover and ids["step"][:12] in cover


def test_several_targets_make_one_series(ima: ImaFixture, tmp_path: Path) -> None:
    """`resolve A B` and `resolve --stdin`: one merged, deduplicated, ordered series on the
    branch, each member naming the targets that pulled it; JSON keeps `target` (the first)
    and adds `targets`; the queue of the batch applies with `git quiltimport`."""
    import json

    a, b = ima.ids[DB1D1], ima.ids[B836C]
    repo = ("--repo", str(ima.path), "-b", "v5.10.194")
    proc = backportr("resolve", a, b[:12], *repo, "-f", "json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["target"] == a and data["targets"] == [a, b]
    series = data["branches"][0]["series"]
    assert [m["commit"] for m in series] == ima.expected_ready  # once each, in order
    by = {m["commit"]: m for m in series}
    assert by[b]["role"] == "target" and by[b]["targets"] == [b]
    assert by[ima.ids[F8A92]]["targets"] == [a, b]  # the follow-up of db1d1 serves both
    listed = f"# the IMA case\n{b}\n\n{a}  # its prerequisite\n"
    piped = backportr("resolve", "--stdin", *repo, "-f", "json", input=listed)
    assert piped.returncode == 0, piped.stderr
    batch = json.loads(piped.stdout)
    assert batch["targets"] == [b, a]  # in the order asked, the same series
    assert [m["commit"] for m in batch["branches"][0]["series"]] == ima.expected_ready
    single = json.loads(backportr("resolve", b, *repo, "-f", "json").stdout)
    assert "targets" not in single and "targets" not in single["branches"][0]["series"][0]
    text = backportr("resolve", a, b, *repo)
    assert "2 targets" in text.stdout and f"for: {a[:12]}, {b[:12]}" in text.stdout
    out = tmp_path / "queue"
    queued = backportr("resolve", a, b, *repo, "-f", "mbox", "-o", str(out))
    assert queued.returncode == 0, queued.stderr
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(ima.path), "clone")
    git(clone, "checkout", "-q", "-b", "q", "v5.10.194")
    git(clone, "config", "user.name", "T"), git(clone, "config", "user.email", "t@example.org")
    git(clone, "quiltimport", "--patches", str(out))
    assert len(git(clone, "log", "--format=%s", "v5.10.194..").splitlines()) == 4
    bad = backportr("resolve", "--stdin", *repo, input=f"{a} {b}\n")
    assert bad.returncode == 2 and "one commit id per line" in bad.stderr
    none = backportr("resolve", *repo)
    assert none.returncode == 2 and "TARGET" in none.stderr


def test_a_queued_file_name_with_control_bytes_is_said_escaped(
    ima: ImaFixture, tmp_path: Path
) -> None:
    """`already queued as NAME`: NAME is a line of someone's `series`, data like any other
    (a name holding C0 controls is no file name here at all: `inside` refuses it)."""
    out = tmp_path / "queue"
    out.mkdir()
    name = "odd\u202egnp.patch"  # a right-to-left override: the name reads otherwise
    (out / name).write_text(f"Subject: [PATCH] x\n\ncommit {ima.ids[A1175]} upstream.\n")
    (out / "series").write_text(name + "\n")
    proc = _resolve(ima, "-b", "v5.10.194", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "already queued as odd" in proc.stderr and "\u202e" not in proc.stderr
    assert (out / "series").read_text().splitlines()[0] == name  # kept where it was


def test_an_output_named_mbox_is_one_mbox_file(ima: ImaFixture, tmp_path: Path) -> None:
    """`-o PATH.mbox` writes one mbox file, as `git format-patch --stdout > PATH` would (it
    made a directory of that name); any other `-o` stays a queue directory."""
    out = tmp_path / "series.mbox"
    proc = _resolve(ima, "-b", "v5.10.194", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    assert out.is_file()
    assert len(_messages(out.read_text(), tmp_path)) == 4
    queue = tmp_path / "queue"
    assert _resolve(ima, "-b", "v5.10.194", "--output", str(queue)).returncode == 0
    assert queue.is_dir() and (queue / "series").is_file()


def test_a_member_that_would_not_build_is_not_written_as_ready(tmp_path: Path) -> None:
    """The target applies but calls a helper only a large feature introduced (DPDK's
    `rte_memeq_timingsafe`): it is left out of the patches, naming what it needs and from
    where, and without --partial nothing is written (issue 61)."""
    from tests.resolve_scenarios import symbol_from_big_feature

    scenario = symbol_from_big_feature(tmp_path / "repo")
    ids = scenario.ids
    base = ("resolve", ids["target"], "--repo", str(scenario.path), "-b", BRANCH, "-f", "mbox")
    proc = backportr(*base)
    assert proc.returncode == 4 and proc.stdout == "", proc.stderr
    assert f"left out {ids['target'][:12]}" in proc.stderr
    assert f"needs drv_td_lock from {ids['feature'][:12]}" in proc.stderr
    assert "nothing written" in proc.stderr
    marked = backportr(*base[:-2], "-f", "json")  # the member says so too
    (member,) = [m for m in json.loads(marked.stdout)["branches"][0]["series"]
                 if m["commit"] == ids["target"]]  # fmt: skip
    assert member["needs"] == [f"drv_td_lock from {ids['feature']}"]


def test_a_symbol_the_conflicting_target_needs_stays_in_the_answer(tmp_path: Path) -> None:
    """DPDK 23.11's shape: the fix conflicts on the branch (its function was adapted there)
    and calls a helper a small upstream commit added. The helper stays in the answer (a
    suggestion of kind `symbol`) and the target is marked with what it needs, in JSON and
    in text (issue 61: it was dropped once the target conflicted)."""
    import json

    from tests.resolve_scenarios import BRANCH, Kernel

    k = Kernel(tmp_path / "repo")
    helper = k.b.commit(
        "eal: add drv_memeq_safe\n\nSigned-off-by: Dev <dev@example.org>\n",
        {"lib/drv_safe.c": "int drv_memeq_safe(const void *a, const void *b, int n)\n{\n"
         "\treturn 0;\n}\n"},
        name="helper",
    )  # fmt: skip
    k.edit_fn("adapted", "drv_fn1", "y += 7; /* the branch's own */", branch=BRANCH)
    target = k.edit_fn("target", "drv_fn1", "y = drv_memeq_safe(a, b, 4);",
                       trailers=k.fixes("v5.10"))  # fmt: skip
    base = ("resolve", target, "--repo", str(k.b.path), "-b", BRANCH)
    proc = backportr(*base, "-f", "json")
    assert proc.returncode == 4, proc.stderr
    branch = json.loads(proc.stdout)["branches"][0]
    assert branch["status"] == "conflict"
    (member,) = [m for m in branch["series"] if m["commit"] == target]
    assert member["apply"] == "conflict"
    assert member["needs"] == [f"drv_memeq_safe from {helper}"]
    (suggested,) = [s for s in branch["suggestions"] if s["commit"] == helper]
    assert suggested["reason"]["kind"] == "symbol" and suggested["reason"]["related"] == target
    text = backportr(*base).stdout
    assert f"needs: drv_memeq_safe from {helper[:12]}, which the branch lacks" in text
