"""Marks a maintainer keeps on findings, in a plain file (in the repository, or beside the
stable queue): one line per mark, diff-friendly, read by every scan.

    # MARK               BRANCH  COMMIT        LACKING                    REASON
    adapted-on-purpose   23.11   6c0a92a90b5d  408bdf36290e,18aa7dff9a6f  we keep the old API
    not-for-branch       23.11   1f2e3d4c5b6a  -                          driver not shipped

MARK is `adapted-on-purpose` or `not-for-branch`; COMMIT is the finding's commit (its
abbreviated id); LACKING the commits the finding named when it was marked (`-`: the finding's
commit alone), comma-separated. A marked finding is counted, not listed, while it names the
same commits; when it names others (a new follow-up, a new prerequisite) it is listed again,
the mark quoted. `backportr scan` prints the line to add under each finding (`mark:`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from backportr.errors import BackportrError
from backportr.infra.files import read_regular
from backportr.model import short
from backportr.scan.findings import BranchScan, ScanFinding

MARKS = ("adapted-on-purpose", "not-for-branch")
_LIMIT = 16 << 20
_ID = re.compile(r"^[0-9a-f]{7,40}$")


@dataclass(frozen=True, slots=True)
class Mark:
    mark: str
    branch: str
    commit: str
    lacking: frozenset[str]  # abbreviated ids, as written
    reason: str

    def names(self, finding: ScanFinding) -> bool:
        return finding.branch == self.branch and finding.commit.startswith(self.commit)

    def unchanged(self, finding: ScanFinding) -> bool:
        """Does the finding name the same commits as when it was marked?"""
        now = {c for c in finding.missing if c != finding.commit}
        if len(now) != len(self.lacking):
            return False
        return all(any(c.startswith(prefix) for c in now) for prefix in self.lacking)


def mark_line(finding: ScanFinding, mark: str = "not-for-branch") -> str:
    """The line that marks `finding` as it is now (the reason left for the maintainer)."""
    lacking = ",".join(short(c) for c in finding.missing if c != finding.commit) or "-"
    return f"{mark} {finding.branch} {short(finding.commit)} {lacking} REASON"


class Marks:
    """The marks of one file (none without a file)."""

    def __init__(self, marks: tuple[Mark, ...] = ()) -> None:
        self.marks = marks

    @classmethod
    def load(cls, path: Path | None) -> Marks:
        if path is None:
            return cls()
        data = read_regular(path, _LIMIT)
        if data is None:
            return cls()  # no marks yet: the file is made by the first one added
        marks = []
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            marks.append(_parse(line, f"{path}:{number}"))
        return cls(tuple(marks))

    def find(self, finding: ScanFinding) -> Mark | None:
        return next((m for m in self.marks if m.names(finding)), None)

    def apply(self, scan: BranchScan) -> None:
        """Findings (and adapted backports) a mark holds: out of the lists, counted in
        `scan.marked`; those whose mark no longer matches: listed, the mark quoted."""
        for group in ("findings", "adapted"):
            listed: list[ScanFinding] = []
            for finding in getattr(scan, group):
                held = self.held(finding)
                if held is None:
                    listed.append(self.quoted(finding))
                else:
                    scan.marked.append(held)
            setattr(scan, group, listed)

    def held(self, finding: ScanFinding) -> str | None:
        """The marked line of a finding a mark holds back, else None."""
        mark = self.find(finding)
        if mark is None or not mark.unchanged(finding):
            return None
        return f"{finding.kind} {short(finding.commit)}: {mark.mark} ({mark.reason})"

    def quoted(self, finding: ScanFinding) -> ScanFinding:
        """A finding whose mark no longer matches, with the mark in its evidence."""
        mark = self.find(finding)
        if mark is None:
            return finding
        note = f"marked {mark.mark} ({mark.reason}), but it changed since: it now names others"
        return replace(finding, evidence=(*finding.evidence, note))


def _parse(line: str, where: str) -> Mark:
    parts = line.split(None, 4)
    if len(parts) < 4:
        raise BackportrError(f"{where}: expected 'MARK BRANCH COMMIT LACKING [REASON]'")
    mark, branch, commit, lacking = parts[:4]
    if mark not in MARKS:
        raise BackportrError(f"{where}: the mark is {' or '.join(MARKS)}, not {mark!r}")
    commit = commit.lower()
    shorts = [] if lacking == "-" else lacking.lower().split(",")
    if not _ID.match(commit) or not all(_ID.match(s) for s in shorts):
        raise BackportrError(f"{where}: commits are abbreviated ids (7 to 40 hex digits)")
    return Mark(mark, branch, commit, frozenset(shorts), parts[4].strip() if len(parts) > 4 else "")
