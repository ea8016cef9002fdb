"""Which annotation a stable branch's own backports carry (`text.annotations`), learned from
its newest commits: the patches backportr writes for it carry the same."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from backportr.git.repo import Repo
from backportr.model import Oid
from backportr.text.annotations import ANNOTATIONS, DEFAULT, AnnotationForm, form_of

LOOKED_AT = 400
"""Newest commits of a branch read to learn its form: enough for every backport of its last
releases, bounded on a branch of 20,000 commits."""


LEAST = 3
"""Annotated backports a branch needs before its form is learned (fewer: the default)."""


@dataclass(frozen=True, slots=True)
class LearnedForm:
    """A branch's annotation form and the counts it was chosen from (none annotated: the
    default, the kernel's)."""

    form: AnnotationForm
    counts: dict[str, int]
    looked_at: int

    def describe(self) -> str:
        annotated = sum(self.counts.values())
        if annotated < LEAST:
            return (
                f"{self.form.name} (the default: {annotated} annotated of {self.looked_at} commits)"
            )
        seen = ", ".join(f"{name} {count}" for name, count in self.counts.items())
        return f"{self.form.name} ({seen}, of {self.looked_at} commits)"


def learn_form(repo: Repo, tip: Oid, fork: Oid | None, limit: int = LOOKED_AT) -> LearnedForm:
    """The form most of the branch's newest `limit` commits after its fork use, counted by
    family (the kernel's `[ Upstream commit X ]` backports count for `commit X upstream.`,
    written where the branch uses that at all; rdma-core's, only the first, keep theirs);
    between two used equally often, the first of the table."""
    counts: Counter[str] = Counter()
    looked_at = 0
    for commit in repo.walk(tip, [fork] if fork else []):
        if looked_at >= limit:
            break
        looked_at += 1
        form = form_of(repo.message(commit))
        if form is not None:
            counts[form.name] += 1
    if sum(counts.values()) < LEAST:
        return LearnedForm(ANNOTATIONS[DEFAULT], dict(counts), looked_at)
    order = ANNOTATIONS.names()
    families: Counter[str] = Counter()
    for name, count in counts.items():
        families[ANNOTATIONS[name].family or name] += count
    family = max(families, key=lambda name: (families[name], -order.index(name)))
    if family not in counts:  # the family's first form unseen: its member used most
        members = [n for n in counts if (ANNOTATIONS[n].family or n) == family]
        family = max(members, key=lambda name: (counts[name], -order.index(name)))
    best = family
    ranked = dict(sorted(counts.items(), key=lambda item: (-item[1], order.index(item[0]))))
    return LearnedForm(ANNOTATIONS[best], ranked, looked_at)
