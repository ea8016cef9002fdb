"""Render a resolve Report: text (a table per branch and a verdict), JSON (schema 1,
docs/json.md) and script (git cherry-pick -x lines)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from backportr.model import BranchReport, Elsewhere, Member, Oid, PostingInfo, Report, short
from backportr.output.jsontext import dumps_indented
from backportr.output.safe import terminal

if TYPE_CHECKING:
    from backportr.output.patches import Step

REPORT_SCHEMA = 1

VERDICTS = {
    "ready": "ready: the series applies cleanly",
    "conflict": "conflict: the series is assembled but needs a manual backport",
    "incomplete": "incomplete: the target is in the branch, but what it needs is missing",
    "already-present": "already present: nothing to do",
    "not-needed": "not needed: the branch lacks what the target fixes",
    "reverted-upstream": "reverted upstream: do not backport",
}


def report_to_dict(report: Report) -> dict[str, object]:
    """The report in JSON; a batch of targets adds `targets` (in the order asked; `target`
    is the first) and each member's `targets`."""
    out: dict[str, object] = {
        "schema": REPORT_SCHEMA,
        "target": report.target,
        "subject": report.subject,
    }
    if report.targets:
        out["targets"] = list(report.targets)
    out["branches"] = [branch_to_dict(b) for b in report.branches]
    return out


def branch_to_dict(b: BranchReport) -> dict[str, object]:
    each = {"each": [{"target": t, "status": s} for t, s in b.each]} if b.each else {}
    needs = b.needs()
    return {
        "branch": b.branch,
        "status": b.status,
        **each,
        "series": [member_dict(m, needs.get(m.commit, ())) for m in b.series],
        "present": [
            {"commit": p.commit, "as": p.as_commit, "how": p.how, "subject": p.subject}
            for p in b.present
        ],
        "suggestions": [
            {
                "commit": s.commit,
                "subject": s.subject,
                "reason": {
                    "kind": s.reason.kind,
                    "detail": s.reason.detail,
                    "related": s.reason.related,
                },
            }
            for s in b.suggestions
        ],
        "files": list(b.files),
        "cost": cost(b),
        "alternative": b.alternative,
        "warnings": list(b.warnings),
        "elsewhere": [
            {
                "branch": e.branch,
                "as": e.as_commit,
                "took": list(e.took),
                "without": list(e.without),
            }
            for e in b.elsewhere
        ],
    }


def elsewhere_line(e: Elsewhere) -> str:
    """`linux-5.15.y took it as 1f2e3d4c5b6a with db1d1e8b9867; without 8a924db2d7b5`."""
    took = f" with {_few(e.took)}" if e.took else " alone"
    without = f"; without {_few(e.without)}" if e.without else ""
    return f"{e.branch} took it as {short(e.as_commit)}{took}{without}"


def _few(commits: tuple[Oid, ...], most: int = 3) -> str:
    """At most `most` ids, then how many more (a text line stays under 100 columns)."""
    shown = ", ".join(short(c) for c in commits[:most])
    return shown + (f" and {len(commits) - most} more" if len(commits) > most else "")


def cost(b: BranchReport) -> dict[str, int]:
    """What applying the series costs: commits, files touched, members that conflict."""
    return {
        "commits": len(b.series),
        "files": len(b.files),
        "conflicts": sum(1 for m in b.series if m.apply == "conflict"),
    }


def member_dict(m: Member, needs: tuple[tuple[str, Oid], ...] = ()) -> dict[str, object]:
    """A series member in JSON: one shape for resolve, scan and mail check (docs/json.md);
    `needs`, where the member uses what the branch lacks and the series does not bring."""
    return {
        "commit": m.commit,
        "subject": m.subject,
        "role": m.role,
        "reasons": [{"kind": r.kind, "detail": r.detail, "related": r.related} for r in m.reasons],
        "apply": m.apply,
        "conflict_files": list(m.conflict_files),
        "posting": _posting_dict(m.posting),
        **({"targets": list(m.targets)} if m.targets else {}),
        **({"needs": [f"{name} from {commit}" for name, commit in needs]} if needs else {}),
    }


def _posting_dict(p: PostingInfo | None) -> dict[str, object] | None:
    if p is None:
        return None
    return {
        "key": p.key,
        "position": p.position,
        "total": p.total,
        "cover": p.cover,
        "posted": p.posted,
        "message_id": p.message_id,
        "link": p.link,
        "siblings": [
            {
                "commit": s.commit or None,
                "position": s.position,
                "subject": s.subject,
                "state": s.state,
            }
            for s in p.siblings
        ],
    }


def posting_line(p: PostingInfo) -> str:
    """`3/8 of "cover" <link> (absent: 1, 2, 4-8)`: the member's place, the posting (by
    its link to the archive when the commit has one), its siblings by state."""
    of = p.name
    by_state: dict[str, list[int]] = {}
    for sibling in p.siblings:
        if sibling.state != "this":
            by_state.setdefault(sibling.state, []).append(sibling.position)
    others = "; ".join(f"{state}: {_runs(found)}" for state, found in by_state.items())
    landed_count = sum(1 for s in p.siblings if s.state != "not-upstream")
    landed = (
        f"; {p.posted} posted, {landed_count} landed upstream"
        if p.posted is not None and p.posted > landed_count
        else ""
    )
    return f"{p.position}/{p.total} of {of}" + (f" ({others})" if others else "") + landed


def _runs(numbers: list[int]) -> str:
    """[1, 2, 4, 5, 6] -> "1, 2, 4-6" (three or more in a row as a range)."""
    runs: list[list[int]] = []
    for n in sorted(set(numbers)):
        if runs and runs[-1][-1] == n - 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 2 else ", ".join(map(str, r)) for r in runs)


def render_json(report: Report) -> str:
    return dumps_indented(report_to_dict(report)) + "\n"


def render_script(
    report: Report,
    steps: dict[str, list[Step]] | None = None,
    refs: dict[str, str] | None = None,
) -> str:
    """A shell script that builds each branch's series in a new worktree on a new branch
    (`backport/<target>-<branch>`), leaving the user's checkout alone; each commit is
    committed with its stable message (the annotation, `Stable-dep-of:`). Without `steps`
    (the messages), plain `git cherry-pick -x` lines. `refs`: each branch's fully qualified
    ref as it was resolved (`refs/remotes/origin/23.11` for `23.11`), which the worktree
    starts from: the name the user typed may be no ref git knows by itself."""
    target12 = short(report.target)
    lines = [
        "#!/bin/sh",
        f'# backportr series for {target12} ("{terminal(report.subject)}")',
        "# Run it from the repository; each branch gets its own worktree beside it. A member",
        "# marked conflict stops the script there: resolve, `git commit`, and go on by hand.",
        "set -e",
        "top=$(git rev-parse --show-toplevel 2>/dev/null || git rev-parse --git-dir)",
    ]
    for b in report.branches:
        lines.append(f"\n# {terminal(b.branch)}: {b.status}")
        if not b.series:
            lines.append("# nothing to apply")
            continue
        name = f"backport/{target12}-{_ref_safe(b.branch)}"
        where = f'"$top/../backport-{target12}-{_ref_safe(b.branch)}"'
        start = (refs or {}).get(b.branch, b.branch)
        lines.append(f"git worktree add -b {name} {where} {_quote(start)}")
        lines.append("(")
        lines.append(f"  cd {where}")
        for n, m in enumerate(b.series):
            note = "" if m.apply == "clean" else f"  # {m.apply}: resolve it here"
            comment = f"  # {terminal(m.subject)}{note}"
            if steps is None:
                lines.append(f"  git cherry-pick -x {m.commit}{comment}")
                continue
            step = steps[b.branch][n]
            lines.append(f"  git cherry-pick --no-commit {m.commit}{comment}")
            lines += _commit_lines(step)
        lines.append(")")
    return "\n".join(lines) + "\n"


def _commit_lines(step: Step) -> list[str]:
    """`git commit` of one step with its stable message: a here-document, or where the
    message holds characters that act on a terminal, `printf` of it with those characters
    as octal escapes (the commit gets them; the script shows none raw)."""
    command = (
        f"git commit -q --no-verify --author={_quote(step.author)} --date={_quote(step.date)} -F -"
    )
    message = step.message.rstrip("\n")
    if terminal(message) != message:
        return [f"  printf '%s\\n' {_quote(message)} | {command}"]
    end = f"BACKPORTR_{short(step.commit)}_END"
    return [f"  {command} <<'{end}'", *message.splitlines(), end]


def _ref_safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-._" else "-" for c in name)


def _quote(text: str) -> str:
    """One shell word for `text`: single-quoted, or where it holds characters that act on
    a terminal (control bytes, bidi overrides), `"$(printf ...)"` with those as octal
    escapes, so the script means the name and shows none of them raw (POSIX sh)."""
    if terminal(text) == text:
        return "'" + text.replace("'", "'\\''") + "'"
    escaped = "".join(
        c.replace("\\", "\\\\").replace("%", "%%").replace("'", "'\\''")
        if terminal(c) == c
        else "".join(f"\\{byte:03o}" for byte in c.encode("utf-8", "surrogateescape"))
        for c in text
    )
    return f"\"$(printf '{escaped}')\""


_WHY_SHOWN = 3  # reasons of a member shown in text; the JSON lists them all
_COLUMNS = 100  # a why-line in text, at most (the JSON has each reason whole)


def _within(line: str, width: int) -> str:
    return line if len(line) <= width else line[: width - 3] + "..."


def render_text(report: Report) -> str:
    if report.targets:
        out = [f"{len(report.targets)} targets, one series on each branch:"]
        out += [f"  {short(t)}" for t in report.targets]
        out.append("")
    else:
        out = [f'target {short(report.target)} ("{report.subject}")', ""]
    for b in report.branches:
        out.append(f"{b.branch}: {VERDICTS[b.status]}")
        if b.each:
            out.append("  each target: " + ", ".join(f"{short(t)} {s}" for t, s in b.each))
        needs = b.needs()
        if b.series:
            width = max(len(m.subject) for m in b.series)
            width = min(width, 60)
            for n, m in enumerate(b.series, 1):
                out += _member_lines(report, n, m, width, needs.get(m.commit, ()))
        if b.series:
            c = cost(b)
            out.append(
                f"  cost: {c['commits']} commits, {c['files']} files, {c['conflicts']} conflicting"
            )
        if b.present:
            out.append("  already in the branch:")
            for p in b.present:
                as_ = (
                    f"as {short(p.as_commit)}, " if p.as_commit and p.as_commit != p.commit else ""
                )
                out.append(f"      {short(p.commit)}  {p.subject}  ({as_}by {p.how})")
        for s in b.suggestions:
            out.append(f"  suggested (judge it): {short(s.commit)} {s.subject}: {s.reason.detail}")
        for e in b.elsewhere:
            out.append(f"  elsewhere: {elsewhere_line(e)}")
        if b.alternative:
            out.append(f"  alternative: {b.alternative}")
        for w in b.warnings:
            out.append(f"  warning: {w}")
        out.append("")
    if len(report.branches) > 1:
        out.extend(render_matrix(report))
    return terminal("\n".join(out).rstrip("\n") + "\n")


def render_matrix(report: Report) -> list[str]:
    rows = [("branch", "status", "series", "conflicts")]
    for b in report.branches:
        conflicts = sum(1 for m in b.series if m.apply == "conflict")
        rows.append((b.branch, b.status, str(len(b.series)), str(conflicts)))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def _member_lines(
    report: Report, n: int, m: Member, width: int, needs: tuple[tuple[str, Oid], ...]
) -> list[str]:
    """One member in text: its row, its reasons, what it needs, its targets, its posting."""
    subject = m.subject if len(m.subject) <= 60 else m.subject[:57] + "..."
    apply = m.apply if not m.conflict_files else f"{m.apply} ({', '.join(m.conflict_files)})"
    out = [f"  {n:>2}. {short(m.commit)}  {subject:<{width}}  {m.role:<12}  {apply}"]
    for r in m.reasons[:_WHY_SHOWN]:
        out.append(_within(f"        why: {r.detail}", _COLUMNS))
    if len(m.reasons) > _WHY_SHOWN:
        more = len(m.reasons) - _WHY_SHOWN
        out.append(f"        why: ... and {more} more (-f json lists every reason)")
    for name, commit in needs:
        line = f"        needs: {name} from {short(commit)}, which the branch lacks"
        out.append(_within(line, _COLUMNS))
    if report.targets:
        out.append(f"        for: {', '.join(short(t) for t in m.targets)}")
    if m.posting is not None:
        out.append(f"        posting: {posting_line(m.posting)}")
    return out
