"""C-family source without its comments: what a compiler reads of a file. A change that
leaves it the same (a typo fixed in a comment, a comment reworded or re-wrapped, whitespace)
changes nothing a user of the program can see, and the stable rules leave such changes out.

One pass over the text, linear in its length: string and character literals are kept as
they are (a `/*` inside a string opens no comment), comments become one space, and runs
of whitespace fold to one space.
"""

from __future__ import annotations

C_FAMILY = (".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx", ".y", ".l", ".cu")
"""The suffixes read as C-family source."""


def is_c_family(path: str) -> bool:
    return path.endswith(C_FAMILY)


def without_comments(text: str) -> str:
    """The text with its C and C++ comments each replaced by a space and every run of
    whitespace folded to one space (strings and character literals as written). An
    unterminated comment runs to the end; an unterminated literal to the end of its line."""
    out: list[str] = []
    i, n = 0, len(text)
    start = 0  # the start of the run of code being copied
    while i < n:
        c = text[i]
        if c == "/" and i + 1 < n and text[i + 1] in "/*":
            out.append(text[start:i])
            out.append(" ")
            if text[i + 1] == "/":
                end = text.find("\n", i + 2)
                while end != -1 and _continued(text, end):  # a comment ended by `\`
                    end = text.find("\n", end + 1)
                i = n if end == -1 else end
            else:
                end = text.find("*/", i + 2)
                i = n if end == -1 else end + 2
            start = i
        elif c in "\"'":
            i = _literal_end(text, i)
        else:
            i += 1
    out.append(text[start:])
    return " ".join("".join(out).split())


def _continued(text: str, newline: int) -> bool:
    """Does the line ending at `newline` end in a backslash (a line continuation)?"""
    before = newline - 1
    if before >= 0 and text[before] == "\r":
        before -= 1
    return before >= 0 and text[before] == "\\"


def _literal_end(text: str, i: int) -> int:
    """The index past the string or character literal opening at `i`: its closing quote,
    else the end of its line (C has no literal across a newline)."""
    quote, n = text[i], len(text)
    j = i + 1
    while j < n:
        c = text[j]
        if c == "\\":
            j += 2
        elif c == quote:
            return j + 1
        elif c == "\n":
            return j
        else:
            j += 1
    return n


def same_code(path: str, old: str, new: str) -> bool:
    """Do two versions of a C-family file read the same to a compiler (they differ in
    comments or whitespace alone)? False for any other kind of file."""
    return is_c_family(path) and without_comments(old) == without_comments(new)
