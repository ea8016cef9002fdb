"""The forms a stable branch writes to say which upstream commit a backport carries, as one
table: how each is recognised in a message, and how it is written into one.

Reading every form (and more) is `trailers.parse_message`'s; this table is what backportr
writes, and what it learns a branch's maintainers write (`backportr.output.annotations`):
adding a form is one entry here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Placement = Literal["first", "last"]

_HEX = r"[0-9a-f]{12,40}"


@dataclass(frozen=True, slots=True)
class AnnotationForm:
    """One form: its name, an example, the line that shows a message uses it, where it goes
    (`first`: the body's first line; `last`: after every trailer), and its family: the
    forms one project's stable team accepts alike (the kernel's two); a branch learned to
    use a family is written the family's first form."""

    name: str
    example: str
    pattern: re.Pattern[str]
    placement: Placement
    lines: tuple[str, ...]  # `{id}` the full upstream id, `{date}` its committer date
    family: str = ""  # the name when empty

    def write(self, body: str, upstream: str, date: str) -> str:
        """The body (the message without its subject) annotated with this form."""
        lines = [line.format(id=upstream, date=date) for line in self.lines]
        body = body.strip("\n")
        if self.placement == "first":
            return "\n".join(lines) + ("\n\n" + body if body else "") + "\n"
        return (body + "\n\n" if body else "") + "\n".join(lines) + "\n"


FORMS: tuple[AnnotationForm, ...] = (
    AnnotationForm(
        "greg",
        "commit <id> upstream.",
        re.compile(rf"^commit {_HEX} upstream\.?[ \t]*$", re.MULTILINE),
        "first",
        ("commit {id} upstream.",),
    ),
    AnnotationForm(
        "sasha",
        "[ Upstream commit <id> ]",
        re.compile(rf"^\[ ?Upstream commit {_HEX} ?\][ \t]*$", re.MULTILINE),
        "first",
        ("[ Upstream commit {id} ]",),
        family="greg",
    ),
    AnnotationForm(
        "dpdk",
        "[ upstream commit <id> ]",
        re.compile(rf"^\[ ?upstream commit {_HEX} ?\][ \t]*$", re.MULTILINE),
        "first",
        ("[ upstream commit {id} ]",),
    ),
    AnnotationForm(
        "xen",
        "master commit: <id> / master date: <date>",
        re.compile(rf"^master commit: {_HEX}[ \t]*$", re.MULTILINE),
        "last",
        ("master commit: {id}", "master date: {date}"),
    ),
    AnnotationForm(
        "cherry-pick",
        "(cherry picked from commit <id>)",
        re.compile(rf"^\(cherry picked from commit {_HEX}\)[ \t]*$", re.MULTILINE),
        "last",
        ("(cherry picked from commit {id})",),
    ),
    AnnotationForm(
        "backported",
        "(backported from commit <id>)",
        re.compile(rf"^\(backported from commit {_HEX}\)[ \t]*$", re.MULTILINE),
        "last",
        ("(backported from commit {id})",),
    ),
)
"""In order of preference where a branch uses two equally often (the kernel's first)."""

BY_NAME = {form.name: form for form in FORMS}
DEFAULT = "greg"


def form_of(message: str) -> AnnotationForm | None:
    """The form a commit message uses, if any (the first in the table that matches)."""
    for form in FORMS:
        if form.pattern.search(message):
            return form
    return None
