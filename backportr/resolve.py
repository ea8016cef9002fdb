"""Resolve: target + branch -> the complete, ordered series, with evidence and a trial.

The closure, repeated to a fixpoint: the target's culprits decide whether it is needed at
all; then declared and recorded prerequisites and follow-ups (fixes and reverts) of every
member; then a trial apply, and for the first member that conflicts, the fewest absent
upstream commits that make it apply; and again, until nothing changes or the cap is hit.
A target already in the branch as an adapted backport is checked on the branch as it was
just before that backport. Never prints: progress goes through the callback.
"""

from __future__ import annotations

import functools
import logging
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from backportr.apply import PickResult, TreeState, TrialApplier
from backportr.config import DEFAULT_MAX_COMMITS
from backportr.deps import Context, Finding
from backportr.deps.conflicts import conflict_prerequisites
from backportr.deps.context import context_suggestions
from backportr.deps.declared import declared, recorded
from backportr.deps.fixes import culprits, effective_upstream_reverter, follow_ups
from backportr.deps.siblings import posting_info, sibling_findings
from backportr.deps.symbols import SEARCHED, symbol_prerequisites
from backportr.deps.words import WordLookup
from backportr.graph import SeriesGraph
from backportr.model import (
    BranchReport,
    BranchStatus,
    CulpritPolicy,
    Member,
    Oid,
    PresentMember,
    ProgressCallback,
    Reason,
    Report,
    Role,
    SiblingsPolicy,
    Suggestion,
    no_progress,
)
from backportr.repo import Ref
from backportr.trailers import parse_version
from backportr.workspace import Workspace

_log = logging.getLogger("backportr")

Finder = Callable[[Context, Oid], list[Finding]]
_CULPRIT_DEPTH = 4
DEFAULT_CONFLICT_DEPTH = 1
_FEATURE_FACTOR = 10
_FEATURE_FLOOR = 5
_SERIES_DEPTH = 8
_SERIES_WINDOW = 12 * 3600  # seconds between the commits of one posting, applied together
"""Conflict prerequisites are searched one level deep: when a commit pulled in only to make
another apply conflicts itself, the branch has diverged and the backport needs a human
(measured on real history: docs/accuracy.md)."""


@dataclass
class _Closure:
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
    present_pending: list[Oid] = field(default_factory=list)  # present follow-ups to explore
    culprit_alternatives: list[Oid] = field(default_factory=list)  # absent, no evidence

    def seq(self, commit: Oid) -> int:
        value = self.ctx.index.upstream_seq(commit)
        return value if value is not None else 1 << 40

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
            commit = reasons[0].related or ""
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
            role: Role = "follow-up"
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
            or self.in_closure(self.ctx.index.carried_upstream(c) or "")
            for c in named
        )


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


def _once(suggestions: Sequence[Suggestion]) -> tuple[Suggestion, ...]:
    """Each suggested commit once, where it first appears."""
    seen: set[Oid] = set()
    out = []
    for suggestion in suggestions:
        if suggestion.commit not in seen:
            seen.add(suggestion.commit)
            out.append(suggestion)
    return tuple(out)


class Resolver:
    """Resolves targets against branches of one workspace; shares work between branches."""

    def __init__(
        self,
        workspace: Workspace,
        *,
        max_commits: int = DEFAULT_MAX_COMMITS,
        symbols: bool = True,
        conflict_depth: int = DEFAULT_CONFLICT_DEPTH,
        culprits: CulpritPolicy | None = None,
        suggest: bool = True,
        siblings: SiblingsPolicy = "none",
        postings: bool = True,
        progress: ProgressCallback = no_progress,
    ) -> None:
        """`siblings`: which absent patches of a member's posting join the series;
        `postings`: show each member's posting and its siblings' state (a scan needs
        neither)."""
        self.suggest = suggest
        self.siblings = siblings
        self.postings = postings
        self.culprits: CulpritPolicy = culprits or workspace.culprits
        self.ws = workspace
        self.max_commits = max_commits
        self.symbols = symbols
        self.conflict_depth = conflict_depth
        self.progress = progress
        self.applier = TrialApplier(workspace.repo)
        self._forks: dict[str, Oid | None] = {}
        self._words: dict[Oid, WordLookup] = {}  # branch tip -> which identifiers it has

    def effective_culprits(self) -> Literal["evidence", "always"]:
        """The culprit policy in force: `auto` is `evidence` in a project that tags fixes
        for stable and `always` in one that never does."""
        if self.culprits == "auto":
            return "evidence" if self.ws.index.has_stable_tags() else "always"
        return self.culprits

    def context(self, branch: Ref) -> Context:
        return Context(
            repo=self.ws.repo,
            index=self.ws.index,
            presence=self.ws.presence,
            applier=self.applier,
            upstream=self.ws.upstream,
            branch=branch,
            version=parse_version(branch.name),
            fork=self._fork(branch),
            words=self._word_lookup(branch.tip),
        )

    def _word_lookup(self, tip: Oid) -> WordLookup:
        if tip not in self._words:
            cache = self.ws.index.path.parent / "words"
            self._words[tip] = WordLookup(self.ws.repo, tip, SEARCHED, cache)
        return self._words[tip]

    def _fork(self, branch: Ref) -> Oid | None:
        """The branch's fork point from upstream (kept by the index; computed once otherwise)."""
        if branch.refname not in self._forks:
            stored = {r.refname: r for r in self.ws.index.refs()}.get(branch.refname)
            if stored is not None and stored.tip == branch.tip and stored.fork:
                self._forks[branch.refname] = stored.fork
            else:
                self._forks[branch.refname] = self.ws.repo.merge_base(
                    branch.tip, self.ws.upstream.tip
                )
        return self._forks[branch.refname]

    def resolve(self, target: Oid, branches: Sequence[Ref]) -> Report:
        reports = []
        for done, branch in enumerate(branches):
            self.progress(f"resolving on {branch.name}", done, len(branches))
            reports.append(self.resolve_branch(target, branch))
        self.progress("resolving", len(branches), len(branches))
        info = self.ws.index.info(target)
        subject = info.subject if info else self.ws.repo.message(target).split("\n", 1)[0]
        return Report(target, subject, tuple(reports))

    # -- one branch ------------------------------------------------------------------------

    def resolve_branch(self, target: Oid, branch: Ref) -> BranchReport:
        began = time.monotonic()
        report = self._resolve_branch(target, branch)
        _log.info(
            "resolved %s on %s: %s, %d to apply, %d present (%.1f s)",
            target[:12], branch.name, report.status, len(report.series), len(report.present),
            time.monotonic() - began,
        )  # fmt: skip
        return report

    def _resolve_branch(self, target: Oid, branch: Ref) -> BranchReport:
        ctx = self.context(branch)
        presence = ctx.presence.check(target, branch)
        closure = _Closure(ctx, target, presence.present, self.max_commits)
        warnings = closure.warnings
        if presence.reverted_in_branch:
            backport = (presence.as_commit or "?")[:12]
            undone = (presence.reverted_by or "?")[:12]
            warnings.append(
                f"{target[:12]} was backported as {backport} and reverted in the branch by {undone}"
            )

        reverter = effective_upstream_reverter(ctx, target)
        if reverter is not None and not presence.present:
            if target not in culprits(ctx, reverter):
                warnings.append(f"reverted upstream by {ctx.describe(reverter)}")
                return BranchReport(branch.name, "reverted-upstream", warnings=tuple(warnings))
            # The revert names the target in Fixes:: upstream declared it a follow-up, and
            # the stable process takes the pair wherever it takes the target.
            warnings.append(
                f"reverted upstream by {ctx.describe(reverter)}, which names it in Fixes:; "
                "the series applies the target and its revert (together a no-op): skip both "
                "unless the branch should follow upstream's history"
            )

        if not presence.present:
            closure.add(target, "target", None)
            named = culprits(ctx, target)
            if named and not self._culprits_needed(closure, target, named):
                listed = ", ".join(ctx.describe(c) for c in named)
                absent = " and ".join(c[:12] for c in closure.culprit_alternatives)
                return BranchReport(
                    branch.name,
                    "not-needed",
                    present=tuple(closure.present.values()),
                    warnings=(
                        *warnings,
                        f"none of its culprits is in the branch: {listed}; nothing says the "
                        "stable team wants them (no stable tag, no other stable branch took them)",
                    ),
                    alternative=(
                        f"apply {absent} first, then {target[:12]}, if the branch should have "
                        "what it fixes"
                    ),
                )
        else:
            closure.note_present(target)
            closure.pending.append(target)
            closure.adapted_pending.append(target)

        self._close(closure)
        return self._report(closure)

    def _culprits_needed(self, closure: _Closure, target: Oid, named: list[Oid]) -> bool:
        """Some culprit is present, or is absent with evidence that the stable team wants it:
        those join the series first, even when another culprit is present. Absent culprits
        without evidence are remembered for the alternative series."""
        ctx = closure.ctx
        needed = False
        for culprit in named:
            if ctx.is_present(culprit):
                closure.note_present(culprit)
                needed = True
            elif (evidence := self._wanted(ctx, culprit, 0)) is not None:
                reason = Reason(
                    "culprit",
                    f"{ctx.describe(target)} fixes it; the branch lacks it, and {evidence}",
                    target,
                )
                closure.add(culprit, "prerequisite", reason)
                if culprit in closure.graph and target in closure.graph:
                    closure.graph.add_dependency(target, culprit, reason)
                needed = True
            else:
                closure.culprit_alternatives.append(culprit)
        return needed

    def _wanted(self, ctx: Context, commit: Oid, depth: int) -> str | None:
        """Why an absent culprit belongs in the branch, or None without evidence: it fixes
        something the branch has, it is tagged for stable, another stable branch took it (as
        a backport or a Stable-dep-of:), or the repository's policy takes every culprit."""
        policy = self.effective_culprits()
        if policy == "always" and self.culprits == "always":
            return "the repository's policy (backportr.culprits=always) takes every culprit"
        if policy == "always":
            return (
                "the project never tags fixes for stable (no Cc: stable upstream), so the "
                "culprit of a fix the branch takes goes with it (backportr.culprits=auto)"
            )
        if depth > _CULPRIT_DEPTH:
            return None
        for culprit in culprits(ctx, commit):
            if ctx.is_present(culprit):
                return f"it fixes {ctx.describe(culprit)}, which the branch has"
            if self._wanted(ctx, culprit, depth + 1) is not None:
                return f"it fixes {ctx.describe(culprit)}, which the branch needs"
        for tag in ctx.index.stable_tags_of(commit):
            if not tag.noautosel and (ctx.version is None or tag.covers(ctx.version)):
                return "it is tagged for stable (Cc: stable)"
        elsewhere = ctx.index.backports_elsewhere(commit, ctx.branch.refname)
        if elsewhere:
            name, carrier = elsewhere[0]
            return f"{name} took it as {carrier[:12]}"
        for relation in ctx.index.stable_deps_naming(commit):
            branches = ", ".join(ctx.index.branches_of(relation.commit)) or "a stable branch"
            return f"{branches} took {relation.commit[:12]} as its Stable-dep-of:"
        return None

    def _adapted(self, closure: _Closure, commit: Oid, backport: Oid) -> None:
        """`commit` is in the branch as a backport that differs from upstream: find what it
        lacked, on the branch as it was just before that backport."""
        ctx = closure.ctx
        upstream_pid = ctx.index.patch_id(commit)
        if upstream_pid is not None and upstream_pid == ctx.index.patch_id(backport):
            return
        parents = ctx.repo.parents(backport)
        if not parents:
            return
        state = TreeState(parents[0])
        result = self.applier.pick(commit, state)
        if result.result != "conflict":
            return
        for finding in conflict_prerequisites(
            ctx,
            commit,
            state,
            result.conflict_files,
            lambda c: self._is_candidate(closure, c),
            closure.seq,
            kind="adapted",
        ):
            closure.link(finding, commit)

    def _close(self, closure: _Closure) -> None:
        finders: list[Finder] = [declared, recorded, follow_ups]
        if self.siblings != "none":
            finders.append(functools.partial(sibling_findings, policy=self.siblings))
        while True:
            while (
                closure.pending or closure.adapted_pending or closure.present_pending
            ) and not closure.capped:
                if closure.present_pending:
                    present = closure.present_pending.pop(0)
                    if present not in closure.visited:
                        closure.visited.add(present)
                        for finding in follow_ups(closure.ctx, present):
                            closure.link(finding, present)
                    continue
                if closure.adapted_pending:
                    present = closure.adapted_pending.pop(0)
                    if present not in closure.adapted_checked:
                        closure.adapted_checked.add(present)
                        carrier = closure.present[present]
                        if carrier.how != "ancestor" and carrier.as_commit:
                            self._adapted(closure, present, carrier.as_commit)
                    continue
                commit = closure.pending.pop(0)
                if commit in closure.visited:
                    continue
                closure.visited.add(commit)
                for finder in finders:
                    for finding in finder(closure.ctx, commit):
                        closure.link(finding, commit)
            if closure.capped or not self._trial_adds(closure):
                return

    def _trial_adds(self, closure: _Closure) -> bool:
        """Trial-apply the series; for the first member that conflicts, add what resolves it;
        for members that apply, add the commits that introduced symbols they use."""
        order, _ = closure.graph.order()
        state = TreeState(closure.ctx.branch.tip)
        before = len(closure.graph)
        for commit in order:
            result = self.applier.pick(commit, state)
            findings: list[Finding] = []
            scope = self._conflict_scope(closure, commit) if result.result == "conflict" else None
            if scope is not None:
                findings = conflict_prerequisites(
                    closure.ctx,
                    commit,
                    state,
                    result.conflict_files,
                    self._candidates(closure, commit, scope),
                    closure.seq,
                )
            if not findings and (
                result.result != "conflict"
                or (closure.target_present and closure.conflict_depth(commit) > 0)
            ):
                # What a member uses, it needs. A member that conflicts is adapted by a human,
                # who decides what it may use, except what an adapted backport already in
                # the branch lacks: there the missing commits are the answer.
                findings = self._symbol_findings(closure, commit, state)
            for finding in findings:
                closure.link(finding, commit)
            if len(closure.graph) > before or closure.pending:
                return True
            state = result.state
        return False

    def _symbol_findings(self, closure: _Closure, member: Oid, state: TreeState) -> list[Finding]:
        """Commits introducing identifiers `member` uses that the tree before it lacks."""
        if not self.symbols or member in closure.symbols_checked:
            return []
        closure.symbols_checked.add(member)
        return [
            f
            for f in symbol_prerequisites(
                closure.ctx,
                member,
                state,  # before the member: what it uses must already be there
                self._candidates(closure, member, "any"),
            )
            if not self._feature_to_adapt_instead(closure, member, f)
        ]

    def _candidates(
        self, closure: _Closure, member: Oid, scope: Literal["any", "series"]
    ) -> Callable[[Oid], bool]:
        """Which commits may be pulled in for `member`: absent upstream ones (or the target's
        own posting only)."""

        def candidate(commit: Oid) -> bool:
            return (
                commit != member
                and self._is_candidate(closure, commit)
                and (scope == "any" or self._same_series(closure, commit))
            )

        return candidate

    def _conflict_scope(self, closure: _Closure, commit: Oid) -> Literal["any", "series"] | None:
        """Where conflict prerequisites of a conflicting member are looked for: any absent
        upstream commit for the target and, up to the conflict depth, for the commits pulled
        in to make it apply; past that depth, only the target's own series (the same author's
        commits applied together with it: consecutive steps of one refactoring). A follow-up,
        a culprit or a declared prerequisite that conflicts gets no search: it is kept, marked
        `conflict`, for a human to adapt; pulling refactors for it is what maintainers never
        do (docs/accuracy.md)."""
        if commit == closure.target:
            return "any"
        depth = closure.conflict_depth(commit)
        if depth == 0:
            return None
        if depth < self.conflict_depth:
            return "any"
        if depth < _SERIES_DEPTH and self._same_series(closure, commit):
            return "series"
        return None

    def _same_series(self, closure: _Closure, commit: Oid) -> bool:
        """Same author as the target, committed upstream within hours of it: one posting."""
        ours = closure.ctx.index.info(commit)
        target = closure.ctx.index.info(closure.target)
        return (
            ours is not None
            and target is not None
            and ours.author_email == target.author_email
            and abs(ours.commit_time - target.commit_time) <= _SERIES_WINDOW
        )

    def _feature_to_adapt_instead(self, closure: _Closure, member: Oid, finding: Finding) -> bool:
        """Stable takes fixes: when the commit that introduced a missing identifier is a
        feature (no Fixes:, no stable tag) far larger than the member using it, or a rename
        (its changed lines differ from the old ones only in names), adapting the member is the
        maintainer's usual answer. Then the member needs a manual backport and the commit is
        shown as a suggestion instead of joining the series."""
        ctx = closure.ctx
        commit = finding.commit
        if commit in closure.graph or culprits(ctx, commit) or ctx.index.stable_tags_of(commit):
            return False
        removed, added = self.applier.changed_lines(commit)
        size = len(removed) + len(added)
        used_by = sum(map(len, self.applier.changed_lines(member)))
        if is_rename(removed, added):
            why = (
                f"it renames identifiers ({len(added)} lines changed, nearly all only in "
                f"names): adapt {member[:12]} to the old names, or take it"
            )
        elif size > _FEATURE_FACTOR * max(used_by, _FEATURE_FLOOR):
            why = (
                f"it is a feature of {size} changed lines for a change of {used_by}: "
                f"adapt {member[:12]} by hand, or take it"
            )
        else:
            return False
        closure.adapt[member] = Suggestion(
            commit,
            ctx.subject(commit),
            Reason("symbol", f"{finding.reason.detail}; {why}", member),
        )
        return True

    def _is_candidate(self, closure: _Closure, commit: Oid) -> bool:
        ctx = closure.ctx
        if commit == closure.target or not ctx.index.is_upstream(commit):
            return False
        if commit in closure.graph:
            return True
        return not ctx.is_present(commit)

    # -- the answer ------------------------------------------------------------------------

    def _prune_unhelpful(
        self, closure: _Closure, order: list[Oid], results: Sequence[PickResult]
    ) -> list[Suggestion]:
        """Commits pulled in only to make an absent target apply that conflict themselves
        did not make it apply; and when a member that must stay (the target, a follow-up)
        conflicts, the series needs a human anyway, who adapts it rather than take the
        refactors and helpers found by conflict or symbol search (measured:
        docs/accuracy.md). Those leave the series (with whatever is there only because of
        them) and are shown as suggestions; except the target's own posting (same author,
        applied together), which maintainers take together, and commits that are fixes
        themselves (a stable tag, or a `Fixes:` of a commit the branch has or the series
        brings)."""
        if closure.target_present:
            return []  # an adapted backport's missing members are the answer itself
        conflicting = {c for c, r in zip(order, results, strict=True) if r.result == "conflict"}
        helpers = {  # pulled in by a conflict or a symbol, not of the target's posting
            commit
            for commit in order
            if closure.roles[commit] == "prerequisite"
            and all(r.kind in ("conflict", "symbol") for r in closure.graph.reasons(commit))
            and not self._same_series(closure, commit)  # a posting is taken together
        }
        optional = {  # and not a fix the branch needs in its own right
            commit
            for commit in helpers
            if not self._fixes_here(closure, commit)
            and not closure.ctx.index.stable_tags_of(commit)
        }
        resolving = {  # pulled in only to resolve a conflict
            c for c in helpers if all(r.kind == "conflict" for r in closure.graph.reasons(c))
        }
        # They do not apply either: no help. A fix among them is a missing fix of its own (a
        # scan reports it), not a part of this series (measured: docs/accuracy.md).
        pruned = (optional | resolving) & conflicting
        if conflicting - optional:
            # A member that must stay conflicts: the series needs a human anyway, who adapts
            # it rather than take refactors and helpers for it (measured: docs/accuracy.md).
            pruned |= optional
        if not pruned:
            return []
        changed = True
        while changed:  # and what is there only because of a pruned member
            changed = False
            for commit in closure.graph.nodes():
                reasons = closure.graph.reasons(commit)
                if (
                    commit not in pruned
                    and commit != closure.target
                    and reasons
                    and all(r.related in pruned for r in reasons)
                ):
                    pruned.add(commit)
                    changed = True
        suggestions = []
        for commit in sorted(pruned, key=closure.seq):
            reason = closure.graph.reasons(commit)[0]
            user = reason.related
            if reason.kind == "symbol" and user is not None and user in closure.graph:
                # what uses its names now needs adapting by hand
                closure.adapt.setdefault(
                    user, Suggestion(commit, closure.ctx.subject(commit), reason)
                )
            suggestions.append(
                Suggestion(
                    commit,
                    closure.ctx.subject(commit),
                    Reason(
                        reason.kind,
                        f"{reason.detail}; the series needs a human anyway (a member "
                        "conflicts, or this commit does not apply either): adapt instead, "
                        "or take it",
                        reason.related,
                    ),
                )
            )
            closure.graph.remove(commit)
            closure.roles.pop(commit, None)
        return suggestions

    @staticmethod
    def _fixes_here(closure: _Closure, commit: Oid) -> bool:
        """A fix of something the branch has or the series brings; a fix of a commit the
        branch lacks is, for this branch, a helper like any other."""
        return any(
            closure.ctx.is_present(c) or closure.in_closure(c)
            for c in culprits(closure.ctx, commit)
        )

    def _report(self, closure: _Closure) -> BranchReport:
        ctx = closure.ctx
        order, cycle = closure.graph.order()
        results, _ = self.applier.pick_series(order, TreeState(ctx.branch.tip))
        unhelpful: list[Suggestion] = []
        # To a fixpoint: without a commit that did not apply, a member that applied thanks
        # to it may conflict now, and then the other helpers are no help either.
        while pruned := self._prune_unhelpful(closure, order, results):
            unhelpful += pruned  # the series changed: its order and trial too
            order, cycle = closure.graph.order()
            results, _ = self.applier.pick_series(order, TreeState(ctx.branch.tip))
        if cycle:
            closure.warnings.append("dependency cycle: upstream order used")
        members = []
        for commit, result in zip(order, results, strict=True):
            if result.result == "empty":
                closure.note_present(commit)
                closure.warnings.append(
                    f"{ctx.describe(commit)} applies as empty: its change is already there"
                )
                continue
            role = closure.roles[commit]
            reasons = closure.graph.reasons(commit)
            if role == "target":
                reasons = (Reason("target", "the commit asked for", None),)
            members.append(
                Member(
                    commit,
                    ctx.subject(commit),
                    role,
                    reasons,
                    result.result,
                    result.conflict_files,
                    posting_info(ctx, commit, set(order)) if self.postings else None,
                )
            )
        files = sorted({f.new_path for m in members for f in self.applier.changes(m.commit)})
        for member, suggestion in closure.adapt.items():
            closure.warnings.append(
                f"{ctx.describe(member)} uses identifiers the branch lacks, introduced by the "
                f"feature {suggestion.commit[:12]}: a manual backport is needed"
            )
        status = self._status(closure, members)
        alternative = self._alternative(closure, status, members)
        return BranchReport(
            branch=ctx.branch.name,
            status=status,
            series=tuple(members),
            present=tuple(p for c, p in closure.present.items() if c not in closure.graph),
            warnings=tuple(closure.warnings),
            suggestions=_once(
                (*closure.adapt.values(), *unhelpful, *self._suggestions(closure, members))
            ),
            files=tuple(files),
            alternative=alternative,
        )

    def _status(self, closure: _Closure, members: list[Member]) -> BranchStatus:
        if closure.target_present:
            return "incomplete" if members else "already-present"
        if not any(m.role == "target" for m in members):
            return "already-present"
        if any(m.apply == "conflict" or m.commit in closure.adapt for m in members):
            return "conflict"
        return "ready"

    def _alternative(
        self, closure: _Closure, status: BranchStatus, members: list[Member]
    ) -> str | None:
        """The other way out, as offered on the list in the IMA case: revert the backport of
        the culprit the target fixes; or, for an adapted backport whose missing members do not
        apply on top of it, revert it and apply the upstream series with the target."""
        ctx = closure.ctx
        if status == "incomplete" and any(m.apply == "conflict" for m in members):
            carrier = closure.present.get(closure.target)
            if carrier and carrier.how != "ancestor" and carrier.as_commit:
                return (
                    f"revert {carrier.as_commit[:12]} (the adapted backport of "
                    f"{closure.target[:12]}), then apply the missing commits and "
                    f"{closure.target[:12]} itself as upstream has them"
                )
            return None
        if status not in ("ready", "conflict"):
            return None
        for culprit in culprits(ctx, closure.target):
            p = ctx.presence.check(culprit, ctx.branch)
            if p.present and p.how != "ancestor" and p.as_commit:
                return (
                    f"revert {p.as_commit[:12]} (the backport of {ctx.describe(culprit)}, "
                    "which this target fixes) instead of applying the series"
                )
        return None

    def _suggestions(self, closure: _Closure, members: list[Member]) -> list[Suggestion]:
        """Commits that changed the logic around members' changes: for a human to judge."""
        if not self.suggest:
            return []
        out: list[Suggestion] = []
        seen: set[Oid] = set()
        for member in members:
            if member.apply == "conflict":
                continue  # its conflict already says more
            for suggestion in context_suggestions(
                closure.ctx,
                member.commit,
                lambda c: c not in closure.graph and self._is_candidate(closure, c),
            ):
                if suggestion.commit not in seen:
                    seen.add(suggestion.commit)
                    out.append(suggestion)
        return out
