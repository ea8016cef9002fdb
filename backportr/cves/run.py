"""One `backportr cves` run: read the records, skip those that cannot be read (each said),
classify the rest on every branch."""

from __future__ import annotations

from collections.abc import Collection, Iterable

from backportr.cves.classify import CveClassifier, CveOutcome
from backportr.cves.records import BadRecord, RecordFile, parse_record
from backportr.model import ProgressCallback, no_progress
from backportr.resolve import Resolver
from backportr.workspace import Workspace


def check_records(
    ws: Workspace,
    files: Iterable[RecordFile],
    wanted: Collection[str] = (),
    progress: ProgressCallback = no_progress,
) -> tuple[list[CveOutcome], list[tuple[str, str]]]:
    """Every record's outcome on every branch of `ws` (only the CVE ids `wanted`, when
    given), and the records that could not be read, with why: a malformed record is
    reported and skipped, never fatal for the run."""
    records, bad = [], []
    for file in files:
        try:
            record = parse_record(file.text, file.name, file.sha1)
        except BadRecord as error:
            bad.append((file.name, str(error).partition(": ")[2] or str(error)))
            continue
        if not wanted or record.cve in wanted:
            records.append(record)
    classifier = CveClassifier(Resolver(ws, many=len(records) > 20, postings=False))
    outcomes: list[CveOutcome] = []
    for done, record in enumerate(records):
        progress("classifying CVE records", done, len(records))
        outcomes += classifier.classify(record, ws.branches)
    progress("classifying CVE records", len(records), len(records))
    return outcomes, bad
