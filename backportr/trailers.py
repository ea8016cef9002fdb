"""Parse what a kernel commit message says about itself.

PURE: a message string in, a ParsedMessage out. No git, no files, no printing. Parsing is
tolerant (real history has lowercase `fixes:`, odd spacing, wrapped lines, missing
parentheses); the formats are those of ../shared/CONVENTIONS.md.
"""

from __future__ import annotations

import re
from typing import TypeVar

from backportr.model import (
    FixesTag,
    ParsedMessage,
    StableDep,
    StableTag,
    Trailer,
    UpstreamForm,
    UpstreamRef,
    Version,
)

T = TypeVar("T")

_HEX = r"[0-9a-fA-F]"
_FIXES = re.compile(rf"^\s*fixes\s*:\s*(?:commit\s+)?({_HEX}{{7,40}})\b(.*)$", re.IGNORECASE)
_STABLE_DEP = re.compile(rf"^\s*stable-dep-of\s*:\s*({_HEX}{{7,40}})\b(.*)$", re.IGNORECASE)
_STABLE_CC = re.compile(
    r"^\s*cc\s*:\s*(?:[^<#]*?)<?\s*stable(\+noautosel)?@(?:vger\.)?kernel\.org\s*>?\s*(?:#\s*(.*))?$",
    re.IGNORECASE,
)
_FULL_ID = re.compile(rf"\b({_HEX}{{40}})\b")
_UPSTREAM_WORD = re.compile(r"upstream", re.IGNORECASE)
_CHERRY = re.compile(rf"\(\s*cherry[ -]picked from commit ({_HEX}{{40}})", re.IGNORECASE)
_BACKPORTED = re.compile(rf"\(\s*backported from commit ({_HEX}{{40}})", re.IGNORECASE)
_MAINLINE_INCLUSION = re.compile(r"^\s*mainline inclusion\s*$", re.IGNORECASE)
_BARE_COMMIT = re.compile(rf"^\s*commit\s+({_HEX}{{40}})\s*$", re.IGNORECASE)
_REVERTS = re.compile(rf"\bthis reverts commit ({_HEX}{{7,40}})\b", re.IGNORECASE)
_REVERT_SUBJECT = re.compile(r'^\s*Revert\s+"(.*)"\s*$')
_LINK = re.compile(
    r"^\s*link\s*:\s*<?https?://(?:lore\.kernel\.org(?:/[^/\s]+)?/r?/?|patch\.msgid\.link/)"
    r"([^\s>]+?)/?>?\s*$",
    re.IGNORECASE,
)
_TRAILER = re.compile(r"^([A-Za-z][A-Za-z0-9-]*[A-Za-z0-9])\s*:\s+(\S.*)$")
_VERSION = re.compile(r"v?(\d+)\.(\d+)(?:\.(?:x|y|\d+))?(\+)?", re.IGNORECASE)
_VERSION_RANGE = re.compile(
    r"^v?(\d+)\.(\d+)(?:\.[xy0-9]+)?\s*-\s*v?(\d+)\.(\d+)(?:\.[xy0-9]+)?", re.IGNORECASE
)
_DECLARED_PREREQ = re.compile(
    rf"^(v?\d+\.\d+(?:\.[xy0-9]+)?\+?)\s*:\s*({_HEX}{{7,40}})\s*:?\s*(.*)$", re.IGNORECASE
)

# Trailer keys kept in ParsedMessage.trailers (the rest of the body is prose).
_KNOWN_KEYS = {
    "fixes",
    "cc",
    "link",
    "closes",
    "stable-dep-of",
    "signed-off-by",
    "acked-by",
    "reviewed-by",
    "tested-by",
    "reported-by",
    "suggested-by",
    "co-developed-by",
    "reported-and-tested-by",
    "message-id",
    "bug",
    "change-id",
}


def parse_message(message: str) -> ParsedMessage:
    """Parse a whole commit message (subject line first)."""
    lines = message.splitlines()
    subject = lines[0].strip() if lines else ""
    body = _unwrap_quoted_subjects(lines[1:])

    fixes: list[FixesTag] = []
    deps: list[StableDep] = []
    tags: list[StableTag] = []
    refs: list[UpstreamRef] = []
    reverts: list[str] = []
    links: list[str] = []
    trailers: list[Trailer] = []
    after_mainline_inclusion = False

    for line in body:
        if m := _FIXES.match(line):
            fixes.append(FixesTag(m.group(1).lower(), _quoted_subject(m.group(2))))
        elif m := _STABLE_DEP.match(line):
            deps.append(StableDep(m.group(1).lower(), _quoted_subject(m.group(2))))
        elif m := _STABLE_CC.match(line):
            tags.append(parse_stable_comment(m.group(2), noautosel=bool(m.group(1))))
        elif (ref := _upstream_ref(line, after_mainline_inclusion)) is not None and all(
            r.oid != ref.oid for r in refs
        ):
            refs.append(ref)
        if m := _REVERTS.search(line):
            reverts.append(m.group(1).lower())
        if m := _LINK.match(line):
            links.append(m.group(1))
        if _MAINLINE_INCLUSION.match(line):
            after_mainline_inclusion = True
        if (m := _TRAILER.match(line)) and m.group(1).lower() in _KNOWN_KEYS:
            trailers.append(Trailer(m.group(1), m.group(2).strip()))

    revert_match = _REVERT_SUBJECT.match(subject)
    return ParsedMessage(
        subject=subject,
        fixes=tuple(_unique(fixes)),
        stable_deps=tuple(_unique(deps)),
        stable_tags=tuple(tags),
        upstream_refs=tuple(refs),
        reverts=tuple(_unique(reverts)),
        reverted_subject=revert_match.group(1) if revert_match else None,
        links=tuple(_unique(links)),
        trailers=tuple(trailers),
    )


_RELATION_WORDS = re.compile(
    r"fixes|stable|upstream|cherry|backported|reverts|mainline|^revert",
    re.IGNORECASE | re.MULTILINE,
)


def mentions_relations(message: str) -> bool:
    """A cheap test: can parse_message find any relation (Fixes, stable, upstream, revert)?

    Lets a bulk indexer skip the full parse for the many commits that carry none.
    """
    return _RELATION_WORDS.search(message) is not None


def parse_stable_comment(comment: str | None, *, noautosel: bool = False) -> StableTag:
    """Interpret the `# ...` comment of a `Cc: stable` line.

    Forms: `5.10+`, `v5.10+`, `5.10.x`, `5.10.y`, `5.10`, `4.19.x-5.4.x`,
    `3.3.x: a1f84a3: sched: Check for idle`, `after -rc3`, free text.
    A bare version (`5.10.x`) means "this version and newer", as the stable rules use it.
    """
    if comment is None:
        return StableTag(noautosel=noautosel)
    text = comment.strip()
    if noautosel:
        return StableTag(noautosel=True, comment=text or None)
    if m := _DECLARED_PREREQ.match(text):
        since = _version(m.group(1))
        return StableTag(
            since=since,
            prerequisite=m.group(2).lower(),
            prerequisite_subject=m.group(3).strip() or None,
            comment=text,
        )
    if m := _VERSION_RANGE.match(text):
        return StableTag(
            since=(int(m.group(1)), int(m.group(2))),
            until=(int(m.group(3)), int(m.group(4))),
            comment=text,
        )
    if m := _VERSION.match(text):
        return StableTag(since=(int(m.group(1)), int(m.group(2))), comment=text)
    return StableTag(comment=text or None)


def parse_version(text: str) -> Version | None:
    """`5.10`, `v5.10`, `5.10.y`, `linux-5.10.y`, `5.10.202` -> (5, 10)."""
    m = re.search(r"(\d+)\.(\d+)", text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _version(text: str) -> Version | None:
    m = _VERSION.match(text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _upstream_ref(line: str, after_mainline_inclusion: bool) -> UpstreamRef | None:
    form: UpstreamForm
    if m := _CHERRY.search(line):
        return UpstreamRef(m.group(1).lower(), "cherry-pick")
    if m := _BACKPORTED.search(line):
        return UpstreamRef(m.group(1).lower(), "backport")
    if _UPSTREAM_WORD.search(line) and (m := _FULL_ID.search(line)):
        form = "upstream"
        return UpstreamRef(m.group(1).lower(), form)
    if after_mainline_inclusion and (m := _BARE_COMMIT.match(line)):
        return UpstreamRef(m.group(1).lower(), "mainline-inclusion")
    return None


def _quoted_subject(rest: str) -> str | None:
    """The subject in `("...")` after an id; tolerant of missing parentheses or quotes."""
    text = rest.strip()
    if not text:
        return None
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1].strip()
    elif text.startswith("("):
        text = text[1:].strip()
    for open_q, close_q in (('"', '"'), ("\u201c", "\u201d"), ("'", "'")):
        if text.startswith(open_q) and text.endswith(close_q) and len(text) >= 2:
            text = text[1:-1]
            break
        if text.startswith(open_q):
            text = text[1:]
            break
    text = text.strip()
    return text or None


def _unwrap_quoted_subjects(lines: list[str]) -> list[str]:
    """Join a `Fixes:`/`Stable-dep-of:` line whose quoted subject wraps onto the next lines."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if (
            (_FIXES.match(line) or _STABLE_DEP.match(line))
            and '("' in line
            and not line.rstrip().endswith(('")', ")"))
        ):
            joined = line.rstrip()
            j = i + 1
            while j < len(lines) and j - i <= 3 and lines[j].strip():
                if _TRAILER.match(lines[j]):
                    break
                joined += " " + lines[j].strip()
                j += 1
                if joined.endswith(('")', ")")):
                    break
            out.append(joined)
            i = j
            continue
        out.append(line)
        i += 1
    return out


def _unique(items: list[T]) -> list[T]:
    seen: set[T] = set()
    out: list[T] = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out
