"""The other stable branches as evidence: where one already backported the target, the series
its maintainers used is the nearest thing to an answer key.

For each indexed stable branch of another line (another fork from upstream: the same line at
another state is no other team's decision) that carries the target as a
backport (one that forked after the target has it by ancestry: no decision of its
maintainers, so no evidence), the answer says which of its other commits that branch took
too ("linux-5.15.y took it as 1f2e3d4c5b6a with db1d1e8b9867, a1175d6b1bda") and which of its
members it went without. A suggestion a sibling took ranks first among the suggestions: the
maintainers of a sibling branch judged it needed for the same fix.
"""

from __future__ import annotations

from dataclasses import replace

from backportr.git.names import Ref
from backportr.index.presence import PresenceChecker
from backportr.model import BranchReport, Elsewhere, Oid


def with_elsewhere(
    report: BranchReport,
    target: Oid,
    siblings: list[Ref],
    presence: PresenceChecker,
) -> BranchReport:
    """`report` with what each sibling in `siblings` did with the target and its commits,
    and its suggestions ranked by it (those a sibling took first, each group in its order)."""
    if report.status == "already-present" or not siblings:
        return report
    members = [m.commit for m in report.series if m.commit != target]
    suggested = [s.commit for s in report.suggestions]
    found: list[Elsewhere] = []
    for sibling in siblings:
        carried = presence.check(target, sibling)
        if not carried.present or carried.how == "ancestor":
            continue
        took = tuple(
            c for c in dict.fromkeys([*members, *suggested]) if backported_to(presence, c, sibling)
        )
        without = tuple(
            c for c in members if c not in took and not presence.check(c, sibling).present
        )
        found.append(Elsewhere(sibling.name, carried.as_commit or target, took, without))
    if not found:
        return report
    taken = {c for e in found for c in e.took}
    ranked = sorted(report.suggestions, key=lambda s: s.commit not in taken)
    return replace(report, elsewhere=tuple(found), suggestions=tuple(ranked))


def backported_to(presence: PresenceChecker, commit: Oid, sibling: Ref) -> bool:
    """Backported there: a decision of its maintainers (not an ancestor of its fork)."""
    found = presence.check(commit, sibling)
    return found.present and found.how != "ancestor"
