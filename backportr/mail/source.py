"""Where a mail comes from: a file (.eml or an mbox thread), stdin, a lore URL, or a
Message-ID fetched from an archive. Returns the message and the rest of its thread."""

from __future__ import annotations

import sys
from pathlib import Path

import requests

from backportr.errors import BackportrError, UsageError
from backportr.mail.lore import Lore, LoreError, split_mbox
from backportr.mail.message import Mail, parse_mail


def load(spec: str, lore_url: str | None) -> tuple[Mail, list[Mail]]:
    """(the mail to check, its thread) from a path, '-', a URL or a Message-ID."""
    if spec == "-":
        return _from_bytes(sys.stdin.buffer.read())
    path = Path(spec)
    if path.exists():
        try:
            return _from_bytes(path.read_bytes())
        except OSError as error:
            raise BackportrError(f"cannot read {path}: {error.strerror}") from None
    if spec.startswith(("http://", "https://")):
        url = spec if spec.rstrip("/").endswith("/raw") else spec.rstrip("/") + "/raw"
        try:
            response = requests.get(url, timeout=30)
        except requests.RequestException as error:
            raise LoreError(f"cannot reach {url}: {type(error).__name__}") from None
        if response.status_code >= 400:
            raise LoreError(f"{url}: the archive answered {response.status_code}")
        return _from_bytes(response.content)
    if "/" in spec or spec.endswith((".eml", ".mbox", ".txt")):
        raise BackportrError(f"{spec}: no such file")
    if lore_url is None:
        raise UsageError(f"{spec!r} is no file or URL; to fetch a Message-ID, give --lore URL")
    lore = Lore(lore_url)
    mail = parse_mail(lore.raw(spec))
    thread = [mail]
    if mail.kind == "submission" and mail.part is not None:
        thread = [parse_mail(raw) for raw in lore.thread(spec)]
    return mail, thread


def _from_bytes(data: bytes) -> tuple[Mail, list[Mail]]:
    if data.startswith(b"From ") and b"\nFrom " in data:
        thread = [parse_mail(raw) for raw in split_mbox(data)]
        anchor = next((m for m in thread if m.kind != "skip"), thread[0])
        return anchor, thread
    mail = parse_mail(data)
    return mail, [mail]
