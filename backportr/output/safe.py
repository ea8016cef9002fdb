"""Text from data made safe for where it is shown: the one text-safety layer of every
renderer. A commit subject, an author's name, a mail's title are written by anyone; in
text output a control character would move the cursor, clear the screen or set the
terminal's title, in XML it makes the document malformed, in Markdown raw HTML runs.

- `terminal`: control characters other than tab and newline (C0, DEL, C1) and the bidi
  overrides are shown escaped, `\\x1b` as Python and `git log` (`^[`) show them.
- `xml`: characters XML 1.0 forbids, and those that act on a terminal or reorder text,
  become U+FFFD; then `&`, `<`, `>` and quotes escaped.
- `markdown`: as `terminal`, then HTML and table syntax escaped.
- `one_line`: a mail header's value, every control character folded to a space.
- `directory_name`: a branch's name as one directory of an output (`/` as `-`).
PURE.
"""

from __future__ import annotations

import html
import re

_TERMINAL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NOT_XML = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
    "\ud800-\udfff\ufffe\uffff]"
)


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal(text: str) -> str:
    """`text` with every character that acts on a terminal shown escaped (tab and newline
    left as they are)."""
    return _TERMINAL.sub(_escaped, text)


def xml(text: str, *, quote: bool = True) -> str:
    """`text` as XML character data (or an attribute value): only characters XML allows,
    the markup ones escaped."""
    return html.escape(_NOT_XML.sub("\ufffd", text), quote=quote)


_HEADER_BREAKS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def directory_name(branch: str) -> str:
    """A branch's name as one directory name, where an output is made for it (its queue, its
    part of a patch set): `release/2.40/master` -> `release-2.40-master`; no `/` makes a path
    whose parents are not there. (A git branch has no `..` and no part that starts with a
    dot: the name is no path out of the directory.)"""
    return branch.replace("/", "-")


def one_line(value: str) -> str:
    """A header value from data with every control character (C0, DEL, C1, and Unicode's
    line and paragraph separators) folded to a space: a header is one logical line."""
    return _HEADER_BREAKS.sub(" ", value)


def markdown(text: str) -> str:
    """`text` for a Markdown table cell: terminal-safe, no HTML, no cell break."""
    return html.escape(terminal(text), quote=False).replace("|", "\\|").replace("`", "\\`")
