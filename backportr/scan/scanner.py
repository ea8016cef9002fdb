"""Scheduled scans: what each stable branch is missing, and which backports are incomplete.

Findings per branch:
- `missing-fix`: an upstream commit X in the scanned range whose `Fixes:` culprit is in the
  branch (directly or as a backport), X absent and not reverted upstream;
- `incomplete-backport`: a backport in the branch whose closure needs members the branch
  lacks (the follow-ups of it or of what it needed; an adapted backport's prerequisites);
- `reverted-upstream`: a backport whose upstream original was reverted upstream, the revert
  absent from the branch;
- `dropped`: a missing fix the stable queue dropped on purpose (reported as such).
Policy: an ignore list of path globs, the stable queue's dropped list (`<X.Y> <40 hex>`), and
`Cc: stable # X.Y+` floors. Every lookup goes through the index; each candidate is resolved
with the same Resolver the CLI uses. A failing target is recorded and the scan goes on.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Literal

from backportr import __version__
from backportr.errors import BackportrError
from backportr.git.names import Ref
from backportr.git.repo import GitError, git_error_text
from backportr.git.trial import TreeState
from backportr.index import Relation
from backportr.index.cache import result_key
from backportr.model import (
    Member,
    Oid,
    ProgressCallback,
    Reason,
    no_progress,
    short,
)
from backportr.resolve.finders import Finding
from backportr.resolve.finders.declared import declared, recorded
from backportr.resolve.finders.fixes import effective_upstream_reverter, fixed_by
from backportr.resolve.resolver import Resolver
from backportr.resolve.workspace import Workspace
from backportr.scan.answers import Answers
from backportr.scan.findings import (
    BranchScan,
    Policy,
    ScanFinding,
    finding_from_json,
    finding_to_json,
    prioritize,
)
from backportr.scan.witnesses import Witnessed, Witnesses, related_of
from backportr.text.relation_forms import cited
from backportr.text.trailers import parse_version

_log = logging.getLogger("backportr")

FINDINGS_HELD = 256
"""Targets' findings cached together, one transaction each (at kernel scale a transaction per
target cost 2-6 s of 30,000)."""

_LookedUp = tuple[list[Oid], list[tuple[Oid, Oid]], list[str], list[str], dict[str, str]]
"""A branch's fixes and backports, their keys and the findings cached under them."""


def log_scanned(result: BranchScan) -> None:
    _log.info(
        "scanned %s: %d targets, %d resolved anew, %d answers of an earlier run cached, "
        "%d findings of an earlier scan cached",
        result.branch, result.scanned, result.resolved, result.reused, result.cached,
    )  # fmt: skip


class Scanner:
    """Scans branches of one workspace."""

    def __init__(
        self,
        ws: Workspace,
        policy: Policy,
        *,
        progress: ProgressCallback = no_progress,
        staged: bool = True,
        on_settled: Callable[[ScanFinding], None] | None = None,
    ) -> None:
        self.staged = staged  # False: resolve every backport in full (the reference)
        self.on_settled = on_settled  # each finding as soon as nothing later can change it
        self.ws = ws
        self.policy = policy
        self.progress = progress
        self.resolver = Resolver(  # the closure's cap and culprit policy: the workspace's settings
            ws,
            suggest=False,
            postings=False,
            many=True,
            conflict_depth=policy.conflict_depth,
        )
        self.answers = Answers(ws, self.resolver)  # cached in the index, reused when they hold
        self.witnesses = Witnesses(ws)
        self._states: dict[str, str] = {}  # `_state` of each branch, made once
        self._found: list[tuple[str, str, str, str]] = []  # findings not yet cached (`_guard`)
        # what `unanswered` looked up for a branch's targets, for the scan of them after it
        self._looked_up: dict[str, _LookedUp] = {}
        ws.search_for_a_scan(lambda: progress("reading the history since the fork", 0, None))

    def targets(
        self, branch: Ref, candidates: list[Oid] | None = None
    ) -> tuple[list[Oid], list[tuple[Oid, Oid]]]:
        """What a scan of the branch looks at: fixes to check, backports to check. With
        `candidates` (`--since`, `--range`), only the fixes among them and the backports of
        them: the work is bounded by the range."""
        fixes = self._fix_candidates(branch, candidates)
        backports = self._backports(branch)
        backports += self._unannotated(branch, fixes, backports)
        if candidates is not None:
            wanted = set(candidates)
            backports = [(c, u) for c, u in backports if u in wanted]
        return fixes, backports

    def scan(
        self,
        branch: Ref,
        candidates: list[Oid] | None = None,
        *,
        targets: tuple[list[Oid], list[tuple[Oid, Oid]]] | None = None,
    ) -> BranchScan:
        """All findings for one branch; `candidates` limits the upstream commits considered
        for missing fixes (default: every upstream commit after the branch's fork); `targets`
        gives the exact share of work (a worker's slice under --jobs)."""
        result = BranchScan(
            branch.name, tip=branch.tip, upstream=self.ws.upstream.name,
            upstream_tip=self.ws.upstream.tip,
        )  # fmt: skip
        fixes, backports = targets if targets is not None else self.targets(branch, candidates)
        fix_keys, backport_keys, cached = self._stage1(branch, fixes, backports)
        total = len(fixes) + len(backports)
        self.answers.count_from_zero()
        try:
            for done, (commit, fix_key) in enumerate(zip(fixes, fix_keys, strict=True), 1):
                self.progress(f"scanning {branch.name}", done, total)
                work = functools.partial(self._missing_fix, branch, commit, result)
                self._guard(result, fix_key, cached.get(fix_key), commit, work)
            for done, ((carrier, upstream), backport_key) in enumerate(
                zip(backports, backport_keys, strict=True), len(fixes) + 1
            ):
                self.progress(f"scanning {branch.name}", done, total)
                work = functools.partial(self._backport, branch, carrier, upstream, result)
                self._guard(result, backport_key, cached.get(backport_key), upstream, work)
        except BaseException:
            self.answers.drop_held()  # not cached: the next run resolves them again
            self._found.clear()
            raise
        if self.policy.detect:
            self._witness_detected(branch, result)
            self._settled(result.findings)
        self.answers.cache()
        self._cache_found()
        result.scanned = total
        result.resolved, result.reused = self.answers.resolved, self.answers.reused
        if targets is None:  # a whole branch (a share of one is told by its merger)
            log_scanned(result)
        result.findings = prioritize(result.findings, self.policy.untagged)
        return result

    def prepare_share(self, branch: Ref, targets: tuple[list[Oid], list[tuple[Oid, Oid]]]) -> None:
        """Stage 1's bulk work for the targets of a share that no earlier run answered, at
        once (a process of --jobs scans its share in chunks: one git pipeline, not one per
        chunk); `scan` then finds it done."""
        if self.staged:
            self._stage1(branch, *targets)

    def unanswered(self, branch: Ref, fixes: list[Oid], backports: list[tuple[Oid, Oid]]) -> int:
        """How many of the targets no earlier run's cached answer covers: the scan's work (a
        warm rescan has none)."""
        fix_keys, backport_keys = self._target_keys(branch, fixes, backports)
        cached = self.ws.index.cache.cached_findings([*fix_keys, *backport_keys])
        self._looked_up[branch.name] = (fixes, backports, fix_keys, backport_keys, cached)
        return len(fix_keys) + len(backport_keys) - len(cached)

    def forget_other_states(self) -> None:
        """Forget the findings cached for each branch of the workspace in another state (its
        tip, upstream's or a sibling's moved, another version): no key of this scan can
        name them."""
        for branch in self.ws.branches:
            self.ws.index.cache.forget_findings(branch.name, self._state(branch.name))

    def _target_keys(
        self, branch: Ref, fixes: list[Oid], backports: list[tuple[Oid, Oid]]
    ) -> tuple[list[str], list[str]]:
        key = self._keys(branch.name)
        return [key("fix", c) for c in fixes], [key("backport", u) for _, u in backports]

    def _stage1(
        self, branch: Ref, fixes: list[Oid], backports: list[tuple[Oid, Oid]]
    ) -> tuple[list[str], list[str], dict[str, str]]:
        """The targets' keys and the findings an earlier run cached under them; staged, stage
        1's bulk work for the targets without (`prepare`)."""
        looked_up = self._looked_up.pop(branch.name, None)
        if looked_up and looked_up[0] == fixes and looked_up[1] == backports:
            fix_keys, backport_keys, cached = looked_up[2:]  # `unanswered` asked for them
        else:
            fix_keys, backport_keys = self._target_keys(branch, fixes, backports)
            cached = self.ws.index.cache.cached_findings([*fix_keys, *backport_keys])
        if self.policy.detect:
            cached = {}  # a detection reads what later full scans cache (`adapted_conflicts`)
        if self.staged:
            self.prepare(
                branch,
                [c for c, k in zip(fixes, fix_keys, strict=True) if k not in cached],
                [b for b, k in zip(backports, backport_keys, strict=True) if k not in cached],
            )
        return fix_keys, backport_keys, cached

    def _guard(
        self,
        result: BranchScan,
        key: str,
        cached: str | None,
        commit: Oid,
        work: Callable[[], None],
    ) -> None:
        """A single target never stops the scan: its error is recorded. Its findings are
        cached in the index under a key naming every input (`_keys`), so a rescan with nothing
        new answers from there (`cached`, read with the others before the loop); they are
        written `FINDINGS_HELD` targets at a time, and those of a scan that fails are not."""
        before = len(result.findings)
        if cached is not None:
            result.findings += [finding_from_json(f) for f in json.loads(cached)]
            result.cached += 1
            self._settled(result.findings[before:])
            return
        try:
            work()
        except (BackportrError, GitError) as error:  # this target's, not the scan's
            del result.findings[before:]
            why = git_error_text(error) if isinstance(error, GitError) else str(error)
            result.errors.append(f"{short(commit)}: {why}")
            return
        if self.policy.detect:
            return  # not cached (a detection reads what full scans cache); told once witnessed
        self._settled(result.findings[before:])
        found = [finding_to_json(f) for f in result.findings[before:]]
        self._found.append((key, result.branch, self._state(result.branch), json.dumps(found)))
        if len(self._found) >= FINDINGS_HELD:
            self._cache_found()

    def _settled(self, findings: list[ScanFinding]) -> None:
        """Tell `on_settled` of each finding nothing later can change: all but those that
        rest on an adaptation (the branch's practice decides them once it is scanned)."""
        if self.on_settled is None:
            return
        for finding in findings:
            if not is_pending(finding):
                self.on_settled(finding)

    def _cache_found(self) -> None:
        """Cache the targets' findings held so far, in one transaction."""
        found, self._found = self._found, []
        self.ws.index.cache.cache_findings(found)

    def _keys(self, branch: str) -> Callable[[str, Oid], str]:
        """The key of a target's cached findings on the branch, from the check and the target:
        every input it depends on (the check, branch and upstream tips, the evidence of the
        indexed refs, target, policy, settings). A fix after the fork that was backported is
        checked twice, as a fix and as a backport: each check has its own key. The parts
        that do not depend on the target are made once per scan."""
        state = self._state(branch)
        settings = (self.policy.fingerprint(), str(self.resolver.max_commits), str(self.staged))

        def key(check: str, commit: Oid) -> str:
            return result_key("scan-v11", check, state, commit, *settings)

        return key

    def _state(self, branch: str) -> str:
        """What moves between two scans of the branch: the version, the branch's and
        upstream's tips, the indexed refs' tips (their evidence). Part of every target's key
        (`_keys`); the findings cached in other states are forgotten (`forget_other_states`)."""
        if branch not in self._states:
            ref = next((b for b in self.ws.branches if b.name == branch), None)
            tips = (branch, ref.tip if ref else "", self.ws.upstream.tip)
            evidence = ",".join(sorted(f"{r.refname}={r.tip}" for r in self.ws.indexed))
            self._states[branch] = result_key("scan-state", __version__, *tips, evidence)
        return self._states[branch]

    # -- candidates from the index ----------------------------------------------------------

    def _fix_candidates(self, branch: Ref, limit: list[Oid] | None) -> list[Oid]:
        """The fixes after the branch's fork (those in `limit`), but an upstream copy of
        another of them (a commit that says it was cherry-picked from one, as projects that
        merge a fix's branch and pick it onto the mainline too have): the same change, whose
        finding is its original's."""
        commits = self.ws.index.after_fork.fixes(branch.refname)
        if limit is not None:
            wanted = set(limit)
            commits = [c for c in commits if c in wanted]
        copies = self._upstream_copies
        if copies:
            listed = set(commits)
            commits = [c for c in commits if copies.get(c) not in listed]
        return commits

    @functools.cached_property
    def _upstream_copies(self) -> dict[Oid, Oid]:
        """Read once a scan: the index does not change while it scans."""
        return self.ws.index.reader.upstream_copies()

    def _backports(self, branch: Ref) -> list[tuple[Oid, Oid]]:
        return self.ws.index.reader.backports_in(branch.refname)

    def _unannotated(
        self, branch: Ref, fixes: list[Oid], annotated: list[tuple[Oid, Oid]]
    ) -> list[tuple[Oid, Oid]]:
        """The backports that name no upstream commit, found by patch-id or subject, of the
        culprits the fixes after the fork name (a fix applied to every stable branch at once,
        as an embargoed security fix is, names nothing): their follow-ups matter as those of
        any backport. Only those culprits are asked about (after stage 1's bulk work for
        them), not every upstream commit."""
        reader, presence = self.ws.index.reader, self.ws.presence
        known = {u for _, u in annotated}
        culprits = [
            r.target
            for fix in fixes
            for r in reader.fixes_of(fix)
            if r.target and r.target not in known and reader.is_upstream(r.target)
        ]
        culprits = [c for c in dict.fromkeys(culprits) if not presence.contains(c, branch)]
        if not culprits:
            return []
        self._bulk_presence(branch, culprits, [])
        out = []
        for culprit in culprits:
            found = presence.check(culprit, branch)
            if found.present and found.as_commit and found.how in ("patch-id", "subject"):
                out.append((found.as_commit, culprit))
        return out

    # -- the three kinds --------------------------------------------------------------------

    def _missing_fix(self, branch: Ref, commit: Oid, result: BranchScan) -> None:
        presence = self.ws.presence
        if presence.check(commit, branch).present:
            return
        relations = self._present_culprit_relations(branch, commit)
        present = [r.target for r in relations if r.target]
        if not present:
            return
        dropped = self.policy.is_dropped(branch.name, commit)
        if not dropped and not self._wanted(branch, commit):
            return  # only ignored paths, or Cc: stable # 6.1+ and this is 5.10
        subject = self._subject(commit)
        evidence = tuple(self._culprit_evidence(r, branch) for r in relations)
        if self.policy.is_dropped(branch.name, commit):
            result.findings.append(
                ScanFinding(
                    "dropped",
                    branch.name,
                    commit,
                    subject,
                    "dropped",
                    (),
                    (*evidence, "in the stable queue's dropped list"),
                )
            )
            return
        tagged = self._tagged(commit)
        if not tagged and self.policy.untagged == "skip":
            return
        oldest = min((self.ws.index.reader.upstream_seq(c) or 0 for c in present), default=0)
        if self.policy.detect:  # not reverted upstream; no series (`resolve` gives it)
            if effective_upstream_reverter(self.resolver.context(branch), commit) is None:
                result.findings.append(
                    ScanFinding(
                        "missing-fix", branch.name, commit, subject, "detected", (), evidence,
                        tagged, oldest,
                    )  # witnessed with the others once the share is scanned (`_witness_detected`)
                )  # fmt: skip
            return
        report = self.answers.resolve(commit, branch)
        if report.status in ("reverted-upstream", "not-needed", "already-present"):
            return
        listed = self._cancelled(report.series)
        if not any(m.commit == commit for m in listed):
            return  # the fix and its own revert: nothing to take
        series = self.tried_as_listed(branch, report.series, listed)
        seen = self.witnesses.of(
            branch, [m.commit for m in series], present, [commit], related_of(series)
        )
        result.findings.append(
            ScanFinding(
                "missing-fix",
                branch.name,
                commit,
                subject,
                report.status,
                series,
                evidence,
                tagged,
                oldest,
                witnesses=seen.lines,
                confidence=seen.confidence,
            )
        )

    def _backport(self, branch: Ref, carrier: Oid, upstream: Oid, result: BranchScan) -> None:
        presence = self.ws.presence.check(upstream, branch)
        if not presence.present:
            return  # reverted in the branch: nothing to complete

        reverter = effective_upstream_reverter(self.resolver.context(branch), upstream)
        if reverter is not None and not self.ws.presence.check(reverter, branch).present:
            seen = self.witnesses.of(branch, [reverter], [upstream])
            result.findings.append(
                ScanFinding(
                    "reverted-upstream",
                    branch.name,
                    upstream,
                    self._subject(upstream),
                    "reverted-upstream",
                    (),
                    (
                        f"backported as {short(carrier)}; reverted upstream by {short(reverter)} "
                        f"({self._subject(reverter)}), which the branch lacks",
                    ),
                    witnesses=seen.lines,
                    confidence=seen.confidence,
                )
            )
            return
        current = presence.as_commit or carrier  # the backport in force (after re-applies)
        if self.policy.detect:
            self._detect_backport(branch, carrier, upstream, current, result)
            return
        if self.staged and not self._may_be_incomplete(branch, upstream, current):
            return  # stage 1 (the index, cached checks): resolving it finds nothing missing
        report = self.answers.resolve(upstream, branch)
        if report.status != "incomplete":
            return
        listed = self._cancelled(tuple(m for m in report.series if self._wanted(branch, m.commit)))
        series = self.tried_as_listed(branch, report.series, listed)
        tagged = any(self._tagged(m.commit) for m in series)
        if series:
            adapted = adapted_members(series)
            seen = self.witness_backport(branch, upstream, series)
            result.findings.append(
                ScanFinding(
                    "incomplete-backport",
                    branch.name,
                    upstream,
                    self._subject(upstream),
                    report.status,
                    series,
                    (incomplete_why(carrier, series, adapted),),
                    tagged,
                    self.ws.index.reader.upstream_seq(upstream) or 0,
                    adapted=tuple(m.commit for m in series if m.commit in adapted),
                    witnesses=seen.lines,
                    confidence=seen.confidence,
                )
            )

    def witness_backport(self, branch: Ref, upstream: Oid, series: Sequence[Member]) -> Witnessed:
        """What the siblings did with `series`, the commits a backport of `upstream` lacks
        (of a finding, or of either part `practice.settle` parts it into)."""
        return self.witnesses.of(
            branch,
            [m.commit for m in series],
            [upstream],
            self._met_alone(branch, series),
            related_of(series),
        )

    # -- detection only (`--detect`): what the index tells, no series resolved, no trial ----

    def _present_culprits(self, branch: Ref, commit: Oid) -> list[Oid]:
        """The culprits `commit` names that the branch has (in its history or backported)."""
        return [r.target for r in self._present_culprit_relations(branch, commit) if r.target]

    def _present_culprit_relations(self, branch: Ref, commit: Oid) -> list[Relation]:
        """The relations naming the culprits of `commit` the branch has, each culprit once."""
        found: dict[Oid, Relation] = {}
        for relation in self.ws.index.reader.fixes_of(commit):
            culprit = relation.target
            if culprit and culprit not in found and self.ws.presence.check(culprit, branch).present:
                found[culprit] = relation
        return list(found.values())

    def _met_alone(self, branch: Ref, series: Sequence[Member]) -> list[Oid]:
        """The members of an incomplete backport's series its maintainers met on their own:
        follow-ups of a commit the branch has (a prerequisite, or a follow-up of one, is met
        only with the backport)."""
        presence = self.ws.presence
        return [
            m.commit
            for m in series
            if m.role == "follow-up"
            and any(r.related and presence.check(r.related, branch).present for r in m.reasons)
        ]

    def _witness_detected(self, branch: Ref, result: BranchScan) -> None:
        """Detection's witnesses, in bulk: the patch-ids the siblings' presence checks ask,
        computed together (`Witnesses.prefetch`: a git question each cost DPDK's first
        detection about 2 s), then each finding's siblings and confidence."""
        inputs = [
            (
                list(f.missing),
                self._present_culprits(branch, f.commit) if f.kind == "missing-fix" else [f.commit],
            )
            for f in result.findings
        ]
        detected = [f.status == "detected" for f in result.findings]
        self.witnesses.prefetch(
            branch, [c for (m, b), d in zip(inputs, detected, strict=True) if d for c in (*m, *b)]
        )
        witnessed = []
        for finding, (missing, bases), fresh in zip(result.findings, inputs, detected, strict=True):
            if fresh:
                alone = (
                    [finding.commit]
                    if finding.kind == "missing-fix"
                    else self._met_alone(branch, finding.series)
                )
                seen = self.witnesses.of(branch, missing, bases, alone, related_of(finding.series))
                finding = replace(finding, witnesses=seen.lines, confidence=seen.confidence)
            witnessed.append(finding)
        result.findings = witnessed

    def _detect_backport(
        self, branch: Ref, carrier: Oid, upstream: Oid, current: Oid, result: BranchScan
    ) -> None:
        """A present backport as detection sees it: the absent follow-ups of it and of its
        present follow-ups (to any depth, but those upstream reverted), its absent declared
        and recorded prerequisites, each named; else, where it differs from its upstream
        original, whether that original applied at the backport's parent, as an earlier
        scan tried it (`adapted-backport`, counted apart: a full scan names what it went
        without and judges it), or `untried`."""
        series = self._cancelled(
            tuple(
                m
                for m in self._detected_members(branch, upstream)
                if self._wanted(branch, m.commit)
            )
        )
        if series:
            result.findings.append(
                ScanFinding(
                    "incomplete-backport", branch.name, upstream, self._subject(upstream),
                    "detected", series, (incomplete_why(carrier, series, set()),),
                    any(self._tagged(m.commit) for m in series),
                    self.ws.index.reader.upstream_seq(upstream) or 0,
                )
            )  # fmt: skip
            return
        if not self._differs(upstream, current):
            return
        conflicts = self.ws.index.cache.adapted_conflicts(upstream, current)
        if conflicts is None:
            result.untried += 1
        elif conflicts:
            result.adapted.append(
                ScanFinding(
                    "adapted-backport", branch.name, upstream, self._subject(upstream),
                    "detected", (),
                    (f"backported as {short(carrier)}, adapted: its original conflicts at "
                     "the backport's parent",
                     "a full scan names what it went without and judges it"),
                    culprit_seq=self.ws.index.reader.upstream_seq(upstream) or 0,
                )
            )  # fmt: skip

    def _detected_members(self, branch: Ref, upstream: Oid) -> list[Member]:
        """What the branch lacks of the backport's closure, as the index tells it (no trial):
        its absent follow-ups and reverts (but its own revert, `reverted-upstream`, and a
        follow-up upstream reverted), its absent declared and recorded prerequisites."""
        ctx = self.resolver.context(branch)
        members: dict[Oid, Member] = {}
        for kind, relation, related in self._absent_relations(branch, upstream):
            commit = relation.commit
            if kind == "revert" and related == upstream:
                continue
            if kind == "follow-up" and effective_upstream_reverter(ctx, commit) is not None:
                continue
            why = (
                cited(relation.form, f"{short(related)} ({self._subject(related)})")
                if kind == "follow-up"
                else f"reverts {short(related)} upstream"
            )
            members.setdefault(
                commit,
                Member(commit, self._subject(commit), "follow-up", (Reason(kind, why, related),)),
            )
        for found in self._absent_prerequisites(branch, upstream):
            members.setdefault(
                found.commit,
                Member(found.commit, self._subject(found.commit), "prerequisite", (found.reason,)),
            )
        return list(members.values())

    def _absent_relations(
        self, branch: Ref, upstream: Oid
    ) -> Iterator[tuple[Literal["follow-up", "revert"], Relation, Oid]]:
        """The follow-ups and upstream reverts the branch lacks, of the backport and of its
        present follow-ups and reverts, to any depth: (kind, the relation of the absent
        commit, the commit it relates to), as they are found (a caller may stop at the
        first)."""
        index, presence = self.ws.index, self.ws.presence
        seen: set[Oid] = set()
        todo = [upstream]
        while todo:
            commit = todo.pop()
            if commit in seen:
                continue
            seen.add(commit)
            related: tuple[tuple[Literal["follow-up", "revert"], list[Relation]], ...] = (
                ("follow-up", fixed_by(index, commit)),
                ("revert", list(index.reader.reverted_by(commit, upstream_only=True))),
            )
            for kind, relations in related:
                for relation in relations:
                    if presence.check(relation.commit, branch).present:
                        todo.append(relation.commit)
                    else:
                        yield kind, relation, commit

    def _absent_prerequisites(self, branch: Ref, upstream: Oid) -> list[Finding]:
        """The backport's declared and recorded prerequisites the branch lacks."""
        ctx, presence = self.resolver.context(branch), self.ws.presence
        return [
            f
            for f in (*declared(ctx, upstream), *recorded(ctx, upstream))
            if not presence.check(f.commit, branch).present
        ]

    def tried_as_listed(
        self, branch: Ref, resolved: tuple[Member, ...], listed: tuple[Member, ...]
    ) -> tuple[Member, ...]:
        """The members a finding lists, as a maintainer picking them meets them: where the
        listing left members of the resolved series out (a commit and its revert, a dropped
        or ignored one, what an adapted backport went without), tried again in order onto
        the branch, a conflicting one taking its side (the trial's rule): a member that
        conflicted only after one left out applies."""
        if [m.commit for m in listed] == [m.commit for m in resolved]:
            return listed
        applier = self.resolver.applier
        results, _ = applier.pick_series([m.commit for m in listed], TreeState(branch.tip))
        return tuple(
            replace(m, apply=r.result, conflict_files=r.conflict_files)
            for m, r in zip(listed, results, strict=True)
        )

    def _cancelled(self, series: tuple[Member, ...]) -> tuple[Member, ...]:
        """The series without each commit whose revert it also holds, and that revert: the
        pair cancels, neither is proposed."""
        commits = {m.commit for m in series}
        gone: set[Oid] = set()
        for member in series:
            for relation in self.ws.index.reader.reverted_by(member.commit, upstream_only=True):
                if relation.commit in commits:
                    gone |= {member.commit, relation.commit}
        return tuple(m for m in series if m.commit not in gone)

    def _may_be_incomplete(self, branch: Ref, upstream: Oid, carrier: Oid) -> bool:
        """Can the closure of this present backport gain a member? Exactly when the resolver
        would find one: an absent follow-up (of it, or of a present follow-up, to any depth),
        an absent declared or recorded prerequisite, or, for a backport that differs from
        upstream, an upstream patch that conflicts at the backport's parent (cached by
        content: it depends on the two commits only)."""
        if next(self._absent_relations(branch, upstream), None) is not None:
            return True
        if self._absent_prerequisites(branch, upstream):
            return True
        return self.adapted(upstream, carrier)

    def adapted(self, upstream: Oid, carrier: Oid) -> bool:
        """Was the backport `carrier` adapted: does its patch differ from its upstream
        original's, and does the original conflict at the backport's parent (cached by
        content: it depends on the two commits only)?"""
        if not self._differs(upstream, carrier):
            return False
        cache = self.ws.index.cache
        conflicts = cache.adapted_conflicts(upstream, carrier)
        if conflicts is None:
            parents = self.ws.repo.parents(carrier)
            conflicts = bool(parents) and (
                self.resolver.applier.pick(upstream, TreeState(parents[0])).result == "conflict"
            )
            cache.cache_adapted_conflicts(upstream, carrier, conflicts)
        return conflicts

    def _differs(self, upstream: Oid, carrier: Oid) -> bool:
        """Does the backport's patch differ from its upstream original's (by patch-id)?"""
        patch_ids = self.ws.index.patch_ids
        upstream_pid = patch_ids.patch_id(upstream)
        return upstream_pid is not None and upstream_pid != patch_ids.patch_id(carrier)

    def prepare(self, branch: Ref, fixes: list[Oid], backports: list[tuple[Oid, Oid]]) -> None:
        """Stage 1's bulk work, in a few git processes whose answers the index caches (the
        next scan pays nothing): what the presence checks of every fix and of the culprits
        they name will ask (`_bulk_presence`), and the patch-ids of every backported
        upstream commit, in git pipelines (one diff each in Python costs more)."""
        reader = self.ws.index.reader
        culprits = [r.target for c in fixes for r in reader.fixes_of(c) if r.target]
        self._bulk_presence(branch, [*fixes, *culprits], [u for _, u in backports])

    def _bulk_presence(self, branch: Ref, commits: list[Oid], patched: list[Oid]) -> None:
        """What presence checks of `commits` will ask, in bulk: the digests of the paths of
        those the branch lacks by ancestry (a presence check first asks whether a commit of
        the branch, or of a sibling, changes the same paths: a tree diff each cost DPDK's
        detection 12 of its 17 s), and the patch-ids of those it will look for by patch-id
        (`needs_patch_id`: about half the fixes, few culprits), and of `patched`."""
        presence = self.ws.presence
        absent = [c for c in dict.fromkeys(commits) if not presence.contains(c, branch)]
        self.ws.index.patch_ids.digests(absent)
        asked = [c for c in absent if presence.needs_patch_id(c, branch)]
        self.ws.index.patch_ids.fill([*asked, *patched])

    def _tagged(self, commit: Oid) -> bool:
        """Tagged for stable: a `Cc: stable@...` line (any project's stable address)."""
        return any(not t.noautosel for t in self.ws.index.reader.stable_tags_of(commit))

    def _wanted(self, branch: Ref, commit: Oid) -> bool:
        """The policy: not dropped by the stable queue, not only in ignored paths, and not
        tagged for newer stable versions only."""
        if self.policy.is_dropped(branch.name, commit):
            return False
        if self.policy.ignore and self.policy.ignored(self.ws.repo.diffs.files_touched(commit)):
            return False
        version = parse_version(branch.name)
        tags = [t for t in self.ws.index.reader.stable_tags_of(commit) if t.since or t.until]
        return not (version and tags and not any(t.covers(version) for t in tags))

    def _culprit_evidence(self, relation: Relation, branch: Ref) -> str:
        """`Fixes: <culprit> (<subject>), which the branch has[ as <its backport>]`, the
        culprit named as the fix named it."""
        culprit = relation.target or Oid("")
        found = self.ws.presence.check(culprit, branch)
        has = "" if found.how == "ancestor" else f" as {short(found.as_commit or '?')}"
        named = cited(relation.form, f"{short(culprit)} ({self._subject(culprit)})")
        return f"{named}, which the branch has{has}"

    def _subject(self, commit: Oid) -> str:
        return self.ws.index.reader.subject(commit, self.ws.repo)


def is_pending(finding: ScanFinding) -> bool:
    """Does the finding wait for the branch's practice (`practice.settle`)?"""
    return finding.kind == "incomplete-backport" and bool(finding.adapted)


def adapted_roots(series: tuple[Member, ...]) -> set[Oid]:
    """The members with an `adapted` reason: what a backport was adapted around itself."""
    return {m.commit for m in series if any(r.kind == "adapted" for r in m.reasons)}


def adapted_members(series: tuple[Member, ...]) -> set[Oid]:
    """The members a backport went without (an `adapted` reason: its upstream original does
    not apply without them) and those that hang only on them (every reason of theirs relates
    to one: a follow-up of one, a symbol one of them uses)."""
    adapted = adapted_roots(series)
    grown = True
    while grown:
        grown = False
        for member in series:
            if member.commit in adapted or not member.reasons:
                continue
            if all(r.related in adapted for r in member.reasons):
                adapted.add(member.commit)
                grown = True
    return adapted


def incomplete_why(carrier: Oid, series: tuple[Member, ...], adapted: set[Oid]) -> str:
    """One line: the backport, how many commits its closure lacks, and of which kind (those
    in `adapted`: what it was adapted around, and what hangs on that)."""
    own = len(series) - len(adapted)
    kinds = []
    if own:
        follow = sum(1 for m in series if m.commit not in adapted and m.role == "follow-up")
        kinds.append(f"{follow} follow-up(s)" if follow == own else f"{own} it needs")
    if adapted:
        kinds.append(f"{len(adapted)} it was adapted around")
    return f"backported as {short(carrier)}; lacks {len(series)} commit(s): {', '.join(kinds)}"
