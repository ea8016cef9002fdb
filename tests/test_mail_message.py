"""Classifying mails: submissions in every prefix form, FAILED mails, plain patches, skips."""

from __future__ import annotations

from pathlib import Path

import pytest

from backportr.mail.message import parse_mail
from backportr.model import Oid

DATA = Path(__file__).parent / "data" / "mail"
UPSTREAM = "b836c4d29f2744200b2af41e14bf50758dddc818"


def mail(subject: str, body: str, *, extra: str = "") -> bytes:
    return (
        "From: Dev <dev@example.org>\n"
        "To: stable@vger.kernel.org\n"
        f"Subject: {subject}\n"
        "Message-ID: <20231212-1-dev@example.org>\n"
        f"{extra}"
        "Content-Type: text/plain; charset=UTF-8\n\n"
        f"{body}"
    ).encode()


@pytest.mark.parametrize(
    ("subject", "versions", "ranges", "part"),
    [
        ("[PATCH 5.10.y] ima: detect changes", ("5.10",), (), None),
        ("[PATCH 5.10 2/3] ima: detect changes", ("5.10",), (), (2, 3)),
        ("[PATCH stable 5.15 5.10] ima: detect changes", ("5.15", "5.10"), (), None),
        ("[PATCH AUTOSEL 5.15 26/31] ovl: Always reevaluate", ("5.15",), (), (26, 31)),
        ("[PATCH 5.10-6.1] ima: detect changes", (), (("5.10", "6.1"),), None),
        ("Fwd: [PATCH v2 5.10.y] ima: detect changes", ("5.10",), (), None),
    ],
)
def test_submission_prefixes(
    subject: str,
    versions: tuple[str, ...],
    ranges: tuple[tuple[str, str], ...],
    part: tuple[int, int] | None,
) -> None:
    parsed = parse_mail(mail(subject, f"commit {UPSTREAM} upstream.\n\nText.\n"))
    assert parsed.kind == "submission"
    assert (parsed.versions, parsed.ranges, parsed.part) == (versions, ranges, part)
    assert parsed.upstream == UPSTREAM
    assert parsed.message_id == "20231212-1-dev@example.org"


def test_a_reply_is_not_a_submission() -> None:
    """A review or a bot's answer quoting the patch ('> commit X upstream.') is a reply: the
    bot once answered its own reply, delivered to the list, as a new submission."""
    body = f"On Tue, Dev wrote:\n> commit {UPSTREAM} upstream.\n\nLooks good.\n"
    parsed = parse_mail(mail("Re: [PATCH 5.10.y] ima: detect changes", body))
    assert parsed.kind == "skip" and parsed.reason == "not a patch: a reply in a thread"


def test_sasha_reference_and_branches() -> None:
    parsed = parse_mail(mail("[PATCH 6.1 05/10] ovl: x", f"[ Upstream commit {UPSTREAM} ]\n"))
    assert parsed.branches == ("linux-6.1.y",) and parsed.upstream == UPSTREAM


def test_submission_without_reference_keeps_the_subject() -> None:
    parsed = parse_mail(
        mail(
            "[PATCH 5.10.y] ima: detect changes to the backing overlay file", "No reference here.\n"
        )
    )
    assert parsed.kind == "submission" and parsed.upstream is None
    assert parsed.patch_subject == "ima: detect changes to the backing overlay file"


def test_failed_mail() -> None:
    parsed = parse_mail((DATA / "failed-8a924db2d7b5-5.10.eml").read_bytes())
    assert parsed.kind == "failed"
    assert parsed.versions == ("5.10",) and parsed.branches == ("linux-5.10.y",)
    assert parsed.upstream == "8a924db2d7b5eb69ba08b1a0af46e9f1359a9bdf"
    assert parsed.patch_subject == "fs: Pass AT_GETATTR_NOSEC flag to getattr interface function"
    assert parsed.reply_to_id == "2023112452-failed-8a924-5.10@gregkh"


def test_plain_patch_with_base_commit() -> None:
    body = (
        "Explain.\n\nSigned-off-by: Dev <dev@example.org>\n---\n fs/x.c | 1 +\n\n"
        "diff --git a/fs/x.c b/fs/x.c\n--- a/fs/x.c\n+++ b/fs/x.c\n@@ -1 +1,2 @@\n int x;\n"
        "+int y;\n\nbase-commit: 0123456789abcdef0123456789abcdef01234567\n-- \n2.39.3\n"
    )
    parsed = parse_mail(mail("[PATCH] fs: add y", body))
    assert parsed.kind == "patch"
    assert parsed.base_commit == "0123456789abcdef0123456789abcdef01234567"
    assert parsed.diff is not None and parsed.diff.startswith("diff --git a/fs/x.c")
    assert "2.39.3" not in parsed.diff


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (mail("Re: IMA performance regression in 5.10.194", "Thanks!\n"), "not a patch"),
        (mail("[PATCH 5.10 0/3] series", "cover\n"), "cover letter"),
        (b"\x00\x01\x02binary junk\xff\xfe", "binary"),
        (b"", "empty"),
        (b"Subject: no id\n\nbody\n", "no Message-ID"),
    ],
)
def test_skips_with_a_reason(raw: bytes, reason: str) -> None:
    parsed = parse_mail(raw)
    assert parsed.kind == "skip" and reason in (parsed.reason or "")


def test_threading_headers() -> None:
    parsed = parse_mail(
        mail(
            "[PATCH 5.10 2/3] x",
            "body\n",
            extra="In-Reply-To: <cover@x>\nReferences: <cover@x> <1@x>\n",
        )
    )
    assert parsed.in_reply_to == "cover@x" and parsed.references == ("cover@x", "1@x")


def test_a_reply_keeps_to_and_cc_without_bots() -> None:
    """The reply goes To the mail's sender and Cc the list and everyone the mail went to
    (author, reviewers), once each, without the sender, the bot itself, and other bots."""
    from backportr.mail.check import MailCheck
    from backportr.mail.reply import compose_reply

    raw = (
        "From: Greg KH <gregkh@linuxfoundation.org>\n"
        "To: Mimi Zohar <zohar@linux.ibm.com>, amir73il@gmail.com,"
        " patchwork-bot+netdevbpf@kernel.org\n"
        "Cc: stable@vger.kernel.org, Greg KH <gregkh@linuxfoundation.org>, lkp@intel.com,"
        " bot@example.org, Uwe Kleine-König <u.kleine-koenig@pengutronix.de>,"
        " syzbot+1234@syzkaller.appspotmail.com, AMIR73IL@gmail.com\n"
        "Subject: [PATCH 5.10] x: y\nMessage-ID: <1@example.org>\n\nbody\n"
    ).encode()
    mail = parse_mail(raw)
    reply = compose_reply(MailCheck(mail, Oid("0" * 40)), sender="backportr <bot@example.org>")
    assert reply["To"] == "Greg KH <gregkh@linuxfoundation.org>"
    assert [str(a) for a in reply["Cc"].addresses] == [
        "stable@vger.kernel.org",
        "Mimi Zohar <zohar@linux.ibm.com>",
        "amir73il@gmail.com",
        "Uwe Kleine-König <u.kleine-koenig@pengutronix.de>",
    ]
