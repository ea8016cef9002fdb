"""Postings online: a member's posting as lore has it (the cover letter's subject, and how
many patches were posted), read from the thread of the member's own mail (`t.mbox.gz`, the
bot's bounded client) and kept in the index. The edge of `resolve --lore`: the resolver
itself never goes to the network."""

from __future__ import annotations

import dataclasses
import logging

from backportr.index import CommitIndex
from backportr.mail.lore import Lore, LoreError
from backportr.mail.message import parse_mail
from backportr.model import Member, PostingInfo, Report

_log = logging.getLogger("backportr")


def with_covers(report: Report, lore: Lore, index: CommitIndex) -> Report:
    """The report with each Message-ID posting's cover subject and posted count filled in.
    An archive that cannot be read leaves the history's answer (with one warning)."""
    seen: dict[str, tuple[str | None, int | None]] = {}

    def member(m: Member) -> Member:
        p = m.posting
        if p is None or p.message_id is None or p.key.startswith("merge "):
            return m
        if p.key not in seen:
            kept = index.posting_cover(p.key)
            if kept is None:
                kept = _read_cover(lore, p.message_id)
                if kept is not None:
                    index.keep_posting_cover(p.key, *kept)
            seen[p.key] = kept or (None, None)
        cover, posted = seen[p.key]
        return dataclasses.replace(m, posting=_filled(p, cover, posted))

    return dataclasses.replace(
        report,
        branches=tuple(
            dataclasses.replace(b, series=tuple(member(m) for m in b.series))
            for b in report.branches
        ),
    )


def _filled(p: PostingInfo, cover: str | None, posted: int | None) -> PostingInfo:
    return dataclasses.replace(
        p, cover=cover or p.cover, posted=posted, total=max(p.total, posted or 0)
    )


def _read_cover(lore: Lore, message_id: str) -> tuple[str | None, int | None] | None:
    """(cover subject, N) from the thread: the `[PATCH ... 0/N]` mail, else any `k/N`."""
    try:
        mails = [parse_mail(raw) for raw in lore.thread(message_id)]
    except LoreError as error:
        _log.warning("cannot read the posting of <%s> from the archive: %s", message_id, error)
        return None
    for mail in mails:
        if mail.part is not None and mail.part[0] == 0:
            return mail.patch_subject, mail.part[1]
    for mail in mails:
        if mail.part is not None:
            return None, mail.part[1]
    return None, None
