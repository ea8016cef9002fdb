"""What a branch's own history says of its adapted backports, and the findings that rest on it.

A backport adapted around what its upstream original needed is the case backportr exists for
(5.10.202's `b836c4d29f27` fixed nothing without `db1d1e8b9867`). Yet on a branch whose
maintainers adapt on purpose, "its original would not apply without X" is no reason to take
X. The branch's history tells which it is: for each of its adapted backports (its upstream
original conflicts at the backport's parent), the commits it was adapted around (the fewest
upstream commits, absent from the branch then, that make the original apply there: the
resolver's own search); was any of them backported later? A branch that took them later in
fewer than half of at least `MIN_HISTORY` cases adapts on purpose (`Practice`). A branch
with fewer of its own (a young one) is judged with its siblings' histories too, the sibling
that forked nearest first, until there are enough: the project's stable branches, kept by
the same maintainers, say what they do with what adapted backports go without.

There, an `incomplete-backport` finding whose missing commits are all ones it was adapted
around (and what hangs on them: their follow-ups, the symbols they need) goes into a group of
its own, `adapted-backport`, counted apart, with its series; one that also lacks commits of
its own (a follow-up of the backport itself) stays a finding, and the adapted part goes
apart. Evidence keeps it a finding all the same: a sibling stable branch took what it was
adapted around together with the target, or a branch records it as the target's dependency
(`Stable-dep-of:`), or the target declares it (`Cc: stable # X.Y: <id>`). A branch with no
such history, nor siblings with it (the demo's), is reported as before.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from backportr.errors import BackportrError
from backportr.git.names import Ref
from backportr.git.repo import GitError, git_error_text
from backportr.git.trial import TreeState
from backportr.model import Member, Oid, short
from backportr.resolve.finders.conflicts import conflict_prerequisites
from backportr.resolve.finders.declared import declared, recorded
from backportr.scan.findings import BranchScan, ScanFinding, prioritize
from backportr.scan.scanner import Scanner, adapted_roots, incomplete_why

MIN_HISTORY = 10
"""Adapted backports whose fate is known before a branch's practice is judged."""

TAKEN_SHARE = 0.5
"""A branch that took what its adapted backports went without in fewer than this share of
them adapts on purpose."""

TOGETHER = 2 * 86400
"""Seconds between a sibling's backport of the target and its backport of a commit the
target was adapted around within which it took the two together: a dependency is picked in
the session that picks the target (DPDK 24.11's pair for 23.11's `4d78ac5f3ef7` share one
committer time). Further apart, the sibling took the commit on its own account, which says
nothing of the target (containerd's release/2.1 took a lint cleanup eight months before the
fix release/1.7 adapted around it)."""

_KEY = "adapted-around:v1"
_SLICE = 64  # a sibling's backports asked at a time (`PracticeReader._sampled`)


@dataclass(frozen=True, slots=True)
class Practice:
    """Of a branch's adapted backports: those whose missing commits were taken later, and
    those still without them."""

    taken: int = 0
    left: int = 0
    own: int = 0  # of `decided`, the branch's own (the rest: the siblings of `pooled`)
    pooled: tuple[str, ...] = ()

    @property
    def decided(self) -> int:
        return self.taken + self.left

    def __add__(self, other: Practice) -> Practice:
        return Practice(self.taken + other.taken, self.left + other.left, self.own, self.pooled)

    def joined(self, sibling: str, seen: Practice) -> Practice:
        """This practice with a sibling's history added."""
        return replace(self + seen, pooled=(*self.pooled, sibling))

    @property
    def adapts_on_purpose(self) -> bool:
        return self.decided >= MIN_HISTORY and self.taken < TAKEN_SHARE * self.decided

    def describe(self) -> str:
        whose = ""
        if self.pooled:
            whose = f" ({self.own} of this branch's, the rest of {', '.join(self.pooled)}'s)"
        if self.decided < MIN_HISTORY:
            return (
                f"{self.decided} adapted backport(s) with a known outcome{whose}: too few to "
                "judge; every adapted backport is reported"
            )
        who, adapt, take = (
            ("the branches", "adapt", "take") if self.pooled else ("the branch", "adapts", "takes")
        )
        verdict = f"{adapt} on purpose" if self.adapts_on_purpose else f"{take} them later"
        return (
            f"of {self.decided} adapted backports{whose}, {self.taken} had what they went "
            f"without backported later: {who} {verdict}"
        )

    def as_json(self) -> str:
        return json.dumps({"adapts": self.adapts_on_purpose, "says": self.describe()})


class PracticeReader:
    """A branch's practice, from the scanner's workspace and resolver."""

    def __init__(self, scanner: Scanner) -> None:
        self.scanner = scanner
        self.ws = scanner.ws

    def practice(self, branch: Ref) -> Practice:
        """The branch's practice: its own history, or, where that has fewer than
        `MIN_HISTORY` adapted backports of known outcome, with its siblings' (the nearest
        fork first) until there are as many. The verdict is kept for detections
        (`cached_verdict`)."""
        cache = self.ws.index.cache
        backports = self.scanner.targets(branch)[1]
        own = self._history(branch, [(c, u) for c, u in backports if cache.adapted_conflicts(u, c)])
        practice = replace(own, own=own.decided)
        for sibling in self._siblings(branch):
            if practice.decided >= MIN_HISTORY:
                break
            seen = self._sampled(sibling, MIN_HISTORY - practice.decided)
            if seen.decided:
                practice = practice.joined(sibling.name, seen)
        cache.cache_result(_verdict_key(branch), practice.as_json())
        return practice

    def witnessed(self, branch: Ref, part: ScanFinding) -> ScanFinding:
        """A part of a finding `settle` parted, witnessed and ranked by its own series
        (the whole's witnesses name the other part's commits too)."""
        seen = self.scanner.witness_backport(branch, part.commit, part.series)
        return replace(part, witnesses=seen.lines, confidence=seen.confidence)

    def _siblings(self, branch: Ref) -> list[Ref]:
        """The other indexed stable branches, the one that forked nearest to `branch` first
        (then by name)."""
        reader = self.ws.index.reader
        upstream = self.ws.upstream.refname

        def fork_seq(ref: Ref) -> int:
            stored = reader.stored_ref(ref.refname)
            fork = stored.fork if stored is not None else None
            return (reader.upstream_seq(fork) or 0) if fork is not None else 0

        here = fork_seq(branch)
        others = [r for r in self.ws.indexed if r.refname not in (branch.refname, upstream)]
        return sorted(others, key=lambda r: (abs(fork_seq(r) - here), r.name))

    def _sampled(self, sibling: Ref, wanted: int) -> Practice:
        """A sibling's history, until `wanted` adapted backports of known outcome: its
        backports in the order of their ids (a sample of its years, not its newest, whose
        outcome is not known yet), a slice of `_SLICE` at a time, each asked whether it was
        adapted (a trial, cached) and what it went without (a search, cached). A sibling of
        thousands of backports is not searched whole for the few a young branch lacks."""
        backports = sorted(self.scanner.targets(sibling)[1])
        found = Practice()
        for start in range(0, len(backports), _SLICE):
            part = backports[start : start + _SLICE]
            self.ws.index.patch_ids.fill([o for pair in part for o in pair])
            adapted = [(c, u) for c, u in part if self.scanner.adapted(u, c)]
            found = found + self._history(sibling, adapted, wanted - found.decided)
            if found.decided >= wanted:
                break
        return found

    def _history(
        self, branch: Ref, adapted: list[tuple[Oid, Oid]], wanted: int | None = None
    ) -> Practice:
        """Of these adapted backports (carrier, upstream) of the branch, those whose missing
        commits it took later and those still without them (until `wanted` are known)."""
        cache = self.ws.index.cache
        keys = [f"{_KEY}:{upstream}:{carrier}" for carrier, upstream in adapted]
        known = cache.cached_results(keys)
        fresh: list[tuple[str, str]] = []
        taken = left = 0
        for (carrier, upstream), key in zip(adapted, keys, strict=True):
            if wanted is not None and taken + left >= wanted:
                break
            if key in known:
                around = [Oid(str(c)) for c in json.loads(known[key])]
            else:
                around = self._around(branch, upstream, carrier)
                fresh.append((key, json.dumps(around)))
            if not around:
                continue
            if any(self.ws.presence.check(c, branch).present for c in around):
                taken += 1
            else:
                left += 1
        cache.cache_results(fresh)
        return Practice(taken, left)

    def _around(self, branch: Ref, upstream: Oid, carrier: Oid) -> list[Oid]:
        """The commits `upstream` was adapted around when backported as `carrier`: the fewest
        upstream commits absent from the branch at the carrier's parent with which it
        applies there (taken later or not: the branch's tip is not asked)."""
        ws = self.ws
        parents = ws.repo.parents(carrier)
        if not parents:
            return []
        state = TreeState(parents[0])
        applier = self.scanner.resolver.applier
        pick = applier.pick(upstream, state)
        if pick.result != "conflict":
            return []
        ctx = self.scanner.resolver.context(branch)
        reader = ws.index.reader

        def absent_then(commit: Oid) -> bool:
            if commit == upstream or not reader.is_upstream(commit):
                return False
            found = ws.presence.check(commit, branch)
            if not found.present:
                return True
            return (
                found.how != "ancestor"
                and found.as_commit is not None
                and not ws.repo.is_ancestor(found.as_commit, parents[0])
            )

        findings = conflict_prerequisites(
            ctx,
            upstream,
            state,
            pick.conflict_sources,
            absent_then,
            lambda c: reader.upstream_seq(c) or 0,
            kind="adapted",
        )
        return [f.commit for f in findings]


def _verdict_key(branch: Ref) -> str:
    return f"practice:v1:{branch.refname}"


def cached_verdict(scanner: Scanner, branch: Ref) -> tuple[bool, str] | None:
    """What the branch's last full scan judged of its practice (adapts on purpose, and its
    line), where one did: a detection makes no trial, and reads it."""
    value = scanner.ws.index.cache.cached_result(_verdict_key(branch))
    if value is None:
        return None
    try:
        found = json.loads(value)
        return bool(found["adapts"]), str(found["says"])
    except (ValueError, KeyError, TypeError):  # not a verdict this version wrote: none
        return None


def settle(scan: BranchScan, branch: Ref, reader: PracticeReader) -> None:
    """Put the findings that rest only on a backport's adaptation apart when the branch
    adapts on purpose (`Practice`), unless evidence holds them (`_held`)."""
    resting = [f for f in scan.findings if f.kind == "incomplete-backport" and f.adapted]
    if not resting:
        return
    try:
        practice = reader.practice(branch)
    except (BackportrError, GitError) as error:  # an object git cannot read, as a target's
        scan.errors.append(f"the branch's practice: {_why(error)}")
        scan.practice = "its practice could not be judged: every adapted backport is reported"
        return
    scan.practice = practice.describe()
    if not practice.adapts_on_purpose:
        return
    pending = {id(f) for f in resting}
    retained: list[ScanFinding] = []
    for finding in scan.findings:
        if id(finding) not in pending:
            retained.append(finding)
            continue
        try:
            apart, own = _parted(reader, branch, finding)
        except (BackportrError, GitError) as error:  # that finding stays one, whole
            scan.errors.append(f"{short(finding.commit)}: {_why(error)}")
            retained.append(finding)
            continue
        if apart is None:
            retained.append(finding)
            continue
        evidence = _reworded(reader, branch, finding, apart, adapted=True)
        scan.adapted.append(
            reader.witnessed(
                branch,
                replace(
                    finding,
                    kind="adapted-backport",
                    series=apart,
                    evidence=(*evidence, f"adapted, probably on purpose: {practice.describe()}"),
                ),
            )
        )
        if own:
            evidence = _reworded(reader, branch, finding, own, adapted=False)
            own_part = replace(finding, series=own, evidence=evidence, adapted=())
            retained.append(reader.witnessed(branch, own_part))
    scan.findings = prioritize(retained, reader.scanner.policy.untagged)


def _parted(
    reader: PracticeReader, branch: Ref, finding: ScanFinding
) -> tuple[tuple[Member, ...] | None, tuple[Member, ...]]:
    """A finding resting on its backport's adaptation, on a branch that adapts on purpose:
    (what it went without, tried as listed; None where evidence holds it a finding) and
    what it lacks of its own, tried as listed."""
    if _held(reader, branch, finding):
        return None, finding.series
    adapted = set(finding.adapted)
    tried = reader.scanner.tried_as_listed
    apart = tried(branch, finding.series, tuple(m for m in finding.series if m.commit in adapted))
    own = tried(branch, finding.series, tuple(m for m in finding.series if m.commit not in adapted))
    return apart, own


def _reworded(
    reader: PracticeReader,
    branch: Ref,
    finding: ScanFinding,
    part: tuple[Member, ...],
    *,
    adapted: bool,
) -> tuple[str, ...]:
    """The finding's evidence for one part of its series: its first line counts what that
    part lacks ("lacks 2 commit(s): 2 it was adapted around"), not the whole finding's."""
    carrier = reader.ws.presence.check(finding.commit, branch).as_commit
    if carrier is None or not finding.evidence:
        return finding.evidence
    counted = {m.commit for m in part} if adapted else set()
    return (incomplete_why(carrier, part, counted), *finding.evidence[1:])


def _why(error: BackportrError | GitError) -> str:
    return git_error_text(error) if isinstance(error, GitError) else str(error)


def _held(reader: PracticeReader, branch: Ref, finding: ScanFinding) -> bool:
    """Evidence that what the backport went without is wanted all the same: a sibling
    backported a commit it was adapted around beside the target, in one batch (a sibling
    that forked after it has it by ancestry, and a follow-up of it there is routine: no
    evidence; one it took months apart, on its own account: none either), a branch records
    it as the target's dependency, or the target declares it."""
    ws = reader.ws
    adapted = adapted_roots(finding.series)  # not what hangs on those
    ctx = reader.scanner.resolver.context(branch)
    wanted = {f.commit for f in (*declared(ctx, finding.commit), *recorded(ctx, finding.commit))}
    if adapted & wanted:
        return True
    upstream = ws.upstream.refname
    for sibling in ws.indexed:
        if sibling.refname in (branch.refname, upstream):
            continue
        target = ws.presence.check(finding.commit, sibling)
        if not target.present or target.as_commit is None:
            continue
        for commit in adapted:
            found = ws.presence.check(commit, sibling)
            if (
                found.present
                and found.how != "ancestor"  # backported there: a decision
                and found.as_commit is not None
                and _together(reader, found.as_commit, target.as_commit)
            ):
                return True
    return False


def _together(reader: PracticeReader, one: Oid, other: Oid) -> bool:
    """Two commits of a sibling committed within `TOGETHER` of each other: one batch."""
    repo = reader.ws.repo
    return abs(repo.commit(one).commit_time - repo.commit(other).commit_time) <= TOGETHER
