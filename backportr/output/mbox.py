"""Render patches as `git format-patch` mails: an mbox on stdout, or one file per patch (a
queue directory: output/queue.py). Ready for `git am` and `git send-email`.

Headers are encoded as RFC 2047 where they are not ASCII (an author such as Uwe
Kleine-König) and folded at 78 columns, as git writes them; the body is 8-bit UTF-8, its
lines as `git format-patch` writes them. With `mboxrd`, body lines that a mail reader would
take for a message separator (`From `, `>From `, ...) get one more `>` (`git am
--patch-format=mboxrd` takes them back off).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from email.errors import HeaderParseError
from email.header import Header
from email.utils import formataddr, parseaddr

from backportr import __version__
from backportr.errors import BackportrError
from backportr.model import BranchReport, short
from backportr.output.patches import Patch
from backportr.output.report import VERDICTS, posting_line
from backportr.output.safe import one_line

_FROM_LINE = re.compile(r"^(>*From )", re.MULTILINE)


def _header(name: str, value: str) -> str:
    """`Name: value`, RFC 2047-encoded when not ASCII, folded as git folds it. A value from
    data (a subject, a name) holding line breaks or other control characters has them
    folded to spaces first: a header is one logical line, and a bare CR or LF in it would
    end it (or inject another); one that still cannot be encoded is a one-line error."""
    value = one_line(value)
    charset = "us-ascii" if value.isascii() else "utf-8"
    try:
        encoded = Header(value, charset, header_name=name, maxlinelen=78).encode(linesep="\n")
        if max(len(line) for line in encoded.split("\n")) > 900:
            # a word too long to fold (a 5 MB subject without spaces): encoded words, which
            # may be cut anywhere, keep every line under RFC 5322's 998 octets
            encoded = Header(value, "utf-8", header_name=name, maxlinelen=78).encode(linesep="\n")
    except (HeaderParseError, UnicodeError, ValueError) as error:
        raise BackportrError(
            f"cannot write the {name}: header of {value[:60]!r}: {error}"
        ) from None
    return f"{name}: {encoded}\n"


def _address(name: str, email: str) -> str:
    name, email = one_line(name), one_line(email)
    if name.isascii():
        return formataddr((name, email))
    return f"{Header(name, 'utf-8').encode()} <{email}>"


@dataclass(frozen=True, slots=True)
class Mailing:
    """How the patches go out as mails: recipients, a cover letter, threading (as git
    format-patch's --to, --cc, --cover-letter and --thread=shallow)."""

    to: tuple[str, ...] = ()
    cc: tuple[str, ...] = ()
    cover_letter: bool = False
    sender: str | None = None  # the cover letter's From (the backporter)
    domain: str = "backportr.invalid"

    @property
    def threaded(self) -> bool:
        return bool(self.to or self.cc or self.cover_letter)


_PLAIN = Mailing()  # no recipients, no cover letter, not threaded: as before


@dataclass(frozen=True, slots=True)
class Cover:
    """The series' cover letter: `[PATCH 5.10 0/N] <subject>` and a body."""

    subject: str
    prefix: str
    body: str
    date: str


def wrapped(text: str) -> list[str]:
    """The cover letter's lines of `text`, 66 columns, broken at spaces only: a trailer's
    name (`Stable-dep-of:`) or an id is never split at its hyphen."""
    return textwrap.wrap(text, 66, break_on_hyphens=False, break_long_words=False)


def cover_for(
    target: str,
    subject: str,
    branch: BranchReport,
    patches: Sequence[Patch],
    date: str,
    left_out: Sequence[str] = (),
    targets: Sequence[str] = (),
) -> Cover:
    """What the series is and why each patch is in it, as a stable reviewer reads it; the
    members `left_out` of a partial series last."""
    total = len(patches)
    prefix = patches[0].prefix.rsplit(" ", 1)[0] if total > 1 else patches[0].prefix
    subjects: dict[str, str] = {m.commit: m.subject for m in branch.series}
    if len(targets) > 1:
        lines = [f"Backport of {len(targets)} commits to {branch.branch}:"]
        lines += [f"  {short(t)} ({subjects.get(t, '')})" for t in targets]
        subject = f"{len(targets)} fixes for {branch.branch}"
    else:
        lines = [f'Backport of {short(target)} ("{subject}") to {branch.branch}:']
    lines += [
        f"{VERDICTS[branch.status]}.",
        "",
        f"The series, {total} patch{'es' if total != 1 else ''} in order:",
        "",
    ]
    reasons = {m.commit: m for m in branch.series}
    for patch in patches:
        member = reasons.get(patch.commit)
        lines.append(f"  {patch.number}/{total} {short(patch.commit)} {patch.subject}")
        if member is not None and member.reasons:
            for piece in wrapped(f"{member.role}: {member.reasons[0].detail}"):
                lines.append(f"        {piece}")
        if member is not None and member.posting is not None:
            for piece in wrapped(f"posting: {posting_line(member.posting)}"):
                lines.append(f"        {piece}")
    if left_out:
        lines += ["", "Left out (a manual backport is needed):"]
        for line in left_out:
            lines += [f"  {piece}" for piece in wrapped(line)]
    if branch.present:
        lines += ["", "Already in the branch:"]
        lines += [f"  {short(p.commit)} {p.subject}" for p in branch.present]
    return Cover(subject, f"{prefix} 0/{total}", "\n".join(lines) + "\n", date)


def _message_id(mailing: Mailing, stamp: str, number: int) -> str:
    return f"<backportr-{stamp}-{number}@{mailing.domain}>"


def _thread_headers(mailing: Mailing, stamp: str, number: int, first: int) -> str:
    """Message-ID, and (shallow threading) In-Reply-To/References to the first mail."""
    if not mailing.threaded:
        return ""
    out = f"Message-ID: {_message_id(mailing, stamp, number)}\n"
    if number != first:
        root = _message_id(mailing, stamp, first)
        out += f"In-Reply-To: {root}\nReferences: {root}\n"
    return out


def _recipients(mailing: Mailing) -> str:
    """To and Cc with each display name encoded on its own (an address never is)."""
    out = ""
    for name, recipients in (("To", mailing.to), ("Cc", mailing.cc)):
        if recipients:
            pairs = [parseaddr(r) for r in recipients]
            out += _header(name, ", ".join(_address(n, a) if n else a for n, a in pairs))
    return out


def render_cover(cover: Cover, mailing: Mailing, stamp: str) -> str:
    name, address = parseaddr(mailing.sender or "backportr <backportr@localhost>")
    return (
        "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
        + _header("From", _address(name, address) if name else address)
        + f"Date: {cover.date}\n"
        + _header("Subject", f"[{cover.prefix}] {cover.subject}")
        + _recipients(mailing)
        + _thread_headers(mailing, stamp, 0, 0)
        + "MIME-Version: 1.0\n"
        "Content-Type: text/plain; charset=UTF-8\n"
        "Content-Transfer-Encoding: 8bit\n"
        "\n"
        f"{cover.body}\n"
        "-- \n"
        f"backportr {__version__}\n\n"
    )


def render_patch(
    patch: Patch,
    *,
    escape_from: bool = False,
    mailing: Mailing = _PLAIN,
    stamp: str = "",
) -> str:
    body = f"{patch.body}---\n{patch.diffstat}\n{patch.diff}"
    if escape_from:
        body = _FROM_LINE.sub(r">\1", body)
    first = 0 if mailing.cover_letter else 1
    return (
        f"From {patch.commit} Mon Sep 17 00:00:00 2001\n"
        + _header("From", _address(patch.author_name, patch.author_email))
        + f"Date: {patch.date}\n"
        + _header("Subject", f"[{patch.prefix}] {patch.subject}")
        + _recipients(mailing)
        + _thread_headers(mailing, stamp, patch.number, first)
        + "MIME-Version: 1.0\n"
        "Content-Type: text/plain; charset=UTF-8\n"
        "Content-Transfer-Encoding: 8bit\n"
        "\n"
        f"{body}"
        "-- \n"
        f"backportr {__version__}\n\n"
    )


def render_mbox(
    patches: Sequence[Patch],
    mailing: Mailing = _PLAIN,
    stamp: str = "",
    *,
    mboxrd: bool = False,
) -> str:
    """The patches as one mbox, as `git am` takes it: body lines as `git format-patch`
    writes them, or (`mboxrd`) with `From ` lines escaped, for `git am --patch-format=mboxrd`.
    A cover letter is never in it (`git am` stops on a mail with no patch): it is a file
    of its own, as `git format-patch` writes it."""
    return "".join(
        render_patch(p, escape_from=mboxrd, mailing=mailing, stamp=stamp) for p in patches
    )
