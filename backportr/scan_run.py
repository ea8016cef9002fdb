"""Running scans: the candidate range (`--since`, `--range`), one process or several (the
targets of each branch spread over workers, findings in the order one process gives)."""

from __future__ import annotations

import os

from backportr.config import Settings
from backportr.errors import BackportrError
from backportr.findings import BranchScan, Policy, prioritize
from backportr.model import Oid, ProgressCallback, no_progress
from backportr.scan import Scanner
from backportr.workspace import Workspace, open_workspace


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
