"""Fixes: relations: the culprits a commit fixes, and the follow-ups that fix a commit
(matched by id, or by the exact quoted subject when the id is wrong), plus upstream reverts
that are in force."""

from __future__ import annotations

from backportr import __version__
from backportr.git.trial import TreeState
from backportr.index import CommitIndex, Relation
from backportr.index.cache import result_key
from backportr.model import Oid, Reason, short
from backportr.resolve.finders import Context, Finding
from backportr.text.relation_forms import cited

_CULPRIT_DEPTH = 4  # culprits of culprits followed for evidence


def culprits(ctx: Context, commit: Oid) -> list[Oid]:
    """The resolved culprits of a commit's Fixes: lines (unresolvable ones are skipped)."""
    out: list[Oid] = []
    for relation in ctx.index.reader.fixes_of(commit):
        if relation.target and relation.target != commit and relation.target not in out:
            out.append(relation.target)
    return out


def fixed_by(index: CommitIndex, commit: Oid) -> list[Relation]:
    """Upstream commits whose Fixes: names `commit` or an upstream copy of it (a commit that
    says it was cherry-picked from it), one per patch: a fix and its upstream cherry-pick
    count once, as the original."""
    relations = list(index.reader.fixed_by(commit))
    for copy in index.reader.copies_upstream(commit):
        relations += index.reader.fixed_by(copy)
    fixes = {r.commit for r in relations}
    out: list[Relation] = []
    for relation in relations:
        original = index.reader.carried_upstream(relation.commit)
        if original != relation.commit and original in fixes:
            continue  # the upstream copy of another fix listed here
        if all(r.commit != relation.commit for r in out):
            out.append(relation)
    return out


def follow_ups(ctx: Context, commit: Oid) -> list[Finding]:
    """Upstream commits whose Fixes: names `commit` (but those the branch lacks that
    upstream reverted, by a revert in force: with the revert they are nothing to take; one
    the branch has stays, and its revert follows), and the upstream reverts of it in force."""
    found: list[Finding] = []
    for relation in fixed_by(ctx.index, commit):
        if reverted_in_force(ctx, relation.commit) and not ctx.is_present(relation.commit):
            continue  # upstream took it back: with its revert it is nothing to take
        how = " (matched by subject: the id written is wrong)" if relation.how == "subject" else ""
        detail = f"{cited(relation.form, ctx.describe(commit))}{how}"
        found.append(Finding(relation.commit, "follow-up", Reason("follow-up", detail, commit)))
    reverts = ctx.index.reader.reverted_by(commit, upstream_only=True)
    if reverts and not stands_upstream(ctx, commit):
        for relation in reverts:
            detail = f"reverts {ctx.describe(commit)} upstream"
            found.append(Finding(relation.commit, "follow-up", Reason("revert", detail, commit)))
    return found


def effective_upstream_reverter(ctx: Context, commit: Oid, depth: int = 0) -> Oid | None:
    """The upstream revert of `commit` in force: not itself undone, by a revert of the
    revert or by a later commit that re-applied the change (often with more in it, under
    another subject), so that the change no longer stands at upstream's tip."""
    if depth > 8:
        return None
    reverts = ctx.index.reader.reverted_by(commit, upstream_only=True)
    if not reverts or stands_upstream(ctx, commit):
        return None
    for relation in reverts:
        if effective_upstream_reverter(ctx, relation.commit, depth + 1) is None:
            return relation.commit
    return None


def reverted_in_force(ctx: Context, commit: Oid) -> bool:
    """Is `commit` reverted upstream by a revert in force that does not name it in
    `Fixes:`? (One that does is its follow-up: the stable process takes the pair.)"""
    reverter = effective_upstream_reverter(ctx, commit)
    return reverter is not None and commit not in culprits(ctx, reverter)


def stands_upstream(ctx: Context, commit: Oid) -> bool:
    """Does the change of `commit` stand at upstream's tip: would a cherry-pick of it there
    change nothing? True of a commit reverted and re-applied since; false while the revert
    is in force, and when later work changed the same lines (the pick then conflicts or
    changes something: the revert counts, as it did before it was asked). Cached in the
    index by the commit and upstream's tree (where the two merges can differ, git decides:
    0.3 s of a nightly detection that takes 1.2 s)."""
    key = result_key("stands-upstream-v1", __version__, commit, ctx.repo.tree_id(ctx.upstream.tip))
    cached = ctx.index.cache.cached_result(key)
    if cached is not None:
        return cached == "yes"
    stands = ctx.applier.pick(commit, TreeState(ctx.upstream.tip)).result == "empty"
    ctx.index.cache.cache_result(key, "yes" if stands else "no")
    return stands


def stable_evidence(ctx: Context, commit: Oid, depth: int = 0) -> str | None:
    """Why the stable team wants an absent `commit`, or None without evidence: it fixes
    something the branch has (or needs), it is tagged for stable, another stable branch
    took it (as a backport or a Stable-dep-of:). A fix whose culprits the branch neither
    has nor needs has none: what it fixes was never there, and its tag or another branch's
    backport speaks for the branches that have them (the stable rules drop such a fix)."""
    if depth > _CULPRIT_DEPTH:
        return None
    named = culprits(ctx, commit)
    for culprit in named:
        if ctx.is_present(culprit):
            return f"it fixes {ctx.describe(culprit)}, which the branch has"
        if stable_evidence(ctx, culprit, depth + 1) is not None:
            return f"it fixes {ctx.describe(culprit)}, which the branch needs"
    if named:
        return None
    for tag in ctx.index.reader.stable_tags_of(commit):
        if not tag.noautosel and (ctx.version is None or tag.covers(ctx.version)):
            return "it is tagged for stable (Cc: stable)"
    elsewhere = ctx.index.patch_ids.backports_elsewhere(commit, ctx.branch.refname)
    if elsewhere:
        name, carrier = elsewhere[0]
        return f"{name} took it as {short(carrier)}"
    for relation in ctx.index.reader.stable_deps_naming(commit):
        branches = ", ".join(ctx.index.reader.branches_of(relation.commit)) or "a stable branch"
        return f"{branches} took {short(relation.commit)} as its Stable-dep-of:"
    return None
