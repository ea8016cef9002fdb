"""The lines of a commit message that cite an earlier commit by id, and the phrase each cites
it with: what a project's fix vocabulary is learned from (`backportr.index.vocabulary`).

A citation is a hex id of 7 to 40 digits standing alone on a line (not inside a URL, a
path, a `#123` number or a longer word) and the words written right before it on that
line:

- a trailer's key, where the line is `Key: <id>` (`Fixes:`, `Amends:`, `Follow-up-for:`);
- otherwise the last two words before it, since the clause began (a `commit` right before
  the id left out): `Follow-up to <id>` is `follow-up to`, `This fixes a regression from
  commit <id>` is `regression from`, `(cherry picked from commit <id>)` is `picked from`.

A line with no word before its id (`commit <id> upstream.`) cites with no phrase and is left
out. Everything is linear in the message: one pass per line, bounded lookbacks.

PURE: text in, values out.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_ID = re.compile(r"(?<![\w/#=@.:%+~-])([0-9a-f]{7,40})(?![\w/@=%+~-])")
_HEX_RUN = re.compile(r"[0-9a-f]{7}")  # a line without one cites no id
_TRAILER = re.compile(r"[ \t]*([A-Za-z][A-Za-z0-9-]{0,40}):[ \t]*(?:commit[ \t]+)?$")
_WORD = re.compile(r"[a-z][a-z'-]*")
_CLAUSE_END = re.compile(r"[.;!?(\[\"“][ \t]|[(\[\"“]|^[ \t]*[-*>][ \t]|, ")
_LOOKBACK = 80  # characters before an id its phrase is read from
_LONGEST_LINE = 1000  # a line longer is read in its first this many characters
FILLERS = frozenset({"commit", "commits", "sha", "sha1", "id", "hash", "change", "the"})
"""Words right before an id that say nothing of the relation (`fixes commit <id>`)."""
_FILLER_GAP = re.compile(r"[ \t:]*(?:(?:" + "|".join(sorted(FILLERS)) + r")[ \t:]+)*")


@dataclass(frozen=True, slots=True)
class Citation:
    """One id cited on one line: the phrase (`fixes:`, `follow-up to`), the id as written
    (lowercase), the phrase as the line wrote it (its case), and the line."""

    phrase: str
    ref: str
    written: str
    line: str

    @property
    def is_trailer(self) -> bool:
        return self.phrase.endswith(":")


def is_id(token: str) -> bool:
    """A hex string that may be a commit id: a letter in it, or twelve digits or more (a
    seven-digit number is more often a number)."""
    return len(token) >= 12 or any(c in "abcdef" for c in token)


def citations(message: str) -> Iterator[Citation]:
    """Every id the message cites with a phrase before it, line by line."""
    if _HEX_RUN.search(message) is None:  # most messages cite nothing: one C-level scan
        return
    for line in message.split("\n"):
        yield from line_citations(line)


def line_citations(line: str) -> Iterator[Citation]:
    """Every id one line cites with a phrase before it (its first `_LONGEST_LINE`
    characters read)."""
    line = line[:_LONGEST_LINE]
    if _HEX_RUN.search(line) is None:
        return
    trailer_seen = False
    for match in _ID.finditer(line):
        token = match.group(1)
        if not is_id(token):
            continue
        if trailer_seen:
            break  # a trailer cites one id: the others are in its quoted subject
        before = line[max(0, match.start() - _LOOKBACK) : match.start()]
        found = phrase_before(before)
        if found is not None:
            phrase, written = found
            trailer_seen = phrase.endswith(":")
            yield Citation(phrase, token, written, _around(line, match.start(), match.end()))


_HEX_MARKS = bytes(ord("x") if chr(b) in "0123456789abcdef" else ord(".") for b in range(256))
_SEVEN_HEX = b"x" * 7


def lines_with_hex_runs(text: bytes) -> Iterator[bytes]:
    """The lines of UTF-8 `text` that hold seven lowercase hex digits in a row: the only
    lines `line_citations` can find a citation in (each decoded, utf-8 with replacement,
    is the message's line as `str`). One C-level pass over the whole text (a table
    translation, then a substring search), where the `str` regex costs 5 ns a character:
    a history's messages are read in tens of milliseconds, not a tenth of a second."""
    marks = text.translate(_HEX_MARKS)
    at = marks.find(_SEVEN_HEX)
    while at != -1:
        start = text.rfind(b"\n", 0, at) + 1
        end = text.find(b"\n", at)
        if end == -1:
            yield text[start:]
            return
        yield text[start:end]
        at = marks.find(_SEVEN_HEX, end)


def phrase_before(before: str) -> tuple[str, str] | None:
    """The phrase written before an id (lowercase, and as written), or None."""
    trailer = _TRAILER.fullmatch(before)
    if trailer is not None:
        key = trailer.group(1)
        return key.lower() + ":", key + ":"
    clause = before
    ends = list(_CLAUSE_END.finditer(clause))
    if ends:
        clause = clause[ends[-1].end() :]
    words = [(m.group(0), m.start(), m.end()) for m in _WORD.finditer(clause.lower())]
    while words and words[-1][0] in FILLERS:
        words.pop()
    # Only words right before the id count: anything else between them (a number, a quoted
    # subject) makes it no phrase of this id.
    if not words or not _FILLER_GAP.fullmatch(clause[words[-1][2] :].lower()):
        return None
    chosen = words[-1:]
    if len(words) > 1 and not clause[words[-2][2] : words[-1][1]].strip(" \t"):
        chosen = words[-2:]  # two words only where nothing but a space is between them
    phrase = " ".join(w for w, _, _ in chosen)
    written = clause[chosen[0][1] : chosen[-1][2]]
    return phrase, written


def _around(line: str, start: int, end: int) -> str:
    """The line, or where it is long the 200 characters around the id."""
    if len(line.strip()) <= 200:
        return line.strip()
    begin = max(0, min(start - 100, end - 200))
    return line[begin : begin + 200].strip()
