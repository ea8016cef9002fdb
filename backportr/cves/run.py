"""One `backportr cves` run: read the records, skip those that cannot be read (each said),
classify the rest on every branch."""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable

from backportr.cves.classify import CveClassifier, CveOutcome
from backportr.cves.records import BadRecord, RecordFile, parse_record
from backportr.cves.state import CveState
from backportr.model import ProgressCallback, no_progress
from backportr.resolve import Resolver
from backportr.workspace import Workspace

_log = logging.getLogger("backportr")
_KEPT_AT_ONCE = 200  # answers per transaction of the state


def check_records(
    ws: Workspace,
    files: Iterable[RecordFile],
    wanted: Collection[str] = (),
    progress: ProgressCallback = no_progress,
    state: CveState | None = None,
) -> tuple[list[CveOutcome], list[tuple[str, str]]]:
    """Every record's outcome on every branch of `ws` (only the CVE ids `wanted`, when
    given), and the records that could not be read, with why: a malformed record is
    reported and skipped, never fatal for the run. With `state`, an answer kept by an
    earlier run is used where nothing it depends on moved, and the new ones are kept."""
    records, bad = [], []
    for file in files:
        try:
            record = parse_record(file.text, file.name, file.sha1)
        except BadRecord as error:
            bad.append((file.name, str(error).partition(": ")[2] or str(error)))
            continue
        if not wanted or record.cve in wanted:
            records.append(record)
    resolver = Resolver(ws, many=len(records) > 20, suggest=False, postings=False)
    classifier = CveClassifier(resolver)  # as a scan resolves: its answers serve both
    outcomes: list[CveOutcome] = []
    fresh: list[tuple[str, CveOutcome]] = []
    classified = 0
    for done, record in enumerate(records):
        progress("classifying CVE records", done, len(records))
        for branch in ws.branches:
            key = f"{record.digest}:{branch.tip}:{ws.upstream.tip}"
            kept = state.answer(branch.name, record.cve, key) if state is not None else None
            if kept is None:
                kept = classifier.classify(record, [branch])[0]
                fresh.append((key, kept))
                classified += 1
            outcomes.append(kept)
        if state is not None and len(fresh) >= _KEPT_AT_ONCE:
            state.keep(fresh)  # answers are kept as they come: an interrupted run loses little
            fresh.clear()
    classifier.keep()
    if state is not None:
        state.keep(fresh)
    _log.info(
        "cves: %d records, %d answers anew, %d kept by an earlier run",
        len(records), classified, len(outcomes) - classified,
    )  # fmt: skip
    progress("classifying CVE records", len(records), len(records))
    return outcomes, bad
