"""Frozen value types shared by every layer: parsed trailers, commits, presence answers.

No behaviour beyond small conveniences; no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Literal, NewType

Oid = NewType("Oid", str)
"""A full 40-hex commit id, as git wrote it (a `str` where a person or a file wrote one)."""

SHORT = 12
"""Hex digits of a commit id shown to a person (as the kernel's `Fixes:` lines give it)."""


NO_OID = Oid("")
"""No commit (a field not filled yet)."""


def oids(text: str) -> list[Oid]:
    """The ids of git's output, one a word (`git rev-list`)."""
    return [Oid(word) for word in text.split()]


def short(oid: str) -> str:
    """A commit id as shown to a person: its first 12 hex digits."""
    return oid[:SHORT]


ProgressCallback = Callable[[str, int, int | None], None]
"""progress(stage, done, total): the front-end decides whether and how to show it."""


def no_progress(stage: str, done: int, total: int | None) -> None:
    """The default progress callback: say nothing."""


@dataclass(frozen=True, slots=True)
class FixesTag:
    """One named culprit: the id as written (6-40 hex, lowercased), the quoted subject, and
    the form that named it (`Fixes:`, `Follow-up for`, ...: `text/relation_forms.py`)."""

    ref: str
    subject: str | None = None
    form: str = "Fixes:"


@dataclass(frozen=True, slots=True)
class StableDep:
    """`Stable-dep-of: <upstream sha> ("<subject>")`: this commit was taken for that one."""

    ref: str
    subject: str | None = None


Version = tuple[int, int]


@dataclass(frozen=True, slots=True)
class StableTag:
    """`Cc: stable@...` with its comment: version floor/ceiling and a declared prerequisite."""

    noautosel: bool = False
    since: Version | None = None
    until: Version | None = None
    prerequisite: str | None = None
    prerequisite_subject: str | None = None
    comment: str | None = None

    def covers(self, version: Version) -> bool:
        """True when a branch of this version is meant by the tag (no version: all)."""
        if self.since is not None and version < self.since:
            return False
        return not (self.until is not None and version > self.until)


UpstreamForm = Literal["upstream", "cherry-pick", "backport", "mainline-inclusion"]


@dataclass(frozen=True, slots=True)
class UpstreamRef:
    """A line of a stable commit naming the upstream commit it carries."""

    oid: Oid
    form: UpstreamForm


@dataclass(frozen=True, slots=True)
class Trailer:
    """A generic `Key: value` trailer (Signed-off-by, Reported-by, Link, ...)."""

    key: str
    value: str


@dataclass(frozen=True, slots=True)
class ParsedMessage:
    """Everything a commit message says about itself."""

    subject: str
    fixes: tuple[FixesTag, ...] = ()
    stable_deps: tuple[StableDep, ...] = ()
    stable_tags: tuple[StableTag, ...] = ()
    upstream_refs: tuple[UpstreamRef, ...] = ()
    reverts: tuple[str, ...] = ()
    reverted_subject: str | None = None
    links: tuple[str, ...] = ()
    trailers: tuple[Trailer, ...] = ()

    @property
    def upstream(self) -> Oid | None:
        """The upstream id this commit names as its origin, if any."""
        return self.upstream_refs[0].oid if self.upstream_refs else None


@dataclass(frozen=True, slots=True)
class CommitInfo:
    """A commit as the index knows it."""

    oid: Oid
    subject: str
    author_name: str
    author_email: str
    author_time: int
    commit_time: int


PresenceHow = Literal["ancestor", "annotation", "patch-id", "subject"]


@dataclass(frozen=True, slots=True)
class Presence:
    """Whether an upstream commit is in a branch, and as which commit."""

    commit: Oid
    branch: str
    present: bool
    as_commit: Oid | None = None
    how: PresenceHow | None = None
    reverted_in_branch: bool = False
    reverted_by: Oid | None = None


@dataclass(frozen=True, slots=True)
class StatusResult:
    """`backportr status` for one commit over several branches."""

    commit: Oid
    subject: str
    branches: tuple[Presence, ...] = field(default_factory=tuple)


# -- resolve -------------------------------------------------------------------------------

EdgeKind = Literal[
    "culprit",  # the dependent fixes this commit, which the branch lacks but needs
    "follow-up",  # this commit's Fixes: names the dependent
    "revert",  # this commit reverts the dependent upstream
    "declared",  # Cc: stable # X.Y.x: <sha> line of the dependent
    "stable-dep-of",  # a stable branch recorded Stable-dep-of: <dependent>
    "conflict",  # the dependent conflicts without this commit (blame of the conflict)
    "adapted",  # the dependent reached the branch adapted, without this commit
    "symbol",  # the dependent uses an identifier this commit introduced
    "posting",  # the same posting (patch series) as the dependent (--with-siblings; or
    # between an earlier patch of the target's posting the series takes and the target)
]
ReasonKind = EdgeKind | Literal["target", "context"]
"""Why a commit is in a report: an edge of the graph, the commit asked for, or (for a
suggestion) the logic of the code around a member's change."""

Role = Literal["target", "prerequisite", "follow-up", "sibling"]
"""`sibling`: a later patch of a member's posting, taken with `--with-siblings all`."""
CulpritPolicy = Literal["auto", "evidence", "always"]
"""When an absent culprit joins: with evidence the stable team wants it, always, or `auto`:
on evidence in a project that tags fixes for stable (a missing tag then says something),
always in one that does not (NetworkManager, OVN, Xen: fewer than one in a hundred of its
upstream fixes tagged)."""
ApplyResult = Literal["clean", "conflict", "empty", "not-tried"]
BranchStatus = Literal[
    "ready", "conflict", "incomplete", "already-present", "not-needed", "reverted-upstream"
]


@dataclass(frozen=True, slots=True)
class Reason:
    """Why a commit is in the series: the kind of evidence, in words, and the related commit."""

    kind: ReasonKind
    detail: str
    related: Oid | None = None


SiblingState = Literal["this", "present", "in-series", "absent", "not-upstream"]
SiblingsPolicy = Literal["none", "earlier", "all"]
"""Which absent siblings of a member's posting join the series (`--with-siblings`)."""


@dataclass(frozen=True, slots=True)
class Sibling:
    """One patch of a member's posting and where it is for the branch; a patch that never
    landed upstream (known from the thread on lore) is `not-upstream`, with no commit."""

    commit: Oid
    position: int
    subject: str
    state: SiblingState


@dataclass(frozen=True, slots=True)
class PostingInfo:
    """The posting (patch series) a member came from: `position` of `total` (the patches of it
    that landed upstream, as far as the history tells), the other patches and their state."""

    key: str  # the Message-ID stem, or "merge <12 hex>"
    position: int
    total: int
    cover: str | None  # the merge's subject, or the cover letter's (read from lore)
    siblings: tuple[Sibling, ...]
    message_id: str | None = None  # this patch's mail, when its trailers name it
    posted: int | None = None  # how many patches were posted (the cover's N, from lore)
    link: str | None = None  # the commit's `Link:` to this patch's mail, when it has one

    @property
    def name(self) -> str:
        """How a reader finds it: `"<cover>"`, `posting <link>` or `posting <key>`."""
        named = f'"{self.cover}"' if self.cover else "posting"
        if self.link:
            return f"{named} {self.link}"
        return named if self.cover else f"{named} {self.key}"


@dataclass(frozen=True, slots=True)
class Member:
    """One commit of the series to apply."""

    commit: Oid
    subject: str
    role: Role
    reasons: tuple[Reason, ...]
    apply: ApplyResult = "not-tried"
    conflict_files: tuple[str, ...] = ()
    posting: PostingInfo | None = None
    targets: tuple[Oid, ...] = ()  # of a batch of targets: those whose closure holds it


@dataclass(frozen=True, slots=True)
class PresentMember:
    """A commit of the closure already in the branch."""

    commit: Oid
    as_commit: Oid | None
    how: str | None
    subject: str = ""


@dataclass(frozen=True, slots=True)
class Suggestion:
    """A possible prerequisite a maintainer should judge; never changes the status."""

    commit: Oid
    subject: str
    reason: Reason


_NEEDED = re.compile(r"(\w+) introduced by ([0-9a-f]{7,40})")
"""How a symbol reason names what it needs (`resolve/finders/symbols.py`)."""


@dataclass(frozen=True, slots=True)
class Elsewhere:
    """What another stable branch did with the target: backported it (as `as_commit`), with
    which of this answer's other commits (members and suggestions), and without which of its
    members."""

    branch: str
    as_commit: Oid
    took: tuple[Oid, ...] = ()
    without: tuple[Oid, ...] = ()


@dataclass(frozen=True, slots=True)
class BranchReport:
    """Everything resolve found for one branch."""

    branch: str
    status: BranchStatus
    series: tuple[Member, ...] = ()
    present: tuple[PresentMember, ...] = ()
    warnings: tuple[str, ...] = ()
    suggestions: tuple[Suggestion, ...] = ()
    files: tuple[str, ...] = ()
    alternative: str | None = None
    # a batch's: each target's own status, as a resolve of it alone answers
    each: tuple[tuple[Oid, BranchStatus], ...] = ()
    elsewhere: tuple[Elsewhere, ...] = ()  # the other stable branches that took the target

    def needs(self) -> dict[Oid, tuple[tuple[str, Oid], ...]]:
        """What each member uses that the branch lacks and the series does not bring, as
        (identifier, the commit that introduced it): the symbol suggestions about it. Such a
        member would not build as it is."""
        members = {m.commit for m in self.series}
        out: dict[Oid, list[tuple[str, Oid]]] = {}
        for s in self.suggestions:
            if s.reason.kind != "symbol" or s.reason.related not in members:
                continue
            names = _NEEDED.findall(s.reason.detail)
            for name in dict.fromkeys(n for n, short in names if s.commit.startswith(short)):
                out.setdefault(s.reason.related, []).append((name, s.commit))
            if not names:
                out.setdefault(s.reason.related, []).append(("identifiers", s.commit))
        return {member: tuple(dict.fromkeys(pairs)) for member, pairs in out.items()}


@dataclass(frozen=True, slots=True)
class Report:
    """The answer of `backportr resolve` for one target, or a batch of them (`targets`, in
    the order asked; `target` is then the first), over several branches."""

    target: Oid
    subject: str
    branches: tuple[BranchReport, ...]
    targets: tuple[Oid, ...] = ()


@dataclass(frozen=True, slots=True)
class Author:
    """A commit's author: name, address, time (seconds) and zone (minutes east of UTC)."""

    name: str
    email: str
    time: int
    offset: int

    def rfc2822(self) -> str:
        """The date as a mail's Date: header writes it."""
        import email.utils  # only the mail writers ask: not on every command's start

        zone = timezone(timedelta(minutes=self.offset))
        return email.utils.format_datetime(datetime.fromtimestamp(self.time, zone))

    def raw_date(self) -> str:
        """git's raw date: `<seconds> <+hhmm>`."""
        sign = "-" if self.offset < 0 else "+"
        offset = abs(self.offset)
        return f"{self.time} {sign}{offset // 60:02d}{offset % 60:02d}"
