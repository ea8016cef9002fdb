"""Conflict prerequisites: why a member does not apply, and the fewest commits that fix that.

Blame the lines of the conflicting files' hunks (context included) in the upstream file at the
member's parent, keep the commits absent from the branch, then choose the fewest of them that
make the member apply: first single commits, then a growing prefix pruned back. A commit that
merely touched nearby context does not make the member apply and so stays out. When blame
yields nothing that helps (a *deletion* leaves no line to blame), the newest absent commits of
the conflicting files' history since the fork are tried the same way.

A commit that changes only documentation (release notes, manuals, a `doc/` tree) is no
candidate for a member that changes code: no code needs it, and a conflict in release notes
is one the maintainers resolve by hand (on real history they adapt the patch:
docs/rules.md). A documentation fix may need an earlier one, as ever, and so may a target
whose own posting rewrote the manual it extends (Suricata's pgsql manual, rewrapped by the
patch before the one that documents a new message): that patch is a candidate for it, not
for a helper pulled in for it (a human adapts that one's manual), and release notes never
are: each branch writes its own.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

from backportr.git.trial import TreeState
from backportr.model import Oid, Reason, Suggestion
from backportr.resolve.finders import Context, Finding

_MAX_CANDIDATES = 8
_DOC_DIRECTORIES = ("doc/", "docs/", "Documentation/", "man/")
_DOC_NAMES = ("NEWS", "ChangeLog", "CHANGES", "README", "RELEASE-NOTES")
_DOC_SUFFIXES = (".md", ".rst", ".adoc", ".pod")
_RELEASE_NOTES = re.compile(
    r"(?:^|/)(?:NEWS|ChangeLog|CHANGES|RELEASE-NOTES)|rel(?:ease)?[_-]?notes", re.IGNORECASE
)
_TEST_DIRECTORIES = {"test", "tests", "testsuite", "selftests", "testing", "unittests"}
_BUILD_NAMES = ("CMakeLists.txt", "meson_options.txt", "requirements.txt")
_HISTORY = 20  # commits of a conflicting file's history looked at, newest first
_POSSIBLE = 3  # possible dependencies named for a conflict nothing was found for


def blame_candidates(
    ctx: Context,
    member: Oid,
    files: tuple[str, ...],
    is_candidate: Callable[[Oid], bool],
    *,
    manuals: bool = False,
) -> dict[Oid, set[str]]:
    """Upstream commits that last changed the lines of `member`'s hunks in `files` (with
    `manuals`, its own posting's changes of a manual too: `_candidates`)."""
    parents = ctx.repo.parents(member)
    if not parents:
        return {}
    blamed: list[tuple[Oid, str]] = []
    for path in files:
        changed = [(p, h) for p, h in ctx.applier.hunks(member, path) if h.old_lines > 0]
        if not changed:
            continue
        ranges = [(h.old_start, h.old_start + h.old_lines - 1) for _, h in changed]
        old_path = changed[0][0]
        blamed += [(c, path) for c in ctx.repo.search.blame(old_path, parents[0], ranges, ctx.fork)]
    return _candidates(ctx, member, blamed, is_candidate, manuals=manuals)


def _candidates(
    ctx: Context,
    member: Oid,
    found: list[tuple[Oid, str]],
    is_candidate: Callable[[Oid], bool],
    *,
    manuals: bool = False,
) -> dict[Oid, set[str]]:
    """The commits found (with the file each was found for) that are candidates (for a
    member that changes code, no documentation-only commit; with `manuals`, the member's
    own posting's changes of a manual are); their patch-ids, which the presence check asks
    for, computed by one git pipeline first."""
    found_commits = dict.fromkeys(c for c, _ in found)
    ctx.index.patch_ids.fill(
        [c for c in found_commits if ctx.presence.needs_patch_id(c, ctx.branch)]
    )
    docs_too = documentation_only(ctx.repo.diffs.files_touched(member))
    candidates: dict[Oid, set[str]] = {}
    for commit, path in found:
        if is_candidate(commit) and (
            docs_too
            or not documentation_only(ctx.repo.diffs.files_touched(commit))
            or (
                manuals
                and _manual_only(ctx.repo.diffs.files_touched(commit))
                and ctx.same_posting(commit, member)
            )
        ):
            candidates.setdefault(commit, set()).add(path)
    return candidates


def documentation_only(paths: tuple[str, ...]) -> bool:
    """Does a commit with these paths change documentation and nothing else?"""
    return bool(paths) and all(is_documentation(p) for p in paths)


def _manual_only(paths: tuple[str, ...]) -> bool:
    """Documentation that travels with the code (a manual, a guide), no release notes: each
    branch writes its own of those."""
    return not any(_RELEASE_NOTES.search(p) for p in paths)


def test_or_documentation(path: str) -> bool:
    """A test (a test directory's file, a `test-*`/`*_test.*` file, an autotest `.at`) or
    documentation: what changes no code a user runs."""
    return _is_test(path) or is_documentation(path)


def _is_test(path: str) -> bool:
    *directories, name = path.split("/")
    return (
        any(d in _TEST_DIRECTORIES for d in directories)
        or name.startswith(("test-", "test_", "TEST-"))
        or name.rsplit(".", 1)[0].endswith(("_test", "-test"))
        or name.endswith(".at")
    )


def is_documentation(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    if name in _BUILD_NAMES:
        return False
    return (
        path.startswith(_DOC_DIRECTORIES)
        or name.startswith(_DOC_NAMES)
        or name.endswith(_DOC_SUFFIXES)
    )


def history_candidates(
    ctx: Context,
    member: Oid,
    files: tuple[str, ...],
    is_candidate: Callable[[Oid], bool],
    *,
    manuals: bool = False,
) -> dict[Oid, set[str]]:
    """Absent upstream commits after the fork that changed `files` before `member`: the
    deletion-aware fallback when blame finds nothing that makes the member apply."""
    parents = ctx.repo.parents(member)
    if not parents:
        return {}
    found: list[tuple[Oid, str]] = []
    for path in files:
        old_paths = {p for p, _ in ctx.applier.hunks(member, path)} or {path}
        history = ctx.repo.search.file_history(sorted(old_paths), parents[0], ctx.fork, _HISTORY)
        found += [(commit, path) for commit in history]
    return _candidates(ctx, member, found, is_candidate, manuals=manuals)


def conflict_prerequisites(
    ctx: Context,
    member: Oid,
    state: TreeState,
    files: tuple[str, ...],
    is_candidate: Callable[[Oid], bool],
    order_key: Callable[[Oid], int],
    *,
    kind: Literal["conflict", "adapted"] = "conflict",
    series: bool = False,
    manuals: bool = False,
) -> list[Finding]:
    """The fewest absent upstream commits that make `member` apply onto `state`. With
    `series` (the candidates are the target's own posting), the posting's earlier patches
    that touched the conflicting files are candidates beside the blamed ones: a posting's
    steps build on each other in ways blame does not always show (a step that moved or
    deleted what the next one edits). With `manuals` (the member is the commit asked for),
    so are its own posting's changes of a manual."""
    candidates = blame_candidates(ctx, member, files, is_candidate, manuals=manuals)
    how = "blame of the conflicting lines"
    if series:
        for commit, paths in history_candidates(
            ctx, member, files, is_candidate, manuals=manuals
        ).items():
            candidates.setdefault(commit, set()).update(paths)
        how = "blame of the conflicting lines and the posting's earlier patches"
    ordered = sorted(candidates, key=order_key)[-_MAX_CANDIDATES:]
    chosen = _fewest(ctx, member, state, ordered, files) if ordered else []
    if not chosen and series:
        # Nothing makes this step of the target's own posting apply: it needs a human, who
        # takes the posting's earlier patches to the same files with it, adapting them too
        # (the maintainers' series on real history: docs/rules.md).
        chosen = [c for c in ordered if order_key(c) < order_key(member)]
        how = "the posting's earlier patch to the same files, taken with it"
    if not chosen and not series:
        # Blame sees only the lines that are there: a commit that *deleted* lines the member's
        # context depended on is invisible to it. Fall back to the files' own history.
        candidates = history_candidates(ctx, member, files, is_candidate, manuals=manuals)
        ordered = sorted(candidates, key=order_key)[-_MAX_CANDIDATES:]
        chosen = _fewest(ctx, member, state, ordered, files) if ordered else []
        how = "history of the conflicting files: blame cannot see deleted lines"

    def finding(commit: Oid) -> Finding:
        where = ", ".join(sorted(candidates[commit]))
        if kind == "adapted":
            detail = (
                f"{ctx.describe(member)} was backported adapted; upstream it does not "
                f"apply there without this commit (last changed its lines in {where})"
            )
        else:
            detail = f"{ctx.describe(member)} conflicts in {where} without it ({how})"
        return Finding(commit, "prerequisite", Reason(kind, detail, member))

    return [finding(c) for c in chosen]


def _fewest(
    ctx: Context, member: Oid, state: TreeState, candidates: list[Oid], files: tuple[str, ...]
) -> list[Oid]:
    """The fewest candidates (single ones first, then a prefix pruned back) with which
    `member` applies onto `state`; its conflicting `files` are tried first each time."""

    def applies(commits: list[Oid]) -> bool:
        return ctx.applier.applies([*commits, member], state, last_only=True, first=files)

    if not ctx.applier.may_resolve(candidates, member, state, files):
        return []

    for commit in candidates:
        if applies([commit]):
            return [commit]
    chosen: list[Oid] = []
    for commit in candidates:
        chosen.append(commit)
        if applies(chosen):
            break
    else:
        return []
    for commit in list(chosen):
        trial = [c for c in chosen if c != commit]
        if applies(trial):
            chosen = trial
    return chosen


def possible_dependencies(
    ctx: Context,
    member: Oid,
    files: tuple[str, ...],
    is_candidate: Callable[[Oid], bool],
    order_key: Callable[[Oid], int],
) -> list[Suggestion]:
    """For a member that stays `conflict` with nothing found that makes it apply (or
    nothing looked for: a follow-up, a culprit), the newest absent upstream commits that
    last changed the lines it conflicts on, in upstream order: what the stable team's
    FAILED mails list as "Possible dependencies", for the human who adapts it."""
    candidates = blame_candidates(ctx, member, files, is_candidate)
    newest = sorted(candidates, key=order_key)[-_POSSIBLE:]
    return [
        Suggestion(
            commit,
            ctx.subject(commit),
            Reason(
                "conflict",
                f"last changed the lines {ctx.describe(member)} conflicts on in "
                f"{', '.join(sorted(candidates[commit]))}; the branch lacks it, and no "
                "helper was found that makes it apply: a possible dependency, to adapt "
                "around or take",
                member,
            ),
        )
        for commit in newest
    ]
