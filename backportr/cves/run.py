"""One `backportr cves` run: read the records, skip those that cannot be read (each said),
classify the rest on every branch."""

from __future__ import annotations

import json
import logging
from collections.abc import Collection, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass

from backportr import __version__
from backportr.cves.classify import CveClassifier, CveOutcome
from backportr.cves.records import (
    BadRecord,
    CveRecord,
    RecordFile,
    parse_record,
    record_from_json,
    record_to_json,
)
from backportr.cves.state import CveState
from backportr.errors import BackportrError
from backportr.infra.signals import children_stopped, signals_exit, worker_signals
from backportr.model import ProgressCallback, no_progress
from backportr.resolve.resolver import Resolver
from backportr.resolve.workspace import Workspace, open_workspace
from backportr.settings import Settings

_log = logging.getLogger("backportr")
_CACHED_AT_ONCE = 200  # answers per transaction of the state
_PER_CHUNK = 8  # records on a branch: fewer to classify than this a process, one process
_CHUNKS_PER_JOB = 4  # chunks a process takes in turn (a few records cost more than others)


def check_records(
    ws: Workspace,
    files: Iterable[RecordFile],
    wanted: Collection[str] = (),
    progress: ProgressCallback = no_progress,
    state: CveState | None = None,
    *,
    jobs: int = 1,
    settings: Settings | None = None,
) -> tuple[list[CveOutcome], list[tuple[str, str]]]:
    """Every record's outcome on every branch of `ws` (only the CVE ids `wanted`, when
    given), and the records that could not be read, with why: a malformed record is
    reported and skipped, never fatal for the run. With `state`, an answer cached by an
    earlier run is used where nothing it depends on moved, and the new ones are cached. With
    `jobs` > 1 (and the `settings` `ws` was opened with), the records to classify are
    spread over that many processes, each taking the next chunk as it finishes one."""
    records, bad = _parsed(ws, files, wanted)
    slots: list[CveOutcome | None] = []
    pending: list[_Asked] = []
    for record in records:
        for branch in ws.branches:
            key = f"{record.digest}:{branch.tip}:{ws.upstream.tip}"
            cached = state.answer(branch.name, record.cve, key) if state is not None else None
            if cached is None:
                pending.append(_Asked(len(slots), record, branch.name, key))
            slots.append(cached)
    workers = min(jobs, -(-len(pending) // _PER_CHUNK))
    if workers > 1 and settings is not None:
        answered = _in_processes(settings, pending, workers, progress)
    else:
        answered = _classified(ws, pending, progress)
    fresh = []
    for asked, outcome in zip(pending, answered, strict=True):
        slots[asked.slot] = outcome
        fresh.append((asked.key, outcome))
    if state is not None:
        for first in range(0, len(fresh), _CACHED_AT_ONCE):
            state.cache(fresh[first : first + _CACHED_AT_ONCE])
    _log.info(
        "cves: %d records, %d answers anew, %d cached by an earlier run",
        len(records), len(pending), len(slots) - len(pending),
    )  # fmt: skip
    return [o for o in slots if o is not None], bad


@dataclass(frozen=True, slots=True)
class _Asked:
    """A record to classify on a branch, and where its answer goes."""

    slot: int
    record: CveRecord
    branch: str
    key: str


def _parsed(
    ws: Workspace, files: Iterable[RecordFile], wanted: Collection[str]
) -> tuple[list[CveRecord], list[tuple[str, str]]]:
    """The records, each read and parsed once: the index keeps every file's parse under the
    key naming its content (`RecordFile.key`), so a later run reads only what changed."""
    found = list(files)
    keys = {f.name: f"cve-record:{__version__}:{f.key}" for f in found}
    cached = ws.index.cache.cached_results(list(keys.values()))
    records, bad, fresh = [], [], []
    for file in found:
        value = cached.get(keys[file.name])
        if value is None:
            text, sha1 = file.load()
            try:
                value = json.dumps({"record": record_to_json(parse_record(text, file.name, sha1))})
            except BadRecord as error:
                value = json.dumps({"bad": str(error).partition(": ")[2] or str(error)})
            fresh.append((keys[file.name], value))
        data = json.loads(value)
        if "bad" in data:
            bad.append((file.name, str(data["bad"])))
            continue
        record = record_from_json(data["record"])
        if not wanted or record.cve in wanted:
            records.append(record)
    ws.index.cache.cache_results(fresh)
    records = _one_per_cve(records)
    _log.info("cves: %d record files, %d read anew", len(found), len(fresh))
    return records, bad


def _one_per_cve(records: list[CveRecord]) -> list[CveRecord]:
    """Two record files of one CVE id: the same record once; records that say different
    things a warning naming the id (both are cached: neither is known to be the right one)."""
    first: dict[str, CveRecord] = {}
    out = []
    for record in records:
        seen = first.get(record.cve)
        if seen is None:
            first[record.cve] = record
            out.append(record)
        elif _contradict(seen, record):
            _log.warning(
                "%s: two record files say different things (their fixes or files differ); "
                "both are classified: check the records",
                record.cve,
            )
            out.append(record)
    return out


def _contradict(one: CveRecord, other: CveRecord) -> bool:
    """Different fixes or files (a record without its `.sha1` names no mainline fix: that
    alone is no contradiction)."""
    mainlines = one.mainline and other.mainline and one.mainline != other.mainline
    return bool(one.pairs != other.pairs or one.files != other.files or mainlines)


def _classified(
    ws: Workspace, asked: Sequence[_Asked], progress: ProgressCallback = no_progress
) -> list[CveOutcome]:
    """Each record on its branch, in this process (a missing one resolved as a scan does:
    its answers serve both)."""
    resolver = Resolver(ws, many=len(asked) > 20, suggest=False, postings=False)
    classifier = CveClassifier(resolver)
    refs = {b.name: b for b in ws.branches}
    out = []
    for done, one in enumerate(asked):
        progress("classifying CVE records", done, len(asked))
        out += classifier.classify(one.record, [refs[one.branch]])
    classifier.cache()
    progress("classifying CVE records", len(asked), len(asked))
    return out


def _share(settings: Settings, asked: Sequence[_Asked]) -> list[CveOutcome]:
    """A worker's chunk, in a workspace of its own (the index is up to date already)."""
    with worker_signals(), open_workspace(settings) as ws:
        return _classified(ws, asked)


def _in_processes(
    settings: Settings, asked: Sequence[_Asked], jobs: int, progress: ProgressCallback
) -> list[CveOutcome]:
    size = max(1, -(-len(asked) // (jobs * _CHUNKS_PER_JOB)))
    chunks = [list(asked[i : i + size]) for i in range(0, len(asked), size)]
    results: dict[int, list[CveOutcome]] = {}
    try:
        pool = ProcessPoolExecutor(max_workers=jobs, initializer=signals_exit)
    except OSError as error:  # no semaphores here (a confined container): one process
        raise BackportrError(f"cannot start {jobs} processes ({error}); use --jobs 1") from None
    _log.info("cves: %d to classify in %d processes, %d chunks", len(asked), jobs, len(chunks))
    with pool, children_stopped():
        running = {pool.submit(_share, settings, chunk): n for n, chunk in enumerate(chunks)}
        for done, future in enumerate(as_completed(running), 1):
            results[running[future]] = future.result()
            progress("classifying CVE records", done * size, len(asked))
    return [o for n in range(len(chunks)) for o in results[n]]
