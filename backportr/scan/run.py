"""Running scans: the candidate range (`--since`, `--range`), one process or several (the
targets of each branch spread over workers, findings in the order one process gives)."""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import secrets
import sys
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import replace
from multiprocessing.managers import SyncManager
from queue import Queue

from backportr.errors import BackportrError
from backportr.git.names import Ref
from backportr.infra.process import usable_cores
from backportr.infra.signals import children_stopped, signals_exit, worker_signals
from backportr.model import Oid, ProgressCallback, no_progress
from backportr.resolve.workspace import Workspace, open_workspace
from backportr.scan.findings import (
    BranchScan,
    Policy,
    ScanFinding,
    finding_from_json,
    finding_to_json,
    prioritize,
)
from backportr.scan.practice import MIN_HISTORY, PracticeReader, cached_verdict, settle
from backportr.scan.prefetch import ReadAhead, prune_cache
from backportr.scan.scanner import Scanner, log_scanned
from backportr.settings import Settings

_log = logging.getLogger("backportr")


def candidate_range(ws: Workspace, since: str | None, range_: str | None) -> list[Oid] | None:
    """--since REV|DATE or --range A..B as a list of upstream commits (None: no limit)."""
    if range_:
        if ".." not in range_:
            raise BackportrError(f"--range expects A..B, got {range_!r}")
        start, _, end = range_.partition("..")
        return list(
            ws.repo.walk(
                ws.repo.names.resolve_commit(end or "HEAD"), [ws.repo.names.resolve_commit(start)]
            )
        )
    if since:
        after = ws.repo.names.try_resolve_commit(since)
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
    read_ahead: bool = True,
    on_settled: Callable[[ScanFinding], None] | None = None,
) -> list[BranchScan]:
    """Open the workspace and scan every branch of the settings (one process); with
    `read_ahead`, the tips' identifier sets and the history since each fork are read beside
    the index update (`ReadAhead`). `on_settled` is told of each finding as soon as it is
    settled (a stream), the others are in the scans returned."""
    with (
        ReadAhead(settings) if read_ahead else contextlib.nullcontext(),
        open_workspace(settings, progress=progress, named_patch_ids=True) as ws,
    ):
        limit = candidate_range(ws, since, range_)
        scanner = Scanner(ws, policy, progress=progress, on_settled=on_settled)
        _forget_unasked(ws, scanner)
        return _settled(scanner, [scanner.scan(branch, limit) for branch in ws.branches])


def _settled(scanner: Scanner, scans: list[BranchScan]) -> list[BranchScan]:
    """Each branch's findings judged once the branch is scanned (`practice.settle`); a
    detection judges nothing (`detected`)."""
    refs = {ref.name: ref for ref in scanner.ws.branches}
    if scanner.policy.detect:
        for scan in scans:
            verdict = cached_verdict(scanner, refs[scan.branch])
            report_adapted(scan, scanner.policy, verdict)
            scan.practice = detected(scan, verdict)
        return scans
    reader = PracticeReader(scanner)
    for scan in scans:
        settle(scan, refs[scan.branch], reader)
    return scans


def report_adapted(
    scan: BranchScan, policy: Policy, verdict: tuple[bool, str] | None = None
) -> None:
    """A detection's adapted backports where a full scan reports them as findings (the IMA
    case), so the detection does too: where the branch's last full scan found no practice
    of adapting on purpose (`verdict`, its own history or with its siblings'), or, before
    any, where the branch has too few to have one (fewer than `MIN_HISTORY`, counting those
    not tried); otherwise they stay apart, for a full scan to judge."""
    if not scan.adapted:
        return
    if verdict is not None and verdict[0]:
        return
    if verdict is None and len(scan.adapted) + scan.untried >= MIN_HISTORY:
        return
    scan.findings = prioritize(
        [*scan.findings, *(replace(f, kind="incomplete-backport") for f in scan.adapted)],
        policy.untagged,
    )
    scan.adapted = []


def detected(scan: BranchScan, verdict: tuple[bool, str] | None = None) -> str:
    """What a detection leaves to a full scan, in one line (and the last full scan's
    verdict on the branch's practice, where one was made)."""
    if not scan.adapted and not scan.untried:
        return ""
    judged = f"; the last full scan: {verdict[1]}" if verdict is not None else ""
    return (
        f"detection only: {len(scan.adapted)} backport(s) an earlier scan found adapted, "
        f"{scan.untried} that differ from their upstream original not tried; a full scan "
        f"names what they went without and judges it by the branch's practice{judged}"
    )


def _forget_unasked(ws: Workspace, scanner: Scanner) -> None:
    """Remove what each night's scan would leave behind and no question of this one can
    ask for: the cached identifier sets of trees no indexed tip has, the histories of earlier
    upstream tips, the findings cached for the scanned branches in their earlier states."""
    trees = {ws.repo.tree_id(ref.tip) for ref in ws.indexed}
    prune_cache(ws.index.path.parent, trees, ws.upstream.tip)
    scanner.forget_other_states()


Targets = tuple[list[Oid], list[tuple[Oid, Oid]]]
"""A share of one branch's work: fixes to check, (carrier, upstream) backports to check."""

_CHUNKS_PER_JOB = 32  # a branch's targets in about this many runs of neighbours per process
_FOLLOW_SECONDS = 0.2  # how long the main process waits for a finished chunk between looks

AUTO_JOBS = 4
"""`--jobs 0` (the default) runs one process per core this process may use, at most this
many: each holds its own caches (at kernel scale up to a gigabyte), and past a few the
shares of one branch's targets gain little."""

AUTO_MIN_TARGETS = 32
"""... and only where a branch has at least this many targets no earlier run answered: for
fewer (a warm rescan has none), starting the processes costs more than they save (0.3 s
on FRR's warm rescan, where one process takes 0.3-0.5 s)."""

AUTO_MIN_DETECTED = 8_000
"""... and for a detection (`--detect`: each target an index question, 0.1-0.2 ms; a
process started costs 0.3-0.4 s, its workspace opened and its share's bulk work done) only
where a branch has at least this many targets: DPDK 23.11's 3,221 took 0.85 s in one
process, 1.06 s in two; the generated kernel-scale branch's 24,930, 3.1 s and 2.8 s."""


def processes(jobs: int, most: int, unanswered: Callable[[], int], *, detect: bool = False) -> int:
    """How many processes scan branches of at most `most` targets: `jobs`, never more than
    the cores or the targets; 0 chooses (`AUTO_JOBS`, `AUTO_MIN_TARGETS`) from the most
    targets of a branch no earlier run's cached answer covers (`unanswered`, asked only
    then), or for a detection from the most targets of a branch (`AUTO_MIN_DETECTED`)."""
    cores = usable_cores()
    if jobs == 0 and detect:
        return min(cores, AUTO_JOBS) if most >= AUTO_MIN_DETECTED else 1
    if jobs == 0:
        return min(cores, AUTO_JOBS) if unanswered() >= AUTO_MIN_TARGETS else 1
    return max(1, min(jobs, cores, most))


def _chunks(targets: Targets, jobs: int) -> list[Targets]:
    """The targets cut into runs of neighbours (in upstream or branch order, neighbours
    often touch the same files: their merges and blames meet in one process's caches),
    small enough that processes taking the next run as they finish end together."""
    fixes, backports = targets
    size = max(1, -(-(len(fixes) + len(backports)) // (jobs * _CHUNKS_PER_JOB)))
    chunks: list[Targets] = [(fixes[i : i + size], []) for i in range(0, len(fixes), size)]
    chunks += [([], backports[i : i + size]) for i in range(0, len(backports), size)]
    return chunks


def _scan_share(
    settings: Settings,
    policy: Policy,
    branch: str,
    share: Targets,
    work: Queue[tuple[int, Targets] | None],
    finished: Queue[tuple[int, list[dict[str, object]]]],
) -> list[tuple[int, BranchScan]]:
    """A worker process's part of one branch: stage 1's bulk work for `share` (every
    `jobs`-th target), then the chunks it takes from `work` until it takes the end mark,
    each scanned with the same workspace (its caches serve them all); how many targets
    each chunk held goes to `finished` (the progress line)."""
    done: list[tuple[int, BranchScan]] = []
    settled: list[dict[str, object]] = []
    with worker_signals(), open_workspace(settings, all_stable=True, named_patch_ids=True) as ws:
        ref = next(b for b in ws.branches if b.name == branch)
        scanner = Scanner(ws, policy, on_settled=lambda f: settled.append(finding_to_json(f)))
        scanner.prepare_share(ref, share)
        while (item := work.get()) is not None:
            number, targets = item
            done.append((number, scanner.scan(ref, targets=targets)))
            finished.put((len(targets[0]) + len(targets[1]), settled[:]))
            settled.clear()
    return done


def _follow(
    shares: list[Future[list[tuple[int, BranchScan]]]],
    finished: Queue[tuple[int, list[dict[str, object]]]],
    what: str,
    total: int,
    progress: ProgressCallback,
    on_settled: Callable[[ScanFinding], None] | None,
) -> None:
    """Tell the progress line how many targets the processes have finished, chunk by
    chunk, and `on_settled` the findings each chunk settled, until every process has ended
    (its result, or its error, is then read)."""
    count = 0
    progress(what, count, total)
    while not all(share.done() for share in shares) or not finished.empty():
        try:
            done, settled = finished.get(timeout=_FOLLOW_SECONDS)
        except queue.Empty:
            continue
        count += done
        if on_settled is not None:
            for data in settled:
                on_settled(finding_from_json(data))
        progress(what, count, total)


def run_scan_parallel(
    settings: Settings,
    policy: Policy,
    jobs: int,
    *,
    since: str | None = None,
    range_: str | None = None,
    progress: ProgressCallback = no_progress,
    on_settled: Callable[[ScanFinding], None] | None = None,
) -> list[BranchScan]:
    """Spread the targets of every branch over `jobs` processes (0: `processes` chooses),
    each taking the next chunk as it finishes one (a few targets can cost more than all the
    others: a fixed split left one process idle for a fifth of an OVN scan); findings keep
    the order a single process gives. The index is brought up to date once, before the
    workers start."""
    with ReadAhead(settings):
        return _run_scan_parallel(
            settings, policy, jobs, since=since, range_=range_, progress=progress,
            on_settled=on_settled,
        )  # fmt: skip


def _run_scan_parallel(
    settings: Settings,
    policy: Policy,
    jobs: int,
    *,
    since: str | None,
    range_: str | None,
    progress: ProgressCallback,
    on_settled: Callable[[ScanFinding], None] | None,
) -> list[BranchScan]:
    with open_workspace(settings, progress=progress, named_patch_ids=True) as ws:
        limit = candidate_range(ws, since, range_)
        scanner = Scanner(ws, policy, progress=progress, on_settled=on_settled)
        plans = [(branch.name, scanner.targets(branch, limit)) for branch in ws.branches]
        tips = {branch.name: branch.tip for branch in ws.branches}
        upstream = ws.upstream
        jobs = processes(
            jobs,
            max((len(f) + len(b) for _, (f, b) in plans), default=1),
            lambda: max(
                (
                    scanner.unanswered(ref, *t)
                    for ref, (_, t) in zip(ws.branches, plans, strict=True)
                ),
                default=0,
            ),
            detect=policy.detect,
        )
        _forget_unasked(ws, scanner)
        if jobs == 1:  # one process: this one, in the workspace it has open
            pairs = zip(ws.branches, plans, strict=True)
            scans = [scanner.scan(ref, targets=t) for ref, (_, t) in pairs]
            for scan in scans:
                log_scanned(scan)  # a whole branch, as `scan` without `targets` tells it
            return _settled(scanner, scans)
        with contextlib.ExitStack() as running:
            try:
                manager = _manager()
                manager.start(signals_exit)
                running.enter_context(manager)
                pool = running.enter_context(
                    ProcessPoolExecutor(max_workers=jobs, initializer=signals_exit)
                )
            except OSError as error:  # no semaphores or sockets here (a confined container)
                _log.warning("scanning in one process: cannot start %d (%s)", jobs, error)
                pairs = zip(ws.branches, plans, strict=True)
                return _settled(scanner, [scanner.scan(ref, targets=t) for ref, (_, t) in pairs])
            running.enter_context(children_stopped())  # before the pool waits for them
            scans = _scan_in(
                pool, manager, plans, (tips, upstream), jobs, settings, policy, progress,
                on_settled,
            )  # fmt: skip
        return _settled(scanner, scans)


def _manager() -> SyncManager:
    """The manager of the shares' queues. On Linux its socket is in the abstract namespace
    (a name, no file): by default it is a file under the temporary directory, and a socket
    path longer than 107 bytes cannot be bound (a deep `TMPDIR`: the manager process died
    with a traceback, and the scan with it). Its key still guards who may connect."""
    if sys.platform.startswith("linux"):
        return SyncManager(address=f"\0backportr-scan-{os.getpid()}-{secrets.token_hex(8)}")
    return SyncManager()


def _scan_in(
    pool: ProcessPoolExecutor,
    manager: SyncManager,
    plans: list[tuple[str, Targets]],
    where: tuple[dict[str, Oid], Ref],
    jobs: int,
    settings: Settings,
    policy: Policy,
    progress: ProgressCallback,
    on_settled: Callable[[ScanFinding], None] | None,
) -> list[BranchScan]:
    """Each branch's targets spread over the pool's processes (`_scan_share`), merged back
    in the order one process gives."""
    tips, upstream = where
    results = []
    for name, (fixes, backports) in plans:
        work: Queue[tuple[int, Targets] | None] = manager.Queue()
        for item in enumerate(_chunks((fixes, backports), jobs)):
            work.put(item)
        for _ in range(jobs):
            work.put(None)  # one end mark per share
        finished: Queue[tuple[int, list[dict[str, object]]]] = manager.Queue()
        shares = [
            pool.submit(_scan_share, settings, policy, name, (fixes[i::jobs],
                        backports[i::jobs]), work, finished)
            for i in range(jobs)
        ]  # fmt: skip
        total = len(fixes) + len(backports)
        _follow(shares, finished, f"scanning {name}", total, progress, on_settled)
        done = sorted((p for share in shares for p in share.result()), key=lambda p: p[0])
        parts = [part for _, part in done]  # in chunk order: errors as one process lists them
        first = (
            parts[0]
            if parts
            else BranchScan(  # a branch with nothing to look at
                name, tip=tips[name], upstream=upstream.name, upstream_tip=upstream.tip
            )
        )
        merged = BranchScan(
            name, tip=first.tip, upstream=first.upstream, upstream_tip=first.upstream_tip
        )
        rank = {c: n for n, c in enumerate(fixes)}
        rank.update({u: len(fixes) + n for n, (_, u) in enumerate(backports)})
        for part in parts:
            merged.findings += part.findings
            merged.adapted += part.adapted
            merged.untried += part.untried
            merged.errors += part.errors
            merged.scanned += part.scanned
            merged.resolved += part.resolved
            merged.reused += part.reused
            merged.cached += part.cached
        merged.findings.sort(key=lambda f: (rank.get(f.commit, 1 << 30), f.kind))
        merged.adapted.sort(key=lambda f: rank.get(f.commit, 1 << 30))
        merged.findings = prioritize(merged.findings, policy.untagged)
        log_scanned(merged)
        results.append(merged)
        progress(f"scanning {name}", merged.scanned, merged.scanned)
    return results
