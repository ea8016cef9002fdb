"""Each CVE record's outcome on each branch, decided as a stable maintainer would:

- `fixed`: a fixing commit the record names is in the branch (in its history, or as a
  backport by annotation or patch-id: presence), said as which commit and how;
- `not-affected`: no introducing commit is in the branch (the vulnerable change was never
  backported), and the record does not say "since the beginning";
- `missing`: affected and unfixed: the mainline fix resolved on the branch (status, series,
  conflicts), the answer `backportr resolve` gives;
- `unknown`: the record has no git ranges, or names commits this repository does not have,
  so nothing can be decided: said, never guessed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from backportr.cves.records import BEGINNING, CveRecord
from backportr.git.names import Ref
from backportr.model import BranchReport, Oid, short
from backportr.resolve.resolver import Resolver
from backportr.scan.answers import Answers

Outcome = Literal["not-affected", "fixed", "missing", "unknown"]
OUTCOMES: tuple[Outcome, ...] = ("missing", "unknown", "fixed", "not-affected")


@dataclass(frozen=True, slots=True)
class CveOutcome:
    """One record on one branch: the outcome, how it was decided (one line), the upstream
    fix and, when fixed, the branch commit that carries it; when missing, the resolve
    answer for the fix."""

    cve: str
    title: str
    branch: str
    outcome: Outcome
    how: str
    fix: Oid | None = None
    as_commit: Oid | None = None
    report: BranchReport | None = None


class CveClassifier:
    """Classifies records on the branches of one workspace (its resolver shared)."""

    def __init__(self, resolver: Resolver) -> None:
        self.resolver = resolver
        self.ws = resolver.ws
        self.answers = Answers(self.ws, resolver)  # a scan's answers, and cached for the next

    def cache(self) -> None:
        """Cache the resolve answers made so far in the index (a scan reuses them too)."""
        self.answers.cache()

    def classify(self, record: CveRecord, branches: Sequence[Ref]) -> list[CveOutcome]:
        return [self._on(record, branch) for branch in branches]

    def _on(self, record: CveRecord, branch: Ref) -> CveOutcome:
        def outcome(kind: Outcome, how: str, **more: object) -> CveOutcome:
            return CveOutcome(record.cve, record.title, branch.name, kind, how, **more)  # type: ignore[arg-type]

        if not record.pairs:
            return outcome("unknown", "the record gives no git ranges (introducing, fixing)")
        repo, presence = self.ws.repo, self.ws.presence
        known_fixes = [f for f in record.fixes if repo.has_commit(f)]
        for fix in known_fixes:
            found = presence.check(fix, branch)
            if found.present:
                carrier = found.as_commit or fix
                how = f"{short(fix)} is in the branch as {short(carrier)} (by {found.how})"
                return outcome("fixed", how, fix=fix, as_commit=carrier)
        upstream_fix = next((f for f in known_fixes if self.ws.index.reader.is_upstream(f)), None)
        introducing = [Oid(i) for i in record.introduced if i not in BEGINNING]
        known = [i for i in introducing if repo.has_commit(i)]
        if upstream_fix is None:
            named = ", ".join(short(f) for f in record.fixes)
            return outcome("unknown", f"no fixing commit of the record is upstream here ({named})")
        if not record.since_the_beginning:
            if not known:
                named = ", ".join(short(i) for i in introducing)
                return outcome(
                    "unknown", f"the repository has none of its introducing commits ({named})"
                )
            carried = [i for i in known if presence.check(i, branch).present]
            if not carried:
                how = (
                    f"its introducing commit{'s' if len(known) > 1 else ''} "
                    f"{', '.join(short(i) for i in known)} "
                    f"{'are' if len(known) > 1 else 'is'} not in the branch"
                )
                return outcome("not-affected", how, fix=upstream_fix)
            why = f"{short(carried[0])} (introducing) is in the branch"
        else:
            why = "affected since the beginning"
        resolved = self.answers.resolve(upstream_fix, branch)
        if resolved.status == "already-present" and not resolved.series:
            how = f"{why}; the fix {short(upstream_fix)} changes nothing there (already in it)"
            return outcome("fixed", how, fix=upstream_fix)
        report = BranchReport(branch.name, resolved.status, resolved.series)  # type: ignore[arg-type]
        how = f"{why}; the fix {short(upstream_fix)} is not: {report.status}"
        return outcome("missing", how, fix=upstream_fix, report=report)
