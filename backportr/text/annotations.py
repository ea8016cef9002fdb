"""The forms a stable branch writes to say which upstream commit a backport carries, as one
table: how each is recognised in a message, and how it is written into one.

`trailers.parse_message` reads every form of the table (and looser variants of them) as the
upstream commit a backport carries; the table is also what backportr writes, and what it
learns a branch's maintainers write (`backportr.output.annotations`): adding a form is one
entry here (`ANNOTATIONS.add`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

Placement = Literal["first", "last"]

_HEX = r"([0-9a-f]{12,40})"  # the id, group 1


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
    reference: str = "upstream"  # how a presence answer names what it read (`UpstreamForm`)
    words: tuple[str, ...] = ()
    """Lowercase words a message using it holds, beyond the index's cheap test's own
    (`text/relation_words.py`): a new form's words make the index read such messages."""

    def reads(self, message: str) -> Iterator[tuple[int, str]]:
        """(offset, full upstream id) of each line of `message` in this form."""
        for match in self.pattern.finditer(message):
            if len(match.group(1)) == 40:
                yield match.start(), match.group(1)

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

DEFAULT = "greg"


class AnnotationTable:
    """The forms by name, in order of preference."""

    def __init__(self, forms: tuple[AnnotationForm, ...]) -> None:
        self._by_name = {form.name: form for form in forms}
        self._added: tuple[AnnotationForm, ...] = ()  # since it was made (read per message)

    def __iter__(self) -> Iterator[AnnotationForm]:
        return iter(tuple(self._by_name.values()))

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __getitem__(self, name: str) -> AnnotationForm:
        return self._by_name[name]

    def get(self, name: str, default: AnnotationForm) -> AnnotationForm:
        return self._by_name.get(name, default)

    def names(self) -> list[str]:
        return list(self._by_name)

    def add(self, form: AnnotationForm) -> None:
        if form.name in self._by_name:
            raise ValueError(f"the annotation form {form.name!r} is in the table already")
        self._by_name[form.name] = form
        self._added += (form,)

    @contextmanager
    def added(self, form: AnnotationForm) -> Iterator[None]:
        """The table with one more form for a while (a plug-in's, a test's)."""
        self.add(form)
        try:
            yield
        finally:
            del self._by_name[form.name]
            self._added = tuple(f for f in self._added if f is not form)

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(sorted({w for form in self for w in form.words}))

    def beyond_the_readers(self) -> tuple[AnnotationForm, ...]:
        """The forms added to the built-in ones: `trailers` reads those (and looser variants)
        with readers of its own, and these with their table pattern."""
        return self._added


ANNOTATIONS = AnnotationTable(FORMS)


def form_of(message: str) -> AnnotationForm | None:
    """The form a commit message uses, if any (the first in the table that matches)."""
    for form in ANNOTATIONS:
        if form.pattern.search(message):
            return form
    return None
