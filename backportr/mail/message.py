"""Read one mail and say what it is about: a backport submission, a FAILED mail, a plain
patch, or something to skip (with the reason). PURE: bytes in, values out; no network, no
git. Bad input (broken MIME, binary junk) is a skip with a reason, never an exception.

Forms (../shared/CONVENTIONS.md): `[PATCH 5.10.y]`, `[PATCH 5.10 2/3]`, `[PATCH stable 5.15
5.10]`, `[PATCH AUTOSEL 5.15 26/31]`, ranges `5.10-6.1`; FAILED mails `FAILED: patch "[PATCH]
<subject>" failed to apply to 5.10-stable tree` naming `git cherry-pick -x <sha>` and the
Message-ID to reply to.
"""

from __future__ import annotations

import email
import email.policy
import email.utils
import re
from dataclasses import dataclass, replace
from email.message import EmailMessage
from typing import Literal

from backportr.text.trailers import parse_message

Kind = Literal["submission", "failed", "patch", "skip"]

_PREFIX = re.compile(r"^\s*(?:(?:re|fwd?)\s*:\s*)*\[([^\]]*)\]\s*(.*)$", re.IGNORECASE)
_VERSION = re.compile(r"^v?(\d+\.\d+)(?:\.y|\.x)?$", re.IGNORECASE)
_REPLY = re.compile(r"^\s*(?:re|aw|sv)\s*:", re.IGNORECASE)
_RANGE = re.compile(r"^v?(\d+\.\d+)(?:\.y)?-v?(\d+\.\d+)(?:\.y)?$", re.IGNORECASE)
_PART = re.compile(r"^(\d+)/(\d+)$")
_FAILED = re.compile(
    r'^\s*FAILED:\s*patch\s+"\[PATCH\]\s*(.*)"\s+failed to apply to\s+(\S+?)-stable tree',
    re.IGNORECASE,
)
_CHERRY_PICK = re.compile(r"git cherry-pick -x\s+([0-9a-f]{7,40})")
_IN_REPLY_TO_OPTION = re.compile(r"--in-reply-to\s+'?<?([^'>\s]+)>?'?")
_FETCH_BRANCH = re.compile(r"git fetch\s+\S+\s+(linux-\d+\.\d+\.y)")
_BASE_COMMIT = re.compile(r"^base-commit:\s*([0-9a-f]{7,40})\s*$", re.MULTILINE)
_DIFF = re.compile(r"^diff --git ", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Mail:
    """What a mail says, as far as backportr is concerned."""

    kind: Kind
    message_id: str
    subject: str
    sender: str
    in_reply_to: str | None = None
    references: tuple[str, ...] = ()
    versions: tuple[str, ...] = ()  # "5.10", ...
    ranges: tuple[tuple[str, str], ...] = ()  # ("5.10", "6.1"): every stable branch between
    part: tuple[int, int] | None = None
    upstream: str | None = None  # the upstream id the mail names (full or abbreviated)
    patch_subject: str | None = None  # the subject of the patch itself, without prefixes
    reply_to_id: str | None = None  # FAILED mails name the message to answer
    diff: str | None = None
    base_commit: str | None = None
    body: str = ""
    reason: str | None = None  # why it is skipped
    recipients: tuple[str, ...] = ()  # its To and Cc, as written (a reply keeps them)

    @property
    def branches(self) -> tuple[str, ...]:
        return self.branch_names("linux-{v}.y")

    def branch_names(self, template: str) -> tuple[str, ...]:
        """The branches the subject's versions name, by the repository's naming (`{v}` the
        version: `linux-{v}.y`, DPDK's `{v}`, Xen's `stable-{v}`)."""
        return tuple(template.replace("{v}", v) for v in self.versions)


def parse_mail(raw: bytes | str) -> Mail:
    """Classify one RFC 5322 message."""
    data = raw.encode("utf-8", "surrogateescape") if isinstance(raw, str) else raw
    if b"\0" in data[:4096] or not data.strip():
        return _skip("", "", "", "not a mail: empty or binary data")
    try:
        message = email.message_from_bytes(data, policy=email.policy.default)
        message_id = _angle(str(message.get("Message-ID", "") or ""))
        subject = " ".join(str(message.get("Subject", "") or "").split())
        sender = str(message.get("From", "") or "")
        in_reply_to = _angle(str(message.get("In-Reply-To", "") or "")) or None
        references = tuple(_angle(r) for r in str(message.get("References", "") or "").split())
        recipients = tuple(
            email.utils.formataddr((name, addr))
            for name, addr in email.utils.getaddresses(
                [str(message.get(h, "") or "") for h in ("To", "Cc")]
            )[:200]
            if "@" in addr
        )
        body = _text_body(message)
    except Exception as error:
        return _skip("", "", "", f"malformed message: {type(error).__name__}: {error}")
    if not message_id:
        return _skip("", subject, sender, "malformed message: no Message-ID header")
    base = Mail(
        kind="skip",
        message_id=message_id,
        subject=subject,
        sender=sender,
        in_reply_to=in_reply_to,
        references=references,
        body=body,
        recipients=recipients,
    )

    if _REPLY.match(subject) and _diff(body) is None:  # a review, or a bot's answer
        return replace(base, reason="not a patch: a reply in a thread")

    if failed := _FAILED.match(subject):
        pick = _CHERRY_PICK.search(body)
        version = failed.group(2)
        fetch = _FETCH_BRANCH.search(body)
        if fetch:
            version = fetch.group(1)[len("linux-") : -len(".y")]
        reply = _IN_REPLY_TO_OPTION.search(body)
        return replace(
            base,
            kind="failed",
            versions=(version,),
            upstream=pick.group(1) if pick else None,
            patch_subject=failed.group(1),
            reply_to_id=reply.group(1) if reply else None,
        )

    prefix = _PREFIX.match(subject)
    if prefix is None or "patch" not in prefix.group(1).lower():
        return replace(base, reason="not a patch or a FAILED mail")
    versions, ranges, part = _prefix_tokens(prefix.group(1))
    patch_subject = prefix.group(2).strip()
    diff = _diff(body)
    parsed = parse_message(f"{patch_subject}\n\n{body}")
    base_commit = _BASE_COMMIT.search(body)
    patch = replace(
        base,
        versions=versions,
        ranges=ranges,
        part=part,
        upstream=parsed.upstream,
        patch_subject=patch_subject,
        diff=diff,
        base_commit=base_commit.group(1) if base_commit else None,
    )
    if versions or ranges:
        if part is not None and part[0] == 0:
            return replace(patch, reason="a cover letter")
        return replace(patch, kind="submission")
    if diff is not None:
        return replace(patch, kind="patch")
    if part is not None and part[0] == 0:
        return replace(patch, reason="a cover letter")
    return replace(patch, reason="a patch mail without a diff")


def _prefix_tokens(
    prefix: str,
) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...], tuple[int, int] | None]:
    versions: list[str] = []
    ranges: list[tuple[str, str]] = []
    part = None
    for token in prefix.replace(",", " ").split():
        if m := _PART.match(token):
            part = (int(m.group(1)), int(m.group(2)))
        elif m := _RANGE.match(token):
            ranges.append((m.group(1), m.group(2)))
        elif m := _VERSION.match(token):  # 5.10, 5.10.y, v5.10 (a series' v2 has no dot)
            versions.append(m.group(1))
    return tuple(dict.fromkeys(versions)), tuple(ranges), part


def _text_body(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",)) if message.is_multipart() else message
    if part is None:
        return ""
    try:
        content = part.get_content()
    except (LookupError, ValueError):
        payload = part.get_payload(decode=True) or b""
        content = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""
    return content if isinstance(content, str) else ""


def _diff(body: str) -> str | None:
    match = _DIFF.search(body)
    if match is None:
        return None
    text = body[match.start() :]
    signature = text.rfind("\n-- \n")
    if signature >= 0:
        text = text[: signature + 1]
    return text


def _angle(value: str) -> str:
    return value.strip().strip("<>").strip()


def _skip(message_id: str, subject: str, sender: str, reason: str) -> Mail:
    return Mail(kind="skip", message_id=message_id, subject=subject, sender=sender, reason=reason)
