"""The mail checker and the bot against real parts: a public-inbox-httpd on loopback serving an
inbox built with public-inbox-init and public-inbox-mda from tests/data/mail, and an SMTP
server (aiosmtpd) receiving the replies."""

from __future__ import annotations

import email
import email.policy
import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from backportr.examples.ima import A1175, B836C, DB1D1, F8A92, ImaFixture
from tests.conftest import backportr
from tests.inbox import DATA, Archive, free_port, needs_public_inbox, start_archive


@dataclass
class Inbox:
    host: str
    port: int
    messages: list[email.message.EmailMessage]


@pytest.fixture
def smtp() -> Iterator[Inbox]:
    aiosmtpd = pytest.importorskip("aiosmtpd.controller")
    received: list[email.message.EmailMessage] = []

    class Handler:
        async def handle_DATA(self, server: object, session: object, envelope: Any) -> str:
            received.append(email.message_from_bytes(envelope.content, policy=email.policy.default))
            return "250 OK"

    port = free_port()
    controller = aiosmtpd.Controller(Handler(), hostname="127.0.0.1", port=port)
    controller.start()
    yield Inbox("127.0.0.1", port, received)
    controller.stop()


cli = backportr


# -- mail check -----------------------------------------------------------------------------


def check_json(ima: ImaFixture, archive: Archive, message_id: str):  # type: ignore[no-untyped-def]
    """`backportr mail check <message-id> --lore <archive> --format json`."""
    return cli(
        "mail",
        "check",
        message_id,
        "--lore",
        archive.url,
        "--repo",
        str(ima.path),
        "--format",
        "json",
    )


@needs_public_inbox
def test_failed_mail_reply_names_the_series(ima: ImaFixture, archive: Archive) -> None:
    proc = cli(
        "mail",
        "check",
        "2023112013-failed-b836c-5.10@gregkh",
        "--lore",
        archive.url,
        "--repo",
        str(ima.path),
        "--format",
        "reply",
    )
    assert proc.returncode == 4, proc.stderr
    reply = email.message_from_string(proc.stdout, policy=email.policy.default)
    assert reply["Subject"].startswith("Re: FAILED: patch")
    assert reply["In-Reply-To"] == "<2023112013-failed-b836c-5.10@gregkh>"
    assert reply["To"] == "gregkh@linuxfoundation.org"  # the patch's author and reviewers kept
    assert reply["Cc"] == "stable@vger.kernel.org, zohar@linux.ibm.com, amir73il@gmail.com"
    body = reply.get_content()
    import re

    numbered = re.findall(r"^\s+\d+\. ([0-9a-f]{12}) ", body, re.MULTILINE)
    assert numbered == [ima.ids[n][:12] for n in (A1175, DB1D1, F8A92)]
    # lines wrap at 80, but never inside a path or a link (this test's tree path is long)
    long = [ln for ln in body.splitlines() if len(ln) > 80 and max(map(len, ln.split())) < 40]
    assert not long, long
    flat = " ".join(body.split())  # the target's posting and the siblings the branch lacks
    link = "https://lore.kernel.org/r/20230124193025.185781-4-jlayton@kernel.org"
    assert f"3/8 of posting {link}; the branch lacks" in flat  # a link, not a bare stem
    assert f'1/8 {ima.ids["iversion-1of8"][:12]} ("fs: uninline inode_query_iversion")' in flat
    import pygit2

    git = pygit2.Repository(str(ima.path))
    tips = [(n, str(git.revparse_single(n).id)[:12]) for n in ("master", "linux-5.10.y")]
    said = ", ".join(f"{name} at {tip}" for name, tip in tips)  # the tree and the tips tried
    assert f"backportr checked this against {ima.path.resolve()}: {said}." in flat
    assert "<html" not in body.lower()


@needs_public_inbox
def test_pending_follow_ups_on_the_list(ima: ImaFixture, archive: Archive) -> None:
    proc = check_json(ima, archive, "2023112013-failed-b836c-5.10@gregkh")
    pending = json.loads(proc.stdout)["pending"]
    assert pending == [
        {
            "fixes": ima.ids[F8A92],
            "message_id": "20231221100000.1-pending@linux.ibm.com",
            "subject": "[PATCH] fs: Simplify getattr interface function checking "
            "AT_GETATTR_NOSEC flag",
        }
    ]


@needs_public_inbox
def test_mail_check_sends_the_reply(ima: ImaFixture, archive: Archive, smtp: Inbox) -> None:
    proc = cli(
        "mail",
        "check",
        "20231212004005.1-submission@google.com",
        "--lore",
        archive.url,
        "--repo",
        str(ima.path),
        "--send",
        "--smtp",
        f"{smtp.host}:{smtp.port}",
        "--from",
        "backportr <bot@example.org>",
    )
    assert proc.returncode == 4, proc.stderr
    (sent,) = smtp.messages
    assert sent["To"] == "Robert Kolchmeyer <rkolchmeyer@google.com>"
    assert sent["Subject"] == "Re: [PATCH 5.10.y] ima: detect changes to the backing overlay file"
    assert "the target is there, but what it needs is missing" in sent.get_content()
    assert "incomplete" not in proc.stderr


@needs_public_inbox
def test_submission_alone_is_incomplete(ima: ImaFixture, archive: Archive) -> None:
    proc = check_json(ima, archive, "20231212004005.1-submission@google.com")
    assert proc.returncode == 4, proc.stderr
    data = json.loads(proc.stdout)
    (branch,) = data["branches"]
    assert branch["verdict"] == "incomplete"
    assert branch["missing"] == ima.expected_incomplete
    assert all(m["why"] for m in branch["series"])


@needs_public_inbox
def test_series_thread_misses_the_follow_up(ima: ImaFixture, archive: Archive) -> None:
    proc = check_json(ima, archive, "20231213100000.2-series@google.com")
    assert proc.returncode == 4, proc.stderr
    (branch,) = json.loads(proc.stdout)["branches"]
    assert branch["missing"] == [ima.ids[F8A92]]  # the three parts were read from the thread


@needs_public_inbox
def test_plain_patch_becomes_a_virtual_target(ima: ImaFixture, archive: Archive) -> None:
    proc = check_json(ima, archive, "20231220-patch-1@example.org")
    data = json.loads(proc.stdout)
    assert data["kind"] == "patch" and data["skipped"] is None, proc.stderr
    assert data["target"] not in ima.ids.values()  # made in memory from the posted diff
    assert data["branches"][0]["branch"] == "linux-5.10.y"


def test_mail_check_from_a_file_and_stdin(
    ima: ImaFixture, mails: dict[str, str], tmp_path: Path
) -> None:
    path = tmp_path / "failed.eml"
    path.write_text(mails["failed-b836c4d29f27-5.10"])
    proc = cli("mail", "check", str(path), "--repo", str(ima.path))
    assert proc.returncode == 4 and "what it needs is missing" in proc.stdout
    skipped = subprocess.run(
        [sys.executable, "-m", "backportr", "mail", "check", "-", "--repo", str(ima.path)],
        input=mails["discussion"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert skipped.returncode == 0 and skipped.stdout.startswith("skipped: not a patch")


def test_missing_mail_file_is_bad_input(ima: ImaFixture, tmp_path: Path) -> None:
    proc = cli("mail", "check", str(tmp_path / "nope.eml"), "--repo", str(ima.path))
    assert proc.returncode == 1
    assert proc.stderr.strip() == f"backportr: error: {tmp_path / 'nope.eml'}: no such file"


def test_unreachable_archive_is_a_one_line_error(ima: ImaFixture) -> None:
    proc = cli(
        "mail",
        "check",
        "x@y",
        "--lore",
        f"http://127.0.0.1:{free_port()}/stable/",
        "--repo",
        str(ima.path),
    )
    assert proc.returncode == 1
    assert "cannot reach" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


# -- the bot ----------------------------------------------------------------------------------


@needs_public_inbox
def test_bot_once_answers_each_actionable_mail_once(
    ima: ImaFixture, archive: Archive, smtp: Inbox, tmp_path: Path
) -> None:
    state = tmp_path / "bot.sqlite"
    args = (
        "bot",
        "--lore",
        archive.url,
        "--repo",
        str(ima.path),
        "--once",
        "--state",
        str(state),
        "--smtp",
        f"{smtp.host}:{smtp.port}",
        "--from",
        "backportr <bot@example.org>",
    )
    first = cli(*args)
    assert first.returncode == 0, first.stderr
    replied_to = sorted(m["In-Reply-To"] for m in smtp.messages)
    assert replied_to == [  # one reply per actionable mail; a series once, on its last part
        "<2023112013-failed-b836c-5.10@gregkh>",
        "<20231212004005.1-submission@google.com>",
        "<20231213100000.3-series@google.com>",
        "<20231220-patch-1@example.org>",
    ]
    import sqlite3

    rows = dict(sqlite3.connect(state).execute("SELECT message_id, verdict FROM messages"))
    assert rows["2023121848-filter-pacifier-c457@gregkh"] == "skipped"
    assert rows["junk-1@example.org"] in ("skipped", "error")
    assert rows["20231213100000.0-series@google.com"] == "skipped"  # the cover letter
    assert rows["20231213100000.1-series@google.com"] == "skipped"  # answered on 3/3
    assert rows["20231221100000.1-pending@linux.ibm.com"] == "skipped"  # no diff to check
    sent = len(smtp.messages)
    second = cli(*args)
    assert second.returncode == 0 and len(smtp.messages) == sent  # nothing new to say
    assert "Traceback" not in first.stderr + second.stderr


@needs_public_inbox
def test_a_dry_run_prints_the_replies_it_would_send(
    ima: ImaFixture, archive: Archive, tmp_path: Path
) -> None:
    """`bot --dry-run` shows each reply it would send (stdout, one mbox) and says "drafted",
    not "replied": it sent nothing."""
    import mailbox

    args = ("bot", "--lore", archive.url, "--repo", str(ima.path), "--once", "--dry-run")
    proc = cli(*args, "--state", str(tmp_path / "bot.sqlite"))
    assert proc.returncode == 0, proc.stderr
    assert "4 drafted (dry run: printed, nothing sent)" in proc.stderr
    assert " replied" not in proc.stderr
    box = tmp_path / "drafts.mbox"
    box.write_text(proc.stdout, encoding="utf-8")
    drafts = list(mailbox.mbox(str(box)))
    assert sorted(m["In-Reply-To"] for m in drafts) == [
        "<2023112013-failed-b836c-5.10@gregkh>",
        "<20231212004005.1-submission@google.com>",
        "<20231213100000.3-series@google.com>",
        "<20231220-patch-1@example.org>",
    ]
    quiet = cli(*args, "-q", "--state", str(tmp_path / "other.sqlite"))
    assert quiet.returncode == 0 and quiet.stdout == "" and quiet.stderr == ""


@needs_public_inbox
def test_bot_survives_the_archive_going_away(
    ima: ImaFixture, mails: dict[str, str], tmp_path: Path
) -> None:
    """The feed answers, then the server is gone: nothing is recorded for unread messages,
    the run ends with one error line and exit 1, and the next run picks them up."""
    from backportr.mail.bot import Bot, BotSettings, BotState
    from backportr.mail.lore import Lore
    from backportr.resolve.workspace import open_workspace
    from backportr.settings import Settings

    archive = start_archive(tmp_path / "public-inbox", mails)  # its own: this one goes away
    lore = Lore(archive.url, timeout=2)
    calls = []

    def cut_after_feed(response, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(response.url)
        if len(calls) == 1:
            archive.stop()
        return response

    lore.session.hooks["response"].append(cut_after_feed)
    state = BotState(tmp_path / "bot.sqlite")
    with open_workspace(Settings(repo=ima.path)) as ws:
        bot = Bot(
            ws,
            lore,
            state,
            BotSettings(dry_run=True, retries=1, backoff=0.01),
            sleep=lambda s: None,
        )
        summary = bot.run_once()
    assert summary.network_errors and "cannot reach" in summary.network_errors[0]
    assert state.rows() == []
    state.close()
    archive.stop()


@needs_public_inbox
def test_mail_check_from_a_lore_url(ima: ImaFixture, archive: Archive) -> None:
    url = f"{archive.url}2023112013-failed-b836c-5.10@gregkh/"
    proc = cli("mail", "check", url, "--repo", str(ima.path), "--format", "json")
    assert proc.returncode == 4, proc.stderr
    assert json.loads(proc.stdout)["kind"] == "failed"


@needs_public_inbox
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP], ids=["TERM", "HUP"])
def test_bot_stops_cleanly_on_sigterm_or_sighup(
    ima: ImaFixture, archive: Archive, tmp_path: Path, stop: signal.Signals
) -> None:
    import sqlite3

    state = tmp_path / "bot.sqlite"
    bot = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "backportr",
            "bot",
            "--lore",
            archive.url,
            "--repo",
            str(ima.path),
            "--interval",
            "60",
            "--state",
            str(state),
            "--dry-run",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    rows = 0
    while time.monotonic() < deadline and rows < len(list(DATA.glob("*.eml.in"))):
        time.sleep(0.5)
        if state.exists():
            try:
                rows = sqlite3.connect(state).execute("SELECT COUNT(*) FROM messages").fetchone()[0]
            except sqlite3.OperationalError:
                rows = 0
    bot.send_signal(stop)
    _out, err = bot.communicate(timeout=30)
    assert bot.returncode == 0, err
    assert "bot:" in err and "Traceback" not in err


def test_submission_notes_differing_patch_and_newer_branches(tmp_path: Path) -> None:
    """A [PATCH 5.10.y] whose diff is the hand-adapted one (patch-id differs from upstream),
    while a newer stable branch still lacks the target."""
    from backportr.examples.ima import BP_202, build
    from backportr.git.builder import RepoBuilder
    from backportr.mail.check import Checker
    from backportr.mail.message import parse_mail
    from backportr.resolve.workspace import open_workspace
    from backportr.settings import Settings

    fixture = build(tmp_path / "linux")
    builder = RepoBuilder.open(fixture.path)
    builder.branch("linux-6.6.y", f"{fixture.ids[B836C]}~1")  # forked before the target
    adapted = subprocess.run(
        ["git", "-C", str(fixture.path), "show", "--format=", fixture.ids[BP_202]],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    raw = (
        "From: Dev <dev@example.org>\nTo: stable@vger.kernel.org\n"
        "Subject: [PATCH 5.10.y] ima: detect changes to the backing overlay file\n"
        "Message-ID: <differs-1@example.org>\nContent-Type: text/plain; charset=UTF-8\n\n"
        f"commit {fixture.ids[B836C]} upstream.\n\nSigned-off-by: Dev <dev@example.org>\n"
        f"---\n{adapted}"
    )
    with open_workspace(Settings(repo=fixture.path)) as ws:
        check = Checker(ws).check(parse_mail(raw.encode()))
    (branch,) = check.branches
    assert any("differs from upstream" in n for n in branch.notes)
    assert any(n.startswith("linux-6.6.y does not have") for n in check.notes)


_OWN_REPLY = """From: backportr <backportr@example.org>
To: stable@vger.kernel.org
Subject: Re: FAILED: patch "[PATCH] ima: detect changes to the backing overlay file"
Date: Fri, 22 Dec 2023 10:00:00 +0000
Message-ID: <1703239200.4242.1.backportr@example.org>
In-Reply-To: <2023112013-failed-b836c-5.10@gregkh>
Content-Type: text/plain; charset=UTF-8

Follow-ups still on the list:
  [PATCH] fs: Simplify getattr interface function checking AT_GETATTR_NOSEC flag
  Fixes: {F8A92_12} ("fs: Pass AT_GETATTR_NOSEC flag to getattr interface function")
"""


@needs_public_inbox
def test_the_bot_does_not_cite_its_own_replies(
    ima: ImaFixture, mails: dict[str, str], tmp_path: Path
) -> None:
    """An earlier reply of the bot's in the archive quotes a `Fixes:` line: it is no
    follow-up on the list (skipped by its Message-ID and by its From), and the bot does
    not answer it either."""
    from tests.inbox import start_archive

    own = _OWN_REPLY.replace("{F8A92_12}", ima.ids[F8A92][:12])
    archive = start_archive(tmp_path / "inbox", {**mails, "own-reply": own})
    try:
        proc = check_json(ima, archive, "2023112013-failed-b836c-5.10@gregkh")
        assert proc.returncode == 4, proc.stderr
        pending = [p["message_id"] for p in json.loads(proc.stdout)["pending"]]
        assert pending == ["20231221100000.1-pending@linux.ibm.com"]
        other = own.replace("1703239200.4242.1.backportr@example.org", "reply-2@example.org")
    finally:
        archive.stop()
    archive = start_archive(tmp_path / "inbox2", {**mails, "own-reply": other})
    try:  # the same reply under another Message-ID: known by its From (the bot's --from)
        verbose = cli(
            "-v", "-c", "backportr.from=backportr <backportr@example.org>", "mail", "check",
            "2023112013-failed-b836c-5.10@gregkh", "--lore", archive.url, "--repo",
            str(ima.path), "--format", "json",
        )  # fmt: skip
        pending = [p["message_id"] for p in json.loads(verbose.stdout)["pending"]]
        assert pending == ["20231221100000.1-pending@linux.ibm.com"], verbose.stderr
        assert "skipped our own reply <reply-2@example.org>" in verbose.stderr
    finally:
        archive.stop()


def test_a_projects_own_branch_names_in_mail_check(tmp_path: Path) -> None:
    """DPDK names its LTS branches `23.11`: with `--branch-pattern '{v}'` a `[PATCH 23.11]`
    submission is checked on branch 23.11; with the kernel's default it is skipped, and the
    message says which branch it tried."""
    from backportr.git.builder import RepoBuilder

    b = RepoBuilder(tmp_path / "dpdk")
    b.commit("base", {"drivers/net/e1000/igc_txrx.c": "int ring;\nint wrap;\n"}, name="fork")
    b.branch("23.11", "master")
    target = b.commit(
        "net/e1000: fix igc Tx descriptor ring wrap\n\nSigned-off-by: A <a@example.org>\n",
        {"drivers/net/e1000/igc_txrx.c": "int ring;\nint wrap = 1;\n"},
    )
    mail = tmp_path / "submission.eml"
    mail.write_text(
        "From: A <a@example.org>\nTo: stable@dpdk.org\n"
        "Subject: [PATCH 23.11] net/e1000: fix igc Tx descriptor ring wrap\n"
        "Message-ID: <23.11-1@example.org>\n\n"
        f"[ upstream commit {target} ]\n\nThe fix.\n"
    )
    repo = str(b.path)
    default = cli("mail", "check", str(mail), "--repo", repo, "--format", "json")
    skipped = json.loads(default.stdout)["skipped"]
    assert skipped == "no branch of this repository matches it (tried linux-23.11.y)", skipped
    checked = cli(
        "mail", "check", str(mail), "--repo", repo, "--branch-pattern", "{v}", "--format", "json"
    )
    answer = json.loads(checked.stdout)
    assert answer["skipped"] is None and [b["branch"] for b in answer["branches"]] == ["23.11"]


def test_a_conflict_names_its_possible_dependencies(tmp_path: Path) -> None:
    """A FAILED mail whose patch conflicts with nothing that makes it apply: the reply
    names, under the conflicting member, the absent commits that last changed the lines it
    conflicts on, as the stable team's own FAILED mails list "Possible dependencies"."""
    from tests.resolve_scenarios import helper_that_conflicts_too

    s = helper_that_conflicts_too(tmp_path / "repo")
    target = s.ids["target"]
    mail = tmp_path / "failed.eml"
    mail.write_text(
        "From: <gregkh@linuxfoundation.org>\nTo: dev@example.org\n"
        'Subject: FAILED: patch "[PATCH] drv: target" failed to apply to 5.10-stable tree\n'
        "Message-ID: <failed-1@example.org>\n\n"
        "The patch below does not apply to the 5.10-stable tree.\n\n"
        f"git cherry-pick -x {target}\n"
    )
    text = cli("mail", "check", str(mail), "--repo", str(s.path)).stdout
    flat = " ".join(text.split())  # the reply wraps at 72 columns
    named = ", ".join(f'{s.ids[n][:12]} ("drv: {n}")' for n in ("blank", "tail", "helper"))
    assert "does not apply cleanly (drivers/drv.c, fs/core.c)" in flat, text
    assert f"possible dependencies: {named}" in flat, text
