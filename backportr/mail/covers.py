"""Postings online: a member's posting as lore has it (the cover letter's subject, how many
patches were posted, and each posted patch), read from the thread of the member's own mail
(`t.mbox.gz`, the bot's bounded client) and cached in the index. Each posted patch is mapped to
an upstream commit by its subject; one that never landed is shown as `not-upstream`. The edge
of `resolve --lore`: the resolver itself never goes to the network."""

from __future__ import annotations

import dataclasses
import logging

from backportr.mail.lore import Lore, LoreError
from backportr.mail.message import parse_mail
from backportr.model import (
    NO_OID,
    BranchReport,
    Member,
    PostingInfo,
    Report,
    Sibling,
    SiblingState,
)
from backportr.resolve.workspace import Workspace

_log = logging.getLogger("backportr")

Thread = tuple[str | None, int | None, list[tuple[int, str]]]  # cover, posted, (k, subject)


def with_covers(report: Report, lore: Lore, ws: Workspace) -> Report:
    """The report with each Message-ID posting completed from lore. An archive that cannot be
    read leaves the history's answer (with one warning)."""
    seen: dict[str, Thread] = {}

    def thread_of(p: PostingInfo) -> Thread:
        if p.key not in seen:
            cached = ws.index.cache.posting_cover(p.key)
            if cached is None and p.message_id is not None:
                cached = _read_thread(lore, p.message_id)
                if cached is not None:
                    ws.index.cache.cache_posting_cover(p.key, *cached)
            seen[p.key] = cached or (None, None, [])
        return seen[p.key]

    def member(m: Member, branch: BranchReport) -> Member:
        p = m.posting
        if p is None or p.message_id is None or p.key.startswith("merge "):
            return m
        cover, posted, patches = thread_of(p)
        siblings = _with_posted(p.siblings, patches, branch, ws)
        return dataclasses.replace(
            m,
            posting=dataclasses.replace(
                p,
                cover=cover or p.cover,
                posted=posted,
                total=max(p.total, posted or 0),
                siblings=siblings,
            ),
        )

    return dataclasses.replace(
        report,
        branches=tuple(
            dataclasses.replace(b, series=tuple(member(m, b) for m in b.series))
            for b in report.branches
        ),
    )


def _with_posted(
    siblings: tuple[Sibling, ...],
    patches: list[tuple[int, str]],
    branch: BranchReport,
    ws: Workspace,
) -> tuple[Sibling, ...]:
    """The siblings the history knows, and every other posted patch: mapped to the upstream
    commit of the same subject (one that names no Message-ID), else `not-upstream`."""
    known = {s.subject.casefold() for s in siblings}
    in_series = {m.commit for m in branch.series}
    ref = next((r for r in ws.branches if r.name == branch.branch), None)
    out = list(siblings)
    for number, subject in patches:
        if subject.casefold() in known:
            continue
        found = ws.index.reader.upstream_by_subject(subject)
        state: SiblingState
        if len(found) != 1:
            out.append(Sibling(NO_OID, number, subject, "not-upstream"))
            continue
        commit = found[0]
        if commit in in_series:
            state = "in-series"
        elif ref is not None and ws.presence.check(commit, ref).present:
            state = "present"
        else:
            state = "absent"
        out.append(Sibling(commit, number, subject, state))
    return tuple(sorted(out, key=lambda s: s.position))


def _read_thread(lore: Lore, message_id: str) -> Thread | None:
    """(cover subject, N, [(k, subject)]) from the thread's `[PATCH ... k/N]` mails."""
    try:
        mails = [parse_mail(raw) for raw in lore.thread(message_id)]
    except LoreError as error:
        _log.warning("cannot read the posting of <%s> from the archive: %s", message_id, error)
        return None
    cover: str | None = None
    posted: int | None = None
    patches: dict[int, str] = {}
    for mail in mails:
        if mail.part is None:
            continue
        number, total = mail.part
        posted = posted or total
        if number == 0:
            cover = mail.patch_subject
        elif mail.patch_subject and number not in patches:
            patches[number] = mail.patch_subject
    return cover, posted, sorted(patches.items())
