"""Turn a resolved series into ready-to-send patches (data; rendering is in output/mbox.py).

Each patch carries the original author and date, the branch's own annotation naming the
upstream commit (`text.annotations`: the kernel's `commit <40 hex> upstream.` first, DPDK's
`[ upstream commit <40 hex> ]`, Xen's `master commit:` last...), the original message, a
`Stable-dep-of:` trailer for every member pulled in only because another needs it (after
every upstream trailer, just before the backporter's sign-off, as the stable team writes it),
the backporter's sign-off when asked, and the diff of the in-memory trial: what the member
changes on the branch as it stands after the members before it, so `git am` reproduces the
trial. A member that conflicts is left out, and so is every member that depends on it (a
series never contradicts itself).
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass

from backportr.git.repo import Repo
from backportr.git.trial import TreeState, TrialApplier
from backportr.model import BranchReport, Member, Oid, short
from backportr.text.annotations import ANNOTATIONS, DEFAULT
from backportr.text.trailers import parse_version

Annotation = str  # a name of `text.annotations.FORMS`


@dataclass(frozen=True, slots=True)
class Patch:
    commit: Oid
    number: int
    total: int
    author_name: str
    author_email: str
    date: str
    subject: str
    prefix: str
    body: str
    diffstat: str
    diff: str

    @property
    def filename(self) -> str:
        """Its name before a queue numbers it: the subject as `git format-patch` sanitizes
        it (`IMA-use-vfs_getattr_nosec-to-get-the-i_version.patch`); the queue puts its
        place in `series` first (`0002-IMA-...`, 64 bytes at most, as git names it) and
        makes it unique."""
        return f"{sanitized_subject(self.subject)[:_NAME_MAX] or 'patch'}.patch"


_NAME_MAX = 64 - len(".patch") - 1  # git's format.filenameMaxLength default, less the suffix


def sanitized_subject(subject: str) -> str:
    """git's format_sanitized_subject: runs of characters other than ASCII letters, digits,
    '.' and '_' become one '-', runs of '.' one '.', and trailing '.' and '-' go."""
    out: list[str] = []
    gap = False
    previous = ""
    for char in subject:
        if char.isascii() and (char.isalnum() or char in "._"):
            if gap and out:
                out.append("-")
            gap = False
            if not (char == "." and previous == "."):
                out.append(char)
            previous = char
        else:
            gap = True
            previous = ""
    return "".join(out).rstrip(".-")


def branch_prefix(branch: str, template: str = "linux-{v}.y") -> str:
    """The branch as a subject names it: the kernel's `linux-5.10.y` or `v5.10.194` ->
    `5.10.y`; in a project whose branches are named otherwise (`template`, from the
    branch pattern: DPDK's `{v}`, Xen's `stable-{v}`), the version the name carries
    (`origin/stable-4.19` -> `4.19`); anything else stays as it is."""
    version = parse_version(branch)
    if template != "linux-{v}.y":
        head, _, tail = template.partition("{v}")
        for name in (branch.split("/", 1)[-1], branch):  # a remote's name first: origin/
            if len(name) > len(head) + len(tail) and name.startswith(head) and name.endswith(tail):
                return name[len(head) : len(name) - len(tail)]
    return f"{version[0]}.{version[1]}.y" if version else branch


def build_patches(
    repo: Repo,
    applier: TrialApplier,
    branch_tip: Oid,
    report: BranchReport,
    annotation: Annotation = "greg",
    signoff: str | None = None,
    members: Sequence[Member] | None = None,
    prefix: str = "PATCH",
    template: str = "linux-{v}.y",
    numbered: bool = False,
) -> list[Patch]:
    """The series of one branch as patches: `members` (by default every member but those
    `dropped` leaves out), numbered in order. A `Stable-dep-of:` names only a member among
    them: a series never points outside itself. `signoff` ("Name <email>") adds the
    backporter's Signed-off-by: last; `prefix` is the subject's, before the branch (named as
    `template`, the repository's branch naming, has it: `branch_prefix`); `n/m` follows it
    when there are several, or with `numbered` always (git format-patch -n)."""
    if members is None:
        left_out = dropped(report)
        members = [m for m in report.series if m.commit not in left_out]
    total = len(members)
    by_commit = {m.commit: m for m in report.series}
    outside = set(by_commit) - {m.commit for m in members}
    state = TreeState(branch_tip)
    patches = []
    for number, member in enumerate(members, 1):
        before = applier.write_tree(state)
        result = applier.pick(member.commit, state)
        state = result.state
        after = applier.write_tree(state)
        diffstat, diff = repo.diffs.tree_diff_text(before, after)
        message = repo.message(member.commit)
        author = repo.author(member.commit)
        patches.append(
            Patch(
                commit=member.commit,
                number=number,
                total=total,
                author_name=author.name,
                author_email=author.email,
                date=author.rfc2822(),
                subject=message.split("\n", 1)[0].strip(),
                prefix=f"{prefix} {branch_prefix(report.branch, template)}"
                + (f" {number}/{total}" if total > 1 or numbered else ""),
                body=_body(message, member, by_commit, annotation, repo, signoff, outside),
                diffstat=diffstat,
                diff=diff,
            )
        )
    return patches


def dropped(report: BranchReport) -> dict[Oid, str]:
    """Members left out of the patches, with why: those that conflict, then (to a fixpoint)
    those whose evidence names a member left out: a follow-up of it, or what needs it."""
    out = {
        m.commit: "conflicts: needs a manual backport"
        for m in report.series
        if m.apply == "conflict"
    }
    for user, needs in report.needs().items():  # applies, but would not build
        if user not in out:
            out[user] = f"needs {_short(needs)}, which the branch lacks: adapt it by hand"
    changed = True
    while changed:
        changed = False
        for member in report.series:
            if member.commit in out or member.role == "target":
                continue
            for reason in member.reasons:
                if reason.related in out and reason.kind in ("follow-up", "revert"):
                    out[member.commit] = f"depends on {short(reason.related)}, which is left out"
                    changed = True
                    break
    return out


def _short(needs: Sequence[tuple[str, Oid]]) -> str:
    """(a, <id>), (b, <id>) as `a, b from <id12>` (names grouped by commit)."""
    by_commit: dict[str, list[str]] = {}
    for name, commit in needs:
        by_commit.setdefault(short(commit), []).append(name)
    return "; ".join(f"{', '.join(names)} from {c}" for c, names in by_commit.items())


def applicable_prefix(
    report: BranchReport, left_out: dict[Oid, str]
) -> tuple[list[Member], dict[Oid, str]]:
    """The members before the first one `left_out` (`dropped`) names (`--partial`: what
    applies as it is, in order), and every member not among them with why."""
    prefix: list[Member] = []
    first = ""
    for member in report.series:
        if member.commit in left_out:
            first = member.commit
            break
        prefix.append(member)
    retained = {m.commit for m in prefix}
    return prefix, {
        m.commit: left_out.get(m.commit, f"comes after {short(first)}, left out")
        for m in report.series
        if m.commit not in retained
    }


@dataclass(frozen=True, slots=True)
class Step:
    """One commit of a `--format script` series: what to pick and the stable message to
    commit it with (the annotation first, `Stable-dep-of:` after the upstream trailers)."""

    commit: Oid
    subject: str
    author: str  # "Name <email>"
    date: str  # git's raw date: "<seconds> <+hhmm>"
    message: str
    apply: str


def script_steps(
    repo: Repo, report: BranchReport, annotation: Annotation, signoff: str | None = None
) -> list[Step]:
    by_commit = {m.commit: m for m in report.series}
    steps = []
    for member in report.series:
        message = repo.message(member.commit)
        subject = message.split("\n", 1)[0].strip()
        author = repo.author(member.commit)
        steps.append(
            Step(
                member.commit,
                subject,
                f"{author.name} <{author.email}>",
                author.raw_date(),
                subject + "\n\n" + _body(message, member, by_commit, annotation, repo, signoff),
                member.apply,
            )
        )
    return steps


def _body(
    message: str,
    member: Member,
    by_commit: dict[Oid, Member],
    annotation: str,
    repo: Repo,
    signoff: str | None = None,
    outside: set[Oid] | frozenset[Oid] = frozenset(),
) -> str:
    """The upstream message without its subject, annotated in the branch's form
    (`text.annotations`): first, or after every trailer (as `git cherry-pick -x` writes
    it); the backporter's sign-off last."""
    text = message.split("\n", 1)[1].strip("\n") if "\n" in message else ""
    lines = text.rstrip().splitlines()
    lines += _stable_deps(member, by_commit, repo, outside)  # after every upstream trailer
    form = ANNOTATIONS.get(annotation, ANNOTATIONS[DEFAULT])
    body = form.write("\n".join(lines), member.commit, _committer_date(repo, member.commit))
    if signoff and not body.rstrip("\n").endswith(f"\nSigned-off-by: {signoff}"):
        body = body.rstrip("\n") + f"\nSigned-off-by: {signoff}\n"
    return body


def _committer_date(repo: Repo, commit: Oid) -> str:
    """The commit's committer date as git's `%ci` prints it (`2024-03-12 16:24:37 +0100`):
    what Xen's `master date:` line carries."""
    signature = repo.commit(commit).committer
    zone = datetime.timezone(datetime.timedelta(minutes=signature.offset))
    when = datetime.datetime.fromtimestamp(signature.time, zone)
    return when.strftime("%Y-%m-%d %H:%M:%S %z")


def _stable_deps(
    member: Member, by_commit: dict[Oid, Member], repo: Repo, outside: set[Oid] | frozenset[Oid]
) -> list[str]:
    """`Stable-dep-of:` for each commit that needed this prerequisite: a member, or a commit
    the branch has (a backport the prerequisite completes), never a member left `outside`
    the patches written."""
    if member.role != "prerequisite":
        return []
    out = []
    for reason in member.reasons:
        dependent = reason.related
        if dependent is None or reason.kind in ("follow-up", "revert"):
            continue
        if dependent in outside:
            continue  # left out of the patches: the line would point outside them
        subject = (
            by_commit[dependent].subject if dependent in by_commit else repo.subject(dependent)
        )
        line = f'Stable-dep-of: {short(dependent)} ("{subject}")'
        if line not in out:
            out.append(line)
    return out
