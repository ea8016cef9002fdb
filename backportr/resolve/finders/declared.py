"""Declared and recorded prerequisites.

Declared: a member's `Cc: stable # X.Y.x: <sha>: <subject>` lines covering the branch.
Recorded: `Stable-dep-of: <member>` trailers in any indexed stable branch: the stable team
already took that commit for the member in another branch.
"""

from __future__ import annotations

from backportr.model import Oid, Reason, short
from backportr.resolve.finders import Context, Finding


def declared(ctx: Context, commit: Oid) -> list[Finding]:
    found: list[Finding] = []
    for tag in ctx.index.reader.stable_tags_of(commit):
        if tag.prerequisite is None:
            continue
        if ctx.version is not None and not tag.covers(ctx.version):
            continue
        prerequisite = _resolve(ctx, tag.prerequisite, tag.prerequisite_subject)
        if prerequisite is None or prerequisite == commit:
            continue
        detail = f"declared in Cc: stable # {tag.comment} of {ctx.describe(commit)}"
        found.append(Finding(prerequisite, "prerequisite", Reason("declared", detail, commit)))
    return found


def recorded(ctx: Context, commit: Oid) -> list[Finding]:
    found: list[Finding] = []
    for relation in ctx.index.reader.stable_deps_naming(commit):
        original = ctx.index.reader.carried_upstream(relation.commit)
        if original is None or original == commit:
            continue
        branches = ", ".join(ctx.index.reader.branches_of(relation.commit)) or "a stable branch"
        detail = (
            f"{branches} took it as {short(relation.commit)} with "
            f"Stable-dep-of: {ctx.describe(commit)}"
        )
        found.append(Finding(original, "prerequisite", Reason("stable-dep-of", detail, commit)))
    return found


def _resolve(ctx: Context, ref: str, subject: str | None) -> Oid | None:
    oid = ctx.repo.names.try_resolve_commit(ref)
    if oid is not None:
        carried = ctx.index.reader.carried_upstream(oid)
        return carried or oid
    if subject:
        matches = ctx.index.reader.upstream_by_subject(subject)
        if matches:
            return matches[-1]
    return None
