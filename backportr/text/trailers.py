"""Parse what a kernel commit message says about itself.

PURE: a message string in, a ParsedMessage out. No git, no files, no printing. Parsing is
tolerant (real history has lowercase `fixes:`, odd spacing, wrapped lines, missing
parentheses); the formats are those of ../shared/CONVENTIONS.md.
"""

from __future__ import annotations

import re
from typing import TypeVar, cast

from backportr.model import (
    FixesTag,
    Oid,
    ParsedMessage,
    StableDep,
    StableTag,
    Trailer,
    UpstreamForm,
    UpstreamRef,
    Version,
)
from backportr.text.annotations import ANNOTATIONS
from backportr.text.relation_forms import COMMIT_URL, DEFAULT, Vocabulary
from backportr.text.relation_words import lowered_mentions_relations

T = TypeVar("T")

_HEX = r"[0-9a-fA-F]"
_ML = re.IGNORECASE | re.MULTILINE
_FIXES = re.compile(
    rf"^[ \t]*fixes[ \t]*:[ \t]*(?:commit[ \t]+|{COMMIT_URL})?({_HEX}{{6,40}})\b(.*)$", _ML
)
_STABLE_DEP = re.compile(rf"^[ \t]*stable-dep-of[ \t]*:[ \t]*({_HEX}{{6,40}})\b(.*)$", _ML)
# A stable tag is a trailer: it starts its line. An indented `Cc: stable@...` is quoted text
# (another project's commit message cited in this one), not this commit's request.
_CC_LINE = re.compile(r"^cc[ \t]*:(.*)$", _ML)
_STABLE_ADDRESS = re.compile(r"stable(\+noautosel)?@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)", re.I)
_FULL_ID = re.compile(rf"\b({_HEX}{{40}})\b")
_UPSTREAM_LINE = re.compile(r"^.*upstream.*$", _ML)
_NOT_A_REFERENCE = re.compile(r"^[ \t]*(?:fixes|stable-dep-of|cc)[ \t]*:", re.IGNORECASE)
_CHERRY = re.compile(
    rf"\([ \t]*cherry[ -]?picked[ \t]+from[ \t]+(?:[\w./-]+[ \t]+)?commit[ \t]+({_HEX}{{40}})",
    re.IGNORECASE,
)
_MASTER_COMMIT = re.compile(
    rf"^[ \t]*(?:master|main|mainline)[ \t]+commit[ \t]*(?::[ \t]*)?({_HEX}{{40}})\b", _ML
)
_BACKPORTED = re.compile(rf"\(\s*backported from commit ({_HEX}{{40}})", re.IGNORECASE)
_MAINLINE_INCLUSION = re.compile(r"^[ \t]*mainline inclusion[ \t]*$", _ML)
_BARE_COMMIT = re.compile(rf"^[ \t]*commit[ \t]+({_HEX}{{40}})[ \t]*$", _ML)
_REVERTS = re.compile(rf"\bthis reverts commit ({_HEX}{{7,40}})\b", re.IGNORECASE)
_REVERT_SUBJECT = re.compile(r'^\s*Revert\s+"(.*)"\s*$')
_LINK = re.compile(
    r"^[ \t]*link[ \t]*:[ \t]*<?https?://(?:lore\.kernel\.org(?:/[^/\s]+)?/r?/?|patch\.msgid\.link/)"
    r"([^\s>]+?)/?>?[ \t]*$",
    _ML,
)
_CO_AUTHOR = re.compile(r"^[ \t]*co-authored-by[ \t]*:([^<\n]*)<([^>\n]*)>", _ML)
_TRAILER = re.compile(r"^([A-Za-z][A-Za-z0-9-]*[A-Za-z0-9])[ \t]*:[ \t]+(\S.*)$", re.MULTILINE)
_VERSION = re.compile(r"v?(\d+)\.(\d+)(?:\.(?:x|y|\d+))?(\+)?", re.IGNORECASE)
_VERSION_RANGE = re.compile(
    r"^v?(\d+)\.(\d+)(?:\.[xy0-9]+)?\s*-\s*v?(\d+)\.(\d+)(?:\.[xy0-9]+)?", re.IGNORECASE
)
_DECLARED_PREREQ = re.compile(
    rf"^(v?\d+\.\d+(?:\.[xy0-9]+)?\+?)\s*:\s*({_HEX}{{7,40}})\s*:?\s*(.*)$", re.IGNORECASE
)

# Trailer keys retained in ParsedMessage.trailers (the rest of the body is prose).
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


def parse_message(
    message: str, *, trailers: bool = True, vocabulary: Vocabulary = DEFAULT
) -> ParsedMessage:
    """Parse a whole commit message (subject line first).

    Each kind of line is found by one multi-line regex over the body, run only when a cheap
    keyword test says it can match: most kernel commits carry only Signed-off-by lines.
    `trailers=False` leaves out the generic trailer list and the links (the bulk indexer
    stores neither). The culprits are the `Fixes:` lines', then those the vocabulary's other
    forms name (`text/relation_forms.py`; where a `Fixes:` line names one, the project's own
    phrases only, not the table's prose), each id once. A line ending in CR LF (a message
    written on Windows: 198 of SDL's, 1,499 of systemd-stable's) is read as one ending in LF.
    """
    if "\r" in message:
        message = message.replace("\r\n", "\n")
    first, _, body = message.partition("\n")
    subject = first.strip()
    low = body.lower()
    fix_lines, dep_lines = _fixes_and_deps(body, low)
    if '("' in body and _wrapped([*fix_lines, *dep_lines]):
        body = "\n".join(_unwrap_quoted_subjects(body.splitlines()))
        low = body.lower()
        fix_lines, dep_lines = _fixes_and_deps(body, low)
    fixes = [FixesTag(m.group(1).lower(), _quoted_subject(m.group(2))) for m in fix_lines]
    named = {f.ref for f in fixes}
    whole = message.lstrip("\n")  # a subject may name it too ("Fix regression from <id>")
    for mention in vocabulary.mentions(whole, whole.lower(), table=not fixes):
        if mention.ref not in named:
            named.add(mention.ref)
            fixes.append(mention)
    deps = [StableDep(m.group(1).lower(), _quoted_subject(m.group(2))) for m in dep_lines]
    tags = _stable_tags(body, low) if "stable" in low else []
    reverts = (
        [m.group(1).lower() for m in _REVERTS.finditer(body)] if "reverts commit" in low else []
    )
    links = [m.group(1) for m in _LINK.finditer(body)] if trailers and "link" in low else []
    found = (
        [
            Trailer(m.group(1), m.group(2).strip())
            for m in _TRAILER.finditer(body)
            if m.group(1).lower() in _KNOWN_KEYS
        ]
        if trailers
        else []
    )
    revert_match = _REVERT_SUBJECT.match(subject)
    return ParsedMessage(
        subject=subject,
        fixes=tuple(_unique(fixes)),
        stable_deps=tuple(_unique(deps)),
        stable_tags=tuple(tags),
        upstream_refs=tuple(_upstream_refs(body, low)),
        reverts=tuple(_unique(reverts)),
        reverted_subject=revert_match.group(1) if revert_match else None,
        links=tuple(_unique(links)),
        trailers=tuple(found),
    )


def _fixes_and_deps(body: str, low: str) -> tuple[list[re.Match[str]], list[re.Match[str]]]:
    """The `Fixes:` and `Stable-dep-of:` lines (each pattern run only when its keyword is in
    the lowercased body)."""
    fixes = _lines_matching(_FIXES, body, low, "fixes")
    deps = _lines_matching(_STABLE_DEP, body, low, "stable-dep-of")
    return fixes, deps


def _lines_matching(
    pattern: re.Pattern[str], body: str, low: str, word: str
) -> list[re.Match[str]]:
    """`pattern.finditer(body)` for a pattern anchored at a line's start (`^`, MULTILINE)
    whose match stays within its line and needs `word` (lowercase) in it: only the lines
    holding the word are tried. A regex anchored per line is otherwise tried at every
    position of a long body (17 us for a kernel message's `Fixes:`; this, about 1 us).

    `low` must have the body's offsets, and a line IGNORECASE matches must hold the word in
    lowercase: true unless lowercasing changed the length (U+0130) or the body has one of
    the two letters that fold to ASCII without lowercasing to it (U+0131, U+017F); such a
    body is searched whole."""
    if word not in low:
        return []
    if not body.isascii() and (len(low) != len(body) or "\u0131" in body or "\u017f" in body):
        return list(pattern.finditer(body))
    found: list[re.Match[str]] = []
    at = low.find(word)
    while at != -1:
        match = pattern.match(body, low.rfind("\n", 0, at) + 1)
        if match is not None:
            found.append(match)
        end = low.find("\n", at)
        if end == -1:
            break
        at = low.find(word, end)
    return found


def _wrapped(lines: list[re.Match[str]]) -> bool:
    """Does one of these lines' quoted subject go on past the line's end? (The rest of such a
    line, as the patterns capture it, opens `("` and does not close.)"""
    return any('("' in m.group(2) and not m.group(2).rstrip().endswith(('")', ")")) for m in lines)


def _stable_tags(body: str, low: str) -> list[StableTag]:
    """`Cc: ... stable@<any domain> ... # comment` lines, found without backtracking: the
    line is matched by a fixed prefix, the address by a literal search (a mail line is hostile
    input; a pattern that can split a whitespace run three ways is cubic on it)."""
    tags: list[StableTag] = []
    for line in _lines_matching(_CC_LINE, body, low, "cc"):
        rest = line.group(1)
        address = _STABLE_ADDRESS.search(rest)  # a literal prefix: one linear scan
        if address is None:
            continue
        before = rest[: address.start()].rstrip(" \t")
        before = before[:-1] if before.endswith("<") else before
        if "<" in before or "#" in before or "@" in before:
            continue  # the address is not the one this Cc: line is for
        after = rest[address.end() :].lstrip(" \t")
        after = after[1:].lstrip(" \t") if after.startswith(">") else after
        if after and not after.startswith("#"):
            continue
        comment = after[1:] if after.startswith("#") else None
        tags.append(parse_stable_comment(comment, noautosel=bool(address.group(1))))
    return tags


def _upstream_refs(body: str, low: str) -> list[UpstreamRef]:
    """Every upstream-reference form, in the order the lines appear, first mention wins."""
    found: list[tuple[int, UpstreamRef]] = []
    if "cherry" in low:
        found += [
            (m.start(), UpstreamRef(Oid(m.group(1).lower()), "cherry-pick"))
            for m in _CHERRY.finditer(body)
        ]
    if "commit" in low:
        found += [
            (m.start(), UpstreamRef(Oid(m.group(1).lower()), "cherry-pick"))
            for m in _lines_matching(_MASTER_COMMIT, body, low, "commit")
        ]
    if "backported" in low:
        found += [
            (m.start(), UpstreamRef(Oid(m.group(1).lower()), "backport"))
            for m in _BACKPORTED.finditer(body)
        ]
    if "upstream" in low:
        for line in _lines_matching(_UPSTREAM_LINE, body, low, "upstream"):
            text = line.group(0)
            if _NOT_A_REFERENCE.match(text) or _CHERRY.search(text) or _BACKPORTED.search(text):
                continue
            if m := _FULL_ID.search(text):
                found.append((line.start(), UpstreamRef(Oid(m.group(1).lower()), "upstream")))
    if (
        "mainline inclusion" in low
        and (start := _MAINLINE_INCLUSION.search(body))
        and (m := _BARE_COMMIT.search(body, start.end()))
    ):
        found.append((m.start(), UpstreamRef(Oid(m.group(1).lower()), "mainline-inclusion")))
    for form in ANNOTATIONS.beyond_the_readers():
        found += [
            (at, UpstreamRef(Oid(oid.lower()), cast(UpstreamForm, form.reference)))
            for at, oid in form.reads(body)
        ]
    refs: list[UpstreamRef] = []
    for _, ref in sorted(found, key=lambda item: item[0]):
        if all(r.oid != ref.oid for r in refs):
            refs.append(ref)
    return refs


def upstream_refs(message: str) -> list[UpstreamRef]:
    """The upstream commits a message names as carried: `parse_message(...).upstream_refs`
    alone, without the rest of the parse."""
    body = message.partition("\n")[2]
    return _upstream_refs(body, body.lower())


def co_authors(message: str) -> list[tuple[str, str]]:
    """The (name, email) of each `Co-authored-by:` line: who wrote the commit with its author."""
    return [
        (m.group(1).strip(), m.group(2).strip().casefold()) for m in _CO_AUTHOR.finditer(message)
    ]


def names_upstream(message: str) -> bool:
    """Does the message name an upstream commit it carries, in a line `parse_message` reads
    as an upstream reference?"""
    return bool(upstream_refs(message))


def mentions_relations(message: str | bytes) -> bool:
    """A cheap test: can parse_message find any relation (Fixes, stable, upstream, revert)?

    Lets a bulk indexer skip the full parse for the many commits that carry none.
    """
    raw = message.encode("utf-8", "replace") if isinstance(message, str) else message
    return lowered_mentions_relations(raw.lower())


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
    if len(items) < 2:  # most lists: nothing to hash
        return items
    seen: set[T] = set()
    out: list[T] = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out
