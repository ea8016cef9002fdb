"""Semantic hints that need no symbol: suggested prerequisites from a member's diff context.

When the context lines of a member's hunk, inside a function, were last changed upstream by
a commit absent from the branch, and that commit changed the same function's logic (not only
whitespace or comments), the member was written against code the branch does not have: a
maintainer should look. These are suggestions: shown apart from the series, never changing
the status.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from backportr.git.diff_model import DiffHunk
from backportr.model import Oid, Reason, Suggestion
from backportr.resolve.finders import Context

_FUNCTION = re.compile(r"@@[^@]*@@\s*(.*)$")
_DEFINITION_START = re.compile(r"^[A-Za-z_][^;]*\b([A-Za-z_][A-Za-z0-9_]*)\s*\([^;]*$")
_COMMENT = re.compile(r"/\*.*?\*/|//.*$")


def context_suggestions(
    ctx: Context, member: Oid, is_candidate: Callable[[Oid], bool]
) -> list[Suggestion]:
    parents = ctx.repo.parents(member)
    if not parents:
        return []
    out: list[Suggestion] = []
    seen: set[Oid] = set()
    for path, hunks in _hunks_by_file(ctx, member).items():
        ranges = [(start, start + count - 1) for start, count, _ in hunks if count > 0]
        functions = {fn for _, _, fn in hunks if fn}
        if not ranges or not functions:
            continue
        for commit in ctx.repo.search.blame(path, parents[0], ranges, ctx.fork):
            if commit in seen or commit == member or not is_candidate(commit):
                continue
            seen.add(commit)
            changed = _logic_changes(ctx, commit, path) & functions
            if changed:
                function = sorted(changed)[0]
                detail = (
                    f"last changed the code around {ctx.describe(member)}'s change in "
                    f"{path} ({function}), and changed that function's logic"
                )
                out.append(
                    Suggestion(commit, ctx.subject(commit), Reason("context", detail, member))
                )
    return out


def _hunks_by_file(ctx: Context, commit: Oid) -> dict[str, list[tuple[int, int, str]]]:
    """path -> [(old start, old line count, function of the changed lines)]."""
    out: dict[str, list[tuple[int, int, str]]] = {}
    for file in ctx.repo.diffs.diff(commit):
        path = file.old_path
        if not path.endswith((".c", ".h")):
            continue
        for hunk in file.hunks:
            for function in _changed_functions(hunk) or {""}:
                out.setdefault(path, []).append((hunk.old_start, hunk.old_lines, function))
    return out


def _changed_functions(hunk: DiffHunk) -> set[str]:
    """Functions whose lines the hunk changes: the header's function, updated as the hunk's
    own lines open new function definitions (git names the function before the hunk start)."""
    match = _FUNCTION.match(hunk.header.strip())
    current = _function_name(match.group(1)) if match else ""
    out: set[str] = set()
    for line in hunk.lines:
        if line.origin in (" ", "-") and (start := _DEFINITION_START.match(line.content)):
            current = start.group(1)
        if line.origin in ("+", "-") and current:
            out.add(current)
    return out


def _logic_changes(ctx: Context, commit: Oid, path: str) -> set[str]:
    """Functions of `path` in which `commit` changed more than whitespace and comments."""
    out: set[str] = set()
    for file in ctx.repo.diffs.diff(commit):
        if not file.touches_path(path):
            continue
        for hunk in file.hunks:
            removed = [_code(line) for line in hunk.removed()]
            added = [_code(line) for line in hunk.added()]
            if [c for c in removed if c] != [c for c in added if c]:
                out |= _changed_functions(hunk)
    return out


def _code(line: str) -> str:
    return "".join(_COMMENT.sub("", line).split())


def _function_name(header: str) -> str:
    """`static int process_measurement(struct file *file,` -> `process_measurement`."""
    match = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(", header)
    return match.group(1) if match else header.strip()
