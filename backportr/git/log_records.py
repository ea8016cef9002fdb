"""One commit of a streaming `git log` pass: the split of a record of the format the git
layer asks for (`git.walk.LOG_FORMAT`; pure: no pygit2, no process)."""

from __future__ import annotations

from dataclasses import dataclass

from backportr.model import Oid


@dataclass(frozen=True, slots=True)
class LogRecord:
    """One commit from a streaming log pass; the message stays bytes until asked for."""

    oid: Oid
    parents: tuple[Oid, ...]
    author_name: str
    author_email: str
    author_time: int
    commit_time: int
    raw_message: bytes

    @property
    def message(self) -> str:
        return self.raw_message.decode("utf-8", "replace")

    @property
    def subject(self) -> str:
        return self.raw_message.split(b"\n", 1)[0].decode("utf-8", "replace").strip()


RawFields = tuple[bytes, bytes, bytes, bytes, bytes, bytes, bytes]
"""A raw record's id, parents (space-separated), author and commit times, author name and
address, and message, as git wrote them."""


def raw_fields(raw: bytes) -> RawFields:
    """A raw record of `git log -z --format=LOG_FORMAT` split, nothing decoded (for the
    bulk readers, which decode only what they keep)."""
    oid, parents, atime, ctime, rest = raw.lstrip(b"\n").split(b"\x1f", 4)
    name, email, message = rest.split(b"\n", 2)
    return oid, parents, atime, ctime, name, email, message


def log_record(raw: bytes) -> LogRecord:
    """A raw record of `git log -z --format=LOG_FORMAT` (`git.walk.LOG_FORMAT`)."""
    oid, parents, atime, ctime, name, email, message = raw_fields(raw)
    return LogRecord(
        oid=Oid(oid.decode("ascii")),
        parents=tuple(Oid(p) for p in parents.decode("ascii").split()),
        author_name=name.decode("utf-8", "replace"),
        author_email=email.decode("utf-8", "replace"),
        author_time=int(atime or 0),
        commit_time=int(ctime or 0),
        raw_message=message,
    )
