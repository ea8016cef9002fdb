"""Siblings as witnesses: what the other stable branches did with the commits a finding names.

For each indexed stable branch other than the one scanned (its siblings), each commit the
finding says the branch lacks: backported there, and as which commit ("24.11 took
6c0a92a90b5d as 1f2e3d4c5b6a"; a sibling that forked after the commit has it by ancestry, no
decision of its maintainers, so no witness); or, where the sibling carries the same base (the
backport, or the culprit of a missing fix) and has none of them, skipped. A sibling that has
one of them by ancestry is neither. The finding's confidence follows: a sibling that
backported the base as well backported one of them (the same decision as the branch's, made;
not a follow-up of another of them the sibling has by ancestry, which fixes what it has),
`high`; every sibling that carries the base went without all of them for months
(`SKIPPED_FOR`: upstream that long before its tip), `low`; the branch itself went without
those it met on their own (fixes of what it had) while it took `PASSED_OVER` backports of
later upstream commits (its maintainers' batches reached past them; a sibling that took them
with the base by ancestry does not outweigh it: on DPDK 23.11 3 of 17 such fixes were taken,
against 8 in 10 of the rest), `low`; otherwise `normal`.
"""

from __future__ import annotations

import bisect
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from backportr.git.names import Ref
from backportr.model import Member, Oid, short
from backportr.resolve.workspace import Workspace
from backportr.scan.findings import Confidence

SKIPPED_FOR = 90 * 24 * 3600
"""How long a commit must have been upstream for a sibling's going without it to count."""

PASSED_OVER = 10
"""How many backports of later upstream commits make the branch's going without one count."""

_FIRST = -(2**62)  # before any branch position


class TakenBackports:
    """A branch's backports, (branch position, upstream position) in branch order, asked
    how many after a branch position are of upstream commits later than a given one: in
    blocks of `block`, each block's upstream positions sorted (a whole block bisected, the
    first one read), so a kernel branch's 25,000 answer a question in tens of microseconds."""

    def __init__(self, pairs: list[tuple[int, int]], block: int = 512) -> None:
        self.block = block
        self.positions = [p for p, _ in pairs]
        self.upstream = [u for _, u in pairs]
        self.blocks = [sorted(self.upstream[i : i + block]) for i in range(0, len(pairs), block)]

    def later_than(self, upstream: int, since: int) -> int:
        """Backports after branch position `since` of upstream commits after `upstream`."""
        start = bisect.bisect_right(self.positions, since)
        block = start // self.block
        end = min(len(self.upstream), (block + 1) * self.block)
        count = sum(1 for u in self.upstream[start:end] if u > upstream)
        for sorted_block in self.blocks[block + 1 :]:
            count += len(sorted_block) - bisect.bisect_right(sorted_block, upstream)
        return count


@dataclass(frozen=True, slots=True)
class Witnessed:
    lines: tuple[str, ...]
    confidence: Confidence


def related_of(series: Sequence[Member]) -> dict[Oid, tuple[Oid, ...]]:
    """Each member's related commits, as `Witnesses.of` asks them."""
    return {m.commit: tuple(r.related for r in m.reasons if r.related) for m in series}


class Witnesses:
    """The siblings of each scanned branch, asked about a finding's commits."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._taken: dict[str, TakenBackports] = {}  # refname -> its backports, read once

    def siblings(self, branch: Ref) -> list[Ref]:
        """The indexed stable branches other than `branch`."""
        upstream = self.ws.upstream.refname
        return [r for r in self.ws.indexed if r.refname not in (branch.refname, upstream) and r.tip]

    def prefetch(self, branch: Ref, commits: Sequence[Oid]) -> None:
        """What the siblings' presence checks of `commits` will ask, in bulk: the patch-ids
        of those a sibling will be searched by, and those of the siblings' own commits that
        could share them (`PatchIds.fill_like`)."""
        presence = self.ws.presence
        siblings = self.siblings(branch)
        self.ws.index.patch_ids.digests(commits)  # what `needs_patch_id` asks, in one listing
        asked = [
            c
            for c in dict.fromkeys(commits)
            if any(presence.needs_patch_id(c, s) for s in siblings)
        ]
        self.ws.index.patch_ids.fill(asked)
        self.ws.index.patch_ids.fill_like(asked, [s.refname for s in siblings])

    def of(
        self,
        branch: Ref,
        missing: Sequence[Oid],
        bases: Sequence[Oid],
        candidates: Sequence[Oid] = (),
        related: Mapping[Oid, Collection[Oid]] | None = None,
    ) -> Witnessed:
        """What each sibling did with `missing`, and with `bases` (the backport, or the
        culprits of a missing fix) without them; and what the branch itself did with
        `candidates`, those of `missing` its maintainers met on their own (a fix of what it
        has: the missing fix, a follow-up of the backport). `related`: for each of `missing`,
        the commits its reasons name (`related_of`: of a follow-up, what it follows up)."""
        presence = self.ws.presence
        siblings = self.siblings(branch)
        lines: list[str] = []
        took = False
        skipped: list[str] = []
        for sibling in siblings:
            found = {commit: presence.check(commit, sibling) for commit in missing}
            inherited = {c for c, f in found.items() if f.present and f.how == "ancestor"}
            carried: list[str] = []
            decided = False  # one of them backported for what the branch lacks too
            for commit, f in found.items():
                if not f.present or commit in inherited:
                    continue  # a backport is a decision; a commit from the fork is none
                shown = short(commit)
                if f.as_commit and f.as_commit != commit:
                    shown += f" as {short(f.as_commit)}"
                had = [r for r in (related or {}).get(commit, ()) if r in inherited]
                if had:  # a fix of what the sibling has from its fork, and the branch lacks
                    shown += f" (it has {short(had[0])} from its fork)"
                else:
                    decided = True
                carried.append(shown)
            based = [presence.check(base, sibling) for base in bases]
            if carried:
                # the same decision as here: the sibling backported the base too
                backported = any(p.present and p.how != "ancestor" for p in based)
                took = took or (decided and backported)
                lines.append(f"{sibling.name} took {', '.join(carried)}")
            elif not inherited and any(p.present for p in based):
                skipped.append(sibling.name)
        if skipped:
            verb = "carries" if len(skipped) == 1 else "carry"
            what = "it" if len(missing) == 1 else "them"
            base = short(bases[0]) if bases else "the base"
            lines.append(f"{', '.join(skipped)} {verb} {base} without {what}")
        if took:
            return Witnessed(tuple(lines), "high")
        newest = max((self._time(c) for c in missing), default=0)
        tips = {s.name: s.tip for s in siblings}
        if skipped and newest and all(self._time(tips[s]) - newest >= SKIPPED_FOR for s in skipped):
            return Witnessed(tuple(lines), "low")  # each sibling had months to take them
        later = self.passed_over(branch, candidates, bases)
        if later >= PASSED_OVER:
            what = "it" if len(candidates) == 1 else "them"
            lines.insert(0, f"{branch.name} took {later} later upstream commits without {what}")
            return Witnessed(tuple(lines), "low")
        return Witnessed(tuple(lines), "normal")

    def passed_over(self, branch: Ref, candidates: Sequence[Oid], bases: Sequence[Oid]) -> int:
        """How many backports the branch took, once it had one of `bases` (from its fork, one
        it has by ancestry), of upstream commits later than every one of `candidates` (0
        without candidates, or with one not upstream): its maintainers' batches that reached
        past them, where they were fixes of what it had, and left them."""
        reader = self.ws.index.reader
        positions = [reader.upstream_seq(c) for c in candidates]
        if not positions or any(p is None for p in positions):
            return 0
        since = self._since(branch, bases)
        if since is None:
            return 0
        taken = self._taken.get(branch.refname)
        if taken is None:
            taken = self._taken[branch.refname] = TakenBackports(
                reader.backport_positions(branch.refname)
            )
        return taken.later_than(max(p for p in positions if p is not None), since)

    def _since(self, branch: Ref, bases: Sequence[Oid]) -> int | None:
        """The branch position from which the branch had one of `bases`: before its own
        commits for one it has by ancestry, else the earliest backport of one (None: none)."""
        presence, reader = self.ws.presence, self.ws.index.reader
        since: int | None = None
        for base in bases:
            found = presence.check(base, branch)
            if not found.present:
                continue
            if found.how == "ancestor":
                return _FIRST
            seq = reader.branch_seq(found.as_commit or base, branch.refname)
            if seq is not None and (since is None or seq < since):
                since = seq
        return since

    def _time(self, commit: Oid) -> int:
        info = self.ws.index.reader.info(commit)
        return info.commit_time if info else 0
