"""A scan's resolve answers, cached in the index with what they depend on.

A nightly scan resolves only what the day's new commits can change: an answer is cached with
the tips it was computed at, the commits it looked at and their files; the next run reuses it
when nothing that moved since touches any of them (`Answers.still_holds`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from backportr import __version__
from backportr.git.names import Ref
from backportr.index.cache import result_key
from backportr.model import BranchReport, Member, Oid
from backportr.resolve.finders.fixes import fixed_by
from backportr.resolve.resolver import Resolver
from backportr.resolve.workspace import Workspace
from backportr.scan.findings import series_from_json, series_to_json
from backportr.settings import DEFAULT_CONFLICT_DEPTH


@dataclass(frozen=True, slots=True)
class Resolved:
    """What a scan keeps of a resolve: the status and the series."""

    status: str
    series: tuple[Member, ...]


@dataclass(frozen=True, slots=True)
class _Delta:
    """What moved on one ref since a cached answer: its new commits, the files they touch, and
    the upstream commits they carry (backports)."""

    commits: frozenset[Oid]
    files: frozenset[str]
    carried: frozenset[Oid]


_MAX_DELTA = 20_000  # more new commits than this on one ref: resolve afresh
RECORDS_HELD = 64  # answers cached together: their commits' paths listed by one git process
_MOST_WEIGHED = 500  # commits an answer is known to depend on, at most (then: bounded)


class Answers:
    """The resolver's answers for one scanner: reused when they still hold, cached in batches."""

    def __init__(self, ws: Workspace, resolver: Resolver) -> None:
        self.ws = ws
        self.resolver = resolver
        self.resolved = 0  # anew, since the last `count_from_zero`
        self.reused = 0  # answers of an earlier run
        self._deltas: dict[tuple[str, Oid, Oid], _Delta | None] = {}
        self._held: list[tuple[str, Ref, Oid, BranchReport]] = []  # answers not yet cached

    def count_from_zero(self) -> None:
        self.resolved = self.reused = 0

    def resolve(self, commit: Oid, branch: Ref) -> Resolved:
        """The resolver's answer, or the one an earlier run cached when nothing that moved
        since can change it (see `still_holds`)."""
        scope = self._scope(branch, commit)
        cached = self.ws.index.cache.cached_result(scope)
        if cached is not None:
            record = json.loads(cached)
            if self.still_holds(branch, record):
                self.reused += 1
                return Resolved(record["status"], series_from_json(record["series"]))
        report = self.resolver.resolve_branch(commit, branch)
        self.resolved += 1
        self._held.append((scope, branch, commit, report))
        if len(self._held) >= RECORDS_HELD:
            self.cache()
        return Resolved(report.status, report.series)

    def drop_held(self) -> None:
        """Forget the answers not yet cached (the scan failed: the next run resolves them)."""
        self._held.clear()

    def cache(self) -> None:
        """Cache the held answers, with what they depend on (`_record`): the paths of all
        their commits listed by one git process first (at kernel scale a process each cost
        as much as the resolve's own git work)."""
        held, self._held = self._held, []
        records = {scope: self._closure(commit, report) for scope, _, commit, report in held}
        self.ws.repo.diffs.learn_paths(c for closure in records.values() for c in closure)
        self.ws.index.cache.cache_results(
            [
                (scope, json.dumps(self._record(branch, records[scope], report)))
                for scope, branch, _, report in held
            ]
        )

    def _scope(self, branch: Ref, commit: Oid) -> str:
        parts = (
            "report-v2",  # v2: what an answer weighed and left out is in its closure
            __version__,
            branch.name,
            commit,
            str(self.resolver.max_commits),
            self.resolver.effective_culprits(),
            *(
                [f"depth {d}"]
                if (d := self.resolver.conflict_depth) != DEFAULT_CONFLICT_DEPTH
                else []
            ),
        )
        return result_key(*parts)

    def _tips(self, branch: Ref) -> dict[str, Oid]:
        tips = {r.refname: r.tip for r in self.ws.indexed}
        tips[branch.refname] = branch.tip
        tips[self.ws.upstream.refname] = self.ws.upstream.tip
        return tips

    def _closure(self, commit: Oid, report: BranchReport) -> set[Oid]:
        """Every commit an answer looked at: the target, the series, what is present, the
        suggestions, what it weighed and left out (the follow-ups and reverts of those, to
        a fixpoint: a fix left out because upstream reverted it joins, with its revert,
        once the branch picks it without naming it), and their culprits."""
        index = self.ws.index
        closure = {commit, *(m.commit for m in report.series)}
        closure |= {p.commit for p in report.present} | {s.commit for s in report.suggestions}
        todo = list(closure)
        while todo and len(closure) < _MOST_WEIGHED:
            c = todo.pop()
            for r in (*fixed_by(index, c), *index.reader.reverted_by(c, upstream_only=True)):
                if r.commit not in closure:
                    closure.add(r.commit)
                    todo.append(r.commit)
        closure |= {r.target for c in list(closure) for r in index.reader.fixes_of(c) if r.target}
        return closure

    def _record(self, branch: Ref, closure: set[Oid], report: BranchReport) -> dict[str, object]:
        """The answer with what it depends on: the commits it looked at and their files."""
        files = {f for c in closure for f in self.ws.repo.diffs.files_touched(c)}
        return {
            "bounded": len(closure) >= _MOST_WEIGHED,
            "tips": self._tips(branch),
            "closure": sorted(closure),
            "files": sorted(files),
            "status": report.status,
            "series": series_to_json(report.series),
        }

    def still_holds(self, branch: Ref, record: dict[str, Any]) -> bool:
        """Nothing that moved since the answer was cached can change it: no new upstream commit
        fixes, reverts or names a commit it looked at, or touches the files of one upstream
        reverted (`_upstream_moves_it`); no new commit of the branch or of a sibling branch
        touches their files or carries one of them. A ref that was rewritten, appeared or
        vanished, or moved by more than `_MAX_DELTA` commits: resolve afresh."""
        then: dict[str, Oid] = record["tips"]
        now = self._tips(branch)
        if then == now:
            return True
        if set(then) != set(now):
            return False
        if record.get("bounded"):  # it weighed more than it could list: afresh
            return False
        closure, files = set(record["closure"]), set(record["files"])
        upstream = self.ws.upstream.refname
        for refname, tip in now.items():
            if then[refname] == tip:
                continue
            delta = self._delta(refname, then[refname], tip)
            if delta is None:
                return False
            if refname == upstream:
                if self._upstream_moves_it(closure, delta):
                    return False
            elif delta.files & files or delta.carried & closure:
                return False
        return True

    def _upstream_moves_it(self, closure: set[Oid], delta: _Delta) -> bool:
        """Can new upstream commits change an answer that looked at `closure`? They can when
        one fixes, reverts or names a commit of it, or touches the files of a commit of it
        (or of a follow-up of one) that upstream reverted: whether a revert is in force
        depends on whether the change stands at upstream's tip (a re-landing)."""
        index, repo = self.ws.index, self.ws.repo
        for c in closure:
            follow = fixed_by(index, c)
            reverts = index.reader.reverted_by(c, upstream_only=True)
            related = (*follow, *reverts, *index.reader.stable_deps_naming(c))
            if any(r.commit in delta.commits for r in related):
                return True
            undone = [c] if reverts else []
            undone += [
                r.commit for r in follow if index.reader.reverted_by(r.commit, upstream_only=True)
            ]
            if any(delta.files.intersection(repo.diffs.files_touched(u)) for u in undone):
                return True
        return False

    def _delta(self, refname: str, old: Oid, new: Oid) -> _Delta | None:
        key = (refname, old, new)
        if key not in self._deltas:
            self._deltas[key] = self._compute_delta(old, new)
        return self._deltas[key]

    def _compute_delta(self, old: Oid, new: Oid) -> _Delta | None:
        repo = self.ws.repo
        if not repo.has_commit(old) or not repo.is_ancestor(old, new):
            return None  # rewritten
        commits: list[Oid] = []
        for commit in repo.walk(new, [old]):
            commits.append(commit)
            if len(commits) > _MAX_DELTA:
                return None
        repo.diffs.learn_paths(commits)
        files = {f for c in commits for f in repo.diffs.files_touched(c)}
        carried = {
            u for c in commits if (u := self.ws.index.reader.carried_upstream(c)) is not None
        }
        return _Delta(frozenset(commits), frozenset(files), frozenset(carried))
