"""The answer's rules: which helpers leave a series that needs a human anyway, which feature
a member should be adapted to instead of taking it, the branch status, and the other way out
(revert the culprit's backport). Each rule is measured on real history (docs/rules.md)."""

from __future__ import annotations

from collections.abc import Sequence

from backportr.git.trial import PickResult, TreeState, TrialApplier
from backportr.model import BranchStatus, Member, Oid, Reason, Suggestion, short
from backportr.resolve.closure import Closure, is_rename
from backportr.resolve.finders import Finding
from backportr.resolve.finders.conflicts import test_or_documentation
from backportr.resolve.finders.fixes import culprits
from backportr.text.trailers import co_authors

FEATURE_FACTOR = 10
FEATURE_FLOOR = 5


def prune_unhelpful(
    closure: Closure, order: list[Oid], results: Sequence[PickResult]
) -> list[Suggestion]:
    """Commits pulled in only to make an absent target apply that conflict themselves
    did not make it apply; and when a member that must stay (the target, a follow-up)
    conflicts, the series needs a human anyway, who adapts it rather than take the
    refactors and helpers found by conflict or symbol search (measured:
    docs/rules.md). Those leave the series (with whatever is there only because of
    them) and are shown as suggestions; except the target's own posting (same author,
    applied together), which maintainers take together, and commits that are fixes
    themselves (a stable tag, or a `Fixes:` of a commit the branch has or the series
    brings). A helper that applies leaves too when it reaches beyond the files of what it
    helps (`reaches_beyond`), or, in a project whose stable branches take fixes, when it is
    a refactor larger than what it helps (`larger_than_helped`)."""
    if closure.target_present:
        return []  # an adapted backport's missing members are the answer itself
    conflicting = {c for c, r in zip(order, results, strict=True) if r.result == "conflict"}
    helpers = {  # pulled in by a conflict or a symbol, not of the target's posting
        commit
        for commit in order
        if closure.roles[commit] == "prerequisite"
        and all(r.kind in ("conflict", "symbol") for r in closure.graph.reasons(commit))
        and not closure.same_series(commit)  # a posting is taken together
    }
    optional = {  # and not a fix the branch needs in its own right
        commit
        for commit in helpers
        if not fixes_here(closure, commit) and not closure.ctx.index.reader.stable_tags_of(commit)
    }
    resolving = {  # pulled in only to resolve a conflict
        c for c in helpers if all(r.kind == "conflict" for r in closure.graph.reasons(c))
    }
    # They do not apply either: no help. A fix among them is a missing fix of its own (a
    # scan reports it), not a part of this series (measured: docs/rules.md).
    pruned = (optional | resolving) & conflicting
    beyond = {  # another author's change that reaches past the files of what it helps
        c: why
        for c in optional & resolving - pruned
        if (why := reaches_beyond(closure, c) or larger_than_helped(closure, c))
    }
    pruned |= set(beyond)
    if conflicting - optional:
        # A member that must stay conflicts: the series needs a human anyway, who adapts
        # it rather than take refactors and helpers for it (measured: docs/rules.md).
        pruned |= optional
    if not pruned:
        return []
    pruned |= hanging_on(closure, pruned)  # and what is there only because of a pruned one
    suggestions = []
    for commit in sorted(pruned, key=closure.seq):
        reason = closure.graph.reasons(commit)[0]
        user = reason.related
        if reason.kind == "symbol" and user is not None and user in closure.graph:
            # what uses its names now needs adapting by hand
            suggestion = Suggestion(commit, closure.ctx.subject(commit), reason)
            closure.adapt_instead(user, suggestion, first=True)
        why = beyond.get(commit) or (
            "the series needs a human anyway (a member conflicts, or this commit does not "
            "apply either): adapt instead, or take it"
        )
        suggestions.append(left_out(closure, commit, why))
        closure.drop(commit)
    return suggestions


def reaches_beyond(closure: Closure, helper: Oid) -> str | None:
    """A commit found only to resolve a conflict (and not a fix: the caller asks only of
    those), by another author than the target's (another email and another full name:
    `same_person`; the target's author not its `Co-authored-by:` either), that is not a
    revert and changes files the member it helps does not touch: it brings changes the
    backport does not need (a feature, a CI or test rework), and maintainers adapt the
    member instead (measured on the three shared projects: docs/rules.md); unless it
    creates every file those members change, which the branch lacks (there is nothing to
    adapt them onto). Why, or None when it stays."""
    ctx = closure.ctx
    reader = ctx.index.reader
    if None in (reader.info(helper), reader.info(closure.target)):
        return None
    if reader.same_person(helper, closure.target) or co_written(closure, helper):
        return None
    if reader.reverts_of(helper):
        return None
    helped = helped_by(closure, helper)
    tip = TreeState(ctx.branch.tip)

    def files(commit: Oid) -> tuple[str, ...]:  # in the branch's layout
        return ctx.applier.landing_paths(commit, tip) or ctx.repo.diffs.files_touched(commit)

    wanted = {path for member in helped for path in files(member)}
    if wanted and wanted <= created_absent(closure, helper):
        return None  # nothing of what it helps lands without it: nothing to adapt onto
    outside = [path for path in files(helper) if path not in wanted]
    if not outside:
        return None
    names = " and ".join(short(m) for m in helped)
    return (
        f"it also changes {len(outside)} file(s) {names} does not touch ({outside[0]}"
        f"{', ...' if len(outside) > 1 else ''}): more than the backport needs; adapt "
        f"{names} instead, or take it"
    )


def co_written(closure: Closure, helper: Oid) -> bool:
    """Is the target's author a `Co-authored-by:` of the helper (their email, or their full
    name): their own work, another person committing it (Suricata's "dcerpc: add upper
    limit on stub data", co-written by the author of the fix that builds on it)?"""
    info = closure.ctx.index.reader.info(closure.target)
    if info is None:
        return False
    email = info.author_email.casefold()
    name = info.author_name.strip().casefold()
    return any(
        address == email or (" " in name and who.casefold() == name)
        for who, address in co_authors(closure.ctx.repo.message(helper))
    )


def created_absent(closure: Closure, commit: Oid) -> set[str]:
    """The files `commit` creates that the branch lacks (fwupd's "Add a new plugin to update
    PixArt Touchpads", whose quirk file a later quirk changes)."""
    ctx = closure.ctx
    tree = ctx.repo.commit(ctx.branch.tip).tree
    created = {change.new_path for change in ctx.repo.diffs.diff(commit) if change.old is None}
    return {path for path in created if path not in tree}


def larger_than_helped(closure: Closure, helper: Oid) -> str | None:
    """In a project whose stable branches take fixes (`ProjectFacts.takes_fixes_only`), a
    commit found only to resolve a conflict (and not a fix: the caller asks only of those)
    that changes more lines than the members it helps is a refactor the maintainers adapt
    those members around rather than take; unless it is a revert or another stable branch
    of the repository carries it (the stable team took it before). Measured on the three
    shared projects: docs/rules.md. Why, or None when it stays."""
    ctx = closure.ctx
    if not ctx.index.facts.takes_fixes_only() or ctx.index.reader.reverts_of(helper):
        return None
    helped = helped_by(closure, helper)
    ours = sum(map(len, ctx.applier.changed_lines(helper)))
    theirs = sum(sum(map(len, ctx.applier.changed_lines(m))) for m in helped)
    if ours <= theirs or ctx.index.patch_ids.backports_elsewhere(helper, ctx.branch.refname):
        return None
    names = " and ".join(short(m) for m in helped)
    return (
        f"it is not a fix and changes {ours} lines for a change of {theirs}, and this "
        f"project's stable branches take fixes: adapt {names} instead, or take it"
    )


def helped_by(closure: Closure, helper: Oid) -> list[Oid]:
    """The members a commit was found for (the target when a reason names none), sorted."""
    return sorted({r.related or closure.target for r in closure.graph.reasons(helper)})


def fixes_here(closure: Closure, commit: Oid) -> bool:
    """A fix of something the branch has or the series brings; a fix of a commit the
    branch lacks is, for this branch, a helper like any other."""
    return any(
        closure.ctx.is_present(c) or closure.in_closure(c) for c in culprits(closure.ctx, commit)
    )


def feature_to_adapt_instead(
    closure: Closure, applier: TrialApplier, member: Oid, finding: Finding
) -> bool:
    """Stable takes fixes: when the commit that introduced a missing identifier is a
    feature (no Fixes:, no stable tag) far larger than the member using it, or a rename
    (its changed lines differ from the old ones only in names), adapting the member is the
    maintainer's usual answer. Then the member needs a manual backport and the commit is
    shown as a suggestion instead of joining the series."""
    ctx = closure.ctx
    commit = finding.commit
    if commit in closure.graph or culprits(ctx, commit) or ctx.index.reader.stable_tags_of(commit):
        return False
    removed, added = applier.changed_lines(commit)
    size = len(removed) + len(added)
    used_by = sum(map(len, applier.changed_lines(member)))
    if is_rename(removed, added):
        why = (
            f"it renames identifiers ({len(added)} lines changed, nearly all only in "
            f"names): adapt {short(member)} to the old names, or take it"
        )
    elif size > FEATURE_FACTOR * max(used_by, FEATURE_FLOOR):
        why = (
            f"it is a feature of {size} changed lines for a change of {used_by}: "
            f"adapt {short(member)} by hand, or take it"
        )
    else:
        return False
    closure.adapt_instead(
        member,
        Suggestion(
            commit, ctx.subject(commit), Reason("symbol", f"{finding.reason.detail}; {why}", member)
        ),
    )
    return True


def branch_status(closure: Closure, members: list[Member]) -> BranchStatus:
    if closure.target_present:
        return "incomplete" if members else "already-present"
    if not any(m.role == "target" for m in members):
        return "already-present"
    if any(m.apply == "conflict" or m.commit in closure.adapt for m in members):
        return "conflict"
    return "ready"


def other_way_out(closure: Closure, status: BranchStatus, members: list[Member]) -> str | None:
    """The other way out, as offered on the list in the IMA case: revert the backport of
    the culprit the target fixes; or, for an adapted backport whose missing members do not
    apply on top of it, revert it and apply the upstream series with the target."""
    ctx = closure.ctx
    if status == "incomplete" and any(m.apply == "conflict" for m in members):
        carrier = closure.present.get(closure.target)
        if carrier and carrier.how != "ancestor" and carrier.as_commit:
            return (
                f"revert {short(carrier.as_commit)} (the adapted backport of "
                f"{short(closure.target)}), then apply the missing commits and "
                f"{short(closure.target)} itself as upstream has them"
            )
        return None
    if status not in ("ready", "conflict"):
        return None
    for culprit in culprits(ctx, closure.target):
        p = ctx.presence.check(culprit, ctx.branch)
        if p.present and p.how != "ancestor" and p.as_commit:
            return (
                f"revert {short(p.as_commit)} (the backport of {ctx.describe(culprit)}, "
                "which this target fixes) instead of applying the series"
            )
    return None


def hanging_on(closure: Closure, leaving: set[Oid]) -> set[Oid]:
    """The members (never the target) that are in the series only because of members
    `leaving` it, to a fixpoint: every reason they have names one that leaves."""
    gone = set(leaving)
    changed = True
    while changed:
        changed = False
        for commit in closure.graph.nodes():
            reasons = closure.graph.reasons(commit)
            if (
                commit not in gone
                and commit != closure.target
                and reasons
                and all(r.related in gone for r in reasons)
            ):
                gone.add(commit)
                changed = True
    return gone - leaving


def batch_taken(closure: Closure, commit: Oid) -> bool:
    """Is another step of `commit`'s upstream batch in the series (`Closure.same_batch`),
    a batch recent to the target (`Closure.near_target`)? Such steps are taken together, as
    the maintainers take them."""
    return closure.near_target(commit) and any(
        other != commit and other != closure.target and closure.same_batch(other, commit)
        for other in closure.graph.nodes()
    )


def cancel_reverted_pairs(closure: Closure) -> list[str]:
    """A member and the upstream revert of it, both in the series and neither the target:
    together they change nothing, so neither is proposed (nor what is there only because of
    them: a follow-up of the reverted commit). One warning line per pair."""
    ctx = closure.ctx
    members = set(closure.graph.nodes())
    gone: set[Oid] = set()
    lines = []
    for commit in sorted(members, key=closure.seq):
        if commit == closure.target or commit in gone:
            continue
        for relation in ctx.index.reader.reverted_by(commit, upstream_only=True):
            reverter = relation.commit
            if reverter in members and reverter != closure.target and reverter not in gone:
                gone |= {commit, reverter}
                lines.append(
                    f"{ctx.describe(commit)} and its revert {short(reverter)} cancel: "
                    "neither is proposed"
                )
                break
    gone |= hanging_on(closure, gone)
    for commit in gone:
        closure.drop(commit)
    return lines


def never_had(
    closure: Closure, order: list[Oid], results: Sequence[PickResult], applier: TrialApplier
) -> list[Suggestion]:
    """Follow-ups of a part the branch never had: a follow-up that conflicts because files
    it changes are not on the branch (the part of its culprit they hold was never
    backported), and that changes nothing else but tests and documentation, is optional.
    It leaves the series (with what is there only because of it) as a suggestion saying
    so; the first such, in series order."""
    state = TreeState(closure.ctx.branch.tip)
    for commit, result in zip(order, results, strict=True):
        before, state = state, result.state
        if result.result != "conflict" or not only_a_follow_up(closure, commit):
            continue
        absent = _absent_files(applier, commit, before, result)
        if not absent:
            continue
        paths = {c.new_path for c in applier.changes(commit)} - set(absent)
        if not all(test_or_documentation(p) for p in paths):
            continue
        shown = ", ".join(absent[:2]) + (", ..." if len(absent) > 2 else "")
        why = (
            f"it changes {shown}, which the branch does not have (a part never backported): "
            "optional"
        )
        return leave(closure, {commit} | hanging_on(closure, {commit}), why)
    return []


def only_a_follow_up(closure: Closure, commit: Oid) -> bool:
    """Is the member there only as a follow-up (a `Fixes:` or another fix form naming a
    member, not a revert, not needed by anything else)?"""
    reasons = closure.graph.reasons(commit)
    return (
        closure.roles.get(commit) == "follow-up"
        and bool(reasons)
        and all(r.kind == "follow-up" for r in reasons)
    )


def leave(closure: Closure, leaving: set[Oid], why: str) -> list[Suggestion]:
    """The commits `leaving` leave the series, each a suggestion: its first reason, and why."""
    suggestions = []
    for gone in sorted(leaving, key=closure.seq):
        suggestions.append(left_out(closure, gone, why))
        closure.drop(gone)
    return suggestions


def left_out(closure: Closure, commit: Oid, why: str) -> Suggestion:
    """A member leaving the series, as a suggestion: its first reason, and why it left."""
    reason = closure.graph.reasons(commit)[0]
    return Suggestion(
        commit,
        closure.ctx.subject(commit),
        Reason(reason.kind, f"{reason.detail}; {why}", reason.related),
    )


def _absent_files(
    applier: TrialApplier, commit: Oid, before: TreeState, result: PickResult
) -> list[str]:
    """The files a conflicting pick changes that the state before it lacks (and that git's
    merge found nowhere else: a file moved on the branch is there)."""
    own = applier.changes(commit)
    absent = sorted(
        {
            c.old_path
            for c in own
            if c.old is not None
            and c.old_path in result.conflict_files
            and applier.lookup(before, c.old_path) is None
        }
    )
    if not absent:
        return []
    named = {p for c in own for p in (c.old_path, c.new_path)}
    landing = applier.landing_paths(commit, before) or ()
    if any(p not in named and applier.lookup(before, p) is not None for p in landing):
        return []  # git placed a change at the branch's path of a moved file
    return absent
