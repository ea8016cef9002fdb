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

import fnmatch
import functools
import hashlib
import json
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from backportr import __version__
from backportr.apply import TreeState
from backportr.config import Settings
from backportr.deps.declared import declared, recorded
from backportr.deps.fixes import effective_upstream_reverter, fixed_by
from backportr.errors import BackportrError
from backportr.model import (
    BranchReport,
    CulpritPolicy,
    Member,
    Oid,
    ProgressCallback,
    Reason,
    no_progress,
)
from backportr.repo import GitError, Ref
from backportr.resolve import Resolver
from backportr.trailers import parse_version
from backportr.workspace import Workspace, open_workspace

_log = logging.getLogger("backportr")

KINDS = ("missing-fix", "incomplete-backport", "reverted-upstream", "dropped")


Untagged = Literal["include", "separate", "skip"]
"""Missing fixes without a stable tag: reported among the others (by priority), after all
tagged ones, or not at all. Most stable teams take what is tagged for stable."""


@dataclass(frozen=True, slots=True)
class Policy:
    """What a scan must not report."""

    ignore: tuple[str, ...] = ()  # path globs: a commit touching only these is skipped
    dropped: frozenset[tuple[str, Oid]] = frozenset()  # (X.Y, upstream id)
    untagged: Untagged = "include"

    @staticmethod
    def load(
        ignore_file: Path | None, dropped_file: Path | None, untagged: Untagged = "include"
    ) -> Policy:
        ignore: list[str] = []
        dropped: set[tuple[str, Oid]] = set()
        if ignore_file is not None:
            ignore = [
                ln.strip()
                for ln in _read(ignore_file).splitlines()
                if ln.strip() and not ln.lstrip().startswith("#")
            ]
        if dropped_file is not None:
            for number, line in enumerate(_read(dropped_file).splitlines(), 1):
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                parts = line.split()
                if len(parts) < 2 or len(parts[1]) != 40:
                    raise BackportrError(
                        f"{dropped_file}:{number}: expected '<X.Y> <40 hex id>', got {line!r}"
                    )
                dropped.add((parts[0], parts[1].lower()))
        return Policy(tuple(ignore), frozenset(dropped), untagged)

    def ignored(self, files: Iterable[str]) -> bool:
        paths = list(files)
        return (
            bool(paths)
            and bool(self.ignore)
            and all(
                any(
                    fnmatch.fnmatch(p, glob) or p.startswith(glob.rstrip("*"))
                    for glob in self.ignore
                )
                for p in paths
            )
        )

    def fingerprint(self) -> str:
        text = "\n".join(
            [*self.ignore, "--", *sorted(" ".join(d) for d in self.dropped), self.untagged]
        )
        return hashlib.sha256(text.encode()).hexdigest()

    def is_dropped(self, branch: str, commit: Oid) -> bool:
        version = parse_version(branch)
        key = f"{version[0]}.{version[1]}" if version else branch
        return (key, commit) in self.dropped


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise BackportrError(f"cannot read {path}: {error.strerror}") from None
    except UnicodeDecodeError as error:
        raise BackportrError(
            f"{path}: not UTF-8 text (byte {error.start}); expected one entry per line"
        ) from None


@dataclass(frozen=True, slots=True)
class ScanFinding:
    kind: str
    branch: str
    commit: Oid
    subject: str
    status: str
    series: tuple[Member, ...] = ()
    evidence: tuple[str, ...] = ()
    tagged: bool = False  # the fix (or a member of the series) is tagged for stable
    culprit_seq: int = 0  # upstream position of its oldest culprit (lower: older)

    @property
    def key(self) -> str:
        return f"{self.branch} {self.kind} {self.commit}"


_KIND_ORDER = {"missing-fix": 0, "incomplete-backport": 1, "reverted-upstream": 2, "dropped": 3}


def prioritize(findings: list[ScanFinding], untagged: Untagged = "include") -> list[ScanFinding]:
    """What a maintainer acts on first: per kind, tagged for stable before untagged (with
    `separate`, every untagged finding after every tagged one), ready before conflict, the
    oldest culprit first; the order of the scan otherwise (stable sort)."""

    def rank(f: ScanFinding) -> tuple[int, int, int, int]:
        apart = 0 if untagged != "separate" or f.tagged or f.kind != "missing-fix" else 1
        return (apart, _KIND_ORDER.get(f.kind, 9), 0 if f.tagged else 1, f.culprit_seq)

    ready_first = sorted(findings, key=lambda f: f.status != "ready")
    return sorted(ready_first, key=rank)


@dataclass
class BranchScan:
    branch: str
    findings: list[ScanFinding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    scanned: int = 0
    resolved: int = 0  # targets resolved in full by this run
    reused: int = 0  # targets whose last answer still holds (nothing new touches them)
    tip: Oid = ""  # the branch's tip, and upstream's, when it was scanned
    upstream: str = ""
    upstream_tip: Oid = ""


@dataclass(frozen=True, slots=True)
class _Resolved:
    """What a scan keeps of a resolve: the status and the series."""

    status: str
    series: tuple[Member, ...]


@dataclass(frozen=True, slots=True)
class _Delta:
    """What moved on one ref since a kept answer: its new commits, the files they touch, and
    the upstream commits they carry (backports)."""

    commits: frozenset[Oid]
    files: frozenset[str]
    carried: frozenset[Oid]


_MAX_DELTA = 20_000  # more new commits than this on one ref: resolve afresh


class Scanner:
    """Scans branches of one workspace."""

    def __init__(
        self,
        ws: Workspace,
        policy: Policy,
        *,
        progress: ProgressCallback = no_progress,
        max_commits: int = 50,
        staged: bool = True,
        culprits: CulpritPolicy | None = None,
    ) -> None:
        self.staged = staged  # False: resolve every backport in full (the reference)
        self.ws = ws
        self.policy = policy
        self.progress = progress
        self.resolver = Resolver(
            ws, max_commits=max_commits, culprits=culprits, suggest=False, postings=False
        )
        self._deltas: dict[tuple[str, Oid, Oid], _Delta | None] = {}
        self._counts = [0, 0]  # resolved, reused: of the branch being scanned

    def targets(
        self, branch: Ref, candidates: list[Oid] | None = None
    ) -> tuple[list[Oid], list[tuple[Oid, Oid]]]:
        """What a scan of the branch looks at: fixes to check, backports to check."""
        return self._fix_candidates(branch, candidates), self._backports(branch)

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
        if self.staged:
            self.prepare(backports)
        total = len(fixes) + len(backports)
        self._counts = [0, 0]
        for done, commit in enumerate(fixes, 1):
            self.progress(f"scanning {branch.name}", done, total)
            self._guard(
                result, commit, functools.partial(self._missing_fix, branch, commit, result)
            )
        for done, (carrier, upstream) in enumerate(backports, len(fixes) + 1):
            self.progress(f"scanning {branch.name}", done, total)
            work = functools.partial(self._backport, branch, carrier, upstream, result)
            self._guard(result, upstream, work)
        result.scanned = total
        result.resolved, result.reused = self._counts
        _log.info(
            "scanned %s: %d targets, %d resolved anew, %d answers of an earlier run kept",
            branch.name, total, result.resolved, result.reused,
        )  # fmt: skip
        result.findings = prioritize(result.findings, self.policy.untagged)
        return result

    def _guard(self, result: BranchScan, commit: Oid, work: Callable[[], None]) -> None:
        """A single target never stops the scan: its error is recorded. Its findings are
        kept in the index under a key naming every input (branch and upstream tips, target,
        policy, settings), so a rescan with nothing new answers from there."""
        key = self._key(result.branch, commit)
        cached = self.ws.index.cached_result(key)
        if cached is not None:
            result.findings += [_finding_from_json(f) for f in json.loads(cached)]
            return
        before = len(result.findings)
        try:
            work()
        except (BackportrError, GitError) as error:  # this target's, not the scan's
            del result.findings[before:]
            result.errors.append(f"{commit[:12]}: {error}")
            return
        except KeyError as error:  # libgit2 lacks an object this target needs
            del result.findings[before:]
            result.errors.append(f"{commit[:12]}: the repository lacks an object ({error})")
            return
        found = [_finding_to_json(f) for f in result.findings[before:]]
        self.ws.index.keep_result(key, json.dumps(found))

    def _key(self, branch: str, commit: Oid) -> str:
        ref = next((b for b in self.ws.branches if b.name == branch), None)
        parts = (
            "scan-v1",
            __version__,
            branch,
            ref.tip if ref else "",
            self.ws.upstream.tip,
            ",".join(sorted(f"{r.refname}={r.tip}" for r in self.ws.indexed)),  # evidence
            commit,
            self.policy.fingerprint(),
            str(self.resolver.max_commits),
            str(self.staged),
        )
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()

    # -- candidates from the index ----------------------------------------------------------

    def _fix_candidates(self, branch: Ref, limit: list[Oid] | None) -> list[Oid]:
        commits = self.ws.index.fixes_after_fork(branch.refname)
        if limit is not None:
            wanted = set(limit)
            commits = [c for c in commits if c in wanted]
        return commits

    def _backports(self, branch: Ref) -> list[tuple[Oid, Oid]]:
        return self.ws.index.backports_in(branch.refname)

    # -- the three kinds --------------------------------------------------------------------

    def _missing_fix(self, branch: Ref, commit: Oid, result: BranchScan) -> None:
        presence = self.ws.presence
        if presence.check(commit, branch).present:
            return
        culprits = [r.target for r in self.ws.index.fixes_of(commit) if r.target]
        present = [c for c in culprits if c and presence.check(c, branch).present]
        if not present:
            return
        dropped = self.policy.is_dropped(branch.name, commit)
        if not dropped and not self._wanted(branch, commit):
            return  # only ignored paths, or Cc: stable # 6.1+ and this is 5.10
        subject = self._subject(commit)
        evidence = tuple(self._culprit_evidence(c, branch) for c in present)
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
        report = self._resolve(commit, branch)
        if report.status in ("reverted-upstream", "not-needed", "already-present"):
            return
        oldest = min((self.ws.index.upstream_seq(c) or 0 for c in present), default=0)
        result.findings.append(
            ScanFinding(
                "missing-fix",
                branch.name,
                commit,
                subject,
                report.status,
                report.series,
                evidence,
                tagged,
                oldest,
            )
        )

    def _backport(self, branch: Ref, carrier: Oid, upstream: Oid, result: BranchScan) -> None:
        presence = self.ws.presence.check(upstream, branch)
        if not presence.present:
            return  # reverted in the branch: nothing to complete

        reverter = effective_upstream_reverter(self.resolver.context(branch), upstream)
        if reverter is not None and not self.ws.presence.check(reverter, branch).present:
            result.findings.append(
                ScanFinding(
                    "reverted-upstream",
                    branch.name,
                    upstream,
                    self._subject(upstream),
                    "reverted-upstream",
                    (),
                    (
                        f"backported as {carrier[:12]}; reverted upstream by {reverter[:12]} "
                        f"({self._subject(reverter)}), which the branch lacks",
                    ),
                )
            )
            return
        current = presence.as_commit or carrier  # the backport in force (after re-applies)
        if self.staged and not self._may_be_incomplete(branch, upstream, current):
            return  # stage 1 (the index, cached checks): resolving it finds nothing missing
        report = self._resolve(upstream, branch)
        if report.status != "incomplete":
            return
        series = tuple(m for m in report.series if self._wanted(branch, m.commit))
        tagged = any(self._tagged(m.commit) for m in series)
        if series:
            result.findings.append(
                ScanFinding(
                    "incomplete-backport",
                    branch.name,
                    upstream,
                    self._subject(upstream),
                    report.status,
                    series,
                    (
                        f"backported as {carrier[:12]}; the branch lacks "
                        f"{len(series)} commit(s) its closure needs",
                    ),
                    tagged,
                    self.ws.index.upstream_seq(upstream) or 0,
                )
            )

    def _may_be_incomplete(self, branch: Ref, upstream: Oid, carrier: Oid) -> bool:
        """Can the closure of this present backport gain a member? Exactly when the resolver
        would find one: an absent follow-up (of it, or of a present follow-up, to any depth),
        an absent declared or recorded prerequisite, or, for a backport that differs from
        upstream, an upstream patch that conflicts at the backport's parent (cached by
        content: it depends on the two commits only)."""
        index, presence = self.ws.index, self.ws.presence
        ctx = self.resolver.context(branch)
        seen: set[Oid] = set()
        todo = [upstream]
        while todo:
            commit = todo.pop()
            if commit in seen:
                continue
            seen.add(commit)
            for relation in (
                *fixed_by(index, commit),
                *index.reverted_by(commit, upstream_only=True),
            ):
                if not presence.check(relation.commit, branch).present:
                    return True
                todo.append(relation.commit)
        if any(not presence.check(f.commit, branch).present for f in declared(ctx, upstream)):
            return True
        if any(not presence.check(f.commit, branch).present for f in recorded(ctx, upstream)):
            return True
        upstream_pid = index.patch_id(upstream)
        if upstream_pid is None or upstream_pid == index.patch_id(carrier):
            return False
        conflicts = index.adapted_conflicts(upstream, carrier)
        if conflicts is None:
            parents = self.ws.repo.parents(carrier)
            conflicts = bool(parents) and (
                self.resolver.applier.pick(upstream, TreeState(parents[0])).result == "conflict"
            )
            index.keep_adapted_conflicts(upstream, carrier, conflicts)
        return conflicts

    def prepare(self, backports: list[tuple[Oid, Oid]]) -> None:
        """Stage 1's bulk work: the upstream patch-ids of every backported commit, in one git
        pipeline (kept in the index, so the next scan pays nothing)."""
        self.ws.index.fill_patch_ids([u for _, u in backports])

    def _tagged(self, commit: Oid) -> bool:
        """Tagged for stable: a `Cc: stable@...` line (any project's stable address)."""
        return any(not t.noautosel for t in self.ws.index.stable_tags_of(commit))

    def _wanted(self, branch: Ref, commit: Oid) -> bool:
        """The policy: not dropped by the stable queue, not only in ignored paths, and not
        tagged for newer stable versions only."""
        if self.policy.is_dropped(branch.name, commit):
            return False
        if self.policy.ignored(self.ws.repo.files_touched(commit)):
            return False
        version = parse_version(branch.name)
        tags = [t for t in self.ws.index.stable_tags_of(commit) if t.since or t.until]
        return not (version and tags and not any(t.covers(version) for t in tags))

    def _culprit_evidence(self, culprit: Oid, branch: Ref) -> str:
        found = self.ws.presence.check(culprit, branch)
        where = (
            "in its history" if found.how == "ancestor" else f"as {(found.as_commit or '?')[:12]}"
        )
        return f"Fixes: {culprit[:12]} ({self._subject(culprit)}), in the branch {where}"

    # -- answers kept from earlier runs --------------------------------------------------------

    def _resolve(self, commit: Oid, branch: Ref) -> _Resolved:
        """The resolver's answer, or the one an earlier run kept when nothing that moved
        since can change it (see `_still_holds`): a nightly scan resolves only what the
        day's new commits touch."""
        scope = self._scope(branch, commit)
        kept = self.ws.index.cached_result(scope)
        if kept is not None:
            record = json.loads(kept)
            if self._still_holds(branch, record):
                self._counts[1] += 1
                return _Resolved(record["status"], _series_from_json(record["series"]))
        report = self.resolver.resolve_branch(commit, branch)
        self._counts[0] += 1
        self.ws.index.keep_result(scope, json.dumps(self._record(branch, commit, report)))
        return _Resolved(report.status, report.series)

    def _scope(self, branch: Ref, commit: Oid) -> str:
        parts = (
            "report-v1",
            __version__,
            branch.name,
            commit,
            str(self.resolver.max_commits),
            self.resolver.effective_culprits(),
        )
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()

    def _tips(self, branch: Ref) -> dict[str, Oid]:
        tips = {r.refname: r.tip for r in self.ws.indexed}
        tips[branch.refname] = branch.tip
        tips[self.ws.upstream.refname] = self.ws.upstream.tip
        return tips

    def _record(self, branch: Ref, commit: Oid, report: BranchReport) -> dict[str, object]:
        """The answer with what it depends on: every commit it looked at (the target, the
        series, what is present, the suggestions, and their culprits) and their files."""
        index = self.ws.index
        closure = {commit, *(m.commit for m in report.series)}
        closure |= {p.commit for p in report.present} | {s.commit for s in report.suggestions}
        closure |= {r.target for c in list(closure) for r in index.fixes_of(c) if r.target}
        files = {f for c in closure for f in self.ws.repo.files_touched(c)}
        return {
            "tips": self._tips(branch),
            "closure": sorted(closure),
            "files": sorted(files),
            "status": report.status,
            "series": _series_to_json(report.series),
        }

    def _still_holds(self, branch: Ref, record: dict[str, Any]) -> bool:
        """Nothing that moved since the answer was kept can change it: no new upstream commit
        fixes, reverts or names a commit it looked at; no new commit of the branch or of a
        sibling branch touches their files or carries one of them. A ref that was rewritten,
        appeared or vanished, or moved by more than `_MAX_DELTA` commits: resolve afresh."""
        then: dict[str, Oid] = record["tips"]
        now = self._tips(branch)
        if then == now:
            return True
        if set(then) != set(now):
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
                index = self.ws.index
                for c in closure:
                    related = (
                        *fixed_by(index, c),
                        *index.reverted_by(c, upstream_only=True),
                        *index.stable_deps_naming(c),
                    )
                    if any(r.commit in delta.commits for r in related):
                        return False
            elif delta.files & files or delta.carried & closure:
                return False
        return True

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
        files = {f for c in commits for f in repo.files_touched(c)}
        carried = {u for c in commits if (u := self.ws.index.carried_upstream(c)) is not None}
        return _Delta(frozenset(commits), frozenset(files), frozenset(carried))

    def _subject(self, commit: Oid) -> str:
        info = self.ws.index.info(commit)
        return info.subject if info else self.ws.repo.message(commit).split("\n", 1)[0]


def _series_to_json(series: Iterable[Member]) -> list[list[object]]:
    return [
        [
            m.commit,
            m.subject,
            m.role,
            [[r.kind, r.detail, r.related] for r in m.reasons],
            m.apply,
            list(m.conflict_files),
        ]
        for m in series
    ]


def _series_from_json(data: list[list[Any]]) -> tuple[Member, ...]:
    return tuple(
        Member(commit, subject, role, tuple(Reason(*r) for r in reasons), apply, tuple(files))
        for commit, subject, role, reasons, apply, files in data
    )


def _finding_to_json(finding: ScanFinding) -> dict[str, object]:
    return {
        "kind": finding.kind,
        "branch": finding.branch,
        "commit": finding.commit,
        "subject": finding.subject,
        "status": finding.status,
        "series": _series_to_json(finding.series),
        "evidence": list(finding.evidence),
        "tagged": finding.tagged,
        "culprit_seq": finding.culprit_seq,
    }


def _finding_from_json(data: dict[str, Any]) -> ScanFinding:
    return ScanFinding(
        data["kind"],
        data["branch"],
        data["commit"],
        data["subject"],
        data["status"],
        _series_from_json(data["series"]),
        tuple(data["evidence"]),
        bool(data.get("tagged", False)),
        int(data.get("culprit_seq", 0)),
    )


def candidate_range(ws: Workspace, since: str | None, range_: str | None) -> list[Oid] | None:
    """--since REV|DATE or --range A..B as a list of upstream commits (None: no limit)."""
    if range_:
        if ".." not in range_:
            raise BackportrError(f"--range expects A..B, got {range_!r}")
        start, _, end = range_.partition("..")
        return list(
            ws.repo.walk(ws.repo.resolve_commit(end or "HEAD"), [ws.repo.resolve_commit(start)])
        )
    if since:
        after = ws.repo.try_resolve_commit(since)
        if after is not None:
            return list(ws.repo.walk(ws.upstream.tip, [after]))
        return ws.repo.commits_since(ws.upstream.tip, since)  # a date, as git reads one
    return None


def run_scan(
    settings: Settings,
    policy: Policy,
    *,
    since: str | None = None,
    range_: str | None = None,
    progress: ProgressCallback = no_progress,
) -> list[BranchScan]:
    """Open the workspace and scan every branch of the settings (one process)."""
    with open_workspace(settings, progress=progress) as ws:
        limit = candidate_range(ws, since, range_)
        scanner = Scanner(
            ws, policy, progress=progress, max_commits=settings.max_commits,
            culprits=settings.culprits,
        )  # fmt: skip
        return [scanner.scan(branch, limit) for branch in ws.branches]


def _scan_slice(
    settings: Settings,
    policy: Policy,
    branch: str,
    targets: tuple[list[Oid], list[tuple[Oid, Oid]]],
) -> BranchScan:
    """A worker process's share: one slice of one branch's targets."""
    with open_workspace(settings, all_stable=True) as ws:
        ref = next(b for b in ws.branches if b.name == branch)
        scanner = Scanner(ws, policy, max_commits=settings.max_commits, culprits=settings.culprits)
        return scanner.scan(ref, targets=targets)


def run_scan_parallel(
    settings: Settings,
    policy: Policy,
    jobs: int,
    *,
    since: str | None = None,
    range_: str | None = None,
    progress: ProgressCallback = no_progress,
) -> list[BranchScan]:
    """Spread the targets of every branch over `jobs` processes; findings keep the order a
    single process gives. The index is brought up to date once, before the workers start."""
    from concurrent.futures import ProcessPoolExecutor

    with open_workspace(settings, progress=progress) as ws:
        limit = candidate_range(ws, since, range_)
        scanner = Scanner(ws, policy, max_commits=settings.max_commits, culprits=settings.culprits)
        plans = [(branch.name, scanner.targets(branch, limit)) for branch in ws.branches]
    most = max((len(f) + len(b) for _, (f, b) in plans), default=1)
    jobs = max(1, min(jobs, os.cpu_count() or 1, most))  # never more processes than work
    if jobs == 1:
        return run_scan(settings, policy, since=since, range_=range_, progress=progress)
    results = []
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for name, (fixes, backports) in plans:
            slices = [(fixes[i::jobs], backports[i::jobs]) for i in range(jobs)]
            parts = list(
                pool.map(_scan_slice, [settings] * jobs, [policy] * jobs, [name] * jobs, slices)
            )
            first = parts[0]
            merged = BranchScan(
                name, tip=first.tip, upstream=first.upstream, upstream_tip=first.upstream_tip
            )
            rank = {c: n for n, c in enumerate(fixes)}
            rank.update({u: len(fixes) + n for n, (_, u) in enumerate(backports)})
            for part in parts:
                merged.findings += part.findings
                merged.errors += part.errors
                merged.scanned += part.scanned
                merged.resolved += part.resolved
                merged.reused += part.reused
            merged.findings.sort(key=lambda f: (rank.get(f.commit, 1 << 30), f.kind))
            merged.findings = prioritize(merged.findings, policy.untagged)
            results.append(merged)
            progress(f"scanning {name}", merged.scanned, merged.scanned)
    return results
