"""One finder per kind of evidence. Each takes a Context and a commit and returns Findings;
none of them decides membership (resolve/resolver.py does) or prints anything."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from backportr.git.names import Ref
from backportr.git.repo import Repo
from backportr.git.trial import TrialApplier
from backportr.index import CommitIndex
from backportr.index.presence import PresenceChecker
from backportr.model import Oid, Reason, Version, short
from backportr.resolve.finders.words import FileIdentifiers, WordLookup

Direction = Literal["prerequisite", "follow-up"]  # before the commit asked about, or after
SERIES_WINDOW = 12 * 3600  # seconds between the commits of one posting, applied together


@dataclass(frozen=True, slots=True)
class Finding:
    """`commit` relates to the commit asked about as a prerequisite or a follow-up."""

    commit: Oid
    relation: Direction
    reason: Reason


@dataclass
class Context:
    """What the finders share for one branch."""

    repo: Repo
    index: CommitIndex
    presence: PresenceChecker
    applier: TrialApplier
    upstream: Ref
    branch: Ref
    version: Version | None
    fork: Oid | None
    _present: dict[Oid, bool] = field(default_factory=dict)
    words: WordLookup | None = None
    """Which identifiers occur in the branch tip's sources (the symbol finder's cache)."""
    file_words: FileIdentifiers = field(default_factory=FileIdentifiers)
    """The identifiers of files read whole, by blob id (shared by a resolver's contexts)."""

    def is_present(self, commit: Oid) -> bool:
        if commit not in self._present:
            self._present[commit] = self.presence.check(commit, self.branch).present
        return self._present[commit]

    def subject(self, commit: Oid) -> str:
        return self.index.reader.subject(commit, self.repo)

    def describe(self, commit: Oid) -> str:
        return f'{short(commit)} ("{self.subject(commit)}")'

    def same_posting(self, one: Oid, other: Oid) -> bool:
        """By one person, committed upstream within `SERIES_WINDOW` of each other: one
        posting, applied together."""
        return self.committed_near(one, other, SERIES_WINDOW, same_author=True)

    def committed_near(self, one: Oid, other: Oid, seconds: int, *, same_author: bool) -> bool:
        """Committed upstream within `seconds` of each other (and, with `same_author`, by
        one person: `Reader.same_person`)."""
        reader = self.index.reader
        ours, theirs = reader.info(one), reader.info(other)
        return (
            ours is not None
            and theirs is not None
            and abs(ours.commit_time - theirs.commit_time) <= seconds
            and (not same_author or reader.same_person(one, other))
        )
