"""Check what a mail is about against the repository: resolve it and say what is missing.

A FAILED mail: the series the branch needs for that upstream commit. A submission: the
submitted patches against the resolved series (missing prerequisites and follow-ups, reverted
follow-ups, a patch that differs from upstream, newer stable branches still lacking the
target). A plain patch not yet in any repository: applied onto its `base-commit:` (or the
upstream tip) in the object database to make a virtual target, then resolved.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from email.utils import parseaddr

from backportr.errors import BackportrError
from backportr.git.names import Ref
from backportr.git.repo import branch_template
from backportr.mail.lore import Lore
from backportr.mail.message import Mail
from backportr.model import BranchReport, Member, Oid, short
from backportr.resolve.resolver import Resolver
from backportr.resolve.workspace import Workspace
from backportr.text.trailers import parse_version

_log = logging.getLogger("backportr")


@dataclass(frozen=True, slots=True)
class BranchCheck:
    """One branch's verdict for a mail."""

    branch: str
    verdict: str  # complete | incomplete | needs-series | conflict | not-needed | ...
    report: BranchReport  # the resolution of the mail's (last) target
    missing: tuple[Oid, ...] = ()
    notes: tuple[str, ...] = ()
    members: tuple[Member, ...] = ()  # what the branch needs, in order (all parts together)


@dataclass(frozen=True, slots=True)
class MailCheck:
    mail: Mail
    target: Oid | None
    subject: str = ""
    branches: tuple[BranchCheck, ...] = ()
    notes: tuple[str, ...] = ()
    skipped: str | None = None
    pending: tuple[tuple[str, str, str], ...] = ()  # (fixed commit, message-id, subject)
    tree: str = ""  # the repository checked against (a remote's URL, or a path)
    tips: tuple[tuple[str, Oid], ...] = ()  # (upstream or branch name, its tip) checked

    @property
    def actionable(self) -> bool:
        """Something to say: a series is missing members, or needs commits, or conflicts."""
        return self.skipped is None and any(
            b.verdict in ("incomplete", "needs-series", "conflict") for b in self.branches
        )


def is_own(message_id: str, author: str, own: str | None) -> bool:
    """Did backportr send this mail? Its Message-IDs carry `.backportr@` (`mail.reply`),
    and the bot's From address (`own`) is its author."""
    if ".backportr@" in message_id:
        return True
    address = parseaddr(own)[1].lower() if own else ""
    return bool(address) and parseaddr(author)[1].lower() == address


@dataclass
class Checker:
    ws: Workspace
    lore: Lore | None = None  # when given: look for follow-ups still on the list
    own: str | None = None  # the bot's From: its own replies in the archive are no follow-ups

    def __post_init__(self) -> None:
        self.ws.use_what_scans_cached()  # its blames, as `backportr resolve` answers them

    def check(self, mail: Mail, thread: list[Mail] | None = None) -> MailCheck:
        if mail.kind == "skip":
            return MailCheck(mail, None, skipped=mail.reason or "nothing to check")
        try:
            target = self._target(mail)
        except BackportrError as error:
            return MailCheck(mail, None, skipped=str(error))
        if target is None:
            return MailCheck(mail, None, skipped="no upstream commit found for it")
        branches = self._branches(mail)
        if not branches:
            tried = mail.branch_names(branch_template(self.ws.branch_pattern))
            said = f" (tried {', '.join(tried)})" if tried else ""
            return MailCheck(mail, target, skipped=f"no branch of this repository matches it{said}")
        submitted = self._submitted(mail, thread or [mail])
        if mail.kind == "submission" and submitted:
            target = submitted[-1]  # a series is checked as a whole, through its last part
        resolver = Resolver(self.ws)
        checks = [self._branch(resolver, mail, target, b, submitted) for b in branches]
        subject = self.ws.index.reader.subject(target, self.ws.repo)
        members = [target, *(m.commit for b in checks for m in b.members)]
        return MailCheck(
            mail,
            target,
            subject,
            tuple(checks),
            tuple(self._notes(mail, target)),
            pending=tuple(self._pending(mail, list(dict.fromkeys(members)))),
            tree=self.ws.repo.names.tree_name(self.ws.upstream),
            tips=(
                (self.ws.upstream.name, self.ws.upstream.tip),
                *((b.name, b.tip) for b in branches),
            ),
        )

    def _pending(self, mail: Mail, members: list[Oid]) -> list[tuple[Oid, str, str]]:
        """Patches on the list, not merged upstream, that name a member as their culprit
        (`Fixes: <id>`, or another form of the repository's vocabulary)."""
        if self.lore is None:
            return []
        out = []
        vocabulary = self.ws.index.vocabulary
        for commit in members:
            phrases = vocabulary.search_phrases(short(commit))
            for entry in self.lore.search(" OR ".join(f'nq:"{p}"' for p in phrases)):
                if entry.message_id == mail.message_id:
                    continue
                if is_own(entry.message_id, entry.author, self.own):
                    _log.info("skipped our own reply <%s> in the archive", entry.message_id)
                    continue
                if self.ws.index.reader.upstream_by_subject(_patch_subject(entry.title)):
                    continue  # merged upstream already: the resolver saw it
                out.append((commit, entry.message_id, entry.title))
        return out

    # -- what the mail is about --------------------------------------------------------------

    def _target(self, mail: Mail) -> Oid | None:
        if mail.kind == "patch":
            return self._virtual_commit(mail)
        if mail.upstream:
            return self.ws.repo.names.resolve_commit(mail.upstream)
        if mail.patch_subject:
            found = self.ws.index.reader.upstream_by_subject(mail.patch_subject)
            return found[-1] if found else None
        return None

    def _branches(self, mail: Mail) -> list[Ref]:
        names = list(mail.branch_names(branch_template(self.ws.branch_pattern)))
        if mail.ranges:
            every = [b.name for b in self.ws.indexed]  # the stable branches, found or named
            for low, high in mail.ranges:
                lo, hi = parse_version(low), parse_version(high)
                names += [
                    n for n in every if (v := parse_version(n)) and lo and hi and lo <= v <= hi
                ]
        if mail.kind == "patch" and not names:
            names = [b.name for b in self.ws.indexed]
        refs = []
        for name in dict.fromkeys(names):
            ref = self.ws.repo.find_ref(name)
            if ref is not None:
                refs.append(ref)
        return refs

    def _submitted(self, mail: Mail, thread: list[Mail]) -> list[Oid]:
        """The upstream commits a submission (and the other parts of its series) carry."""
        if mail.kind != "submission":
            return []
        parts = [m for m in thread if m.kind == "submission" and m.upstream]
        parts.sort(key=lambda m: m.part[0] if m.part else 0)
        out = []
        for part in parts:
            oid = self.ws.repo.names.try_resolve_commit(part.upstream or "")
            if oid is not None and oid not in out:
                out.append(oid)
        return out

    def _virtual_commit(self, mail: Mail) -> Oid:
        """Apply the mail's diff onto its base in the object database; the commit is the
        target (no ref, index or work tree is touched)."""
        assert mail.diff is not None
        base = (
            self.ws.repo.names.resolve_commit(mail.base_commit)
            if mail.base_commit
            else self.ws.upstream.tip
        )
        message = f"{mail.patch_subject or mail.subject}\n\n{mail.body.split('---')[0]}"
        return self.ws.repo.commit_of_diff(base, mail.diff, message)

    # -- verdicts ------------------------------------------------------------------------------

    def _branch(
        self, resolver: Resolver, mail: Mail, target: Oid, branch: Ref, submitted: list[Oid]
    ) -> BranchCheck:
        report = resolver.resolve_branch(target, branch)
        if mail.kind != "submission":
            verdict = {"ready": "needs-series", "conflict": "conflict"}.get(
                report.status, report.status
            )
            return BranchCheck(
                branch.name,
                verdict,
                report,
                tuple(m.commit for m in report.series),
                (),
                report.series,
            )
        members = self._union(
            [report] + [resolver.resolve_branch(c, branch) for c in submitted if c != target]
        )
        missing = [m.commit for m in members if m.commit not in submitted]
        notes = [
            f"{short(m.commit)} reverts a member upstream and is missing"
            for m in members
            if m.commit in missing and any(r.kind == "revert" for r in m.reasons)
        ]
        if report.status in ("already-present", "not-needed") and not missing:
            verdict = report.status
        elif missing:
            verdict = "incomplete"
        elif any(m.apply == "conflict" for m in members):
            verdict = "conflict"
        else:
            verdict = "complete"
        notes += self._differs(mail, target)
        return BranchCheck(
            branch.name, verdict, report, tuple(missing), tuple(notes), tuple(members)
        )

    def _union(self, reports: list[BranchReport]) -> tuple[Member, ...]:
        """Every member any of the reports needs, once, in upstream order."""
        seen: dict[Oid, Member] = {}
        for report in reports:
            for member in report.series:
                seen.setdefault(member.commit, member)

        def order(member: Member) -> tuple[int, str]:
            return (self.ws.index.reader.upstream_order(member.commit), member.commit)

        return tuple(sorted(seen.values(), key=order))

    def _differs(self, mail: Mail, target: Oid) -> list[str]:
        """A submitted patch whose patch-id differs from upstream's."""
        if not mail.diff:
            return []
        submitted = self.ws.repo.patch_id_of_diff(mail.diff)
        upstream = self.ws.index.patch_ids.patch_id(target)
        if submitted and upstream and submitted != upstream:
            return [
                f"the submitted patch differs from upstream {short(target)} (patch-id): "
                "say what was changed and why"
            ]
        return []

    def _notes(self, mail: Mail, target: Oid) -> list[str]:
        """Newer stable branches that still lack the target (stable patches go newest first)."""
        versions = [parse_version(v) for v in mail.versions]
        lowest = max((v for v in versions if v), default=None)
        if lowest is None:
            return []
        out = []
        for ref in self.ws.indexed:
            version = parse_version(ref.name)
            if version and version > lowest and not self.ws.presence.check(target, ref).present:
                out.append(
                    f"{ref.name} does not have {short(target)} yet: newer stable branches first"
                )
        return out


def _patch_subject(title: str) -> str:
    """`[PATCH v2 3/5] fs: x` -> `fs: x`."""
    return re.sub(r"^\s*(?:re:\s*)*(?:\[[^\]]*\]\s*)*", "", title, flags=re.IGNORECASE).strip()
