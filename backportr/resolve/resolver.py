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
import time
from collections.abc import Callable, Sequence
from typing import Literal

from backportr.git.names import Ref
from backportr.git.trial import PickResult, TreeState, TrialApplier
from backportr.model import (
    BranchReport,
    CulpritPolicy,
    Member,
    Oid,
    ProgressCallback,
    Reason,
    Report,
    SiblingsPolicy,
    Suggestion,
    no_progress,
    short,
)
from backportr.resolve.closure import Closure, once
from backportr.resolve.cosmetic import CosmeticFollowUps
from backportr.resolve.elsewhere import with_elsewhere
from backportr.resolve.finders import Context, Finding
from backportr.resolve.finders.conflicts import conflict_prerequisites, possible_dependencies
from backportr.resolve.finders.context import context_suggestions
from backportr.resolve.finders.declared import declared, recorded
from backportr.resolve.finders.fixes import (
    culprits,
    effective_upstream_reverter,
    follow_ups,
    stable_evidence,
)
from backportr.resolve.finders.siblings import between, posting_info, sibling_findings
from backportr.resolve.finders.symbols import SEARCHED, symbol_prerequisites
from backportr.resolve.finders.words import FileIdentifiers, WordLookup
from backportr.resolve.handmade import HandAdaptedFiles
from backportr.resolve.rules import (
    batch_taken,
    branch_status,
    cancel_reverted_pairs,
    feature_to_adapt_instead,
    hanging_on,
    leave,
    never_had,
    only_a_follow_up,
    other_way_out,
    prune_unhelpful,
)
from backportr.resolve.workspace import Workspace
from backportr.settings import DEFAULT_CONFLICT_DEPTH
from backportr.text.trailers import parse_version

_log = logging.getLogger("backportr")

Finder = Callable[[Context, Oid], list[Finding]]
Scope = Literal["any", "series", "author", "batch"]
_SERIES_DEPTH = 8
"""Past the conflict depth (`DEFAULT_CONFLICT_DEPTH` levels, the second retained only when the
series then applies), a commit pulled in that conflicts itself is searched further only
within the target's own posting, or, for a commit of the target's author, among that
author's commits (retained only when the series then applies), up to this many levels:
elsewhere the branch has diverged and the backport needs a human (measured on real
history: docs/rules.md)."""


class _DeeperInVain(Exception):
    """A search past the first conflict level left a member conflicting with nothing found
    that makes it apply: the series will need a human, so that search is not retained."""

    def __init__(self, closure: Closure) -> None:
        super().__init__(closure.target)
        self.closure = closure


class Resolver:
    """Resolves targets against branches of one workspace; shares work between branches."""

    def __init__(
        self,
        workspace: Workspace,
        *,
        max_commits: int | None = None,
        symbols: bool = True,
        conflict_depth: int = DEFAULT_CONFLICT_DEPTH,
        culprits: CulpritPolicy | None = None,
        suggest: bool = True,
        siblings: SiblingsPolicy = "none",
        postings: bool = True,
        progress: ProgressCallback = no_progress,
        many: bool = False,
    ) -> None:
        """`siblings`: which absent patches of a member's posting join the series;
        `postings`: show each member's posting and its siblings' state (a scan needs
        neither); `many`: many targets are coming (a scan), the caches sized for them."""
        self.many = many
        self.suggest = suggest
        self.siblings = siblings
        self.postings = postings
        self.culprits: CulpritPolicy = culprits or workspace.culprits
        self.ws = workspace
        self.max_commits = max_commits or workspace.max_commits
        self.symbols = symbols
        self.conflict_depth = conflict_depth
        self.progress = progress
        self.applier = TrialApplier(workspace.repo)
        self._forks: dict[str, Oid | None] = {}
        self._words: dict[Oid, WordLookup] = {}  # branch tip -> which identifiers it has
        self._file_words = FileIdentifiers()
        self.handmade = HandAdaptedFiles(workspace.index, workspace.repo)
        self.cosmetic = CosmeticFollowUps(workspace.index, workspace.repo)

    def effective_culprits(self) -> Literal["evidence", "always"]:
        """The culprit policy in force: `auto` is `evidence` in a project that tags fixes
        for stable and `always` in one that never does."""
        if self.culprits == "auto":
            return "evidence" if self.ws.index.facts.has_stable_tags() else "always"
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
            file_words=self._file_words,
        )

    def _word_lookup(self, tip: Oid) -> WordLookup:
        if tip not in self._words:
            cache = self.ws.index.path.parent / "words"
            self._words[tip] = WordLookup(self.ws.repo, tip, SEARCHED, cache, eager=self.many)
        return self._words[tip]

    def _fork(self, branch: Ref) -> Oid | None:
        """The branch's fork point from upstream (stored by the index; computed once otherwise)."""
        if branch.refname not in self._forks:
            stored = {r.refname: r for r in self.ws.index.reader.refs()}.get(branch.refname)
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
        subject = self.ws.index.reader.subject(target, self.ws.repo)
        return Report(target, subject, tuple(reports))

    # -- one branch ------------------------------------------------------------------------

    def resolve_branch(self, target: Oid, branch: Ref) -> BranchReport:
        """The series for `target` on `branch`. A search past the first level of conflict
        prerequisites (a helper that conflicts itself, and the commits that make it apply),
        or past the conflict depth among the target's author's commits, is retained only when it
        leaves no member conflicting: a series that still needs a human is adapted by them,
        who take the first level's helpers at most (measured on real history:
        docs/rules.md); the answer is then the first level's."""
        began = time.monotonic()
        report, closure = self._attempt(target, branch, self.conflict_depth, True)
        if report is None and closure.authors_searched:
            report, closure = self._attempt(target, branch, self.conflict_depth, False)
        if report is None:
            report, _ = self._resolve_branch(target, branch, min(self.conflict_depth, 1), False)
        report = with_elsewhere(report, target, self.other_lines(branch), self.ws.presence)
        _log.info(
            "resolved %s on %s: %s, %d to apply, %d present (%.1f s)",
            short(target), branch.name, report.status, len(report.series), len(report.present),
            time.monotonic() - began,
        )  # fmt: skip
        return report

    def other_lines(self, branch: Ref) -> list[Ref]:
        """The other indexed stable branches, their answers evidence (`elsewhere`): not one
        of the same fork, which is this line at another state (`v5.10.194` and
        `linux-5.10.y`), not another team's decision."""
        skip = (branch.refname, self.ws.upstream.refname)
        fork = self._fork(branch)
        return [
            r for r in self.ws.indexed if r.refname not in skip and r.tip and self._fork(r) != fork
        ]

    def _attempt(
        self, target: Oid, branch: Ref, depth: int, authors: bool
    ) -> tuple[BranchReport | None, Closure]:
        """One attempt, or no report when its search past the first level left a member
        conflicting (that search is not retained)."""
        try:
            report, closure = self._resolve_branch(target, branch, depth, authors)
        except _DeeperInVain as vain:
            return None, vain.closure
        if closure.went_deeper and any(m.apply == "conflict" for m in report.series):
            return None, closure
        return report, closure

    def _resolve_branch(
        self, target: Oid, branch: Ref, depth: int, authors: bool
    ) -> tuple[BranchReport, Closure]:
        """One attempt, with conflict prerequisites searched `depth` levels deep (and, with
        `authors`, past that depth among the target's author's commits)."""
        ctx = self.context(branch)
        presence = ctx.presence.check(target, branch)
        closure = Closure(
            ctx, target, presence.present, self.max_commits, depth=depth, authors=authors
        )
        warnings = closure.warnings
        if presence.reverted_in_branch:
            backport = short(presence.as_commit or "?")
            undone = short(presence.reverted_by or "?")
            warnings.append(
                f"{short(target)} was backported as {backport} and reverted in the branch "
                f"by {undone}"
            )

        reverter = effective_upstream_reverter(ctx, target)
        if reverter is not None and not presence.present:
            if target not in culprits(ctx, reverter):
                warnings.append(f"reverted upstream by {ctx.describe(reverter)}")
                report = BranchReport(branch.name, "reverted-upstream", warnings=tuple(warnings))
                return report, closure
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
                absent = " and ".join(short(c) for c in closure.culprit_alternatives)
                report = BranchReport(
                    branch.name,
                    "not-needed",
                    present=tuple(closure.present.values()),
                    warnings=(
                        *warnings,
                        f"none of its culprits is in the branch: {listed}; nothing says the "
                        "stable team wants them (no stable tag, no other stable branch took them)",
                    ),
                    alternative=(
                        f"apply {absent} first, then {short(target)}, if the branch should have "
                        "what it fixes"
                    ),
                )
                return report, closure
        else:
            closure.note_present(target)
            closure.explore(target)

        self._close(closure)
        return self._report(closure), closure

    def _culprits_needed(self, closure: Closure, target: Oid, named: list[Oid]) -> bool:
        """Some culprit is present, or is absent with evidence that the stable team wants it:
        those join the series first, even when another culprit is present. Absent culprits
        without evidence are remembered for the alternative series."""
        ctx = closure.ctx
        needed = False
        for culprit in named:
            if ctx.is_present(culprit):
                closure.note_present(culprit)
                needed = True
            elif (evidence := self._wanted(ctx, culprit)) is not None:
                reason = Reason(
                    "culprit",
                    f"{ctx.describe(target)} fixes it; the branch lacks it, and {evidence}",
                    target,
                )
                closure.add(culprit, "prerequisite", reason)
                if culprit in closure.graph and target in closure.graph:
                    closure.depend(target, culprit, reason)
                needed = True
            else:
                closure.alternative_culprit(culprit)
        return needed

    def _wanted(self, ctx: Context, commit: Oid) -> str | None:
        """Why an absent culprit belongs in the branch, or None without evidence: it fixes
        something the branch has, it is tagged for stable, another stable branch took it (as
        a backport or a Stable-dep-of:), or the repository's policy takes every culprit. By
        `auto`, a culprit that is itself a fix, of commits the branch neither has nor wants,
        is no change to bring for its fix: what it fixes was never there."""
        policy = self.effective_culprits()
        if policy == "always" and self.culprits == "always":
            return "the repository's policy (backportr.culprits=always) takes every culprit"
        if policy == "always":
            if culprits(ctx, commit):
                return stable_evidence(ctx, commit)
            return (
                "the project does not tag fixes for stable (hardly a Cc: stable upstream), so the "
                "culprit of a fix the branch takes goes with it (backportr.culprits=auto)"
            )
        return stable_evidence(ctx, commit)

    def _adapted(self, closure: Closure, commit: Oid, backport: Oid) -> None:
        """`commit` is in the branch as a backport that differs from upstream: find what it
        lacked, on the branch as it was just before that backport."""
        ctx = closure.ctx
        upstream_pid = ctx.index.patch_ids.patch_id(commit)
        if upstream_pid is not None and upstream_pid == ctx.index.patch_ids.patch_id(backport):
            return
        known = ctx.index.cache.adapted_conflicts(commit, backport)  # cached by a scan or a resolve
        if known is False:
            return
        parents = ctx.repo.parents(backport)
        if not parents:
            return
        state = TreeState(parents[0])
        result = self.applier.pick(commit, state)
        if known is None:
            ctx.index.cache.cache_adapted_conflicts(commit, backport, result.result == "conflict")
        if result.result != "conflict":
            return
        searched = self._searched(closure, commit, result.conflict_sources)
        if not searched:
            return  # adapted only where the branch adapts every backport by hand
        for finding in conflict_prerequisites(
            ctx,
            commit,
            state,
            searched,
            lambda c: closure.is_candidate(c),
            closure.seq,
            kind="adapted",
        ):
            closure.link(finding, commit)

    def _close(self, closure: Closure) -> None:
        finders: list[Finder] = [declared, recorded, follow_ups]
        if self.siblings != "none":
            finders.append(functools.partial(sibling_findings, policy=self.siblings))
        while True:
            while (step := closure.next_step()) is not None:
                how, commit = step
                if how == "present":
                    for finding in follow_ups(closure.ctx, commit):
                        closure.link(finding, commit)
                elif how == "adapted":
                    carrier = closure.present[commit]
                    if carrier.how != "ancestor" and carrier.as_commit:
                        self._adapted(closure, commit, carrier.as_commit)
                else:
                    for finder in finders:
                        for finding in finder(closure.ctx, commit):
                            closure.link(finding, commit)
            if closure.capped:
                return
            if not self._trial_adds(closure) and not self._fill_posting(closure):
                return

    def _fill_posting(self, closure: Closure) -> bool:
        """Once the series is found: when it takes an earlier patch of the target's own
        posting because the target does not apply without it (a conflict prerequisite: the
        target builds on it), the posting's patches between that one and the target that
        change the target's files join it (measured on real history: docs/rules.md)."""
        target = closure.target
        if closure.target_present or not closure.first_posting_fill():
            return False
        earlier = [
            c
            for c in closure.graph.nodes()
            if c != target
            and closure.seq(c) < closure.seq(target)
            and closure.same_series(c)
            and all(r.kind == "conflict" for r in closure.graph.reasons(c))
        ]
        if not earlier:
            return False
        first = min(earlier, key=closure.seq)
        before = len(closure.graph)
        for finding in between(
            closure.ctx,
            target,
            first,
            lambda c: c not in closure.graph and closure.is_candidate(c) and closure.same_series(c),
        ):
            closure.link(finding, target)
        return len(closure.graph) > before

    def _trial_adds(self, closure: Closure) -> bool:
        """Trial-apply the series; for the first member that conflicts, add what resolves it;
        for members that apply, add the commits that introduced symbols they use."""
        order, _ = closure.graph.order()
        state = TreeState(closure.ctx.branch.tip)
        before = len(closure.graph)
        for commit in order:
            result = self.applier.pick(commit, state)
            findings: list[Finding] = []
            scope = self._conflict_scope(closure, commit) if result.result == "conflict" else None
            searched = self._searched(closure, commit, result.conflict_sources)
            if scope is not None and searched:
                findings = conflict_prerequisites(
                    closure.ctx,
                    commit,
                    state,
                    searched,
                    self._candidates(closure, commit, scope),
                    closure.seq,
                    series=scope in ("series", "batch"),
                    manuals=commit == closure.target,
                )
            if result.result == "conflict" and not findings and closure.went_deeper:
                # The series will need a human: the search past the first level is in vain,
                # and the first level's answer stands (`resolve_branch`).
                raise _DeeperInVain(closure)
            if not findings and (
                result.result != "conflict"
                or (closure.target_present and closure.conflict_depth(commit) > 0)
            ):
                # What a member uses, it needs. A member that conflicts is adapted by a human,
                # who decides what it may use, except what an adapted backport already in
                # the branch lacks: there the missing commits are the answer.
                findings = self._symbol_findings(closure, commit, state)
            elif result.result == "conflict" and not findings and commit == closure.target:
                self._needs_of_conflicting(closure, commit, state)
            for finding in findings:
                closure.link(finding, commit)
            if len(closure.graph) > before or closure.pending:
                return True
            state = result.state
        return False

    def _searched(self, closure: Closure, commit: Oid, sources: tuple[str, ...]) -> tuple[str, ...]:
        """The conflicting files prerequisites are looked for in: all but those the branch's
        backports adapt by hand (`handmade`) where the member only adds lines (its conflict
        there is other context), which are said once in a warning. A line it changes or
        removes there came from somewhere: that commit is looked for as anywhere else (a
        version bump after the bump before it)."""
        branch = closure.ctx.branch
        by_hand = [f for f in sources if self.handmade.covers(branch, f)]
        if by_hand:
            changed = {
                path
                for change in closure.ctx.repo.diffs.diff(commit)
                if any(hunk.removed() for hunk in change.hunks)
                for path in (change.old_path, change.new_path, change.named)
            }
            by_hand = [f for f in by_hand if f not in changed]
        if by_hand:
            line = (
                f"{closure.ctx.describe(commit)} conflicts in {', '.join(by_hand)}, which this "
                "branch's backports adapt by hand: adapt it there (no prerequisite looked for)"
            )
            closure.warn(line, once=True)
        return tuple(f for f in sources if f not in by_hand)

    def _symbol_findings(self, closure: Closure, member: Oid, state: TreeState) -> list[Finding]:
        """Commits introducing identifiers `member` uses that the tree before it lacks."""
        if not self.symbols or not closure.first_symbol_check(member):
            return []
        return [
            f
            for f in symbol_prerequisites(
                closure.ctx,
                member,
                state,  # before the member: what it uses must already be there
                self._candidates(closure, member, "any"),
            )
            if not feature_to_adapt_instead(closure, self.applier, member, f)
        ]

    def _needs_of_conflicting(self, closure: Closure, member: Oid, state: TreeState) -> None:
        """The identifiers a conflicting target uses that the branch lacks: a human adapts
        it, and needs them (or a replacement) either way; the answer keeps them as
        suggestions, each named on the target (`BranchReport.needs`)."""
        if not self.symbols or member in closure.conflict_needs:
            return
        closure.needs(
            member,
            [
                Suggestion(
                    f.commit,
                    closure.ctx.subject(f.commit),
                    Reason(
                        "symbol",
                        f"{f.reason.detail}; it conflicts: whoever adapts it needs this "
                        "commit too, or a replacement",
                        member,
                    ),
                )
                for f in symbol_prerequisites(
                    closure.ctx, member, state, self._candidates(closure, member, "any")
                )
            ],
        )

    def _candidates(self, closure: Closure, member: Oid, scope: Scope) -> Callable[[Oid], bool]:
        """Which commits may be pulled in for `member`: absent upstream ones (or the target's
        own posting only, or the target's author's commits only)."""
        within = {
            "any": None,
            "series": closure.same_series,
            "author": closure.same_author,
            "batch": lambda c: closure.same_batch(c, member),
        }[scope]

        def candidate(commit: Oid) -> bool:
            return (
                commit != member
                and closure.is_candidate(commit)
                and (within is None or within(commit))
            )

        return candidate

    def _conflict_scope(self, closure: Closure, commit: Oid) -> Scope | None:
        """Where conflict prerequisites of a conflicting member are looked for: any absent
        upstream commit for the target and, up to the conflict depth, for the commits pulled
        in to make it apply; past that depth, only the target's own series (the same author's
        commits applied together with it: consecutive steps of one refactoring), and for a
        commit of the target's author, that author's commits (their earlier postings build on
        each other too), a search retained only when the series then applies. A follow-up,
        a culprit or a declared prerequisite that conflicts gets no search: it is retained, marked
        `conflict`, for a human to adapt; pulling refactors for it is what maintainers never
        do (docs/rules.md)."""
        if closure.depth == 0:
            return None  # --conflict-depth 0: never looked for
        if commit == closure.target:
            return "any"
        depth = closure.conflict_depth(commit)
        if depth == 0:
            return None
        if depth < closure.depth:
            closure.searched_deeper()
            return "any"
        if depth < _SERIES_DEPTH and closure.same_series(commit):
            return "series"
        if depth < _SERIES_DEPTH and closure.authors and closure.same_author(commit):
            closure.searched_deeper(by_author=True)
            return "author"
        helped = closure.graph.reasons(commit)[0].related
        if (
            depth < _SERIES_DEPTH
            and helped is not None
            and closure.same_batch(commit, helped)
            and closure.near_target(commit)
        ):
            # a step of another author's series pulled in for its next step: the earlier
            # steps of that upstream batch, retained only when the series then applies
            closure.searched_deeper()
            return "batch"
        return None

    # -- the answer ------------------------------------------------------------------------

    def _report(self, closure: Closure) -> BranchReport:
        ctx = closure.ctx
        for line in cancel_reverted_pairs(closure):
            closure.warn(line)

        def trial() -> tuple[list[Oid], bool, list[PickResult]]:
            """The series in order and its trial, again after members left it."""
            order, cycle = closure.graph.order()
            return order, cycle, self.applier.pick_series(order, TreeState(ctx.branch.tip))[0]

        order, cycle, results = trial()
        unhelpful: list[Suggestion] = []
        # To a fixpoint: without a commit that did not apply, a member that applied thanks
        # to it may conflict now, and then the other helpers are no help either.
        while pruned := prune_unhelpful(closure, order, results):
            unhelpful += pruned  # the series changed: its order and trial too
            order, cycle, results = trial()
        if all(r.result != "conflict" for r in results):
            while proven := self._unproven(closure, order):
                unhelpful += proven
                order, cycle, results = trial()
        while gone := never_had(closure, order, results, self.applier) or self._cosmetic(
            closure, order
        ):
            unhelpful += gone
            order, cycle, results = trial()
        if cycle:
            closure.warn("dependency cycle: upstream order used")
        members = []
        for commit, result in zip(order, results, strict=True):
            if result.result == "empty":
                closure.note_present(commit)
                closure.warn(
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
            closure.warn(
                f"{ctx.describe(member)} uses identifiers the branch lacks, introduced by the "
                f"feature {short(suggestion.commit)}: a manual backport is needed"
            )
        status = branch_status(closure, members)
        alternative = other_way_out(closure, status, members)
        return BranchReport(
            branch=ctx.branch.name,
            status=status,
            series=tuple(members),
            present=tuple(p for c, p in closure.present.items() if c not in closure.graph),
            warnings=tuple(closure.warnings),
            suggestions=once(
                (
                    *closure.adapt.values(),
                    *(
                        s
                        for m in members
                        if m.apply == "conflict"
                        for s in closure.conflict_needs.get(m.commit, ())
                    ),
                    *unhelpful,
                    *self._suggestions(
                        closure,
                        members,
                        {c: r.conflict_sources for c, r in zip(order, results, strict=True)},
                        {s.reason.related for s in (*closure.adapt.values(), *unhelpful)},
                    ),
                )
            ),
            files=tuple(files),
            alternative=alternative,
        )

    def _unproven(self, closure: Closure, order: list[Oid]) -> list[Suggestion]:
        """Minimal by proof: a series that applies keeps a commit found only to resolve a
        conflict while a trial without it (and what is there only because of it) conflicts
        or lacks an identifier a member uses; the first, newest first, that the rest does
        without leaves, as a suggestion saying so. A later member (a follow-up, a deeper
        helper, a posting's patch) can make an earlier helper needless. The target's own
        posting and the steps of a batch are taken together, and stay."""
        if closure.target_present:
            return []
        tip = TreeState(closure.ctx.branch.tip)
        for helper in sorted(order, key=closure.seq, reverse=True):
            reasons = closure.graph.reasons(helper)
            if (
                closure.roles[helper] != "prerequisite"
                or not reasons
                or any(r.kind != "conflict" for r in reasons)
                or closure.same_series(helper)
                or batch_taken(closure, helper)
            ):
                continue
            leaving = {helper} | hanging_on(closure, {helper})
            rest = [c for c in order if c not in leaving]
            results, _ = self.applier.pick_series(rest, tip)
            if any(r.result == "conflict" for r in results) or self._lacks_symbols(
                closure, rest, results, tip, leaving
            ):
                continue
            why = "the series applies without it (a trial), and finds every name it uses"
            return leave(closure, leaving, why)
        return []

    def _cosmetic(self, closure: Closure, order: list[Oid]) -> list[Suggestion]:
        """A follow-up that changes only comments and documentation, on a branch whose
        history says it leaves such follow-ups (`resolve/cosmetic.py`), is optional: it
        leaves the series (with what is there only because of it) as a suggestion; the
        first such, in series order."""
        branch = closure.ctx.branch
        for commit in order:
            if not only_a_follow_up(closure, commit) or not self.cosmetic.is_cosmetic(commit):
                continue
            practice = self.cosmetic.practice(branch)
            if not practice.leaves_them:
                return []
            why = (
                f"it changes only comments or documentation, and {branch.name} took "
                f"{practice.taken} of the {practice.seen} such follow-ups it met: optional"
            )
            return leave(closure, {commit} | hanging_on(closure, {commit}), why)
        return []

    def _lacks_symbols(
        self,
        closure: Closure,
        order: list[Oid],
        results: list[PickResult],
        tip: TreeState,
        leaving: set[Oid],
    ) -> bool:
        """Does a member of the trial use an identifier one of the commits `leaving`
        introduced (the tree before it lacks it without them)?"""
        if not self.symbols:
            return False
        state = tip
        for commit, result in zip(order, results, strict=True):
            found = symbol_prerequisites(
                closure.ctx, commit, state, self._candidates(closure, commit, "any")
            )
            if any(f.commit in leaving for f in found):
                return True
            state = result.state
        return False

    def _suggestions(
        self,
        closure: Closure,
        members: list[Member],
        sources: dict[Oid, tuple[str, ...]],
        explained: set[Oid | None],
    ) -> list[Suggestion]:
        """For a human to judge: for a member that conflicts with no suggestion about it
        yet (`explained`), the absent commits that last changed the lines it conflicts on
        (`sources`: its conflicting files at the upstream paths); for a member that applies,
        commits that changed the logic around its change."""
        if not self.suggest:
            return []
        out: list[Suggestion] = []
        seen: set[Oid] = set()

        def candidate(commit: Oid) -> bool:
            return commit not in closure.graph and closure.is_candidate(commit)

        for member in members:
            if member.apply == "conflict":
                searched = self._searched(closure, member.commit, sources[member.commit])
                if member.commit not in explained and searched:
                    out += possible_dependencies(
                        closure.ctx, member.commit, searched, candidate, closure.seq
                    )
                continue
            for suggestion in context_suggestions(closure.ctx, member.commit, candidate):
                if suggestion.commit not in seen:
                    seen.add(suggestion.commit)
                    out.append(suggestion)
        return out
