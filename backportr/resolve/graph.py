"""The dependency graph of a series: commits as nodes, evidence on the edges, and order.

PURE: networkx in, values out; no git, no files, no printing. An edge A -> B means "A needs B
first" (B is a prerequisite of A, or A is a follow-up of B).
"""

from __future__ import annotations

from collections.abc import Iterable

from backportr.model import Oid, Reason


class SeriesGraph:
    """Members of a series with the reasons that brought each in."""

    def __init__(self) -> None:
        import networkx as nx  # when a series is first made: a detection makes none (0.2 s)

        self.graph: nx.DiGraph[Oid] = nx.DiGraph()

    def add_node(self, commit: Oid, *, seq: int, subject: str = "") -> bool:
        """Add a commit; False when it was already there."""
        if commit in self.graph:
            return False
        self.graph.add_node(commit, seq=seq, subject=subject, reasons=[])
        return True

    def __contains__(self, commit: object) -> bool:
        return commit in self.graph

    def __len__(self) -> int:
        return self.graph.number_of_nodes()

    def add_reason(self, commit: Oid, reason: Reason) -> None:
        reasons: list[Reason] = self.graph.nodes[commit]["reasons"]
        if reason not in reasons:
            reasons.append(reason)

    def reasons(self, commit: Oid) -> tuple[Reason, ...]:
        return tuple(self.graph.nodes[commit]["reasons"])

    def add_dependency(self, dependent: Oid, dependency: Oid, reason: Reason) -> None:
        """`dependent` needs `dependency` applied first; `reason` explains `dependency`'s place
        (for a follow-up, the follow-up is the dependent and carries the reason)."""
        self.graph.add_edge(dependent, dependency, kind=reason.kind, detail=reason.detail)

    def remove(self, commit: Oid) -> None:
        """`commit` leaves, and with it every reason another member gave about it (a
        follow-up of it is one no longer), where that member has another."""
        self.graph.remove_node(commit)
        for node in self.graph.nodes:
            reasons = self.graph.nodes[node]["reasons"]
            left = [r for r in reasons if r.related != commit]
            if left and len(left) < len(reasons):
                self.graph.nodes[node]["reasons"] = left

    def nodes(self) -> list[Oid]:
        return list(self.graph.nodes)

    def edges(self) -> Iterable[tuple[Oid, Oid, str, str]]:
        for a, b, data in self.graph.edges(data=True):
            yield a, b, data["kind"], data["detail"]

    def order(self) -> tuple[list[Oid], bool]:
        """Deterministic topological order: dependencies first, ties by upstream order.

        Returns (order, had_cycle); a cycle falls back to plain upstream order.
        """
        import networkx as nx  # loaded by __init__

        seq = {n: (self.graph.nodes[n]["seq"], n) for n in self.graph.nodes}
        reverse = self.graph.reverse(copy=False)
        try:
            order = list(nx.lexicographical_topological_sort(reverse, key=lambda n: seq[n]))
            return order, False
        except nx.NetworkXUnfeasible:
            return sorted(self.graph.nodes, key=lambda n: seq[n]), True
