"""Postings: which mailing-list posting (patch series) an upstream commit came from.

Read offline from what the history itself says. A commit's `Link:` (lore, patch.msgid.link)
or `Message-Id:` trailer names the message it was applied from; the two common generators
give every patch of one posting the same stem and its number:

- git send-email: `<20230124193025.185781-4-jlayton@kernel.org>`: date, pid, k, sender (k=1
  is the cover letter when there is one);
- b4: `<20240131-topic-name-v2-3-1a2b3c4d5e6f@kernel.org>`: date, topic, version, k (0 is the
  cover letter), a hash.

Projects that merge each series as a branch (merge and pull requests) group by the merge that
brought the commits in (see `Repo.merge_bringing`). Everything here is pure: text in, values
out, linear in the input.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_MAX_LINE = 1000  # a trailer longer than this is not one: skipped unread


class MessageKey(NamedTuple):
    """One patch mail of a posting: the posting's stem and the patch's number in it."""

    stem: str
    number: int


# Each pattern is anchored and has no nested quantifiers over the same characters: linear.
_SEND_EMAIL = re.compile(r"(\d{14}\.\d+)-(\d{1,4})-([^\s<>@]+@[^\s<>]+)")
_B4 = re.compile(r"(\d{8}-[A-Za-z0-9._-]{1,200}?-v\d{1,3})-(\d{1,4})-([0-9a-f]{6,40})@([^\s<>]+)")


def message_key(message_id: str) -> MessageKey | None:
    """The posting stem and patch number of a Message-ID, for the two generators above."""
    value = message_id.strip().strip("<>")
    if len(value) > 300:
        return None
    sent = _SEND_EMAIL.fullmatch(value)
    if sent:
        return MessageKey(f"{sent.group(1)}-{sent.group(3)}", int(sent.group(2)))
    b4 = _B4.fullmatch(value)
    if b4:
        return MessageKey(f"{b4.group(1)}@{b4.group(4)}", int(b4.group(2)))
    return None


def message_ids(message: str) -> list[str]:
    """The Message-IDs a commit message names in `Link:` and `Message-Id:` trailers."""
    found: list[str] = []
    for line in message.splitlines():
        if len(line) > _MAX_LINE:
            continue
        key, colon, value = line.partition(":")
        if not colon:
            continue
        name = key.strip().lower()
        value = value.strip()
        if name == "message-id":
            found.append(value.strip("<>"))
        elif name == "link":
            mid = _message_id_in_link(value)
            if mid:
                found.append(mid)
    return found


def message_link(message: str, message_id: str) -> str | None:
    """The URL of the `Link:` trailer that names `message_id` (the archive the project
    links its commits to), or None when only a `Message-Id:` trailer names it."""
    for line in message.splitlines():
        if len(line) > _MAX_LINE:
            continue
        key, colon, value = line.partition(":")
        if colon and key.strip().lower() == "link":
            url = (value.split() or [""])[0]
            if _message_id_in_link(url) == message_id:
                return url
    return None


def _message_id_in_link(url: str) -> str | None:
    """`https://lore.kernel.org/r/<id>`, `https://lore.kernel.org/<list>/<id>/`,
    `https://patch.msgid.link/<id>`: the last path segment holding an `@`."""
    words = url.split(None, 1)
    _, colon, rest = (words[0] if words else "").partition("://")
    if not colon:
        return None
    path = rest.partition("?")[0].partition("#")[0]
    _, slash, last = path.rpartition("/")
    if slash and "@" in last:  # the usual case: the id is the last segment
        return last.replace("%40", "@").strip("<>")
    for part in reversed(path.split("/")[1:]):
        if "@" in part:
            return part.replace("%40", "@").strip("<>")
    return None


def posting_keys(message: str) -> list[MessageKey]:
    """The posting keys a commit message carries (usually one)."""
    keys: list[MessageKey] = []
    for mid in message_ids(message):
        key = message_key(mid)
        if key is not None and key not in keys:
            keys.append(key)
    return keys


def posting_keys_of_raw(raw: bytes, low: bytes | None = None) -> list[MessageKey]:
    """`posting_keys` for the bulk indexer: only the `Link:`/`Message-Id:` lines are found
    (by literal search in the lowercased message, `low` when the caller has it) and decoded.
    Linear: each line is looked at from its first hit to its end, once."""
    if low is None:
        low = raw.lower()
    return keys_of_posting_lines(posting_lines(raw, low, 0, len(raw)))


def posting_lines(buf: bytes, low: bytes, lo: int, hi: int) -> list[tuple[int, str]]:
    """The `Link:`/`Message-Id:` lines of the message `buf[lo:hi]` (`low` is `buf`
    lowercased: a batch of messages is lowercased once), with their offsets."""
    found: list[tuple[int, str]] = []
    for needle in (b"link", b"message-id"):
        hit = low.find(needle, lo, hi)
        while hit != -1:
            start = max(low.rfind(b"\n", lo, hit) + 1, lo)
            end = low.find(b"\n", hit, hi)
            end = hi if end == -1 else end
            colon = hit + len(needle)
            while colon < end and low[colon] in b" \t":
                colon += 1
            if (
                colon < end
                and low[colon] == 0x3A  # ':'
                and end - colon - 1 <= _MAX_LINE
                and not low[start:hit].strip(b" \t")
            ):
                found.append((start, buf[start:end].decode("utf-8", "replace")))
            hit = low.find(needle, end, hi)
    return found


_CANONICAL_LINKS = (
    (b"\nLink: https://lore.kernel.org/r/", 1),
    (b"\nLink: https://patch.msgid.link/", 2),  # the host names "link" once more
)
_PLAIN_ID = re.compile(rb"[^\x00-\x20\x7f-\xff/?#]{1,900}")  # one printable ASCII word


def usual_link_keys(buf: bytes, hits: list[int], end: int) -> list[MessageKey] | None:
    """The posting keys of a message all of whose `link`s (`hits`: the offsets, in order,
    where the lowercased `buf` says "link", none before the message; `end`: where it ends)
    are `Link:` lines in one of the two forms the kernel's tools write
    (`Link: https://lore.kernel.org/r/<id>`, `Link: https://patch.msgid.link/<id>`, the id
    one plain word), read without the general line parse; None when some other line or
    word says "link". Such lines are all `posting_lines` would find, and these keys what
    `keys_of_posting_lines` gives (a property test holds them equal)."""
    keys: list[MessageKey] = []
    k = 0
    while k < len(hits):
        at = hits[k] - 1
        usual = next(((p, n) for p, n in _CANONICAL_LINKS if buf.startswith(p, at)), None)
        if usual is None:
            return None
        prefix, links = usual
        begin = at + len(prefix)
        stop = buf.find(b"\n", begin, end)
        word = buf[begin : end if stop == -1 else stop]
        if not _PLAIN_ID.fullmatch(word):
            return None
        k += links
        text = word.decode("ascii")
        key = message_key(text.replace("%40", "@").strip("<>")) if "@" in text else None
        if key is not None and key not in keys:
            keys.append(key)
    return keys


def keys_of_posting_lines(found: list[tuple[int, str]]) -> list[MessageKey]:
    """The posting keys of `posting_lines`' lines, in the order the lines appear."""
    keys: list[MessageKey] = []
    for _, line in sorted(found):
        if len(line) > _MAX_LINE:
            continue
        name, _, value = line.partition(":")
        value = value.strip()
        mid = value.strip("<>") if name.strip().lower() == "message-id" else None
        key = message_key(mid or _message_id_in_link(value) or "") if mid or value else None
        if key is not None and key not in keys:
            keys.append(key)
    return keys


def positions(numbers: list[int], generator_cover: int | None) -> dict[int, int]:
    """Patch number in the mail -> position in the posting (1-based). send-email numbers the
    cover letter 1 when there is one, b4 numbers it 0: when every landed patch of a
    send-email posting is numbered 2 or more, a cover letter came first."""
    if generator_cover == 0:  # b4: patches are 1..N
        return {n: n for n in numbers}
    shift = 1 if numbers and min(numbers) >= 2 else 0
    return {n: n - shift for n in numbers}


def is_b4(stem: str) -> bool:
    return bool(re.match(r"\d{8}-", stem))
