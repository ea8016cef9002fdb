"""Siblings: the other patches of the posting a member came from (backportr.text.postings says how
a posting is read from the history), their state on the branch, and, with `--with-siblings`,
the absent ones as members ("same posting"); and the patches of the target's own posting
between an earlier one the series takes and the target (`between`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from backportr.model import Oid, PostingInfo, Reason, Sibling, SiblingsPolicy, SiblingState, short
from backportr.resolve.finders import Context, Direction, Finding
from backportr.text.postings import is_b4, message_ids, message_key, message_link, positions

_MAX_MERGE = 30  # a merge bringing more commits is a subsystem pull, not one posting
_BETWEEN = 30  # commits of the target's files' history looked at between a member and it


@dataclass(frozen=True, slots=True)
class Posting:
    key: str
    cover: str | None
    members: tuple[tuple[int, Oid], ...]  # (position, upstream commit), by position

    @property
    def total(self) -> int:
        return max(p for p, _ in self.members)

    def position_of(self, commit: Oid) -> int:
        return next(p for p, c in self.members if c == commit)


def posting(ctx: Context, commit: Oid) -> Posting | None:
    """By the Message-ID its trailers name; else by the merge (request) that brought it."""
    found = ctx.index.reader.posting_of(commit)
    if found is not None:
        stem, numbered = found
        where = positions([n for n, _ in numbered], 0 if is_b4(stem) else None)
        members = tuple(sorted({(where[n], c) for n, c in numbered}))
        # One patch landed: still a posting when its number says the thread had more mails
        # (a lone patch is number 1 and says nothing).
        if len(members) > 1 or any(n >= 2 for n, _ in numbered):
            return Posting(stem, None, members)
    merged = ctx.repo.merge_bringing(commit, ctx.upstream.tip, _MAX_MERGE)
    if merged is not None:
        merge, brought = merged
        if len(brought) > 1:
            cover = ctx.repo.subject(merge)
            return Posting(f"merge {short(merge)}", cover, tuple(enumerate(brought, 1)))
    return None


def posting_info(ctx: Context, commit: Oid, in_series: set[Oid]) -> PostingInfo | None:
    """The member's posting as the report shows it: its place and every sibling's state."""
    found = posting(ctx, commit)
    if found is None:
        return None
    siblings = []
    for position, other in found.members:
        state: SiblingState
        if other == commit:
            state = "this"
        elif other in in_series:
            state = "in-series"
        elif ctx.is_present(other):
            state = "present"
        else:
            state = "absent"
        siblings.append(Sibling(other, position, ctx.subject(other), state))
    message = ctx.repo.message(commit)
    mine = next((m for m in message_ids(message) if _stem(m) == found.key), None)
    link = message_link(message, mine) if mine else None
    return PostingInfo(
        found.key,
        found.position_of(commit),
        found.total,
        found.cover,
        tuple(siblings),
        mine,
        link=link,
    )


def _stem(message_id: str) -> str | None:
    key = message_key(message_id)
    return key.stem if key else None


def sibling_findings(ctx: Context, commit: Oid, policy: SiblingsPolicy) -> list[Finding]:
    """With `earlier`, the posting's patches before `commit` join as its prerequisites; with
    `all`, the later ones too, after it. Present ones are left to the closure as usual."""
    if policy == "none":
        return []
    found = posting(ctx, commit)
    if found is None:
        return []
    mine = found.position_of(commit)
    out = []
    for position, other in found.members:
        if other == commit or (policy == "earlier" and position > mine):
            continue
        detail = (
            f"{position}/{found.total} of the same posting as {ctx.describe(commit)} "
            f"({found.cover or found.key})"
        )
        relation: Direction = "prerequisite" if position < mine else "follow-up"
        out.append(Finding(other, relation, Reason("posting", detail, commit)))
    return out


def between(
    ctx: Context, target: Oid, first: Oid, of_posting: Callable[[Oid], bool]
) -> list[Finding]:
    """The patches of the target's posting (`of_posting`) committed between `first`, an
    earlier patch of it, and the target that change the target's files, oldest first: a
    posting's patches build on each other in order, and its maintainers take them so (a
    branch with the first and the last but not the middle is a state upstream never had)."""
    parents = ctx.repo.parents(target)
    paths = sorted(ctx.repo.diffs.files_touched(target))
    if not parents or not paths:
        return []
    history = ctx.repo.search.file_history(paths, parents[0], first, _BETWEEN)
    detail = (
        f"of the same posting as {ctx.describe(first)}, between it and {short(target)}, and "
        "changes the target's files: a posting is taken in order"
    )
    # `related` is `first`: should `first` leave the series, so do the patches after it
    return [
        Finding(commit, "prerequisite", Reason("posting", detail, first))
        for commit in reversed(history)
        if of_posting(commit)
    ]
