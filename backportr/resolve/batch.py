"""A batch of targets on one branch: their series merged into one, deduplicated, ordered and
tried together (`resolve A B C`, `resolve --stdin`).

Each target's series is resolved on its own (rules, graph, trial); the batch is their union.
The order keeps every target's order (a member before what followed it in some target's
series), ties by upstream order; when two targets' orders contradict each other, upstream
order decides. The merged series is then tried once, in that order, on the branch: a member
that applied alone may conflict after another target's members, and that is what the
maintainer will meet. Each member names the targets whose series holds it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from backportr.git.trial import TreeState, TrialApplier
from backportr.model import (
    BranchReport,
    BranchStatus,
    Member,
    Oid,
    Reason,
    Report,
    Role,
    Suggestion,
    short,
)

if TYPE_CHECKING:
    from backportr.git.names import Ref
    from backportr.resolve.resolver import Resolver

_ROLE_RANK: dict[Role, int] = {"target": 0, "prerequisite": 1, "follow-up": 2, "sibling": 3}
_IDLE_RANK: dict[BranchStatus, int] = {
    "incomplete": 0,
    "already-present": 1,
    "not-needed": 2,
    "reverted-upstream": 3,
    "ready": 4,
    "conflict": 5,
}


def resolve_batch(resolver: Resolver, targets: Sequence[Oid], branches: Sequence[Ref]) -> Report:
    """Several targets at once: on each branch one series for all of them."""
    if len(targets) == 1:
        return resolver.resolve(targets[0], branches)
    seq = resolver.ws.index.reader.upstream_order
    reports = []
    for done, branch in enumerate(branches):
        resolver.progress(f"resolving on {branch.name}", done, len(branches))
        each = [resolver.resolve_branch(target, branch) for target in targets]
        reports.append(merge_branch(branch.name, branch.tip, targets, each, resolver.applier, seq))
    resolver.progress("resolving", len(branches), len(branches))
    return Report(targets[0], f"{len(targets)} targets", tuple(reports), tuple(targets))


def merge_branch(
    branch: str,
    tip: Oid,
    targets: Sequence[Oid],
    reports: Sequence[BranchReport],
    applier: TrialApplier,
    seq: Callable[[Oid], int],
) -> BranchReport:
    """One branch's report for the batch `targets` from each target's own `reports`."""
    members: dict[Oid, Member] = {}
    owners: dict[Oid, list[Oid]] = {}
    for target, report in zip(targets, reports, strict=True):
        for member in report.series:
            owners.setdefault(member.commit, []).append(target)
            members[member.commit] = _joined(members.get(member.commit), member)
    order = _order([[m.commit for m in r.series] for r in reports], seq)
    results, _ = applier.pick_series(order, TreeState(tip))
    series: list[Member] = []
    empty: list[Oid] = []
    for commit, result in zip(order, results, strict=True):
        if result.result == "empty":
            empty.append(commit)
            continue
        member = members[commit]
        series.append(
            Member(
                member.commit,
                member.subject,
                member.role,
                member.reasons,
                result.result,
                result.conflict_files,
                member.posting,
                tuple(owners[commit]),
            )
        )
    in_series = {m.commit for m in series}
    present = {p.commit: p for r in reports for p in r.present if p.commit not in in_series}
    warnings = [
        f"{short(t)}: {w}" for t, r in zip(targets, reports, strict=True) for w in r.warnings
    ]
    warnings += [f"{short(c)} applies as empty after the batch's other members" for c in empty]
    suggestions: dict[Oid, Suggestion] = {}
    for report in reports:
        for suggestion in report.suggestions:
            if suggestion.commit not in in_series:
                suggestions.setdefault(suggestion.commit, suggestion)
    alternatives = [
        f"{short(t)}: {r.alternative}"
        for t, r in zip(targets, reports, strict=True)
        if r.alternative
    ]
    return BranchReport(
        branch=branch,
        status=_status(series, reports),
        series=tuple(series),
        present=tuple(present.values()),
        warnings=tuple(warnings),
        suggestions=tuple(suggestions.values()),
        files=tuple(sorted({f for r in reports for f in r.files})),
        alternative="; ".join(alternatives) or None,
        each=tuple((t, r.status) for t, r in zip(targets, reports, strict=True)),
    )


def _joined(known: Member | None, member: Member) -> Member:
    """One member as two targets' series hold it: the stronger role (a target asked for
    stays one), every reason once."""
    if known is None:
        return member
    role = min((known.role, member.role), key=lambda r: _ROLE_RANK[r])
    reasons: list[Reason] = list(known.reasons)
    reasons += [r for r in member.reasons if r not in reasons]
    if role == "target":
        reasons.sort(key=lambda r: r.kind != "target")  # "the commit asked for" first
    return Member(
        known.commit, known.subject, role, tuple(reasons), posting=known.posting or member.posting
    )


def _order(series: Sequence[Sequence[Oid]], seq: Callable[[Oid], int]) -> list[Oid]:
    """Every series' order respected, ties by upstream order; upstream order when they clash."""
    import networkx as nx  # as `graph.py` does: not on every command's start

    graph: nx.DiGraph[Oid] = nx.DiGraph()
    for one in series:
        graph.add_nodes_from(one)
        graph.add_edges_from(itertools.pairwise(one))
    key = {n: (seq(n), n) for n in graph.nodes}
    try:
        return list(nx.lexicographical_topological_sort(graph, key=lambda n: key[n]))
    except nx.NetworkXUnfeasible:
        return sorted(graph.nodes, key=lambda n: key[n])


def _status(series: Sequence[Member], reports: Sequence[BranchReport]) -> BranchStatus:
    """`conflict` when a member of the batch conflicts (or a target's series needs a human
    for another reason), `ready` when the series holds a target, `incomplete` when it holds
    only what present targets lack; with nothing to apply, the first of `already-present`,
    `not-needed`, `reverted-upstream` that some target is."""
    if any(m.apply == "conflict" for m in series) or any(
        r.status == "conflict" and r.series for r in reports
    ):
        return "conflict"
    if any(m.role == "target" for m in series):
        return "ready"
    if series:
        return "incomplete"
    idle = [r.status for r in reports if r.status not in ("ready", "conflict", "incomplete")]
    return min(idle, key=lambda s: _IDLE_RANK[s]) if idle else "already-present"
