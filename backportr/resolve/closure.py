"""The working state of one branch's closure: its members and their roles, what is present,
what is still to explore, and the questions the resolver's rules ask of it."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from backportr.model import NO_OID, Oid, PresentMember, Reason, Role, Suggestion
from backportr.resolve.finders import Context, Finding
from backportr.resolve.finders.fixes import culprits
from backportr.resolve.graph import SeriesGraph

BATCH_WINDOW = 30
"""Seconds between two commits of one author applied upstream in one run (`git am` of a
series: committer timestamps a second or so apart): one upstream batch."""
BATCH_RECENT = 30 * 86400
"""A batch is searched for a target committed within this of it: fresh work the target
builds on (OVN's northd refactor, six days before its fix). An older one the branch never
took it skipped on purpose (DPDK 23.11's axgbe 10 Mbps feature, two years before the fixes
of 2026 that conflict without it: the maintainers adapted them)."""


@dataclass
class Closure:
    """The working state of one branch's closure."""

    ctx: Context
    target: Oid
    target_present: bool
    max_commits: int
    graph: SeriesGraph = field(default_factory=SeriesGraph)
    roles: dict[Oid, Role] = field(default_factory=dict)
    present: dict[Oid, PresentMember] = field(default_factory=dict)
    pending: list[Oid] = field(default_factory=list)
    visited: set[Oid] = field(default_factory=set)
    warnings: list[str] = field(default_factory=list)
    capped: bool = False
    adapted_pending: list[Oid] = field(default_factory=list)
    adapted_checked: set[Oid] = field(default_factory=set)
    symbols_checked: set[Oid] = field(default_factory=set)
    adapt: dict[Oid, Suggestion] = field(default_factory=dict)  # member -> feature it lacks
    # the conflicting target -> what it uses that the branch lacks (whoever adapts it needs
    # those, or a replacement: retained as suggestions, never members)
    conflict_needs: dict[Oid, list[Suggestion]] = field(default_factory=dict)
    present_pending: list[Oid] = field(default_factory=list)  # present follow-ups to explore
    culprit_alternatives: list[Oid] = field(default_factory=list)  # absent, no evidence
    depth: int = 1  # how many levels of conflict prerequisites this attempt searches
    went_deeper: bool = False  # whether it searched past the first level
    authors: bool = False  # whether it searches past the depth the target's author's commits
    authors_searched: bool = False  # whether it did
    posting_filled: bool = False  # whether the target's posting was filled in (once)

    def seq(self, commit: Oid) -> int:
        return self.ctx.index.reader.upstream_order(commit)

    def add(self, commit: Oid, role: Role, reason: Reason | None) -> bool:
        """Add a member (or a reason to one); True when it is new."""
        if commit == self.target and self.target_present:
            return False
        if commit not in self.graph:
            if len(self.graph) >= self.max_commits:
                if not self.capped:
                    self.warnings.append(
                        f"stopped at --max-commits {self.max_commits}: the series may be "
                        "incomplete; raise the cap to see more"
                    )
                self.capped = True
                return False
            self.graph.add_node(commit, seq=self.seq(commit), subject=self.ctx.subject(commit))
            self.roles[commit] = role
            self.pending.append(commit)
            if reason is not None:
                self.graph.add_reason(commit, reason)
            return True
        if reason is not None:
            self.graph.add_reason(commit, reason)
        return False

    # -- what others change, through the closure ----------------------------------------

    def explore(self, commit: Oid) -> None:
        """Look at `commit` next: its relations, and (present adapted) what it went without."""
        self.pending.append(commit)
        self.adapted_pending.append(commit)

    def next_step(self) -> tuple[str, Oid] | None:
        """The next commit to look at, and how: `present` (a present member: its follow-ups),
        `adapted` (a present member backported adapted) or `member`; None when nothing is
        left or the cap was reached. Each is given once."""
        while (self.pending or self.adapted_pending or self.present_pending) and not self.capped:
            if self.present_pending:
                commit = self.present_pending.pop(0)
                if commit not in self.visited:
                    self.visited.add(commit)
                    return "present", commit
                continue
            if self.adapted_pending:
                commit = self.adapted_pending.pop(0)
                if commit not in self.adapted_checked:
                    self.adapted_checked.add(commit)
                    return "adapted", commit
                continue
            commit = self.pending.pop(0)
            if commit not in self.visited:
                self.visited.add(commit)
                return "member", commit
        return None

    def depend(self, dependent: Oid, dependency: Oid, reason: Reason) -> None:
        self.graph.add_dependency(dependent, dependency, reason)

    def drop(self, commit: Oid) -> None:
        """`commit` leaves the series (pruned, or cancelled by its revert)."""
        self.graph.remove(commit)
        self.roles.pop(commit, None)

    def adapt_instead(self, member: Oid, suggestion: Suggestion, *, first: bool = False) -> None:
        """`member` is to be adapted by hand rather than take `suggestion` (with `first`:
        unless an earlier suggestion says so already)."""
        if first:
            self.adapt.setdefault(member, suggestion)
        else:
            self.adapt[member] = suggestion

    def needs(self, member: Oid, suggestions: list[Suggestion]) -> None:
        """What the conflicting `member` uses that the branch lacks."""
        self.conflict_needs[member] = suggestions

    def alternative_culprit(self, culprit: Oid) -> None:
        self.culprit_alternatives.append(culprit)

    def warn(self, line: str, *, once: bool = False) -> None:
        if not (once and line in self.warnings):
            self.warnings.append(line)

    def first_symbol_check(self, member: Oid) -> bool:
        """True the first time it is asked of `member`: its symbols are to be looked at."""
        if member in self.symbols_checked:
            return False
        self.symbols_checked.add(member)
        return True

    def first_posting_fill(self) -> bool:
        """True once: the target's posting is to be filled in now."""
        if self.posting_filled:
            return False
        self.posting_filled = True
        return True

    def searched_deeper(self, *, by_author: bool = False) -> None:
        self.went_deeper = True
        if by_author:
            self.authors_searched = True

    def note_present(self, commit: Oid) -> None:
        if commit in self.present:
            return
        p = self.ctx.presence.check(commit, self.ctx.branch)
        self.present[commit] = PresentMember(commit, p.as_commit, p.how, self.ctx.subject(commit))

    def conflict_depth(self, commit: Oid) -> int:
        """How many conflict prerequisites deep a member is: 0 unless it is in the series
        only because another member conflicted without it."""
        depth = 0
        seen: set[Oid] = set()
        while commit in self.graph and commit not in seen:
            seen.add(commit)
            reasons = self.graph.reasons(commit)
            if not reasons or any(r.kind not in ("conflict", "adapted") for r in reasons):
                return depth
            depth += 1
            commit = reasons[0].related or NO_OID
        return depth

    def in_closure(self, commit: Oid) -> bool:
        return commit in self.graph or commit == self.target

    def link(self, finding: Finding, about: Oid) -> None:
        """Record a finding about `about`: add its commit (if needed) and the edge."""
        commit = finding.commit
        if self.ctx.is_present(commit) and commit != self.target:
            self.note_present(commit)
            if finding.relation == "follow-up":
                self.present_pending.append(commit)  # its own follow-ups may be absent
            return
        if finding.relation == "follow-up":
            if not self._follow_up_needed(commit):
                return
            # a later patch of a member's posting (--with-siblings all) fixes nothing
            role: Role = "sibling" if finding.reason.kind == "posting" else "follow-up"
        else:
            role = "prerequisite"
        self.add(commit, role, finding.reason)
        if commit not in self.graph:
            return
        if finding.relation == "follow-up":
            if about in self.graph:
                self.graph.add_dependency(commit, about, finding.reason)
        elif about in self.graph:
            self.graph.add_dependency(about, commit, finding.reason)

    def _follow_up_needed(self, commit: Oid) -> bool:
        """A follow-up is needed when one of its culprits is present or in the series (or is
        the upstream copy of a member: a commit cherry-picked from it)."""
        named = culprits(self.ctx, commit)
        if not named:
            return True  # a revert: needed because what it reverts is here
        return any(
            self.in_closure(c)
            or self.ctx.is_present(c)
            or self.in_closure(self.ctx.index.reader.carried_upstream(c) or NO_OID)
            for c in named
        )

    def same_series(self, commit: Oid) -> bool:
        """Same author as the target, committed upstream within hours of it: one posting."""
        return self.ctx.same_posting(commit, self.target)

    def near_target(self, commit: Oid) -> bool:
        """Committed upstream within `BATCH_RECENT` of the target."""
        return self.ctx.committed_near(commit, self.target, BATCH_RECENT, same_author=False)

    def same_batch(self, commit: Oid, other: Oid) -> bool:
        """Same author, committed upstream within `BATCH_WINDOW` of each other: steps of
        one series applied in one run (OVN's six-step northd refactor, 18:25:44-18:25:50)."""
        return self.ctx.committed_near(commit, other, BATCH_WINDOW, same_author=True)

    def same_author(self, commit: Oid) -> bool:
        """Written by the target's author (any posting of theirs, from any of their
        addresses: `Reader.same_person`)."""
        return self.ctx.index.reader.same_person(commit, self.target)

    def is_candidate(self, commit: Oid) -> bool:
        ctx = self.ctx
        if commit == self.target or not ctx.index.reader.is_upstream(commit):
            return False
        if commit in self.graph:
            return True
        return not ctx.is_present(commit)


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RENAME_SHARE = 0.8
_RENAME_FLOOR = 10


def is_rename(removed: Sequence[str], added: Sequence[str]) -> bool:
    """A refactor that renames: at least 80% of its added lines (and at least ten) have a
    removed line of the same shape once every name is blanked out."""
    if len(added) < _RENAME_FLOOR:
        return False
    shapes = Counter(_NAME.sub("x", line) for line in removed)
    matched = 0
    for line in added:
        shape = _NAME.sub("x", line)
        if shapes[shape] > 0:
            shapes[shape] -= 1
            matched += 1
    return matched >= _RENAME_SHARE * len(added) and removed != added


def once(suggestions: Sequence[Suggestion]) -> tuple[Suggestion, ...]:
    """Each suggested commit once, where it first appears."""
    seen: set[Oid] = set()
    out = []
    for suggestion in suggestions:
        if suggestion.commit not in seen:
            seen.add(suggestion.commit)
            out.append(suggestion)
    return tuple(out)
