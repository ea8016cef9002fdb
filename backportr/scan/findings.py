"""What a scan finds, and the policy of what it must not report: the finding and branch
result types, their priority order, their JSON form (cached between runs), and the ignore list,
the stable queue's dropped list and `Cc: stable # X.Y+` floors."""

from __future__ import annotations

import fnmatch
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from backportr.errors import BackportrError
from backportr.model import NO_OID, Member, Oid, Reason
from backportr.settings import SCAN_CONFLICT_DEPTH
from backportr.text.trailers import parse_version

KINDS = ("missing-fix", "incomplete-backport", "reverted-upstream", "dropped", "adapted-backport")
"""`adapted-backport` is not a finding to act on: a backport that went without what its upstream
original needed, on a branch whose maintainers adapt on purpose (counted apart)."""

Confidence = Literal["high", "normal", "low"]
"""How far the stable branches' own decisions bear a finding out: a newer line took what it
names (high); every sibling carrying the same commit went without it for months, or the
branch itself went without it while it took later upstream commits (low)."""


Untagged = Literal["include", "separate", "skip"]
"""Missing fixes without a stable tag: reported among the others (by priority), after all
tagged ones, or not at all. Most stable teams take what is tagged for stable."""


@dataclass(frozen=True, slots=True)
class Policy:
    """What a scan must not report."""

    ignore: tuple[str, ...] = ()  # path globs: a commit touching only these is skipped
    dropped: frozenset[tuple[str, Oid]] = frozenset()  # (X.Y, upstream id)
    untagged: Untagged = "include"
    # how deep each missing fix's conflict prerequisites are searched (`resolve --conflict-depth`)
    conflict_depth: int = SCAN_CONFLICT_DEPTH
    # detection only (`--detect`): what the index tells, no series resolved, no trial made
    detect: bool = False

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
                dropped.add((parts[0], Oid(parts[1].lower())))
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
            + (
                [f"depth {self.conflict_depth}"]
                if self.conflict_depth != SCAN_CONFLICT_DEPTH
                else []
            )
            + (["detect"] if self.detect else [])
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
    adapted: tuple[Oid, ...] = ()  # members the backport went without, and what hangs on them
    witnesses: tuple[str, ...] = ()  # what the sibling stable branches did, one line each
    confidence: Confidence = "normal"

    @property
    def key(self) -> str:
        return f"{self.branch} {self.kind} {self.commit}"

    @property
    def missing(self) -> tuple[Oid, ...]:
        """The commits the branch lacks that the finding names."""
        return tuple(m.commit for m in self.series) or (self.commit,)

    @property
    def why(self) -> str:
        """One line of why, for text output (the evidence in full is in JSON)."""
        return fit_line(self.evidence[0] if self.evidence else self.status, 88)


def fit_line(line: str, width: int) -> str:
    """`line` within `width` characters: the first parenthesized subject shortened (what
    follows it, `which the branch has as <id>`, says the most), else the end cut."""
    if len(line) <= width:
        return line
    opening = line.find(" (")
    closing = line.find(")", opening)
    over = len(line) - width
    if opening != -1 and closing != -1 and closing - opening - 2 >= over + 3 + 10:
        inner = line[opening + 2 : closing]
        return f"{line[: opening + 2]}{inner[: len(inner) - over - 3]}...{line[closing:]}"
    return line[: width - 3] + "..."


_KIND_ORDER = {
    "missing-fix": 0,
    "incomplete-backport": 1,
    "reverted-upstream": 2,
    "dropped": 3,
    "adapted-backport": 4,
}
_CONFIDENCE_ORDER = {"high": 0, "normal": 1, "low": 2}


def prioritize(findings: list[ScanFinding], untagged: Untagged = "include") -> list[ScanFinding]:
    """What a maintainer acts on first: per kind, what the stable branches' decisions bear
    out most first (`confidence`: a newer line took it, then the rest, then what every
    sibling skipped or the branch itself passed over), tagged for stable before untagged
    (with `separate`, every untagged finding after every tagged one), the oldest culprit
    first, ready before conflict; the order of the scan otherwise (stable sort)."""

    def rank(f: ScanFinding) -> tuple[int, int, int, int, int]:
        apart = 0 if untagged != "separate" or f.tagged or f.kind != "missing-fix" else 1
        kind = _KIND_ORDER.get(f.kind, 9)
        return (apart, kind, _CONFIDENCE_ORDER[f.confidence], 0 if f.tagged else 1, f.culprit_seq)

    ready_first = sorted(findings, key=lambda f: f.status != "ready")
    return sorted(ready_first, key=rank)


@dataclass
class BranchScan:
    branch: str
    findings: list[ScanFinding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    adapted: list[ScanFinding] = field(default_factory=list)  # counted apart (`settle`)
    marked: list[str] = field(default_factory=list)  # findings a mark holds back, one line each
    practice: str = ""  # what the branch's history says of its adapted backports
    untried: int = 0  # detection only: backports that differ from upstream, not tried
    scanned: int = 0
    resolved: int = 0  # targets resolved in full by this run
    reused: int = 0  # targets whose last answer still holds (nothing new touches them)
    cached: int = 0  # targets answered from findings an earlier scan cached (nothing moved)
    tip: Oid = NO_OID  # the branch's tip, and upstream's, when it was scanned
    upstream: str = ""
    upstream_tip: Oid = NO_OID


def series_to_json(series: Iterable[Member]) -> list[list[object]]:
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


def series_from_json(data: list[list[Any]]) -> tuple[Member, ...]:
    return tuple(
        Member(commit, subject, role, tuple(Reason(*r) for r in reasons), apply, tuple(files))
        for commit, subject, role, reasons, apply, files in data
    )


def finding_to_json(finding: ScanFinding) -> dict[str, object]:
    return {
        "kind": finding.kind,
        "branch": finding.branch,
        "commit": finding.commit,
        "subject": finding.subject,
        "status": finding.status,
        "series": series_to_json(finding.series),
        "evidence": list(finding.evidence),
        "tagged": finding.tagged,
        "culprit_seq": finding.culprit_seq,
        "adapted": list(finding.adapted),
        "witnesses": list(finding.witnesses),
        "confidence": finding.confidence,
    }


def finding_from_json(data: dict[str, Any]) -> ScanFinding:
    return ScanFinding(
        data["kind"],
        data["branch"],
        data["commit"],
        data["subject"],
        data["status"],
        series_from_json(data["series"]),
        tuple(data["evidence"]),
        bool(data.get("tagged", False)),
        int(data.get("culprit_seq", 0)),
        tuple(data.get("adapted", ())),
        tuple(data.get("witnesses", ())),
        data.get("confidence", "normal"),
    )
