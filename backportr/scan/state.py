"""What earlier scans reported (SQLite), and the lock that keeps two scheduled runs apart.

The front-end's edge for `backportr scan --state FILE [--new-only]`."""

from __future__ import annotations

import fcntl
import time
from collections.abc import Sequence
from pathlib import Path

from backportr.infra.statefile import open_state
from backportr.scan.findings import ScanFinding


class ScanState:
    """Remembers finding keys; holds an exclusive lock while open."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock, self.db = open_state(
            path,
            f"another scan is running (it holds {path.name}.lock); try again later",
            "CREATE TABLE IF NOT EXISTS reported("
            "key TEXT PRIMARY KEY, first_seen INTEGER NOT NULL);",
            "the scan state",
        )

    def reported(self) -> frozenset[str]:
        """The keys of every finding an earlier run reported."""
        return frozenset(row[0] for row in self.db.execute("SELECT key FROM reported"))

    def new(self, findings: Sequence[ScanFinding]) -> list[ScanFinding]:
        known = {row[0] for row in self.db.execute("SELECT key FROM reported")}
        return [f for f in findings if f.key not in known]

    def record(self, findings: Sequence[ScanFinding]) -> None:
        now = int(time.time())
        with self.db:
            self.db.executemany(
                "INSERT OR IGNORE INTO reported VALUES(?, ?)", [(f.key, now) for f in findings]
            )

    def close(self) -> None:
        self.db.close()
        fcntl.flock(self._lock, fcntl.LOCK_UN)
        self._lock.close()

    def __enter__(self) -> ScanState:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
