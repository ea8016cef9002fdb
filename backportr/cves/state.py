"""What earlier `backportr cves` runs answered and reported (SQLite, `--state FILE`), and the
lock that keeps two scheduled runs apart.

An answer is cached under a key naming everything it depends on: the record's hash, the
branch's tip and upstream's; a nightly run on a growing records repository classifies only
the records that are new or changed, and again every record of a branch that moved. What
was reported is cached apart (`--new-only`: an outcome not reported before), and recorded
only once the output that reports it is safely written.
"""

from __future__ import annotations

import fcntl
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from backportr.cves.classify import CveOutcome
from backportr.infra.statefile import open_state
from backportr.model import BranchReport
from backportr.scan.findings import series_from_json, series_to_json


class CveState:
    """Cached answers and reported outcomes; holds an exclusive lock while open."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock, self.db = open_state(
            path,
            f"another cves run is running (it holds {path.name}.lock); try again later",
            "CREATE TABLE IF NOT EXISTS answers(branch TEXT, cve TEXT, key TEXT, answer TEXT,"
            " PRIMARY KEY(branch, cve));"
            "CREATE TABLE IF NOT EXISTS reported(key TEXT PRIMARY KEY, first_seen INTEGER);",
            "the cves state",
        )

    def answer(self, branch: str, cve: str, key: str) -> CveOutcome | None:
        """The cached answer for a record on a branch, when nothing it depends on moved."""
        row = self.db.execute(
            "SELECT key, answer FROM answers WHERE branch=? AND cve=?", (branch, cve)
        ).fetchone()
        if row is None or row[0] != key:
            return None
        try:
            return outcome_from_json(json.loads(row[1]))
        except (ValueError, KeyError, TypeError):
            return None  # an answer an older version cached: classified again

    def cache(self, answers: Sequence[tuple[str, CveOutcome]]) -> None:
        with self.db:
            self.db.executemany(
                "INSERT OR REPLACE INTO answers VALUES(?, ?, ?, ?)",
                [(o.branch, o.cve, key, json.dumps(outcome_to_json(o))) for key, o in answers],
            )

    def new(self, outcomes: Sequence[CveOutcome]) -> list[CveOutcome]:
        known = {row[0] for row in self.db.execute("SELECT key FROM reported")}
        return [o for o in outcomes if _reported_key(o) not in known]

    def record(self, outcomes: Sequence[CveOutcome]) -> None:
        now = int(time.time())
        with self.db:
            self.db.executemany(
                "INSERT OR IGNORE INTO reported VALUES(?, ?)",
                [(_reported_key(o), now) for o in outcomes],
            )

    def close(self) -> None:
        self.db.close()
        fcntl.flock(self._lock, fcntl.LOCK_UN)
        self._lock.close()


def _reported_key(o: CveOutcome) -> str:
    return f"{o.branch}\0{o.cve}\0{o.outcome}"


def outcome_to_json(o: CveOutcome) -> dict[str, object]:
    return {
        "cve": o.cve,
        "title": o.title,
        "branch": o.branch,
        "outcome": o.outcome,
        "how": o.how,
        "fix": o.fix,
        "as": o.as_commit,
        "status": o.report.status if o.report else None,
        "series": series_to_json(o.report.series) if o.report else [],
    }


def outcome_from_json(data: dict[str, Any]) -> CveOutcome:
    report = (
        BranchReport(data["branch"], data["status"], series_from_json(data["series"]))
        if data["status"]
        else None
    )
    return CveOutcome(
        data["cve"],
        data["title"],
        data["branch"],
        data["outcome"],
        data["how"],
        data["fix"],
        data["as"],
        report,
    )
